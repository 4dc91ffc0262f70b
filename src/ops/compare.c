/* Comparisons, logic and float tests (DG_OP_COMPARE, the function in
 * p.fn, from compare.def) and the selection where (DG_OP_WHERE): every
 * elementwise op whose output or condition is bool, with numpy
 * broadcasting.
 *
 * NOT, ISNAN and the ISINFs are functions of the same op with one input
 * rather than ops of their own: dg_device_info.ops is a 64-bit mask of
 * ops, and they share the comparisons' table, kernels and output type. */
#include "build.h"
#include "ops.h"

#include <math.h>
#include <stdio.h>

enum { NUMERIC, LOGIC, FLOAT };

#define NUMERIC_TYPES                                                          \
  (DG_FLOAT_TYPES | DG_BIT(DG_DTYPE_I32) | DG_BIT(DG_DTYPE_I64))

static const struct {
  int inputs, takes;
} fns[DG_COMPARE_COUNT_] = {
#define DG_COMPARE(e, name, inputs, takes, formula)                            \
  [DG_COMPARE_##e] = {inputs, takes},
#include "compare.def"
#undef DG_COMPARE
};

const char *dg_compare_fn_name(dg_compare_fn fn) {
  switch (fn) {
#define DG_COMPARE(e, name, inputs, takes, formula)                            \
  case DG_COMPARE_##e:                                                         \
    return #name;
#include "compare.def"
#undef DG_COMPARE
  default:
    return "?";
  }
}

static unsigned mask_of(int takes) {
  return takes == NUMERIC ? NUMERIC_TYPES
         : takes == LOGIC ? DG_BIT(DG_DTYPE_BOOL)
                          : DG_FLOAT_TYPES;
}

/* Broadcasts d into (rank, dims); false (error naming field) if not. */
static bool broadcast(dg_build *b, int *rank, int64_t *dims,
                      const dg_tensor_info *t, const char *field) {
  int r;
  int64_t out[DG_MAX_RANK];
  if (dg_broadcast_dims(*rank, dims, t->desc.rank, t->desc.dims, &r, out)) {
    *rank = r;
    for (int k = 0; k < r; k++)
      dims[k] = out[k];
    return true;
  }
  char exp[96], got[96];
  dg_format_dims(exp, sizeof exp, *rank, dims);
  dg_format_dims(got, sizeof got, t->desc.rank, t->desc.dims);
  dg_build_fail(b, DG_ERROR_INVALID_SHAPE, field, exp, got,
                "shapes do not broadcast");
  return false;
}

/* arity: the inputs the caller's function allows (1 or 2): an fn of the
 * other arity is as invalid as an unknown one. */
static dg_tensor build(dg_graph *g, const char *name, int32_t fn, int arity,
                       dg_tensor a, dg_tensor bt) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_COMPARE, name))
    return DG_TENSOR_NONE;
  if (fn <= DG_COMPARE_INVALID || fn >= DG_COMPARE_COUNT_ ||
      fns[fn].inputs != arity) {
    char exp[48], got[32];
    snprintf(exp, sizeof exp, "a function of %d input%s", arity,
             arity == 1 ? "" : "s");
    snprintf(got, sizeof got, "%d", fn);
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "fn", exp, got,
                  "unknown compare function");
    return DG_TENSOR_NONE;
  }
  bool ok = true;
  const char *fa = arity == 1 ? "x" : "a";
  const dg_tensor_info *ai = dg_build_tensor(&b, a, fa, false, &ok);
  const dg_tensor_info *bi =
      ok && arity == 2 ? dg_build_tensor(&b, bt, "b", false, &ok) : NULL;
  if (!ok || !dg_build_dtype(&b, ai, fa, mask_of(fns[fn].takes)) ||
      (bi && !dg_build_same_dtype(&b, ai, bi, "b")))
    return DG_TENSOR_NONE;
  dg_tensor_desc out = {.dtype = DG_DTYPE_BOOL, .rank = ai->desc.rank};
  for (int k = 0; k < out.rank; k++)
    out.dims[k] = ai->desc.dims[k];
  if (bi && !broadcast(&b, &out.rank, out.dims, bi, "b"))
    return DG_TENSOR_NONE;
  dg_node_params p = {.fn = fn};
  uint32_t ins[2] = {a.id, bt.id};
  return dg_build_finish(&b, ins, arity, &out, &p);
}

dg_tensor dg_graph_compare(dg_graph *g, const char *name, dg_compare_fn fn,
                           dg_tensor a, dg_tensor b) {
  return build(g, name, (int32_t)fn, 2, a, b);
}

dg_tensor dg_graph_not(dg_graph *g, const char *name, dg_tensor x) {
  return build(g, name, DG_COMPARE_NOT, 1, x, DG_TENSOR_NONE);
}

dg_tensor dg_graph_isnan(dg_graph *g, const char *name, dg_tensor x) {
  return build(g, name, DG_COMPARE_ISNAN, 1, x, DG_TENSOR_NONE);
}

