/* The spatial family (resize, batch norm, conv transpose, cast), one output per
 * work-item. resize: where each
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

/* Transposed convolution in the conv geometry (geom.h's G_*: G_C input
 * channels in groups of G_CG, G_O outputs in groups of G_OG, weights
 * [C][OG][KH][KW]), one output per work-item gathering the inputs whose
 * window covers it: an input row ih reaches oh = ih * SH + kh * DH - PT. */
kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
conv_transpose(const global void *x, const global void *w,
               const global void *bias, global void *y, constant int *g) {
  const int i = get_global_id(0);
  const int O = g[G_O], OH = g[G_OH], OW = g[G_OW];
  if (i >= g[G_NIMG] * O * OH * OW)
    return;
  const int hio = g[G_HIO], C = g[G_C], H = g[G_H], W = g[G_W];
  const int KH = g[G_KH], KW = g[G_KW], SH = g[G_SH], SW = g[G_SW];
  const int CG = g[G_CG], OG = g[G_OG];
  int ow = i % OW, oh = (i / OW) % OH, o = (i / (OW * OH)) % O,
      b = i / (OW * OH * O);
  int grp = o / OG, oc = o % OG;
  float s = 0.0f;
  for (int c = grp * CG; c < (grp + 1) * CG; c++) {
    int xb = (b * C + c) * H * W, wb = (c * OG + oc) * KH * KW;
    for (int kh = 0; kh < KH; kh++) {
      int th = oh + g[G_PT] - kh * g[G_DH];
      if (th < 0 || th % SH || th / SH >= H)
        continue;
      for (int kw = 0; kw < KW; kw++) {
        int tw = ow + g[G_PL] - kw * g[G_DW];
        if (tw < 0 || tw % SW || tw / SW >= W)
          continue;
        s += ld_f(x, xb + th / SH * W + tw / SW, hio) *
             ld_f(w, wb + kh * KW + kw, hio);
      }
    }
  }
  if (g[G_BIAS])
    s += ld_f(bias, o, hio);
  st_f(y, i, fmin(fmax(s, as_float(g[G_LO])), as_float(g[G_HI])), hio);
}

/* cast between f32, f16, i32, i64 and bool: to an integer toward zero,
 * saturating, NaN to 0 (convert_*_sat_rtz does all three); integers
 * travel as long (narrowed to i32 saturating, as the reference does),
 * bool is "not zero" (NaN included), and a cast to the same type copies
 * the bits. */
kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
cast(const global void *x, global void *y, constant int *g) {
  const int i = get_global_id(0);
  if (i >= g[E_COUNT])
    return;
  const int from = g[C_FROM], to = g[C_TO];
  if (from == to) {
    if (from == DT_F16)
      ((global ushort *)y)[i] = ((const global ushort *)x)[i];
    else if (from == DT_I64)
      ((global long *)y)[i] = ((const global long *)x)[i];
    else if (from == DT_BOOL)
      ((global uchar *)y)[i] = ((const global uchar *)x)[i];
    else
      ((global int *)y)[i] = ((const global int *)x)[i];
    return;
  }
  const bool from_int = from == DT_I32 || from == DT_I64 || from == DT_BOOL;
  long iv = from == DT_I32    ? (long)((const global int *)x)[i]
            : from == DT_I64  ? ((const global long *)x)[i]
            : from == DT_BOOL ? (long)(((const global uchar *)x)[i] != 0)
                              : 0;
  float v = from_int ? convert_float(iv) : ld_f(x, i, from == DT_F16);
  if (to == DT_I32)
    ((global int *)y)[i] = from_int ? convert_int_sat(iv)
                                    : convert_int_sat_rtz(v);
  else if (to == DT_I64)
    ((global long *)y)[i] = from_int ? iv : convert_long_sat_rtz(v);
  else if (to == DT_BOOL)
    ((global uchar *)y)[i] = from_int ? iv != 0 : v != 0.0f;
  else
    st_f(y, i, v, to == DT_F16);
}
