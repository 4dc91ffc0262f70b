/* The f32 GEMM's microkernel contract, shared by sgemm.c and the kernels
 * kept in files of their own (sgemm_neon.c). */
#ifndef DG_CPU_SGEMM_TILE_H
#define DG_CPU_SGEMM_TILE_H

#include <stddef.h>
#include <stdint.h>

/* One microkernel call: C[mr, nr] (+)= Apanel[mr, kc] * B[kc, nr]. */
typedef struct ktile {
  int mr, nr, kc;
  const float *a; /* packed, a[k * mr + i] */
  const float *b; /* row k at b + k * bs; only nr columns are readable */
  size_t bs;
  /* Or, when set, row k at b + boff[k] (B by row offsets: a conv's taps
   * read in place; x86 kernels only, others get packed panels). */
  const int64_t *boff;
  /* B is a zero-padded packed panel: a whole panel's width is readable
   * (and zero beyond nr), so no row needs a padded copy. */
  int b_padded;
  float *c;
  size_t ldc;
  int load_c;            /* accumulate onto C (not the first K slice) */
  const float *bias_row; /* mr entries, or NULL */
  const float *bias_col; /* nr entries, or NULL */
  /* Last K slice only: added to the sums before the clamp (a residual
   * connection fused into the producing conv), rows ldr apart; or NULL. */
  const float *res;
  size_t ldr;
  int clamp;
  float lo, hi;
} ktile;

/* Portable C, up to 4 x 16 (sgemm_portable.c), and its dot products:
 * out[m * 4 + j] = dot(A row m, B row j) for m < rows, j < ncols <= 4. */
#define DG_CPU_PORTABLE_MR 4
#define DG_CPU_PORTABLE_NR 16
void dg_cpu_sgemm_kern_portable(const ktile *t);
void dg_cpu_sgemm_dot_portable(int rows, int K, const float *a, size_t lda,
                               const float *bcols, size_t ldb, int ncols,
                               float *outs);

#if defined(__x86_64__) || defined(__i386__)
/* AVX2, up to 6 x 16 (sgemm_avx2.c). */
#define DG_CPU_AVX2_MR 6
#define DG_CPU_AVX2_NR 16
void dg_cpu_sgemm_kern_avx2(const ktile *t);
void dg_cpu_sgemm_dot_avx2(int rows, int K, const float *a, size_t lda,
                           const float *bcols, size_t ldb, int ncols,
                           float *outs);
#endif

#if defined(__aarch64__)
/* NEON, up to 8 x 12 (sgemm_neon.c). */
#define DG_CPU_NEON_MR 8
#define DG_CPU_NEON_NR 12
void dg_cpu_sgemm_kern_neon(const ktile *t);
#endif

#endif
