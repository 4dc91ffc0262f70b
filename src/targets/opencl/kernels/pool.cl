/* Pooling, one output per work-item, exactly as src/ops/pool.c: window
 * tap i reads o*stride + i*dilation - pad_begin; max ignores padding; the
 * average divides by the taps inside the padded input (count_include_pad)
 * or inside the input, never counting what a ceil-mode window hangs past
 * the end padding. Global average pooling is the kernel with one window of
 * H x W, so averages sum with compensation (ksum_add): a window may be a
 * 16M-pixel image. Max pooling of i8/u8 compares exact small integers as
 * floats. */
#pragma OPENCL FP_CONTRACT ON

/* The taps [lo, hi) of a window starting at s0 (k taps, dilation d) that
 * fall in [0, n), as cpu_ops.c's pool_taps. */
int2 pool_taps(int s0, int k, int d, int n) {
  int lo = s0 < 0 ? (-s0 + d - 1) / d : 0;
  int hi = s0 >= n ? 0 : min(k, (n - 1 - s0) / d + 1);
  return (int2)(lo, max(hi, lo));
}

kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
pool2d(const global void *x, global void *y, constant int *g) {
  const int i = get_global_id(0);
  if (i >= g[E_COUNT])
    return;
  const int H = g[P_H], W = g[P_W], OH = g[P_OH], OW = g[P_OW];
  const int dt = g[P_DT], is_max = g[P_MAX], dh = g[P_DH], dw = g[P_DW];
  int ow = i % OW, oh = (i / OW) % OH, nc = i / (OW * OH);
  int h0 = oh * g[P_SH] - g[P_PT], w0 = ow * g[P_SW] - g[P_PL];
  int2 ti = pool_taps(h0, g[P_KH], dh, H), tj = pool_taps(w0, g[P_KW], dw, W);
  float acc = is_max ? -INFINITY : 0.0f, lost = 0.0f;
  const int base = nc * H * W + h0 * W + w0;
  for (int a = ti.x; a < ti.y; a++)
    for (int b = tj.x; b < tj.y; b++) {
      float v = ld_any(x, base + a * dh * W + b * dw, dt);
      if (is_max)
        acc = v > acc ? v : acc;
      else
        ksum_add(&acc, &lost, v);
    }
  if (!is_max) {
    int cnt = (ti.y - ti.x) * (tj.y - tj.x);
    if (g[P_INCL])
      cnt = pool_taps(h0, g[P_KH], dh, H + g[P_PB]).y *
            pool_taps(w0, g[P_KW], dw, W + g[P_PR]).y;
    acc /= (float)(cnt ? cnt : 1);
  }
  st_any(y, i, acc, dt);
}

/* Global average pooling: one work-group per (image, channel), each of
 * its WG1 work-items summing a strided share of the H x W values with
 * compensation, then a tree in local memory. (pool2d's one work-item per
 * output left a GPU idle: 302 us for 512 channels of 56x56 on the
 * H200.) */
kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
gap(const global void *x, global void *y, constant int *g) {
  const int c = get_group_id(0), t = get_local_id(0);
  const int hw = g[P_H] * g[P_W], dt = g[P_DT];
  float s = 0.0f, lost = 0.0f;
  if (c < g[P_NC])
    for (int i = t; i < hw; i += WG1)
      ksum_add(&s, &lost, ld_any(x, c * hw + i, dt));
  local float part[WG1];
  part[t] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int w = WG1 / 2; w > 0; w >>= 1) {
    if (t < w)
      part[t] += part[t + w];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0 && c < g[P_NC])
    st_any(y, c, part[0] / (float)hw, dt);
}
