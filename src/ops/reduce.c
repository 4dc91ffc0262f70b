/* reduce (the functions of reduce.def), log_softmax and layer_norm: the
 * builders, float64 references and costs. */
#include "build.h"
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* reduce.def's value column is the dg_reduce_fn value. */
#define DG_REDUCE(e, v, name, init, comb, map, fin, shift)                     \
  _Static_assert(DG_REDUCE_##e == (v), "reduce.def: " #e "'s value");
#include "reduce.def"
#undef DG_REDUCE

const char *dg_reduce_fn_name(dg_reduce_fn fn) {
  switch (fn) {
#define DG_REDUCE(e, v, name, init, comb, map, fin, shift)                     \
  case DG_REDUCE_##e:                                                          \
    return #name;
#include "reduce.def"
#undef DG_REDUCE
  default:
    return "?";
  }
}

static bool axis_in_range(dg_build *b, int32_t axis, int rank,
                          const char *field) {
  if (rank >= 1 && axis >= -rank && axis < rank)
    return true;
  char exp[32], got[32];
  snprintf(exp, sizeof exp, "in [-%d, %d)", rank, rank);
  snprintf(got, sizeof got, "%d", axis);
  dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, field, exp, got,
                "axis out of range");
  return false;
}

dg_tensor dg_graph_reduce(dg_graph *g, const char *name, dg_reduce_fn fn,
                          dg_tensor x, const int32_t *axes, int axis_count,
                          int keepdims) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_REDUCE, name))
    return DG_TENSOR_NONE;
  char exp[64], got[64];
  if (fn <= DG_REDUCE_INVALID || fn >= DG_REDUCE_COUNT_) {
    snprintf(exp, sizeof exp, "a dg_reduce_fn in [1, %d)", DG_REDUCE_COUNT_);
    snprintf(got, sizeof got, "%d", (int)fn);
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "fn", exp, got,
                  "unknown reduce function");
    return DG_TENSOR_NONE;
  }
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  if (!ok || !dg_build_dtype(&b, xi, "x", DG_FLOAT_TYPES))
    return DG_TENSOR_NONE;
  int r = xi->desc.rank;
  if (axis_count < 0 || axis_count > r) {
    snprintf(exp, sizeof exp, "in [0, %d] (x's rank)", r);
    snprintf(got, sizeof got, "%d", axis_count);
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "axis_count", exp, got,
                  "more axes than x has, or a negative count");
    return DG_TENSOR_NONE;
  }
  if (axis_count > 0 && !axes) {
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "axes", "non-NULL", "NULL",
                  "axes is NULL with axis_count %d", axis_count);
    return DG_TENSOR_NONE;
  }
  uint32_t mask = axis_count ? 0 : (1u << r) - 1;
  for (int i = 0; i < axis_count; i++) {
    if (!axis_in_range(&b, axes[i], r, "axes"))
      return DG_TENSOR_NONE;
    int a = axes[i] < 0 ? axes[i] + r : axes[i];
    if (mask & (1u << a)) {
      snprintf(got, sizeof got, "axis %d twice", a);
      dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "axes", "distinct axes", got,
                    "an axis is listed twice");
      return DG_TENSOR_NONE;
    }
    mask |= 1u << a;
  }
  dg_tensor_desc out = {.dtype = xi->desc.dtype};
  for (int d = 0; d < r; d++)
    if (!(mask & (1u << d)))
      out.dims[out.rank++] = xi->desc.dims[d];
    else if (keepdims)
      out.dims[out.rank++] = 1;
  /* fn >= 1 and keepdims 0/1 are what the kernels read; a rank-0 x has
   * nothing to reduce (mask 0), which every kernel handles as one
   * element per output. */
  dg_node_params p = {.fn = fn, .axes_mask = mask, .keepdims = keepdims != 0};
  uint32_t ins[1] = {x.id};
  return dg_build_finish(&b, ins, 1, &out, &p);
}

dg_tensor dg_graph_log_softmax(dg_graph *g, const char *name, dg_tensor x,
                               int32_t axis) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_LOG_SOFTMAX, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  if (!ok || !dg_build_dtype(&b, xi, "x", DG_FLOAT_TYPES) ||
      !axis_in_range(&b, axis, xi->desc.rank, "axis"))
    return DG_TENSOR_NONE;
  dg_node_params p = {.axis = axis < 0 ? axis + xi->desc.rank : axis};
  uint32_t ins[1] = {x.id};
  return dg_build_finish(&b, ins, 1, &xi->desc, &p);
}

