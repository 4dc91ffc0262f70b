/* CPU fully connected layers and matmuls (ops/gemm.c), f32 and int8,
 * and the preparation they share with the convolutions: weights packed
 * once, the int8 epilogue's per-channel parameters. */
#include "cpu_ops.h"

#include "core/half.h"
#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* No FMA contraction: meson passes -ffp-contract=off. */

static void fc_f32(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                   void *out, void *scratch) {
  (void)scratch;
  const dg_tensor_desc *wd = in_desc(cn, 1);
  float lo, hi;
  dg_activation_range(cn->node->p.activation, &lo, &hi);
  int M = (int)out_desc(cn)->dims[0], N = (int)wd->dims[0],
      K = (int)wd->dims[1];
  dg_cpu_sgemm_args a = {.M = M,
                         .N = N,
                         .K = K,
                         .A = in[0],
                         .lda = K,
                         .B = in[1],
                         .ldb = K,
                         .trans_b = 1,
                         .C = out,
                         .ldc = N,
                         .bias = in[2],
                         .clamp_lo = lo,
                         .clamp_hi = hi};
  dg_cpu_sgemm_packed_run(pool, &a, NULL, cn->spack ? cn->spack[0] : NULL);
}

static void fc_q8(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                  void *out, void *scratch) {
  (void)scratch;
  const dg_tensor_desc *xd = in_desc(cn, 0), *wd = in_desc(cn, 1),
                       *yd = out_desc(cn);
  int M = (int)yd->dims[0], N = (int)wd->dims[0], K = (int)wd->dims[1];
  dg_cpu_refresh_bias(cn, in, N);
  dg_cpu_qgemm_args a = {.M = M,
                         .N = N,
                         .K = K,
                         .A = in[0],
                         .lda = K,
                         .a_signed = xd->dtype == DG_DTYPE_I8,
                         .za = &cn->x_zero,
                         .B = in[1],
                         .ldb = K,
                         .b_signed = wd->dtype == DG_DTYPE_I8,
                         .trans_b = 1,
                         .zb = cn->w_zero,
                         .b_zero_per_col = 1,
                         .C = out,
                         .ldc = N,
                         .c_signed = yd->dtype == DG_DTYPE_I8,
                         .c_zero = cn->y_zero,
                         .per_channel = 1,
                         .bias = cn->bias,
                         .mult = cn->mult,
                         .clamp_lo = cn->clamp_lo,
                         .clamp_hi = cn->clamp_hi};
  dg_cpu_qgemm_packed_run(pool, &a, NULL, cn->qpack ? cn->qpack[0] : NULL);
}

