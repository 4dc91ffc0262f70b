/* Shape arithmetic folded at import: nodes whose inputs are all known at
 * import time (initializers, Constant nodes, earlier folds) and nodes that
 * only read a tensor's static shape (Shape, Size) are evaluated here, and
 * their outputs become constants that later nodes read as such. This is
 * what PyTorch's exports put around Reshape, Expand and Slice: Shape ->
 * Gather -> Unsqueeze -> Concat -> Reshape, Range, Equal/Where on shapes,
 * ConstantOfShape. No node is built for them.
 *
 * Values are held as int64 (integer and bool types) or double (float
 * types) while folding and stored back in their ONNX element type. Folding
 * is bounded (FOLD_MAX_ELEMENTS per output) so that a hostile model cannot
 * make the importer allocate or compute without bound; a larger constant result is
 * refused with the reason. */
#include "onnx_tr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 4M elements: a 2048 x 2048 weight transposed at import folds; more
 * would let a hostile model spend seconds (a fuzzed Range of 9.5M
 * elements feeding a Where took over 10 s under the fuzzer). */
#define FOLD_MAX_ELEMENTS ((size_t)1 << 22)

enum { ONNX_BOOL = 9, ONNX_DOUBLE = 11 };

typedef struct fv {
  int elem; /* DG_ONNX_* or ONNX_BOOL / ONNX_DOUBLE */
  int rank;
  int64_t dims[DG_MAX_RANK];
  size_t count;
  int64_t *i; /* integer and bool elements */
  double *f;  /* float elements */
} fv;

static bool is_float_elem(int e) {
  return e == DG_ONNX_FLOAT || e == DG_ONNX_FLOAT16 || e == ONNX_DOUBLE;
}

static void fv_free(fv *v) {
  free(v->i);
  free(v->f);
  v->i = NULL;
  v->f = NULL;
}

static size_t dims_count(int rank, const int64_t *dims) {
  size_t n = 1;
  for (int k = 0; k < rank; k++) {
    if (dims[k] < 0 || (dims[k] && n > FOLD_MAX_ELEMENTS / (size_t)dims[k]))
      return FOLD_MAX_ELEMENTS + 1;
    n *= (size_t)dims[k];
  }
  return n;
}

/* Allocates v for elem and dims; false (failure recorded) when too big. */
static bool fv_alloc(tr *t, fv *v, int elem, int rank, const int64_t *dims) {
  memset(v, 0, sizeof *v);
  v->elem = elem;
  v->rank = rank;
  if (rank < 0 || rank > DG_MAX_RANK) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "output",
            "folded value of rank %d (at most %d)", rank, DG_MAX_RANK);
    return false;
  }
  if (rank)
    memcpy(v->dims, dims, sizeof(int64_t) * (size_t)rank);
  for (int k = 0; k < rank; k++)
    if (dims[k] < 0) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "output",
              "a value computed at import would have dimension %d = %lld", k,
              (long long)dims[k]);
      return false;
    }
  v->count = dims_count(rank, dims);
  if (v->count > FOLD_MAX_ELEMENTS) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "output",
            "a value computed at import would hold more than %zu elements",
            FOLD_MAX_ELEMENTS);
    return false;
  }
  size_t n = v->count ? v->count : 1;
  if (is_float_elem(elem))
    v->f = calloc(n, sizeof *v->f);
  else
    v->i = calloc(n, sizeof *v->i);
  if (!v->f && !v->i) {
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return false;
  }
  return true;
}

static float half_to_float(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0    ? ldexpf((float)m, -24)
            : e == 31 ? (m ? NAN : INFINITY)
                      : ldexpf((float)(m | 1024), e - 25);
  return s ? -v : v;
}

static uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t s = (x >> 16) & 0x8000, e = (x >> 23) & 255, m = x & 0x7fffff;
  if (e == 255)
    return (uint16_t)(s | 0x7c00 | (m ? 0x200 : 0));
  int ne = (int)e - 127 + 15;
  if (ne >= 31)
    return (uint16_t)(s | 0x7c00);
  if (ne <= 0) { /* subnormal or zero: round to nearest even */
    if (ne < -10)
      return (uint16_t)s;
    m |= 0x800000;
    int shift = 14 - ne;
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1),
             half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1)))
      r++;
    return (uint16_t)(s | r);
  }
  uint32_t r = (uint32_t)ne << 10 | m >> 13, rem = m & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (r & 1)))
    r++;
  return (uint16_t)(s | r);
}

