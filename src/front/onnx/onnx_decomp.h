/* The helpers of the ONNX ops the translator composes of other builder
 * ops (onnx_ops_decomp.c, onnx_ops_loss.c, onnx_ops_norm.c,
 * onnx_ops_einsum.c). Internal to the ONNX front end. */
#ifndef DG_ONNX_DECOMP_H
#define DG_ONNX_DECOMP_H

#include "onnx_tr.h"

#include "core/half.h"

/* Constants made here are at most this many elements. */
#define DECOMP_MAX_CONST ((int64_t)1 << 24)

/* At most this many elements along a running sum's axis: its 0/1 matrix
 * is len * len floats. */
#define DECOMP_MAX_SCAN 4096

/* A loss's reduction attribute (onnx_ops_loss.c). */
typedef enum { RED_NONE, RED_SUM, RED_MEAN } reduction;

const char *tr_sub_name(const tr *t, char *buf, size_t size, const char *what);
int64_t tr_elements(const dg_tensor_desc *d);
dg_tensor tr_float_constant(tr *t, const char *name, dg_dtype dt, int rank,
                            const int64_t *dims, const float *v);
dg_tensor tr_scalar_constant(tr *t, dg_dtype dt, float v);
dg_tensor tr_bin(tr *t, dg_binary_fn fn, dg_tensor a, dg_tensor b);
dg_tensor tr_reduce_from(tr *t, dg_reduce_fn fn, dg_tensor x, int from,
                         int rank);
bool tr_output_used(tr *t, int i);

#endif
