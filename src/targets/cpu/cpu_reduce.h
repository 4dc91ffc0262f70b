/* The CPU kernels of reduce, log_softmax and layer_norm (reduce.c), on
 * f32 buffers (f16 nodes run through f32 copies, as cpu_ops.h says). */
#ifndef DG_CPU_REDUCE_H
#define DG_CPU_REDUCE_H

#include "cpu_ops.h"

void dg_cpu_reduce_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                     void *out, void *scratch);
void dg_cpu_log_softmax_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                          void *out, void *scratch);
void dg_cpu_layer_norm_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                         void *out, void *scratch);

#endif