/* scale or bias (t) must broadcast to x's dims from axis on. */
static bool norm_operand(dg_build *b, const dg_tensor_info *xi,
                         const dg_tensor_info *t, int axis, const char *field) {
  if (!dg_build_same_dtype(b, xi, t, field))
    return false;
  int tr = xi->desc.rank - axis;
  const int64_t *td = xi->desc.dims + axis;
  bool fits = t->desc.rank <= tr;
  for (int i = 0; fits && i < t->desc.rank; i++) {
    int64_t want = td[tr - t->desc.rank + i], have = t->desc.dims[i];
    fits = have == want || have == 1;
  }
  if (fits)
    return true;
  char exp[192], got[96];
  dg_format_dims(got, sizeof got, t->desc.rank, t->desc.dims);
  char dims[96];
  dg_format_dims(dims, sizeof dims, tr, td);
  snprintf(exp, sizeof exp, "%s (x's dims from axis %d) or broadcast to it",
           dims, axis);
  dg_build_fail(b, DG_ERROR_INVALID_SHAPE, field, exp, got,
                "%s does not broadcast to the normalised dims", field);
  return false;
}

dg_tensor dg_graph_layer_norm(dg_graph *g, const char *name, dg_tensor x,
                              dg_tensor scale, dg_tensor bias, int32_t axis,
                              float epsilon) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_LAYER_NORM, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  const dg_tensor_info *si =
      ok ? dg_build_tensor(&b, scale, "scale", false, &ok) : NULL;
  const dg_tensor_info *bi =
      ok ? dg_build_tensor(&b, bias, "bias", true, &ok) : NULL;
  if (!ok || !dg_build_dtype(&b, xi, "x", DG_FLOAT_TYPES) ||
      !axis_in_range(&b, axis, xi->desc.rank, "axis"))
    return DG_TENSOR_NONE;
  int a = axis < 0 ? axis + xi->desc.rank : axis;
  if (!norm_operand(&b, xi, si, a, "scale") ||
      (bi && !norm_operand(&b, xi, bi, a, "bias")))
    return DG_TENSOR_NONE;
  if (!(epsilon >= 0 && epsilon <= 3.4e38f)) { /* NaN fails both */
    char got[32];
    snprintf(got, sizeof got, "%g", epsilon);
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "epsilon", ">= 0 and finite",
                  got, "bad layer norm epsilon");
    return DG_TENSOR_NONE;
  }
  dg_node_params p = {.axis = a, .epsilon = epsilon};
  uint32_t ins[3] = {x.id, scale.id, bi ? bias.id : 0};
  return dg_build_finish(&b, ins, 3, &xi->desc, &p);
}

/* ---- geometry shared with the targets ---- */

void dg_reduce_shape_get(const dg_tensor_desc *x, uint32_t mask,
                         dg_reduce_shape *s) {
  *s = (dg_reduce_shape){.outputs = 1, .count = 1};
  int last = -1; /* kind of the previous kept dim: 0 kept, 1 reduced */
  int64_t stride = 1, str[DG_MAX_RANK];
  for (int d = x->rank - 1; d >= 0; d--) {
    str[d] = stride;
    stride *= x->dims[d];
  }
  /* Outer to inner, so the merged dims come out in order. */
  for (int d = 0; d < x->rank; d++) {
    if (x->dims[d] == 1)
      continue;
    int red = (mask >> d) & 1;
    int64_t *dim = red ? s->rdim : s->kdim, *st = red ? s->rstr : s->kstr;
    int *k = red ? &s->rr : &s->kr;
    if (last == red) {
      dim[*k - 1] *= x->dims[d];
      st[*k - 1] = str[d];
    } else {
      dim[*k] = x->dims[d];
      st[*k] = str[d];
      ++*k;
    }
    last = red;
    if (red)
      s->count *= x->dims[d];
    else
      s->outputs *= x->dims[d];
  }
}

void dg_layer_norm_shape_get(const dg_ir *ir, const dg_node *n,
                             dg_layer_norm_shape *s) {
  const dg_tensor_desc *x = &dg_ir_tensor(ir, n->inputs[0])->desc;
  *s = (dg_layer_norm_shape){.rows = 1, .len = 1, .rank = x->rank - n->p.axis};
  for (int d = 0; d < x->rank; d++)
    *(d < n->p.axis ? &s->rows : &s->len) *= x->dims[d];
  memcpy(s->dims, x->dims + n->p.axis, sizeof(int64_t) * (size_t)s->rank);
  for (int k = 1; k < 3; k++) {
    int64_t *st = k == 1 ? s->ss : s->sb;
    if (!n->inputs[k])
      continue; /* zeroed above */
    const dg_tensor_desc *t = &dg_ir_tensor(ir, n->inputs[k])->desc;
    dg_broadcast_strides(t->rank, t->dims, s->rank, s->dims, st);
  }
}

