/* OpenCL element-wise nodes: the unary functions (unary.cl), the binary
 * ones (binary.cl), softmax and log-softmax (eltwise.cl). */
#include "cl_prep.h"
#include "core/env.h"

#include "kernels/geom.h"
#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

cl_int dg_cl_eltwise(prep *p) {
  const dg_tensor_desc *y = dg_cl_out_desc(p);
  int32_t g[DG_CL_GEOM_INTS] = {0};
  g[E_COUNT] = (int32_t)dg_desc_elements(y);
  g[E_HIO] = y->dtype == DG_DTYPE_F16;
  const char *name = NULL;
  int64_t items = g[E_COUNT];
  cl_mem args[4] = {dg_cl_in_mem(p, 0), dg_cl_out_mem(p), NULL, NULL};
  int nargs = 3;
  if (p->n->op == DG_OP_UNARY) { /* unary.cl */
    name = "unary_f32";
    g[E_FN] = p->n->p.fn;
    g[E_LO] = dg_cl_fbits(p->n->p.alpha);
    g[E_HI] = dg_cl_fbits(p->n->p.beta);
  } else if (p->n->op == DG_OP_BINARY) {
    const dg_tensor_desc *a = dg_cl_in_desc(p, 0), *b = dg_cl_in_desc(p, 1);
    int64_t sa[DG_MAX_RANK], sb[DG_MAX_RANK];
    dg_broadcast_strides(a->rank, a->dims, y->rank, y->dims, sa);
    dg_broadcast_strides(b->rank, b->dims, y->rank, y->dims, sb);
    g[E_RANK] = y->rank;
    for (int i = 0; i < y->rank; i++) {
      g[E_DIMS + i] = (int32_t)y->dims[i];
      g[E_SA + i] = (int32_t)sa[i];
      g[E_SB + i] = (int32_t)sb[i];
    }
    g[E_FN] = p->n->p.fn;
    name = "binary_f32";
    args[1] = dg_cl_in_mem(p, 1);
    args[2] = dg_cl_out_mem(p);
    nargs = 4;
  } else { /* softmax */
    int axis = p->n->p.axis;
    int64_t outer, inner;
    dg_desc_split(y, axis, &outer, &inner);
    g[E_OUTER] = (int32_t)outer;
    g[E_LEN] = (int32_t)y->dims[axis];
    g[E_INNER] = (int32_t)inner;
    g[E_LOGSM] = p->n->op == DG_OP_LOG_SOFTMAX;
    items = outer * inner;
    name = "softmax_f32";
  }
  cl_mem gm = NULL;
  cl_int err = dg_cl_aux(p, g, sizeof g, &gm);
  if (err != CL_SUCCESS)
    return err;
  args[nargs - 1] = gm;
  dg_cl_grid1(p->cn, items);
  return dg_cl_kernel(p, name, nargs, args);
}
