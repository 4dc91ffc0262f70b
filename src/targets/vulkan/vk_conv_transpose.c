/* Vulkan transposed convolution (ops/conv_transpose.c). */
#include "vk_internal.h"

#include "ops/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* conv_transpose.comp, in the conv push layout (its header says how the
 * fields map). */
bool dg_vk_setup_conv_transpose(const vk_device *vd, vk_work *w,
                                const dg_ir *ir, const dg_node *n) {
  (void)vd;
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]),
                       *wd = dg_ir_desc(ir, n->inputs[1]),
                       *yd = dg_ir_desc(ir, n->output);
  const dg_node_params *p = &n->p;
  vk_pc_conv *pc = &w->push.conv;
  *pc = (vk_pc_conv){.N = xd->dims[0],
                     .C = xd->dims[1],
                     .H = xd->dims[2],
                     .W = xd->dims[3],
                     .O = yd->dims[1],
                     .OH = yd->dims[2],
                     .OW = yd->dims[3],
                     .KH = wd->dims[2],
                     .KW = wd->dims[3],
                     .G = p->groups,
                     .CG = xd->dims[1] / p->groups,
                     .OG = wd->dims[1],
                     .sh = p->stride[0],
                     .sw = p->stride[1],
                     .dh = p->dilation[0],
                     .dw = p->dilation[1],
                     .pt = p->pads[0],
                     .pl = p->pads[1],
                     .has_bias = n->inputs[2] != 0};
  pc->lo = p->activation == DG_ACTIVATION_NONE ? -INFINITY : 0.0f;
  pc->hi = p->activation == DG_ACTIVATION_RELU6 ? 6.0f : INFINITY;
  w->shader = xd->dtype == DG_DTYPE_F16 ? SH_CONVT_F16 : SH_CONVT_F32;
  w->bind[0] = n->inputs[0];
  w->bind[1] = n->inputs[1];
  w->bind[2] = n->inputs[2];
  w->bind[3] = n->output;
  dg_vk_grid_1d(w->groups, dg_desc_elements(yd), 64);
  return true;
}
