/* CPU kernels of the bool-valued ops and the arg reductions: compare
 * (every function of src/ops/compare.def), where and arg_reduce.
 *
 * They read each dtype as it is stored (f16 converted per element, i64
 * compared as i64, so that values beyond 2^53 still order exactly) rather
 * than through the segment runner's f32 staging, which would widen a bool
 * output or narrow an i64 input. The broadcast walk merges axes where
 * every operand stays contiguous, as binary.c does, and runs the innermost
 * axis as one loop per (dtype, function). */
#include "cpu_ops.h"

#include "core/half.h" /* dg_f16_to_f32 */
#include "ops/ops.h"

#include <math.h>
#include <string.h>

/* ---- the broadcast walk ---- */

/* The output's axes with extent-1 axes dropped and contiguous ones
 * merged, and each input's element strides along them. */
void dg_cpu_walk_init(dg_cpu_walk *w, const dg_cpu_node *cn) {
  const dg_tensor_desc *yd = dg_ir_desc(cn->ir, cn->node->output);
  int64_t s[DG_CPU_WALK_MAX_IN][DG_MAX_RANK];
  w->count = cn->node->input_count;
  for (int k = 0; k < w->count; k++) {
    const dg_tensor_desc *d = dg_ir_desc(cn->ir, cn->node->inputs[k]);
    dg_broadcast_strides(d->rank, d->dims, yd->rank, yd->dims, s[k]);
  }
  w->rank = 0;
  for (int a = 0; a < yd->rank; a++) {
    if (yd->dims[a] == 1)
      continue;
    bool merge = w->rank > 0;
    for (int k = 0; merge && k < w->count; k++)
      merge = w->s[k][w->rank - 1] == s[k][a] * yd->dims[a];
    int r = merge ? w->rank - 1 : w->rank++;
    w->dims[r] = merge ? w->dims[r] * yd->dims[a] : yd->dims[a];
    for (int k = 0; k < w->count; k++)
      w->s[k][r] = s[k][a];
  }
  if (!w->rank) { /* one element */
    w->rank = 1;
    w->dims[0] = 1;
    for (int k = 0; k < w->count; k++)
      w->s[k][0] = 0;
  }
}

void dg_cpu_walk_run(const dg_cpu_walk *w, dg_cpu_walk_fn run, void *ctx) {
  int r = w->rank;
  int64_t n = w->dims[r - 1], outer = 1, idx[DG_MAX_RANK] = {0};
  int64_t off[DG_CPU_WALK_MAX_IN] = {0}, inner[DG_CPU_WALK_MAX_IN];
  for (int k = 0; k < r - 1; k++)
    outer *= w->dims[k];
  for (int k = 0; k < w->count; k++)
    inner[k] = w->s[k][r - 1];
  for (int64_t o = 0; o < outer; o++) {
    run(ctx, off, inner, n, o * n);
    for (int a = r - 2; a >= 0; a--) { /* odometer over the outer axes */
      for (int k = 0; k < w->count; k++)
        off[k] += w->s[k][a];
      if (++idx[a] < w->dims[a])
        break;
      for (int k = 0; k < w->count; k++)
        off[k] -= w->s[k][a] * w->dims[a];
      idx[a] = 0;
    }
  }
}

/* ---- compare ---- */

static inline int cmp_isnan(double a) { return isnan(a); }
static inline int cmp_isinf(double a) { return isinf(a); }

typedef struct cmp_ctx {
  int fn;
  dg_dtype t;
  const void *a, *b;
  uint8_t *y;
} cmp_ctx;

#define LOAD_F32(p, i) (((const float *)(p))[i])
#define LOAD_F16(p, i) dg_f16_to_f32(((const uint16_t *)(p))[i])
#define LOAD_I32(p, i) (((const int32_t *)(p))[i])
#define LOAD_I64(p, i) (((const int64_t *)(p))[i])
#define LOAD_BOOL(p, i) (((const uint8_t *)(p))[i])

/* One run of fn on inputs of C type T read by LOAD: the switch over
 * compare.def's lines is expanded once per input type below, with T and
 * LOAD defined for it. A one-input fn reads a for b too (its formula
 * ignores b). Combinations the builder refuses (LOGIC on floats, ...)
 * compile but never run. */
#define DG_COMPARE(e, name, inputs, takes, formula)                            \
  case DG_COMPARE_##e:                                                         \
    for (int64_t i = 0; i < n; i++) {                                          \
      T a = LOAD(c->a, off[0] + i * st[0]);                                    \
      T b = inputs == 2 ? LOAD(c->b, off[1] + i * st[1]) : a;                  \
      (void)b;                                                                 \
      y[i] = (formula) ? 1 : 0;                                                \
    }                                                                          \
    break;
#define CMP_ARGS                                                               \
  const cmp_ctx *c, const int64_t *off, const int64_t *st, int64_t n, uint8_t *y

