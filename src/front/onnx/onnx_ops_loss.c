/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss as a gather of
 * the elements the constant target picks, weighted and reduced. */
#include "onnx_decomp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
              "target must be a constant (the tr_elements it picks are found "
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
  int64_t total = tr_elements(xd);
  if (total > INT32_MAX) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "input",
            "input of %lld tr_elements: offsets past int32", (long long)total);
    return false;
  }
  int64_t n = xd->dims[0], cls = xd->dims[1], inner = total / (n * cls);
  if (n * inner > DECOMP_MAX_CONST) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "target",
            "target of %lld tr_elements (at most %lld)", (long long)(n * inner),
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
               : dg_f16_to_f32(((const uint16_t *)c->data)[k]);
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
  dg_tensor ot = dg_graph_constant(
      t->g, tr_sub_name(t, nb, sizeof nb, "offsets"), &od, off, 0);
  dg_tensor wtt = tr_float_constant(t, tr_sub_name(t, nb, sizeof nb, "weights"),
                                    xd->dtype, c.rank, c.dims, wt);
  free(off);
  free(wt);
  int64_t total = tr_elements(xd);
  dg_tensor xf = dg_graph_reshape(t->g, NULL, x, 1, &total);
  dg_tensor p =
      tr_bin(t, DG_BINARY_MUL, dg_graph_gather(t->g, NULL, xf, ot, 0), wtt);
  dg_tensor loss;
  if (red == RED_NONE)
    loss = dg_graph_unary(t->g, t->n->name, DG_UNARY_NEG, p, 0, 0);
  else {
    loss = dg_graph_reduce(t->g, NULL, DG_REDUCE_SUM, p, NULL, 0, 0);
    if (red == RED_SUM)
      loss = dg_graph_unary(t->g, t->n->name, DG_UNARY_NEG, loss, 0, 0);
    else /* sum / -(sum of the weights taken): ONNX's weighted mean */
      loss = dg_graph_binary(t->g, t->n->name, DG_BINARY_DIV, loss,
                             tr_scalar_constant(t, xd->dtype, (float)-wsum));
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
  dg_tensor lp = dg_graph_log_softmax(
      t->g, tr_sub_name(t, nb, sizeof nb, "log_prob"), x, 1);
  if (tr_check(t))
    return;
  nll(t, lp, &d);
  if (t->st == DG_OK && t->n->n_outputs > 1 && t->n->outputs[1][0])
    tr_output(t, 1, lp);
}
