/* The CPU kernels' exponential (vexp.h's one function). */
#ifndef DG_CPU_VEXP_H
#define DG_CPU_VEXP_H

#include <stdint.h>
#include <string.h>

/* e^x in float without a libm call, so that loops calling it vectorise
 * (unary.c, sigmoid.c, softmax.c). e^x = 2^n p(r): n = round(x / ln 2) by
 * the 1.5 * 2^23 trick, r = x - n ln 2 with ln 2 split in two (r exact to float
 * precision, |r| <= ln 2 / 2), p the degree-7 Taylor polynomial of e^r
 * (truncation below 1e-9). x is clamped to [-104, 88.73], past which e^x is 0
 * or inf in float, so n is in [-150, 128]; 2^n is applied as two halves, each a
 * normal float made from exponent bits, so that results near both ends come out
 * right (denormal, or overflowing to inf). A NaN is carried round the integer
 * steps (which it would make undefined) and returned. Measured over 2M
 * points of [-87, 88.7]: within 1.7 ulps of exp. No FMA contraction
 * (meson's -ffp-contract=off): every SIMD level gives the same bits. */
static inline float dg_cpu_exp(float x) {
  float t = x < -104.0f ? -104.0f : x;
  t = t > 88.73f ? 88.73f : t;
  t = t == t ? t : 0.0f;
  const float shift = 12582912.0f;
  float n = (t * 1.44269504f + shift) - shift;
  float r = t - n * 0.693145752f; /* ln 2, high part (exact product) */
  r = r - n * 1.42860677e-6f;     /* ln 2, low part */
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  int32_t k = (int32_t)n, k1 = k / 2, k2 = k - k1;
  int32_t b1 = (k1 + 127) << 23, b2 = (k2 + 127) << 23;
  float s1, s2;
  memcpy(&s1, &b1, sizeof s1);
  memcpy(&s2, &b2, sizeof s2);
  float y = p * s1 * s2;
  return x == x ? y : x;
}

#endif
