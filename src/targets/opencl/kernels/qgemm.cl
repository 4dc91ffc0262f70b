/* int8 GEMM for qconv2d (implicit GEMM, as gemm.cl), qfully_connected and
 * qmatmul: acc = sum (a - za) * (b - zb) + bias in int32, exactly, then
 * the requantisation of docs/numerics.md with the multipliers computed on
 * the host by dg_requant_multiplier. No contraction: the int -> float
 * conversion, the product and the rounding are separate statements. */
#pragma OPENCL FP_CONTRACT OFF

/* (x - zx) for B(k, n) of a quantised convolution; padding gives 0. */
int conv_b_q(const global uchar *x, constant int *g, int z, int k, int n) {
  int khw = g[G_KH] * g[G_KW], ohw = g[G_OH] * g[G_OW];
  int c = k / khw, r = k - c * khw;
  int kh = r / g[G_KW], kw = r - kh * g[G_KW];
  int img = n / ohw, p = n - img * ohw;
  int oh = p / g[G_OW], ow = p - oh * g[G_OW];
  int ih = oh * g[G_SH] - g[G_PT] + kh * g[G_DH];
  int iw = ow * g[G_SW] - g[G_PL] + kw * g[G_DW];
  if (ih < 0 || ih >= g[G_H] || iw < 0 || iw >= g[G_W])
    return 0;
  int ci = z * g[G_CG] + c;
  return ld_q(x, ((img * g[G_C] + ci) * g[G_H] + ih) * g[G_W] + iw,
              g[G_BSGN]) - g[G_ZX];
}

/* The contract's step 4 for a rounded v (requant.h's dg_requant_out).
 * Beyond +-1024 the result saturates whatever the zero point (|zy| and
 * the bounds are within 0..255 of zero), so clamping here keeps the
 * integer arithmetic in range without changing any result. A NaN (only
 * int8.cl's qbinary add makes one, inf - inf from scale ratios near
 * FLT_MAX) gives lo: requant.h's conversion of it is undefined in C. */
int requant_out(float v, int zy, int lo, int hi) {
  v = v >= -1024.0f ? (v > 1024.0f ? 1024.0f : v) : -1024.0f;
  int y = (int)v + zy;
  return y < lo ? lo : (y > hi ? hi : y);
}

/* The contract's steps 3-5 for one accumulator. */
int requant(int acc, float m, int zy, int lo, int hi) {
  float f = convert_float(acc); /* round to nearest even */
  float v = f * m;              /* one rounding, never fused */
  return requant_out(rint(v), zy, lo, hi); /* rint: half to even */
}

