/* The geometry of compare, where and arg_reduce nodes for compare.cl:
 * what cl_nodes.c's table line needs to bind the kernel. */
#include "cl_internal.h"
#include "kernels/geom.h"

#include "ops/ops.h"

const char *dg_cl_compare_setup(const dg_ir *ir, const dg_node *n, int32_t *g,
                                int64_t *items) {
  const dg_tensor_desc *y = &dg_ir_tensor(ir, n->output)->desc;
  const dg_tensor_desc *x = &dg_ir_tensor(ir, n->inputs[0])->desc;
  if (n->op == DG_OP_ARG_REDUCE) {
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < n->p.axis; k++)
      outer *= x->dims[k];
    for (int k = n->p.axis + 1; k < x->rank; k++)
      inner *= x->dims[k];
    /* Sizes narrow to the kernels' int: supports() keeps every tensor
     * below 2^30 elements. */
    g[E_OUTER] = (int32_t)outer;
    g[E_LEN] = (int32_t)x->dims[n->p.axis];
    g[E_INNER] = (int32_t)inner;
    g[E_FN] = n->p.fn;
    g[E_LAST] = n->p.select_last_index;
    g[E_CDT] = dg_cl_dt_code(x->dtype);
    *items = outer * inner;
    return "arg_reduce_k";
  }
  int strides[3] = {E_SA, E_SB, E_SC};
  g[E_COUNT] = (int32_t)dg_desc_elements(y);
  g[E_RANK] = y->rank;
  for (int k = 0; k < n->input_count; k++) {
    const dg_tensor_desc *d = &dg_ir_tensor(ir, n->inputs[k])->desc;
    int64_t s[DG_MAX_RANK];
    dg_broadcast_strides(d->rank, d->dims, y->rank, y->dims, s);
    for (int i = 0; i < y->rank; i++)
      g[strides[k] + i] = (int32_t)s[i];
  }
  for (int i = 0; i < y->rank; i++)
    g[E_DIMS + i] = (int32_t)y->dims[i];
  *items = g[E_COUNT];
  if (n->op == DG_OP_WHERE) {
    g[E_CDT] = (int32_t)dg_dtype_size(y->dtype);
    return "where_k";
  }
  g[E_FN] = n->p.fn;
  g[E_CDT] = dg_cl_dt_code(x->dtype);
  return "compare_k"; /* a one-input fn reads a for b, with b's strides 0 */
}
