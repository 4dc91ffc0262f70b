/* One translator per ONNX op, each mapping the op's attributes onto a
 * builder call and refusing, with the attribute named, what the builder
 * cannot express. */
#include "onnx_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_op(const Onnx__NodeProto *n, const char *op) {
  return n->op_type && !strcmp(n->op_type, op) &&
         (!n->domain || !n->domain[0] || !strcmp(n->domain, "ai.onnx"));
}

/* ---- quantisation parameters from constant inputs ---- */

/* Reads scale (input si) and zero point (input zi, optional) as quant
 * params; per-axis when they have more than one value. zero_type gets the
 * zero point's integer dtype (u8 by default, as ONNX says). */
static bool read_quant(onnx_ctx *c, int si, int zi, int64_t axis,
                       dg_quant_params *q, quant_buf *buf,
                       dg_dtype *zero_type) {
  float *scales = buf->scales;
  int32_t *zeros = buf->zeros;
  const int max = MAX_CHANNELS;
  const Onnx__TensorProto *st = onnx_const_input(c, si);
  const Onnx__TensorProto *zt = zi >= 0 ? onnx_const_input(c, zi) : NULL;
  if (!st || (zi >= 0 && onnx_has_input(c, zi) && !zt)) {
    onnx_fail(c, DG_ERROR_UNSUPPORTED, "scale",
              "scales and zero points must be constant initializers");
    return false;
  }
  int ns = 0, nz = 0;
  int64_t zi64[MAX_CHANNELS];
  if (!onnx_const_floats(c, st, scales, max, &ns))
    return false;
  if (zt && !onnx_const_ints(c, zt, zi64, max, &nz))
    return false;
  if (zero_type)
    *zero_type = zt ? onnx_dtype(zt->data_type) : DG_DTYPE_U8;
  if (zt && nz != ns) {
    onnx_fail(c, DG_ERROR_INVALID_ARGUMENT, "zero_point",
              "%d scales but %d zero points", ns, nz);
    return false;
  }
  memset(q, 0, sizeof *q);
  if (ns == 1) {
    q->scale = scales[0];
    q->zero_point = zt ? (int32_t)zi64[0] : 0;
    return true;
  }
  for (int i = 0; i < ns; i++)
    zeros[i] = zt ? (int32_t)zi64[i] : 0;
  q->axis = (int32_t)axis;
  q->channel_count = ns;
  q->channel_scales = scales;
  q->channel_zero_points = zeros;
  return true;
}

/* ---- conv and pooling ---- */

static bool window_params(onnx_ctx *c, int rank, dg_padding *mode,
                          int32_t *pads, int32_t *strides, int32_t *dil) {
  int64_t v[8];
  const Onnx__AttributeProto *ap = onnx_attr(c, "auto_pad");
  *mode = DG_PADDING_EXPLICIT;
  if (ap && ap->has_s) {
    char s[32] = "";
    snprintf(s, sizeof s, "%.*s", (int)ap->s.len, (const char *)ap->s.data);
    if (!strcmp(s, "SAME_UPPER"))
      *mode = DG_PADDING_SAME_UPPER;
    else if (!strcmp(s, "SAME_LOWER"))
      *mode = DG_PADDING_SAME_LOWER;
    else if (!strcmp(s, "VALID"))
      *mode = DG_PADDING_VALID;
    else if (strcmp(s, "NOTSET")) {
      onnx_fail(c, DG_ERROR_UNSUPPORTED, "auto_pad",
                "auto_pad '%s' is not supported", s);
      return false;
    }
  }
  if (rank != 4) {
    onnx_fail(c, DG_ERROR_UNSUPPORTED, "kernel_shape",
              "only 2-D windows (rank-4 tensors) are supported, got rank %d",
              rank);
    return false;
  }
  int n = onnx_attr_ints(c, "pads", v, 8);
  for (int i = 0; i < 4; i++)
    pads[i] = n == 4 ? (int32_t)v[i] : 0;
  if (n >= 0 && n != 4) {
    onnx_fail(c, DG_ERROR_INVALID_ARGUMENT, "pads", "expected 4 pads");
    return false;
  }
  n = onnx_attr_ints(c, "strides", v, 8);
  if (n >= 0 && n != 2) {
    onnx_fail(c, DG_ERROR_INVALID_ARGUMENT, "strides", "expected 2 strides");
    return false;
  }
  strides[0] = n == 2 ? (int32_t)v[0] : 1;
  strides[1] = n == 2 ? (int32_t)v[1] : 1;
  n = onnx_attr_ints(c, "dilations", v, 8);
  if (n >= 0 && n != 2) {
    onnx_fail(c, DG_ERROR_INVALID_ARGUMENT, "dilations",
              "expected 2 dilations");
    return false;
  }
  if (dil) {
    dil[0] = n == 2 ? (int32_t)v[0] : 1;
    dil[1] = n == 2 ? (int32_t)v[1] : 1;
  } else if (n == 2 && (v[0] != 1 || v[1] != 1)) {
    onnx_fail(c, DG_ERROR_UNSUPPORTED, "dilations",
              "dilated pooling is not supported");
    return false;
  }
  return true;
}

