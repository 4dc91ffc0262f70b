/* Quantisation: scale and zero point inputs as quant params, the
 * QuantizeLinear / DequantizeLinear / QLinear* handlers, and the folding
 * of DequantizeLinear -> Conv / MatMul / Gemm (-> Relu) -> QuantizeLinear
 * into one int8 op. A DequantizeLinear is not translated where it stands:
 * its output waits, and becomes a float tensor only when a node outside a
 * folded chain (or an output) reads it (tr_input). */
#include "onnx_tr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Zero points are integers: the float types are not theirs. */
static dg_dtype zero_dtype(int elem) {
  dg_dtype d = tr_dtype(elem);
  return d == DG_DTYPE_I8 || d == DG_DTYPE_U8 || d == DG_DTYPE_I32
             ? d
             : DG_DTYPE_INVALID; /* the builder names it */
}

bool tr_read_quant(tr *t, int si, int zi, int64_t axis, dg_quant_params *q,
                   tr_quant *buf, dg_dtype *zero_type) {
  dg_onnx_value sc, zc;
  bool has_z = zi >= 0 && tr_has_input(t, zi);
  /* Constant nodes are values before the walk (pass_constants): PyTorch's
   * own QDQ export places a QuantizeLinear's scale and zero point after
   * the Conv a fold starts at. */
  if (!tr_const(t, si, &sc) || (has_z && !tr_const(t, zi, &zc))) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "scale",
            "scales and zero points must be constant initializers");
    return false;
  }
  /* ONNX: a scalar scale and zero point, or 1-D ones along axis; blocked
   * quantisation (opset 21's block_size, x's rank) is not taken. */
  if (sc.rank > 1 || (has_z && zc.rank > 1)) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "scale",
            "'%s' has rank %d: a scale and its zero point must be a scalar "
            "or 1-D (per axis); blocked quantisation is not supported",
            sc.rank > 1 ? t->n->inputs[si] : t->n->inputs[zi],
            sc.rank > 1 ? sc.rank : zc.rank);
    return false;
  }
  /* The zero point of an integer input (DequantizeLinear's x, QLinear*'s
   * a, b, x and w, input si - 1 each) is of the input's own type; where
   * zero_type is asked for, the zero point gives an output its type. */
  dg_onnx_value xv;
  if (has_z && !zero_type && si > 0) {
    tr_input_type(t, si - 1, &xv);
    dg_dtype xt = tr_dtype(xv.elem), zt = tr_dtype(zc.elem);
    if (xt != DG_DTYPE_INVALID && xt != zt) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "zero_point",
              "'%s' is %s but its zero point '%s' is %s: ONNX gives them one "
              "type",
              t->n->inputs[si - 1], dg_dtype_name(xt), t->n->inputs[zi],
              zt ? dg_dtype_name(zt) : "of another type");
      return false;
    }
  }
  int ns = 0, nz = 0;
  int64_t *z64 = malloc(sizeof(int64_t) * TR_MAX_CHANNELS);
  bool ok = z64 != NULL;
  if (!ok)
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
  ok = ok && tr_const_floats(t, si, buf->scales, TR_MAX_CHANNELS, &ns);
  ok = ok && (!has_z || tr_const_ints(t, zi, z64, TR_MAX_CHANNELS, &nz));
  /* ONNX gives the zero point the scale's shape: no broadcasting. */
  if (ok && has_z && nz != ns) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "zero_point",
            "%d scales but %d zero points", ns, nz);
    ok = false;
  }
  if (ok && ns < 1) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "scale", "no scale");
    ok = false;
  }
  if (ok) {
    if (zero_type)
      *zero_type = has_z ? zero_dtype(zc.elem) : DG_DTYPE_U8;
    memset(q, 0, sizeof *q);
    if (ns == 1) {
      q->scale = buf->scales[0];
      q->zero_point = has_z ? (int32_t)z64[0] : 0;
    } else {
      for (int i = 0; i < ns; i++)
        buf->zeros[i] = has_z ? (int32_t)z64[i] : 0;
      q->axis = (int32_t)axis;
      q->channel_count = ns;
      q->channel_scales = buf->scales;
      q->channel_zero_points = buf->zeros;
    }
  }
  free(z64);
  return ok;
}

/* The rank of input i, known before it is a tensor (constant or typed). */
static int input_rank(tr *t, int i) {
  dg_onnx_value c;
  if (tr_const(t, i, &c))
    return c.rank;
  if (t->st != DG_OK)
    return -1;
  tr_input_type(t, i, &c);
  return c.rank;
}

void tr_op_quantize(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  dg_quant_params q;
  dg_dtype zt;
  if (!tr_need_float(t, x, "x") || !tr_desc(t, x, &d))
    return;
  int64_t axis = tr_attr_int(t, "axis", 1);
  if (axis < 0)
    axis += d.rank;
  if (tr_read_quant(t, 1, 2, axis, &q, &t->q[0], &zt))
    tr_output(t, 0, dg_graph_quantize(t->g, t->n->name, x, zt, &q));
}

