/* e^t for t <= 0 (or NaN) in float, without a libm call, so that loops
 * calling it vectorise (sigmoid.c, softmax.c). e^t = 2^n * p(r): n =
 * round(t / ln 2), r = t - n ln 2 (ln 2 split in two so that r is exact
 * to float precision), p a degree-6 Taylor polynomial of e^r on |r| <=
 * ln 2 / 2 (relative error below 2e-7). t is clamped to -87 so that 2^n
 * stays a normal float; below that e^t < 2e-38 is taken as 0. NaN gives
 * NaN. No FMA contraction (meson's -ffp-contract=off): every SIMD level
 * gives the same bits. */
#ifndef DG_CPU_VEXP_H
#define DG_CPU_VEXP_H

#include <stdint.h>
#include <string.h>

static inline float dg_cpu_exp_le0(float a) {
  /* NaN takes the clamp too, so that n below is a number (converting a
   * NaN to int is undefined); the NaN is given back at the end. */
  float t = a >= -87.0f ? a : -87.0f;
  /* Round to nearest by the 1.5 * 2^23 trick: exact, and vectorisable
   * without SSE4.1's roundps. */
  const float shift = 12582912.0f;
  float n = (t * 1.44269504f + shift) - shift;
  float r = t - n * 0.693145752f; /* ln 2, high part (exact product) */
  r = r - n * 1.42860677e-6f;     /* ln 2, low part */
  float p = 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  uint32_t bits = (uint32_t)((int32_t)n + 127) << 23; /* 2^n, n >= -126 */
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  float e = a < -87.0f ? 0.0f : p * scale;
  return a == a ? e : a;
}

#endif
