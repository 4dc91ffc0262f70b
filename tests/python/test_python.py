#!/usr/bin/env python3
"""The Python package (python/directgraph) from the build tree: every
builder op against numpy (refs.py), the structs' layouts against the C
compiler's, each error path's exception, ONNX import, sessions, plans,
profiling, DLPack with torch, threads, and LeNet's accuracy from Python
equal to the C example's. One "ok - ..." / "FAIL - ..." / "skipped: ..."
line per case.

usage: test_python.py BUILD_DIR   (the package is BUILD_DIR/python)
"""

import ctypes
import os
import subprocess
import sys
import tempfile
import threading
import traceback

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
sys.path.insert(0, os.path.join(BUILD, "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import directgraph as dg  # noqa: E402
import refs  # noqa: E402

failed = 0
CTX = dg.Context(["cpu"])
RNG = np.random.default_rng(20261203)


def ok(name):
    print("ok - " + name)


def fail(name, why):
    global failed
    failed += 1
    print("FAIL - %s: %s" % (name, why))


def case(fn):
    try:
        fn()
    except Exception:
        fail(fn.__name__, traceback.format_exc().strip().replace("\n", " | "))
    return fn


def rand(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def run(build, feeds, devices="cpu"):
    """Builds g with build(g, inputs...) (inputs from feeds' arrays),
    compiles it for devices and returns its one output."""
    g = dg.Graph(context=CTX if devices == "cpu" else None)
    ins = [g.input("x%d" % i, a.shape, a.dtype) for i, a in enumerate(feeds)]
    g.output("y", build(g, *ins))
    s = dg.Session(g, devices=devices)
    return s.run(None, {"x%d" % i: a for i, a in enumerate(feeds)})[0]


def close(name, got, want, atol=1e-5, rtol=1e-4):
    want = np.asarray(want)
    if got.shape != want.shape:
        fail(name, "shape %s, expected %s" % (got.shape, want.shape))
    elif not np.allclose(got.astype(np.float64), want, atol=atol, rtol=rtol,
                         equal_nan=True):
        err = np.abs(got.astype(np.float64) - want).max()
        fail(name, "max error %g (atol %g, rtol %g)" % (err, atol, rtol))
    else:
        ok(name)


def lsb(name, got, want, limit=1):
    if got.shape != want.shape or got.dtype != want.dtype:
        fail(name, "%s %s, expected %s %s" % (got.dtype, got.shape,
                                              want.dtype, want.shape))
        return
    d = np.abs(got.astype(np.int64) - want.astype(np.int64)).max()
    if d > limit:
        fail(name, "%d LSB from the reference (limit %d)" % (d, limit))
    else:
        ok("%s (within %d LSB)" % (name, limit))


def child(code, **env):
    """stdout of code run by a child Python with the package and env:
    for the test hooks the library reads from its environment once."""
    env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"), **env)
    return subprocess.run([sys.executable, "-c", code], env=env,
                          capture_output=True, text=True)


# ---- the ABI ----

@case
def abi_layouts():
    exe = os.path.join(BUILD, "tests", "python_abi_sizes")
    lines = subprocess.run([exe], capture_output=True, text=True,
                           check=True).stdout.split()
    bad = []
    for s, f, v in zip(lines[::3], lines[1::3], lines[2::3]):
        t = getattr(dg._abi, s)
        mine = ctypes.sizeof(t) if f == "-" else getattr(t, f).offset
        if mine != int(v):
            bad.append("%s.%s: ctypes %d, C %s" % (s, f, mine, v))
    if bad or not lines:
        fail("ctypes struct layouts as the C compiler's",
             "; ".join(bad) or "none")
    else:
        ok("ctypes struct layouts as the C compiler's (%d sizes and offsets)" %
           (len(lines) // 3))


@case
def devices_and_absence():
    devs, absent = CTX.devices, CTX.absent
    why = absent.get("vulkan", "")
    if devs and devs[0].kind == "cpu" and "left out" in why and \
            "cpu" not in absent and devs[0].supports("conv2d"):
        ok("Context(['cpu']): the CPU, and why no Vulkan: %s" % why)
    else:
        fail("devices and absence", "%r %r" % (devs, absent))


@case
def enums_are_graph_h():
    # Each enum value's name as the library itself spells it.
    checks = [(dg.context.OPS, dg._lib.dg_op_name),
              (dg.graph.UNARY, dg._lib.dg_unary_fn_name),
              (dg.graph.BINARY, dg._lib.dg_binary_fn_name),
              (dg.graph.COMPARE, dg._lib.dg_compare_fn_name)]
    bad = ["%s=%d is %s" % (k, v, name(v).decode())
           for table, name in checks for k, v in table.items()
           if name(v).decode().replace("_", "") != k.replace("_", "")]
    n = sum(len(t) for t, _ in checks)
    if bad or n < 100:
        fail("enums read from graph.h", "; ".join(bad) or "%d entries" % n)
    else:
        ok("enums read from graph.h: %d ops and functions, each named as "
           "the library names it" % n)


# ---- every builder op against numpy ----

@case
def conv_family():
    x, w, b = rand(2, 4, 9, 8), rand(6, 2, 3, 3), rand(6)
    close("conv2d groups 2 stride 2 dilation 2 pads", run(
        lambda g, x: g.conv2d(x, w, b, stride=2, dilation=2,
                              padding=(1, 2, 0, 1), groups=2), [x]),
        refs.conv2d(x, w, b, (2, 2), (2, 2), (1, 2, 0, 1), 2))
    w1 = rand(5, 4, 3, 3)
    close("conv2d same_upper relu6", run(
        lambda g, x: g.conv2d(x, w1, None, padding="same_upper",
                              activation="relu6"), [x]),
        np.clip(refs.conv2d(x, w1, None, pads=(1, 1, 1, 1)), 0, 6))
    wt = rand(4, 3, 3, 3)
    close("conv_transpose2d stride 2", run(
        lambda g, x: g.conv_transpose2d(x, wt, b[:3], stride=2, padding=1),
        [x]), refs.conv_transpose2d(x, wt, b[:3], (2, 2), (1, 1, 1, 1)))


@case
def pools():
    x = rand(2, 3, 8, 7)
    close("max_pool2d 3x3 stride 2", run(
        lambda g, x: g.max_pool2d(x, 3, stride=2), [x]),
        refs.pool(x, (3, 3), (2, 2), np.max))
    close("avg_pool2d 2x2", run(lambda g, x: g.avg_pool2d(x, 2), [x]),
          refs.pool(x, (2, 2), (1, 1), np.mean))
    close("global_avg_pool", run(lambda g, x: g.global_avg_pool(x), [x]),
          x.mean((2, 3), keepdims=True))


@case
def dense():
    x, w, b = rand(3, 10), rand(4, 10), rand(4)
    close("fully_connected relu", run(
        lambda g, x: g.fully_connected(x, w, b, activation="relu"), [x]),
        np.maximum(x @ w.T + b, 0))
    a, m = rand(2, 1, 3, 5), rand(4, 5, 6)
    close("matmul broadcast batch", run(lambda g, a, m: g.matmul(a, m),
                                        [a, m]), a @ m)
    close("operator @", run(lambda g, a, m: a @ m, [a, m]), a @ m)


@case
def normalisation():
    x = rand(2, 3, 4, 5)
    close("softmax axis 1", run(lambda g, x: g.softmax(x, 1), [x]),
          refs.softmax(x.astype(np.float64), 1))
    close("log_softmax", run(lambda g, x: g.log_softmax(x, -1), [x]),
          np.log(refs.softmax(x.astype(np.float64), -1)))
    s, b = rand(4, 5), rand(4, 5)
    close("layer_norm axis 2", run(
        lambda g, x: g.layer_norm(x, s, b, axis=2, epsilon=1e-3), [x]),
        refs.layer_norm(x.astype(np.float64), s, b, 2, 1e-3))
    sc, bi, mu, var = rand(3), rand(3), rand(3), rand(3, lo=0.5, hi=2)
    close("batch_norm", run(
        lambda g, x: g.batch_norm(x, sc, bi, mu, var, epsilon=1e-4), [x]),
        (x - mu.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) +
                                               1e-4) * sc.reshape(1, 3, 1, 1)
        + bi.reshape(1, 3, 1, 1))


@case
def reductions():
    x = rand(3, 4, 5, lo=0.2, hi=1.5)
    for fn, ref in refs.REDUCE.items():
        close("reduce %s axes (0, 2)" % fn, run(
            lambda g, x: g.reduce(fn, x, (0, 2), keepdims=False), [x]),
            ref(x.astype(np.float64), (0, 2)))
    missing = set(dg.graph.enum_values("dg_reduce_fn", "DG_REDUCE_")) - set(
        refs.REDUCE)
    if missing:
        fail("every reduce function has a reference", sorted(missing))
    y = rand(4, 6)
    got = run(lambda g, x: g.argmax(x, 1, keepdims=False), [y])
    if got.dtype == np.int64 and (got == y.argmax(1)).all():
        ok("argmax i64")
    else:
        fail("argmax i64", "%s %s vs %s" % (got.dtype, got, y.argmax(1)))
    got = run(lambda g, x: g.argmin(x, 0), [y])
    if (got == y.argmin(0, keepdims=True)).all():
        ok("argmin keepdims")
    else:
        fail("argmin keepdims", "%s" % got)


@case
def unary_every_function():
    for fn in dg.graph.UNARY:
        if fn not in refs.UNARY:
            fail("unary %s" % fn, "no numpy reference in refs.py")
            continue
        ref, a, b, (lo, hi) = refs.UNARY[fn]
        x = rand(3, 7, lo=lo, hi=hi)
        if fn == "round":
            x[0, :3] = [0.5, 1.5, -2.5]  # ties go to even
        method = getattr(dg.Graph, fn + "_" if fn in ("and", "or") else fn)
        got = run(lambda g, x: method(g, x, a, b) if fn not in (
            "relu", "sigmoid") else method(g, x), [x]) if fn != "clip" else \
            run(lambda g, x: g.clip(x, a, b), [x])
        close("unary %s" % fn, got, ref(x.astype(np.float64), a, b),
              atol=2e-5, rtol=2e-4)
    x = rand(2, 3)
    close("operator -x", run(lambda g, x: -x, [x]), -x)


@case
def binary_every_function():
    for fn in dg.graph.BINARY:
        if fn not in refs.BINARY:
            fail("binary %s" % fn, "no numpy reference")
            continue
        a = rand(2, 3, 4, lo=0.5 if fn == "pow" else -2, hi=2)
        b = rand(3, 1, lo=0.5, hi=2) if fn in ("div", "fmod", "mod",
                                                "pow") else rand(3, 1)
        if fn in ("fmod", "mod"):
            b = np.where(RNG.random(b.shape) < 0.5, -b, b).astype(np.float32)
        close("binary %s broadcast" % fn, run(
            lambda g, a, b: g.binary(fn, a, b), [a, b]),
            refs.BINARY[fn](a.astype(np.float64), b.astype(np.float64)),
            atol=1e-5, rtol=1e-5)
    x = rand(2, 3)
    close("operators x * 2 + 1, 1 - x, x / 4, x ** 2", run(
        lambda g, x: (x * 2.0 + 1.0) + (1.0 - x) + x / 4.0 + x ** 2.0, [x]),
        (x * 2 + 1) + (1 - x) + x / 4 + x.astype(np.float64) ** 2)


@case
def compare_every_function():
    a, b = rand(3, 4), rand(1, 4)
    a[0, 0] = b[0, 0]
    p, q = RNG.random((3, 4)) < 0.5, RNG.random((3, 4)) < 0.5
    for fn, ref in refs.COMPARE.items():
        xs = [p, q] if fn in ("and", "or", "xor") else [a, b]
        got = run(lambda g, x, y: g.compare(fn, x, y), xs)
        want = ref(*xs)
        if got.dtype == np.bool_ and (got == want).all():
            ok("compare %s" % fn)
        else:
            fail("compare %s" % fn, "%s vs %s" % (got, want))
    missing = set(dg.graph.COMPARE) - set(refs.COMPARE) - {
        "not", "isnan", "isinf", "isposinf", "isneginf"}
    if missing:
        fail("every compare function has a reference", sorted(missing))
    c = np.array([1.0, np.nan, np.inf, -np.inf, 0.0], np.float32)
    checks = [("not", lambda g, x: g.not_(x), [p], ~p),
              ("isnan", lambda g, x: g.isnan(x), [c], np.isnan(c)),
              ("isinf", lambda g, x: g.isinf(x), [c], np.isinf(c)),
              ("isinf positive only",
               lambda g, x: g.isinf(x, negative=False), [c], np.isposinf(c)),
              ("where", lambda g, m, x, y: g.where(m, x, y), [p, a, b * 0 + 3],
               np.where(p, a, 3))]
    for name, build, xs, want in checks:
        got = run(build, xs)
        if got.shape == want.shape and (got == want).all():
            ok(name)
        else:
            fail(name, "%s vs %s" % (got, want))


@case
def cast():
    x = np.array([[1.7, -2.7, 3e9, np.nan]], np.float32)
    got = run(lambda g, x: g.cast(x, "i32"), [x])
    want = np.array([[1, -2, 2 ** 31 - 1, 0]], np.int32)
    if got.dtype == np.int32 and (got == want).all():
        ok("cast f32 -> i32 truncates and saturates, NaN 0")
    else:
        fail("cast f32 -> i32", "%s" % got)
    close("cast f32 -> f16", run(lambda g, x: g.cast(x, "f16"),
                                 [rand(3, 3)]).astype(np.float64) * 0,
          np.zeros((3, 3)))
    y = rand(2, 3)
    close("cast f32 -> f16 values", run(lambda g, x: g.cast(x, np.float16),
                                        [y]), y.astype(np.float16),
          atol=0, rtol=0)


@case
def movement():
    x = rand(2, 3, 4, 5)
    checks = [
        ("reshape -1, 0", lambda g, x: g.reshape(x, (0, -1, 5)),
         x.reshape(2, 12, 5)),
        ("flatten axis 2", lambda g, x: g.flatten(x, 2), x.reshape(6, 20)),
        ("concat axis 1", lambda g, x: g.concat([x, x * 2.0], 1),
         np.concatenate([x, x * 2], 1)),
        ("transpose", lambda g, x: g.transpose(x, (3, 1, 0, 2)),
         x.transpose(3, 1, 0, 2)),
        ("transpose reversed", lambda g, x: g.transpose(x), x.T),
        ("slice with negative step", lambda g, x: g.slice(
            x, (0, 2, -1, 1), (2, 0, 0, 5), (1, -1, -2, 2)),
         x[0:2, 2:0:-1, -1:0:-2, 1:5:2]),
        ("expand", lambda g, x: g.expand(g.slice(x, (0, 0, 0, 0),
                                                 (1, 3, 4, 1)), (2, 3, 4, 6)),
         np.broadcast_to(x[:1, :, :, :1], (2, 3, 4, 6))),
        ("gather axis 2", lambda g, x: g.gather(x, [3, 0, -1], 2),
         np.take(x, [3, 0, -1], 2)),
    ]
    for mode in ("constant", "reflect", "edge", "wrap"):
        pads = (0, 1, 2, 1, 0, 2, 1, 2)
        np_pads = list(zip(pads[:4], pads[4:]))
        kw = {"constant_values": 0.5} if mode == "constant" else {}
        checks.append(("pad %s" % mode, lambda g, x, mode=mode, pads=pads:
                       g.pad(x, pads, mode=mode, value=0.5),
                       np.pad(x, np_pads, mode, **kw)))
    for name, build, want in checks:
        close(name, run(build, [x]), want, atol=0, rtol=0)


@case
def resize():
    x = rand(1, 2, 3, 4)
    close("resize nearest x2 asymmetric floor", run(
        lambda g, x: g.resize(x, scales=(2, 2), coord="asymmetric",
                              nearest="floor"), [x]),
        x.repeat(2, 2).repeat(2, 3), atol=0, rtol=0)

    def linear(v, s, axis):  # half_pixel, indices clamped
        n = v.shape[axis]
        pos = (np.arange(n * s) + 0.5) / s - 0.5
        i0 = np.floor(pos).astype(int)
        f = pos - i0
        a = np.take(v, np.clip(i0, 0, n - 1), axis)
        b = np.take(v, np.clip(i0 + 1, 0, n - 1), axis)
        shape = [1] * v.ndim
        shape[axis] = -1
        f = f.reshape(shape)
        return a * (1 - f) + b * f

    close("resize linear x2 half_pixel", run(
        lambda g, x: g.resize(x, scales=(2, 2), mode="linear"), [x]),
        linear(linear(x.astype(np.float64), 2, 2), 2, 3))


@case
def int8_ops():
    sx, zx, sw = 0.03, 5, [0.01, 0.02, 0.015]
    xq = RNG.integers(-128, 128, (1, 2, 6, 6)).astype(np.int8)
    wq = RNG.integers(-127, 128, (3, 2, 3, 3)).astype(np.int8)
    bq = RNG.integers(-500, 500, 3).astype(np.int32)
    sy, zy = 0.05, -3
    xr = refs.dequantize(xq, sx, zx)
    wr = (wq.astype(np.float64) * np.array(sw).reshape(3, 1, 1, 1))
    br = bq * sx * np.array(sw)
    want = refs.quantize(refs.conv2d(xr, wr, br, pads=(1, 1, 1, 1)), sy, zy,
                         np.int8)

    def qconv(g, x):
        w = g.constant(wq, quant=dg.Quant(scales=sw, axis=0))
        return g.qconv2d(x, w, bq, padding=1, y_quant=(sy, zy))

    g = dg.Graph(context=CTX)
    x = g.input("x", xq.shape, "i8", quant=(sx, zx))
    g.output("y", qconv(g, x))
    lsb("qconv2d per-channel", dg.Session(g).run(None, {"x": xq})[0], want)

    def one(build, xs, quants):
        g = dg.Graph(context=CTX)
        ins = [g.input("x%d" % i, a.shape, a.dtype, quant=q)
               for i, (a, q) in enumerate(zip(xs, quants))]
        g.output("y", build(g, *ins))
        return dg.Session(g).run(None, {"x%d" % i: a
                                        for i, a in enumerate(xs)})[0]

    a = RNG.integers(-128, 128, (2, 8)).astype(np.int8)
    w = RNG.integers(-127, 128, (4, 8)).astype(np.int8)
    got = one(lambda g, x: g.qfully_connected(
        x, g.constant(w, quant=(0.02, 0)), None, y_quant=(0.1, 0)), [a],
        [(0.05, 1)])
    want = refs.quantize(refs.dequantize(a, 0.05, 1) @ (w * 0.02).T, 0.1, 0,
                         np.int8)
    lsb("qfully_connected", got, want)
    m = RNG.integers(0, 256, (8, 3)).astype(np.uint8)
    got = one(lambda g, x: g.qmatmul(x, g.constant(m, quant=(0.01, 128)),
                                     y_quant=(0.08, 2)), [a], [(0.05, 1)])
    want = refs.quantize(refs.dequantize(a, 0.05, 1) @ refs.dequantize(
        m, 0.01, 128), 0.08, 2, np.int8)
    lsb("qmatmul u8 b", got, want)
    b = RNG.integers(-128, 128, (1, 8)).astype(np.int8)
    for fn, op in (("add", np.add), ("sub", np.subtract),
                   ("mul", np.multiply)):
        got = one(lambda g, x, y: g.qbinary(fn, x, y, y_quant=(0.07, -1)),
                  [a, b], [(0.05, 1), (0.03, -2)])
        want = refs.quantize(op(refs.dequantize(a, 0.05, 1),
                                refs.dequantize(b, 0.03, -2)), 0.07, -1,
                             np.int8)
        lsb("qbinary %s broadcast" % fn, got, want)
    table = RNG.integers(-128, 128, 256).astype(np.int8)
    got = one(lambda g, x: g.lookup(x, table, y_quant=(1, 0)), [a],
              [(0.05, 1)])
    lsb("lookup", got, table[a.astype(np.int64) + 128], 0)
    got = one(lambda g, x: g.qunary("sigmoid", x, y_quant=(1 / 256, -128)),
              [a], [(0.05, 1)])
    lsb("qunary sigmoid", got, refs.quantize(refs.sigmoid(
        refs.dequantize(a, 0.05, 1)), 1 / 256, -128, np.int8))
    got = one(lambda g, x: g.requantize(x, y_dtype="u8", y_quant=(0.1, 128)),
              [a], [(0.05, 1)])
    lsb("requantize i8 -> u8", got, refs.quantize(refs.dequantize(
        a, 0.05, 1), 0.1, 128, np.uint8))
    p = RNG.integers(-128, 128, (1, 3, 4, 4)).astype(np.int8)
    got = one(lambda g, x: g.qavg_pool2d(x, 2, stride=2, y_quant=(0.04, 0)),
              [p], [(0.05, 1)])
    lsb("qavg_pool2d", got, refs.quantize(refs.pool(
        refs.dequantize(p, 0.05, 1), (2, 2), (2, 2), np.mean), 0.04, 0,
        np.int8))
    got = one(lambda g, x: g.qglobal_avg_pool(x, y_quant=(0.04, 0)), [p],
              [(0.05, 1)])
    lsb("qglobal_avg_pool", got, refs.quantize(refs.dequantize(
        p, 0.05, 1).mean((2, 3), keepdims=True), 0.04, 0, np.int8))
    c = RNG.integers(-128, 128, (2, 3)).astype(np.int8)
    got = one(lambda g, x, y: g.qconcat([x, y], 1, y_quant=(0.05, 1)),
              [a, c], [(0.05, 1), (0.03, -2)])
    want = np.concatenate([a, refs.quantize(refs.dequantize(c, 0.03, -2),
                                            0.05, 1, np.int8)], 1)
    lsb("qconcat requantises the input that differs", got, want)
    f = rand(3, 5, lo=-4, hi=4)
    got = run(lambda g, x: g.quantize(x, "i8", (0.03, 4)), [f])
    lsb("quantize", got, refs.quantize(f.astype(np.float64), 0.03, 4,
                                       np.int8))
    got = one(lambda g, x: g.dequantize(x), [a], [(0.05, 1)])
    close("dequantize", got, refs.dequantize(a, 0.05, 1), atol=1e-6)
    t = g.input("t", (2,), "i8", quant=(0.5, 3))
    if t.quant == dg.Quant(0.5, 3) and t.dtype == "i8" and t.shape == (2,):
        ok("Tensor.shape, dtype and quant")
    else:
        fail("Tensor.shape, dtype and quant", "%r %r" % (t, t.quant))


# ---- graphs, sessions, plans ----

@case
def constants_lent_and_copied():
    w = rand(3, 4)
    g = dg.Graph(context=CTX)
    x = g.input("x", (2, 4))
    g.output("y", g.matmul(x, g.constant(w.T.copy(), lend=True)))
    s = g.compile()
    del g
    xin = rand(2, 4)
    close("a lent constant outlives its graph", s.run(None, {"x": xin})[0],
          xin @ w.T)
    try:
        dg.Graph(context=CTX).constant(np.zeros(3))
        fail("float64 constant refused", "accepted")
    except TypeError as e:
        ok("float64 constant refused: %s" % e)


@case
def session_io_and_out():
    g = dg.Graph(context=CTX)
    x = g.input("img", (1, 3, 4, 4), layout="nhwc")  # the NCHW shape
    g.output("sum", g.reduce("sum", x, (1,), keepdims=False))
    g.output("same", g.relu(x), layout="nhwc")
    s = dg.Session(g)
    info = s.get_inputs()[0]
    if (info.name, info.shape, info.dtype, info.layout, info.type) == (
            "img", (1, 3, 4, 4), "f32", "nhwc", "tensor(f32)"):
        ok("input metadata (NCHW shape, NHWC layout)")
    else:
        fail("input metadata", "%r" % info)
    xin = rand(1, 4, 4, 3)
    dst = np.zeros((1, 4, 4, 3), np.float32)
    same, total = s.run(["same", "sum"], {"img": xin}, out={"same": dst})
    if same is dst and np.allclose(dst, np.maximum(xin, 0)):
        ok("run(out=...) writes in place")
    else:
        fail("run(out=...)", "not written in place")
    close("outputs in the order named, NHWC input", total,
          xin.sum(3).astype(np.float64))


@case
def plan_records_and_pictures():
    g = dg.Graph(context=CTX)
    x = g.input("x", (1, 3, 8, 8))
    y = g.conv2d(x, rand(4, 3, 3, 3), rand(4), padding=1, name="c1")
    g.output("y", g.relu(y, name="r1"))
    s = dg.Session(g, profile=True)
    s.run(None, {"x": rand(1, 3, 8, 8)})
    plan = s.plan
    names = [n.name for n in plan]
    if names and all(n.device_kind == "cpu" and n.reason for n in plan):
        ok("plan records: %s" % ", ".join("%s:%s" % (n.name, n.op)
                                          for n in plan))
    else:
        fail("plan records", "%r" % plan)
    if all(n.measured_us > 0 for n in plan):
        ok("profile=True measures every node")
    else:
        fail("profile=True", "%r" % [n.measured_us for n in plan])
    for dev in dg.devices():
        if dev.kind in ("vulkan", "opencl"):
            gd = dg.Graph()  # the default context's, every device
            xd = gd.input("x", (1, 3, 8, 8))
            gd.output("y", gd.relu(gd.conv2d(xd, rand(4, 3, 3, 3), None,
                                             padding=1)))
            sg = dg.Session(gd, devices=[dev])
            sg.run(None, {"x": rand(1, 3, 8, 8)})
            times = [n.measured_us for n in sg.plan]
            if all(t > 0 for t in times) and all(
                    n.device_kind == dev.kind for n in sg.plan):
                ok("%s measures every node on the device (%s)" % (
                    dev.kind, ", ".join("%.0f us" % t for t in times)))
            else:
                fail("%s measures every node" % dev.kind, "%r" % times)
    s2 = dg.Session(g)
    s2.run(None, {"x": rand(1, 3, 8, 8)})
    if all(n.measured_us == 0 for n in s2.plan):
        ok("no profile: nothing measured")
    else:
        fail("no profile", "%r" % [n.measured_us for n in s2.plan])
    table, dot = str(plan), plan.dot()
    if "est_us" in table and names[0] in table and dot.startswith("digraph"):
        ok("plan as table and DOT")
    else:
        fail("plan as table and DOT", table + dot)
    import shutil
    if shutil.which("dot"):
        svg = plan.svg()
        if "<svg" in svg and plan._repr_svg_() == svg:
            ok("plan as SVG (Graphviz), shown inline in Jupyter")
        else:
            fail("plan as SVG", svg[:200])
    else:
        print("skipped: Graphviz's dot is not installed (plan as SVG)")


@case
def precision_fast_f16():
    g = dg.Graph()  # the default context's, every device
    x = g.input("x", (1, 3, 8, 8))
    g.output("y", g.relu(g.conv2d(x, rand(4, 3, 3, 3), rand(4), padding=1)))
    xin = rand(1, 3, 8, 8)
    want = dg.Session(g, devices=["cpu"]).run(None, {"x": xin})[0]
    s = dg.Session(g, devices=["cpu"], precision="fast_f16")
    if s.plan.precision.startswith("fast not applied: no allowed") and all(
            n.compute_dtype == "f32" for n in s.plan):
        ok("precision=fast_f16 on the CPU alone: %s" % s.plan.precision)
    else:
        fail("fast_f16 on the CPU", s.plan.precision)
    try:
        dg.Session(g, precision="half")
        fail("precision='half'", "accepted")
    except ValueError as e:
        ok("precision='half' is refused: %s" % e)
    for dev in dg.devices():
        if dev.kind not in ("vulkan", "opencl") or "f16" not in dev.dtypes:
            continue
        sf = dg.Session(g, devices=[dev], policy="strict",
                        precision="fast_f16")
        got = sf.run(None, {"x": xin})[0]
        if (sf.plan.precision.startswith("fast: f16 storage") and
                all(n.compute_dtype == "f16" for n in sf.plan) and
                got.dtype == np.float32):
            ok("%s: fast_f16 runs every node in f16 (%s)" % (
                dev.kind, sf.plan.precision))
        else:
            fail("%s fast_f16" % dev.kind, "%s %r" % (
                sf.plan.precision, [n.compute_dtype for n in sf.plan]))
        close("%s fast_f16 against the CPU" % dev.kind, got, want,
              atol=2e-2, rtol=1e-2)


@case
def verify_and_mismatch():
    g = dg.Graph(context=CTX)
    x = g.input("x", (1, 2, 5, 5))
    g.output("y", g.conv2d(x, rand(3, 2, 3, 3), None, name="conv"))
    s = dg.Session(g)
    rep = s.verify({"x": rand(1, 2, 5, 5)})
    if rep.ok and rep.nodes_checked == 1:
        ok("verify ok")
    else:
        fail("verify ok", "%r" % rep)
    # DG_TEST_CORRUPT_NODE damages the node's CPU output: verify must say
    # so, and with check=True raise MismatchError. In a child process,
    # since the library reads its environment once.
    code = ("import numpy as np, directgraph as dg\n"
            "g = dg.Graph(); x = g.input('x', (1, 2, 5, 5))\n"
            "g.output('y', g.conv2d(x, np.ones((3, 2, 3, 3), np.float32),"
            " None, name='conv'))\n"
            "s = dg.Session(g, devices='cpu')\n"
            "feeds = {'x': np.ones((1, 2, 5, 5), np.float32)}\n"
            "r = s.verify(feeds); print(r.ok, r.node)\n"
            "try:\n    s.verify(feeds, check=True)\n"
            "except dg.MismatchError as e:\n    print('raised', e.node)\n")
    out = child(code, DG_TEST_CORRUPT_NODE="conv").stdout.split()
    if out == ["False", "conv", "raised", "conv"]:
        ok("verify finds a corrupt node; check=True raises MismatchError")
    else:
        fail("verify finds a corrupt node", "%s" % out)


def expect(name, exc, fn, field=None):
    try:
        fn()
    except exc as e:
        if field is not None and getattr(e, "field", None) != field:
            fail(name, "field %r, expected %r: %s" % (e.field, field, e))
        elif isinstance(e, dg.Error) and not e.function:
            fail(name, "no function named: %s" % e)
        else:
            ok("%s raises %s: %s" % (name, type(e).__name__, e))
        return
    except Exception as e:
        fail(name, "raised %s (%s), expected %s" % (type(e).__name__, e,
                                                    exc.__name__))
        return
    fail(name, "nothing raised, expected %s" % exc.__name__)


@case
def buffers_and_submit():
    """Buffers bound to a session on every device but the NPU: outputs
    read back bit for bit as the host run's, the Buffer returned for a
    bound output, submit/wait, a bound name given a feed refused, and the
    NPU's refusal said."""
    xin = rand(1, 3, 8, 8)
    w = rand(4, 3, 3, 3)
    for dev in dg.devices():
        if dev.kind == "npu":
            try:
                dg.Buffer((1, 4), "f32", dev)
                fail("npu buffer", "accepted")
            except dg.UnsupportedError as e:
                ok("npu: no buffers, said: %s" % e)
            continue
        g = dg.Graph()
        g.set_device(dev.index)
        x = g.input("x", (1, 3, 8, 8))
        g.output("y", g.conv2d(x, w, None, padding=1, activation="relu"))
        s = dg.Session(g, devices=[dev], policy="strict")
        (want,) = s.run(None, {"x": xin})
        xb = dg.Buffer.from_numpy(xin, dev)
        yb = dg.Buffer((1, 4, 8, 8), "f32", dev)
        s.bind("x", xb)
        s.bind("y", yb)
        (r,) = s.run()
        (r2,) = s.submit().wait()
        if r is yb and r2 is yb and np.array_equal(yb.numpy(), want):
            ok("%s: buffers bound, run and submit/wait give the host run's "
               "y bit for bit" % dev.kind)
        else:
            fail("%s buffers" % dev.kind, "results %r %r" % (r, r2))
        expect("%s: a feed for a bound input" % dev.kind,
               dg.InvalidArgumentError, lambda: s.run(None, {"x": xin}))
        expect("%s: a buffer of the wrong shape" % dev.kind,
               dg.InvalidArgumentError,
               lambda: s.bind("y", dg.Buffer((1, 4, 8, 7), "f32", dev)))
        s.bind("y", None)
        (h,) = s.submit(["y"]).wait()
        if isinstance(h, np.ndarray) and np.array_equal(h, want):
            ok("%s: unbound again, y comes back in host memory" % dev.kind)
        else:
            fail("%s unbind" % dev.kind, repr(h))


@case
def error_paths():
    g = dg.Graph(context=CTX)
    a, b = g.input("a", (2, 3)), g.input("b", (4, 5))
    expect("shapes that do not broadcast", dg.InvalidShapeError,
           lambda: g.add(a, b), field="b")
    expect("a later call on that graph", dg.GraphFailedError,
           lambda: g.relu(a))
    expect("compiling that graph", dg.GraphFailedError, lambda: g.compile())
    g = dg.Graph(context=CTX)
    i = g.input("i", (1, 1, 4, 4), "i32")
    expect("conv2d of an i32 tensor", dg.InvalidDtypeError,
           lambda: g.conv2d(i, np.ones((1, 1, 1, 1), np.int32)))
    g = dg.Graph(context=CTX)
    x = g.input("x", (1, 1, 4, 4))
    expect("a negative stride", dg.InvalidArgumentError,
           lambda: g.conv2d(x, rand(1, 1, 1, 1), stride=-1))
    expect("an unknown unary function", ValueError,
           lambda: dg.Graph(context=CTX).unary("nope", x))
    expect("a dimension past 64 bits", dg.SizeOverflowError,
           lambda: dg.Graph(context=CTX).input("h", (2 ** 40, 2 ** 40)))
    g = dg.Graph(context=CTX)
    g.output("y", g.relu(g.input("x", (1, 1 << 16, 1 << 16, 1 << 13))))
    expect("a graph too big for memory", dg.OutOfMemoryError,
           lambda: dg.Session(g))
    g = dg.Graph(context=CTX)
    g.output("y", g.relu(g.input("x", (2, 2))))
    s = dg.Session(g)
    expect("an unknown input name", dg.NotFoundError,
           lambda: s.run(None, {"nope": rand(2, 2)}))
    expect("an unknown output name", dg.NotFoundError,
           lambda: s.run(["nope"], {"x": rand(2, 2)}))
    expect("a missing input", dg.InvalidArgumentError,
           lambda: s.run(None, {}))
    expect("a wrong-shaped input", dg.InvalidShapeError,
           lambda: s.run(None, {"x": rand(2, 3)}))
    expect("a wrong-dtype input", dg.InvalidDtypeError,
           lambda: s.run(None, {"x": np.zeros((2, 2), np.float64)}))
    expect("an ONNX file that is not there", dg.FileError,
           lambda: dg.load_onnx("/nonexistent/model.onnx", context=CTX))
    expect("a device kind not opened", dg.UnsupportedError,
           lambda: dg.Session(g, devices="npu"))
    # A device failing: OpenCL building a broken program (a test hook).
    code = ("import numpy as np, directgraph as dg\n"
            "ctx = dg.Context(['opencl'])\n"
            "if not any(d.kind == 'opencl' for d in ctx.devices):\n"
            "    print('no-opencl'); raise SystemExit\n"
            "g = dg.Graph(context=ctx); x = g.input('x', (64, 64))\n"
            "g.output('y', g.matmul(x, x))\n"
            "try:\n    dg.Session(g, devices='opencl', policy='strict')\n"
            "except dg.DeviceError as e:\n    print('DeviceError')\n"
            "except dg.Error as e:\n    print(type(e).__name__, e)\n")
    out = child(code, DG_TEST_OPENCL_BROKEN_SOURCE="1")
    if out.stdout.strip() == "no-opencl":
        print("skipped: no OpenCL device here (a device failing raises "
              "DeviceError)")
    elif out.stdout.strip() == "DeviceError":
        ok("a device failing raises DeviceError")
    else:
        fail("a device failing raises DeviceError", out.stdout + out.stderr)


# ---- ONNX, threads, DLPack ----

def tiny_onnx(path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = rand(4, 3, 3, 3)
    fc = rand(5, 4)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "fc"], ["y"], transB=1)]
    graph = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       ["N", 3, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(fc, "fc")])
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), path)

    def ref(x):
        c = np.maximum(refs.conv2d(x, w, None, pads=(1, 1, 1, 1)), 0)
        return c.mean((2, 3)) @ fc.T
    return ref


