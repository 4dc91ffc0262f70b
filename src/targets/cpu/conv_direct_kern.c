/* The x86 kernels of conv_direct.c (see conv_direct_kern.h). Each tile
 * holds 28 (AVX-512) or 12 (AVX2) accumulators, the most its register
 * file keeps beside the weight vectors and one broadcast; one function
 * per (width, T, S), so that every loop is unrolled on constants. */
#include "conv_direct_kern.h"

#include "cpu_kernels.h"
#include "transpose.h"

#if defined(__x86_64__)
#define T512 DG_CPU_T512
#define T256 __attribute__((target("avx2,fma")))

/* ---- AVX-512: 4 vectors by 7 pixels, or 2 by 14 ---- */

static inline __attribute__((always_inline)) T512 void
body512(const int V, const int T, const int S, const float *x,
        const int32_t *off, int K, const float *w0, const float *w1,
        const float *bias, float *acc) {
  __m512 a[28];
#pragma GCC unroll 4
  for (int v = 0; v < V; v++)
#pragma GCC unroll 14
    for (int t = 0; t < T; t++)
      a[v * T + t] = bias ? _mm512_loadu_ps(bias + 16 * v)
                          : _mm512_load_ps(acc + (v * T + t) * 16);
  for (int k = 0; k < K; k++) {
    const float *xk = x + off[k];
    __m512 w[4];
    w[0] = _mm512_loadu_ps(w0 + (size_t)k * 32);
    w[1] = _mm512_loadu_ps(w0 + (size_t)k * 32 + 16);
    if (V == 4) {
      w[2] = _mm512_loadu_ps(w1 + (size_t)k * 32);
      w[3] = _mm512_loadu_ps(w1 + (size_t)k * 32 + 16);
    }
#pragma GCC unroll 14
    for (int t = 0; t < T; t++) {
      __m512 xv = _mm512_set1_ps(xk[t * S]);
#pragma GCC unroll 4
      for (int v = 0; v < V; v++)
        a[v * T + t] = _mm512_fmadd_ps(xv, w[v], a[v * T + t]);
    }
  }
#pragma GCC unroll 4
  for (int v = 0; v < V; v++)
#pragma GCC unroll 14
    for (int t = 0; t < T; t++)
      _mm512_store_ps(acc + (v * T + t) * 16, a[v * T + t]);
}

static T512 void store512(const dg_cpu_dc_out *o, const float *acc, int V,
                          int T, int o0, size_t at) {
  __mmask16 mp = (__mmask16)((1u << T) - 1);
  const __m512 lo = _mm512_set1_ps(o->lo), hi = _mm512_set1_ps(o->hi);
  for (int v = 0; v < V && o0 + 16 * v < o->O; v++) {
    __m512 r[16];
    for (int i = 0; i < 16; i++)
      r[i] =
          i < T ? _mm512_load_ps(acc + (v * T + i) * 16) : _mm512_setzero_ps();
    dg_cpu_transpose16(r);
    int n = o->O - (o0 + 16 * v) < 16 ? o->O - (o0 + 16 * v) : 16;
    for (int k = 0; k < n; k++) {
      size_t c = (size_t)(o0 + 16 * v + k) * o->P + at;
      __m512 u = r[k];
      if (o->r)
        u = _mm512_add_ps(u, _mm512_maskz_loadu_ps(mp, o->r + c));
      u = _mm512_min_ps(hi, _mm512_max_ps(lo, u));
      _mm512_mask_storeu_ps(o->y + c, mp, u);
    }
  }
}

/* ---- AVX2: 2 vectors by 6 pixels ---- */

static inline __attribute__((always_inline)) T256 void
body256(const int T, const int S, const float *x, const int32_t *off, int K,
        const float *w0, const float *bias, float *acc) {
  __m256 a[12];
#pragma GCC unroll 2
  for (int v = 0; v < 2; v++)
#pragma GCC unroll 6
    for (int t = 0; t < T; t++)
      a[v * T + t] = bias ? _mm256_loadu_ps(bias + 8 * v)
                          : _mm256_load_ps(acc + (v * T + t) * 8);
  for (int k = 0; k < K; k++) {
    const float *xk = x + off[k];
    __m256 w[2] = {_mm256_loadu_ps(w0 + (size_t)k * 16),
                   _mm256_loadu_ps(w0 + (size_t)k * 16 + 8)};
#pragma GCC unroll 6
    for (int t = 0; t < T; t++) {
      __m256 xv = _mm256_broadcast_ss(xk + t * S);
#pragma GCC unroll 2
      for (int v = 0; v < 2; v++)
        a[v * T + t] = _mm256_fmadd_ps(xv, w[v], a[v * T + t]);
    }
  }
#pragma GCC unroll 2
  for (int v = 0; v < 2; v++)
#pragma GCC unroll 6
    for (int t = 0; t < T; t++)
      _mm256_store_ps(acc + (v * T + t) * 8, a[v * T + t]);
}

