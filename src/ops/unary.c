/* dg_graph_unary: the elementwise functions of unary.def, their names, the
 * builder's checks and the float64 reference. */
#include "build.h"
#include "ops.h"

#include <math.h>
#include <stdio.h>

/* Each line's position is its dg_unary_fn value, and the table covers the
 * enum (as op_table.c checks ops.def). */
enum {
#define DG_UNARY(e, name, params, a0, b0, lo, hi, fuses, f) UNARY_LINE_##e,
#include "unary.def"
#undef DG_UNARY
  UNARY_LINES
};
#define DG_UNARY(e, name, params, a0, b0, lo, hi, fuses, f)                    \
  _Static_assert((int)DG_UNARY_##e == (int)UNARY_LINE_##e + 1,                 \
                 "unary.def: " #e " is not on the line of its value");
#include "unary.def"
#undef DG_UNARY
_Static_assert(UNARY_LINES + 1 == DG_UNARY_COUNT_,
               "unary.def does not have one line per dg_unary_fn");

static const dg_unary_def table[DG_UNARY_COUNT_] = {
#define DG_UNARY(e, x, params, a0, b0, lo, hi, fuses, f)                       \
  [DG_UNARY_##e] = {#x, params, a0, b0, lo, hi, fuses},
#include "unary.def"
#undef DG_UNARY
};

const dg_unary_def *dg_unary_def_get(int fn) {
  return fn > DG_UNARY_INVALID && fn < DG_UNARY_COUNT_ ? &table[fn] : NULL;
}

const char *dg_unary_fn_name(dg_unary_fn fn) {
  const dg_unary_def *d = dg_unary_def_get(fn);
  return d ? d->name : "?";
}

/* A parameter the function does not take must be 0; one it takes must be
 * finite (every formula is then defined for every x). */
static bool check_param(dg_build *b, const char *field, float v, bool takes,
                        const char *fn) {
  if (takes ? isfinite(v) : v == 0.0f)
    return true;
  char got[32];
  snprintf(got, sizeof got, "%g", v);
  dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, field, takes ? "finite" : "0",
                got, takes ? "%s's %s must be finite" : "%s takes no %s", fn,
                field);
  return false;
}

bool dg_unary_check(dg_build *b, dg_unary_fn fn, float alpha, float beta) {
  const dg_unary_def *d = dg_unary_def_get(fn);
  if (!d) {
    char exp[32], got[32];
    snprintf(exp, sizeof exp, "in [1, %d)", DG_UNARY_COUNT_);
    snprintf(got, sizeof got, "%d", (int)fn);
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "fn", exp, got,
                  "not a dg_unary_fn");
    return false;
  }
  if (d->params == 3) { /* a range: infinite ends allowed, not NaN */
    if (alpha <= beta)
      return true;
    char got[64];
    snprintf(got, sizeof got, "lo=%g hi=%g", alpha, beta);
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "lo", "lo <= hi, not NaN", got,
                  "empty %s range", d->name);
    return false;
  }
  if (!check_param(b, "alpha", alpha, d->params >= 1, d->name) ||
      !check_param(b, "beta", beta, d->params >= 2, d->name))
    return false;
  if (fn == DG_UNARY_CELU && alpha == 0.0f) { /* celu divides by alpha */
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "alpha", "not 0", "0",
                  "celu's alpha must not be 0");
    return false;
  }
  return true;
}

dg_tensor dg_graph_unary(dg_graph *g, const char *name, dg_unary_fn fn,
                         dg_tensor x, float alpha, float beta) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_UNARY, name) ||
      !dg_unary_check(&b, fn, alpha, beta))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  if (!ok || !dg_build_dtype(&b, xi, "x", DG_FLOAT_TYPES))
    return DG_TENSOR_NONE;
  dg_node_params p = {.fn = fn, .alpha = alpha, .beta = beta};
  uint32_t ins[1] = {x.id};
  return dg_build_finish(&b, ins, 1, &xi->desc, &p);
}

/* ---- reference: unary.def's formulas in double ---- */

#define C(v) ((double)(v))
#define MAX(p, q) ((p) > (q) ? (p) : (q))
#define MIN(p, q) ((p) < (q) ? (p) : (q))
#define EXP exp
#define LOG log
#define SQRT sqrt
#define FABS fabs
#define FLOOR floor
#define CEIL ceil
#define RINT nearbyint /* the default rounding mode: half to even */
#define TANH tanh
#define ERF erf
#define EXPM1 expm1
#define LOG1P log1p
#define SIN sin
#define COS cos
#define TAN tan
#define ASIN asin
#define ACOS acos
#define ATAN atan
#define SINH sinh
#define COSH cosh
#define ASINH asinh
#define ACOSH acosh
#define ATANH atanh

#define DG_UNARY(e, name, params, a0, b0, lo, hi, fuses, f)                    \
  static double ref_##name(double x, double a, double b) {                     \
    (void)a, (void)b;                                                          \
    return f;                                                                  \
  }
#include "unary.def"
#undef DG_UNARY

static double (*const ref_fns[DG_UNARY_COUNT_])(double, double, double) = {
#define DG_UNARY(e, name, params, a0, b0, lo, hi, fuses, f)                    \
  [DG_UNARY_##e] = ref_##name,
#include "unary.def"
#undef DG_UNARY
};

double dg_unary_value(int fn, double x, double a, double b) {
  return ref_fns[fn](x, a, b);
}

void dg_ref_unary(const dg_ir *ir, const dg_node *n, const double *const *in,
                  double *out) {
  double (*fn)(double, double, double) = ref_fns[n->p.fn];
  double a = n->p.alpha, b = n->p.beta;
  for (int64_t i = 0, e = dg_desc_elements(&dg_ir_tensor(ir, n->output)->desc);
       i < e; i++)
    out[i] = fn(in[0][i], a, b);
}

/* A transcendental function counts as a few flops: 4 per element, as
 * sigmoid does. */
double dg_flops_unary(const dg_ir *ir, const dg_node *n) {
  return 4.0 * (double)dg_desc_elements(&dg_ir_tensor(ir, n->output)->desc);
}
