/* One translator per ONNX op, reading the node through OrtApi and mapping
 * its attributes onto a builder call exactly as the ONNX importer
 * (src/onnx/onnx_ops.c) does, and refusing, with the attribute named,
 * whatever the builder cannot express. A refusal here makes GetCapability
 * decline the node. */
#include "ep_region.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CHANNELS 4096

typedef struct quant_buf {
  float scales[MAX_CHANNELS];
  int32_t zeros[MAX_CHANNELS];
} quant_buf;

static bool attrs_ok(ep_region *r, const char *const *allowed) {
  char buf[64];
  const char *bad = ep_attr_unknown(r->o, r->node, allowed, buf, sizeof buf);
  if (bad)
    rg_fail(r, bad, "attribute '%s' is not supported", bad);
  return !bad;
}

static int64_t attr_int(ep_region *r, const char *name, int64_t def) {
  return ep_attr_int(r->o, r->node, name, def);
}

static bool desc_of(ep_region *r, dg_tensor t, dg_tensor_desc *d) {
  return t.id && dg_graph_tensor_desc(r->g, t, d) == DG_OK;
}

/* ONNX float ops on raw integers mean something else than directgraph's
 * quantised ops, so only float tensors go to them. */
static bool need_float(ep_region *r, dg_tensor t, const char *what) {
  dg_tensor_desc d;
  if (!desc_of(r, t, &d))
    return false;
  if (d.dtype != DG_DTYPE_F32 && d.dtype != DG_DTYPE_F16) {
    rg_fail(r, what, "%s input: only float tensors are taken",
            dg_dtype_name(d.dtype));
    return false;
  }
  return true;
}

/* ---- quantisation parameters from constant inputs ---- */

