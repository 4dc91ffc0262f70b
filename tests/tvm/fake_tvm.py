"""A stand-in for the few TVM objects directgraph_tvm.codegen and .patterns
read, so their Python logic (which composite operand is which wrapper
argument, which attributes are baked) runs where TVM is not installed.
It mirrors the attribute names Relax uses (struct_info.shape.values,
.dtype, Call.op.name/.args/.attrs, Function.params/.body/.attrs, SeqExpr
.blocks/.body, bindings .var/.value); it proves nothing about TVM itself.

install() puts fake tvm, tvm.ir, tvm.relax and tvm_ffi modules into
sys.modules; uninstall() removes them.
"""

import sys
import types

import numpy as np


class _Shape:
    def __init__(self, values):
        self.values = list(values)


class _SInfo:
    def __init__(self, shape, dtype):
        self.shape = _Shape(shape)
        self.dtype = dtype


class Op:
    def __init__(self, name):
        self.name = name


class Expr:
    def __init__(self, shape=(), dtype="float32"):
        self.struct_info = _SInfo(shape, dtype)


class Var(Expr):
    def __init__(self, name, shape=(), dtype="float32"):
        super().__init__(shape, dtype)
        self.name_hint = name


class Constant(Expr):
    def __init__(self, value, dtype="float32"):
        arr = np.asarray(value, dtype)
        super().__init__(arr.shape, dtype)
        self.data = types.SimpleNamespace(numpy=lambda: arr)


class Call(Expr):
    def __init__(self, op, args, attrs=None, shape=(), dtype="float32"):
        super().__init__(shape, dtype)
        self.op = Op(op) if isinstance(op, str) else op
        self.args = list(args)
        self.attrs = types.SimpleNamespace(**(attrs or {}))


class Binding:
    """var = value; like Relax's normaliser, the var takes the value's
    struct info."""

    def __init__(self, var, value):
        self.var, self.value = var, value
        if isinstance(value, Expr) and not isinstance(value, Function):
            var.struct_info = value.struct_info


class SeqExpr:
    def __init__(self, bindings, body):
        self.blocks = [types.SimpleNamespace(bindings=bindings)]
        self.body = body


class Function(Expr):
    def __init__(self, params, bindings, attrs):
        super().__init__()
        self.params = list(params)
        self.body = SeqExpr(bindings, bindings[-1].var)
        self.attrs = dict(attrs)


def outer(symbol, composite, params, inner_builder):
    """An offloaded function: outer params passed in order to a local
    composite function built by inner_builder(inner_params)."""
    inner_params = [Var("i" + p.name_hint, p.struct_info.shape.values, p.struct_info.dtype)
                    for p in params]
    bindings = inner_builder(inner_params)
    inner = Function(inner_params, bindings, {"Composite": composite})
    fvar = Var("local")
    out = Var("gv")
    return Function(params, [Binding(fvar, inner), Binding(out, Call(fvar, params))],
                    {"global_symbol": symbol, "Codegen": "directgraph"})


_NAMES = ("tvm", "tvm.ir", "tvm.relax", "tvm_ffi")
created = []


def install():
    tvm = types.ModuleType("tvm")
    tvm.ir = types.ModuleType("tvm.ir")
    tvm.ir.Op = Op
    tvm.relax = types.ModuleType("tvm.relax")
    for cls in (Var, Constant, Call, Function):
        setattr(tvm.relax, cls.__name__, cls)
    ffi = types.ModuleType("tvm_ffi")
    ffi.registry = {}

    def create(code, fmt, names, consts):
        created.append((code, fmt, list(names), list(consts)))
        return ("module", names[0])

    ffi.get_global_func = lambda name: {"runtime.CSourceModuleCreate": create}[name]
    ffi.register_global_func = lambda name, f, override=False: ffi.registry.__setitem__(name, f)
    for name, mod in zip(_NAMES, (tvm, tvm.ir, tvm.relax, ffi)):
        sys.modules[name] = mod
    return ffi


def uninstall():
    for name in _NAMES:
        sys.modules.pop(name, None)
