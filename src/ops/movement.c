/* transpose, slice, pad, expand and gather: data movement for every dtype
 * (an int8 output keeps x's quantisation). The first four are one strided
 * view each (view.h), which their reference kernel walks; gather has its
 * own. */
#include "build.h"
#include "core/half.h"
#include "ops.h"
#include "view.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define ANY_TYPE                                                               \
  (DG_FLOAT_TYPES | DG_Q8_TYPES | DG_BIT(DG_DTYPE_I32) |                       \
   DG_BIT(DG_DTYPE_BOOL) | DG_BIT(DG_DTYPE_I64))

/* Resolves x: any dtype, per-tensor quantisation only (a permuted, sliced
 * or gathered channel axis would need its channel arrays moved too). */
static const dg_tensor_info *movement_x(dg_build *b, dg_tensor x) {
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(b, x, "x", false, &ok);
  if (!ok || !dg_build_dtype(b, xi, "x", ANY_TYPE))
    return NULL;
  if (xi->desc.quant.channel_count) {
    dg_build_fail(b, DG_ERROR_UNSUPPORTED, "x.quant", "per-tensor",
                  "per-channel",
                  "data movement keeps per-tensor quantisation only");
    return NULL;
  }
  return xi;
}

static void fail_axis(dg_build *b, const char *field, int i, long long got_v,
                      const char *expected, const char *why) {
  char f[32], got[48];
  snprintf(f, sizeof f, "%s[%d]", field, i);
  snprintf(got, sizeof got, "%lld", got_v);
  dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, f, expected, got, "%s", why);
}

dg_tensor dg_graph_transpose(dg_graph *g, const char *name, dg_tensor x,
                             const int32_t *perm) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_TRANSPOSE, name))
    return DG_TENSOR_NONE;
  const dg_tensor_info *xi = movement_x(&b, x);
  if (!xi)
    return DG_TENSOR_NONE;
  int r = xi->desc.rank;
  dg_node_params p = {0};
  bool seen[DG_MAX_RANK] = {0};
  for (int d = 0; d < r; d++) {
    int32_t a = perm ? perm[d] : r - 1 - d;
    if (a < 0 || a >= r || seen[a]) {
      char exp[64];
      snprintf(exp, sizeof exp, "a permutation of 0..%d", r - 1);
      fail_axis(&b, "perm", d, a, exp,
                a < 0 || a >= r ? "axis out of range" : "axis repeated");
      return DG_TENSOR_NONE;
    }
    seen[a] = true;
    p.perm[d] = a;
  }
  dg_tensor_desc out = xi->desc;
  for (int d = 0; d < r; d++)
    out.dims[d] = xi->desc.dims[p.perm[d]];
  uint32_t ins[1] = {x.id};
  return dg_build_finish(&b, ins, 1, &out, &p);
}

/* numpy's rule for one axis of extent n: the first index and the count. */
static int64_t slice_axis(int64_t n, int64_t start, int64_t end, int64_t step,
                          int64_t *first) {
  if (start < 0)
    start += n;
  if (end < 0)
    end += n;
  int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? n : n - 1;
  start = start < lo ? lo : start > hi ? hi : start;
  end = end < lo ? lo : end > hi ? hi : end;
  *first = start;
  int64_t span = step > 0 ? end - start : start - end; /* in [-n-1, n+1] */
  if (span <= 0)
    return 0;
  /* |step| > n takes one element; bounding it first keeps -step from
   * overflowing at INT64_MIN. */
  int64_t mag = step > 0 ? step : (step < -n ? n : -step);
  if (mag > n)
    mag = n;
  return (span + mag - 1) / mag;
}

