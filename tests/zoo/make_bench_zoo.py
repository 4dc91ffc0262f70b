#!/usr/bin/env python3
"""Builds the benchmark zoo `dg-bench --models` runs: the test zoo's
torchvision models (make_zoo.py, the same seeded random weights) at the
sizes users run them, 224x224 (Inception-v3 299x299, LeNet 28x28), with
the full ViT-B/16 and ConvNeXt-tiny, and int8 QDQ versions of ResNet-18,
MobileNetV2, MobileNetV3-large, ResNet-50 and the YOLO-style
detector (qdq.py). The batch dimension is
symbolic ("batch"), so one file serves every --batch.

Each model goes to OUT/<name>/model.onnx. A separate script from
make_zoo.py so that the test zoo's cache key (the hash of make_zoo.py and
qdq.py) does not change when the benchmark's list does.

Usage: make_bench_zoo.py OUT [NAME...]   (all models when no NAME)"""
import io
import os
import sys
import time

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_zoo  # noqa: E402  (the test zoo's models and helpers)
import qdq  # noqa: E402

TOTAL = 0  # models main() writes, for the progress line
QDQ_OF = {"resnet18": "qdq_resnet18", "mobilenet_v2": "qdq_mobilenet_v2",
          "mobilenet_v3_large": "qdq_mobilenet_v3_large",
          "resnet50": "qdq_resnet50", "yolo": "qdq_yolo"}


def vit_b_16():
    import torch.nn as nn
    import torchvision.models as tv
    m = tv.vit_b_16(num_classes=1000)
    # torchvision zero-initialises the head: the output would be its
    # (zero) bias, and the check against ORT would prove nothing.
    nn.init.normal_(m.heads.head.weight, std=0.05)
    nn.init.normal_(m.heads.head.bias, std=0.1)
    return m


def specs():
    import torchvision.models as tv
    s = make_zoo.torch_models()
    out = {}
    for name, (ctor, shape, opset) in s.items():
        if name == "vit":
            continue
        side = {"lenet": 28, "inception_v3": 299}.get(name, 224)
        out[name] = (ctor, (1, shape[1], side, side), opset)
    out["vit_b_16"] = (vit_b_16, (1, 3, 224, 224), 14)
    out["convnext_tiny"] = (lambda: tv.convnext_tiny(num_classes=1000),
                            (1, 3, 224, 224), 13)
    return out


def export(name, spec, seed):
    import torch
    ctor, shape, opset = spec
    torch.manual_seed(seed)
    model = ctor().eval()
    make_zoo.randomise_bn(model, torch, np.random.default_rng(seed))
    x = make_zoo.image(seed, shape)
    buf = io.BytesIO()
    kw = dict(opset_version=opset, input_names=["input"],
              output_names=["output"],
              dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
              do_constant_folding=True)
    try:  # the TorchScript exporter, Debian's (torch < 2.5 has no dynamo)
        torch.onnx.export(model, torch.from_numpy(x), buf, dynamo=False, **kw)
    except TypeError:
        torch.onnx.export(model, torch.from_numpy(x), buf, **kw)
    return onnx.load_from_string(buf.getvalue()), x


def save(out, name, m, done=[0], t0=time.time()):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    done[0] += 1
    # Progress on a terminal (the export takes minutes); piped, quiet.
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K%d of %d models written (%s), %.0f s" % (
            done[0], TOTAL, name, time.time() - t0))
        sys.stderr.flush()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    wanted = set(sys.argv[2:])
    global TOTAL
    TOTAL = len(specs()) + len(QDQ_OF)
    for i, (name, spec) in enumerate(sorted(specs().items())):
        q = QDQ_OF.get(name)
        if wanted and name not in wanted and q not in wanted:
            continue
        m, x = export(name, spec, 300 + i)
        if not wanted or name in wanted:
            save(out, name, m)
        if q and (not wanted or q in wanted):
            cal = [make_zoo.image(400 + k, x.shape) for k in range(2)]
            save(out, q, qdq.quantize(m, {"input": x}, cal))
    if sys.stderr.isatty():
        sys.stderr.write("\n")


if __name__ == "__main__":
    main()
