#!/usr/bin/env python3
"""Checks src/targets/vulkan/spirv_nv2khr.py on the modules the build made
and on inputs it must refuse. Debian 12's spirv-val predates
SPV_KHR_cooperative_matrix, so the structure is checked here instead: no NV
instruction left, the KHR capability and extension in place, three matrix
types with the uses A, B and accumulator (and every product taking one of
each), loads, stores, copies and phis agreeing on types, every load and
store given a layout constant of 0 or 1, and as many loads, stores and
products as the NV module had. (On the GPU machine the same modules run in
test_vulkan against the reference kernels.) Prints ok/FAIL lines.
Usage: test_spirv_nv2khr.py BUILD_DIR"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "src", "targets", "vulkan",
                      "spirv_nv2khr.py")
NV_OPS = set(range(5357, 5363))
KHR_TYPE, KHR_LOAD, KHR_STORE, KHR_MULADD = 4456, 4457, 4458, 4459
NV_LOAD, NV_STORE, NV_MULADD = 5359, 5360, 5361

failures = 0


def check(cond, msg):
    global failures
    print(("ok - " if cond else "FAIL - ") + msg)
    if not cond:
        failures += 1


def words_of(path):
    with open(path, "rb") as f:
        data = f.read()
    return list(struct.unpack("<%dI" % (len(data) // 4), data))


def insts(words):
    i = 5
    while i < len(words):
        n, op = words[i] >> 16, words[i] & 0xFFFF
        yield op, words[i + 1:i + n]
        i += n


def count(words, op):
    return sum(1 for o, _ in insts(words) if o == op)


def translate(src, dst):
    return subprocess.run([sys.executable, SCRIPT, src, dst],
                          capture_output=True, text=True)


def check_module(khr_path, nv_path):
    name = os.path.basename(khr_path)
    w = words_of(khr_path)
    nv = words_of(nv_path)
    ops = [o for o, _ in insts(w)]
    check(not NV_OPS.intersection(ops), "%s: no NV cooperative-matrix "
          "instruction left" % name)
    check(any(o == 17 and a[0] == 6022 for o, a in insts(w)),
          "%s: declares the CooperativeMatrixKHR capability" % name)
    exts = [struct.pack("<%dI" % len(a), *a).split(b"\0")[0].decode()
            for o, a in insts(w) if o == 10]
    check("SPV_KHR_cooperative_matrix" in exts and
          "SPV_NV_cooperative_matrix" not in exts,
          "%s: the KHR extension replaces the NV one" % name)
    ints = {a[1]: a[2] for o, a in insts(w) if o == 43 and len(a) == 3}
    uses = sorted(ints.get(a[5]) for o, a in insts(w) if o == KHR_TYPE)
    check(uses == [0, 1, 2], "%s: matrix types used as A, B, accumulator "
          "(uses %s)" % (name, uses))
    # The type of every value (vt) and of what each pointer type points to.
    type_ops = set(range(19, 40)) | {322, KHR_TYPE}
    types = {a[0] for o, a in insts(w) if o in type_ops}
    pointee = {a[0]: a[2] for o, a in insts(w) if o == 32}
    vt = {}
    for o, a in insts(w):
        if o not in type_ops and len(a) > 1 and a[0] in types:
            vt.setdefault(a[1], a[0])
    # Every product's operands and result have the types of their uses
    # (the 16x16 builds' B values get a type split from A's).
    use_of = {a[0]: ints.get(a[5]) for o, a in insts(w) if o == KHR_TYPE}
    products = [a for o, a in insts(w) if o == KHR_MULADD]
    check(products and all(
        [use_of.get(vt.get(x)) for x in (a[2], a[3], a[4], a[1])] ==
        [0, 1, 2, 2] for a in products),
        "%s: every product takes an A, a B and an accumulator" % name)
    # Loads, stores, copies, phis and products agree on types (a split
    # type that missed one would show here, where Debian's spirv-val
    # cannot look).
    bad = [a[1] for o, a in insts(w)
           if (o == 61 and pointee.get(vt.get(a[2])) != a[0]) or
           (o == 83 and vt.get(a[2]) != a[0]) or
           (o == 245 and any(vt.get(v) != a[0] for v in a[2::2])) or
           (o == KHR_MULADD and vt.get(a[4]) != a[0])]
    bad += [a[0] for o, a in insts(w)
            if o == 62 and pointee.get(vt.get(a[0])) != vt.get(a[1])]
    check(not bad, "%s: loads, stores, copies, phis and products agree on "
          "types (mismatched: %s)" % (name, bad[:4]))
    layouts = [a[3] for o, a in insts(w) if o == KHR_LOAD] + \
              [a[2] for o, a in insts(w) if o == KHR_STORE]
    check(layouts and all(ints.get(x) in (0, 1) for x in layouts),
          "%s: every load and store has a row/column-major constant" % name)
    check((count(w, KHR_LOAD), count(w, KHR_STORE), count(w, KHR_MULADD)) ==
          (count(nv, NV_LOAD), count(nv, NV_STORE), count(nv, NV_MULADD)),
          "%s: as many loads, stores and products as the NV module" % name)
    check(w[3] >= nv[3] + 3 and w[0] == 0x07230203,
          "%s: header intact, id bound raised for the new constants" % name)


# Small shaders where one 16x16 f16 type is both A and B, built with glslc
# (-O and not; Debian 12's glslc -O crashes on the second): [name, body,
# expected error or None (translates), glslc option lists].
GLSL_HEAD = """#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer Bh { float16_t h[]; };
layout(set = 0, binding = 1) buffer Bf { float f[]; };
layout(push_constant) uniform P { uint n; } pc;
#define H fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define F fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
"""
GLSL_CASES = [
    ("a helper taking A", """
