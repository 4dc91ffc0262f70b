/* Arg reductions (DG_OP_ARG_REDUCE): the index of the largest or smallest
 * element along one axis, as i64 (ONNX ArgMax / ArgMin).
 *
 * Ties go to the first index, or the last with select_last_index. Lines
 * are scanned from index 0 and an element replaces the best so far only
 * when it compares greater (MAX) or less (MIN), or equal for the last
 * index; every target follows this order, so NaN (which compares false)
 * is chosen only as a line's first element. */
#include "build.h"
#include "ops.h"

#include <math.h>
#include <stdio.h>

dg_tensor dg_graph_arg_reduce(dg_graph *g, const char *name, dg_arg_fn fn,
                              dg_tensor x, int32_t axis, int keepdims,
                              int select_last_index) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_ARG_REDUCE, name))
    return DG_TENSOR_NONE;
  char exp[48], got[32];
  if (fn <= DG_ARG_INVALID || fn >= DG_ARG_COUNT_) {
    snprintf(exp, sizeof exp, "in [1, %d]", DG_ARG_COUNT_ - 1);
    snprintf(got, sizeof got, "%d", (int)fn);
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "fn", exp, got,
                  "unknown arg function");
    return DG_TENSOR_NONE;
  }
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  if (!ok || !dg_build_dtype(&b, xi, "x",
                             DG_FLOAT_TYPES | DG_BIT(DG_DTYPE_I32) |
                                 DG_BIT(DG_DTYPE_I64)))
    return DG_TENSOR_NONE;
  int rank = xi->desc.rank;
  if (rank < 1 || axis < -rank || axis >= rank) {
    snprintf(exp, sizeof exp, "in [%d, %d)", -rank, rank);
    snprintf(got, sizeof got, "%d", axis);
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "axis", exp, got,
                  rank < 1 ? "a scalar has no axis to reduce"
                           : "axis out of range");
    return DG_TENSOR_NONE;
  }
  if (axis < 0)
    axis += rank;
  dg_tensor_desc out = {.dtype = DG_DTYPE_I64};
  for (int k = 0; k < rank; k++) {
    if (k == axis && !keepdims)
      continue;
    out.dims[out.rank++] = k == axis ? 1 : xi->desc.dims[k];
  }
  dg_node_params p = {.fn = fn,
                      .axis = axis,
                      .keepdims = keepdims != 0,
                      .select_last_index = select_last_index != 0};
  return dg_build_finish(&b, &x.id, 1, &out, &p);
}

/* ---- reference ---- */

void dg_ref_arg_reduce(const dg_ir *ir, const dg_node *n,
                       const double *const *in, double *out) {
  const dg_tensor_desc *xd = &dg_ir_tensor(ir, n->inputs[0])->desc;
  int64_t outer = 1, inner = 1, len = xd->dims[n->p.axis];
  for (int k = 0; k < n->p.axis; k++)
    outer *= xd->dims[k];
  for (int k = n->p.axis + 1; k < xd->rank; k++)
    inner *= xd->dims[k];
  double sign = n->p.fn == DG_ARG_MAX ? 1 : -1; /* MIN is MAX of -x */
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      const double *x = in[0] + o * len * inner + j;
      double best = sign * x[0];
      int64_t at = 0;
      for (int64_t k = 1; k < len; k++) {
        double v = sign * x[k * inner];
        if (v > best || (n->p.select_last_index && v == best)) {
          best = v;
          at = k;
        }
      }
      out[o * inner + j] = (double)at;
    }
}

double dg_flops_arg_reduce(const dg_ir *ir, const dg_node *n) {
  return (double)dg_desc_elements(&dg_ir_tensor(ir, n->inputs[0])->desc);
}
