/* The OpenCL kernels of qbinary, lookup and qavg_pool2d (kernels/int8.cl):
 * per node, the kernel, its geometry block (kernels/int8_geom.h) and the
 * host-computed factors, from the same helpers as the CPU kernels
 * (dg_qbinary_factors, dg_requant_pool_multiplier), so that every target
 * is bit-exact. cl_nodes.c binds them as the spatial family's (spatial()),
 * cl_device.c asks what is declined. */
#include "cl_internal.h"
#include "kernels/geom.h"
#include "kernels/int8_geom.h"

#include "ops/ops.h"
#include "ops/requant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* qavg_pool2d takes its multipliers from a table of one float per divisor
 * 1..taps: beyond this many taps the table would outgrow what a node's
 * small host array should be (a global pool of 256 x 256 still fits). */
#define QPOOL_TABLE_MAX 65536
/* From this many taps a window gets a work-group of WG1 work-items
 * (qavg_pool2d_wg_q8), each summing at least 4 of them: one work-item
 * summing a whole global pool leaves a GPU idle (as pool.cl's gap says). */
#define QPOOL_GROUP_TAPS 256

static int32_t fbits(float f) {
  int32_t i;
  memcpy(&i, &f, 4);
  return i;
}

static int64_t window_taps(const dg_node *n) {
  return (int64_t)n->p.kernel[0] * n->p.kernel[1];
}

/* The output's zero point and dtype range. */
static void q8_out(const dg_tensor_desc *yd, int32_t *g) {
  int64_t lo, hi;
  dg_dtype_int_range(yd->dtype, &lo, &hi);
  g[Q_ZY] = yd->quant.zero_point;
  g[Q_LO] = (int32_t)lo;
  g[Q_HI] = (int32_t)hi;
}

static void qbinary(const dg_ir *ir, const dg_node *n, int32_t *g,
                    dg_cl_spatial *sp) {
  const dg_tensor_desc *ad = dg_ir_desc(ir, n->inputs[0]),
                       *bd = dg_ir_desc(ir, n->inputs[1]),
                       *yd = dg_ir_desc(ir, n->output);
  int64_t sa[DG_MAX_RANK], sb[DG_MAX_RANK];
  dg_broadcast_strides(ad->rank, ad->dims, yd->rank, yd->dims, sa);
  dg_broadcast_strides(bd->rank, bd->dims, yd->rank, yd->dims, sb);
  /* Sizes narrow to the kernels' int: supports() keeps every tensor below
   * 2^30 elements. */
  g[E_COUNT] = (int32_t)dg_desc_elements(yd);
  g[E_RANK] = yd->rank;
  for (int i = 0; i < yd->rank; i++) {
    g[E_DIMS + i] = (int32_t)yd->dims[i];
    g[E_SA + i] = (int32_t)sa[i];
    g[E_SB + i] = (int32_t)sb[i];
  }
  float fa, fb;
  dg_qbinary_factors(ir, n, &fa, &fb);
  g[Q_ASGN] = ad->dtype == DG_DTYPE_I8;
  g[Q_BSGN] = bd->dtype == DG_DTYPE_I8;
  g[Q_ZA] = ad->quant.zero_point;
  g[Q_ZB] = bd->quant.zero_point;
  q8_out(yd, g);
  g[Q_MUL] = n->p.fn == DG_BINARY_MUL;
  g[Q_FA] = fbits(fa);
  g[Q_FB] = fbits(fb);
  sp->kernel = "qbinary_q8";
  sp->items = g[E_COUNT];
}

static void lookup(const dg_ir *ir, const dg_node *n, int32_t *g,
                   dg_cl_spatial *sp) {
  g[E_COUNT] = (int32_t)dg_desc_elements(dg_ir_desc(ir, n->output));
  g[Q_ASGN] = dg_ir_desc(ir, n->inputs[0])->dtype == DG_DTYPE_I8;
  sp->kernel = "lookup_q8";
  sp->items = g[E_COUNT];
}

static bool qavg_pool(const dg_ir *ir, const dg_node *n, int32_t *g,
                      dg_cl_spatial *sp, bool estimate) {
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]),
                       *yd = dg_ir_desc(ir, n->output);
  const dg_node_params *p = &n->p;
  g[E_COUNT] = (int32_t)dg_desc_elements(yd);
  g[P_NC] = (int32_t)(xd->dims[0] * xd->dims[1]);
  g[P_H] = (int32_t)xd->dims[2];
  g[P_W] = (int32_t)xd->dims[3];
  g[P_OH] = (int32_t)yd->dims[2];
  g[P_OW] = (int32_t)yd->dims[3];
  g[P_KH] = p->kernel[0];
  g[P_KW] = p->kernel[1];
  g[P_SH] = p->stride[0];
  g[P_SW] = p->stride[1];
  g[P_DH] = p->dilation[0];
  g[P_DW] = p->dilation[1];
  g[P_PT] = p->pads[0];
  g[P_PL] = p->pads[1];
  g[P_PB] = p->pads[2];
  g[P_PR] = p->pads[3];
  g[P_INCL] = p->count_include_pad;
  g[Q_ASGN] = xd->dtype == DG_DTYPE_I8;
  g[Q_ZA] = xd->quant.zero_point;
  q8_out(yd, g);
  bool group = dg_cl_qpool_grouped(n);
  sp->kernel = group ? "qavg_pool2d_wg_q8" : "qavg_pool2d_q8";
  sp->items = group ? (int64_t)g[E_COUNT] * 64 : g[E_COUNT];
  int64_t taps = window_taps(n);
  sp->table_bytes = sizeof(float) * (size_t)taps;
  if (estimate)
    return true;
  float *m = malloc(sp->table_bytes);
  if (!m)
    return false;
  for (int64_t k = 0; k < taps; k++)
    m[k] = dg_requant_pool_multiplier(xd->quant.scale, yd->quant.scale, k + 1);
  sp->table = m;
  return true;
}

bool dg_cl_int8_setup(const dg_ir *ir, const dg_node *n, int32_t *g,
                      dg_cl_spatial *sp, bool estimate) {
  switch (n->op) {
  case DG_OP_QBINARY:
    qbinary(ir, n, g, sp);
    return true;
  case DG_OP_LOOKUP:
    lookup(ir, n, g, sp);
    return true;
  case DG_OP_QAVG_POOL2D:
    return qavg_pool(ir, n, g, sp, estimate);
  default:
    return false;
  }
}

bool dg_cl_qpool_grouped(const dg_node *n) {
  return n->op == DG_OP_QAVG_POOL2D && window_taps(n) >= QPOOL_GROUP_TAPS;
}

bool dg_cl_int8_declines(const dg_node *n, char *why, size_t why_size) {
  if (n->op == DG_OP_QAVG_POOL2D && window_taps(n) > QPOOL_TABLE_MAX) {
    snprintf(why, why_size,
             "a qavg_pool2d window of %lld taps (at most %d: one host "
             "multiplier per divisor)",
             (long long)window_taps(n), QPOOL_TABLE_MAX);
    return true;
  }
  return false;
}
