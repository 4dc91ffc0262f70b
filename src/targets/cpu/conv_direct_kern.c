/* The x86 kernels of conv_direct.c (see conv_direct_kern.h). Each tile
 * holds 28 (AVX-512) or 12 (AVX2) accumulators, the most its register
 * file keeps beside the weight vectors and one broadcast; one function
 * per (width, T, S), so that every loop is unrolled on constants. */
#include "conv_direct_kern.h"

#include "cpu_kernels.h"

#if defined(__x86_64__)
#include "vecf.h"

/* ---- a tile's sums, written once for both widths ----
 *
 * NV vectors of L channels (AVX-512: 4 by 7 pixels, or 2 by 14; AVX2: 2
 * by 6), the weights two vectors a panel row (panels 2 L wide): vectors
 * 0 and 1 from w0, 2 and 3 from w1. */
#define DC_BODY(NAME, L, V, ATTR)                                              \
  INLINE ATTR void NAME(const int NV, const int T, const int S,                \
                        const float *x, const int32_t *off, int K,             \
                        const float *w0, const float *w1, const float *bias,   \
                        float *acc) {                                          \
    V a[28];                                                                   \
    _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                       \
        _Pragma("GCC unroll 14") for (int t = 0; t < T; t++) a[v * T + t] =    \
            V##_load(bias ? bias + L * v : acc + (v * T + t) * L);             \
    for (int k = 0; k < K; k++) {                                              \
      const float *xk = x + off[k];                                            \
      V w[4];                                                                  \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) w[v] =              \
          V##_load((v < 2 ? w0 : w1) + (size_t)k * 2 * L + (v & 1) * L);       \
      _Pragma("GCC unroll 14") for (int t = 0; t < T; t++) {                   \
        V xv = V##_set1(xk[t * S]);                                            \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) a[v * T + t] =    \
            V##_fmadd(xv, w[v], a[v * T + t]);                                 \
      }                                                                        \
    }                                                                          \
    _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                       \
        _Pragma("GCC unroll 14") for (int t = 0; t < T; t++)                   \
            V##_store(acc + (v * T + t) * L, a[v * T + t]);                    \
  }
DC_BODY(body512, 16, v16, T512)
DC_BODY(body256, 8, v8, T256)

/* ---- the store, written once for both widths ---- */

#define DC_STORE(NAME, L, V, ATTR)                                             \
  static ATTR void NAME(const dg_cpu_dc_out *o, const float *acc, int nv,      \
                        int T, int o0, size_t at) {                            \
    const V lo = V##_set1(o->lo), hi = V##_set1(o->hi);                        \
    for (int v = 0; v < nv && o0 + L * v < o->O; v++) {                        \
      V r[L];                                                                  \
      for (int i = 0; i < L; i++)                                              \
        r[i] = i < T ? V##_load(acc + (v * T + i) * L) : V##_zero();           \
      V##_transpose(r);                                                        \
      int n = o->O - (o0 + L * v) < L ? o->O - (o0 + L * v) : L;               \
      for (int k = 0; k < n; k++) {                                            \
        size_t c = (size_t)(o0 + L * v + k) * o->P + at;                       \
        V u = r[k];                                                            \
        if (o->r)                                                              \
          u = V##_add(u, V##_load_n(o->r + c, T));                             \
        V##_store_clamped_n(o->y + c, u, lo, hi, T);                           \
      }                                                                        \
    }                                                                          \
  }
DC_STORE(store512, 16, v16, T512)
DC_STORE(store256, 8, v8, T256)

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
    body256(2, T, S, x, off, K, w0, w1, bias, acc);                            \
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
