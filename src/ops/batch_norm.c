/* batch_norm (inference): parameter checks, shape rule, cost, reference.
 * Folding into a preceding conv2d is a compile-time rewrite
 * (src/runtime/fold_bn.c). */
#include "build.h"
#include "ops.h"

#include <math.h>
#include <stdio.h>

/* A per-channel parameter: x's dtype, shape [C]. */
static bool check_param(dg_build *b, const dg_tensor_info *x,
                        const dg_tensor_info *t, const char *field) {
  if (!dg_build_same_dtype(b, x, t, field))
    return false;
  if (t->desc.rank != 1 || t->desc.dims[0] != x->desc.dims[1]) {
    char exp[32], got[96];
    snprintf(exp, sizeof exp, "[%lld]", (long long)x->desc.dims[1]);
    dg_format_dims(got, sizeof got, t->desc.rank, t->desc.dims);
    dg_build_fail(b, DG_ERROR_INVALID_SHAPE, field, exp, got,
                  "one value per channel of x (axis 1)");
    return false;
  }
  return true;
}

dg_tensor dg_graph_batch_norm(dg_graph *g, const char *name, dg_tensor x,
                              dg_tensor scale, dg_tensor bias, dg_tensor mean,
                              dg_tensor var, float epsilon) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_BATCH_NORM, name))
    return DG_TENSOR_NONE;
  static const char *const fields[5] = {"x", "scale", "bias", "mean", "var"};
  dg_tensor ts[5] = {x, scale, bias, mean, var};
  const dg_tensor_info *ti[5];
  bool ok = true;
  for (int i = 0; i < 5 && ok; i++)
    ti[i] = dg_build_tensor(&b, ts[i], fields[i], false, &ok);
  if (!ok || !dg_build_dtype(&b, ti[0], "x", DG_FLOAT_TYPES))
    return DG_TENSOR_NONE;
  if (ti[0]->desc.rank < 2) {
    char got[96];
    dg_format_dims(got, sizeof got, ti[0]->desc.rank, ti[0]->desc.dims);
    dg_build_fail(&b, DG_ERROR_INVALID_SHAPE, "x", "rank >= 2 (N, C, ...)", got,
                  "batch norm needs a channel axis");
    return DG_TENSOR_NONE;
  }
  for (int i = 1; i < 5; i++)
    if (!check_param(&b, ti[0], ti[i], fields[i]))
      return DG_TENSOR_NONE;
  if (!(epsilon >= 0) || isinf(epsilon)) {
    char got[32];
    snprintf(got, sizeof got, "%g", (double)epsilon);
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "epsilon", "finite, >= 0", got,
                  "bad epsilon");
    return DG_TENSOR_NONE;
  }
  dg_node_params p = {.epsilon = epsilon};
  uint32_t ins[5] = {x.id, scale.id, bias.id, mean.id, var.id};
  return dg_build_finish(&b, ins, 5, &ti[0]->desc, &p);
}

/* Elements per channel and channels of x [N, C, ...]. */
static void bn_shape(const dg_ir *ir, const dg_node *n, int64_t *N, int64_t *C,
                     int64_t *inner) {
  const dg_tensor_desc *x = &dg_ir_tensor(ir, n->inputs[0])->desc;
  *N = x->dims[0];
  *C = x->dims[1];
  *inner = 1;
  for (int i = 2; i < x->rank; i++)
    *inner *= x->dims[i];
}

void dg_ref_batch_norm(const dg_ir *ir, const dg_node *n,
                       const double *const *in, double *out) {
  int64_t N, C, inner;
  bn_shape(ir, n, &N, &C, &inner);
  double eps = n->p.epsilon;
  for (int64_t b = 0; b < N; b++)
    for (int64_t c = 0; c < C; c++) {
      double s = in[1][c] / sqrt(in[4][c] + eps);
      for (int64_t k = 0, base = (b * C + c) * inner; k < inner; k++)
        out[base + k] = (in[0][base + k] - in[3][c]) * s + in[2][c];
    }
}

double dg_flops_batch_norm(const dg_ir *ir, const dg_node *n) {
  int64_t N, C, inner;
  bn_shape(ir, n, &N, &C, &inner);
  return 2.0 * (double)(N * C * inner) + 3.0 * (double)C;
}