@case
def onnx_models():
    try:
        import onnx  # noqa: F401
    except ImportError:
        print("skipped: python3-onnx is not installed (ONNX from Python)")
        return
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "tiny.onnx")
        ref = tiny_onnx(path)
        x = rand(2, 3, 6, 6)
        s = dg.Session(path, symbolic=2, context=CTX)
        close("ONNX file, symbolic batch 2", s.run(None, {"x": x})[0], ref(x))
        with open(path, "rb") as f:
            s = dg.Session(f.read(), symbolic=2, context=CTX)
        close("ONNX bytes", s.run(["y"], {"x": x})[0], ref(x))
        expect("a symbolic batch without symbolic=", dg.UnsupportedError,
               lambda: dg.Session(path, context=CTX))
        try:
            dg.Session(path, context=CTX)
        except dg.Error as e:
            if "symbolic=" in str(e) and "dg_onnx_options" not in str(e):
                ok("the symbolic batch error names symbolic=")
            else:
                fail("the symbolic batch error names symbolic=", str(e))


@case
def threads():
    g = dg.Graph(context=CTX)
    x = g.input("x", (4, 64))
    g.output("y", g.fully_connected(x, rand(32, 64), rand(32),
                                    activation="relu"))
    xs = [rand(4, 64) for _ in range(4)]
    want = [dg.Session(g).run(None, {"x": v})[0] for v in xs]
    got = [None] * 4

    def work(i):
        s = dg.Session(g)
        for _ in range(20):
            got[i] = s.run(None, {"x": xs[i]})[0]

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if all(a is not None and (a == b).all() for a, b in zip(got, want)):
        ok("four threads, a session each, results as alone")
    else:
        fail("threads", "results differ")


