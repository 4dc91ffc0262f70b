/* conv + add -> conv with a residual input (fuse_residual.h says when). */
#include "fuse_residual.h"

#include "ops/epilogue.h" /* dg_conv_residual */

/* Conv node c may take r as its residual: r exists before c runs. */
static bool ready_before(const dg_rewrite *rw, uint32_t r, int c) {
  const dg_tensor_info *t = dg_ir_tensor(rw->ir, r);
  if (t->kind != DG_TENSOR_VALUE)
    return true;
  int p = dg_rewrite_producer(rw, r);
  return p >= 0 && p < c;
}

static bool try_fuse(dg_rewrite *rw, const dg_pass_devices *devs, int i,
                     int side, bool *oom) {
  dg_ir *ir = rw->ir;
  const dg_node *add = &ir->nodes[i];
  uint32_t y = add->inputs[side], r = add->inputs[1 - side];
  /* (An add of a tensor to itself reads it twice: no sole producer.) */
  int c = dg_rewrite_sole_producer(rw, y, i);
  if (c < 0)
    return false;
  dg_node *conv = &ir->nodes[c];
  if (conv->op != DG_OP_CONV2D || conv->input_count != 3 ||
      dg_conv_residual(conv) || conv->p.activation != DG_ACTIVATION_NONE ||
      !ready_before(rw, r, c))
    return false;
  int got = dg_rewrite_absorb_add(rw, c, i, r, devs);
  *oom = got < 0;
  return got > 0;
}

bool dg_fuse_residual(dg_rewrite *rw, const dg_pass_devices *devs) {
  dg_ir *ir = rw->ir;
  for (int i = 0; i < ir->node_count; i++) {
    const dg_node *add = &ir->nodes[i];
    if (!dg_rewrite_float_binary(ir, add, DG_BINARY_ADD))
      continue;
    const dg_tensor_desc *yd = dg_ir_desc(ir, add->output);
    if (!dg_rewrite_same_shape(yd, dg_ir_desc(ir, add->inputs[0])) ||
        !dg_rewrite_same_shape(yd, dg_ir_desc(ir, add->inputs[1])))
      continue;
    bool oom = false;
    for (int side = 0; side < 2; side++)
      if (try_fuse(rw, devs, i, side, &oom) || oom)
        break;
    if (oom)
      return false;
  }
  return true;
}
