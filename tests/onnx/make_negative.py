#!/usr/bin/env python3
"""Writes the ONNX models the importer must refuse, each for one reason
that the diagnostic has to name, and the shape-arithmetic models it must
fold (tests/test_onnx_import.c).
Usage: /usr/bin/python3 tests/onnx/make_negative.py"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = os.path.dirname(os.path.abspath(__file__))


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


os.makedirs(os.path.join(out, "external"), exist_ok=True)


def save(name, nodes, inputs, outputs, inits, opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


w = numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w")
# Det: an op no composition of the builder's ops computes.
save("unsupported_op", [helper.make_node("Relu", ["x"], ["r"], name="ok_relu"),
                        helper.make_node("Det", ["r"], ["y"],
                                         name="the_det")],
     [f32("x", [4, 4])], [f32("y", [])], [])
# Every unsupported node named in one error: Det first, then a custom op.
save("many_unsupported", [helper.make_node("Relu", ["x"], ["a"]),
                          helper.make_node("Det", ["a"], ["b"], name="det"),
                          helper.make_node("Relu", ["b"], ["c"]),
                          helper.make_node("Foo", ["c"], ["y"], name="custom",
                                           domain="my.ops")],
     [f32("x", [1, 3, 4, 4])], [f32("y", [1, 3, 4, 4])], [])
save("unsupported_attr", [helper.make_node("Conv", ["x", "w"], ["y"],
                                           name="conv_x", foo=3)],
     [f32("x", [1, 1, 5, 5])], [f32("y", [1, 2, 3, 3])], [w])
# Dilated pooling imports (2-D, and 1-D through the reshape to 2-D); a
# dilation below 1 is refused.
save("dilated_pool", [helper.make_node("MaxPool", ["x"], ["y"], name="mp",
                                       kernel_shape=[2, 2],
                                       dilations=[2, 2])],
     [f32("x", [1, 1, 6, 6])], [f32("y", [1, 1, 4, 4])], [])
save("dilated_avg_pool_1d", [helper.make_node("AveragePool", ["x"], ["y"],
                                              name="ap", kernel_shape=[2],
                                              dilations=[3], pads=[1, 1],
                                              count_include_pad=1)],
     [f32("x", [1, 1, 7])], [f32("y", [1, 1, 6])], [], opset=19)
save("negative_dilation_pool", [helper.make_node("MaxPool", ["x"], ["y"],
                                                 name="mp",
                                                 kernel_shape=[2, 2],
                                                 dilations=[1, -1])],
     [f32("x", [1, 1, 6, 6])], [f32("y", [1, 1, 5, 5])], [])
# LpPool and GlobalLpPool, composed by the translator (abs, pow, average
# pooling or a reduction): values worked out by hand in test_onnx_import.c.
save("lp_pool_p1", [helper.make_node("LpPool", ["x"], ["y"], name="lp",
                                     kernel_shape=[2, 2], p=1)],
     [f32("x", [1, 1, 3, 3])], [f32("y", [1, 1, 2, 2])], [], opset=11)
save("lp_pool_1d_ceil", [helper.make_node("LpPool", ["x"], ["y"], name="lp",
                                          kernel_shape=[2], dilations=[2],
                                          strides=[2], ceil_mode=1, p=2)],
     [f32("x", [1, 1, 6])], [f32("y", [1, 1, 3])], [], opset=18)
save("lp_pool_ceil_auto_pad", [helper.make_node("LpPool", ["x"], ["y"],
                                                name="lp", kernel_shape=[2],
                                                strides=[2], ceil_mode=1,
                                                auto_pad="SAME_UPPER")],
     [f32("x", [1, 1, 5])], [f32("y", [1, 1, 3])], [], opset=18)
save("global_lp_pool_p3", [helper.make_node("GlobalLpPool", ["x"], ["y"],
                                            name="glp", p=3)],
     [f32("x", [1, 2, 2])], [f32("y", [1, 2, 1])], [])
save("global_lp_pool_p2", [helper.make_node("GlobalLpPool", ["x"], ["y"],
                                            name="glp")],
     [f32("x", [1, 1, 2, 2])], [f32("y", [1, 1, 1, 1])], [])
save("symbolic_batch", [helper.make_node("Relu", ["x"], ["y"])],
     [f32("x", ["N", 4])], [f32("y", ["N", 4])], [])
save("bad_shape", [helper.make_node("Conv", ["x", "w"], ["y"], name="c")],
     [f32("x", [1, 3, 5, 5])], [f32("y", [1, 2, 3, 3])], [w])
bad = numpy_helper.from_array(np.ones((2, 3), np.float32), "big")
bad.dims[0] = 1 << 40  # dims promise far more data than the file holds
save("lying_initializer", [helper.make_node("Add", ["x", "big"], ["y"])],
     [f32("x", [2, 3])], [f32("y", [2, 3])], [bad])
save("missing_input", [helper.make_node("Add", ["x", "nowhere"], ["y"])],
     [f32("x", [2, 3])], [f32("y", [2, 3])], [])
save("custom_domain", [helper.make_node("Relu", ["x"], ["y"],
                                        domain="com.example")],
     [f32("x", [2])], [f32("y", [2])], [])
# Issue 18's probes: int64 attributes that were cut to int32, values the
# builder reads as "default", weights contradicting kernel_shape, and one
# value written by two nodes.
def conv(name, **attrs):
    save(name, [helper.make_node("Conv", ["x", "w"], ["y"], name="c",
                                 **attrs)],
         [f32("x", [1, 1, 5, 5])], [f32("y", [1, 2, 3, 3])], [w])


conv("stride_2p33", strides=[1 << 33, 1])
conv("pads_2p40", pads=[1 << 40, 0, 0, 0])
conv("group_0", group=0)
conv("stride_0", strides=[0, 1])
conv("kernel_contradicts", kernel_shape=[2, 2])
save("concat_axis_2p40", [helper.make_node("Concat", ["x", "x"], ["y"],
                                           name="cat", axis=1 << 40)],
     [f32("x", [2, 3])], [f32("y", [4, 3])], [])
save("softmax_axis_huge", [helper.make_node("Softmax", ["x"], ["y"],
                                            name="sm", axis=-(1 << 62))],
     [f32("x", [2, 3])], [f32("y", [2, 3])], [])
save("two_writers", [helper.make_node("Relu", ["x"], ["y"], name="a"),
                     helper.make_node("Relu", ["x"], ["y"], name="b")],
     [f32("x", [2, 3])], [f32("y", [2, 3])], [])
# 17 bytes of raw_data for 4 floats (the message said "4 values where its
# dims say 4").
odd = numpy_helper.from_array(np.ones(4, np.float32), "odd")
odd.raw_data = odd.raw_data + b"\0"
save("raw_data_17_bytes", [helper.make_node("Add", ["x", "odd"], ["y"])],
     [f32("x", [4])], [f32("y", [4])], [odd])
# Not negative: a Reshape target that float would round ([3, 16777220]).
shape = numpy_helper.from_array(np.array([3, 16777219], np.int64), "shape")
save("reshape_exact_int64", [helper.make_node("Reshape", ["x", "shape"], ["y"],
                                             name="r")],
     [f32("x", [3 * 16777219])], [f32("y", [3, 16777219])], [shape])

# Shape arithmetic the importer folds (PyTorch's export around Reshape):
# Shape -> Gather -> Unsqueeze -> Concat -> Reshape leaves two nodes.
def i64(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


save("fold_shape_chain",
     [helper.make_node("Shape", ["x"], ["s"]),
      helper.make_node("Gather", ["s", "zero"], ["b"], axis=0),
      helper.make_node("Unsqueeze", ["b", "axes"], ["b1"]),
      helper.make_node("Concat", ["b1", "minus1"], ["shp"], axis=0),
      helper.make_node("Reshape", ["x", "shp"], ["r"]),
      helper.make_node("Relu", ["r"], ["y"])],
     [f32("x", [2, 3, 4, 5])], [f32("y", [2, 60])],
     [i64("zero", 0), i64("axes", [0]), i64("minus1", [-1])], opset=18)
# Range, Equal, Where, Cast and ConstantOfShape on constants: x + c with
# c = [0, 1, 10, 3] + 1.5.
save("fold_range_where",
     [helper.make_node("Range", ["r0", "r4", "r1"], ["r"]),
      helper.make_node("Equal", ["r", "two"], ["eq"]),
      helper.make_node("Where", ["eq", "ten", "r"], ["w"]),
      helper.make_node("Cast", ["w"], ["wf"], to=TensorProto.FLOAT),
      helper.make_node("Shape", ["wf"], ["ws"]),
      helper.make_node("ConstantOfShape", ["ws"], ["half"],
                       value=numpy_helper.from_array(
                           np.array([1.5], np.float32))),
      helper.make_node("Add", ["wf", "half"], ["c"]),
      helper.make_node("Add", ["x", "c"], ["y"])],
     [f32("x", [2, 4])], [f32("y", [2, 4])],
     [i64("r0", 0), i64("r4", 4), i64("r1", 1), i64("two", 2), i64("ten", 10)],
     opset=18)
# Folding is bounded: a Range of 10^12 elements, an Expand to 2^40, an
# integer division by zero, and Range on a value computed at run time.
save("fold_range_huge", [helper.make_node("Range", ["r0", "big", "r1"], ["r"],
                                          name="range"),
                         helper.make_node("Cast", ["r"], ["rf"], to=1),
                         helper.make_node("Add", ["x", "rf"], ["y"])],
     [f32("x", [1])], [f32("y", None)],
     [i64("r0", 0), i64("big", 10 ** 12), i64("r1", 1)], opset=18)
save("fold_expand_huge", [helper.make_node("Expand", ["one", "shp"], ["e"],
                                           name="expand"),
                          helper.make_node("Add", ["x", "e"], ["y"])],
     [f32("x", [1])], [f32("y", None)],
     [numpy_helper.from_array(np.ones(1, np.float32), "one"),
      i64("shp", [1 << 20, 1 << 20])], opset=18)
save("fold_div_zero", [helper.make_node("Div", ["four", "zero"], ["q"],
                                        name="div"),
                       helper.make_node("Reshape", ["x", "q"], ["y"])],
     [f32("x", [4])], [f32("y", None)], [i64("four", [4]), i64("zero", [0])],
     opset=18)
save("fold_range_runtime", [helper.make_node("Range", ["x", "x", "x"], ["y"],
                                             name="range")],
     [f32("x", [])], [f32("y", None)], [], opset=18)

# A 1-D convolution (as 2-D of height 1): w = [1, 0, -1], pads 1 and 1
# (the test feeds x = [0.25, -0.5, 0.75, 1, -1.25]: y = [0.5, -0.5, -1.5,
# 2, 1]).
save("conv1d", [helper.make_node("Conv", ["x", "w1"], ["y"], name="c1",
                                 pads=[1, 1], kernel_shape=[3])],
     [f32("x", [1, 1, 5])], [f32("y", [1, 1, 5])],
     [numpy_helper.from_array(np.array([[[1, 0, -1]]], np.float32), "w1")])

# External data: "b" (4 floats, 1 2 3 4) at offset 16 of external/ext.bin;
# the refused ones name files outside the folder or beyond the file.
def external(name, location, offset=16, length=16):
    b = TensorProto(name="b", data_type=TensorProto.FLOAT, dims=[4])
    b.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)),
                 ("length", str(length))):
        e = b.external_data.add()
        e.key, e.value = k, v
    g = helper.make_graph([helper.make_node("Add", ["x", "b"], ["y"],
                                            name="add")], name,
                          [f32("x", [4])], [f32("y", [4])], [b])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    os.makedirs(os.path.join(out, "external"), exist_ok=True)
    with open(os.path.join(out, "external", name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


with open(os.path.join(out, "external", "ext.bin"), "wb") as f:
    f.write(b"\xff" * 16 + np.array([1, 2, 3, 4], np.float32).tobytes())
external("ext_ok", "ext.bin")
external("ext_absolute", "/etc/passwd")
external("ext_dotdot", "../make_negative.py")
external("ext_short", "ext.bin", offset=24)
external("ext_length", "ext.bin", length=12)
external("ext_missing", "nowhere.bin")
external("ext_link", "link.bin")  # the test makes link.bin a symlink
print("wrote negative and folding models to", out)