dg_tensor dg_graph_slice(dg_graph *g, const char *name, dg_tensor x,
                         const int64_t *starts, const int64_t *ends,
                         const int64_t *steps) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_SLICE, name))
    return DG_TENSOR_NONE;
  const dg_tensor_info *xi = movement_x(&b, x);
  if (!xi)
    return DG_TENSOR_NONE;
  int r = xi->desc.rank;
  if (r && (!starts || !ends)) {
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, starts ? "ends" : "starts",
                  "rank(x) entries", "NULL", "slice bounds missing");
    return DG_TENSOR_NONE;
  }
  dg_node_params p = {0};
  dg_tensor_desc out = xi->desc;
  for (int d = 0; d < r; d++) {
    int64_t n = xi->desc.dims[d], step = steps ? steps[d] : 1;
    if (step == 0) {
      fail_axis(&b, "steps", d, 0, "non-zero", "slice step is zero");
      return DG_TENSOR_NONE;
    }
    int64_t first;
    int64_t count = slice_axis(n, starts[d], ends[d], step, &first);
    if (count < 1) {
      char f[32], got[96];
      snprintf(f, sizeof f, "ends[%d]", d);
      snprintf(got, sizeof got, "start %lld, end %lld, step %lld of %lld",
               (long long)starts[d], (long long)ends[d], (long long)step,
               (long long)n);
      dg_build_fail(&b, DG_ERROR_INVALID_SHAPE, f, "at least one element", got,
                    "the slice of axis %d is empty", d);
      return DG_TENSOR_NONE;
    }
    p.starts[d] = first;
    /* Only one element is taken when |step| >= n: n (with its sign) then
     * stands for any larger step, which keeps kernels' 32-bit maths in
     * range. */
    p.steps[d] = step > n ? n : step < -n ? -n : step;
    out.dims[d] = count;
  }
  uint32_t ins[1] = {x.id};
  return dg_build_finish(&b, ins, 1, &out, &p);
}

dg_tensor dg_graph_pad(dg_graph *g, const char *name, dg_tensor x,
                       const int64_t *pads, dg_pad_mode mode, float value) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_PAD, name))
    return DG_TENSOR_NONE;
  const dg_tensor_info *xi = movement_x(&b, x);
  if (!xi)
    return DG_TENSOR_NONE;
  int r = xi->desc.rank;
  char got[64];
  if ((int)mode < DG_PAD_CONSTANT || (int)mode > DG_PAD_WRAP) {
    snprintf(got, sizeof got, "%d", (int)mode);
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "mode",
                  "constant, reflect, edge or wrap", got, "unknown pad mode");
    return DG_TENSOR_NONE;
  }
  if (r && !pads) {
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "pads", "2 * rank(x) entries",
                  "NULL", "pads missing");
    return DG_TENSOR_NONE;
  }
  dg_node_params p = {.pad_mode = (int32_t)mode,
                      .pad_value = mode == DG_PAD_CONSTANT ? value : 0};
  dg_tensor_desc out = xi->desc;
  for (int i = 0; i < 2 * r; i++) {
    int d = i % r;
    int64_t n = xi->desc.dims[d], v = pads[i];
    /* Bounded so that no output dim or coordinate overflows. */
    if (v < 0 || v > ((int64_t)1 << 40)) {
      fail_axis(&b, "pads", i, v, ">= 0 (and <= 2^40)",
                "negative pads (crops) are a slice");
      return DG_TENSOR_NONE;
    }
    if (mode == DG_PAD_REFLECT && v >= n) {
      char exp[48];
      snprintf(exp, sizeof exp, "< dims[%d] = %lld", d, (long long)n);
      fail_axis(&b, "pads", i, v, exp,
                "a reflect pad must be smaller than its axis");
      return DG_TENSOR_NONE;
    }
    if (i < r)
      p.pad_begin[d] = v;
    else
      p.pad_end[d] = v;
    out.dims[d] += v;
  }
  uint32_t ins[1] = {x.id};
  return dg_build_finish(&b, ins, 1, &out, &p);
}

dg_tensor dg_graph_expand(dg_graph *g, const char *name, dg_tensor x, int rank,
                          const int64_t *dims) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_EXPAND, name))
    return DG_TENSOR_NONE;
  const dg_tensor_info *xi = movement_x(&b, x);
  if (!xi)
    return DG_TENSOR_NONE;
  char exp[96], got[96];
  if (rank < 0 || rank > DG_MAX_RANK || (rank && !dims)) {
    snprintf(got, sizeof got, "rank %d%s", rank, dims ? "" : ", dims NULL");
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "dims", "rank 0..6 with dims",
                  got, "bad target shape");
    return DG_TENSOR_NONE;
  }
  for (int d = 0; d < rank; d++)
    if (dims[d] < 1) {
      fail_axis(&b, "dims", d, dims[d], ">= 1", "bad target dimension");
      return DG_TENSOR_NONE;
    }
  dg_tensor_desc out = xi->desc;
  if (!dg_broadcast_dims(xi->desc.rank, xi->desc.dims, rank, dims, &out.rank,
                         out.dims)) {
    dg_format_dims(exp, sizeof exp, xi->desc.rank, xi->desc.dims);
    dg_format_dims(got, sizeof got, rank, dims);
    dg_build_fail(&b, DG_ERROR_INVALID_SHAPE, "dims",
                  "broadcast-compatible with x", got,
                  "cannot broadcast %s to these dims", exp);
    return DG_TENSOR_NONE;
  }
  uint32_t ins[1] = {x.id};
  return dg_build_finish(&b, ins, 1, &out, NULL);
}

