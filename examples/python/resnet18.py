#!/usr/bin/env python3
"""ResNet-18 from Python, notebook style: from an ONNX file and from the
builder, the plan printed (and drawn), verified node by node, and a torch
tensor passed in and out through DLPack. torchvision's ResNet-18 with
random weights (no download), exported by Debian's torch.

    PYTHONPATH=build/python python3 examples/python/resnet18.py
        [--size 224] [--devices KIND,...] [--svg FILE] [--dot FILE]

Each step prints what it did; the last lines compare both graphs with
torch's own output.
"""

import argparse
import os
import tempfile

import numpy as np
import torch
import torchvision

import directgraph as dg

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--size", type=int, default=224, help="input H = W")
ap.add_argument("--devices", default=None,
                help="device kinds to allow, e.g. cpu or vulkan,cpu")
ap.add_argument("--svg", default=None, help="write the plan's picture here")
ap.add_argument("--dot", default=None, help="write the plan's DOT text here")
args = ap.parse_args()
devices = args.devices.split(",") if args.devices else None

# 1. The model and an input, in torch.
torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=1000).eval()
x = torch.randn(1, 3, args.size, args.size)
with torch.no_grad():
    want = model(x)

# 2. From an ONNX file: export, load, compile.
tmp = tempfile.mkdtemp()
path = os.path.join(tmp, "resnet18.onnx")
kw = dict(input_names=["image"], output_names=["logits"], opset_version=17)
try:  # torch >= 2.5 would take its dynamo exporter otherwise
    torch.onnx.export(model, x, path, dynamo=False, **kw)
except TypeError:  # older torch: no dynamo argument, TorchScript export
    torch.onnx.export(model, x, path, **kw)
s_onnx = dg.Session(path, devices=devices)
print("ONNX inputs:", s_onnx.get_inputs(), "outputs:", s_onnx.get_outputs())
print(s_onnx.plan)

# 3. From the builder: one call per layer, the weights as numpy arrays.
sd = {k: v.detach().numpy() for k, v in model.state_dict().items()}


def conv_bn(g, t, conv, bn, stride, relu):
    w = sd[conv + ".weight"]
    t = g.conv2d(t, w, None, stride=stride, padding=w.shape[2] // 2,
                 name=conv)
    t = g.batch_norm(t, sd[bn + ".weight"], sd[bn + ".bias"],
                     sd[bn + ".running_mean"], sd[bn + ".running_var"],
                     epsilon=1e-5, name=bn)
    return g.relu(t) if relu else t


g = dg.Graph("resnet18")
t = g.input("image", (1, 3, args.size, args.size))
t = conv_bn(g, t, "conv1", "bn1", 2, True)
t = g.max_pool2d(t, 3, stride=2, padding=1, name="maxpool")
for layer in range(1, 5):
    for block in range(2):
        p = "layer%d.%d" % (layer, block)
        stride = 2 if layer > 1 and block == 0 else 1
        y = conv_bn(g, t, p + ".conv1", p + ".bn1", stride, True)
        y = conv_bn(g, y, p + ".conv2", p + ".bn2", 1, False)
        if p + ".downsample.0.weight" in sd:
            t = conv_bn(g, t, p + ".downsample.0", p + ".downsample.1",
                        stride, False)
        t = g.relu(y + t, name=p + ".relu")
t = g.flatten(g.global_avg_pool(t), 1)
g.output("logits", g.fully_connected(t, sd["fc.weight"], sd["fc.bias"],
                                     name="fc"))
s_built = g.compile(devices, profile=True)
print(s_built.plan)

# 4. Verify both, node by node, against the reference kernels.
for name, s in (("onnx", s_onnx), ("builder", s_built)):
    r = s.verify({"image": x})
    print("verify %s: %s, %d nodes, worst relative error %.3g" % (
        name, "ok" if r.ok else "MISMATCH at " + r.node, r.nodes_checked,
        r.max_rel_error))

# 5. Run with the torch tensor in place (DLPack) and the output back
#    into torch without a copy.
(y_onnx,) = s_onnx.run(None, {"image": x})
(y_built,) = s_built.run(["logits"], {"image": x})
y_torch = torch.from_dlpack(y_built)
assert y_torch.data_ptr() == y_built.ctypes.data  # the same memory
scale = float(want.abs().max())
for name, y in (("onnx", torch.from_dlpack(y_onnx)), ("builder", y_torch)):
    print("%s vs torch: max abs diff %.3g (outputs up to %.3g), top-1 %s" % (
        name, float((y - want).abs().max()), scale,
        "equal" if int(y.argmax()) == int(want.argmax()) else "DIFFERS"))
print("slowest nodes (profile=True):", ", ".join(
    "%s %.0f us" % (n.name, n.measured_us) for n in sorted(
        s_built.plan, key=lambda n: -n.measured_us)[:3]))

# 6. The plan as a picture, with the times just measured in its boxes.
if args.dot:
    with open(args.dot, "w") as f:
        f.write(s_built.plan.dot())
if args.svg:
    with open(args.svg, "w") as f:
        f.write(s_built.plan.svg())
    print("plan drawn in", args.svg)
