/* The op table: one row per ONNX op (name, versions, attributes
 * accepted, handler), and the handlers of the simplest float ops (gemm,
 * matmul, element-wise and shape ops). Each handler maps the node's
 * attributes onto one builder call and refuses, naming the attribute,
 * what the builder cannot express. Conv and pooling are in
 * onnx_ops_conv.c, the quantisation ops in onnx_qdq.c, the other
 * families in onnx_ops_<family>.c. A new op costs a row and a handler. */
#include "onnx_tr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- conv and pooling ---- */

/* x [N,C,L] as [N,C,1,L] for a 1-D window (constant data as a new
 * constant, so that targets still see constant weights); x itself when
 * it is not of rank 3. */
dg_tensor tr_as_2d(tr *t, int i, dg_tensor x) {
  dg_tensor_desc d;
  if (!tr_desc(t, x, &d) || d.rank != 3)
    return x;
  int64_t dims[4] = {d.dims[0], d.dims[1], 1, d.dims[2]};
  dg_onnx_value c;
  if (tr_const(t, i, &c) && c.elem == DG_ONNX_FLOAT) {
    dg_tensor_desc d4 = {.dtype = DG_DTYPE_F32, .rank = 4};
    memcpy(d4.dims, dims, sizeof dims);
    return dg_graph_constant(t->g, t->n->inputs[i], &d4, c.data, 0);
  }
  return dg_graph_reshape(t->g, NULL, x, 4, dims);
}

/* A 1-D window's result [N,C,1,L'] back to [N,C,L']. */
dg_tensor tr_as_1d(tr *t, dg_tensor y, int rank) {
  dg_tensor_desc d;
  if (rank != 3 || !tr_desc(t, y, &d))
    return y;
  int64_t dims[3] = {d.dims[0], d.dims[1], d.dims[3]};
  return dg_graph_reshape(t->g, NULL, y, 3, dims);
}

/* ---- gemm, matmul ---- */

/* Input i, a constant 2-D float matrix, transposed if asked and scaled. */
static dg_tensor const_matrix(tr *t, int i, bool transpose, float mul) {
  dg_onnx_value c;
  if (!tr_const(t, i, &c) || c.elem != DG_ONNX_FLOAT || c.rank != 2) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "B", "expected a 2-D float matrix");
    return DG_TENSOR_NONE;
  }
  int64_t R = c.dims[0], C = c.dims[1];
  const float *src = c.data;
  float *dst = malloc(sizeof(float) * ((size_t)(R * C) + 1)); /* never 0 */
  if (!dst) {
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return DG_TENSOR_NONE;
  }
  for (int64_t r = 0; r < R; r++)
    for (int64_t k = 0; k < C; k++)
      dst[transpose ? k * R + r : r * C + k] = src[r * C + k] * mul;
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32,
                      .rank = 2,
                      .dims = {transpose ? C : R, transpose ? R : C}};
  dg_tensor out = dg_graph_constant(t->g, t->n->inputs[i], &d, dst, 0);
  free(dst);
  return out;
}

/* A constant float C of n values (any leading 1s) or one, as a bias. */
static dg_tensor const_bias(tr *t, int64_t n, float beta) {
  dg_onnx_value c;
  if (!tr_const(t, 2, &c) || c.elem != DG_ONNX_FLOAT ||
      (c.count != (size_t)n && c.count != 1))
    return DG_TENSOR_NONE;
  /* [.., 1, N]: one value per column. [N, 1] with M = N has N values too,
   * but one per row: that C goes through the add. */
  for (int k = 0; k + 1 < c.rank; k++)
    if (c.dims[k] != 1)
      return DG_TENSOR_NONE;
  float *b = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
  if (!b) {
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return DG_TENSOR_NONE;
  }
  for (int64_t j = 0; j < n; j++)
    b[j] = beta * ((const float *)c.data)[c.count == 1 ? 0 : j];
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {n}};
  dg_tensor out = dg_graph_constant(t->g, t->n->inputs[2], &d, b, 0);
  free(b);
  return out;
}

