/* Per node: which kernel runs it, its geometry block (kernels/geom.h), its
 * small host-computed arrays (GEMM batch offsets, requantisation
 * multipliers and zero points from the same helpers as the CPU), and its
 * arguments, bound once at compile time so that a run only enqueues. */
#define _POSIX_C_SOURCE 200809L
#include "cl_internal.h"
#include "core/env.h"
#include "kernels/geom.h"

#include "ops/ops.h"
#include "ops/requant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static const dg_tensor_desc *in_desc(const prep *p, int k) {
  return &dg_ir_tensor(p->ir, p->n->inputs[k])->desc;
}
static const dg_tensor_desc *out_desc(const prep *p) {
  return &dg_ir_tensor(p->ir, p->n->output)->desc;
}
static cl_mem in_mem(const prep *p, int k) {
  return p->mem && p->n->inputs[k] ? p->mem[p->n->inputs[k]] : NULL;
}
static cl_mem out_mem(const prep *p) {
  return p->mem ? p->mem[p->n->output] : NULL;
}

static int dt_code(dg_dtype t) {
  switch (t) {
  case DG_DTYPE_F16:
    return DT_F16;
  case DG_DTYPE_I8:
    return DT_I8;
  case DG_DTYPE_U8:
    return DT_U8;
  case DG_DTYPE_I32:
    return DT_I32;
  default:
    return DT_F32;
  }
}

static int32_t fbits(float f) {
  int32_t i;
  memcpy(&i, &f, 4);
  return i;
}

static size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

