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

# Issue 17's paths: shape arithmetic folded at import, the op families,
# 1-D windows, and every unsupported node listed.
def i64(name, values):
    return init(name, np.array(values, np.int64))


save("fold", [helper.make_node("Shape", ["x"], ["s"]),
              helper.make_node("Gather", ["s", "zero"], ["b"], axis=0),
              helper.make_node("Unsqueeze", ["b", "ax"], ["b1"]),
              helper.make_node("Concat", ["b1", "m1"], ["shp"], axis=0),
              helper.make_node("Reshape", ["x", "shp"], ["r"]),
              helper.make_node("Range", ["r0", "r4", "r1"], ["rg"]),
              helper.make_node("Equal", ["rg", "two"], ["eq"]),
              helper.make_node("Where", ["eq", "ten", "rg"], ["w"]),
              helper.make_node("Cast", ["w"], ["wf"], to=TensorProto.FLOAT),
              helper.make_node("Shape", ["r"], ["rs"]),
              helper.make_node("ConstantOfShape", ["rs"], ["c"],
                               value=numpy_helper.from_array(
                                   np.array([0.5], np.float32))),
              helper.make_node("Add", ["r", "c"], ["y0"]),
              helper.make_node("Expand", ["wf", "rs"], ["e"]),
              helper.make_node("Add", ["y0", "e"], ["y"])],
     [f32("x", [2, 2, 1])], [f32("y", [2, 2])],
     [i64("zero", 0), i64("ax", [0]), i64("m1", [-1]), i64("r0", 0),
      i64("r4", 2), i64("r1", 1), i64("two", 1), i64("ten", 10)], opset=18)
save("unary", [helper.make_node("Tanh", ["x"], ["a"]),
               helper.make_node("HardSwish", ["a"], ["b"]),
               helper.make_node("LeakyRelu", ["b"], ["c"], alpha=0.2),
               helper.make_node("Erf", ["c"], ["d"]),
               helper.make_node("Gelu", ["d"], ["e"], approximate="tanh"),
               helper.make_node("Softplus", ["e"], ["y"])],
     [f32("x", [2, 3])], [f32("y", [2, 3])], [], opset=20)
save("binary", [helper.make_node("Mul", ["x", "k"], ["a"]),
                helper.make_node("Sub", ["a", "x"], ["b"]),
                helper.make_node("Div", ["b", "k"], ["c"]),
                helper.make_node("Pow", ["c", "two"], ["d"]),
                helper.make_node("Max", ["d", "x", "c"], ["e"]),
                helper.make_node("PRelu", ["e", "slope"], ["y"])],
     [f32("x", [1, 3, 2, 2])], [f32("y", [1, 3, 2, 2])],
     [init("k", np.float32(1.5)), init("two", np.float32(2)),
      init("slope", np.array([[[0.1]], [[0.2]], [[0.3]]], np.float32))])
save("reduce", [helper.make_node("ReduceMean", ["x", "axes"], ["m"],
                                 keepdims=1),
                helper.make_node("Sub", ["x", "m"], ["d"]),
                helper.make_node("LayerNormalization", ["d", "g"], ["l"],
                                 axis=-1),
                helper.make_node("LogSoftmax", ["l"], ["s"], axis=1),
                helper.make_node("ReduceLogSumExp", ["s"], ["y"], axes=[2],
                                 keepdims=0)],
     [f32("x", [2, 3, 4])], [f32("y", [2, 3])],
     [i64("axes", [1]), init("g", np.ones(4, np.float32))], opset=17)
save("movement", [helper.make_node("Transpose", ["x"], ["t"],
                                   perm=[0, 2, 1, 3]),
                  helper.make_node("Slice", ["t", "st", "en", "ax", "sp"],
                                   ["s"]),
                  helper.make_node("Pad", ["s", "pads"], ["p"],
                                   mode="reflect"),
                  helper.make_node("Split", ["p"], ["a", "b"], axis=3,
                                   num_outputs=2),
                  helper.make_node("Concat", ["b", "a"], ["c"], axis=3),
                  helper.make_node("DepthToSpace", ["c"], ["d"], blocksize=2),
                  helper.make_node("Tile", ["d", "rep"], ["y"])],
     [f32("x", [1, 4, 4, 4])], [f32("y", None)],
     [i64("st", [0, 1]), i64("en", [4, 4]), i64("ax", [1, 3]),
      i64("sp", [1, 1]), i64("pads", [0, 0, 1, 1, 0, 0, 1, 1]),
      i64("rep", [1, 1, 2, 1])], opset=18)
