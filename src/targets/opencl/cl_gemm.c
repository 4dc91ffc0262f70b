/* OpenCL fully connected layers and matmuls (ops/gemm.c) and the tiled
 * GEMM, f32, f16 and int8, that the convolutions run on too. */
#include "cl_prep.h"
#include "core/env.h"

#include "kernels/geom.h"
#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void grid_gemm(dg_cl_node *cn, int64_t M, int64_t N, int64_t z) {
  cn->dims = 3;
  cn->lws[0] = cn->lws[1] = 16;
  cn->lws[2] = 1;
  cn->gws[0] = (size_t)((N + TILE - 1) / TILE) * 16;
  cn->gws[1] = (size_t)((M + TILE - 1) / TILE) * 16;
  cn->gws[2] = (size_t)z;
}

/* Requantisation arrays of a quantised node with `channels` output
 * channels whose weights are input 1, and the int8 geometry fields. */
static cl_int q8_setup(prep *p, int64_t channels, int32_t *g, cl_mem *mult,
                       cl_mem *wz) {
  dg_q8_epilogue e;
  if (!dg_q8_epilogue_init(&e, p->ir, p->n, channels)) {
    p->call = "malloc";
    return CL_OUT_OF_HOST_MEMORY;
  }
  cl_int err = dg_cl_aux(p, e.mult, sizeof(float) * (size_t)channels, mult);
  if (err == CL_SUCCESS)
    err = dg_cl_aux(p, e.w_zero, sizeof(int32_t) * (size_t)channels, wz);
  g[G_LO] = e.clamp_lo;
  g[G_HI] = e.clamp_hi;
  g[G_PC] = 1; /* per-tensor weights: every entry holds the same value */
  g[G_ZX] = e.x_zero;
  g[G_ZY] = e.y_zero;
  g[G_YSGN] = e.y_signed;
  dg_q8_epilogue_free(&e);
  return err;
}

/* Kernels for GPU-type devices; DG_TEST_OPENCL_GPU_KERNELS=1 selects them
 * on CPU-type devices too, so that PoCL tests cover them. */
