/* matmul + constant bias -> matmul with a bias input (fuse_bias.h says
 * when). */
#include "fuse_bias.h"

#include "ops/epilogue.h" /* dg_matmul_bias */

/* b holds N values along y's last axis: every other dim of b is 1. */
static bool is_row_bias(const dg_tensor_desc *b, const dg_tensor_desc *y) {
  if (b->dtype != y->dtype || b->rank < 1 || b->rank > y->rank ||
      b->dims[b->rank - 1] != y->dims[y->rank - 1])
    return false;
  for (int d = 0; d < b->rank - 1; d++)
    if (b->dims[d] != 1)
      return false;
  return true;
}

bool dg_fuse_bias(dg_rewrite *rw, const dg_pass_devices *devs) {
  dg_ir *ir = rw->ir;
  for (int i = 0; i < ir->node_count; i++) {
    const dg_node *add = &ir->nodes[i];
    if (!dg_rewrite_float_binary(ir, add, DG_BINARY_ADD))
      continue;
    const dg_tensor_desc *yd = dg_ir_desc(ir, add->output);
    for (int side = 0; side < 2; side++) {
      uint32_t y = add->inputs[side], b = add->inputs[1 - side];
      int m = dg_rewrite_sole_producer(rw, y, i);
      if (m < 0 || !dg_rewrite_is_constant(ir, b))
        continue;
      dg_node *mm = &ir->nodes[m];
      if (mm->op != DG_OP_MATMUL || mm->input_count != 2 ||
          !dg_rewrite_same_shape(dg_ir_desc(ir, y), yd) ||
          !is_row_bias(dg_ir_desc(ir, b), yd))
        continue;
      int got = dg_rewrite_absorb_add(rw, m, i, b, devs);
      if (got < 0)
        return false;
      if (got > 0)
        break;
    }
  }
  return true;
}