/* Input i as a folded value, if it is constant and of a type we read. */
static bool fv_read(tr *t, int i, fv *v) {
  dg_onnx_value c;
  memset(v, 0, sizeof *v);
  if (!tr_const(t, i, &c) || c.rank < 0 || c.rank > DG_MAX_RANK)
    return false;
  if (c.elem != DG_ONNX_FLOAT && c.elem != DG_ONNX_FLOAT16 &&
      c.elem != DG_ONNX_INT8 && c.elem != DG_ONNX_UINT8 &&
      c.elem != DG_ONNX_INT32 && c.elem != DG_ONNX_INT64 &&
      c.elem != ONNX_BOOL && c.elem != ONNX_DOUBLE)
    return false;
  if (dims_count(c.rank, c.dims) != c.count || c.count > FOLD_MAX_ELEMENTS)
    return false;
  if (!fv_alloc(t, v, c.elem, c.rank, c.dims))
    return false;
  for (size_t k = 0; k < c.count; k++) switch (c.elem) {
    case DG_ONNX_FLOAT: v->f[k] = ((const float *)c.data)[k]; break;
    case DG_ONNX_FLOAT16:
      v->f[k] = half_to_float(((const uint16_t *)c.data)[k]);
      break;
    case ONNX_DOUBLE: v->f[k] = ((const double *)c.data)[k]; break;
    case DG_ONNX_INT8: v->i[k] = ((const int8_t *)c.data)[k]; break;
    case DG_ONNX_UINT8:
    case ONNX_BOOL: v->i[k] = ((const uint8_t *)c.data)[k]; break;
    case DG_ONNX_INT32: v->i[k] = ((const int32_t *)c.data)[k]; break;
    default: v->i[k] = ((const int64_t *)c.data)[k]; break;
    }
  return true;
}

static double fv_get(const fv *v, size_t k) {
  return v->f ? v->f[k] : (double)v->i[k];
}
static int64_t fv_geti(const fv *v, size_t k) {
  return v->i ? v->i[k] : (int64_t)v->f[k];
}

/* Stores v as output o's constant (v is consumed). */
static void fv_emit(tr *t, int o, fv *v) {
  if (t->st != DG_OK || o >= t->n->n_outputs || !t->n->outputs[o][0]) {
    fv_free(v);
    return;
  }
  tr_value *tv = tr_value_find(t, t->n->outputs[o]);
  size_t n = v->count ? v->count : 1, es;
  switch (v->elem) {
  case DG_ONNX_FLOAT:
  case DG_ONNX_INT32: es = 4; break;
  case DG_ONNX_FLOAT16: es = 2; break;
  case DG_ONNX_INT8:
  case DG_ONNX_UINT8:
  case ONNX_BOOL: es = 1; break;
  default: es = 8; break;
  }
  void *p = tv ? malloc(n * es) : NULL;
  if (!p || !tr_own(t, p)) {
    fv_free(v);
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return;
  }
  for (size_t k = 0; k < v->count; k++) switch (v->elem) {
    case DG_ONNX_FLOAT: ((float *)p)[k] = (float)v->f[k]; break;
    case DG_ONNX_FLOAT16:
      ((uint16_t *)p)[k] = float_to_half((float)v->f[k]);
      break;
    case ONNX_DOUBLE: ((double *)p)[k] = v->f[k]; break;
    case DG_ONNX_INT8: ((int8_t *)p)[k] = (int8_t)v->i[k]; break;
    case DG_ONNX_UINT8: ((uint8_t *)p)[k] = (uint8_t)v->i[k]; break;
    case ONNX_BOOL: ((uint8_t *)p)[k] = v->i[k] != 0; break;
    case DG_ONNX_INT32: ((int32_t *)p)[k] = (int32_t)v->i[k]; break;
    default: ((int64_t *)p)[k] = v->i[k]; break;
    }
  memset(&tv->cv, 0, sizeof tv->cv);
  tv->cv.kind = DG_ONNX_VALUE_CONST;
  tv->cv.elem = v->elem;
  tv->cv.rank = v->rank;
  memcpy(tv->cv.dims, v->dims, sizeof v->dims);
  tv->cv.data = p;
  tv->cv.count = v->count;
  tv->has_const = true;
  fv_free(v);
}

/* Numpy broadcasting of a and b into out's dims. */
static bool bcast(const fv *a, const fv *b, int *rank, int64_t *dims) {
  int r = a->rank > b->rank ? a->rank : b->rank;
  for (int k = 0; k < r; k++) {
    int ka = k - (r - a->rank), kb = k - (r - b->rank);
    int64_t da = ka >= 0 ? a->dims[ka] : 1, db = kb >= 0 ? b->dims[kb] : 1;
    if (da != db && da != 1 && db != 1)
      return false;
    dims[k] = da == 1 ? db : da;
  }
  *rank = r;
  return true;
}

/* Index into v (rank vr) of output element k of dims (rank r). */
static size_t bidx(const fv *v, int r, const int64_t *dims, size_t k) {
  size_t idx = 0, stride = 1;
  for (int d = r - 1; d >= 0; d--) {
    int64_t c = (int64_t)(k % (size_t)dims[d]);
    k /= (size_t)dims[d];
    int vd = d - (r - v->rank);
    if (vd >= 0) {
      if (v->dims[vd] != 1)
        idx += (size_t)c * stride;
      stride *= (size_t)v->dims[vd];
    }
  }
  return idx;
}

