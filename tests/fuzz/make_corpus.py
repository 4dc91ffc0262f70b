#!/usr/bin/env python3
"""Writes the seed corpus of the ONNX importer's fuzzer: one small model per
supported op and form, made here with python3-onnx's helpers.
Usage: /usr/bin/python3 tests/fuzz/make_corpus.py [outdir]"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "corpus")
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def save(name, nodes, inputs, outputs, inits, opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
save("conv", [helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1],
                               strides=[2, 2])],
     [f32("x", [1, 3, 8, 8])], [f32("y", [1, 4, 4, 4])],
     [init("w", w), init("b", np.zeros(4, np.float32))])
save("pool", [helper.make_node("MaxPool", ["x"], ["m"], kernel_shape=[2, 2],
                               strides=[2, 2], ceil_mode=1),
              helper.make_node("AveragePool", ["m"], ["a"], kernel_shape=[3, 3],
                               pads=[1, 1, 1, 1], count_include_pad=1),
              helper.make_node("GlobalAveragePool", ["a"], ["y"])],
     [f32("x", [1, 2, 7, 7])], [f32("y", [1, 2, 1, 1])], [])
save("gemm", [helper.make_node("Flatten", ["x"], ["f"], axis=1),
              helper.make_node("Gemm", ["f", "w", "c"], ["g"], transB=1),
              helper.make_node("Relu", ["g"], ["r"]),
              helper.make_node("Softmax", ["r"], ["y"], axis=-1)],
     [f32("x", [2, 3, 2, 2])], [f32("y", [2, 5])],
     [init("w", rng.standard_normal((5, 12)).astype(np.float32)),
      init("c", np.ones(5, np.float32))])
save("shape", [helper.make_node("Reshape", ["x", "s"], ["r"]),
               helper.make_node("Concat", ["r", "r"], ["c"], axis=1),
               helper.make_node("Clip", ["c", "lo", "hi"], ["k"]),
               helper.make_node("Add", ["k", "b"], ["y"])],
     [f32("x", [2, 6])], [f32("y", [2, 2, 6])],
     [init("s", np.array([2, 1, 6], np.int64)),
      init("lo", np.float32(-0.5)), init("hi", np.float32(0.5)),
      init("b", np.ones(6, np.float32))])
save("matmul", [helper.make_node("MatMul", ["a", "b"], ["y"])],
     [f32("a", [2, 3, 4]), f32("b", [4, 5])], [f32("y", [2, 3, 5])], [])
save("qlinearconv",
     [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys",
                                       "yz", "b"], ["y"], pads=[1, 1, 1, 1])],
     [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 2, 5, 5])],
     [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 3, 5, 5])],
     [init("xs", np.float32(0.02)), init("xz", np.uint8(128)),
      init("w", rng.integers(-127, 127, (3, 2, 3, 3)).astype(np.int8)),
      init("ws", np.array([0.01, 0.02, 0.03], np.float32)),
      init("wz", np.zeros(3, np.int8)), init("ys", np.float32(0.1)),
      init("yz", np.uint8(100)),
      init("b", rng.integers(-100, 100, 3).astype(np.int32))])
save("qdq", [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["dq"]),
             helper.make_node("DequantizeLinear", ["wq", "ws"], ["wf"]),
             helper.make_node("Conv", ["dq", "wf"], ["c"]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("QuantizeLinear", ["r", "s2", "z2"], ["y"])],
     [f32("x", [1, 2, 4, 4])],
     [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 2, 4, 4])],
     [init("s", np.float32(0.05)), init("z", np.int8(0)),
      init("wq", rng.integers(-127, 127, (2, 2, 1, 1)).astype(np.int8)),
      init("ws", np.float32(0.01)), init("s2", np.float32(0.1)),
      init("z2", np.int8(-3))])
save("qlinearmatmul",
     [helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz",
                                         "ys", "yz"], ["y"])],
     [helper.make_tensor_value_info("a", TensorProto.INT8, [2, 4])],
     [helper.make_tensor_value_info("y", TensorProto.INT8, [2, 3])],
     [init("as", np.float32(0.1)), init("az", np.int8(1)),
      init("b", rng.integers(-127, 127, (4, 3)).astype(np.int8)),
      init("bs", np.float32(0.2)), init("bz", np.int8(0)),
      init("ys", np.float32(0.3)), init("yz", np.int8(-1))])
print("wrote", len(os.listdir(out)), "seeds to", out)
