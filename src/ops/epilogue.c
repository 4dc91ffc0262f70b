/* The int8 epilogue's parameters (epilogue.h), computed the one way every
 * target uses. */
#include "epilogue.h"

#include "requant.h"

#include <stdlib.h>
#include <string.h>

bool dg_q8_epilogue_init(dg_q8_epilogue *e, const dg_ir *ir, const dg_node *n,
                         int64_t channels) {
  const dg_tensor_desc *xd = &dg_ir_tensor(ir, n->inputs[0])->desc,
                       *wd = &dg_ir_tensor(ir, n->inputs[1])->desc,
                       *yd = &dg_ir_tensor(ir, n->output)->desc;
  memset(e, 0, sizeof *e);
  if (channels > 0) {
    e->mult = malloc(sizeof(float) * (size_t)channels);
    e->w_zero = malloc(sizeof(int32_t) * (size_t)channels);
    if (!e->mult || !e->w_zero) {
      dg_q8_epilogue_free(e);
      return false;
    }
  }
  e->channels = channels;
  bool pc = wd->quant.channel_count != 0;
  for (int64_t c = 0; c < channels; c++) {
    e->mult[c] = dg_requant_multiplier(
        xd->quant.scale, dg_quant_scale(wd, pc ? c : 0), yd->quant.scale);
    e->w_zero[c] = dg_quant_zero(wd, pc ? c : 0);
  }
  e->x_zero = xd->quant.zero_point;
  e->y_zero = yd->quant.zero_point;
  int64_t lo, hi;
  dg_dtype_int_range(yd->dtype, &lo, &hi);
  dg_requant_clamp(n->p.activation, yd->quant.scale, e->y_zero, (int32_t)lo,
                   (int32_t)hi, &e->clamp_lo, &e->clamp_hi);
  e->x_signed = xd->dtype == DG_DTYPE_I8;
  e->w_signed = wd->dtype == DG_DTYPE_I8;
  e->y_signed = yd->dtype == DG_DTYPE_I8;
  return true;
}

void dg_q8_epilogue_free(dg_q8_epilogue *e) {
  free(e->mult);
  free(e->w_zero);
  memset(e, 0, sizeof *e);
}
