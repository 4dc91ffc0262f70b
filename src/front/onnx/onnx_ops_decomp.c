/* ONNX ops that are compositions of existing builder ops, built here in
 * the translator from reductions, elementwise ops, log-softmax and
 * constants computed at import: NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (a gather of the elements the constant target
 * picks), LayerNormalization's Mean and InvStdDev outputs,
 * GlobalMaxPool, LpNormalization, InstanceNormalization,
 * MeanVarianceNormalization, CumSum and Hardmax (a triangular matmul),
 * LRN (a band matmul), GatherElements (a flat gather) and EyeLike.
 * No new builder op and no kernel: every target that runs the parts
 * runs the whole. */
#include "onnx_tr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Constants made here are at most this many elements. */
#define DECOMP_MAX_CONST ((int64_t)1 << 24)

/* A name for a builder node of the current ONNX node ("<node>/<what>"),
 * or NULL (an automatic name) when the node has none. */
static const char *sub_name(const tr *t, char *buf, size_t size,
                            const char *what) {
  if (!t->n->name || !t->n->name[0])
    return NULL;
  snprintf(buf, size, "%s/%s", t->n->name, what);
  return buf;
}

static int64_t elements(const dg_tensor_desc *d) {
  int64_t n = 1;
  for (int k = 0; k < d->rank; k++)
    n *= d->dims[k];
  return n;
}

/* A constant of dtype dt (f32, or f16 through a cast of the f32 data) and
 * the shape of dims from count floats. */
static dg_tensor float_constant(tr *t, const char *name, dg_dtype dt, int rank,
                                const int64_t *dims, const float *v) {
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = rank};
  if (rank)
    memcpy(d.dims, dims, sizeof(int64_t) * (size_t)rank);
  dg_tensor c = dg_graph_constant(t->g, name, &d, v, 0);
  return dt == DG_DTYPE_F32 ? c : dg_graph_cast(t->g, NULL, c, dt);
}

static dg_tensor scalar_constant(tr *t, dg_dtype dt, float v) {
  return float_constant(t, NULL, dt, 0, NULL, &v);
}

static dg_tensor bin(tr *t, dg_binary_fn fn, dg_tensor a, dg_tensor b) {
  return dg_graph_binary(t->g, NULL, fn, a, b);
}

/* x reduced over axes [from, rank) with keepdims. */
static dg_tensor reduce_from(tr *t, dg_reduce_fn fn, dg_tensor x, int from,
                             int rank) {
  int32_t ax[DG_MAX_RANK];
  for (int k = from; k < rank; k++)
    ax[k - from] = k;
  return dg_graph_reduce(t->g, NULL, fn, x, ax, rank - from, 1);
}

/* Whether output i is named and read (by a node, or outside the list). */
static bool output_used(tr *t, int i) {
  if (i >= t->n->n_outputs || !t->n->outputs[i][0])
    return false;
  const tr_value *v = tr_value_find(t, t->n->outputs[i]);
  return !v || v->readers > 0 ||
         (t->src->read_outside &&
          t->src->read_outside(t->src->self, t->n->outputs[i]));
}

/* ---- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ---- */

typedef enum { RED_NONE, RED_SUM, RED_MEAN } reduction;

static bool read_reduction(tr *t, reduction *r) {
  char s[16] = "mean";
  t->n->attr_string(t->n, "reduction", s, sizeof s);
  if (!strcmp(s, "none"))
    *r = RED_NONE;
  else if (!strcmp(s, "sum"))
    *r = RED_SUM;
  else if (!strcmp(s, "mean"))
    *r = RED_MEAN;
  else {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "reduction",
            "reduction '%s' is not none, sum or mean", s);
    return false;
  }
  return true;
}

/* From the constant target [N, d...]: off, the flat offset into x
 * [N, C, d...] of each target's element x[n, target[n, d...], d...], and
 * wt, its weight (weight[target], 1 without weight; 0, offset 0, where
 * target is ignore_index); *wsum gets the sum of wt (the divisor of
 * 'mean'). false, failure recorded, unless the target is int32/int64 of
 * that shape with values in [0, C) or ignore_index. */
