/* The unary functions (src/ops/unary.def) over float arrays.
 *
 * unary.def's formula of each function becomes an inline float function
 * and a loop over it, compiled (as sigmoid.c's) for the machine's
 * baseline and, on x86-64, with AVX2 and AVX-512 enabled;
 * dg_cpu_simd_level() picks one per call. GCC (12, -O3) vectorises the
 * loops whose formula needs no libm call: reciprocal, abs, neg, hard
 * sigmoid and swish, leaky and thresholded relu, softsign, shrink, floor,
 * ceil and round (from rintf), sign, and those of exp, expm1 and tanh,
 * which are computed here (vexp.h's exp and the rest, below: tanh, exp,
 * gelu_tanh, silu, elu, selu, celu), and erf's (erf, gelu). The others call
 * libm's float functions per element (within an ulp or two; sqrtf stays a call
 * for errno's sake), spread over the pool's threads. f16 nodes arrive here as
 * f32 copies (cpu_ops.h). */
#include "cpu_ops.h"

#include "core/ir.h"
#include "vexp.h"

#include <math.h>
#include <string.h>

#define C(v) ((float)(v))
#define MAX(p, q) ((p) > (q) ? (p) : (q))
#define MIN(p, q) ((p) < (q) ? (p) : (q))
#define EXP dg_cpu_exp
#define LOG logf
#define SQRT sqrtf
#define FABS fabsf
#define FLOOR floor_v
#define CEIL ceil_v
#define RINT rintf /* the default rounding mode: half to even */
#define TANH tanh_v
#define ERF erf_v
#define EXPM1 expm1_v
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

/* exp is vexp.h's dg_cpu_exp (shared with sigmoid and softmax); expm1
 * and tanh below are built on it, as loops GCC vectorises (libm's are
 * calls). */
/* e^x - 1 without the cancellation near 0: there (|x| < 0.35) its Taylor
 * polynomial to x^8 (truncation below 3e-10 relative), beyond it dg_cpu_exp's
 * result less 1. Within 2.8 ulps (measured on [-20, 0], at |x| = 0.36).
 * The polynomials here are fmaf steps, as vexp.h's: the same bits at
 * every SIMD level. */
static inline float expm1_v(float x) {
  float p = 1.0f / 40320;
  p = fmaf(p, x, 1.0f / 5040);
  p = fmaf(p, x, 1.0f / 720);
  p = fmaf(p, x, 1.0f / 120);
  p = fmaf(p, x, 1.0f / 24);
  p = fmaf(p, x, 1.0f / 6);
  p = fmaf(p, x, 0.5f);
  p = fmaf(p, x, 1.0f);
  float small = p * x;
  /* one comparison, no && (whose branch keeps the loop scalar) */
  return fabsf(x) < 0.35f ? small : dg_cpu_exp(x) - 1.0f;
}

/* tanh |x| = m / (m + 2), m = e^(2|x|) - 1, accurate near 0 through
 * expm1_v; |x| is clamped at 10, where tanh is 1 in float (so that m
 * stays finite). Within 4 ulps (measured on [-20, 20]). */
static inline float tanh_v(float x) {
  float a = fabsf(x);
  a = a > 10.0f ? 10.0f : a;
  float m = expm1_v(2.0f * a);
  float t = m / (m + 2.0f);
  return copysignf(t, x); /* keeps -0 (t = 0) and NaN (t is NaN) */
}

/* erf as the Vulkan target's dg_erf computes it (shaders/unary_math.glsl:
 * the same interpolants, within 9e-8 of erf), with both branches
 * evaluated and one selected, so that the loop vectorises: |x| < 1: x *
 * p(x^2), p of degree 6 in s = 2x^2 - 1; 1 <= |x| < 4: 1 - exp(-x^2)
 * q(|x|), q of degree 10 in s = (|x| - 2.5) / 1.5; beyond, 1. The sign
 * is put back, keeping -0; NaN stays NaN. */
