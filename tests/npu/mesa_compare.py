#!/usr/bin/env python3
"""Mesa's rocket command lists against ours, field by field.

tests/data/mesa-rocket/capture.txt.gz holds what Mesa's own code (the
rocket Gallium driver's task splitting and register generation, run on a
host; tests/data/mesa-rocket/README.md says how) emitted for the int8 conv
shapes of Mesa's Teflon tests. For every task Mesa made, this script asks
our generator (tests/npu_gen_dump) for the one-task conv of the same
geometry (the task's input rows, output rows, top padding), decodes both
lists with our register table (src/targets/npu/regs.def), and compares
every field of every register both write. Addresses are left aside. Each
field that differs must be one of DIFFERENCES below, each with the reason
we differ on purpose; any other difference fails the script, as does a
listed one that no longer occurs (the list stays true).

Usage: mesa_compare.py SOURCE_DIR NPU_GEN_DUMP
Prints one line per difference kind and per kind of task our planner
declines, the totals, then "ok - ..." or "FAIL - ..."; exit status 0 when
every difference is explained."""
import gzip
import os
import re
import struct
import subprocess
import sys


def registers(src):
    """regs.def: offset -> (register name, [(field, lo, hi)])."""
    regs, by_name = {}, {}
    for line in open(os.path.join(src, "src/targets/npu/regs.def")):
        m = re.match(r"NPU_REG\((\w+), (\w+), (0x[0-9A-Fa-f]+)\)", line)
        if m:
            name = m.group(1) + "_" + m.group(2)
            by_name[name] = (name, [])
            regs[int(m.group(3), 16)] = by_name[name]
            continue
        m = re.match(r"NPU_FIELD\((\w+), (\w+), (\w+), (\d+), (\d+)\)", line)
        if m:
            by_name[m.group(1) + "_" + m.group(2)][1].append(
                (m.group(3), int(m.group(4)), int(m.group(5))))
    return regs


# Registers holding addresses: compared with the base left aside.
ADDRESS = {"CNA_FEATURE_DATA_ADDR", "CNA_DCOMP_ADDR0", "DPU_DST_BASE_ADDR",
           "DPU_RDMA_BS_BASE_ADDR"}


def one_channel(shape, task):
    return shape["in_c"] == 1


def split(shape, task):
    return shape["ntasks"] > 1


def always(shape, task):
    return True


def short(shape, task):
    return task["in1"] - task["in0"] + 1 < 4


