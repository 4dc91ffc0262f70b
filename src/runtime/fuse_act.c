/* relu / relu6 into the node before (fuse_act.h says when). */
#include "fuse_act.h"

#include <math.h>

/* The fused activation a unary node amounts to, or NONE. */
static dg_activation as_activation(const dg_node *u) {
  if (u->op != DG_OP_UNARY)
    return DG_ACTIVATION_NONE;
  if (u->p.fn == DG_UNARY_RELU)
    return DG_ACTIVATION_RELU;
  if (u->p.fn == DG_UNARY_CLIP && u->p.alpha == 0.0f && u->p.beta == 6.0f &&
      !signbit(u->p.alpha))
    return DG_ACTIVATION_RELU6;
  return DG_ACTIVATION_NONE;
}

static bool takes_activation(const dg_ir *ir, const dg_node *n) {
  dg_dtype t = dg_ir_desc(ir, n->output)->dtype;
  return (n->op == DG_OP_CONV2D || n->op == DG_OP_FULLY_CONNECTED ||
          n->op == DG_OP_CONV_TRANSPOSE2D) &&
         (t == DG_DTYPE_F32 || t == DG_DTYPE_F16) &&
         n->p.activation == DG_ACTIVATION_NONE;
}

bool dg_fuse_activations(dg_rewrite *rw) {
  dg_ir *ir = rw->ir;
  for (int i = 0; i < ir->node_count; i++) {
    const dg_node *u = &ir->nodes[i];
    dg_activation a = as_activation(u);
    int p = a != DG_ACTIVATION_NONE
                ? dg_rewrite_sole_producer(rw, u->inputs[0], i)
                : -1;
    if (p < 0 || !takes_activation(ir, &ir->nodes[p]))
      continue;
    if (!dg_rewrite_absorb(rw, p, i))
      return false;
    ir->nodes[p].p.activation = a;
  }
  return true;
}