static bool read_quant(ep_region *r, int si, int zi, int64_t axis,
                       dg_quant_params *q, quant_buf *buf,
                       dg_dtype *zero_type) {
  ep_const zc;
  int ns = 0, nz = 0;
  int64_t *z64 = malloc(sizeof(int64_t) * MAX_CHANNELS);
  bool has_z = zi >= 0 && rg_has_input(r, zi);
  bool ok = z64 != NULL;
  if (ok && (!rg_has_input(r, si) || (has_z && !rg_const(r, zi, &zc)))) {
    rg_fail(r, "scale", "scales and zero points must be constant initializers");
    ok = false;
  }
  ok = ok && rg_const_floats(r, si, buf->scales, MAX_CHANNELS, &ns);
  ok = ok && (!has_z || rg_const_ints(r, zi, z64, MAX_CHANNELS, &nz));
  if (ok && has_z && nz == 1 && ns > 1) { /* one zero point for all */
    for (int i = 1; i < ns; i++)
      z64[i] = z64[0];
    nz = ns;
  }
  if (ok && has_z && nz != ns) {
    rg_fail(r, "zero_point", "%d scales but %d zero points", ns, nz);
    ok = false;
  }
  if (ok && ns < 1) {
    rg_fail(r, "scale", "no scale");
    ok = false;
  }
  if (ok) {
    if (zero_type)
      *zero_type = has_z ? ep_dtype_of(zc.elem) : DG_DTYPE_U8;
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

/* ---- conv and pooling ---- */

static bool window_params(ep_region *r, int rank, dg_padding *mode,
                          int32_t *pads, int32_t *strides, int32_t *dil) {
  int64_t v[8];
  char s[32];
  *mode = DG_PADDING_EXPLICIT;
  if (ep_attr_string(r->o, r->node, "auto_pad", s, sizeof s)) {
    if (!strcmp(s, "SAME_UPPER"))
      *mode = DG_PADDING_SAME_UPPER;
    else if (!strcmp(s, "SAME_LOWER"))
      *mode = DG_PADDING_SAME_LOWER;
    else if (!strcmp(s, "VALID"))
      *mode = DG_PADDING_VALID;
    else if (strcmp(s, "NOTSET") && s[0]) {
      rg_fail(r, "auto_pad", "auto_pad '%s' is not supported", s);
      return false;
    }
  }
  if (rank != 4) {
    rg_fail(r, "kernel_shape", "only 2-D windows (rank 4) are supported, "
            "got rank %d", rank);
    return false;
  }
  int n = ep_attr_ints(r->o, r->node, "pads", v, 8);
  if (n >= 0 && n != 4) {
    rg_fail(r, "pads", "expected 4 pads");
    return false;
  }
  for (int i = 0; i < 4; i++)
    pads[i] = n == 4 ? (int32_t)v[i] : 0;
  /* ONNX orders pads (begin h, begin w, end h, end w) like ours. */
  n = ep_attr_ints(r->o, r->node, "strides", v, 8);
  if (n >= 0 && n != 2) {
    rg_fail(r, "strides", "expected 2 strides");
    return false;
  }
  strides[0] = n == 2 ? (int32_t)v[0] : 1;
  strides[1] = n == 2 ? (int32_t)v[1] : 1;
  n = ep_attr_ints(r->o, r->node, "dilations", v, 8);
  if (n >= 0 && n != 2) {
    rg_fail(r, "dilations", "expected 2 dilations");
    return false;
  }
  if (dil) {
    dil[0] = n == 2 ? (int32_t)v[0] : 1;
    dil[1] = n == 2 ? (int32_t)v[1] : 1;
  } else if (n == 2 && (v[0] != 1 || v[1] != 1)) {
    rg_fail(r, "dilations", "dilated pooling is not supported");
    return false;
  }
  return true;
}

static bool conv_params(ep_region *r, dg_tensor x, dg_conv2d_params *p) {
  static const char *const ok[] = {"auto_pad", "dilations", "group",
                                   "kernel_shape", "pads", "strides", NULL};
  dg_tensor_desc d;
  if (!attrs_ok(r, ok) || !desc_of(r, x, &d))
    return false;
  memset(p, 0, sizeof *p);
  if (!window_params(r, d.rank, &p->padding, p->pads, p->stride, p->dilation))
    return false;
  p->groups = (int32_t)attr_int(r, "group", 1);
  return true;
}

static void op_conv(ep_region *r) {
  dg_tensor x = rg_input(r, 0, NULL, false);
  dg_conv2d_params p;
  if (!x.id || !need_float(r, x, "X") || !conv_params(r, x, &p))
    return;
  dg_tensor w = rg_input(r, 1, NULL, false);
  dg_tensor b = rg_input(r, 2, NULL, true);
  rg_output(r, 0, dg_graph_conv2d(r->g, r->node_name, x, w, b, &p));
}

static void op_pool(ep_region *r, bool is_max) {
  static const char *const ok_max[] = {"auto_pad", "ceil_mode", "dilations",
                                       "kernel_shape", "pads",
                                       "storage_order", "strides", NULL};
  static const char *const ok_avg[] = {"auto_pad", "ceil_mode",
                                       "count_include_pad", "dilations",
                                       "kernel_shape", "pads", "strides",
                                       NULL};
  if (!attrs_ok(r, is_max ? ok_max : ok_avg))
    return;
  if (r->nout > 1 && r->out[1] && ep_value_name(r->o, r->out[1])[0]) {
    rg_fail(r, "Indices", "the Indices output is not supported");
    return;
  }
  if (attr_int(r, "storage_order", 0) != 0) {
    rg_fail(r, "storage_order", "column-major storage_order is not supported");
    return;
  }
  dg_tensor x = rg_input(r, 0, NULL, false);
  dg_tensor_desc d;
  if (!desc_of(r, x, &d) || (!is_max && !need_float(r, x, "X")))
    return;
  dg_pool2d_params p = {0};
  int64_t k[4];
  if (ep_attr_ints(r->o, r->node, "kernel_shape", k, 4) != 2) {
    rg_fail(r, "kernel_shape", "only 2-D pooling is supported");
    return;
  }
  p.kernel[0] = (int32_t)k[0];
  p.kernel[1] = (int32_t)k[1];
  if (!window_params(r, d.rank, &p.padding, p.pads, p.stride, NULL))
    return;
  p.ceil_mode = (int32_t)attr_int(r, "ceil_mode", 0);
  p.count_include_pad = (int32_t)attr_int(r, "count_include_pad", 0);
  rg_output(r, 0, is_max ? dg_graph_max_pool2d(r->g, r->node_name, x, &p)
                         : dg_graph_avg_pool2d(r->g, r->node_name, x, &p));
}

/* ---- gemm, matmul ---- */

/* Input i, a constant 2-D float matrix, transposed if asked and scaled. */
static dg_tensor const_matrix(ep_region *r, int i, bool transpose, float mul) {
  ep_const c;
  if (!rg_const(r, i, &c) || c.elem != ORT_ELEM_FLOAT || c.rank != 2) {
    rg_fail(r, "B", "expected a constant 2-D float matrix");
    return DG_TENSOR_NONE;
  }
  int64_t R = c.dims[0], C = c.dims[1];
  const float *src = c.data;
  size_t count = (size_t)(R * C) + 1; /* +1: never malloc(0) */
  float *dst = malloc(sizeof(float) * count);
  if (!dst) {
    rg_fail(r, NULL, "out of memory");
    return DG_TENSOR_NONE;
  }
  for (int64_t y = 0; y < R; y++)
    for (int64_t x = 0; x < C; x++)
      dst[transpose ? x * R + y : y * C + x] = src[y * C + x] * mul;
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 2,
                      .dims = {transpose ? C : R, transpose ? R : C}};
  dg_tensor t = dg_graph_constant(r->g, ep_value_name(r->o, r->in[i]), &d,
                                  dst, 0);
  free(dst);
  return t;
}

/* A constant C of N values (or one) folded into a bias of n values. */
static dg_tensor const_bias(ep_region *r, int64_t n, float beta) {
  ep_const c;
  if (!rg_const(r, 2, &c) || c.elem != ORT_ELEM_FLOAT ||
      (c.count != (size_t)n && c.count != 1))
    return DG_TENSOR_NONE;
  float *b = malloc(sizeof(float) * (size_t)n);
  if (!b) {
    rg_fail(r, NULL, "out of memory");
    return DG_TENSOR_NONE;
  }
  for (int64_t j = 0; j < n; j++)
    b[j] = beta * ((const float *)c.data)[c.count == 1 ? 0 : j];
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {n}};
  dg_tensor t = dg_graph_constant(r->g, ep_value_name(r->o, r->in[2]), &d, b,
                                  0);
  free(b);
  return t;
}

