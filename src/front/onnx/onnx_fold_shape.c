/* Folds of shapes and data movement at import: Shape, Size, Identity,
 * Cast, Squeeze/Unsqueeze, Reshape, Flatten, Gather, Concat, Slice,
 * Range, ConstantOfShape, Expand, Transpose. */
#include "onnx_fold.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shape and Size read the static shape of any value. */
static bool static_dims(tr *t, int i, int *rank, int64_t *dims) {
  dg_onnx_value c;
  if (tr_const(t, i, &c) && c.rank >= 0) {
    *rank = c.rank;
    memcpy(dims, c.dims, sizeof(int64_t) * DG_MAX_RANK);
    return true;
  }
  dg_tensor x = tr_input(t, i, NULL, false);
  dg_tensor_desc d;
  if (!tr_desc(t, x, &d))
    return false;
  *rank = d.rank;
  memcpy(dims, d.dims, sizeof(int64_t) * DG_MAX_RANK);
  return true;
}

void tr_fold_shape(tr *t) {
  int rank;
  int64_t dims[DG_MAX_RANK];
  if (!static_dims(t, 0, &rank, dims))
    return;
  int64_t start = 0, end = rank;
  if (t->n->opset >= 15) {
    start = tr_attr_int(t, "start", 0);
    end = tr_attr_int(t, "end", rank);
  }
  start = tr_norm_axis(start, rank);
  end = tr_norm_axis(end, rank);
  start = start < 0 ? 0 : start > rank ? rank : start;
  end = end < 0 ? 0 : end > rank ? rank : end;
  int64_t n = end > start ? end - start : 0;
  fv o;
  if (!tr_fv_alloc(t, &o, DG_ONNX_INT64, 1, &n))
    return;
  for (int64_t k = 0; k < n; k++)
    o.i[k] = dims[start + k];
  tr_fv_emit(t, 0, &o);
}

void tr_fold_size(tr *t) {
  int rank;
  int64_t dims[DG_MAX_RANK];
  if (!static_dims(t, 0, &rank, dims))
    return;
  fv o;
  if (!tr_fv_alloc(t, &o, DG_ONNX_INT64, 0, NULL))
    return;
  o.i[0] = 1;
  for (int k = 0; k < rank; k++)
    o.i[0] *= dims[k];
  tr_fv_emit(t, 0, &o);
}

void tr_fold_identity(tr *t, fv *in) {
  tr_fv_emit(t, 0, &in[0]);
  in[0].i = NULL;
  in[0].f = NULL;
}

static int cast_target(tr *t) {
  int64_t to = tr_attr_int(t, "to", 0);
  switch (to) {
  case DG_ONNX_FLOAT:
  case DG_ONNX_FLOAT16:
  case DG_ONNX_INT8:
  case DG_ONNX_UINT8:
  case DG_ONNX_INT32:
  case DG_ONNX_INT64:
  case ONNX_BOOL:
  case ONNX_DOUBLE:
    return (int)to;
  default:
    tr_fail(t, DG_ERROR_UNSUPPORTED, "to",
            "Cast to element type %lld is not supported", (long long)to);
    return 0;
  }
}

void tr_fold_cast(tr *t, fv *in) {
  int to = cast_target(t);
  fv o;
  if (!to || !tr_fv_alloc(t, &o, to, in[0].rank, in[0].dims))
    return;
  for (size_t k = 0; k < o.count; k++) {
    double x = tr_fv_get(&in[0], k);
    if (o.f) {
      o.f[k] = in[0].f ? x : (double)in[0].i[k];
    } else if (to == ONNX_BOOL) {
      o.i[k] = x != 0;
    } else if (in[0].f) {
      /* Out of range (or NaN) is undefined in ONNX; saturate. */
      o.i[k] = isnan(x)     ? 0
               : x >= 9e18  ? INT64_MAX
               : x <= -9e18 ? INT64_MIN
                            : (int64_t)x;
    } else {
      o.i[k] = in[0].i[k];
    }
    if (to == DG_ONNX_INT32)
      o.i[k] = (int32_t)o.i[k];
    else if (to == DG_ONNX_INT8)
      o.i[k] = (int8_t)o.i[k];
    else if (to == DG_ONNX_UINT8)
      o.i[k] = (uint8_t)o.i[k];
    else if (to == DG_ONNX_FLOAT)
      o.f[k] = (float)o.f[k];
  }
  tr_fv_emit(t, 0, &o);
}

