/* What every target computes the same way for the ops that end in an
 * epilogue, written once: the float range of a fused activation, the
 * geometry of a convolution, and the int8 epilogue of a quantised conv,
 * fully connected layer or matmul (docs/numerics.md). Targets fill their
 * own push constants or kernel arguments from these. */
#ifndef DG_OPS_EPILOGUE_H
#define DG_OPS_EPILOGUE_H

#include "core/ir.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* The float clamp of a fused activation: [-inf, inf], [0, inf] or [0, 6]. */
static inline void dg_activation_range(dg_activation a, float *lo, float *hi) {
  *lo = a == DG_ACTIVATION_NONE ? -INFINITY : 0.0f;
  *hi = a == DG_ACTIVATION_RELU6 ? 6.0f : INFINITY;
}

/* The tensor a conv2d adds to its result before the activation, or 0: a
 * residual add the compile-time passes fused into the conv (input 3;
 * runtime/fuse_residual.h). The builder never makes one; a target that
 * has no such epilogue declines the node, and then the pass does not
 * fuse. */
static inline uint32_t dg_conv_residual(const dg_node *n) {
  return n->op == DG_OP_CONV2D && n->input_count > 3 ? n->inputs[3] : 0;
}

/* The unary function (a dg_unary_fn, with p.alpha and p.beta) a conv2d
 * applies to its result after the activation, or 0: a unary node the
 * compile-time passes fused into the conv (runtime/fuse_unary.h). Like
 * dg_conv_residual, never built, and declined by targets without it. */
static inline int dg_conv_post_unary(const dg_node *n) {
  return n->op == DG_OP_CONV2D ? n->p.fn : 0;
}

/* The bias [N] a matmul adds along its output's last axis, or 0: an add
 * of a constant the compile-time passes fused into the matmul (input 2;
 * runtime/fuse_bias.h). Like dg_conv_residual, never built, and declined
 * by targets without the epilogue. */
static inline uint32_t dg_matmul_bias(const dg_node *n) {
  return n->op == DG_OP_MATMUL && n->input_count > 2 ? n->inputs[2] : 0;
}

/* A 2-D convolution's geometry (conv2d, qconv2d): x [N, C, H, W], w [O,
 * CG, KH, KW] in G groups of CG input and OG output channels, y [N, O,
 * OH, OW]; K = CG * KH * KW is a group's GEMM depth, P = OH * OW. */
typedef struct dg_conv_geom {
  int64_t N, C, H, W, O, OH, OW, KH, KW, G, CG, OG, K, P;
  int sh, sw, dh, dw, pt, pl;
} dg_conv_geom;

static inline dg_conv_geom dg_conv_geom_of(const dg_ir *ir, const dg_node *n) {
  const dg_tensor_desc *x = &dg_ir_tensor(ir, n->inputs[0])->desc,
                       *w = &dg_ir_tensor(ir, n->inputs[1])->desc,
                       *y = &dg_ir_tensor(ir, n->output)->desc;
  dg_conv_geom g = {.N = x->dims[0],
                    .C = x->dims[1],
                    .H = x->dims[2],
                    .W = x->dims[3],
                    .O = w->dims[0],
                    .OH = y->dims[2],
                    .OW = y->dims[3],
                    .KH = w->dims[2],
                    .KW = w->dims[3],
                    .G = n->p.groups,
                    .sh = n->p.stride[0],
                    .sw = n->p.stride[1],
                    .dh = n->p.dilation[0],
                    .dw = n->p.dilation[1],
                    .pt = n->p.pads[0],
                    .pl = n->p.pads[1]};
  g.CG = g.C / g.G;
  g.OG = g.O / g.G;
  g.K = g.CG * g.KH * g.KW;
  g.P = g.OH * g.OW;
  return g;
}

/* The int8 epilogue of a quantised node whose x is input 0, weights input
 * 1 and output n->output: per output channel the requantisation
 * multiplier (x.scale * w.scale / y.scale, the contract's two roundings)
 * and the weight zero point (replicated when per-tensor); the zero points
 * of x and y; and y's clamp, its dtype's range narrowed by the fused
 * activation. */
typedef struct dg_q8_epilogue {
  int64_t channels;
  float *mult;     /* [channels], malloc'd */
  int32_t *w_zero; /* [channels], malloc'd */
  int32_t x_zero, y_zero, clamp_lo, clamp_hi;
  bool x_signed, w_signed, y_signed; /* i8 (else u8) */
} dg_q8_epilogue;

/* Fills e for node n with `channels` output channels; false when out of
 * memory (e is then empty). channels 0 fills the per-node fields only,
 * allocates nothing and cannot fail. Free with dg_q8_epilogue_free. */
bool dg_q8_epilogue_init(dg_q8_epilogue *e, const dg_ir *ir, const dg_node *n,
                         int64_t channels);
void dg_q8_epilogue_free(dg_q8_epilogue *e);

#endif