save("spatial", [helper.make_node("Resize", ["x", "", "sc"], ["r"],
                                  mode="linear"),
                 helper.make_node("ConvTranspose", ["r", "w"], ["c"],
                                  strides=[2, 2], output_padding=[1, 1]),
                 helper.make_node("BatchNormalization",
                                  ["c", "bs", "bb", "bm", "bv"], ["y"])],
     [f32("x", [1, 2, 3, 3])], [f32("y", None)],
     [init("sc", np.array([1, 1, 2, 2], np.float32)),
      init("w", rng.standard_normal((2, 3, 3, 3)).astype(np.float32)),
      init("bs", np.ones(3, np.float32)), init("bb", np.zeros(3, np.float32)),
      init("bm", np.zeros(3, np.float32)), init("bv", np.ones(3, np.float32))],
     opset=13)
save("conv1d", [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1]),
                helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2],
                                 strides=[2])],
     [f32("x", [1, 2, 8])], [f32("y", [1, 3, 4])],
     [init("w", rng.standard_normal((3, 2, 3)).astype(np.float32))])
save("unsupported", [helper.make_node("Relu", ["x"], ["a"]),
                     helper.make_node("Det", ["a"], ["b"]),
                     helper.make_node("Foo", ["b"], ["y"], domain="x.y")],
     [f32("x", [1, 3, 2, 2])], [f32("y", None)], [])
# The int8 folds between convolutions: Q/DQ pairs around Add -> Relu,
# Sigmoid, AveragePool, Concat of two scales, Mul, MaxPool, Flatten and a
# Conv -> Clip whose bounds are Constant nodes after it.
def qdq(t, s, z):
    return [helper.make_node("QuantizeLinear", [t, s, z], [t + "_q"]),
            helper.make_node("DequantizeLinear", [t + "_q", s, z],
                             [t + "_dq"])]


save("qdq_int8",
     qdq("x", "s1", "z1") +
     [helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wf"],
                       axis=0),
      helper.make_node("Conv", ["x_dq", "wf"], ["c"], pads=[1, 1, 1, 1]),
      helper.make_node("Constant", [], ["lo"], value=init("lo_v",
                                                          np.float32(0))),
      helper.make_node("Constant", [], ["hi"], value=init("hi_v",
                                                          np.float32(6))),
      helper.make_node("Clip", ["c", "lo", "hi"], ["r"])] +
     qdq("r", "s2", "z2") +
     [helper.make_node("Add", ["r_dq", "x_dq"], ["a"]),
      helper.make_node("Relu", ["a"], ["ar"])] + qdq("ar", "s3", "z1") +
     [helper.make_node("Sigmoid", ["ar_dq"], ["sg"])] + qdq("sg", "s4", "z2") +
     [helper.make_node("AveragePool", ["sg_dq"], ["ap"], kernel_shape=[3, 3],
                       pads=[1, 1, 1, 1])] + qdq("ap", "s2", "z1") +
     [helper.make_node("Concat", ["ap_dq", "ar_dq"], ["cat"], axis=1)] +
     qdq("cat", "s3", "z2") +
     [helper.make_node("Mul", ["cat_dq", "cat_dq"], ["m"])] +
     qdq("m", "s4", "z1") +
     [helper.make_node("MaxPool", ["m_dq"], ["mp"], kernel_shape=[2, 2],
                       strides=[2, 2])] + qdq("mp", "s1", "z2") +
     [helper.make_node("Flatten", ["mp_dq"], ["f"])] + qdq("f", "s1", "z2") +
     [helper.make_node("Identity", ["f_dq"], ["y"])],
     [f32("x", [1, 2, 4, 4])], [f32("y", None)],
     [init("s1", np.float32(0.05)), init("z1", np.uint8(128)),
      init("s2", np.float32(0.03)), init("z2", np.uint8(10)),
      init("s3", np.float32(0.07)), init("s4", np.float32(0.004)),
      init("wq", rng.integers(-127, 127, (2, 2, 3, 3)).astype(np.int8)),
      init("ws", np.array([0.01, 0.02], np.float32)),
      init("wz", np.zeros(2, np.int8))])
print("wrote", len(os.listdir(out)), "seeds to", out)
