"""C source for one offloaded composite function (pure Python, no TVM).

``emit_c_wrapper(symbol, op, attrs)`` returns a self-contained C file that
defines ``__tvm_ffi_<symbol>`` with the TVM-FFI calling convention. The
wrapper takes the composite function's tensor parameters followed by its
output (destination-passing style, as ``R.call_dps_packed`` calls it),
rearranges them into the argument order of libdirectgraph's entry point
(``src/front/tvm/dg_tvm.h``), appends the op's attributes baked in as Int/Float
values, and tail-calls ``__tvm_ffi_directgraph_<entry>``. Link it with
``-ldirectgraph``.

``op`` is a composite name without the ``directgraph.`` prefix. ``attrs``:

* conv2d / conv2d_relu: ``strides`` (2), ``padding`` (1, 2 or 4 values;
  4 = top, left, bottom, right), ``dilation`` (2), ``groups``.
* qnn_conv2d: the conv2d keys plus ``x_scale``, ``x_zero_point``,
  ``w_scale`` (a float, or a list: one per output channel),
  ``w_zero_point``, ``y_scale``, ``y_zero_point``, ``relu`` (bool).
* max_pool2d: ``pool_size`` (2), ``strides``, ``padding``, ``ceil_mode``.
* softmax: ``axis``.  dense, matmul, relu: none.
* every op: ``operands``, the library's tensor inputs in its order (x, w,
  b for convs and dense; a, b for matmul; x for the rest). Each entry is a
  wrapper parameter index, ``None`` (absent bias), ``{"param": i,
  "shape": [...]}`` (parameter i seen with another compact shape, e.g. a
  [1,O,1,1] bias as [O]) or ``{"dtype": ..., "shape": [...], "data":
  [...]}`` (a constant, emitted as a static array). Default: parameters
  0..n-1, with the bias present only when ``has_bias`` is true.
  ``num_params``: how many tensor parameters precede the output (default:
  one more than the largest parameter index used).
"""

import math

# op -> (libdirectgraph entry point, number of tensor operands before y)
ENTRY = {
    "conv2d": ("conv2d", 3),
    "conv2d_relu": ("conv2d_relu", 3),
    "dense": ("dense", 3),
    "matmul": ("matmul", 2),
    "max_pool2d": ("max_pool2d", 1),
    "relu": ("relu", 1),
    "softmax": ("softmax", 1),
    "qnn_conv2d": ("qlinear_conv2d", 3),
}
OPS = tuple(ENTRY)

# numpy/TVM dtype name -> (C element type, DLPack code, bits)
_CONST_TYPES = {
    "float32": ("float", 2, 32),
    "int8": ("int8_t", 0, 8),
    "uint8": ("uint8_t", 1, 8),
    "int32": ("int32_t", 0, 32),
}

_PRELUDE = """\
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* TVM-FFI and DLPack layouts, as libdirectgraph's src/front/tvm/tvm_ffi_abi.h
 * declares them (the wrapper must build without any TVM header). */
typedef struct {
  int32_t type_index;
  uint32_t zero_padding;
  union { int64_t v_int64; double v_float64; void *v_ptr; } v;
} dgw_any;
typedef struct {
  void *data;
  int32_t device_type, device_id;
  int32_t ndim;
  uint8_t code, bits;
  uint16_t lanes;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} dgw_tensor;

extern int dg_tvm_raise(const char *kind, const char *message);
"""

_VIEW_HELPER = """
/* args[i] seen with another shape of the same element count, when it is
 * compact (dims of size 1 may carry any stride); otherwise args[i] is passed
 * on unchanged and libdirectgraph reports the shape it got. */
static dgw_any dgw_view(const dgw_any *a, dgw_tensor *view, int64_t *shape,
                        int32_t ndim) {
  const dgw_tensor *t = a->type_index == 7    ? (const dgw_tensor *)a->v.v_ptr
                        : a->type_index == 70 ? (const dgw_tensor *)(
                                                    (const char *)a->v.v_ptr + 24)
                                              : NULL;
  if (!t)
    return *a;
  int64_t n = 1, m = 1, expect = 1;
  for (int32_t i = 0; i < ndim; i++)
    n *= shape[i];
  for (int32_t i = t->ndim - 1; i >= 0; i--) {
    if (t->strides && t->shape[i] != 1 && t->strides[i] != expect)
      return *a;
    expect *= t->shape[i];
    m *= t->shape[i];
  }
  if (n != m)
    return *a;
  *view = *t;
  view->ndim = ndim;
  view->shape = shape;
  view->strides = NULL;
  dgw_any r = {7, 0, {0}};
  r.v.v_ptr = view;
  return r;
}
"""


