/* The f32 GEMM's portable kernels (sgemm_tile.h's contract): a 4 x 16
 * tile in plain C the compiler can vectorise, and the few-row dot
 * products; the fallback at every SIMD level sgemm.c has no kernel for. */
#include "sgemm_tile.h"

void dg_cpu_sgemm_kern_portable(const ktile *t) {
  float acc[DG_CPU_PORTABLE_MR][DG_CPU_PORTABLE_NR];
  int mr = t->mr, nr = t->nr;
  for (int i = 0; i < DG_CPU_PORTABLE_MR; i++)
    for (int j = 0; j < DG_CPU_PORTABLE_NR; j++) {
      float v = 0.0f;
      if (i < mr && j < nr) {
        if (t->load_c)
          v = t->c[i * t->ldc + j];
        else if (t->bias_row)
          v = t->bias_row[i];
        else if (t->bias_col)
          v = t->bias_col[j];
      }
      acc[i][j] = v;
    }
  const float *a = t->a;
  for (int k = 0; k < t->kc; k++, a += mr) {
    const float *b = t->b + k * t->bs;
    if (nr == DG_CPU_PORTABLE_NR) {
      for (int i = 0; i < mr; i++)
        for (int j = 0; j < DG_CPU_PORTABLE_NR; j++)
          acc[i][j] += a[i] * b[j];
    } else {
      for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++)
          acc[i][j] += a[i] * b[j];
    }
  }
  for (int i = 0; i < mr; i++)
    for (int j = 0; j < nr; j++) {
      float v = acc[i][j];
      if (t->res)
        v += t->res[i * t->ldr + j];
      if (t->clamp)
        v = v < t->lo ? t->lo : (v > t->hi ? t->hi : v);
      t->c[i * t->ldc + j] = v;
    }
}

void dg_cpu_sgemm_dot_portable(int rows, int K, const float *a, size_t lda,
                               const float *bcols, size_t ldb, int ncols,
                               float *outs) {
  for (int x = 0; x < rows * ncols; x++) {
    int m = x / ncols, col = x % ncols;
    const float *b = bcols + col * ldb;
    float s[8] = {0};
    int k = 0;
    for (; k + 8 <= K; k += 8)
      for (int j = 0; j < 8; j++)
        s[j] += a[m * lda + k + j] * b[k + j];
    for (; k < K; k++)
      s[0] += a[m * lda + k] * b[k];
    outs[m * 4 + col] =
        ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
  }
}
