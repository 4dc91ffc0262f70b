#!/usr/bin/env python3
"""aarch64 kernels against XNNPACK and OpenBLAS, in instructions under qemu.

Runs an aarch64 build's tools/bench-insn under qemu-aarch64 (a Cortex-A76,
the RK3588's big core) for each case and side at two iteration counts;
the difference over the extra iterations is one run's instruction count,
setup (packing, operator creation, the correctness check) cancelled.
Instructions, not time: qemu's speed says nothing about a core's, and an
instruction count is what the board's in-order A55 pays roughly in
cycles. The targets are issue 25's: conv f32 <= 1.3x XNNPACK's
instructions, int8 <= 1.5x, SGEMM <= 1.2x OpenBLAS's.

usage: python3 tools/insn_bench.py [BUILD] [--json FILE] [--size small] [--tap]
  BUILD   an aarch64 build folder (default build-aarch64, as
          tests/aarch64/run.sh makes it)
  --size small: 3x3 convs 32 -> 32 at 28x28 and SGEMM 128^3 (a quarter
          of a minute) instead of 64 -> 64 at 56x56 and 256^3 (a minute)
  --tap   for tests/aarch64/run.sh: an "ok" / "FAIL" / "skipped:" line per
          side's correctness check, the table as "#" lines (the ratios
          are figures, never pass or fail)

The peers need Debian's arm64 libxnnpack-dev, libpthreadpool-dev and
libopenblas-dev when the build is configured (else their rows say so);
installing the arm64 XNNPACK removes python3-torch (its amd64 XNNPACK
cannot stay beside it), so reinstall torch afterwards.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qemu_insn  # noqa: E402

CASES = [
    # case, peer, sizes (full), sizes (small), MACs(sizes), target ratio
    ("conv-f32", "xnnpack", ["64", "56"], ["32", "28"],
     lambda c, h: 9 * c * c * h * h, 1.3),
    ("conv-int8", "xnnpack", ["64", "56"], ["32", "28"],
     lambda c, h: 9 * c * c * h * h, 1.5),
    ("sgemm", "openblas", ["256"], ["128"], lambda n: n ** 3, 1.2),
]
LOW, HIGH = 1, 3


def per_run(prog, case, side, sizes):
    counts = []
    for iters in (LOW, HIGH):
        n, rc, out = qemu_insn.count([prog, case, side, str(iters)] + sizes)
        if rc == 2:
            return None, ("not built into bench-insn (its arm64 -dev "
                          "package was missing when the build was "
                          "configured; see docs/performance.md)")
        if rc != 0 or "check: ok" not in out:
            return None, "FAIL: " + (out.strip() or f"exit {rc}")
        counts.append(n)
    return (counts[1] - counts[0]) / (HIGH - LOW), "ok"


def main():
    args = sys.argv[1:]
    if "-h" in args or "--help" in args:
        print(__doc__.strip())
        return 0
    json_path = None
    small = False
    tap = "--tap" in args
    args = [a for a in args if a != "--tap"]
    say = (lambda line: print("# " + line)) if tap else print
    build = "build-aarch64"
    i = 0
    while i < len(args):
        if args[i] == "--json" and i + 1 < len(args):
            json_path = args[i + 1]
            i += 2
            continue
        if args[i] == "--size" and i + 1 < len(args):
            small = args[i + 1] == "small"
            i += 2
            continue
        build = args[i]
        i += 1
    prog = os.path.join(build, "tools", "bench-insn")
    if not os.access(prog, os.X_OK):
        print(f"insn_bench: {prog} is missing: build the aarch64 tree first "
              "(tests/aarch64/run.sh makes build-aarch64)", file=sys.stderr)
        return 2
    say("instructions per run under qemu-aarch64 -cpu cortex-a76, one "
        "thread; ratio = ours / peer (lower is better)")
    say(f"{'case':<10} {'size':<8} {'ours':>12} {'peer':>9} {'theirs':>12} "
          f"{'ratio':>6} {'MAC/insn':>9} {'target':>7}")
    rows = []
    failed = False
    for case, peer, full, little, macs_of, target in CASES:
        sizes = little if small else full
        ours, why_o = per_run(prog, case, "ours", sizes)
        theirs, why_t = per_run(prog, case, peer, sizes)
        macs = macs_of(*map(int, sizes))
        ratio = ours / theirs if ours and theirs else None
        met = ratio is not None and ratio <= target
        failed |= why_o.startswith("FAIL") or why_t.startswith("FAIL")
        row = {"case": case, "size": "x".join(sizes), "ours": ours,
               "peer": peer, "peer_insn": theirs, "ratio": ratio,
               "macs_per_insn": macs / ours if ours else None,
               "target": target, "met": met,
               "ours_status": why_o, "peer_status": why_t}
        rows.append(row)

        if tap:
            for side, why in (("ours", why_o), (peer, why_t)):
                what = f"bench-insn {case} {side} {row['size']}"
                if why == "ok":
                    print(f"ok - {what}: checked against the reference")
                elif why.startswith("FAIL"):
                    print(f"FAIL - {what}: {why}")
                else:
                    print(f"skipped: {what}: {why}")

        def fmt(v):
            return f"{v:12.0f}" if v else f"{'-':>12}"
        say(f"{case:<10} {row['size']:<8} {fmt(ours)} {peer:>9} "
              f"{fmt(theirs)} "
              f"{(f'{ratio:6.2f}' if ratio else '     -')} "
              f"{(f'{macs / ours:9.2f}' if ours else '        -')} "
              f"{'<= ' + str(target):>7}  "
              f"{'met' if met else 'not met' if ratio else 'no figure'}"
              + ("" if why_o == "ok" else f"  ours: {why_o}")
              + ("" if why_t == "ok" else f"  {peer}: {why_t}"))
    if json_path:
        with open(json_path, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
