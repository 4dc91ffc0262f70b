#!/usr/bin/env python3
"""Writes include/graph.h's declarations as a ctypes module, _abi.py.

The Python package declares nothing by hand: its structs, enums, constants
and function signatures are graph.h's, translated here at build time, so
that the package needs nothing beyond Python's own ctypes (and numpy).
graph.h's declarations are plain C: comments and preprocessor lines go
(the non-C++, non-Windows branch is kept), integer #defines become
constants, and what remains is typedefs of enums, structs and one
function pointer, and function prototypes, which this reads with a few
regular expressions. A construct it does not know stops the build with
the declaration named, rather than guessing. tests/python/test_python.py
checks every struct's size and offsets against the C compiler's.

usage: gen_abi.py include/graph.h OUT.py
"""

import re
import sys

SCALARS = {
    "int": "C.c_int", "unsigned": "C.c_uint", "unsigned int": "C.c_uint",
    "int32_t": "C.c_int32", "uint32_t": "C.c_uint32", "int64_t": "C.c_int64",
    "uint64_t": "C.c_uint64", "size_t": "C.c_size_t", "float": "C.c_float",
    "double": "C.c_double", "char": "C.c_char", "uint8_t": "C.c_uint8",
}


def clean(text):
    """graph.h without comments and preprocessor lines; {name: value} of
    its integer #defines."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    lines, defines, keep = [], {}, [True]
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#"):
            word = s[1:].split()
            if word[0] in ("if", "ifdef"):
                keep.append(False)  # __cplusplus, _WIN32
            elif word[0] == "ifndef":
                keep.append(True)  # the include guard
            elif word[0] == "else":
                keep[-1] = not keep[-1]
            elif word[0] == "endif":
                keep.pop()
            elif word[0] == "define" and all(keep) and len(word) == 3 \
                    and re.fullmatch(r"-?\d+", word[2]):
                defines[word[1]] = int(word[2])
            continue
        if all(keep):
            lines.append(line)
    body = " ".join(lines).replace("DG_API ", "")
    for name, value in defines.items():
        body = re.sub(r"\b%s\b" % name, str(value), body)
    return re.sub(r"\s+", " ", body), defines


class Reader:
    def __init__(self):
        self.enums, self.structs, self.opaque = {}, {}, set()
        self.fnptrs, self.functions, self.order = {}, {}, []

    def ctype(self, base, stars, where):
        """The ctypes expression for base with that many '*'s."""
        base = base.replace("const ", "").strip()
        if stars == 0:
            if base in SCALARS:
                return SCALARS[base]
            if base in self.enums:
                return "C.c_int"
            if base in self.structs:
                return base
            if base in self.fnptrs:
                return base
            raise SystemExit("gen_abi.py: %s: unknown type '%s'" %
                             (where, base))
        if base == "char" and stars == 1:
            return "C.c_char_p"
        if stars == 1 and (base in ("void", "FILE") or base in self.opaque):
            return "C.c_void_p"
        return "C.POINTER(%s)" % self.ctype(base, stars - 1, where)

    def declarator(self, decl, where, param=False):
        """(name, ctypes type) of 'const int64_t *dims' or 'char x[64]';
        a parameter's array is a pointer, as in C."""
        m = re.fullmatch(r"(.*?)([\s*]+)(\w+)\s*(?:\[(\d*)\])?", decl.strip())
        if not m:
            raise SystemExit("gen_abi.py: %s: cannot read '%s'" %
                             (where, decl))
        base, stars, name, dim = m.groups()
        if not base.strip():  # "int x": no star, the split took the type
            raise SystemExit("gen_abi.py: %s: cannot read '%s'" %
                             (where, decl))
        t = self.ctype(base.strip(), stars.count("*"), where)
        if dim is not None:
            t = "(%s * %s)" % (t, dim) if dim and not param else \
                "C.POINTER(%s)" % t
        return name, t

    @staticmethod
    def split_decl(decl):
        """'int a, *b' -> ['int a', 'int *b'] (fields only)."""
        parts = [p.strip() for p in decl.split(",")]
        m = re.fullmatch(r"(.*?)(\s*\**\s*\w+\s*(?:\[\d*\])?)", parts[0])
        base = m.group(1).strip()
        return [parts[0]] + [base + " " + p for p in parts[1:]]

    def read(self, body):
        for stmt in self.statements(body):
            self.statement(stmt.strip())

    @staticmethod
    def statements(body):
        depth, cur = 0, ""
        for ch in body:
            cur += ch
            depth += ch == "{"
            depth -= ch == "}"
            if ch == ";" and depth == 0:
                yield cur[:-1]
                cur = ""

    def statement(self, s):
        m = re.fullmatch(r"(?:typedef )?enum (\w+ )?\{(.*)\}\s*(\w*)", s)
        if m:
            values, v = {}, -1
            for item in filter(None, (i.strip() for i in m.group(2).split(","))):
                if "=" in item:
                    k, e = (x.strip() for x in item.split("="))
                    v = int(e, 0)
                else:
                    k, v = item, v + 1
                values[k] = v
            name = m.group(3) or "anonymous_%d" % len(self.enums)
            self.enums[name] = values
            return
        m = re.fullmatch(r"typedef struct (\w+) \{(.*)\}\s*(\w+)", s)
        if m:
            fields = []
            for f in filter(None, (x.strip() for x in m.group(2).split(";"))):
                for one in self.split_decl(f):
                    fields.append(self.declarator(one, m.group(3)))
            self.structs[m.group(3)] = fields
            self.order.append(m.group(3))
            return
        m = re.fullmatch(r"typedef struct (\w+) (\w+)", s)
        if m:
            self.opaque.add(m.group(2))
            return
        m = re.fullmatch(r"typedef (.+?) \(\*(\w+)\)\((.*)\)", s)
        if m:
            self.fnptrs[m.group(2)] = (self.ret(m.group(1), m.group(2)),
                                       self.params(m.group(3), m.group(2)))
            self.order.append(m.group(2))
            return
        m = re.fullmatch(r"(.+?[\s*])(\w+)\((.*)\)", s)
        if m:
            self.functions[m.group(2)] = (self.ret(m.group(1), m.group(2)),
                                          self.params(m.group(3), m.group(2)))
            return
        raise SystemExit("gen_abi.py: cannot read the declaration '%s'" %
                         s[:80])

    def ret(self, text, where):
        text = text.strip()
        if text == "void":
            return "None"
        stars = text.count("*")
        return self.ctype(text.replace("*", "").strip(), stars, where)

    def params(self, text, where):
        text = text.strip()
        if text in ("", "void"):
            return []
        return [self.declarator(p, where, True)[1] for p in text.split(",")]


