/* conv2d + unary -> conv2d with a post function (fuse_unary.h says when). */
#include "fuse_unary.h"

#include "ops/epilogue.h" /* dg_conv_post_unary */
#include "ops/ops.h"      /* dg_unary_def_get */

/* The functions the fusion takes: unary.def's column "fuses", those whose
 * CPU loops vectorise and that follow convolutions in the zoo
 * (EfficientNet, YOLO, MobileNetV3); the GPU shaders expand only these in
 * their epilogues. */
static bool fusable(int fn) {
  const dg_unary_def *d = dg_unary_def_get(fn);
  return d && d->fuses;
}

bool dg_fuse_unary(dg_rewrite *rw, const dg_pass_devices *ask) {
  dg_ir *ir = rw->ir;
  for (int i = 0; i < ir->node_count; i++) {
    const dg_node *u = &ir->nodes[i];
    if (u->op != DG_OP_UNARY || !fusable(u->p.fn))
      continue;
    int c = dg_rewrite_sole_producer(rw, u->inputs[0], i);
    if (c < 0)
      continue;
    const dg_node *conv = &ir->nodes[c];
    dg_dtype t = dg_ir_desc(ir, conv->output)->dtype;
    if (conv->op != DG_OP_CONV2D || dg_conv_post_unary(conv) ||
        (t != DG_DTYPE_F32 && t != DG_DTYPE_F16) ||
        dg_ir_desc(ir, u->output)->dtype != t)
      continue;
    dg_node after = *conv;
    after.p.fn = u->p.fn;
    after.p.alpha = u->p.alpha;
    after.p.beta = u->p.beta;
    if (!ask->keeps(ask->ctx, ir, conv, &after))
      continue;
    int fn = u->p.fn;
    float alpha = u->p.alpha, beta = u->p.beta;
    if (!dg_rewrite_absorb(rw, c, i))
      return false;
    dg_node *n = &ir->nodes[c];
    n->p.fn = fn;
    n->p.alpha = alpha;
    n->p.beta = beta;
  }
  return true;
}
