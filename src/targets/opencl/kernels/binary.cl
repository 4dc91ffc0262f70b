/* add and the binary functions of src/ops/binary.def with numpy
 * broadcasting through per-axis strides that are zero on broadcast axes,
 * one element per work-item. g[E_FN] is the dg_binary_fn; every work-item
 * takes the same branch. */

/* OpenCL's pow and fmod have C99's special cases, which binary.def asks
 * for (an integral exponent gives a negative base's sign, pow(x, 0) = 1;
 * fmod is exact, with a's sign). */
float bin_pow(float a, float b) { return pow(a, b); }
float bin_fmod(float a, float b) { return fmod(a, b); }
/* Floored: the truncated remainder moved by b when their signs differ. */
float bin_mod(float a, float b) {
  float r = fmod(a, b);
  return r != 0.0f && (r < 0.0f) != (b < 0.0f) ? r + b : r;
}

/* Line k of binary.def is function k (dg_binary_fn counts from 1). */
float bin_apply(int fn, float a, float b) {
  int k = 0;
#define DG_BINARY(e, name, formula)                                            \
  if (fn == ++k)                                                               \
    return formula;
#include "binary.def"
#undef DG_BINARY
  return NAN;
}

kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
binary_f32(const global void *a, const global void *b, global void *y,
           constant int *g) {
  const int i = get_global_id(0);
  if (i >= g[E_COUNT])
    return;
  int r = i, ia = 0, ib = 0;
  for (int d = g[E_RANK] - 1; d >= 0; d--) {
    int n = g[E_DIMS + d], c = r % n;
    r /= n;
    ia += c * g[E_SA + d];
    ib += c * g[E_SB + d];
  }
  const int hio = g[E_HIO];
  st_f(y, i, bin_apply(g[E_FN], ld_f(a, ia, hio), ld_f(b, ib, hio)), hio);
}