/* x * k for a float constant k (a one-element constant, broadcast). */
static dg_tensor scaled(tr *t, dg_tensor x, float k) {
  dg_tensor_desc xd, kd = {.rank = 1, .dims = {1}};
  if (k == 1.0f || !tr_desc(t, x, &xd))
    return x;
  kd.dtype = xd.dtype;
  if (xd.dtype == DG_DTYPE_F16) { /* the constant in x's dtype */
    dg_tensor_desc fd = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {1}};
    dg_tensor kf = dg_graph_constant(t->g, NULL, &fd, &k, 0);
    return dg_graph_binary(t->g, NULL, DG_BINARY_MUL, x,
                           dg_graph_cast(t->g, NULL, kf, DG_DTYPE_F16));
  }
  dg_tensor kt = dg_graph_constant(t->g, NULL, &kd, &k, 0);
  return dg_graph_binary(t->g, NULL, DG_BINARY_MUL, x, kt);
}

/* Gemm: alpha * A' B' + beta * C. A constant B becomes fully_connected's
 * weights (alpha folded in, and beta into a constant C of N values);
 * otherwise transposes, a matmul and the scalings are nodes. */
static void op_gemm(tr *t) {
  float alpha = tr_attr_float(t, "alpha", 1.0f);
  float beta = tr_attr_float(t, "beta", 1.0f);
  int64_t tb = tr_attr_int(t, "transB", 0);
  dg_tensor a = tr_input(t, 0, NULL, false);
  if (!a.id || !tr_need_float(t, a, "A"))
    return;
  if (tr_attr_int(t, "transA", 0))
    a = dg_graph_transpose(t->g, NULL, a, NULL);
  dg_onnx_value bc;
  bool add_c = tr_has_input(t, 2) && beta != 0.0f;
  dg_tensor y;
  if (tr_const(t, 1, &bc)) {
    /* fully_connected wants w as [N, K]: ONNX's B^T when transB = 0. */
    dg_tensor w = const_matrix(t, 1, !tb, alpha);
    dg_tensor_desc wd;
    if (!tr_desc(t, w, &wd)) {
      tr_check(t);
      return;
    }
    dg_tensor bias = add_c ? const_bias(t, wd.dims[0], beta) : DG_TENSOR_NONE;
    if (bias.id)
      add_c = false;
    y = dg_graph_fully_connected(t->g, t->n->name, a, w, bias,
                                 DG_ACTIVATION_NONE);
  } else {
    if (t->st != DG_OK)
      return;
    dg_tensor b = tr_input(t, 1, NULL, false);
    if (!b.id || !tr_need_float(t, b, "B"))
      return;
    if (tb)
      b = dg_graph_transpose(t->g, NULL, b, NULL);
    y = scaled(t, dg_graph_matmul(t->g, t->n->name, a, b), alpha);
  }
  if (add_c) {
    dg_tensor c = tr_input(t, 2, NULL, false);
    if (!c.id || !tr_need_float(t, c, "C"))
      return;
    y = dg_graph_add(t->g, NULL, y, scaled(t, c, beta));
  }
  tr_output(t, 0, y);
}

static void op_matmul(tr *t) {
  dg_tensor a = tr_input(t, 0, NULL, false);
  dg_tensor b = tr_input(t, 1, NULL, false);
  if (tr_need_float(t, a, "A") && tr_need_float(t, b, "B"))
    tr_output(t, 0, dg_graph_matmul(t->g, t->n->name, a, b));
}

/* ---- elementwise and shape ops ---- */

static void op_softmax(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (!tr_need_float(t, x, "input") || !tr_desc(t, x, &d))
    return;
  int64_t axis = tr_attr_int(t, "axis", t->n->opset >= 13 ? -1 : 1);
  if (axis < 0)
    axis += d.rank;
  if (t->n->opset >= 13 || axis == d.rank - 1) {
    tr_output(t, 0, dg_graph_softmax(t->g, t->n->name, x, (int32_t)axis));
    return;
  }
  /* Before opset 13: softmax over the flattened [axis:] dims. */
  dg_tensor f = dg_graph_flatten(t->g, NULL, x, (int32_t)axis);
  f = dg_graph_softmax(t->g, t->n->name, f, 1);
  tr_output(t, 0, dg_graph_reshape(t->g, NULL, f, d.rank, d.dims));
}

static void op_sigmoid(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  if (tr_need_float(t, x, "X"))
    tr_output(t, 0, dg_graph_sigmoid(t->g, t->n->name, x));
}

