/* OpenCL pooling (ops/pool.c): windows and global average. */
#include "cl_prep.h"
#include "core/env.h"

#include "kernels/geom.h"
#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

cl_int dg_cl_pool(prep *p) {
  const dg_tensor_desc *x = dg_cl_in_desc(p, 0), *y = dg_cl_out_desc(p);
  const dg_node_params *np = &p->n->p;
  int32_t g[DG_CL_GEOM_INTS] = {0};
  bool global = p->n->op == DG_OP_GLOBAL_AVG_POOL;
  g[E_COUNT] = (int32_t)dg_desc_elements(y);
  g[P_NC] = (int32_t)(x->dims[0] * x->dims[1]);
  g[P_H] = (int32_t)x->dims[2];
  g[P_W] = (int32_t)x->dims[3];
  g[P_OH] = (int32_t)y->dims[2];
  g[P_OW] = (int32_t)y->dims[3];
  g[P_KH] = global ? g[P_H] : np->kernel[0];
  g[P_KW] = global ? g[P_W] : np->kernel[1];
  g[P_SH] = global ? 1 : np->stride[0];
  g[P_SW] = global ? 1 : np->stride[1];
  g[P_DH] = global ? 1 : np->dilation[0];
  g[P_DW] = global ? 1 : np->dilation[1];
  if (!global) {
    g[P_PT] = np->pads[0];
    g[P_PL] = np->pads[1];
    g[P_PB] = np->pads[2];
    g[P_PR] = np->pads[3];
    g[P_INCL] = np->count_include_pad;
  }
  g[P_MAX] = p->n->op == DG_OP_MAX_POOL2D;
  g[P_DT] = dg_cl_dt_code(x->dtype);
  cl_mem gm = NULL;
  cl_int err = dg_cl_aux(p, g, sizeof g, &gm);
  if (err != CL_SUCCESS)
    return err;
  cl_mem args[3] = {dg_cl_in_mem(p, 0), dg_cl_out_mem(p), gm};
  if (global) { /* a work-group per channel (pool.cl) */
    dg_cl_grid1(p->cn, (int64_t)g[P_NC] * 64);
    return dg_cl_kernel(p, "gap", 3, args);
  }
  dg_cl_grid1(p->cn, g[E_COUNT]);
  return dg_cl_kernel(p, "pool2d", 3, args);
}