static inline float erf_v(float x) {
  float a = fabsf(x);
  float s = 2.0f * (a * a) - 1.0f;
  float p = 1.230605477e-06f;
  p = fmaf(p, s, -1.766906803e-05f);
  p = fmaf(p, s, 2.175135417e-04f);
  p = fmaf(p, s, -2.285419545e-03f);
  p = fmaf(p, s, 1.985249714e-02f);
  p = fmaf(p, s, -1.405360973e-01f);
  p = fmaf(p, s, 9.654687387e-01f);
  float b = a < 4.0f ? a : 4.0f; /* keeps exp's argument in range */
  float u = b * (1.0f / 1.5f) - (2.5f / 1.5f);
  float q = 9.294974298e-05f;
  q = fmaf(q, u, -2.451864515e-04f);
  q = fmaf(q, u, 3.764772748e-04f);
  q = fmaf(q, u, -9.162726026e-04f);
  q = fmaf(q, u, 2.418384229e-03f);
  q = fmaf(q, u, -5.611233637e-03f);
  q = fmaf(q, u, 1.248669964e-02f);
  q = fmaf(q, u, -2.699793742e-02f);
  q = fmaf(q, u, 5.611062799e-02f);
  q = fmaf(q, u, -1.115213905e-01f);
  q = fmaf(q, u, 2.108063641e-01f);
  float far = 1.0f - dg_cpu_exp(-(b * b)) * q;
  float r = a < 1.0f ? a * p : (a < 4.0f ? far : 1.0f);
  return x == x ? copysignf(r, x) : x; /* keeps -0 (r = 0) and NaN */
}

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

#define DG_UNARY(e, name, params, a0, b0, lo, hi, fuses, f)                    \
  static inline float f_##name(float x, float a, float b) {                    \
    (void)a, (void)b;                                                          \
    return f;                                                                  \
  }
#include "ops/unary.def"
#undef DG_UNARY

/* The loops, one per function and level (attr: the level's target). */
#define LOOP(level, attr, name)                                                \
  attr static void level##_##name(const float *x, float *y, int64_t n,         \
                                  float a, float b) {                          \
    for (int64_t i = 0; i < n; i++)                                            \
      y[i] = f_##name(x[i], a, b);                                             \
  }

#define DG_UNARY(e, name, params, a0, b0, lo, hi, fuses, f) LOOP(base, , name)
#include "ops/unary.def"
#undef DG_UNARY
static const unary_loop base_loops[DG_UNARY_COUNT_] = {
#define DG_UNARY(e, name, params, a0, b0, lo, hi, fuses, f)                    \
  [DG_UNARY_##e] = base_##name,
#include "ops/unary.def"
#undef DG_UNARY
};

#if defined(__x86_64__)
#define AVX2 __attribute__((target("avx2,fma")))
#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma")))
#define DG_UNARY(e, name, params, a0, b0, lo, hi, fuses, f)                    \
  LOOP(avx2, AVX2, name) LOOP(avx512, AVX512, name)
#include "ops/unary.def"
#undef DG_UNARY
static const unary_loop avx2_loops[DG_UNARY_COUNT_] = {
#define DG_UNARY(e, name, params, a0, b0, lo, hi, fuses, f)                    \
  [DG_UNARY_##e] = avx2_##name,
#include "ops/unary.def"
#undef DG_UNARY
};
static const unary_loop avx512_loops[DG_UNARY_COUNT_] = {
#define DG_UNARY(e, name, params, a0, b0, lo, hi, fuses, f)                    \
  [DG_UNARY_##e] = avx512_##name,
#include "ops/unary.def"
#undef DG_UNARY
};
#endif

void dg_cpu_unary(int fn, const float *x, float *y, int64_t n, float a,
                  float b) {
  if (fn <= DG_UNARY_INVALID || fn >= DG_UNARY_COUNT_)
    return;                     /* the builder lets none through */
  if (fn == DG_UNARY_SIGMOID) { /* sigmoid.c's kernel: one per function */
    dg_cpu_sigmoid(x, y, n);
    return;
  }
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
