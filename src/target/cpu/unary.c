/* The unary functions (src/ops/unary.def) over float arrays.
 *
 * unary.def's formula of each function becomes an inline float function
 * and a loop over it, compiled (as sigmoid.c's) for the machine's
 * baseline and, on x86-64, with AVX2 and AVX-512 enabled;
 * dg_cpu_simd_level() picks one per call. GCC (12, -O3) vectorises the
 * loops whose formula needs no libm call: reciprocal, abs, neg, hard
 * sigmoid and swish, leaky and thresholded relu, softsign, shrink, floor,
 * ceil and round (from rintf) and sign. The others call libm's float
 * functions per element (within an ulp or two; sqrtf stays a call for
 * errno's sake), spread over the pool's threads. f16 nodes arrive here
 * as f32 copies (cpu_ops.h). */
#include "cpu_ops.h"

#include "../../graph/ir.h"

#include <math.h>

#define C(v) ((float)(v))
#define MAX(p, q) ((p) > (q) ? (p) : (q))
#define MIN(p, q) ((p) < (q) ? (p) : (q))
#define EXP expf
#define LOG logf
#define SQRT sqrtf
#define FABS fabsf
#define FLOOR floor_v
#define CEIL ceil_v
#define RINT rintf /* the default rounding mode: half to even */
#define TANH tanhf
#define ERF erff
#define EXPM1 expm1f
#define LOG1P log1pf
#define SIN sinf
#define COS cosf
#define TAN tanf
#define ASIN asinf
#define ACOS acosf
#define ATAN atanf
#define SINH sinhf
#define COSH coshf
#define ASINH asinhf
#define ACOSH acoshf
#define ATANH atanhf

/* floor and ceil from rintf, which GCC vectorises (roundps), where it
 * leaves floorf and ceilf calls: the nearest integer, stepped down (up)
 * when it lies above (below) x. Exact, with -0, infinities and NaN kept
 * (rintf keeps them, and the comparisons are then false). */
static inline float floor_v(float x) {
  float r = rintf(x);
  return r > x ? r - 1.0f : r;
}
static inline float ceil_v(float x) {
  float r = rintf(x);
  return r < x ? r + 1.0f : r;
}

typedef void (*unary_loop)(const float *x, float *y, int64_t n, float a,
                           float b);

#define DG_UNARY(e, name, params, a0, b0, lo, hi, f)                           \
  static inline float f_##name(float x, float a, float b) {                    \
    (void)a, (void)b;                                                          \
    return f;                                                                  \
  }
#include "../../ops/unary.def"
#undef DG_UNARY

/* The loops, one per function and level (attr: the level's target). */
#define LOOP(level, attr, name)                                                \
  attr static void level##_##name(const float *x, float *y, int64_t n,         \
                                  float a, float b) {                          \
    for (int64_t i = 0; i < n; i++)                                            \
      y[i] = f_##name(x[i], a, b);                                             \
  }

#define DG_UNARY(e, name, params, a0, b0, lo, hi, f) LOOP(base, , name)
#include "../../ops/unary.def"
#undef DG_UNARY
static const unary_loop base_loops[DG_UNARY_COUNT_] = {
#define DG_UNARY(e, name, params, a0, b0, lo, hi, f)                           \
  [DG_UNARY_##e] = base_##name,
#include "../../ops/unary.def"
#undef DG_UNARY
};

#if defined(__x86_64__)
#define AVX2 __attribute__((target("avx2,fma")))
#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma")))
#define DG_UNARY(e, name, params, a0, b0, lo, hi, f)                           \
  LOOP(avx2, AVX2, name) LOOP(avx512, AVX512, name)
#include "../../ops/unary.def"
#undef DG_UNARY
static const unary_loop avx2_loops[DG_UNARY_COUNT_] = {
#define DG_UNARY(e, name, params, a0, b0, lo, hi, f)                           \
  [DG_UNARY_##e] = avx2_##name,
#include "../../ops/unary.def"
#undef DG_UNARY
};
static const unary_loop avx512_loops[DG_UNARY_COUNT_] = {
#define DG_UNARY(e, name, params, a0, b0, lo, hi, f)                           \
  [DG_UNARY_##e] = avx512_##name,
#include "../../ops/unary.def"
#undef DG_UNARY
};
#endif

void dg_cpu_unary(int fn, const float *x, float *y, int64_t n, float a,
                  float b) {
  if (fn <= DG_UNARY_INVALID || fn >= DG_UNARY_COUNT_)
    return; /* the builder lets none through */
  unary_loop run = base_loops[fn];
#if defined(__x86_64__)
  int level = dg_cpu_simd_level();
  if (level >= DG_CPU_SIMD_AVX512)
    run = avx512_loops[fn];
  else if (level == DG_CPU_SIMD_AVX2)
    run = avx2_loops[fn];
#endif
  run(x, y, n, a, b);
}

/* The node: chunks of CHUNK elements spread over the pool's threads (the
 * libm-bound functions cost tens of cycles an element). */
enum { CHUNK = 16384 };
typedef struct unary_job {
  const dg_node *node;
  const float *x;
  float *y;
  int64_t n;
} unary_job;

static void unary_task(void *arg, int i, int count) {
  (void)count;
  const unary_job *j = arg;
  int64_t lo = (int64_t)i * CHUNK, len = j->n - lo < CHUNK ? j->n - lo : CHUNK;
  dg_cpu_unary(j->node->p.fn, j->x + lo, j->y + lo, len, j->node->p.alpha,
               j->node->p.beta);
}

void dg_cpu_unary_node(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                       void *out, void *scratch) {
  (void)scratch;
  unary_job j = {
      cn->node, in[0], out,
      dg_desc_elements(&dg_ir_tensor(cn->ir, cn->node->output)->desc)};
  int64_t chunks = (j.n + CHUNK - 1) / CHUNK;
  if (chunks <= 1 || chunks > 0x7fffffff)
    dg_cpu_unary(cn->node->p.fn, j.x, j.y, j.n, cn->node->p.alpha,
                 cn->node->p.beta);
  else
    dg_cpu_pool_run(pool, unary_task, &j, (int)chunks);
}
