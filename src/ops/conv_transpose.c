/* conv_transpose2d: parameter checks, shape rule, cost, reference. */
#include "build.h"
#include "ops.h"

#include <stdio.h>

static bool fail_int(dg_build *b, dg_status st, const char *field,
                     const char *expected, int64_t v, const char *why) {
  char got[32];
  snprintf(got, sizeof got, "%lld", (long long)v);
  dg_build_fail(b, st, field, expected, got, "%s", why);
  return false;
}

/* Resolves the params (zero means default) into p and the output dims
 * (geometry in graph.h's comment). */
static bool ct_params(dg_build *b, const dg_tensor_info *x,
                      const dg_tensor_info *w, const dg_conv2d_params *cp,
                      const int32_t *op, dg_node_params *p, int64_t *out_dims) {
  if (!cp) {
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "params", "non-NULL", "NULL",
                  "conv transpose parameters missing");
    return false;
  }
  for (int i = 0; i < 2; i++) {
    if (cp->stride[i] < 0)
      return fail_int(b, DG_ERROR_INVALID_ARGUMENT, "params.stride",
                      ">= 1 (0 = default 1)", cp->stride[i],
                      "must be positive");
    if (cp->dilation[i] < 0)
      return fail_int(b, DG_ERROR_INVALID_ARGUMENT, "params.dilation",
                      ">= 1 (0 = default 1)", cp->dilation[i],
                      "must be positive");
    p->stride[i] = cp->stride[i] ? cp->stride[i] : 1;
    p->dilation[i] = cp->dilation[i] ? cp->dilation[i] : 1;
  }
  if (cp->padding < DG_PADDING_EXPLICIT || cp->padding > DG_PADDING_SAME_LOWER)
    return fail_int(b, DG_ERROR_INVALID_ARGUMENT, "params.padding",
                    "a dg_padding value", cp->padding, "unknown padding mode");
  for (int i = 0; i < 4; i++)
    if (cp->pads[i] < 0)
      return fail_int(b, DG_ERROR_INVALID_ARGUMENT, "params.pads", ">= 0",
                      cp->pads[i], "negative padding");
  if (cp->activation < DG_ACTIVATION_NONE ||
      cp->activation > DG_ACTIVATION_RELU6)
    return fail_int(b, DG_ERROR_INVALID_ARGUMENT, "params.activation",
                    "none, relu or relu6", cp->activation,
                    "unknown activation");
  p->activation = cp->activation;
  if (cp->groups < 0)
    return fail_int(b, DG_ERROR_INVALID_ARGUMENT, "params.groups", ">= 1",
                    cp->groups, "negative group count");
  p->groups = cp->groups ? cp->groups : 1;
  if (!dg_build_rank(b, x, "x", 4) || !dg_build_rank(b, w, "w", 4))
    return false;
  int64_t C = x->desc.dims[1];
  if (w->desc.dims[0] != C) {
    char exp[48];
    snprintf(exp, sizeof exp, "C_in = %lld", (long long)C);
    return fail_int(b, DG_ERROR_INVALID_SHAPE, "w.dims[0]", exp,
                    w->desc.dims[0],
                    "weights are [C_in, C_out/groups, KH, KW]");
  }
  if (C % p->groups) {
    char exp[48];
    snprintf(exp, sizeof exp, "a divisor of C_in = %lld", (long long)C);
    return fail_int(b, DG_ERROR_INVALID_ARGUMENT, "params.groups", exp,
                    p->groups, "groups must divide the input channels");
  }
  out_dims[0] = x->desc.dims[0];
  out_dims[1] = w->desc.dims[1] * p->groups;
  for (int i = 0; i < 2; i++) {
    int64_t k = w->desc.dims[2 + i], in = x->desc.dims[2 + i];
    if (k > INT32_MAX)
      return fail_int(b, DG_ERROR_INVALID_SHAPE, i ? "w.dims[3]" : "w.dims[2]",
                      "at most 2^31 - 1", k, "kernel dimension too large");
    p->kernel[i] = (int32_t)k;
    int32_t o = op ? op[i] : 0;
    int32_t lim = p->stride[i] > p->dilation[i] ? p->stride[i] : p->dilation[i];
    if (o < 0 || o >= lim) {
      char exp[48];
      snprintf(exp, sizeof exp, "0 <= value < max(stride, dilation) = %d", lim);
      return fail_int(b, DG_ERROR_INVALID_ARGUMENT, "output_padding", exp, o,
                      "bad output padding");
    }
    p->output_padding[i] = o;
    /* The full (uncropped) output length, then the crop. */
    int64_t full = p->stride[i] * (in - 1) + o + (k - 1) * p->dilation[i] + 1;
    int64_t pb = cp->pads[i], pe = cp->pads[i + 2];
    if (cp->padding == DG_PADDING_VALID)
      pb = pe = 0;
    else if (cp->padding != DG_PADDING_EXPLICIT) {
      int64_t total = full - in * p->stride[i];
      if (total < 0)
        return fail_int(b, DG_ERROR_INVALID_SHAPE, "params.padding",
                        "a kernel reaching H * stride", full,
                        "SAME padding would need negative pads");
      pb = cp->padding == DG_PADDING_SAME_UPPER ? total / 2 : total - total / 2;
      pe = total - pb;
    }
    int64_t len = full - pb - pe;
    if (len < 1 || pb > INT32_MAX || pe > INT32_MAX)
      return fail_int(b, DG_ERROR_INVALID_SHAPE, "params.pads",
                      "pads that leave an output", len,
                      "the padding crops the whole output");
    p->pads[i] = (int32_t)pb;
    p->pads[i + 2] = (int32_t)pe;
    out_dims[2 + i] = len;
  }
  return true;
}