static int64_t norm_axis(int64_t a, int rank) { return a < 0 ? a + rank : a; }

/* ---- the folds ---- */

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

static void fold_shape(tr *t) {
  int rank;
  int64_t dims[DG_MAX_RANK];
  if (!static_dims(t, 0, &rank, dims))
    return;
  int64_t start = 0, end = rank;
  if (t->n->opset >= 15) {
    start = tr_attr_int(t, "start", 0);
    end = tr_attr_int(t, "end", rank);
  }
  start = norm_axis(start, rank);
  end = norm_axis(end, rank);
  start = start < 0 ? 0 : start > rank ? rank : start;
  end = end < 0 ? 0 : end > rank ? rank : end;
  int64_t n = end > start ? end - start : 0;
  fv o;
  if (!fv_alloc(t, &o, DG_ONNX_INT64, 1, &n))
    return;
  for (int64_t k = 0; k < n; k++)
    o.i[k] = dims[start + k];
  fv_emit(t, 0, &o);
}

static void fold_size(tr *t) {
  int rank;
  int64_t dims[DG_MAX_RANK];
  if (!static_dims(t, 0, &rank, dims))
    return;
  fv o;
  if (!fv_alloc(t, &o, DG_ONNX_INT64, 0, NULL))
    return;
  o.i[0] = 1;
  for (int k = 0; k < rank; k++)
    o.i[0] *= dims[k];
  fv_emit(t, 0, &o);
}

static void fold_identity(tr *t, fv *in) {
  fv_emit(t, 0, &in[0]);
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
  case ONNX_DOUBLE: return (int)to;
  default:
    tr_fail(t, DG_ERROR_UNSUPPORTED, "to",
            "Cast to element type %lld is not supported", (long long)to);
    return 0;
  }
}

static void fold_cast(tr *t, fv *in) {
  int to = cast_target(t);
  fv o;
  if (!to || !fv_alloc(t, &o, to, in[0].rank, in[0].dims))
    return;
  for (size_t k = 0; k < o.count; k++) {
    double x = fv_get(&in[0], k);
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
  fv_emit(t, 0, &o);
}

/* Axes from the attribute (before since) or input 1. */
static int read_axes(tr *t, int since, int64_t *axes, int max) {
  int n = 0;
  if (t->n->opset < since)
    return tr_attr_ints(t, "axes", axes, max);
  if (!tr_has_input(t, 1))
    return -1;
  if (!tr_const_ints(t, 1, axes, max, &n))
    return -2;
  return n;
}

/* The output dims of Squeeze / Unsqueeze of dims; false when invalid. */
static bool squeeze_dims(tr *t, bool unsqueeze, int rank, const int64_t *dims,
                         int *orank, int64_t *odims) {
  int64_t axes[DG_MAX_RANK + 1];
  int n = read_axes(t, 13, axes, DG_MAX_RANK + 1);
  if (n == -2 || t->st != DG_OK)
    return false;
  if (n > DG_MAX_RANK || (unsqueeze && (n < 0 || rank + n > DG_MAX_RANK))) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "axes",
            "%s to more than rank %d, or without axes", t->n->op_type,
            DG_MAX_RANK);
    return false;
  }
  bool mark[DG_MAX_RANK * 2] = {0};
  int r = unsqueeze ? rank + n : rank;
  for (int k = 0; k < n; k++) {
    int64_t a = norm_axis(axes[k], r);
    if (a < 0 || a >= r || mark[a] ||
        (!unsqueeze && dims[a] != 1)) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axes",
              "axis %lld is out of range, repeated, or (Squeeze) not of "
              "size 1",
              (long long)axes[k]);
      return false;
    }
    mark[a] = true;
  }
  *orank = 0;
  if (unsqueeze) {
    for (int k = 0, src = 0; k < r; k++)
      odims[(*orank)++] = mark[k] ? 1 : dims[src++];
  } else {
    for (int k = 0; k < rank; k++)
      if (n >= 0 ? !mark[k] : dims[k] != 1)
        odims[(*orank)++] = dims[k];
  }
  return true;
}

static void fold_reshape_to(tr *t, fv *in, int rank, const int64_t *dims) {
  fv o = in[0];
  o.rank = rank;
  memcpy(o.dims, dims, sizeof(int64_t) * (size_t)rank);
  in[0].i = NULL;
  in[0].f = NULL;
  fv_emit(t, 0, &o);
}

static void fold_squeeze(tr *t, fv *in) {
  int r;
  int64_t d[DG_MAX_RANK];
  bool un = tr_is_op(t->n, "Unsqueeze");
  if (squeeze_dims(t, un, in[0].rank, in[0].dims, &r, d))
    fold_reshape_to(t, in, r, d);
}

