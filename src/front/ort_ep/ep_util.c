/* Small wrappers over the OrtApi graph-reading calls, so that the rest of
 * the EP reads nodes, values and attributes in one line each and never
 * leaks an OrtStatus. */
#include "ep_internal.h"

#include "core/names.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API(slot, type) DG_ORT_FN(o->api, ORT_SLOT_##slot, type)

bool ep_failed(const ep_ort *o, OrtStatus *st, char *msg, size_t len) {
  if (!st)
    return false;
  if (msg && len)
    snprintf(msg, len, "%s",
             API(GetErrorMessage, ort_get_error_message_fn)(st));
  API(ReleaseStatus, ort_release_fn)(st);
  return true;
}

OrtStatus *ep_error(const ep_ort *o, int code, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  dg_text_mark_cut(buf, sizeof buf, vsnprintf(buf, sizeof buf, fmt, ap));
  va_end(ap);
  return API(CreateStatus, ort_create_status_fn)(code, buf);
}

static const char *get_str(const ep_ort *o, int slot, const void *obj) {
  const char *s = NULL;
  if (!obj ||
      ep_failed(o, DG_ORT_FN(o->api, slot, ort_get_str_fn)(obj, &s), NULL, 0) ||
      !s)
    return "";
  return s;
}

const char *ep_node_op(const ep_ort *o, const OrtNode *n) {
  return get_str(o, ORT_SLOT_Node_GetOperatorType, n);
}
const char *ep_node_domain(const ep_ort *o, const OrtNode *n) {
  return get_str(o, ORT_SLOT_Node_GetDomain, n);
}
const char *ep_node_name(const ep_ort *o, const OrtNode *n) {
  return get_str(o, ORT_SLOT_Node_GetName, n);
}
const char *ep_value_name(const ep_ort *o, const OrtValueInfo *v) {
  return get_str(o, ORT_SLOT_GetValueInfoName, v);
}

int ep_node_opset(const ep_ort *o, const OrtNode *n) {
  int v = 0;
  if (ep_failed(o, API(Node_GetSinceVersion, ort_get_int_fn)(n, &v), NULL, 0))
    return 0;
  return v;
}

/* count slot + array slot -> malloc'ed array. */
static int get_list(const ep_ort *o, int count_slot, int array_slot,
                    const void *obj, const void ***out) {
  size_t n = 0;
  *out = NULL;
  if (ep_failed(o, DG_ORT_FN(o->api, count_slot, ort_get_size_fn)(obj, &n),
                NULL, 0) ||
      n > 1u << 20)
    return -1;
  const void **arr = calloc(n ? n : 1, sizeof *arr);
  if (!arr)
    return -1;
  if (n &&
      ep_failed(o, DG_ORT_FN(o->api, array_slot, ort_get_array_fn)(obj, arr, n),
                NULL, 0)) {
    free(arr);
    return -1;
  }
  *out = arr;
  return (int)n;
}

int ep_node_inputs(const ep_ort *o, const OrtNode *n,
                   const OrtValueInfo ***out) {
  return get_list(o, ORT_SLOT_Node_GetNumInputs, ORT_SLOT_Node_GetInputs, n,
                  (const void ***)out);
}
int ep_node_outputs(const ep_ort *o, const OrtNode *n,
                    const OrtValueInfo ***out) {
  return get_list(o, ORT_SLOT_Node_GetNumOutputs, ORT_SLOT_Node_GetOutputs, n,
                  (const void ***)out);
}
int ep_graph_nodes(const ep_ort *o, const OrtGraph *g, const OrtNode ***out) {
  return get_list(o, ORT_SLOT_Graph_GetNumNodes, ORT_SLOT_Graph_GetNodes, g,
                  (const void ***)out);
}

dg_dtype ep_dtype_of(int e) {
  switch (e) {
  case ORT_ELEM_FLOAT:
    return DG_DTYPE_F32;
  case ORT_ELEM_FLOAT16:
    return DG_DTYPE_F16;
  case ORT_ELEM_INT8:
    return DG_DTYPE_I8;
  case ORT_ELEM_UINT8:
    return DG_DTYPE_U8;
  case ORT_ELEM_INT32:
    return DG_DTYPE_I32;
  case ORT_ELEM_INT64:
    return DG_DTYPE_I64;
  case ORT_ELEM_BOOL:
    return DG_DTYPE_BOOL;
  default:
    return DG_DTYPE_INVALID;
  }
}

