/* max_pool2d, avg_pool2d, global_avg_pool. */
#include "build.h"
#include "ops.h"
#include "requant.h"

#include <math.h>
#include <stdio.h>

/* qavg_pool2d's multipliers x.scale / (y.scale * n) must be finite normal
 * floats for every divisor n of the window, 1 to taps: the extremes are
 * checked, since the multiplier falls as n grows. */
static bool q8_pool_multipliers(dg_build *b, const dg_tensor_desc *xd,
                                const dg_tensor_desc *yd, int64_t taps) {
  float sx = xd->quant.scale, sy = yd->quant.scale;
  if (isnormal(dg_requant_pool_multiplier(sx, sy, 1)) &&
      isnormal(dg_requant_pool_multiplier(sx, sy, taps)))
    return true;
  char got[96];
  snprintf(got, sizeof got, "%g / (%g * n), n 1..%lld", sx, sy,
           (long long)taps);
  dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "y_quant.scale",
                "x.scale / (y.scale * n) a finite, normal float", got,
                "requantisation multiplier unusable");
  return false;
}

/* y_dtype and y_quant: qavg_pool2d's output (ignored otherwise). */
static dg_tensor pool_build(dg_graph *g, dg_op op, const char *name,
                            dg_tensor x, const dg_pool2d_params *pp,
                            dg_dtype y_dtype, const dg_quant_params *y_quant) {
  dg_build b;
  if (!dg_build_begin(&b, g, op, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  unsigned types = op == DG_OP_MAX_POOL2D    ? DG_FLOAT_TYPES | DG_Q8_TYPES
                   : op == DG_OP_QAVG_POOL2D ? DG_Q8_TYPES
                                             : DG_FLOAT_TYPES;
  if (!ok || !dg_build_dtype(&b, xi, "x", types) ||
      !dg_build_rank(&b, xi, "x", 4))
    return DG_TENSOR_NONE;
  dg_tensor_desc out = xi->desc;
  if (op == DG_OP_QAVG_POOL2D &&
      (!dg_build_quant(&b, &xi->desc, "x", -1) ||
       !dg_build_q8_output(&b, y_dtype, y_quant, &out)))
    return DG_TENSOR_NONE;
  char got[64];
  if (!pp) {
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "params", "non-NULL", "NULL",
                  "pooling parameters missing");
    return DG_TENSOR_NONE;
  }
  dg_node_params p = {0};
  for (int i = 0; i < 2; i++) {
    if (pp->kernel[i] < 1) {
      snprintf(got, sizeof got, "%d", pp->kernel[i]);
      dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "params.kernel", ">= 1", got,
                    "pooling window must be given");
      return DG_TENSOR_NONE;
    }
    if (pp->stride[i] < 0) {
      snprintf(got, sizeof got, "%d", pp->stride[i]);
      dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "params.stride",
                    ">= 1 (0 = default 1)", got, "must be positive");
      return DG_TENSOR_NONE;
    }
    if (pp->dilation[i] < 0) {
      snprintf(got, sizeof got, "%d", pp->dilation[i]);
      dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "params.dilation",
                    ">= 1 (0 = default 1)", got, "must be positive");
      return DG_TENSOR_NONE;
    }
    p.kernel[i] = pp->kernel[i];
    p.stride[i] = pp->stride[i] ? pp->stride[i] : 1;
    p.dilation[i] = pp->dilation[i] ? pp->dilation[i] : 1;
  }
  if (pp->padding < DG_PADDING_EXPLICIT ||
      pp->padding > DG_PADDING_SAME_LOWER) {
    snprintf(got, sizeof got, "%d", (int)pp->padding);
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "params.padding",
                  "a dg_padding value", got, "unknown padding mode");
    return DG_TENSOR_NONE;
  }
  for (int i = 0; i < 4; i++) {
    /* A pad of a whole dilated window would give windows of padding
     * only. */
    int64_t span = (int64_t)(p.kernel[i % 2] - 1) * p.dilation[i % 2] + 1;
    if (pp->pads[i] < 0 || pp->pads[i] >= span) {
      snprintf(got, sizeof got, "%d", pp->pads[i]);
      dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "params.pads",
                    "0 <= pad < (kernel-1)*dilation+1", got,
                    "bad pooling padding");
      return DG_TENSOR_NONE;
    }
    p.pads[i] = pp->pads[i];
  }
  p.ceil_mode = pp->ceil_mode != 0;
  /* Average pooling only: max pooling never divides (ops.def). */
  p.count_include_pad = op != DG_OP_MAX_POOL2D && pp->count_include_pad != 0;
  if (op == DG_OP_QAVG_POOL2D &&
      (int64_t)p.kernel[0] * p.kernel[1] > DG_QPOOL_MAX_TAPS) {
    snprintf(got, sizeof got, "%d x %d", p.kernel[0], p.kernel[1]);
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "params.kernel",
                  "at most 2^23 taps", got,
                  "an int8 window's sum could overflow int32");
    return DG_TENSOR_NONE;
  }
  if (op == DG_OP_QAVG_POOL2D &&
      !q8_pool_multipliers(&b, &xi->desc, &out,
                           (int64_t)p.kernel[0] * p.kernel[1]))
    return DG_TENSOR_NONE;
  for (int i = 0; i < 2; i++) {
    int64_t o = dg_window_out(xi->desc.dims[2 + i], p.kernel[i], p.stride[i],
                              p.dilation[i], pp->padding, &p.pads[i],
                              &p.pads[i + 2], p.ceil_mode);
    if (o < 1) {
      snprintf(got, sizeof got, "%lld", (long long)xi->desc.dims[2 + i]);
      dg_build_fail(&b, DG_ERROR_INVALID_SHAPE, i ? "x.dims[3]" : "x.dims[2]",
                    "padded input >= (kernel-1)*dilation+1", got,
                    "the pooling window does not fit");
      return DG_TENSOR_NONE;
    }
    out.dims[2 + i] = o;
    /* A dilated window starting in the begin padding can step over the
     * whole input (taps -2 and 1 of a 1-row input): a result of padding
     * only is refused. Only windows starting before the input can be so
     * (the others start inside it), and undilated ones never are
     * (pad < kernel). */
    int64_t in = xi->desc.dims[2 + i];
    for (int64_t w = 0; w < o; w++) {
      int64_t s0 = w * p.stride[i] - p.pads[i];
      if (s0 >= 0)
        break;
      int64_t first = (-s0 + p.dilation[i] - 1) / p.dilation[i];
      if (first >= p.kernel[i] || s0 + first * p.dilation[i] >= in) {
        snprintf(got, sizeof got, "%d", p.pads[i]);
        dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT,
                      i ? "params.pads[1]" : "params.pads[0]",
                      "a pad leaving every window a tap of the input", got,
                      "a dilated window would read padding only");
        return DG_TENSOR_NONE;
      }
    }
  }
  uint32_t ins[1] = {x.id};
  return dg_build_finish(&b, ins, 1, &out, &p);
}

