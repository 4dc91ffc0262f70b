/* CPU batch norm (ops/batch_norm.c), where it was not folded into the
 * producing conv. */
#include "cpu_ops.h"

#include "core/half.h"
#include "ops/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct bn_job {
  const float *x, *mean, *bias;
  float *y;
  const float *a; /* scale / sqrt(var + epsilon), per channel */
  int64_t C, inner;
} bn_job;

/* One plane (image x channel) per task. */
static void bn_task(void *arg, int i, int n) {
  (void)n;
  const bn_job *j = arg;
  int64_t c = i % j->C;
  const float *x = j->x + (size_t)i * (size_t)j->inner;
  float *y = j->y + (size_t)i * (size_t)j->inner;
  float a = j->a[c], m = j->mean[c], b = j->bias[c];
  for (int64_t k = 0; k < j->inner; k++)
    y[k] = (x[k] - m) * a + b;
}

/* The per-channel factors in double (then rounded once) on every run:
 * the parameters may be fed at run time, and C of them cost nothing. */
static void bn_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in, void *out,
                 void *scratch) {
  const dg_tensor_desc *xd = in_desc(cn, 0);
  int64_t C = xd->dims[1], inner = 1;
  for (int i = 2; i < xd->rank; i++)
    inner *= xd->dims[i];
  const float *scale = in[1], *var = in[4];
  float *a = scratch;
  for (int64_t c = 0; c < C; c++)
    a[c] = (float)((double)scale[c] /
                   sqrt((double)var[c] + (double)cn->node->p.epsilon));
  bn_job j = {in[0], in[3], in[2], out, a, C, inner};
  dg_cpu_pool_run(pool, bn_task, &j, (int)(xd->dims[0] * C));
}

bool dg_cpu_prep_batch_norm(dg_cpu_node *cn, int threads) {
  (void)threads;
  cn->run = bn_k;
  cn->scratch_bytes = sizeof(float) * (size_t)in_desc(cn, 0)->dims[1];
  return true;
}
