#!/usr/bin/env python3
"""Checks that the Vulkan modules and their push constants come from one
source each (src/targets/vulkan/variants.def, shaders/push_constants.h) and
that the build refuses a table that disagrees with itself or with a
kernel: every line of the table was built (NAME.spv, and NAME_nv.spv for
the translated ones, which test_spirv_nv2khr.py must name) and embedded;
every module's push-constant block fits VK_PUSH_BYTES and is packed as C
packs vk_internal.h's structs (4-byte members, no gaps); glslc refuses a
tile that is not the kernel's, a tile for an untiled kernel and a tiled
kernel without one; vk_variants.py refuses malformed lines. (test_vulkan
checks the C side: every enum entry has its embedded module.) Prints
ok/FAIL lines.
Usage: test_vk_variants.py BUILD_DIR"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
VK = os.path.join(HERE, "..", "..", "src", "targets", "vulkan")
SCRIPT = os.path.join(VK, "vk_variants.py")
TABLE = os.path.join(VK, "variants.def")
SHADERS = os.path.join(VK, "shaders")

failures = 0


def check(cond, msg):
    global failures
    print(("ok - " if cond else "FAIL - ") + msg)
    if not cond:
        failures += 1


def variants(table=TABLE):
    r = subprocess.run([sys.executable, SCRIPT, table], capture_output=True,
                       text=True)
    rows = [line.split("|") for line in r.stdout.splitlines()]
    return r, rows


def push_block(path):
    """(size in bytes, whether packed) of the module's push-constant block,
    or None where it has none."""
    with open(path, "rb") as f:
        data = f.read()
    w = struct.unpack("<%dI" % (len(data) // 4), data)
    ptr, struct_members, offsets, strides, consts, scalar, arrays = \
        {}, {}, {}, {}, {}, {}, {}
    var_type = None
    i = 5
    while i < len(w):
        n, op = w[i] >> 16, w[i] & 0xFFFF
        a = w[i + 1:i + n]
        if op == 59 and a[2] == 9:  # OpVariable, PushConstant
            var_type = a[0]
        elif op == 32:  # OpTypePointer
            ptr[a[0]] = a[2]
        elif op == 30:  # OpTypeStruct
            struct_members[a[0]] = list(a[1:])
        elif op == 72 and a[2] == 35:  # OpMemberDecorate Offset
            offsets[(a[0], a[1])] = a[3]
        elif op == 71 and a[1] == 6:  # OpDecorate ArrayStride
            strides[a[0]] = a[2]
        elif op in (21, 22):  # OpTypeInt, OpTypeFloat
            scalar[a[0]] = a[1] // 8
        elif op == 28:  # OpTypeArray
            arrays[a[0]] = (a[1], a[2])
        elif op == 43:  # OpConstant
            consts[a[1]] = a[2]
        i += n
    if var_type is None:
        return None
    st = ptr[var_type]
    size, packed, expect = 0, True, 0
    for m, t in enumerate(struct_members[st]):
        off = offsets[(st, m)]
        if t in scalar:
            bytes_ = scalar[t]
            packed = packed and bytes_ == 4
        else:
            elem, length = arrays[t]
            bytes_ = consts[length] * strides[t]
            packed = packed and scalar.get(elem) == 4 and strides[t] == 4
        packed = packed and off == expect
        expect = off + bytes_
        size = max(size, off + bytes_)
    return size, packed


def refuses_table(tmp, text, expect, what):
    """vk_variants.py on a table of text (beside a link to the shaders)
    fails with expect in its message."""
    path = os.path.join(tmp, "variants.def")
    with open(path, "w") as f:
        f.write(text)
    r, _ = variants(path)
    check(r.returncode != 0 and expect in r.stderr,
          "vk_variants.py refuses %s: %s" % (what, r.stderr.strip()))


def glslc_refuses(glslc, tmp, source, defines, expect, what):
    r = subprocess.run([glslc, "--target-env=vulkan1.1", "-O", "-I", SHADERS]
                       + defines + ["-o", os.path.join(tmp, "x.spv"),
                                    os.path.join(SHADERS, source)],
                       capture_output=True, text=True)
    check(r.returncode != 0 and expect in r.stderr,
          "glslc refuses %s: %s" % (what, r.stderr.strip().split("\n")[0]))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    out = os.path.join(build, "src", "targets", "vulkan")
    r, rows = variants()
    check(r.returncode == 0 and len(rows) > 0 and
          all(len(v) == 4 for v in rows),
          "vk_variants.py reads variants.def: %d variants %s" %
          (len(rows), r.stderr.strip()))
    # test_spirv_nv2khr.py names the translated modules it checks: they
    # must be the table's.
    nv2khr = open(os.path.join(HERE, "test_spirv_nv2khr.py")).read()
    m = re.search(r"names = \[([^\]]*)\]", nv2khr)
    listed = re.findall(r'"(\w+)"', m.group(1)) if m else None
    check(listed == [v[0] for v in rows if v[2] == "1"],
          "test_spirv_nv2khr.py checks exactly the translated variants")
    if not os.path.exists(os.path.join(out, "vk_spirv.c")):
        print("skipped: the Vulkan target is not built in %s" % build)
    else:
        missing = [v[0] for v in rows
                   if not os.path.isfile(os.path.join(out, v[0] + ".spv")) or
                   (v[2] == "1" and not os.path.isfile(
                       os.path.join(out, v[0] + "_nv.spv")))]
        check(not missing, "every variant was built: missing %s" % missing)
        embedded = open(os.path.join(out, "vk_spirv.c")).read()
        names = re.findall(r'^  \{"(\w+)", spv_', embedded, re.M)
        check(names == [v[0] for v in rows],
              "vk_spirv.c embeds the table's modules in its order")
        m = re.search(r"#define VK_PUSH_BYTES (\d+)",
                      open(os.path.join(VK, "vk_internal.h")).read())
        limit = int(m.group(1))
        bad = []
        for v in rows:
            path = os.path.join(out, v[0] + ".spv")
            if not os.path.isfile(path):
                continue
            blk = push_block(path)
            if blk is None or blk[0] > limit or not blk[1]:
                bad.append((v[0], blk))
        check(not bad, "every module's push constants fit VK_PUSH_BYTES "
              "(%d) and are packed as in C: %s" % (limit, bad))
    with tempfile.TemporaryDirectory() as tmp:
        glslc = shutil.which("glslc")
        if not glslc:
            print("skipped: the tile checks: no glslc")
        else:
            glslc_refuses(glslc, tmp, "gemm_coop.comp",
                          ["-DTILE_M=128", "-DTILE_N=64"],
                          "tile differs", "a tile that is not the kernel's")
            glslc_refuses(glslc, tmp, "gemm_big.comp", [],
                          "without its tile", "a tiled kernel without a tile")
            glslc_refuses(glslc, tmp, "unary.comp",
                          ["-DTILE_M=64", "-DTILE_N=64"],
                          "without BM x BN", "a tile for an untiled kernel")
        os.symlink(SHADERS, os.path.join(tmp, "shaders"))
        good = ('VK_VARIANT(GAP_F32, gap_f32, "gap.comp", 0, 0, 0, MEMORY, '
                '"")\n')
        path = os.path.join(tmp, "variants.def")
        with open(path, "w") as f:
            f.write("/* a comment */\n" + good +
                    'VK_VARIANT(GAP_F16, gap_f16, "gap.comp", 0, 0, 0, MEMORY,\n'
                    '           "-DF" "16")\n')
        r, rows = variants(path)
        check(r.returncode == 0 and rows == [
            ["gap_f32", "gap.comp", "0", ""],
            ["gap_f16", "gap.comp", "0", "-DF16"]],
            "vk_variants.py joins strings across lines: %s" % rows)
        refuses_table(tmp, good.replace("GAP_F32", "GAP_F16"),
                      "not the name", "an ID that is not the name")
        refuses_table(tmp, good + good, "listed twice", "a repeated name")
        refuses_table(tmp, good.replace("gap.comp", "nope.comp"),
                      "no shader", "a missing source")
        refuses_table(tmp, good + "VK_VARIANTS(x)\n", "not a VK_VARIANT",
                      "a line it does not know")
        refuses_table(tmp, good.replace('""', '"-O2"'),
                      "not a -D definition", "an argument other than -D")
        refuses_table(tmp, good.replace("0, 0, 0", "0, 64, 0"),
                      "both sides", "half a tile")
        refuses_table(tmp, good.replace('""', '"-DTILE_M=64"'),
                      "tile fields", "a tile given as a definition")
        refuses_table(tmp, good.replace(', ""', ""), "arguments",
                      "a missing field")
        refuses_table(tmp, good.replace("MEMORY", "FAST"), "cost must be",
                      "a cost class the model does not know")
    print("# %d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
