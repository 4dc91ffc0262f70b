#!/usr/bin/env python3
"""Writes the models tests/ort/node_parity.c runs besides ONNX's node
tests, in their layout (NAME/model.onnx, NAME/test_data_set_0/input_N.pb):
the forms ONNX's tests lack where the importer and the EP used to differ
(Q/DQ chains to fold, an empty auto_pad, AveragePool's dilations, a Gemm C
of one value per row). The expected outputs are not written: the test
compares the two paths with each other. The files are committed.
Usage: /usr/bin/python3 tests/ort/make_parity_models.py"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "parity")
rng = np.random.default_rng(7)
N = helper.make_node


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def save(name, nodes, inputs, outputs, inits, feeds, opset=13):
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8  # what ORT 1.30 and Debian's onnx 1.12 both read
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    for i, (n, a) in enumerate(feeds):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i),
                  "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())


def const(name, a):
    return numpy_helper.from_array(a, name)


def scalar(name, v, dtype):
    return const(name, np.array(v, dtype))


U8, F32 = TensorProto.UINT8, TensorProto.FLOAT
xq = rng.integers(0, 256, (1, 3, 16, 16), dtype=np.uint8)
wq = rng.integers(-127, 128, (8, 3, 3, 3), dtype=np.int8)
bq = rng.integers(-5000, 5001, (8,), dtype=np.int32)
wscale = rng.uniform(0.003, 0.007, 8).astype(np.float32)
qparams = [scalar("xs", 0.0173, np.float32), scalar("xz", 128, np.uint8),
           const("wq", wq), const("ws", wscale),
           const("wz", np.zeros(8, np.int8)), const("bq", bq),
           const("bs", (np.float32(0.0173) * wscale).astype(np.float32)),
           const("bz", np.zeros(8, np.int32)),
           scalar("ys", 0.0371, np.float32), scalar("yz", 10, np.uint8)]
dq_in = [N("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
         N("DequantizeLinear", ["wq", "ws", "wz"], ["wf"], axis=0),
         N("DequantizeLinear", ["bq", "bs", "bz"], ["bf"], axis=0)]

# DQ -> Conv -> Relu -> Q: folded into one int8 conv by both.
save("test_qdq_conv_relu",
     dq_in + [N("Conv", ["xf", "wf", "bf"], ["c"], pads=[1, 1, 1, 1]),
              N("Relu", ["c"], ["r"]),
              N("QuantizeLinear", ["r", "ys", "yz"], ["y"])],
     [vi("x", U8, [1, 3, 16, 16])], [vi("y", U8, [1, 8, 16, 16])], qparams,
     [("x", xq)])
# The same, but the float conv result is an output too: no folding.
save("test_qdq_conv_shared",
     dq_in + [N("Conv", ["xf", "wf", "bf"], ["c"], pads=[1, 1, 1, 1]),
              N("QuantizeLinear", ["c", "ys", "yz"], ["y"])],
     [vi("x", U8, [1, 3, 16, 16])],
     [vi("y", U8, [1, 8, 16, 16]), vi("c", F32, [1, 8, 16, 16])], qparams,
     [("x", xq)])
# DQ -> MatMul -> Q: an int8 matmul.
aq = rng.integers(0, 256, (16, 64), dtype=np.uint8)
mq = rng.integers(-127, 128, (64, 32), dtype=np.int8)
save("test_qdq_matmul",
     [N("DequantizeLinear", ["a", "as", "az"], ["af"]),
      N("DequantizeLinear", ["m", "ms", "mz"], ["mf"]),
      N("MatMul", ["af", "mf"], ["p"]),
      N("QuantizeLinear", ["p", "ys", "yz"], ["y"])],
     [vi("a", U8, [16, 64])], [vi("y", U8, [16, 32])],
     [scalar("as", 0.0131, np.float32), scalar("az", 120, np.uint8),
      const("m", mq), scalar("ms", 0.0047, np.float32),
      scalar("mz", 0, np.int8), scalar("ys", 0.0913, np.float32),
      scalar("yz", 100, np.uint8)],
     [("a", aq)])
# An empty auto_pad means NOTSET (the importer used to refuse it).
xf = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
wf = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
save("test_conv_empty_auto_pad",
     [N("Conv", ["x", "w"], ["y"], auto_pad="", pads=[1, 1, 1, 1])],
     [vi("x", F32, [1, 2, 6, 6])], [vi("y", F32, [1, 3, 6, 6])],
     [const("w", wf)], [("x", xf)])
# AveragePool's dilations of 1 (the importer used to refuse the name).
save("test_averagepool_dilations_1",
     [N("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2],
        dilations=[1, 1])],
     [vi("x", F32, [1, 2, 6, 6])], [vi("y", F32, [1, 2, 3, 3])], [],
     [("x", xf)], opset=19)
# A Gemm C of shape [N, 1] with M = N: one value per row, not a bias.
ga = rng.standard_normal((3, 4)).astype(np.float32)
save("test_gemm_c_per_row",
     [N("Gemm", ["a", "b", "c"], ["y"])],
     [vi("a", F32, [3, 4])], [vi("y", F32, [3, 3])],
     [const("b", rng.standard_normal((4, 3)).astype(np.float32)),
      const("c", np.array([[1.0], [2.0], [3.0]], np.float32))],
     [("a", ga)])
# Per-channel output quantisation: not folded (the int8 conv takes
# per-tensor activations only), a float conv between DQ and Q in both.
save("test_qdq_conv_per_channel_q",
     dq_in + [N("Conv", ["xf", "wf", "bf"], ["c"], pads=[1, 1, 1, 1]),
              N("Relu", ["c"], ["r"]),
              N("QuantizeLinear", ["r", "ycs", "ycz"], ["y"], axis=1)],
     [vi("x", U8, [1, 3, 16, 16])], [vi("y", U8, [1, 8, 16, 16])],
     qparams + [const("ycs", rng.uniform(0.03, 0.05, 8).astype(np.float32)),
                const("ycz", rng.integers(0, 20, 8, dtype=np.uint8))],
     [("x", xq)])
