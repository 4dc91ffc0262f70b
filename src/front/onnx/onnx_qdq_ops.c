/* The int8 folds of the ops QDQ models put between their convolutions:
 * a node whose data inputs are all pending DequantizeLinears and whose
 * one reader is a QuantizeLinear becomes one int8 op, so the model stays
 * int8 from its first QuantizeLinear to its last DequantizeLinear:
 *
 *   Add, Sub, Mul (-> Relu)    qbinary (and a relu lookup)
 *   AveragePool, GlobalAveragePool   qavg_pool2d
 *   a unary function (Sigmoid, HardSwish, HardSigmoid, Relu, Tanh, ...)
 *                              qunary: a lookup table
 *   Concat                     qconcat
 *   MaxPool and data movement  the op itself on the int8 input (the node
 *                              rewritten to read it), then a requantize
 *                              when the QuantizeLinear's parameters are
 *                              not the input's
 *
 * docs/numerics.md defines their results. A chain with a per-channel
 * activation, another output type, or a node that would fail its row's
 * checks is not folded: its nodes run in float between the
 * DequantizeLinear and the QuantizeLinear, as before. */
#include "onnx_tr.h"

#include <string.h>

enum fold_kind { K_NONE, K_BINARY, K_AVG, K_GLOBAL, K_UNARY, K_CONCAT, K_PASS };

/* Ops whose handlers take an int8 input as it is and keep its
 * quantisation: they only move or select elements. */
static const char *const pass_ops[] = {
    "MaxPool",  "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze",
    "Identity", "Dropout", "Slice",   "Expand",    "Gather",  NULL};

#define MAX_FOLD_INPUTS 64 /* a Concat with more runs in float */

static enum fold_kind kind_of(const dg_onnx_node *n) {
  if (tr_is_op(n, "Add") || tr_is_op(n, "Sub") || tr_is_op(n, "Mul"))
    return n->n_attrs ? K_NONE : K_BINARY; /* legacy broadcast attributes */
  if (tr_is_op(n, "AveragePool"))
    return K_AVG;
  if (tr_is_op(n, "GlobalAveragePool"))
    return K_GLOBAL;
  if (tr_is_op(n, "Concat"))
    return K_CONCAT;
  if (tr_is_unary_fn(n))
    return K_UNARY;
  for (int i = 0; pass_ops[i]; i++)
    if (tr_is_op(n, pass_ops[i]))
      return K_PASS;
  return K_NONE;
}

/* The per-tensor parameters of the pending DequantizeLinear dq, or false
 * with *per_channel set (nothing recorded) or a failure recorded. */
static bool dq_quant(tr *t, int dq, dg_quant_params *q, bool *per_channel) {
  int self = t->cur;
  tr_at(t, dq);
  bool ok = tr_read_quant(t, 1, 2, 0, q, &t->q[0], NULL);
  tr_at(t, self);
  *per_channel = ok && q->channel_count != 0;
  return ok && !*per_channel;
}

/* The int8 tensor the pending DequantizeLinear dq reads. */
static dg_tensor dq_input(tr *t, int dq, const dg_quant_params *q) {
  int self = t->cur;
  tr_at(t, dq);
  dg_tensor x = tr_input(t, 0, q, false);
  tr_at(t, self);
  return x;
}

/* The fold's int8 op for node kind k; DG_TENSOR_NONE with a failure
 * recorded, or with *decline set when the float path should run. */
