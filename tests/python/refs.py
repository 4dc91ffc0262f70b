"""numpy references for test_python.py: plain definitions of each op,
written from graph.h's comments and ONNX's operator descriptions, in
float64, so that the Python package's builder is checked op by op."""

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

erf = np.vectorize(math.erf)


def pad4(x, pads, value=0.0):
    t, l, b, r = pads
    return np.pad(x, ((0, 0), (0, 0), (t, b), (l, r)), constant_values=value)


def conv2d(x, w, b, stride=(1, 1), dilation=(1, 1), pads=(0, 0, 0, 0),
           groups=1):
    x = pad4(x.astype(np.float64), pads)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    eh, ew = dilation[0] * (kh - 1) + 1, dilation[1] * (kw - 1) + 1
    oh, ow = (h - eh) // stride[0] + 1, (wd - ew) // stride[1] + 1
    y = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = x[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dilation[0]:i * dilation[0] + stride[0] *
                           (oh - 1) + 1:stride[0], j * dilation[1]:
                           j * dilation[1] + stride[1] * (ow - 1) + 1:
                           stride[1]]
                y[:, g * og:(g + 1) * og] += np.einsum(
                    "nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def conv_transpose2d(x, w, b, stride=(1, 1), pads=(0, 0, 0, 0)):
    n, ci, h, wd = x.shape
    _, co, kh, kw = w.shape
    full = np.zeros((n, co, (h - 1) * stride[0] + kh,
                     (wd - 1) * stride[1] + kw))
    for i in range(h):
        for j in range(wd):
            full[:, :, i * stride[0]:i * stride[0] + kh,
                 j * stride[1]:j * stride[1] + kw] += np.einsum(
                     "nc,cokl->nokl", x[:, :, i, j], w)
    t, l, bt, r = pads
    y = full[:, :, t:full.shape[2] - bt, l:full.shape[3] - r]
    return y + (0 if b is None else b.reshape(1, -1, 1, 1))


def pool(x, k, stride, fn):
    win = sliding_window_view(x.astype(np.float64), k, axis=(2, 3))
    win = win[:, :, ::stride[0], ::stride[1]]
    return fn(win, axis=(-2, -1))


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(x, scale, bias, axis, eps):
    axes = tuple(range(axis % x.ndim, x.ndim))
    m = x.mean(axis=axes, keepdims=True)
    v = ((x - m) ** 2).mean(axis=axes, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * scale + (0 if bias is None else bias)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# fn: (reference(x, alpha, beta), alpha, beta, input range)
UNARY = {
    "tanh": (lambda x, a, b: np.tanh(x), 0, 0, (-3, 3)),
    "exp": (lambda x, a, b: np.exp(x), 0, 0, (-3, 3)),
    "log": (lambda x, a, b: np.log(x), 0, 0, (0.1, 5)),
    "sqrt": (lambda x, a, b: np.sqrt(x), 0, 0, (0.1, 5)),
    "reciprocal": (lambda x, a, b: 1 / x, 0, 0, (0.5, 5)),
    "abs": (lambda x, a, b: np.abs(x), 0, 0, (-3, 3)),
    "neg": (lambda x, a, b: -x, 0, 0, (-3, 3)),
    "erf": (lambda x, a, b: erf(x), 0, 0, (-3, 3)),
    "gelu": (lambda x, a, b: 0.5 * x * (1 + erf(x / math.sqrt(2))), 0, 0,
             (-3, 3)),
    "gelu_tanh": (lambda x, a, b: 0.5 * x * (1 + np.tanh(
        math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))), 0, 0, (-3, 3)),
    "hard_sigmoid": (lambda x, a, b: np.clip(a * x + b, 0, 1), 0.25, 0.4,
                     (-5, 5)),
    "hard_swish": (lambda x, a, b: x * np.clip(x / 6 + 0.5, 0, 1), 0, 0,
                   (-5, 5)),
    "silu": (lambda x, a, b: x * sigmoid(x), 0, 0, (-5, 5)),
    "leaky_relu": (lambda x, a, b: np.where(x < 0, a * x, x), 0.1, 0,
                   (-3, 3)),
    "elu": (lambda x, a, b: np.where(x < 0, a * (np.exp(x) - 1), x), 0.7, 0,
            (-3, 3)),
    "selu": (lambda x, a, b: b * np.where(x <= 0, a * (np.exp(x) - 1), x),
             1.5, 1.1, (-3, 3)),
    "celu": (lambda x, a, b: np.maximum(0, x) + np.minimum(
        0, a * (np.exp(x / a) - 1)), 0.8, 0, (-3, 3)),
    "softplus": (lambda x, a, b: np.log1p(np.exp(x)), 0, 0, (-5, 5)),
    "softsign": (lambda x, a, b: x / (1 + np.abs(x)), 0, 0, (-5, 5)),
    "mish": (lambda x, a, b: x * np.tanh(np.log1p(np.exp(x))), 0, 0,
             (-5, 5)),
    "thresholded_relu": (lambda x, a, b: np.where(x > a, x, 0), 0.5, 0,
                         (-3, 3)),
    "shrink": (lambda x, a, b: np.where(x < -a, x + b, np.where(
        x > a, x - b, 0)), 0.6, 0.2, (-3, 3)),
    "sin": (lambda x, a, b: np.sin(x), 0, 0, (-3, 3)),
    "cos": (lambda x, a, b: np.cos(x), 0, 0, (-3, 3)),
    "tan": (lambda x, a, b: np.tan(x), 0, 0, (-1.2, 1.2)),
    "asin": (lambda x, a, b: np.arcsin(x), 0, 0, (-0.95, 0.95)),
    "acos": (lambda x, a, b: np.arccos(x), 0, 0, (-0.95, 0.95)),
    "atan": (lambda x, a, b: np.arctan(x), 0, 0, (-3, 3)),
    "sinh": (lambda x, a, b: np.sinh(x), 0, 0, (-3, 3)),
    "cosh": (lambda x, a, b: np.cosh(x), 0, 0, (-3, 3)),
    "asinh": (lambda x, a, b: np.arcsinh(x), 0, 0, (-3, 3)),
    "acosh": (lambda x, a, b: np.arccosh(x), 0, 0, (1.1, 5)),
    "atanh": (lambda x, a, b: np.arctanh(x), 0, 0, (-0.9, 0.9)),
    "floor": (lambda x, a, b: np.floor(x), 0, 0, (-3, 3)),
    "ceil": (lambda x, a, b: np.ceil(x), 0, 0, (-3, 3)),
    "round": (lambda x, a, b: np.round(x), 0, 0, (-3, 3)),
    "sign": (lambda x, a, b: np.sign(x), 0, 0, (-3, 3)),
    "sigmoid": (lambda x, a, b: sigmoid(x), 0, 0, (-5, 5)),
    "relu": (lambda x, a, b: np.maximum(x, 0), 0, 0, (-3, 3)),
    "clip": (lambda x, a, b: np.clip(x, a, b), -0.5, 1.5, (-3, 3)),
}

BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply,
    "div": np.divide, "pow": np.power, "max": np.maximum,
    "min": np.minimum, "fmod": np.fmod, "mod": np.mod,
    "prelu": lambda a, b: np.where(a < 0, a * b, a),
}

COMPARE = {
    "equal": np.equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
    "and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor,
}

REDUCE = {
    "sum": lambda x, ax: x.sum(ax), "mean": lambda x, ax: x.mean(ax),
    "max": lambda x, ax: x.max(ax), "min": lambda x, ax: x.min(ax),
    "prod": lambda x, ax: x.prod(ax), "l1": lambda x, ax: np.abs(x).sum(ax),
    "l2": lambda x, ax: np.sqrt((x * x).sum(ax)),
    "sum_square": lambda x, ax: (x * x).sum(ax),
    "log_sum": lambda x, ax: np.log(x.sum(ax)),
    "log_sum_exp": lambda x, ax: np.log(np.exp(x).sum(ax)),
}


def quantize(x, scale, zero, dtype):
    info = np.iinfo(dtype)
    return np.clip(np.round(x / scale) + zero, info.min, info.max).astype(
        dtype)


def dequantize(q, scale, zero):
    return (q.astype(np.float64) - zero) * scale
