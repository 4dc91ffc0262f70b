/* The binary functions of src/ops/binary.def over float arrays with
 * broadcasting.
 *
 * The axes are first merged wherever both operands stay contiguous across
 * them (a same-shape pair becomes one run, b of [C, 1, 1] against
 * [N, C, H, W] becomes [N, C, H*W] with b constant along H*W), and axes of
 * extent 1 are dropped. The innermost axis then runs as one loop, written
 * for each function and each operand pattern (both advancing, a scalar b,
 * a scalar a) so that GCC vectorises it; an odometer walks the outer axes
 * as cpu_ops.c's kernels do. */
#include "cpu_kernels.h"
#include "graph.h" /* dg_binary_fn, DG_MAX_RANK */

#include <math.h>
#include <stdbool.h>

/* The helpers binary.def's formulas call, in float. powf and fmodf have
 * the special cases the table asks for (an integral exponent gives a
 * negative base's sign, pow(x, 0) = 1; fmod keeps a's sign). */
static inline float bin_pow(float a, float b) { return powf(a, b); }
static inline float bin_fmod(float a, float b) { return fmodf(a, b); }
static inline float bin_mod(float a, float b) {
  float r = fmodf(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

/* One inner run of n outputs; as and bs are a's and b's element strides
 * (0: broadcast). The body is compiled once per SIMD level, as sigmoid.c's
 * is: for the baseline and, on x86-64, with AVX2 and with AVX-512. */
#define RUN_ARGS                                                               \
  const float *pa, int64_t as, const float *pb, int64_t bs, float *y, int64_t n
#define RUN_BODY(formula)                                                      \
  if (as == 1 && bs == 1) {                                                    \
    for (int64_t i = 0; i < n; i++) {                                          \
      float a = pa[i], b = pb[i];                                              \
      y[i] = formula;                                                          \
    }                                                                          \
  } else if (as == 1 && bs == 0) {                                             \
    const float b = pb[0];                                                     \
    for (int64_t i = 0; i < n; i++) {                                          \
      float a = pa[i];                                                         \
      y[i] = formula;                                                          \
    }                                                                          \
  } else if (as == 0 && bs == 1) {                                             \
    const float a = pa[0];                                                     \
    for (int64_t i = 0; i < n; i++) {                                          \
      float b = pb[i];                                                         \
      y[i] = formula;                                                          \
    }                                                                          \
  } else {                                                                     \
    for (int64_t i = 0; i < n; i++) {                                          \
      float a = pa[i * as], b = pb[i * bs];                                    \
      y[i] = formula;                                                          \
    }                                                                          \
  }

#define DG_BINARY(e, name, formula)                                            \
  static void run_##name(RUN_ARGS) { RUN_BODY(formula) }
#include "ops/binary.def"
#undef DG_BINARY
#if defined(__x86_64__)
#define DG_BINARY(e, name, formula)                                            \
  __attribute__((target("avx2"))) static void run_##name##_avx2(RUN_ARGS) {    \
    RUN_BODY(formula)                                                          \
  }                                                                            \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"))) static void    \
      run_##name##_avx512(RUN_ARGS) {                                          \
    RUN_BODY(formula)                                                          \
  }
#include "ops/binary.def"
#undef DG_BINARY
#endif

typedef void (*run_fn)(RUN_ARGS);

/* fn's run at the SIMD level in use. */
static run_fn run_of(int fn) {
#if defined(__x86_64__)
  int level = dg_cpu_simd_level();
  if (level >= DG_CPU_SIMD_AVX512)
    switch (fn) {
#define DG_BINARY(e, name, formula)                                            \
  case DG_BINARY_##e:                                                          \
    return run_##name##_avx512;
#include "ops/binary.def"
#undef DG_BINARY
    default:
      return NULL;
    }
  if (level == DG_CPU_SIMD_AVX2)
    switch (fn) {
#define DG_BINARY(e, name, formula)                                            \
  case DG_BINARY_##e:                                                          \
    return run_##name##_avx2;
#include "ops/binary.def"
#undef DG_BINARY
    default:
      return NULL;
    }
#endif
  switch (fn) {
#define DG_BINARY(e, name, formula)                                            \
  case DG_BINARY_##e:                                                          \
    return run_##name;
#include "ops/binary.def"
#undef DG_BINARY
  default:
    return NULL;
  }
}

void dg_cpu_binary(int fn, int rank, const int64_t *dims, const float *a,
                   const int64_t *sa, const float *b, const int64_t *sb,
                   float *y) {
  /* x^2 (layer norms as exporters decompose them) is a * a: the float
   * product is correctly rounded, as pow in double rounded once is, and
   * powf costs twenty times more. */
  bool scalar_b = true;
  for (int k = 0; k < rank; k++)
    scalar_b = scalar_b && (sb[k] == 0 || dims[k] == 1);
  if (fn == DG_BINARY_POW && scalar_b && b[0] == 2.0f) {
    fn = DG_BINARY_MUL;
    b = a;
    sb = sa;
  }
  run_fn run = run_of(fn);
  if (!run)
    return;
  /* Merged axes, outermost first; axis k+1 folds into k when both strides
   * of k are those of k+1 times its extent. */
  int64_t d[DG_MAX_RANK], ta[DG_MAX_RANK], tb[DG_MAX_RANK];
  int r = 0;
  for (int k = 0; k < rank; k++) {
    if (dims[k] == 1)
      continue;
    if (r && ta[r - 1] == sa[k] * dims[k] && tb[r - 1] == sb[k] * dims[k]) {
      d[r - 1] *= dims[k];
      ta[r - 1] = sa[k];
      tb[r - 1] = sb[k];
      continue;
    }
    d[r] = dims[k], ta[r] = sa[k], tb[r] = sb[k];
    r++;
  }
  if (!r) { /* every extent 1: one element */
    run(a, 0, b, 0, y, 1);
    return;
  }
  int64_t n = d[r - 1], outer = 1, idx[DG_MAX_RANK] = {0};
  for (int k = 0; k < r - 1; k++)
    outer *= d[k];
  int64_t ia = 0, ib = 0;
  for (int64_t o = 0; o < outer; o++, y += n) {
    run(a + ia, ta[r - 1], b + ib, tb[r - 1], y, n);
    for (int k = r - 2; k >= 0; k--) { /* odometer over the outer axes */
      ia += ta[k];
      ib += tb[k];
      if (++idx[k] < d[k])
        break;
      ia -= ta[k] * d[k];
      ib -= tb[k] * d[k];
      idx[k] = 0;
    }
  }
}