bool dg_cl_cpu_kernels(const prep *p) {
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

/* The GEMV kernel (gemv_f32, a work-group per output) for plain
 * matrix-vector shapes on GPUs: a few rows (batch-1 fully_connected), K
 * deep enough to share among 64 items, outputs few enough that a group
 * each stays near an item each (1000 classes: 1000 groups). Under
 * DG_TEST_OPENCL_GPU_KERNELS every plain GEMM under 16 rows takes it, so
 * that PoCL tests cover it. */
static bool use_gemv(const prep *p, const int32_t *g, int64_t z) {
  if (g[G_MODE])
    return false;
  if (p->d->is_cpu)
    return !dg_cl_cpu_kernels(p) && g[G_M] < 16;
  return g[G_M] <= 4 && g[G_K] >= 256 && (int64_t)g[G_M] * g[G_N] * z <= 65536;
}

/* Slices of K for the 64 x 64 gemm_f32 (after grid_gemm), on a GPU by
 * target.h's rule (batch-1 convs on small planes: a 3x3 512@7 conv is 8
 * tiles); DG_TEST_OPENCL_GPU_KERNELS=splitk: 3. */
static bool test_splitk(void) {
  const char *e = dg_env(DG_ENV_TEST_OPENCL_GPU_KERNELS);
  return e && !strcmp(e, "splitk");
}

static int splitk(const prep *p, const int32_t *g, int64_t z) {
  if (test_splitk())
    return g[G_K] >= 2 ? 3 : 1;
  if (p->d->is_cpu)
    return 1;
  const dg_cl_node *cn = p->cn;
  int64_t tiles = (int64_t)(cn->gws[0] / 16) * (int64_t)(cn->gws[1] / 16) * z;
  return (int)dg_target_splitk_slices(tiles, p->d->compute_units, g[G_K]);
}

/* gemm_f32 over ks slices into partials (an aux buffer of the node),
 * then gemm_splitk_f32 (the node's post kernel) adds them up. gm: the
 * geometry buffer, om the offsets; args as gemm_f32 binds them (the
 * partials go in at 6, the residual is at 7). */
static cl_int gemm_split(prep *p, int32_t *g, int ks, int64_t z, cl_mem gm,
                         cl_mem om, cl_mem *args) {
  dg_cl_node *cn = p->cn;
  cn->gws[2] *= (size_t)ks;
  cn->post_lws[0] = 64;
  cn->post_lws[1] = 1;
  cn->post_gws[0] = dg_cl_round_up((size_t)g[G_M] * (size_t)g[G_N], 64);
  cn->post_gws[1] = (size_t)z;
  if (p->estimate) {
    snprintf(cn->tile, sizeof cn->tile, "gemm_f32/%d slices of K", ks);
    return CL_SUCCESS;
  }
  /* The geometry with the slice count, as both kernels read it. */
  g[G_KSPLIT] = ks;
  cl_int err =
      clEnqueueWriteBuffer(p->d->queue, gm, CL_TRUE, 0,
                           sizeof(int32_t) * DG_CL_GEOM_INTS, g, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    p->call = "clEnqueueWriteBuffer";
    return err;
  }
  size_t bytes =
      sizeof(float) * (size_t)ks * (size_t)z * (size_t)g[G_M] * (size_t)g[G_N];
  cl_mem part =
      dg_cl_buffer(p->d->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
  if (!part) {
    p->call = "clCreateBuffer";
    return err;
  }
  cn->aux[p->aux_count++] = part;
  args[6] = part;
  err = dg_cl_kernel(p, "gemm_f32", 8, args);
  if (err != CL_SUCCESS)
    return err;
  cn->post = clCreateKernel(p->prog, "gemm_splitk_f32", &err);
  if (!cn->post) {
    p->call = "clCreateKernel";
    return err;
  }
  cl_mem pargs[6] = {part, args[2], args[3], gm, om, args[7]};
  for (int i = 0; i < 6 && err == CL_SUCCESS; i++)
    err = clSetKernelArg(cn->post, (cl_uint)i, sizeof(cl_mem), &pargs[i]);
  if (err != CL_SUCCESS)
    p->call = "clSetKernelArg";
  snprintf(cn->tile, sizeof cn->tile, "gemm_f32/%d slices of K", ks);
  return err;
}

/* The GEMM node: geometry g (M, N, K, strides... filled by the caller),
 * batch offsets offs[3 * z]; ktab: the conv-mode per-k input offsets (4
 * ints per k, f32 only). */
cl_int dg_cl_gemm(prep *p, int32_t *g, const int32_t *offs, int64_t z, bool q,
                  int64_t channels, cl_mem A, cl_mem B, cl_mem bias,
                  const int32_t *ktab) {
  cl_mem gm = NULL, om = NULL, mult = NULL, wz = NULL;
  cl_int err = CL_SUCCESS;
  if (q)
    err = q8_setup(p, channels, g, &mult, &wz);
  if (err == CL_SUCCESS)
    err = dg_cl_aux(p, g, sizeof(int32_t) * DG_CL_GEOM_INTS, &gm);
  if (err == CL_SUCCESS)
    err = dg_cl_aux(p, offs, sizeof(int32_t) * 3 * (size_t)z, &om);
  if (err != CL_SUCCESS)
    return err;
  /* int8 kernels: ..., mult, wz; float ones: ..., [a buffer at 6,] the
   * residual (a conv's, or NULL). */
  cl_mem args[8] = {A, B, bias, dg_cl_out_mem(p), gm, om, mult, wz};
  cl_mem res = dg_cl_residual_mem(p);
  if (!q) {
    args[6] = res;
    args[7] = res;
  }
  if (!q && use_gemv(p, g, z)) {
    dg_cl_node *cn = p->cn;
    cn->dims = 2;
    cn->lws[0] = 64;
    cn->lws[1] = 1;
    cn->gws[0] = (size_t)g[G_M] * (size_t)g[G_N] * 64;
    cn->gws[1] = (size_t)z;
    return dg_cl_kernel(p, "gemv_f32", 7, args);
  }
  /* Tiles pay off on GPUs once a tile's rows are mostly full. */
  if (dg_cl_cpu_kernels(p) || g[G_M] < 16) {
    dg_cl_node *cn = p->cn;
    cn->dims = 2;
    cn->lws[0] = 64;
    cn->lws[1] = 1;
    cn->gws[0] = dg_cl_round_up((size_t)g[G_M] * (size_t)g[G_N], 64);
    cn->gws[1] = (size_t)z;
    return dg_cl_kernel(p, q ? "gemm_small_q8" : "gemm_small_f32", q ? 8 : 7,
                        args);
  }
  int t = q || test_splitk() ? 0 : big_tile(p, g[G_M], g[G_N], z);
  if (t > 0) {
    static const int tm[3] = {128, 64, 64}, tn[3] = {128, 128, 64};
    static const char *names[3] = {"gemm_f32_128x128", "gemm_f32_64x128",
                                   "gemm_f32_64x64"};
    args[6] = NULL; /* the ktab of a conv */
    if (ktab) {
      err = dg_cl_aux(p, ktab, sizeof(int32_t) * 4 * (size_t)g[G_K], &args[6]);
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
    return dg_cl_kernel(p, names[t - 1], 8, args);
  }
  grid_gemm(p->cn, g[G_M], g[G_N], z);
  if (q)
    return dg_cl_kernel(p, "gemm_q8", 8, args);
  int ks = splitk(p, g, z);
  if (ks < 2) {
    args[6] = gm; /* no partials: any buffer (never written) */
    return dg_cl_kernel(p, "gemm_f32", 8, args);
  }
  return gemm_split(p, g, ks, z, gm, om, args);
}

cl_int dg_cl_fc(prep *p) {
  const dg_tensor_desc *x = dg_cl_in_desc(p, 0), *w = dg_cl_in_desc(p, 1),
                       *y = dg_cl_out_desc(p);
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
  dg_cl_act_bounds(p->n->p.activation, g);
  int32_t offs[3] = {0, 0, 0};
  return dg_cl_gemm(p, g, offs, 1, q, N, dg_cl_in_mem(p, 0), dg_cl_in_mem(p, 1),
                    dg_cl_in_mem(p, 2), NULL);
}

cl_int dg_cl_matmul(prep *p) {
  const dg_tensor_desc *a = dg_cl_in_desc(p, 0), *b = dg_cl_in_desc(p, 1);
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
  dg_cl_act_bounds(DG_ACTIVATION_NONE, g);
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
  cl_int err = dg_cl_gemm(p, g, offs, s.batch, q, s.N, dg_cl_in_mem(p, 0),
                          dg_cl_in_mem(p, 1), NULL, NULL);
  free(offs);
  return err;
}
