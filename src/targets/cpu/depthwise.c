/* f32 depthwise convolution (depthwise.h): one (image, channel) plane at a
 * time, a row of outputs accumulated across the taps so that the inner
 * loop runs along the row, unit-stride for stride 1, which the compiler
 * vectorises at each SIMD level. Per output the sum is the taps in (kh,
 * kw) order, then the bias, as the reference does; with no FMA
 * contraction (-ffp-contract=off) every level gives the same bits. */
#include "depthwise.h"

#include "cpu_kernels.h"

#include <stdbool.h>
#include <string.h>

enum { ROW_MAX = 2048 }; /* the accumulator row, on the stack */

/* One plane; sw is a constant where inlined (1, 2). Stride 2 reads the
 * row split into its even and odd columns, so that every tap is a
 * unit-stride run again: input column 2 ow + off is even[ow + off / 2]
 * for even off, odd[ow + (off - 1) / 2] for odd off. */
static inline __attribute__((always_inline)) void
plane(const dg_conv_geom *d, const float *restrict x, const float *restrict w,
      float bias, const float *restrict res, float *restrict y, float lo,
      float hi, int sw) {
  float acc[ROW_MAX], ev[ROW_MAX + 1], od[ROW_MAX + 1];
  const int64_t OW = d->OW;
  const bool split = sw == 2 && d->W <= 2 * ROW_MAX;
  /* Each tap column's output range is the same on every row: found once
   * (its divisions cost more than small planes' rows otherwise). */
  enum { MAX_KW = 16 };
  int64_t col_a[MAX_KW], col_b[MAX_KW];
  for (int64_t kw = 0; kw < d->KW && kw < MAX_KW; kw++)
    dg_cpu_out_cols(OW, d->W, sw, kw * d->dw - d->pl, &col_a[kw], &col_b[kw]);
  for (int64_t oh = 0; oh < d->OH; oh++) {
    memset(acc, 0, sizeof(float) * (size_t)OW);
    for (int64_t kh = 0; kh < d->KH; kh++) {
      int64_t ih = oh * d->sh - d->pt + kh * d->dh;
      if (ih < 0 || ih >= d->H)
        continue;
      const float *xr = x + ih * d->W;
      if (split) {
        for (int64_t i = 0; i < (d->W + 1) / 2; i++)
          ev[i] = xr[2 * i];
        for (int64_t i = 0; i < d->W / 2; i++)
          od[i] = xr[2 * i + 1];
      }
      for (int64_t kw = 0; kw < d->KW; kw++) {
        const float wv = w[kh * d->KW + kw];
        int64_t off = kw * d->dw - d->pl, a, b;
        if (kw < MAX_KW)
          a = col_a[kw], b = col_b[kw];
        else
          dg_cpu_out_cols(OW, d->W, sw, off, &a, &b);
        if (split) {
          const float *xs = off & 1 ? od + (off - 1) / 2 : ev + off / 2;
          for (int64_t ow = a; ow < b; ow++)
            acc[ow] += wv * xs[ow];
          continue;
        }
        const float *xs = xr + off;
        for (int64_t ow = a; ow < b; ow++)
          acc[ow] += wv * xs[ow * sw];
      }
    }
    float *yr = y + oh * OW;
    if (res)
      for (int64_t ow = 0; ow < OW; ow++)
        acc[ow] = (acc[ow] + bias) + res[oh * OW + ow];
    else
      for (int64_t ow = 0; ow < OW; ow++)
        acc[ow] = acc[ow] + bias;
    for (int64_t ow = 0; ow < OW; ow++) {
      float s = acc[ow];
      yr[ow] = s < lo ? lo : (s > hi ? hi : s);
    }
  }
}

#define PLANES(name, attr)                                                     \
  static attr void name(const dg_conv_geom *d, const float *x, const float *w, \
                        float bias, const float *r, float *y, float lo,        \
                        float hi) {                                            \
    if (d->sw == 1)                                                            \
      plane(d, x, w, bias, r, y, lo, hi, 1);                                   \
    else if (d->sw == 2)                                                       \
      plane(d, x, w, bias, r, y, lo, hi, 2);                                   \
    else                                                                       \
      plane(d, x, w, bias, r, y, lo, hi, d->sw);                               \
  }

PLANES(plane_base, )
#if defined(__x86_64__)
PLANES(plane_avx2, __attribute__((target("avx2"))))
PLANES(plane_avx512, DG_CPU_T512)
#endif

bool dg_cpu_depthwise_fits(const dg_conv_geom *d) { return d->OW <= ROW_MAX; }

void dg_cpu_depthwise_plane(const dg_conv_geom *d, const float *x,
                            const float *w, float bias, const float *r,
                            float *y, float lo, float hi) {
#if defined(__x86_64__)
  int level = dg_cpu_simd_level();
  if (level >= DG_CPU_SIMD_AVX512) {
    plane_avx512(d, x, w, bias, r, y, lo, hi);
    return;
  }
  if (level >= DG_CPU_SIMD_AVX2) {
    plane_avx2(d, x, w, bias, r, y, lo, hi);
    return;
  }
#endif
  plane_base(d, x, w, bias, r, y, lo, hi);
}
