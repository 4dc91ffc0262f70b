/* conv2d and qconv2d: parameter checks, shape rule, cost, reference. */
#include "build.h"
#include "ops.h"
#include "requant.h"

#include <stdio.h>

/* Resolves zero-means-default params and validates them; fills the node
 * params and the output dims. */
static bool conv_params(dg_build *b, const dg_tensor_info *x,
                        const dg_tensor_info *w, const dg_conv2d_params *cp,
                        dg_node_params *p, int64_t *out_dims) {
  char got[96], exp[96];
  if (!cp) {
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "params", "non-NULL", "NULL",
                  "conv parameters missing");
    return false;
  }
  for (int i = 0; i < 2; i++) {
    if (cp->stride[i] < 0 || cp->dilation[i] < 0) {
      snprintf(got, sizeof got, "%d",
               cp->stride[i] < 0 ? cp->stride[i] : cp->dilation[i]);
      dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT,
                    cp->stride[i] < 0 ? "params.stride" : "params.dilation",
                    ">= 1 (0 = default 1)", got, "must be positive");
      return false;
    }
    p->stride[i] = cp->stride[i] ? cp->stride[i] : 1;
    p->dilation[i] = cp->dilation[i] ? cp->dilation[i] : 1;
  }
  if (cp->padding < DG_PADDING_EXPLICIT ||
      cp->padding > DG_PADDING_SAME_LOWER) {
    snprintf(got, sizeof got, "%d", (int)cp->padding);
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "params.padding",
                  "a dg_padding value", got, "unknown padding mode");
    return false;
  }
  for (int i = 0; i < 4; i++) {
    if (cp->pads[i] < 0) {
      snprintf(got, sizeof got, "%d", cp->pads[i]);
      dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "params.pads", ">= 0", got,
                    "negative padding");
      return false;
    }
    p->pads[i] = cp->pads[i];
  }
  if (cp->activation < DG_ACTIVATION_NONE ||
      cp->activation > DG_ACTIVATION_RELU6) {
    snprintf(got, sizeof got, "%d", (int)cp->activation);
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "params.activation",
                  "none, relu or relu6", got, "unknown activation");
    return false;
  }
  p->activation = cp->activation;
  if (cp->groups < 0) {
    snprintf(got, sizeof got, "%d", cp->groups);
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "params.groups", ">= 1", got,
                  "negative group count");
    return false;
  }
  p->groups = cp->groups ? cp->groups : 1;
  if (!dg_build_rank(b, x, "x", 4) || !dg_build_rank(b, w, "w", 4))
    return false;
  int64_t C = x->desc.dims[1], O = w->desc.dims[0];
  if (C % p->groups || O % p->groups) {
    snprintf(exp, sizeof exp, "a divisor of C=%lld and O=%lld", (long long)C,
             (long long)O);
    snprintf(got, sizeof got, "%d", p->groups);
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "params.groups", exp, got,
                  "groups must divide the input and output channels");
    return false;
  }
  if (w->desc.dims[1] * p->groups != C) {
    snprintf(exp, sizeof exp, "w.dims[1] = C/groups = %lld",
             (long long)(C / p->groups));
    snprintf(got, sizeof got, "%lld", (long long)w->desc.dims[1]);
    dg_build_fail(b, DG_ERROR_INVALID_SHAPE, "w.dims[1]", exp, got,
                  "weight input channels do not match x");
    return false;
  }
  for (int i = 2; i < 4; i++)
    if (w->desc.dims[i] > INT32_MAX) {
      char got[32];
      snprintf(got, sizeof got, "%lld", (long long)w->desc.dims[i]);
      dg_build_fail(b, DG_ERROR_INVALID_SHAPE,
                    i == 2 ? "w.dims[2]" : "w.dims[3]", "at most 2^31 - 1", got,
                    "kernel dimension too large");
      return false;
    }
  p->kernel[0] = (int32_t)w->desc.dims[2];
  p->kernel[1] = (int32_t)w->desc.dims[3];
  out_dims[0] = x->desc.dims[0];
  out_dims[1] = O;
  for (int i = 0; i < 2; i++) {
    int64_t o = dg_window_out(x->desc.dims[2 + i], p->kernel[i], p->stride[i],
                              p->dilation[i], cp->padding, &p->pads[i],
                              &p->pads[i + 2], 0);
    if (o < 1) {
      snprintf(exp, sizeof exp, "padded input >= dilated kernel %lld",
               (long long)((p->kernel[i] - 1) * (int64_t)p->dilation[i] + 1));
      snprintf(got, sizeof got, "%lld",
               (long long)(x->desc.dims[2 + i] + p->pads[i] + p->pads[i + 2]));
      dg_build_fail(b, DG_ERROR_INVALID_SHAPE, i ? "x.dims[3]" : "x.dims[2]",
                    exp, got, "the kernel does not fit in the padded input");
      return false;
    }
    out_dims[2 + i] = o;
  }
  return true;
}

