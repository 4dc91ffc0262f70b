/* Folded values (onnx_fold.h): read from constant inputs, allocated
 * within FOLD_MAX_ELEMENTS, read element by element, broadcast, and
 * emitted as a constant output in their ONNX element type. */
#include "onnx_fold.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool tr_is_float_elem(int e) {
  return e == DG_ONNX_FLOAT || e == DG_ONNX_FLOAT16 || e == ONNX_DOUBLE;
}

void tr_fv_free(fv *v) {
  free(v->i);
  free(v->f);
  v->i = NULL;
  v->f = NULL;
}

size_t tr_dims_count(int rank, const int64_t *dims) {
  size_t n = 1;
  for (int k = 0; k < rank; k++) {
    if (dims[k] < 0 || (dims[k] && n > FOLD_MAX_ELEMENTS / (size_t)dims[k]))
      return FOLD_MAX_ELEMENTS + 1;
    n *= (size_t)dims[k];
  }
  return n;
}

/* Allocates v for elem and dims; false (failure recorded) when too big. */
bool tr_fv_alloc(tr *t, fv *v, int elem, int rank, const int64_t *dims) {
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
  v->count = tr_dims_count(rank, dims);
  if (v->count > FOLD_MAX_ELEMENTS) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "output",
            "a value computed at import would hold more than %zu elements",
            FOLD_MAX_ELEMENTS);
    return false;
  }
  size_t n = v->count ? v->count : 1;
  if (tr_is_float_elem(elem))
    v->f = calloc(n, sizeof *v->f);
  else
    v->i = calloc(n, sizeof *v->i);
  if (!v->f && !v->i) {
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return false;
  }
  return true;
}

/* Input i as a folded value, if it is constant and of a type we read. */
bool tr_fv_read(tr *t, int i, fv *v) {
  dg_onnx_value c;
  memset(v, 0, sizeof *v);
  if (!tr_const(t, i, &c) || c.rank < 0 || c.rank > DG_MAX_RANK)
    return false;
  if (c.elem != DG_ONNX_FLOAT && c.elem != DG_ONNX_FLOAT16 &&
      c.elem != DG_ONNX_INT8 && c.elem != DG_ONNX_UINT8 &&
      c.elem != DG_ONNX_INT32 && c.elem != DG_ONNX_INT64 &&
      c.elem != ONNX_BOOL && c.elem != ONNX_DOUBLE)
    return false;
  if (tr_dims_count(c.rank, c.dims) != c.count || c.count > FOLD_MAX_ELEMENTS)
    return false;
  if (!tr_fv_alloc(t, v, c.elem, c.rank, c.dims))
    return false;
  for (size_t k = 0; k < c.count; k++)
    switch (c.elem) {
    case DG_ONNX_FLOAT:
      v->f[k] = ((const float *)c.data)[k];
      break;
    case DG_ONNX_FLOAT16:
      v->f[k] = dg_f16_to_f32(((const uint16_t *)c.data)[k]);
      break;
    case ONNX_DOUBLE:
      v->f[k] = ((const double *)c.data)[k];
      break;
    case DG_ONNX_INT8:
      v->i[k] = ((const int8_t *)c.data)[k];
      break;
    case DG_ONNX_UINT8:
    case ONNX_BOOL:
      v->i[k] = ((const uint8_t *)c.data)[k];
      break;
    case DG_ONNX_INT32:
      v->i[k] = ((const int32_t *)c.data)[k];
      break;
    default:
      v->i[k] = ((const int64_t *)c.data)[k];
      break;
    }
  return true;
}

double tr_fv_get(const fv *v, size_t k) {
  return v->f ? v->f[k] : (double)v->i[k];
}

int64_t tr_fv_geti(const fv *v, size_t k) {
  return v->i ? v->i[k] : (int64_t)v->f[k];
}

/* Stores v as output o's constant (v is consumed). */
void tr_fv_emit(tr *t, int o, fv *v) {
  if (t->st != DG_OK || o >= t->n->n_outputs || !t->n->outputs[o][0]) {
    tr_fv_free(v);
    return;
  }
  tr_value *tv = tr_value_find(t, t->n->outputs[o]);
  size_t n = v->count ? v->count : 1, es;
  switch (v->elem) {
  case DG_ONNX_FLOAT:
  case DG_ONNX_INT32:
    es = 4;
    break;
  case DG_ONNX_FLOAT16:
    es = 2;
    break;
  case DG_ONNX_INT8:
  case DG_ONNX_UINT8:
  case ONNX_BOOL:
    es = 1;
    break;
  default:
    es = 8;
    break;
  }
  void *p = tv ? malloc(n * es) : NULL;
  if (!p || !tr_own(t, p)) {
    tr_fv_free(v);
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return;
  }
  for (size_t k = 0; k < v->count; k++)
    switch (v->elem) {
    case DG_ONNX_FLOAT:
      ((float *)p)[k] = (float)v->f[k];
      break;
    case DG_ONNX_FLOAT16:
      ((uint16_t *)p)[k] = dg_f32_to_f16((float)v->f[k]);
      break;
    case ONNX_DOUBLE:
      ((double *)p)[k] = v->f[k];
      break;
    case DG_ONNX_INT8:
      ((int8_t *)p)[k] = (int8_t)v->i[k];
      break;
    case DG_ONNX_UINT8:
      ((uint8_t *)p)[k] = (uint8_t)v->i[k];
      break;
    case ONNX_BOOL:
      ((uint8_t *)p)[k] = v->i[k] != 0;
      break;
    case DG_ONNX_INT32:
      ((int32_t *)p)[k] = (int32_t)v->i[k];
      break;
    default:
      ((int64_t *)p)[k] = v->i[k];
      break;
    }
  memset(&tv->cv, 0, sizeof tv->cv);
  tv->cv.kind = DG_ONNX_VALUE_CONST;
  tv->cv.elem = v->elem;
  tv->cv.rank = v->rank;
  memcpy(tv->cv.dims, v->dims, sizeof v->dims);
  tv->cv.data = p;
  tv->cv.count = v->count;
  tv->has_const = true;
  tr_fv_free(v);
}

/* Numpy broadcasting of a and b into out's dims. */
bool tr_bcast(const fv *a, const fv *b, int *rank, int64_t *dims) {
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
size_t tr_bidx(const fv *v, int r, const int64_t *dims, size_t k) {
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
