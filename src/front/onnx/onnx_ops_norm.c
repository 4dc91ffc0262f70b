/* The normalisations composed of reductions and element-wise ops:
 * LayerNormalization's Mean and InvStdDev outputs, LpNormalization,
 * InstanceNormalization, MeanVarianceNormalization, LRN (a band
 * matmul). */
#include "onnx_decomp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Outputs 1 and 2 when used, over axes [axis, rank) of x, in f32
 * (stash_type 1, the only one taken): Mean = mean(x), InvStdDev =
 * 1 / sqrt(mean((x - Mean)^2) + epsilon), both with keepdims. */
void tr_layer_norm_stats(tr *t, dg_tensor x, int64_t axis, float eps) {
  bool want_mean = tr_output_used(t, 1), want_inv = tr_output_used(t, 2);
  if (!want_mean && !want_inv)
    return;
  if (tr_attr_int(t, "stash_type", 1) != 1) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "stash_type",
            "Mean and InvStdDev are computed in float only (stash_type 1)");
    return;
  }
  dg_tensor_desc d;
  if (!tr_desc(t, x, &d))
    return;
  if (axis < -d.rank || axis >= d.rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axis",
            "axis %lld out of range for rank %d", (long long)axis, d.rank);
    return;
  }
  int from = (int)(axis < 0 ? axis + d.rank : axis);
  dg_tensor xf =
      d.dtype == DG_DTYPE_F32 ? x : dg_graph_cast(t->g, NULL, x, DG_DTYPE_F32);
  dg_tensor mean = tr_reduce_from(t, DG_REDUCE_MEAN, xf, from, d.rank);
  if (want_mean)
    tr_output(t, 1, mean);
  if (!want_inv || t->st != DG_OK)
    return;
  dg_tensor dx = tr_bin(t, DG_BINARY_SUB, xf, mean);
  dg_tensor var = tr_reduce_from(
      t, DG_REDUCE_MEAN, tr_bin(t, DG_BINARY_MUL, dx, dx), from, d.rank);
  var = tr_bin(t, DG_BINARY_ADD, var, tr_scalar_constant(t, DG_DTYPE_F32, eps));
  dg_tensor sd = dg_graph_unary(t->g, NULL, DG_UNARY_SQRT, var, 0, 0);
  tr_output(t, 2, dg_graph_unary(t->g, NULL, DG_UNARY_RECIPROCAL, sd, 0, 0));
}

/* x / ||x||_p along axis (default -1), p 1 or 2. */
void tr_op_lp_norm(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (!tr_need_float(t, x, "input") || !tr_desc(t, x, &d))
    return;
  int64_t axis = tr_attr_int(t, "axis", -1), p = tr_attr_int(t, "p", 2);
  if (t->st != DG_OK)
    return;
  if (p != 1 && p != 2) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "p", "p must be 1 or 2 (%lld)",
            (long long)p);
    return;
  }
  if (d.rank == 0 || axis < -d.rank || axis >= d.rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axis",
            "axis %lld out of range for rank %d", (long long)axis, d.rank);
    return;
  }
  int32_t ax = (int32_t)axis;
  dg_tensor n = dg_graph_reduce(
      t->g, NULL, p == 1 ? DG_REDUCE_L1 : DG_REDUCE_L2, x, &ax, 1, 1);
  tr_output(t, 0, dg_graph_binary(t->g, t->n->name, DG_BINARY_DIV, x, n));
}

/* (x - mean) / (sqrt(var + eps) + eps_sd) with mean and the biased var
 * over the axes ax (keepdims). */
static dg_tensor normalize(tr *t, dg_tensor x, dg_dtype dt, const int32_t *ax,
                           int n, float eps, float eps_sd) {
  dg_tensor mean = dg_graph_reduce(t->g, NULL, DG_REDUCE_MEAN, x, ax, n, 1);
  dg_tensor dx = tr_bin(t, DG_BINARY_SUB, x, mean);
  dg_tensor var = dg_graph_reduce(t->g, NULL, DG_REDUCE_MEAN,
                                  tr_bin(t, DG_BINARY_MUL, dx, dx), ax, n, 1);
  if (eps != 0)
    var = tr_bin(t, DG_BINARY_ADD, var, tr_scalar_constant(t, dt, eps));
  dg_tensor sd = dg_graph_unary(t->g, NULL, DG_UNARY_SQRT, var, 0, 0);
  if (eps_sd != 0)
    sd = tr_bin(t, DG_BINARY_ADD, sd, tr_scalar_constant(t, dt, eps_sd));
  return tr_bin(t, DG_BINARY_DIV, dx, sd);
}

/* y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c], mean and var
 * per (n, c) over the spatial axes. */
