/* Shifted planes for the convolutions (conv_shift.h says what they are). */
#include "conv_shift.h"

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

void dg_cpu_shift_offsets(const dg_cpu_conv_shape *s, const dg_cpu_shift *g,
                          int64_t *off) {
  int64_t k = 0;
  for (int c = 0; c < s->C; c++)
    for (int kh = 0; kh < s->KH; kh++)
      for (int kw = 0; kw < s->KW; kw++) {
        int rh = kh * s->dh, rw = kw * s->dw;
        int ph = (rh % s->sh) * s->sw + rw % s->sw;
        off[k++] =
            c * g->cstride + ph * g->plane + (rh / s->sh) * g->q + rw / s->sw;
      }
}

/* dst[u] = src[2 u + first] for u in [lo, hi), for 1- and 4-byte
 * elements; restrict so that it vectorises. */
static void gather2_u8(uint8_t *restrict dst, const uint8_t *restrict src,
                       int64_t first, int64_t lo, int64_t hi) {
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
  for (int c = c0; c < c1; c++) {
    const uint8_t *xc = (const uint8_t *)x + elem * (size_t)c * s->H * s->W;
    uint8_t *pc = (uint8_t *)xp + elem * (size_t)(c * g->cstride);
    for (int ph = 0; ph < s->sh; ph++)
      for (int64_t r = 0; r < g->rows; r++) {
        int64_t ih = r * s->sh + ph - s->pt;
        for (int pw = 0; pw < s->sw; pw++) {
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