static void op_relu(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  if (tr_need_float(t, x, "X"))
    tr_output(t, 0, dg_graph_relu(t->g, t->n->name, x));
}

static void op_clip(tr *t) {
  float lo = tr_attr_float(t, "min", -INFINITY);
  float hi = tr_attr_float(t, "max", INFINITY);
  for (int i = 1; i <= 2; i++) {
    dg_onnx_value c;
    float v;
    int n = 0;
    if (!tr_has_input(t, i))
      continue;
    if (!tr_const(t, i, &c)) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, i == 1 ? "min" : "max",
              "Clip bounds must be constants");
      return;
    }
    if (!tr_const_floats(t, i, &v, 1, &n))
      return;
    if (n == 1)
      *(i == 1 ? &lo : &hi) = v;
  }
  dg_tensor x = tr_input(t, 0, NULL, false);
  if (tr_need_float(t, x, "input"))
    tr_output(t, 0, dg_graph_clip(t->g, t->n->name, x, lo, hi));
}

static void op_flatten(tr *t) {
  tr_output(t, 0,
            dg_graph_flatten(t->g, t->n->name, tr_input(t, 0, NULL, false),
                             (int32_t)tr_attr_int(t, "axis", 1)));
}

static void op_reshape(tr *t) {
  dg_onnx_value c;
  int64_t dims[DG_MAX_RANK];
  int n = 0;
  if (!tr_const(t, 1, &c)) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "shape",
            "the shape input must be a constant");
    return;
  }
  if (!tr_const_ints(t, 1, dims, DG_MAX_RANK, &n))
    return;
  if (tr_attr_int(t, "allowzero", 0))
    for (int i = 0; i < n; i++)
      if (dims[i] == 0) {
        tr_fail(t, DG_ERROR_UNSUPPORTED, "allowzero",
                "allowzero=1 with a zero dimension is not supported");
        return;
      }
  dg_tensor x = tr_input(t, 0, NULL, false);
  tr_output(t, 0, dg_graph_reshape(t->g, t->n->name, x, n, dims));
}

static void op_concat(tr *t) {
  int n = t->n->n_inputs;
  dg_tensor *ts = calloc((size_t)(n ? n : 1), sizeof *ts);
  if (!ts) {
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return;
  }
  dg_tensor_desc d0 = {0}, d = {0};
  for (int i = 0; i < n && t->st == DG_OK; i++) {
    ts[i] = tr_input(t, i, NULL, false);
    /* ONNX joins raw integers: only equal quantisations mean the same. */
    if (tr_desc(t, ts[i], &d) && i == 0)
      d0 = d;
    else if (t->st == DG_OK && is_int8_dtype(d.dtype) &&
             (d.quant.scale != d0.quant.scale ||
              d.quant.zero_point != d0.quant.zero_point))
      tr_fail(t, DG_ERROR_UNSUPPORTED, "inputs",
              "int8 inputs with different quantisations");
  }
  if (t->st == DG_OK)
    tr_output(t, 0,
              dg_graph_concat(
                  t->g, t->n->name, ts, n,
                  (int32_t)tr_attr_int(t, "axis", t->n->opset < 4 ? 1 : 0)));
  free(ts);
}

/* Identity, and Dropout at inference (its first output is its input):
 * the output names the input's tensor, no node is built. Dropout's mask,
 * if anything reads it, and training mode are declined. */
static void op_identity(tr *t) {
  if (tr_is_op(t->n, "Dropout")) {
    if (t->n->n_outputs > 1 && t->n->outputs[1][0]) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, "mask",
              "Dropout's mask output is not supported (inference only)");
      return;
    }
    int64_t v[1];
    int n = 0;
    if (tr_has_input(t, 2) &&
        (!tr_const_ints(t, 2, v, 1, &n) || n != 1 || v[0] != 0)) {
      if (t->st == DG_OK)
        tr_fail(t, DG_ERROR_UNSUPPORTED, "training_mode",
                "Dropout in training mode is not supported");
      return;
    }
    if (t->n->opset < 7 && tr_attr_int(t, "is_test", 0) == 0) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, "is_test",
              "Dropout in training mode (is_test 0) is not supported");
      return;
    }
    /* The ratio does nothing at inference, but a ratio fed at run time is
     * an input of the graph (and of the EP's fused node) all the same. */
    if (tr_has_input(t, 1))
      (void)tr_input(t, 1, NULL, true);
  }
  tr_output(t, 0, tr_input(t, 0, NULL, false));
}

