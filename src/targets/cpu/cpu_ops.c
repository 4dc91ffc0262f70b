/* The CPU target's op table: for each op the kernel to run, or the
 * prepare that picks it; supports() declines an op without a line (the
 * plan shows why). The kernels live in the files named after their op
 * family, as in src/ops: conv.c, gemm.c, pool.c, eltwise.c, quant.c,
 * movement.c, unary.c, binary.c, compare.c, reduce.c, int8.c, resize.c,
 * batch_norm.c, conv_transpose.c, cast.c. */
#include "cpu_ops.h"
#include "cpu_reduce.h"
#include "movement.h"

#include "core/ir.h"

#include <stdlib.h>
#include <string.h>

/* The ops this target runs: a kernel to run, or a prepare that picks it.
 * supports() declines an op without a line (the plan shows why), and the
 * device's info.ops lists exactly these. */
static const struct cpu_op_entry {
  dg_op op;
  dg_cpu_kernel_fn run; /* when there is nothing to prepare */
  bool (*prepare)(dg_cpu_node *cn, int threads);
} cpu_op_table[] = {
    {DG_OP_CONV2D, NULL, dg_cpu_prep_conv},
    {DG_OP_QCONV2D, NULL, dg_cpu_prep_conv},
    {DG_OP_FULLY_CONNECTED, NULL, dg_cpu_prep_fc},
    {DG_OP_QFULLY_CONNECTED, NULL, dg_cpu_prep_qfc},
    {DG_OP_MATMUL, dg_cpu_matmul_f32, NULL},
    {DG_OP_QMATMUL, NULL, dg_cpu_prep_qmatmul},
    {DG_OP_MAX_POOL2D, dg_cpu_maxpool_k, NULL},
    {DG_OP_AVG_POOL2D, dg_cpu_avgpool_k, NULL},
    {DG_OP_GLOBAL_AVG_POOL, dg_cpu_gap_k, NULL},
    {DG_OP_SOFTMAX, dg_cpu_softmax_k, NULL},
    {DG_OP_BINARY, dg_cpu_binary_k, NULL},
    {DG_OP_UNARY, dg_cpu_unary_node, NULL},
    {DG_OP_RESHAPE, dg_cpu_copy_k, NULL},
    {DG_OP_CONCAT, dg_cpu_concat_k, NULL},
    {DG_OP_QUANTIZE, dg_cpu_quantize_k, NULL},
    {DG_OP_DEQUANTIZE, dg_cpu_dequantize_k, NULL},
    {DG_OP_TRANSPOSE, dg_cpu_view_k, NULL},
    {DG_OP_SLICE, dg_cpu_view_k, NULL},
    {DG_OP_PAD, dg_cpu_view_k, NULL},
    {DG_OP_EXPAND, dg_cpu_view_k, NULL},
    {DG_OP_GATHER, dg_cpu_gather_k, NULL},
    {DG_OP_REDUCE, dg_cpu_reduce_k, NULL},
    {DG_OP_LOG_SOFTMAX, dg_cpu_log_softmax_k, NULL},
    {DG_OP_LAYER_NORM, dg_cpu_layer_norm_k, NULL},
    {DG_OP_RESIZE, NULL, dg_cpu_prep_resize},
    {DG_OP_BATCH_NORM, NULL, dg_cpu_prep_batch_norm},
    {DG_OP_CONV_TRANSPOSE2D, NULL, dg_cpu_prep_conv_transpose},
    {DG_OP_CAST, NULL, dg_cpu_prep_cast},
    {DG_OP_COMPARE, dg_cpu_compare_k, NULL},
    {DG_OP_WHERE, dg_cpu_where_k, NULL},
    {DG_OP_ARG_REDUCE, dg_cpu_arg_reduce_k, NULL},
    {DG_OP_QBINARY, dg_cpu_qbinary_k, NULL},
    {DG_OP_LOOKUP, dg_cpu_lookup_k, NULL},
    {DG_OP_QAVG_POOL2D, dg_cpu_qavg_pool_k, NULL},
};

static const struct cpu_op_entry *op_entry(dg_op op) {
  for (size_t i = 0; i < sizeof cpu_op_table / sizeof *cpu_op_table; i++)
    if (cpu_op_table[i].op == op)
      return &cpu_op_table[i];
  return NULL;
}

bool dg_cpu_runs_op(dg_op op) { return op_entry(op) != NULL; }

bool dg_cpu_node_prepare(dg_cpu_node *cn, const dg_ir *ir, const dg_node *n,
                         int threads) {
  memset(cn, 0, sizeof *cn);
  cn->ir = ir;
  cn->node = n;
  cn->f16 = dg_ir_tensor(ir, n->output)->desc.dtype == DG_DTYPE_F16 ||
            (n->input_count &&
             dg_ir_tensor(ir, n->inputs[0])->desc.dtype == DG_DTYPE_F16);
  if (n->op == DG_OP_RESHAPE || n->op == DG_OP_CONCAT ||
      dg_cpu_moves_bytes(n->op) || n->op == DG_OP_WHERE)
    cn->f16 = false; /* moves bytes, whatever they hold */
  if (n->op == DG_OP_COMPARE || n->op == DG_OP_ARG_REDUCE)
    cn->f16 = false; /* reads f16 itself; the output is bool or i64 */
  const struct cpu_op_entry *e = op_entry(n->op);
  if (!e)
    return false;
  cn->run = e->run;
  return !e->prepare || e->prepare(cn, threads);
}

void dg_cpu_node_release(dg_cpu_node *cn) {
  for (int g = 0; g < cn->pack_count; g++) {
    if (cn->spack)
      dg_cpu_sgemm_packed_free(cn->spack[g]);
    if (cn->qpack)
      dg_cpu_qgemm_packed_free(cn->qpack[g]);
  }
  free(cn->spack);
  free(cn->qpack);
  free(cn->w_zero);
  free(cn->bias);
  free(cn->mult);
}
