/* Identity nodes out, dead nodes out (simplify.h says which). */
#include "simplify.h"

#include <string.h>

static bool same_desc(const dg_tensor_desc *a, const dg_tensor_desc *b) {
  if (a->dtype != b->dtype || a->rank != b->rank ||
      a->quant.scale != b->quant.scale ||
      a->quant.zero_point != b->quant.zero_point || a->quant.channel_count ||
      b->quant.channel_count)
    return false;
  for (int d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d])
      return false;
  return true;
}

static bool identity_perm(const int32_t *p, int rank) {
  for (int d = 0; d < rank; d++)
    if (p[d] != d)
      return false;
  return true;
}

/* Node u, reading node t's output, applies the inverse of t's perm. */
static bool undoes(const dg_node *u, const dg_node *t, int rank) {
  for (int d = 0; d < rank; d++)
    if (t->p.perm[u->p.perm[d]] != d)
      return false;
  return true;
}

/* The tensor node i's readers may read instead, or 0. */
static uint32_t bypass_of(dg_rewrite *rw, int i) {
  const dg_ir *ir = rw->ir;
  const dg_node *n = &ir->nodes[i];
  if (n->input_count < 1 || rw->outputs[n->output])
    return 0;
  uint32_t x = n->inputs[0];
  const dg_tensor_desc *xd = dg_ir_desc(ir, x), *yd = dg_ir_desc(ir, n->output);
  int p = dg_rewrite_producer(rw, x);
  if (p >= 0 && ir->nodes[p].pinned_device != n->pinned_device)
    return 0;
  switch (n->op) {
  case DG_OP_RESHAPE:
  case DG_OP_CAST:
    return same_desc(xd, yd) ? x : 0;
  case DG_OP_TRANSPOSE:
    if (identity_perm(n->p.perm, yd->rank))
      return x;
    if (p >= 0 && ir->nodes[p].op == DG_OP_TRANSPOSE &&
        undoes(n, &ir->nodes[p], yd->rank))
      return ir->nodes[p].inputs[0];
    return 0;
  default:
    return 0;
  }
}

void dg_simplify(dg_rewrite *rw) {
  dg_ir *ir = rw->ir;
  for (int i = 0; i < ir->node_count; i++) {
    dg_node *n = &ir->nodes[i];
    uint32_t src = bypass_of(rw, i);
    if (src) {
      dg_rewrite_bypass(rw, i, src);
      continue;
    }
    int p = n->op == DG_OP_RESHAPE ? dg_rewrite_producer(rw, n->inputs[0]) : -1;
    if (p >= 0 && ir->nodes[p].op == DG_OP_RESHAPE &&
        ir->nodes[p].pinned_device == n->pinned_device) {
      rw->readers[n->inputs[0]]--;
      n->inputs[0] = ir->nodes[p].inputs[0];
      rw->readers[n->inputs[0]]++;
    }
  }
  /* Backwards, so that a chain of unread nodes goes at once. */
  for (int i = ir->node_count - 1; i >= 0; i--) {
    dg_node *n = &ir->nodes[i];
    if (rw->dead[i] || rw->readers[n->output] || rw->outputs[n->output])
      continue;
    for (int k = 0; k < n->input_count; k++)
      if (n->inputs[k] && n->inputs[k] <= rw->tensors)
        rw->readers[n->inputs[k]]--;
    rw->dead[i] = true;
  }
}
