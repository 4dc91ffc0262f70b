#!/usr/bin/env python3
"""Writes the ONNX models the importer must refuse, each for one reason
that the diagnostic has to name (tests/test_onnx_import.c).
Usage: /usr/bin/python3 tests/onnx/make_negative.py"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = os.path.dirname(os.path.abspath(__file__))


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def save(name, nodes, inputs, outputs, inits, opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


w = numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w")
save("unsupported_op", [helper.make_node("Relu", ["x"], ["r"], name="ok_relu"),
                        helper.make_node("Bernoulli", ["r"], ["y"],
                                         name="the_leaky")],
     [f32("x", [1, 4])], [f32("y", [1, 4])], [])
save("unsupported_attr", [helper.make_node("Conv", ["x", "w"], ["y"],
                                           name="conv_x", foo=3)],
     [f32("x", [1, 1, 5, 5])], [f32("y", [1, 2, 3, 3])], [w])
save("dilated_pool", [helper.make_node("MaxPool", ["x"], ["y"], name="mp",
                                       kernel_shape=[2, 2],
                                       dilations=[2, 2])],
     [f32("x", [1, 1, 6, 6])], [f32("y", [1, 1, 4, 4])], [])
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
print("wrote negative models to", out)
