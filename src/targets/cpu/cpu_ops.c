/* The CPU target's hub: the op table built from cpu_ops.def, and each
 * node's preparation and release. The kernels live in the files named
 * after their op family, as in src/ops. */
#include "cpu_ops.h"
#include "cpu_reduce.h"
#include "movement.h"

#include "core/ir.h"

#include <stdlib.h>
#include <string.h>

/* The ops this target runs (cpu_ops.def), indexed by op. */
static const struct cpu_op_entry {
  dg_cpu_kernel_fn run; /* when there is nothing to prepare */
  bool (*prepare)(dg_cpu_node *cn, int threads);
} cpu_op_table[DG_OP_COUNT_] = {
#define DG_CPU_RUN(op, kernel) [DG_OP_##op] = {kernel, NULL},
#define DG_CPU_PREP(op, prepare) [DG_OP_##op] = {NULL, prepare},
#include "cpu_ops.def"
#undef DG_CPU_RUN
#undef DG_CPU_PREP
};

static const struct cpu_op_entry *op_entry(dg_op op) {
  const struct cpu_op_entry *e =
      op > DG_OP_INVALID && op < DG_OP_COUNT_ ? &cpu_op_table[op] : NULL;
  return e && (e->run || e->prepare) ? e : NULL;
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
