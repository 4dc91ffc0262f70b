"""The graph builder: every op of graph.h as a method of Graph.

Tensors are handles of one graph. Where an op takes a tensor, a numpy
array (or anything numpy.asarray takes) is accepted too and becomes a
constant (copied); a Python number beside a tensor becomes a constant of
that tensor's dtype. Errors raise at once, as the exception the
library's diagnostic calls for (directgraph.errors); the graph keeps its
first error (graph.h: errors are sticky), so build a new graph after one.
"""

import ctypes
import numbers
import weakref

import numpy as np

from . import errors
from ._ffi import abi, address, c_array, enum_values, lib
from ._types import (LAYOUTS, Quant, desc, describe, dtype_name, dtype_of,
                     enum, numpy_dtype, quant_ptr, shape_of)
from .context import default_context

PADDINGS = enum_values("dg_padding", "DG_PADDING_")
ACTIVATIONS = enum_values("dg_activation", "DG_ACTIVATION_")
UNARY = enum_values("dg_unary_fn", "DG_UNARY_")
BINARY = enum_values("dg_binary_fn", "DG_BINARY_")
COMPARE = enum_values("dg_compare_fn", "DG_COMPARE_")


def _name(name):
    return None if name is None else str(name).encode()


def _diag(ptr):
    """A dg_diagnostic from a const dg_diagnostic * (None for NULL)."""
    return ptr.contents if ptr else None


def _pair(v, what):
    if isinstance(v, numbers.Integral):
        return (int(v), int(v))
    v = tuple(int(x) for x in v)
    if len(v) != 2:
        raise ValueError("%s: %r is not an int or an (h, w) pair" % (what, v))
    return v


def _padding(padding):
    """(dg_padding, pads[4]) from "valid"/"same_upper"/"same_lower", an
    int, (h, w) or (top, left, bottom, right)."""
    if isinstance(padding, str):
        if padding.lower() not in PADDINGS or padding.lower() == "explicit":
            raise ValueError("padding: %r is not valid, same_upper, "
                             "same_lower or explicit pads" % padding)
        return PADDINGS[padding.lower()], (0, 0, 0, 0)
    if isinstance(padding, numbers.Integral):
        return PADDINGS["explicit"], (int(padding),) * 4
    p = tuple(int(x) for x in padding)
    if len(p) == 2:
        return PADDINGS["explicit"], p + p
    if len(p) == 4:
        return PADDINGS["explicit"], p
    raise ValueError("padding: %r is not 1, 2 or 4 ints" % (padding,))


def _activation(a):
    return enum("dg_activation", "DG_ACTIVATION_",
                "none" if a is None else a, "activation")


class Tensor:
    """A tensor of a Graph: ``shape``, ``dtype`` ("f32", ...) and
    ``quant`` as shape inference gave them. Arithmetic operators build
    nodes: ``a + b``, ``a * 2``, ``-a``, ``a @ b``."""

    __slots__ = ("graph", "_h")

    def __init__(self, graph, handle):
        self.graph, self._h = graph, handle

    def _desc(self):
        d = abi.dg_tensor_desc()
        errors.check(lib.dg_graph_tensor_desc(self.graph._ptr, self._h, d),
                     None, "Tensor.shape")
        return d

    @property
    def shape(self):
        return shape_of(self._desc())

    @property
    def dtype(self):
        return dtype_name(self._desc().dtype)

    @property
    def quant(self):
        return Quant.from_c(self._desc().quant)

    def __repr__(self):
        d = self._desc()
        return "Tensor(%s)" % describe(shape_of(d), d.dtype)

    def __add__(self, o):
        return self.graph.binary("add", self, o)

    def __radd__(self, o):
        return self.graph.binary("add", o, self)

    def __sub__(self, o):
        return self.graph.binary("sub", self, o)

    def __rsub__(self, o):
        return self.graph.binary("sub", o, self)

    def __mul__(self, o):
        return self.graph.binary("mul", self, o)

    def __rmul__(self, o):
        return self.graph.binary("mul", o, self)

    def __truediv__(self, o):
        return self.graph.binary("div", self, o)

    def __rtruediv__(self, o):
        return self.graph.binary("div", o, self)

    def __pow__(self, o):
        return self.graph.binary("pow", self, o)

    def __neg__(self):
        return self.graph.unary("neg", self)

    def __matmul__(self, o):
        return self.graph.matmul(self, o)