static bool nll_targets(tr *t, const dg_tensor_desc *xd, const float *w,
                        bool has_ii, int64_t ii, dg_onnx_value *c,
                        int32_t **off, float **wt, double *wsum) {
  if (!tr_const(t, 1, c)) {
    if (t->st == DG_OK)
      tr_fail(t, DG_ERROR_UNSUPPORTED, "target",
              "target must be a constant (the elements it picks are found "
              "at import)");
    return false;
  }
  if (c->elem != DG_ONNX_INT32 && c->elem != DG_ONNX_INT64) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "target",
            "target must be int32 or int64 (element type %d)", c->elem);
    return false;
  }
  bool shape_ok = c->rank == xd->rank - 1 && c->dims[0] == xd->dims[0];
  for (int k = 1; shape_ok && k < c->rank; k++)
    shape_ok = c->dims[k] == xd->dims[k + 1];
  if (!shape_ok) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "target",
            "target must have the input's shape without axis 1");
    return false;
  }
  int64_t total = elements(xd);
  if (total > INT32_MAX) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "input",
            "input of %lld elements: offsets past int32", (long long)total);
    return false;
  }
  int64_t n = xd->dims[0], cls = xd->dims[1], inner = total / (n * cls);
  if (n * inner > DECOMP_MAX_CONST) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "target",
            "target of %lld elements (at most %lld)", (long long)(n * inner),
            (long long)DECOMP_MAX_CONST);
    return false;
  }
  size_t count = (size_t)(n * inner);
  *off = malloc(sizeof **off * count);
  *wt = malloc(sizeof **wt * count);
  if (!*off || !*wt) {
    free(*off);
    free(*wt);
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return false;
  }
  *wsum = 0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t d = 0; d < inner; d++) {
      size_t k = (size_t)(i * inner + d);
      int64_t y = c->elem == DG_ONNX_INT64 ? ((const int64_t *)c->data)[k]
                                           : ((const int32_t *)c->data)[k];
      (*off)[k] = 0;
      (*wt)[k] = 0;
      if (has_ii && y == ii)
        continue;
      if (y < 0 || y >= cls) {
        tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "target",
                "target %lld out of range [0, %lld) (and not ignore_index)",
                (long long)y, (long long)cls);
        free(*off);
        free(*wt);
        return false;
      }
      (*off)[k] = (int32_t)((i * cls + y) * inner + d);
      (*wt)[k] = w ? w[y] : 1.0f;
      *wsum += (*wt)[k];
    }
  return true;
}

/* IEEE half to float (exact). */
static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu,
           man = h & 0x3ffu, bits;
  if (exp == 0x1f)
    bits = sign | 0x7f800000u | (man << 13);
  else if (exp)
    bits = sign | ((exp + 112) << 23) | (man << 13);
  else if (!man)
    bits = sign;
  else { /* subnormal: normalise */
    int e = -1;
    do {
      e++;
      man <<= 1;
    } while (!(man & 0x400u));
    bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* The class weights c (float or float16, as the input's type) as floats;
 * false (failure recorded) for another type or too many. */
static bool weight_floats(tr *t, const dg_onnx_value *c, float *w, int *n) {
  if ((c->elem != DG_ONNX_FLOAT && c->elem != DG_ONNX_FLOAT16) ||
      c->count > TR_MAX_CHANNELS) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "weight",
            "weight must be float or float16, at most %d values",
            TR_MAX_CHANNELS);
    return false;
  }
  for (size_t k = 0; k < c->count; k++)
    w[k] = c->elem == DG_ONNX_FLOAT
               ? ((const float *)c->data)[k]
               : half_to_float(((const uint16_t *)c->data)[k]);
  *n = (int)c->count;
  return true;
}

/* The loss of log-probabilities x [N, C, d...] (output 0). */
static void nll(tr *t, dg_tensor x, const dg_tensor_desc *xd) {
  reduction red;
  if (!read_reduction(t, &red))
    return;
  if (xd->rank < 2) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "input",
            "input must be [N, C, d...] (rank %d)", xd->rank);
    return;
  }
  int64_t ii = 0;
  bool has_ii = t->n->attr_int(t->n, "ignore_index", &ii);
  float w[TR_MAX_CHANNELS];
  int nw = 0;
  if (tr_has_input(t, 2)) {
    dg_onnx_value c;
    if (!tr_const(t, 2, &c)) {
      if (t->st == DG_OK)
        tr_fail(t, DG_ERROR_UNSUPPORTED, "weight", "weight must be a constant");
      return;
    }
    if (xd->dims[1] > TR_MAX_CHANNELS) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, "weight",
              "at most %d classes with a weight", TR_MAX_CHANNELS);
      return;
    }
    if (!weight_floats(t, &c, w, &nw))
      return;
    if (nw != xd->dims[1]) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "weight",
              "weight has %d values for %lld classes", nw,
              (long long)xd->dims[1]);
      return;
    }
  }
  double wsum;
  dg_onnx_value c;
  int32_t *off;
  float *wt;
  if (!nll_targets(t, xd, nw ? w : NULL, has_ii, ii, &c, &off, &wt, &wsum))
    return;
  /* The target elements, gathered from the flattened x (not a mask
   * multiplied in: a -inf log-probability of another class must not
   * turn the loss into NaN), times their weights. */
  char nb[256];
  dg_tensor_desc od = {.dtype = DG_DTYPE_I32, .rank = c.rank};
  memcpy(od.dims, c.dims, sizeof(int64_t) * (size_t)c.rank);
  dg_tensor ot = dg_graph_constant(t->g, sub_name(t, nb, sizeof nb, "offsets"),
                                   &od, off, 0);
  dg_tensor wtt = float_constant(t, sub_name(t, nb, sizeof nb, "weights"),
                                 xd->dtype, c.rank, c.dims, wt);
  free(off);
  free(wt);
  int64_t total = elements(xd);
  dg_tensor xf = dg_graph_reshape(t->g, NULL, x, 1, &total);
  dg_tensor p =
      bin(t, DG_BINARY_MUL, dg_graph_gather(t->g, NULL, xf, ot, 0), wtt);
  dg_tensor loss;
  if (red == RED_NONE)
    loss = dg_graph_unary(t->g, t->n->name, DG_UNARY_NEG, p, 0, 0);
  else {
    loss = dg_graph_reduce(t->g, NULL, DG_REDUCE_SUM, p, NULL, 0, 0);
    if (red == RED_SUM)
      loss = dg_graph_unary(t->g, t->n->name, DG_UNARY_NEG, loss, 0, 0);
    else /* sum / -(sum of the weights taken): ONNX's weighted mean */
      loss = dg_graph_binary(t->g, t->n->name, DG_BINARY_DIV, loss,
                             scalar_constant(t, xd->dtype, (float)-wsum));
  }
  tr_output(t, 0, loss);
}

