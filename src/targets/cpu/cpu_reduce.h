/* The CPU kernels of reduce, log_softmax and layer_norm (reduce.c), on
 * f32 buffers (f16 nodes run through f32 copies, as cpu_ops.h says). */
#ifndef DG_CPU_REDUCE_H
#define DG_CPU_REDUCE_H

#include "cpu_ops.h"

#endif
