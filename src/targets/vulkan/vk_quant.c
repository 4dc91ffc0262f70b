/* Vulkan quantize and dequantize (ops/quant.c). */
#include "vk_internal.h"

#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per-channel quantisation of d as the blob [scale bits, zero points]:
 * inner is the element stride of the channel axis. */
static bool quant_blob(vk_work *w, const dg_tensor_desc *d, int64_t *inner,
                       int64_t *chans) {
  *inner = 1;
  *chans = 1;
  if (!d->quant.channel_count) {
    w->bind[4] = 0;
    return true;
  }
  for (int k = d->quant.axis + 1; k < d->rank; k++)
    *inner *= d->dims[k];
  *chans = d->dims[d->quant.axis];
  w->params_bytes = sizeof(uint32_t) * 2 * (size_t)*chans;
  w->bind[4] = VK_BIND_PARAMS;
  if (w->estimate)
    return true;
  uint32_t *p = malloc(w->params_bytes);
  if (!p)
    return false;
  for (int64_t c = 0; c < *chans; c++) {
    float s = dg_quant_scale(d, c);
    memcpy(&p[c], &s, 4);
    p[*chans + c] = (uint32_t)dg_quant_zero(d, c);
  }
  w->params = p;
  return true;
}

bool dg_vk_setup_quant(const vk_device *vd, vk_work *w, const dg_ir *ir,
                       const dg_node *n) {
  (void)vd;
  bool quantize = n->op == DG_OP_QUANTIZE;
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]),
                       *yd = dg_ir_desc(ir, n->output);
  const dg_tensor_desc *qd = quantize ? yd : xd; /* carries the quant */
  int64_t inner, chans;
  if (!quant_blob(w, qd, &inner, &chans))
    return false;
  int64_t total = dg_desc_elements(yd);
  bool per_channel = qd->quant.channel_count != 0;
  if (quantize) {
    int64_t lo, hi;
    dg_dtype_int_range(yd->dtype, &lo, &hi);
    w->push.quantize = (vk_pc_quantize){.total = total,
                                        .inner = inner,
                                        .chans = chans,
                                        .per_channel = per_channel,
                                        .lo = lo,
                                        .hi = hi,
                                        .scale = qd->quant.scale,
                                        .zero = qd->quant.zero_point};
    w->shader = yd->dtype == DG_DTYPE_I32 ? SH_QUANTIZE_32 : SH_QUANTIZE_8;
  } else {
    w->push.dequantize = (vk_pc_dequantize){.total = total,
                                            .inner = inner,
                                            .chans = chans,
                                            .per_channel = per_channel,
                                            .flags = xd->dtype == DG_DTYPE_I8,
                                            .scale = qd->quant.scale,
                                            .zero = qd->quant.zero_point};
    w->shader = xd->dtype == DG_DTYPE_I32 ? SH_DEQUANTIZE_32 : SH_DEQUANTIZE_8;
  }
  w->bind[0] = n->inputs[0];
  w->bind[3] = n->output;
  dg_vk_grid_1d(w->groups, total, 256);
  return true;
}
