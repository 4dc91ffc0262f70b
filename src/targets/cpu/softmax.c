/* CPU softmax (ops/eltwise.c's softmax). Along the last axis (attention,
 * classifier heads) each row is one task's: its max, then e^(x - max)
 * with vexp.h's exponential, which vectorises at each SIMD level, then
 * the sum in double (dg_cpu_sum_f32) and one multiply by its inverse;
 * rows are dealt to the pool's threads in blocks. Other axes walk with a
 * stride and libm's expf. */
#include "cpu_ops.h"
#include "vexp.h"

#include <math.h>

/* No FMA contraction: meson passes -ffp-contract=off. */

#define ROW_BODY                                                               \
  float mx = -INFINITY;                                                        \
  for (int64_t k = 0; k < n; k++)                                              \
    mx = x[k] > mx ? x[k] : mx;                                                \
  for (int64_t k = 0; k < n; k++)                                              \
    y[k] = dg_cpu_exp(x[k] - mx);                                              \
  float inv = (float)(1.0 / dg_cpu_sum_f32(y, n, 1));                          \
  for (int64_t k = 0; k < n; k++)                                              \
    y[k] *= inv;

static void row_base(const float *x, float *y, int64_t n) { ROW_BODY }
#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) static void
row_avx2(const float *x, float *y, int64_t n){ROW_BODY} DG_CPU_T512
    static void row_avx512(const float *x, float *y, int64_t n) {
  ROW_BODY
}
#endif

typedef struct rows_job {
  const float *x;
  float *y;
  int64_t rows, len;
  void (*row)(const float *, float *, int64_t);
} rows_job;

static void rows_task(void *arg, int t, int n) {
  const rows_job *j = arg;
  for (int64_t r = j->rows * t / n; r < j->rows * (t + 1) / n; r++)
    j->row(j->x + r * j->len, j->y + r * j->len, j->len);
}

void dg_cpu_softmax_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                      void *out, void *scratch) {
  (void)scratch;
  const dg_tensor_desc *d = out_desc(cn);
  int axis = cn->node->p.axis;
  int64_t outer, len = d->dims[axis], inner;
  dg_desc_split(d, axis, &outer, &inner);
  if (inner == 1) {
    rows_job j = {in[0], out, outer, len, row_base};
#if defined(__x86_64__)
    int level = dg_cpu_simd_level();
    j.row = level >= DG_CPU_SIMD_AVX512 ? row_avx512
            : level >= DG_CPU_SIMD_AVX2 ? row_avx2
                                        : row_base;
#endif
    dg_cpu_pool_run(pool, rows_task, &j,
                    dg_cpu_pool_tasks(pool, outer * len, 16384, outer));
    return;
  }
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      const float *x = (const float *)in[0] + o * len * inner + j;
      float *y = (float *)out + o * len * inner + j;
      float mx = -INFINITY;
      for (int64_t k = 0; k < len; k++)
        mx = x[k * inner] > mx ? x[k * inner] : mx;
      for (int64_t k = 0; k < len; k++)
        y[k * inner] = expf(x[k * inner] - mx);
      float inv = (float)(1.0 / dg_cpu_sum_f32(y, len, inner));
      for (int64_t k = 0; k < len; k++)
        y[k * inner] *= inv;
    }
}
