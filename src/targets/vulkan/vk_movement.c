/* Data movement on Vulkan: movement.comp's module for the element size,
 * the node's view (src/ops/view.h) or gather shape in push constants.
 * The view's values fit the shader's 32-bit ints: supports() keeps every
 * tensor below 2^31 elements, and starts, steps and pads are bounded by
 * the axes they index (src/ops/movement.c). */
#include "vk_internal.h"

#include "ops/view.h"

#include <string.h>

static vk_shader module_for(size_t es) {
  return es == 1   ? SH_MOVE_8
         : es == 2 ? SH_MOVE_16
         : es == 8 ? SH_MOVE_64
                   : SH_MOVE_32;
}

/* As vk_ops.c's grid_1d: at most 65535 groups along x. */
static void grid(uint32_t g[3], int64_t total) {
  int64_t groups = (total + 255) / 256;
  int64_t gx = groups < 65535 ? groups : 65535;
  g[0] = (uint32_t)(gx ? gx : 1);
  g[1] = (uint32_t)((groups + gx - 1) / (gx ? gx : 1));
  g[2] = 1;
}

bool dg_vk_setup_view(const vk_device *vd, vk_work *w, const dg_ir *ir,
                      const dg_node *n) {
  (void)vd;
  dg_view v;
  if (!dg_view_of(ir, n, &v))
    return false;
  vk_pc_view *pc = &w->push.view;
  pc->rank_mode = v.rank | v.mode << 8;
  if (v.elem_size == 2) { /* the half's value as a float (exact) */
    float f = (float)v.fill;
    memcpy(&pc->fill, &f, 4);
  } else {
    pc->fill = (int)v.fill_bits;
  }
  int64_t total = 1;
  for (int d = 0; d < v.rank; d++) {
    pc->dims[d] = (int)v.dims[d];
    pc->start[d] = (int)v.start[d];
    pc->step[d] = (int)v.step[d];
    pc->extent[d] = (int)v.extent[d];
    pc->stride[d] = (int)v.stride[d];
    total *= v.dims[d];
  }
  w->shader = module_for(v.elem_size);
  w->bind[0] = n->inputs[0];
  w->bind[3] = n->output;
  grid(w->groups, total);
  return true;
}

bool dg_vk_setup_gather(const vk_device *vd, vk_work *w, const dg_ir *ir,
                        const dg_node *n) {
  (void)vd;
  const dg_tensor_desc *x = &dg_ir_tensor(ir, n->inputs[0])->desc;
  const dg_tensor_desc *id = &dg_ir_tensor(ir, n->inputs[1])->desc;
  int axis = n->p.axis;
  int64_t outer, inner, count = dg_desc_elements(id);
  dg_desc_split(x, axis, &outer, &inner);
  vk_pc_view *pc = &w->push.view;
  pc->rank_mode = 4 << 8;
  pc->dims[0] = (int)inner;
  pc->dims[1] = (int)count;
  pc->dims[2] = (int)x->dims[axis];
  pc->dims[3] = (int)outer;
  w->shader = module_for(dg_dtype_size(x->dtype));
  w->bind[0] = n->inputs[0];
  w->bind[1] = n->inputs[1];
  w->bind[3] = n->output;
  grid(w->groups, outer * count * inner);
  return true;
}
