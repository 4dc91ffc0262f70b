/* Vulkan pooling (ops/pool.c): windows and global average. */
#include "vk_internal.h"

#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

vk_pc_pool dg_vk_pool_push(const dg_ir *ir, const dg_node *n) {
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]),
                       *yd = dg_ir_desc(ir, n->output);
  const dg_node_params *p = &n->p;
  return (vk_pc_pool){.NC = xd->dims[0] * xd->dims[1],
                      .H = xd->dims[2],
                      .W = xd->dims[3],
                      .OH = yd->dims[2],
                      .OW = yd->dims[3],
                      .kh = p->kernel[0],
                      .kw = p->kernel[1],
                      .sh = p->stride[0],
                      .sw = p->stride[1],
                      .pt = p->pads[0],
                      .pl = p->pads[1],
                      .pb = p->pads[2],
                      .pr = p->pads[3],
                      .is_max = n->op == DG_OP_MAX_POOL2D,
                      .count_include_pad = p->count_include_pad,
                      .flags = xd->dtype == DG_DTYPE_I8,
                      .dh = p->dilation[0],
                      .dw = p->dilation[1]};
}

bool dg_vk_setup_pool(const vk_device *vd, vk_work *w, const dg_ir *ir,
                      const dg_node *n) {
  (void)vd;
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]),
                       *yd = dg_ir_desc(ir, n->output);
  w->push.pool = dg_vk_pool_push(ir, n);
  w->shader = xd->dtype == DG_DTYPE_F32   ? SH_POOL_F32
              : xd->dtype == DG_DTYPE_F16 ? SH_POOL_F16
                                          : SH_POOL_8;
  w->bind[0] = n->inputs[0];
  w->bind[3] = n->output;
  dg_vk_grid_1d(w->groups, dg_desc_elements(yd), 256);
  return true;
}

bool dg_vk_setup_gap(const vk_device *vd, vk_work *w, const dg_ir *ir,
                     const dg_node *n) {
  (void)vd;
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]);
  bool f16 = xd->dtype == DG_DTYPE_F16;
  int64_t NC = xd->dims[0] * xd->dims[1], HW = xd->dims[2] * xd->dims[3];
  /* Chunks of 4096 (64 per invocation), more where a row of workgroups
   * would pass 65535; gap.comp says why two passes. */
  int64_t CH = 4096;
  if ((HW + CH - 1) / CH > 65535)
    CH = ((HW + 65534) / 65535 + 63) / 64 * 64;
  int64_t G = (HW + CH - 1) / CH;
  int64_t cz = (NC + 65534) / 65535;
  w->push.gap =
      (vk_pc_gap){.NC = (int)NC, .HW = (int)HW, .G = (int)G, .CH = (int)CH};
  w->shader = f16 ? SH_GAP_F16 : SH_GAP_F32;
  w->bind[0] = n->inputs[0];
  w->bind[3] = n->output;
  w->groups[0] = (uint32_t)G;
  w->groups[1] = (uint32_t)(NC < 65535 ? NC : 65535);
  w->groups[2] = (uint32_t)cz;
  if (G > 1) {
    w->scratch_bytes = (VkDeviceSize)(NC * G) * 4;
    w->bind[4] = VK_BIND_SCRATCH;
    w->post.on = true;
    w->post.shader = f16 ? SH_GAPSUM_F16 : SH_GAPSUM_F32;
    w->post.bind[3] = n->output;
    w->post.bind[4] = VK_BIND_SCRATCH;
    dg_vk_grid_1d(w->post.groups, NC, 1); /* one workgroup per channel */
  }
  return true;
}