static int tensor_rank(onnx_ctx *c, dg_tensor t) {
  dg_tensor_desc d;
  return dg_graph_tensor_desc(c->g, t, &d) == DG_OK ? d.rank : -1;
}

static bool conv_params(onnx_ctx *c, dg_tensor x, dg_conv2d_params *p) {
  static const char *const ok[] = {"auto_pad", "dilations", "group",
                                   "kernel_shape", "pads", "strides", NULL};
  if (!onnx_attrs_allowed(c, ok))
    return false;
  memset(p, 0, sizeof *p);
  if (!window_params(c, tensor_rank(c, x), &p->padding, p->pads, p->stride,
                     p->dilation))
    return false;
  p->groups = (int32_t)onnx_attr_int(c, "group", 1);
  return true;
}

static void op_conv(onnx_ctx *c) {
  dg_tensor x = onnx_input(c, 0, NULL, false);
  dg_conv2d_params p;
  if (!x.id || !conv_params(c, x, &p))
    return;
  dg_tensor w = onnx_input(c, 1, NULL, false);
  dg_tensor b = onnx_input(c, 2, NULL, true);
  onnx_output(c, 0, dg_graph_conv2d(c->g, c->node->name, x, w, b, &p));
}

static void op_pool(onnx_ctx *c, bool is_max) {
  static const char *const ok_max[] = {"auto_pad",     "ceil_mode",
                                       "dilations",    "kernel_shape",
                                       "pads",         "storage_order",
                                       "strides",      NULL};
  static const char *const ok_avg[] = {"auto_pad",     "ceil_mode",
                                       "count_include_pad", "kernel_shape",
                                       "pads",         "strides",
                                       NULL};
  if (!onnx_attrs_allowed(c, is_max ? ok_max : ok_avg))
    return;
  if (c->node->n_output > 1 && c->node->output[1] && c->node->output[1][0]) {
    onnx_fail(c, DG_ERROR_UNSUPPORTED, "Indices",
              "the Indices output is not supported");
    return;
  }
  if (onnx_attr_int(c, "storage_order", 0) != 0) {
    onnx_fail(c, DG_ERROR_UNSUPPORTED, "storage_order",
              "column-major storage_order is not supported");
    return;
  }
  dg_tensor x = onnx_input(c, 0, NULL, false);
  if (!x.id)
    return;
  dg_pool2d_params p = {0};
  int64_t k[4];
  if (onnx_attr_ints(c, "kernel_shape", k, 4) != 2) {
    onnx_fail(c, DG_ERROR_UNSUPPORTED, "kernel_shape",
              "only 2-D pooling is supported");
    return;
  }
  p.kernel[0] = (int32_t)k[0];
  p.kernel[1] = (int32_t)k[1];
  if (!window_params(c, tensor_rank(c, x), &p.padding, p.pads, p.stride,
                     NULL))
    return;
  p.ceil_mode = (int32_t)onnx_attr_int(c, "ceil_mode", 0);
  p.count_include_pad = (int32_t)onnx_attr_int(c, "count_include_pad", 0);
  onnx_output(c, 0, is_max ? dg_graph_max_pool2d(c->g, c->node->name, x, &p)
                           : dg_graph_avg_pool2d(c->g, c->node->name, x, &p));
}

/* ---- gemm, matmul ---- */