/* Squeeze / Unsqueeze of a tensor computed at run time: a reshape. */
static void op_squeeze(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc xd;
  int r;
  int64_t d[DG_MAX_RANK];
  if (tr_desc(t, x, &xd) &&
      squeeze_dims(t, tr_is_op(t->n, "Unsqueeze"), xd.rank, xd.dims, &r, d))
    tr_output(t, 0, dg_graph_reshape(t->g, t->n->name, x, r, d));
}

static void fold_reshape(tr *t, fv *in) {
  int64_t shape[DG_MAX_RANK + 1];
  size_t n = in[1].count;
  if (in[1].rank != 1 || n > DG_MAX_RANK) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "shape", "shape of rank > %d",
            DG_MAX_RANK);
    return;
  }
  int64_t known = 1, infer = -1;
  for (size_t k = 0; k < n; k++) {
    shape[k] = fv_geti(&in[1], k);
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
  if (dims_count((int)n, shape) != in[0].count) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "shape",
            "the shape does not hold the input's %zu elements", in[0].count);
    return;
  }
  fold_reshape_to(t, in, (int)n, shape);
}

static void fold_gather(tr *t, fv *in) {
  int64_t axis = norm_axis(tr_attr_int(t, "axis", 0), in[0].rank);
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
  if (!fv_alloc(t, &o, in[0].elem, r, d))
    return;
  size_t outer = 1, inner = 1, len = (size_t)in[0].dims[axis];
  for (int k = 0; k < axis; k++)
    outer *= (size_t)in[0].dims[k];
  for (int k = (int)axis + 1; k < in[0].rank; k++)
    inner *= (size_t)in[0].dims[k];
  size_t q = 0;
  for (size_t a = 0; a < outer; a++)
    for (size_t j = 0; j < in[1].count; j++) {
      int64_t ix = fv_geti(&in[1], j);
      ix = ix < 0 ? ix + (int64_t)len : ix;
      if (ix < 0 || ix >= (int64_t)len) {
        fv_free(&o);
        tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "indices",
                "index %lld out of range [0, %zu)", (long long)ix, len);
        return;
      }
      for (size_t b = 0; b < inner; b++, q++) {
        size_t s = (a * len + (size_t)ix) * inner + b;
        if (o.f)
          o.f[q] = fv_get(&in[0], s);
        else
          o.i[q] = in[0].i[s];
      }
    }
  fv_emit(t, 0, &o);
}

static void fold_concat(tr *t, fv *in, int n) {
  int rank = in[0].rank;
  int64_t axis = norm_axis(tr_attr_int(t, "axis", 0), rank);
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
  if (!fv_alloc(t, &o, in[0].elem, rank, d))
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
  fv_emit(t, 0, &o);
}

static void fold_slice(tr *t, fv *in, int n) {
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
      st[k] = fv_geti(&in[1], k);
    for (int k = 0; k < ne && k < DG_MAX_RANK; k++)
      en[k] = fv_geti(&in[2], k);
    if (n > 3 && in[3].count) {
      na = (int)in[3].count;
      for (int k = 0; k < na && k < DG_MAX_RANK; k++)
        ax[k] = fv_geti(&in[3], k);
    }
    if (n > 4 && in[4].count) {
      np = (int)in[4].count;
      for (int k = 0; k < np && k < DG_MAX_RANK; k++)
        sp[k] = fv_geti(&in[4], k);
    }
  }
  if (ns != ne || ns > rank || (na >= 0 && na != ns) ||
      (np >= 0 && np != ns)) {
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
    int64_t a = na >= 0 ? norm_axis(ax[k], rank) : k;
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
  if (!fv_alloc(t, &o, in[0].elem, rank, d))
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
  fv_emit(t, 0, &o);
}

static void fold_range(tr *t, fv *in) {
  if (in[0].count != 1 || in[1].count != 1 || in[2].count != 1) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "start", "scalars expected");
    return;
  }
  double a = fv_get(&in[0], 0), b = fv_get(&in[1], 0), d = fv_get(&in[2], 0);
  double n = d != 0 ? ceil((b - a) / d) : -1;
  if (!(n >= 0 && n <= (double)FOLD_MAX_ELEMENTS)) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "delta",
            "Range of %g elements (zero delta, or too many)", n);
    return;
  }
  int64_t len = (int64_t)n;
  fv o;
  if (!fv_alloc(t, &o, in[0].elem, 1, &len))
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
      fv_free(&o);
      return;
    }
  }
  fv_emit(t, 0, &o);
}

