/* f32 depthwise convolution sixteen channels at a time (depthwise.h).
 *
 * The banded kernel (depthwise.c) vectorises along a plane's rows, so a
 * 14x14 or 7x7 plane (MobileNet's last stages, hundreds of channels) is
 * mostly fixed costs: a dozen row copies, a few part-filled vectors, the
 * epilogue, per plane. Here the vectors run across sixteen channels
 * instead: the block's planes are transposed into one zero-padded tile
 * whose cell (row, column) holds the sixteen channels' values, every tap
 * of every output is then one load, one multiply and one add of a full
 * vector, and the sums are transposed back into the planes with the
 * residual and clamp. The transposes are 16 x 16 in registers.
 *
 * Exactness is the banded kernel's: per output the taps in (kh, kw) order
 * from +0, multiply then add (never fused), padded taps w * 0, then the
 * bias, the residual and the clamp; vectors across channels change no
 * output's order. So the bits are the same as at every other level. */
#include "depthwise.h"

#include "cpu_kernels.h"

#include <stdint.h>
#include <string.h>

enum {
  MAX_TAPS = 64,      /* weights kept as a vector per tap */
  MAX_TILE = 1 << 18, /* floats of tile and sums: 1 MiB, about L2 */
  OUT_RUN = 8,
  DW_EXACT_TAPS = 258,
  /* 258 * 255 * 255 < 2^24: int8 sums exact */ /* outputs summed at once: eight
                                                   add chains */
  ALIGN_FLOATS = 16,                            /* 64 bytes */
};

typedef struct c16_geom {
  int64_t hp, wp;               /* the padded tile's rows and columns */
  size_t tile, sums, wv, total; /* offsets and size, in floats */
} c16_geom;

static int64_t pad_bottom(const dg_conv_geom *d) {
  int64_t need = (d->OH - 1) * d->sh + (d->KH - 1) * d->dh + 1;
  return need - d->pt - d->H > 0 ? need - d->pt - d->H : 0;
}

static int64_t pad_right(const dg_conv_geom *d) {
  int64_t need = (d->OW - 1) * d->sw + (d->KW - 1) * d->dw + 1;
  return need - d->pl - d->W > 0 ? need - d->pl - d->W : 0;
}

static c16_geom geom_of(const dg_conv_geom *d) {
  c16_geom g;
  g.hp = d->pt + d->H + pad_bottom(d);
  g.wp = d->pl + d->W + pad_right(d);
  g.tile = 0;
  g.sums = (size_t)(g.hp * g.wp * 16);
  g.wv = g.sums + (size_t)(d->OH * d->OW * 16);
  g.total = g.wv + (size_t)(d->KH * d->KW * 16);
  return g;
}

bool dg_cpu_depthwise_q8_c16_takes(const dg_conv_geom *d) {
  /* the sums exact in float, as the banded int8 kernel's */
  return d->KH * d->KW <= DW_EXACT_TAPS && dg_cpu_depthwise_c16_takes(d);
}

bool dg_cpu_depthwise_c16_takes(const dg_conv_geom *d) {
#if defined(__x86_64__)
  if (dg_cpu_simd_level() < DG_CPU_SIMD_AVX512 || d->KH * d->KW > MAX_TAPS ||
      d->pt < 0 || d->pl < 0 || d->H > MAX_TILE || d->W > MAX_TILE ||
      d->OH > MAX_TILE || d->OW > MAX_TILE)
    return false;
  return geom_of(d).total <= MAX_TILE;
#else
  (void)d;
  return false;
#endif
}

size_t dg_cpu_depthwise_c16_scratch(const dg_conv_geom *d) {
  return dg_cpu_depthwise_c16_takes(d) ? sizeof(float) * geom_of(d).total : 0;
}

#if defined(__x86_64__)
#include <immintrin.h>

#define T512 DG_CPU_T512

/* r[i] lane j becomes r[j] lane i. */
static inline __attribute__((always_inline)) T512 void tr16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  /* u[4g + m], 128-bit lane k: rows 4g..4g+3 of column 4k + m */
  for (int g = 0; g < 4; g++) {
    u[4 * g] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    u[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
    u[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    u[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
  for (int m = 0; m < 4; m++) {
    __m512 v0 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0x44),
           v1 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0xEE),
           v2 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0x44),
           v3 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0xEE);
    r[m] = _mm512_shuffle_f32x4(v0, v2, 0x88);
    r[4 + m] = _mm512_shuffle_f32x4(v0, v2, 0xDD);
    r[8 + m] = _mm512_shuffle_f32x4(v1, v3, 0x88);
    r[12 + m] = _mm512_shuffle_f32x4(v1, v3, 0xDD);
  }
}

