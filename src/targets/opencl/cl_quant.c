/* OpenCL quantize and dequantize (ops/quant.c). */
#include "cl_prep.h"
#include "core/env.h"

#include "kernels/geom.h"
#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* quantize / dequantize: q is the quantised tensor's descriptor. */
cl_int dg_cl_quant(prep *p) {
  bool to_q = p->n->op == DG_OP_QUANTIZE;
  const dg_tensor_desc *q = to_q ? dg_cl_out_desc(p) : dg_cl_in_desc(p, 0);
  int32_t g[DG_CL_GEOM_INTS] = {0};
  g[E_COUNT] = (int32_t)dg_desc_elements(q);
  int64_t channels = 1, inner = 1;
  if (q->quant.channel_count) {
    channels = q->dims[q->quant.axis];
    for (int k = q->quant.axis + 1; k < q->rank; k++)
      inner *= q->dims[k];
  }
  g[E_QINNER] = (int32_t)inner;
  g[E_QDIM] = (int32_t)channels;
  g[E_QDT] = dg_cl_dt_code(q->dtype);
  int64_t lo, hi;
  dg_dtype_int_range(q->dtype, &lo, &hi);
  g[E_QLO] = (int32_t)lo;
  g[E_QHI] = (int32_t)hi;
  float *s = malloc(sizeof(float) * (size_t)channels);
  int32_t *z = malloc(sizeof(int32_t) * (size_t)channels);
  if (!s || !z) {
    free(s), free(z);
    p->call = "malloc";
    return CL_OUT_OF_HOST_MEMORY;
  }
  for (int64_t c = 0; c < channels; c++) {
    s[c] = dg_quant_scale(q, c);
    z[c] = dg_quant_zero(q, c);
  }
  cl_mem gm = NULL, sm = NULL, zm = NULL;
  cl_int err = dg_cl_aux(p, g, sizeof g, &gm);
  if (err == CL_SUCCESS)
    err = dg_cl_aux(p, s, sizeof(float) * (size_t)channels, &sm);
  if (err == CL_SUCCESS)
    err = dg_cl_aux(p, z, sizeof(int32_t) * (size_t)channels, &zm);
  free(s), free(z);
  if (err != CL_SUCCESS)
    return err;
  dg_cl_grid1(p->cn, g[E_COUNT]);
  cl_mem args[5] = {dg_cl_in_mem(p, 0), dg_cl_out_mem(p), gm, sm, zm};
  return dg_cl_kernel(p, to_q ? "quantize_f32" : "dequantize_f32", 5, args);
}
