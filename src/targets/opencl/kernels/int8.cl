/* qbinary, lookup and qavg_pool2d on int8 as stored (cl_int8.c sets them
 * up), with the fp32 steps of docs/numerics.md ("int8 elementwise, lookup
 * and pooling") as src/ops/requant.h has them, so that they are bit-exact
 * with the CPU kernels and the reference. Every multiplier and ratio comes
 * from the host: OpenCL's fp32 division is not correctly rounded by
 * default, while its +, *, int -> float conversion and rint are, and with
 * contraction off each step rounds once. Reuses ld_q (common.cl),
 * requant and requant_out (qgemm.cl), bcast_item (compare.cl) and
 * pool_taps (pool.cl). Outputs are stored as the low byte of the int. */
#pragma OPENCL FP_CONTRACT OFF

/* y = a + b, a - b or a * b, broadcast through geom.h's strides. */
kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
qbinary_q8(const global uchar *a, const global uchar *b, global uchar *y,
           constant int *g) {
  int o[3];
  const int i = bcast_item(g, o);
  if (i < 0)
    return;
  const int da = ld_q(a, o[0], g[Q_ASGN]) - g[Q_ZA];
  const int db = ld_q(b, o[1], g[Q_BSGN]) - g[Q_ZB];
  const float fa = as_float(g[Q_FA]), fb = as_float(g[Q_FB]);
  int v;
  if (g[Q_MUL]) {
    v = requant(da * db, fa, g[Q_ZY], g[Q_LO], g[Q_HI]);
  } else { /* dg_requant_sum: two products, one sum, one rounding */
    float pa = convert_float(da) * fa;
    float pb = convert_float(db) * fb;
    float s = pa + pb;
    v = requant_out(rint(s), g[Q_ZY], g[Q_LO], g[Q_HI]);
  }
  y[i] = (uchar)v;
}

/* y = t[x - min]: an i8 byte indexes at x + 128, which is its bits ^ 0x80. */
kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
lookup_q8(const global uchar *x, const global uchar *t, global uchar *y,
          constant int *g) {
  const int i = get_global_id(0);
  if (i >= g[E_COUNT])
    return;
  y[i] = t[x[i] ^ (g[Q_ASGN] ? 0x80 : 0)];
}

/* The taps of a window starting at s0 (k taps, dilation d) before end. */
int qpool_before(int s0, int k, int d, int end) {
  return s0 >= end ? 0 : min(k, (end - 1 - s0) / d + 1);
}

/* Output o's window: the offset of its corner tap (possibly outside the
 * input), the rows *ti and columns *tj of its taps inside the input, and
 * its divisor as pool_ref counts it: the taps inside the input or, with
 * count_include_pad, inside the padded input (so not those a ceil-mode
 * window hangs past the end padding). */
int qpool_window(constant int *g, int o, int *base, int2 *ti, int2 *tj) {
  const int H = g[P_H], W = g[P_W], OH = g[P_OH], OW = g[P_OW];
  const int ow = o % OW, oh = (o / OW) % OH, nc = o / (OW * OH);
  const int h0 = oh * g[P_SH] - g[P_PT], w0 = ow * g[P_SW] - g[P_PL];
  *ti = pool_taps(h0, g[P_KH], g[P_DH], H);
  *tj = pool_taps(w0, g[P_KW], g[P_DW], W);
  *base = nc * H * W + h0 * W + w0;
  int n = (ti->y - ti->x) * (tj->y - tj->x);
  if (g[P_INCL])
    n = qpool_before(h0, g[P_KH], g[P_DH], H + g[P_PB]) *
        qpool_before(w0, g[P_KW], g[P_DW], W + g[P_PR]);
  return max(n, 1); /* the builder leaves every window an input tap */
}

/* One output per work-item; m[n - 1] is the multiplier of divisor n. */
kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
qavg_pool2d_q8(const global uchar *x, global uchar *y, constant int *g,
               const global float *m) {
  const int i = get_global_id(0);
  if (i >= g[E_COUNT])
    return;
  int base;
  int2 ti, tj;
  const int n = qpool_window(g, i, &base, &ti, &tj);
  const int W = g[P_W], dh = g[P_DH], dw = g[P_DW], sgn = g[Q_ASGN];
  const int zx = g[Q_ZA];
  int acc = 0;
  for (int r = ti.x; r < ti.y; r++)
    for (int c = tj.x; c < tj.y; c++)
      acc += ld_q(x, base + r * dh * W + c * dw, sgn) - zx;
  y[i] = (uchar)requant(acc, m[n - 1], g[Q_ZY], g[Q_LO], g[Q_HI]);
}

/* Large windows (global pooling): one work-group per output, each
 * work-item summing a strided share of the window's taps, then a tree in
 * local memory. Integer sums are exact in any order. */
kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
qavg_pool2d_wg_q8(const global uchar *x, global uchar *y, constant int *g,
                  const global float *m) {
  const int o = get_group_id(0), t = get_local_id(0);
  int base, n = 1, acc = 0;
  int2 ti, tj;
  if (o < g[E_COUNT]) {
    n = qpool_window(g, o, &base, &ti, &tj);
    const int W = g[P_W], dh = g[P_DH], dw = g[P_DW], sgn = g[Q_ASGN];
    const int zx = g[Q_ZA], cols = tj.y - tj.x;
    const int taps = (ti.y - ti.x) * cols;
    for (int k = t; k < taps; k += WG1) {
      int r = ti.x + k / cols, c = tj.x + k % cols;
      acc += ld_q(x, base + r * dh * W + c * dw, sgn) - zx;
    }
  }
  local int part[WG1];
  part[t] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int w = WG1 / 2; w > 0; w >>= 1) {
    if (t < w)
      part[t] += part[t + w];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0 && o < g[E_COUNT])
    y[o] = (uchar)requant(part[0], m[n - 1], g[Q_ZY], g[Q_LO], g[Q_HI]);
}
