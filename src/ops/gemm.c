/* fully_connected, matmul and their quantised forms. */
#include "build.h"
#include "ops.h"
#include "requant.h"

#include <stdio.h>

/* x [N, ...] flattened to [N, K]; w [O, K]. */
static bool fc_shape(dg_build *b, const dg_tensor_info *x,
                     const dg_tensor_info *w, const dg_tensor_info *bias,
                     dg_activation act, dg_tensor_desc *out, unsigned bias_t) {
  char exp[96], got[96];
  if (x->desc.rank < 2) {
    dg_format_dims(got, sizeof got, x->desc.rank, x->desc.dims);
    dg_build_fail(b, DG_ERROR_INVALID_SHAPE, "x", "rank >= 2", got,
                  "fully_connected needs a batch dimension");
    return false;
  }
  if (!dg_build_rank(b, w, "w", 2))
    return false;
  int64_t K = dg_desc_elements(&x->desc) / x->desc.dims[0];
  if (w->desc.dims[1] != K) {
    snprintf(exp, sizeof exp, "w.dims[1] = %lld (x flattened)", (long long)K);
    snprintf(got, sizeof got, "%lld", (long long)w->desc.dims[1]);
    dg_build_fail(b, DG_ERROR_INVALID_SHAPE, "w.dims[1]", exp, got,
                  "weight width does not match the input features");
    return false;
  }
  if (act < DG_ACTIVATION_NONE || act > DG_ACTIVATION_RELU6) {
    snprintf(got, sizeof got, "%d", (int)act);
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "activation",
                  "none, relu or relu6", got, "unknown activation");
    return false;
  }
  if (bias) {
    if (!dg_build_dtype(b, bias, "bias", bias_t))
      return false;
    if (bias->desc.rank != 1 || bias->desc.dims[0] != w->desc.dims[0]) {
      snprintf(exp, sizeof exp, "[%lld]", (long long)w->desc.dims[0]);
      dg_format_dims(got, sizeof got, bias->desc.rank, bias->desc.dims);
      dg_build_fail(b, DG_ERROR_INVALID_SHAPE, "bias", exp, got,
                    "bias must have one value per output");
      return false;
    }
  }
  out->rank = 2;
  out->dims[0] = x->desc.dims[0];
  out->dims[1] = w->desc.dims[0];
  return true;
}

static bool q_output(dg_build *b, dg_dtype y_dtype, const dg_quant_params *q,
                     dg_tensor_desc *out) {
  if (y_dtype != DG_DTYPE_I8 && y_dtype != DG_DTYPE_U8) {
    dg_build_fail(b, DG_ERROR_INVALID_DTYPE, "y_dtype", "i8 or u8",
                  dg_dtype_name(y_dtype), "quantised output dtype");
    return false;
  }
  if (!q) {
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "y_quant", "non-NULL", "NULL",
                  "output quantisation missing");
    return false;
  }
  out->dtype = y_dtype;
  out->quant = *q;
  return dg_build_quant(b, out, "y", -1);
}

dg_tensor dg_graph_fully_connected(dg_graph *g, const char *name, dg_tensor x,
                                   dg_tensor w, dg_tensor bias,
                                   dg_activation activation) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_FULLY_CONNECTED, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  const dg_tensor_info *wi = ok ? dg_build_tensor(&b, w, "w", false, &ok) : 0;
  const dg_tensor_info *bi =
      ok ? dg_build_tensor(&b, bias, "bias", true, &ok) : 0;
  if (!ok || !dg_build_dtype(&b, xi, "x", DG_FLOAT_TYPES) ||
      !dg_build_same_dtype(&b, xi, wi, "w"))
    return DG_TENSOR_NONE;
  dg_tensor_desc out = {.dtype = xi->desc.dtype};
  if (!fc_shape(&b, xi, wi, bi, activation, &out, DG_BIT(xi->desc.dtype)))
    return DG_TENSOR_NONE;
  dg_node_params p = {.activation = activation};
  uint32_t ins[3] = {x.id, w.id, bias.id};
  return dg_build_finish(&b, ins, 3, &out, &p);
}

dg_tensor dg_graph_qfully_connected(dg_graph *g, const char *name, dg_tensor x,
                                    dg_tensor w, dg_tensor bias,
                                    dg_activation activation, dg_dtype y_dtype,
                                    const dg_quant_params *y_quant) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_QFULLY_CONNECTED, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  const dg_tensor_info *wi = ok ? dg_build_tensor(&b, w, "w", false, &ok) : 0;
  const dg_tensor_info *bi =
      ok ? dg_build_tensor(&b, bias, "bias", true, &ok) : 0;
  if (!ok || !dg_build_dtype(&b, xi, "x", DG_Q8_TYPES) ||
      !dg_build_dtype(&b, wi, "w", DG_Q8_TYPES) ||
      !dg_build_quant(&b, &xi->desc, "x", -1) ||
      !dg_build_quant(&b, &wi->desc, "w", 0))
    return DG_TENSOR_NONE;
  dg_tensor_desc out = {0};
  if (!fc_shape(&b, xi, wi, bi, activation, &out, DG_BIT(DG_DTYPE_I32)) ||
      !q_output(&b, y_dtype, y_quant, &out) ||
      !dg_build_requant(&b, &xi->desc, &wi->desc, &out))
    return DG_TENSOR_NONE;
  dg_node_params p = {.activation = activation};
  uint32_t ins[3] = {x.id, w.id, bias.id};
  return dg_build_finish(&b, ins, 3, &out, &p);
}

