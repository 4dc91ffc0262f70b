/* Batch norm folding, one of the compile-time passes (passes.h). */
#ifndef DG_FOLD_BN_H
#define DG_FOLD_BN_H

#include "rewrite.h"

/* Folds each batch_norm into the conv2d that feeds it where that is
 * exact up to rounding: the conv's weights are constant, its bias
 * constant or absent, it has no activation, nothing else reads its output
 * and it is not a graph output, both have the same pin; the batch norm's
 * scale, bias, mean and var are constants. With a = scale / sqrt(var +
 * epsilon) per output channel, the conv's weights become w * a and its
 * bias (bias_conv - mean) * a + bias_bn, computed in double and rounded
 * once to the conv's dtype, as new constants. The conv takes over the
 * batch norm's output (dg_rewrite_absorb: named "<conv>+<batch norm>").
 * false on out-of-memory: the IR is then still consistent, folded up to
 * the failing pair. */
bool dg_fold_batch_norm(dg_rewrite *rw);

#endif
