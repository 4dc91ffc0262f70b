/* Shape arithmetic folded at import: nodes whose inputs are all known at
 * import time (initializers, Constant nodes, earlier folds) and nodes that
 * only read a tensor's static shape (Shape, Size) are evaluated here, and
 * their outputs become constants that later nodes read as such. This is
 * what PyTorch's exports put around Reshape, Expand and Slice: Shape ->
 * Gather -> Unsqueeze -> Concat -> Reshape, Range, Equal/Where on shapes,
 * ConstantOfShape. No node is built for them.
 *
 * Values are held as int64 (integer and bool types) or double (float
 * types) while folding and stored back in their ONNX element type. Folding
 * is bounded (FOLD_MAX_ELEMENTS per output) so that a hostile model cannot
 * make the importer allocate or compute without bound; a larger constant result
 * is refused with the reason. */
#include "onnx_fold.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t tr_norm_axis(int64_t a, int rank) { return a < 0 ? a + rank : a; }

/* ---- the folds ---- */

/* The output dims of Squeeze / Unsqueeze of dims; false when invalid. */
bool tr_squeeze_dims(tr *t, bool unsqueeze, int rank, const int64_t *dims,
                     int *orank, int64_t *odims) {
  int64_t axes[DG_MAX_RANK + 1];
  int n = tr_read_axes(t, 13, axes, DG_MAX_RANK + 1);
  if (n == -2 || t->st != DG_OK)
    return false;
  if (n > DG_MAX_RANK || (unsqueeze && (n < 0 || rank + n > DG_MAX_RANK))) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "axes",
            "%s to more than rank %d, or without axes", t->n->op_type,
            DG_MAX_RANK);
    return false;
  }
  bool mark[DG_MAX_RANK * 2] = {0};
  int r = unsqueeze ? rank + n : rank;
  for (int k = 0; k < n; k++) {
    int64_t a = tr_norm_axis(axes[k], r);
    if (a < 0 || a >= r || mark[a] || (!unsqueeze && dims[a] != 1)) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axes",
              "axis %lld is out of range, repeated, or (Squeeze) not of "
              "size 1",
              (long long)axes[k]);
      return false;
    }
    mark[a] = true;
  }
  *orank = 0;
  if (unsqueeze) {
    for (int k = 0, src = 0; k < r; k++)
      odims[(*orank)++] = mark[k] ? 1 : dims[src++];
  } else {
    for (int k = 0; k < rank; k++)
      if (n >= 0 ? !mark[k] : dims[k] != 1)
        odims[(*orank)++] = dims[k];
  }
  return true;
}

/* Elementwise: unary and binary arithmetic, comparisons, logic, Where.
 * A unary fold is its function on doubles; on integers only Neg, Abs,
 * Not (and the identities Floor, Ceil) are defined. */
double tr_f_neg(double x) { return -x; }
static double f_recip(double x) { return 1 / x; }
double tr_f_not(double x) { return x == 0; }
double tr_f_sign(double x) { return x > 0 ? 1 : x < 0 ? -1 : x; }

static const struct {
  const char *op;
  double (*f)(double);
} unary_folds[] = {
    {"Neg", tr_f_neg},
    {"Abs", fabs},
    {"Sqrt", sqrt},
    {"Floor", floor},
    {"Ceil", ceil},
    {"Not", tr_f_not},
    {"Reciprocal", f_recip},
    {"Cos", cos},
    {"Sin", sin},
    {"Exp", exp},
    {"Log", log},
    {"Tanh", tanh},
    {"Sign", tr_f_sign},
};

static const struct {
  const char *op;
  int fn;
} binary_folds[] = {
    {"Add", BW_ADD},    {"Sub", BW_SUB},        {"Mul", BW_MUL},
    {"Div", BW_DIV},    {"Mod", BW_MOD},        {"Min", BW_MIN},
    {"Max", BW_MAX},    {"Equal", BW_EQ},       {"Less", BW_LT},
    {"Greater", BW_GT}, {"LessOrEqual", BW_LE}, {"GreaterOrEqual", BW_GE},
    {"And", BW_AND},    {"Or", BW_OR},          {"Xor", BW_XOR}};

bool tr_is_compare(int fn) { return fn >= BW_EQ; }

/* ---- the fold table ---- */

typedef enum fold_kind {
  FOLD_SHAPE,     /* reads only the input's static shape */
  FOLD_CONST,     /* when every input is constant (else the op table's row) */
  FOLD_CONST_ONLY /* the same, and no run-time form: refused otherwise */
} fold_kind;

typedef struct fold_row {
  const char *op;
  fold_kind kind;
  void (*shape)(tr *t);               /* FOLD_SHAPE */
  void (*one)(tr *t, fv *in);         /* fixed inputs */
  void (*many)(tr *t, fv *in, int n); /* variadic or optional inputs */
} fold_row;

static void fold_unary_row(tr *t, fv *in) {
  for (size_t k = 0; k < sizeof unary_folds / sizeof *unary_folds; k++)
    if (tr_is_op(t->n, unary_folds[k].op))
      tr_fold_unary(t, in, unary_folds[k].f);
}

static void fold_binary_row(tr *t, fv *in, int n) {
  for (size_t k = 0; k < sizeof binary_folds / sizeof *binary_folds; k++)
    if (tr_is_op(t->n, binary_folds[k].op))
      tr_fold_binary(t, in, n, binary_folds[k].fn);
}

