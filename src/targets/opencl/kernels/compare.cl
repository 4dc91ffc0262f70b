/* compare (every function of src/ops/compare.def), where and arg_reduce,
 * one output element per work-item. Inputs are read in their own type
 * (f16 through vload_half, i64 as long, so that it compares exactly);
 * bool is one uchar, 0 or 1. g[E_CDT] is the inputs' DT_* code (where:
 * the element size in bytes), g[E_FN] the function; every work-item of a
 * dispatch takes the same branch. */

int cmp_isnan(float a) { return isnan(a); }
int cmp_isinf(float a) { return isinf(a); }

/* Line k of compare.def is function k (dg_compare_fn counts from 1); the
 * table is expanded once per input type T. A one-input function gets a
 * for b (its formula ignores b). */
#define DG_COMPARE(e, name, inputs, takes, formula)                            \
  if (fn == ++k)                                                               \
    return (formula) ? 1 : 0;
#define T float
int cmp_f(int fn, T a, T b) {
  int k = 0;
#include "compare.def"
  return 0;
}
#undef T
#define T int
int cmp_i(int fn, T a, T b) {
  int k = 0;
#include "compare.def"
  return 0;
}
#undef T
#define T long
int cmp_l(int fn, T a, T b) {
  int k = 0;
#include "compare.def"
  return 0;
}
#undef T
#undef DG_COMPARE

/* Offsets of output element i in up to three inputs (E_SA, E_SB, E_SC
 * strides, zero on broadcast axes). */
void bcast_offsets(constant int *g, int i, int *o) {
  int r = i;
  o[0] = o[1] = o[2] = 0;
  for (int d = g[E_RANK] - 1; d >= 0; d--) {
    int n = g[E_DIMS + d], c = r % n;
    r /= n;
    o[0] += c * g[E_SA + d];
    o[1] += c * g[E_SB + d];
    o[2] += c * g[E_SC + d];
  }
}

/* This work item's element and its offsets (bcast_offsets); -1 past the
 * last element, so that the caller returns. */
int bcast_item(constant int *g, int *o) {
  const int i = get_global_id(0);
  if (i >= g[E_COUNT])
    return -1;
  bcast_offsets(g, i, o);
  return i;
}

kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
compare_k(const global void *a, const global void *b, global uchar *y,
          constant int *g) {
  int o[3];
  const int i = bcast_item(g, o);
  if (i < 0)
    return;
  const int fn = g[E_FN];
  int r = 0;
  switch (g[E_CDT]) {
  case DT_F32:
    r = cmp_f(fn, ((const global float *)a)[o[0]],
              ((const global float *)b)[o[1]]);
    break;
  case DT_F16:
    r = cmp_f(fn, vload_half(o[0], (const global half *)a),
              vload_half(o[1], (const global half *)b));
    break;
  case DT_I32:
    r = cmp_i(fn, ((const global int *)a)[o[0]],
              ((const global int *)b)[o[1]]);
    break;
  case DT_I64:
    r = cmp_l(fn, ((const global long *)a)[o[0]],
              ((const global long *)b)[o[1]]);
    break;
  case DT_BOOL:
    r = cmp_i(fn, ((const global uchar *)a)[o[0]],
              ((const global uchar *)b)[o[1]]);
    break;
  }
  y[i] = (uchar)r;
}

/* y = cond ? x : y, moving elements of E_CDT bytes. */
kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
where_k(const global uchar *c, const global void *x, const global void *v,
        global void *y, constant int *g) {
  int o[3];
  const int i = bcast_item(g, o);
  if (i < 0)
    return;
  const bool pick = c[o[0]] != 0;
  switch (g[E_CDT]) {
  case 2:
    ((global ushort *)y)[i] = pick ? ((const global ushort *)x)[o[1]]
                                   : ((const global ushort *)v)[o[2]];
    break;
  case 4:
    ((global uint *)y)[i] = pick ? ((const global uint *)x)[o[1]]
                                 : ((const global uint *)v)[o[2]];
    break;
  case 8:
    ((global ulong *)y)[i] = pick ? ((const global ulong *)x)[o[1]]
                                  : ((const global ulong *)v)[o[2]];
    break;
  }
}

/* The index of the best of a line (arg_reduce.c's scan: replace on
 * strictly better, or equal with select_last_index), one line per
 * work-item: E_OUTER x E_INNER lines of E_LEN elements, E_INNER apart. */
#define ARG_SCAN(T, LOAD)                                                      \
  {                                                                            \
    T best = LOAD(base);                                                       \
    for (int k = 1; k < len; k++) {                                            \
      T v = LOAD(base + k * inner);                                            \
      if ((mx ? v > best : v < best) || (last && v == best)) {                 \
        best = v;                                                              \
        at = k;                                                                \
      }                                                                        \
    }                                                                          \
  }
#define LD_F32(j) ((const global float *)x)[j]
#define LD_F16(j) vload_half(j, (const global half *)x)
#define LD_I32(j) ((const global int *)x)[j]
#define LD_I64(j) ((const global long *)x)[j]

kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
arg_reduce_k(const global void *x, global long *y, constant int *g) {
  const int i = get_global_id(0);
  const int inner = g[E_INNER], len = g[E_LEN];
  if (i >= g[E_OUTER] * inner)
    return;
  const int base = (i / inner) * len * inner + i % inner;
  const bool mx = g[E_FN] == 1, last = g[E_LAST] != 0;
  int at = 0;
  switch (g[E_CDT]) {
  case DT_F32: ARG_SCAN(float, LD_F32) break;
  case DT_F16: ARG_SCAN(float, LD_F16) break;
  case DT_I32: ARG_SCAN(int, LD_I32) break;
  case DT_I64: ARG_SCAN(long, LD_I64) break;
  }
  y[i] = at;
}
