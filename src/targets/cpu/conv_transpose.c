/* CPU transposed convolution (ops/conv_transpose.c). */
#include "cpu_ops.h"

#include "core/half.h"
#include "ops/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ct_job {
  const dg_cpu_node *cn;
  const float *x, *w, *b;
  float *y;
} ct_job;

/* One output plane (image x output channel) per task; each output
 * gathers the inputs whose window covers it: oh = ih * stride + kh * dil
 * - pad, so ih is whole only where stride divides oh + pad - kh * dil. */
static void ct_task(void *arg, int i, int n) {
  (void)n;
  const ct_job *j = arg;
  const dg_node_params *p = &j->cn->node->p;
  const dg_tensor_desc *xd = in_desc(j->cn, 0), *wd = in_desc(j->cn, 1),
                       *yd = out_desc(j->cn);
  int64_t C = xd->dims[1], H = xd->dims[2], W = xd->dims[3];
  int64_t O = yd->dims[1], OH = yd->dims[2], OW = yd->dims[3];
  int64_t OG = wd->dims[1], KH = wd->dims[2], KW = wd->dims[3];
  int64_t CG = C / p->groups, b = i / O, o = i % O, grp = o / OG, oc = o % OG;
  float lo = p->activation == DG_ACTIVATION_NONE ? -INFINITY : 0.0f;
  float hi = p->activation == DG_ACTIVATION_RELU6 ? 6.0f : INFINITY;
  float bias = j->b ? j->b[o] : 0.0f;
  float *y = j->y + (size_t)i * (size_t)(OH * OW);
  for (int64_t oh = 0; oh < OH; oh++)
    for (int64_t ow = 0; ow < OW; ow++) {
      float s = 0;
      for (int64_t c = grp * CG; c < (grp + 1) * CG; c++) {
        const float *x = j->x + (b * C + c) * H * W;
        const float *w = j->w + (c * OG + oc) * KH * KW;
        for (int64_t kh = 0; kh < KH; kh++) {
          int64_t th = oh + p->pads[0] - kh * p->dilation[0];
          if (th < 0 || th % p->stride[0] || th / p->stride[0] >= H)
            continue;
          for (int64_t kw = 0; kw < KW; kw++) {
            int64_t tw = ow + p->pads[1] - kw * p->dilation[1];
            if (tw < 0 || tw % p->stride[1] || tw / p->stride[1] >= W)
              continue;
            s += x[th / p->stride[0] * W + tw / p->stride[1]] * w[kh * KW + kw];
          }
        }
      }
      s += bias;
      y[oh * OW + ow] = s < lo ? lo : (s > hi ? hi : s);
    }
}

static void ct_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in, void *out,
                 void *scratch) {
  (void)scratch;
  const dg_tensor_desc *yd = out_desc(cn);
  ct_job j = {cn, in[0], in[1], in[2], out};
  dg_cpu_pool_run(pool, ct_task, &j, (int)(yd->dims[0] * yd->dims[1]));
}

bool dg_cpu_prep_conv_transpose(dg_cpu_node *cn, int threads) {
  (void)threads;
  cn->run = ct_k;
  return true;
}