# Every field where we write another value than Mesa on purpose: (field,
# when it applies, why). A difference not listed fails the comparison.
DIFFERENCES = [
    ("CNA_CONV_CON1.ARGB_IN", one_channel,
     "Mesa reads a 1-channel input in the ARGB mode; we pad channels to 16 "
     "and run the ordinary mode (one recipe for every channel count)"),
    ("CNA_CONV_CON1.GROUP_LINE_OFF", one_channel, "ARGB mode, as above"),
    ("CNA_CONV_CON1.NONALIGN_DMA", one_channel, "ARGB mode, as above"),
    ("CNA_CVT_CON0.CVT_TRUNCATE_0", one_channel,
     "ARGB mode's input converter (Mesa: truncate 14, scale 16384, offset "
     "-128 per lane); we bypass the converter, the zero point handled as "
     "for every other channel count"),
    ("CNA_CVT_CON0.CVT_TRUNCATE_1", one_channel, "as above"),
    ("CNA_CVT_CON0.CVT_TRUNCATE_2", one_channel, "as above"),
    ("CNA_CVT_CON0.CVT_TRUNCATE_3", one_channel, "as above"),
    ("CNA_CVT_CON0.DATA_SIGN", one_channel, "as above"),
    ("CNA_CVT_CON0.CVT_TYPE", one_channel, "as above"),
    ("CNA_CVT_CON0.CVT_BYPASS", one_channel, "as above"),
    ("CNA_CVT_CON1.CVT_SCALE0", one_channel, "as above"),
    ("CNA_CVT_CON1.CVT_OFFSET0", one_channel, "as above"),
    ("CNA_CVT_CON2.CVT_SCALE1", one_channel, "as above"),
    ("CNA_CVT_CON2.CVT_OFFSET1", one_channel, "as above"),
    ("CNA_CVT_CON3.CVT_SCALE2", one_channel, "as above"),
    ("CNA_CVT_CON3.CVT_OFFSET2", one_channel, "as above"),
    ("CNA_CVT_CON4.CVT_SCALE3", one_channel, "as above"),
    ("CNA_CVT_CON4.CVT_OFFSET3", one_channel, "as above"),
    ("CNA_CVT_CON5.PER_CHANNEL_CVT_EN", one_channel, "as above"),
    ("CNA_DATA_SIZE0.DATAIN_WIDTH", one_channel,
     "ARGB mode widens the input to 16 pixels; we give the real width"),
    ("CNA_CBUF_CON1.DATA_ENTRIES", one_channel,
     "ARGB mode counts pixels (W x H); we count 16-channel atoms per row"),
    ("CNA_DMA_CON1.LINE_STRIDE", one_channel,
     "ARGB mode's line stride; ours is the 16-byte-atom row"),
    ("CNA_DMA_CON2.SURF_STRIDE", one_channel,
     "ARGB mode's surface stride; ours the atom layout's W x (H - 4)"),
    ("CNA_CBUF_CON0.DATA_BANK", one_channel,
     "follows from the ARGB entries above"),
    ("CNA_CBUF_CON0.WEIGHT_BANK", one_channel, "as above"),
    ("CNA_DMA_CON2.SURF_STRIDE", short,
     "below 4 input rows Mesa's float W x (H/4 - 1) goes negative and is "
     "masked into the field (0xffffffd for 3 rows); we clamp it at 0"),
    ("CNA_DMA_CON2.SURF_STRIDE", split,
     "Mesa reads a row slice in place from the whole input cube (the full "
     "height's surface stride); each of our tasks reads a cube of its own "
     "rows (README.md, Tiling)"),
    ("DPU_DST_SURF_STRIDE.DST_SURF_STRIDE", split,
     "Mesa writes a slice into the whole output cube (full height); each "
     "of our tasks writes its own cube"),
    ("DPU_SURFACE_ADD.SURF_ADD", split, "as above: the whole cube's planes"),
    ("CNA_CBUF_CON0.DATA_BANK", split,
     "Mesa fixes one bank split for all of a conv's slices (weights first, "
     "at most 7 input banks when they do not fit); we give each task the "
     "data banks its rows need and the weights the rest"),
    ("CNA_CBUF_CON0.WEIGHT_BANK", split, "as above"),
    ("CNA_CBUF_CON0.WEIGHT_REUSE", split,
     "Mesa keeps the weights for every slice after the first; we only "
     "where the bank split is the same as the slice before's (a slice "
     "with fewer rows gets other banks)", "rare"),
    ("CNA_PAD_CON1.PAD_VALUE", always,
     "the zero point's byte in both low bytes (odd channel lanes below 32 "
     "read byte 1: README.md, findings); Mesa writes zp - 0x80 plainly"),
    ("DPU_OUT_CVT_SCALE.OUT_CVT_SCALE", always,
     "Mesa's form carries into bit 15 for an all-ones mantissa; we mask the "
     "14 mantissa bits (docs/npu.md)", "rare"),
    ("PC_BASE_ADDRESS", split,
     "Mesa ends a task of a split conv with a PC_BASE_ADDRESS write (0, "
     "linked later); we end every list with the no-op word and chain the "
     "tasks in the job"),
]