void tr_op_nll_loss(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (!tr_need_float(t, x, "input") || !tr_desc(t, x, &d))
    return;
  nll(t, x, &d);
}

/* log_softmax over the classes (axis 1), whose result is the optional
 * output log_prob, then the NLL of it. */
void tr_op_sce_loss(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (!tr_need_float(t, x, "scores") || !tr_desc(t, x, &d))
    return;
  if (d.rank < 2) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "scores",
            "scores must be [N, C, d...] (rank %d)", d.rank);
    return;
  }
  char nb[256];
  dg_tensor lp =
      dg_graph_log_softmax(t->g, sub_name(t, nb, sizeof nb, "log_prob"), x, 1);
  if (tr_check(t))
    return;
  nll(t, lp, &d);
  if (t->st == DG_OK && t->n->n_outputs > 1 && t->n->outputs[1][0])
    tr_output(t, 1, lp);
}

/* ---- LayerNormalization's Mean and InvStdDev ---- */

/* Outputs 1 and 2 when used, over axes [axis, rank) of x, in f32
 * (stash_type 1, the only one taken): Mean = mean(x), InvStdDev =
 * 1 / sqrt(mean((x - Mean)^2) + epsilon), both with keepdims. */
void tr_layer_norm_stats(tr *t, dg_tensor x, int64_t axis, float eps) {
  bool want_mean = output_used(t, 1), want_inv = output_used(t, 2);
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
  dg_tensor mean = reduce_from(t, DG_REDUCE_MEAN, xf, from, d.rank);
  if (want_mean)
    tr_output(t, 1, mean);
  if (!want_inv || t->st != DG_OK)
    return;
  dg_tensor dx = bin(t, DG_BINARY_SUB, xf, mean);
  dg_tensor var = reduce_from(t, DG_REDUCE_MEAN, bin(t, DG_BINARY_MUL, dx, dx),
                              from, d.rank);
  var = bin(t, DG_BINARY_ADD, var, scalar_constant(t, DG_DTYPE_F32, eps));
  dg_tensor sd = dg_graph_unary(t->g, NULL, DG_UNARY_SQRT, var, 0, 0);
  tr_output(t, 2, dg_graph_unary(t->g, NULL, DG_UNARY_RECIPROCAL, sd, 0, 0));
}

/* ---- GlobalMaxPool ---- */

void tr_op_global_max_pool(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (!tr_need_float(t, x, "X") || !tr_desc(t, x, &d))
    return;
  if (d.rank < 3) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "X",
            "X must be [N, C, spatial...] (rank %d)", d.rank);
    return;
  }
  int32_t ax[DG_MAX_RANK];
  for (int k = 2; k < d.rank; k++)
    ax[k - 2] = k;
  tr_output(
      t, 0,
      dg_graph_reduce(t->g, t->n->name, DG_REDUCE_MAX, x, ax, d.rank - 2, 1));
}

/* ---- LpNormalization ---- */

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

/* ---- InstanceNormalization, MeanVarianceNormalization ---- */

/* (x - mean) / (sqrt(var + eps) + eps_sd) with mean and the biased var
 * over the axes ax (keepdims). */
