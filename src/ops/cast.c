/* cast: dtype checks, shape rule, cost, reference. */
#include "build.h"
#include "ops.h"

#include <math.h>

#define CAST_TYPES                                                             \
  (DG_FLOAT_TYPES | DG_BIT(DG_DTYPE_I32) | DG_BIT(DG_DTYPE_I64) |              \
   DG_BIT(DG_DTYPE_BOOL))

dg_tensor dg_graph_cast(dg_graph *g, const char *name, dg_tensor x,
                        dg_dtype to) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_CAST, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  if (!ok || !dg_build_dtype(&b, xi, "x", CAST_TYPES))
    return DG_TENSOR_NONE;
  if (to <= DG_DTYPE_INVALID || to >= DG_DTYPE_COUNT_ ||
      !(CAST_TYPES & DG_BIT(to))) {
    dg_build_fail(&b, DG_ERROR_INVALID_DTYPE, "to",
                  "f32, f16, i32, i64 or bool", dg_dtype_name(to),
                  "cast converts f32, f16, i32, i64 and bool (i8/u8 are "
                  "quantised: dequantize or quantize them)");
    return DG_TENSOR_NONE;
  }
  dg_tensor_desc out = {.dtype = to, .rank = xi->desc.rank};
  for (int i = 0; i < out.rank; i++)
    out.dims[i] = xi->desc.dims[i];
  uint32_t ins[1] = {x.id};
  return dg_build_finish(&b, ins, 1, &out, NULL);
}

/* The value an element becomes: integers truncated and saturated (NaN to
 * 0); floats as they are, which verify compares under the output dtype's
 * tolerance (its rounding is the target's). */
double dg_cast_value(double v, dg_dtype to) {
  if (to == DG_DTYPE_BOOL) /* not zero is true, NaN included (ONNX) */
    return v != 0;
  if (to == DG_DTYPE_I64) {
    if (isnan(v))
      return 0;
    return v >= 0x1p63 ? 0x1p63 : v <= -0x1p63 ? -0x1p63 : trunc(v);
  }
  if (to != DG_DTYPE_I32)
    return v;
  if (isnan(v))
    return 0;
  if (v >= 2147483647.0)
    return 2147483647.0;
  if (v <= -2147483648.0)
    return -2147483648.0;
  return trunc(v);
}

void dg_ref_cast(const dg_ir *ir, const dg_node *n, const double *const *in,
                 double *out) {
  const dg_tensor_desc *y = &dg_ir_tensor(ir, n->output)->desc;
  for (int64_t i = 0, e = dg_desc_elements(y); i < e; i++)
    out[i] = dg_cast_value(in[0][i], y->dtype);
}

double dg_flops_cast(const dg_ir *ir, const dg_node *n) {
  return (double)dg_desc_elements(&dg_ir_tensor(ir, n->output)->desc);
}
