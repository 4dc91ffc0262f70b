/* The comparison and logic ops (Equal, Less, Greater, LessOrEqual,
 * GreaterOrEqual, And, Or, Xor, Not), Where, IsNaN, IsInf, ArgMax and
 * ArgMin, onto dg_graph_compare (and its one-input forms), dg_graph_where
 * and dg_graph_arg_reduce.
 *
 * On constants these fold at import first (onnx_fold.c, in
 * translate_node); the handlers here build the run-time nodes. Opsets 1-6
 * of the two-input ops took the legacy broadcast / axis attributes, read
 * as onnx_ops_binary.c reads them (tr_legacy_b). Element types the builder
 * does not take (int8, uint8 and the ones the translator has no dtype
 * for) are refused naming the input. */
#include "onnx_tr.h"

#include <string.h>

#define NUMERIC                                                                \
  (1u << DG_DTYPE_F32 | 1u << DG_DTYPE_F16 | 1u << DG_DTYPE_I32 |              \
   1u << DG_DTYPE_I64)
#define FLOATS (1u << DG_DTYPE_F32 | 1u << DG_DTYPE_F16)
#define BOOLS (1u << DG_DTYPE_BOOL)

/* Input i, of a dtype in mask; what names it in the refusal. */
static dg_tensor typed_input(tr *t, int i, unsigned mask, const char *what,
                             dg_dtype *dt) {
  dg_tensor x = tr_input(t, i, NULL, false);
  dg_tensor_desc d;
  if (t->st != DG_OK || !tr_desc(t, x, &d))
    return DG_TENSOR_NONE;
  if (!(mask & 1u << d.dtype)) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, what, "%s of %s is not supported",
            t->n->op_type, dg_dtype_name(d.dtype));
    return DG_TENSOR_NONE;
  }
  if (dt)
    *dt = d.dtype;
  return x;
}

/* A and B (of a dtype in mask, B through the legacy rule before 7). */
static bool pair(tr *t, unsigned mask, dg_tensor *a, dg_tensor *b,
                 dg_dtype *dt) {
  *a = typed_input(t, 0, mask, "A", dt);
  *b = a->id ? typed_input(t, 1, mask, "B", NULL) : DG_TENSOR_NONE;
  if (b->id)
    *b = tr_legacy_b(t, *a, *b);
  return b->id != 0;
}

static void compare(tr *t, dg_compare_fn fn) {
  dg_tensor a, b;
  dg_dtype dt;
  bool logic =
      fn == DG_COMPARE_AND || fn == DG_COMPARE_OR || fn == DG_COMPARE_XOR;
  unsigned mask = logic                    ? BOOLS
                  : fn == DG_COMPARE_EQUAL ? NUMERIC | BOOLS
                                           : NUMERIC;
  if (!pair(t, mask, &a, &b, &dt))
    return;
  if (dt == DG_DTYPE_BOOL && fn == DG_COMPARE_EQUAL) { /* not (a xor b) */
    dg_tensor x = dg_graph_compare(t->g, NULL, DG_COMPARE_XOR, a, b);
    tr_output(t, 0, dg_graph_not(t->g, t->n->name, x));
    return;
  }
  tr_output(t, 0, dg_graph_compare(t->g, t->n->name, fn, a, b));
}

void tr_op_equal(tr *t) { compare(t, DG_COMPARE_EQUAL); }
void tr_op_less(tr *t) { compare(t, DG_COMPARE_LESS); }
void tr_op_less_equal(tr *t) { compare(t, DG_COMPARE_LESS_EQUAL); }
void tr_op_greater(tr *t) { compare(t, DG_COMPARE_GREATER); }
void tr_op_greater_equal(tr *t) { compare(t, DG_COMPARE_GREATER_EQUAL); }
void tr_op_and(tr *t) { compare(t, DG_COMPARE_AND); }
void tr_op_or(tr *t) { compare(t, DG_COMPARE_OR); }
void tr_op_xor(tr *t) { compare(t, DG_COMPARE_XOR); }

void tr_op_not(tr *t) {
  dg_tensor x = typed_input(t, 0, BOOLS, "X", NULL);
  if (x.id)
    tr_output(t, 0, dg_graph_not(t->g, t->n->name, x));
}

void tr_op_isnan(tr *t) {
  dg_tensor x = typed_input(t, 0, FLOATS, "X", NULL);
  if (x.id)
    tr_output(t, 0, dg_graph_isnan(t->g, t->n->name, x));
}

void tr_op_isinf(tr *t) {
  int64_t pos = tr_attr_int(t, "detect_positive", 1);
  int64_t neg = tr_attr_int(t, "detect_negative", 1);
  if (!pos && !neg) { /* all false: no node the builder has gives that */
    tr_fail(t, DG_ERROR_UNSUPPORTED, "detect_positive",
            "IsInf detecting neither sign is not supported");
    return;
  }
  dg_tensor x = typed_input(t, 0, FLOATS, "X", NULL);
  if (x.id)
    tr_output(t, 0, dg_graph_isinf(t->g, t->n->name, x, pos != 0, neg != 0));
}

void tr_op_where(tr *t) {
  dg_tensor c = typed_input(t, 0, BOOLS, "condition", NULL);
  dg_tensor x = c.id ? typed_input(t, 1, NUMERIC, "X", NULL) : DG_TENSOR_NONE;
  dg_tensor y = x.id ? typed_input(t, 2, NUMERIC, "Y", NULL) : DG_TENSOR_NONE;
  if (y.id)
    tr_output(t, 0, dg_graph_where(t->g, t->n->name, c, x, y));
}

/* axis (default 0), keepdims (default 1), select_last_index (from 12). */
static void arg(tr *t, dg_arg_fn fn) {
  int64_t axis = tr_attr_int(t, "axis", 0);
  int64_t keep = tr_attr_int(t, "keepdims", 1);
  int64_t last = tr_attr_int(t, "select_last_index", 0);
  if (last && t->n->opset < 12) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "select_last_index",
            "attribute 'select_last_index' is not part of %s at opset %lld",
            t->n->op_type, (long long)t->n->opset);
    return;
  }
  dg_tensor x = typed_input(t, 0, NUMERIC, "data", NULL);
  if (x.id && t->st == DG_OK)
    tr_output(t, 0,
              dg_graph_arg_reduce(t->g, t->n->name, fn, x, (int32_t)axis,
                                  keep != 0, last != 0));
}

void tr_op_argmax(tr *t) { arg(t, DG_ARG_MAX); }
void tr_op_argmin(tr *t) { arg(t, DG_ARG_MIN); }
