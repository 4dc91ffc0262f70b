/* TensorProto decoding with every length checked against the dims, so a
 * hostile file cannot make us read past its data or allocate without
 * bound. */
#include "onnx_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ONNX TensorProto.DataType values. */
enum {
  ONNX_FLOAT = 1,
  ONNX_UINT8 = 2,
  ONNX_INT8 = 3,
  ONNX_INT32 = 6,
  ONNX_INT64 = 7,
  ONNX_BOOL = 9,
  ONNX_FLOAT16 = 10,
};

dg_dtype onnx_dtype(int32_t t) {
  switch (t) {
  case ONNX_FLOAT: return DG_DTYPE_F32;
  case ONNX_UINT8: return DG_DTYPE_U8;
  case ONNX_INT8: return DG_DTYPE_I8;
  case ONNX_INT32:
    return DG_DTYPE_I32;
  case ONNX_INT64:
    return DG_DTYPE_I64;
  case ONNX_BOOL:
    return DG_DTYPE_BOOL;
  case ONNX_FLOAT16: return DG_DTYPE_F16;
  default: return DG_DTYPE_INVALID;
  }
}

static bool decode_in(const Onnx__TensorProto *t, dg_tensor_desc *desc,
                      void **data, char *err, size_t err_size,
                      const char *base_dir, uint8_t **ext);

/* ext: the external data read, freed here whatever happens. */
static bool decode(const Onnx__TensorProto *t, dg_tensor_desc *desc,
                   void **data, char *err, size_t err_size,
                   const char *base_dir) {
  uint8_t *ext = NULL;
  bool ok = decode_in(t, desc, data, err, err_size, base_dir, &ext);
  free(ext);
  return ok;
}

static bool decode_in(const Onnx__TensorProto *t, dg_tensor_desc *desc,
                      void **data, char *err, size_t err_size,
                      const char *base_dir, uint8_t **ext) {
  *data = NULL;
  memset(desc, 0, sizeof *desc);
  const char *name = t->name ? t->name : "";
  bool external = t->has_data_location && t->data_location != 0;
  if (external && t->data_location != 1) {
    snprintf(err, err_size, "tensor '%s' has data_location %d, not supported",
             name, (int)t->data_location);
    return false;
  }
  desc->dtype = onnx_dtype(t->data_type);
  if (!desc->dtype) {
    snprintf(err, err_size,
             "tensor '%s' has data type %d, not supported "
             "(float, float16, int8, uint8, int32, int64, bool)",
             name, t->data_type);
    return false;
  }
  if (t->n_dims > DG_MAX_RANK) {
    snprintf(err, err_size, "tensor '%s' has rank %zu (at most %d)", name,
             t->n_dims, DG_MAX_RANK);
    return false;
  }
  uint64_t n = 1;
  desc->rank = (int32_t)t->n_dims;
  for (size_t i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0 || t->dims[i] > ((int64_t)1 << 40) ||
        (t->dims[i] && n > ((uint64_t)1 << 40) / (uint64_t)t->dims[i])) {
      snprintf(err, err_size, "tensor '%s' has a bad or huge dimension",
               name);
      return false;
    }
    desc->dims[i] = t->dims[i];
    n *= (uint64_t)t->dims[i];
  }
  bool i64 = t->data_type == ONNX_INT64;
  size_t src_size = i64 ? 8 : dg_dtype_size(desc->dtype);
  Onnx__TensorProto from_file;
  if (external) { /* read as if it were raw_data */
    if (!onnx_external_read(t, base_dir, (size_t)n * src_size, ext, err,
                            err_size))
      return false;
    from_file = *t;
    from_file.has_raw_data = 1;
    from_file.raw_data.data = *ext;
    from_file.raw_data.len = (size_t)n * src_size;
    t = &from_file;
  }
  size_t have; /* elements present in the file */
  if (t->has_raw_data)
    have = t->raw_data.len / src_size;
  else if (t->data_type == ONNX_FLOAT)
    have = t->n_float_data;
  else if (i64)
    have = t->n_int64_data;
  else
    have = t->n_int32_data; /* int8, uint8, int32, float16 (as bits), bool */
  if (t->has_raw_data && t->raw_data.len != n * src_size) {
    snprintf(err, err_size,
             "tensor '%s' has %zu bytes of raw_data where its dims say %llu "
             "values of %zu bytes (%llu bytes)",
             name, t->raw_data.len, (unsigned long long)n, src_size,
             (unsigned long long)(n * src_size));
    return false;
  }
  if (have != n) {
    snprintf(err, err_size, "tensor '%s' holds %zu values where its dims "
             "say %llu", name, have, (unsigned long long)n);
    return false;
  }
  size_t bytes = (size_t)n * dg_dtype_size(desc->dtype);
  *data = malloc(bytes ? bytes : 1);
  if (!*data) {
    snprintf(err, err_size, "out of memory reading tensor '%s'", name);
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    int64_t v = 0;
    if (t->has_raw_data) {
      const uint8_t *p = t->raw_data.data + i * src_size;
      if (i64) {
        uint64_t u = 0; /* little-endian in the file */
        for (int b = 7; b >= 0; b--)
          u = u << 8 | p[b];
        v = (int64_t)u;
      } else {
        memcpy((char *)*data + i * src_size, p, src_size);
        continue;
      }
    } else if (t->data_type == ONNX_FLOAT) {
      ((float *)*data)[i] = t->float_data[i];
      continue;
    } else {
      v = i64 ? t->int64_data[i] : t->int32_data[i];
    }
    switch (t->data_type) {
    case ONNX_INT64:
      ((int64_t *)*data)[i] = v;
      break;
    case ONNX_INT32: ((int32_t *)*data)[i] = (int32_t)v; break;
    case ONNX_INT8: ((int8_t *)*data)[i] = (int8_t)v; break;
    case ONNX_UINT8: ((uint8_t *)*data)[i] = (uint8_t)v; break;
    case ONNX_BOOL:
      ((uint8_t *)*data)[i] = v != 0;
      break;
    case ONNX_FLOAT16: ((uint16_t *)*data)[i] = (uint16_t)v; break;
    }
  }
  return true;
}

bool onnx_tensor_decode(const Onnx__TensorProto *t, dg_tensor_desc *desc,
                        void **data, char *err, size_t err_size) {
  return decode(t, desc, data, err, err_size, NULL);
}

bool onnx_tensor_read(const Onnx__TensorProto *t, const char *base_dir,
                      dg_onnx_value *v, void **data, char *err,
                      size_t err_size) {
  dg_tensor_desc d;
  memset(v, 0, sizeof *v);
  v->kind = DG_ONNX_VALUE_CONST;
  if (!decode(t, &d, data, err, err_size, base_dir))
    return false;
  v->elem = t->data_type;
  v->rank = d.rank;
  v->count = 1;
  for (int i = 0; i < d.rank; i++) {
    v->dims[i] = d.dims[i];
    v->count *= (size_t)d.dims[i];
  }
  v->data = *data;
  return true;
}
