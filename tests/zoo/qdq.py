"""Static int8 quantisation of a float ONNX model into the QDQ layout ONNX
Runtime's quantiser writes (quantize_static, QuantFormat.QDQ, per-channel):
  - weights of Conv and Gemm: int8, symmetric, per output channel, as
    initializers read through DequantizeLinear (axis 0);
  - biases: int32 with scale = input scale x weight scale, zero point 0;
  - activations: uint8, asymmetric, per tensor: QuantizeLinear ->
    DequantizeLinear on every input and output of Conv, Gemm, Add, Sub, Mul,
    Concat and the pooling ops; a Relu or Clip right after a Conv, Gemm
    or Add is kept inside the pair (ORT fuses them the same way), and
    the ops in between (HardSwish, HardSigmoid, Sigmoid, Tanh, LeakyRelu,
    Flatten) sit between the DequantizeLinear of their input and the
    QuantizeLinear of their reader's.
Ranges come from running the float model in numpy (the ops below only)
on calibration inputs: the calibration, not the result under test, so
any faithful float evaluation serves."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

QUANT_OPS = {"Conv", "Gemm", "Add", "Sub", "Mul", "Concat", "MaxPool",
             "AveragePool", "GlobalAveragePool"}
FUSED_AFTER = {"Relu", "Clip"}


# ---- a float evaluator for calibration ----

def _attrs(n):
    return {a.name: helper.get_attribute_value(a) for a in n.attribute}


def _conv(x, w, b, a):
    g = a.get("group", 1)
    s = a.get("strides", [1, 1])
    d = a.get("dilations", [1, 1])
    p = a.get("pads", [0, 0, 0, 0])
    x = np.pad(x, ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])))
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = (h - (kh - 1) * d[0] - 1) // s[0] + 1
    ow = (wd - (kw - 1) * d[1] - 1) // s[1] + 1
    y = np.zeros((n, o, oh, ow), np.float64)
    og = o // g
    for gi in range(g):
        xs = x[:, gi * cg:(gi + 1) * cg]
        ws = w[gi * og:(gi + 1) * og]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
                           j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]]
                y[:, gi * og:(gi + 1) * og] += np.einsum(
                    "nchw,oc->nohw", patch, ws[:, :, i, j])
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def _pool(x, a, is_max):
    k = a["kernel_shape"]
    s = a.get("strides", [1, 1])
    p = a.get("pads", [0, 0, 0, 0])
    fill = -np.inf if is_max else 0
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])),
                constant_values=fill)
    ceil = a.get("ceil_mode", 0)
    h, w = xp.shape[2], xp.shape[3]
    rnd = np.ceil if ceil else np.floor
    oh = int(rnd((h - k[0]) / s[0])) + 1
    ow = int(rnd((w - k[1]) / s[1])) + 1
    y = np.full((x.shape[0], x.shape[1], oh, ow), fill, np.float64)
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]]
            y[:, :, i, j] = win.max((2, 3)) if is_max else win.mean((2, 3))
    return y


def evaluate(model, feeds):
    """Every tensor's value for feeds (name -> array), float64."""
    v = {i.name: numpy_helper.to_array(i).astype(np.float64)
         if i.data_type == TensorProto.FLOAT else numpy_helper.to_array(i)
         for i in model.graph.initializer}
    v.update({k: a.astype(np.float64) for k, a in feeds.items()})
    for n in model.graph.node:
        a = _attrs(n)
        x = [v[i] if i else None for i in n.input]
        op = n.op_type
        if op == "Conv":
            y = _conv(x[0], x[1], x[2] if len(x) > 2 else None, a)
        elif op == "Relu":
            y = np.maximum(x[0], 0)
        elif op == "Clip":
            lo = x[1] if len(x) > 1 and x[1] is not None else a.get("min",
                                                                    -np.inf)
            hi = x[2] if len(x) > 2 and x[2] is not None else a.get("max",
                                                                    np.inf)
            y = np.clip(x[0], lo, hi)
        elif op in ("Add", "Sub", "Mul"):
            y = {"Add": np.add, "Sub": np.subtract,
                 "Mul": np.multiply}[op](x[0], x[1])
        elif op == "Sigmoid":
            y = 1 / (1 + np.exp(-x[0]))
        elif op == "Tanh":
            y = np.tanh(x[0])
        elif op == "LeakyRelu":
            y = np.where(x[0] >= 0, x[0], a.get("alpha", 0.01) * x[0])
        elif op == "MaxPool":
            y = _pool(x[0], a, True)
        elif op == "AveragePool":
            y = _pool(x[0], a, False)
        elif op == "GlobalAveragePool":
            y = x[0].mean((2, 3), keepdims=True)
        elif op == "Flatten":
            ax = a.get("axis", 1)
            y = x[0].reshape(int(np.prod(x[0].shape[:ax])), -1)
        elif op == "Gemm":
            b = x[1].T if a.get("transB", 0) else x[1]
            y = x[0] @ b + (x[2] if len(x) > 2 else 0)
        elif op == "HardSigmoid":
            y = np.clip(a.get("alpha", 0.2) * x[0] + a.get("beta", 0.5), 0, 1)
        elif op == "HardSwish":
            y = x[0] * np.clip(x[0] / 6 + 0.5, 0, 1)
        elif op == "Concat":
            y = np.concatenate(x, a["axis"])
        elif op == "Resize" and a.get("mode", b"nearest") == b"nearest" \
                and len(x) > 2 and x[2] is not None and x[2].size == 4 and \
                np.all(x[2] == np.round(x[2])):
            # Nearest by whole scales (the detector's upsampling).
            y = x[0]
            for ax in range(4):
                y = np.repeat(y, int(x[2][ax]), axis=ax)
        elif op in ("Identity", "Dropout"):
            y = x[0]
        elif op == "Reshape":
            y = x[0].reshape(x[1])
        elif op == "Constant":
            y = numpy_helper.to_array(a["value"])
            y = y.astype(np.float64) if y.dtype == np.float32 else y
        else:
            raise NotImplementedError("qdq calibration: " + op)
        v[n.output[0]] = y
    return v


