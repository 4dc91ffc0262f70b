/* A unary function into the conv2d before it, one of the compile-time
 * passes (passes.h). */
#ifndef DG_FUSE_UNARY_H
#define DG_FUSE_UNARY_H

#include "passes.h" /* dg_pass_devices */
#include "rewrite.h"

/* Fuses a SiLU, hard swish, sigmoid, GELU or tanh into the f32 or f16
 * conv2d before it, as the conv's post function (ops/epilogue.h's
 * dg_conv_post_unary: p.fn, alpha and beta), applied after its
 * activation: where the conv has none yet, the unary node is its
 * output's only reader, that output is no graph output, both have the
 * same pin and dtype, and every device placement would weigh for the
 * conv also runs the fused form (ask; the NPU target declines it). The
 * result is the unary node's within the dtype's tolerance: the same
 * function on the same values, applied while the conv's output is in
 * cache or registers (f16: on the f32 value, one rounding fewer). The
 * conv takes over the unary node's output ("<conv>+<unary>"). false on
 * out-of-memory. */
bool dg_fuse_unary(dg_rewrite *rw, const dg_pass_devices *ask);

#endif
