/* The unary functions: meson.build embeds src/ops/unary.def right after
 * this file, and the DG_UNARY below turns each of its lines into a kernel
 * unary_<name> (the host picks it by dg_unary_fn_name), one element per
 * work-item, computed in float with OpenCL C's built-ins (erf, tanh,
 * expm1, ... are all core) and stored as f32 or f16. alpha and beta
 * arrive as float bits in E_LO and E_HI. unary_end.cl, after the table,
 * takes the names below back. */
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

#define DG_UNARY(e, name, params, a0, b0, lo, hi, f)                           \
  kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void unary_##name(  \
      const global void *xp, global void *yp, constant int *g) {               \
    const int i = get_global_id(0);                                            \
    if (i >= g[E_COUNT])                                                       \
      return;                                                                  \
    const int hio = g[E_HIO];                                                  \
    const float a = as_float(g[E_LO]), b = as_float(g[E_HI]);                  \
    const float x = ld_f(xp, i, hio);                                          \
    st_f(yp, i, (f), hio);                                                     \
  }
