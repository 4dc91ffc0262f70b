#!/usr/bin/env python3
"""Reads variants.def for meson.build: vk_variants.py VARIANTS.DEF

variants.def is a C X-macro file (vk_internal.h includes it for the
vk_shader enum and dg_vk_variants); this reads the same lines, so that the
modules meson builds and the entries C knows come from one list. Prints one
line per variant, in the file's order:

    name|source|khr|glslc arguments (space-separated)

with TILE_M and TILE_N added to the arguments of a tiled kernel
(common.glsl checks them against its BM x BN). Anything it does not
understand stops the configuration with the line it is on: a typo in the
table must not become a module C names but nobody builds. Sources are
looked for in shaders/ beside the table. (Only the table is an argument:
meson reconfigures when an argument of run_command changes, and the
shader folder changes with every editor's temporary file.)"""
import os
import re
import sys

FIELDS = ("id", "name", "source", "khr", "tile_m", "tile_n", "cost",
          "defines")
# The cost model's kernel classes (vk_internal.h, vk_cost_class).
COSTS = ("TILED", "DIRECT", "MEMORY", "SIMT", "SIMTCONV", "COOP", "COOPK")
# One token of an entry's arguments: a string, or a bare word, or a comma.
TOKEN = re.compile(r'\s*(?:"([^"\\\n]*)"|([A-Za-z0-9_.]+)|(,))')


def fail(path, line, msg):
    sys.exit("%s:%d: %s" % (path, line, msg))


def line_at(text, pos):
    """The line number of text[pos], or of the first non-blank after it."""
    pos += len(text[pos:]) - len(text[pos:].lstrip())
    return text.count("\n", 0, pos) + 1


def strip_comments(text):
    # Comments become spaces, newlines kept, so line numbers stay right.
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r"/\*.*?\*/|//[^\n]*", blank, text, flags=re.S)


def parse_args(path, line, body):
    """The arguments of one VK_VARIANT(...): strings (adjacent ones joined,
    as C joins them) and words."""
    args, cur, pos = [], None, 0
    while pos < len(body):
        if not body[pos:].strip():
            break
        m = TOKEN.match(body, pos)
        if not m:
            fail(path, line, "cannot read %r" % body[pos:].strip())
        pos = m.end()
        s, word, comma = m.groups()
        if comma:
            if cur is None:
                fail(path, line, "empty argument")
            args.append(cur)
            cur = None
        elif s is not None and isinstance(cur, tuple):
            cur = (cur[0] + s,)  # "a" "b": one string
        elif cur is not None:
            fail(path, line, "missing comma before %r" % (s or word))
        else:
            cur = (s,) if s is not None else word
    if cur is None:
        fail(path, line, "empty argument")
    args.append(cur)
    return args


def read(path, shader_dir):
    text = strip_comments(open(path, encoding="utf-8").read())
    variants, names, pos = [], set(), 0
    for m in re.finditer(r"VK_VARIANT\s*\(([^()]*)\)", text):
        line = line_at(text, m.start())
        gap = text[pos:m.start()]
        if gap.strip():
            fail(path, line_at(text, pos),
                 "not a VK_VARIANT line: %r" % gap.strip().split("\n")[0])
        pos = m.end()
        args = parse_args(path, line, m.group(1))
        if len(args) != len(FIELDS):
            fail(path, line, "%d arguments, not %d (%s)" %
                 (len(args), len(FIELDS), ", ".join(FIELDS)))
        v = dict(zip(FIELDS, args))
        for f in ("source", "defines"):
            if not isinstance(v[f], tuple):
                fail(path, line, "%s must be a string" % f)
            v[f] = v[f][0]
        for f in ("id", "name", "khr", "tile_m", "tile_n", "cost"):
            if isinstance(v[f], tuple):
                fail(path, line, "%s must not be a string" % f)
        if not re.fullmatch(r"[a-z][a-z0-9_]*", v["name"]):
            fail(path, line, "bad name %r" % v["name"])
        if v["id"] != v["name"].upper():
            fail(path, line, "ID %s is not the name %s in capitals" %
                 (v["id"], v["name"]))
        if v["name"] in names:
            fail(path, line, "%s listed twice" % v["name"])
        names.add(v["name"])
        if not os.path.isfile(os.path.join(shader_dir, v["source"])):
            fail(path, line, "no shader %s in %s" % (v["source"], shader_dir))
        if v["cost"] not in COSTS:
            fail(path, line, "cost must be one of %s" % ", ".join(COSTS))
        if v["khr"] not in ("0", "1"):
            fail(path, line, "khr must be 0 or 1")
        for f in ("tile_m", "tile_n"):
            if not re.fullmatch(r"0|[1-9][0-9]*", v[f]):
                fail(path, line, "%s must be a number" % f)
        if (v["tile_m"] == "0") != (v["tile_n"] == "0"):
            fail(path, line, "a tile needs both sides (or neither)")
        args = v["defines"].split()
        for a in args:
            if not re.fullmatch(r"-D[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_]+)?",
                                a):
                fail(path, line, "%r is not a -D definition" % a)
            if re.match(r"-DTILE_[MN]\b", a):
                fail(path, line, "TILE_M and TILE_N come from the tile fields")
        if v["tile_m"] != "0":
            args += ["-DTILE_M=" + v["tile_m"], "-DTILE_N=" + v["tile_n"]]
        variants.append((v["name"], v["source"], v["khr"], args))
    if text[pos:].strip():
        fail(path, line_at(text, pos),
             "not a VK_VARIANT line: %r" % text[pos:].strip().split("\n")[0])
    if not variants:
        fail(path, 1, "no VK_VARIANT lines")
    return variants


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n")[0])
    shader_dir = os.path.join(os.path.dirname(sys.argv[1]), "shaders")
    for name, source, khr, args in read(sys.argv[1], shader_dir):
        print("|".join([name, source, khr, " ".join(args)]))


if __name__ == "__main__":
    main()
