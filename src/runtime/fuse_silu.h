/* x * sigmoid(x) as one SiLU node, one of the compile-time passes
 * (passes.h). */
#ifndef DG_FUSE_SILU_H
#define DG_FUSE_SILU_H

#include "rewrite.h"

/* Where a mul's operands are a tensor x and sigmoid(x) (either order; f32
 * or f16), the sigmoid read by the mul alone and no graph output, all
 * three with the same pin: the sigmoid node becomes DG_UNARY_SILU and
 * takes over the mul's output (named "<sigmoid>+<mul>"), so the
 * intermediate tensor is never written. EfficientNet's and YOLO's SiLU
 * as PyTorch exports it. false on out-of-memory. */
bool dg_fuse_silu(dg_rewrite *rw);

#endif