static inline __mmask16 first_lanes(int64_t n) {
  return n >= 16 ? (__mmask16)0xffff
                 : (__mmask16)(((uint32_t)1 << (n > 0 ? n : 0)) - 1);
}

/* The block's nch planes of x (plane floats apart) into the tile:
 * cell (pt + ih, pl + iw) = the channels' x[ih][iw]; the border zero. */
static T512 void tile_in(const dg_conv_geom *d, const c16_geom *g,
                         const float *x, int64_t plane, int nch, float *tile) {
  const __m512 z = _mm512_setzero_ps();
  int64_t right = g->wp - d->pl - d->W;
  for (int64_t r = 0; r < g->hp; r++) {
    float *row = tile + r * g->wp * 16;
    int64_t ih = r - d->pt;
    if (ih < 0 || ih >= d->H) {
      for (int64_t c = 0; c < g->wp; c++)
        _mm512_storeu_ps(row + c * 16, z);
      continue;
    }
    for (int64_t c = 0; c < d->pl; c++)
      _mm512_storeu_ps(row + c * 16, z);
    for (int64_t c = 0; c < right; c++)
      _mm512_storeu_ps(row + (d->pl + d->W + c) * 16, z);
    float *cells = row + d->pl * 16;
    for (int64_t iw0 = 0; iw0 < d->W; iw0 += 16) {
      __mmask16 m = first_lanes(d->W - iw0);
      __m512 v[16];
      for (int j = 0; j < 16; j++)
        v[j] = j < nch
                   ? _mm512_maskz_loadu_ps(m, x + j * plane + ih * d->W + iw0)
                   : z;
      tr16(v);
      int64_t n = d->W - iw0 < 16 ? d->W - iw0 : 16;
      for (int64_t i = 0; i < n; i++)
        _mm512_storeu_ps(cells + (iw0 + i) * 16, v[i]);
    }
  }
}

/* N outputs from p (step apart in the tile), each a chain of adds: the
 * row count a constant so the sums stay in registers. */
static inline __attribute__((always_inline)) T512 void
run_sums(const int N, const float *p, int64_t step, const int64_t *toff,
         int64_t taps, const float *wv, __m512 bias, float *out) {
  __m512 a[OUT_RUN];
  for (int i = 0; i < N; i++)
    a[i] = _mm512_setzero_ps();
  for (int64_t t = 0; t < taps; t++) {
    const float *q = p + toff[t];
    __m512 w = _mm512_loadu_ps(wv + t * 16);
    for (int i = 0; i < N; i++)
      a[i] =
          _mm512_add_ps(a[i], _mm512_mul_ps(w, _mm512_loadu_ps(q + i * step)));
  }
  for (int i = 0; i < N; i++)
    _mm512_storeu_ps(out + i * 16, _mm512_add_ps(a[i], bias));
}

/* sums[oh][ow] = the taps' sums + bias, the channels in the lanes. */
static T512 void tile_sums(const dg_conv_geom *d, const c16_geom *g,
                           const float *tile, const float *wv, __m512 bias,
                           float *sums) {
  const int64_t taps = d->KH * d->KW;
  int64_t toff[MAX_TAPS];
  for (int64_t t = 0; t < taps; t++)
    toff[t] = (t / d->KW * d->dh * g->wp + t % d->KW * d->dw) * 16;
  int64_t step = d->sw * 16; /* one output column on, in the tile */
  for (int64_t oh = 0; oh < d->OH; oh++) {
    float *srow = sums + oh * d->OW * 16;
    for (int64_t ow0 = 0; ow0 < d->OW; ow0 += OUT_RUN) {
      const float *p = tile + (oh * d->sh * g->wp + ow0 * d->sw) * 16;
      float *out = srow + ow0 * 16;
      switch (d->OW - ow0 < OUT_RUN ? (int)(d->OW - ow0) : OUT_RUN) {
      // clang-format off
      case 1: run_sums(1, p, step, toff, taps, wv, bias, out); break;
      case 2: run_sums(2, p, step, toff, taps, wv, bias, out); break;
      case 3: run_sums(3, p, step, toff, taps, wv, bias, out); break;
      case 4: run_sums(4, p, step, toff, taps, wv, bias, out); break;
      case 5: run_sums(5, p, step, toff, taps, wv, bias, out); break;
      case 6: run_sums(6, p, step, toff, taps, wv, bias, out); break;
      case 7: run_sums(7, p, step, toff, taps, wv, bias, out); break;
      default: run_sums(8, p, step, toff, taps, wv, bias, out); break;
        // clang-format on
      }
    }
  }
}