def _c_ident(symbol):
    if (not symbol or symbol[0].isdigit()
            or not all(c.isascii() and (c.isalnum() or c == "_") for c in symbol)):
        raise ValueError(f"symbol {symbol!r} is not a C identifier")
    return symbol


def _ints(value, n, name):
    """An int or a sequence of ints, as exactly n ints."""
    if isinstance(value, (int, bool)):
        value = [int(value)]
    value = [int(v) for v in value]
    if len(value) == 1:
        value = value * n
    if len(value) != n:
        raise ValueError(f"{name} needs {n} values, got {value}")
    return value


def _padding4(value):
    """Relax's padding: 1 (all), 2 (top/bottom, left/right) or 4 values."""
    p = _ints(value, len(value) if not isinstance(value, int) else 1, "padding")
    if len(p) == 1:
        return p * 4
    if len(p) == 2:
        return [p[0], p[1], p[0], p[1]]
    if len(p) == 4:
        return p
    raise ValueError(f"padding needs 1, 2 or 4 values, got {p}")


def _float_literal(v):
    """Exact C literal for a double (hex keeps every bit)."""
    v = float(v)
    if not math.isfinite(v):
        raise ValueError(f"non-finite value {v} cannot be baked in")
    return f"{v.hex()} /* {v!r} */"


def _any_int(v):
    return f"{{1, 0, {{.v_int64 = {int(v)}}}}}"


def _any_float(v):
    return f"{{3, 0, {{.v_float64 = {_float_literal(v)}}}}}"


def _scalar_attrs(op, attrs):
    """The baked Int/Float arguments after y, as (C initializer, comment)."""
    out = []
    if op in ("conv2d", "conv2d_relu", "qnn_conv2d"):
        conv = list(
            zip(
                ["stride_h", "stride_w"] + ["pad_top", "pad_left", "pad_bottom", "pad_right"]
                + ["dilation_h", "dilation_w", "groups"],
                _ints(attrs.get("strides", 1), 2, "strides")
                + _padding4(attrs.get("padding", 0))
                + _ints(attrs.get("dilation", 1), 2, "dilation")
                + [int(attrs.get("groups", 1))],
            )
        )
    if op in ("conv2d", "conv2d_relu"):
        out += [(_any_int(v), n) for n, v in conv]
    elif op == "qnn_conv2d":
        ws = attrs["w_scale"]
        out += [
            (_any_float(attrs["x_scale"]), "x_scale"),
            (_any_int(attrs.get("x_zero_point", 0)), "x_zero_point"),
            (None if isinstance(ws, (list, tuple)) else _any_float(ws), "w_scale"),
            (_any_int(attrs.get("w_zero_point", 0)), "w_zero_point"),
            (_any_float(attrs["y_scale"]), "y_scale"),
            (_any_int(attrs.get("y_zero_point", 0)), "y_zero_point"),
        ]
        out += [(_any_int(v), n) for n, v in conv]
        out.append((_any_int(bool(attrs.get("relu", False))), "relu"))
    elif op == "max_pool2d":
        vals = (
            _ints(attrs["pool_size"], 2, "pool_size")
            + _ints(attrs.get("strides", 1), 2, "strides")
            + _padding4(attrs.get("padding", 0))
            + [int(bool(attrs.get("ceil_mode", False)))]
        )
        names = ["kernel_h", "kernel_w", "stride_h", "stride_w", "pad_top",
                 "pad_left", "pad_bottom", "pad_right", "ceil_mode"]
        out += [(_any_int(v), n) for n, v in zip(names, vals)]
    elif op == "softmax":
        out.append((_any_int(attrs.get("axis", -1)), "axis"))
    return out


def _default_operands(op, attrs):
    n = ENTRY[op][1]
    if n == 3:
        return [0, 1, 2 if attrs.get("has_bias") else None]
    return list(range(n))


def _const_decl(sym, k, const, lines):
    """Emits a static array and DLTensor for a constant; returns its name."""
    dtype = str(const["dtype"])
    if dtype not in _CONST_TYPES:
        raise ValueError(f"constant dtype {dtype} is not supported")
    ctype, code, bits = _CONST_TYPES[dtype]
    shape = [int(d) for d in const["shape"]]
    data = list(const["data"])
    if math.prod(shape) != len(data) or not data:
        raise ValueError(f"constant of shape {shape} has {len(data)} values")
    if ctype == "float":
        items = [f"{float(v).hex()}f" if math.isfinite(float(v)) else "bad" for v in data]
        if "bad" in items:
            raise ValueError("non-finite constant")
    else:
        items = [str(int(v)) for v in data]
    name = f"{sym}_c{k}"
    body = ",\n  ".join(", ".join(items[i:i + 8]) for i in range(0, len(items), 8))
    lines.append(f"static const {ctype} {name}_data[{len(items)}] = {{\n  {body}}};")
    lines.append(f"static int64_t {name}_shape[{len(shape)}] = "
                 f"{{{', '.join(map(str, shape))}}};")
    lines.append(f"static dgw_tensor {name} = {{(void *){name}_data, 1, 0, "
                 f"{len(shape)}, {code}, {bits}, 1, {name}_shape, NULL, 0}};")
    return name


