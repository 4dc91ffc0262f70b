/* Vulkan resize (ops/resize.c): resize.comp with a tap table per axis in
 * the node's parameter blob. */
#include "vk_internal.h"

#include "ops/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The taps of resize.comp (its header says the layout), in the node's
 * parameter blob. */
bool dg_vk_setup_resize(const vk_device *vd, vk_work *w, const dg_ir *ir,
                        const dg_node *n) {
  (void)vd;
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]),
                       *yd = dg_ir_desc(ir, n->output);
  int64_t OH = yd->dims[2], OW = yd->dims[3];
  w->push.resize =
      (vk_pc_resize){.NC = xd->dims[0] * xd->dims[1],
                     .H = xd->dims[2],
                     .W = xd->dims[3],
                     .OH = OH,
                     .OW = OW,
                     .linear = n->p.resize_mode == DG_RESIZE_LINEAR};
  w->shader = xd->dtype == DG_DTYPE_F32   ? SH_RESIZE_F32
              : xd->dtype == DG_DTYPE_F16 ? SH_RESIZE_F16
                                          : SH_RESIZE_8;
  w->bind[0] = n->inputs[0];
  w->bind[3] = n->output;
  w->bind[4] = VK_BIND_PARAMS;
  w->params_bytes = sizeof(uint32_t) * 3 * (size_t)(OH + OW);
  dg_vk_grid_1d(w->groups, dg_desc_elements(yd), 256);
  if (w->estimate)
    return true;
  uint32_t *t = dg_resize_tap_table(&n->p, xd, yd);
  if (!t)
    return false;
  w->params = t;
  return true;
}