kernel __attribute__((reqd_work_group_size(16, 16, 1))) void
gemm_q8(const global uchar *a, const global uchar *b, const global int *bias,
        global uchar *c, constant int *g, const global int *offs,
        const global float *mult, const global int *wz) {
  local int As[TK][TS + 1];
  local int Bs[TK][TS + 1];
  const int M = g[G_M], N = g[G_N], K = g[G_K], mode = g[G_MODE];
  const int sam = g[G_SAM], sak = g[G_SAK], sbk = g[G_SBK], sbn = g[G_SBN];
  const int wside = g[G_WSIDE], pc = g[G_PC], zx = g[G_ZX];
  const int asg = g[G_ASGN], bsg = g[G_BSGN];
  const int tx = get_local_id(0), ty = get_local_id(1), lid = ty * 16 + tx;
  const int n0 = get_group_id(0) * TS, m0 = get_group_id(1) * TS;
  const int z = get_global_id(2);
  const int aoff = offs[3 * z], boff = offs[3 * z + 1];
  const int cbase = mode ? z * g[G_OG] : 0; /* channel of row 0 */
  int acc[RB][RB];
  for (int i = 0; i < RB; i++)
    for (int j = 0; j < RB; j++)
      acc[i][j] = 0;
  for (int k0 = 0; k0 < K; k0 += TK) {
    for (int e = lid; e < TS * TK; e += 256) {
      int mm, kk;
      if (sak == 1) {
        mm = e / TK;
        kk = e - mm * TK;
      } else {
        kk = e / TS;
        mm = e - kk * TS;
      }
      int m = m0 + mm, k = k0 + kk, v = 0;
      if (m < M && k < K) {
        int za = wside ? zx : wz[pc ? cbase + m : 0];
        v = ld_q(a, aoff + m * sam + k * sak, asg) - za;
      }
      As[kk][mm] = v;
    }
    for (int e = lid; e < TS * TK; e += 256) {
      int nn, kk;
      if (sbk == 1 && mode == 0) {
        nn = e / TK;
        kk = e - nn * TK;
      } else {
        kk = e / TS;
        nn = e - kk * TS;
      }
      int n = n0 + nn, k = k0 + kk, v = 0;
      if (n < N && k < K) {
        if (mode) {
          v = conv_b_q(b, g, z, k, n);
        } else {
          int zb = wside ? wz[pc ? n : 0] : zx;
          v = ld_q(b, boff + k * sbk + n * sbn, bsg) - zb;
        }
      }
      Bs[kk][nn] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < TK; kk++) {
      int av[RB], bv[RB];
      for (int i = 0; i < RB; i++)
        av[i] = As[kk][ty + 16 * i];
      for (int j = 0; j < RB; j++)
        bv[j] = Bs[kk][tx + 16 * j];
      for (int i = 0; i < RB; i++)
        for (int j = 0; j < RB; j++)
          acc[i][j] += av[i] * bv[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const int zy = g[G_ZY], lo = g[G_LO], hi = g[G_HI], bmode = g[G_BIAS];
  const int ysg = g[G_YSGN];
  for (int i = 0; i < RB; i++) {
    int m = m0 + ty + 16 * i;
    if (m >= M)
      continue;
    for (int j = 0; j < RB; j++) {
      int n = n0 + tx + 16 * j;
      if (n >= N)
        continue;
      int ch = wside ? n : cbase + m; /* output channel */
      int v = acc[i][j];
      if (bmode)
        v += bias[ch];
      int y = requant(v, mult[pc ? ch : 0], zy, lo, hi);
      int ci;
      if (mode) {
        int ohw = g[G_OH] * g[G_OW], img = n / ohw;
        ci = (img * g[G_O] + ch) * ohw + (n - img * ohw);
      } else {
        ci = offs[3 * z + 2] + m * g[G_SCM] + n * g[G_SCN];
      }
      c[ci] = ysg ? (uchar)(char)y : (uchar)y;
    }
  }
}

/* One output per work-item, as gemm_small_f32 (small M, CPU devices). */
kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
gemm_small_q8(const global uchar *a, const global uchar *b,
              const global int *bias, global uchar *c, constant int *g,
              const global int *offs, const global float *mult,
              const global int *wz) {
  const int M = g[G_M], N = g[G_N], K = g[G_K], mode = g[G_MODE];
  const int i = get_global_id(0), z = get_global_id(1);
  if (i >= M * N)
    return;
  const int m = i / N, n = i - m * N;
  const int sam = g[G_SAM], sak = g[G_SAK], sbk = g[G_SBK], sbn = g[G_SBN];
  const int wside = g[G_WSIDE], pc = g[G_PC], zx = g[G_ZX];
  const int asg = g[G_ASGN], bsg = g[G_BSGN];
  const int cbase = mode ? z * g[G_OG] : 0;
  const int za = wside ? zx : wz[pc ? cbase + m : 0];
  const int aoff = offs[3 * z] + m * sam, boff = offs[3 * z + 1] + n * sbn;
  int acc = 0;
  if (mode) {
    for (int k = 0; k < K; k++)
      acc += (ld_q(a, aoff + k * sak, asg) - za) * conv_b_q(b, g, z, k, n);
  } else {
    const int zb = wside ? wz[pc ? n : 0] : zx;
    for (int k = 0; k < K; k++)
      acc += (ld_q(a, aoff + k * sak, asg) - za) *
             (ld_q(b, boff + k * sbk, bsg) - zb);
  }
  int ch = wside ? n : cbase + m;
  if (g[G_BIAS])
    acc += bias[ch];
  int y = requant(acc, mult[pc ? ch : 0], g[G_ZY], g[G_LO], g[G_HI]);
  int ci;
  if (mode) {
    int ohw = g[G_OH] * g[G_OW], img = n / ohw;
    ci = (img * g[G_O] + ch) * ohw + (n - img * ohw);
  } else {
    ci = offs[3 * z + 2] + m * g[G_SCM] + n * g[G_SCN];
  }
  c[ci] = g[G_YSGN] ? (uchar)(char)y : (uchar)y;
}
