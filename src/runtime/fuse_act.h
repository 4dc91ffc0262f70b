/* Activation fusion, one of the compile-time passes (passes.h). */
#ifndef DG_FUSE_ACT_H
#define DG_FUSE_ACT_H

#include "rewrite.h"

/* Fuses a relu, or a clip to [0, 6], into the conv2d, fully_connected or
 * conv_transpose2d (f32, f16) before it, as that node's activation
 * (DG_ACTIVATION_RELU, _RELU6): where the producer has no activation yet,
 * the unary node is its output's only reader, that output is no graph
 * output, and both have the same pin. Exact: every target clamps the
 * producer's result in its own dtype, as the unary node would. The
 * producer takes over the unary node's output (named "<node>+<relu>").
 * false on out-of-memory. */
bool dg_fuse_activations(dg_rewrite *rw);

#endif