F mm(H x, F acc) { H y; coopMatLoadNV(y, h, 4096, 16, true);
                   return coopMatMulAddNV(x, y, acc); }
void main() { F c = F(0.0); H a, b;
  coopMatLoadNV(a, h, 0, 16, false); coopMatLoadNV(b, h, 4096, 16, true);
  c = mm(a, coopMatMulAddNV(a, b, c)); coopMatStoreNV(c, f, 0, 16, false); }
""", None, [[], ["-O"]]),
    ("B stored back after arithmetic", """
void main() { F c = F(0.0); H a, b;
  coopMatLoadNV(a, h, 0, 16, false); coopMatLoadNV(b, h, 4096, 16, true);
  c = coopMatMulAddNV(a, b, c); coopMatStoreNV(a + b, h, 0, 16, false);
  coopMatStoreNV(c, f, 0, 16, false); }
""", "keeps the shared type", [[]]),
    ("an array of B picked at run time", """
void main() { F c = F(0.0); H a, b[2];
  coopMatLoadNV(a, h, 0, 16, false); coopMatLoadNV(b[0], h, 4096, 16, true);
  coopMatLoadNV(b[1], h, 8192, 16, true);
  c = coopMatMulAddNV(a, b[pc.n & 1], c); coopMatStoreNV(c, f, 0, 16, false); }