/* Element type and dims from a type-and-shape info (not released here). */
static bool read_tsi(const ep_ort *o, const OrtTensorTypeAndShapeInfo *tsi,
                     int *elem, int *rank, int64_t *dims) {
  size_t r = 0;
  if (ep_failed(o, API(GetTensorElementType, ort_get_int_fn)(tsi, elem), NULL,
                0) ||
      ep_failed(o, API(GetDimensionsCount, ort_get_size_fn)(tsi, &r), NULL,
                0) ||
      r > DG_MAX_RANK)
    return false;
  *rank = (int)r;
  return !r || !ep_failed(o, API(GetDimensions, ort_get_dims_fn)(tsi, dims, r),
                          NULL, 0);
}

bool ep_value_shape(const ep_ort *o, const OrtValueInfo *v, int *elem,
                    int *rank, int64_t dims[DG_MAX_RANK]) {
  const OrtTypeInfo *ti = NULL;
  const OrtTensorTypeAndShapeInfo *tsi = NULL;
  if (!v ||
      ep_failed(
          o, API(GetValueInfoTypeInfo, ort_get_ptr_fn)(v, (const void **)&ti),
          NULL, 0) ||
      !ti ||
      ep_failed(o,
                API(CastTypeInfoToTensorInfo,
                    ort_get_ptr_fn)(ti, (const void **)&tsi),
                NULL, 0) ||
      !tsi)
    return false;
  return read_tsi(o, tsi, elem, rank, dims);
}

bool ep_value_const(const ep_ort *o, const OrtValueInfo *v, ep_const *c) {
  bool is_const = false;
  const OrtValue *val = NULL;
  OrtTensorTypeAndShapeInfo *tsi = NULL;
  memset(c, 0, sizeof *c);
  if (!v ||
      ep_failed(
          o,
          API(ValueInfo_IsConstantInitializer, ort_get_bool_fn)(v, &is_const),
          NULL, 0) ||
      !is_const ||
      ep_failed(o,
                API(ValueInfo_GetInitializerValue,
                    ort_get_ptr_fn)(v, (const void **)&val),
                NULL, 0) ||
      !val ||
      ep_failed(o, API(GetTensorTypeAndShape, ort_type_and_shape_fn)(val, &tsi),
                NULL, 0))
    return false;
  bool ok =
      read_tsi(o, tsi, &c->elem, &c->rank, c->dims) &&
      !ep_failed(
          o, API(GetTensorShapeElementCount, ort_get_size_fn)(tsi, &c->count),
          NULL, 0);
  API(ReleaseTensorTypeAndShapeInfo, ort_release_fn)(tsi);
  return ok &&
         !ep_failed(o, API(GetTensorData, ort_get_ptr_fn)(val, &c->data), NULL,
                    0) &&
         (c->data || !c->count);
}

const OrtNode *ep_value_producer(const ep_ort *o, const OrtValueInfo *v) {
  const OrtNode *p = NULL;
  size_t idx = 0;
  if (!v || ep_failed(o,
                      API(ValueInfo_GetValueProducer,
                          ort_value_producer_fn)(v, &p, &idx),
                      NULL, 0))
    return NULL;
  return p;
}

/* ---- attributes ---- */

static const OrtOpAttr *attr(const ep_ort *o, const OrtNode *n,
                             const char *name, int *type) {
  const OrtOpAttr *a = NULL;
  /* An unset attribute comes back as NULL (or, for names the schema does
   * not know, as an error): both mean "absent". */
  if (ep_failed(o,
                API(Node_GetAttributeByName, ort_attr_by_name_fn)(n, name, &a),
                NULL, 0) ||
      !a)
    return NULL;
  if (ep_failed(o, API(OpAttr_GetType, ort_get_int_fn)(a, type), NULL, 0))
    return NULL;
  return a;
}