static const fold_row fold_table[] = {
    {"Shape", FOLD_SHAPE, tr_fold_shape, NULL, NULL},
    {"Size", FOLD_SHAPE, tr_fold_size, NULL, NULL},
    {"Identity", FOLD_CONST, NULL, tr_fold_identity, NULL},
    {"Cast", FOLD_CONST, NULL, tr_fold_cast, NULL},
    {"Squeeze", FOLD_CONST, NULL, tr_fold_squeeze, NULL},
    {"Unsqueeze", FOLD_CONST, NULL, tr_fold_squeeze, NULL},
    {"Reshape", FOLD_CONST, NULL, tr_fold_reshape, NULL},
    {"Flatten", FOLD_CONST, NULL, tr_fold_flatten, NULL},
    {"Gather", FOLD_CONST, NULL, tr_fold_gather, NULL},
    {"Concat", FOLD_CONST, NULL, NULL, tr_fold_concat},
    {"Slice", FOLD_CONST, NULL, NULL, tr_fold_slice},
    {"Range", FOLD_CONST_ONLY, NULL, tr_fold_range, NULL},
    {"ConstantOfShape", FOLD_CONST_ONLY, NULL, tr_fold_constant_of_shape, NULL},
    {"Expand", FOLD_CONST, NULL, tr_fold_expand, NULL},
    {"Transpose", FOLD_CONST, NULL, tr_fold_transpose, NULL},
    {"Where", FOLD_CONST, NULL, tr_fold_where, NULL},
    {"Neg", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Abs", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Sqrt", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Floor", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Ceil", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Reciprocal", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Cos", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Sin", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Exp", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Log", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Tanh", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Sign", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"HannWindow", FOLD_CONST_ONLY, NULL, tr_fold_window, NULL},
    {"HammingWindow", FOLD_CONST_ONLY, NULL, tr_fold_window, NULL},
    {"BlackmanWindow", FOLD_CONST_ONLY, NULL, tr_fold_window, NULL},
    {"Not", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Add", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Sub", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Mul", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Div", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Mod", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Min", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Max", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Equal", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Less", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Greater", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"LessOrEqual", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"GreaterOrEqual", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"And", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Or", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Xor", FOLD_CONST, NULL, NULL, fold_binary_row},
};

static const fold_row *fold_find(const dg_onnx_node *n) {
  for (size_t k = 0; k < sizeof fold_table / sizeof *fold_table; k++)
    if (tr_is_op(n, fold_table[k].op))
      return &fold_table[k];
  return NULL;
}

bool tr_fold_has(const dg_onnx_node *n) { return fold_find(n) != NULL; }

#define FOLD_MAX_INPUTS 16

/* The inputs a fold reads unconditionally (the fold functions index them
 * without checking: a model may omit them). */
static int fold_min_inputs(const tr *t, const fold_row *row) {
  if (row->one == tr_fold_where || row->one == tr_fold_range)
    return 3;
  if (row->many == tr_fold_slice)
    return t->n->opset >= 10 ? 3 : 1;
  if (row->one == tr_fold_gather || row->one == tr_fold_expand ||
      row->one == tr_fold_reshape ||
      (row->many == fold_binary_row && !tr_is_op(t->n, "Min") &&
       !tr_is_op(t->n, "Max")))
    return 2;
  return 1;
}

bool tr_try_const_fold(tr *t) {
  const fold_row *row = fold_find(t->n);
  if (!row)
    return false;
  if (row->kind == FOLD_SHAPE) {
    row->shape(t);
    return true;
  }
  int n = t->n->n_inputs;
  int need = fold_min_inputs(t, row);
  for (int i = 0; i < need; i++)
    if (!tr_has_input(t, i)) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "input",
              "%s needs %d inputs; input %d is missing", t->n->op_type, need,
              i);
      return true;
    }
  bool all = n > 0 && n <= FOLD_MAX_INPUTS;
  const char *runtime = NULL;
  for (int i = 0; all && i < n; i++) {
    dg_onnx_value c;
    if (!tr_has_input(t, i))
      continue;
    tr_value *v = tr_value_find(t, t->n->inputs[i]);
    if (!tr_const(t, i, &c) || !v || v->t.id) {
      all = false;
      runtime = t->n->inputs[i];
    }
  }
  if (t->st != DG_OK)
    return true;
  if (!all) {
    if (row->kind == FOLD_CONST_ONLY) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, runtime ? runtime : "input",
              "%s is only taken on values known at import (shape "
              "arithmetic); '%s' is computed at run time",
              t->n->op_type, runtime ? runtime : "?");
      return true;
    }
    return false;
  }
  fv in[FOLD_MAX_INPUTS];
  memset(in, 0, sizeof in);
  bool ok = true;
  for (int i = 0; i < n && ok; i++)
    if (tr_has_input(t, i) && !tr_fv_read(t, i, &in[i])) {
      ok = false;
      if (t->st == DG_OK) {
        if (row->kind == FOLD_CONST_ONLY)
          tr_fail(t, DG_ERROR_UNSUPPORTED, t->n->inputs[i],
                  "constant '%s' is of a type or size not folded",
                  t->n->inputs[i]);
      }
    }
  if (ok && t->st == DG_OK) {
    if (row->one)
      row->one(t, in);
    else
      row->many(t, in, n);
  }
  for (int i = 0; i < n; i++)
    tr_fv_free(&in[i]);
  return ok || t->st != DG_OK;
}

void tr_op_fold_only(tr *t) {
  tr_fail(t, DG_ERROR_UNSUPPORTED, "op_type",
          "%s is only taken on values known at import", t->n->op_type);
}