/* The sums back into the nch planes of y, with the residual and clamp. */
static T512 void tile_out(const dg_conv_geom *d, const float *sums,
                          const float *r, float *y, int64_t P, int nch,
                          float lo, float hi) {
  const __m512 z = _mm512_setzero_ps(), vlo = _mm512_set1_ps(lo),
               vhi = _mm512_set1_ps(hi);
  for (int64_t oh = 0; oh < d->OH; oh++)
    for (int64_t ow0 = 0; ow0 < d->OW; ow0 += 16) {
      int64_t n = d->OW - ow0 < 16 ? d->OW - ow0 : 16;
      __mmask16 m = first_lanes(n);
      __m512 v[16];
      const float *s = sums + (oh * d->OW + ow0) * 16;
      for (int64_t i = 0; i < 16; i++)
        v[i] = i < n ? _mm512_loadu_ps(s + i * 16) : z;
      tr16(v);
      int64_t at = oh * d->OW + ow0;
      for (int j = 0; j < nch; j++) {
        __m512 o = v[j];
        if (r)
          o = _mm512_add_ps(o, _mm512_maskz_loadu_ps(m, r + j * P + at));
        /* (bound, v) order keeps NaN results NaN */
        o = _mm512_min_ps(vhi, _mm512_max_ps(vlo, o));
        _mm512_mask_storeu_ps(y + j * P + at, m, o);
      }
    }
}

/* int8: the block's nch byte planes into the tile as x - zx, exact in
 * float (|x - zx| <= 255); the padding is zx's cell, zero. */
static T512 void tile_in_q8(const dg_conv_geom *d, const c16_geom *g,
                            const uint8_t *x, bool xs, int32_t zx,
                            int64_t plane, int nch, float *tile) {
  const __m512 z = _mm512_setzero_ps(), vzx = _mm512_set1_ps((float)zx);
  int64_t right = g->wp - d->pl - d->W;
  for (int64_t r = 0; r < g->hp; r++) {
    float *row = tile + r * g->wp * 16;
    int64_t ih = r - d->pt;
    if (ih < 0 || ih >= d->H) {
      for (int64_t c = 0; c < g->wp; c++)
        _mm512_storeu_ps(row + c * 16, z);
      continue;
    }
    for (int64_t c = 0; c < d->pl; c++)
      _mm512_storeu_ps(row + c * 16, z);
    for (int64_t c = 0; c < right; c++)
      _mm512_storeu_ps(row + (d->pl + d->W + c) * 16, z);
    float *cells = row + d->pl * 16;
    for (int64_t iw0 = 0; iw0 < d->W; iw0 += 16) {
      __mmask16 m = first_lanes(d->W - iw0);
      __m512 v[16];
      for (int j = 0; j < 16; j++) {
        if (j >= nch) {
          v[j] = z;
          continue;
        }
        __m128i b = _mm_maskz_loadu_epi8(m, x + j * plane + ih * d->W + iw0);
        __m512i i = xs ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
        /* lanes past the row read 0 and become -zx: never stored */
        v[j] = _mm512_sub_ps(_mm512_cvtepi32_ps(i), vzx);
      }
      tr16(v);
      int64_t n = d->W - iw0 < 16 ? d->W - iw0 : 16;
      for (int64_t i = 0; i < n; i++)
        _mm512_storeu_ps(cells + (iw0 + i) * 16, v[i]);
    }
  }
}

/* int8: the exact sums back into the nch byte planes of y, each channel
 * requantised as requant.h's dg_requant_out_q8 does it: the int32 sum
 * plus the bias, one fp32 multiply, rounded half to even by 1.5 * 2^23,
 * clamped to [flo, fhi], zy added, the low byte stored. */
