#!/usr/bin/env python3
"""Builds the model zoo the zoo test runs (tests/zoo/README.md): torchvision
architectures with seeded random weights, exported by Debian's PyTorch
(python3-torch 1.13, python3-torchvision 0.14; nothing is downloaded),
int8 QDQ versions of three of them (qdq.py), and the graph patterns
PyTorch 2.x's default exporter writes, built with onnx.helper.

Each model goes to OUT/test_<name>/model.onnx with its input in
OUT/test_<name>/test_data_set_0/input_0.pb (seeded, the layout of ONNX's
node tests). No expected output is written: the test compares directgraph
with ONNX Runtime on the same input.

Usage: make_zoo.py OUT [NAME...]   (all models when no NAME is given)"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def write_case(out, name, model, inputs, external=False):
    d = os.path.join(out, "test_" + name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    path = os.path.join(d, "model.onnx")
    if external:
        onnx.save_model(model, path, save_as_external_data=True,
                        all_tensors_to_one_file=True,
                        location="model.onnx.data", size_threshold=64)
    else:
        onnx.save(model, path)
    for i, (n, a) in enumerate(inputs):
        t = numpy_helper.from_array(a, n)
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i),
                  "wb") as f:
            f.write(t.SerializeToString())
    print("wrote", d, flush=True)


def image(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape).astype(
        np.float32)


# ---- torchvision models, seeded random weights ----

def torch_models():
    import torch
    import torch.nn as nn
    import torchvision.models as tv

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(1, 6, 5, padding=2)
            self.c2 = nn.Conv2d(6, 16, 5)
            self.f1 = nn.Linear(16 * 5 * 5, 120)
            self.f2 = nn.Linear(120, 84)
            self.f3 = nn.Linear(84, 10)

        def forward(self, x):
            x = torch.max_pool2d(torch.relu(self.c1(x)), 2)
            x = torch.max_pool2d(torch.relu(self.c2(x)), 2)
            x = torch.flatten(x, 1)
            return self.f3(torch.relu(self.f2(torch.relu(self.f1(x)))))

    class Yolo(nn.Module):
        """A YOLO-style detector: conv + SiLU stages, an upsampled branch
        concatenated with a finer one, and a sigmoid head."""

        def __init__(self):
            super().__init__()

            def cbs(i, o, s):
                return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False),
                                     nn.BatchNorm2d(o), nn.SiLU())
            self.s1 = nn.Sequential(cbs(3, 16, 2), cbs(16, 32, 2))
            self.s2 = cbs(32, 64, 2)
            self.lat = cbs(64, 32, 1)
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.fuse = cbs(64, 32, 1)
            self.head = nn.Conv2d(32, 3 * (5 + 4), 1)

        def forward(self, x):
            a = self.s1(x)
            b = self.lat(self.s2(a))
            y = self.fuse(torch.cat([self.up(b), a], 1))
            return torch.sigmoid(self.head(y))

    def vit():
        # ViT-B/16's structure (patch conv, class token, pre-norm encoder
        # blocks with GELU MLPs, head on the class token), narrowed for CI.
        m = tv.VisionTransformer(image_size=64, patch_size=16, num_layers=2,
                                 num_heads=4, hidden_dim=64, mlp_dim=128,
                                 num_classes=10)
        # torchvision zeroes the head: random weights, or every output is
        # its (zero) bias and the comparison proves nothing.
        nn.init.normal_(m.heads.head.weight, std=0.5)
        nn.init.normal_(m.heads.head.bias, std=0.1)
        return m

    # name: (constructor, input shape, opset)
    return {
        "lenet": (LeNet, (1, 1, 28, 28), 13),
        "resnet18": (lambda: tv.resnet18(num_classes=100), (1, 3, 64, 64), 13),
        "resnet50": (lambda: tv.resnet50(num_classes=100), (1, 3, 64, 64), 13),
        "mobilenet_v2": (lambda: tv.mobilenet_v2(num_classes=100),
                         (1, 3, 64, 64), 13),
        "mobilenet_v3_large": (lambda: tv.mobilenet_v3_large(num_classes=100),
                               (1, 3, 64, 64), 14),
        "squeezenet1_1": (lambda: tv.squeezenet1_1(num_classes=100),
                          (1, 3, 64, 64), 13),
        "shufflenet_v2": (lambda: tv.shufflenet_v2_x1_0(num_classes=100),
                          (1, 3, 64, 64), 13),
        "efficientnet_b0": (lambda: tv.efficientnet_b0(num_classes=100),
                            (1, 3, 64, 64), 13),
        "googlenet": (lambda: tv.googlenet(num_classes=100, aux_logits=False,
                                           init_weights=True),
                      (1, 3, 64, 64), 13),
        "inception_v3": (lambda: tv.inception_v3(num_classes=100,
                                                 aux_logits=False,
                                                 init_weights=True),
                         (1, 3, 96, 96), 13),
        "vit": (vit, (1, 3, 64, 64), 14),
        "yolo": (Yolo, (1, 3, 64, 64), 13),
        # Standalone BatchNormalization (after each Concat), opset 17; its
        # opset-20 copy is written by main().
        "densenet121": (lambda: tv.densenet121(num_classes=100),
                        (1, 3, 64, 64), 17),
    }


def randomise_bn(model, torch, rng):
    """Random running statistics, so batch norms are not identities."""
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.from_numpy(
                rng.uniform(-0.2, 0.2, n).astype(np.float32)))
            m.running_var.copy_(torch.from_numpy(
                rng.uniform(0.5, 2.0, n).astype(np.float32)))


def export_torch(out, name, spec, seed):
    import io
    import torch
    ctor, shape, opset = spec
    torch.manual_seed(seed)
    model = ctor().eval()
    randomise_bn(model, torch, np.random.default_rng(seed))
    x = image(seed, shape)
    buf = io.BytesIO()
    # Not under no_grad: there torch 1.13's MultiheadAttention takes a fused
    # fast path the exporter cannot write.
    torch.onnx.export(model, torch.from_numpy(x), buf, opset_version=opset,
                      input_names=["input"], output_names=["output"],
                      do_constant_folding=True)
    m = onnx.load_from_string(buf.getvalue())
    write_case(out, name, m, [("input", x)])
    return m, x


# ---- PyTorch 2.x exporter patterns, with onnx.helper ----

def f32(rng, *shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def pattern_models(out):
    rng = np.random.default_rng(20261201)
    T = TensorProto

    def vi(n, shape):
        return helper.make_tensor_value_info(n, T.FLOAT, shape)

    def init(name, a):
        return numpy_helper.from_array(a, name)

    def model(nodes, inputs, outputs, inits, opset):
        g = helper.make_graph(nodes, "pt2", inputs, outputs, inits)
        return helper.make_model(g, opset_imports=[
            helper.make_opsetid("", opset)])

    # A residual conv block with global pooling as ReduceMean (axes as an
    # input, opset 18), weights in an external data file.
    n = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1] * 4),
         helper.make_node("Relu", ["c1"], ["r1"]),
         helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1] * 4),
         helper.make_node("Add", ["c2", "x"], ["s"]),
         helper.make_node("Relu", ["s"], ["r2"]),
         helper.make_node("ReduceMean", ["r2", "axes"], ["p"], keepdims=0),
         helper.make_node("Gemm", ["p", "fw", "fb"], ["y"], transB=1)]
    inits = [init("w1", f32(rng, 16, 16, 3, 3, scale=0.1)),
             init("b1", f32(rng, 16)),
             init("w2", f32(rng, 16, 16, 3, 3, scale=0.1)),
             init("b2", f32(rng, 16)),
             init("axes", np.array([2, 3], np.int64)),
             init("fw", f32(rng, 10, 16)), init("fb", f32(rng, 10))]
    write_case(out, "pt2_resblock_external",
               model(n, [vi("x", [1, 16, 16, 16])], [vi("y", [1, 10])], inits,
                     18), [("x", image(1, (1, 16, 16, 16)))], external=True)
    # Split with num_outputs (opset 18), as torch.chunk exports.
    n = [helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1,
                          num_outputs=3),
         helper.make_node("Mul", ["a", "b"], ["ab"]),
         helper.make_node("Add", ["ab", "c"], ["y"])]
    write_case(out, "pt2_split_num_outputs",
               model(n, [vi("x", [2, 9, 5])], [vi("y", [2, 3, 5])], [], 18),
               [("x", image(2, (2, 9, 5)))])
    # LayerNormalization then a GELU (Erf form) MLP, opset 18.
    n = [helper.make_node("LayerNormalization", ["x", "g", "be"], ["ln"],
                          axis=-1, epsilon=1e-5),
         helper.make_node("MatMul", ["ln", "w"], ["h"]),
         helper.make_node("Div", ["h", "sqrt2"], ["hd"]),
         helper.make_node("Erf", ["hd"], ["e"]),
         helper.make_node("Add", ["e", "one"], ["e1"]),
         helper.make_node("Mul", ["h", "e1"], ["he"]),
         helper.make_node("Mul", ["he", "half"], ["y"])]
    inits = [init("g", 1 + f32(rng, 32, scale=0.1)), init("be", f32(rng, 32)),
             init("w", f32(rng, 32, 64, scale=0.2)),
             init("sqrt2", np.array(np.sqrt(2), np.float32)),
             init("one", np.array(1, np.float32)),
             init("half", np.array(0.5, np.float32))]
    write_case(out, "pt2_layernorm_gelu",
               model(n, [vi("x", [1, 8, 32])], [vi("y", [1, 8, 64])], inits,
                     18), [("x", image(3, (1, 8, 32)))])
    # Scaled dot-product attention as the exporter decomposes it:
    # Shape -> Gather -> Cast -> Sqrt for the scale, Transpose, Softmax.
    n = [helper.make_node("MatMul", ["x", "wq"], ["q"]),
         helper.make_node("MatMul", ["x", "wk"], ["k"]),
         helper.make_node("MatMul", ["x", "wv"], ["v"]),
         helper.make_node("Shape", ["q"], ["qs"]),
         helper.make_node("Gather", ["qs", "last"], ["d"], axis=0),
         helper.make_node("Cast", ["d"], ["df"], to=T.FLOAT),
         helper.make_node("Sqrt", ["df"], ["sd"]),
         helper.make_node("Reciprocal", ["sd"], ["scale"]),
         helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
         helper.make_node("MatMul", ["q", "kt"], ["att"]),
         helper.make_node("Mul", ["att", "scale"], ["atts"]),
         helper.make_node("Softmax", ["atts"], ["p"], axis=-1),
         helper.make_node("MatMul", ["p", "v"], ["y"])]
    inits = [init("wq", f32(rng, 16, 16)), init("wk", f32(rng, 16, 16)),
             init("wv", f32(rng, 16, 16)),
             init("last", np.array(-1, np.int64))]
    write_case(out, "pt2_attention",
               model(n, [vi("x", [1, 12, 16])], [vi("y", [1, 12, 16])], inits,
                     18), [("x", image(4, (1, 12, 16)))])


def qdq_patterns(out):
    """The ops QDQ models put between convolutions, each between a
    DequantizeLinear and a QuantizeLinear (qdq.py's layout): Sigmoid,
    Tanh, LeakyRelu, HardSigmoid, AveragePool with and without the
    padding counted, a Concat of inputs of different scales, Sub, a
    broadcast Mul, GlobalAveragePool, MaxPool and Flatten."""
    import qdq
    rng = np.random.default_rng(20261202)
    T = TensorProto
    n = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1] * 4),
         helper.make_node("Sigmoid", ["c1"], ["s"]),
         helper.make_node("Tanh", ["c1"], ["t"]),
         helper.make_node("AveragePool", ["s"], ["a1"], kernel_shape=[3, 3],
                          pads=[1] * 4, count_include_pad=0),
         helper.make_node("AveragePool", ["t"], ["a2"], kernel_shape=[3, 3],
                          pads=[1] * 4, count_include_pad=1),
         helper.make_node("Concat", ["a1", "a2"], ["cat"], axis=1),
         helper.make_node("Conv", ["cat", "w2", "b2"], ["c2"]),
         helper.make_node("LeakyRelu", ["c2"], ["l"], alpha=0.1),
         helper.make_node("Sub", ["l", "c1"], ["d"]),
         helper.make_node("GlobalAveragePool", ["d"], ["g"]),
         helper.make_node("HardSigmoid", ["g"], ["hs"]),
         helper.make_node("Mul", ["d", "hs"], ["m"]),
         helper.make_node("MaxPool", ["m"], ["mp"], kernel_shape=[2, 2],
                          strides=[2, 2]),
         helper.make_node("Flatten", ["mp"], ["f"]),
         helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1)]
    inits = [numpy_helper.from_array(a, k) for k, a in [
        ("w1", f32(rng, 16, 8, 3, 3, scale=0.2)), ("b1", f32(rng, 16)),
        ("w2", f32(rng, 16, 32, 1, 1, scale=0.3)), ("b2", f32(rng, 16)),
        ("fw", f32(rng, 10, 576, scale=0.1)), ("fb", f32(rng, 10))]]
    g = helper.make_graph(
        n, "qdq_patterns",
        [helper.make_tensor_value_info("x", T.FLOAT, [1, 8, 12, 12])],
        [helper.make_tensor_value_info("y", T.FLOAT, [1, 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    x = image(5, (1, 8, 12, 12))
    q = qdq.quantize(m, {"x": x}, [image(300 + k, x.shape) for k in range(4)])
    write_case(out, "qdq_patterns", q, [("x", x)])


# The ops of densenet121's export, none of which has a new version at
# opsets 18 to 20 that changes what the model means (AveragePool 19 adds
# dilations, Pad 18 an optional axes input and 19 the wrap mode, Identity
# and Constant 19 types and value_* attributes): the same graph declared
# at opset 20 is a valid model of that opset, as PyTorch 2.x writes it.
OPSET20_SAFE = {"Conv", "Relu", "BatchNormalization", "Concat", "MaxPool",
                "AveragePool", "Pad", "GlobalAveragePool", "Flatten", "Gemm",
                "Identity", "Constant"}


def at_opset_20(m):
    used = {n.op_type for n in m.graph.node}
    assert used <= OPSET20_SAFE, "ops to check at opset 20: %s" % (
        used - OPSET20_SAFE)
    m20 = onnx.ModelProto()
    m20.CopyFrom(m)
    for o in m20.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = 20
    return m20


def torch_ao_qdq(out, wanted):
    """PyTorch's own int8 export: torchvision's quantizable ResNet-18 and
    MobileNetV2, quantised by torch.ao's eager mode (qnnpack, the engine
    Debian's torch has), exported by the legacy exporter: Constant nodes
    for scales and zero points, a Cast to UINT8 after every
    QuantizeLinear, int32 biases through DequantizeLinear."""
    import io
    import torch
    import torchvision.models.quantization as tq
    torch.backends.quantized.engine = "qnnpack"
    for seed, (name, ctor) in enumerate([("resnet18", tq.resnet18),
                                         ("mobilenet_v2", tq.mobilenet_v2)]):
        case = "qdq_pt_" + name
        if wanted and case not in wanted:
            continue
        torch.manual_seed(500 + seed)
        m = ctor(quantize=False, num_classes=100).eval()
        randomise_bn(m, torch, np.random.default_rng(500 + seed))
        m.fuse_model()
        m.qconfig = torch.ao.quantization.get_default_qconfig("qnnpack")
        torch.ao.quantization.prepare(m, inplace=True)
        x = image(510 + seed, (1, 3, 64, 64))
        with torch.no_grad():
            for k in range(8):
                m(torch.from_numpy(image(520 + k, x.shape)))
            m(torch.from_numpy(x))
        torch.ao.quantization.convert(m, inplace=True)
        buf = io.BytesIO()
        torch.onnx.export(m, torch.from_numpy(x), buf, opset_version=13,
                          input_names=["input"], output_names=["output"])
        write_case(out, case, onnx.load_from_string(buf.getvalue()),
                   [("input", x)])


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    wanted = set(sys.argv[2:])
    os.makedirs(out, exist_ok=True)
    if not wanted or any(w.startswith("pt2") for w in wanted):
        pattern_models(out)
    if not wanted or "qdq_patterns" in wanted:
        qdq_patterns(out)
    torch_ao_qdq(out, wanted)
    specs = torch_models()
    qdq_of = {"resnet18": "qdq_resnet18", "mobilenet_v2": "qdq_mobilenet_v2",
              "mobilenet_v3_large": "qdq_mobilenet_v3_large"}
    # Seeds by name, the models before densenet121 keeping theirs.
    seeds = {n: 100 + i for i, n in
             enumerate(sorted(set(specs) - {"densenet121"}))}
    seeds["densenet121"] = 150
    for name, spec in sorted(specs.items()):
        seed = seeds[name]
        if wanted and name not in wanted and qdq_of.get(name) not in wanted \
                and name + "_opset20" not in wanted:
            continue
        m, x = export_torch(out, name, spec, 100 + seed)
        if name == "densenet121":
            write_case(out, name + "_opset20", at_opset_20(m), [("input", x)])
        if name in qdq_of and (not wanted or qdq_of[name] in wanted):
            import qdq
            q = qdq.quantize(m, {"input": x},
                             [image(200 + k, x.shape) for k in range(4)])
            write_case(out, qdq_of[name], q, [("input", x)])


if __name__ == "__main__":
    main()
