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
    if (m->op != DG_OP_BINARY || m->p.fn != DG_BINARY_MUL ||
        m->input_count != 2)
      continue;
    dg_dtype t = dg_ir_desc(ir, m->output)->dtype;
    if (t != DG_DTYPE_F32 && t != DG_DTYPE_F16)
      continue;
    for (int side = 0; side < 2; side++) {
      uint32_t x = m->inputs[1 - side], sy = m->inputs[side];
      int s = dg_rewrite_producer(rw, sy);
      if (s < 0 || !is_sigmoid_of(&ir->nodes[s], x) ||
          ir->nodes[s].pinned_device != m->pinned_device ||
          rw->readers[sy] != 1 || rw->outputs[sy])
        continue;
      if (!dg_rewrite_absorb(rw, s, i))
        return false;
      ir->nodes[s].p.fn = DG_UNARY_SILU;
      break;
    }
  }
  return true;
}
