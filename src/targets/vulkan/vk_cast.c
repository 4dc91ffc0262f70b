/* Vulkan cast (ops/cast.c). */
#include "vk_internal.h"

#include "ops/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