# ---- the rewrite ----

def _act_params(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / 255 if hi > lo else 1.0
    zero = int(np.clip(round(-lo / scale), 0, 255))
    return np.float32(scale), np.uint8(zero)


def quantize(model, feeds, calibration):
    """The QDQ model of a float model: feeds is the test input (also
    used for calibration), calibration more inputs for the ranges."""
    ranges = {}
    first = next(iter(feeds))
    for x in [feeds[first]] + list(calibration):
        for k, a in evaluate(model, {first: x}).items():
            if isinstance(a, np.ndarray) and a.dtype == np.float64:
                lo, hi = ranges.get(k, (np.inf, -np.inf))
                ranges[k] = (min(lo, float(a.min())), max(hi, float(a.max())))
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    # PyTorch shares weights through Identity nodes: give each its copy.
    for n in list(g.node):
        if n.op_type == "Identity" and n.input[0] in inits:
            c = TensorProto()
            c.CopyFrom(inits[n.input[0]])
            c.name = n.output[0]
            g.initializer.append(c)
            inits[c.name] = c
            g.node.remove(n)
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    # Which activations get a Q/DQ pair.
    wanted = []
    for n in g.node:
        if n.op_type not in QUANT_OPS:
            continue
        ins = [i for i in n.input[:2 if n.op_type in ("Conv", "Gemm") else None]
               if i and i not in inits]
        if n.op_type in ("Conv", "Gemm"):
            ins = ins[:1]
        out = n.output[0]
        nxt = consumers.get(out, [])
        if len(nxt) == 1 and nxt[0].op_type in FUSED_AFTER:
            out = nxt[0].output[0]
        for t in ins + [out]:
            if t not in wanted:
                wanted.append(t)
    params = {t: _act_params(*ranges[t]) for t in wanted}
    new_inits, nodes = [], []
    rename = {}  # consumer input name -> dequantised name
    graph_outputs = {o.name for o in g.output}
    for t in wanted:
        s, z = params[t]
        new_inits += [numpy_helper.from_array(np.array(s), t + "_scale"),
                      numpy_helper.from_array(np.array(z), t + "_zero")]
        rename[t] = t + "_dq"
    # Weights and biases.
    for n in g.node:
        if n.op_type not in ("Conv", "Gemm"):
            continue
        w = numpy_helper.to_array(inits[n.input[1]]).astype(np.float64)
        if n.op_type == "Gemm" and not _attrs(n).get("transB", 0):
            raise NotImplementedError("qdq: Gemm without transB")
        flat = np.abs(w.reshape(w.shape[0], -1)).max(1)
        ws = np.where(flat > 0, flat / 127, 1.0).astype(np.float32)
        q = np.clip(np.round(w / ws.reshape((-1,) + (1,) * (w.ndim - 1))),
                    -127, 127).astype(np.int8)
        wn = n.input[1]
        new_inits += [numpy_helper.from_array(q, wn + "_q"),
                      numpy_helper.from_array(ws, wn + "_scale"),
                      numpy_helper.from_array(np.zeros(len(ws), np.int8),
                                              wn + "_zero")]
        nodes.append(helper.make_node("DequantizeLinear",
                                      [wn + "_q", wn + "_scale", wn + "_zero"],
                                      [wn + "_dq"], axis=0))
        n.input[1] = wn + "_dq"
        if len(n.input) > 2 and n.input[2]:
            bn = n.input[2]
            b = numpy_helper.to_array(inits[bn]).astype(np.float64)
            bs = (params[n.input[0]][0] * ws).astype(np.float32)
            bq = np.round(b / bs).astype(np.int32)
            new_inits += [numpy_helper.from_array(bq, bn + "_q"),
                          numpy_helper.from_array(bs, bn + "_scale"),
                          numpy_helper.from_array(
                              np.zeros(len(bs), np.int32), bn + "_zero")]
            nodes.append(helper.make_node(
                "DequantizeLinear", [bn + "_q", bn + "_scale", bn + "_zero"],
                [bn + "_dq"], axis=0))
            n.input[2] = bn + "_dq"
    # Activations: Q/DQ right after the producer (or at the input).
    def qdq_nodes(t, src):
        return [helper.make_node("QuantizeLinear",
                                 [src, t + "_scale", t + "_zero"], [t + "_q"]),
                helper.make_node("DequantizeLinear",
                                 [t + "_q", t + "_scale", t + "_zero"],
                                 [t + "_dq"])]
    for t in wanted:
        if t in {i.name for i in g.input}:
            nodes += qdq_nodes(t, t)
    for n in g.node:
        for k, i in enumerate(n.input):
            if i in rename:
                n.input[k] = rename[i]
        nodes.append(n)
        for o in n.output:
            if o in params:
                if o in graph_outputs:
                    # the graph output keeps its name: the DQ writes it
                    n.output[0] = o + "_fp"
                    q = qdq_nodes(o, o + "_fp")
                    q[1].output[0] = o
                    nodes += q
                else:
                    nodes += qdq_nodes(o, o)
    del g.node[:]
    g.node.extend(nodes)
    used = {i for n in g.node for i in n.input}
    keep = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    return model