def module(reader, defines):
    out = ['"""graph.h for ctypes: generated by python/gen_abi.py; do not',
           'edit. ENUMS holds every enum by its C name ({name: {constant:',
           'value}}); every constant and struct is a module attribute;',
           'bind(dll) sets each function\'s signature."""', "",
           "import ctypes as C", ""]
    for k, v in defines.items():
        out.append("%s = %d" % (k, v))
    out.append("ENUMS = {")
    for name, values in reader.enums.items():
        out.append("    %r: %r," % (name, values))
    out.append("}")
    for values in reader.enums.values():
        for k, v in values.items():
            out.append("%s = %d" % (k, v))
    out.append("")
    for name in reader.order:
        if name in reader.fnptrs:
            ret, params = reader.fnptrs[name]
            out.append("%s = C.CFUNCTYPE(%s)" % (name, ", ".join(
                [ret] + params)))
        else:
            out.append("\n\nclass %s(C.Structure):" % name)
            out.append("    _fields_ = [")
            for f, t in reader.structs[name]:
                out.append("        (%r, %s)," % (f, t))
            out.append("    ]")
    out.append("\n\nFUNCTIONS = {")
    for name, (ret, params) in reader.functions.items():
        out.append("    %r: (%s, [%s])," % (name, ret, ", ".join(params)))
    out.append("}\n\n")
    out.append('''def bind(dll):
    """Sets restype and argtypes of every graph.h function in dll."""
    for name, (ret, args) in FUNCTIONS.items():
        f = getattr(dll, name)
        f.restype, f.argtypes = ret, args
    return dll
''')
    return "\n".join(out)


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: gen_abi.py include/graph.h OUT.py")
    with open(argv[1], encoding="utf-8") as f:
        body, defines = clean(f.read())
    reader = Reader()
    reader.read(body)
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write(module(reader, defines))


if __name__ == "__main__":
    main(sys.argv)
