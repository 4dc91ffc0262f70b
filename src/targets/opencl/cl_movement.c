/* Data movement on OpenCL: the geometry block of movement.cl's kernels
 * (kernels/geom.h's V_* layout) from the node's view (src/ops/view.h) or
 * gather shape, and the kernel for the element size. The values fit 32
 * bits: supports() keeps tensors below 2^31 elements, and starts, steps
 * and pads are bounded by the axes they index (src/ops/movement.c). */
#include "cl_internal.h"
#include "kernels/geom.h"

#include "ops/view.h"

#include <stdio.h>

static const char *suffix(size_t es) {
  return es == 1 ? "8" : es == 2 ? "16" : es == 8 ? "64" : "32";
}

bool dg_cl_movement_geom(const dg_ir *ir, const dg_node *n, int32_t *g,
                         char *kernel, size_t kernel_size) {
  const dg_tensor_desc *y = &dg_ir_tensor(ir, n->output)->desc;
  g[V_COUNT] = (int32_t)dg_desc_elements(y);
  if (n->op == DG_OP_GATHER) {
    const dg_tensor_desc *x = &dg_ir_tensor(ir, n->inputs[0])->desc;
    const dg_tensor_desc *id = &dg_ir_tensor(ir, n->inputs[1])->desc;
    int64_t inner = 1;
    for (int d = n->p.axis + 1; d < x->rank; d++)
      inner *= x->dims[d];
    g[V_INNER] = (int32_t)inner;
    g[V_IDXN] = (int32_t)dg_desc_elements(id);
    g[V_LEN] = (int32_t)x->dims[n->p.axis];
    snprintf(kernel, kernel_size, "gather_%s", suffix(dg_dtype_size(x->dtype)));
    return true;
  }
  dg_view v;
  if (!dg_view_of(ir, n, &v))
    return false;
  g[V_RANK] = v.rank;
  g[V_MODE] = v.mode;
  g[V_FILL] = (int32_t)(uint32_t)v.fill_bits;
  g[V_FILL_HI] = (int32_t)(uint32_t)(v.fill_bits >> 32);
  for (int d = 0; d < v.rank; d++) {
    g[V_DIMS + d] = (int32_t)v.dims[d];
    g[V_START + d] = (int32_t)v.start[d];
    g[V_STEP + d] = (int32_t)v.step[d];
    g[V_EXTENT + d] = (int32_t)v.extent[d];
    g[V_STRIDE + d] = (int32_t)v.stride[d];
  }
  snprintf(kernel, kernel_size, "view_%s", suffix(v.elem_size));
  return true;
}
