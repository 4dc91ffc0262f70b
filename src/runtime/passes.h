/* The compile-time graph passes: rewrites of a session's own IR copy
 * before placement, so every target sees the same simplified graph
 * (dg_session_compile runs them). In order:
 *   1. simplify (simplify.h): identity reshapes, casts and transposes,
 *      transpose pairs, reshape chains, unread nodes;
 *   2. batch norm into the conv before it (fold_bn.h);
 *   3. x * sigmoid(x) as one silu node (fuse_silu.h);
 *   4. relu / relu6 into the conv, fully connected or transposed conv
 *      before it (fuse_act.h).
 * A fused node is named after the nodes it came from, joined by "+", so
 * the plan shows each fusion and its ONNX nodes. DG_PASSES=none turns
 * them all off (docs/environment.md). */
#ifndef DG_PASSES_H
#define DG_PASSES_H

#include "core/ir.h"

/* false on out-of-memory (ir still consistent). */
bool dg_passes_run(dg_ir *ir);

#endif
