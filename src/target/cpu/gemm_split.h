/* How the packed GEMMs (sgemm.c, qgemm.c) divide work and packed row
 * blocks between tasks: one definition, so both split alike. */
#ifndef DG_CPU_GEMM_SPLIT_H
#define DG_CPU_GEMM_SPLIT_H

/* Part idx of parts of [0, len), in whole units of `unit` (the last part
 * may end mid-unit at len). */
static inline void gemm_split(int len, int unit, int parts, int idx, int *lo,
                              int *hi) {
  int units = (len + unit - 1) / unit;
  int u0 = (int)((long long)units * idx / parts);
  int u1 = (int)((long long)units * (idx + 1) / parts);
  *lo = u0 * unit < len ? u0 * unit : len;
  *hi = u1 * unit < len ? u1 * unit : len;
}

/* First row of row block b of nblk blocks over M rows. */
static inline int gemm_blk_row(int M, int nblk, int b) {
  return (int)((long long)M * b / nblk);
}

#endif
