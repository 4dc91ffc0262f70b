/* The DPU's requantisation arithmetic (see dpu_requant.h). */
#include "dpu_requant.h"

#include <math.h>
#include <string.h>

/* OUT_CVT_SHIFT the simulator takes and RUS found the hardware to use
 * ([5:0]; regs.def has Mesa's 12-bit field). */
#define CVT_SHIFT_MAX 62

bool dg_npu_requant_regs(float m, int truncate_bits, uint32_t *scale,
                         uint32_t *shift) {
  uint32_t bits;
  memcpy(&bits, &m, sizeof bits);
  if (!(m > 0.0f) || (bits >> 23) == 0xff)
    return false;
  int e = (int)(bits >> 23);
  /* 2^14 + the top 14 mantissa bits + 1 (Mesa's rounding up); Mesa's own
   * form loses 2^15 when the mantissa is all ones and e is even. */
  *scale = (1u << 14) + ((bits >> 9) & 0x3fff) + 1;
  int sh = 141 - e - (truncate_bits > 0 ? 1 : 0);
  if (sh < 0 || sh > 4095)
    return false;
  *shift = (uint32_t)sh;
  return true;
}

bool dg_npu_bs_spread_ok(float lo, float hi) {
  return lo > 0.0f &&
         (double)lo * NPU_BS_MUL_MAX >= (double)hi * NPU_BS_MUL_MIN;
}

/* The gain the hardware applies for a multiplier: SCALE x 2^-SHIFT. */
static bool gain_hw(float gain, double *g) {
  uint32_t scale, shift;
  if (!dg_npu_requant_regs(gain, 0, &scale, &shift) || shift > CVT_SHIFT_MAX)
    return false;
  *g = ldexp((double)scale, -(int)shift);
  return true;
}

bool dg_npu_bs_plan(float hi, float *gain, int *bs_shift) {
  if (!(hi > 0.0f) || !isfinite(hi))
    return false;
  for (int s = 0; s <= 63; s++) {
    double g = ldexp((double)hi, s) / NPU_BS_MUL_MAX;
    /* A saturated v (2^31) must still saturate y: 2^31 x G >= 512. */
    if (ldexp(g, 31) < 512.0)
      continue;
    double hw;
    if (!gain_hw((float)g, &hw))
      return false;
    *gain = (float)g, *bs_shift = s;
    return true;
  }
  return false;
}

int16_t dg_npu_bs_mul(float m, float gain, int bs_shift) {
  double hw;
  if (!gain_hw(gain, &hw))
    return 0;
  /* The pair rounds the gain up, so the largest channel stays <= MAX. */
  double c = nearbyint(ldexp((double)m, bs_shift) / hw);
  return (int16_t)(c < 0 ? 0 : c > NPU_BS_MUL_MAX ? NPU_BS_MUL_MAX : c);
}
