// The unary functions of src/ops/unary.def as one GLSL function,
// unary(fn, x, a, b): the table's formulas expanded into a chain of tests
// on fn (uniform across a dispatch, so every invocation takes the same
// branch), computed in fp32. For unary.comp and the convs' fused
// function (push constant post_fn, ops/epilogue.h's dg_conv_post_unary).
// Include after common.glsl and unary_math.glsl; the table's names are
// taken back at the end. With UNARY_FUSES_ONLY defined, only the lines
// whose column fuses is 1 get their formula (the others return x): a
// conv's epilogue inlines the function at each of its stores, and the
// whole table there made the cooperative-matrix convs' SPIR-V 3 MB.
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
#ifdef UNARY_FUSES_ONLY
#define FUSES_1(f) return f;
#define FUSES_0(f) return x;
#define DG_UNARY(e, name, params, a0, b0, lo, hi, fuses, f) \
  if (fn == ++k) {                                          \
    FUSES_##fuses(f)                                        \
  }
#else
#define DG_UNARY(e, name, params, a0, b0, lo, hi, fuses, f) \
  if (fn == ++k)                                            \
    return f;
#endif
#include "../../../ops/unary.def"
  return x;
}

#undef DG_UNARY
#undef FUSES_0
#undef FUSES_1
#undef C
#undef MAX
#undef MIN
#undef EXP
#undef LOG
#undef SQRT
#undef FABS
#undef FLOOR
#undef CEIL
#undef RINT
#undef TANH
#undef ERF
#undef EXPM1
#undef LOG1P
#undef SIN
#undef COS
#undef TAN
#undef ASIN
#undef ACOS
#undef ATAN
#undef SINH
#undef COSH
#undef ASINH
#undef ACOSH
#undef ATANH