static bool check_bias(dg_build *b, const dg_tensor_info *bias, int64_t O,
                       unsigned dtypes) {
  if (!bias)
    return true;
  if (!dg_build_dtype(b, bias, "bias", dtypes))
    return false;
  if (bias->desc.rank != 1 || bias->desc.dims[0] != O) {
    char exp[32], got[96];
    snprintf(exp, sizeof exp, "[%lld]", (long long)O);
    dg_format_dims(got, sizeof got, bias->desc.rank, bias->desc.dims);
    dg_build_fail(b, DG_ERROR_INVALID_SHAPE, "bias", exp, got,
                  "bias must have one value per output channel");
    return false;
  }
  return true;
}

dg_tensor dg_graph_conv2d(dg_graph *g, const char *name, dg_tensor x,
                          dg_tensor w, dg_tensor bias,
                          const dg_conv2d_params *params) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_CONV2D, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  const dg_tensor_info *wi = ok ? dg_build_tensor(&b, w, "w", false, &ok) : 0;
  const dg_tensor_info *bi =
      ok ? dg_build_tensor(&b, bias, "bias", true, &ok) : 0;
  if (!ok || !dg_build_dtype(&b, xi, "x", DG_FLOAT_TYPES) ||
      !dg_build_same_dtype(&b, xi, wi, "w"))
    return DG_TENSOR_NONE;
  dg_node_params p = {0};
  dg_tensor_desc out = {.dtype = xi->desc.dtype, .rank = 4};
  if (!conv_params(&b, xi, wi, params, &p, out.dims) ||
      !check_bias(&b, bi, wi->desc.dims[0], DG_BIT(xi->desc.dtype)))
    return DG_TENSOR_NONE;
  uint32_t ins[3] = {x.id, w.id, bias.id};
  return dg_build_finish(&b, ins, 3, &out, &p);
}

dg_tensor dg_graph_qconv2d(dg_graph *g, const char *name, dg_tensor x,
                           dg_tensor w, dg_tensor bias,
                           const dg_conv2d_params *params, dg_dtype y_dtype,
                           const dg_quant_params *y_quant) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_QCONV2D, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  const dg_tensor_info *wi = ok ? dg_build_tensor(&b, w, "w", false, &ok) : 0;
  const dg_tensor_info *bi =
      ok ? dg_build_tensor(&b, bias, "bias", true, &ok) : 0;
  if (!ok || !dg_build_dtype(&b, xi, "x", DG_Q8_TYPES) ||
      !dg_build_dtype(&b, wi, "w", DG_Q8_TYPES) ||
      !dg_build_quant(&b, &xi->desc, "x", -1) ||
      !dg_build_quant(&b, &wi->desc, "w", 0))
    return DG_TENSOR_NONE;
  dg_node_params p = {0};
  dg_tensor_desc out = {.dtype = y_dtype, .rank = 4};
  if (!conv_params(&b, xi, wi, params, &p, out.dims) ||
      !check_bias(&b, bi, wi->desc.dims[0], DG_BIT(DG_DTYPE_I32)))
    return DG_TENSOR_NONE;
  if (y_dtype != DG_DTYPE_I8 && y_dtype != DG_DTYPE_U8) {
    dg_build_fail(&b, DG_ERROR_INVALID_DTYPE, "y_dtype", "i8 or u8",
                  dg_dtype_name(y_dtype), "quantised output dtype");
    return DG_TENSOR_NONE;
  }
  if (!y_quant) {
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "y_quant", "non-NULL", "NULL",
                  "output quantisation missing");
    return DG_TENSOR_NONE;
  }
  out.quant = *y_quant;
  if (!dg_build_quant(&b, &out, "y", -1) ||
      !dg_build_requant(&b, &xi->desc, &wi->desc, &out))
    return DG_TENSOR_NONE;
  uint32_t ins[3] = {x.id, w.id, bias.id};
  return dg_build_finish(&b, ins, 3, &out, &p);
}

/* ---- reference ---- */

typedef struct conv_geom {
  int64_t N, C, H, W, O, OH, OW, KH, KW, G, CG, OG;
} conv_geom;

static conv_geom geom(const dg_ir *ir, const dg_node *n) {
  const dg_tensor_desc *x = &dg_ir_tensor(ir, n->inputs[0])->desc;
  const dg_tensor_desc *w = &dg_ir_tensor(ir, n->inputs[1])->desc;
  const dg_tensor_desc *y = &dg_ir_tensor(ir, n->output)->desc;
  conv_geom g = {x->dims[0], x->dims[1],  x->dims[2], x->dims[3],
                 w->dims[0], y->dims[2],  y->dims[3], w->dims[2],
                 w->dims[3], n->p.groups, 0,          0};
  g.CG = g.C / g.G;
  g.OG = g.O / g.G;
  return g;
}