@case
def dlpack_torch():
    try:
        import torch
    except ImportError:
        print("skipped: python3-torch is not installed (DLPack with torch)")
        return
    g = dg.Graph(context=CTX)
    x = g.input("x", (2, 8))
    g.output("y", g.unary("tanh", x))
    s = dg.Session(g)
    t = torch.randn(2, 8)
    view = dg.from_dlpack(t)
    if np.shares_memory(view, t.numpy()):
        ok("from_dlpack(torch tensor) shares its memory")
    else:
        fail("from_dlpack", "a copy")
    (y,) = s.run(None, {"x": t})
    ty = torch.from_dlpack(y)
    if torch.allclose(ty, torch.tanh(t), atol=1e-6) and \
            ty.data_ptr() == y.ctypes.data:
        ok("torch tensor in, torch.from_dlpack(output) without a copy")
    else:
        fail("torch in and out", "values or copy")
    dst = torch.zeros(2, 8)
    s.run(None, {"x": t}, out={"y": dst})
    if torch.allclose(dst, torch.tanh(t), atol=1e-6):
        ok("run(out={...: torch tensor}) writes the tensor in place")
    else:
        fail("run into a torch tensor", "%s" % dst)
    expect("a non-contiguous torch output", ValueError,
           lambda: s.run(None, {"x": t}, out={"y": torch.zeros(8, 2).T}))