/* A read-only buffer holding data, owned by the node. */
static cl_int aux(prep *p, const void *data, size_t bytes, cl_mem *out) {
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

static cl_int kernel(prep *p, const char *name, int nargs, const cl_mem *args) {
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

static void grid1(dg_cl_node *cn, int64_t items) {
  cn->dims = 1;
  cn->lws[0] = 64;
  cn->gws[0] = round_up((size_t)(items ? items : 1), 64);
}

static void grid_gemm(dg_cl_node *cn, int64_t M, int64_t N, int64_t z) {
  cn->dims = 3;
  cn->lws[0] = cn->lws[1] = 16;
  cn->lws[2] = 1;
  cn->gws[0] = (size_t)((N + TILE - 1) / TILE) * 16;
  cn->gws[1] = (size_t)((M + TILE - 1) / TILE) * 16;
  cn->gws[2] = (size_t)z;
}

static void act_bounds(dg_activation a, int32_t *g) {
  g[G_LO] = fbits(a == DG_ACTIVATION_NONE ? -INFINITY : 0.0f);
  g[G_HI] = fbits(a == DG_ACTIVATION_RELU6 ? 6.0f : INFINITY);
}

/* Requantisation arrays of a quantised node with `channels` output
 * channels whose weights are input 1, and the int8 geometry fields. */
static cl_int q8_setup(prep *p, int64_t channels, int32_t *g, cl_mem *mult,
                       cl_mem *wz) {
  const dg_tensor_desc *xd = in_desc(p, 0), *wd = in_desc(p, 1),
                       *yd = out_desc(p);
  float *m = malloc(sizeof(float) * (size_t)channels);
  int32_t *z = malloc(sizeof(int32_t) * (size_t)channels);
  if (!m || !z) {
    free(m), free(z);
    p->call = "malloc";
    return CL_OUT_OF_HOST_MEMORY;
  }
  bool pc = wd->quant.channel_count != 0;
  for (int64_t c = 0; c < channels; c++) {
    m[c] = dg_requant_multiplier(
        xd->quant.scale, dg_quant_scale(wd, pc ? c : 0), yd->quant.scale);
    z[c] = dg_quant_zero(wd, pc ? c : 0);
  }
  cl_int err = aux(p, m, sizeof(float) * (size_t)channels, mult);
  if (err == CL_SUCCESS)
    err = aux(p, z, sizeof(int32_t) * (size_t)channels, wz);
  free(m), free(z);
  int64_t lo, hi;
  dg_dtype_int_range(yd->dtype, &lo, &hi);
  dg_requant_clamp(p->n->p.activation, yd->quant.scale, yd->quant.zero_point,
                   (int32_t)lo, (int32_t)hi, &g[G_LO], &g[G_HI]);
  g[G_PC] = 1; /* per-tensor weights: every entry holds the same value */
  g[G_ZX] = xd->quant.zero_point;
  g[G_ZY] = yd->quant.zero_point;
  g[G_YSGN] = yd->dtype == DG_DTYPE_I8;
  return err;
}

/* Kernels for GPU-type devices; DG_TEST_OPENCL_GPU_KERNELS=1 selects them
 * on CPU-type devices too, so that PoCL tests cover them. */
static bool cpu_kernels(const prep *p) {
  const char *e = dg_env(DG_ENV_TEST_OPENCL_GPU_KERNELS);
  return p->d->is_cpu && !(e && *e && strcmp(e, "0"));
}

/* The large-tile f32 GEMM (gemm.cl): of the tiles the device allows
 * (dg_cl_device.big_tiles), in order of preference, the first whose grid
 * still fills the compute units; 0 when none does (the 64 x 64 gemm_f32,
 * whose 256 work-items per tile suit small grids better, then runs).
 * GPUs prefer 64 x 128: on the H200, 128 x 128 needs 141 registers per
 * work-item, so one 256-item group fits per SM, and it ran SGEMM 4096^3 in
 * 4.70 ms against 4.26 ms for 64 x 128 (three groups per SM). CPU-type
 * devices run these kernels only under DG_TEST_OPENCL_GPU_KERNELS, which
 * tries 128 x 128 first so that tests cover every tile. */
static int big_tile(const prep *p, int64_t M, int64_t N, int64_t z) {
  static const int tm[3] = {128, 64, 64}, tn[3] = {128, 128, 64};
  static const int gpu_order[2] = {1, 2}, test_order[3] = {0, 1, 2};
  const int *order = p->d->is_cpu ? test_order : gpu_order;
  int count = p->d->is_cpu ? 3 : 2;
  for (int o = 0; o < count; o++) {
    int i = order[o];
    if (!(p->d->big_tiles >> i & 1) || (i == 0 && M <= 64))
      continue; /* half the rows of a 128-row tile would be empty */
    int64_t groups = (M + tm[i] - 1) / tm[i] * ((N + tn[i] - 1) / tn[i]) * z;
    if (groups >= (int64_t)p->d->compute_units)
      return i + 1;
  }
  return 0;
}

/* The GEMM node: geometry g (M, N, K, strides... filled by the caller),
 * batch offsets offs[3 * z]; ktab: the conv-mode per-k input offsets (4
 * ints per k, f32 only). */
static cl_int gemm(prep *p, int32_t *g, const int32_t *offs, int64_t z, bool q,
                   int64_t channels, cl_mem A, cl_mem B, cl_mem bias,
                   const int32_t *ktab) {
  cl_mem gm = NULL, om = NULL, mult = NULL, wz = NULL;
  cl_int err = CL_SUCCESS;
  if (q)
    err = q8_setup(p, channels, g, &mult, &wz);
  if (err == CL_SUCCESS)
    err = aux(p, g, sizeof(int32_t) * DG_CL_GEOM_INTS, &gm);
  if (err == CL_SUCCESS)
    err = aux(p, offs, sizeof(int32_t) * 3 * (size_t)z, &om);
  if (err != CL_SUCCESS)
    return err;
  cl_mem args[8] = {A, B, bias, out_mem(p), gm, om, mult, wz};
  /* Tiles pay off on GPUs once a tile's rows are mostly full. */
  if (cpu_kernels(p) || g[G_M] < 16) {
    dg_cl_node *cn = p->cn;
    cn->dims = 2;
    cn->lws[0] = 64;
    cn->lws[1] = 1;
    cn->gws[0] = round_up((size_t)g[G_M] * (size_t)g[G_N], 64);
    cn->gws[1] = (size_t)z;
    return kernel(p, q ? "gemm_small_q8" : "gemm_small_f32", q ? 8 : 6, args);
  }
  int t = q ? 0 : big_tile(p, g[G_M], g[G_N], z);
  if (t > 0) {
    static const int tm[3] = {128, 64, 64}, tn[3] = {128, 128, 64};
    static const char *names[3] = {"gemm_f32_128x128", "gemm_f32_64x128",
                                   "gemm_f32_64x64"};
    if (ktab) {
      err = aux(p, ktab, sizeof(int32_t) * 4 * (size_t)g[G_K], &args[6]);
      if (err != CL_SUCCESS)
        return err;
    }
    int TM = tm[t - 1], TN = tn[t - 1];
    dg_cl_node *cn = p->cn;
    cn->dims = 3;
    cn->lws[0] = (size_t)(TM / 8) * (TN / 8);
    cn->lws[1] = cn->lws[2] = 1;
    cn->gws[0] = (size_t)((g[G_N] + TN - 1) / TN) * cn->lws[0];
    cn->gws[1] = (size_t)((g[G_M] + TM - 1) / TM);
    cn->gws[2] = (size_t)z;
    return kernel(p, names[t - 1], 7, args);
  }
  grid_gemm(p->cn, g[G_M], g[G_N], z);
  return kernel(p, q ? "gemm_q8" : "gemm_f32", q ? 8 : 6, args);
}

static cl_int conv(prep *p) {
  const dg_tensor_desc *x = in_desc(p, 0), *w = in_desc(p, 1), *y = out_desc(p);
  const dg_node_params *np = &p->n->p;
  bool q = p->n->op == DG_OP_QCONV2D;
  int32_t g[DG_CL_GEOM_INTS] = {0};
  int64_t G = np->groups, C = x->dims[1], O = w->dims[0];
  g[G_NIMG] = (int32_t)x->dims[0];
  g[G_C] = (int32_t)C;
  g[G_H] = (int32_t)x->dims[2];
  g[G_W] = (int32_t)x->dims[3];
  g[G_O] = (int32_t)O;
  g[G_OH] = (int32_t)y->dims[2];
  g[G_OW] = (int32_t)y->dims[3];
  g[G_KH] = (int32_t)w->dims[2];
  g[G_KW] = (int32_t)w->dims[3];
  g[G_SH] = np->stride[0];
  g[G_SW] = np->stride[1];
  g[G_DH] = np->dilation[0];
  g[G_DW] = np->dilation[1];
  g[G_PT] = np->pads[0];
  g[G_PL] = np->pads[1];
  g[G_CG] = (int32_t)(C / G);
  g[G_OG] = (int32_t)(O / G);
  g[G_HIO] = x->dtype == DG_DTYPE_F16;
  g[G_BIAS] = p->n->inputs[2] ? 1 : 0;
  act_bounds(np->activation, g);
  if (!q && (g[G_OG] < 4 || cpu_kernels(p))) {
    /* Few output channels per group (depthwise): direct. */
    cl_mem gm = NULL;
    cl_int err = aux(p, g, sizeof g, &gm);
    if (err != CL_SUCCESS)
      return err;
    grid1(p->cn, dg_desc_elements(y));
    cl_mem args[5] = {in_mem(p, 0), in_mem(p, 1), in_mem(p, 2), out_mem(p), gm};
    return kernel(p, "conv_direct_f32", 5, args);
  }
  int64_t K = (int64_t)g[G_CG] * g[G_KH] * g[G_KW];
  g[G_M] = g[G_OG];
  g[G_N] = (int32_t)(x->dims[0] * y->dims[2] * y->dims[3]);
  g[G_K] = (int32_t)K;
  g[G_MODE] = 1;
  g[G_SAM] = (int32_t)K;
  g[G_SAK] = 1;
  g[G_WSIDE] = 0;
  g[G_ASGN] = w->dtype == DG_DTYPE_I8;
  g[G_BSGN] = x->dtype == DG_DTYPE_I8;
  int32_t *offs = calloc((size_t)G * 3, sizeof(int32_t));
  if (!offs) {
    p->call = "malloc";
    return CL_OUT_OF_HOST_MEMORY;
  }
  for (int64_t z = 0; z < G; z++)
    offs[3 * z] = (int32_t)(z * g[G_OG] * K);
  /* Per k = (c, kh, kw): the input offset from the output position's
   * window corner, and the row and column displacements. */
  int32_t *ktab = q ? NULL : malloc(sizeof(int32_t) * 4 * (size_t)K);
  if (!q && !ktab) {
    free(offs);
    p->call = "malloc";
    return CL_OUT_OF_HOST_MEMORY;
  }
  for (int64_t k = 0; ktab && k < K; k++) {
    int32_t khw = g[G_KH] * g[G_KW], c = (int32_t)k / khw, r = (int32_t)k % khw,
            kh = r / g[G_KW], kw = r % g[G_KW];
    ktab[4 * k] = (c * g[G_H] + kh * g[G_DH]) * g[G_W] + kw * g[G_DW];
    ktab[4 * k + 1] = kh * g[G_DH];
    ktab[4 * k + 2] = kw * g[G_DW];
    ktab[4 * k + 3] = 0;
  }
  /* Conv rows: A = weights, B = input gathered (order as the kernel). */
  cl_int err =
      gemm(p, g, offs, G, q, O, in_mem(p, 1), in_mem(p, 0), in_mem(p, 2), ktab);
  free(ktab);
  free(offs);
  return err;
}

static cl_int fc(prep *p) {
  const dg_tensor_desc *x = in_desc(p, 0), *w = in_desc(p, 1), *y = out_desc(p);
  bool q = p->n->op == DG_OP_QFULLY_CONNECTED;
  int32_t g[DG_CL_GEOM_INTS] = {0};
  int32_t M = (int32_t)y->dims[0], N = (int32_t)w->dims[0],
          K = (int32_t)w->dims[1];
  g[G_M] = M;
  g[G_N] = N;
  g[G_K] = K;
  g[G_SAM] = K;
  g[G_SAK] = 1;
  g[G_SBK] = 1; /* B(k, n) = w[n][k] */
  g[G_SBN] = K;
  g[G_SCM] = N;
  g[G_SCN] = 1;
  g[G_HIO] = x->dtype == DG_DTYPE_F16;
  g[G_BIAS] = p->n->inputs[2] ? 2 : 0;
  g[G_WSIDE] = 1;
  g[G_ASGN] = x->dtype == DG_DTYPE_I8;
  g[G_BSGN] = w->dtype == DG_DTYPE_I8;
  act_bounds(p->n->p.activation, g);
  int32_t offs[3] = {0, 0, 0};
  return gemm(p, g, offs, 1, q, N, in_mem(p, 0), in_mem(p, 1), in_mem(p, 2),
              NULL);
}

static cl_int matmul(prep *p) {
  const dg_tensor_desc *a = in_desc(p, 0), *b = in_desc(p, 1);
  bool q = p->n->op == DG_OP_QMATMUL;
  dg_matmul_shape s;
  int r;
  int64_t od[DG_MAX_RANK];
  dg_matmul_shape_get(a, b, &s, &r, od);
  int32_t g[DG_CL_GEOM_INTS] = {0};
  g[G_M] = (int32_t)s.M;
  g[G_N] = (int32_t)s.N;
  g[G_K] = (int32_t)s.K;
  g[G_SAM] = (int32_t)s.K;
  g[G_SAK] = 1;
  g[G_SBK] = (int32_t)s.N;
  g[G_SBN] = 1;
  g[G_SCM] = (int32_t)s.N;
  g[G_SCN] = 1;
  g[G_HIO] = a->dtype == DG_DTYPE_F16;
  g[G_WSIDE] = 1;
  g[G_ASGN] = a->dtype == DG_DTYPE_I8;
  g[G_BSGN] = b->dtype == DG_DTYPE_I8;
  act_bounds(DG_ACTIVATION_NONE, g);
  int32_t *offs = malloc(sizeof(int32_t) * 3 * (size_t)s.batch);
  if (!offs) {
    p->call = "malloc";
    return CL_OUT_OF_HOST_MEMORY;
  }
  for (int64_t i = 0; i < s.batch; i++) {
    int64_t ia, ib;
    dg_matmul_batch_index(&s, i, &ia, &ib);
    offs[3 * i] = (int32_t)(ia * s.M * s.K);
    offs[3 * i + 1] = (int32_t)(ib * s.K * s.N);
    offs[3 * i + 2] = (int32_t)(i * s.M * s.N);
  }
  cl_int err =
      gemm(p, g, offs, s.batch, q, s.N, in_mem(p, 0), in_mem(p, 1), NULL, NULL);
  free(offs);
  return err;
}

static cl_int pool(prep *p) {
  const dg_tensor_desc *x = in_desc(p, 0), *y = out_desc(p);
  const dg_node_params *np = &p->n->p;
  int32_t g[DG_CL_GEOM_INTS] = {0};
  bool global = p->n->op == DG_OP_GLOBAL_AVG_POOL;
  g[E_COUNT] = (int32_t)dg_desc_elements(y);
  g[P_NC] = (int32_t)(x->dims[0] * x->dims[1]);
  g[P_H] = (int32_t)x->dims[2];
  g[P_W] = (int32_t)x->dims[3];
  g[P_OH] = (int32_t)y->dims[2];
  g[P_OW] = (int32_t)y->dims[3];
  g[P_KH] = global ? g[P_H] : np->kernel[0];
  g[P_KW] = global ? g[P_W] : np->kernel[1];
  g[P_SH] = global ? 1 : np->stride[0];
  g[P_SW] = global ? 1 : np->stride[1];
  g[P_DH] = global ? 1 : np->dilation[0];
  g[P_DW] = global ? 1 : np->dilation[1];
  if (!global) {
    g[P_PT] = np->pads[0];
    g[P_PL] = np->pads[1];
    g[P_PB] = np->pads[2];
    g[P_PR] = np->pads[3];
    g[P_INCL] = np->count_include_pad;
  }
  g[P_MAX] = p->n->op == DG_OP_MAX_POOL2D;
  g[P_DT] = dt_code(x->dtype);
  cl_mem gm = NULL;
  cl_int err = aux(p, g, sizeof g, &gm);
  if (err != CL_SUCCESS)
    return err;
  cl_mem args[3] = {in_mem(p, 0), out_mem(p), gm};
  if (global) { /* a work-group per channel (pool.cl) */
    grid1(p->cn, (int64_t)g[P_NC] * 64);
    return kernel(p, "gap", 3, args);
  }
  grid1(p->cn, g[E_COUNT]);
  return kernel(p, "pool2d", 3, args);
}

static cl_int eltwise(prep *p) {
  const dg_tensor_desc *y = out_desc(p);
  int32_t g[DG_CL_GEOM_INTS] = {0};
  g[E_COUNT] = (int32_t)dg_desc_elements(y);
  g[E_HIO] = y->dtype == DG_DTYPE_F16;
  const char *name = "clip_f32";
  int64_t items = g[E_COUNT];
  cl_mem args[4] = {in_mem(p, 0), out_mem(p), NULL, NULL};
  int nargs = 3;
  if (p->n->op == DG_OP_RELU) {
    g[E_LO] = fbits(0.0f);
    g[E_HI] = fbits(INFINITY);
  } else if (p->n->op == DG_OP_CLIP) {
    g[E_LO] = fbits(p->n->p.clip_lo);
    g[E_HI] = fbits(p->n->p.clip_hi);
  } else if (p->n->op == DG_OP_SIGMOID) {
    name = "sigmoid_f32";
  } else if (p->n->op == DG_OP_UNARY) { /* unary.cl */
    name = "unary_f32";
    g[E_FN] = p->n->p.fn;
    g[E_LO] = fbits(p->n->p.alpha);
    g[E_HI] = fbits(p->n->p.beta);
  } else if (p->n->op == DG_OP_ADD || p->n->op == DG_OP_BINARY) {
    const dg_tensor_desc *a = in_desc(p, 0), *b = in_desc(p, 1);
    int64_t sa[DG_MAX_RANK], sb[DG_MAX_RANK];
    dg_broadcast_strides(a->rank, a->dims, y->rank, y->dims, sa);
    dg_broadcast_strides(b->rank, b->dims, y->rank, y->dims, sb);
    g[E_RANK] = y->rank;
    for (int i = 0; i < y->rank; i++) {
      g[E_DIMS + i] = (int32_t)y->dims[i];
      g[E_SA + i] = (int32_t)sa[i];
      g[E_SB + i] = (int32_t)sb[i];
    }
    g[E_FN] = p->n->op == DG_OP_ADD ? DG_BINARY_ADD : p->n->p.fn;
    name = "binary_f32";
    args[1] = in_mem(p, 1);
    args[2] = out_mem(p);
    nargs = 4;
  } else { /* softmax */
    int axis = p->n->p.axis;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; i++)
      outer *= y->dims[i];
    for (int i = axis + 1; i < y->rank; i++)
      inner *= y->dims[i];
    g[E_OUTER] = (int32_t)outer;
    g[E_LEN] = (int32_t)y->dims[axis];
    g[E_INNER] = (int32_t)inner;
    g[E_LOGSM] = p->n->op == DG_OP_LOG_SOFTMAX;
    items = outer * inner;
    name = "softmax_f32";
  }
  cl_mem gm = NULL;
  cl_int err = aux(p, g, sizeof g, &gm);
  if (err != CL_SUCCESS)
    return err;
  args[nargs - 1] = gm;
  grid1(p->cn, items);
  return kernel(p, name, nargs, args);
}

/* reduce and layer_norm (cl_reduce.c chooses; reduce.cl). Without a bias,
 * layer_norm's bias argument is scale's buffer, never read. */
static cl_int reduce(prep *p) {
  int32_t g[DG_CL_GEOM_INTS] = {0};
  int64_t items = 0;
  const char *name = dg_cl_reduce_geom(p->ir, p->n, g, &items);
  cl_mem gm = NULL;
  cl_int err = aux(p, g, sizeof g, &gm);
  if (err != CL_SUCCESS)
    return err;
  grid1(p->cn, items);
  if (p->n->op == DG_OP_REDUCE) {
    cl_mem args[3] = {in_mem(p, 0), out_mem(p), gm};
    return kernel(p, name, 3, args);
  }
  cl_mem args[5] = {in_mem(p, 0), in_mem(p, 1),
                    p->n->inputs[2] ? in_mem(p, 2) : in_mem(p, 1), out_mem(p),
                    gm};
  return kernel(p, name, 5, args);
}

/* quantize / dequantize: q is the quantised tensor's descriptor. */
static cl_int quant(prep *p) {
  bool to_q = p->n->op == DG_OP_QUANTIZE;
  const dg_tensor_desc *q = to_q ? out_desc(p) : in_desc(p, 0);
  int32_t g[DG_CL_GEOM_INTS] = {0};
  g[E_COUNT] = (int32_t)dg_desc_elements(q);
  int64_t channels = 1, inner = 1;
  if (q->quant.channel_count) {
    channels = q->dims[q->quant.axis];
    for (int k = q->quant.axis + 1; k < q->rank; k++)
      inner *= q->dims[k];
  }
  g[E_QINNER] = (int32_t)inner;
  g[E_QDIM] = (int32_t)channels;
  g[E_QDT] = dt_code(q->dtype);
  int64_t lo, hi;
  dg_dtype_int_range(q->dtype, &lo, &hi);
  g[E_QLO] = (int32_t)lo;
  g[E_QHI] = (int32_t)hi;
  float *s = malloc(sizeof(float) * (size_t)channels);
  int32_t *z = malloc(sizeof(int32_t) * (size_t)channels);
  if (!s || !z) {
    free(s), free(z);
    p->call = "malloc";
    return CL_OUT_OF_HOST_MEMORY;
  }
  for (int64_t c = 0; c < channels; c++) {
    s[c] = dg_quant_scale(q, c);
    z[c] = dg_quant_zero(q, c);
  }
  cl_mem gm = NULL, sm = NULL, zm = NULL;
  cl_int err = aux(p, g, sizeof g, &gm);
  if (err == CL_SUCCESS)
    err = aux(p, s, sizeof(float) * (size_t)channels, &sm);
  if (err == CL_SUCCESS)
    err = aux(p, z, sizeof(int32_t) * (size_t)channels, &zm);
  free(s), free(z);
  if (err != CL_SUCCESS)
    return err;
  grid1(p->cn, g[E_COUNT]);
  cl_mem args[5] = {in_mem(p, 0), out_mem(p), gm, sm, zm};
  return kernel(p, to_q ? "quantize_f32" : "dequantize_f32", 5, args);
}

/* A spatial-family node (cl_spatial.c says what it runs): its inputs,
 * output, geometry block and table, bound in that order. */
static cl_int spatial(prep *p) {
  int32_t g[DG_CL_GEOM_INTS] = {0};
  dg_cl_spatial sp;
  if (!dg_cl_spatial_setup(p->ir, p->n, g, &sp, p->estimate)) {
    p->call = "malloc";
    return CL_OUT_OF_HOST_MEMORY;
  }
  cl_mem args[8] = {0};
  int nargs = 0;
  for (int k = 0; k < p->n->input_count && k < 5; k++)
    args[nargs++] = in_mem(p, k);
  args[nargs++] = out_mem(p);
  cl_int err = aux(p, g, sizeof g, &args[nargs++]);
  if (err == CL_SUCCESS && sp.table_bytes)
    err = aux(p, sp.table, sp.table_bytes, &args[nargs++]);
  free(sp.table);
  if (err != CL_SUCCESS)
    return err;
  grid1(p->cn, sp.items);
  return kernel(p, sp.kernel, nargs, args);
}

/* compare, where, arg_reduce (cl_compare.c chooses): the node's inputs
 * (a one-input compare reads its a twice), the output, the geometry. */
static cl_int compare(prep *p) {
  int32_t g[DG_CL_GEOM_INTS] = {0};
  int64_t items = 0;
  const char *name = dg_cl_compare_setup(p->ir, p->n, g, &items);
  cl_mem gm = NULL;
  cl_int err = aux(p, g, sizeof g, &gm);
  if (err != CL_SUCCESS)
    return err;
  cl_mem args[5];
  int nargs = 0, ins = p->n->op == DG_OP_COMPARE ? 2 : p->n->input_count;
  for (int k = 0; k < ins; k++)
    args[nargs++] = in_mem(p, k < p->n->input_count ? k : 0);
  args[nargs++] = out_mem(p);
  args[nargs++] = gm;
  grid1(p->cn, items);
  return kernel(p, name, nargs, args);
}

/* Reshape and concat are buffer copies the segment enqueues itself. */
static cl_int copy_cmd(prep *p) {
  p->cn->cmd = CL_CMD_COPY;
  return CL_SUCCESS;
}
static cl_int concat_cmd(prep *p) {
  p->cn->cmd = CL_CMD_CONCAT;
  return CL_SUCCESS;
}

/* transpose, slice, pad, expand (views) and gather: cl_movement.c. */
static cl_int movement(prep *p) {
  int32_t g[DG_CL_GEOM_INTS] = {0};
  char name[32];
  dg_cl_movement_geom(p->ir, p->n, g, name, sizeof name);
  cl_mem gm = NULL;
  cl_int err = aux(p, g, sizeof g, &gm);
  if (err != CL_SUCCESS)
    return err;
  grid1(p->cn, g[V_COUNT]);
  if (p->n->op == DG_OP_GATHER) {
    cl_mem args[4] = {in_mem(p, 0), in_mem(p, 1), out_mem(p), gm};
    return kernel(p, name, 4, args);
  }
  cl_mem args[3] = {in_mem(p, 0), out_mem(p), gm};
  return kernel(p, name, 3, args);
}

/* The ops this target runs, each with what prepares its kernel (or copy)
 * and what the device must have: supports() declines an op without a
 * line (the plan shows why) and the device's info.ops lists exactly the
 * lines it qualifies for. */
static const struct cl_op_entry {
  dg_op op;
  cl_int (*prepare)(prep *p);
  unsigned needs;
} cl_op_table[] = {
    {DG_OP_CONV2D, conv, 0},
    {DG_OP_QCONV2D, conv, 0},
    {DG_OP_FULLY_CONNECTED, fc, 0},
    {DG_OP_QFULLY_CONNECTED, fc, 0},
    {DG_OP_MATMUL, matmul, 0},
    {DG_OP_QMATMUL, matmul, 0},
    {DG_OP_MAX_POOL2D, pool, 0},
    {DG_OP_AVG_POOL2D, pool, 0},
    {DG_OP_GLOBAL_AVG_POOL, pool, 0},
    {DG_OP_RELU, eltwise, 0},
    {DG_OP_CLIP, eltwise, 0},
    {DG_OP_SIGMOID, eltwise, 0},
    {DG_OP_UNARY, eltwise, 0},
    {DG_OP_ADD, eltwise, 0},
    {DG_OP_BINARY, eltwise, 0},
    {DG_OP_SOFTMAX, eltwise, 0},
    {DG_OP_QUANTIZE, quant, DG_CL_NEEDS_CORRECT_DIV},
    {DG_OP_DEQUANTIZE, quant, 0},
    {DG_OP_RESHAPE, copy_cmd, 0},
    {DG_OP_CONCAT, concat_cmd, 0},
    {DG_OP_TRANSPOSE, movement, 0},
    {DG_OP_SLICE, movement, 0},
    {DG_OP_PAD, movement, 0},
    {DG_OP_EXPAND, movement, 0},
    {DG_OP_GATHER, movement, 0},
    {DG_OP_REDUCE, reduce, 0},
    {DG_OP_LOG_SOFTMAX, eltwise, 0},
    {DG_OP_LAYER_NORM, reduce, 0},
    {DG_OP_RESIZE, spatial, 0},
    {DG_OP_BATCH_NORM, spatial, 0},
    {DG_OP_CONV_TRANSPOSE2D, spatial, 0},
    {DG_OP_CAST, spatial, 0},
    {DG_OP_COMPARE, compare, 0},
    {DG_OP_WHERE, compare, 0},
    {DG_OP_ARG_REDUCE, compare, 0},
    {DG_OP_QBINARY, spatial, 0},
    {DG_OP_LOOKUP, spatial, 0},
    {DG_OP_QAVG_POOL2D, spatial, 0},
};

static const struct cl_op_entry *op_entry(dg_op op) {
  for (size_t i = 0; i < sizeof cl_op_table / sizeof *cl_op_table; i++)
    if (cl_op_table[i].op == op)
      return &cl_op_table[i];
  return NULL;
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
                "opencl: no kernel for node %d '%s'", index, shown);
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
  for (int i = 0; i < DG_CL_AUX; i++)
    dg_cl_buffer_free(cn->aux[i]);
  memset(cn, 0, sizeof *cn);
}