dg_tensor dg_graph_max_pool2d(dg_graph *g, const char *name, dg_tensor x,
                              const dg_pool2d_params *params) {
  return pool_build(g, DG_OP_MAX_POOL2D, name, x, params, 0, NULL);
}

dg_tensor dg_graph_avg_pool2d(dg_graph *g, const char *name, dg_tensor x,
                              const dg_pool2d_params *params) {
  return pool_build(g, DG_OP_AVG_POOL2D, name, x, params, 0, NULL);
}

dg_tensor dg_graph_qavg_pool2d(dg_graph *g, const char *name, dg_tensor x,
                               const dg_pool2d_params *params, dg_dtype y_dtype,
                               const dg_quant_params *y_quant) {
  return pool_build(g, DG_OP_QAVG_POOL2D, name, x, params, y_dtype, y_quant);
}

dg_tensor dg_graph_qglobal_avg_pool(dg_graph *g, const char *name, dg_tensor x,
                                    dg_dtype y_dtype,
                                    const dg_quant_params *y_quant) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_QAVG_POOL2D, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  if (!ok || !dg_build_dtype(&b, xi, "x", DG_Q8_TYPES) ||
      !dg_build_rank(&b, xi, "x", 4))
    return DG_TENSOR_NONE;
  char got[64];
  if (xi->desc.dims[2] > INT32_MAX || xi->desc.dims[3] > INT32_MAX ||
      xi->desc.dims[2] * xi->desc.dims[3] > DG_QPOOL_MAX_TAPS) {
    snprintf(got, sizeof got, "%lld x %lld", (long long)xi->desc.dims[2],
             (long long)xi->desc.dims[3]);
    dg_build_fail(&b, DG_ERROR_INVALID_SHAPE, "x.dims", "H * W <= 2^23", got,
                  "an int8 plane's sum could overflow int32");
    return DG_TENSOR_NONE;
  }
  dg_pool2d_params p = {
      .kernel = {(int32_t)xi->desc.dims[2], (int32_t)xi->desc.dims[3]}};
  return dg_graph_qavg_pool2d(g, name, x, &p, y_dtype, y_quant);
}

dg_tensor dg_graph_global_avg_pool(dg_graph *g, const char *name, dg_tensor x) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_GLOBAL_AVG_POOL, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  if (!ok || !dg_build_dtype(&b, xi, "x", DG_FLOAT_TYPES) ||
      !dg_build_rank(&b, xi, "x", 4))
    return DG_TENSOR_NONE;
  dg_tensor_desc out = xi->desc;
  out.dims[2] = out.dims[3] = 1;
  uint32_t ins[1] = {x.id};
  return dg_build_finish(&b, ins, 1, &out, NULL);
}

