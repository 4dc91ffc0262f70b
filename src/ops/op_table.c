/* The op table, indexed by dg_op. */
#include "ops.h"

#define ENTRY(op, x) [op] = {dg_ref_##x, dg_flops_##x}

static const dg_op_def table[DG_OP_COUNT_] = {
    ENTRY(DG_OP_CONV2D, conv2d),
    ENTRY(DG_OP_MAX_POOL2D, max_pool2d),
    ENTRY(DG_OP_AVG_POOL2D, avg_pool2d),
    ENTRY(DG_OP_GLOBAL_AVG_POOL, global_avg_pool),
    ENTRY(DG_OP_FULLY_CONNECTED, fully_connected),
    ENTRY(DG_OP_MATMUL, matmul),
    ENTRY(DG_OP_SOFTMAX, softmax),
    ENTRY(DG_OP_RELU, relu),
    ENTRY(DG_OP_CLIP, clip),
    ENTRY(DG_OP_ADD, add),
    ENTRY(DG_OP_RESHAPE, reshape),
    ENTRY(DG_OP_CONCAT, concat),
    ENTRY(DG_OP_QUANTIZE, quantize),
    ENTRY(DG_OP_DEQUANTIZE, dequantize),
    ENTRY(DG_OP_QCONV2D, qconv2d),
    ENTRY(DG_OP_QFULLY_CONNECTED, qfully_connected),
    ENTRY(DG_OP_QMATMUL, qmatmul),
};

const dg_op_def *dg_op_def_get(dg_op op) {
  return (op > DG_OP_INVALID && op < DG_OP_COUNT_) ? &table[op] : NULL;
}
