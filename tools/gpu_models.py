#!/usr/bin/env python3
"""The whole-model GPU peers for `dg-bench --models --device N`, measured
with PyTorch on the same machine: the benchmark zoo's torchvision models
(tests/zoo/make_bench_zoo.py's specs, the same constructors and input
sizes; random weights, which do not change the time) in eager f32 (torch's
defaults) and in f16 replayed from a CUDA graph (channels-last, cuDNN
benchmark mode), batch 1 unless --batch. The median of 3 blocks of >= 20
runs, each block ended by a synchronize. Prints a table and JSON lines.

Usage: python3 tools/gpu_models.py [--batch N] [--only NAME,...]"""
import json
import os
import sys
import time

try:
    import torch
except ImportError:
    print("skipped: torch is not installed")
    sys.exit(0)
if not torch.cuda.is_available():
    print("skipped: no CUDA device")
    sys.exit(0)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "zoo"))
import make_bench_zoo  # noqa: E402
from torch_graph import graphed  # noqa: E402

batch = 1
only = None
args = sys.argv[1:]
while args:
    a = args.pop(0)
    if a == "--batch" and args:
        batch = int(args.pop(0))
    elif a == "--only" and args:
        only = set(args.pop(0).split(","))
    else:
        sys.exit(__doc__)
dev = torch.device("cuda")
torch.backends.cudnn.benchmark = True


def timed(fn, reps=20):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    blocks = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        blocks.append((time.perf_counter() - t0) / reps * 1e3)
    return sorted(blocks)[1], min(blocks), max(blocks)


print("peer: torch %s, %s, batch %d" % (torch.__version__,
                                        torch.cuda.get_device_name(), batch))
print("%-20s %12s %17s %12s %17s" % ("model", "eager_f32_ms", "(spread)",
                                     "graph_f16_ms", "(spread)"))
rows = []
for name, (ctor, shape, _) in sorted(make_bench_zoo.specs().items()):
    if only and name not in only:
        continue
    torch.manual_seed(0)
    with torch.no_grad():
        m = ctor().eval().to(dev)
        x = torch.randn((batch,) + tuple(shape[1:]), device=dev)
        f32 = timed(lambda: m(x))
        h = m.half().to(memory_format=torch.channels_last)
        xh = x.half().to(memory_format=torch.channels_last)
        try:
            f16 = timed(graphed(torch, h, xh))
        except RuntimeError as e:  # a model torch cannot capture
            print("%s: f16 CUDA graph failed: %s" % (name, str(e)[:80]))
            f16 = (float("nan"),) * 3
    r = {"suite": "gpu_models", "model": name, "batch": batch,
         "eager_f32_ms": round(f32[0], 4), "graph_f16_ms": round(f16[0], 4),
         "eager_f32_spread": [round(v, 4) for v in f32[1:]],
         "graph_f16_spread": [round(v, 4) for v in f16[1:]]}
    rows.append(r)
    print("%-20s %12.3f %17s %12.3f %17s" % (
        name, f32[0], "(%.3f-%.3f)" % f32[1:], f16[0],
        "(%.3f-%.3f)" % f16[1:]))
    sys.stdout.flush()
    del m, h
    torch.cuda.empty_cache()
for r in rows:
    print(json.dumps(r))