dg_tensor dg_graph_conv_transpose2d(dg_graph *g, const char *name, dg_tensor x,
                                    dg_tensor w, dg_tensor bias,
                                    const dg_conv2d_params *params,
                                    const int32_t output_padding[2]) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_CONV_TRANSPOSE2D, name))
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
  if (!ct_params(&b, xi, wi, params, output_padding, &p, out.dims))
    return DG_TENSOR_NONE;
  if (bi && (!dg_build_same_dtype(&b, xi, bi, "bias") || bi->desc.rank != 1 ||
             bi->desc.dims[0] != out.dims[1])) {
    if (dg_graph_status(g) == DG_OK) {
      char exp[32], got[96];
      snprintf(exp, sizeof exp, "[%lld]", (long long)out.dims[1]);
      dg_format_dims(got, sizeof got, bi->desc.rank, bi->desc.dims);
      dg_build_fail(&b, DG_ERROR_INVALID_SHAPE, "bias", exp, got,
                    "bias must have one value per output channel");
    }
    return DG_TENSOR_NONE;
  }
  uint32_t ins[3] = {x.id, w.id, bias.id};
  return dg_build_finish(&b, ins, 3, &out, &p);
}

/* ---- reference ---- */

typedef struct ct_geom {
  int64_t N, C, H, W, O, OH, OW, KH, KW, G, CG, OG;
} ct_geom;

static ct_geom geom(const dg_ir *ir, const dg_node *n) {
  const dg_tensor_desc *x = &dg_ir_tensor(ir, n->inputs[0])->desc;
  const dg_tensor_desc *w = &dg_ir_tensor(ir, n->inputs[1])->desc;
  const dg_tensor_desc *y = &dg_ir_tensor(ir, n->output)->desc;
  ct_geom g = {x->dims[0], x->dims[1],  x->dims[2], x->dims[3],
               y->dims[1], y->dims[2],  y->dims[3], w->dims[2],
               w->dims[3], n->p.groups, 0,          w->dims[1]};
  g.CG = g.C / g.G;
  return g;
}

/* Scatter form (each input adds its window into the output), unlike the
 * targets' gather: two derivations that must agree. */
void dg_ref_conv_transpose2d(const dg_ir *ir, const dg_node *n,
                             const double *const *in, double *out) {
  ct_geom g = geom(ir, n);
  const dg_node_params *p = &n->p;
  int64_t total = g.N * g.O * g.OH * g.OW;
  for (int64_t i = 0; i < total; i++)
    out[i] = in[2] ? in[2][i / (g.OH * g.OW) % g.O] : 0;
  for (int64_t b = 0; b < g.N; b++)
    for (int64_t c = 0; c < g.C; c++) {
      int64_t grp = c / g.CG;
      for (int64_t ih = 0; ih < g.H; ih++)
        for (int64_t iw = 0; iw < g.W; iw++) {
          double xv = in[0][((b * g.C + c) * g.H + ih) * g.W + iw];
          for (int64_t oc = 0; oc < g.OG; oc++)
            for (int64_t kh = 0; kh < g.KH; kh++) {
              int64_t oh = ih * p->stride[0] + kh * p->dilation[0] - p->pads[0];
              if (oh < 0 || oh >= g.OH)
                continue;
              for (int64_t kw = 0; kw < g.KW; kw++) {
                int64_t ow =
                    iw * p->stride[1] + kw * p->dilation[1] - p->pads[1];
                if (ow < 0 || ow >= g.OW)
                  continue;
                double wv = in[1][((c * g.OG + oc) * g.KH + kh) * g.KW + kw];
                out[((b * g.O + grp * g.OG + oc) * g.OH + oh) * g.OW + ow] +=
                    xv * wv;
              }
            }
        }
    }
  for (int64_t i = 0; i < total; i++) {
    double v = out[i];
    if (p->activation != DG_ACTIVATION_NONE && v < 0)
      v = 0;
    if (p->activation == DG_ACTIVATION_RELU6 && v > 6)
      v = 6;
    out[i] = v;
  }
}

double dg_flops_conv_transpose2d(const dg_ir *ir, const dg_node *n) {
  ct_geom g = geom(ir, n);
  return 2.0 * (double)(g.N * g.C * g.H * g.W) * (double)(g.OG * g.KH * g.KW);
}
