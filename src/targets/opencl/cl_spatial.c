/* The spatial family's OpenCL kernels (kernels/spatial.cl: resize, batch
 * norm, conv transpose, cast): per node, the kernel, its geometry block and its
 * host-computed table. cl_nodes.c binds them (spatial()), and the int8
 * ops of cl_int8.c, which take the same arguments, through here. */
#include "cl_internal.h"
#include "kernels/geom.h"

#include "ops/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool resize(const dg_ir *ir, const dg_node *n, int32_t *g,
                   dg_cl_spatial *sp, bool estimate) {
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]),
                       *yd = dg_ir_desc(ir, n->output);
  int64_t OH = yd->dims[2], OW = yd->dims[3];
  g[E_COUNT] = (int32_t)dg_desc_elements(yd);
  g[R_H] = (int32_t)xd->dims[2];
  g[R_W] = (int32_t)xd->dims[3];
  g[R_OH] = (int32_t)OH;
  g[R_OW] = (int32_t)OW;
  g[R_LINEAR] = n->p.resize_mode == DG_RESIZE_LINEAR;
  g[R_DT] = dg_cl_dt_code(xd->dtype);
  sp->kernel = "resize";
  sp->items = g[E_COUNT];
  sp->table_bytes = sizeof(int32_t) * 3 * (size_t)(OH + OW);
  if (estimate)
    return true;
  uint32_t *t = dg_resize_tap_table(&n->p, xd, yd);
  if (!t)
    return false;
  sp->table = t;
  return true;
}

static bool batch_norm(const dg_ir *ir, const dg_node *n, int32_t *g,
                       dg_cl_spatial *sp) {
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]);
  int64_t inner = 1;
  for (int i = 2; i < xd->rank; i++)
    inner *= xd->dims[i];
  float eps = n->p.epsilon;
  g[E_COUNT] = (int32_t)dg_desc_elements(xd);
  g[E_HIO] = xd->dtype == DG_DTYPE_F16;
  g[B_C] = (int32_t)xd->dims[1];
  g[B_INNER] = (int32_t)inner;
  memcpy(&g[B_EPS], &eps, 4);
  sp->kernel = "batch_norm";
  sp->items = g[E_COUNT];
  return true;
}

static bool conv_transpose(const dg_ir *ir, const dg_node *n, int32_t *g,
                           dg_cl_spatial *sp) {
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]),
                       *wd = dg_ir_desc(ir, n->inputs[1]),
                       *yd = dg_ir_desc(ir, n->output);
  const dg_node_params *p = &n->p;
  float lo = p->activation == DG_ACTIVATION_NONE ? -INFINITY : 0.0f;
  float hi = p->activation == DG_ACTIVATION_RELU6 ? 6.0f : INFINITY;
  g[G_NIMG] = (int32_t)xd->dims[0];
  g[G_C] = (int32_t)xd->dims[1];
  g[G_H] = (int32_t)xd->dims[2];
  g[G_W] = (int32_t)xd->dims[3];
  g[G_O] = (int32_t)yd->dims[1];
  g[G_OH] = (int32_t)yd->dims[2];
  g[G_OW] = (int32_t)yd->dims[3];
  g[G_KH] = (int32_t)wd->dims[2];
  g[G_KW] = (int32_t)wd->dims[3];
  g[G_SH] = p->stride[0];
  g[G_SW] = p->stride[1];
  g[G_DH] = p->dilation[0];
  g[G_DW] = p->dilation[1];
  g[G_PT] = p->pads[0];
  g[G_PL] = p->pads[1];
  g[G_CG] = (int32_t)(xd->dims[1] / p->groups);
  g[G_OG] = (int32_t)wd->dims[1];
  g[G_HIO] = xd->dtype == DG_DTYPE_F16;
  g[G_BIAS] = n->inputs[2] != 0;
  memcpy(&g[G_LO], &lo, 4);
  memcpy(&g[G_HI], &hi, 4);
  sp->kernel = "conv_transpose";
  sp->items = dg_desc_elements(yd);
  return true;
}

static bool cast(const dg_ir *ir, const dg_node *n, int32_t *g,
                 dg_cl_spatial *sp) {
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]),
                       *yd = dg_ir_desc(ir, n->output);
  g[E_COUNT] = (int32_t)dg_desc_elements(yd);
  g[C_FROM] = dg_cl_dt_code(xd->dtype);
  g[C_TO] = dg_cl_dt_code(yd->dtype);
  sp->kernel = "cast";
  sp->items = g[E_COUNT];
  return true;
}

bool dg_cl_spatial_setup(const dg_ir *ir, const dg_node *n, int32_t *g,
                         dg_cl_spatial *sp, bool estimate) {
  memset(sp, 0, sizeof *sp);
  switch (n->op) {
  case DG_OP_RESIZE:
    return resize(ir, n, g, sp, estimate);
  case DG_OP_BATCH_NORM:
    return batch_norm(ir, n, g, sp);
  case DG_OP_CONV_TRANSPOSE2D:
    return conv_transpose(ir, n, g, sp);
  case DG_OP_CAST:
    return cast(ir, n, g, sp);
  case DG_OP_QBINARY:
  case DG_OP_LOOKUP:
  case DG_OP_QAVG_POOL2D:
    return dg_cl_int8_setup(ir, n, g, sp, estimate);
  default:
    return false;
  }
}
