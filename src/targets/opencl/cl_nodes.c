/* Per node: which kernel runs it, its geometry block (kernels/geom.h),
 * its small host-computed arrays (GEMM batch offsets, requantisation
 * multipliers and zero points from the same helpers as the CPU), and its
 * arguments, bound once at compile time so that a run only enqueues. */
#define _POSIX_C_SOURCE 200809L
#include "cl_prep.h"
#include "core/env.h"
#include "kernels/geom.h"

#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const dg_tensor_desc *dg_cl_in_desc(const prep *p, int k) {
  return &dg_ir_tensor(p->ir, p->n->inputs[k])->desc;
}
const dg_tensor_desc *dg_cl_out_desc(const prep *p) {
  return &dg_ir_tensor(p->ir, p->n->output)->desc;
}
cl_mem dg_cl_in_mem(const prep *p, int k) {
  return p->mem && p->n->inputs[k] ? p->mem[p->n->inputs[k]] : NULL;
}
cl_mem dg_cl_out_mem(const prep *p) {
  return p->mem ? p->mem[p->n->output] : NULL;
}
cl_mem dg_cl_residual_mem(const prep *p) {
  uint32_t r = dg_conv_residual(p->n);
  return p->mem && r ? p->mem[r] : NULL;
}

int dg_cl_dt_code(dg_dtype t) {
  switch (t) {
  case DG_DTYPE_F16:
    return DT_F16;
  case DG_DTYPE_I8:
    return DT_I8;
  case DG_DTYPE_U8:
    return DT_U8;
  case DG_DTYPE_I32:
    return DT_I32;
  case DG_DTYPE_I64:
    return DT_I64;
  case DG_DTYPE_BOOL:
    return DT_BOOL;
  default:
    return DT_F32;
  }
}

int32_t dg_cl_fbits(float f) {
  int32_t i;
  memcpy(&i, &f, 4);
  return i;
}

size_t dg_cl_round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

/* A read-only buffer holding data, owned by the node. */
cl_int dg_cl_aux(prep *p, const void *data, size_t bytes, cl_mem *out) {
  if (p->estimate) {
    *out = NULL;
    return CL_SUCCESS;
  }
  cl_int err;
  cl_mem m =
      dg_cl_buffer(p->d->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                   bytes, (void *)data, &err);
  if (!m) {
    p->call = "clCreateBuffer";
    return err;
  }
  p->cn->aux[p->aux_count++] = m;
  *out = m;
  return CL_SUCCESS;
}

/* Creates the kernel and binds args (cl_mem each). */
/* How fast each kernel runs against the device's gflops figure (the 64 x
 * 64 tiles of gemm.cl), on a GPU-type device, for the cost model, with
 * f32 and with f16 tensors. Measured on the H200 (docs/performance.md,
 * "Cost models"): the big tiles ran SGEMM 4096^3 at 32 TFLOP/s against
 * 11 of the figure, and a 3x3 64@56 batch-8 conv 155 us in f32 and 197
 * us in f16. The rest are assumed, on the pessimistic side; kernels not
 * listed run at the figure. */
static const struct {
  const char *prefix;
  double f32, f16;
} kernel_speed[] = {
    {"gemm_f32_128x128", 2.5, 1.0}, {"gemm_f32_64x128", 2.5, 1.0},
    {"gemm_f32_64x64", 2.5, 1.0},   {"gemm_small_", 0.1, 0.1},
    {"conv_direct_", 0.25, 0.25},
};

static double speed_of(const char *name, bool f16) {
  for (size_t i = 0; i < sizeof kernel_speed / sizeof *kernel_speed; i++)
    if (!strncmp(name, kernel_speed[i].prefix, strlen(kernel_speed[i].prefix)))
      return f16 ? kernel_speed[i].f16 : kernel_speed[i].f32;
  return 1.0;
}

cl_int dg_cl_kernel(prep *p, const char *name, int nargs, const cl_mem *args) {
  if (p->estimate) {
    snprintf(p->cn->tile, sizeof p->cn->tile, "%s", name);
    return CL_SUCCESS;
  }
  cl_int err;
  p->cn->kernel = clCreateKernel(p->prog, name, &err);
  if (!p->cn->kernel) {
    p->call = "clCreateKernel";
    return err;
  }
  for (int i = 0; i < nargs; i++) {
    err = clSetKernelArg(p->cn->kernel, (cl_uint)i, sizeof(cl_mem), &args[i]);
    if (err != CL_SUCCESS) {
      p->call = "clSetKernelArg";
      return err;
    }
  }
  snprintf(p->cn->tile, sizeof p->cn->tile, "%s", name);
  return CL_SUCCESS;
}

