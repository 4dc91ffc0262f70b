/* The unary functions: meson.build embeds src/ops/unary.def right after
 * this file, inside the function unary_fn begun at its end, where the
 * DG_UNARY below turns each line into a test of fn and its formula;
 * unary_end.cl closes the function, adds the kernel and takes the names
 * below back. Computed in float with OpenCL C's built-ins (erf, tanh,
 * expm1, ... are all core), stored as f32 or f16. */
#define C(v) ((float)(v))
#define MAX(p, q) ((p) > (q) ? (p) : (q))
#define MIN(p, q) ((p) < (q) ? (p) : (q))
#define EXP exp
#define LOG log
#define SQRT sqrt
#define FABS fabs
#define FLOOR floor
#define CEIL ceil
#define RINT rint /* the default rounding mode: half to even */
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

/* The table's lines are dg_unary_fn 1, 2, ... in order: k counts them
 * (a constant once the chain is unrolled, so each test compares with a
 * literal). One kernel for every function, not one each: PoCL compiles
 * every kernel of the program on first use (a shared object each, in
 * every process with a cold cache), whichever ops the graph has. */
#define DG_UNARY(e, name, params, a0, b0, lo, hi, fuses, f)                    \
  if (fn == ++k)                                                               \
    return (f);

float unary_fn(int fn, float x, float a, float b) {
  int k = 0;
#include "unary.def"