static void op_gemm(ep_region *r) {
  static const char *const ok[] = {"alpha", "beta", "transA", "transB", NULL};
  if (!attrs_ok(r, ok))
    return;
  float alpha = ep_attr_float(r->o, r->node, "alpha", 1.0f);
  float beta = ep_attr_float(r->o, r->node, "beta", 1.0f);
  int64_t tb = attr_int(r, "transB", 0);
  if (attr_int(r, "transA", 0)) {
    rg_fail(r, "transA", "transA=1 is not supported");
    return;
  }
  dg_tensor a = rg_input(r, 0, NULL, false);
  if (!a.id || !need_float(r, a, "A"))
    return;
  ep_const bc;
  bool add_c = rg_has_input(r, 2) && beta != 0.0f;
  dg_tensor y;
  if (rg_const(r, 1, &bc)) {
    /* fully_connected wants w as [N, K]: ONNX's B^T when transB = 0. */
    dg_tensor w = const_matrix(r, 1, !tb, alpha);
    dg_tensor_desc wd;
    if (!desc_of(r, w, &wd)) {
      rg_check(r);
      return;
    }
    dg_tensor bias = add_c ? const_bias(r, wd.dims[0], beta) : DG_TENSOR_NONE;
    if (bias.id)
      add_c = false;
    y = dg_graph_fully_connected(r->g, r->node_name, a, w, bias,
                                 DG_ACTIVATION_NONE);
  } else {
    if (tb || alpha != 1.0f) {
      rg_fail(r, tb ? "transB" : "alpha",
              "a non-constant B needs transB=0 and alpha=1");
      return;
    }
    y = dg_graph_matmul(r->g, r->node_name, a, rg_input(r, 1, NULL, false));
  }
  if (add_c) {
    if (beta != 1.0f) {
      rg_fail(r, "beta", "beta != 1 with this C is not supported");
      return;
    }
    y = dg_graph_add(r->g, NULL, y, rg_input(r, 2, NULL, false));
  }
  rg_output(r, 0, y);
}

