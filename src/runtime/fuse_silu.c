/* x * sigmoid(x) -> silu(x) (fuse_silu.h says when). */
#include "fuse_silu.h"

static bool is_sigmoid_of(const dg_node *s, uint32_t x) {
  return s->op == DG_OP_UNARY && s->p.fn == DG_UNARY_SIGMOID &&
         s->inputs[0] == x;
}

bool dg_fuse_silu(dg_rewrite *rw) {
  dg_ir *ir = rw->ir;
  for (int i = 0; i < ir->node_count; i++) {
    const dg_node *m = &ir->nodes[i];
    if (!dg_rewrite_float_binary(ir, m, DG_BINARY_MUL))
      continue;
    for (int side = 0; side < 2; side++) {
      uint32_t x = m->inputs[1 - side], sy = m->inputs[side];
      int s = dg_rewrite_sole_producer(rw, sy, i);
      if (s < 0 || !is_sigmoid_of(&ir->nodes[s], x))
        continue;
      if (!dg_rewrite_absorb(rw, s, i))
        return false;
      ir->nodes[s].p.fn = DG_UNARY_SILU;
      break;
    }
  }
  return true;
}
