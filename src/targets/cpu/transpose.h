/* Square transposes of float vectors in registers (x86): r[i] lane j
 * becomes r[j] lane i. Shared by the kernels that turn planes into
 * channel-interleaved tiles and back (depthwise_cb.c, conv_f32.c). */
#ifndef DG_CPU_TRANSPOSE_H
#define DG_CPU_TRANSPOSE_H

#include "cpu_kernels.h" /* DG_CPU_T512 */

#if defined(__x86_64__)
#include <immintrin.h>

static inline __attribute__((always_inline)) DG_CPU_T512 void
dg_cpu_transpose16(__m512 r[16]) {
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

static inline __attribute__((always_inline))
__attribute__((target("avx2,fma"))) void
dg_cpu_transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 4; i++) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  /* u[4g + m], 128-bit lane k: rows 4g..4g+3 of column 4k + m */
  for (int g = 0; g < 2; g++) {
    u[4 * g] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    u[4 * g + 1] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
    u[4 * g + 2] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    u[4 * g + 3] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
  for (int m = 0; m < 4; m++) {
    r[m] = _mm256_permute2f128_ps(u[m], u[4 + m], 0x20);
    r[4 + m] = _mm256_permute2f128_ps(u[m], u[4 + m], 0x31);
  }
}
#endif

#endif
