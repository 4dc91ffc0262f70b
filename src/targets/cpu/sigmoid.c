/* Sigmoid over a float array, vectorised for the SIMD level in use.
 *
 * One scalar body, written so that GCC vectorises it (no calls, no
 * branches), compiled three times: for the machine's baseline (SSE2 on
 * x86-64, NEON on aarch64) and, on x86-64, with AVX2 and AVX-512 enabled;
 * dg_cpu_simd_level() picks one per call.
 *
 * sigmoid(x) = 1 / (1 + e^-x) is computed from e = e^-|x| in (0, 1], as
 * 1 / (1 + e) for x >= 0 and e / (1 + e) below, so nothing overflows. e is
 * 2^n * p(r): n = round(t / ln 2), r = t - n ln 2 (ln 2 split in two so
 * that r is exact to float precision), p a degree-6 Taylor polynomial of
 * e^r on |r| <= ln 2 / 2 (relative error below 2e-7). t is clamped to
 * -87 so that 2^n stays a normal float; below that e^t < 2e-38 is taken
 * as 0, so the result is exactly 0 or 1 (off by less than 2e-38). */
#include "cpu_kernels.h"

#include <string.h>

static inline float sigmoid1(float x) {
  float a = x < 0 ? x : -x; /* -|x| */
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
  float y = (x >= 0 ? 1.0f : e) / (1.0f + e);
  return x == x ? y : x;
}

static void run_base(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    y[i] = sigmoid1(x[i]);
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) static void run_avx2(const float *x, float *y,
                                                     int64_t n) {
  for (int64_t i = 0; i < n; i++)
    y[i] = sigmoid1(x[i]);
}
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"))) static void
run_avx512(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    y[i] = sigmoid1(x[i]);
}
#endif

void dg_cpu_sigmoid(const float *x, float *y, int64_t n) {
#if defined(__x86_64__)
  int level = dg_cpu_simd_level();
  if (level >= DG_CPU_SIMD_AVX512) {
    run_avx512(x, y, n);
    return;
  }
  if (level == DG_CPU_SIMD_AVX2) {
    run_avx2(x, y, n);
    return;
  }
#endif
  run_base(x, y, n);
}