void tr_op_instance_norm(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor s = tr_input(t, 1, NULL, false);
  dg_tensor b = tr_input(t, 2, NULL, false);
  dg_tensor_desc d, sd, bd;
  if (!tr_need_float(t, x, "input") || !tr_need_float(t, s, "scale") ||
      !tr_need_float(t, b, "B") || !tr_desc(t, x, &d) || !tr_desc(t, s, &sd) ||
      !tr_desc(t, b, &bd))
    return;
  if (d.rank < 3) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "input",
            "input must be [N, C, spatial...] (rank %d)", d.rank);
    return;
  }
  if (sd.rank != 1 || sd.dims[0] != d.dims[1] || bd.rank != 1 ||
      bd.dims[0] != d.dims[1]) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT,
            sd.rank != 1 || sd.dims[0] != d.dims[1] ? "scale" : "B",
            "scale and B must be [C] with C = %lld", (long long)d.dims[1]);
    return;
  }
  float eps = tr_attr_float(t, "epsilon", 1e-5f);
  int32_t ax[DG_MAX_RANK];
  for (int k = 2; k < d.rank; k++)
    ax[k - 2] = k;
  dg_tensor y = normalize(t, x, d.dtype, ax, d.rank - 2, eps, 0);
  /* scale and B as [C, 1, ...] so that they broadcast along axis 1 */
  int64_t cd[DG_MAX_RANK];
  cd[0] = d.dims[1];
  for (int k = 1; k < d.rank - 1; k++)
    cd[k] = 1;
  dg_tensor sr = dg_graph_reshape(t->g, NULL, s, d.rank - 1, cd);
  dg_tensor br = dg_graph_reshape(t->g, NULL, b, d.rank - 1, cd);
  y = tr_bin(t, DG_BINARY_MUL, y, sr);
  tr_output(t, 0, dg_graph_binary(t->g, t->n->name, DG_BINARY_ADD, y, br));
}

/* (X - mean) / (sqrt(var) + 1e-9) over axes (default 0, 2, 3), as
 * ONNX's function body (its variance is E[X^2] - E[X]^2; the one here,
 * E[(X - mean)^2], is the same without the cancellation). */
void tr_op_mvn(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (!tr_need_float(t, x, "X") || !tr_desc(t, x, &d))
    return;
  int64_t axes[DG_MAX_RANK + 1];
  int n = tr_attr_ints(t, "axes", axes, DG_MAX_RANK + 1);
  if (n < 0) {
    n = 3;
    axes[0] = 0, axes[1] = 2, axes[2] = 3;
  }
  if (n == 0 || n > d.rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axes",
            "%d axes for a tensor of rank %d", n, d.rank);
    return;
  }
  int32_t ax[DG_MAX_RANK];
  for (int k = 0; k < n; k++) {
    if (axes[k] < -d.rank || axes[k] >= d.rank) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axes",
              "axis %lld out of range for rank %d", (long long)axes[k], d.rank);
      return;
    }
    ax[k] = (int32_t)axes[k];
  }
  tr_output(t, 0, normalize(t, x, d.dtype, ax, n, 0, 1e-9f));
}

/* y = x / (bias + alpha / size * s)^beta, s the sum of x^2 over the
 * channels c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2): a
 * constant 0/1 band matrix [C, C] times x^2 viewed as [N, C, spatial]. */
void tr_op_lrn(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (!tr_need_float(t, x, "X") || !tr_desc(t, x, &d))
    return;
  if (d.rank < 3) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "X",
            "X must be [N, C, spatial...] (rank %d)", d.rank);
    return;
  }
  int64_t size = tr_attr_int(t, "size", 0);
  float alpha = tr_attr_float(t, "alpha", 1e-4f);
  float beta = tr_attr_float(t, "beta", 0.75f);
  float bias = tr_attr_float(t, "bias", 1.0f);
  if (t->st != DG_OK)
    return;
  if (size < 1) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "size",
            "size must be given and at least 1 (%lld)", (long long)size);
    return;
  }
  int64_t ch = d.dims[1];
  if (ch > DECOMP_MAX_SCAN) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "X", "%lld channels (at most %d)",
            (long long)ch, DECOMP_MAX_SCAN);
    return;
  }
  float *band = malloc(sizeof *band * (size_t)(ch * ch));
  if (!band) {
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return;
  }
  int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  for (int64_t c = 0; c < ch; c++)
    for (int64_t k = 0; k < ch; k++)
      band[c * ch + k] = k >= c - lo && k <= c + hi ? 1.0f : 0.0f;
  int64_t bd[2] = {ch, ch};
  dg_tensor bt = tr_float_constant(t, NULL, d.dtype, 2, bd, band);
  free(band);
  int64_t vd[3] = {d.dims[0], ch, tr_elements(&d) / (d.dims[0] * ch)};
  dg_tensor v = dg_graph_reshape(t->g, NULL, x, 3, vd);
  dg_tensor s = dg_graph_matmul(t->g, NULL, bt, tr_bin(t, DG_BINARY_MUL, v, v));
  s = tr_bin(t, DG_BINARY_MUL, s, tr_scalar_constant(t, d.dtype, alpha / size));
  s = tr_bin(t, DG_BINARY_ADD, s, tr_scalar_constant(t, d.dtype, bias));
  s = tr_bin(t, DG_BINARY_POW, s, tr_scalar_constant(t, d.dtype, beta));
  dg_tensor y = tr_bin(t, DG_BINARY_DIV, v, s);
  tr_output(t, 0, dg_graph_reshape(t->g, t->n->name, y, d.rank, d.dims));
}
