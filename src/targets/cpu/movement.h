/* CPU kernels of the data movement ops (movement.c): one for the strided
 * views of transpose, slice, pad and expand (src/ops/view.h), one for
 * gather. Both move bytes, so any dtype (f16 included) runs as stored. */
#ifndef DG_CPU_MOVEMENT_H
#define DG_CPU_MOVEMENT_H

#include "cpu_ops.h"

/* The ops these kernels run: they move f16 as stored, not through f32
 * copies. */
static inline bool dg_cpu_moves_bytes(dg_op op) {
  return op == DG_OP_TRANSPOSE || op == DG_OP_SLICE || op == DG_OP_PAD ||
         op == DG_OP_EXPAND || op == DG_OP_GATHER;
}

#endif