# ---- LeNet from Python equals the C example ----

@case
def lenet_accuracy():
    data = "/usr/share/datasets/fashion-mnist"
    if not os.path.exists(os.path.join(data, "t10k-images-idx3-ubyte.gz")):
        print("skipped: dataset-fashion-mnist is not installed (LeNet)")
        return
    want = dict(line.split() for line in open(os.path.join(
        SRC, "examples", "lenet-weights", "expected.txt")))
    for mode, key in (([], "f32_test_accuracy"),
                      (["--int8"], "int8_test_accuracy")):
        out = subprocess.run(
            [sys.executable, os.path.join(SRC, "examples", "python",
                                          "lenet.py"), "--device", "cpu"] +
            mode, capture_output=True, text=True,
            env=dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python")))
        last = out.stdout.strip().splitlines()[-1] if out.stdout else ""
        if last.split()[2:3] == [want[key]]:
            ok("LeNet from Python: %s (the C example's %s)" % (last,
                                                               want[key]))
        else:
            fail("LeNet from Python %s" % key, last + out.stderr[-500:])


@case
def resnet18_notebook():
    try:
        import onnx  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError:
        print("skipped: python3-torchvision or python3-onnx is not "
              "installed (examples/python/resnet18.py)")
        return
    import shutil
    with tempfile.TemporaryDirectory() as d:
        picture = os.path.join(d, "plan.svg" if shutil.which("dot") else
                               "plan.dot")
        out = subprocess.run(
            [sys.executable, os.path.join(SRC, "examples", "python",
                                          "resnet18.py"), "--size", "64",
             "--devices", "cpu", "--svg" if picture.endswith("svg") else
             "--dot", picture],
            capture_output=True, text=True,
            env=dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python")))
        lines = out.stdout.splitlines()
        need = ["verify onnx: ok", "verify builder: ok"]
        good = all(any(ln.startswith(n) for ln in lines) for n in need) and \
            sum("top-1 equal" in ln for ln in lines) == 2 and \
            os.path.getsize(picture) > 1000
        if good:
            ok("examples/python/resnet18.py: ONNX and builder graphs verify "
               "and match torch through DLPack")
        else:
            fail("examples/python/resnet18.py", (out.stdout + out.stderr)[
                -800:])


print("%d failed" % failed, file=sys.stderr)
sys.exit(1 if failed else 0)