/* The walk reaches a DequantizeLinear only when the marking pass left it
 * (onnx_translate.c's pass_mark_dq): without its inputs, said here. */
void tr_op_dequantize(tr *t) {
  if (t->n->n_inputs < 2 || !tr_has_input(t, 0)) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "input",
            "DequantizeLinear needs x and x_scale");
    return;
  }
  tr_dq_emit(t);
}

void tr_dq_emit(tr *t) {
  dg_quant_params q;
  int64_t axis = tr_attr_int(t, "axis", 1);
  if (axis < 0) {
    int rank = input_rank(t, 0); /* x is no tensor yet */
    if (rank > 0)
      axis += rank;
  }
  if (!tr_read_quant(t, 1, 2, axis, &q, &t->q[0], NULL))
    return;
  dg_tensor x = tr_input(t, 0, &q, false);
  tr_output(t, 0, dg_graph_dequantize(t->g, t->n->name, x));
}

void tr_op_qlinear_conv(tr *t) {
  dg_quant_params xq, wq, yq;
  dg_dtype yt;
  dg_conv2d_params p;
  if (!tr_read_quant(t, 1, 2, 0, &xq, &t->q[0], NULL) ||
      !tr_read_quant(t, 4, 5, 0, &wq, &t->q[1], NULL) ||
      !tr_read_quant(t, 6, 7, 0, &yq, &t->q[2], &yt))
    return;
  dg_tensor x = tr_input(t, 0, &xq, false);
  if (!x.id || !tr_conv_params(t, x, &p))
    return;
  dg_tensor w = tr_input(t, 3, &wq, false);
  dg_tensor b = tr_input(t, 8, NULL, true);
  if (!tr_conv_kernel_shape(t, w))
    return;
  tr_output(t, 0, dg_graph_qconv2d(t->g, t->n->name, x, w, b, &p, yt, &yq));
}

void tr_op_qlinear_matmul(tr *t) {
  dg_quant_params aq, bq, yq;
  dg_dtype yt;
  /* Per-column b scales run along b's last axis. */
  int rank = tr_has_input(t, 3) ? input_rank(t, 3) : -1;
  int64_t baxis = rank > 0 ? rank - 1 : 1;
  if (!tr_read_quant(t, 1, 2, 0, &aq, &t->q[0], NULL) ||
      !tr_read_quant(t, 4, 5, baxis, &bq, &t->q[1], NULL) ||
      !tr_read_quant(t, 6, 7, 0, &yq, &t->q[2], &yt))
    return;
  dg_tensor a = tr_input(t, 0, &aq, false);
  dg_tensor b = tr_input(t, 3, &bq, false);
  tr_output(t, 0, dg_graph_qmatmul(t->g, t->n->name, a, b, yt, &yq));
}

/* ---- folding ---- */

/* The pending DequantizeLinear behind the current node's input i, or -1. */
int tr_dq_of(tr *t, int i) {
  tr_value *v = tr_has_input(t, i) ? tr_value_find(t, t->n->inputs[i]) : NULL;
  return v && !v->t.id ? v->dq_node : -1;
}

/* The one node reading name, after the current one, or -1 (more
 * readers, or one outside the list). */
int tr_sole_consumer(tr *t, const char *name) {
  tr_value *v = tr_value_find(t, name);
  if (!v || v->readers != 1 || t->src->read_outside(t->src->self, name))
    return -1;
  for (int k = t->cur + 1; k < t->src->node_count; k++)
    for (int i = 0; i < t->nodes[k].n_inputs; i++)
      if (!strcmp(t->nodes[k].inputs[i], name))
        return k;
  return -1;
}

/* Whether node n would pass its row's opset and attribute checks: a chain
 * holding one that would not is not folded, and that node declines with
 * its own reason when translated. */
bool tr_row_ok(const dg_onnx_node *n) {
  const tr_op *row = tr_op_find(n->op_type);
  char why[256];
  if (!row || !tr_op_opset_ok(row, n->opset, why, sizeof why))
    return false;
  for (int i = 0; i < n->n_attrs; i++) {
    bool known = false;
    for (int k = 0; row->attrs && row->attrs[k] && !known; k++)
      known = n->attr_names[i] && !strcmp(n->attr_names[i], row->attrs[k]);
    if (!known)
      return false;
  }
  return true;
}

/* Makes node k current (for reading its inputs and for the diagnostic). */
void tr_at(tr *t, int k) {
  t->cur = k;
  t->n = &t->nodes[k];
}

/* The fused activation node k is: Relu, or a Clip to [0, 6] (relu6) or
 * [0, inf) with constant bounds; NONE for anything else. */
