/* resize: parameter checks, shape rule, the sampling rule every target
 * tabulates (dg_resize_tap), cost and reference. */
#include "build.h"
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Axis i's scale and output length from the params: a size of 0 means
 * floor(in * scale), a scale of 0 means size / in. */
static bool resize_axis(dg_build *b, const dg_resize_params *rp, int i,
                        int64_t in, float *scale, int64_t *out) {
  char got[64];
  float s = rp->scales[i];
  int64_t n = rp->sizes[i];
  if (n < 0) {
    snprintf(got, sizeof got, "sizes[%d] = %lld", i, (long long)n);
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "params.sizes",
                  ">= 1 (0: from the scale)", got, "negative output size");
    return false;
  }
  if (!(s >= 0) || isinf(s)) {
    snprintf(got, sizeof got, "scales[%d] = %g", i, (double)s);
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "params.scales",
                  "finite and > 0 (0: from the size)", got, "bad scale");
    return false;
  }
  if (s == 0 && n == 0) {
    snprintf(got, sizeof got, "scales[%d] = 0, sizes[%d] = 0", i, i);
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "params.scales",
                  "a scale or a size for H and W", got,
                  "neither a scale nor a size given");
    return false;
  }
  if (n == 0) {
    double len = floor((double)in * s);
    if (len < 1 || len > INT32_MAX) {
      snprintf(got, sizeof got, "scales[%d] = %g on %lld", i, (double)s,
               (long long)in);
      dg_build_fail(b, DG_ERROR_INVALID_SHAPE, "params.scales",
                    "an output length in [1, 2^31 - 1]", got,
                    "the scale gives an empty or oversized axis");
      return false;
    }
    n = (int64_t)len;
  }
  if (s == 0)
    s = (float)((double)n / (double)in);
  if (!(s > 0) || isinf(s)) { /* a size whose ratio under- or overflows */
    snprintf(got, sizeof got, "sizes[%d] = %lld on %lld", i, (long long)n,
             (long long)in);
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "params.sizes",
                  "a ratio to the input that a float holds", got, "bad size");
    return false;
  }
  *scale = s;
  *out = n;
  return true;
}

dg_tensor dg_graph_resize(dg_graph *g, const char *name, dg_tensor x,
                          const dg_resize_params *rp) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_RESIZE, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  if (!ok)
    return DG_TENSOR_NONE;
  char got[64];
  if (!rp) {
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "params", "non-NULL", "NULL",
                  "resize parameters missing");
    return DG_TENSOR_NONE;
  }
  const struct {
    const char *field, *expected;
    int value, last;
  } enums[3] = {
      {"params.mode", "nearest or linear", (int)rp->mode, DG_RESIZE_LINEAR},
      {"params.coord", "a dg_resize_coord value", (int)rp->coord,
       DG_RESIZE_HALF_PIXEL_SYMMETRIC},
      {"params.nearest", "a dg_resize_nearest value", (int)rp->nearest,
       DG_RESIZE_CEIL},
  };
  for (int i = 0; i < 3; i++)
    if (enums[i].value < 0 || enums[i].value > enums[i].last) {
      snprintf(got, sizeof got, "%d", enums[i].value);
      dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, enums[i].field,
                    enums[i].expected, got, "unknown value");
      return DG_TENSOR_NONE;
    }
  /* Nearest picks stored values, so it serves raw integers too; linear
   * would need a quantisation rule of its own. */
  unsigned types = rp->mode == DG_RESIZE_NEAREST ? DG_FLOAT_TYPES | DG_Q8_TYPES
                                                 : DG_FLOAT_TYPES;
  if (!dg_build_dtype(&b, xi, "x", types) || !dg_build_rank(&b, xi, "x", 4))
    return DG_TENSOR_NONE;
  dg_node_params p = {.resize_mode = rp->mode,
                      .resize_coord = rp->coord,
                      .resize_nearest = rp->nearest};
  dg_tensor_desc out = xi->desc;
  for (int i = 0; i < 2; i++)
    if (!resize_axis(&b, rp, i, xi->desc.dims[2 + i], &p.resize_scales[i],
                     &out.dims[2 + i]))
      return DG_TENSOR_NONE;
  uint32_t ins[1] = {x.id};
  return dg_build_finish(&b, ins, 1, &out, &p);
}

static int64_t clamp_index(double v, int64_t in) {
  return v < 0 ? 0 : v > (double)(in - 1) ? in - 1 : (int64_t)v;
}

