/* CPU kernels for each op, on host buffers in the graph's dtypes. f16
 * nodes are run by the segment runner through f32 copies, so the float
 * kernels here see f32 only. */
#ifndef DG_CPU_OPS_H
#define DG_CPU_OPS_H

#include "cpu_kernels.h"
#include "targets/target.h"

struct dg_cpu_node;
typedef void (*dg_cpu_kernel_fn)(struct dg_cpu_node *cn, dg_cpu_pool *pool,
                                 void *const *in, void *out, void *scratch);

/* Per-node data prepared at compile time. */
typedef struct dg_cpu_node {
  const dg_ir *ir;
  const dg_node *node;
  dg_cpu_kernel_fn run;
  size_t scratch_bytes; /* for the kernel itself (im2col, ...) */
  bool f16;             /* float node stored as f16 */
  /* Quantised ops: per output channel. */
  int32_t *w_zero;
  int32_t *bias;
  float *mult;
  bool bias_is_input; /* bias read from the run's buffers */
  /* Constant weights packed once at prepare (one per conv group), or NULL
   * (weights fed at run time, f16, or no memory: the GEMM packs them). */
  dg_cpu_sgemm_packed **spack;
  bool spack_b; /* an f32 conv's weights packed as B (conv_f32.h) */
  dg_cpu_qgemm_packed **qpack;
  int pack_count;
  int32_t x_zero, y_zero, clamp_lo, clamp_hi;
} dg_cpu_node;

/* The node's input k and output descriptors. */
static inline const dg_tensor_desc *in_desc(const dg_cpu_node *cn, int k) {
  return &dg_ir_tensor(cn->ir, cn->node->inputs[k])->desc;
}
static inline const dg_tensor_desc *out_desc(const dg_cpu_node *cn) {
  return &dg_ir_tensor(cn->ir, cn->node->output)->desc;
}

/* Every kernel and prepare cpu_ops.def names, declared from its lines. */
#define DG_CPU_KERNEL(name)                                                    \
  void name(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in, void *out,    \
            void *scratch)
#define DG_CPU_RUN(op, kernel) DG_CPU_KERNEL(kernel);
#define DG_CPU_PREP(op, prepare) bool prepare(dg_cpu_node *cn, int threads);
#include "cpu_ops.def"
#undef DG_CPU_RUN
#undef DG_CPU_PREP

/* gemm.c's preparation, which conv.c shares. */
bool dg_cpu_prepare_q8(dg_cpu_node *cn, int64_t channels, bool has_bias);
bool dg_cpu_prepare_packs(dg_cpu_node *cn, bool q);
/* A bias fed at run time (not a constant) is read on every run. */
void dg_cpu_refresh_bias(dg_cpu_node *cn, void *const *in, int64_t channels);

/* Whether the CPU target runs op: a line of cpu_ops.def. */
bool dg_cpu_runs_op(dg_op op);

/* Chooses the kernel and prepares cn for a pool of `threads` threads
 * (scratch is sized for it); false on OOM or an op without a kernel. */
bool dg_cpu_node_prepare(dg_cpu_node *cn, const dg_ir *ir, const dg_node *n,
                         int threads);
void dg_cpu_node_release(dg_cpu_node *cn);

/* The broadcast walk of elementwise kernels (compare.c): the output's
 * axes with extent-1 axes dropped and axes merged where every input stays
 * contiguous, and each input's element strides along them. */
#define DG_CPU_WALK_MAX_IN 3
typedef struct dg_cpu_walk {
  int rank, count;
  int64_t dims[DG_MAX_RANK], s[DG_CPU_WALK_MAX_IN][DG_MAX_RANK];
} dg_cpu_walk;
void dg_cpu_walk_init(dg_cpu_walk *w, const dg_cpu_node *cn);
/* Calls run(ctx, off, stride, n, out) for each inner run: off[k] is input
 * k's element offset at the run's start, stride[k] its step, n the run's
 * length and out the output's offset; runs come in output order. */
typedef void (*dg_cpu_walk_fn)(void *ctx, const int64_t *off,
                               const int64_t *stride, int64_t n, int64_t out);
void dg_cpu_walk_run(const dg_cpu_walk *w, dg_cpu_walk_fn run, void *ctx);

#endif
