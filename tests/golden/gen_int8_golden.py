#!/usr/bin/env python3
"""Writes the int8 golden vectors of tests/golden/int8/.

An implementation of the numerics contract (docs/numerics.md) independent of
the library: numpy, integer accumulation in int64 (checked to fit int32),
the multiplier m = float32(float32(sx) * float32(sw[c])) / float32(sy), the
product float32(acc) * m in float32, np.rint (round half to even), the zero
point added after rounding, saturation, and the fused-activation clamp.

The files were generated once and committed; the library must reproduce
them bit for bit forever. Regenerating them is only right when the contract
itself changes (and then docs/numerics.md says so).

The cases of the ops beyond convolution (qbinary, qunary, requantize,
lookup, qavg_pool2d, qglobal_avg_pool, qconcat: docs/numerics.md, "int8
elementwise, lookup and pooling") were added later from their own random
stream, so the first cases are written byte-identical as before. --new
writes only those.

Usage: python3 tests/golden/gen_int8_golden.py [--new] [outdir]
"""
import os
import sys

import numpy as np

F32 = np.float32
RANGE = {"i8": (-128, 127), "u8": (0, 255)}
NP = {"i8": np.int8, "u8": np.uint8}


def mult(sx, sw, sy):
    return F32(F32(sx) * F32(sw)) / F32(sy)


def requant(acc, m, zy, dtype, act, sy):
    assert acc.min() >= -2**31 and acc.max() < 2**31, "acc overflows int32"
    v = np.rint(acc.astype(F32) * m.astype(F32)).astype(np.int64) + zy
    lo, hi = RANGE[dtype]
    if act >= 1:
        lo = max(lo, zy)
    if act == 2:
        hi = min(hi, zy + int(np.rint(F32(6.0) / F32(sy))))
    return np.clip(v, lo, hi).astype(NP[dtype])


def rand_q(rng, dtype, shape):
    lo, hi = RANGE[dtype]
    return rng.integers(lo, hi + 1, size=shape).astype(NP[dtype])


