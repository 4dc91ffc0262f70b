/* Vulkan batch norm (ops/batch_norm.c), where it was not folded into the
 * producing conv. */
#include "vk_internal.h"

#include "ops/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* batch_norm.comp's pre-pass (the per-channel factors into scratch),
 * then the main pass reading them. */
bool dg_vk_setup_batch_norm(const vk_device *vd, vk_work *w, const dg_ir *ir,
                            const dg_node *n) {
  (void)vd;
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]);
  bool f16 = xd->dtype == DG_DTYPE_F16;
  int64_t C = xd->dims[1], inner = 1, total = dg_desc_elements(xd);
  for (int i = 2; i < xd->rank; i++)
    inner *= xd->dims[i];
  w->push.bnorm = (vk_pc_bnorm){
      .total = total, .C = C, .inner = inner, .eps = n->p.epsilon};
  w->scratch_bytes = (VkDeviceSize)(2 * C) * 4;
  w->pre.on = true;
  w->pre.shader = f16 ? SH_BNPRE_F16 : SH_BNPRE_F32;
  for (int k = 0; k < 4; k++)
    w->pre.bind[k] = n->inputs[k + 1];
  w->pre.bind[4] = VK_BIND_SCRATCH;
  dg_vk_grid_1d(w->pre.groups, C, 256);
  w->shader = f16 ? SH_BNORM_F16 : SH_BNORM_F32;
  w->bind[0] = n->inputs[0];
  w->bind[3] = n->output;
  w->bind[4] = VK_BIND_SCRATCH;
  dg_vk_grid_1d(w->groups, total, 256);
  return true;
}
