/* What the op families' kernel setups share (cl_nodes.c's table and the
 * files it names: cl_conv.c, cl_gemm.c, cl_pool.c, cl_eltwise.c,
 * cl_quant.c): the node being prepared and the helpers that bind its
 * buffers, arguments and grid. Internal to this folder. */
#ifndef DG_CL_PREP_H
#define DG_CL_PREP_H

#include "cl_internal.h"

#define TILE 64 /* GEMM tile of gemm.cl / qgemm.cl, per 16 x 16 items */

typedef struct prep {
  dg_cl_device *d;
  cl_program prog;
  const dg_ir *ir;
  const dg_node *n;
  dg_cl_node *cn;
  cl_mem *mem;
  int aux_count;
  const char *call; /* the CL call that failed */
  bool estimate;    /* choose only: no kernel, no buffer (cost model) */
} prep;

const dg_tensor_desc *dg_cl_in_desc(const prep *p, int k);
const dg_tensor_desc *dg_cl_out_desc(const prep *p);
cl_mem dg_cl_in_mem(const prep *p, int k);
cl_mem dg_cl_out_mem(const prep *p);
/* A conv's fused residual (ops/epilogue.h), or NULL. */
cl_mem dg_cl_residual_mem(const prep *p);
int32_t dg_cl_fbits(float f);
size_t dg_cl_round_up(size_t v, size_t m);
cl_int dg_cl_aux(prep *p, const void *data, size_t bytes, cl_mem *out);
cl_int dg_cl_kernel(prep *p, const char *name, int nargs, const cl_mem *args);
void dg_cl_grid1(dg_cl_node *cn, int64_t items);
void dg_cl_act_bounds(dg_activation a, int32_t *g);
bool dg_cl_cpu_kernels(const prep *p);
cl_int dg_cl_gemm(prep *p, int32_t *g, const int32_t *offs, int64_t z, bool q,
                  int64_t channels, cl_mem A, cl_mem B, cl_mem bias,
                  const int32_t *ktab);

/* Every prepare cl_ops.def names, declared from its lines: each picks the
 * node's kernel and binds its arguments (or, estimating, only chooses). */
#define DG_CL_OP(op, prepare, needs) cl_int prepare(prep *p);
#include "cl_ops.def"
#undef DG_CL_OP

#endif
