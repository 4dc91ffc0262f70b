"""Relax BYOC patterns for directgraph (TVM imported only when called).

Registers ``directgraph.conv2d``, ``.conv2d_relu``, ``.dense``, ``.matmul``,
``.max_pool2d``, ``.relu``, ``.softmax`` and ``.qnn_conv2d`` with check
functions that accept exactly what libdirectgraph's entry points run:
static shapes, NCHW/OIHW layouts, float32/float16 (int8 for qnn_conv2d and
max pooling), no pool dilation, per-tensor activations and per-tensor or
per-output-channel weights. Later entries in the list have priority, so
the fused forms come after the plain ones.
"""

_REGISTERED = False


def _sinfo(expr):
    # struct_info on current Relax; some versions call it ty.
    return getattr(expr, "struct_info", None) or getattr(expr, "ty", None)


def static_shape(expr):
    """The static shape of a tensor expression as ints, or None."""
    si = _sinfo(expr)
    shape = getattr(si, "shape", None)
    values = getattr(shape, "values", None)
    if values is None:
        return None
    try:
        return [int(v) for v in values]
    except (TypeError, ValueError):
        return None


def dtype_of(expr):
    return str(getattr(_sinfo(expr), "dtype", ""))


def _no_leaks(context):
    """Intermediate values of the match must not be used outside it, or
    fusing would drop them (TVM ships a helper; older ones do not)."""
    try:
        from tvm.relax.backend.utils import has_leaking_intermediate_variables
    except ImportError:
        return True
    return not has_leaking_intermediate_variables(context)


def _static(*exprs):
    return all(static_shape(e) is not None for e in exprs)


def _conv_ok(call, x, w, dtypes):
    a = call.attrs
    if str(a.data_layout) != "NCHW" or str(a.kernel_layout) != "OIHW":
        return False
    if str(a.out_layout) not in ("NCHW", ""):
        return False
    if not _static(x, w) or len(static_shape(x)) != 4:
        return False
    return dtype_of(x) in dtypes and dtype_of(w) in dtypes


def _bias_ok(b, out_channels):
    shape = static_shape(b)
    return shape is not None and (shape == [out_channels] or shape == [1, out_channels, 1, 1])


def check_conv2d(context):
    ann = context.annotated_expr
    x, w, conv = ann["input"], ann["weight"], ann["conv"]
    if not _no_leaks(context) or not _conv_ok(conv, x, w, ("float32", "float16")):
        return False
    if dtype_of(x) != dtype_of(w) or str(conv.attrs.out_dtype) not in ("", "void", dtype_of(x)):
        return False
    return "bias" not in ann or _bias_ok(ann["bias"], static_shape(w)[0])


def check_dense(context):
    ann = context.annotated_expr
    x, w, tr = ann["input"], ann["weight"], ann["transpose"]
    if not _no_leaks(context) or not _static(x, w):
        return False
    axes = tr.attrs.axes
    if len(static_shape(w)) != 2 or (axes is not None and [int(v) for v in axes] != [1, 0]):
        return False
    if dtype_of(x) not in ("float32", "float16") or dtype_of(w) != dtype_of(x):
        return False
    return "bias" not in ann or static_shape(ann["bias"]) == [static_shape(w)[0]]


def check_matmul(context):
    ann = context.annotated_expr
    a, b = ann["lhs"], ann["rhs"]
    return (_static(a, b) and dtype_of(a) in ("float32", "float16")
            and dtype_of(b) == dtype_of(a)
            and str(ann["root"].attrs.out_dtype) in ("", "void", dtype_of(a)))


def check_max_pool2d(context):
    ann = context.annotated_expr
    x, pool = ann["input"], ann["root"]
    a = pool.attrs
    return (_static(x) and len(static_shape(x)) == 4
            and str(a.layout) == "NCHW" and str(a.out_layout) in ("NCHW", "")
            and all(int(d) == 1 for d in a.dilation)
            and dtype_of(x) in ("float32", "float16", "int8", "uint8"))


def check_unary(context):
    x = context.annotated_expr["input"]
    return _static(x) and dtype_of(x) in ("float32", "float16")


def _scalar_const(expr):
    from tvm import relax

    return isinstance(expr, relax.Constant) and static_shape(expr) in ([], [1])


def check_qnn_conv2d(context):
    """dequantize(x), dequantize(w) -> conv2d (+ dequantized i32 bias)
    (-> relu) -> quantize, with constant scales and zero points."""
    from tvm import relax

    ann = context.annotated_expr
    x, w, conv = ann["input"], ann["weight"], ann["conv"]
    if not _no_leaks(context) or not _conv_ok(conv, x, w, ("int8", "uint8")):
        return False
    for name in ("x_scale", "x_zp", "y_scale", "y_zp"):
        if not _scalar_const(ann[name]):
            return False
    o = static_shape(w)[0]
    ws, wz = ann["w_scale"], ann["w_zp"]
    if not isinstance(ws, relax.Constant) or static_shape(ws) not in ([], [1], [o]):
        return False
    if static_shape(ws) == [o] and int(ann["w_dq"].attrs.axis) not in (0, -4):
        return False
    if not isinstance(wz, relax.Constant) or len(set(wz.data.numpy().ravel().tolist())) != 1:
        return False  # one weight zero point for every channel
    if dtype_of(ann["root"]) not in ("int8", "uint8"):
        return False
    if "bias" in ann:
        b = ann["bias"]
        if dtype_of(b) != "int32" or not _bias_ok(b, o):
            return False
        if not isinstance(ann["b_zp"], relax.Constant) or ann["b_zp"].data.numpy().any():
            return False
    return True