class Graph:
    """A graph being built (dg_graph). ``Graph(name, context=None)``; the
    default context when none is given. One thread builds a graph at a
    time. ``compile(...)`` gives a Session; the graph may be dropped
    afterwards."""

    def __init__(self, name=None, *, context=None, _ptr=None):
        self.context = context or default_context()
        if _ptr is None:
            _ptr = lib.dg_graph_create(self.context._ptr, _name(name))
            if not _ptr:
                raise errors.OutOfMemoryError("Graph: out of memory")
        self._ptr = _ptr
        weakref.finalize(self, lib.dg_graph_destroy, _ptr)
        self._lent = []  # arrays lent with constant(lend=True)
        self._failed = None  # the first error's message, once raised

    # ---- plumbing ----

    def _made(self, handle, fn):
        if handle.id == 0 and self._failed:
            raise errors.GraphFailedError(
                "Graph.%s: the graph already holds an error (%s); build a "
                "new graph" % (fn[len("dg_graph_"):], self._failed),
                abi.DG_ERROR_GRAPH_FAILED, function="Graph." +
                fn[len("dg_graph_"):])
        if handle.id == 0:
            err = _diag(lib.dg_graph_error(self._ptr))
            code = lib.dg_graph_status(self._ptr)
            e = errors.from_diagnostic(code or abi.DG_ERROR_INVALID_ARGUMENT,
                                       err, "Graph." + fn[len("dg_graph_"):])
            self._failed = e.message
            raise e
        return Tensor(self, handle)

    def _t(self, v, like=None, what="tensor"):
        """A dg_tensor for a Tensor, an array-like (a new constant) or a
        number (a constant of like's dtype); NONE for None."""
        if v is None:
            return abi.dg_tensor()  # DG_TENSOR_NONE
        if isinstance(v, Tensor):
            if v.graph is not self:
                raise ValueError("%s: a tensor of another graph" % what)
            return v._h
        if isinstance(v, numbers.Number) and not isinstance(v, bool):
            dt = numpy_dtype(dtype_of(like.dtype)) if like is not None \
                else np.float32
            return self.constant(np.asarray(v, dtype=dt))._h
        return self.constant(v)._h

    def _tensors(self, items, what):
        hs = [self._t(v, what=what) for v in items]
        return c_array(abi.dg_tensor, hs), len(hs)

    # ---- inputs, constants, outputs ----

    def input(self, name, shape, dtype="f32", *, quant=None, layout="nchw"):
        """A graph input fed at run time; layout "nhwc" for a rank-4 input
        supplied channels-last."""
        keep = []
        t = self._made(lib.dg_graph_input(self._ptr, _name(name),
                                          desc(shape, dtype, quant, keep)),
                       "dg_graph_input")
        if layout != "nchw":
            errors.check(lib.dg_graph_input_layout(
                self._ptr, _name(name), enum("dg_layout", "DG_LAYOUT_",
                                             layout, "layout")),
                _diag(lib.dg_graph_error(self._ptr)), "Graph.input")
        return t

    def constant(self, array, name=None, *, dtype=None, quant=None,
                 lend=False):
        """A constant from an array (copied; with lend=True the graph and
        its sessions read the array in place, and keep it alive). float64
        data is refused rather than narrowed: give dtype="f32"."""
        a = np.asarray(array)
        if dtype is not None:
            a = a.astype(numpy_dtype(dtype_of(dtype)), copy=False)
        dg = dtype_of(a.dtype, "constant %s" % (name or ""))
        a = np.ascontiguousarray(a)
        keep = []
        d = desc(a.shape, dg, quant, keep)
        t = self._made(lib.dg_graph_constant(
            self._ptr, _name(name), d, address(a),
            abi.DG_CONSTANT_LEND if lend else 0), "dg_graph_constant")
        if lend:
            self._lent.append(a)
        return t

    def output(self, name, tensor, *, layout="nchw"):
        """Marks tensor as the output name, read back in layout."""
        errors.check(lib.dg_graph_output(
            self._ptr, _name(name), self._t(tensor, what="output"),
            enum("dg_layout", "DG_LAYOUT_", layout, "layout")),
            _diag(lib.dg_graph_error(self._ptr)), "Graph.output")

    def set_device(self, device):
        """Pins the nodes added from now on to a device (a Device or its
        index); None clears the pin."""
        index = -1 if device is None else getattr(device, "index", device)
        errors.check(lib.dg_graph_set_device(self._ptr, int(index)),
                     _diag(lib.dg_graph_error(self._ptr)), "Graph.set_device")

    @property
    def node_count(self):
        return lib.dg_graph_node_count(self._ptr)

    def _io(self, outputs):
        from .session import IOInfo

        count = (lib.dg_graph_output_count if outputs
                 else lib.dg_graph_input_count)(self._ptr)
        get = lib.dg_graph_output_info if outputs else lib.dg_graph_input_info
        return [IOInfo.get(get, self._ptr, i) for i in range(count)]

    @property
    def inputs(self):
        return self._io(False)

    @property
    def outputs(self):
        return self._io(True)

    def compile(self, devices=None, *, policy="auto", kinds=None,
                profile=False, precision="exact"):
        """A Session running this graph (see Session for the arguments)."""
        from .session import Session

        return Session(self, devices=devices, policy=policy, kinds=kinds,
                       profile=profile, precision=precision)

    # ---- convolution, pooling, dense ----

    def _conv_params(self, stride, dilation, padding, groups, activation):
        p = abi.dg_conv2d_params()
        p.stride = _pair(stride, "stride")
        p.dilation = _pair(dilation, "dilation")
        p.padding, p.pads = _padding(padding)
        p.groups = int(groups)
        p.activation = _activation(activation)
        return p

    def conv2d(self, x, w, b=None, *, stride=1, dilation=1, padding=0,
               groups=1, activation=None, name=None):
        """x [N,C,H,W] * w [O,C/groups,KH,KW] (+ b [O]), then activation
        (None, "relu", "relu6"). padding: "valid", "same_upper",
        "same_lower", or pads (p, (h, w) or (top, left, bottom, right))."""
        p = self._conv_params(stride, dilation, padding, groups, activation)
        return self._made(lib.dg_graph_conv2d(
            self._ptr, _name(name), self._t(x), self._t(w), self._t(b), p),
            "dg_graph_conv2d")

    def qconv2d(self, x, w, b=None, *, y_dtype="i8", y_quant, stride=1,
                dilation=1, padding=0, groups=1, activation=None, name=None):
        """ONNX QLinearConv: int8 x, w (per-tensor or per channel), i32 b."""
        p = self._conv_params(stride, dilation, padding, groups, activation)
        keep = []
        return self._made(lib.dg_graph_qconv2d(
            self._ptr, _name(name), self._t(x), self._t(w), self._t(b), p,
            dtype_of(y_dtype), quant_ptr(y_quant, keep)), "dg_graph_qconv2d")

    def conv_transpose2d(self, x, w, b=None, *, stride=1, dilation=1,
                         padding=0, groups=1, activation=None,
                         output_padding=None, name=None):
        """x [N,Cin,H,W], w [Cin, Cout/groups, KH, KW] (ONNX layout)."""
        p = self._conv_params(stride, dilation, padding, groups, activation)
        op = None if output_padding is None else c_array(
            ctypes.c_int32, _pair(output_padding, "output_padding"))
        return self._made(lib.dg_graph_conv_transpose2d(
            self._ptr, _name(name), self._t(x), self._t(w), self._t(b), p, op),
            "dg_graph_conv_transpose2d")

    @staticmethod
    def _pool_params(kernel, stride, padding, ceil_mode, count_include_pad,
                     dilation):
        p = abi.dg_pool2d_params()
        p.kernel = _pair(kernel, "kernel")
        p.stride = _pair(stride, "stride")
        p.padding, p.pads = _padding(padding)
        p.ceil_mode = int(bool(ceil_mode))
        p.count_include_pad = int(bool(count_include_pad))
        p.dilation = _pair(dilation, "dilation")
        return p

    def max_pool2d(self, x, kernel, *, stride=1, padding=0, ceil_mode=False,
                   dilation=1, name=None):
        """Max pooling (ONNX MaxPool: stride 1 unless given)."""
        p = self._pool_params(kernel, stride, padding, ceil_mode, False,
                              dilation)
        return self._made(lib.dg_graph_max_pool2d(
            self._ptr, _name(name), self._t(x), p), "dg_graph_max_pool2d")

    def avg_pool2d(self, x, kernel, *, stride=1, padding=0, ceil_mode=False,
                   count_include_pad=False, dilation=1, name=None):
        p = self._pool_params(kernel, stride, padding, ceil_mode,
                              count_include_pad, dilation)
        return self._made(lib.dg_graph_avg_pool2d(
            self._ptr, _name(name), self._t(x), p), "dg_graph_avg_pool2d")

    def global_avg_pool(self, x, *, name=None):
        return self._made(lib.dg_graph_global_avg_pool(
            self._ptr, _name(name), self._t(x)), "dg_graph_global_avg_pool")

    def fully_connected(self, x, w, b=None, *, activation=None, name=None):
        """y[n,o] = act(sum_k x[n,k] w[o,k] + b[o])."""
        return self._made(lib.dg_graph_fully_connected(
            self._ptr, _name(name), self._t(x), self._t(w), self._t(b),
            _activation(activation)), "dg_graph_fully_connected")

    def qfully_connected(self, x, w, b=None, *, activation=None, y_dtype="i8",
                         y_quant, name=None):
        keep = []
        return self._made(lib.dg_graph_qfully_connected(
            self._ptr, _name(name), self._t(x), self._t(w), self._t(b),
            _activation(activation), dtype_of(y_dtype),
            quant_ptr(y_quant, keep)), "dg_graph_qfully_connected")

    def matmul(self, a, b, *, name=None):
        """numpy matmul, batch dims broadcast."""
        return self._made(lib.dg_graph_matmul(
            self._ptr, _name(name), self._t(a), self._t(b)), "dg_graph_matmul")

    def qmatmul(self, a, b, *, y_dtype="i8", y_quant, name=None):
        keep = []
        return self._made(lib.dg_graph_qmatmul(
            self._ptr, _name(name), self._t(a), self._t(b), dtype_of(y_dtype),
            quant_ptr(y_quant, keep)), "dg_graph_qmatmul")

    # ---- normalisation, softmax, reductions ----

    def softmax(self, x, axis=-1, *, name=None):
        return self._made(lib.dg_graph_softmax(
            self._ptr, _name(name), self._t(x), int(axis)), "dg_graph_softmax")

    def log_softmax(self, x, axis=-1, *, name=None):
        return self._made(lib.dg_graph_log_softmax(
            self._ptr, _name(name), self._t(x), int(axis)),
            "dg_graph_log_softmax")

    def layer_norm(self, x, scale, bias=None, *, axis=-1, epsilon=1e-5,
                   name=None):
        return self._made(lib.dg_graph_layer_norm(
            self._ptr, _name(name), self._t(x), self._t(scale, x),
            self._t(bias, x), int(axis), float(epsilon)),
            "dg_graph_layer_norm")

    def batch_norm(self, x, scale, bias, mean, var, *, epsilon=1e-5,
                   name=None):
        return self._made(lib.dg_graph_batch_norm(
            self._ptr, _name(name), self._t(x), self._t(scale),
            self._t(bias), self._t(mean), self._t(var), float(epsilon)),
            "dg_graph_batch_norm")

    def reduce(self, fn, x, axes=None, *, keepdims=True, name=None):
        """fn: sum, mean, max, min, prod, l1, l2, sum_square, log_sum,
        log_sum_exp; axes None reduces every axis."""
        f = enum("dg_reduce_fn", "DG_REDUCE_", fn, "fn")
        axes = [] if axes is None else [int(a) for a in (
            [axes] if isinstance(axes, numbers.Integral) else axes)]
        arr = c_array(ctypes.c_int32, axes) if axes else None
        return self._made(lib.dg_graph_reduce(
            self._ptr, _name(name), f, self._t(x), arr, len(axes),
            int(bool(keepdims))), "dg_graph_reduce")

    def arg_reduce(self, fn, x, axis=0, *, keepdims=True,
                   select_last_index=False, name=None):
        """fn "max" or "min": the i64 index along axis."""
        return self._made(lib.dg_graph_arg_reduce(
            self._ptr, _name(name), enum("dg_arg_fn", "DG_ARG_", fn, "fn"),
            self._t(x), int(axis), int(bool(keepdims)),
            int(bool(select_last_index))), "dg_graph_arg_reduce")

    def argmax(self, x, axis=0, **kw):
        return self.arg_reduce("max", x, axis, **kw)

    def argmin(self, x, axis=0, **kw):
        return self.arg_reduce("min", x, axis, **kw)

    # ---- elementwise ----

    def unary(self, fn, x, alpha=0.0, beta=0.0, *, name=None):
        """Any dg_unary_fn by name ("tanh", "gelu", "leaky_relu", ...);
        alpha and beta as graph.h lists them (0: ONNX's default)."""
        return self._made(lib.dg_graph_unary(
            self._ptr, _name(name), enum("dg_unary_fn", "DG_UNARY_", fn, "fn"),
            self._t(x), float(alpha), float(beta)), "dg_graph_unary")

    def relu(self, x, *, name=None):
        return self._made(lib.dg_graph_relu(self._ptr, _name(name),
                                            self._t(x)), "dg_graph_relu")

    def sigmoid(self, x, *, name=None):
        return self._made(lib.dg_graph_sigmoid(self._ptr, _name(name),
                                               self._t(x)), "dg_graph_sigmoid")

    def clip(self, x, lo, hi, *, name=None):
        return self._made(lib.dg_graph_clip(
            self._ptr, _name(name), self._t(x), float(lo), float(hi)),
            "dg_graph_clip")

    def _two(self, a, b):
        like = a if isinstance(a, Tensor) else b
        return self._t(a, like, "a"), self._t(b, like, "b")

    def binary(self, fn, a, b, *, name=None):
        """fn: add, sub, mul, div, pow, max, min, fmod, mod, prelu, with
        numpy broadcasting."""
        f = enum("dg_binary_fn", "DG_BINARY_", fn, "fn")
        ha, hb = self._two(a, b)
        return self._made(lib.dg_graph_binary(self._ptr, _name(name), f, ha,
                                              hb), "dg_graph_binary")

    def add(self, a, b, *, name=None):
        ha, hb = self._two(a, b)
        return self._made(lib.dg_graph_add(self._ptr, _name(name), ha, hb),
                          "dg_graph_add")

    def compare(self, fn, a, b, *, name=None):
        """fn: equal, less, less_equal, greater, greater_equal, and, or,
        xor; a bool tensor."""
        f = enum("dg_compare_fn", "DG_COMPARE_", fn, "fn")
        ha, hb = self._two(a, b)
        return self._made(lib.dg_graph_compare(self._ptr, _name(name), f, ha,
                                               hb), "dg_graph_compare")

    def not_(self, x, *, name=None):
        return self._made(lib.dg_graph_not(self._ptr, _name(name),
                                           self._t(x)), "dg_graph_not")

    def isnan(self, x, *, name=None):
        return self._made(lib.dg_graph_isnan(self._ptr, _name(name),
                                             self._t(x)), "dg_graph_isnan")

    def isinf(self, x, *, positive=True, negative=True, name=None):
        return self._made(lib.dg_graph_isinf(
            self._ptr, _name(name), self._t(x), int(bool(positive)),
            int(bool(negative))), "dg_graph_isinf")

    def where(self, cond, x, y, *, name=None):
        like = x if isinstance(x, Tensor) else y
        return self._made(lib.dg_graph_where(
            self._ptr, _name(name), self._t(cond), self._t(x, like, "x"),
            self._t(y, like, "y")), "dg_graph_where")

    def cast(self, x, dtype, *, name=None):
        return self._made(lib.dg_graph_cast(
            self._ptr, _name(name), self._t(x), dtype_of(dtype)),
            "dg_graph_cast")

    # ---- int8 ----

    def quantize(self, x, dtype="i8", quant=None, *, name=None):
        keep = []
        return self._made(lib.dg_graph_quantize(
            self._ptr, _name(name), self._t(x), dtype_of(dtype),
            quant_ptr(quant, keep)), "dg_graph_quantize")

    def dequantize(self, x, *, name=None):
        return self._made(lib.dg_graph_dequantize(
            self._ptr, _name(name), self._t(x)), "dg_graph_dequantize")

    def qbinary(self, fn, a, b, *, y_dtype="i8", y_quant, name=None):
        """int8 add, sub, mul (ONNX QLinearAdd, QLinearMul)."""
        keep = []
        return self._made(lib.dg_graph_qbinary(
            self._ptr, _name(name), enum("dg_binary_fn", "DG_BINARY_", fn,
                                         "fn"), self._t(a), self._t(b),
            dtype_of(y_dtype), quant_ptr(y_quant, keep)), "dg_graph_qbinary")

    def lookup(self, x, table, *, y_dtype="i8", y_quant, name=None):
        """y[i] = table[x[i] - min(x's dtype)], table 256 values."""
        dt = dtype_of(y_dtype)
        tab = np.ascontiguousarray(np.asarray(table, numpy_dtype(dt)))
        if tab.shape != (256,):
            raise ValueError("table: shape %s, expected (256,)" % (tab.shape,))
        keep = []
        return self._made(lib.dg_graph_lookup(
            self._ptr, _name(name), self._t(x), address(tab), dt,
            quant_ptr(y_quant, keep)), "dg_graph_lookup")

    def qunary(self, fn, x, alpha=0.0, beta=0.0, *, y_dtype="i8", y_quant,
               name=None):
        keep = []
        return self._made(lib.dg_graph_qunary(
            self._ptr, _name(name), enum("dg_unary_fn", "DG_UNARY_", fn, "fn"),
            self._t(x), float(alpha), float(beta), dtype_of(y_dtype),
            quant_ptr(y_quant, keep)), "dg_graph_qunary")

    def requantize(self, x, *, y_dtype="i8", y_quant, name=None):
        keep = []
        return self._made(lib.dg_graph_requantize(
            self._ptr, _name(name), self._t(x), dtype_of(y_dtype),
            quant_ptr(y_quant, keep)), "dg_graph_requantize")

    def qavg_pool2d(self, x, kernel, *, stride=1, padding=0, ceil_mode=False,
                    count_include_pad=False, dilation=1, y_dtype="i8",
                    y_quant, name=None):
        p = self._pool_params(kernel, stride, padding, ceil_mode,
                              count_include_pad, dilation)
        keep = []
        return self._made(lib.dg_graph_qavg_pool2d(
            self._ptr, _name(name), self._t(x), p, dtype_of(y_dtype),
            quant_ptr(y_quant, keep)), "dg_graph_qavg_pool2d")

    def qglobal_avg_pool(self, x, *, y_dtype="i8", y_quant, name=None):
        keep = []
        return self._made(lib.dg_graph_qglobal_avg_pool(
            self._ptr, _name(name), self._t(x), dtype_of(y_dtype),
            quant_ptr(y_quant, keep)), "dg_graph_qglobal_avg_pool")

    def qconcat(self, tensors, axis, *, y_dtype="i8", y_quant, name=None):
        arr, n = self._tensors(tensors, "tensors")
        keep = []
        return self._made(lib.dg_graph_qconcat(
            self._ptr, _name(name), arr, n, int(axis), dtype_of(y_dtype),
            quant_ptr(y_quant, keep)), "dg_graph_qconcat")

    # ---- data movement ----

    def reshape(self, x, shape, *, name=None):
        """New dims, one -1 inferred, 0 copying x's dim (ONNX Reshape)."""
        dims = [int(d) for d in shape]
        return self._made(lib.dg_graph_reshape(
            self._ptr, _name(name), self._t(x), len(dims),
            c_array(ctypes.c_int64, dims)), "dg_graph_reshape")

    def flatten(self, x, axis=1, *, name=None):
        return self._made(lib.dg_graph_flatten(
            self._ptr, _name(name), self._t(x), int(axis)), "dg_graph_flatten")

    def concat(self, tensors, axis, *, name=None):
        arr, n = self._tensors(tensors, "tensors")
        return self._made(lib.dg_graph_concat(
            self._ptr, _name(name), arr, n, int(axis)), "dg_graph_concat")

    def transpose(self, x, perm=None, *, name=None):
        """perm None reverses the axes."""
        p = None if perm is None else c_array(ctypes.c_int32,
                                              [int(a) for a in perm])
        return self._made(lib.dg_graph_transpose(
            self._ptr, _name(name), self._t(x), p), "dg_graph_transpose")

    def slice(self, x, starts, ends, steps=None, *, name=None):
        """numpy/ONNX slicing, one start, end (and step) per axis of x."""
        t = self._t(x)
        st = c_array(ctypes.c_int64, [int(v) for v in starts])
        en = c_array(ctypes.c_int64, [int(v) for v in ends])
        sp = None if steps is None else c_array(ctypes.c_int64,
                                                [int(v) for v in steps])
        rank = len(x.shape) if isinstance(x, Tensor) else None
        for what, v in (("starts", starts), ("ends", ends), ("steps", steps)):
            if v is not None and rank is not None and len(v) != rank:
                raise ValueError("slice %s: %d entries for a rank-%d x" %
                                 (what, len(v), rank))
        return self._made(lib.dg_graph_slice(self._ptr, _name(name), t, st,
                                             en, sp), "dg_graph_slice")

    def pad(self, x, pads, *, mode="constant", value=0.0, name=None):
        """pads: every axis's begin, then every axis's end (ONNX order)."""
        rank = len(x.shape) if isinstance(x, Tensor) else None
        if rank is not None and len(pads) != 2 * rank:
            raise ValueError("pad pads: %d entries for a rank-%d x, expected "
                             "%d" % (len(pads), rank, 2 * rank))
        return self._made(lib.dg_graph_pad(
            self._ptr, _name(name), self._t(x),
            c_array(ctypes.c_int64, [int(p) for p in pads]),
            enum("dg_pad_mode", "DG_PAD_", mode, "mode"), float(value)),
            "dg_graph_pad")

    def expand(self, x, shape, *, name=None):
        dims = [int(d) for d in shape]
        return self._made(lib.dg_graph_expand(
            self._ptr, _name(name), self._t(x), len(dims),
            c_array(ctypes.c_int64, dims)), "dg_graph_expand")

    def gather(self, x, indices, axis=0, *, name=None):
        """indices: a constant i32 tensor (an int array becomes one)."""
        if not isinstance(indices, Tensor):
            indices = self.constant(np.asarray(indices, dtype=np.int32))
        return self._made(lib.dg_graph_gather(
            self._ptr, _name(name), self._t(x), self._t(indices), int(axis)),
            "dg_graph_gather")

    def resize(self, x, *, scales=None, sizes=None, mode="nearest",
               coord="half_pixel", nearest="round_prefer_floor", name=None):
        """Resizes H and W by scales (h, w) or to sizes (h, w)."""
        p = abi.dg_resize_params()
        p.mode = enum("dg_resize_mode", "DG_RESIZE_", mode, "mode")
        p.coord = enum("dg_resize_coord", "DG_RESIZE_", coord, "coord")
        p.nearest = enum("dg_resize_nearest", "DG_RESIZE_", nearest,
                         "nearest")
        if scales is not None:
            p.scales = tuple(float(s) for s in scales)
        if sizes is not None:
            p.sizes = tuple(int(s) for s in sizes)
        return self._made(lib.dg_graph_resize(
            self._ptr, _name(name), self._t(x), p), "dg_graph_resize")


# Every function of dg_unary_fn, dg_binary_fn and dg_compare_fn is also a
# method of its own name (g.tanh(x), g.mul(a, b), g.less(a, b); and_, or_
# where the name is Python's), made from the enums so that a function
# added to graph.h appears here without an edit.
def _fn_method(kind, fn):
    def method(self, *args, **kw):
        return getattr(self, kind)(fn, *args, **kw)

    method.__name__ = fn
    method.__doc__ = "%s(%r, ...)" % (kind, fn)
    return method


for _kind, _fns in (("unary", UNARY), ("binary", BINARY),
                    ("compare", COMPARE)):
    for _fn in _fns:
        _attr = _fn + "_" if _fn in ("and", "or", "not") else _fn
        if not hasattr(Graph, _attr) and _fn not in ("not", "isnan", "isinf",
                                                     "isposinf", "isneginf"):
            setattr(Graph, _attr, _fn_method(_kind, _fn))
