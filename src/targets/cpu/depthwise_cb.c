/* Depthwise convolution a block of channels at a time (depthwise.h):
 * sixteen on AVX-512, eight on AVX2.
 *
 * The banded kernel (depthwise.c) vectorises along a plane's rows, so a
 * 14x14 or 7x7 plane (MobileNet's last stages, hundreds of channels) is
 * mostly fixed costs: a dozen row copies, a few part-filled vectors, the
 * epilogue, per plane. Here the vectors run across the block's channels
 * instead: its planes are transposed into one zero-padded tile whose cell
 * (row, column) holds the channels' values, every tap of every output is
 * then one load, one multiply and one add of a full vector, and the sums
 * are transposed back into the planes with the epilogue. The transposes
 * are L x L in registers.
 *
 * Exactness is the banded kernel's. f32: per output the taps in (kh, kw)
 * order from +0, multiply then add (never fused), padded taps w * 0, then
 * the bias, the residual and the clamp; vectors across channels change no
 * output's order. int8: the tile holds x - zx and the taps w - zw, whose
 * products and sums (up to 258 taps) are exact integers in float, so its
 * multiply-adds are fused (the same exact sums in half the ops); the
 * requantisation is requant.h's dg_requant_out_q8, lane for lane. So the
 * bits are those of every other level. */
#include "depthwise.h"

#include "cpu_kernels.h"
#include "transpose.h"

#include <stdint.h>
#include <string.h>

enum {
  MAX_TAPS = 64,       /* a block's taps kept as one vector each */
  MAX_TILE = 1 << 18,  /* floats of tile, sums and taps: 1 MiB at most */
  BAND_TILE = 1 << 15, /* a band's tile and sums: 128 KiB, in L2 */
  OUT_RUN = 8,         /* outputs summed at once: eight chains of adds */
  EXACT_TAPS = 258,    /* 258 * 255 * 255 < 2^24: int8 sums exact */
};

/* The channels a block at the current level; 0 where there is none. */
int dg_cpu_depthwise_cb_width(void) {
#if defined(__x86_64__)
  int level = dg_cpu_simd_level();
  return level >= DG_CPU_SIMD_AVX512 ? 16 : level >= DG_CPU_SIMD_AVX2 ? 8 : 0;
#else
  return 0;
#endif
}

/* The work goes by bands of output rows: a band's input rows (padded
 * with zero rows and columns) are the tile, its sums follow. */
typedef struct cb_geom {
  int64_t br;             /* output rows a band */
  int64_t hp, wp;         /* the tile's rows (a band's) and columns */
  size_t sums, wv, total; /* offsets (the tile at 0) and size, in floats */
} cb_geom;

static cb_geom geom_rows(const dg_conv_geom *d, int L, int64_t br) {
  cb_geom g;
  int64_t right = (d->OW - 1) * d->sw + (d->KW - 1) * d->dw + 1 - d->pl - d->W;
  g.br = br;
  g.hp = (br - 1) * d->sh + (d->KH - 1) * d->dh + 1;
  g.wp = d->pl + d->W + (right > 0 ? right : 0);
  g.sums = (size_t)(g.hp * g.wp * L);
  g.wv = g.sums + (size_t)(br * d->OW * L);
  g.total = g.wv + (size_t)(d->KH * d->KW * L);
  return g;
}

/* As many rows a band as fit BAND_TILE (at least one). */
static cb_geom geom_of(const dg_conv_geom *d, int L) {
  cb_geom g = geom_rows(d, L, 1);
  int64_t per_row = (d->sh * g.wp + d->OW) * L, br = 1;
  if (g.total < BAND_TILE)
    br += (int64_t)(BAND_TILE - g.total) / per_row;
  return geom_rows(d, L, br < d->OH ? br : d->OH);
}

bool dg_cpu_depthwise_cb_takes(const dg_conv_geom *d) {
  int L = dg_cpu_depthwise_cb_width();
  if (!L || d->KH * d->KW > MAX_TAPS || d->pt < 0 || d->pl < 0 ||
      d->H > MAX_TILE || d->W > MAX_TILE || d->OH > MAX_TILE ||
      d->OW > MAX_TILE)
    return false;
  return geom_of(d, L).total <= MAX_TILE;
}

