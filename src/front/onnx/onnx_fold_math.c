/* Folds of arithmetic at import: the unary functions, the window
 * generators, the binary functions (float and exact int64), Where. */
#include "onnx_fold.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tr_fold_unary(tr *t, fv *in, double (*f)(double)) {
  fv o;
  if (!in[0].f && f != tr_f_neg && f != fabs && f != tr_f_not && f != floor &&
      f != ceil && f != tr_f_sign) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "X",
            "%s of integers is not folded (float only)", t->n->op_type);
    return;
  }
  if (!tr_fv_alloc(t, &o, in[0].elem, in[0].rank, in[0].dims))
    return;
  for (size_t k = 0; k < o.count; k++) {
    if (o.f) {
      o.f[k] = f(in[0].f[k]);
    } else {
      int64_t x = in[0].i[k];
      o.i[k] = f == tr_f_neg    ? (int64_t)(0 - (uint64_t)x)
               : f == fabs      ? (x < 0 ? (int64_t)(0 - (uint64_t)x) : x)
               : f == tr_f_not  ? !x
               : f == tr_f_sign ? (x > 0) - (x < 0)
                                : x;
    }
  }
  tr_fv_emit(t, 0, &o);
}

/* HannWindow, HammingWindow, BlackmanWindow of a size known at import:
 * the window's values (ONNX's definition: N' = size if periodic, size - 1
 * otherwise). */
void tr_fold_window(tr *t, fv *in) {
  if (in[0].count != 1 || in[0].f) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "size", "an integer scalar expected");
    return;
  }
  int64_t n = in[0].i[0];
  int64_t to = tr_attr_int(t, "output_datatype", DG_ONNX_FLOAT);
  if (to != DG_ONNX_FLOAT && to != DG_ONNX_FLOAT16) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "output_datatype",
            "window of element type %lld (float and float16 are taken)",
            (long long)to);
    return;
  }
  bool periodic = tr_attr_int(t, "periodic", 1) != 0;
  fv o;
  if (n < 0 || !tr_fv_alloc(t, &o, (int)to, 1, &n)) {
    if (t->st == DG_OK)
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "size", "negative window size");
    return;
  }
  double den = (double)(periodic ? n : n - 1), pi2 = 2 * acos(-1.0);
  for (int64_t k = 0; k < n; k++) {
    double c1 = den > 0 ? cos(pi2 * (double)k / den) : 1;
    double c2 = den > 0 ? cos(2 * pi2 * (double)k / den) : 1;
    o.f[k] = tr_is_op(t->n, "HannWindow")      ? 0.5 - 0.5 * c1
             : tr_is_op(t->n, "HammingWindow") ? 25.0 / 46 - 21.0 / 46 * c1
                                               : 0.42 - 0.5 * c1 + 0.08 * c2;
  }
  tr_fv_emit(t, 0, &o);
}

static double fbin(int fn, double a, double b, bool fmod_) {
  switch (fn) {
  case BW_ADD:
    return a + b;
  case BW_SUB:
    return a - b;
  case BW_MUL:
    return a * b;
  case BW_DIV:
    return a / b;
  case BW_MOD: {
    double r = fmod(a, b);
    return fmod_ || r == 0 || (r < 0) == (b < 0) ? r : r + b;
  }
  case BW_MIN:
    return a < b ? a : b;
  case BW_MAX:
    return a > b ? a : b;
  case BW_EQ:
    return a == b;
  case BW_LT:
    return a < b;
  case BW_GT:
    return a > b;
  case BW_LE:
    return a <= b;
  case BW_GE:
    return a >= b;
  case BW_AND:
    return (a != 0) && (b != 0);
  case BW_OR:
    return (a != 0) || (b != 0);
  default:
    return (a != 0) != (b != 0);
  }
}

/* Integer arithmetic wraps as two's complement (no UB), and division and
 * modulo by zero are refused. */
