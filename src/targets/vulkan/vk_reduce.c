/* reduce and layer_norm on Vulkan: the work of reduce.comp and
 * layer_norm.comp (their headers say how they split a row), following
 * src/ops/reduce.c's references. */
#include "vk_internal.h"

#include "ops/ops.h"

/* reduce.comp's and layer_norm.comp's workgroup size. Which reductions
 * run one output per invocation: dg_reduce_serial (src/ops/ops.h). */
enum { WG = 256 };

/* count workgroups as a 2-D grid of at most 65535 along x (the shaders
 * rebuild the index; supports() keeps counts below 2^31). */
static void grid(uint32_t g[3], int64_t count) {
  int64_t gx = count < 65535 ? count : 65535;
  g[0] = (uint32_t)(gx ? gx : 1);
  g[1] = (uint32_t)((count + g[0] - 1) / g[0]);
  g[2] = 1;
}

static bool shifted(int32_t fn) {
  switch (fn) {
#define DG_REDUCE(e, v, name, init, comb, map, fin, shift)                     \
  case v:                                                                      \
    return shift;
#include "ops/reduce.def"
#undef DG_REDUCE
  default:
    return false;
  }
}

uint64_t dg_vk_reduce_trips(const dg_ir *ir, const dg_node *n) {
  if (n->op == DG_OP_LAYER_NORM) {
    dg_layer_norm_shape s;
    dg_layer_norm_shape_get(ir, n, &s);
    return 3 * (uint64_t)((s.len + WG - 1) / WG) + 2 * 8; /* + two trees */
  }
  dg_reduce_shape s;
  dg_reduce_shape_get(dg_ir_desc(ir, n->inputs[0]), n->p.axes_mask, &s);
  uint64_t passes = shifted(n->p.fn) ? 2 : 1;
  if (dg_reduce_serial(&s))
    return passes * (uint64_t)s.count;
  return passes * ((uint64_t)(s.count + WG - 1) / WG + 8);
}

bool dg_vk_setup_reduce(const vk_device *vd, vk_work *w, const dg_ir *ir,
                        const dg_node *n) {
  (void)vd;
  dg_reduce_shape s;
  dg_reduce_shape_get(dg_ir_desc(ir, n->inputs[0]), n->p.axes_mask, &s);
  vk_pc_reduce *pc = &w->push.reduce;
  *pc = (vk_pc_reduce){.fn = n->p.fn,
                       .outputs = (int)s.outputs,
                       .count = (int)s.count,
                       .per_inv = dg_reduce_serial(&s)};
  /* Padded in front: dims of 1 and stride 0 leave the offset as is. */
  for (int i = 0; i < 3; i++) {
    int k = i - (3 - s.kr), r = i - (3 - s.rr);
    pc->kdim[i] = k >= 0 ? (int)s.kdim[k] : 1;
    pc->kstr[i] = k >= 0 ? (int)s.kstr[k] : 0;
    pc->rdim[i] = r >= 0 ? (int)s.rdim[r] : 1;
    pc->rstr[i] = r >= 0 ? (int)s.rstr[r] : 0;
  }
  w->shader = dg_ir_desc(ir, n->output)->dtype == DG_DTYPE_F16 ? SH_REDUCE_F16
                                                               : SH_REDUCE_F32;
  w->bind[0] = n->inputs[0];
  w->bind[3] = n->output;
  grid(w->groups, pc->per_inv ? (s.outputs + WG - 1) / WG : s.outputs);
  return true;
}

bool dg_vk_setup_layer_norm(const vk_device *vd, vk_work *w, const dg_ir *ir,
                            const dg_node *n) {
  (void)vd;
  dg_layer_norm_shape s;
  dg_layer_norm_shape_get(ir, n, &s);
  vk_pc_layer_norm *pc = &w->push.layer_norm;
  bool bias = n->inputs[2] != 0;
  *pc = (vk_pc_layer_norm){
      .rows = (int)s.rows,
      .len = (int)s.len,
      .sfull = dg_desc_elements(dg_ir_desc(ir, n->inputs[1])) == s.len,
      .bfull = bias && dg_desc_elements(dg_ir_desc(ir, n->inputs[2])) == s.len,
      .has_bias = bias,
      .epsilon = n->p.epsilon};
  for (int i = 0; i < 6; i++) {
    int k = i - (6 - s.rank);
    pc->dims[i] = k >= 0 ? (int)s.dims[k] : 1;
    pc->ss[i] = k >= 0 ? (int)s.ss[k] : 0;
    pc->sb[i] = k >= 0 ? (int)s.sb[k] : 0;
  }
  w->shader = dg_ir_desc(ir, n->output)->dtype == DG_DTYPE_F16
                  ? SH_LAYER_NORM_F16
                  : SH_LAYER_NORM_F32;
  w->bind[0] = n->inputs[0];
  w->bind[1] = n->inputs[1];
  w->bind[2] = bias ? n->inputs[2] : 0;
  w->bind[3] = n->output;
  grid(w->groups, s.rows);
  return true;
}