/* ---- reference ----
 * Window tap i of output o reads o*stride + i*dilation - pad_begin. For
 * averaging, the divisor is the number of taps inside the input, or with
 * count_include_pad inside the padded input; ceil mode windows may hang
 * past the end padding, and those taps are never counted (the PyTorch and
 * ONNX rule). */
enum pool_kind { POOL_MAX, POOL_AVG, POOL_QAVG };

/* For qavg_pool2d the sum is of (x - x.zero), exact in double (at most
 * 2^23 taps of 8 bits), and the divisor becomes the multiplier of
 * dg_requant_pool_multiplier. */
static void pool_ref(const dg_ir *ir, const dg_node *n, const double *x,
                     double *y, enum pool_kind kind) {
  const dg_tensor_desc *xd = &dg_ir_tensor(ir, n->inputs[0])->desc;
  const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
  const dg_node_params *p = &n->p;
  int64_t NC = xd->dims[0] * xd->dims[1], H = xd->dims[2], W = xd->dims[3];
  int64_t OH = yd->dims[2], OW = yd->dims[3], lo = 0, hi = 0;
  bool is_max = kind == POOL_MAX;
  double zx = kind == POOL_QAVG ? xd->quant.zero_point : 0;
  if (kind == POOL_QAVG)
    dg_dtype_int_range(yd->dtype, &lo, &hi);
  for (int64_t c = 0; c < NC; c++)
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t ow = 0; ow < OW; ow++) {
        double acc = is_max ? -INFINITY : 0;
        int64_t count = 0, padded_count = 0;
        for (int64_t i = 0; i < p->kernel[0]; i++) {
          int64_t h = oh * p->stride[0] + i * p->dilation[0] - p->pads[0];
          for (int64_t j = 0; j < p->kernel[1]; j++) {
            int64_t w = ow * p->stride[1] + j * p->dilation[1] - p->pads[1];
            if (h < H + p->pads[2] && w < W + p->pads[3])
              padded_count++;
            if (h < 0 || h >= H || w < 0 || w >= W)
              continue;
            double v = x[(c * H + h) * W + w] - zx;
            if (is_max)
              acc = v > acc ? v : acc;
            else
              acc += v;
            count++;
          }
        }
        int64_t div = p->count_include_pad ? padded_count : (count ? count : 1);
        if (kind == POOL_AVG)
          acc /= (double)div;
        else if (kind == POOL_QAVG)
          acc = dg_requant(
              (int32_t)acc,
              dg_requant_pool_multiplier(xd->quant.scale, yd->quant.scale, div),
              yd->quant.zero_point, (int32_t)lo, (int32_t)hi);
        y[(c * OH + oh) * OW + ow] = acc;
      }
}

void dg_ref_max_pool2d(const dg_ir *ir, const dg_node *n,
                       const double *const *in, double *out) {
  pool_ref(ir, n, in[0], out, POOL_MAX);
}

void dg_ref_avg_pool2d(const dg_ir *ir, const dg_node *n,
                       const double *const *in, double *out) {
  pool_ref(ir, n, in[0], out, POOL_AVG);
}

void dg_ref_qavg_pool2d(const dg_ir *ir, const dg_node *n,
                        const double *const *in, double *out) {
  pool_ref(ir, n, in[0], out, POOL_QAVG);
}

void dg_ref_global_avg_pool(const dg_ir *ir, const dg_node *n,
                            const double *const *in, double *out) {
  const dg_tensor_desc *xd = &dg_ir_tensor(ir, n->inputs[0])->desc;
  int64_t NC = xd->dims[0] * xd->dims[1], HW = xd->dims[2] * xd->dims[3];
  for (int64_t c = 0; c < NC; c++) {
    double s = 0;
    for (int64_t i = 0; i < HW; i++)
      s += in[0][c * HW + i];
    out[c] = s / (double)HW;
  }
}

static double out_elems(const dg_ir *ir, const dg_node *n) {
  return (double)dg_desc_elements(&dg_ir_tensor(ir, n->output)->desc);
}
double dg_flops_max_pool2d(const dg_ir *ir, const dg_node *n) {
  return out_elems(ir, n) * n->p.kernel[0] * n->p.kernel[1];
}
double dg_flops_avg_pool2d(const dg_ir *ir, const dg_node *n) {
  return out_elems(ir, n) * n->p.kernel[0] * n->p.kernel[1];
}
double dg_flops_global_avg_pool(const dg_ir *ir, const dg_node *n) {
  return (double)dg_desc_elements(&dg_ir_tensor(ir, n->inputs[0])->desc);
}
double dg_flops_qavg_pool2d(const dg_ir *ir, const dg_node *n) {
  return out_elems(ir, n) * n->p.kernel[0] * n->p.kernel[1];
}