static void op_matmul(ep_region *r) {
  if (!attrs_ok(r, NULL))
    return;
  dg_tensor a = rg_input(r, 0, NULL, false);
  dg_tensor b = rg_input(r, 1, NULL, false);
  if (need_float(r, a, "A") && need_float(r, b, "B"))
    rg_output(r, 0, dg_graph_matmul(r->g, r->node_name, a, b));
}

/* ---- elementwise and shape ops ---- */

static void op_softmax(ep_region *r) {
  static const char *const ok[] = {"axis", NULL};
  dg_tensor_desc d;
  if (!attrs_ok(r, ok))
    return;
  dg_tensor x = rg_input(r, 0, NULL, false);
  if (!need_float(r, x, "input") || !desc_of(r, x, &d))
    return;
  int64_t axis = attr_int(r, "axis", r->opset >= 13 ? -1 : 1);
  if (axis < 0)
    axis += d.rank;
  if (r->opset >= 13 || axis == d.rank - 1) {
    rg_output(r, 0, dg_graph_softmax(r->g, r->node_name, x, (int32_t)axis));
    return;
  }
  /* Before opset 13: softmax over the flattened [axis:] dims. */
  dg_tensor f = dg_graph_flatten(r->g, NULL, x, (int32_t)axis);
  f = dg_graph_softmax(r->g, r->node_name, f, 1);
  rg_output(r, 0, dg_graph_reshape(r->g, NULL, f, d.rank, d.dims));
}

static void op_clip(ep_region *r) {
  static const char *const ok[] = {"min", "max", NULL};
  if (!attrs_ok(r, ok))
    return;
  float lo = ep_attr_float(r->o, r->node, "min", -INFINITY);
  float hi = ep_attr_float(r->o, r->node, "max", INFINITY);
  for (int i = 1; i <= 2; i++) {
    float v;
    int n = 0;
    if (!rg_has_input(r, i))
      continue;
    if (!rg_const_floats(r, i, &v, 1, &n))
      return;
    if (n == 1)
      *(i == 1 ? &lo : &hi) = v;
  }
  dg_tensor x = rg_input(r, 0, NULL, false);
  if (need_float(r, x, "input"))
    rg_output(r, 0, dg_graph_clip(r->g, r->node_name, x, lo, hi));
}

static void op_reshape(ep_region *r) {
  static const char *const ok[] = {"allowzero", NULL};
  int64_t dims[DG_MAX_RANK];
  int n = 0;
  if (!attrs_ok(r, ok) || !rg_const_ints(r, 1, dims, DG_MAX_RANK, &n))
    return;
  if (attr_int(r, "allowzero", 0))
    for (int i = 0; i < n; i++)
      if (dims[i] == 0) {
        rg_fail(r, "allowzero", "allowzero=1 with a zero dimension");
        return;
      }
  dg_tensor x = rg_input(r, 0, NULL, false);
  rg_output(r, 0, dg_graph_reshape(r->g, r->node_name, x, n, dims));
}