/* A Constant node's tensor becomes a constant value: a tensor once a
 * node reads it. Its value is the tensor attribute 'value', or (opset 12)
 * value_int, value_ints or value_float; value_floats, value_string(s)
 * and sparse_value are refused by the attribute list. */
static void op_constant(tr *t) {
  tr_value *v = tr_value_find(t, t->n->outputs[0]);
  if (!v)
    return;
  if (t->n->constant_value && t->n->constant_value(t->n, &v->cv)) {
    v->cv.kind = DG_ONNX_VALUE_CONST;
    v->has_const = true;
    return;
  }
  int64_t i, ints[DG_MAX_RANK * 64];
  float f;
  int n = t->n->attr_ints(t->n, "value_ints", ints, DG_MAX_RANK * 64);
  bool one_int = t->n->attr_int(t->n, "value_int", &i);
  bool one_float = !one_int && t->n->attr_float(t->n, "value_float", &f);
  if (n > DG_MAX_RANK * 64 || (n < 0 && !one_int && !one_float)) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "value",
            "only Constant nodes holding a tensor, value_int, value_float or "
            "up to %d value_ints are supported",
            DG_MAX_RANK * 64);
    return;
  }
  size_t count = n >= 0 ? (size_t)n : 1;
  void *p = malloc(count ? count * 8 : 8);
  if (!p || !tr_own(t, p)) {
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return;
  }
  memset(&v->cv, 0, sizeof v->cv);
  if (one_float) {
    *(float *)p = f;
    v->cv.elem = DG_ONNX_FLOAT;
  } else {
    if (n >= 0)
      memcpy(p, ints, count * 8);
    else
      *(int64_t *)p = i;
    v->cv.elem = DG_ONNX_INT64;
  }
  v->cv.rank = n >= 0 ? 1 : 0;
  v->cv.dims[0] = (int64_t)count;
  v->cv.data = p;
  v->cv.count = count;
  v->cv.kind = DG_ONNX_VALUE_CONST;
  v->has_const = true;
}

/* ---- the table ---- */

static const char *const dropout_attrs[] = {"ratio", "seed", "is_test", NULL};
static const char *const conv_attrs[] = {
    "auto_pad", "dilations", "group", "kernel_shape", "pads", "strides", NULL};
static const char *const max_pool_attrs[] = {
    "auto_pad", "ceil_mode",     "dilations", "kernel_shape",
    "pads",     "storage_order", "strides",   NULL};
static const char *const avg_pool_attrs[] = {
    "auto_pad",     "ceil_mode", "count_include_pad", "dilations",
    "kernel_shape", "pads",      "strides",           NULL};
static const char *const lp_pool_attrs[] = {
    "auto_pad", "ceil_mode", "dilations", "kernel_shape",
    "p",        "pads",      "strides",   NULL};
static const char *const p_attr[] = {"p", NULL};
static const char *const gemm_attrs[] = {"alpha", "beta", "transA", "transB",
                                         NULL};
static const char *const axis_attr[] = {"axis", NULL};
static const char *const clip_attrs[] = {"min", "max", NULL};
static const char *const reshape_attrs[] = {"allowzero", NULL};
static const char *const quantize_attrs[] = {"axis", "saturate", NULL};
static const char *const constant_attrs[] = {"value", "value_int", "value_ints",
                                             "value_float", NULL};
static const char *const shape_attrs[] = {"start", "end", NULL};
static const char *const axes_attr[] = {"axes", NULL};
static const char *const value_attr[] = {"value", NULL};
static const char *const upper_attr[] = {"upper", NULL};
static const char *const window_attrs[] = {"output_datatype", "periodic", NULL};
/* Legacy broadcasting (opsets 1-6; onnx_ops_binary.c refuses them later). */
static const char *const legacy_bcast_attrs[] = {"broadcast", "axis", NULL};
static const char *const mod_attrs[] = {"fmod", NULL};
/* The data movement ops' attributes (handlers in onnx_ops_movement.c).
 * Split is taken from opset 2: opset 1 also had a split input, which the
 * handler does not read. */
