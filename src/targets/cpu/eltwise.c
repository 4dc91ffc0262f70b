/* CPU softmax (ops/eltwise.c) and the float binary functions
 * (ops/binary.c). */
#include "cpu_ops.h"
#include "cpu_reduce.h"

#include "core/half.h"
#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* No FMA contraction: meson passes -ffp-contract=off. */

/* The float binary functions (binary.def), broadcasting. */
void dg_cpu_binary_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                     void *out, void *scratch) {
  (void)pool, (void)scratch;
  const dg_tensor_desc *ad = in_desc(cn, 0), *bd = in_desc(cn, 1),
                       *yd = out_desc(cn);
  int64_t sa[DG_MAX_RANK], sb[DG_MAX_RANK];
  dg_broadcast_strides(ad->rank, ad->dims, yd->rank, yd->dims, sa);
  dg_broadcast_strides(bd->rank, bd->dims, yd->rank, yd->dims, sb);
  int fn = cn->node->p.fn;
  dg_cpu_binary(fn, yd->rank, yd->dims, in[0], sa, in[1], sb, out);
}

void dg_cpu_softmax_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                      void *out, void *scratch) {
  (void)pool, (void)scratch;
  const dg_tensor_desc *d = out_desc(cn);
  int axis = cn->node->p.axis;
  int64_t outer, len = d->dims[axis], inner;
  dg_desc_split(d, axis, &outer, &inner);
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
