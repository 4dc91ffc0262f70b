/* After src/ops/unary.def (see unary.cl): its macros go, so that kernels
 * embedded later may use the names. */
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
