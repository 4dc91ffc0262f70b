#!/usr/bin/env python3
"""The zoo as a PyTorch 2.x user exports it, on the GPU machine: each of
make_zoo.py's torchvision architectures (seeded random weights) exported
by the installed PyTorch's default exporter (torch >= 2.9: dynamo, opset
18+, weights in an external data file), run by dg-run on each device it
names (NVIDIA Vulkan, NVIDIA OpenCL, ...) with every node pinned there
(--strict), and compared with ONNX Runtime's CPU EP on the same input
(1e-4 of the output's peak in f32, same top-1).

With --time it also reports whole-model latency, in the same run: dg-run's
median of 20 runs, ORT's CPU EP, PyTorch eager on CUDA and a CUDA graph
replay (batch 1, the model's input size); a benchmark, not a test.

Usage: gpu_zoo.py DG_RUN OUT_DIR --device N [--device N...] [--time]
                  [--size S] [NAME...]"""
import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_graph import graphed  # noqa: E402


def median_ms(fn, n=20):
    fn()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(ts)), float(np.min(ts)), float(np.max(ts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dg_run")
    ap.add_argument("out")
    ap.add_argument("--device", type=int, action="append", required=True)
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--size", type=int, default=0,
                    help="input height and width (default: make_zoo's)")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    import onnxruntime as ort
    import torch
    import make_zoo
    os.makedirs(a.out, exist_ok=True)
    specs = make_zoo.torch_models()
    failures = 0
    for seed, (name, (ctor, shape, _)) in enumerate(sorted(specs.items())):
        if a.names and name not in a.names:
            continue
        if a.size and name not in ("lenet", "vit"):
            shape = (shape[0], shape[1], a.size, a.size)
        torch.manual_seed(100 + seed)
        model = ctor().eval()
        make_zoo.randomise_bn(model, torch, np.random.default_rng(100 + seed))
        x = make_zoo.image(100 + seed, shape)
        d = os.path.join(a.out, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        try:
            torch.onnx.export(model, (torch.from_numpy(x),), path,
                              input_names=["input"], output_names=["output"])
        except Exception as e:  # the exporter's own failure, not ours
            print("skipped: %s: the exporter failed: %s" % (name,
                  str(e).splitlines()[0][:200]), flush=True)
            continue
        files = sorted(os.listdir(d))
        np.save(os.path.join(d, "input.npy"), x)
        so = ort.SessionOptions()
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        ref = sess.run(None, {"input": x})[0]
        peak = float(np.abs(ref).max())
        for dev in a.device:
            od = os.path.join(d, "dev%d" % dev)
            os.makedirs(od, exist_ok=True)
            cmd = [a.dg_run, path, "--device", str(dev), "--strict",
                   "--input", "input=" + os.path.join(d, "input.npy"),
                   "--output", od, "--repeat", "20" if a.time else "1"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            got_path = os.path.join(od, "output.npy")
            if r.returncode or not os.path.exists(got_path):
                failures += 1
                print("FAIL - %s on device %d: dg-run: %s" % (
                    name, dev, (r.stderr or r.stdout).strip()[-400:]),
                    flush=True)
                continue
            got = np.load(got_path)
            err = float(np.abs(got.astype(np.float64) - ref).max())
            top = int(np.argmax(got)) == int(np.argmax(ref))
            # an all-zero reference would make any output pass
            ok = peak > 0 and err <= 1e-4 * peak and (top or ref.ndim != 2)
            failures += not ok
            m = re.search(r"run: ([0-9.]+) us", r.stdout)
            run_us = m.group(1) if m else "?"
            print("%s - %s (PyTorch %s export, files %s) on device %d: worst "
                  "error %.3g (tolerance %.3g), top-1 %s; dg-run median %s us"
                  % ("ok" if ok else "FAIL", name, torch.__version__,
                     " ".join(files), dev, err, 1e-4 * peak,
                     "same" if top else "differs", run_us), flush=True)
        if a.time:
            xt = torch.from_numpy(x).cuda()
            mc = model.cuda()
            with torch.no_grad():
                eager = median_ms(lambda: (mc(xt), torch.cuda.synchronize()))
                replay = graphed(torch, mc, xt)
                graph = median_ms(lambda: (replay(),
                                           torch.cuda.synchronize()))
            ort_ms = median_ms(lambda: sess.run(None, {"input": x}))
            print("# time %s %s: ORT CPU EP %.3f ms (min %.3f max %.3f); "
                  "PyTorch eager CUDA %.3f ms (min %.3f max %.3f); CUDA graph "
                  "%.3f ms (min %.3f max %.3f)" % (
                      name, "x".join(map(str, shape)), *ort_ms, *eager,
                      *graph), flush=True)
    print("# gpu zoo: %d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
