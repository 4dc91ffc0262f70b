/* The ONNX ops that are one dg_graph_unary function each: which function,
 * and which attributes carry its alpha and beta. Their defaults, where a
 * node leaves them out, are ONNX's, from src/ops/unary.def (the table
 * every side of the op expands). Opsets and the attributes each op
 * accepts are the op table's rows (onnx_op_table.c). */
#include "onnx_tr.h"

#include <string.h>

static const struct {
  double alpha, beta;
} defaults[DG_UNARY_COUNT_] = {
#define DG_UNARY(e, name, params, a0, b0, lo, hi, fuses, f)                    \
  [DG_UNARY_##e] = {a0, b0},
#include "ops/unary.def"
#undef DG_UNARY
};

/* alpha, beta: the attributes holding the parameters (NULL: none). */
static const struct {
  const char *op;
  dg_unary_fn fn;
  const char *alpha, *beta;
} ops[] = {
    {"Abs", DG_UNARY_ABS, NULL, NULL},
    {"Acos", DG_UNARY_ACOS, NULL, NULL},
    {"Acosh", DG_UNARY_ACOSH, NULL, NULL},
    {"Asin", DG_UNARY_ASIN, NULL, NULL},
    {"Asinh", DG_UNARY_ASINH, NULL, NULL},
    {"Atan", DG_UNARY_ATAN, NULL, NULL},
    {"Atanh", DG_UNARY_ATANH, NULL, NULL},
    {"Ceil", DG_UNARY_CEIL, NULL, NULL},
    {"Celu", DG_UNARY_CELU, "alpha", NULL},
    {"Cos", DG_UNARY_COS, NULL, NULL},
    {"Cosh", DG_UNARY_COSH, NULL, NULL},
    {"Elu", DG_UNARY_ELU, "alpha", NULL},
    {"Erf", DG_UNARY_ERF, NULL, NULL},
    {"Exp", DG_UNARY_EXP, NULL, NULL},
    {"Floor", DG_UNARY_FLOOR, NULL, NULL},
    {"Gelu", DG_UNARY_GELU, NULL, NULL}, /* or GELU_TANH: approximate */
    {"HardSigmoid", DG_UNARY_HARD_SIGMOID, "alpha", "beta"},
    {"HardSwish", DG_UNARY_HARD_SWISH, NULL, NULL},
    {"LeakyRelu", DG_UNARY_LEAKY_RELU, "alpha", NULL},
    {"Log", DG_UNARY_LOG, NULL, NULL},
    {"Mish", DG_UNARY_MISH, NULL, NULL},
    {"Neg", DG_UNARY_NEG, NULL, NULL},
    {"Reciprocal", DG_UNARY_RECIPROCAL, NULL, NULL},
    {"Round", DG_UNARY_ROUND, NULL, NULL},
    {"Selu", DG_UNARY_SELU, "alpha", "gamma"},
    {"Shrink", DG_UNARY_SHRINK, "lambd", "bias"},
    {"Sign", DG_UNARY_SIGN, NULL, NULL},
    {"Sin", DG_UNARY_SIN, NULL, NULL},
    {"Sinh", DG_UNARY_SINH, NULL, NULL},
    {"Softplus", DG_UNARY_SOFTPLUS, NULL, NULL},
    {"Softsign", DG_UNARY_SOFTSIGN, NULL, NULL},
    {"Sqrt", DG_UNARY_SQRT, NULL, NULL},
    {"Tan", DG_UNARY_TAN, NULL, NULL},
    {"Tanh", DG_UNARY_TANH, NULL, NULL},
    {"ThresholdedRelu", DG_UNARY_THRESHOLDED_RELU, "alpha", NULL},
    /* Their rows call dg_graph_sigmoid and dg_graph_relu (the same unary
     * nodes); the int8 folds (onnx_qdq_ops.c) read their functions here. */
    {"Sigmoid", DG_UNARY_SIGMOID, NULL, NULL},
    {"Relu", DG_UNARY_RELU, NULL, NULL},
};

bool tr_unary_fn(tr *t, dg_unary_fn *fn, float *alpha, float *beta) {
  size_t i = 0;
  while (i < sizeof ops / sizeof *ops && strcmp(ops[i].op, t->n->op_type))
    i++;
  if (i == sizeof ops / sizeof *ops) { /* a row without a line above */
    tr_fail(t, DG_ERROR_UNSUPPORTED, "op_type", "%s is not a unary function",
            t->n->op_type);
    return false;
  }
  *fn = ops[i].fn;
  if (*fn == DG_UNARY_GELU) {
    char s[16] = "none";
    t->n->attr_string(t->n, "approximate", s, sizeof s);
    if (!strcmp(s, "tanh")) {
      *fn = DG_UNARY_GELU_TANH;
    } else if (strcmp(s, "none")) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, "approximate",
              "Gelu approximate '%s' is not supported ('none', 'tanh')", s);
      return false;
    }
  }
  *alpha = ops[i].alpha
               ? tr_attr_float(t, ops[i].alpha, (float)defaults[*fn].alpha)
               : 0.0f;
  *beta = ops[i].beta ? tr_attr_float(t, ops[i].beta, (float)defaults[*fn].beta)
                      : 0.0f;
  return true;
}

bool tr_is_unary_fn(const dg_onnx_node *n) {
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (!strcmp(ops[i].op, n->op_type))
      return true;
  return false;
}

void tr_op_unary(tr *t) {
  dg_unary_fn fn;
  float alpha, beta;
  if (!tr_unary_fn(t, &fn, &alpha, &beta))
    return;
  dg_tensor x = tr_input(t, 0, NULL, false);
  if (tr_need_float(t, x, "X"))
    tr_output(t, 0, dg_graph_unary(t->g, t->n->name, fn, x, alpha, beta));
}
