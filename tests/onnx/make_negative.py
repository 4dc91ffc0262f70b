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
                        helper.make_node("LeakyRelu", ["r"], ["y"],
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
print("wrote negative models to", out)
