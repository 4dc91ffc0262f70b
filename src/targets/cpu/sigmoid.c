/* Sigmoid over a float array, vectorised for the SIMD level in use.
 *
 * One scalar body, written so that GCC vectorises it (no calls, no
 * branches), compiled three times: for the machine's baseline (SSE2 on
 * x86-64, NEON on aarch64) and, on x86-64, with AVX2 and AVX-512 enabled;
 * dg_cpu_simd_level() picks one per call.
 *
 * sigmoid(x) = 1 / (1 + e^-x) is computed from e = e^-|x| in (0, 1], as
 * 1 / (1 + e) for x >= 0 and e / (1 + e) below, so nothing overflows; e
 * is vexp.h's dg_cpu_exp (denormal near -100, 0 below -104). */
#include "cpu_kernels.h"
#include "vexp.h"

#include <string.h>

static inline float sigmoid1(float x) {
  float e = dg_cpu_exp(x < 0 ? x : -x); /* e^-|x| */
  float y = (x >= 0 ? 1.0f : e) / (1.0f + e);
  return x == x ? y : x;
}

static void run_base(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    y[i] = sigmoid1(x[i]);
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) static void run_avx2(const float *x,
                                                         float *y, int64_t n) {
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