# Mesa tasks our planner refuses, by why: Mesa's tiler and ours budget the
# CBUF differently (README.md, "Tiling"); each kind with its reason.
DECLINES = [
    ("one-channel ARGB input", lambda f: "_ic1_" in f,
     "Mesa packs a 1-channel input as ARGB pixels (W x H entries), we pad it "
     "to 16 channels, so Mesa's slices need more banks in our layout"),
    ("partial weights", lambda f: re.search(r"\+ (\d+) weight", f) and
     int(re.search(r"\+ (\d+) weight", f).group(1)) > 11,
     "Mesa streams weights larger than its weight banks (reuse off, 5 weight "
     "banks); we never do: we cut the output channels into blocks whose "
     "weights fit (and no board of ours has checked the streaming mode)"),
    ("input bank budget", lambda f: "CBUF banks > 12" in f,
     "Mesa budgets a row at ceil(C/16)/8 entries x W, half of what the CNA "
     "is programmed with (DATA_ENTRIES, its own formula); we budget what it "
     "is programmed with, so our slices are shorter"),
]


def explain(s, t, names, seen, unexplained, what):
    """Counts the listed difference a field or register of task t is, or
    records it as unexplained."""
    why = next((d for d in DIFFERENCES if d[0] in names and d[1](s, t)), None)
    if why:
        seen[why[0] + why[2]] = seen.get(why[0] + why[2], 0) + 1
    else:
        unexplained.append("%s task %d: %s" % (s["name"], t["n"], what))


def decode(words, regs):
    """Register name -> value (the last write), from (target, value, reg)."""
    out = {}
    for target, value, reg in words:
        if target in (0, 0x41, 0x81):  # end words and the op-enable trailer
            continue
        r = regs.get(reg)
        out[r[0] if r else "raw_%04x" % reg] = value
    return out


def fields(regs, reg_name, value):
    for r in regs.values():
        if r[0] == reg_name:
            if not r[1]:
                return [(reg_name, value)]
            return [("%s.%s" % (reg_name, f), (value >> lo) &
                     ((1 << (hi - lo + 1)) - 1)) for f, lo, hi in r[1]]
    return [(reg_name, value)]


def read_capture(path):
    shapes, cur, task = [], None, None
    for line in gzip.open(path, "rt"):
        p = line.split()
        if p[0] == "shape":
            keys = ["in_c", "in_h", "in_w", "out_c", "k", "k_w", "stride",
                    "pt", "pl", "pb", "pr", "dw", "out_h", "out_w", "ntasks"]
            cur = dict(zip(keys, map(int, p[2:17])), name=p[1],
                       sx=p[17], sw=p[18], sy=p[19], reuse=int(p[20]),
                       tasks=[])
            shapes.append(cur)
        elif p[0] == "task":
            v = list(map(int, p[1:]))
            task = dict(zip(["n", "in0", "in1", "out0", "out1", "pad_t",
                             "pad_b", "in_banks", "w_banks"], v), words=[])
            cur["tasks"].append(task)
        else:
            task["words"].append(tuple(int(x, 16) for x in p))
    return shapes


def f32(hexbits):
    return struct.unpack("<f", bytes.fromhex(hexbits)[::-1])[0]