/* Sum over the window of (x - zx) * (w - zw), in double (exact for ints). */
static double conv_dot(const conv_geom *g, const dg_node *n, const double *x,
                       const double *w, int64_t b, int64_t o, int64_t oh,
                       int64_t ow, double zx, double zw) {
  double acc = 0;
  int64_t grp = o / g->OG;
  for (int64_t c = 0; c < g->CG; c++)
    for (int64_t kh = 0; kh < g->KH; kh++) {
      int64_t ih = oh * n->p.stride[0] - n->p.pads[0] + kh * n->p.dilation[0];
      if (ih < 0 || ih >= g->H)
        continue;
      for (int64_t kw = 0; kw < g->KW; kw++) {
        int64_t iw = ow * n->p.stride[1] - n->p.pads[1] + kw * n->p.dilation[1];
        if (iw < 0 || iw >= g->W)
          continue;
        double xv = x[((b * g->C + grp * g->CG + c) * g->H + ih) * g->W + iw];
        double wv = w[((o * g->CG + c) * g->KH + kh) * g->KW + kw];
        acc += (xv - zx) * (wv - zw);
      }
    }
  return acc;
}

static double activate(double v, dg_activation a) {
  if (a != DG_ACTIVATION_NONE && v < 0)
    v = 0;
  if (a == DG_ACTIVATION_RELU6 && v > 6)
    v = 6;
  return v;
}

void dg_ref_conv2d(const dg_ir *ir, const dg_node *n, const double *const *in,
                   double *out) {
  conv_geom g = geom(ir, n);
  for (int64_t b = 0; b < g.N; b++)
    for (int64_t o = 0; o < g.O; o++)
      for (int64_t oh = 0; oh < g.OH; oh++)
        for (int64_t ow = 0; ow < g.OW; ow++) {
          double v = conv_dot(&g, n, in[0], in[1], b, o, oh, ow, 0, 0);
          int64_t at = ((b * g.O + o) * g.OH + oh) * g.OW + ow;
          if (in[2])
            v += in[2][o];
          /* a residual add fused by the compile-time passes (never built:
           * runtime/fuse_residual.h), before the activation */
          if (n->input_count > 3 && in[3])
            v += in[3][at];
          out[at] = activate(v, n->p.activation);
          /* a unary node fused by the passes (runtime/fuse_unary.h) */
          if (n->p.fn)
            out[at] = dg_unary_value(n->p.fn, out[at], n->p.alpha, n->p.beta);
        }
}

void dg_ref_qconv2d(const dg_ir *ir, const dg_node *n, const double *const *in,
                    double *out) {
  conv_geom g = geom(ir, n);
  const dg_tensor_desc *xd = &dg_ir_tensor(ir, n->inputs[0])->desc;
  const dg_tensor_desc *wd = &dg_ir_tensor(ir, n->inputs[1])->desc;
  const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
  int64_t dlo, dhi;
  dg_dtype_int_range(yd->dtype, &dlo, &dhi);
  int32_t lo, hi;
  dg_requant_clamp(n->p.activation, yd->quant.scale, yd->quant.zero_point,
                   (int32_t)dlo, (int32_t)dhi, &lo, &hi);
  for (int64_t o = 0; o < g.O; o++) {
    float m = dg_requant_multiplier(xd->quant.scale, dg_quant_scale(wd, o),
                                    yd->quant.scale);
    for (int64_t b = 0; b < g.N; b++)
      for (int64_t oh = 0; oh < g.OH; oh++)
        for (int64_t ow = 0; ow < g.OW; ow++) {
          double acc = conv_dot(&g, n, in[0], in[1], b, o, oh, ow,
                                xd->quant.zero_point, dg_quant_zero(wd, o));
          if (in[2])
            acc += in[2][o];
          out[((b * g.O + o) * g.OH + oh) * g.OW + ow] =
              dg_requant((int32_t)acc, m, yd->quant.zero_point, lo, hi);
        }
  }
}

static double conv_flops(const dg_ir *ir, const dg_node *n) {
  conv_geom g = geom(ir, n);
  return 2.0 * g.N * g.O * g.OH * g.OW * g.CG * g.KH * g.KW;
}
double dg_flops_conv2d(const dg_ir *ir, const dg_node *n) {
  return conv_flops(ir, n);
}
double dg_flops_qconv2d(const dg_ir *ir, const dg_node *n) {
  return conv_flops(ir, n);
}