static void op_concat(ep_region *r) {
  static const char *const ok[] = {"axis", NULL};
  if (!attrs_ok(r, ok))
    return;
  dg_tensor *ts = calloc((size_t)(r->nin ? r->nin : 1), sizeof *ts);
  if (!ts) {
    rg_fail(r, NULL, "out of memory");
    return;
  }
  dg_tensor_desc d0 = {0}, d = {0};
  for (int i = 0; i < r->nin && !r->failed; i++) {
    ts[i] = rg_input(r, i, NULL, false);
    /* ONNX joins raw integers: only equal quantisations mean the same. */
    if (desc_of(r, ts[i], &d) && i == 0)
      d0 = d;
    else if (!r->failed && (d.dtype == DG_DTYPE_I8 || d.dtype == DG_DTYPE_U8) &&
             (d.quant.scale != d0.quant.scale ||
              d.quant.zero_point != d0.quant.zero_point))
      rg_fail(r, "inputs", "int8 inputs with different quantisations");
  }
  if (!r->failed)
    rg_output(r, 0, dg_graph_concat(r->g, r->node_name, ts, r->nin,
                                    (int32_t)attr_int(r, "axis",
                                                      r->opset < 4 ? 1 : 0)));
  free(ts);
}

static void op_flatten(ep_region *r) {
  static const char *const ok[] = {"axis", NULL};
  if (attrs_ok(r, ok))
    rg_output(r, 0, dg_graph_flatten(r->g, r->node_name,
                                     rg_input(r, 0, NULL, false),
                                     (int32_t)attr_int(r, "axis", 1)));
}

static void op_unary(ep_region *r, bool relu, bool global_pool) {
  if (!attrs_ok(r, NULL))
    return;
  dg_tensor x = rg_input(r, 0, NULL, false);
  if (!need_float(r, x, "input"))
    return;
  if (relu)
    rg_output(r, 0, dg_graph_relu(r->g, r->node_name, x));
  else if (global_pool)
    rg_output(r, 0, dg_graph_global_avg_pool(r->g, r->node_name, x));
}

static void op_add(ep_region *r) {
  if (!attrs_ok(r, NULL))
    return;
  dg_tensor a = rg_input(r, 0, NULL, false);
  dg_tensor b = rg_input(r, 1, NULL, false);
  if (need_float(r, a, "A") && need_float(r, b, "B"))
    rg_output(r, 0, dg_graph_add(r->g, r->node_name, a, b));
}

/* ---- quantisation ---- */

static void op_quantize(ep_region *r, quant_buf *qb) {
  static const char *const ok[] = {"axis", "saturate", NULL};
  dg_tensor_desc d;
  dg_quant_params q;
  dg_dtype zt;
  if (!attrs_ok(r, ok))
    return;
  dg_tensor x = rg_input(r, 0, NULL, false);
  if (!need_float(r, x, "x") || !desc_of(r, x, &d))
    return;
  int64_t axis = attr_int(r, "axis", 1);
  if (axis < 0)
    axis += d.rank;
  if (read_quant(r, 1, 2, axis, &q, qb, &zt))
    rg_output(r, 0, dg_graph_quantize(r->g, r->node_name, x, zt, &q));
}

static void op_dequantize(ep_region *r, quant_buf *qb) {
  static const char *const ok[] = {"axis", NULL};
  dg_quant_params q;
  ep_const xc;
  int elem = 0, rank = 0;
  int64_t dims[DG_MAX_RANK];
  if (!attrs_ok(r, ok))
    return;
  int64_t axis = attr_int(r, "axis", 1);
  /* A negative axis counts from x's rank, known before x is a tensor. */
  if (axis < 0 && rg_const(r, 0, &xc))
    axis += xc.rank;
  else if (axis < 0 && ep_value_shape(r->o, r->in[0], &elem, &rank, dims))
    axis += rank;
  if (!read_quant(r, 1, 2, axis, &q, qb, NULL))
    return;
  dg_tensor x = rg_input(r, 0, &q, false);
  rg_output(r, 0, dg_graph_dequantize(r->g, r->node_name, x));
}