def emit_c_wrapper(symbol, op, attrs=None):
    """Returns the C source of ``__tvm_ffi_<symbol>`` for composite ``op``."""
    attrs = dict(attrs or {})
    sym = _c_ident(symbol)
    if op not in ENTRY:
        raise ValueError(f"unknown directgraph op {op!r}; known: {', '.join(OPS)}")
    entry, n_ops = ENTRY[op]
    operands = list(attrs.get("operands", _default_operands(op, attrs)))
    if len(operands) != n_ops:
        raise ValueError(f"{op} takes {n_ops} tensor operands, got {len(operands)}")
    params = [o if isinstance(o, int) else o.get("param")
              for o in operands if o is not None and (isinstance(o, int) or "param" in o)]
    num_params = int(attrs.get("num_params", max(params) + 1 if params else 0))
    if any(p < 0 or p >= num_params for p in params):
        raise ValueError(f"operand parameter index out of range 0..{num_params - 1}")

    decls, body = [], []
    scalars = _scalar_attrs(op, attrs)
    total = n_ops + 1 + len(scalars)
    uses_view = False
    k = 0
    for i, o in enumerate(operands):
        if o is None:
            body.append(f"  a[{i}] = (dgw_any){{0, 0, {{0}}}}; /* None: no bias */")
        elif isinstance(o, int):
            body.append(f"  a[{i}] = args[{o}];")
        elif "param" in o:
            uses_view = True
            shape = [int(d) for d in o["shape"]]
            body.append(f"  int64_t v{i}_shape[{len(shape)}] = {{{', '.join(map(str, shape))}}};")
            body.append(f"  dgw_tensor v{i};")
            body.append(f"  a[{i}] = dgw_view(&args[{int(o['param'])}], &v{i}, v{i}_shape, {len(shape)});")
        else:
            name = _const_decl(sym, k, o, decls)
            k += 1
            body.append(f"  a[{i}].type_index = 7; a[{i}].zero_padding = 0; a[{i}].v.v_ptr = &{name};")
    body.append(f"  a[{n_ops}] = args[{num_params}]; /* y */")
    for j, (init, name) in enumerate(scalars):
        at = n_ops + 1 + j
        if init is None:  # per-channel w_scale: a constant f32 tensor
            ws = attrs["w_scale"]
            cname = _const_decl(sym, k, {"dtype": "float32", "shape": [len(ws)], "data": ws}, decls)
            k += 1
            body.append(f"  a[{at}].type_index = 7; a[{at}].zero_padding = 0; "
                        f"a[{at}].v.v_ptr = &{cname}; /* {name} */")
        else:
            body.append(f"  a[{at}] = (dgw_any){init}; /* {name} */")

    src = [f"/* Generated by directgraph_tvm.emit_c_wrapper: composite "
           f"directgraph.{op} as {sym}, calling libdirectgraph's "
           f"__tvm_ffi_directgraph_{entry}. */", _PRELUDE]
    src.append(f"extern int __tvm_ffi_directgraph_{entry}(void *handle, const dgw_any *args,\n"
               f"    int32_t num_args, dgw_any *result);")
    if uses_view:
        src.append(_VIEW_HELPER)
    src += decls
    src.append("")
    src.append(f"__attribute__((visibility(\"default\"))) int __tvm_ffi_{sym}(\n"
               f"    void *handle, const dgw_any *args, int32_t num_args, dgw_any *result) {{")
    src.append(f"  if (num_args != {num_params + 1}) {{")
    src.append("    char msg[160];")
    src.append(f"    snprintf(msg, sizeof msg, \"{sym}: expects {num_params + 1} arguments "
               f"({num_params} inputs, then the output), got %d\", (int)num_args);")
    src.append("    return dg_tvm_raise(\"TypeError\", msg);")
    src.append("  }")
    src.append(f"  dgw_any a[{total}];")
    src += body
    src.append(f"  return __tvm_ffi_directgraph_{entry}(handle, a, {total}, result);")
    src.append("}")
    return "\n".join(src) + "\n"
