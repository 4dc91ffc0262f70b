#!/usr/bin/python3
"""Writes the ONNX models of the plugin-EP test and their manifest.

Run with Debian's interpreter (/usr/bin/python3: python3-onnx 1.12, opset
<= 17): gen_models.py OUT_DIR WEIGHTS_DIR

manifest.txt, one model per line:
    NAME CHECK NODES in=NAME:DTYPE:DIMS[,...] out=NAME[,...]
CHECK: "all" (every node must run on our EP, outputs must match ORT's CPU
EP), "qref" (as "all", but the outputs are checked against the integer
reference that ort_host computes from NAME.qref, see qref() below) or
"unsupported" (holds an op the EP declines). DTYPE: f32 (uniform in
[-1,1)), f32p ([0,1), image-like), u8, i8. DIMS: 1x3x8x8.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
TYPES = {"f32": TensorProto.FLOAT, "f32p": TensorProto.FLOAT,
         "u8": TensorProto.UINT8, "i8": TensorProto.INT8}
rng = np.random.default_rng(1234)
out_dir, weights_dir = sys.argv[1], sys.argv[2]
manifest = []


def vi(name, dtype, dims):
    return helper.make_tensor_value_info(name, TYPES[dtype], dims)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def model(name, nodes, inputs, outputs, inits, check="all"):
    """inputs: [(name, dtype, dims)]; outputs: [name] (types inferred)."""
    # Shape inference on the output-less graph types every node output;
    # the graph outputs are then declared with those types and shapes.
    graph = helper.make_graph(nodes, name, [vi(*i) for i in inputs], [],
                              inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    known = {v.name: v for v in m.graph.value_info}
    del m.graph.output[:]
    for o in outputs:
        m.graph.output.append(known[o])
    for v in list(m.graph.value_info):
        if v.name in outputs:
            m.graph.value_info.remove(v)
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, os.path.join(out_dir, name + ".onnx"))
    ins = ",".join("%s:%s:%s" % (n, t, "x".join(map(str, d)))
                   for n, t, d in inputs)
    manifest.append("%s %s %d in=%s out=%s" % (name, check, len(nodes), ins,
                                             ",".join(outputs)))
    return m


def qref(m, must_saturate=False):
    """Writes NAME.qref for a one-node QLinearConv / QLinearMatMul model:
    its types, shapes, weights, quantisation and attributes as text lines
    "key values...", floats as exact C99 hex floats. ort_host computes the
    exact result and the one of ONNX Runtime's x86 U8S8 kernels without
    VNNI from it (int8_ref.c).
    must_saturate: the data is meant to saturate that path (test fails if
    it does not)."""
    node, = m.graph.node
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    x, = m.graph.input
    dt = {TensorProto.UINT8: "u8", TensorProto.INT8: "i8",
          np.dtype(np.uint8): "u8", np.dtype(np.int8): "i8"}

    def vals(a, fmt=int):
        return " ".join(str(fmt(v)) for v in np.asarray(a).reshape(-1))

    def hexf(a):
        return vals(a.astype(np.float32), lambda v: float(v).hex())

    names = list(node.input) + [""] * (9 - len(node.input))
    xs, xz, w, ws, wz, ys, yz, b = names[1:9]
    w = inits[w]
    lines = ["# written by gen_models.py for ort_host's int8 reference",
             "op " + node.op_type,
             "x %s %s" % (dt[x.type.tensor_type.elem_type],
                          vals([d.dim_value for d in
                                x.type.tensor_type.shape.dim])),
             "w %s %s" % (dt[w.dtype], vals(w.shape)),
             "wdata " + vals(w),
             "x_scale " + hexf(inits[xs]), "x_zero " + vals(inits[xz]),
             "w_scale " + hexf(inits[ws]), "w_zero " + vals(inits[wz]),
             "y_scale " + hexf(inits[ys]), "y_zero " + vals(inits[yz]),
             "y " + dt[inits[yz].dtype]]
    if node.op_type == "QLinearConv":
        a = {at.name: helper.get_attribute_value(at) for at in node.attribute}
        assert a.get("auto_pad", b"NOTSET") == b"NOTSET", "explicit pads only"
        lines += ["pads %s" % vals(a.get("pads", [0, 0, 0, 0])),
                  "strides %s" % vals(a.get("strides", [1, 1])),
                  "dilations %s" % vals(a.get("dilations", [1, 1])),
                  "group %d" % a.get("group", 1)]
        if b:
            lines.append("bias " + vals(inits[b]))
    if must_saturate:
        lines.append("must_saturate 1")
    with open(os.path.join(out_dir, m.graph.name + ".qref"), "w") as f:
        f.write("\n".join(lines) + "\n")


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


N = helper.make_node

# ---- float ops ----
model("conv", [N("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])],
      [("x", "f32", [1, 3, 8, 8])], ["y"],
      [init("w", f32(4, 3, 3, 3)), init("b", f32(4))])
model("conv_s2_group", [N("Conv", ["x", "w"], ["y"], strides=[2, 2], group=3,
                          auto_pad="SAME_UPPER")],
      [("x", "f32", [1, 3, 9, 9])], ["y"], [init("w", f32(6, 1, 3, 3))])
model("maxpool", [N("MaxPool", ["x"], ["y"], kernel_shape=[2, 2],
                    strides=[2, 2])],
      [("x", "f32", [1, 2, 8, 8])], ["y"], [])
model("avgpool", [N("AveragePool", ["x"], ["y"], kernel_shape=[3, 3],
                    pads=[1, 1, 1, 1])],
      [("x", "f32", [1, 2, 7, 7])], ["y"], [])
model("globalavgpool", [N("GlobalAveragePool", ["x"], ["y"])],
      [("x", "f32", [1, 4, 5, 5])], ["y"], [])
model("gemm_transb", [N("Gemm", ["a", "w", "c"], ["y"], transB=1)],
      [("a", "f32", [2, 16])], ["y"], [init("w", f32(8, 16)), init("c", f32(8))])
model("gemm_alpha_beta", [N("Gemm", ["a", "w", "c"], ["y"], alpha=0.5,
                            beta=2.0)],
      [("a", "f32", [3, 16])], ["y"], [init("w", f32(16, 8)), init("c", f32(8))])
model("matmul_3d", [N("MatMul", ["a", "b"], ["y"])],
      [("a", "f32", [2, 3, 4])], ["y"], [init("b", f32(4, 5))])
model("matmul_2in", [N("MatMul", ["a", "b"], ["y"])],
      [("a", "f32", [3, 4]), ("b", "f32", [4, 6])], ["y"], [])
model("softmax", [N("Softmax", ["x"], ["y"])],
      [("x", "f32", [2, 10])], ["y"], [])
model("softmax_axis1", [N("Softmax", ["x"], ["y"], axis=1)],
      [("x", "f32", [2, 3, 4])], ["y"], [])
model("relu", [N("Relu", ["x"], ["y"])], [("x", "f32", [2, 3, 4])], ["y"], [])
model("clip", [N("Clip", ["x", "lo", "hi"], ["y"])],
      [("x", "f32", [2, 3, 4])], ["y"],
      [init("lo", np.float32(-0.25)), init("hi", np.float32(0.5))])
model("add_broadcast", [N("Add", ["a", "b"], ["y"])],
      [("a", "f32", [2, 3, 4])], ["y"], [init("b", f32(4))])
model("add_2in", [N("Add", ["a", "b"], ["y"])],
      [("a", "f32", [2, 3, 4]), ("b", "f32", [2, 3, 4])], ["y"], [])
model("flatten", [N("Flatten", ["x"], ["y"], axis=2)],
      [("x", "f32", [1, 2, 3, 4])], ["y"], [])
model("reshape", [N("Reshape", ["x", "shape"], ["y"])],
      [("x", "f32", [2, 3, 4])], ["y"],
      [init("shape", np.array([4, -1], dtype=np.int64))])
model("concat", [N("Concat", ["a", "b"], ["y"], axis=1)],
      [("a", "f32", [2, 3, 4]), ("b", "f32", [2, 5, 4])], ["y"], [])
# A chain of several ops: one fused region with two outputs.
model("chain", [N("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                N("Relu", ["c"], ["r"]),
                N("Add", ["r", "x2"], ["y"]),
                N("GlobalAveragePool", ["y"], ["g"])],
      [("x", "f32", [1, 2, 6, 6]), ("x2", "f32", [1, 3, 6, 6])], ["y", "g"],
      [init("w", f32(3, 2, 3, 3))])

# ---- quantised ops ----
model("quantize", [N("QuantizeLinear", ["x", "s", "z"], ["y"])],
      [("x", "f32", [2, 3, 4])], ["y"],
      [init("s", np.float32(0.01)), init("z", np.uint8(128))])
model("dequantize", [N("DequantizeLinear", ["x", "s", "z"], ["y"])],
      [("x", "i8", [2, 3, 4])], ["y"],
      [init("s", np.float32(0.05)), init("z", np.int8(-3))])
model("qdq_pair", [N("QuantizeLinear", ["x", "s", "z"], ["q"]),
                   N("DequantizeLinear", ["q", "s", "z"], ["y"])],
      [("x", "f32", [2, 8])], ["q", "y"],
      [init("s", np.float32(0.02)), init("z", np.int8(5))])
# The int8 conv / matmul models are checked against an integer reference
# (check "qref"; see qref() and int8_ref.c). qlinearconv_u8 is u8 x s8, the
# one pairing whose ORT kernels saturate (x86 AVX2 or AVX512 without VNNI):
# full-range weights against activations up to 255 make 21 of its 1296
# pairs of adjacent K products exceed int16 there, 13 above and 8 below,
# changing 21 of the 144 outputs (must_saturate); y_scale keeps every
# output off the u8 rails, where a change would not show.
qref(model("qlinearconv_u8",
           [N("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz",
                              "b"], ["y"], pads=[1, 1, 1, 1])],
           [("x", "u8", [1, 2, 6, 6])], ["y"],
           [init("xs", np.float32(0.02)), init("xz", np.uint8(120)),
            init("w", rng.integers(-127, 128, (4, 2, 3, 3)).astype(np.int8)),
            init("ws", (rng.random(4) * 0.01 + 0.002).astype(np.float32)),
            init("wz", np.zeros(4, np.int8)),
            init("ys", np.float32(0.08)), init("yz", np.uint8(100)),
            init("b", rng.integers(-2000, 2000, 4).astype(np.int32))],
           check="qref"), must_saturate=True)
qref(model("qlinearconv_i8",
           [N("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
              ["y"], strides=[2, 2])],
           [("x", "i8", [1, 3, 7, 7])], ["y"],
           [init("xs", np.float32(0.03)), init("xz", np.int8(-5)),
            init("w", rng.integers(-127, 127, (2, 3, 3, 3)).astype(np.int8)),
            init("ws", np.float32(0.004)), init("wz", np.int8(0)),
            init("ys", np.float32(0.08)), init("yz", np.int8(10))],
           check="qref"))
qref(model("qlinearmatmul",
           [N("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"],
              ["y"])],
           [("a", "u8", [2, 8])], ["y"],
           [init("as", np.float32(0.02)), init("az", np.uint8(128)),
            init("b", rng.integers(0, 255, (8, 4)).astype(np.uint8)),
            init("bs", np.float32(0.01)), init("bz", np.uint8(127)),
            init("ys", np.float32(0.04)), init("yz", np.uint8(110))],
           check="qref"))
model("maxpool_i8", [N("MaxPool", ["x"], ["y"], kernel_shape=[2, 2],
                       strides=[2, 2])],
      [("x", "i8", [1, 2, 6, 6])], ["y"], [])

# ---- LeNet (examples/common/lenet_model.c, trained weights) ----
W = {n: np.load(os.path.join(weights_dir, n + ".npy")) for n in
     [p + s for p in ["conv1", "conv2", "fc1", "fc2", "fc3"]
      for s in ["_w", "_b", "_wq", "_wscale", "_bq", "_yq"]] + ["q_input"]}
lenet = [N("Conv", ["x", "conv1_w", "conv1_b"], ["c1"], pads=[2, 2, 2, 2]),
         N("Relu", ["c1"], ["r1"]),
         N("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
         N("Conv", ["p1", "conv2_w", "conv2_b"], ["c2"]),
         N("Relu", ["c2"], ["r2"]),
         N("MaxPool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
         N("Flatten", ["p2"], ["f"]),
         N("Gemm", ["f", "fc1_w", "fc1_b"], ["g1"], transB=1),
         N("Relu", ["g1"], ["h1"]),
         N("Gemm", ["h1", "fc2_w", "fc2_b"], ["g2"], transB=1),
         N("Relu", ["g2"], ["h2"]),
         N("Gemm", ["h2", "fc3_w", "fc3_b"], ["logits"], transB=1),
         N("Softmax", ["logits"], ["probs"])]
model("lenet", lenet, [("x", "f32p", [1, 1, 28, 28])], ["logits", "probs"],
      [init(n, W[n]) for n in W if n.endswith("_w") or n.endswith("_b")])

# Int8 LeNet: QLinearConv for every layer (fc layers as 1x1 convolutions on
# [1,C,1,1], which keeps their int32 bias); the fused relus are implicit,
# since relu layers have zero point -128, the int8 floor.
qn, qi = [], [init("in_s", np.float32(W["q_input"][0])),
              init("in_z", np.int8(W["q_input"][1]))]
qn.append(N("QuantizeLinear", ["x", "in_s", "in_z"], ["q0"]))
prev_s, prev_z, x = "in_s", "in_z", "q0"
for layer, pads, pool in [("conv1", [2, 2, 2, 2], True),
                          ("conv2", [0, 0, 0, 0], True),
                          ("fc1", None, False), ("fc2", None, False),
                          ("fc3", None, False)]:
    wq = W[layer + "_wq"]
    if wq.ndim == 2:
        wq = wq.reshape(wq.shape[0], wq.shape[1], 1, 1)
    ys, yz = W[layer + "_yq"]
    qi += [init(layer + "_wq", wq), init(layer + "_ws", W[layer + "_wscale"]),
           init(layer + "_wz", np.zeros(wq.shape[0], np.int8)),
           init(layer + "_ys", np.float32(ys)), init(layer + "_yz", np.int8(yz)),
           init(layer + "_bq", W[layer + "_bq"])]
    if layer == "fc1":
        qi.append(init("to_1x1", np.array([1, 400, 1, 1], np.int64)))
        qn.append(N("Reshape", [x, "to_1x1"], ["flat"]))
        x = "flat"
    attrs = {"pads": pads} if pads else {}
    qn.append(N("QLinearConv", [x, prev_s, prev_z, layer + "_wq", layer + "_ws",
                                layer + "_wz", layer + "_ys", layer + "_yz",
                                layer + "_bq"], [layer + "_y"], **attrs))
    x, prev_s, prev_z = layer + "_y", layer + "_ys", layer + "_yz"
    if pool:
        qn.append(N("MaxPool", [x], [layer + "_p"], kernel_shape=[2, 2],
                    strides=[2, 2]))
        x = layer + "_p"
qi.append(init("to_2d", np.array([1, 10], np.int64)))
qn.append(N("Reshape", [x, "to_2d"], ["q_logits"]))
qn.append(N("DequantizeLinear", ["q_logits", "fc3_ys", "fc3_yz"], ["logits"]))
model("lenet_qlinear", qn, [("x", "f32p", [1, 1, 28, 28])],
      ["q_logits", "logits"], qi)

# ---- names of any length ----
# Torchvision's exports have names up to 71 bytes, ORT's quantised graphs
# longer ones. Every name here is 72 bytes or more, one node's and several
# values' 200 or more, and pairs differ only past byte 64: every node must
# still run on our EP, each output where its name says.
def long_name(tag, n):
    """A name of n bytes, an export-like path ending in tag."""
    stem = "/features/features.0/features.0.0/block/block.0/block.0.0/"
    return ((stem * (n // len(stem) + 1))[:n - len(tag)] + tag)


LX, LX2 = long_name("input.1", 72), long_name("input.2", 72)
LW = long_name("conv/weight", 90)
LC, LR = long_name("Conv_output_0", 200), long_name("Relu_output_0", 210)
LY, LG = (long_name("Add_output_0", 260),
          long_name("GlobalAveragePool_output_0", 300))
model("long_names",
      [N("Conv", [LX, LW], [LC], name=long_name("Conv", 80),
         pads=[1, 1, 1, 1]),
       N("Relu", [LC], [LR], name=long_name("Relu", 80)),
       N("Add", [LR, LX2], [LY], name=long_name("Add", 250)),
       N("GlobalAveragePool", [LY], [LG],
         name=long_name("GlobalAveragePool", 72))],
      [(LX, "f32", [1, 2, 6, 6]), (LX2, "f32", [1, 3, 6, 6])], [LY, LG],
      [init(LW, f32(3, 2, 3, 3))])
LS, LZ = long_name("scale", 120), long_name("zero_point", 120)
LQ = long_name("QuantizeLinear_Output", 220)
LD = long_name("DequantizeLinear_Output", 220)
model("long_names_qdq",
      [N("QuantizeLinear", [LX, LS, LZ], [LQ],
         name=long_name("QuantizeLinear", 100)),
       N("DequantizeLinear", [LQ, LS, LZ], [LD],
         name=long_name("DequantizeLinear", 230))],
      [(LX, "f32", [2, 8])], [LQ, LD],
      [init(LS, np.float32(0.02)), init(LZ, np.int8(5))])

# ---- an op the EP does not take, between two it does ----
# (Det: no composition of the builder's ops computes it.)
model("unsupported", [N("Relu", ["x"], ["a"]), N("Det", ["a"], ["b"]),
                      N("Relu", ["b"], ["y"])],
      [("x", "f32", [8, 8])], ["y"], [], check="unsupported")

# Relu and Add are both taken, but a path joins them through Det: they
# must become two regions (ORT refuses a group with a declined node on a
# path between two of its nodes).
model("unsupported_diamond", [N("Relu", ["x"], ["a"]),
                              N("Det", ["a"], ["s"]),
                              N("Add", ["a", "s"], ["y"])],
      [("x", "f32", [8, 8])], ["y"], [], check="unsupported")

with open(os.path.join(out_dir, "manifest.txt"), "w") as f:
    f.write("\n".join(manifest) + "\n")
print("%d models in %s" % (len(manifest), out_dir))