void dg_resize_tap(const dg_node_params *p, int axis, int64_t in, int64_t out,
                   int64_t o, int64_t *i0, int64_t *i1, double *w) {
  double s = p->resize_scales[axis], x;
  double len = (double)in * s; /* ONNX's unrounded output length */
  double c = (double)o + 0.5;
  switch ((dg_resize_coord)p->resize_coord) {
  case DG_RESIZE_ASYMMETRIC:
    x = (double)o / s;
    break;
  case DG_RESIZE_ALIGN_CORNERS:
    x = len == 1 ? 0 : (double)o * (double)(in - 1) / (len - 1);
    break;
  case DG_RESIZE_PYTORCH_HALF_PIXEL:
    x = out > 1 ? c / s - 0.5 : 0;
    break;
  case DG_RESIZE_TF_HALF_PIXEL_FOR_NN:
    x = c / s;
    break;
  case DG_RESIZE_HALF_PIXEL_SYMMETRIC:
    x = (double)in / 2 * (1 - (double)out / len) + c / s - 0.5;
    break;
  default:
    x = c / s - 0.5;
    break;
  }
  double f = floor(x), r = x - f;
  if (p->resize_mode == DG_RESIZE_LINEAR) {
    *i0 = clamp_index(f, in);
    *i1 = clamp_index(f + 1, in);
    *w = r;
    return;
  }
  double k = f; /* an integral position is itself in every mode */
  if (r > 0)
    switch ((dg_resize_nearest)p->resize_nearest) {
    case DG_RESIZE_ROUND_PREFER_CEIL:
      k = r < 0.5 ? f : f + 1;
      break;
    case DG_RESIZE_FLOOR:
      k = f;
      break;
    case DG_RESIZE_CEIL:
      k = f + 1;
      break;
    default:
      k = r <= 0.5 ? f : f + 1;
      break;
    }
  *i0 = *i1 = clamp_index(k, in);
  *w = 0;
}

uint32_t *dg_resize_tap_table(const dg_node_params *p, const dg_tensor_desc *x,
                              const dg_tensor_desc *y) {
  int64_t OH = y->dims[2], OW = y->dims[3];
  uint32_t *t = malloc(sizeof(uint32_t) * 3 * (size_t)(OH + OW));
  if (!t)
    return NULL;
  for (int64_t o = 0; o < OH + OW; o++) {
    int axis = o >= OH;
    int64_t i0, i1;
    double w;
    dg_resize_tap(p, axis, x->dims[2 + axis], y->dims[2 + axis],
                  axis ? o - OH : o, &i0, &i1, &w);
    float wf = (float)w;
    t[3 * o] = (uint32_t)i0;
    t[3 * o + 1] = (uint32_t)i1;
    memcpy(&t[3 * o + 2], &wf, 4);
  }
  return t;
}

void dg_ref_resize(const dg_ir *ir, const dg_node *n, const double *const *in,
                   double *out) {
  const dg_tensor_desc *x = &dg_ir_tensor(ir, n->inputs[0])->desc;
  const dg_tensor_desc *y = &dg_ir_tensor(ir, n->output)->desc;
  int64_t NC = x->dims[0] * x->dims[1], H = x->dims[2], W = x->dims[3];
  int64_t OH = y->dims[2], OW = y->dims[3];
  bool linear = n->p.resize_mode == DG_RESIZE_LINEAR;
  for (int64_t c = 0; c < NC; c++)
    for (int64_t oh = 0; oh < OH; oh++) {
      int64_t h0, h1;
      double wh;
      dg_resize_tap(&n->p, 0, H, OH, oh, &h0, &h1, &wh);
      const double *r0 = in[0] + (c * H + h0) * W,
                   *r1 = in[0] + (c * H + h1) * W;
      for (int64_t ow = 0; ow < OW; ow++) {
        int64_t w0, w1;
        double ww;
        dg_resize_tap(&n->p, 1, W, OW, ow, &w0, &w1, &ww);
        double v = r0[w0];
        if (linear)
          v = (1 - wh) * ((1 - ww) * r0[w0] + ww * r0[w1]) +
              wh * ((1 - ww) * r1[w0] + ww * r1[w1]);
        out[(c * OH + oh) * OW + ow] = v;
      }
    }
}

double dg_flops_resize(const dg_ir *ir, const dg_node *n) {
  double e = (double)dg_desc_elements(&dg_ir_tensor(ir, n->output)->desc);
  return n->p.resize_mode == DG_RESIZE_LINEAR ? 9 * e : e;
}