/* Axes from the attribute (before since) or input 1. */
int tr_read_axes(tr *t, int since, int64_t *axes, int max) {
  int n = 0;
  if (t->n->opset < since)
    return tr_attr_ints(t, "axes", axes, max);
  if (!tr_has_input(t, 1))
    return -1;
  if (!tr_const_ints(t, 1, axes, max, &n))
    return -2;
  return n;
}

static void fold_reshape_to(tr *t, fv *in, int rank, const int64_t *dims) {
  fv o = in[0];
  o.rank = rank;
  memcpy(o.dims, dims, sizeof(int64_t) * (size_t)rank);
  in[0].i = NULL;
  in[0].f = NULL;
  tr_fv_emit(t, 0, &o);
}

void tr_fold_squeeze(tr *t, fv *in) {
  int r;
  int64_t d[DG_MAX_RANK];
  bool un = tr_is_op(t->n, "Unsqueeze");
  if (tr_squeeze_dims(t, un, in[0].rank, in[0].dims, &r, d))
    fold_reshape_to(t, in, r, d);
}

/* Squeeze / Unsqueeze of a tensor computed at run time: a reshape. */
void tr_op_squeeze(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc xd;
  int r;
  int64_t d[DG_MAX_RANK];
  if (tr_desc(t, x, &xd) &&
      tr_squeeze_dims(t, tr_is_op(t->n, "Unsqueeze"), xd.rank, xd.dims, &r, d))
    tr_output(t, 0, dg_graph_reshape(t->g, t->n->name, x, r, d));
}

void tr_fold_reshape(tr *t, fv *in) {
  int64_t shape[DG_MAX_RANK + 1];
  size_t n = in[1].count;
  if (in[1].rank != 1 || n > DG_MAX_RANK) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "shape", "shape of rank > %d",
            DG_MAX_RANK);
    return;
  }
  int64_t known = 1, infer = -1;
  for (size_t k = 0; k < n; k++) {
    shape[k] = tr_fv_geti(&in[1], k);
    if (shape[k] == 0 && !tr_attr_int(t, "allowzero", 0))
      shape[k] = (int)k < in[0].rank ? in[0].dims[k] : 0;
    if (shape[k] == -1 && infer < 0)
      infer = (int64_t)k;
    else if (shape[k] < 0) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "shape", "bad shape value");
      return;
    } else if (shape[k] && known > INT64_MAX / shape[k]) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "shape",
              "shape's element count overflows int64");
      return;
    } else
      known *= shape[k];
  }
  if (infer >= 0)
    shape[infer] = known ? (int64_t)in[0].count / known : 0;
  if (tr_dims_count((int)n, shape) != in[0].count) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "shape",
            "the shape does not hold the input's %zu elements", in[0].count);
    return;
  }
  fold_reshape_to(t, in, (int)n, shape);
}

void tr_fold_gather(tr *t, fv *in) {
  int64_t axis = tr_norm_axis(tr_attr_int(t, "axis", 0), in[0].rank);
  if (axis < 0 || axis >= in[0].rank ||
      in[0].rank - 1 + in[1].rank > DG_MAX_RANK) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axis", "axis out of range");
    return;
  }
  int r = 0;
  int64_t d[DG_MAX_RANK];
  for (int k = 0; k < axis; k++)
    d[r++] = in[0].dims[k];
  for (int k = 0; k < in[1].rank; k++)
    d[r++] = in[1].dims[k];
  for (int k = (int)axis + 1; k < in[0].rank; k++)
    d[r++] = in[0].dims[k];
  fv o;
  if (!tr_fv_alloc(t, &o, in[0].elem, r, d))
    return;
  size_t outer = 1, inner = 1, len = (size_t)in[0].dims[axis];
  for (int k = 0; k < axis; k++)
    outer *= (size_t)in[0].dims[k];
  for (int k = (int)axis + 1; k < in[0].rank; k++)
    inner *= (size_t)in[0].dims[k];
  size_t q = 0;
  for (size_t a = 0; a < outer; a++)
    for (size_t j = 0; j < in[1].count; j++) {
      int64_t ix = tr_fv_geti(&in[1], j);
      ix = ix < 0 ? ix + (int64_t)len : ix;
      if (ix < 0 || ix >= (int64_t)len) {
        tr_fv_free(&o);
        tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "indices",
                "index %lld out of range [0, %zu)", (long long)ix, len);
        return;
      }
      for (size_t b = 0; b < inner; b++, q++) {
        size_t s = (a * len + (size_t)ix) * inner + b;
        if (o.f)
          o.f[q] = tr_fv_get(&in[0], s);
        else
          o.i[q] = in[0].i[s];
      }
    }
  tr_fv_emit(t, 0, &o);
}