/* ---- reference ---- */

#define INF INFINITY
#define ABS fabs
#define EXP exp
#define SQRT sqrt
#define LOG log

void dg_ref_reduce(const dg_ir *ir, const dg_node *n, const double *const *in,
                   double *out) {
  dg_reduce_shape s;
  dg_reduce_shape_get(&dg_ir_tensor(ir, n->inputs[0])->desc, n->p.axes_mask,
                      &s);
  for (int64_t o = 0; o < s.outputs; o++) {
    const double *x = in[0] + dg_reduce_offset(s.kr, s.kdim, s.kstr, o);
    double M = 0, A = 0, N = (double)s.count;
    switch (n->p.fn) {
#define ADD(a, t) a += t
#define MUL(a, t) a *= t
#define MAX(a, t) a = t > a ? t : a
#define MIN(a, t) a = t < a ? t : a
#define DG_REDUCE(e, v, name, init, comb, map, fin, shift)                     \
  case v:                                                                      \
    if (shift) {                                                               \
      M = -INFINITY;                                                           \
      for (int64_t i = 0; i < s.count; i++) {                                  \
        double X = x[dg_reduce_offset(s.rr, s.rdim, s.rstr, i)];               \
        M = X > M ? X : M;                                                     \
      }                                                                        \
    }                                                                          \
    A = init;                                                                  \
    for (int64_t i = 0; i < s.count; i++) {                                    \
      double X = x[dg_reduce_offset(s.rr, s.rdim, s.rstr, i)];                 \
      comb(A, (map));                                                          \
    }                                                                          \
    out[o] = fin;                                                              \
    break;
#include "reduce.def"
#undef DG_REDUCE
#undef ADD
#undef MUL
#undef MAX
#undef MIN
    }
    (void)N;
  }
}

void dg_ref_log_softmax(const dg_ir *ir, const dg_node *n,
                        const double *const *in, double *out) {
  const dg_tensor_desc *d = &dg_ir_tensor(ir, n->output)->desc;
  int64_t outer, len = d->dims[n->p.axis], inner;
  dg_desc_split(d, n->p.axis, &outer, &inner);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      const double *x = in[0] + o * len * inner + j;
      double *y = out + o * len * inner + j;
      double mx = -INFINITY, s = 0;
      for (int64_t k = 0; k < len; k++)
        mx = x[k * inner] > mx ? x[k * inner] : mx;
      for (int64_t k = 0; k < len; k++)
        s += exp(x[k * inner] - mx);
      double ls = log(s);
      for (int64_t k = 0; k < len; k++)
        y[k * inner] = x[k * inner] - mx - ls;
    }
}

void dg_ref_layer_norm(const dg_ir *ir, const dg_node *n,
                       const double *const *in, double *out) {
  dg_layer_norm_shape s;
  dg_layer_norm_shape_get(ir, n, &s);
  for (int64_t r = 0; r < s.rows; r++) {
    const double *x = in[0] + r * s.len;
    double mean = 0, var = 0;
    for (int64_t k = 0; k < s.len; k++)
      mean += x[k];
    mean /= (double)s.len;
    for (int64_t k = 0; k < s.len; k++)
      var += (x[k] - mean) * (x[k] - mean);
    double inv = 1.0 / sqrt(var / (double)s.len + n->p.epsilon);
    for (int64_t k = 0; k < s.len; k++) {
      int64_t is = dg_reduce_offset(s.rank, s.dims, s.ss, k);
      int64_t ib = dg_reduce_offset(s.rank, s.dims, s.sb, k);
      double v = (x[k] - mean) * inv * in[1][is];
      out[r * s.len + k] = in[2] ? v + in[2][ib] : v;
    }
  }
}

static double in_elems(const dg_ir *ir, const dg_node *n) {
  return (double)dg_desc_elements(&dg_ir_tensor(ir, n->inputs[0])->desc);
}
double dg_flops_reduce(const dg_ir *ir, const dg_node *n) {
  return 2 * in_elems(ir, n);
}
double dg_flops_log_softmax(const dg_ir *ir, const dg_node *n) {
  return 5 * in_elems(ir, n);
}
double dg_flops_layer_norm(const dg_ir *ir, const dg_node *n) {
  return 8 * in_elems(ir, n);
}
