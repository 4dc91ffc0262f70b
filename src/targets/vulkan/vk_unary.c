/* The Vulkan setup of DG_OP_UNARY: unary.comp, one invocation per element,
 * the function and its parameters in push constants (so one pipeline per
 * dtype serves every function and shape). */
#include "vk_internal.h"

bool dg_vk_setup_unary(const vk_device *vd, vk_work *w, const dg_ir *ir,
                       const dg_node *n) {
  (void)vd;
  const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
  int64_t total = dg_desc_elements(yd);
  w->push.unary = (vk_pc_unary){.total = (int)total,
                                .fn = n->p.fn,
                                .alpha = n->p.alpha,
                                .beta = n->p.beta};
  w->shader = yd->dtype == DG_DTYPE_F16 ? SH_UNARY_F16 : SH_UNARY_F32;
  w->bind[0] = n->inputs[0];
  w->bind[3] = n->output;
  dg_vk_grid_1d(w->groups, total, 256);
  return true;
}
