/* conv + add -> conv with a residual input (fuse_residual.h says when). */
#include "fuse_residual.h"

#include "ops/epilogue.h" /* dg_conv_residual */

#include <stdlib.h>
#include <string.h>

static bool same_shape(const dg_tensor_desc *a, const dg_tensor_desc *b) {
  if (a->dtype != b->dtype || a->rank != b->rank)
    return false;
  for (int d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d])
      return false;
  return true;
}

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
  int c = dg_rewrite_producer(rw, y);
  if (c < 0 || y == r)
    return false;
  dg_node *conv = &ir->nodes[c];
  if (conv->op != DG_OP_CONV2D || conv->input_count != 3 ||
      dg_conv_residual(conv) || conv->p.activation != DG_ACTIVATION_NONE ||
      conv->pinned_device != add->pinned_device || rw->readers[y] != 1 ||
      rw->outputs[y] || !ready_before(rw, r, c))
    return false;
  uint32_t in4[4] = {conv->inputs[0], conv->inputs[1], conv->inputs[2], r};
  dg_node after = *conv;
  after.inputs = in4;
  after.input_count = 4;
  if (!devs || !devs->keeps(devs->ctx, ir, conv, &after))
    return false;
  uint32_t *grown = realloc(conv->inputs, sizeof in4);
  if (!grown) {
    *oom = true;
    return false;
  }
  conv->inputs = grown;
  if (!dg_rewrite_absorb(rw, c, i)) { /* the conv still reads 3 */
    *oom = true;
    return false;
  }
  conv = &ir->nodes[c];
  conv->inputs[3] = r;
  conv->input_count = 4;
  if (r <= rw->tensors)
    rw->readers[r]++; /* the add's read of r, now the conv's */
  return true;
}

bool dg_fuse_residual(dg_rewrite *rw, const dg_pass_devices *devs) {
  dg_ir *ir = rw->ir;
  for (int i = 0; i < ir->node_count; i++) {
    const dg_node *add = &ir->nodes[i];
    if (add->op != DG_OP_BINARY || add->p.fn != DG_BINARY_ADD ||
        add->input_count != 2)
      continue;
    const dg_tensor_desc *yd = dg_ir_desc(ir, add->output);
    if ((yd->dtype != DG_DTYPE_F32 && yd->dtype != DG_DTYPE_F16) ||
        !same_shape(yd, dg_ir_desc(ir, add->inputs[0])) ||
        !same_shape(yd, dg_ir_desc(ir, add->inputs[1])))
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
