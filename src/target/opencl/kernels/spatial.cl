/* The spatial family, one output per work-item. resize: where each
 * output row and column samples the input comes tabulated from the host
 * (dg_resize_tap, src/ops/resize.c, the reference's own rule), so every
 * coordinate mode and rounding is the reference's; nearest copies the
 * value (exact for every dtype through ld_any / st_any), linear blends
 * the four neighbours. */
#pragma OPENCL FP_CONTRACT ON

kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
resize(const global void *x, global void *y, constant int *g,
       const global int *taps) {
  const int i = get_global_id(0);
  if (i >= g[E_COUNT])
    return;
  const int W = g[R_W], OH = g[R_OH], OW = g[R_OW], dt = g[R_DT];
  int ow = i % OW, oh = (i / OW) % OH, c = i / (OW * OH);
  int th = 3 * oh, tw = 3 * (OH + ow);
  int base = c * g[R_H] * W;
  int r0 = base + taps[th] * W, c0 = taps[tw];
  float v = ld_any(x, r0 + c0, dt);
  if (g[R_LINEAR]) {
    int r1 = base + taps[th + 1] * W, c1 = taps[tw + 1];
    float wh = as_float(taps[th + 2]), ww = as_float(taps[tw + 2]);
    float a = (1.0f - ww) * v + ww * ld_any(x, r0 + c1, dt);
    float b = (1.0f - ww) * ld_any(x, r1 + c0, dt) + ww * ld_any(x, r1 + c1, dt);
    v = (1.0f - wh) * a + wh * b;
  }
  st_any(y, i, v, dt);
}

/* Inference batch norm: (x - mean) * (scale / sqrt(var + eps)) + bias. */
kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
batch_norm(const global void *x, const global void *scale,
           const global void *bias, const global void *mean,
           const global void *var, global void *y, constant int *g) {
  const int i = get_global_id(0);
  if (i >= g[E_COUNT])
    return;
  const int hio = g[E_HIO], c = (i / g[B_INNER]) % g[B_C];
  float a = ld_f(scale, c, hio) / sqrt(ld_f(var, c, hio) + as_float(g[B_EPS]));
  float v = (ld_f(x, i, hio) - ld_f(mean, c, hio)) * a + ld_f(bias, c, hio);
  st_f(y, i, v, hio);
}