void tr_fold_concat(tr *t, fv *in, int n) {
  int rank = in[0].rank;
  int64_t axis = tr_norm_axis(tr_attr_int(t, "axis", 0), rank);
  if (axis < 0 || axis >= rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axis", "axis out of range");
    return;
  }
  int64_t d[DG_MAX_RANK];
  memcpy(d, in[0].dims, sizeof d);
  d[axis] = 0;
  for (int k = 0; k < n; k++) {
    bool ok = in[k].rank == rank && in[k].elem == in[0].elem;
    for (int a = 0; ok && a < rank; a++)
      ok = a == axis || in[k].dims[a] == in[0].dims[a];
    if (!ok) {
      tr_fail(t, DG_ERROR_INVALID_SHAPE, "inputs",
              "Concat inputs differ in type, rank or dims");
      return;
    }
    d[axis] += in[k].dims[axis];
  }
  fv o;
  if (!tr_fv_alloc(t, &o, in[0].elem, rank, d))
    return;
  size_t outer = 1, inner = 1, q = 0;
  for (int a = 0; a < axis; a++)
    outer *= (size_t)d[a];
  for (int a = (int)axis + 1; a < rank; a++)
    inner *= (size_t)d[a];
  for (size_t a = 0; a < outer; a++)
    for (int k = 0; k < n; k++) {
      size_t len = (size_t)in[k].dims[axis] * inner;
      for (size_t j = 0; j < len; j++, q++) {
        if (o.f)
          o.f[q] = in[k].f[a * len + j];
        else
          o.i[q] = in[k].i[a * len + j];
      }
    }
  tr_fv_emit(t, 0, &o);
}

