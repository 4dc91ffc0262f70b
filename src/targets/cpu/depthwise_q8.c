/* int8 depthwise convolution by int32 sums, one plane at a time
 * (depthwise.h): the kernel for taps too many for depthwise.c's float
 * sums to stay exact (over 258). The plane is first widened once into int32 (x
 * - zx), split into even and odd columns for stride 2, so that every tap is a
 * unit-stride run of int32 multiply-adds into a row of sums, which the compiler
 * vectorises at each SIMD level. The sums are exact integers, so the result is
 * the reference's bit for bit whatever the order; the requantisation is
 * requant.h's dg_requant_out_q8, again the same bits. */
#include "depthwise.h"

#include "cpu_kernels.h"

#include "ops/requant.h" /* dg_requant_out_q8 */

#include <string.h>

size_t dg_cpu_depthwise_q8_int32_scratch(const dg_conv_geom *d) {
  /* the widened plane (+1 column per row for the odd half), a row of
   * sums, and the caller's taps */
  return sizeof(int32_t) * (size_t)(d->H * (d->W + 1) + d->OW + d->KH * d->KW);
}

static inline __attribute__((always_inline)) void
q8_plane(const dg_conv_geom *d, const uint8_t *restrict x, bool xs, int32_t zx,
         const int32_t *restrict wv, int32_t bias, float m, int32_t zy,
         int32_t lo, int32_t hi, uint8_t *restrict y, int32_t *restrict buf,
         int sw) {
  const int64_t W = d->W, OW = d->OW;
  /* Row ih of the widened plane: W + 1 ints; for stride 2 its even
   * columns first ((W + 1) / 2 of them), then its odd ones. */
  const int64_t ne = (W + 1) / 2, rs = W + 1;
  int32_t *restrict acc = buf + d->H * rs;
  for (int64_t ih = 0; ih < d->H; ih++) {
    const uint8_t *src = x + ih * W;
    int32_t *dst = buf + ih * rs;
    if (sw == 2) {
      for (int64_t i = 0; i < W; i++)
        dst[(i & 1) * ne + (i >> 1)] =
            (xs ? (int32_t)(int8_t)src[i] : (int32_t)src[i]) - zx;
    } else if (xs) {
      for (int64_t i = 0; i < W; i++)
        dst[i] = (int32_t)(int8_t)src[i] - zx;
    } else {
      for (int64_t i = 0; i < W; i++)
        dst[i] = (int32_t)src[i] - zx;
    }
  }
  const float flo = (float)(lo - zy), fhi = (float)(hi - zy);
  for (int64_t oh = 0; oh < d->OH; oh++) {
    for (int64_t ow = 0; ow < OW; ow++)
      acc[ow] = bias;
    for (int64_t kh = 0; kh < d->KH; kh++) {
      int64_t ih = oh * d->sh - d->pt + kh * d->dh;
      if (ih < 0 || ih >= d->H)
        continue;
      const int32_t *row = buf + ih * rs;
      for (int64_t kw = 0; kw < d->KW; kw++) {
        const int32_t w = wv[kh * d->KW + kw];
        int64_t off = kw * d->dw - d->pl, a, b;
        dg_cpu_out_cols(OW, W, sw, off, &a, &b);
        const int32_t *s;
        if (sw == 2) /* column 2 ow + off */
          s = off & 1 ? row + ne + (off - 1) / 2 : row + off / 2;
        else
          s = row + off;
        if (sw <= 2)
          for (int64_t ow = a; ow < b; ow++)
            acc[ow] += s[ow] * w;
        else
          for (int64_t ow = a; ow < b; ow++)
            acc[ow] += s[ow * sw] * w;
      }
    }
    uint8_t *yr = y + oh * OW;
    for (int64_t ow = 0; ow < OW; ow++)
      yr[ow] = dg_requant_out_q8((float)acc[ow] * m, zy, flo, fhi);
  }
}

#define Q8_PLANES(name, attr)                                                  \
  static attr void name(const dg_conv_geom *d, const uint8_t *x, bool xs,      \
                        int32_t zx, const int32_t *wv, int32_t bias, float m,  \
                        int32_t zy, int32_t lo, int32_t hi, uint8_t *y,        \
                        int32_t *buf) {                                        \
    if (d->sw == 1)                                                            \
      q8_plane(d, x, xs, zx, wv, bias, m, zy, lo, hi, y, buf, 1);              \
    else if (d->sw == 2)                                                       \
      q8_plane(d, x, xs, zx, wv, bias, m, zy, lo, hi, y, buf, 2);              \
    else                                                                       \
      q8_plane(d, x, xs, zx, wv, bias, m, zy, lo, hi, y, buf, d->sw);          \
  }

Q8_PLANES(q8_base, )
#if defined(__x86_64__)
Q8_PLANES(q8_avx2, __attribute__((target("avx2"))))
Q8_PLANES(q8_avx512, DG_CPU_T512)
#endif

void dg_cpu_depthwise_q8_int32(const dg_conv_geom *d, const uint8_t *x,
                               bool x_signed, int32_t zx, const int32_t *wv,
                               int32_t bias, float m, int32_t zy, int32_t lo,
                               int32_t hi, uint8_t *y, void *scratch) {
#if defined(__x86_64__)
  int level = dg_cpu_simd_level();
  if (level >= DG_CPU_SIMD_AVX512) {
    q8_avx512(d, x, x_signed, zx, wv, bias, m, zy, lo, hi, y, scratch);
    return;
  }
  if (level >= DG_CPU_SIMD_AVX2) {
    q8_avx2(d, x, x_signed, zx, wv, bias, m, zy, lo, hi, y, scratch);
    return;
  }
#endif
  q8_base(d, x, x_signed, zx, wv, bias, m, zy, lo, hi, y, scratch);
}