static bool mm_shape(dg_build *b, const dg_tensor_info *a,
                     const dg_tensor_info *bt, dg_tensor_desc *out) {
  dg_matmul_shape s;
  int r;
  if (a->desc.rank < 1 || bt->desc.rank < 1 ||
      !dg_matmul_shape_get(&a->desc, &bt->desc, &s, &r, out->dims)) {
    char exp[96], got[96];
    dg_format_dims(exp, sizeof exp, a->desc.rank, a->desc.dims);
    dg_format_dims(got, sizeof got, bt->desc.rank, bt->desc.dims);
    dg_build_fail(b, DG_ERROR_INVALID_SHAPE, "b",
                  "[..., K, N] matching a's K and broadcastable batch", got,
                  "matmul operands do not fit (a is %s)", exp);
    return false;
  }
  out->rank = r;
  return true;
}

dg_tensor dg_graph_matmul(dg_graph *g, const char *name, dg_tensor a,
                          dg_tensor bm) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_MATMUL, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *ai = dg_build_tensor(&b, a, "a", false, &ok);
  const dg_tensor_info *bi = ok ? dg_build_tensor(&b, bm, "b", false, &ok) : 0;
  if (!ok || !dg_build_dtype(&b, ai, "a", DG_FLOAT_TYPES) ||
      !dg_build_same_dtype(&b, ai, bi, "b"))
    return DG_TENSOR_NONE;
  dg_tensor_desc out = {.dtype = ai->desc.dtype};
  if (!mm_shape(&b, ai, bi, &out))
    return DG_TENSOR_NONE;
  uint32_t ins[2] = {a.id, bm.id};
  return dg_build_finish(&b, ins, 2, &out, NULL);
}

dg_tensor dg_graph_qmatmul(dg_graph *g, const char *name, dg_tensor a,
                           dg_tensor bm, dg_dtype y_dtype,
                           const dg_quant_params *y_quant) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_QMATMUL, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *ai = dg_build_tensor(&b, a, "a", false, &ok);
  const dg_tensor_info *bi = ok ? dg_build_tensor(&b, bm, "b", false, &ok) : 0;
  if (!ok || !dg_build_dtype(&b, ai, "a", DG_Q8_TYPES) ||
      !dg_build_dtype(&b, bi, "b", DG_Q8_TYPES) ||
      !dg_build_quant(&b, &ai->desc, "a", -1) ||
      !dg_build_quant(&b, &bi->desc, "b", bi->desc.rank - 1))
    return DG_TENSOR_NONE;
  dg_tensor_desc out = {0};
  if (!mm_shape(&b, ai, bi, &out) || !q_output(&b, y_dtype, y_quant, &out) ||
      !dg_build_requant(&b, &ai->desc, &bi->desc, &out))
    return DG_TENSOR_NONE;
  if (bi->desc.quant.channel_count && bi->desc.rank < 2) {
    dg_build_fail(&b, DG_ERROR_INVALID_SHAPE, "b.quant", "per-tensor",
                  "per-channel", "a rank-1 b has a single column");
    return DG_TENSOR_NONE;
  }
  uint32_t ins[2] = {a.id, bm.id};
  return dg_build_finish(&b, ins, 2, &out, NULL);
}

/* ---- reference ---- */

static double act(double v, dg_activation a) {
  if (a != DG_ACTIVATION_NONE && v < 0)
    v = 0;
  return (a == DG_ACTIVATION_RELU6 && v > 6) ? 6 : v;
}

void dg_ref_fully_connected(const dg_ir *ir, const dg_node *n,
                            const double *const *in, double *out) {
  const dg_tensor_desc *wd = &dg_ir_tensor(ir, n->inputs[1])->desc;
  const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
  int64_t N = yd->dims[0], O = wd->dims[0], K = wd->dims[1];
  for (int64_t i = 0; i < N; i++)
    for (int64_t o = 0; o < O; o++) {
      double s = in[2] ? in[2][o] : 0;
      for (int64_t k = 0; k < K; k++)
        s += in[0][i * K + k] * in[1][o * K + k];
      out[i * O + o] = act(s, n->p.activation);
    }
}