void tr_fold_slice(tr *t, fv *in, int n) {
  int rank = in[0].rank;
  int64_t st[DG_MAX_RANK], en[DG_MAX_RANK], ax[DG_MAX_RANK], sp[DG_MAX_RANK];
  int ns = 0, ne = 0, na = -1, np = -1;
  if (t->n->opset < 10) {
    ns = tr_attr_ints(t, "starts", st, DG_MAX_RANK);
    ne = tr_attr_ints(t, "ends", en, DG_MAX_RANK);
    na = tr_attr_ints(t, "axes", ax, DG_MAX_RANK);
  } else {
    ns = (int)in[1].count;
    ne = (int)in[2].count;
    for (int k = 0; k < ns && k < DG_MAX_RANK; k++)
      st[k] = tr_fv_geti(&in[1], k);
    for (int k = 0; k < ne && k < DG_MAX_RANK; k++)
      en[k] = tr_fv_geti(&in[2], k);
    if (n > 3 && in[3].count) {
      na = (int)in[3].count;
      for (int k = 0; k < na && k < DG_MAX_RANK; k++)
        ax[k] = tr_fv_geti(&in[3], k);
    }
    if (n > 4 && in[4].count) {
      np = (int)in[4].count;
      for (int k = 0; k < np && k < DG_MAX_RANK; k++)
        sp[k] = tr_fv_geti(&in[4], k);
    }
  }
  if (ns != ne || ns > rank || (na >= 0 && na != ns) || (np >= 0 && np != ns)) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "starts",
            "starts, ends, axes and steps differ in length");
    return;
  }
  int64_t b[DG_MAX_RANK], s[DG_MAX_RANK], d[DG_MAX_RANK];
  for (int a = 0; a < rank; a++) {
    b[a] = 0;
    s[a] = 1;
    d[a] = in[0].dims[a];
  }
  for (int k = 0; k < ns; k++) {
    int64_t a = na >= 0 ? tr_norm_axis(ax[k], rank) : k;
    int64_t step = np >= 0 ? sp[k] : 1, dim = in[0].dims[a];
    if (a < 0 || a >= rank || step == 0) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axes", "bad axis or zero step");
      return;
    }
    int64_t lo = st[k] < 0 ? st[k] + dim : st[k];
    int64_t hi = en[k] < -dim ? -1 : en[k] < 0 ? en[k] + dim : en[k];
    if (step > 0) {
      lo = lo < 0 ? 0 : lo > dim ? dim : lo;
      hi = hi < 0 ? 0 : hi > dim ? dim : hi;
      d[a] = hi > lo ? (hi - lo + step - 1) / step : 0;
    } else {
      lo = lo < 0 ? -1 : lo > dim - 1 ? dim - 1 : lo;
      hi = hi < -1 ? -1 : hi > dim - 1 ? dim - 1 : hi;
      d[a] = lo > hi ? (lo - hi - step - 1) / -step : 0;
    }
    b[a] = lo;
    s[a] = step;
  }
  fv o;
  if (!tr_fv_alloc(t, &o, in[0].elem, rank, d))
    return;
  for (size_t q = 0; q < o.count; q++) {
    size_t r = q, src = 0, stride = 1;
    for (int a = rank - 1; a >= 0; a--) {
      int64_t c = (int64_t)(r % (size_t)d[a]);
      r /= (size_t)d[a];
      src += (size_t)(b[a] + c * s[a]) * stride;
      stride *= (size_t)in[0].dims[a];
    }
    if (o.f)
      o.f[q] = in[0].f[src];
    else
      o.i[q] = in[0].i[src];
  }
  tr_fv_emit(t, 0, &o);
}

void tr_fold_range(tr *t, fv *in) {
  if (in[0].count != 1 || in[1].count != 1 || in[2].count != 1) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "start", "scalars expected");
    return;
  }
  double a = tr_fv_get(&in[0], 0), b = tr_fv_get(&in[1], 0),
         d = tr_fv_get(&in[2], 0);
  double n = d != 0 ? ceil((b - a) / d) : -1;
  if (!(n >= 0 && n <= (double)FOLD_MAX_ELEMENTS)) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "delta",
            "Range of %g elements (zero delta, or too many)", n);
    return;
  }
  int64_t len = (int64_t)n;
  fv o;
  if (!tr_fv_alloc(t, &o, in[0].elem, 1, &len))
    return;
  for (int64_t k = 0; k < len; k++) {
    int64_t step;
    if (o.f)
      o.f[k] = a + (double)k * d;
    else if (__builtin_mul_overflow(k, in[2].i[0], &step) ||
             __builtin_add_overflow(in[0].i[0], step, &o.i[k])) {
      /* a start near the type's end: ONNX leaves the wrap undefined */
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "delta",
              "Range's element %lld overflows int64", (long long)k);
      tr_fv_free(&o);
      return;
    }
  }
  tr_fv_emit(t, 0, &o);
}

