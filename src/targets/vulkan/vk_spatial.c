/* The spatial family's Vulkan work: resize, batch norm, conv transpose,
 * cast. Each setup follows the op's reference kernel in src/ops and
 * fills the push-constant layout of its shader (shaders/push_constants.h). */
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

/* cast.comp's module for the pair, or a buffer copy when the dtypes are
 * the same. */
bool dg_vk_setup_cast(const vk_device *vd, vk_work *w, const dg_ir *ir,
                      const dg_node *n) {
  (void)vd;
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]),
                       *yd = dg_ir_desc(ir, n->output);
  if (xd->dtype == yd->dtype) {
    w->is_copy = true;
    if (!(w->copies = malloc(sizeof *w->copies)))
      return false;
    w->copies[0] = (vk_copy){n->inputs[0], n->output, 0, 0, dg_desc_bytes(yd)};
    w->copy_count = 1;
    return true;
  }
  static const struct {
    dg_dtype from, to;
    vk_shader sh;
  } pairs[] = {
      {DG_DTYPE_F32, DG_DTYPE_F16, SH_CAST_F32_F16},
      {DG_DTYPE_F32, DG_DTYPE_I32, SH_CAST_F32_I32},
      {DG_DTYPE_F16, DG_DTYPE_F32, SH_CAST_F16_F32},
      {DG_DTYPE_F16, DG_DTYPE_I32, SH_CAST_F16_I32},
      {DG_DTYPE_I32, DG_DTYPE_F32, SH_CAST_I32_F32},
      {DG_DTYPE_I32, DG_DTYPE_F16, SH_CAST_I32_F16},
  };
  for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
    if (pairs[i].from == xd->dtype && pairs[i].to == yd->dtype)
      w->shader = pairs[i].sh;
  w->push.cast = (vk_pc_cast){.total = dg_desc_elements(yd)};
  w->bind[0] = n->inputs[0];
  w->bind[3] = n->output;
  dg_vk_grid_1d(w->groups, dg_desc_elements(yd), 256);
  return true;
}
