"""The ``relax.ext.directgraph`` code generator (TVM imported lazily).

``relax.build`` (RunCodegen) passes every function carrying
``Codegen="directgraph"`` here. Each wraps one composite function (made by
``partition_for_directgraph``); we read the composite's op attributes and
where each operand comes from, let ``emit_c_wrapper`` write the C, and
return one C source module per function. The call site becomes
``R.call_dps_packed(<global_symbol>, inputs..., output)``, which is the
argument order the wrapper expects.
"""

from .emit import emit_c_wrapper
from .patterns import dtype_of, static_shape

_REGISTERED = False


def _ints(values):
    return [int(v) for v in values]


def _conv_attrs(call):
    a = call.attrs
    return {"strides": _ints(a.strides), "padding": _ints(a.padding),
            "dilation": _ints(a.dilation), "groups": int(a.groups)}


def _calls(func):
    """The op calls of a composite body, in binding order, by op name."""
    import tvm
    from tvm import relax

    found = {}
    body = func.body
    values = [b.value for block in body.blocks for b in block.bindings] + [body.body]
    for v in values:
        if isinstance(v, relax.Call) and isinstance(v.op, tvm.ir.Op):
            found.setdefault(v.op.name, []).append(v)
    return found


class _Operands:
    """Maps expressions inside a composite to wrapper operands: a parameter
    index of the outer function, a constant, or a reshaped parameter."""

    def __init__(self, outer, inner, inner_call):
        self.outer_params = list(outer.params)
        self.inner_params = list(inner.params)
        self.inner_args = list(inner_call.args)
        self.bindings = {}
        for block in inner.body.blocks:
            for b in block.bindings:
                self.bindings[b.var] = b.value

    def _resolve_var(self, expr):
        from tvm import relax

        while isinstance(expr, relax.Var) and expr in self.bindings:
            expr = self.bindings[expr]
        if isinstance(expr, relax.Var) and expr in self.inner_params:
            expr = self.inner_args[self.inner_params.index(expr)]
        if isinstance(expr, relax.Var) and expr in self.outer_params:
            return self.outer_params.index(expr)
        return expr

    def operand(self, expr, want_shape=None):
        from tvm import relax

        r = self._resolve_var(expr)
        if isinstance(r, relax.Call) and r.op.name == "relax.reshape":
            r = self._resolve_var(r.args[0])
        if isinstance(r, int):
            shape = static_shape(self.outer_params[r])
            if want_shape is not None and shape != want_shape:
                return {"param": r, "shape": want_shape}
            return r
        if isinstance(r, relax.Constant):
            data = r.data.numpy()
            if want_shape is not None:
                data = data.reshape(want_shape)
            return {"dtype": str(data.dtype), "shape": list(data.shape),
                    "data": data.ravel().tolist()}
        raise ValueError(f"directgraph: cannot pass {type(r).__name__} as an operand")

    def scalar(self, expr):
        from tvm import relax

        r = self._resolve_var(expr)
        if not isinstance(r, relax.Constant):
            raise ValueError("directgraph: quantisation parameters must be constants")
        return r.data.numpy().ravel().tolist()


def _composite(outer):
    """The composite function inside outer and the call to it."""
    from tvm import relax

    funcs, call = {}, None
    for block in outer.body.blocks:
        for b in block.bindings:
            if isinstance(b.value, relax.Function) and "Composite" in b.value.attrs:
                funcs[b.var] = b.value
            elif isinstance(b.value, relax.Call):
                call = b.value
    if call is None and isinstance(outer.body.body, relax.Call):
        call = outer.body.body
    inner = funcs.get(call.op) if call is not None else None
    if inner is None and call is not None and isinstance(call.op, relax.Function):
        inner = call.op
    if inner is None:
        raise ValueError("directgraph: expected one composite function per offloaded function")
    return inner, call