/* A constant 2-D float tensor's data, transposed if asked and scaled. */
static dg_tensor const_matrix(onnx_ctx *c, int i, bool transpose, float mul) {
  const Onnx__TensorProto *t = onnx_const_input(c, i);
  dg_tensor_desc d;
  void *data;
  char err[256];
  if (!onnx_tensor_decode(t, &d, &data, err, sizeof err)) {
    onnx_fail(c, DG_ERROR_INVALID_ARGUMENT, t->name, "%s", err);
    return DG_TENSOR_NONE;
  }
  if (d.dtype != DG_DTYPE_F32 || d.rank != 2) {
    free(data);
    onnx_fail(c, DG_ERROR_UNSUPPORTED, "B", "expected a 2-D float matrix");
    return DG_TENSOR_NONE;
  }
  float *src = data, *dst = malloc(sizeof(float) * (size_t)(d.dims[0] *
                                                             d.dims[1]));
  if (!dst) {
    free(data);
    onnx_fail(c, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return DG_TENSOR_NONE;
  }
  int64_t R = d.dims[0], C = d.dims[1];
  for (int64_t r = 0; r < R; r++)
    for (int64_t k = 0; k < C; k++)
      dst[transpose ? k * R + r : r * C + k] = src[r * C + k] * mul;
  if (transpose) {
    d.dims[0] = C;
    d.dims[1] = R;
  }
  dg_tensor out = dg_graph_constant(c->g, t->name, &d, dst, 0);
  free(dst);
  free(data);
  return out;
}

static void op_gemm(onnx_ctx *c) {
  static const char *const ok[] = {"alpha", "beta", "transA", "transB", NULL};
  if (!onnx_attrs_allowed(c, ok))
    return;
  float alpha = onnx_attr_float(c, "alpha", 1.0f);
  float beta = onnx_attr_float(c, "beta", 1.0f);
  int64_t ta = onnx_attr_int(c, "transA", 0), tb = onnx_attr_int(c, "transB", 0);
  if (ta) {
    onnx_fail(c, DG_ERROR_UNSUPPORTED, "transA", "transA=1 is not supported");
    return;
  }
  dg_tensor a = onnx_input(c, 0, NULL, false);
  if (!a.id)
    return;
  dg_tensor y;
  if (onnx_const_input(c, 1)) {
    /* fully_connected wants w as [N, K]: ONNX's B^T when transB = 0. */
    dg_tensor w = const_matrix(c, 1, !tb, alpha);
    dg_tensor bias = DG_TENSOR_NONE;
    dg_tensor_desc wd;
    if (!w.id || dg_graph_tensor_desc(c->g, w, &wd) != DG_OK) {
      onnx_check_graph(c);
      return;
    }
    const Onnx__TensorProto *ct = onnx_const_input(c, 2);
    bool add_c = onnx_has_input(c, 2) && beta != 0.0f;
    if (add_c && ct) {
      /* A constant C of N values (any leading 1s) becomes the bias. */
      float vals[65536];
      int n = 0;
      if (!onnx_const_floats(c, ct, vals, 65536, &n))
        return;
      if (n == wd.dims[0] || n == 1) {
        float *b = malloc(sizeof(float) * (size_t)wd.dims[0]);
        if (!b) {
          onnx_fail(c, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
          return;
        }
        for (int64_t j = 0; j < wd.dims[0]; j++)
          b[j] = beta * vals[n == 1 ? 0 : j];
        dg_tensor_desc bd = {.dtype = DG_DTYPE_F32, .rank = 1,
                             .dims = {wd.dims[0]}};
        bias = dg_graph_constant(c->g, ct->name, &bd, b, 0);
        free(b);
        add_c = false;
      }
    }
    y = dg_graph_fully_connected(c->g, c->node->name, a, w, bias,
                                 DG_ACTIVATION_NONE);
    if (add_c) {
      if (beta != 1.0f) {
        onnx_fail(c, DG_ERROR_UNSUPPORTED, "beta",
                  "beta != 1 with a matrix C is not supported");
        return;
      }
      y = dg_graph_add(c->g, NULL, y, onnx_input(c, 2, NULL, false));
    }
  } else {
    if (tb || alpha != 1.0f) {
      onnx_fail(c, DG_ERROR_UNSUPPORTED, tb ? "transB" : "alpha",
                "a non-constant B needs transB=0 and alpha=1");
      return;
    }
    y = dg_graph_matmul(c->g, c->node->name, a, onnx_input(c, 1, NULL, false));
    if (onnx_has_input(c, 2) && beta != 0.0f) {
      if (beta != 1.0f) {
        onnx_fail(c, DG_ERROR_UNSUPPORTED, "beta",
                  "beta != 1 with a non-constant B is not supported");
        return;
      }
      y = dg_graph_add(c->g, NULL, y, onnx_input(c, 2, NULL, false));
    }
  }
  onnx_output(c, 0, y);
}

static void op_matmul(onnx_ctx *c) {
  if (!onnx_attrs_allowed(c, NULL))
    return;
  dg_tensor a = onnx_input(c, 0, NULL, false);
  dg_tensor b = onnx_input(c, 1, NULL, false);
  onnx_output(c, 0, dg_graph_matmul(c->g, c->node->name, a, b));
}

/* ---- elementwise and shape ops ---- */

static void op_softmax(onnx_ctx *c) {
  static const char *const ok[] = {"axis", NULL};
  if (!onnx_attrs_allowed(c, ok))
    return;
  dg_tensor x = onnx_input(c, 0, NULL, false);
  dg_tensor_desc d;
  if (!x.id || dg_graph_tensor_desc(c->g, x, &d) != DG_OK)
    return;
  int64_t axis = onnx_attr_int(c, "axis", c->opset >= 13 ? -1 : 1);
  if (axis < 0)
    axis += d.rank;
  if (c->opset >= 13 || axis == d.rank - 1) {
    onnx_output(c, 0, dg_graph_softmax(c->g, c->node->name, x,
                                       (int32_t)axis));
    return;
  }
  /* Before opset 13: softmax over the flattened [axis:] dims. */
  dg_tensor f = dg_graph_flatten(c->g, NULL, x, (int32_t)axis);
  f = dg_graph_softmax(c->g, c->node->name, f, 1);
  onnx_output(c, 0, dg_graph_reshape(c->g, NULL, f, d.rank, d.dims));
}

static void op_clip(onnx_ctx *c) {
  static const char *const ok[] = {"min", "max", NULL};
  if (!onnx_attrs_allowed(c, ok))
    return;
  float lo = onnx_attr_float(c, "min", -INFINITY);
  float hi = onnx_attr_float(c, "max", INFINITY);
  for (int i = 1; i <= 2; i++) {
    if (!onnx_has_input(c, i))
      continue;
    const Onnx__TensorProto *t = onnx_const_input(c, i);
    float v;
    int n;
    if (!t) {
      onnx_fail(c, DG_ERROR_UNSUPPORTED, i == 1 ? "min" : "max",
                "Clip bounds must be constants");
      return;
    }
    if (!onnx_const_floats(c, t, &v, 1, &n))
      return;
    *(i == 1 ? &lo : &hi) = v;
  }
  dg_tensor x = onnx_input(c, 0, NULL, false);
  onnx_output(c, 0, dg_graph_clip(c->g, c->node->name, x, lo, hi));
}

static void op_reshape(onnx_ctx *c) {
  static const char *const ok[] = {"allowzero", NULL};
  if (!onnx_attrs_allowed(c, ok))
    return;
  const Onnx__TensorProto *st = onnx_const_input(c, 1);
  int64_t dims[DG_MAX_RANK + 1];
  int n = 0;
  if (!st) {
    onnx_fail(c, DG_ERROR_UNSUPPORTED, "shape",
              "the shape input must be a constant");
    return;
  }
  if (!onnx_const_ints(c, st, dims, DG_MAX_RANK, &n))
    return;
  if (onnx_attr_int(c, "allowzero", 0)) {
    for (int i = 0; i < n; i++)
      if (dims[i] == 0) {
        onnx_fail(c, DG_ERROR_UNSUPPORTED, "allowzero",
                  "allowzero=1 with a zero dimension is not supported");
        return;
      }
  }
  dg_tensor x = onnx_input(c, 0, NULL, false);
  onnx_output(c, 0, dg_graph_reshape(c->g, c->node->name, x, n, dims));
}

static void op_concat(onnx_ctx *c) {
  static const char *const ok[] = {"axis", NULL};
  if (!onnx_attrs_allowed(c, ok))
    return;
  int n = (int)c->node->n_input;
  dg_tensor *ts = calloc((size_t)(n ? n : 1), sizeof *ts);
  if (!ts) {
    onnx_fail(c, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return;
  }
  for (int i = 0; i < n && c->st == DG_OK; i++)
    ts[i] = onnx_input(c, i, NULL, false);
  if (c->st == DG_OK)
    onnx_output(c, 0, dg_graph_concat(
                          c->g, c->node->name, ts, n,
                          (int32_t)onnx_attr_int(c, "axis",
                                                 c->opset < 4 ? 1 : 0)));
  free(ts);
}

/* ---- quantisation ---- */

static void op_quantize(onnx_ctx *c) {
  static const char *const ok[] = {"axis", "saturate", NULL};
  if (!onnx_attrs_allowed(c, ok))
    return;
  dg_tensor x = onnx_input(c, 0, NULL, false);
  dg_tensor_desc d;
  if (!x.id || dg_graph_tensor_desc(c->g, x, &d) != DG_OK)
    return;
  int64_t axis = onnx_attr_int(c, "axis", 1);
  if (axis < 0)
    axis += d.rank;
  quant_buf *qb = &c->qbuf[0];
  dg_quant_params q;
  dg_dtype zt;
  if (!read_quant(c, 1, 2, axis, &q, qb, &zt))
    return;
  onnx_output(c, 0, dg_graph_quantize(c->g, c->node->name, x, zt, &q));
}

/* DequantizeLinear is translated only when a float consumer needs it
 * (folded chains never see it); the pass that meets the node in order just
 * records it. */
static void op_dequantize(onnx_ctx *c, bool emit) {
  static const char *const ok[] = {"axis", NULL};
  if (!onnx_attrs_allowed(c, ok))
    return;
  if (c->node->n_input < 2 || !onnx_has_input(c, 0)) {
    onnx_fail(c, DG_ERROR_INVALID_ARGUMENT, "input",
              "DequantizeLinear needs x and x_scale");
    return;
  }
  if (!emit) {
    onnx_value *v = onnx_value_add(c, c->node->output[0]);
    if (v)
      v->dq_node = c->node_index;
    c->done[c->node_index] = true;
    return;
  }
  quant_buf *qb = &c->qbuf[0];
  dg_quant_params q;
  int64_t axis = onnx_attr_int(c, "axis", 1);
  /* The quantised input's rank decides a negative axis; initializers know
   * it before they become tensors. */
  const Onnx__TensorProto *xt = onnx_const_input(c, 0);
  if (axis < 0 && xt)
    axis += (int64_t)xt->n_dims;
  if (!read_quant(c, 1, 2, axis, &q, qb, NULL))
    return;
  dg_tensor x = onnx_input(c, 0, &q, false);
  onnx_output(c, 0, dg_graph_dequantize(c->g, c->node->name, x));
}

static void op_qlinear_conv(onnx_ctx *c) {
  quant_buf *xb = &c->qbuf[0], *wb = &c->qbuf[1], *yb = &c->qbuf[2];
  dg_quant_params xq, wq, yq;
  dg_dtype yt;
  if (!read_quant(c, 1, 2, 0, &xq, xb, NULL) ||
      !read_quant(c, 4, 5, 0, &wq, wb, NULL) ||
      !read_quant(c, 6, 7, 0, &yq, yb, &yt))
    return;
  dg_tensor x = onnx_input(c, 0, &xq, false);
  dg_conv2d_params p;
  if (!x.id || !conv_params(c, x, &p))
    return;
  dg_tensor w = onnx_input(c, 3, &wq, false);
  dg_tensor b = onnx_input(c, 8, NULL, true);
  onnx_output(c, 0, dg_graph_qconv2d(c->g, c->node->name, x, w, b, &p, yt,
                                     &yq));
}

static void op_qlinear_matmul(onnx_ctx *c) {
  quant_buf *ab = &c->qbuf[0], *bb = &c->qbuf[1], *yb = &c->qbuf[2];
  dg_quant_params aq, bq, yq;
  dg_dtype yt;
  const Onnx__TensorProto *bt = onnx_const_input(c, 3);
  int64_t baxis = bt && bt->n_dims ? (int64_t)bt->n_dims - 1 : 1;
  if (!read_quant(c, 1, 2, 0, &aq, ab, NULL) ||
      !read_quant(c, 4, 5, baxis, &bq, bb, NULL) ||
      !read_quant(c, 6, 7, 0, &yq, yb, &yt))
    return;
  dg_tensor a = onnx_input(c, 0, &aq, false);
  dg_tensor b = onnx_input(c, 3, &bq, false);
  onnx_output(c, 0, dg_graph_qmatmul(c->g, c->node->name, a, b, yt, &yq));
}

/* ---- folding DequantizeLinear -> Conv/MatMul/Gemm (-> Relu) -> Quantize */

static const Onnx__NodeProto *dq_of(onnx_ctx *c, int i) {
  if (!onnx_has_input(c, i))
    return NULL;
  onnx_value *v = onnx_value_find(c, c->node->input[i]);
  return v && v->dq_node >= 0 ? c->gp->node[v->dq_node] : NULL;
}

/* The single node reading name (and its index), or NULL. */
static const Onnx__NodeProto *sole_consumer(onnx_ctx *c, const char *name,
                                            int *index) {
  onnx_value *v = onnx_value_find(c, name);
  if (!v || v->consumers != 1)
    return NULL;
  for (size_t i = (size_t)c->node_index + 1; i < c->gp->n_node; i++)
    for (size_t k = 0; k < c->gp->node[i]->n_input; k++)
      if (c->gp->node[i]->input[k] && !strcmp(c->gp->node[i]->input[k], name)) {
        *index = (int)i;
        return c->gp->node[i];
      }
  return NULL;
}

static bool try_fold(onnx_ctx *c) {
  const Onnx__NodeProto *n = c->node;
  bool conv = is_op(n, "Conv"), mm = is_op(n, "MatMul"),
       gemm = is_op(n, "Gemm");
  if (!conv && !mm && !gemm)
    return false;
  const Onnx__NodeProto *dx = dq_of(c, 0), *dw = dq_of(c, 1);
  const Onnx__NodeProto *db = onnx_has_input(c, 2) && !mm ? dq_of(c, 2) : NULL;
  if (!dx || !dw || (onnx_has_input(c, 2) && !mm && !db))
    return false;
  if (gemm && (onnx_attr_int(c, "transA", 0) || !onnx_attr_int(c, "transB", 0) ||
               onnx_attr_float(c, "alpha", 1) != 1 ||
               onnx_attr_float(c, "beta", 1) != 1))
    return false;
  int ri = -1, qi = -1;
  const Onnx__NodeProto *next = sole_consumer(c, n->output[0], &ri);
  const Onnx__NodeProto *relu =
      next && is_op(next, "Relu") && next->n_output >= 1 ? next : NULL;
  const Onnx__NodeProto *q =
      relu ? sole_consumer(c, relu->output[0], &qi) : next;
  if (!relu)
    qi = ri;
  if (!q || !is_op(q, "QuantizeLinear") || q->n_input < 2 || q->n_output < 1)
    return false;
  /* Read every quantisation parameter in the context of its DQ/Q node. */
  const Onnx__NodeProto *self = c->node;
  int self_index = c->node_index;
  quant_buf *xb = &c->qbuf[0], *wb = &c->qbuf[1], *yb = &c->qbuf[2];
  dg_quant_params xq, wq, yq;
  dg_dtype yt;
  bool ok;
  c->node = dx;
  ok = read_quant(c, 1, 2, 0, &xq, xb, NULL);
  c->node = dw; /* per-channel weights: the output-channel axis */
  ok = ok && read_quant(c, 1, 2, mm ? 1 : 0, &wq, wb, NULL);
  c->node = q;
  ok = ok && read_quant(c, 1, 2, 0, &yq, yb, &yt);
  c->node = self;
  if (!ok)
    return true; /* error recorded */
  if (yq.channel_count || xq.channel_count) {
    onnx_fail(c, DG_ERROR_UNSUPPORTED, "axis",
              "activations must be quantised per tensor to fold into int8");
    return true;
  }
  /* The int8 tensors behind the DQs. */
  onnx_value *xv = onnx_value_find(c, dx->input[0]);
  onnx_value *wv = onnx_value_find(c, dw->input[0]);
  if (!xv || !wv || !wv->init) {
    c->node = self;
    return false; /* weights not constant: no folding */
  }
  c->node = dx;
  c->node_index = xv->dq_node >= 0 ? xv->dq_node : self_index;
  dg_tensor x = onnx_input(c, 0, &xq, false);
  c->node = dw;
  dg_tensor w = onnx_input(c, 0, &wq, false);
  dg_tensor b = DG_TENSOR_NONE;
  if (db) {
    c->node = db;
    b = onnx_input(c, 0, NULL, false);
  }
  c->node = self;
  c->node_index = self_index;
  dg_activation act = relu ? DG_ACTIVATION_RELU : DG_ACTIVATION_NONE;
  dg_tensor y;
  if (conv) {
    dg_conv2d_params p;
    if (!conv_params(c, x, &p))
      return true;
    p.activation = act;
    y = dg_graph_qconv2d(c->g, n->name, x, w, b, &p, yt, &yq);
  } else if (gemm) {
    y = dg_graph_qfully_connected(c->g, n->name, x, w, b, act, yt, &yq);
  } else {
    if (relu)
      return false;
    y = dg_graph_qmatmul(c->g, n->name, x, w, yt, &yq);
  }
  if (relu)
    c->done[ri] = true;
  c->done[qi] = true;
  /* The result is the QuantizeLinear's output. */
  if (!onnx_check_graph(c)) {
    onnx_value *v = onnx_value_add(c, q->output[0]);
    if (v)
      v->t = y;
  }
  return true;
}

void onnx_translate_node(onnx_ctx *c) {
  const Onnx__NodeProto *n = c->node;
  if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx")) {
    onnx_fail(c, DG_ERROR_UNSUPPORTED, "domain",
              "operator domain '%s' is not supported", n->domain);
    return;
  }
  if (!n->op_type || n->n_output < 1) {
    onnx_fail(c, DG_ERROR_INVALID_ARGUMENT, "op_type",
              "node has no op_type or no output");
    return;
  }
  if (try_fold(c))
    return;
  const char *op = n->op_type;
  if (!strcmp(op, "Conv")) op_conv(c);
  else if (!strcmp(op, "MaxPool")) op_pool(c, true);
  else if (!strcmp(op, "AveragePool")) op_pool(c, false);
  else if (!strcmp(op, "GlobalAveragePool")) {
    if (onnx_attrs_allowed(c, NULL))
      onnx_output(c, 0, dg_graph_global_avg_pool(
                            c->g, n->name, onnx_input(c, 0, NULL, false)));
  } else if (!strcmp(op, "Gemm")) op_gemm(c);
  else if (!strcmp(op, "MatMul")) op_matmul(c);
  else if (!strcmp(op, "Softmax")) op_softmax(c);
  else if (!strcmp(op, "Relu")) {
    if (onnx_attrs_allowed(c, NULL))
      onnx_output(c, 0, dg_graph_relu(c->g, n->name,
                                      onnx_input(c, 0, NULL, false)));
  } else if (!strcmp(op, "Clip")) op_clip(c);
  else if (!strcmp(op, "Add")) {
    if (onnx_attrs_allowed(c, NULL))
      onnx_output(c, 0, dg_graph_add(c->g, n->name,
                                     onnx_input(c, 0, NULL, false),
                                     onnx_input(c, 1, NULL, false)));
  } else if (!strcmp(op, "Flatten")) {
    static const char *const ok[] = {"axis", NULL};
    if (onnx_attrs_allowed(c, ok))
      onnx_output(c, 0, dg_graph_flatten(
                            c->g, n->name, onnx_input(c, 0, NULL, false),
                            (int32_t)onnx_attr_int(c, "axis", 1)));
  } else if (!strcmp(op, "Reshape")) op_reshape(c);
  else if (!strcmp(op, "Concat")) op_concat(c);
  else if (!strcmp(op, "QuantizeLinear")) op_quantize(c);
  else if (!strcmp(op, "DequantizeLinear"))
    /* Emitted only when a float consumer asks for it (onnx_input). */
    op_dequantize(c, c->emitting_dq == c->node_index);
  else if (!strcmp(op, "QLinearConv")) op_qlinear_conv(c);
  else if (!strcmp(op, "QLinearMatMul")) op_qlinear_matmul(c);
  else if (!strcmp(op, "Constant")) {
    const Onnx__AttributeProto *a = onnx_attr(c, "value");
    static const char *const ok[] = {"value", NULL};
    if (!onnx_attrs_allowed(c, ok))
      return;
    if (!a || !a->t) {
      onnx_fail(c, DG_ERROR_UNSUPPORTED, "value",
                "only tensor-valued Constant nodes are supported");
      return;
    }
    onnx_value *v = onnx_value_add(c, n->output[0]);
    if (v)
      v->init = a->t;
  } else
    onnx_fail(c, DG_ERROR_UNSUPPORTED, "op_type",
              "operator '%s' is not supported", op);
}