bool dg_cpu_depthwise_q8_cb_takes(const dg_conv_geom *d) {
  return d->KH * d->KW <= EXACT_TAPS && dg_cpu_depthwise_cb_takes(d);
}

size_t dg_cpu_depthwise_cb_scratch(const dg_conv_geom *d) {
  return dg_cpu_depthwise_cb_takes(d)
             ? sizeof(float) * geom_of(d, dg_cpu_depthwise_cb_width()).total
             : 0;
}

#if defined(__x86_64__)
#include "vecf.h" /* the float prims */

/* ---- AVX-512: the byte prims ---- */

/* n bytes (signed or not) as floats, the other lanes 0 */
INLINE T512 v16 v16_load_bytes_n(const uint8_t *p, int64_t n, bool xs) {
  __m128i b = _mm_maskz_loadu_epi8(lanes16(n), p);
  return _mm512_cvtepi32_ps(xs ? _mm512_cvtepi8_epi32(b)
                               : _mm512_cvtepu8_epi32(b));
}
/* requant.h's dg_requant_out_q8 on (int32)s + bias, n bytes stored */
INLINE T512 void v16_requant_n(uint8_t *p, v16 s, int32_t bias, float m,
                               float flo, float fhi, int32_t zy, int64_t n) {
  const __m512 shift = _mm512_set1_ps(12582912.0f); /* 1.5 * 2^23 */
  __m512i acc =
      _mm512_add_epi32(_mm512_cvtps_epi32(s), _mm512_set1_epi32(bias));
  __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), _mm512_set1_ps(m));
  f = _mm512_sub_ps(_mm512_add_ps(f, shift), shift);
  f = _mm512_max_ps(_mm512_set1_ps(flo), _mm512_min_ps(_mm512_set1_ps(fhi), f));
  __m512i o = _mm512_add_epi32(_mm512_cvttps_epi32(f), _mm512_set1_epi32(zy));
  _mm_mask_storeu_epi8(p, lanes16(n), _mm512_cvtepi32_epi8(o));
}

/* ---- AVX2: the byte prims ---- */

/* eight bytes loaded whole; a shorter run through a copy (AVX2 has no
 * masked byte loads) */
INLINE T256 v8 v8_load_bytes_n(const uint8_t *p, int64_t n, bool xs) {
  __m128i v;
  if (n >= 8) {
    v = _mm_loadl_epi64((const __m128i *)p);
  } else {
    uint8_t b[16] = {0};
    memcpy(b, p, (size_t)(n > 0 ? n : 0));
    v = _mm_loadu_si128((const __m128i *)b);
  }
  return _mm256_cvtepi32_ps(xs ? _mm256_cvtepi8_epi32(v)
                               : _mm256_cvtepu8_epi32(v));
}
INLINE T256 void v8_requant_n(uint8_t *p, v8 s, int32_t bias, float m,
                              float flo, float fhi, int32_t zy, int64_t n) {
  const __m256 shift = _mm256_set1_ps(12582912.0f); /* 1.5 * 2^23 */
  __m256i acc =
      _mm256_add_epi32(_mm256_cvtps_epi32(s), _mm256_set1_epi32(bias));
  __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), _mm256_set1_ps(m));
  f = _mm256_sub_ps(_mm256_add_ps(f, shift), shift);
  f = _mm256_max_ps(_mm256_set1_ps(flo), _mm256_min_ps(_mm256_set1_ps(fhi), f));
  __m256i o = _mm256_add_epi32(_mm256_cvttps_epi32(f), _mm256_set1_epi32(zy));
  /* the low byte of each lane: within each 128-bit half, then the halves'
   * four bytes side by side */
  const __m256i low = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1,
                                       -1, -1, -1, -1, -1, 0, 4, 8, 12, -1, -1,
                                       -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  __m256i b = _mm256_shuffle_epi8(o, low);
  __m128i bytes = _mm_unpacklo_epi32(_mm256_castsi256_si128(b),
                                     _mm256_extracti128_si256(b, 1));
  if (n >= 8) {
    _mm_storel_epi64((__m128i *)p, bytes);
    return;
  }
  uint8_t t[16];
  _mm_storeu_si128((__m128i *)t, bytes);
  memcpy(p, t, (size_t)(n > 0 ? n : 0));
}