def conv_case(rng, name, N, C, H, W, O, K, stride, pad, dil, groups, act,
              xt, wt, yt, per_channel, bias):
    x = rand_q(rng, xt, (N, C, H, W))
    w = rand_q(rng, wt, (O, C // groups, K, K))
    sx = F32(rng.uniform(0.005, 0.05))
    zx = int(rng.integers(-20, 20)) if xt == "i8" else int(rng.integers(100, 150))
    nsc = O if per_channel else 1
    sw = rng.uniform(0.001, 0.02, size=nsc).astype(F32)
    zw = 0 if wt == "i8" else int(rng.integers(120, 136))
    sy = F32(rng.uniform(0.05, 0.4))
    zy = int(rng.integers(-10, 10)) if yt == "i8" else int(rng.integers(100, 140))
    b = rng.integers(-3000, 3000, size=O).astype(np.int32) if bias else None
    OH = (H + 2 * pad - dil * (K - 1) - 1) // stride + 1
    OW = (W + 2 * pad - dil * (K - 1) - 1) // stride + 1
    xp = np.pad(x.astype(np.int64) - zx, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    wz = w.astype(np.int64) - zw
    acc = np.zeros((N, O, OH, OW), np.int64)
    cg, og = C // groups, O // groups
    for o in range(O):
        g = o // og
        for kh in range(K):
            for kw in range(K):
                patch = xp[:, g * cg:(g + 1) * cg,
                           kh * dil:kh * dil + stride * (OH - 1) + 1:stride,
                           kw * dil:kw * dil + stride * (OW - 1) + 1:stride]
                acc[:, o] += np.einsum("nchw,c->nhw", patch, wz[o, :, kh, kw])
    if b is not None:
        acc += b.reshape(1, O, 1, 1)
    m = np.array([mult(sx, sw[o if per_channel else 0], sy) for o in range(O)],
                 F32).reshape(1, O, 1, 1)
    y = requant(acc, m, zy, yt, act, sy)
    params = dict(op="qconv2d", stride=stride, pad=pad, dilation=dil,
                  groups=groups, activation=act, x_dtype=xt, w_dtype=wt,
                  y_dtype=yt, x_scale=sx, x_zero=zx, w_zero=zw, y_scale=sy,
                  y_zero=zy)
    return name, params, dict(x=x, w=w, w_scales=sw, b=b, y=y)


def fc_case(rng, name, N, K, O, act, xt, wt, yt, per_channel, bias, matmul):
    x = rand_q(rng, xt, (N, K))
    w = rand_q(rng, wt, (K, O) if matmul else (O, K))
    sx = F32(rng.uniform(0.005, 0.05))
    zx = int(rng.integers(-20, 20)) if xt == "i8" else int(rng.integers(100, 150))
    sw = rng.uniform(0.001, 0.02, size=O if per_channel else 1).astype(F32)
    zw = 0 if wt == "i8" else int(rng.integers(120, 136))
    sy = F32(rng.uniform(0.05, 0.4))
    zy = int(rng.integers(-10, 10)) if yt == "i8" else int(rng.integers(100, 140))
    b = rng.integers(-3000, 3000, size=O).astype(np.int32) if bias else None
    wt_ok = (w.astype(np.int64) - zw)
    wmat = wt_ok if matmul else wt_ok.T
    acc = (x.astype(np.int64) - zx) @ wmat
    if b is not None:
        acc += b.reshape(1, O)
    m = np.array([mult(sx, sw[o if per_channel else 0], sy) for o in range(O)],
                 F32).reshape(1, O)
    y = requant(acc, m, zy, yt, act, sy)
    params = dict(op="qmatmul" if matmul else "qfully_connected",
                  activation=act, x_dtype=xt, w_dtype=wt, y_dtype=yt,
                  x_scale=sx, x_zero=zx, w_zero=zw, y_scale=sy, y_zero=zy)
    return name, params, dict(x=x, w=w, w_scales=sw, b=b, y=y)


def quantize_case(rng, name, n, yt):
    x = (rng.standard_normal(n) * 3).astype(F32)
    # Exact ties of x / scale exercise round-half-even.
    x[:8] = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 300.0, -300.0], F32) * F32(0.25)
    s = F32(0.25) if n else F32(0.1)
    z = int(rng.integers(-10, 10)) if yt == "i8" else 128
    q = np.rint(x / s).astype(np.int64) + z
    lo, hi = RANGE[yt]
    y = np.clip(q, lo, hi).astype(NP[yt])
    return name, dict(op="quantize", y_dtype=yt, y_scale=s, y_zero=z), dict(x=x, y=y)


# ---- int8 elementwise, lookup and pooling ----
#
# Every step below is one fp32 operation on np.float32 values, in the
# contract's order; np.rint rounds half to even. A rounded value is
# saturated in float64 (where it may be inf) before the zero point is
# added as an integer.


def zero_of(rng, dtype, extreme=False):
    lo, hi = RANGE[dtype]
    if extreme:
        return int(rng.choice([lo, hi, int(rng.integers(lo, hi + 1))]))
    return int(rng.integers(-20, 21)) if dtype == "i8" else int(rng.integers(100, 151))


def saturate(v, zy, dtype):
    """y = saturate(v + zy) for a rounded fp32 v (array)."""
    lo, hi = RANGE[dtype]
    v = np.clip(np.asarray(v, np.float64), -2.0**40, 2.0**40)
    return np.clip(v.astype(np.int64) + zy, lo, hi).astype(NP[dtype])


def qbinary_case(rng, name, fn, ashape, bshape, at, bt, yt, sat=False):
    a = rand_q(rng, at, ashape)
    b = rand_q(rng, bt, bshape)
    sa = F32(rng.uniform(0.005, 0.05))
    sb = F32(rng.uniform(0.005, 0.05))
    # sat: a y scale that saturates many outputs, at both ends
    za, zb, zy = zero_of(rng, at), zero_of(rng, bt), zero_of(rng, yt, sat)
    if fn == "mul":
        sy = F32(F32(sa * sb) * F32(rng.uniform(5, 20) if sat else rng.uniform(30, 300)))
    else:
        sy = F32(F32(sa + sb) * F32(rng.uniform(0.05, 0.1) if sat else rng.uniform(0.3, 1.5)))
    da, db = np.broadcast_arrays(a.astype(np.int64) - za, b.astype(np.int64) - zb)
    if fn == "mul":
        m = F32(F32(sa) * F32(sb)) / F32(sy)
        acc = da * db
        assert np.abs(acc).max() <= 255 * 255
        v = np.rint(acc.astype(F32) * m)
    else:
        ra = F32(sa) / F32(sy)
        rb = F32(sb) / F32(sy)
        if fn == "sub":
            rb = -rb
        pa = da.astype(F32) * ra
        pb = db.astype(F32) * rb
        v = np.rint(pa + pb)
    assert v.dtype == F32
    y = saturate(v, zy, yt)
    params = dict(op="qbinary", fn=fn, a_dtype=at, a_scale=sa, a_zero=za,
                  b_dtype=bt, b_scale=sb, b_zero=zb, y_dtype=yt, y_scale=sy,
                  y_zero=zy)
    return name, params, dict(a=a, b=b, y=y)


def sigmoid(x, a, b):
    return 1.0 / (1.0 + np.exp(-x))


def hard_swish(x, a, b):
    return x * max(0.0, min(1.0, x * (1.0 / 6.0) + 0.5))


def hard_sigmoid(x, a, b):
    return max(0.0, min(1.0, a * x + b))


def leaky_relu(x, a, b):
    return x if x >= 0 else a * x


UNARY = {"sigmoid": sigmoid, "hard_swish": hard_swish,
         "hard_sigmoid": hard_sigmoid, "tanh": lambda x, a, b: np.tanh(x),
         "relu": lambda x, a, b: max(x, 0.0), "leaky_relu": leaky_relu,
         "identity": lambda x, a, b: x}


def q_table(xt, sx, zx, fn, alpha, beta, yt, sy, zy):
    """The 256 outputs for x = min .. max: dequantize (one fp32 multiply),
    fn in float64 rounded once to fp32, quantize (one fp32 division)."""
    lo, _ = RANGE[xt]
    f64 = UNARY[fn]
    out = []
    for i in range(256):
        r = F32(F32(lo + i - zx) * F32(sx))
        f = F32(f64(np.float64(r), np.float64(F32(alpha)), np.float64(F32(beta))))
        if np.isnan(f):
            out.append(saturate(F32(0), zy, yt))
        else:
            out.append(saturate(np.rint(f / F32(sy)), zy, yt))
    return np.array(out).astype(NP[yt])


def apply_table(x, xt, table):
    lo, _ = RANGE[xt]
    return table[x.astype(np.int64) - lo]


def every_value(rng, xt, shape):
    """All 256 values of xt in random order, then random ones."""
    lo, hi = RANGE[xt]
    n = int(np.prod(shape))
    assert n >= 256
    v = np.concatenate([rng.permutation(np.arange(lo, hi + 1)),
                        rng.integers(lo, hi + 1, size=n - 256)])
    return v.astype(NP[xt]).reshape(shape)


def qunary_case(rng, name, fn, xt, yt, span, sy, zy=None, alpha=0.0, beta=0.0):
    x = every_value(rng, xt, (2, 3, 8, 16))
    sx = F32(span / rng.uniform(100, 140))
    zx = zero_of(rng, xt)
    sy = F32(sy)
    zy = zero_of(rng, yt) if zy is None else zy
    table = q_table(xt, sx, zx, fn, alpha, beta, yt, sy, zy)
    y = apply_table(x, xt, table)
    params = dict(op="qunary" if fn != "identity" else "requantize",
                  x_dtype=xt, x_scale=sx, x_zero=zx, y_dtype=yt, y_scale=sy,
                  y_zero=zy)
    if fn != "identity":
        params.update(fn=fn, alpha=F32(alpha), beta=F32(beta))
    return name, params, dict(x=x, y=y)


def requantize_case(rng, name, xt, yt, ratio):
    x = every_value(rng, xt, (4, 100))
    sx = F32(rng.uniform(0.005, 0.05))
    zx, zy = zero_of(rng, xt, True), zero_of(rng, yt, True)
    sy = F32(sx * F32(ratio))
    y = apply_table(x, xt, q_table(xt, sx, zx, "identity", 0, 0, yt, sy, zy))
    return name, dict(op="requantize", x_dtype=xt, x_scale=sx, x_zero=zx,
                      y_dtype=yt, y_scale=sy, y_zero=zy), dict(x=x, y=y)


def lookup_case(rng, name, xt, yt):
    x = every_value(rng, xt, (3, 7, 19))
    table = rand_q(rng, yt, (256,))
    y = apply_table(x, xt, table)
    # the quantisations are labels here: the table holds the answer
    return name, dict(op="lookup", x_dtype=xt, x_scale=F32(0.25),
                      x_zero=zero_of(rng, xt), y_dtype=yt, y_scale=F32(0.5),
                      y_zero=zero_of(rng, yt)), dict(x=x, table=table, y=y)


def pool_out(n, k, s, d, pb, pe, ceil):
    span = (k - 1) * d + 1
    out = (n + pb + pe - span) // s + 1
    if ceil and (n + pb + pe - span) % s:
        out += 1
        if (out - 1) * s >= n + pb:  # the last window starts in the input
            out -= 1
    return out


def qavg_case(rng, name, shape, kernel, stride, dil, pads, ceil, cip, xt, yt,
              sat=False):
    x = rand_q(rng, xt, shape)
    N, C, H, W = shape
    sx = F32(rng.uniform(0.005, 0.05))
    sy = F32(sx * F32(rng.uniform(0.05, 0.1) if sat else rng.uniform(0.2, 2)))
    zx, zy = zero_of(rng, xt), zero_of(rng, yt, sat)
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dil
    pt, pl, pb, pr = pads
    OH = pool_out(H, kh, sh, dh, pt, pb, ceil)
    OW = pool_out(W, kw, sw, dw, pl, pr, ceil)
    xz = x.astype(np.int64) - zx
    y = np.zeros((N, C, OH, OW), NP[yt])
    for oh in range(OH):
        for ow in range(OW):
            acc = np.zeros((N, C), np.int64)
            count = padded = 0
            for i in range(kh):
                h = oh * sh + i * dh - pt
                for j in range(kw):
                    w = ow * sw + j * dw - pl
                    # taps past the end padding (ceil mode) never count
                    if h < H + pb and w < W + pr:
                        padded += 1
                    if 0 <= h < H and 0 <= w < W:
                        acc += xz[:, :, h, w]
                        count += 1
            n = padded if cip else max(count, 1)
            m = F32(sx) / F32(F32(sy) * F32(n))
            y[:, :, oh, ow] = saturate(np.rint(acc.astype(F32) * m), zy, yt)
    params = dict(op="qavg_pool2d", kernel_h=kh, kernel_w=kw, stride_h=sh,
                  stride_w=sw, dilation_h=dh, dilation_w=dw, pad_t=pt,
                  pad_l=pl, pad_b=pb, pad_r=pr, ceil_mode=int(ceil),
                  count_include_pad=int(cip), x_dtype=xt, x_scale=sx,
                  x_zero=zx, y_dtype=yt, y_scale=sy, y_zero=zy)
    return name, params, dict(x=x, y=y)


def qglobal_case(rng, name, shape, xt, yt):
    x = rand_q(rng, xt, shape)
    sx = F32(rng.uniform(0.005, 0.05))
    sy = F32(sx * F32(rng.uniform(0.2, 2)))
    zx, zy = zero_of(rng, xt), zero_of(rng, yt)
    n = shape[2] * shape[3]
    acc = (x.astype(np.int64) - zx).sum(axis=(2, 3), keepdims=True)
    m = F32(sx) / F32(F32(sy) * F32(n))
    y = saturate(np.rint(acc.astype(F32) * m), zy, yt)
    return name, dict(op="qglobal_avg_pool", x_dtype=xt, x_scale=sx,
                      x_zero=zx, y_dtype=yt, y_scale=sy, y_zero=zy), dict(x=x, y=y)


def qconcat_case(rng, name, shapes, axis, dtypes, yt):
    """Inputs whose dtype or quantisation is not y's are requantised."""
    sy, zy = F32(rng.uniform(0.005, 0.05)), zero_of(rng, yt)
    params = dict(op="qconcat", count=len(shapes), axis=axis, y_dtype=yt,
                  y_scale=sy, y_zero=zy)
    arrays, parts = {}, []
    for i, (shape, xt) in enumerate(zip(shapes, dtypes)):
        x = rand_q(rng, xt, shape)
        if xt == yt and i == 0:  # one input already in y's quantisation
            sx, zx = sy, zy
        else:
            sx, zx = F32(sy * F32(rng.uniform(0.2, 5))), zero_of(rng, xt)
        same = xt == yt and sx == sy and zx == zy
        parts.append(x if same else apply_table(
            x, xt, q_table(xt, sx, zx, "identity", 0, 0, yt, sy, zy)))
        params.update({"x%d_dtype" % i: xt, "x%d_scale" % i: sx,
                       "x%d_zero" % i: zx})
        arrays["x%d" % i] = x
    arrays["y"] = np.concatenate(parts, axis=axis).astype(NP[yt])
    return name, params, arrays


def new_cases():
    rng = np.random.default_rng(20261201)
    return [
        qbinary_case(rng, "qadd_i8_same_shape", "add", (2, 3, 5, 7),
                     (2, 3, 5, 7), "i8", "i8", "i8"),
        qbinary_case(rng, "qadd_u8_i8_channel", "add", (1, 8, 6, 6),
                     (1, 8, 1, 1), "u8", "i8", "u8"),
        qbinary_case(rng, "qadd_both_sides_saturating", "add", (2, 1, 5, 1),
                     (1, 4, 1, 6), "i8", "u8", "i8", sat=True),
        qbinary_case(rng, "qsub_i8_u8_last_dim", "sub", (2, 3, 4, 9), (9,),
                     "i8", "u8", "i8"),
        qbinary_case(rng, "qsub_u8_saturating", "sub", (5, 40), (5, 40),
                     "u8", "u8", "u8", sat=True),
        qbinary_case(rng, "qmul_u8_scalar", "mul", (3, 17, 5), (1,), "u8",
                     "u8", "i8"),
        qbinary_case(rng, "qmul_i8_saturating", "mul", (64, 33), (64, 33),
                     "i8", "i8", "u8", sat=True),
        qbinary_case(rng, "qmul_scalar_first", "mul", (1,), (2, 4, 3, 3),
                     "i8", "u8", "u8"),
        qunary_case(rng, "qunary_sigmoid_u8", "sigmoid", "u8", "u8", 16.0,
                    1.0 / 256, zy=0),
        qunary_case(rng, "qunary_sigmoid_i8", "sigmoid", "i8", "i8", 12.0,
                    1.0 / 256, zy=-128),
        qunary_case(rng, "qunary_hard_swish_i8", "hard_swish", "i8", "i8",
                    8.0, 0.05),
        qunary_case(rng, "qunary_hard_sigmoid_i8_u8", "hard_sigmoid", "i8",
                    "u8", 6.0, 1.0 / 200, alpha=0.25, beta=0.4),
        qunary_case(rng, "qunary_tanh_u8_i8", "tanh", "u8", "i8", 4.0,
                    1.0 / 128, zy=0),
        qunary_case(rng, "qunary_relu_i8_u8", "relu", "i8", "u8", 10.0,
                    0.04),
        qunary_case(rng, "qunary_leaky_relu_u8", "leaky_relu", "u8", "u8",
                    10.0, 0.05, alpha=0.1),
        requantize_case(rng, "requantize_i8_u8", "i8", "u8", 0.37),
        requantize_case(rng, "requantize_u8_i8", "u8", "i8", 2.9),
        lookup_case(rng, "lookup_i8_u8_table", "i8", "u8"),
        qavg_case(rng, "qavg_3x3_s2_p1_i8", (1, 4, 11, 12), (3, 3), (2, 2),
                  (1, 1), (1, 1, 1, 1), False, False, "i8", "i8"),
        qavg_case(rng, "qavg_2x2_ceil_include_pad_u8", (2, 3, 7, 9), (2, 2),
                  (2, 2), (1, 1), (0, 1, 1, 0), True, True, "u8", "u8"),
        qavg_case(rng, "qavg_3x2_dilated_u8_i8", (1, 5, 13, 10), (3, 2),
                  (1, 2), (2, 3), (2, 1, 0, 3), True, False, "u8", "i8"),
        qavg_case(rng, "qavg_5x5_saturating_i8_u8", (1, 2, 9, 9), (5, 5),
                  (1, 1), (1, 1), (2, 2, 2, 2), False, True, "i8", "u8",
                  sat=True),
        qglobal_case(rng, "qglobal_1x1", (2, 5, 1, 1), "u8", "i8"),
        qglobal_case(rng, "qglobal_7x7", (1, 16, 7, 7), "i8", "i8"),
        qglobal_case(rng, "qglobal_56x56", (1, 4, 56, 56), "u8", "u8"),
        qconcat_case(rng, "qconcat_three_axis1",
                     [(1, 2, 3, 4), (1, 5, 3, 4), (1, 1, 3, 4)], 1,
                     ["i8", "u8", "i8"], "i8"),
        qconcat_case(rng, "qconcat_two_last_axis", [(3, 5), (3, 2)], -1,
                     ["u8", "i8"], "u8"),
        # ceil mode's last windows hang past the end padding both ways
        qavg_case(rng, "qavg_3x3_ceil_overhang_include_pad", (1, 3, 9, 11),
                  (3, 3), (2, 2), (1, 1), (0, 1, 1, 0), True, True, "i8",
                  "u8"),
    ]


def write(outdir, name, params, arrays):
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "params.txt"), "w") as f:
        for k, v in params.items():
            if isinstance(v, (float, np.floating)):
                v = "%.9g" % float(F32(v))
            f.write("%s=%s\n" % (k, v))
    for k, v in arrays.items():
        if v is not None:
            np.save(os.path.join(d, k + ".npy"), v)