#define T float
#define LOAD LOAD_F32
static void cmp_f32(CMP_ARGS) {
  switch (c->fn) {
#include "ops/compare.def"
  }
}
#undef LOAD
#define LOAD LOAD_F16
static void cmp_f16(CMP_ARGS) {
  switch (c->fn) {
#include "ops/compare.def"
  }
}
#undef LOAD
#undef T
#define T int32_t
#define LOAD LOAD_I32
static void cmp_i32(CMP_ARGS) {
  switch (c->fn) {
#include "ops/compare.def"
  }
}
#undef LOAD
#undef T
#define T int64_t
#define LOAD LOAD_I64
static void cmp_i64(CMP_ARGS) {
  switch (c->fn) {
#include "ops/compare.def"
  }
}
#undef LOAD
#undef T
#define T int /* not uint8_t: the float tests' a < 0 would warn */
#define LOAD LOAD_BOOL
static void cmp_bool(CMP_ARGS) {
  switch (c->fn) {
#include "ops/compare.def"
  }
}
#undef LOAD
#undef T
#undef DG_COMPARE

static void cmp_run(void *ctx, const int64_t *off, const int64_t *st, int64_t n,
                    int64_t out) {
  const cmp_ctx *c = ctx;
  uint8_t *y = c->y + out;
  switch (c->t) {
  case DG_DTYPE_F32:
    cmp_f32(c, off, st, n, y);
    break;
  case DG_DTYPE_F16:
    cmp_f16(c, off, st, n, y);
    break;
  case DG_DTYPE_I32:
    cmp_i32(c, off, st, n, y);
    break;
  case DG_DTYPE_I64:
    cmp_i64(c, off, st, n, y);
    break;
  case DG_DTYPE_BOOL:
    cmp_bool(c, off, st, n, y);
    break;
  default:
    break;
  }
}

void dg_cpu_compare_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                      void *out, void *scratch) {
  (void)pool, (void)scratch;
  dg_cpu_walk w;
  dg_cpu_walk_init(&w, cn);
  cmp_ctx c = {cn->node->p.fn, dg_ir_desc(cn->ir, cn->node->inputs[0])->dtype,
               in[0], cn->node->input_count > 1 ? in[1] : NULL, out};
  dg_cpu_walk_run(&w, cmp_run, &c);
}

/* ---- where: moves elements of x or y, whatever their type ---- */

typedef struct where_ctx {
  const uint8_t *cond;
  const void *x, *y;
  void *out;
  size_t es;
} where_ctx;

#define WHERE_RUN(U)                                                           \
  for (int64_t i = 0; i < n; i++)                                              \
    ((U *)w->out)[out + i] = w->cond[off[0] + i * st[0]]                       \
                                 ? ((const U *)w->x)[off[1] + i * st[1]]       \
                                 : ((const U *)w->y)[off[2] + i * st[2]];

static void where_run(void *ctx, const int64_t *off, const int64_t *st,
                      int64_t n, int64_t out) {
  const where_ctx *w = ctx;
  switch (w->es) {
  case 1:
    WHERE_RUN(uint8_t) break;
  case 2:
    WHERE_RUN(uint16_t) break;
  case 4:
    WHERE_RUN(uint32_t) break;
  case 8:
    WHERE_RUN(uint64_t) break;
  default:
    break;
  }
}

void dg_cpu_where_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                    void *out, void *scratch) {
  (void)pool, (void)scratch;
  dg_cpu_walk w;
  dg_cpu_walk_init(&w, cn);
  where_ctx c = {in[0], in[1], in[2], out,
                 dg_dtype_size(dg_ir_desc(cn->ir, cn->node->output)->dtype)};
  dg_cpu_walk_run(&w, where_run, &c);
}

/* ---- arg_reduce ---- */

/* Index of the best of len elements x[k * inner] (the reference's scan:
 * replace on strictly better, or on equal with last). */
#define ARG_SCAN(T, LOAD)                                                      \
  for (int64_t o = 0; o < outer; o++)                                          \
    for (int64_t j = 0; j < inner; j++) {                                      \
      int64_t base = o * len * inner + j, at = 0;                              \
      T best = LOAD(in, base);                                                 \
      for (int64_t k = 1; k < len; k++) {                                      \
        T v = LOAD(in, base + k * inner);                                      \
        bool better = max ? v > best : v < best;                               \
        if (better || (last && v == best)) {                                   \
          best = v;                                                            \
          at = k;                                                              \
        }                                                                      \
      }                                                                        \
      y[o * inner + j] = at;                                                   \
    }

void dg_cpu_arg_reduce_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *ins,
                         void *out, void *scratch) {
  (void)pool, (void)scratch;
  const dg_node *n = cn->node;
  const dg_tensor_desc *xd = dg_ir_desc(cn->ir, n->inputs[0]);
  const void *in = ins[0];
  int64_t *y = out;
  int64_t outer = 1, inner = 1, len = xd->dims[n->p.axis];
  for (int k = 0; k < n->p.axis; k++)
    outer *= xd->dims[k];
  for (int k = n->p.axis + 1; k < xd->rank; k++)
    inner *= xd->dims[k];
  bool max = n->p.fn == DG_ARG_MAX, last = n->p.select_last_index != 0;
  switch (xd->dtype) {
  case DG_DTYPE_F32:
    ARG_SCAN(float, LOAD_F32) break;
  case DG_DTYPE_F16:
    ARG_SCAN(float, LOAD_F16) break;
  case DG_DTYPE_I32:
    ARG_SCAN(int32_t, LOAD_I32) break;
  case DG_DTYPE_I64:
    ARG_SCAN(int64_t, LOAD_I64) break;
  default:
    break;
  }
}