dg_tensor dg_graph_gather(dg_graph *g, const char *name, dg_tensor x,
                          dg_tensor indices, int32_t axis) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_GATHER, name))
    return DG_TENSOR_NONE;
  const dg_tensor_info *xi = movement_x(&b, x);
  if (!xi)
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *ii =
      dg_build_tensor(&b, indices, "indices", false, &ok);
  if (!ok || !dg_build_dtype(&b, ii, "indices", DG_BIT(DG_DTYPE_I32)))
    return DG_TENSOR_NONE;
  char exp[64], got[64];
  if (ii->kind != DG_TENSOR_CONSTANT) {
    dg_build_fail(&b, DG_ERROR_UNSUPPORTED, "indices", "a constant",
                  ii->kind == DG_TENSOR_INPUT ? "a graph input"
                                              : "a node output",
                  "gather indices must be a constant");
    return DG_TENSOR_NONE;
  }
  int r = xi->desc.rank, ri = ii->desc.rank;
  if (axis < -r || axis >= r) {
    snprintf(exp, sizeof exp, "in [-%d, %d)", r, r);
    snprintf(got, sizeof got, "%d", axis);
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "axis", exp, got,
                  "gather axis out of range");
    return DG_TENSOR_NONE;
  }
  if (axis < 0)
    axis += r;
  if (r - 1 + ri > DG_MAX_RANK) {
    snprintf(got, sizeof got, "%d", r - 1 + ri);
    dg_build_fail(&b, DG_ERROR_INVALID_SHAPE, "indices", "an output rank <= 6",
                  got, "gather output rank too large");
    return DG_TENSOR_NONE;
  }
  int64_t n = xi->desc.dims[axis], count = dg_desc_elements(&ii->desc);
  const int32_t *idx = ii->constant->data;
  for (int64_t k = 0; k < count; k++)
    if (idx[k] < -n || idx[k] >= n) {
      char f[48];
      snprintf(f, sizeof f, "indices[%lld]", (long long)k);
      snprintf(exp, sizeof exp, "in [-%lld, %lld)", (long long)n, (long long)n);
      snprintf(got, sizeof got, "%d", idx[k]);
      dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, f, exp, got,
                    "gather index out of range of axis %d", axis);
      return DG_TENSOR_NONE;
    }
  dg_tensor_desc out = xi->desc;
  out.rank = r - 1 + ri;
  for (int d = 0; d < ri; d++)
    out.dims[axis + d] = ii->desc.dims[d];
  for (int d = axis + 1; d < r; d++)
    out.dims[d - 1 + ri] = xi->desc.dims[d];
  dg_node_params p = {.axis = axis};
  uint32_t ins[2] = {x.id, indices.id};
  return dg_build_finish(&b, ins, 2, &out, &p);
}

/* The constant of a pad as dtype t holds it (int8 quantised with d's
 * parameters, round half to even like dg_graph_quantize; i32 rounded). */