def multiplier_bits(s):
    """(sx * sw) / sy in fp32, two roundings, as Mesa and we compute it."""
    import ctypes
    p = ctypes.c_float(f32(s["sx"]) * f32(s["sw"])).value
    m = ctypes.c_float(p / f32(s["sy"])).value
    return struct.pack("<f", m)[::-1].hex()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, dump = sys.argv[1], sys.argv[2]
    regs = registers(src)
    shapes = read_capture(os.path.join(src, "tests/data/mesa-rocket/"
                                       "capture.txt.gz"))
    # The requests: one per Mesa task, in the int8 domain (Mesa was fed
    # the uint8 re-encoding: zero points 131 / 128 / 124, ours 3 / 0 / -4).
    reqs, index = [], []
    for s in shapes:
        mb = multiplier_bits(s)
        for t in s["tasks"]:
            in_h = t["in1"] - t["in0"] + 1
            out_h = t["out1"] - t["out0"] + 1
            if out_h < 1 or out_h > s["out_h"]:
                continue  # Mesa's underflowed last task (README.md)
            # WEIGHT_REUSE where Mesa's slice keeps the same banks as the
            # one before it (conv_exec.c's rule: same block, same split).
            prev = s["tasks"][t["n"] - 1] if t["n"] else None
            reuse = int(bool(prev) and s["reuse"] and
                        (t["in_banks"], t["w_banks"]) ==
                        (prev["in_banks"], prev["w_banks"]))
            reqs.append("%d %d %d %d %d %d %d %d %d %d %d 3 0 -4 %s %d" % (
                s["in_c"], in_h, s["in_w"], s["out_c"], out_h, s["out_w"],
                s["k"], s["stride"], t["pad_t"], s["pl"], s["dw"], mb, reuse))
            index.append((s, t))
    res = subprocess.run([dump], input="\n".join(reqs) + "\n",
                         capture_output=True, text=True, check=True)
    ours, cur = [], None
    for line in res.stdout.splitlines():
        if line.startswith("list"):
            cur = []
            ours.append(cur)
        elif line.startswith("fail"):
            cur.append(("fail", line[5:]))
        else:
            cur.append(tuple(int(x, 16) for x in line.split()))
    assert len(ours) == len(index), (len(ours), len(index))
    seen, unexplained, equal, differ = {}, [], 0, 0
    failed = []
    for (s, t), mine in zip(index, ours):
        if mine and mine[0][0] == "fail":
            failed.append("%s task %d: %s" % (s["name"], t["n"], mine[0][1]))
            continue
        a, b = decode(t["words"], regs), decode(mine, regs)
        for reg in sorted(set(a) & set(b)):
            if reg in ADDRESS:
                continue
            for (name, va), (_, vb) in zip(fields(regs, reg, a[reg]),
                                           fields(regs, reg, b[reg])):
                if va == vb:
                    equal += 1
                    continue
                differ += 1
                explain(s, t, (name, reg), seen, unexplained,
                        "%s Mesa 0x%x ours 0x%x" % (name, va, vb))
        for reg in sorted(set(a) ^ set(b)):
            if reg not in ADDRESS:
                explain(s, t, (reg,), seen, unexplained, "only %s write %s" % (
                    "Mesa" if reg in a else "we", reg))
    for d in DIFFERENCES:
        n = seen.get(d[0] + d[2], 0)
        print("# %-36s %6d tasks: %s" % (d[0], n, d[2]))
    stale = [d[0] for d in DIFFERENCES
             if not seen.get(d[0] + d[2]) and d[-1] != "rare"]
    for u in unexplained[:40]:
        print("unexplained: " + u)
    kinds = {}  # every decline must be of a known kind
    for f in failed:
        kind = next((k for k in DECLINES if k[1](f)), None)
        if kind:
            kinds[kind[0]] = kinds.get(kind[0], 0) + 1
        else:
            unexplained.append("declined by our generator: " + f)
    for k in DECLINES:
        print("# declined %-28s %5d tasks: %s" % (k[0], kinds.get(k[0], 0), k[2]))
    ntasks = sum(len(s["tasks"]) for s in shapes)
    print("# %d shapes, %d tasks (%d compared), %d fields equal, %d differ "
          "(%d unexplained); %d tasks our generator declines; listed "
          "differences never seen: %s" % (
              len(shapes), ntasks, len(index) - len(failed), equal, differ,
              len(unexplained), len(failed), ", ".join(stale) or "none"))
    bad = bool(unexplained or stale)
    print("%s - Mesa's rocket lists: %d tasks compared field by field with "
          "ours, every difference one we make on purpose (its reason above)"
          % ("FAIL" if bad else "ok", len(index) - len(failed)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