def main():
    args = sys.argv[1:]
    only_new = "--new" in args
    args = [a for a in args if a != "--new"]
    outdir = args[0] if args else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "int8")
    rng = np.random.default_rng(20261129)
    cases = [] if only_new else [
        conv_case(rng, "conv_3x3_u8_pertensor", 1, 8, 12, 12, 16, 3, 1, 1, 1,
                  1, 0, "u8", "u8", "u8", False, True),
        conv_case(rng, "conv_3x3_i8_perchannel_relu", 2, 6, 9, 11, 10, 3, 2,
                  1, 1, 1, 1, "i8", "i8", "i8", True, True),
        conv_case(rng, "conv_5x5_dil2_relu6", 1, 3, 14, 14, 4, 5, 1, 2, 2, 1,
                  2, "i8", "i8", "u8", True, False),
        conv_case(rng, "conv_dw_3x3", 1, 8, 10, 10, 8, 3, 1, 1, 1, 8, 0, "u8",
                  "i8", "u8", True, True),
        conv_case(rng, "conv_group2_1x1", 1, 8, 6, 6, 12, 1, 1, 0, 1, 2, 1,
                  "i8", "u8", "i8", False, True),
        conv_case(rng, "conv_1x1_deep", 1, 96, 7, 7, 40, 1, 1, 0, 1, 1, 0,
                  "u8", "i8", "i8", True, True),
        fc_case(rng, "fc_i8_perchannel", 3, 150, 37, 1, "i8", "i8", "i8",
                True, True, False),
        fc_case(rng, "fc_u8_pertensor", 2, 64, 10, 0, "u8", "u8", "u8",
                False, True, False),
        fc_case(rng, "matmul_i8", 5, 33, 9, 0, "i8", "i8", "i8", False,
                False, True),
        fc_case(rng, "matmul_u8_percolumn", 4, 70, 12, 0, "u8", "i8", "u8",
                True, False, True),
        quantize_case(rng, "quantize_i8", 200, "i8"),
        quantize_case(rng, "quantize_u8", 200, "u8"),
    ]
    cases += new_cases()
    for name, params, arrays in cases:
        write(outdir, name, params, arrays)
    print("wrote %d cases to %s" % (len(cases), outdir))


if __name__ == "__main__":
    main()