static dg_tensor normalize(tr *t, dg_tensor x, dg_dtype dt, const int32_t *ax,
                           int n, float eps, float eps_sd) {
  dg_tensor mean = dg_graph_reduce(t->g, NULL, DG_REDUCE_MEAN, x, ax, n, 1);
  dg_tensor dx = bin(t, DG_BINARY_SUB, x, mean);
  dg_tensor var = dg_graph_reduce(t->g, NULL, DG_REDUCE_MEAN,
                                  bin(t, DG_BINARY_MUL, dx, dx), ax, n, 1);
  if (eps != 0)
    var = bin(t, DG_BINARY_ADD, var, scalar_constant(t, dt, eps));
  dg_tensor sd = dg_graph_unary(t->g, NULL, DG_UNARY_SQRT, var, 0, 0);
  if (eps_sd != 0)
    sd = bin(t, DG_BINARY_ADD, sd, scalar_constant(t, dt, eps_sd));
  return bin(t, DG_BINARY_DIV, dx, sd);
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
  y = bin(t, DG_BINARY_MUL, y, sr);
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

/* ---- CumSum, Hardmax: running sums as a triangular matmul ---- */

/* At most this many elements along a running sum's axis: its 0/1 matrix
 * is len * len floats. */
#define DECOMP_MAX_SCAN 4096

/* The running sum of x along axis (in [0, rank)): x with the axis last
 * times the constant T[i][j] = 1 where input i adds into output j (i <= j;
 * i < j exclusive; i >= j, i > j in reverse), the axis moved back. */
static dg_tensor running_sum(tr *t, dg_tensor x, const dg_tensor_desc *d,
                             int axis, bool exclusive, bool reverse,
                             const char *name) {
  int64_t len = d->dims[axis];
  if (len > DECOMP_MAX_SCAN) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "axis",
            "%lld elements along the axis (at most %d)", (long long)len,
            DECOMP_MAX_SCAN);
    return DG_TENSOR_NONE;
  }
  float *tri = malloc(sizeof *tri * (size_t)(len * len));
  if (!tri) {
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return DG_TENSOR_NONE;
  }
  for (int64_t i = 0; i < len; i++)
    for (int64_t j = 0; j < len; j++) {
      bool in =
          reverse ? (exclusive ? i > j : i >= j) : (exclusive ? i < j : i <= j);
      tri[i * len + j] = in ? 1.0f : 0.0f;
    }
  int64_t td[2] = {len, len};
  dg_tensor tm = float_constant(t, NULL, d->dtype, 2, td, tri);
  free(tri);
  int last = d->rank - 1;
  if (axis == last)
    return dg_graph_matmul(t->g, name, x, tm);
  int32_t perm[DG_MAX_RANK]; /* the swap of axis and last: its own inverse */
  for (int k = 0; k < d->rank; k++)
    perm[k] = k;
  perm[axis] = last;
  perm[last] = axis;
  dg_tensor y =
      dg_graph_matmul(t->g, NULL, dg_graph_transpose(t->g, NULL, x, perm), tm);
  return dg_graph_transpose(t->g, name, y, perm);
}

void tr_op_cumsum(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (!tr_need_float(t, x, "x") || !tr_desc(t, x, &d))
    return;
  dg_onnx_value c;
  if (!tr_const(t, 1, &c)) {
    if (t->st == DG_OK)
      tr_fail(t, DG_ERROR_UNSUPPORTED, "axis", "axis must be a constant");
    return;
  }
  int64_t axis;
  int n = 0;
  if (!tr_const_ints(t, 1, &axis, 1, &n))
    return;
  if (n != 1 || d.rank == 0 || axis < -d.rank || axis >= d.rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axis",
            "axis must be one value in [-%d, %d)", d.rank, d.rank);
    return;
  }
  bool exclusive = tr_attr_int(t, "exclusive", 0) != 0;
  bool reverse = tr_attr_int(t, "reverse", 0) != 0;
  tr_output(t, 0,
            running_sum(t, x, &d, (int)(axis < 0 ? axis + d.rank : axis),
                        exclusive, reverse, t->n->name));
}

/* 1 at the first maximum along axis, else 0, without a comparison op:
 * e = 1 + sign(x - max) is 1 at every maximum; the running count c of e
 * is 1 at the first, so y = e * (1 - sign(c - 1)). Exact in float (the
 * counts are small integers). A slice whose maximum is +inf (or all
 * -inf) gives NaN there (inf - inf): ONNX would mark the first. From
 * opset 13 along axis (default -1); before, over the flattened [axis:]
 * dims (default 1). */
