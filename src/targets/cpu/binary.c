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

/* The merged walk: d[0..r) extents, ta/tb strides; the innermost axis
 * runs as one loop, the outer ones by an odometer. */
typedef struct bin_walk {
  run_fn run;
  int r;
  int64_t d[DG_MAX_RANK], ta[DG_MAX_RANK], tb[DG_MAX_RANK];
  int64_t n, outer; /* innermost extent; product of the outer ones */
  const float *a, *b;
  float *y;
  int tasks;
} bin_walk;

/* Outer rows [o0, o1) of the walk. */
static void walk_rows(const bin_walk *w, int64_t o0, int64_t o1) {
  int r = w->r;
  int64_t n = w->n, idx[DG_MAX_RANK] = {0}, ia = 0, ib = 0, rest = o0;
  for (int k = r - 2; k >= 0; k--) { /* the odometer at row o0 */
    idx[k] = rest % w->d[k];
    rest /= w->d[k];
    ia += idx[k] * w->ta[k];
    ib += idx[k] * w->tb[k];
  }
  float *y = w->y + o0 * n;
  for (int64_t o = o0; o < o1; o++, y += n) {
    w->run(w->a + ia, w->ta[r - 1], w->b + ib, w->tb[r - 1], y, n);
    for (int k = r - 2; k >= 0; k--) {
      ia += w->ta[k];
      ib += w->tb[k];
      if (++idx[k] < w->d[k])
        break;
      ia -= w->ta[k] * w->d[k];
      ib -= w->tb[k] * w->d[k];
      idx[k] = 0;
    }
  }
}

/* Task t of n: a share of the rows, or of the one run when there is a
 * single row. */
static void walk_task(void *arg, int t, int n) {
  const bin_walk *w = arg;
  if (w->outer > 1) {
    walk_rows(w, w->outer * t / n, w->outer * (t + 1) / n);
    return;
  }
  int64_t i0 = w->n * t / n, i1 = w->n * (t + 1) / n, r = w->r;
  w->run(w->a + i0 * w->ta[r - 1], w->ta[r - 1], w->b + i0 * w->tb[r - 1],
         w->tb[r - 1], w->y + i0, i1 - i0);
}

void dg_cpu_binary(dg_cpu_pool *pool, int fn, int rank, const int64_t *dims,
                   const float *a, const int64_t *sa, const float *b,
                   const int64_t *sb, float *y) {
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
  bin_walk w = {.run = run_of(fn), .a = a, .b = b, .y = y};
  if (!w.run)
    return;
  /* Merged axes, outermost first; axis k+1 folds into k when both strides
   * of k are those of k+1 times its extent. */
  int r = 0;
  for (int k = 0; k < rank; k++) {
    if (dims[k] == 1)
      continue;
    if (r && w.ta[r - 1] == sa[k] * dims[k] && w.tb[r - 1] == sb[k] * dims[k]) {
      w.d[r - 1] *= dims[k];
      w.ta[r - 1] = sa[k];
      w.tb[r - 1] = sb[k];
      continue;
    }
    w.d[r] = dims[k], w.ta[r] = sa[k], w.tb[r] = sb[k];
    r++;
  }
  if (!r) { /* every extent 1: one element */
    w.run(a, 0, b, 0, y, 1);
    return;
  }
  w.r = r;
  w.n = w.d[r - 1];
  w.outer = 1;
  for (int k = 0; k < r - 1; k++)
    w.outer *= w.d[k];
  /* By rows, or one run by pieces; below 64k outputs on one thread. */
  dg_cpu_pool_run(
      pool, walk_task, &w,
      dg_cpu_pool_tasks(pool, w.n * w.outer, 65536, w.outer > 1 ? w.outer : 0));
}
