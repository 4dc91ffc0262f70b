/* reduce and layer_norm on OpenCL: the geometry blocks of reduce.cl's
 * kernels (kernels/reduce_geom.h) from src/ops/reduce.c's shapes. */
#include "cl_internal.h"
#include "kernels/geom.h"
#include "kernels/reduce_geom.h"

#include "ops/ops.h"

#include <stdio.h>
#include <string.h>

/* reduce.cl's work-group size; which reductions run one output per
 * work-item: dg_reduce_serial (src/ops/ops.h). */
enum { WG = 64 };

static const char *reduce_geom(const dg_ir *ir, const dg_node *n, int32_t *g,
                               int64_t *items) {
  dg_reduce_shape s;
  dg_reduce_shape_get(dg_ir_desc(ir, n->inputs[0]), n->p.axes_mask, &s);
  g[E_COUNT] = (int32_t)s.outputs;
  g[R_COUNT] = (int32_t)s.count;
  g[R_PERITEM] = dg_reduce_serial(&s);
  for (int i = 0; i < 3; i++) {
    int k = i - (3 - s.kr), r = i - (3 - s.rr);
    g[R_KDIM + i] = k >= 0 ? (int32_t)s.kdim[k] : 1;
    g[R_KSTR + i] = k >= 0 ? (int32_t)s.kstr[k] : 0;
    g[R_RDIM + i] = r >= 0 ? (int32_t)s.rdim[r] : 1;
    g[R_RSTR + i] = r >= 0 ? (int32_t)s.rstr[r] : 0;
  }
  *items = g[R_PERITEM] ? s.outputs : s.outputs * WG;
  switch (n->p.fn) {
#define DG_REDUCE(e, v, name, init, comb, map, fin, shift)                     \
  case v:                                                                      \
    return "reduce_" #name;
#include "ops/reduce.def"
#undef DG_REDUCE
  default:
    return NULL;
  }
}

static const char *norm_geom(const dg_ir *ir, const dg_node *n, int32_t *g,
                             int64_t *items) {
  dg_layer_norm_shape s;
  dg_layer_norm_shape_get(ir, n, &s);
  bool bias = n->inputs[2] != 0;
  g[N_ROWS] = (int32_t)s.rows;
  g[N_LEN] = (int32_t)s.len;
  g[N_SFULL] = dg_desc_elements(dg_ir_desc(ir, n->inputs[1])) == s.len;
  g[N_BFULL] = bias && dg_desc_elements(dg_ir_desc(ir, n->inputs[2])) == s.len;
  g[N_BIAS] = bias;
  memcpy(&g[N_EPS], &n->p.epsilon, 4);
  for (int i = 0; i < 6; i++) {
    int k = i - (6 - s.rank);
    g[N_DIMS + i] = k >= 0 ? (int32_t)s.dims[k] : 1;
    g[N_SS + i] = k >= 0 ? (int32_t)s.ss[k] : 0;
    g[N_SB + i] = k >= 0 ? (int32_t)s.sb[k] : 0;
  }
  *items = s.rows * WG;
  return "layer_norm";
}

const char *dg_cl_reduce_geom(const dg_ir *ir, const dg_node *n, int32_t *g,
                              int64_t *items) {
  g[E_HIO] = dg_ir_desc(ir, n->output)->dtype == DG_DTYPE_F16;
  return n->op == DG_OP_LAYER_NORM ? norm_geom(ir, n, g, items)
                                   : reduce_geom(ir, n, g, items);
}
