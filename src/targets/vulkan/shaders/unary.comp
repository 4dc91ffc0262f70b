#version 450
// The unary functions of src/ops/unary.def, y = f(x) elementwise: the
// table's formulas expanded into a chain of tests on the push constant
// fn (uniform across the dispatch, so every invocation takes the same
// branch), computed in fp32 and stored as DT.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"

layout(set = 0, binding = 0) readonly buffer X { DT xs[]; };
layout(set = 0, binding = 3) writeonly buffer Y { DT ys[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_UNARY
} pc;

#include "unary_math.glsl"

#define C(v) float(v)
#define MAX(p, q) ((p) > (q) ? (p) : (q))
#define MIN(p, q) ((p) < (q) ? (p) : (q))
#define EXP exp
#define LOG log
#define SQRT sqrt
#define FABS abs
#define FLOOR floor
#define CEIL ceil
#define RINT roundEven
#define TANH dg_tanh
#define ERF dg_erf
#define EXPM1 dg_expm1
#define LOG1P dg_log1p
#define SIN sin
#define COS cos
#define TAN tan
#define ASIN dg_asin
#define ACOS dg_acos
#define ATAN dg_atan
#define SINH dg_sinh
#define COSH dg_cosh
#define ASINH dg_asinh
#define ACOSH dg_acosh
#define ATANH dg_atanh

// The table's lines are dg_unary_fn 1, 2, ... in order: k counts them
// (a constant after unrolling, so each test compares with a literal).
float unary(int fn, float x, float a, float b) {
  int k = 0;
#define DG_UNARY(e, name, params, a0, b0, lo, hi, f) \
  if (fn == ++k)                                     \
    return f;
#include "../../../ops/unary.def"
  return x;
}

void main() {
  uint id = linear_id();
  if (id >= uint(pc.total))
    return;
  int i = int(id);
  ys[i] = TO_DT(unary(pc.fn, float(xs[i]), pc.alpha, pc.beta));
}