static const char *const perm_attr[] = {"perm", NULL};
static const char *const slice_attrs[] = {"starts", "ends", "axes", NULL};
static const char *const pad_attrs[] = {"pads", "paddings", "mode", "value",
                                        NULL};
static const char *const split_attrs[] = {"axis", "split", "num_outputs", NULL};
static const char *const blocksize_attr[] = {"blocksize", NULL};
static const char *const depth_to_space_attrs[] = {"blocksize", "mode", NULL};
static const char *const reduce_attrs[] = {"axes", "keepdims",
                                           "noop_with_empty_axes", NULL};
static const char *const layer_norm_attrs[] = {"axis", "epsilon", "stash_type",
                                               NULL};
static const char *const alpha_attr[] = {"alpha", NULL};
static const char *const alpha_beta_attrs[] = {"alpha", "beta", NULL};
static const char *const gelu_attrs[] = {"approximate", NULL};
static const char *const selu_attrs[] = {"alpha", "gamma", NULL};
static const char *const shrink_attrs[] = {"bias", "lambd", NULL};
static const char *const resize_attrs[] = {"antialias",
                                           "axes",
                                           "coordinate_transformation_mode",
                                           "cubic_coeff_a",
                                           "exclude_outside",
                                           "extrapolation_value",
                                           "keep_aspect_ratio_policy",
                                           "mode",
                                           "nearest_mode",
                                           NULL};
static const char *const upsample_attrs[] = {"mode", "scales", NULL};
static const char *const cast_attrs[] = {"saturate", "to", NULL};
static const char *const conv_transpose_attrs[] = {
    "auto_pad",     "dilations",      "group",
    "kernel_shape", "output_padding", "output_shape",
    "pads",         "strides",        NULL};
static const char *const loss_attrs[] = {"ignore_index", "reduction", NULL};
static const char *const epsilon_attr[] = {"epsilon", NULL};
static const char *const cumsum_attrs[] = {"exclusive", "reverse", NULL};
static const char *const lrn_attrs[] = {"alpha", "beta", "bias", "size", NULL};
static const char *const eye_like_attrs[] = {"dtype", "k", NULL};
static const char *const lp_norm_attrs[] = {"axis", "p", NULL};
static const char *const equation_attr[] = {"equation", NULL};
static const char *const batch_norm_attrs[] = {
    "consumed_inputs", "epsilon",       "is_test", "momentum",
    "spatial",         "training_mode", NULL};
static const char *const arg_attrs[] = {"axis", "keepdims", "select_last_index",
                                        NULL};
static const char *const isinf_attrs[] = {"detect_negative", "detect_positive",
                                          NULL};

/* Versions: every one ONNX defines through opset 22; the handler reads
 * from the first whose form it knows (Reshape's shape became an input at
 * 5, the quantisation ops appeared at 10) to the newest, but Upsample's
 * 10 (deprecated for Resize, which the importer takes). Older forms with
 * other attributes (Relu's consumed_inputs) are refused by the attribute
 * lists. Add, Sub, Mul, Div and Pow read their opset 1-6 broadcast and
 * axis (onnx_ops_binary.c). */