static void fold_constant_of_shape(tr *t, fv *in) {
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
    case DG_ONNX_FLOAT: fval = ((const float *)c.data)[0]; break;
    case DG_ONNX_FLOAT16: fval = half_to_float(*(const uint16_t *)c.data); break;
    case DG_ONNX_INT32: ival = ((const int32_t *)c.data)[0]; break;
    case DG_ONNX_INT64: ival = ((const int64_t *)c.data)[0]; break;
    case DG_ONNX_INT8: ival = ((const int8_t *)c.data)[0]; break;
    case DG_ONNX_UINT8: ival = ((const uint8_t *)c.data)[0]; break;
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
    d[k] = fv_geti(&in[0], k);
  fv o;
  if (!fv_alloc(t, &o, elem, (int)in[0].count, d))
    return;
  for (size_t k = 0; k < o.count; k++) {
    if (o.f)
      o.f[k] = fval;
    else
      o.i[k] = ival;
  }
  fv_emit(t, 0, &o);
}

static void fold_expand(tr *t, fv *in) {
  fv s = {.rank = (int)in[1].count};
  if (in[1].rank != 1 || in[1].count > DG_MAX_RANK) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "shape", "shape of rank > %d",
            DG_MAX_RANK);
    return;
  }
  for (size_t k = 0; k < in[1].count; k++)
    s.dims[k] = fv_geti(&in[1], k);
  int r;
  int64_t d[DG_MAX_RANK];
  if (!bcast(&in[0], &s, &r, d)) {
    tr_fail(t, DG_ERROR_INVALID_SHAPE, "shape", "shapes do not broadcast");
    return;
  }
  fv o;
  if (!fv_alloc(t, &o, in[0].elem, r, d))
    return;
  for (size_t k = 0; k < o.count; k++) {
    size_t a = bidx(&in[0], r, d, k);
    if (o.f)
      o.f[k] = in[0].f[a];
    else
      o.i[k] = in[0].i[a];
  }
  fv_emit(t, 0, &o);
}

/* Elementwise: unary and binary arithmetic, comparisons, logic, Where.
 * A unary fold is its function on doubles; on integers only Neg, Abs,
 * Not (and the identities Floor, Ceil) are defined. */
static double f_neg(double x) { return -x; }
static double f_recip(double x) { return 1 / x; }
static double f_not(double x) { return x == 0; }
static double f_sign(double x) { return x > 0 ? 1 : x < 0 ? -1 : x; }

static const struct {
  const char *op;
  double (*f)(double);
} unary_folds[] = {
    {"Neg", f_neg},
    {"Abs", fabs},
    {"Sqrt", sqrt},
    {"Floor", floor},
    {"Ceil", ceil},
    {"Not", f_not},
    {"Reciprocal", f_recip},
    {"Cos", cos},
    {"Sin", sin},
    {"Exp", exp},
    {"Log", log},
    {"Tanh", tanh},
    {"Sign", f_sign},
};

static void fold_unary(tr *t, fv *in, double (*f)(double)) {
  fv o;
  if (!in[0].f && f != f_neg && f != fabs && f != f_not && f != floor &&
      f != ceil && f != f_sign) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "X",
            "%s of integers is not folded (float only)", t->n->op_type);
    return;
  }
  if (!fv_alloc(t, &o, in[0].elem, in[0].rank, in[0].dims))
    return;
  for (size_t k = 0; k < o.count; k++) {
    if (o.f) {
      o.f[k] = f(in[0].f[k]);
    } else {
      int64_t x = in[0].i[k];
      o.i[k] = f == f_neg    ? (int64_t)(0 - (uint64_t)x)
               : f == fabs   ? (x < 0 ? (int64_t)(0 - (uint64_t)x) : x)
               : f == f_not  ? !x
               : f == f_sign ? (x > 0) - (x < 0)
                             : x;
    }
  }
  fv_emit(t, 0, &o);
}

/* HannWindow, HammingWindow, BlackmanWindow of a size known at import:
 * the window's values (ONNX's definition: N' = size if periodic, size - 1
 * otherwise). */
static void fold_window(tr *t, fv *in) {
  if (in[0].count != 1 || in[0].f) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "size", "an integer scalar expected");
    return;
  }
  int64_t n = in[0].i[0];
  int64_t to = tr_attr_int(t, "output_datatype", DG_ONNX_FLOAT);
  if (to != DG_ONNX_FLOAT && to != DG_ONNX_FLOAT16) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "output_datatype",
            "window of element type %lld (float and float16 are taken)",
            (long long)to);
    return;
  }
  bool periodic = tr_attr_int(t, "periodic", 1) != 0;
  fv o;
  if (n < 0 || !fv_alloc(t, &o, (int)to, 1, &n)) {
    if (t->st == DG_OK)
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "size", "negative window size");
    return;
  }
  double den = (double)(periodic ? n : n - 1), pi2 = 2 * acos(-1.0);
  for (int64_t k = 0; k < n; k++) {
    double c1 = den > 0 ? cos(pi2 * (double)k / den) : 1;
    double c2 = den > 0 ? cos(2 * pi2 * (double)k / den) : 1;
    o.f[k] = tr_is_op(t->n, "HannWindow")      ? 0.5 - 0.5 * c1
             : tr_is_op(t->n, "HammingWindow") ? 25.0 / 46 - 21.0 / 46 * c1
                                               : 0.42 - 0.5 * c1 + 0.08 * c2;
  }
  fv_emit(t, 0, &o);
}