static T512 void tile_out_q8(const dg_conv_geom *d, const float *sums,
                             const dg_cpu_dw_q8 *q, uint8_t *y, int64_t P,
                             int nch) {
  const __m512 z = _mm512_setzero_ps(), shift = _mm512_set1_ps(12582912.0f),
               flo = _mm512_set1_ps((float)(q->lo - q->zy)),
               fhi = _mm512_set1_ps((float)(q->hi - q->zy));
  const __m512i zy = _mm512_set1_epi32(q->zy);
  for (int64_t oh = 0; oh < d->OH; oh++)
    for (int64_t ow0 = 0; ow0 < d->OW; ow0 += 16) {
      int64_t n = d->OW - ow0 < 16 ? d->OW - ow0 : 16;
      __mmask16 m = first_lanes(n);
      __m512 v[16];
      const float *s = sums + (oh * d->OW + ow0) * 16;
      for (int64_t i = 0; i < 16; i++)
        v[i] = i < n ? _mm512_loadu_ps(s + i * 16) : z;
      tr16(v);
      int64_t at = oh * d->OW + ow0;
      for (int j = 0; j < nch; j++) {
        __m512i acc = _mm512_add_epi32(_mm512_cvtps_epi32(v[j]),
                                       _mm512_set1_epi32(q->bias[j]));
        __m512 f =
            _mm512_mul_ps(_mm512_cvtepi32_ps(acc), _mm512_set1_ps(q->mult[j]));
        f = _mm512_sub_ps(_mm512_add_ps(f, shift), shift);
        f = _mm512_max_ps(flo, _mm512_min_ps(fhi, f));
        __m512i o = _mm512_add_epi32(_mm512_cvttps_epi32(f), zy);
        _mm_mask_storeu_epi8(y + j * P + at, m, _mm512_cvtepi32_epi8(o));
      }
    }
}

T512 static void block512_q8(const dg_conv_geom *d, const uint8_t *x,
                             const dg_cpu_dw_q8 *q, uint8_t *y, int nch,
                             void *scratch) {
  c16_geom g = geom_of(d);
  float *s = scratch;
  const int64_t taps = d->KH * d->KW;
  for (int64_t t = 0; t < taps; t++)
    for (int j = 0; j < 16; j++)
      s[g.wv + (size_t)(t * 16 + j)] =
          j < nch ? (float)q->wv[j * taps + t] : 0.0f;
  tile_in_q8(d, &g, x, q->x_signed, q->zx, d->H * d->W, nch, s + g.tile);
  tile_sums(d, &g, s + g.tile, s + g.wv, _mm512_setzero_ps(), s + g.sums);
  tile_out_q8(d, s + g.sums, q, y, d->OH * d->OW, nch);
}

T512 static void block512(const dg_conv_geom *d, const float *x, const float *w,
                          const float *b, const float *r, float *y, int nch,
                          float lo, float hi, void *scratch) {
  c16_geom g = geom_of(d);
  float *s = scratch;
  const int64_t taps = d->KH * d->KW, plane = d->H * d->W, P = d->OH * d->OW;
  float bias[16] = {0};
  for (int64_t t = 0; t < taps; t++)
    for (int j = 0; j < 16; j++)
      s[g.wv + (size_t)(t * 16 + j)] = j < nch ? w[j * taps + t] : 0.0f;
  for (int j = 0; j < nch && b; j++)
    bias[j] = b[j];
  tile_in(d, &g, x, plane, nch, s + g.tile);
  tile_sums(d, &g, s + g.tile, s + g.wv, _mm512_loadu_ps(bias), s + g.sums);
  tile_out(d, s + g.sums, r, y, P, nch, lo, hi);
}
#endif

void dg_cpu_depthwise_c16(const dg_conv_geom *d, const float *x, const float *w,
                          const float *b, const float *r, float *y, int nch,
                          float lo, float hi, void *scratch) {
#if defined(__x86_64__)
  block512(d, x, w, b, r, y, nch, lo, hi, scratch);
#else
  (void)d, (void)x, (void)w, (void)b, (void)r, (void)y, (void)nch, (void)lo,
      (void)hi, (void)scratch;
#endif
}

void dg_cpu_depthwise_q8_c16(const dg_conv_geom *d, const uint8_t *x,
                             const dg_cpu_dw_q8 *q, uint8_t *y, int nch,
                             void *scratch) {
#if defined(__x86_64__)
  block512_q8(d, x, q, y, nch, scratch);
#else
  (void)d, (void)x, (void)q, (void)y, (void)nch, (void)scratch;
#endif
}
