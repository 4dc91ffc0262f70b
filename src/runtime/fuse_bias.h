/* A constant bias add into the matmul before it, one of the compile-time
 * passes (passes.h). */
#ifndef DG_FUSE_BIAS_H
#define DG_FUSE_BIAS_H

#include "passes.h"
#include "rewrite.h"

/* Where an add (f32, f16) has as operands the output of a matmul (read by
 * the add alone, no graph output, the same pin) and a constant of N
 * values along that output's last axis (shape [N], or [1, ..., 1, N]),
 * and the sum has the matmul's shape: the matmul takes the constant as
 * its input 2, added per output column (ops/epilogue.h's dg_matmul_bias),
 * and takes over the add's output ("<matmul>+<add>"). This is how
 * exporters write linear layers on inputs of rank 3 (ViT, ConvNeXt). Only
 * where devs says every device that could run the matmul can run the
 * fused one (the CPU has the epilogue). false on out-of-memory. */
bool dg_fuse_bias(dg_rewrite *rw, const dg_pass_devices *devs);

#endif