enum {
  BW_ADD,
  BW_SUB,
  BW_MUL,
  BW_DIV,
  BW_MOD,
  BW_MIN,
  BW_MAX,
  BW_EQ,
  BW_LT,
  BW_GT,
  BW_LE,
  BW_GE,
  BW_AND,
  BW_OR,
  BW_XOR
};
static const struct {
  const char *op;
  int fn;
} binary_folds[] = {
    {"Add", BW_ADD},  {"Sub", BW_SUB},   {"Mul", BW_MUL},
    {"Div", BW_DIV},  {"Mod", BW_MOD},   {"Min", BW_MIN},
    {"Max", BW_MAX},  {"Equal", BW_EQ},  {"Less", BW_LT},
    {"Greater", BW_GT}, {"LessOrEqual", BW_LE}, {"GreaterOrEqual", BW_GE},
    {"And", BW_AND},  {"Or", BW_OR},     {"Xor", BW_XOR}};

static double fbin(int fn, double a, double b, bool fmod_) {
  switch (fn) {
  case BW_ADD: return a + b;
  case BW_SUB: return a - b;
  case BW_MUL: return a * b;
  case BW_DIV: return a / b;
  case BW_MOD: {
    double r = fmod(a, b);
    return fmod_ || r == 0 || (r < 0) == (b < 0) ? r : r + b;
  }
  case BW_MIN: return a < b ? a : b;
  case BW_MAX: return a > b ? a : b;
  case BW_EQ: return a == b;
  case BW_LT: return a < b;
  case BW_GT: return a > b;
  case BW_LE: return a <= b;
  case BW_GE: return a >= b;
  case BW_AND: return (a != 0) && (b != 0);
  case BW_OR: return (a != 0) || (b != 0);
  default: return (a != 0) != (b != 0);
  }
}

/* Integer arithmetic wraps as two's complement (no UB), and division and
 * modulo by zero are refused. */
static bool ibin(int fn, int64_t a, int64_t b, int64_t *r) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (fn) {
  case BW_ADD: *r = (int64_t)(ua + ub); return true;
  case BW_SUB: *r = (int64_t)(ua - ub); return true;
  case BW_MUL: *r = (int64_t)(ua * ub); return true;
  case BW_DIV:
  case BW_MOD:
    if (b == 0 || (a == INT64_MIN && b == -1))
      return false;
    if (fn == BW_DIV) {
      *r = a / b; /* truncated, as ONNX Runtime's integer Div */
    } else {
      int64_t m = a % b; /* ONNX Mod, fmod 0: the sign of the divisor */
      *r = m != 0 && ((m < 0) != (b < 0)) ? m + b : m;
    }
    return true;
  default: *r = (int64_t)fbin(fn, (double)a, (double)b, false); break;
  }
  if (fn == BW_MIN)
    *r = a < b ? a : b;
  else if (fn == BW_MAX)
    *r = a > b ? a : b;
  else if (fn == BW_EQ)
    *r = a == b;
  else if (fn == BW_LT)
    *r = a < b;
  else if (fn == BW_GT)
    *r = a > b;
  else if (fn == BW_LE)
    *r = a <= b;
  else if (fn == BW_GE)
    *r = a >= b;
  return true;
}

static bool is_compare(int fn) { return fn >= BW_EQ; }

static void fold_binary(tr *t, fv *in, int n, int fn) {
  /* Min and Max are variadic: fold pairwise into in[0]. */
  fv acc = in[0];
  in[0].i = NULL;
  in[0].f = NULL;
  if (!acc.i && !acc.f) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "input", "input 0 is missing");
    return;
  }
  bool fm = tr_attr_int(t, "fmod", 0) != 0;
  for (int k = 1; k < n && t->st == DG_OK; k++) {
    fv *b = &in[k];
    if (!b->i && !b->f) /* an omitted (empty-named) input of Min or Max */
      continue;
    if (is_float_elem(acc.elem) != is_float_elem(b->elem)) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "B", "A and B differ in type");
      break;
    }
    int r;
    int64_t d[DG_MAX_RANK];
    if (!bcast(&acc, b, &r, d)) {
      tr_fail(t, DG_ERROR_INVALID_SHAPE, "B", "shapes do not broadcast");
      break;
    }
    int elem = is_compare(fn) ? ONNX_BOOL : acc.elem;
    fv o;
    if (!fv_alloc(t, &o, elem, r, d))
      break;
    for (size_t q = 0; q < o.count; q++) {
      size_t ia = bidx(&acc, r, d, q), ib = bidx(b, r, d, q);
      if (acc.f) {
        double v = fbin(fn, acc.f[ia], b->f[ib], fm);
        if (o.f)
          o.f[q] = v;
        else
          o.i[q] = (int64_t)v;
      } else if (!ibin(fn, acc.i[ia], b->i[ib], &o.i[q])) {
        tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "B",
                "integer division by zero (or overflow) at import");
        break;
      }
    }
    fv_free(&acc);
    acc = o;
    if (acc.elem == DG_ONNX_INT32)
      for (size_t q = 0; q < acc.count; q++)
        acc.i[q] = (int32_t)acc.i[q];
  }
  if (t->st == DG_OK)
    fv_emit(t, 0, &acc);
  else
    fv_free(&acc);
}