void tr_fold_constant_of_shape(tr *t, fv *in) {
  dg_onnx_value c;
  memset(&c, 0, sizeof c);
  int elem = DG_ONNX_FLOAT;
  double fval = 0;
  int64_t ival = 0;
  if (t->n->constant_value && t->n->constant_value(t->n, &c)) {
    if (c.error || c.count != 1) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "value",
              "value must be a one-element tensor");
      return;
    }
    elem = c.elem;
    switch (elem) {
    case DG_ONNX_FLOAT:
      fval = ((const float *)c.data)[0];
      break;
    case DG_ONNX_FLOAT16:
      fval = dg_f16_to_f32(*(const uint16_t *)c.data);
      break;
    case DG_ONNX_INT32:
      ival = ((const int32_t *)c.data)[0];
      break;
    case DG_ONNX_INT64:
      ival = ((const int64_t *)c.data)[0];
      break;
    case DG_ONNX_INT8:
      ival = ((const int8_t *)c.data)[0];
      break;
    case DG_ONNX_UINT8:
      ival = ((const uint8_t *)c.data)[0];
      break;
    default:
      tr_fail(t, DG_ERROR_UNSUPPORTED, "value", "value of element type %d",
              elem);
      return;
    }
  }
  int64_t d[DG_MAX_RANK];
  if (in[0].rank != 1 || in[0].count > DG_MAX_RANK) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "input", "shape of rank > %d",
            DG_MAX_RANK);
    return;
  }
  for (size_t k = 0; k < in[0].count; k++)
    d[k] = tr_fv_geti(&in[0], k);
  fv o;
  if (!tr_fv_alloc(t, &o, elem, (int)in[0].count, d))
    return;
  for (size_t k = 0; k < o.count; k++) {
    if (o.f)
      o.f[k] = fval;
    else
      o.i[k] = ival;
  }
  tr_fv_emit(t, 0, &o);
}

void tr_fold_expand(tr *t, fv *in) {
  fv s = {.rank = (int)in[1].count};
  if (in[1].rank != 1 || in[1].count > DG_MAX_RANK) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "shape", "shape of rank > %d",
            DG_MAX_RANK);
    return;
  }
  for (size_t k = 0; k < in[1].count; k++)
    s.dims[k] = tr_fv_geti(&in[1], k);
  int r;
  int64_t d[DG_MAX_RANK];
  if (!tr_bcast(&in[0], &s, &r, d)) {
    tr_fail(t, DG_ERROR_INVALID_SHAPE, "shape", "shapes do not broadcast");
    return;
  }
  fv o;
  if (!tr_fv_alloc(t, &o, in[0].elem, r, d))
    return;
  for (size_t k = 0; k < o.count; k++) {
    size_t a = tr_bidx(&in[0], r, d, k);
    if (o.f)
      o.f[k] = in[0].f[a];
    else
      o.i[k] = in[0].i[a];
  }
  tr_fv_emit(t, 0, &o);
}

void tr_fold_transpose(tr *t, fv *in) {
  int rank = in[0].rank;
  int64_t perm[DG_MAX_RANK];
  int np = tr_attr_ints(t, "perm", perm, DG_MAX_RANK);
  if (np < 0)
    for (int k = 0; k < rank; k++)
      perm[k] = rank - 1 - k;
  else if (np != rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "perm",
            "perm of length %d for "
            "rank %d",
            np, rank);
    return;
  }
  int64_t d[DG_MAX_RANK], st[DG_MAX_RANK];
  bool seen[DG_MAX_RANK] = {0};
  for (int k = 0; k < rank; k++) {
    if (perm[k] < 0 || perm[k] >= rank || seen[perm[k]]) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "perm", "not a permutation");
      return;
    }
    seen[perm[k]] = true;
    d[k] = in[0].dims[perm[k]];
  }
  int64_t s = 1;
  int64_t sx[DG_MAX_RANK];
  for (int k = rank - 1; k >= 0; k--) {
    sx[k] = s;
    s *= in[0].dims[k];
  }
  for (int k = 0; k < rank; k++)
    st[k] = sx[perm[k]];
  fv o;
  if (!tr_fv_alloc(t, &o, in[0].elem, rank, d))
    return;
  for (size_t q = 0; q < o.count; q++) {
    size_t r = q, src = 0;
    for (int k = rank - 1; k >= 0; k--) {
      src += (r % (size_t)d[k]) * (size_t)st[k];
      r /= (size_t)d[k];
    }
    if (o.f)
      o.f[q] = in[0].f[src];
    else
      o.i[q] = in[0].i[src];
  }
  tr_fv_emit(t, 0, &o);
}

void tr_fold_flatten(tr *t, fv *in) {
  int64_t axis = tr_norm_axis(tr_attr_int(t, "axis", 1), in[0].rank);
  if (axis < 0 || axis > in[0].rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axis", "axis out of range");
    return;
  }
  int64_t d[2] = {1, 1};
  for (int k = 0; k < in[0].rank; k++)
    d[k >= axis] *= in[0].dims[k];
  fold_reshape_to(t, in, 2, d);
}
