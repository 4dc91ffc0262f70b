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

Usage: python3 tests/golden/gen_int8_golden.py [outdir]
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
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "int8")
    rng = np.random.default_rng(20261129)
    cases = [
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
    for name, params, arrays in cases:
        write(outdir, name, params, arrays)
    print("wrote %d cases to %s" % (len(cases), outdir))


if __name__ == "__main__":
    main()