void tr_op_hardmax(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (!tr_need_float(t, x, "input") || !tr_desc(t, x, &d))
    return;
  int64_t axis = tr_attr_int(t, "axis", t->n->opset >= 13 ? -1 : 1);
  if (d.rank == 0 || axis < -d.rank || axis >= d.rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axis",
            "axis %lld out of range for rank %d", (long long)axis, d.rank);
    return;
  }
  if (axis < 0)
    axis += d.rank;
  dg_tensor v = x;
  dg_tensor_desc vd = d;
  if (t->n->opset < 13 && axis != d.rank - 1) {
    v = dg_graph_flatten(t->g, NULL, x, (int32_t)axis);
    if (!tr_desc(t, v, &vd))
      return;
    axis = 1;
  }
  int32_t ax = (int32_t)axis;
  dg_tensor one = scalar_constant(t, d.dtype, 1);
  dg_tensor m = dg_graph_reduce(t->g, NULL, DG_REDUCE_MAX, v, &ax, 1, 1);
  dg_tensor s = dg_graph_unary(t->g, NULL, DG_UNARY_SIGN,
                               bin(t, DG_BINARY_SUB, v, m), 0, 0);
  dg_tensor e = bin(t, DG_BINARY_ADD, s, one);
  if (tr_check(t))
    return;
  dg_tensor c = running_sum(t, e, &vd, (int)axis, false, false, NULL);
  if (t->st != DG_OK)
    return;
  dg_tensor first = dg_graph_unary(t->g, NULL, DG_UNARY_SIGN,
                                   bin(t, DG_BINARY_SUB, c, one), 0, 0);
  bool flat = vd.rank != d.rank;
  dg_tensor y = dg_graph_binary(t->g, flat ? NULL : t->n->name, DG_BINARY_MUL,
                                e, bin(t, DG_BINARY_SUB, one, first));
  if (flat)
    y = dg_graph_reshape(t->g, t->n->name, y, d.rank, d.dims);
  tr_output(t, 0, y);
}

/* ---- LRN ---- */

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
  dg_tensor bt = float_constant(t, NULL, d.dtype, 2, bd, band);
  free(band);
  int64_t vd[3] = {d.dims[0], ch, elements(&d) / (d.dims[0] * ch)};
  dg_tensor v = dg_graph_reshape(t->g, NULL, x, 3, vd);
  dg_tensor s = dg_graph_matmul(t->g, NULL, bt, bin(t, DG_BINARY_MUL, v, v));
  s = bin(t, DG_BINARY_MUL, s, scalar_constant(t, d.dtype, alpha / size));
  s = bin(t, DG_BINARY_ADD, s, scalar_constant(t, d.dtype, bias));
  s = bin(t, DG_BINARY_POW, s, scalar_constant(t, d.dtype, beta));
  dg_tensor y = bin(t, DG_BINARY_DIV, v, s);
  tr_output(t, 0, dg_graph_reshape(t->g, t->n->name, y, d.rank, d.dims));
}

/* ---- GatherElements, EyeLike ---- */

/* out[i] = data[i with its axis coordinate replaced by indices[i]]: a
 * gather from the flattened data at flat offsets computed at import from
 * the constant indices (the output has the indices' shape). */
void tr_op_gather_elements(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (t->st != DG_OK || !tr_desc(t, x, &d))
    return;
  int64_t axis = tr_attr_int(t, "axis", 0);
  if (d.rank == 0 || axis < -d.rank || axis >= d.rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axis",
            "axis %lld out of range for rank %d", (long long)axis, d.rank);
    return;
  }
  if (axis < 0)
    axis += d.rank;
  dg_onnx_value c;
  if (!tr_const(t, 1, &c)) {
    if (t->st == DG_OK)
      tr_fail(t, DG_ERROR_UNSUPPORTED, "indices", "indices must be a constant");
    return;
  }
  if (c.elem != DG_ONNX_INT32 && c.elem != DG_ONNX_INT64) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "indices",
            "indices must be int32 or int64 (element type %d)", c.elem);
    return;
  }
  bool fits = c.rank == d.rank;
  for (int k = 0; fits && k < d.rank; k++)
    fits = c.dims[k] >= 1 && (k == axis || c.dims[k] <= d.dims[k]);
  if (!fits) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "indices",
            "indices must have data's rank and dims no larger off the axis");
    return;
  }
  int64_t total = elements(&d);
  if (total > INT32_MAX || c.count > (size_t)DECOMP_MAX_CONST) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "data",
            "data of %lld elements or indices of %zu is too large",
            (long long)total, c.count);
    return;
  }
  int64_t stride[DG_MAX_RANK];
  for (int k = d.rank - 1, s = 1; k >= 0; s *= (int)d.dims[k], k--)
    stride[k] = s;
  int32_t *flat = malloc(sizeof *flat * (c.count ? c.count : 1));
  if (!flat) {
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return;
  }
  int64_t len = d.dims[axis];
  for (size_t e = 0; e < c.count; e++) {
    int64_t v;
    if (!tr_index_at(t, &c, e, len, axis, &v)) {
      free(flat);
      return;
    }
    int64_t off = 0, rest = (int64_t)e;
    for (int k = d.rank - 1; k >= 0; k--) { /* e's coordinates in indices */
      int64_t i = rest % c.dims[k];
      rest /= c.dims[k];
      off += (k == axis ? (v < 0 ? v + len : v) : i) * stride[k];
    }
    flat[e] = (int32_t)off;
  }
  dg_tensor_desc id = {.dtype = DG_DTYPE_I32, .rank = c.rank};
  memcpy(id.dims, c.dims, sizeof(int64_t) * (size_t)c.rank);
  char nb[256];
  dg_tensor it = dg_graph_constant(t->g, sub_name(t, nb, sizeof nb, "offsets"),
                                   &id, flat, 0);
  free(flat);
  dg_tensor xf = dg_graph_reshape(t->g, NULL, x, 1, &total);
  tr_output(t, 0, dg_graph_gather(t->g, t->n->name, xf, it, 0));
}