dg_tensor dg_graph_isinf(dg_graph *g, const char *name, dg_tensor x,
                         int detect_positive, int detect_negative) {
  if (!detect_positive && !detect_negative) {
    dg_build b;
    if (dg_build_begin(&b, g, DG_OP_COMPARE, name))
      dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "detect_positive",
                    "detect_positive or detect_negative", "neither",
                    "isinf must detect at least one sign");
    return DG_TENSOR_NONE;
  }
  int32_t fn = !detect_negative   ? DG_COMPARE_ISPOSINF
               : !detect_positive ? DG_COMPARE_ISNEGINF
                                  : DG_COMPARE_ISINF;
  return build(g, name, fn, 1, x, DG_TENSOR_NONE);
}

dg_tensor dg_graph_where(dg_graph *g, const char *name, dg_tensor cond,
                         dg_tensor x, dg_tensor y) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_WHERE, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *ci = dg_build_tensor(&b, cond, "cond", false, &ok);
  const dg_tensor_info *xi = ok ? dg_build_tensor(&b, x, "x", false, &ok) : 0;
  const dg_tensor_info *yi = ok ? dg_build_tensor(&b, y, "y", false, &ok) : 0;
  if (!ok || !dg_build_dtype(&b, ci, "cond", DG_BIT(DG_DTYPE_BOOL)) ||
      !dg_build_dtype(&b, xi, "x", NUMERIC_TYPES) ||
      !dg_build_same_dtype(&b, xi, yi, "y"))
    return DG_TENSOR_NONE;
  dg_tensor_desc out = {.dtype = xi->desc.dtype, .rank = ci->desc.rank};
  for (int k = 0; k < out.rank; k++)
    out.dims[k] = ci->desc.dims[k];
  if (!broadcast(&b, &out.rank, out.dims, xi, "x") ||
      !broadcast(&b, &out.rank, out.dims, yi, "y"))
    return DG_TENSOR_NONE;
  uint32_t ins[3] = {cond.id, x.id, y.id};
  return dg_build_finish(&b, ins, 3, &out, &(dg_node_params){0});
}

/* ---- reference ---- */

static int cmp_isnan(double a) { return isnan(a); }
static int cmp_isinf(double a) { return isinf(a); }

static double apply(int32_t fn, double a, double b) {
  (void)b;
  switch (fn) {
#define DG_COMPARE(e, name, inputs, takes, formula)                            \
  case DG_COMPARE_##e:                                                         \
    return (formula) ? 1 : 0;
#include "compare.def"
#undef DG_COMPARE
  default:
    return NAN;
  }
}

/* Offsets of output element i in each of count inputs broadcast to yd. */
static void offsets(const dg_tensor_desc *yd, int count,
                    int64_t (*s)[DG_MAX_RANK], int64_t i, int64_t *off) {
  for (int k = 0; k < count; k++)
    off[k] = 0;
  for (int d = yd->rank - 1; d >= 0; d--) {
    int64_t c = i % yd->dims[d];
    i /= yd->dims[d];
    for (int k = 0; k < count; k++)
      off[k] += c * s[k][d];
  }
}

static void strides_of(const dg_ir *ir, const dg_node *n,
                       const dg_tensor_desc *yd, int64_t (*s)[DG_MAX_RANK]) {
  for (int k = 0; k < n->input_count; k++) {
    const dg_tensor_desc *d = &dg_ir_tensor(ir, n->inputs[k])->desc;
    dg_broadcast_strides(d->rank, d->dims, yd->rank, yd->dims, s[k]);
  }
}

void dg_ref_compare(const dg_ir *ir, const dg_node *n, const double *const *in,
                    double *out) {
  const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
  int64_t s[2][DG_MAX_RANK], off[2] = {0, 0};
  strides_of(ir, n, yd, s);
  for (int64_t i = 0, e = dg_desc_elements(yd); i < e; i++) {
    offsets(yd, n->input_count, s, i, off);
    out[i] =
        apply(n->p.fn, in[0][off[0]], n->input_count > 1 ? in[1][off[1]] : 0);
  }
}

void dg_ref_where(const dg_ir *ir, const dg_node *n, const double *const *in,
                  double *out) {
  const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
  int64_t s[3][DG_MAX_RANK], off[3];
  strides_of(ir, n, yd, s);
  for (int64_t i = 0, e = dg_desc_elements(yd); i < e; i++) {
    offsets(yd, 3, s, i, off);
    out[i] = in[0][off[0]] != 0 ? in[1][off[1]] : in[2][off[2]];
  }
}

static double out_elems(const dg_ir *ir, const dg_node *n) {
  return (double)dg_desc_elements(&dg_ir_tensor(ir, n->output)->desc);
}
double dg_flops_compare(const dg_ir *ir, const dg_node *n) {
  return out_elems(ir, n);
}
double dg_flops_where(const dg_ir *ir, const dg_node *n) {
  return out_elems(ir, n);
}
