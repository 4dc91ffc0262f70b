/* Float vectors of both x86 widths under one set of names (v16_* on
 * AVX-512, v8_* on AVX2), so that a kernel is written once as a macro
 * over the width: depthwise_cb.c's blocks, conv_direct_kern.c's stores.
 * Include only from x86 code. */
#ifndef DG_CPU_VECF_H
#define DG_CPU_VECF_H

#include "cpu_kernels.h" /* DG_CPU_T512 */
#include "transpose.h"

#include <immintrin.h>
#include <stdint.h>

#define INLINE static inline __attribute__((always_inline))
#define T512 DG_CPU_T512
#define T256 __attribute__((target("avx2,fma")))

/* ---- AVX-512: sixteen lanes ---- */

typedef __m512 v16;
INLINE T512 v16 v16_zero(void) { return _mm512_setzero_ps(); }
INLINE T512 v16 v16_load(const float *p) { return _mm512_loadu_ps(p); }
INLINE T512 void v16_store(float *p, v16 v) { _mm512_storeu_ps(p, v); }
INLINE T512 v16 v16_set1(float f) { return _mm512_set1_ps(f); }
INLINE T512 v16 v16_add(v16 a, v16 b) { return _mm512_add_ps(a, b); }
INLINE T512 v16 v16_sub(v16 a, v16 b) { return _mm512_sub_ps(a, b); }
INLINE T512 v16 v16_mul(v16 a, v16 b) { return _mm512_mul_ps(a, b); }
INLINE T512 v16 v16_fmadd(v16 a, v16 b, v16 c) {
  return _mm512_fmadd_ps(a, b, c);
}
INLINE __mmask16 lanes16(int64_t n) {
  return n >= 16 ? (__mmask16)0xffff
                 : (__mmask16)(((uint32_t)1 << (n > 0 ? n : 0)) - 1);
}
INLINE T512 v16 v16_load_n(const float *p, int64_t n) {
  return _mm512_maskz_loadu_ps(lanes16(n), p);
}
/* clamp(v) to [lo, hi], (bound, v) order: NaN stays NaN */
INLINE T512 void v16_store_clamped_n(float *p, v16 v, v16 lo, v16 hi,
                                     int64_t n) {
  _mm512_mask_storeu_ps(p, lanes16(n), _mm512_min_ps(hi, _mm512_max_ps(lo, v)));
}
INLINE T512 void v16_transpose(v16 r[16]) { dg_cpu_transpose16(r); }

/* ---- AVX2: eight lanes ---- */

typedef __m256 v8;
INLINE T256 v8 v8_zero(void) { return _mm256_setzero_ps(); }
INLINE T256 v8 v8_load(const float *p) { return _mm256_loadu_ps(p); }
INLINE T256 void v8_store(float *p, v8 v) { _mm256_storeu_ps(p, v); }
INLINE T256 v8 v8_set1(float f) { return _mm256_set1_ps(f); }
INLINE T256 v8 v8_add(v8 a, v8 b) { return _mm256_add_ps(a, b); }
INLINE T256 v8 v8_sub(v8 a, v8 b) { return _mm256_sub_ps(a, b); }
INLINE T256 v8 v8_mul(v8 a, v8 b) { return _mm256_mul_ps(a, b); }
INLINE T256 v8 v8_fmadd(v8 a, v8 b, v8 c) { return _mm256_fmadd_ps(a, b, c); }
INLINE T256 __m256i lanes8(int64_t n) {
  n = n < 0 ? 0 : (n > 8 ? 8 : n);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
INLINE T256 v8 v8_load_n(const float *p, int64_t n) {
  return _mm256_maskload_ps(p, lanes8(n));
}
INLINE T256 void v8_store_clamped_n(float *p, v8 v, v8 lo, v8 hi, int64_t n) {
  _mm256_maskstore_ps(p, lanes8(n), _mm256_min_ps(hi, _mm256_max_ps(lo, v)));
}
INLINE T256 void v8_transpose(v8 r[8]) { dg_cpu_transpose8(r); }

#endif
