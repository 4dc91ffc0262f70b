/* Vulkan softmax and log-softmax (ops/eltwise.c, ops/reduce.c). */
#include "vk_internal.h"

#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool dg_vk_setup_softmax(const vk_device *vd, vk_work *w, const dg_ir *ir,
                         const dg_node *n) {
  (void)vd;
  const dg_tensor_desc *d = dg_ir_desc(ir, n->output);
  int axis = n->p.axis;
  int64_t outer, inner;
  dg_desc_split(d, axis, &outer, &inner);
  w->push.softmax = (vk_pc_softmax){.outer = outer,
                                    .len = d->dims[axis],
                                    .inner = inner,
                                    .log_out = n->op == DG_OP_LOG_SOFTMAX};
  w->shader = d->dtype == DG_DTYPE_F16 ? SH_SOFTMAX_F16 : SH_SOFTMAX_F32;
  w->bind[0] = n->inputs[0];
  w->bind[3] = n->output;
  dg_vk_grid_1d(w->groups, outer * inner, 64);
  return true;
}