static void fold_where(tr *t, fv *in) {
  int r = 0, r2;
  int64_t d[DG_MAX_RANK] = {0}, d2[DG_MAX_RANK];
  fv tmp = {.rank = 0};
  if (is_float_elem(in[1].elem) != is_float_elem(in[2].elem) ||
      !bcast(&in[1], &in[2], &r, d)) {
    tr_fail(t, DG_ERROR_INVALID_SHAPE, "X", "X and Y do not match");
    return;
  }
  tmp.rank = r;
  memcpy(tmp.dims, d, sizeof d);
  if (!bcast(&in[0], &tmp, &r2, d2)) {
    tr_fail(t, DG_ERROR_INVALID_SHAPE, "condition", "shapes do not broadcast");
    return;
  }
  fv o;
  if (!fv_alloc(t, &o, in[1].elem, r2, d2))
    return;
  for (size_t q = 0; q < o.count; q++) {
    bool c = fv_geti(&in[0], bidx(&in[0], r2, d2, q)) != 0;
    fv *s = c ? &in[1] : &in[2];
    size_t k = bidx(s, r2, d2, q);
    if (o.f)
      o.f[q] = s->f[k];
    else
      o.i[q] = s->i[k];
  }
  fv_emit(t, 0, &o);
}

static void fold_transpose(tr *t, fv *in) {
  int rank = in[0].rank;
  int64_t perm[DG_MAX_RANK];
  int np = tr_attr_ints(t, "perm", perm, DG_MAX_RANK);
  if (np < 0)
    for (int k = 0; k < rank; k++)
      perm[k] = rank - 1 - k;
  else if (np != rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "perm", "perm of length %d for "
            "rank %d", np, rank);
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
  if (!fv_alloc(t, &o, in[0].elem, rank, d))
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
  fv_emit(t, 0, &o);
}

/* ---- the fold table ---- */

typedef enum fold_kind {
  FOLD_SHAPE,     /* reads only the input's static shape */
  FOLD_CONST,     /* when every input is constant (else the op table's row) */
  FOLD_CONST_ONLY /* the same, and no run-time form: refused otherwise */
} fold_kind;

typedef struct fold_row {
  const char *op;
  fold_kind kind;
  void (*shape)(tr *t);                 /* FOLD_SHAPE */
  void (*one)(tr *t, fv *in);           /* fixed inputs */
  void (*many)(tr *t, fv *in, int n);   /* variadic or optional inputs */
} fold_row;

static void fold_unary_row(tr *t, fv *in) {
  for (size_t k = 0; k < sizeof unary_folds / sizeof *unary_folds; k++)
    if (tr_is_op(t->n, unary_folds[k].op))
      fold_unary(t, in, unary_folds[k].f);
}

static void fold_binary_row(tr *t, fv *in, int n) {
  for (size_t k = 0; k < sizeof binary_folds / sizeof *binary_folds; k++)
    if (tr_is_op(t->n, binary_folds[k].op))
      fold_binary(t, in, n, binary_folds[k].fn);
}

static void fold_flatten(tr *t, fv *in) {
  int64_t axis = norm_axis(tr_attr_int(t, "axis", 1), in[0].rank);
  if (axis < 0 || axis > in[0].rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axis", "axis out of range");
    return;
  }
  int64_t d[2] = {1, 1};
  for (int k = 0; k < in[0].rank; k++)
    d[k >= axis] *= in[0].dims[k];
  fold_reshape_to(t, in, 2, d);
}