def _make_patterns():
    from tvm.relax.dpl.pattern import is_op, wildcard

    def bias_of(b):
        # Frontends add a [O] bias through a reshape to [1,O,1,1].
        return is_op("relax.reshape")(b, wildcard()) | b

    def conv(with_bias, relu):
        x, w, b = wildcard(), wildcard(), wildcard()
        c = is_op("relax.nn.conv2d")(x, w)
        ann = {"input": x, "weight": w, "conv": c}
        out = c
        if with_bias:
            out = is_op("relax.add")(c, bias_of(b))
            ann["bias"] = b
        if relu:
            out = is_op("relax.nn.relu")(out)
        ann["root"] = out
        return out, ann

    def dense(with_bias):
        x, w, b = wildcard(), wildcard(), wildcard()
        t = is_op("relax.permute_dims")(w)
        out = is_op("relax.matmul")(x, t)
        ann = {"input": x, "weight": w, "transpose": t, "matmul": out}
        if with_bias:
            out = is_op("relax.add")(out, b)
            ann["bias"] = b
        ann["root"] = out
        return out, ann

    def unary(op):
        x = wildcard()
        out = is_op(op)(x)
        return out, {"input": x, "root": out}

    def matmul():
        a, b = wildcard(), wildcard()
        out = is_op("relax.matmul")(a, b)
        return out, {"lhs": a, "rhs": b, "root": out}

    def qnn_conv(with_bias, relu):
        x, xs, xz = wildcard(), wildcard(), wildcard()
        w, ws, wz = wildcard(), wildcard(), wildcard()
        ys, yz = wildcard(), wildcard()
        xdq = is_op("relax.dequantize")(x, xs, xz)
        wdq = is_op("relax.dequantize")(w, ws, wz)
        c = is_op("relax.nn.conv2d")(xdq, wdq)
        ann = {"input": x, "x_scale": xs, "x_zp": xz, "weight": w, "w_scale": ws,
               "w_zp": wz, "w_dq": wdq, "conv": c, "y_scale": ys, "y_zp": yz}
        out = c
        if with_bias:
            b, bs, bz = wildcard(), wildcard(), wildcard()
            bdq = is_op("relax.dequantize")(b, bs, bz)
            out = is_op("relax.add")(c, is_op("relax.reshape")(bdq, wildcard()) | bdq)
            ann.update(bias=b, b_scale=bs, b_zp=bz)
        if relu:
            out = is_op("relax.nn.relu")(out)
        out = is_op("relax.quantize")(out, ys, yz)
        ann["root"] = out
        return out, ann

    entries = [
        ("directgraph.relu", *unary("relax.nn.relu"), check_unary),
        ("directgraph.softmax", *unary("relax.nn.softmax"), check_unary),
        ("directgraph.max_pool2d", *unary("relax.nn.max_pool2d"), check_max_pool2d),
        ("directgraph.matmul", *matmul(), check_matmul),
        ("directgraph.dense", *dense(False), check_dense),
        ("directgraph.dense", *dense(True), check_dense),
        ("directgraph.conv2d", *conv(False, False), check_conv2d),
        ("directgraph.conv2d", *conv(True, False), check_conv2d),
        ("directgraph.conv2d_relu", *conv(False, True), check_conv2d),
        ("directgraph.conv2d_relu", *conv(True, True), check_conv2d),
    ]
    for with_bias in (False, True):
        for relu in (False, True):
            entries.append(("directgraph.qnn_conv2d", *qnn_conv(with_bias, relu),
                            check_qnn_conv2d))
    return entries


def register_directgraph_patterns():
    """Registers the patterns once per process."""
    global _REGISTERED
    if not _REGISTERED:
        from tvm.relax.backend.pattern_registry import register_patterns

        register_patterns(_make_patterns())
        _REGISTERED = True


def partition_for_directgraph(mod, bind_constants=True):
    """Offloads every directgraph-supported subgraph of mod.

    Each match becomes a function with ``Codegen="directgraph"`` wrapping
    one composite function; ``relax.build`` then hands those to
    ``relax.ext.directgraph`` (registered here too). Constants stay inside
    the composites (bind_constants=True) because quantisation scales and
    zero points must be known to be baked into the C; constant weights
    become static arrays of the emitted C, passed to the library in place.
    """
    from tvm.relax import transform
    from tvm.relax.backend.pattern_registry import get_patterns_with_prefix

    from .codegen import register_codegen

    register_directgraph_patterns()
    register_codegen()
    patterns = get_patterns_with_prefix("directgraph")
    return transform.FuseOpsByPattern(patterns, bind_constants=bind_constants,
                                      annotate_codegen=True)(mod)