static bool ibin(int fn, int64_t a, int64_t b, int64_t *r) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (fn) {
  case BW_ADD:
    *r = (int64_t)(ua + ub);
    return true;
  case BW_SUB:
    *r = (int64_t)(ua - ub);
    return true;
  case BW_MUL:
    *r = (int64_t)(ua * ub);
    return true;
  case BW_DIV:
  case BW_MOD:
    if (b == 0 || (a == INT64_MIN && b == -1))
      return false;
    if (fn == BW_DIV) {
      *r = a / b; /* truncated, as ONNX Runtime's integer Div */
    } else {
      int64_t m = a % b; /* ONNX Mod, fmod 0: the sign of the divisor */
      *r = m != 0 && ((m < 0) != (b < 0)) ? m + b : m;
    }
    return true;
  default:
    *r = (int64_t)fbin(fn, (double)a, (double)b, false);
    break;
  }
  if (fn == BW_MIN)
    *r = a < b ? a : b;
  else if (fn == BW_MAX)
    *r = a > b ? a : b;
  else if (fn == BW_EQ)
    *r = a == b;
  else if (fn == BW_LT)
    *r = a < b;
  else if (fn == BW_GT)
    *r = a > b;
  else if (fn == BW_LE)
    *r = a <= b;
  else if (fn == BW_GE)
    *r = a >= b;
  return true;
}

void tr_fold_binary(tr *t, fv *in, int n, int fn) {
  /* Min and Max are variadic: fold pairwise into in[0]. */
  fv acc = in[0];
  in[0].i = NULL;
  in[0].f = NULL;
  if (!acc.i && !acc.f) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "input", "input 0 is missing");
    return;
  }
  bool fm = tr_attr_int(t, "fmod", 0) != 0;
  for (int k = 1; k < n && t->st == DG_OK; k++) {
    fv *b = &in[k];
    if (!b->i && !b->f) /* an omitted (empty-named) input of Min or Max */
      continue;
    if (tr_is_float_elem(acc.elem) != tr_is_float_elem(b->elem)) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "B", "A and B differ in type");
      break;
    }
    int r;
    int64_t d[DG_MAX_RANK];
    if (!tr_bcast(&acc, b, &r, d)) {
      tr_fail(t, DG_ERROR_INVALID_SHAPE, "B", "shapes do not broadcast");
      break;
    }
    int elem = tr_is_compare(fn) ? ONNX_BOOL : acc.elem;
    fv o;
    if (!tr_fv_alloc(t, &o, elem, r, d))
      break;
    for (size_t q = 0; q < o.count; q++) {
      size_t ia = tr_bidx(&acc, r, d, q), ib = tr_bidx(b, r, d, q);
      if (acc.f) {
        double v = fbin(fn, acc.f[ia], b->f[ib], fm);
        if (o.f)
          o.f[q] = v;
        else
          o.i[q] = (int64_t)v;
      } else if (!ibin(fn, acc.i[ia], b->i[ib], &o.i[q])) {
        tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "B",
                "integer division by zero (or overflow) at import");
        break;
      }
    }
    tr_fv_free(&acc);
    acc = o;
    if (acc.elem == DG_ONNX_INT32)
      for (size_t q = 0; q < acc.count; q++)
        acc.i[q] = (int32_t)acc.i[q];
  }
  if (t->st == DG_OK)
    tr_fv_emit(t, 0, &acc);
  else
    tr_fv_free(&acc);
}

void tr_fold_where(tr *t, fv *in) {
  int r = 0, r2;
  int64_t d[DG_MAX_RANK] = {0}, d2[DG_MAX_RANK];
  fv tmp = {.rank = 0};
  if (tr_is_float_elem(in[1].elem) != tr_is_float_elem(in[2].elem) ||
      !tr_bcast(&in[1], &in[2], &r, d)) {
    tr_fail(t, DG_ERROR_INVALID_SHAPE, "X", "X and Y do not match");
    return;
  }
  tmp.rank = r;
  memcpy(tmp.dims, d, sizeof d);
  if (!tr_bcast(&in[0], &tmp, &r2, d2)) {
    tr_fail(t, DG_ERROR_INVALID_SHAPE, "condition", "shapes do not broadcast");
    return;
  }
  fv o;
  if (!tr_fv_alloc(t, &o, in[1].elem, r2, d2))
    return;
  for (size_t q = 0; q < o.count; q++) {
    bool c = tr_fv_geti(&in[0], tr_bidx(&in[0], r2, d2, q)) != 0;
    fv *s = c ? &in[1] : &in[2];
    size_t k = tr_bidx(s, r2, d2, q);
    if (o.f)
      o.f[q] = s->f[k];
    else
      o.i[q] = s->i[k];
  }
  tr_fv_emit(t, 0, &o);
}
