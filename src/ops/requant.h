/* The int8 requantisation of the numerics contract (docs/numerics.md), in
 * one place so that every CPU kernel and the reference use the same code.
 * Files including this are compiled with -ffp-contract=off, and the
 * expressions keep one rounding per step: the multiplier is a product then
 * a quotient in fp32, the conversion of acc to fp32 rounds to nearest even,
 * the product is one fp32 multiply, and nearbyintf rounds half to even. */
#ifndef DG_REQUANT_H
#define DG_REQUANT_H

#include <math.h>
#include <stdint.h>

/* No FMA contraction: meson passes -ffp-contract=off. */

static inline float dg_requant_multiplier(float sx, float sw, float sy) {
  volatile float p = sx * sw; /* keep the two roundings of the contract */
  return p / sy;
}

static inline int32_t dg_requant(int32_t acc, float m, int32_t zy, int32_t lo,
                                 int32_t hi) {
  float v = nearbyintf((float)acc * m);
  /* Saturate in float first: v may lie outside int32. */
  if (v < -2147483648.0f + 65536.0f)
    v = -2147483648.0f + 65536.0f;
  if (v > 2147483647.0f - 65536.0f)
    v = 2147483647.0f - 65536.0f;
  int64_t y = (int64_t)v + zy;
  return (int32_t)(y < lo ? lo : (y > hi ? hi : y));
}

/* Output clamp of a fused activation in the quantised domain: relu clamps
 * at the zero point, relu6 also at zy + round_half_even(6 / sy). */
static inline void dg_requant_clamp(int act, float sy, int32_t zy,
                                    int32_t dtype_lo, int32_t dtype_hi,
                                    int32_t *lo, int32_t *hi) {
  *lo = dtype_lo;
  *hi = dtype_hi;
  if (act >= 1 && zy > *lo)
    *lo = zy;
  if (act == 2) {
    float six = nearbyintf(6.0f / sy);
    int64_t h = (int64_t)(six > 1e9f ? 1e9f : six) + zy;
    if (h < *hi)
      *hi = (int32_t)h;
  }
}

#endif
