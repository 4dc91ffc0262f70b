#!/usr/bin/python3
"""Golden tests of directgraph_tvm's code generator, without TVM.

emit_c_wrapper's C is compared with the committed files in tests/tvm/golden
(text), then compiled with gcc against libdirectgraph and called through
ctypes with numpy arrays as type-7 DLTensor arguments, the way TVM's VM
calls an extern function after R.call_dps_packed: results are checked
against numpy (float: numerics.md tolerance; int8: bit-exact). The Relax
side (patterns, relax.ext.directgraph, relax.build) runs only when TVM is
installed; otherwise it prints "skipped: tvm not installed".

Usage: /usr/bin/python3 tests/tvm/test_codegen.py [BUILD_DIR] [--regen]
"""

import importlib.util
import os
import subprocess
import sys
import tempfile
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
import directgraph_tvm  # noqa: E402  (must import without TVM)
from directgraph_tvm import emit_c_wrapper  # noqa: E402
from directgraph_tvm.ffi_ctypes import Library  # noqa: E402

FAILED = 0


def report(ok, what):
    global FAILED
    print(("ok - " if ok else "FAIL - ") + what, flush=True)
    FAILED += not ok


# ---- numpy references -------------------------------------------------------

def conv_ref(x, w, b, stride, pads, dil, groups, acc=np.float64):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.zeros((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]), acc)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    oh = (xp.shape[2] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (xp.shape[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, o, oh, ow), acc)
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(kh):
            for j in range(kw):
                win = xp[:, g * cg:(g + 1) * cg,
                         i * dil[0]:i * dil[0] + stride[0] * (oh - 1) + 1:stride[0],
                         j * dil[1]:j * dil[1] + stride[1] * (ow - 1) + 1:stride[1]]
                y[:, oc] += np.einsum("nchw,c->nhw", win, w[oc, :, i, j].astype(acc))
        if b is not None:
            y[:, oc] += b[oc]
    return y


def qconv_ref(x, sx, zx, w, sw, zw, b, sy, zy, relu, ydtype, **conv):
    """docs/numerics.md: exact int32 sums, then fp32 m = (sx*sw)/sy and one
    fp32 multiply, round half to even, add zy, saturate."""
    acc = conv_ref(x.astype(np.int64) - zx, w.astype(np.int64) - zw, None,
                   acc=np.int64, **conv)
    if b is not None:
        acc += b.reshape(1, -1, 1, 1)
    sw = np.broadcast_to(np.asarray(sw, np.float32), (w.shape[0],))
    m = (np.float32(sx) * sw).astype(np.float32) / np.float32(sy)
    v = np.rint(acc.astype(np.int32).astype(np.float32) * m.reshape(1, -1, 1, 1).astype(np.float32))
    q = v.astype(np.int64) + zy
    if relu:
        q = np.maximum(q, zy)
    info = np.iinfo(ydtype)
    return np.clip(q, info.min, info.max).astype(ydtype)


def close(got, want):
    want = np.asarray(want, np.float64)
    err = np.max(np.abs(got.astype(np.float64) - want)) if want.size else 0
    return err <= 1e-4 * max(np.max(np.abs(want)), 1e-30)


# ---- compile + call ---------------------------------------------------------

class Wrappers:
    def __init__(self, build):
        self.build = os.path.abspath(build)
        self.tmp = tempfile.mkdtemp(prefix="dg-tvm-codegen-")
        self.core = Library(os.path.join(self.build, "libdirectgraph.so"))

    def compile(self, symbol, code):
        src = os.path.join(self.tmp, symbol + ".c")
        so = os.path.join(self.tmp, symbol + ".so")
        with open(src, "w") as f:
            f.write(code)
        cmd = ["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared",
               "-o", so, src, "-L" + self.build, "-ldirectgraph", "-Wl,-rpath," + self.build]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError("gcc failed:\n" + r.stderr)
        return Library(so, last_error_from=self.core)

    def run(self, symbol, op, attrs, *args):
        lib = self.compile(symbol, emit_c_wrapper(symbol, op, attrs))
        return lib.call_status(symbol, *args)


def rng_arrays(seed):
    return np.random.default_rng(seed)


def case(w, name, fn):
    try:
        ok, detail = fn(w)
    except Exception as e:  # a crash in one case must not hide the others
        ok, detail = False, f"{type(e).__name__}: {e}"
    detail = detail.strip("; ")
    report(ok, name + (f" ({detail})" if detail else ""))


def t_conv_relu(w):
    r = rng_arrays(1)
    x = r.uniform(-1, 1, (2, 4, 9, 8)).astype(np.float32)
    k = r.uniform(-1, 1, (6, 2, 3, 3)).astype(np.float32)
    b = r.uniform(-1, 1, 6).astype(np.float32)
    conv = dict(stride=(2, 1), pads=(1, 0, 2, 1), dil=(1, 2), groups=2)
    want = np.maximum(conv_ref(x, k, b, **conv), 0)
    y = np.full(want.shape, np.nan, np.float32)
    attrs = {"strides": [2, 1], "padding": [1, 0, 2, 1], "dilation": [1, 2], "groups": 2,
             "has_bias": True}
    rc, msg = w.run("fused_conv2d_relu", "conv2d_relu", attrs, x, k, b, y)
    return rc == 0 and close(y, want), msg


def t_conv_bias_view(w):
    r = rng_arrays(2)
    x = r.uniform(-1, 1, (1, 3, 6, 6)).astype(np.float32)
    k = r.uniform(-1, 1, (5, 3, 3, 3)).astype(np.float32)
    b = r.uniform(-1, 1, (1, 5, 1, 1)).astype(np.float32)
    want = conv_ref(x, k, b.ravel(), (1, 1), (1, 1, 1, 1), (1, 1), 1)
    y = np.zeros(want.shape, np.float32)
    attrs = {"padding": [1, 1], "operands": [0, 1, {"param": 2, "shape": [5]}]}
    rc, msg = w.run("conv_bias_view", "conv2d", attrs, x, k, b, y)
    return rc == 0 and close(y, want), "bias [1,5,1,1] passed as [5]; " + msg


def t_conv_const_weights(w):
    r = rng_arrays(3)
    x = r.uniform(-1, 1, (1, 2, 5, 5)).astype(np.float32)
    k = r.uniform(-1, 1, (3, 2, 2, 2)).astype(np.float32)
    want = conv_ref(x, k, None, (1, 1), (0, 0, 0, 0), (1, 1), 1)
    y = np.zeros(want.shape, np.float32)
    attrs = {"operands": [0, {"dtype": "float32", "shape": list(k.shape),
                              "data": k.ravel().tolist()}, None]}
    rc, msg = w.run("conv_const_w", "conv2d", attrs, x, y)
    return rc == 0 and close(y, want), "weights baked as a static array; " + msg


def t_dense(w):
    r = rng_arrays(4)
    x = r.uniform(-1, 1, (2, 3, 5)).astype(np.float32)
    k = r.uniform(-1, 1, (4, 5)).astype(np.float32)
    b = r.uniform(-1, 1, 4).astype(np.float32)
    y = np.zeros((2, 3, 4), np.float32)
    rc, msg = w.run("fused_dense", "dense", {"has_bias": True}, x, k, b, y)
    return rc == 0 and close(y, x.astype(np.float64) @ k.T.astype(np.float64) + b), msg


def t_matmul_strided(w):
    r = rng_arrays(5)
    a = r.uniform(-1, 1, (3, 4, 6)).astype(np.float32)
    bt = r.uniform(-1, 1, (5, 6)).astype(np.float32)
    b = bt.T  # a transposed (strided) view: the library must copy it
    y = np.zeros((3, 4, 5), np.float32)
    rc, msg = w.run("fused_matmul", "matmul", {}, a, b, y)
    return rc == 0 and not b.flags.c_contiguous and close(y, a.astype(np.float64) @ b), \
        "rhs is a transposed view; " + msg


def t_max_pool(w):
    r = rng_arrays(6)
    x = r.uniform(-3, 3, (1, 2, 7, 7)).astype(np.float32)
    attrs = {"pool_size": [3, 3], "strides": [2, 2], "padding": [1, 1], "ceil_mode": True}
    xp = np.pad(x, ((0, 0), (0, 0), (1, 2), (1, 2)), constant_values=-np.inf)
    want = np.array([[[[xp[0, c, i * 2:i * 2 + 3, j * 2:j * 2 + 3].max() for j in range(4)]
                       for i in range(4)] for c in range(2)]], np.float32)
    y = np.zeros((1, 2, 4, 4), np.float32)
    rc, msg = w.run("fused_pool", "max_pool2d", attrs, x, y)
    return rc == 0 and np.array_equal(y, want), msg


def t_relu_softmax(w):
    r = rng_arrays(7)
    x = r.uniform(-2, 2, (3, 7)).astype(np.float32)
    y = np.zeros_like(x)
    rc1, m1 = w.run("fused_relu", "relu", {}, x, y)
    ok = rc1 == 0 and np.array_equal(y, np.maximum(x, 0))
    s = np.zeros_like(x)
    rc2, m2 = w.run("fused_softmax", "softmax", {"axis": 0}, x, s)
    e = np.exp(x.astype(np.float64) - x.max(0))
    return ok and rc2 == 0 and close(s, e / e.sum(0)), m1 + m2


def t_qnn(w, per_channel):
    r = rng_arrays(8 + per_channel)
    x = r.integers(0, 256, (1, 3, 8, 8)).astype(np.uint8)
    k = r.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
    b = r.integers(-2000, 2000, 4).astype(np.int32)
    sw = [0.011, 0.0053, 0.0071, 0.0213] if per_channel else 0.0087
    q = dict(sx=0.0235, zx=128, sw=sw, zw=0, sy=0.061 if per_channel else 0.12,
             zy=-5 if per_channel else 3, relu=not per_channel)
    ydt = np.int8
    want = qconv_ref(x, q["sx"], q["zx"], k, q["sw"], q["zw"], b, q["sy"], q["zy"], q["relu"],
                     ydt, stride=(1, 2), pads=(1, 1, 1, 1), dil=(1, 1), groups=1)
    y = np.zeros(want.shape, ydt)
    attrs = {"strides": [1, 2], "padding": [1, 1, 1, 1], "has_bias": True,
             "x_scale": float(np.float32(q["sx"])), "x_zero_point": q["zx"],
             "w_scale": ([float(np.float32(v)) for v in sw] if per_channel
                         else float(np.float32(sw))),
             "w_zero_point": 0, "y_scale": float(np.float32(q["sy"])),
             "y_zero_point": q["zy"], "relu": q["relu"]}
    rc, msg = w.run(f"fused_qnn{per_channel}", "qnn_conv2d", attrs, x, k, b, y)
    return rc == 0 and np.array_equal(y, want), \
        ("per-channel w_scale baked" if per_channel else "per-tensor, relu") + "; " + msg


def t_arity(w):
    x = np.zeros((2, 2), np.float32)
    rc, msg = w.run("arity_relu", "relu", {}, x)
    return rc != 0 and "arity_relu: expects 2 arguments" in msg and "got 1" in msg, msg


def t_library_error(w):
    x = np.zeros((2, 2), np.float64)
    rc, msg = w.run("dtype_relu", "relu", {}, x, x)
    return rc != 0 and "bits 64" in msg, msg


# ---- golden text ------------------------------------------------------------

GOLDEN = {
    "conv2d_relu.c": ("fused_conv2d_relu", "conv2d_relu",
                      {"strides": [2, 1], "padding": [1, 0, 2, 1], "dilation": [1, 2],
                       "groups": 2, "has_bias": True}),
    "qnn_conv2d.c": ("fused_qnn", "qnn_conv2d",
                     {"x_scale": 0.5, "x_zero_point": 3, "w_scale": [0.25, 0.125],
                      "w_zero_point": 0, "y_scale": 0.75, "y_zero_point": -2, "relu": True,
                      "operands": [0, {"dtype": "int8", "shape": [2, 1, 1, 1],
                                       "data": [1, -2]}, {"param": 1, "shape": [2]}]}),
}


def t_golden(regen):
    for fname, (sym, op, attrs) in GOLDEN.items():
        path = os.path.join(HERE, "golden", fname)
        code = emit_c_wrapper(sym, op, attrs)
        if regen:
            with open(path, "w") as f:
                f.write(code)
        try:
            with open(path) as f:
                want = f.read()
        except OSError as e:
            report(False, f"golden {fname}: {e}")
            continue
        report(code == want, f"emitted C for {op} matches tests/tvm/golden/{fname}")


def t_emit_errors():
    bad = [("1bad", "relu", {}), ("ok", "gelu", {}), ("ok", "conv2d", {"padding": [1, 2, 3]}),
           ("ok", "softmax", {"operands": [0, 1]}),
           ("ok", "qnn_conv2d", {"x_scale": float("nan"), "w_scale": 1.0, "y_scale": 1.0})]
    for sym, op, attrs in bad:
        try:
            emit_c_wrapper(sym, op, attrs)
            report(False, f"emit_c_wrapper({sym!r}, {op!r}, {attrs}) should raise ValueError")
        except ValueError as e:
            report(True, f"emit_c_wrapper rejects {sym!r}/{op!r}: {e}")


# ---- TVM (only where installed) -------------------------------------------

def t_tvm(build):
    try:
        import tvm  # noqa: F401
        from tvm import relax
    except ImportError:
        print("skipped: tvm not installed (Relax partitioning, relax.ext.directgraph "
              "and relax.build are not exercised)", flush=True)
        return

    # conv2d + relu built with the BlockBuilder (no TVMScript parsing).
    bb = relax.BlockBuilder()
    xv = relax.Var("x", relax.TensorStructInfo((1, 3, 8, 8), "float32"))
    wv = relax.Var("w", relax.TensorStructInfo((4, 3, 3, 3), "float32"))
    with bb.function("main", [xv, wv]):
        with bb.dataflow():
            c = bb.emit(relax.op.nn.conv2d(xv, wv, padding=(1, 1)))
            y = bb.emit_output(relax.op.nn.relu(c))
        bb.emit_func_output(y)
    mod = directgraph_tvm.partition_for_directgraph(bb.get())
    names = [str(f.attrs["Codegen"]) for f in mod.functions.values()
             if f.attrs and "Codegen" in f.attrs]
    report(names == ["directgraph"], f"partition_for_directgraph offloads conv2d+relu: {names}")
    mod = relax.transform.RunCodegen()(mod)
    ex = relax.build(mod, target="llvm")
    so = os.path.join(tempfile.mkdtemp(), "model.so")
    ex.export_library(so, options=["-L" + build, "-ldirectgraph", "-Wl,-rpath," + build])
    vm = relax.VirtualMachine(tvm.runtime.load_module(so), tvm.cpu())
    r = rng_arrays(9)
    x = r.uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32)
    k = r.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
    y = vm["main"](tvm.runtime.tensor(x), tvm.runtime.tensor(k)).numpy()
    report(close(y, np.maximum(conv_ref(x, k, None, (1, 1), (1, 1, 1, 1), (1, 1), 1), 0)),
           "relax.build with relax.ext.directgraph runs conv2d+relu")