static void matmul_any(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                       void *out, bool q) {
  dg_matmul_shape s;
  int r;
  int64_t od[DG_MAX_RANK];
  const dg_tensor_desc *ad = in_desc(cn, 0), *bd = in_desc(cn, 1),
                       *yd = out_desc(cn);
  dg_matmul_shape_get(ad, bd, &s, &r, od);
  size_t es = q ? 1 : 4;
  /* One b for every batch, and a's matrices consecutive (x [..., M, K]
   * times a weight [K, N], as exporters write linear layers): one GEMM
   * of batch * M rows instead of batch GEMMs that each pack b again. */
  bool fold = s.batch > 1;
  for (int64_t i = 0; fold && i < s.batch; i++) {
    int64_t ia, ib;
    dg_matmul_batch_index(&s, i, &ia, &ib);
    fold = ia == i && ib == 0;
  }
  if (fold) {
    s.M *= s.batch;
    s.batch = 1;
  }
  for (int64_t i = 0; i < s.batch; i++) {
    int64_t ia, ib;
    dg_matmul_batch_index(&s, i, &ia, &ib);
    const char *A = (const char *)in[0] + (size_t)(ia * s.M * s.K) * es;
    const char *B = (const char *)in[1] + (size_t)(ib * s.K * s.N) * es;
    char *C = (char *)out + (size_t)(i * s.M * s.N) * es;
    if (!q) {
      /* a bias along the last axis fused by the passes (fuse_bias.h) */
      const float *bias = cn->node->input_count > 2 ? in[2] : NULL;
      dg_cpu_sgemm_args a = {.M = (int)s.M,
                             .N = (int)s.N,
                             .K = (int)s.K,
                             .A = (const float *)A,
                             .lda = (int)s.K,
                             .B = (const float *)B,
                             .ldb = (int)s.N,
                             .C = (float *)C,
                             .ldc = (int)s.N,
                             .bias = bias,
                             .bias_per_row = 0,
                             .clamp_lo = -INFINITY,
                             .clamp_hi = INFINITY};
      /* B packed once at prepare where it is one constant matrix */
      dg_cpu_sgemm_packed_run(pool, &a, NULL, cn->spack ? cn->spack[0] : NULL);
      continue;
    }
    bool pc = bd->quant.channel_count != 0;
    dg_cpu_qgemm_args a = {.M = (int)s.M,
                           .N = (int)s.N,
                           .K = (int)s.K,
                           .A = A,
                           .lda = (int)s.K,
                           .a_signed = ad->dtype == DG_DTYPE_I8,
                           .za = &cn->x_zero,
                           .B = B,
                           .ldb = (int)s.N,
                           .b_signed = bd->dtype == DG_DTYPE_I8,
                           .zb = cn->w_zero,
                           .b_zero_per_col = pc,
                           .C = C,
                           .ldc = (int)s.N,
                           .c_signed = yd->dtype == DG_DTYPE_I8,
                           .c_zero = cn->y_zero,
                           .per_channel = pc,
                           .mult = cn->mult,
                           .clamp_lo = cn->clamp_lo,
                           .clamp_hi = cn->clamp_hi};
    dg_cpu_qgemm(pool, &a);
  }
}

static void matmul_f32(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                       void *out, void *scratch) {
  (void)scratch;
  matmul_any(cn, pool, in, out, false);
}
static void matmul_q8(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                      void *out, void *scratch) {
  (void)scratch;
  matmul_any(cn, pool, in, out, true);
}

/* ---- preparation ---- */

/* Per-channel multipliers, weight zero points and biases for a quantised
 * node whose weights (per-tensor or per-channel) are input 1. */
bool dg_cpu_prepare_q8(dg_cpu_node *cn, int64_t channels, bool has_bias) {
  dg_q8_epilogue e;
  if (!dg_q8_epilogue_init(&e, cn->ir, cn->node, channels))
    return false;
  cn->w_zero = e.w_zero; /* the node owns them from here */
  cn->mult = e.mult;
  cn->x_zero = e.x_zero;
  cn->y_zero = e.y_zero;
  cn->clamp_lo = e.clamp_lo;
  cn->clamp_hi = e.clamp_hi;
  cn->bias = calloc((size_t)channels, sizeof(int32_t));
  if (!cn->bias)
    return false;
  if (has_bias && cn->node->inputs[2]) {
    const dg_tensor_info *bt = dg_ir_tensor(cn->ir, cn->node->inputs[2]);
    if (bt->constant)
      memcpy(cn->bias, bt->constant->data, sizeof(int32_t) * (size_t)channels);
    cn->bias_is_input = !bt->constant;
  }
  return true;
}

/* The weights (input 1) when they are a graph constant the node reads
 * as stored (not through an f16 copy), else NULL. */
static const void *const_weights(const dg_cpu_node *cn) {
  const dg_tensor_info *wt = dg_ir_tensor(cn->ir, cn->node->inputs[1]);
  return !cn->f16 && wt->constant ? wt->constant->data : NULL;
}

/* Packs constant weights once so runs skip the GEMM's copy of them: conv
 * weights are A (one packing per group), fully connected weights are B.
 * False on OOM: the node then fails to prepare rather than run a path
 * whose f32 sums are ordered differently (results must not depend on
 * whether memory ran short). */