static dg_activation activation_of(tr *t, int k) {
  if (tr_is_op(&t->nodes[k], "Relu"))
    return DG_ACTIVATION_RELU;
  if (!tr_is_op(&t->nodes[k], "Clip"))
    return DG_ACTIVATION_NONE;
  int self = t->cur;
  tr_at(t, k);
  float b[2] = {tr_attr_float(t, "min", -INFINITY),
                tr_attr_float(t, "max", INFINITY)};
  bool ok = true;
  for (int i = 1; i <= 2 && ok; i++) {
    dg_onnx_value c;
    int n = 0;
    if (tr_has_input(t, i))
      ok = tr_const(t, i, &c) && c.rank <= 1 &&
           tr_const_floats(t, i, &b[i - 1], 1, &n) && n == 1;
  }
  tr_at(t, self);
  if (!ok || b[0] != 0.0f)
    return DG_ACTIVATION_NONE;
  return b[1] == 6.0f       ? DG_ACTIVATION_RELU6
         : b[1] == INFINITY ? DG_ACTIVATION_RELU
                            : DG_ACTIVATION_NONE;
}

bool tr_try_fold(tr *t) {
  const dg_onnx_node *n = t->n;
  bool conv = tr_is_op(n, "Conv"), mm = tr_is_op(n, "MatMul"),
       gemm = tr_is_op(n, "Gemm");
  if (!conv && !mm && !gemm)
    return tr_try_fold_int8(t);
  int self = t->cur;
  int dx = tr_dq_of(t, 0), dw = tr_dq_of(t, 1);
  int db = tr_has_input(t, 2) && !mm ? tr_dq_of(t, 2) : -1;
  if (dx < 0 || dw < 0 || (tr_has_input(t, 2) && !mm && db < 0))
    return false;
  if (gemm &&
      (tr_attr_int(t, "transA", 0) || !tr_attr_int(t, "transB", 0) ||
       tr_attr_float(t, "alpha", 1) != 1 || tr_attr_float(t, "beta", 1) != 1))
    return false;
  int next = tr_sole_consumer(t, n->outputs[0]);
  dg_activation act = DG_ACTIVATION_NONE;
  int relu = next >= 0 && t->nodes[next].n_outputs >= 1 &&
                     (act = activation_of(t, next)) != DG_ACTIVATION_NONE
                 ? next
                 : -1;
  int q = relu >= 0 ? tr_sole_consumer(t, t->nodes[relu].outputs[0]) : next;
  if (q < 0 || !tr_is_op(&t->nodes[q], "QuantizeLinear") ||
      t->nodes[q].n_inputs < 2 || t->nodes[q].n_outputs < 1)
    return false;
  if (mm && relu >= 0) /* qmatmul has no activation */
    return false;
  int chain[] = {self, dx, dw, db, relu, q};
  for (size_t k = 0; k < sizeof chain / sizeof chain[0]; k++)
    if (chain[k] >= 0 && !tr_row_ok(&t->nodes[chain[k]]))
      return false;
  dg_onnx_value wc;
  tr_at(t, dw);
  bool w_const = tr_const(t, 0, &wc);
  tr_at(t, self);
  if (!w_const) /* weights not constant: no folding */
    return t->st != DG_OK;
  /* Every quantisation parameter is read at its DQ/Q node. */
  dg_quant_params xq, wq, yq;
  dg_dtype yt;
  tr_at(t, dx);
  bool ok = tr_read_quant(t, 1, 2, 0, &xq, &t->q[0], NULL);
  tr_at(t, dw); /* per-channel weights: the output-channel axis */
  ok = ok && tr_read_quant(t, 1, 2, mm ? 1 : 0, &wq, &t->q[1], NULL);
  tr_at(t, q);
  ok = ok && tr_read_quant(t, 1, 2, 0, &yq, &t->q[2], &yt);
  tr_at(t, self);
  if (!ok)
    return true; /* failure recorded */
  /* The int8 ops take per-tensor activations only: per-channel ones stay
   * a float op between a DequantizeLinear and a QuantizeLinear, which
   * both take (the EP would otherwise run the chain's nodes one by one
   * where the importer refused the model). */
  if (yq.channel_count || xq.channel_count)
    return false;
  tr_at(t, dx);
  dg_tensor x = tr_input(t, 0, &xq, false);
  tr_at(t, dw);
  dg_tensor w = tr_input(t, 0, &wq, false);
  dg_tensor b = DG_TENSOR_NONE;
  if (db >= 0) {
    tr_at(t, db);
    b = tr_input(t, 0, NULL, false);
  }
  tr_at(t, self);
  if (t->st != DG_OK)
    return true;
  dg_tensor y;
  if (conv) {
    dg_conv2d_params p;
    if (!tr_conv_params(t, x, &p) || !tr_conv_kernel_shape(t, w))
      return true;
    p.activation = act;
    y = dg_graph_qconv2d(t->g, n->name, x, w, b, &p, yt, &yq);
  } else if (gemm) {
    y = dg_graph_qfully_connected(t->g, n->name, x, w, b, act, yt, &yq);
  } else {
    y = dg_graph_qmatmul(t->g, n->name, x, w, yt, &yq);
  }
  if (tr_check(t))
    return true;
  if (relu >= 0)
    t->done[relu] = true;
  t->done[q] = true;
  /* The result is the QuantizeLinear's output. */
  tr_at(t, q);
  tr_output(t, 0, y);
  tr_at(t, self);
  return true;
}
