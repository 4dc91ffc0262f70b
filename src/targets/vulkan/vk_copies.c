/* Vulkan reshape and concat as buffer copies (no shader). */
#include "vk_internal.h"

#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* reshape: one copy; concat: one region per input and outer index. */
bool dg_vk_setup_copies(const vk_device *vd, vk_work *w, const dg_ir *ir,
                        const dg_node *n) {
  (void)vd;
  w->is_copy = true;
  const dg_tensor_desc *yd = dg_ir_desc(ir, n->output);
  if (n->op == DG_OP_RESHAPE) {
    w->copies = malloc(sizeof *w->copies);
    if (!w->copies)
      return false;
    w->copies[0] = (vk_copy){n->inputs[0], n->output, 0, 0, dg_desc_bytes(yd)};
    w->copy_count = 1;
    return true;
  }
  int axis = n->p.axis;
  size_t es = dg_dtype_size(yd->dtype);
  int64_t outer, inner;
  dg_desc_split(yd, axis, &outer, &inner);
  w->copies = malloc(sizeof *w->copies * (size_t)(outer * n->input_count));
  if (!w->copies)
    return false;
  int64_t off = 0, row = yd->dims[axis] * inner;
  for (int t = 0; t < n->input_count; t++) {
    int64_t len = dg_ir_desc(ir, n->inputs[t])->dims[axis] * inner;
    for (int64_t o = 0; o < outer; o++)
      w->copies[w->copy_count++] =
          (vk_copy){n->inputs[t], n->output, (VkDeviceSize)(o * len) * es,
                    (VkDeviceSize)(o * row + off) * es, (VkDeviceSize)len * es};
    off += len;
  }
  return true;
}