/* A constant 2-D matrix with ones on diagonal k, of the input's static
 * shape and the dtype attribute's type (default the input's); a reshape
 * of it is the node writing the output. f32, f16 and i32. */
void tr_op_eye_like(tr *t) {
  dg_onnx_value in;
  tr_input_type(t, 0, &in);
  bool known = in.rank == 2 && in.dims[0] >= 1 && in.dims[1] >= 1;
  if (!known) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "input",
            "input must be 2-D of a known shape (rank %d)", in.rank);
    return;
  }
  int64_t elem = tr_attr_int(t, "dtype", in.elem);
  dg_dtype dt = tr_dtype((int)elem);
  if (dt != DG_DTYPE_F32 && dt != DG_DTYPE_F16 && dt != DG_DTYPE_I32) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "dtype",
            "element type %lld is not supported (FLOAT, FLOAT16, INT32 are)",
            (long long)elem);
    return;
  }
  int64_t k = tr_attr_int(t, "k", 0);
  int64_t rows = in.dims[0], cols = in.dims[1];
  if (rows * cols > DECOMP_MAX_CONST) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "input", "%lld x %lld is too large",
            (long long)rows, (long long)cols);
    return;
  }
  /* The input is still a graph input (the model feeds it). */
  if (!tr_input(t, 0, NULL, false).id)
    return;
  bool ints = dt == DG_DTYPE_I32;
  void *eye =
      calloc((size_t)(rows * cols), ints ? sizeof(int32_t) : sizeof(float));
  if (!eye) {
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return;
  }
  for (int64_t r = 0; r < rows; r++)
    if (r + k >= 0 && r + k < cols) {
      if (ints)
        ((int32_t *)eye)[r * cols + r + k] = 1;
      else
        ((float *)eye)[r * cols + r + k] = 1;
    }
  dg_tensor c;
  if (ints) {
    dg_tensor_desc cd = {
        .dtype = DG_DTYPE_I32, .rank = 2, .dims = {rows, cols}};
    c = dg_graph_constant(t->g, NULL, &cd, eye, 0);
  } else {
    c = float_constant(t, NULL, dt, 2, in.dims, eye);
  }
  free(eye);
  tr_output(t, 0, dg_graph_reshape(t->g, t->n->name, c, 2, in.dims));
}

/* Trilu: x where a constant mask of the last two dims says so (upper:
 * column - row >= k; lower: <= k), else 0 (a select, so that an inf or
 * NaN outside the triangle still becomes 0). k must be known at import. */
void tr_op_trilu(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc xd;
  if (!tr_desc(t, x, &xd))
    return;
  if (xd.rank < 2) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "input",
            "Trilu needs a tensor of rank >= 2 (rank %d)", xd.rank);
    return;
  }
  int64_t k = 0;
  int n = 0;
  if (tr_has_input(t, 1) && (!tr_const_ints(t, 1, &k, 1, &n) || n != 1)) {
    if (t->st == DG_OK)
      tr_fail(t, DG_ERROR_UNSUPPORTED, "k", "k must be one constant value");
    return;
  }
  bool upper = tr_attr_int(t, "upper", 1) != 0;
  int64_t rows = xd.dims[xd.rank - 2], cols = xd.dims[xd.rank - 1];
  if (rows * cols > DECOMP_MAX_CONST) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "input", "%lld x %lld is too large",
            (long long)rows, (long long)cols);
    return;
  }
  uint8_t *mask = malloc((size_t)(rows * cols));
  uint8_t zero[8] = {0}; /* zero in every dtype where takes */
  if (!mask) {
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return;
  }
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++)
      mask[r * cols + c] = upper ? c - r >= k : c - r <= k;
  dg_tensor_desc md = {.dtype = DG_DTYPE_BOOL, .rank = 2, .dims = {rows, cols}};
  dg_tensor_desc zd = {.dtype = xd.dtype, .rank = 1, .dims = {1}};
  dg_tensor m = dg_graph_constant(t->g, NULL, &md, mask, 0);
  dg_tensor z = dg_graph_constant(t->g, NULL, &zd, zero, 0);
  free(mask);
  tr_output(t, 0, dg_graph_where(t->g, t->n->name, m, x, z));
}

