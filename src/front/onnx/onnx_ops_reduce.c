/* ONNX ReduceSum ... ReduceLogSumExp, LogSoftmax and LayerNormalization
 * as dg_graph_reduce, dg_graph_log_softmax and dg_graph_layer_norm.
 * (ArgMax and ArgMin are not here: their int64 output is a dtype the
 * library lacks.) */
#include "onnx_tr.h"

#include <stdint.h>
#include <string.h>

/* The function of each ReduceX op. */
static const struct {
  const char *op;
  dg_reduce_fn fn;
} reduce_ops[] = {
    {"ReduceSum", DG_REDUCE_SUM},
    {"ReduceMean", DG_REDUCE_MEAN},
    {"ReduceMax", DG_REDUCE_MAX},
    {"ReduceMin", DG_REDUCE_MIN},
    {"ReduceProd", DG_REDUCE_PROD},
    {"ReduceL1", DG_REDUCE_L1},
    {"ReduceL2", DG_REDUCE_L2},
    {"ReduceSumSquare", DG_REDUCE_SUM_SQUARE},
    {"ReduceLogSum", DG_REDUCE_LOG_SUM},
    {"ReduceLogSumExp", DG_REDUCE_LOG_SUM_EXP},
};

/* Axes became an input (optional, here a constant) at opset 18, ReduceSum's
 * at 13, with noop_with_empty_axes; before, the attribute axes. */
void tr_op_reduce(tr *t) {
  dg_reduce_fn fn = DG_REDUCE_INVALID;
  for (size_t i = 0; i < sizeof reduce_ops / sizeof *reduce_ops; i++)
    if (tr_is_op(t->n, reduce_ops[i].op))
      fn = reduce_ops[i].fn;
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (!tr_need_float(t, x, "data") || !tr_desc(t, x, &d))
    return;
  bool axes_input = t->n->opset >= (fn == DG_REDUCE_SUM ? 13 : 18);
  int64_t axes[DG_MAX_RANK + 1];
  int count = 0;
  if (!axes_input) {
    count = tr_attr_ints(t, "axes", axes, DG_MAX_RANK + 1);
    count = count < 0 ? 0 : count; /* -1: absent, every axis */
  } else {
    if (tr_attr_ints(t, "axes", axes, DG_MAX_RANK + 1) > 0) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axes",
              "axes is an input, not an attribute, at opset %lld",
              (long long)t->n->opset);
      return;
    }
    if (tr_has_input(t, 1) &&
        !tr_const_ints(t, 1, axes, DG_MAX_RANK + 1, &count))
      return;
    if (count == 0 && tr_attr_int(t, "noop_with_empty_axes", 0)) {
      tr_output(t, 0, x); /* no axes, no reduction: the input itself */
      return;
    }
  }
  if (t->st != DG_OK)
    return;
  if (count > DG_MAX_RANK) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axes",
            "%d axes for a tensor of rank %d", count, d.rank);
    return;
  }
  int32_t ax[DG_MAX_RANK];
  for (int i = 0; i < count; i++) {
    /* The builder checks the range; here only that no cast wraps. */
    if (axes[i] < INT32_MIN || axes[i] > INT32_MAX) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axes",
              "axis %lld out of range for rank %d", (long long)axes[i], d.rank);
      return;
    }
    ax[i] = (int32_t)axes[i];
  }
  int keepdims = (int)tr_attr_int(t, "keepdims", 1);
  tr_output(t, 0,
            dg_graph_reduce(t->g, t->n->name, fn, x, ax, count, keepdims));
}

/* As Softmax: before opset 13, over the flattened [axis:] dims (axis
 * default 1), through a 2-D reshape; from 13, along axis (default -1). */
void tr_op_log_softmax(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (!tr_need_float(t, x, "input") || !tr_desc(t, x, &d))
    return;
  int64_t axis = tr_attr_int(t, "axis", t->n->opset >= 13 ? -1 : 1);
  if (axis < -d.rank || axis >= d.rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axis",
            "axis %lld out of range for rank %d", (long long)axis, d.rank);
    return;
  }
  if (axis < 0)
    axis += d.rank;
  if (t->n->opset >= 13 || axis == d.rank - 1) {
    tr_output(t, 0, dg_graph_log_softmax(t->g, t->n->name, x, (int32_t)axis));
    return;
  }
  dg_tensor f = dg_graph_flatten(t->g, NULL, x, (int32_t)axis);
  f = dg_graph_log_softmax(t->g, t->n->name, f, 1);
  tr_output(t, 0, dg_graph_reshape(t->g, NULL, f, d.rank, d.dims));
}

/* Y as dg_graph_layer_norm; the Mean and InvStdDev outputs (training),
 * when used, from reductions (onnx_ops_decomp.c). stash_type names their
 * type, so it does not change Y. */
void tr_op_layer_norm(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor s = tr_input(t, 1, NULL, false);
  dg_tensor b = tr_input(t, 2, NULL, true);
  if (!tr_need_float(t, x, "X") || !tr_need_float(t, s, "Scale") ||
      (b.id && !tr_need_float(t, b, "B")))
    return;
  int64_t axis = tr_attr_int(t, "axis", -1); /* int32: tr_attr_int checks */
  float eps = tr_attr_float(t, "epsilon", 1e-5f);
  tr_output(t, 0,
            dg_graph_layer_norm(t->g, t->n->name, x, s, b, (int32_t)axis, eps));
  if (t->st == DG_OK)
    tr_layer_norm_stats(t, x, axis, eps);
}
