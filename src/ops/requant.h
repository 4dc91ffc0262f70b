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

/* Steps 4 of the contract for a rounded v: zy added as an integer, then
 * saturated to [lo, hi]. */
static inline int32_t dg_requant_out(float v, int32_t zy, int32_t lo,
                                     int32_t hi) {
  /* Saturate in float first: v may lie outside int32. */
  if (v < -2147483648.0f + 65536.0f)
    v = -2147483648.0f + 65536.0f;
  if (v > 2147483647.0f - 65536.0f)
    v = 2147483647.0f - 65536.0f;
  int64_t y = (int64_t)v + zy;
  return (int32_t)(y < lo ? lo : (y > hi ? hi : y));
}

/* dg_requant_out for a byte output, in a form loops vectorise: v rounded
 * half to even by the 1.5 * 2^23 trick (exact below 2^22 in magnitude;
 * anything larger lies beyond the clamp on the same side), clamped in
 * float to [flo, fhi] = [lo - zy, hi - zy] (the caller's, hoisted), then
 * zy added. The same byte as dg_requant_out(nearbyintf(v), zy, lo, hi)
 * for lo, hi in [-128, 255]; the low byte of an i8 result as stored. */
static inline uint8_t dg_requant_out_q8(float v, int32_t zy, float flo,
                                        float fhi) {
  const float shift = 12582912.0f; /* 1.5 * 2^23 */
  float r = (v + shift) - shift;
  r = r < flo ? flo : (r > fhi ? fhi : r);
  return (uint8_t)(((int32_t)r + zy) & 0xff);
}

static inline int32_t dg_requant(int32_t acc, float m, int32_t zy, int32_t lo,
                                 int32_t hi) {
  return dg_requant_out(nearbyintf((float)acc * m), zy, lo, hi);
}

/* qbinary add and sub: ra = sa / sy and rb = +-sb / sy (one fp32
 * division each, on the host); each side is one fp32 multiply of its
 * integer difference, the two are added in fp32 and rounded once. */
static inline float dg_requant_ratio(float s, float sy) { return s / sy; }
static inline int32_t dg_requant_sum(int32_t da, float ra, int32_t db, float rb,
                                     int32_t zy, int32_t lo, int32_t hi) {
  volatile float pa = (float)da * ra, pb = (float)db * rb;
  return dg_requant_out(nearbyintf(pa + pb), zy, lo, hi);
}

/* qavg_pool2d: the multiplier of a window of n taps, sx / (sy * n): one
 * fp32 multiply (n <= 2^23 is exact in fp32), then one fp32 division. The
 * window's integer sum is then requantised by dg_requant. */
static inline float dg_requant_pool_multiplier(float sx, float sy, int64_t n) {
  volatile float d = sy * (float)n;
  return sx / d;
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
