/* The compile-time graph passes: rewrites of a session's own IR copy
 * before placement, so every target sees the same simplified graph
 * (dg_session_compile runs them). In order:
 *   1. simplify (simplify.h): identity reshapes, casts and transposes,
 *      transpose pairs, reshape chains, unread nodes;
 *   2. batch norm into the conv before it (fold_bn.h);
 *   2b. with DG_PRECISION_FAST_F16, the whole graph in f16 where a GPU
 *      computes in f16 (fast_f16.h), before the fusions so that they ask
 *      the devices about the f16 nodes;
 *   3. x * sigmoid(x) as one silu node (fuse_silu.h);
 *   4. a residual add into the conv that makes one operand, where every
 *      device that could run the conv has that epilogue (fuse_residual.h);
 *   5. a constant bias add into the matmul before it, likewise
 *      (fuse_bias.h);
 *   6. relu / relu6 into the conv, fully connected or transposed conv
 *      before it (fuse_act.h);
 *   7. a silu, hard swish, sigmoid, gelu or tanh into the f32 conv
 *      before it, where every device that could run the conv applies it
 *      (fuse_unary.h).
 * A fused node is named after the nodes it came from, joined by "+", so
 * the plan shows each fusion and its ONNX nodes. DG_PASSES=none turns
 * them all off (docs/environment.md). */
#ifndef DG_PASSES_H
#define DG_PASSES_H

#include "core/ir.h"

/* What the device-dependent fusions ask of the session: whether every
 * device placement would consider for node `before` that runs it also
 * runs `after`, its fused form (so that fusing moves no node off a
 * device). */
typedef struct dg_pass_devices {
  bool (*keeps)(void *ctx, const dg_ir *ir, const dg_node *before,
                const dg_node *after);
  void *ctx;
  /* For fast_f16.h: the compile's dg_compile_options.precision, whether
   * an allowed Vulkan or OpenCL device computes in f16; what the pass
   * did: lowered the graph, or why not (note, for dg_plan_precision). */
  int precision;
  bool gpu_f16;
  bool lowered;
  char note[160];
} dg_pass_devices;

/* false on out-of-memory (ir still consistent). devs NULL: only the
 * fusions every target takes. */
bool dg_passes_run(dg_ir *ir, dg_pass_devices *devs);

#endif