bool dg_cpu_prepare_packs(dg_cpu_node *cn, bool q) {
  const void *w = const_weights(cn);
  if (!w)
    return true;
  const dg_tensor_desc *wd = in_desc(cn, 1);
  bool conv = cn->node->op == DG_OP_CONV2D || cn->node->op == DG_OP_QCONV2D;
  int count = 1;
  int64_t rows = wd->dims[0], K = wd->dims[1];
  if (conv) {
    dg_conv_geom d = dg_conv_geom_of(cn->ir, cn->node);
    if (d.CG == 1 && d.OG == 1)
      return true; /* depthwise: direct kernel, no GEMM */
    count = (int)d.G;
    rows = d.OG;
    K = d.K;
  }
  if (rows <= 0 || K <= 0)
    return true; /* nothing to pack; the GEMM handles empty shapes */
  if (q)
    cn->qpack = calloc((size_t)count, sizeof *cn->qpack);
  else
    cn->spack = calloc((size_t)count, sizeof *cn->spack);
  if (!cn->qpack && !cn->spack)
    return false;
  cn->pack_count = count;
  bool is8 = wd->dtype == DG_DTYPE_I8;
  for (int g = 0; g < count; g++) {
    size_t off = (size_t)(g * rows * K);
    if (!q && conv && cn->spack_b)
      cn->spack[g] = dg_cpu_sgemm_pack_b((int)rows, (int)K,
                                         (const float *)w + off, (int)K, 1);
    else if (!q && conv)
      cn->spack[g] = dg_cpu_sgemm_pack_a((int)rows, (int)K,
                                         (const float *)w + off, (int)K);
    else if (!q)
      cn->spack[g] = dg_cpu_sgemm_pack_b((int)rows, (int)K, w, (int)K, 1);
    else if (conv)
      cn->qpack[g] =
          dg_cpu_qgemm_pack_a((int)rows, (int)K, (const int8_t *)w + off,
                              (int)K, is8, cn->w_zero + g * rows, 1);
    else
      cn->qpack[g] = dg_cpu_qgemm_pack_b((int)rows, (int)K, w, (int)K, is8, 1,
                                         cn->w_zero, 1);
    if (q ? !cn->qpack[g] : !cn->spack[g])
      return false;
  }
  return true;
}

bool dg_cpu_prep_fc(dg_cpu_node *cn, int threads) {
  (void)threads;
  cn->run = fc_f32;
  return dg_cpu_prepare_packs(cn, false);
}
bool dg_cpu_prep_qfc(dg_cpu_node *cn, int threads) {
  (void)threads;
  cn->run = fc_q8;
  return dg_cpu_prepare_q8(cn, in_desc(cn, 1)->dims[0], true) &&
         dg_cpu_prepare_packs(cn, true);
}
/* A constant b shared by every batch (a weight [K, N], as exporters
 * write linear layers) is packed once here, not on every run. */
bool dg_cpu_prep_matmul(dg_cpu_node *cn, int threads) {
  (void)threads;
  cn->run = matmul_f32;
  const void *b = const_weights(cn);
  dg_matmul_shape s;
  int r;
  int64_t od[DG_MAX_RANK];
  if (!b || !dg_matmul_shape_get(in_desc(cn, 0), in_desc(cn, 1), &s, &r, od) ||
      in_desc(cn, 1)->rank > 2 || s.N <= 0 || s.K <= 0)
    return true;
  cn->spack = calloc(1, sizeof *cn->spack);
  if (!cn->spack)
    return false;
  cn->pack_count = 1;
  cn->spack[0] = dg_cpu_sgemm_pack_b((int)s.N, (int)s.K, b, (int)s.N, 0);
  return cn->spack[0] != NULL;
}

bool dg_cpu_prep_qmatmul(dg_cpu_node *cn, int threads) {
  (void)threads;
  const dg_tensor_desc *bd = in_desc(cn, 1);
  cn->run = matmul_q8;
  return dg_cpu_prepare_q8(
      cn, bd->quant.channel_count ? bd->quant.channel_count : 1, false);
}
