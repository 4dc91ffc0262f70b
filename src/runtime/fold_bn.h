/* Batch norm folding, a compile-time rewrite of a session's own IR copy
 * (dg_session_compile calls it before placement). */
#ifndef DG_FOLD_BN_H
#define DG_FOLD_BN_H

#include "core/ir.h"

/* Folds each batch_norm into the conv2d that feeds it where that is
 * exact up to rounding: the conv's weights are constant, its bias
 * constant or absent, it has no activation, nothing else reads its output
 * and it is not a graph output; the batch norm's scale, bias, mean and
 * var are constants. With a = scale / sqrt(var + epsilon) per output
 * channel, the conv's weights become w * a and its bias (bias_conv -
 * mean) * a + bias_bn, computed in double and rounded once to the conv's
 * dtype, as new constants. The conv takes over the batch norm's output
 * tensor and is renamed "<conv name>+<batch norm name>" (what the plan
 * shows); the batch norm node is removed. false on out-of-memory: ir is
 * then still consistent, folded up to the failing pair. */
bool dg_fold_batch_norm(dg_ir *ir);

#endif