void dg_cl_grid1(dg_cl_node *cn, int64_t items) {
  cn->dims = 1;
  cn->lws[0] = 64;
  cn->gws[0] = dg_cl_round_up((size_t)(items ? items : 1), 64);
}

void dg_cl_act_bounds(dg_activation a, int32_t *g) {
  float lo, hi;
  dg_activation_range(a, &lo, &hi);
  g[G_LO] = dg_cl_fbits(lo);
  g[G_HI] = dg_cl_fbits(hi);
}

/* reduce and layer_norm (cl_reduce.c chooses; reduce.cl). Without a bias,
 * layer_norm's bias argument is scale's buffer, never read. */
cl_int dg_cl_reduce(prep *p) {
  int32_t g[DG_CL_GEOM_INTS] = {0};
  int64_t items = 0;
  const char *name = dg_cl_reduce_geom(p->ir, p->n, g, &items);
  cl_mem gm = NULL;
  cl_int err = dg_cl_aux(p, g, sizeof g, &gm);
  if (err != CL_SUCCESS)
    return err;
  dg_cl_grid1(p->cn, items);
  if (p->n->op == DG_OP_REDUCE) {
    cl_mem args[3] = {dg_cl_in_mem(p, 0), dg_cl_out_mem(p), gm};
    return dg_cl_kernel(p, name, 3, args);
  }
  cl_mem args[5] = {dg_cl_in_mem(p, 0), dg_cl_in_mem(p, 1),
                    p->n->inputs[2] ? dg_cl_in_mem(p, 2) : dg_cl_in_mem(p, 1),
                    dg_cl_out_mem(p), gm};
  return dg_cl_kernel(p, name, 5, args);
}

/* A spatial-family node (cl_spatial.c says what it runs): its inputs,
 * output, geometry block and table, bound in that order. */
cl_int dg_cl_spatial_node(prep *p) {
  int32_t g[DG_CL_GEOM_INTS] = {0};
  dg_cl_spatial sp;
  if (!dg_cl_spatial_setup(p->ir, p->n, g, &sp, p->estimate)) {
    p->call = "malloc";
    return CL_OUT_OF_HOST_MEMORY;
  }
  cl_mem args[8] = {0};
  int nargs = 0;
  for (int k = 0; k < p->n->input_count && k < 5; k++)
    args[nargs++] = dg_cl_in_mem(p, k);
  args[nargs++] = dg_cl_out_mem(p);
  cl_int err = dg_cl_aux(p, g, sizeof g, &args[nargs++]);
  if (err == CL_SUCCESS && sp.table_bytes)
    err = dg_cl_aux(p, sp.table, sp.table_bytes, &args[nargs++]);
  free(sp.table);
  if (err != CL_SUCCESS)
    return err;
  dg_cl_grid1(p->cn, sp.items);
  return dg_cl_kernel(p, sp.kernel, nargs, args);
}

/* compare, where, arg_reduce (cl_compare.c chooses): the node's inputs
 * (a one-input compare reads its a twice), the output, the geometry. */
cl_int dg_cl_compare(prep *p) {
  int32_t g[DG_CL_GEOM_INTS] = {0};
  int64_t items = 0;
  const char *name = dg_cl_compare_setup(p->ir, p->n, g, &items);
  cl_mem gm = NULL;
  cl_int err = dg_cl_aux(p, g, sizeof g, &gm);
  if (err != CL_SUCCESS)
    return err;
  cl_mem args[5];
  int nargs = 0, ins = p->n->op == DG_OP_COMPARE ? 2 : p->n->input_count;
  for (int k = 0; k < ins; k++)
    args[nargs++] = dg_cl_in_mem(p, k < p->n->input_count ? k : 0);
  args[nargs++] = dg_cl_out_mem(p);
  args[nargs++] = gm;
  dg_cl_grid1(p->cn, items);
  return dg_cl_kernel(p, name, nargs, args);
}

/* Reshape and concat are buffer copies the segment enqueues itself. */
cl_int dg_cl_copy(prep *p) {
  p->cn->cmd = CL_CMD_COPY;
  return CL_SUCCESS;
}
cl_int dg_cl_concat(prep *p) {
  p->cn->cmd = CL_CMD_CONCAT;
  return CL_SUCCESS;
}

