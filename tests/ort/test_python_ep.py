#!/usr/bin/env python3
"""The plugin EP from Python onnxruntime (on the GPU machine, which has
onnxruntime 1.30 and torch): a torch-exported LeNet and a quantize_static
QOperator LeNet, each run with ORT's CPU EP and with directgraph's EP
(registered with register_execution_provider_library), outputs compared.
Usage: python3 tests/ort/test_python_ep.py EP_LIBRARY WEIGHTS_DIR"""
import os
import sys
import tempfile

try:
    import numpy as np
    import onnxruntime as ort
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:
    print("skipped: %s" % e)
    sys.exit(0)

ep_lib, wdir = os.path.abspath(sys.argv[1]), sys.argv[2]
failed = 0


def check(ok, msg):
    global failed
    print(("ok - " if ok else "FAIL - ") + msg)
    failed += not ok


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


net = LeNet().eval()
with torch.no_grad():
    for name in ("conv1", "conv2", "fc1", "fc2", "fc3"):
        getattr(net, name).weight.copy_(torch.from_numpy(
            np.load(os.path.join(wdir, name + "_w.npy"))))
        getattr(net, name).bias.copy_(torch.from_numpy(
            np.load(os.path.join(wdir, name + "_b.npy"))))
tmp = tempfile.mkdtemp()
f32_path = os.path.join(tmp, "lenet.onnx")
torch.onnx.export(net, torch.zeros(1, 1, 28, 28), f32_path,
                  input_names=["x"], output_names=["y"], opset_version=13)
rng = np.random.default_rng(0)
x = rng.random((1, 1, 28, 28), dtype=np.float32)

ort.register_execution_provider_library("directgraph", ep_lib)
devs = [d for d in ort.get_ep_devices()
        if d.ep_name == "DirectGraphExecutionProvider"]
check(len(devs) > 0, "the EP registers and lists its device(s)")


def run(path, ours, feeds):
    so = ort.SessionOptions()
    if ours:
        so.add_provider_for_devices(devs, {"policy": "auto"})
        so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    s = ort.InferenceSession(path, sess_options=so,
                             providers=None if ours else ["CPUExecutionProvider"])
    return s.run(None, feeds)[0]


ref = run(f32_path, False, {"x": x})
got = run(f32_path, True, {"x": x})
err = float(np.max(np.abs(ref - got)) / max(1e-12, np.max(np.abs(ref))))
check(err <= 1e-4, "torch-exported LeNet: EP output equals the CPU EP's "
      "(rel err %.2g)" % err)

try:
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                          QuantType, quantize_static)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{"x": rng.random((1, 1, 28, 28),
                                               dtype=np.float32)}
                              for _ in range(16)])

        def get_next(self):
            return next(self.data, None)

    q_path = os.path.join(tmp, "lenet_q.onnx")
    # Convolutions only: ORT turns quantised Gemm into com.microsoft's
    # QGemm, which is not an ONNX op (the fully connected layers stay
    # float, between DequantizeLinear/QuantizeLinear).
    quantize_static(f32_path, q_path, Reader(), quant_format=QuantFormat.QOperator,
                    activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, op_types_to_quantize=["Conv"])
    import onnx
    ops = sorted({n.op_type for n in onnx.load(q_path).graph.node})
    print("# quantised LeNet ops: %s" % ", ".join(ops))
    check("QLinearConv" in ops, "quantize_static produced QLinearConv")
    ref = run(q_path, False, {"x": x})
    got = run(q_path, True, {"x": x})
    # The int8 convolutions are exact; the float layers after them may
    # reorder sums (docs/numerics.md: 1e-4 of the largest value).
    err = float(np.max(np.abs(ref - got)) / max(1e-12, np.max(np.abs(ref))))
    check(err <= 1e-4, "quantize_static QLinearConv LeNet: EP output equals "
          "the CPU EP's (rel err %.2g)" % err)
except Exception as e:  # a failure to run is a failure, not a skip
    check(False, "quantize_static LeNet: %s" % e)
sys.exit(1 if failed else 0)
