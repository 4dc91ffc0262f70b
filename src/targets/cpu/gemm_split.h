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

/* The rows, columns and row blocks of task `task` of a tm x tn task grid
 * over an M x N GEMM: with A prepacked in packed_nblk row blocks
 * (packed_nblk > 0), whole blocks per task; otherwise rows split freely
 * and counted in blocks of mr. Columns split in units of nr. Returns 0 when
 * the task has no work. */
typedef struct gemm_task_range {
  int m0, m1, n0, n1;
  int b0, nblk; /* first packed row block (0 when unpacked), block count */
} gemm_task_range;
static inline int gemm_task_range_of(int M, int N, int packed_nblk, int mr,
                                     int nr, int tm, int tn, int task,
                                     gemm_task_range *r) {
  r->b0 = 0;
  if (packed_nblk > 0) {
    int b1;
    gemm_split(packed_nblk, 1, tm, task / tn, &r->b0, &b1);
    r->m0 = gemm_blk_row(M, packed_nblk, r->b0);
    r->m1 = gemm_blk_row(M, packed_nblk, b1);
    r->nblk = b1 - r->b0;
  } else {
    gemm_split(M, 1, tm, task / tn, &r->m0, &r->m1);
    r->nblk = (r->m1 - r->m0 + mr - 1) / mr;
  }
  gemm_split(N, nr, tn, task % tn, &r->n0, &r->n1);
  return r->m0 < r->m1 && r->n0 < r->n1;
}

#endif
