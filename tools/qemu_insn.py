"""Counts the guest instructions a program executes under qemu-user.

Debian's qemu-user-static has no plugin support, so the count comes from
qemu's own logs: `-d in_asm` prints each translation block once (its guest
instructions, one per line) and `-d exec,nochain` prints a line each time a
block runs (nochain makes every run go through the logged path). The
count is the sum, over executed blocks, of their instruction counts. The
log is read through a FIFO as qemu writes it, so nothing large lands on
disk.

Used by tools/insn_bench.py; `python3 tools/qemu_insn.py -- prog args`
prints one program's count.
"""

import os
import subprocess
import sys
import tempfile
import threading


def _normalise(pc):
    return pc.lstrip("0") or "0"


def count(argv, qemu=("qemu-aarch64-static", "-L", "/", "-cpu", "cortex-a76"),
          env=None, by_symbol=None):
    """Runs argv under qemu; returns (instructions, exit status, its
    stdout and stderr together).
    by_symbol, a dict, gets the instructions per function name where
    qemu knows one (the program's own symbols; "?" elsewhere)."""
    with tempfile.TemporaryDirectory() as tmp:
        fifo = os.path.join(tmp, "log")
        os.mkfifo(fifo)
        result = {}

        def reader():
            with open(fifo, errors="replace") as f:
                total = 0
                sizes = {}
                names = {}
                block_pc = None
                block_len = 0
                sym = "?"
                for line in f:
                    c = line[:1]
                    if c == "T" and line.startswith("Trace "):
                        lb = line.find("[")
                        pc = _normalise(line[lb + 1:].split("/", 2)[1])
                        n = sizes.get(pc, 0)
                        total += n
                        if by_symbol is not None:
                            k = names.get(pc, "?")
                            by_symbol[k] = by_symbol.get(k, 0) + n
                    elif c == "0" and line.startswith("0x"):
                        if block_pc is None:
                            block_pc = _normalise(line[2:line.index(":")])
                            block_len = 0
                        block_len += 1
                    else:
                        if block_pc is not None:
                            sizes[block_pc] = block_len
                            names[block_pc] = sym
                            block_pc = None
                        if line.startswith("IN:"):
                            sym = line[3:].strip() or "?"
                result["total"] = total

        t = threading.Thread(target=reader)
        t.start()
        cmd = list(qemu) + ["-d", "in_asm,exec,nochain", "-D", fifo] + list(argv)
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, env=env, text=True)
        t.join()
        return result.get("total", 0), p.returncode, p.stdout


def main():
    args = sys.argv[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        print("\nusage: python3 tools/qemu_insn.py -- PROGRAM [ARGS...]")
        return 0 if args else 2
    syms = {}
    n, rc, out = count(args, by_symbol=syms)
    sys.stdout.write(out)
    print(f"instructions: {n}")
    for name, k in sorted(syms.items(), key=lambda x: -x[1])[:15]:
        print(f"  {k:12d}  {100.0 * k / max(n, 1):5.1f}%  {name}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