# ---- codegen logic on stand-in Relax objects (tests/tvm/fake_tvm.py) -------

CONV_ATTRS = {"strides": [1, 1], "padding": [1, 1, 1, 1], "dilation": [1, 1], "groups": 1,
              "data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW",
              "out_dtype": ""}


def fake_conv_relu(F):
    x, k, b = F.Var("x", (1, 3, 6, 6)), F.Var("w", (4, 3, 3, 3)), F.Var("b", (4,))
    calls = {}

    def inner(p):
        v = {n: F.Var(n) for n in "craz"}
        calls["conv"] = F.Call("relax.nn.conv2d", p[:2], CONV_ATTRS, (1, 4, 6, 6))
        return [F.Binding(v["c"], calls["conv"]),
                F.Binding(v["r"], F.Call("relax.reshape", [p[2], None], shape=(1, 4, 1, 1))),
                F.Binding(v["a"], F.Call("relax.add", [v["c"], v["r"]])),
                F.Binding(v["z"], F.Call("relax.nn.relu", [v["a"]]))]

    fn = F.outer("fused_conv2d_add_relu", "directgraph.conv2d_relu", [x, k, b], inner)
    return fn, x, k, b, calls["conv"]


def fake_qnn(F, q, xq, kq, bq):
    x = F.Var("x", xq.shape, "uint8")

    def inner(p):
        v = {n: F.Var(n) for n in ("xd", "wd", "c", "bd", "br", "a", "r", "y")}
        C = F.Constant
        return [
            F.Binding(v["xd"], F.Call("relax.dequantize", [p[0], C(q["sx"]), C(q["zx"], "int32")],
                                      {"axis": 1})),
            F.Binding(v["wd"], F.Call("relax.dequantize",
                                      [C(kq, "int8"), C(q["sw"]), C([0] * 4, "int32")],
                                      {"axis": 0}, kq.shape)),
            F.Binding(v["c"], F.Call("relax.nn.conv2d", [v["xd"], v["wd"]],
                                     dict(CONV_ATTRS, strides=[1, 2]), (1, 4, 8, 4))),
            F.Binding(v["bd"], F.Call("relax.dequantize",
                                      [C(bq, "int32"), C(0.1), C(0, "int32")], {"axis": 0})),
            F.Binding(v["br"], F.Call("relax.reshape", [v["bd"], None])),
            F.Binding(v["a"], F.Call("relax.add", [v["c"], v["br"]])),
            F.Binding(v["r"], F.Call("relax.nn.relu", [v["a"]])),
            F.Binding(v["y"], F.Call("relax.quantize", [v["r"], C(q["sy"]), C(q["zy"], "int32")],
                                     {"axis": 1}, (1, 4, 8, 4), "int8")),
        ]

    return F.outer("fused_qnn_conv2d", "directgraph.qnn_conv2d", [x], inner)


