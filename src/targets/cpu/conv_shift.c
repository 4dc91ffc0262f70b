/* Shifted planes for the convolutions (conv_shift.h says what they are). */
#include "conv_shift.h"

#include "cpu_kernels.h"
#include "depthwise.h" /* dg_cpu_out_cols */

#include <string.h>

dg_cpu_shift dg_cpu_shift_of(const dg_cpu_conv_shape *s) {
  dg_cpu_shift g;
  int64_t dc = (int64_t)(s->KW - 1) * s->dw / s->sw,
          dr = (int64_t)(s->KH - 1) * s->dh / s->sh;
  g.q = s->OW + dc;
  /* the last column read, f = n - 1 at offset dr q + dc, stays inside */
  g.rows = s->OH + dr + 1;
  g.plane = g.rows * g.q;
  g.cstride = (int64_t)s->sh * s->sw * g.plane;
  g.n = (int64_t)s->OH * g.q;
  return g;
}

int dg_cpu_shift_suits(const dg_cpu_conv_shape *s, size_t max_elems,
                       int overhang_div) {
  if (s->G != 1 || s->sh > 2 || s->sw > 2)
    return 0;
  dg_cpu_shift g = dg_cpu_shift_of(s);
  int64_t dc = g.q - s->OW;
  return dc * overhang_div <= g.q && g.n < (1 << 30) &&
         (int64_t)s->C * g.cstride <= (int64_t)max_elems;
}

int64_t *dg_cpu_shift_offsets(const dg_cpu_conv_shape *s, const dg_cpu_shift *g,
                              void *at) {
  const uintptr_t align = sizeof(int64_t);
  int64_t *off = (int64_t *)(((uintptr_t)at + align - 1) & ~(align - 1));
  int64_t k = 0;
  for (int c = 0; c < s->C; c++)
    for (int kh = 0; kh < s->KH; kh++)
      for (int kw = 0; kw < s->KW; kw++) {
        int rh = kh * s->dh, rw = kw * s->dw;
        int ph = (rh % s->sh) * s->sw + rw % s->sw;
        off[k++] =
            c * g->cstride + ph * g->plane + (rh / s->sh) * g->q + rw / s->sw;
      }
  return off;
}

/* dst[u] = src[2 u + first] for u in [lo, hi), for 1- and 4-byte
 * elements; restrict so that it vectorises. */
#if defined(__x86_64__) || defined(__i386__)
/* The even bytes of 64 by vpmovwb: 32 outputs an iteration (the stride-2
 * stems and downsampling convs of int8 models). */
DG_CPU_T512 static void gather2_u8_512(uint8_t *restrict dst,
                                       const uint8_t *restrict src,
                                       int64_t first, int64_t lo, int64_t hi) {
  int64_t u = lo;
  /* 64 bytes from 2u read one past the last odd byte: stop one early */
  for (; u + 33 <= hi; u += 32)
    _mm256_storeu_si256(
        (__m256i *)(dst + u),
        _mm512_cvtepi16_epi8(_mm512_and_si512(
            _mm512_loadu_si512(src + 2 * u + first), _mm512_set1_epi16(0xff))));
  for (; u < hi; u++)
    dst[u] = src[2 * u + first];
}
#endif

static void gather2_u8(uint8_t *restrict dst, const uint8_t *restrict src,
                       int64_t first, int64_t lo, int64_t hi) {
#if defined(__x86_64__) || defined(__i386__)
  if (dg_cpu_simd_level() >= DG_CPU_SIMD_AVX512) {
    gather2_u8_512(dst, src, first, lo, hi);
    return;
  }
#endif
  for (int64_t u = lo; u < hi; u++)
    dst[u] = src[2 * u + first];
}

static void gather2_f32(float *restrict dst, const float *restrict src,
                        int64_t first, int64_t lo, int64_t hi) {
  for (int64_t u = lo; u < hi; u++)
    dst[u] = src[2 * u + first];
}

void dg_cpu_shift_fill(const dg_cpu_conv_shape *s, const dg_cpu_shift *g,
                       const void *x, void *xp, size_t elem, uint8_t fill,
                       int c0, int c1) {
  const int64_t q = g->q;
  /* Only the phases some tap reads (a strided 1x1 reads one of four);
   * the others are left as they are. */
  int read[4] = {0};
  for (int kh = 0; kh < s->KH; kh++)
    for (int kw = 0; kw < s->KW; kw++)
      read[(kh * s->dh % s->sh) * s->sw + kw * s->dw % s->sw] = 1;
  for (int c = c0; c < c1; c++) {
    const uint8_t *xc = (const uint8_t *)x + elem * (size_t)c * s->H * s->W;
    uint8_t *pc = (uint8_t *)xp + elem * (size_t)(c * g->cstride);
    for (int ph = 0; ph < s->sh; ph++)
      for (int64_t r = 0; r < g->rows; r++) {
        int64_t ih = r * s->sh + ph - s->pt;
        for (int pw = 0; pw < s->sw; pw++) {
          if (!read[ph * s->sw + pw])
            continue;
          uint8_t *dst =
              pc + elem * (size_t)((ph * s->sw + pw) * g->plane + r * q);
          if (ih < 0 || ih >= s->H) {
            memset(dst, fill, elem * (size_t)q);
            continue;
          }
          const uint8_t *src = xc + elem * (size_t)(ih * s->W);
          int64_t first = pw - s->pl, lo, hi;
          dg_cpu_out_cols(q, s->W, s->sw, first, &lo, &hi);
          memset(dst, fill, elem * (size_t)lo);
          if (s->sw == 1)
            memcpy(dst + elem * (size_t)lo, src + elem * (size_t)(first + lo),
                   elem * (size_t)(hi - lo));
          else if (elem == 1)
            gather2_u8(dst, src, first, lo, hi);
          else
            gather2_f32((float *)dst, (const float *)src, first, lo, hi);
          memset(dst + elem * (size_t)hi, fill, elem * (size_t)(q - hi));
        }
      }
  }
}