/* ---- Einsum ---- */

/* One operand of an equation: its letters, one per axis. */
typedef struct ein_term {
  char l[DG_MAX_RANK + 1];
  int n;
} ein_term;

static int ein_find(const ein_term *e, char c) {
  for (int k = 0; k < e->n; k++)
    if (e->l[k] == c)
      return k;
  return -1;
}

/* Parses "ab,bc->ac" (spaces ignored; without "->", the output is the
 * letters used once, in alphabetical order). Ellipses and a letter
 * repeated within a term (a diagonal) are refused. */
static bool ein_parse(tr *t, const char *eq, ein_term *in, int *nin,
                      ein_term *out) {
  int n = 0, count[128] = {0};
  bool arrow = false;
  ein_term *cur = &in[0];
  memset(in, 0, sizeof *in * 2);
  memset(out, 0, sizeof *out);
  for (const char *p = eq; *p; p++) {
    char c = *p;
    if (c == ' ')
      continue;
    if (c == '.') {
      tr_fail(t, DG_ERROR_UNSUPPORTED, "equation",
              "Einsum with an ellipsis is not supported");
      return false;
    }
    if (c == ',' && !arrow) {
      if (++n >= 2) {
        tr_fail(t, DG_ERROR_UNSUPPORTED, "equation",
                "Einsum of more than two operands is not supported");
        return false;
      }
      cur = &in[n];
      continue;
    }
    if (c == '-' && p[1] == '>' && !arrow) {
      arrow = true;
      cur = out;
      p++;
      continue;
    }
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "equation",
              "Einsum equation '%s' has '%c'", eq, c);
      return false;
    }
    if (ein_find(cur, c) >= 0) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, "equation",
              "Einsum letter '%c' repeated in one term (a diagonal) is not "
              "supported",
              c);
      return false;
    }
    if (cur->n == DG_MAX_RANK) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, "equation",
              "Einsum term of more than %d letters", DG_MAX_RANK);
      return false;
    }
    cur->l[cur->n++] = c;
    if (!arrow)
      count[(int)c]++;
  }
  *nin = n + 1;
  if (!arrow)
    for (int c = 0; c < 128; c++)
      if (count[c] == 1 && out->n < DG_MAX_RANK)
        out->l[out->n++] = (char)c;
  for (int k = 0; k < out->n; k++)
    if (!count[(int)out->l[k]]) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "equation",
              "Einsum output letter '%c' is in no input", out->l[k]);
      return false;
    }
  return true;
}

/* x (letters e, dims d) summed over the letters in neither keep1 nor
 * keep2 (keepdims 0); e and d updated. */
static dg_tensor ein_sum_out(tr *t, dg_tensor x, ein_term *e, dg_tensor_desc *d,
                             const ein_term *keep1, const ein_term *keep2) {
  int32_t ax[DG_MAX_RANK];
  int n = 0;
  ein_term kept = {{0}, 0};
  for (int k = 0; k < e->n; k++) {
    char c = e->l[k];
    if (ein_find(keep1, c) < 0 && (!keep2 || ein_find(keep2, c) < 0))
      ax[n++] = k;
    else
      kept.l[kept.n++] = c;
  }
  if (!n)
    return x;
  x = dg_graph_reduce(t->g, NULL, DG_REDUCE_SUM, x, ax, n, 0);
  *e = kept;
  tr_desc(t, x, d);
  return x;
}

/* x (letters from) with its axes in the order of the letters to. */
static dg_tensor ein_permute(tr *t, dg_tensor x, const ein_term *from,
                             const ein_term *to, const char *name) {
  int32_t perm[DG_MAX_RANK];
  bool same = true;
  for (int k = 0; k < to->n; k++) {
    perm[k] = ein_find(from, to->l[k]);
    same = same && perm[k] == k;
  }
  if (same && !name)
    return x;
  return dg_graph_transpose(t->g, name, x, perm);
}