void dg_ref_qfully_connected(const dg_ir *ir, const dg_node *n,
                             const double *const *in, double *out) {
  const dg_tensor_desc *xd = &dg_ir_tensor(ir, n->inputs[0])->desc;
  const dg_tensor_desc *wd = &dg_ir_tensor(ir, n->inputs[1])->desc;
  const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
  int64_t N = yd->dims[0], O = wd->dims[0], K = wd->dims[1];
  int64_t dlo, dhi;
  dg_dtype_int_range(yd->dtype, &dlo, &dhi);
  int32_t lo, hi;
  dg_requant_clamp(n->p.activation, yd->quant.scale, yd->quant.zero_point,
                   (int32_t)dlo, (int32_t)dhi, &lo, &hi);
  double zx = xd->quant.zero_point;
  for (int64_t o = 0; o < O; o++) {
    float m = dg_requant_multiplier(xd->quant.scale, dg_quant_scale(wd, o),
                                    yd->quant.scale);
    double zw = dg_quant_zero(wd, o);
    for (int64_t i = 0; i < N; i++) {
      double acc = in[2] ? in[2][o] : 0;
      for (int64_t k = 0; k < K; k++)
        acc += (in[0][i * K + k] - zx) * (in[1][o * K + k] - zw);
      out[i * O + o] =
          dg_requant((int32_t)acc, m, yd->quant.zero_point, lo, hi);
    }
  }
}

/* Calls fn for every output element with its dot product of (a-za)(b-zb). */
static void mm_loop(const dg_ir *ir, const dg_node *n, const double *a,
                    const double *b, double *out, bool quantised) {
  const dg_tensor_desc *ad = &dg_ir_tensor(ir, n->inputs[0])->desc;
  const dg_tensor_desc *bd = &dg_ir_tensor(ir, n->inputs[1])->desc;
  const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
  dg_matmul_shape s;
  int r;
  int64_t od[DG_MAX_RANK];
  dg_matmul_shape_get(ad, bd, &s, &r, od);
  int64_t dlo = 0, dhi = 0;
  if (quantised)
    dg_dtype_int_range(yd->dtype, &dlo, &dhi);
  for (int64_t bi = 0; bi < s.batch; bi++) {
    int64_t ia, ib;
    dg_matmul_batch_index(&s, bi, &ia, &ib);
    const double *A = a + ia * s.M * s.K, *B = b + ib * s.K * s.N;
    double *Y = out + bi * s.M * s.N;
    for (int64_t i = 0; i < s.M; i++)
      for (int64_t j = 0; j < s.N; j++) {
        double za = quantised ? ad->quant.zero_point : 0;
        double zb = quantised ? dg_quant_zero(bd, j) : 0;
        double acc = 0;
        for (int64_t k = 0; k < s.K; k++)
          acc += (A[i * s.K + k] - za) * (B[k * s.N + j] - zb);
        if (quantised) {
          float m = dg_requant_multiplier(
              ad->quant.scale, dg_quant_scale(bd, j), yd->quant.scale);
          acc = dg_requant((int32_t)acc, m, yd->quant.zero_point, (int32_t)dlo,
                           (int32_t)dhi);
        }
        Y[i * s.N + j] = acc;
      }
  }
}

void dg_ref_matmul(const dg_ir *ir, const dg_node *n, const double *const *in,
                   double *out) {
  mm_loop(ir, n, in[0], in[1], out, false);
  /* a bias add fused by the compile-time passes (never built:
   * runtime/fuse_bias.h), along the last axis */
  if (n->input_count > 2 && in[2]) {
    const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
    int64_t N = yd->dims[yd->rank - 1], total = dg_desc_elements(yd);
    for (int64_t i = 0; i < total; i++)
      out[i] += in[2][i % N];
  }
}

void dg_ref_qmatmul(const dg_ir *ir, const dg_node *n, const double *const *in,
                    double *out) {
  mm_loop(ir, n, in[0], in[1], out, true);
}

static double fc_flops(const dg_ir *ir, const dg_node *n) {
  const dg_tensor_desc *wd = &dg_ir_tensor(ir, n->inputs[1])->desc;
  const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
  return 2.0 * yd->dims[0] * wd->dims[0] * wd->dims[1];
}
static double mm_flops(const dg_ir *ir, const dg_node *n) {
  dg_matmul_shape s;
  int r;
  int64_t od[DG_MAX_RANK];
  dg_matmul_shape_get(&dg_ir_tensor(ir, n->inputs[0])->desc,
                      &dg_ir_tensor(ir, n->inputs[1])->desc, &s, &r, od);
  return 2.0 * s.batch * s.M * s.N * s.K;
}
double dg_flops_fully_connected(const dg_ir *ir, const dg_node *n) {
  return fc_flops(ir, n);
}
double dg_flops_qfully_connected(const dg_ir *ir, const dg_node *n) {
  return fc_flops(ir, n);
}
double dg_flops_matmul(const dg_ir *ir, const dg_node *n) {
  return mm_flops(ir, n);
}
double dg_flops_qmatmul(const dg_ir *ir, const dg_node *n) {
  return mm_flops(ir, n);
}