/* ---- one block, written once for both widths ----
 *
 * tile_in: the block's nch planes (plane elements apart) into the tile,
 * cell (pt + ih, pl + iw) = the channels' x[ih][iw] (int8: less zx), the
 * border zero. run_sums / tile_sums: sums[oh][ow] = the taps' sums + the
 * bias vector. tile_out: the sums back into the planes with the residual
 * and clamp (f32) or requantised (int8). */
#define DW_BLOCK(L, V, ATTR)                                                   \
  INLINE ATTR void tile_in_##L(                                                \
      const bool Q, const dg_conv_geom *d, const cb_geom *g, const float *x,   \
      const uint8_t *xq, bool xs, int32_t zx, int64_t plane, int nch,          \
      int64_t ih0, int64_t rows, float *tile) {                                \
    const V z = V##_zero(), vzx = V##_set1((float)zx);                         \
    int64_t right = g->wp - d->pl - d->W;                                      \
    for (int64_t r = 0; r < rows; r++) {                                       \
      float *row = tile + r * g->wp * L;                                       \
      int64_t ih = ih0 + r;                                                    \
      if (ih < 0 || ih >= d->H) {                                              \
        for (int64_t c = 0; c < g->wp; c++)                                    \
          V##_store(row + c * L, z);                                           \
        continue;                                                              \
      }                                                                        \
      for (int64_t c = 0; c < d->pl; c++)                                      \
        V##_store(row + c * L, z);                                             \
      for (int64_t c = 0; c < right; c++)                                      \
        V##_store(row + (d->pl + d->W + c) * L, z);                            \
      float *cells = row + d->pl * L;                                          \
      for (int64_t iw0 = 0; iw0 < d->W; iw0 += L) {                            \
        int64_t n = d->W - iw0 < L ? d->W - iw0 : L;                           \
        V v[L];                                                                \
        for (int j = 0; j < L; j++) {                                          \
          int64_t at = j * plane + ih * d->W + iw0;                            \
          /* int8 lanes past the row become -zx: never stored */               \
          v[j] = j >= nch ? z                                                  \
                 : Q      ? V##_sub(V##_load_bytes_n(xq + at, n, xs), vzx)     \
                          : V##_load_n(x + at, n);                                  \
        }                                                                      \
        V##_transpose(v);                                                      \
        /* a whole row of cells as L stores: a loop of n would be turned       \
         * into a memcpy from the vectors spilled to the stack */              \
        if (n == L)                                                            \
          for (int i = 0; i < L; i++)                                          \
            V##_store(cells + (iw0 + i) * L, v[i]);                            \
        else                                                                   \
          for (int64_t i = 0; i < n; i++)                                      \
            V##_store(cells + (iw0 + i) * L, v[i]);                            \
      }                                                                        \
    }                                                                          \
  }                                                                            \
                                                                               \
  INLINE ATTR void run_sums_##L(const bool Q, const int N, const float *p,     \
                                int64_t step, const int64_t *toff,             \
                                int64_t taps, const float *wv, V bias,         \
                                float *out) {                                  \
    V a[OUT_RUN];                                                              \
    for (int i = 0; i < N; i++)                                                \
      a[i] = V##_zero();                                                       \
    for (int64_t t = 0; t < taps; t++) {                                       \
      const float *q = p + toff[t];                                            \
      V w = V##_load(wv + t * L);                                              \
      for (int i = 0; i < N; i++)                                              \
        a[i] = Q ? V##_fmadd(w, V##_load(q + i * step), a[i])                  \
                 : V##_add(a[i], V##_mul(w, V##_load(q + i * step)));          \
    }                                                                          \
    for (int i = 0; i < N; i++)                                                \
      V##_store(out + i * L, V##_add(a[i], bias));                             \
  }                                                                            \
                                                                               \
  INLINE ATTR void tile_sums_##L(                                              \
      const bool Q, const dg_conv_geom *d, const cb_geom *g,                   \
      const float *tile, const float *wv, V bias, int64_t nb, float *sums) {   \
    const int64_t taps = d->KH * d->KW, step = d->sw * L;                      \
    int64_t toff[MAX_TAPS];                                                    \
    for (int64_t t = 0; t < taps; t++)                                         \
      toff[t] = (t / d->KW * d->dh * g->wp + t % d->KW * d->dw) * L;           \
    for (int64_t oh = 0; oh < nb; oh++)                                        \
      for (int64_t ow0 = 0; ow0 < d->OW; ow0 += OUT_RUN) {                     \
        const float *p = tile + (oh * d->sh * g->wp + ow0 * d->sw) * L;        \
        float *out = sums + (oh * d->OW + ow0) * L;                            \
        int64_t n = d->OW - ow0 < OUT_RUN ? d->OW - ow0 : OUT_RUN;             \
        /* the count a constant: the sums stay in registers */                 \
        switch (n) {                                                           \
        case 1:                                                                \
          run_sums_##L(Q, 1, p, step, toff, taps, wv, bias, out);              \
          break;                                                               \
        case 2:                                                                \
          run_sums_##L(Q, 2, p, step, toff, taps, wv, bias, out);              \
          break;                                                               \
        case 3:                                                                \
          run_sums_##L(Q, 3, p, step, toff, taps, wv, bias, out);              \
          break;                                                               \
        case 4:                                                                \
          run_sums_##L(Q, 4, p, step, toff, taps, wv, bias, out);              \
          break;                                                               \
        case 5:                                                                \
          run_sums_##L(Q, 5, p, step, toff, taps, wv, bias, out);              \
          break;                                                               \
        case 6:                                                                \
          run_sums_##L(Q, 6, p, step, toff, taps, wv, bias, out);              \
          break;                                                               \
        case 7:                                                                \
          run_sums_##L(Q, 7, p, step, toff, taps, wv, bias, out);              \
          break;                                                               \
        default:                                                               \
          run_sums_##L(Q, 8, p, step, toff, taps, wv, bias, out);              \
          break;                                                               \
        }                                                                      \
      }                                                                        \
  }                                                                            \
                                                                               \
  /* apart from the blocks, one per dtype (their loops stay small) */          \
  static ATTR void sums_f32_##L(const dg_conv_geom *d, const cb_geom *g,       \
                                const float *tile, const float *wv, V bias,    \
                                int64_t nb, float *sums) {                     \
    tile_sums_##L(false, d, g, tile, wv, bias, nb, sums);                      \
  }                                                                            \
  static ATTR void sums_q8_##L(const dg_conv_geom *d, const cb_geom *g,        \
                               const float *tile, const float *wv, V bias,     \
                               int64_t nb, float *sums) {                      \
    tile_sums_##L(true, d, g, tile, wv, bias, nb, sums);                       \
  }                                                                            \
                                                                               \
  INLINE ATTR void tile_out_##L(const bool Q, const dg_conv_geom *d,           \
                                const float *sums, const float *r, float *y,   \
                                uint8_t *yq, const dg_cpu_dw_q8 *q, int nch,   \
                                float lo, float hi, int64_t oh0, int64_t nb) { \
    const int64_t P = d->OH * d->OW;                                           \
    const V z = V##_zero(), vlo = V##_set1(lo), vhi = V##_set1(hi);            \
    float flo = Q ? (float)(q->lo - q->zy) : 0,                                \
          fhi = Q ? (float)(q->hi - q->zy) : 0;                                \
    for (int64_t oh = 0; oh < nb; oh++)                                        \
      for (int64_t ow0 = 0; ow0 < d->OW; ow0 += L) {                           \
        int64_t n = d->OW - ow0 < L ? d->OW - ow0 : L;                         \
        int64_t at = (oh0 + oh) * d->OW + ow0;                                 \
        V v[L];                                                                \
        const float *s = sums + (oh * d->OW + ow0) * L;                        \
        for (int64_t i = 0; i < L; i++)                                        \
          v[i] = i < n ? V##_load(s + i * L) : z;                              \
        V##_transpose(v);                                                      \
        for (int j = 0; j < nch; j++) {                                        \
          if (Q) {                                                             \
            V##_requant_n(yq + j * P + at, v[j], q->bias[j], q->mult[j], flo,  \
                          fhi, q->zy, n);                                      \
            continue;                                                          \
          }                                                                    \
          V o = r ? V##_add(v[j], V##_load_n(r + j * P + at, n)) : v[j];       \
          V##_store_clamped_n(y + j * P + at, o, vlo, vhi, n);                 \
        }                                                                      \
      }                                                                        \
  }                                                                            \
                                                                               \
  INLINE ATTR void block_body_##L(                                             \
      const bool Q, const dg_conv_geom *d, const float *x, const float *w,     \
      const float *b, const float *r, float *y, const uint8_t *xq,             \
      const dg_cpu_dw_q8 *q, uint8_t *yq, int nch, float lo, float hi,         \
      float *s) {                                                              \
    cb_geom g = geom_of(d, L);                                                 \
    const int64_t taps = d->KH * d->KW;                                        \
    float bias[L];                                                             \
    for (int j = 0; j < L; j++)                                                \
      bias[j] = !Q && b && j < nch ? b[j] : 0.0f;                              \
    for (int64_t t = 0; t < taps; t++)                                         \
      for (int j = 0; j < L; j++)                                              \
        s[g.wv + (size_t)(t * L + j)] = j >= nch ? 0.0f                        \
                                        : Q      ? (float)q->wv[j * taps + t]  \
                                                 : w[j * taps + t];                 \
    for (int64_t oh0 = 0; oh0 < d->OH; oh0 += g.br) {                          \
      int64_t nb = d->OH - oh0 < g.br ? d->OH - oh0 : g.br;                    \
      tile_in_##L(Q, d, &g, x, xq, Q && q->x_signed, Q ? q->zx : 0,            \
                  d->H * d->W, nch, oh0 * d->sh - d->pt,                       \
                  (nb - 1) * d->sh + (d->KH - 1) * d->dh + 1, s);              \
      (Q ? sums_q8_##L : sums_f32_##L)(d, &g, s, s + g.wv, V##_load(bias), nb, \
                                       s + g.sums);                            \
      tile_out_##L(Q, d, s + g.sums, r, y, yq, q, nch, lo, hi, oh0, nb);       \
    }                                                                          \
  }                                                                            \
  /* the dtype a constant: each body without the other's branches */           \
  static ATTR void block_##L##_f32(                                            \
      const dg_conv_geom *d, const float *x, const float *w, const float *b,   \
      const float *r, float *y, int nch, float lo, float hi, float *s) {       \
    block_body_##L(false, d, x, w, b, r, y, NULL, NULL, NULL, nch, lo, hi, s); \
  }                                                                            \
  static ATTR void block_##L##_q8(const dg_conv_geom *d, const uint8_t *xq,    \
                                  const dg_cpu_dw_q8 *q, uint8_t *yq, int nch, \
                                  float *s) {                                  \
    block_body_##L(true, d, NULL, NULL, NULL, NULL, NULL, xq, q, yq, nch, 0,   \
                   0, s);                                                      \
  }