static const tr_op table[] = {
    {"Abs", "1 6 13", 1, 13, NULL, tr_op_unary},
    {"Acos", "7 22", 7, 22, NULL, tr_op_unary},
    {"Acosh", "9 22", 9, 22, NULL, tr_op_unary},
    {"Add", "1 6 7 13 14", 1, 14, legacy_bcast_attrs, tr_op_add},
    {"Asin", "7 22", 7, 22, NULL, tr_op_unary},
    {"Asinh", "9 22", 9, 22, NULL, tr_op_unary},
    {"Atan", "7 22", 7, 22, NULL, tr_op_unary},
    {"Atanh", "9 22", 9, 22, NULL, tr_op_unary},
    {"AveragePool", "1 7 10 11 19 22", 1, 22, avg_pool_attrs, tr_op_avg_pool},
    {"BatchNormalization", "1 6 7 9 14 15", 1, 15, batch_norm_attrs,
     tr_op_batch_norm},
    {"Cast", "1 6 9 13 19 21", 6, 21, cast_attrs, tr_op_cast},
    {"CastLike", "15 19 21", 15, 21, cast_attrs, tr_op_cast_like},
    {"Ceil", "1 6 13", 1, 13, NULL, tr_op_unary},
    {"Celu", "12", 12, 12, alpha_attr, tr_op_unary},
    {"Clip", "1 6 11 12 13", 1, 13, clip_attrs, op_clip},
    {"Concat", "1 4 11 13", 1, 13, axis_attr, op_concat},
    {"Constant", "1 9 11 12 13 19 21", 1, 21, constant_attrs, op_constant},
    {"Conv", "1 11 22", 1, 22, conv_attrs, tr_op_conv},
    {"ConvTranspose", "1 11 22", 1, 22, conv_transpose_attrs,
     tr_op_conv_transpose},
    {"Cos", "7 22", 7, 22, NULL, tr_op_unary},
    {"Cosh", "9 22", 9, 22, NULL, tr_op_unary},
    {"CumSum", "11 14", 11, 14, cumsum_attrs, tr_op_cumsum},
    {"DepthToSpace", "1 11 13", 1, 13, depth_to_space_attrs,
     tr_op_depth_to_space},
    {"DequantizeLinear", "10 13 19 21", 10, 21, axis_attr, tr_op_dequantize},
    {"Div", "1 6 7 13 14", 1, 14, legacy_bcast_attrs, tr_op_div},
    {"Dropout", "1 6 7 10 12 13 22", 1, 22, dropout_attrs, op_identity},
    {"Einsum", "12", 12, 12, equation_attr, tr_op_einsum},
    {"Elu", "1 6 22", 1, 22, alpha_attr, tr_op_unary},
    {"Erf", "9 13", 9, 13, NULL, tr_op_unary},
    {"Exp", "1 6 13", 1, 13, NULL, tr_op_unary},
    {"Expand", "8 13", 8, 13, NULL, tr_op_expand},
    {"EyeLike", "9 22", 9, 22, eye_like_attrs, tr_op_eye_like},
    {"Flatten", "1 9 11 13 21", 1, 21, axis_attr, op_flatten},
    {"Floor", "1 6 13", 1, 13, NULL, tr_op_unary},
    {"Gather", "1 11 13", 1, 13, axis_attr, tr_op_gather},
    {"GatherElements", "11 13", 11, 13, axis_attr, tr_op_gather_elements},
    {"Gelu", "20", 20, 20, gelu_attrs, tr_op_unary},
    {"Gemm", "1 6 7 9 11 13", 1, 13, gemm_attrs, op_gemm},
    {"GlobalAveragePool", "1 22", 1, 22, NULL, tr_op_global_avg_pool},
    {"GlobalMaxPool", "1 22", 1, 22, NULL, tr_op_global_max_pool},
    {"GlobalLpPool", "1 2 22", 1, 22, p_attr, tr_op_global_lp_pool},
    {"HardSigmoid", "1 6 22", 1, 22, alpha_beta_attrs, tr_op_unary},
    {"HardSwish", "14 22", 14, 22, NULL, tr_op_unary},
    {"Hardmax", "1 11 13", 1, 13, axis_attr, tr_op_hardmax},
    {"Identity", "1 13 14 16 19 21", 1, 21, NULL, op_identity},
    {"InstanceNormalization", "1 6 22", 6, 22, epsilon_attr,
     tr_op_instance_norm},
    {"LRN", "1 13", 1, 13, lrn_attrs, tr_op_lrn},
    {"LayerNormalization", "17", 17, 17, layer_norm_attrs, tr_op_layer_norm},
    {"LeakyRelu", "1 6 16", 1, 16, alpha_attr, tr_op_unary},
    {"Log", "1 6 13", 1, 13, NULL, tr_op_unary},
    {"LpPool", "1 2 11 18 22", 1, 22, lp_pool_attrs, tr_op_lp_pool},
    {"LogSoftmax", "1 11 13", 1, 13, axis_attr, tr_op_log_softmax},
    {"LpNormalization", "1 22", 1, 22, lp_norm_attrs, tr_op_lp_norm},
    {"MatMul", "1 9 13", 1, 13, NULL, op_matmul},
    {"Max", "1 6 8 12 13", 1, 13, NULL, tr_op_max},
    {"MaxPool", "1 8 10 11 12 22", 1, 22, max_pool_attrs, tr_op_max_pool},
    {"Mean", "1 6 8 13", 1, 13, NULL, tr_op_mean},
    {"MeanVarianceNormalization", "9 13", 9, 13, axes_attr, tr_op_mvn},
    {"Min", "1 6 8 12 13", 1, 13, NULL, tr_op_min},
    {"Mish", "18 22", 18, 22, NULL, tr_op_unary},
    {"Mod", "10 13", 10, 13, mod_attrs, tr_op_mod},
    {"Mul", "1 6 7 13 14", 1, 14, legacy_bcast_attrs, tr_op_mul},
    {"Neg", "1 6 13", 1, 13, NULL, tr_op_unary},
    {"NegativeLogLikelihoodLoss", "12 13 22", 12, 22, loss_attrs,
     tr_op_nll_loss},
    {"PRelu", "1 6 7 9 16", 1, 16, NULL, tr_op_prelu},
    {"Pad", "1 2 11 13 18 19 21", 1, 21, pad_attrs, tr_op_pad},
    {"Pow", "1 7 12 13 15", 1, 15, legacy_bcast_attrs, tr_op_pow},
    {"QLinearConv", "10", 10, 10, conv_attrs, tr_op_qlinear_conv},
    {"QLinearMatMul", "10 21", 10, 21, NULL, tr_op_qlinear_matmul},
    {"QuantizeLinear", "10 13 19 21", 10, 21, quantize_attrs, tr_op_quantize},
    {"Reciprocal", "1 6 13", 1, 13, NULL, tr_op_unary},
    {"ReduceL1", "1 11 13 18", 1, 18, reduce_attrs, tr_op_reduce},
    {"ReduceL2", "1 11 13 18", 1, 18, reduce_attrs, tr_op_reduce},
    {"ReduceLogSum", "1 11 13 18", 1, 18, reduce_attrs, tr_op_reduce},
    {"ReduceLogSumExp", "1 11 13 18", 1, 18, reduce_attrs, tr_op_reduce},
    {"ReduceMax", "1 11 12 13 18 20", 1, 20, reduce_attrs, tr_op_reduce},
    {"ReduceMean", "1 11 13 18", 1, 18, reduce_attrs, tr_op_reduce},
    {"ReduceMin", "1 11 12 13 18 20", 1, 20, reduce_attrs, tr_op_reduce},
    {"ReduceProd", "1 11 13 18", 1, 18, reduce_attrs, tr_op_reduce},
    {"ReduceSum", "1 11 13", 1, 13, reduce_attrs, tr_op_reduce},
    {"ReduceSumSquare", "1 11 13 18", 1, 18, reduce_attrs, tr_op_reduce},
    {"Relu", "1 6 13 14", 1, 14, NULL, op_relu},
    {"Reshape", "1 5 13 14 19 21", 5, 21, reshape_attrs, op_reshape},
    {"Resize", "10 11 13 18 19", 10, 19, resize_attrs, tr_op_resize},
    {"Round", "11 22", 11, 22, NULL, tr_op_unary},
    {"Selu", "1 6 22", 1, 22, selu_attrs, tr_op_unary},
    {"Shrink", "9", 9, 9, shrink_attrs, tr_op_unary},
    {"Sigmoid", "1 6 13", 6, 13, NULL, op_sigmoid},
    {"Sign", "9 13", 9, 13, NULL, tr_op_unary},
    {"Sin", "7 22", 7, 22, NULL, tr_op_unary},
    {"Sinh", "9 22", 9, 22, NULL, tr_op_unary},
    {"Slice", "1 10 11 13", 1, 13, slice_attrs, tr_op_slice},
    {"Softmax", "1 11 13", 1, 13, axis_attr, op_softmax},
    {"SoftmaxCrossEntropyLoss", "12 13", 12, 13, loss_attrs, tr_op_sce_loss},
    {"Softplus", "1 22", 1, 22, NULL, tr_op_unary},
    {"Softsign", "1 22", 1, 22, NULL, tr_op_unary},
    {"SpaceToDepth", "1 13", 1, 13, blocksize_attr, tr_op_space_to_depth},
    {"Split", "1 2 11 13 18", 2, 18, split_attrs, tr_op_split},
    {"Sqrt", "1 6 13", 1, 13, NULL, tr_op_unary},
    {"Sub", "1 6 7 13 14", 1, 14, legacy_bcast_attrs, tr_op_sub},
    {"Sum", "1 6 8 13", 1, 13, NULL, tr_op_sum},
    {"Tan", "7 22", 7, 22, NULL, tr_op_unary},
    {"Tanh", "1 6 13", 1, 13, NULL, tr_op_unary},
    {"ThresholdedRelu", "10 22", 10, 22, alpha_attr, tr_op_unary},
    {"Tile", "1 6 13", 6, 13, NULL, tr_op_tile},
    {"Transpose", "1 13 21", 1, 21, perm_attr, tr_op_transpose},
    {"Trilu", "14", 14, 14, upper_attr, tr_op_trilu},
    {"Upsample", "1 7 9 10", 7, 9, upsample_attrs, tr_op_upsample},
    /* Comparisons, logic, selection (onnx_ops_compare.c); they fold on
     * constants first. The two-input ones read opset 1-6 broadcast. */
    {"And", "1 7", 1, 7, legacy_bcast_attrs, tr_op_and},
    {"ArgMax", "1 11 12 13", 1, 13, arg_attrs, tr_op_argmax},
    {"ArgMin", "1 11 12 13", 1, 13, arg_attrs, tr_op_argmin},
    {"Equal", "1 7 11 13 19", 1, 19, legacy_bcast_attrs, tr_op_equal},
    {"Greater", "1 7 9 13", 1, 13, legacy_bcast_attrs, tr_op_greater},
    {"GreaterOrEqual", "12 16", 12, 16, NULL, tr_op_greater_equal},
    {"IsInf", "10 20", 10, 20, isinf_attrs, tr_op_isinf},
    {"IsNaN", "9 13 20", 9, 20, NULL, tr_op_isnan},
    {"Less", "1 7 9 13", 1, 13, legacy_bcast_attrs, tr_op_less},
    {"LessOrEqual", "12 16", 12, 16, NULL, tr_op_less_equal},
    {"Not", "1", 1, 1, NULL, tr_op_not},
    {"Or", "1 7", 1, 7, legacy_bcast_attrs, tr_op_or},
    {"Where", "9 16", 9, 16, NULL, tr_op_where},
    {"Xor", "1 7", 1, 7, legacy_bcast_attrs, tr_op_xor},
    /* Shape arithmetic: folded at import (onnx_fold.c). */
    {"BlackmanWindow", "17", 17, 17, window_attrs, tr_op_fold_only},
    {"ConstantOfShape", "9 20 21", 9, 21, value_attr, tr_op_fold_only},
    {"HammingWindow", "17", 17, 17, window_attrs, tr_op_fold_only},
    {"HannWindow", "17", 17, 17, window_attrs, tr_op_fold_only},
    {"Range", "11", 11, 11, NULL, tr_op_fold_only},
    {"Shape", "1 13 15 19 21", 1, 21, shape_attrs, tr_op_fold_only},
    {"Size", "1 13 19 21", 1, 21, NULL, tr_op_fold_only},
    {"Squeeze", "1 11 13 21", 1, 21, axes_attr, tr_op_squeeze},
    {"Unsqueeze", "1 11 13 21", 1, 21, axes_attr, tr_op_squeeze},
};

int tr_op_version(const tr_op *row, int64_t opset) {
  int in_force = 0;
  for (const char *p = row->versions; *p;) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p)
      break;
    if (v <= opset)
      in_force = (int)v;
    p = end;
  }
  return in_force;
}

bool tr_op_opset_ok(const tr_op *row, int64_t opset, char *why, size_t size) {
  int v = tr_op_version(row, opset);
  why[0] = 0;
  if (opset > 22)
    snprintf(why, size, "%s at opset %lld: opsets up to 22 are supported",
             row->op, (long long)opset);
  else if (!v)
    snprintf(why, size, "%s does not exist at opset %lld (its versions: %s)",
             row->op, (long long)opset, row->versions);
  else if (v < row->min_version || v > row->max_version)
    snprintf(why, size,
             "%s at opset %lld is its version %d, which is not supported "
             "(versions %d..%d of %s)",
             row->op, (long long)opset, v, row->min_version, row->max_version,
             row->versions);
  return !why[0];
}

const tr_op *tr_op_find(const char *op) {
  for (size_t i = 0; op && i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(table[i].op, op))
      return &table[i];
  return NULL;
}
