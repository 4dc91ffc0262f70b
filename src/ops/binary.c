/* Elementwise binary functions with numpy broadcasting: dg_graph_binary
 * (DG_OP_BINARY, the function in p.fn, from binary.def), and dg_graph_add,
 * its old call for fn ADD (DG_OP_ADD is reserved: ops.def). */
#include "build.h"
#include "ops.h"

#include <math.h>
#include <stdio.h>

const char *dg_binary_fn_name(dg_binary_fn fn) {
  switch (fn) {
#define DG_BINARY(e, name, formula)                                            \
  case DG_BINARY_##e:                                                          \
    return #name;
#include "binary.def"
#undef DG_BINARY
  default:
    return "?";
  }
}

dg_tensor dg_graph_binary(dg_graph *g, const char *name, dg_binary_fn fn,
                          dg_tensor a, dg_tensor bt) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_BINARY, name))
    return DG_TENSOR_NONE;
  if (fn <= DG_BINARY_INVALID || fn >= DG_BINARY_COUNT_) {
    char exp[32], got[32];
    snprintf(exp, sizeof exp, "in [1, %d]", DG_BINARY_COUNT_ - 1);
    snprintf(got, sizeof got, "%d", fn);
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "fn", exp, got,
                  "unknown binary function");
    return DG_TENSOR_NONE;
  }
  bool ok = true;
  const dg_tensor_info *ai = dg_build_tensor(&b, a, "a", false, &ok);
  const dg_tensor_info *bi = ok ? dg_build_tensor(&b, bt, "b", false, &ok) : 0;
  if (!ok || !dg_build_dtype(&b, ai, "a", DG_FLOAT_TYPES) ||
      !dg_build_same_dtype(&b, ai, bi, "b"))
    return DG_TENSOR_NONE;
  dg_tensor_desc out = {.dtype = ai->desc.dtype};
  if (!dg_build_broadcast(&b, ai, bi, "b", &out))
    return DG_TENSOR_NONE;
  dg_node_params p = {.fn = (int32_t)fn};
  uint32_t ins[2] = {a.id, bt.id};
  return dg_build_finish(&b, ins, 2, &out, &p);
}

dg_tensor dg_graph_add(dg_graph *g, const char *name, dg_tensor a,
                       dg_tensor b) {
  return dg_graph_binary(g, name, DG_BINARY_ADD, a, b);
}

/* ---- reference ---- */

/* C's pow already has the cases binary.def asks for: an integral b gives
 * a negative base's sign, pow(x, 0) = 1 (even for x = 0 or NaN), and a
 * negative base with a fractional b is NaN. */
static double bin_pow(double a, double b) { return pow(a, b); }
static double bin_fmod(double a, double b) { return fmod(a, b); }
/* Floored: the truncated remainder moved by b when their signs differ. */
static double bin_mod(double a, double b) {
  double r = fmod(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

static double apply(int32_t fn, double a, double b) {
  switch (fn) {
#define DG_BINARY(e, name, formula)                                            \
  case DG_BINARY_##e:                                                          \
    return formula;
#include "binary.def"
#undef DG_BINARY
  default:
    return NAN;
  }
}

static void reference(const dg_ir *ir, const dg_node *n, int32_t fn,
                      const double *const *in, double *out) {
  const dg_tensor_desc *ad = &dg_ir_tensor(ir, n->inputs[0])->desc;
  const dg_tensor_desc *bd = &dg_ir_tensor(ir, n->inputs[1])->desc;
  const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
  int64_t sa[DG_MAX_RANK], sb[DG_MAX_RANK];
  dg_broadcast_strides(ad->rank, ad->dims, yd->rank, yd->dims, sa);
  dg_broadcast_strides(bd->rank, bd->dims, yd->rank, yd->dims, sb);
  for (int64_t i = 0, e = dg_desc_elements(yd); i < e; i++) {
    int64_t ia, ib;
    dg_broadcast_offsets(yd->rank, yd->dims, sa, sb, i, &ia, &ib);
    out[i] = apply(fn, in[0][ia], in[1][ib]);
  }
}

void dg_ref_binary(const dg_ir *ir, const dg_node *n, const double *const *in,
                   double *out) {
  reference(ir, n, n->p.fn, in, out);
}

static double out_elems(const dg_ir *ir, const dg_node *n) {
  return (double)dg_desc_elements(&dg_ir_tensor(ir, n->output)->desc);
}
/* pow counts as a log, a multiply and an exp; the rest as one op (the
 * remainders as a divide and a multiply-subtract, near enough). */
double dg_flops_binary(const dg_ir *ir, const dg_node *n) {
  return (n->p.fn == DG_BINARY_POW ? 3 : 1) * out_elems(ir, n);
}