bool ep_attr_int(const ep_ort *o, const OrtNode *n, const char *name,
                 int64_t *v) {
  int t = 0;
  size_t bytes = 0;
  const OrtOpAttr *a = attr(o, n, name, &t);
  return a && t == ORT_ATTR_INT &&
         !ep_failed(
             o, API(ReadOpAttr, ort_read_attr_fn)(a, t, v, sizeof *v, &bytes),
             NULL, 0);
}

bool ep_attr_float(const ep_ort *o, const OrtNode *n, const char *name,
                   float *v) {
  int t = 0;
  size_t bytes = 0;
  const OrtOpAttr *a = attr(o, n, name, &t);
  return a && t == ORT_ATTR_FLOAT &&
         !ep_failed(
             o, API(ReadOpAttr, ort_read_attr_fn)(a, t, v, sizeof *v, &bytes),
             NULL, 0);
}

int ep_attr_ints(const ep_ort *o, const OrtNode *n, const char *name,
                 int64_t *out, int max) {
  int t = 0;
  size_t bytes = 0;
  const OrtOpAttr *a = attr(o, n, name, &t);
  if (!a)
    return -1;
  if (t != ORT_ATTR_INTS) /* present with another type: no values */
    return 0;
  if (ep_failed(o,
                API(ReadOpAttr, ort_read_attr_fn)(
                    a, t, out, sizeof(int64_t) * (size_t)max, &bytes),
                NULL, 0)) {
    /* Too many for the buffer: ORT says how many bytes it needs. */
    return bytes > sizeof(int64_t) * (size_t)max
               ? (int)(bytes / sizeof(int64_t))
               : -1;
  }
  return (int)(bytes / sizeof(int64_t));
}

bool ep_attr_string(const ep_ort *o, const OrtNode *n, const char *name,
                    char *buf, size_t len) {
  int t = 0;
  size_t bytes = 0;
  const OrtOpAttr *a = attr(o, n, name, &t);
  if (!len)
    return false;
  buf[0] = 0;
  if (!a || t != ORT_ATTR_STRING)
    return false;
  if (!ep_failed(o,
                 API(ReadOpAttr, ort_read_attr_fn)(a, t, buf, len - 1, &bytes),
                 NULL, 0)) {
    buf[bytes < len ? bytes : len - 1] = 0; /* not NUL-terminated by ORT */
    return true;
  }
  /* Longer than buf: ORT said how long; read it whole and cut it, as the
   * importer does, so that a long bad value is refused, not ignored. */
  char *all = bytes >= len ? malloc(bytes) : NULL;
  bool ok =
      all &&
      !ep_failed(o, API(ReadOpAttr, ort_read_attr_fn)(a, t, all, bytes, &bytes),
                 NULL, 0);
  if (ok) {
    memcpy(buf, all, len - 1);
    buf[len - 1] = 0;
  }
  free(all);
  return ok;
}

int ep_attr_names(const ep_ort *o, const OrtNode *n, const char ***out) {
  size_t count = 0;
  *out = NULL;
  if (ep_failed(o, API(Node_GetNumAttributes, ort_get_size_fn)(n, &count), NULL,
                0) ||
      count > 1u << 16)
    return -1;
  const OrtOpAttr **attrs = calloc(count + 1, sizeof *attrs);
  const char **names = calloc(count + 1, sizeof *names);
  if (!attrs || !names ||
      (count && ep_failed(o,
                          API(Node_GetAttributes,
                              ort_get_array_fn)(n, (const void **)attrs, count),
                          NULL, 0))) {
    free(attrs);
    free(names);
    return -1;
  }
  for (size_t i = 0; i < count; i++)
    names[i] = get_str(o, ORT_SLOT_OpAttr_GetName, attrs[i]);
  free(attrs);
  *out = names;
  return (int)count;
}

bool ep_value_is_graph_output(const ep_ort *o, const OrtValueInfo *v) {
  bool out = false;
  return v &&
         !ep_failed(o, API(ValueInfo_IsGraphOutput, ort_get_bool_fn)(v, &out),
                    NULL, 0) &&
         out;
}
