/* The CPU's float binary functions (ops/binary.c); softmax is
 * softmax.c's. */
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
  (void)scratch;
  const dg_tensor_desc *ad = in_desc(cn, 0), *bd = in_desc(cn, 1),
                       *yd = out_desc(cn);
  int64_t sa[DG_MAX_RANK], sb[DG_MAX_RANK];
  dg_broadcast_strides(ad->rank, ad->dims, yd->rank, yd->dims, sa);
  dg_broadcast_strides(bd->rank, bd->dims, yd->rank, yd->dims, sb);
  int fn = cn->node->p.fn;
  dg_cpu_binary(pool, fn, yd->rank, yd->dims, in[0], sa, in[1], sb, out);
}
