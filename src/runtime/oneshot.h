/* One-shot ops: one-node sessions memoised in the context. */
#ifndef DG_ONESHOT_H
#define DG_ONESHOT_H

#include "internal.h"

void dg_oneshot_clear(dg_context *ctx);

#endif