// clang-format off
DW_BLOCK(16, v16, T512)
DW_BLOCK(8, v8, T256)
// clang-format on
#endif

void dg_cpu_depthwise_cb(const dg_conv_geom *d, const float *x, const float *w,
                         const float *b, const float *r, float *y, int nch,
                         float lo, float hi, void *scratch) {
#if defined(__x86_64__)
  if (dg_cpu_depthwise_cb_width() == 16)
    block_16_f32(d, x, w, b, r, y, nch, lo, hi, scratch);
  else
    block_8_f32(d, x, w, b, r, y, nch, lo, hi, scratch);
#else
  (void)d, (void)x, (void)w, (void)b, (void)r, (void)y, (void)nch, (void)lo,
      (void)hi, (void)scratch;
#endif
}

void dg_cpu_depthwise_q8_cb(const dg_conv_geom *d, const uint8_t *x,
                            const dg_cpu_dw_q8 *q, uint8_t *y, int nch,
                            void *scratch) {
#if defined(__x86_64__)
  if (dg_cpu_depthwise_cb_width() == 16)
    block_16_q8(d, x, q, y, nch, scratch);
  else
    block_8_q8(d, x, q, y, nch, scratch);
#else
  (void)d, (void)x, (void)q, (void)y, (void)nch, (void)scratch;
#endif
}
