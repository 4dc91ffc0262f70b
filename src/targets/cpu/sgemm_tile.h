/* The f32 GEMM's microkernel contract, shared by sgemm.c and the kernels
 * kept in files of their own (sgemm_neon.c). */
#ifndef DG_CPU_SGEMM_TILE_H
#define DG_CPU_SGEMM_TILE_H

#include <stddef.h>

/* One microkernel call: C[mr, nr] (+)= Apanel[mr, kc] * B[kc, nr]. */
typedef struct ktile {
  int mr, nr, kc;
  const float *a; /* packed, a[k * mr + i] */
  const float *b; /* row k at b + k * bs; only nr columns are readable */
  size_t bs;
  float *c;
  size_t ldc;
  int load_c;            /* accumulate onto C (not the first K slice) */
  const float *bias_row; /* mr entries, or NULL */
  const float *bias_col; /* nr entries, or NULL */
  int clamp;
  float lo, hi;
} ktile;

#if defined(__aarch64__)
/* NEON, up to 8 x 12 (sgemm_neon.c). */
#define DG_CPU_NEON_MR 8
#define DG_CPU_NEON_NR 12
void dg_cpu_sgemm_kern_neon(const ktile *t);
#endif

#endif
