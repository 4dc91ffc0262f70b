#!/usr/bin/env python3
"""The GPU peers for dg-bench --gpu, measured with PyTorch in the same run:
cuBLAS SGEMM (TF32 off) and HGEMM, cuDNN 3x3 convolutions of the ResNet-50
layers at batch 32 (f32 NCHW for the OpenCL comparison, f16 channels-last
with benchmark mode for the Vulkan one). Prints a table and JSON lines.
Usage: python3 tools/gpu_peers.py [--quick]"""
import json
import sys
import time

try:
    import torch
except ImportError:
    print("skipped: torch is not installed")
    sys.exit(0)

quick = "--quick" in sys.argv
if not torch.cuda.is_available():
    print("skipped: no CUDA device")
    sys.exit(0)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
dev = torch.device("cuda")
rows = []


def timed(fn, reps=50):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) / reps * 1e6)
    return min(times)


def add(bench, shape, us, flops):
    r = {"bench": bench, "shape": shape, "peer_us": round(us, 2),
         "tflops": round(flops / us / 1e6, 2)}
    rows.append(r)
    print("%-10s %-28s %10.1f us %8.1f TFLOP/s" % (bench, shape, us,
                                                  r["tflops"]))


print("peer: torch %s, %s" % (torch.__version__, torch.cuda.get_device_name()))
for n, dt in ((4096, torch.float32), (4096, torch.float16),
              (8192, torch.float16)):
    n = n // 4 if quick else n
    a = torch.randn(n, n, device=dev, dtype=dt)
    b = torch.randn(n, n, device=dev, dtype=dt)
    us = timed(lambda: torch.mm(a, b), 10 if n >= 8192 else 30)
    add("cublas", "%dx%dx%d %s" % (n, n, n, str(dt)[6:]), us, 2.0 * n ** 3)
for c, h in ((64, 56), (128, 28), (256, 14), (512, 7)):
    batch = 4 if quick else 32
    for dt, fmt in ((torch.float32, torch.contiguous_format),
                    (torch.float16, torch.channels_last)):
        conv = torch.nn.Conv2d(c, c, 3, padding=1, bias=False).to(dev, dt)
        conv = conv.to(memory_format=fmt)
        x = torch.randn(batch, c, h, h, device=dev, dtype=dt).to(
            memory_format=fmt)
        with torch.no_grad():
            us = timed(lambda: conv(x))
        add("cudnn", "3x3 %d@%dx%d b%d %s%s" % (
            c, h, h, batch, str(dt)[6:],
            " nhwc" if fmt == torch.channels_last else ""),
            us, 2.0 * batch * c * c * 9 * h * h)
for r in rows:
    print(json.dumps(r))