static int64_t ein_dims(const ein_term *e, const dg_tensor_desc *d,
                        const ein_term *of, int64_t *out, int *r) {
  int64_t n = 1;
  for (int k = 0; k < of->n; k++) {
    int64_t v = d->dims[ein_find(e, of->l[k])];
    n *= v;
    if (out)
      out[(*r)++] = v;
  }
  return n;
}

/* One operand: sums and a transpose. Two: the batch letters (in both and
 * the output), the contracted ones (in both, not the output) and each
 * side's own, as one batched matmul [B, L, K] x [B, K, R], reshaped and
 * transposed to the output's order. */
void tr_op_einsum(tr *t) {
  char eq[256] = "";
  if (!t->n->attr_string(t->n, "equation", eq, sizeof eq) || !eq[0]) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "equation",
            "Einsum needs an equation");
    return;
  }
  ein_term in[2], out;
  int nin;
  if (!ein_parse(t, eq, in, &nin, &out))
    return;
  if (nin != t->n->n_inputs) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "equation",
            "equation '%s' has %d terms for %d inputs", eq, nin,
            t->n->n_inputs);
    return;
  }
  dg_tensor x[2];
  dg_tensor_desc d[2];
  for (int i = 0; i < nin; i++) {
    x[i] = tr_input(t, i, NULL, false);
    if (!tr_need_float(t, x[i], "Inputs") || !tr_desc(t, x[i], &d[i]))
      return;
    if (d[i].rank != in[i].n) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "equation",
              "term %d has %d letters for an input of rank %d", i, in[i].n,
              d[i].rank);
      return;
    }
  }
  if (nin == 1) {
    x[0] = ein_sum_out(t, x[0], &in[0], &d[0], &out, NULL);
    tr_output(t, 0, ein_permute(t, x[0], &in[0], &out, t->n->name));
    return;
  }
  for (int i = 0; i < 2; i++)
    x[i] = ein_sum_out(t, x[i], &in[i], &d[i], &out, &in[1 - i]);
  if (tr_check(t))
    return;
  ein_term batch = {{0}, 0}, con = {{0}, 0}, left = {{0}, 0}, right = {{0}, 0};
  for (int k = 0; k < in[0].n; k++) {
    char c = in[0].l[k];
    int j = ein_find(&in[1], c);
    if (j >= 0 && d[0].dims[k] != d[1].dims[j]) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "equation",
              "letter '%c' is %lld in one input and %lld in the other", c,
              (long long)d[0].dims[k], (long long)d[1].dims[j]);
      return;
    }
    ein_term *to = j < 0 ? &left : ein_find(&out, c) >= 0 ? &batch : &con;
    to->l[to->n++] = c;
  }
  for (int k = 0; k < in[1].n; k++)
    if (ein_find(&in[0], in[1].l[k]) < 0)
      right.l[right.n++] = in[1].l[k];
  ein_term a_order = batch, b_order = batch, y_order = batch;
  memcpy(a_order.l + a_order.n, left.l, (size_t)left.n);
  a_order.n += left.n;
  memcpy(a_order.l + a_order.n, con.l, (size_t)con.n);
  a_order.n += con.n;
  memcpy(b_order.l + b_order.n, con.l, (size_t)con.n);
  b_order.n += con.n;
  memcpy(b_order.l + b_order.n, right.l, (size_t)right.n);
  b_order.n += right.n;
  memcpy(y_order.l + y_order.n, left.l, (size_t)left.n);
  y_order.n += left.n;
  memcpy(y_order.l + y_order.n, right.l, (size_t)right.n);
  y_order.n += right.n;
  int64_t nb = ein_dims(&in[0], &d[0], &batch, NULL, NULL),
          nl = ein_dims(&in[0], &d[0], &left, NULL, NULL),
          nk = ein_dims(&in[0], &d[0], &con, NULL, NULL),
          nr = ein_dims(&in[1], &d[1], &right, NULL, NULL);
  int64_t ad[3] = {nb, nl, nk}, bd[3] = {nb, nk, nr}, yd[DG_MAX_RANK];
  int r = 0;
  ein_dims(&in[0], &d[0], &batch, yd, &r);
  ein_dims(&in[0], &d[0], &left, yd, &r);
  ein_dims(&in[1], &d[1], &right, yd, &r);
  dg_tensor a = dg_graph_reshape(
      t->g, NULL, ein_permute(t, x[0], &in[0], &a_order, NULL), 3, ad);
  dg_tensor b = dg_graph_reshape(
      t->g, NULL, ein_permute(t, x[1], &in[1], &b_order, NULL), 3, bd);
  dg_tensor y =
      dg_graph_reshape(t->g, NULL, dg_graph_matmul(t->g, NULL, a, b), r, yd);
  tr_output(t, 0, ein_permute(t, y, &y_order, &out, t->n->name));
}
