/* After src/ops/unary.def (see unary.cl): the end of unary_fn, the
 * kernel, unary_post_fn, and the table's macros go, so that kernels
 * embedded later may use the names. */
  return x; /* not reached: the builder lets only the table's fn through */
}

/* One element per work-item: fn in E_FN, alpha and beta as float bits in
 * E_LO and E_HI. */
kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
unary_f32(const global void *xp, global void *yp, constant int *g) {
  const int i = get_global_id(0);
  if (i >= g[E_COUNT])
    return;
  const int hio = g[E_HIO];
  st_f(yp, i,
       unary_fn(g[E_FN], ld_f(xp, i, hio), as_float(g[E_LO]),
                as_float(g[E_HI])),
       hio);
}

/* The lines whose column fuses is 1 only, the others returning x: a
 * conv's fused function (gemm.cl's conv_post), which its epilogues apply
 * at every store, so the compiler gets the few formulas it needs. */
#undef DG_UNARY
#define FUSES_1(f) return (f);
#define FUSES_0(f) return x;
#define DG_UNARY(e, name, params, a0, b0, lo, hi, fuses, f)                    \
  if (fn == ++k) {                                                             \
    FUSES_##fuses(f)                                                           \
  }
float unary_post_fn(int fn, float x, float a, float b) {
  int k = 0;
#include "unary.def"
  return x;
}
#undef FUSES_0
#undef FUSES_1

#undef DG_UNARY
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