static void pad_fill(const dg_tensor_desc *d, float value, dg_view *v) {
  int64_t lo, hi;
  float q;
  switch (d->dtype) {
  case DG_DTYPE_F32:
    v->fill = value;
    v->fill_bits = 0;
    memcpy(&v->fill_bits, &value, 4); /* the low bytes: little-endian */
    return;
  case DG_DTYPE_F16: {
    uint16_t h = dg_f32_to_f16(value);
    v->fill = dg_f16_to_f32(h);
    v->fill_bits = h;
    return;
  }
  case DG_DTYPE_BOOL: /* any value but 0 (and NaN, which is not 0) is true */
    v->fill = value != 0;
    v->fill_bits = value != 0;
    return;
  case DG_DTYPE_I64: { /* rounded, saturated (NaN: 0), as i32 is */
    double r = isnan(value) ? 0 : nearbyint((double)value);
    int64_t i = r <= -0x1p63 ? INT64_MIN : r >= 0x1p63 ? INT64_MAX : (int64_t)r;
    v->fill = (double)i;
    v->fill_bits = (uint64_t)i;
    return;
  }
  default:
    dg_dtype_int_range(d->dtype, &lo, &hi);
    q = d->dtype == DG_DTYPE_I32
            ? nearbyintf(value)
            : nearbyintf(value / d->quant.scale) + (float)d->quant.zero_point;
    /* NaN quantises to the zero point (0 for i32), as a constant must be
     * something. */
    double c = isnan(q) ? (d->dtype == DG_DTYPE_I32 ? 0 : d->quant.zero_point)
               : q < (double)lo ? (double)lo
               : q > (double)hi ? (double)hi
                                : (double)q;
    v->fill = c;
    int32_t i = (int32_t)c;
    v->fill_bits =
        (uint32_t)i & (d->dtype == DG_DTYPE_I32 ? 0xffffffffu : 0xffu);
    return;
  }
}

/* Merges axis d into the one after it where the pair reads like one
 * axis: both unit-step, the inner one whole (start 0, all its extent) and
 * d's input stride the inner one's span. Then i = start_d * e + c over
 * the merged extent, and a coordinate is outside exactly when d's was,
 * which for the constant mode is all the pad needs (the other modes map
 * per axis, so d must stay inside). Fewer, longer axes: longer rows for
 * the CPU's memcpy, fewer divisions on the GPUs. */
static void merge_axes(dg_view *v) {
  if (v->rank < 2)
    return;
  int k = v->rank - 1; /* the merged axis being grown, from the back */
  for (int d = v->rank - 2; d >= 0; d--) {
    int64_t e = v->extent[k];
    bool merge = v->step[d] == 1 && v->step[k] == 1 && v->start[k] == 0 &&
                 v->dims[k] == e && v->stride[d] == v->stride[k] * e &&
                 (v->mode == DG_PAD_CONSTANT || dg_view_inside(v, d));
    if (merge) {
      v->dims[k] *= v->dims[d];
      v->start[k] = v->start[d] * e;
      v->extent[k] = v->extent[d] * e;
      continue;
    }
    k--;
    v->dims[k] = v->dims[d];
    v->start[k] = v->start[d];
    v->step[k] = v->step[d];
    v->extent[k] = v->extent[d];
    v->stride[k] = v->stride[d];
  }
  /* Axes k.. are the view: move them to the front. */
  int rank = v->rank - k;
  memmove(v->dims, v->dims + k, sizeof(int64_t) * (size_t)rank);
  memmove(v->start, v->start + k, sizeof(int64_t) * (size_t)rank);
  memmove(v->step, v->step + k, sizeof(int64_t) * (size_t)rank);
  memmove(v->extent, v->extent + k, sizeof(int64_t) * (size_t)rank);
  memmove(v->stride, v->stride + k, sizeof(int64_t) * (size_t)rank);
  v->rank = rank;
}