static dg_tensor build(tr *t, enum fold_kind k, const int *dq,
                       const dg_quant_params *xq, int nin, int relu, int q,
                       dg_dtype yt, const dg_quant_params *yq, bool *decline) {
  const dg_onnx_node *n = t->n;
  dg_tensor x = dq_input(t, dq[0], &xq[0]), y = DG_TENSOR_NONE;
  dg_tensor_desc d;
  if (!x.id || !tr_desc(t, x, &d))
    return DG_TENSOR_NONE;
  switch (k) {
  case K_BINARY: {
    dg_binary_fn fn = tr_is_op(n, "Add")   ? DG_BINARY_ADD
                      : tr_is_op(n, "Sub") ? DG_BINARY_SUB
                                           : DG_BINARY_MUL;
    dg_tensor b = dq_input(t, dq[1], &xq[1]);
    if (!b.id)
      return DG_TENSOR_NONE;
    y = dg_graph_qbinary(t->g, n->name, fn, x, b, yt, yq);
    /* Relu in the quantised domain: max(y, zy), exactly, as a lookup. */
    if (relu >= 0 && y.id)
      y = dg_graph_qunary(t->g, t->nodes[relu].name, DG_UNARY_RELU, y, 0, 0, yt,
                          yq);
    return y;
  }
  case K_AVG: {
    dg_pool2d_params p;
    if (d.rank != 4) { /* 1-D windows stay float */
      *decline = true;
      return DG_TENSOR_NONE;
    }
    if (!tr_pool_params(t, &d, &p))
      return DG_TENSOR_NONE;
    p.count_include_pad = (int32_t)tr_attr_int(t, "count_include_pad", 0);
    return dg_graph_qavg_pool2d(t->g, n->name, x, &p, yt, yq);
  }
  case K_GLOBAL:
    if (d.rank != 4) {
      *decline = true;
      return DG_TENSOR_NONE;
    }
    return dg_graph_qglobal_avg_pool(t->g, n->name, x, yt, yq);
  case K_UNARY: {
    dg_unary_fn fn;
    float a, b;
    if (!tr_unary_fn(t, &fn, &a, &b))
      return DG_TENSOR_NONE;
    return dg_graph_qunary(t->g, n->name, fn, x, a, b, yt, yq);
  }
  case K_CONCAT: {
    dg_tensor in[MAX_FOLD_INPUTS];
    in[0] = x;
    for (int i = 1; i < nin; i++)
      if (!(in[i] = dq_input(t, dq[i], &xq[i])).id)
        return DG_TENSOR_NONE;
    int64_t axis = tr_attr_int(t, "axis", 0);
    return dg_graph_qconcat(t->g, n->name, in, nin, (int32_t)axis, yt, yq);
  }
  case K_PASS: {
    /* The op's own handler on the node rewritten to read the int8 tensor
     * behind its pending DequantizeLinear (x, built above with its
     * parameters) in place of the float value; its output is marked as
     * int8 where the model declares float. */
    const tr_op *row = tr_op_find(n->op_type);
    tr_value *v = tr_value_find(t, n->outputs[0]);
    const char *ins[MAX_FOLD_INPUTS];
    if (!v || n->n_inputs > MAX_FOLD_INPUTS) {
      *decline = true;
      return DG_TENSOR_NONE;
    }
    for (int i = 0; i < n->n_inputs; i++)
      ins[i] = i ? n->inputs[i] : t->nodes[dq[0]].inputs[0];
    dg_onnx_node rewritten = *n;
    rewritten.inputs = ins;
    v->int8_fold = true;
    t->n = &rewritten;
    row->run(t);
    t->n = n;
    if (t->st != DG_OK || !v->t.id)
      return DG_TENSOR_NONE;
    y = v->t;
    if (dg_graph_tensor_desc(t->g, y, &d) != DG_OK)
      return DG_TENSOR_NONE;
    if (d.dtype == yt && !d.quant.channel_count && d.quant.scale == yq->scale &&
        d.quant.zero_point == yq->zero_point)
      return y;
    return dg_graph_requantize(t->g, t->nodes[q].name, y, yt, yq);
  }
  default:
    *decline = true;
    return DG_TENSOR_NONE;
  }
}

bool tr_try_fold_int8(tr *t) {
  const dg_onnx_node *n = t->n;
  enum fold_kind k = kind_of(n);
  if (k == K_NONE || n->n_outputs < 1)
    return false;
  int nin = k == K_BINARY ? 2 : k == K_CONCAT ? n->n_inputs : 1;
  if (nin < 1 || nin > MAX_FOLD_INPUTS || n->n_inputs < nin)
    return false;
  int dq[MAX_FOLD_INPUTS];
  for (int i = 0; i < nin; i++)
    if ((dq[i] = tr_dq_of(t, i)) < 0 || !tr_row_ok(&t->nodes[dq[i]]))
      return false;
  int self = t->cur, relu = -1;
  int q = tr_sole_consumer(t, n->outputs[0]);
  if (k == K_BINARY && q >= 0 && tr_is_op(&t->nodes[q], "Relu") &&
      t->nodes[q].n_outputs >= 1 && tr_row_ok(&t->nodes[q])) {
    relu = q;
    q = tr_sole_consumer(t, t->nodes[relu].outputs[0]);
  }
  if (q < 0 || !tr_is_op(&t->nodes[q], "QuantizeLinear") ||
      t->nodes[q].n_inputs < 2 || t->nodes[q].n_outputs < 1 || !tr_row_ok(n) ||
      !tr_row_ok(&t->nodes[q]))
    return false;
  /* Every parameter is read at its own node; per-channel activations
   * stay float (the int8 ops are per-tensor). */
  dg_quant_params yq, xq[MAX_FOLD_INPUTS];
  dg_dtype yt;
  bool per_channel = false;
  tr_at(t, q);
  bool ok = tr_read_quant(t, 1, 2, 0, &yq, &t->q[1], &yt);
  tr_at(t, self);
  if (!ok)
    return true; /* failure recorded */
  if (yq.channel_count || !is_int8_dtype(yt))
    return false;
  for (int i = 0; i < nin; i++)
    if (!dq_quant(t, dq[i], &xq[i], &per_channel))
      return !per_channel;
  bool decline = false;
  dg_tensor y = build(t, k, dq, xq, nin, relu, q, yt, &yq, &decline);
  if (decline && t->st == DG_OK)
    return false;
  if (tr_check(t))
    return true;
  if (!y.id) {
    if (t->st == DG_OK)
      tr_fail(t, DG_ERROR_UNSUPPORTED, "op_type", "int8 %s gave no tensor",
              n->op_type);
    return true;
  }
  if (relu >= 0)
    t->done[relu] = true;
  t->done[q] = true;
  tr_at(t, q); /* the result is the QuantizeLinear's output */
  tr_output(t, 0, y);
  tr_at(t, self);
  return true;
}