static void op_qlinear_conv(ep_region *r, quant_buf *qb) {
  dg_quant_params xq, wq, yq;
  dg_dtype yt;
  dg_conv2d_params p;
  if (!read_quant(r, 1, 2, 0, &xq, &qb[0], NULL) ||
      !read_quant(r, 4, 5, 0, &wq, &qb[1], NULL) ||
      !read_quant(r, 6, 7, 0, &yq, &qb[2], &yt))
    return;
  dg_tensor x = rg_input(r, 0, &xq, false);
  if (!x.id || !conv_params(r, x, &p))
    return;
  dg_tensor w = rg_input(r, 3, &wq, false);
  dg_tensor b = rg_input(r, 8, NULL, true);
  rg_output(r, 0, dg_graph_qconv2d(r->g, r->node_name, x, w, b, &p, yt, &yq));
}

static void op_qlinear_matmul(ep_region *r, quant_buf *qb) {
  dg_quant_params aq, bq, yq;
  dg_dtype yt;
  ep_const bc;
  int elem = 0, rank = 0;
  int64_t dims[DG_MAX_RANK];
  /* Per-column b scales run along b's last axis. */
  int64_t baxis = 1;
  if (rg_const(r, 3, &bc) && bc.rank)
    baxis = bc.rank - 1;
  else if (rg_has_input(r, 3) &&
           ep_value_shape(r->o, r->in[3], &elem, &rank, dims) && rank)
    baxis = rank - 1;
  if (!read_quant(r, 1, 2, 0, &aq, &qb[0], NULL) ||
      !read_quant(r, 4, 5, baxis, &bq, &qb[1], NULL) ||
      !read_quant(r, 6, 7, 0, &yq, &qb[2], &yt))
    return;
  dg_tensor a = rg_input(r, 0, &aq, false);
  dg_tensor b = rg_input(r, 3, &bq, false);
  rg_output(r, 0, dg_graph_qmatmul(r->g, r->node_name, a, b, yt, &yq));
}

bool ep_translate_node(ep_region *r, const OrtNode *node) {
  const char *dom = ep_node_domain(r->o, node);
  const char *op = ep_node_op(r->o, node);
  if (dom[0] && strcmp(dom, "ai.onnx")) {
    rg_fail(r, "domain", "operator domain '%s' is not supported", dom);
    return false;
  }
  quant_buf *qb = NULL;
  if (!strncmp(op, "Quantize", 8) || !strncmp(op, "Dequantize", 10) ||
      !strncmp(op, "QLinear", 7)) {
    qb = malloc(3 * sizeof *qb); /* the builder copies the arrays */
    if (!qb) {
      rg_fail(r, NULL, "out of memory");
      return false;
    }
  }
  if (!strcmp(op, "Conv")) op_conv(r);
  else if (!strcmp(op, "MaxPool")) op_pool(r, true);
  else if (!strcmp(op, "AveragePool")) op_pool(r, false);
  else if (!strcmp(op, "GlobalAveragePool")) op_unary(r, false, true);
  else if (!strcmp(op, "Gemm")) op_gemm(r);
  else if (!strcmp(op, "MatMul")) op_matmul(r);
  else if (!strcmp(op, "Softmax")) op_softmax(r);
  else if (!strcmp(op, "Relu")) op_unary(r, true, false);
  else if (!strcmp(op, "Clip")) op_clip(r);
  else if (!strcmp(op, "Add")) op_add(r);
  else if (!strcmp(op, "Flatten")) op_flatten(r);
  else if (!strcmp(op, "Reshape")) op_reshape(r);
  else if (!strcmp(op, "Concat")) op_concat(r);
  else if (!strcmp(op, "QuantizeLinear")) op_quantize(r, qb);
  else if (!strcmp(op, "DequantizeLinear")) op_dequantize(r, qb);
  else if (!strcmp(op, "QLinearConv")) op_qlinear_conv(r, qb);
  else if (!strcmp(op, "QLinearMatMul")) op_qlinear_matmul(r, qb);
  else
    rg_fail(r, "op_type", "operator '%s' is not supported", op);
  free(qb);
  return !rg_check(r);
}