""", "arrays and structs", [[], ["-O"]]),
]


def check_glsl_cases(tmp):
    glslc = shutil.which("glslc")
    if not glslc:
        print("skipped: spirv_nv2khr GLSL cases: no glslc")
        return
    for i, (name, body, err, opts) in enumerate(GLSL_CASES):
        for opt in opts:
            what = "%s%s" % (name, " (-O)" if opt else "")
            src = os.path.join(tmp, "case.comp")
            nv = os.path.join(tmp, "case.spv")
            out = os.path.join(tmp, "glsl_case%d%s.spv" %
                               (i, "_O" if opt else ""))
            with open(src, "w") as f:
                f.write(GLSL_HEAD + body)
            c = subprocess.run([glslc, "--target-env=vulkan1.1"] + opt +
                               ["-o", nv, src], capture_output=True,
                               text=True)
            if c.returncode:
                check(False, "%s: glslc builds it: %s" % (what, c.stderr))
                continue
            r = translate(nv, out)
            if err is None:
                check(r.returncode == 0, "%s: translates: %s" %
                      (what, r.stderr.strip()))
                if r.returncode == 0:
                    check_module(out, nv)
            else:
                check(r.returncode == 1 and err in r.stderr,
                      "%s: refused: %s" % (what, r.stderr.strip()))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    vk = os.path.join(build, "src", "targets", "vulkan")
    names = ["gemmk_f16", "convk_f16", "gemmk64_f16", "convik_f16",
             "convik64_f16", "convnk_f16", "convnk64_f16", "convnk64d_f16"]
    if not os.path.exists(os.path.join(vk, names[0] + ".spv")):
        print("skipped: spirv_nv2khr: the Vulkan target is not built in %s"
              % build)
        return 0
    for n in names:
        check_module(os.path.join(vk, n + ".spv"),
                     os.path.join(vk, n + "_nv.spv"))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.spv")
        # The 16x16 NV build shares one type between A and B: B gets its
        # own (check_module), but one value as both A and B is refused.
        r = translate(os.path.join(vk, "gemmc_f16.spv"), out)
        check(r.returncode == 0, "the NV 16x16 build translates: %s" %
              r.stderr.strip())
        if r.returncode == 0:
            check_module(out, os.path.join(vk, "gemmc_f16.spv"))
        w = words_of(os.path.join(vk, "gemmc_f16.spv"))
        i = 5
        while (w[i] & 0xFFFF) != NV_MULADD:
            i += w[i] >> 16
        w[i + 4] = w[i + 3]  # B operand := the A operand
        same = os.path.join(tmp, "same.spv")
        with open(same, "wb") as f:
            f.write(struct.pack("<%dI" % len(w), *w))
        r = translate(same, out)
        check(r.returncode == 1 and "used as A and as B" in r.stderr,
              "a matrix used as both A and B is refused: %s" %
              r.stderr.strip())
        r = translate(os.path.join(vk, "unary_f32.spv"), out)
        check(r.returncode == 1 and "no SPV_NV_cooperative_matrix" in r.stderr,
              "a module without NV matrices is refused: %s" % r.stderr.strip())
        with open(os.path.join(vk, "gemmk_f16_nv.spv"), "rb") as f:
            data = f.read()

        def refused(part, expect, what):
            cut = os.path.join(tmp, "cut.spv")
            with open(cut, "wb") as f:
                f.write(part)
            r = translate(cut, out)
            check(r.returncode == 1 and expect in r.stderr,
                  "%s is refused: %s" % (what, r.stderr.strip()))

        refused(data[:len(data) // 8 * 4], "", "a module cut in half")
        # Cut at an instruction boundary half way: every instruction whole,
        # but the function never ends.
        w = words_of(os.path.join(vk, "gemmk_f16_nv.spv"))
        i, half = 5, len(w) // 2
        while i + (w[i] >> 16) <= half:
            i += w[i] >> 16
        refused(data[:i * 4], "a function has no end",
                "a module cut at an instruction boundary")
        # Header and the first word of a multi-word instruction only.
        refused(data[:24], "truncated instruction", "an instruction cut short")
        refused(data[:len(data) - 2], "not a multiple of 4",
                "a size that is not whole words")
        check_glsl_cases(tmp)
        r = translate(os.path.join(tmp, "missing.spv"), out)
        check(r.returncode == 1 and "No such file" in r.stderr,
              "a missing input is refused: %s" % r.stderr.strip())
        r = translate(os.path.join(vk, "gemmk_f16_nv.spv"), out)
        check(r.returncode == 0 and
              open(out, "rb").read() ==
              open(os.path.join(vk, "gemmk_f16.spv"), "rb").read(),
              "the translation is deterministic (same bytes as the build's)")
    print("# %d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