def t_fake_relax(w):
    sys.path.insert(0, HERE)
    import fake_tvm as F

    ffi = F.install()
    try:
        from directgraph_tvm import codegen, patterns

        codegen.register_codegen()
        gen = ffi.registry.get("relax.ext.directgraph")
        report(gen is codegen.directgraph_codegen,
               "register_codegen registers relax.ext.directgraph (stand-in tvm_ffi)")
        fn, x, k, b, conv = fake_conv_relu(F)
        ctx = types.SimpleNamespace(annotated_expr={"input": x, "weight": k, "conv": conv,
                                                    "bias": b})
        ok = patterns.check_conv2d(ctx)
        conv.attrs.data_layout = "NHWC"
        report(ok and not patterns.check_conv2d(ctx),
               "check_conv2d accepts NCHW conv2d + [O] bias and declines NHWC")
        conv.attrs.data_layout = "NCHW"
        mods = gen([fn], {}, [])
        code, fmt, names, _ = F.created[-1]
        report(mods == [("module", "fused_conv2d_add_relu")] and fmt == "c"
               and names == ["fused_conv2d_add_relu"],
               "relax.ext.directgraph returns one C source module per function")
        r = rng_arrays(11)
        xa = r.uniform(-1, 1, (1, 3, 6, 6)).astype(np.float32)
        ka = r.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
        ba = r.uniform(-1, 1, 4).astype(np.float32)
        y = np.zeros((1, 4, 6, 6), np.float32)
        rc, msg = w.compile(names[0], code).call_status(names[0], xa, ka, ba, y)
        want = np.maximum(conv_ref(xa, ka, ba, (1, 1), (1, 1, 1, 1), (1, 1), 1), 0)
        report(rc == 0 and close(y, want),
               "codegen of a conv2d+reshape(bias)+relu composite runs" + (": " + msg if msg else ""))

        q = dict(sx=np.float32(0.02), zx=120, sw=np.float32([0.01, 0.004, 0.007, 0.02]),
                 sy=np.float32(0.05), zy=-3)
        xq = r.integers(0, 256, (1, 3, 8, 8)).astype(np.uint8)
        kq = r.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
        bq = r.integers(-999, 999, 4).astype(np.int32)
        fn = fake_qnn(F, q, xq, kq, bq)
        gen([fn], {}, [])
        code, _, names, _ = F.created[-1]
        y = np.zeros((1, 4, 8, 4), np.int8)
        rc, msg = w.compile(names[0], code).call_status(names[0], xq, y)
        want = qconv_ref(xq, q["sx"], q["zx"], kq, q["sw"], 0, bq, q["sy"], q["zy"], True,
                         np.int8, stride=(1, 2), pads=(1, 1, 1, 1), dil=(1, 1), groups=1)
        report(rc == 0 and np.array_equal(y, want),
               "codegen of a dequantize/conv2d/add/relu/quantize composite (constant "
               "weights, per-channel scales) is bit-exact" + (": " + msg if msg else ""))
    finally:
        F.uninstall()


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    build = os.path.abspath(args[0] if args else os.path.join(ROOT, "build"))
    report("tvm" not in sys.modules and "tvm_ffi" not in sys.modules,
           "directgraph_tvm imports without importing tvm or tvm_ffi")
    import directgraph_tvm.patterns  # noqa: F401
    import directgraph_tvm.codegen  # noqa: F401
    report("tvm" not in sys.modules and len(directgraph_tvm.PATTERN_NAMES) == 8,
           "patterns and codegen modules import without TVM; patterns: "
           + ", ".join(directgraph_tvm.PATTERN_NAMES))
    t_golden("--regen" in sys.argv)
    t_emit_errors()
    if not os.path.exists(os.path.join(build, "libdirectgraph.so")):
        report(False, f"no libdirectgraph.so in {build}")
        return 1
    w = Wrappers(build)
    case(w, "conv2d_relu wrapper: bias, strides (2,1), pads (1,0,2,1), dilation (1,2), "
         "groups 2", t_conv_relu)
    case(w, "conv2d wrapper with a reshaped bias view", t_conv_bias_view)
    case(w, "conv2d wrapper with constant weights", t_conv_const_weights)
    case(w, "dense wrapper x [2,3,5] w [4,5] + b", t_dense)
    case(w, "matmul wrapper", t_matmul_strided)
    case(w, "max_pool2d wrapper, 2-value padding, ceil_mode", t_max_pool)
    case(w, "relu and softmax(axis 0) wrappers", t_relu_softmax)
    case(w, "qnn_conv2d wrapper u8 x i8 w -> i8 per-tensor, bit-exact", lambda w: t_qnn(w, 0))
    case(w, "qnn_conv2d wrapper u8 x i8 w -> i8 per-channel, bit-exact", lambda w: t_qnn(w, 1))
    case(w, "wrapper arity error raised through dg_tvm_raise", t_arity)
    case(w, "library error passes through the wrapper", t_library_error)
    if importlib.util.find_spec("tvm") is None:
        t_fake_relax(w)
    t_tvm(build)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
