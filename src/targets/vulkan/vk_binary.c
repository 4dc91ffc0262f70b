/* The work of add and binary nodes: binary.comp with the function, the
 * output dims and the broadcast strides of both inputs in push constants
 * (one module per element type serves every function and shape). */
#include "vk_internal.h"

#include "ops/ops.h"

bool dg_vk_setup_binary(const vk_device *vd, vk_work *w, const dg_ir *ir,
                        const dg_node *n) {
  (void)vd;
  const dg_tensor_desc *ad = &dg_ir_tensor(ir, n->inputs[0])->desc,
                       *bd = &dg_ir_tensor(ir, n->inputs[1])->desc,
                       *yd = &dg_ir_tensor(ir, n->output)->desc;
  int64_t total = dg_desc_elements(yd);
  int64_t sa[DG_MAX_RANK] = {0}, sb[DG_MAX_RANK] = {0};
  dg_broadcast_strides(ad->rank, ad->dims, yd->rank, yd->dims, sa);
  dg_broadcast_strides(bd->rank, bd->dims, yd->rank, yd->dims, sb);
  /* Sizes narrow to the shader's int: supports() keeps tensors below 2^31
   * elements. */
  vk_pc_binary *pc = &w->push.binary;
  pc->total = (int)total;
  pc->fn = n->p.fn;
  pc->rank = yd->rank;
  for (int d = 0; d < 6; d++) {
    pc->dims[d] = d < yd->rank ? (int)yd->dims[d] : 1;
    pc->sa[d] = d < yd->rank ? (int)sa[d] : 0;
    pc->sb[d] = d < yd->rank ? (int)sb[d] : 0;
  }
  w->bind[0] = n->inputs[0];
  w->bind[1] = n->inputs[1];
  w->bind[3] = n->output;
  w->shader = yd->dtype == DG_DTYPE_F16 ? SH_BINARY_F16 : SH_BINARY_F32;
  /* A 1-D job as a 2-D grid of at most 65535 groups along x (binary.comp
   * rebuilds the linear index). */
  int64_t groups = (total + 255) / 256;
  int64_t gx = groups < 65535 ? groups : 65535;
  w->groups[0] = (uint32_t)(gx ? gx : 1);
  w->groups[1] = (uint32_t)((groups + gx - 1) / (gx ? gx : 1));
  w->groups[2] = 1;
  return true;
}