def describe(outer):
    """(symbol, op, attrs) for emit_c_wrapper from an offloaded function."""
    inner, call = _composite(outer)
    op = str(inner.attrs["Composite"]).split(".", 1)[1]
    ops = _calls(inner)
    m = _Operands(outer, inner, call)
    attrs = {"num_params": len(outer.params)}
    if op in ("conv2d", "conv2d_relu", "qnn_conv2d"):
        conv = ops["relax.nn.conv2d"][0]
        attrs.update(_conv_attrs(conv))
        out_ch = static_shape(conv.args[1])[0]
        bias = None
        if "relax.add" in ops:
            add = ops["relax.add"][0]
            bias = m.operand(_strip_dq(add.args[1], ops), [out_ch])
        if op == "qnn_conv2d":
            xdq, wdq = (_producer(m, conv.args[0]), _producer(m, conv.args[1]))
            q = ops["relax.quantize"][0]
            ws = m.scalar(wdq.args[1])
            attrs.update(x_scale=m.scalar(xdq.args[1])[0], x_zero_point=int(m.scalar(xdq.args[2])[0]),
                         w_scale=ws if len(ws) > 1 else ws[0],
                         w_zero_point=int(m.scalar(wdq.args[2])[0]),
                         y_scale=m.scalar(q.args[1])[0], y_zero_point=int(m.scalar(q.args[2])[0]),
                         relu="relax.nn.relu" in ops)
            attrs["operands"] = [m.operand(xdq.args[0]), m.operand(wdq.args[0]), bias]
        else:
            attrs["operands"] = [m.operand(conv.args[0]), m.operand(conv.args[1]), bias]
    elif op == "dense":
        mm = ops["relax.matmul"][0]
        tr = ops["relax.permute_dims"][0]
        w = m.operand(tr.args[0])
        bias = m.operand(ops["relax.add"][0].args[1]) if "relax.add" in ops else None
        attrs["operands"] = [m.operand(mm.args[0]), w, bias]
    elif op == "matmul":
        mm = ops["relax.matmul"][0]
        attrs["operands"] = [m.operand(mm.args[0]), m.operand(mm.args[1])]
    elif op == "max_pool2d":
        p = ops["relax.nn.max_pool2d"][0]
        attrs.update(pool_size=_ints(p.attrs.pool_size), strides=_ints(p.attrs.strides),
                     padding=_ints(p.attrs.padding), ceil_mode=bool(p.attrs.ceil_mode))
        attrs["operands"] = [m.operand(p.args[0])]
    elif op in ("relu", "softmax"):
        c = ops["relax.nn." + op][0]
        if op == "softmax":
            attrs["axis"] = int(c.attrs.axis)
        attrs["operands"] = [m.operand(c.args[0])]
    else:
        raise ValueError(f"directgraph: unknown composite {op}")
    return str(outer.attrs["global_symbol"]), op, attrs


def _producer(m, expr):
    """The call that defines a variable inside the composite."""
    return m.bindings.get(expr, expr)


def _strip_dq(expr, ops):
    """For qnn_conv2d the bias enters as dequantize(b) (maybe reshaped); the
    library takes b itself (i32, scale x_scale * w_scale)."""
    for dq in ops.get("relax.dequantize", []):
        if dtype_of(dq.args[0]) == "int32":
            return dq.args[0]
    return expr


def directgraph_codegen(functions, options, constant_names):
    """relax.ext.directgraph: one C source module per offloaded function."""
    import tvm_ffi

    create = tvm_ffi.get_global_func("runtime.CSourceModuleCreate")
    modules = []
    for func in functions:
        symbol, op, attrs = describe(func)
        code = emit_c_wrapper(symbol, op, attrs)
        modules.append(create(code, "c", [symbol], []))
    return modules


def register_codegen():
    """Registers relax.ext.directgraph once per process."""
    global _REGISTERED
    if not _REGISTERED:
        import tvm_ffi

        tvm_ffi.register_global_func("relax.ext.directgraph", directgraph_codegen, override=True)
        _REGISTERED = True