bool dg_view_of(const dg_ir *ir, const dg_node *n, dg_view *v) {
  if (n->op != DG_OP_TRANSPOSE && n->op != DG_OP_SLICE && n->op != DG_OP_PAD &&
      n->op != DG_OP_EXPAND)
    return false;
  const dg_tensor_desc *x = &dg_ir_tensor(ir, n->inputs[0])->desc;
  const dg_tensor_desc *y = &dg_ir_tensor(ir, n->output)->desc;
  memset(v, 0, sizeof *v);
  v->rank = y->rank;
  v->elem_size = dg_dtype_size(y->dtype);
  memcpy(v->dims, y->dims, sizeof v->dims);
  int64_t xs[DG_MAX_RANK];
  int64_t acc = 1;
  for (int d = x->rank - 1; d >= 0; d--) {
    xs[d] = acc;
    acc *= x->dims[d];
  }
  int lead = y->rank - x->rank; /* expand's new leading axes */
  for (int d = 0; d < y->rank; d++) {
    v->step[d] = 1;
    switch (n->op) {
    case DG_OP_TRANSPOSE:
      v->extent[d] = x->dims[n->p.perm[d]];
      v->stride[d] = xs[n->p.perm[d]];
      break;
    case DG_OP_SLICE:
      v->start[d] = n->p.starts[d];
      v->step[d] = n->p.steps[d];
      v->extent[d] = x->dims[d];
      v->stride[d] = xs[d];
      break;
    case DG_OP_PAD:
      v->start[d] = -n->p.pad_begin[d];
      v->extent[d] = x->dims[d];
      v->stride[d] = xs[d];
      break;
    default: /* expand: broadcast axes read coordinate 0 forever */
      if (d < lead || x->dims[d - lead] == 1) {
        v->step[d] = 0;
        v->extent[d] = 1;
        v->stride[d] = 0;
      } else {
        v->extent[d] = x->dims[d - lead];
        v->stride[d] = xs[d - lead];
      }
      break;
    }
  }
  v->mode = n->op == DG_OP_PAD ? n->p.pad_mode : DG_PAD_CONSTANT;
  if (n->op == DG_OP_PAD && v->mode == DG_PAD_CONSTANT)
    pad_fill(x, n->p.pad_value, v);
  merge_axes(v);
  return true;
}

/* One reference walk for all four views: every output element looked up
 * on its own, odometer style. */
static void ref_view(const dg_ir *ir, const dg_node *n, const double *const *in,
                     double *out) {
  dg_view v;
  dg_view_of(ir, n, &v);
  int64_t c[DG_MAX_RANK] = {0}, total = 1;
  for (int d = 0; d < v.rank; d++)
    total *= v.dims[d];
  for (int64_t e = 0; e < total; e++) {
    int64_t off = 0;
    bool fill = false;
    for (int d = 0; d < v.rank; d++) {
      int64_t i = dg_view_coord(&v, d, c[d]);
      fill |= i < 0;
      off += i * v.stride[d];
    }
    out[e] = fill ? v.fill : in[0][off];
    for (int d = v.rank - 1; d >= 0 && ++c[d] == v.dims[d]; d--)
      c[d] = 0;
  }
}

void dg_ref_transpose(const dg_ir *ir, const dg_node *n,
                      const double *const *in, double *out) {
  ref_view(ir, n, in, out);
}
void dg_ref_slice(const dg_ir *ir, const dg_node *n, const double *const *in,
                  double *out) {
  ref_view(ir, n, in, out);
}
void dg_ref_pad(const dg_ir *ir, const dg_node *n, const double *const *in,
                double *out) {
  ref_view(ir, n, in, out);
}
void dg_ref_expand(const dg_ir *ir, const dg_node *n, const double *const *in,
                   double *out) {
  ref_view(ir, n, in, out);
}

void dg_ref_gather(const dg_ir *ir, const dg_node *n, const double *const *in,
                   double *out) {
  const dg_tensor_desc *x = &dg_ir_tensor(ir, n->inputs[0])->desc;
  const dg_tensor_desc *id = &dg_ir_tensor(ir, n->inputs[1])->desc;
  int axis = n->p.axis;
  int64_t outer, inner, len = x->dims[axis];
  int64_t count = dg_desc_elements(id);
  dg_desc_split(x, axis, &outer, &inner);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t k = 0; k < count; k++) {
      int64_t i = (int64_t)in[1][k];
      if (i < 0)
        i += len;
      memcpy(out + (o * count + k) * inner, in[0] + (o * len + i) * inner,
             sizeof(double) * (size_t)inner);
    }
}

/* Data movement does no arithmetic. */
double dg_flops_transpose(const dg_ir *ir, const dg_node *n) {
  (void)ir, (void)n;
  return 0;
}
double dg_flops_slice(const dg_ir *ir, const dg_node *n) {
  (void)ir, (void)n;
  return 0;
}
double dg_flops_pad(const dg_ir *ir, const dg_node *n) {
  (void)ir, (void)n;
  return 0;
}
double dg_flops_expand(const dg_ir *ir, const dg_node *n) {
  (void)ir, (void)n;
  return 0;
}
double dg_flops_gather(const dg_ir *ir, const dg_node *n) {
  (void)ir, (void)n;
  return 0;
}
