/* quantize and dequantize. quantize follows ONNX QuantizeLinear with the
 * fp32 arithmetic of the numerics contract:
 *   q = saturate(round_half_even(x / scale) + zero)
 * (one fp32 division), so its reference is that formula, not float64. */
#include "build.h"
#include "ops.h"

#include <math.h>

/* No FMA contraction: meson passes -ffp-contract=off. */

dg_tensor dg_graph_quantize(dg_graph *g, const char *name, dg_tensor x,
                            dg_dtype dtype, const dg_quant_params *q) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_QUANTIZE, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  if (!ok || !dg_build_dtype(&b, xi, "x", DG_BIT(DG_DTYPE_F32)))
    return DG_TENSOR_NONE;
  if (dtype != DG_DTYPE_I8 && dtype != DG_DTYPE_U8 && dtype != DG_DTYPE_I32) {
    dg_build_fail(&b, DG_ERROR_INVALID_DTYPE, "dtype", "i8, u8 or i32",
                  dg_dtype_name(dtype), "quantised dtype");
    return DG_TENSOR_NONE;
  }
  if (!q) {
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "q", "non-NULL", "NULL",
                  "quantisation parameters missing");
    return DG_TENSOR_NONE;
  }
  dg_tensor_desc out = xi->desc;
  out.dtype = dtype;
  out.quant = *q;
  if (!dg_build_quant(&b, &out, "q", q->channel_count ? q->axis : -1))
    return DG_TENSOR_NONE;
  uint32_t ins[1] = {x.id};
  return dg_build_finish(&b, ins, 1, &out, NULL);
}

dg_tensor dg_graph_dequantize(dg_graph *g, const char *name, dg_tensor x) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_DEQUANTIZE, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  if (!ok || !dg_build_dtype(&b, xi, "x", DG_Q8_TYPES | DG_BIT(DG_DTYPE_I32)) ||
      !dg_build_quant(&b, &xi->desc, "x",
                      xi->desc.quant.channel_count ? xi->desc.quant.axis : -1))
    return DG_TENSOR_NONE;
  dg_tensor_desc out = xi->desc;
  out.dtype = DG_DTYPE_F32;
  out.quant = (dg_quant_params){0};
  uint32_t ins[1] = {x.id};
  return dg_build_finish(&b, ins, 1, &out, NULL);
}

/* Channel of flat index i for per-channel quantisation on axis. */
static int64_t channel_of(const dg_tensor_desc *d, int64_t i) {
  if (!d->quant.channel_count)
    return 0;
  int64_t inner = 1;
  for (int k = d->quant.axis + 1; k < d->rank; k++)
    inner *= d->dims[k];
  return (i / inner) % d->dims[d->quant.axis];
}

void dg_ref_quantize(const dg_ir *ir, const dg_node *n, const double *const *in,
                     double *out) {
  const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
  int64_t lo, hi;
  dg_dtype_int_range(yd->dtype, &lo, &hi);
  for (int64_t i = 0, e = dg_desc_elements(yd); i < e; i++) {
    int64_t c = channel_of(yd, i);
    float v = nearbyintf((float)in[0][i] / dg_quant_scale(yd, c));
    double q = (double)v + dg_quant_zero(yd, c);
    out[i] = q < (double)lo ? (double)lo : (q > (double)hi ? (double)hi : q);
  }
}

void dg_ref_dequantize(const dg_ir *ir, const dg_node *n,
                       const double *const *in, double *out) {
  const dg_tensor_desc *xd = &dg_ir_tensor(ir, n->inputs[0])->desc;
  for (int64_t i = 0, e = dg_desc_elements(xd); i < e; i++) {
    int64_t c = channel_of(xd, i);
    out[i] = (in[0][i] - dg_quant_zero(xd, c)) * dg_quant_scale(xd, c);
  }
}

double dg_flops_quantize(const dg_ir *ir, const dg_node *n) {
  return 2.0 * (double)dg_desc_elements(&dg_ir_tensor(ir, n->output)->desc);
}
double dg_flops_dequantize(const dg_ir *ir, const dg_node *n) {
  return 2.0 * (double)dg_desc_elements(&dg_ir_tensor(ir, n->output)->desc);
}
