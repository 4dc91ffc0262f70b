/* The f32 GEMM's AVX2 microkernel (6 x 16) and its dot products, the
 * contract of sgemm_tile.h; compiled with target attributes, so run only
 * where dg_cpu_simd_level() says AVX2 (sgemm.c picks it). */
#include "sgemm_tile.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

/* ---- AVX2: up to 6 x 16 (12 accumulators) ---- */

#define T256 __attribute__((target("avx2,fma")))

T256 static __m256i mask8(int n) {
  n = n < 0 ? 0 : (n > 8 ? 8 : n);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static inline __attribute__((always_inline)) T256 void
k256_body(const int MR, const ktile *t) {
  __m256 c0[DG_CPU_AVX2_MR], c1[DG_CPU_AVX2_MR];
  __m256i m0 = mask8(t->nr), m1 = mask8(t->nr - 8);
  if (t->load_c) {
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) {
      c0[i] = _mm256_maskload_ps(t->c + i * t->ldc, m0);
      c1[i] = _mm256_maskload_ps(t->c + i * t->ldc + 8, m1);
    }
  } else if (t->bias_row) {
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
      c0[i] = c1[i] = _mm256_set1_ps(t->bias_row[i]);
  } else {
    __m256 b0 = _mm256_setzero_ps(), b1 = b0;
    if (t->bias_col) {
      b0 = _mm256_maskload_ps(t->bias_col, m0);
      b1 = _mm256_maskload_ps(t->bias_col + 8, m1);
    }
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) {
      c0[i] = b0;
      c1[i] = b1;
    }
  }
  const float *a = t->a, *b = t->b;
  size_t bs = t->bs;
  int kc = t->kc;
  /* Packed panels are always 16 wide; in-place B may not be. */
  int full = t->nr == DG_CPU_AVX2_NR;
#pragma GCC unroll 2
  for (int k = 0; k < kc; k++) {
    const float *bk = t->boff ? t->b + t->boff[k] : b; /* unswitched */
    __m256 b0, b1;
    if (full) {
      b0 = _mm256_loadu_ps(bk);
      b1 = _mm256_loadu_ps(bk + 8);
    } else {
      b0 = _mm256_maskload_ps(bk, m0);
      b1 = _mm256_maskload_ps(bk + 8, m1);
    }
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) {
      __m256 av = _mm256_broadcast_ss(a + i);
      c0[i] = _mm256_fmadd_ps(av, b0, c0[i]);
      c1[i] = _mm256_fmadd_ps(av, b1, c1[i]);
    }
    a += MR;
    b += bs;
  }
  __m256 lo = _mm256_set1_ps(t->lo), hi = _mm256_set1_ps(t->hi);
#pragma GCC unroll 6
  for (int i = 0; i < MR; i++) {
    __m256 v0 = c0[i], v1 = c1[i];
    if (t->res) {
      v0 = _mm256_add_ps(v0, _mm256_maskload_ps(t->res + i * t->ldr, m0));
      v1 = _mm256_add_ps(v1, _mm256_maskload_ps(t->res + i * t->ldr + 8, m1));
    }
    if (t->clamp) {
      v0 = _mm256_min_ps(hi, _mm256_max_ps(lo, v0));
      v1 = _mm256_min_ps(hi, _mm256_max_ps(lo, v1));
    }
    _mm256_maskstore_ps(t->c + i * t->ldc, m0, v0);
    _mm256_maskstore_ps(t->c + i * t->ldc + 8, m1, v1);
  }
}

T256 void dg_cpu_sgemm_kern_avx2(const ktile *t) {
  switch (t->mr) {
  case 1:
    k256_body(1, t);
    break;
  case 2:
    k256_body(2, t);
    break;
  case 3:
    k256_body(3, t);
    break;
  case 4:
    k256_body(4, t);
    break;
  case 5:
    k256_body(5, t);
    break;
  default:
    k256_body(6, t);
    break;
  }
}

T256 void dg_cpu_sgemm_dot_avx2(int rows, int K, const float *a, size_t lda,
                                const float *bcols, size_t ldb, int ncols,
                                float *outs) {
  for (int x = 0; x < rows * ncols; x++) {
    int m = x / ncols, col = x % ncols;
    const float *b = bcols + col * ldb;
    const float *ar = a + m * lda;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0;
    int k = 0;
    for (; k + 16 <= K; k += 16) {
      s0 = _mm256_fmadd_ps(_mm256_loadu_ps(ar + k), _mm256_loadu_ps(b + k), s0);
      s1 = _mm256_fmadd_ps(_mm256_loadu_ps(ar + k + 8),
                           _mm256_loadu_ps(b + k + 8), s1);
    }
    for (; k < K; k += 8) {
      __m256i mk = mask8(K - k);
      s0 = _mm256_fmadd_ps(_mm256_maskload_ps(ar + k, mk),
                           _mm256_maskload_ps(b + k, mk), s0);
    }
    __m256 s = _mm256_add_ps(s0, s1);
    __m128 h =
        _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    outs[m * 4 + col] = _mm_cvtss_f32(h);
  }
}
#endif
