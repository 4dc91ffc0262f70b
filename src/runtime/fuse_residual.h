/* The residual add into the conv that produces one of its operands, one
 * of the compile-time passes (passes.h). */
#ifndef DG_FUSE_RESIDUAL_H
#define DG_FUSE_RESIDUAL_H

#include "passes.h"
#include "rewrite.h"

/* Where an add (f32, f16) of two tensors of its own shape has as one
 * operand the output of a conv2d (no activation, no residual yet, read by
 * the add alone, no graph output, the same pin) and the other operand r
 * is ready before that conv runs (a graph input, a constant, or made by
 * an earlier node): the conv takes r as its input 3, added after the bias
 * and before the activation (ops/epilogue.h's dg_conv_residual), and
 * takes over the add's output ("<conv>+<add>"); a relu after it then
 * fuses as the conv's activation. Only where devs says every device that
 * could run the conv can run the fused one, so no node changes device
 * for it (the CPU, Vulkan and OpenCL have the epilogue; the NPU's f16
 * convs decline it). false on out-of-memory. */
bool dg_fuse_residual(dg_rewrite *rw, const dg_pass_devices *devs);

#endif