static const fold_row fold_table[] = {
    {"Shape", FOLD_SHAPE, fold_shape, NULL, NULL},
    {"Size", FOLD_SHAPE, fold_size, NULL, NULL},
    {"Identity", FOLD_CONST, NULL, fold_identity, NULL},
    {"Cast", FOLD_CONST, NULL, fold_cast, NULL},
    {"Squeeze", FOLD_CONST, NULL, fold_squeeze, NULL},
    {"Unsqueeze", FOLD_CONST, NULL, fold_squeeze, NULL},
    {"Reshape", FOLD_CONST, NULL, fold_reshape, NULL},
    {"Flatten", FOLD_CONST, NULL, fold_flatten, NULL},
    {"Gather", FOLD_CONST, NULL, fold_gather, NULL},
    {"Concat", FOLD_CONST, NULL, NULL, fold_concat},
    {"Slice", FOLD_CONST, NULL, NULL, fold_slice},
    {"Range", FOLD_CONST_ONLY, NULL, fold_range, NULL},
    {"ConstantOfShape", FOLD_CONST_ONLY, NULL, fold_constant_of_shape, NULL},
    {"Expand", FOLD_CONST, NULL, fold_expand, NULL},
    {"Transpose", FOLD_CONST, NULL, fold_transpose, NULL},
    {"Where", FOLD_CONST, NULL, fold_where, NULL},
    {"Neg", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Abs", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Sqrt", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Floor", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Ceil", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Reciprocal", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Cos", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Sin", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Exp", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Log", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Tanh", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Sign", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"HannWindow", FOLD_CONST_ONLY, NULL, fold_window, NULL},
    {"HammingWindow", FOLD_CONST_ONLY, NULL, fold_window, NULL},
    {"BlackmanWindow", FOLD_CONST_ONLY, NULL, fold_window, NULL},
    {"Not", FOLD_CONST, NULL, fold_unary_row, NULL},
    {"Add", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Sub", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Mul", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Div", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Mod", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Min", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Max", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Equal", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Less", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Greater", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"LessOrEqual", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"GreaterOrEqual", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"And", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Or", FOLD_CONST, NULL, NULL, fold_binary_row},
    {"Xor", FOLD_CONST, NULL, NULL, fold_binary_row},
};

static const fold_row *fold_find(const dg_onnx_node *n) {
  for (size_t k = 0; k < sizeof fold_table / sizeof *fold_table; k++)
    if (tr_is_op(n, fold_table[k].op))
      return &fold_table[k];
  return NULL;
}

bool tr_fold_has(const dg_onnx_node *n) { return fold_find(n) != NULL; }

#define FOLD_MAX_INPUTS 16

/* The inputs a fold reads unconditionally (the fold functions index them
 * without checking: a model may omit them). */
static int fold_min_inputs(const tr *t, const fold_row *row) {
  if (row->one == fold_where || row->one == fold_range)
    return 3;
  if (row->many == fold_slice)
    return t->n->opset >= 10 ? 3 : 1;
  if (row->one == fold_gather || row->one == fold_expand ||
      row->one == fold_reshape ||
      (row->many == fold_binary_row && !tr_is_op(t->n, "Min") &&
       !tr_is_op(t->n, "Max")))
    return 2;
  return 1;
}

bool tr_try_const_fold(tr *t) {
  const fold_row *row = fold_find(t->n);
  if (!row)
    return false;
  if (row->kind == FOLD_SHAPE) {
    row->shape(t);
    return true;
  }
  int n = t->n->n_inputs;
  int need = fold_min_inputs(t, row);
  for (int i = 0; i < need; i++)
    if (!tr_has_input(t, i)) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "input",
              "%s needs %d inputs; input %d is missing", t->n->op_type, need,
              i);
      return true;
    }
  bool all = n > 0 && n <= FOLD_MAX_INPUTS;
  const char *runtime = NULL;
  for (int i = 0; all && i < n; i++) {
    dg_onnx_value c;
    if (!tr_has_input(t, i))
      continue;
    tr_value *v = tr_value_find(t, t->n->inputs[i]);
    if (!tr_const(t, i, &c) || !v || v->t.id) {
      all = false;
      runtime = t->n->inputs[i];
    }
  }
  if (t->st != DG_OK)
    return true;
  if (!all) {
    if (row->kind == FOLD_CONST_ONLY) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, runtime ? runtime : "input",
              "%s is only taken on values known at import (shape "
              "arithmetic); '%s' is computed at run time",
              t->n->op_type, runtime ? runtime : "?");
      return true;
    }
    return false;
  }
  fv in[FOLD_MAX_INPUTS];
  memset(in, 0, sizeof in);
  bool ok = true;
  for (int i = 0; i < n && ok; i++)
    if (tr_has_input(t, i) && !fv_read(t, i, &in[i])) {
      ok = false;
      if (t->st == DG_OK) {
        if (row->kind == FOLD_CONST_ONLY)
          tr_fail(t, DG_ERROR_UNSUPPORTED, t->n->inputs[i],
                  "constant '%s' is of a type or size not folded",
                  t->n->inputs[i]);
      }
    }
  if (ok && t->st == DG_OK) {
    if (row->one)
      row->one(t, in);
    else
      row->many(t, in, n);
  }
  for (int i = 0; i < n; i++)
    fv_free(&in[i]);
  return ok || t->st != DG_OK;
}

void tr_op_squeeze(tr *t) { op_squeeze(t); }

void tr_op_fold_only(tr *t) {
  tr_fail(t, DG_ERROR_UNSUPPORTED, "op_type",
          "%s is only taken on values known at import", t->n->op_type);
}