/* transpose, slice, pad, expand (views) and gather: cl_movement.c. */
cl_int dg_cl_movement(prep *p) {
  int32_t g[DG_CL_GEOM_INTS] = {0};
  char name[32];
  dg_cl_movement_geom(p->ir, p->n, g, name, sizeof name);
  cl_mem gm = NULL;
  cl_int err = dg_cl_aux(p, g, sizeof g, &gm);
  if (err != CL_SUCCESS)
    return err;
  dg_cl_grid1(p->cn, g[V_COUNT]);
  if (p->n->op == DG_OP_GATHER) {
    cl_mem args[4] = {dg_cl_in_mem(p, 0), dg_cl_in_mem(p, 1), dg_cl_out_mem(p),
                      gm};
    return dg_cl_kernel(p, name, 4, args);
  }
  cl_mem args[3] = {dg_cl_in_mem(p, 0), dg_cl_out_mem(p), gm};
  return dg_cl_kernel(p, name, 3, args);
}

/* The ops this target runs (cl_ops.def), indexed by op. */
static const struct cl_op_entry {
  cl_int (*prepare)(prep *p);
  unsigned needs;
} cl_op_table[DG_OP_COUNT_] = {
#define DG_CL_OP(op, prepare, needs) [DG_OP_##op] = {prepare, needs},
#include "cl_ops.def"
#undef DG_CL_OP
};

static const struct cl_op_entry *op_entry(dg_op op) {
  const struct cl_op_entry *e =
      op > DG_OP_INVALID && op < DG_OP_COUNT_ ? &cl_op_table[op] : NULL;
  return e && e->prepare ? e : NULL;
}

unsigned dg_cl_op_needs(dg_op op) {
  const struct cl_op_entry *e = op_entry(op);
  return e ? e->needs : DG_CL_NO_KERNEL;
}

dg_status dg_cl_node_prepare(dg_cl_device *d, cl_program prog, const dg_ir *ir,
                             int index, cl_mem *mem, dg_cl_node *cn,
                             dg_diagnostic *diag) {
  memset(cn, 0, sizeof *cn);
  cn->index = index;
  cn->node = &ir->nodes[index];
  prep p = {d, prog, ir, cn->node, cn, mem, 0, NULL, false};
  const struct cl_op_entry *e = op_entry(cn->node->op);
  if (!e) {
    char shown[DG_NAME_SHORT];
    dg_name_shorten(shown, sizeof shown, cn->node->name);
    dg_diag_set(diag, DG_ERROR_UNSUPPORTED, index, cn->node->name,
                dg_op_name(cn->node->op), "op", NULL, NULL,
                "opencl: no dg_cl_kernel for node %d '%s'", index, shown);
    return DG_ERROR_UNSUPPORTED;
  }
  cl_int err = e->prepare(&p);
  if (err != CL_SUCCESS)
    return dg_cl_fail(diag, err, index, cn->node, p.call);
  return DG_OK;
}

void dg_cl_node_choice(dg_cl_device *d, const dg_ir *ir, int index, char *name,
                       size_t size) {
  dg_cl_node cn;
  memset(&cn, 0, sizeof cn);
  cn.index = index;
  cn.node = &ir->nodes[index];
  prep p = {d, NULL, ir, cn.node, &cn, NULL, 0, NULL, true};
  const struct cl_op_entry *e = op_entry(cn.node->op);
  if (!e || e->prepare(&p) != CL_SUCCESS)
    cn.tile[0] = 0;
  snprintf(name, size, "%s", cn.tile);
}

double dg_cl_node_speed(dg_cl_device *d, const dg_ir *ir, int index) {
  char name[sizeof((dg_cl_node *)0)->tile];
  dg_cl_node_choice(d, ir, index, name, sizeof name);
  bool f16 =
      dg_ir_tensor(ir, ir->nodes[index].output)->desc.dtype == DG_DTYPE_F16;
  return d->is_cpu || !name[0] ? 1.0 : speed_of(name, f16);
}

void dg_cl_node_release(dg_cl_node *cn) {
  if (cn->kernel)
    clReleaseKernel(cn->kernel);
  if (cn->post)
    clReleaseKernel(cn->post);
  for (int i = 0; i < DG_CL_AUX; i++)
    dg_cl_buffer_free(cn->aux[i]);
  memset(cn, 0, sizeof *cn);
}