static T256 void store256(const dg_cpu_dc_out *o, const float *acc, int V,
                          int T, int o0, size_t at) {
  __m256i mp = _mm256_cmpgt_epi32(_mm256_set1_epi32(T),
                                  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256 lo = _mm256_set1_ps(o->lo), hi = _mm256_set1_ps(o->hi);
  for (int v = 0; v < V && o0 + 8 * v < o->O; v++) {
    __m256 r[8];
    for (int i = 0; i < 8; i++)
      r[i] =
          i < T ? _mm256_load_ps(acc + (v * T + i) * 8) : _mm256_setzero_ps();
    dg_cpu_transpose8(r);
    int n = o->O - (o0 + 8 * v) < 8 ? o->O - (o0 + 8 * v) : 8;
    for (int k = 0; k < n; k++) {
      size_t c = (size_t)(o0 + 8 * v + k) * o->P + at;
      __m256 u = r[k];
      if (o->r)
        u = _mm256_add_ps(u, _mm256_maskload_ps(o->r + c, mp));
      u = _mm256_min_ps(hi, _mm256_max_ps(lo, u));
      _mm256_maskstore_ps(o->y + c, mp, u);
    }
  }
}

/* ---- one function per (width, T, S), in tables ---- */

#define W512(V, T, S)                                                          \
  static T512 void t512_##V##_##T##_##S(                                       \
      const float *x, const int32_t *off, int K, const float *w0,              \
      const float *w1, const float *bias, float *acc) {                        \
    body512(V, T, S, x, off, K, w0, w1, bias, acc);                            \
  }
#define W256(T, S)                                                             \
  static T256 void t256_##T##_##S(const float *x, const int32_t *off, int K,   \
                                  const float *w0, const float *w1,            \
                                  const float *bias, float *acc) {             \
    (void)w1;                                                                  \
    body256(T, S, x, off, K, w0, bias, acc);                                   \
  }
// clang-format off
#define W512_7(V, S)                                                           \
  W512(V, 1, S) W512(V, 2, S) W512(V, 3, S) W512(V, 4, S) W512(V, 5, S)        \
  W512(V, 6, S) W512(V, 7, S)
#define W512_14(S)                                                             \
  W512_7(2, S) W512(2, 8, S) W512(2, 9, S) W512(2, 10, S) W512(2, 11, S)       \
  W512(2, 12, S) W512(2, 13, S) W512(2, 14, S)
#define W256_6(S)                                                              \
  W256(1, S) W256(2, S) W256(3, S) W256(4, S) W256(5, S) W256(6, S)
W512_7(4, 1) W512_7(4, 2) W512_14(1) W512_14(2) W256_6(1) W256_6(2)
#define L512_7(V, S)                                                           \
  t512_##V##_1_##S, t512_##V##_2_##S, t512_##V##_3_##S, t512_##V##_4_##S,      \
  t512_##V##_5_##S, t512_##V##_6_##S, t512_##V##_7_##S
#define L512_14(S)                                                             \
  L512_7(2, S), t512_2_8_##S, t512_2_9_##S, t512_2_10_##S, t512_2_11_##S,      \
  t512_2_12_##S, t512_2_13_##S, t512_2_14_##S
#define L256_6(S)                                                              \
  t256_1_##S, t256_2_##S, t256_3_##S, t256_4_##S, t256_5_##S, t256_6_##S
/* [narrow][S == 2][T - 1] */
static const dg_cpu_dc_tile_fn tiles512[2][2][14] = {
  {{L512_7(4, 1)}, {L512_7(4, 2)}}, {{L512_14(1)}, {L512_14(2)}}};
static const dg_cpu_dc_tile_fn tiles256[2][6] = {{L256_6(1)}, {L256_6(2)}};
// clang-format on

static dg_cpu_dc_tile_fn pick512(int narrow, int S, int T) {
  return tiles512[narrow != 0][S == 2][T - 1];
}
static dg_cpu_dc_tile_fn pick256(int narrow, int S, int T) {
  (void)narrow;
  return tiles256[S == 2][T - 1];
}

static const dg_cpu_dc_isa isa512 = {32, 16, 64, 7, 14, 1, pick512, store512};
static const dg_cpu_dc_isa isa256 = {16, 8, 16, 6, 0, 0, pick256, store256};

const dg_cpu_dc_isa *dg_cpu_dc_isa_get(void) {
  int level = dg_cpu_simd_level(), panel = dg_cpu_sgemm_panel_width();
  if (level >= DG_CPU_SIMD_AVX512 && panel == isa512.panel)
    return &isa512;
  if (level >= DG_CPU_SIMD_AVX2 && panel == isa256.panel)
    return &isa256;
  return NULL;
}
#else
const dg_cpu_dc_isa *dg_cpu_dc_isa_get(void) { return NULL; }
#endif
