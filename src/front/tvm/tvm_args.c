/* Decoding of TVMFFIAny arguments into what the graph API takes: host
 * buffers that are compact and row-major, with dg_tensor_desc descriptors.
 * DLPack allows arbitrary element strides and a byte offset; the library
 * only takes compact buffers, so anything else is copied (inputs gathered
 * before the call, outputs scattered after it). */
#include "tvm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *type_name(int32_t t) {
  switch (t) {
  case DG_FFI_NONE: return "None";
  case DG_FFI_INT: return "Int";
  case DG_FFI_BOOL: return "Bool";
  case DG_FFI_FLOAT: return "Float";
  case DG_FFI_OPAQUE_PTR: return "OpaquePtr";
  case DG_FFI_DATA_TYPE: return "DataType";
  case DG_FFI_DEVICE: return "Device";
  case DG_FFI_DLTENSOR_PTR: return "DLTensor*";
  case DG_FFI_RAW_STR: return "RawStr";
  case DG_FFI_STR: return "Str";
  case DG_FFI_FUNCTION: return "Function";
  case DG_FFI_SHAPE: return "Shape";
  case DG_FFI_TENSOR: return "Tensor";
  default: return "object";
  }
}

static const char *device_name(int32_t t) {
  switch (t) {
  case DG_DL_CPU: return "cpu";
  case DG_DL_CUDA: return "cuda";
  case DG_DL_CUDA_HOST: return "cuda_host";
  case DG_DL_OPENCL: return "opencl";
  case DG_DL_VULKAN: return "vulkan";
  case DG_DL_METAL: return "metal";
  case DG_DL_ROCM: return "rocm";
  default: return "device";
  }
}

void dg_tvm_format_dims(char *buf, size_t size, int rank,
                        const int64_t *dims) {
  size_t at = 0;
  at += (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < rank && at < size; i++)
    at += (size_t)snprintf(buf + at, size - at, "%s%lld", i ? ", " : "",
                           (long long)dims[i]);
  if (at < size)
    snprintf(buf + at, size - at, "]");
}

void dg_tvm_result_none(dg_ffi_any *result) {
  if (!result)
    return;
  result->type_index = DG_FFI_NONE;
  result->zero_padding = 0;
  result->v.v_int64 = 0;
}

int dg_tvm_arity(const char *fn, int32_t num_args, int expected) {
  if (num_args == expected)
    return 0;
  return dg_tvm_fail("TypeError",
                     "%s: expects %d arguments (see dg_tvm.h for their "
                     "order), got %d",
                     fn, expected, (int)num_args);
}

static dg_dtype map_dtype(dg_dl_dtype t) {
  if (t.lanes != 1)
    return DG_DTYPE_INVALID;
  if (t.code == DG_DL_FLOAT && t.bits == 32) return DG_DTYPE_F32;
  if (t.code == DG_DL_FLOAT && t.bits == 16) return DG_DTYPE_F16;
  if (t.code == DG_DL_INT && t.bits == 8) return DG_DTYPE_I8;
  if (t.code == DG_DL_UINT && t.bits == 8) return DG_DTYPE_U8;
  if (t.code == DG_DL_INT && t.bits == 32) return DG_DTYPE_I32;
  if (t.code == DG_DL_INT && t.bits == 64)
    return DG_DTYPE_I64;
  if (t.code == DG_DL_BOOL && t.bits == 8)
    return DG_DTYPE_BOOL;
  return DG_DTYPE_INVALID;
}

/* Walks every element in row-major order, copying between the strided
 * tensor and the compact buffer (to_compact: gather, else scatter). Uses
 * memcpy per element, so misaligned tensors are fine. */
static void copy_strided(const dg_dl_tensor *dl, char *base, char *compact,
                         size_t esize, bool to_compact) {
  int r = dl->ndim;
  int64_t idx[DG_MAX_RANK] = {0};
  size_t n = 1;
  for (int i = 0; i < r; i++)
    n *= (size_t)dl->shape[i];
  for (size_t e = 0; e < n; e++) {
    int64_t off = 0;
    for (int i = 0; i < r; i++)
      off += idx[i] * dl->strides[i];
    char *p = base + off * (int64_t)esize;
    if (to_compact)
      memcpy(compact + e * esize, p, esize);
    else
      memcpy(p, compact + e * esize, esize);
    for (int i = r - 1; i >= 0; i--) { /* odometer increment */
      if (++idx[i] < dl->shape[i])
        break;
      idx[i] = 0;
    }
  }
}

/* True when strides (if any) describe the compact row-major layout; dims of
 * size 1 may carry any stride (torch and numpy put arbitrary ones there). */
static bool is_compact(const dg_dl_tensor *dl) {
  if (!dl->strides)
    return true;
  int64_t expect = 1;
  for (int i = dl->ndim - 1; i >= 0; i--) {
    if (dl->shape[i] != 1 && dl->strides[i] != expect)
      return false;
    expect *= dl->shape[i];
  }
  return true;
}

int dg_tvm_tensor_get(const char *fn, const dg_ffi_any *args, int i,
                      const char *name, bool optional, bool output,
                      dg_tvm_tensor *t) {
  memset(t, 0, sizeof *t);
  const dg_ffi_any *a = &args[i];
  const dg_dl_tensor *dl = NULL;
  if (a->type_index == DG_FFI_NONE && optional)
    return 0;
  if (a->type_index == DG_FFI_DLTENSOR_PTR)
    dl = a->v.v_ptr;
  else if (a->type_index == DG_FFI_TENSOR && a->v.v_obj)
    dl = dg_ffi_tensor_of(a->v.v_obj);
  else
    return dg_tvm_fail("TypeError",
                       "%s: argument %d (%s) must be a tensor (type index 7 "
                       "DLTensor* or 70 Tensor)%s, got %s (type index %d)",
                       fn, i, name, optional ? " or None" : "",
                       type_name(a->type_index), (int)a->type_index);
  if (!dl)
    return dg_tvm_fail("ValueError", "%s: argument %d (%s) is a NULL DLTensor*",
                       fn, i, name);
  if (dl->device.device_type != DG_DL_CPU)
    return dg_tvm_fail(
        "ValueError",
        "%s: argument %d (%s) is on %s:%d (DLPack device_type %d); "
        "directgraph's TVM entry points take host memory (kDLCPU) only",
        fn, i, name, device_name(dl->device.device_type),
        (int)dl->device.device_id, (int)dl->device.device_type);
  dg_dtype dt = map_dtype(dl->dtype);
  if (dt == DG_DTYPE_INVALID)
    return dg_tvm_fail("TypeError",
                       "%s: argument %d (%s) has DLPack dtype code %u bits %u "
                       "lanes %u; directgraph takes float32, float16, int8, "
                       "uint8 and int32 with one lane",
                       fn, i, name, dl->dtype.code, dl->dtype.bits,
                       dl->dtype.lanes);
  if (dl->ndim < 0 || dl->ndim > DG_MAX_RANK || (dl->ndim > 0 && !dl->shape))
    return dg_tvm_fail("ValueError",
                       "%s: argument %d (%s) has rank %d; directgraph takes "
                       "ranks 0..%d",
                       fn, i, name, (int)dl->ndim, DG_MAX_RANK);
  t->dl = dl;
  t->desc.dtype = dt;
  t->desc.rank = dl->ndim;
  size_t esize = dg_dtype_size(dt);
  t->bytes = esize;
  for (int d = 0; d < dl->ndim; d++) {
    if (dl->shape[d] < 1 || dl->shape[d] > (INT64_C(1) << 40)) {
      char got[160];
      dg_tvm_format_dims(got, sizeof got, dl->ndim, dl->shape);
      return dg_tvm_fail("ValueError",
                         "%s: argument %d (%s) has shape %s; every dimension "
                         "must be at least 1",
                         fn, i, name, got);
    }
    t->desc.dims[d] = dl->shape[d];
    t->bytes *= (size_t)dl->shape[d];
  }
  if (!dl->data)
    return dg_tvm_fail("ValueError", "%s: argument %d (%s) has NULL data", fn,
                       i, name);
  char *base = (char *)dl->data + dl->byte_offset;
  if (is_compact(dl) && (uintptr_t)base % esize == 0) {
    t->data = base;
    return 0;
  }
  t->owned = malloc(t->bytes);
  if (!t->owned)
    return dg_tvm_fail("MemoryError",
                       "%s: no memory for a compact copy of argument %d (%s)",
                       fn, i, name);
  t->data = t->owned;
  if (!output) {
    if (dl->strides)
      copy_strided(dl, base, t->owned, esize, true);
    else
      memcpy(t->owned, base, t->bytes); /* compact but misaligned */
  }
  return 0;
}

void dg_tvm_tensor_finish(dg_tvm_tensor *t) {
  if (t->owned && t->dl) {
    char *base = (char *)t->dl->data + t->dl->byte_offset;
    size_t esize = dg_dtype_size(t->desc.dtype);
    if (t->dl->strides)
      copy_strided(t->dl, base, t->owned, esize, false);
    else
      memcpy(base, t->owned, t->bytes);
  }
  dg_tvm_tensor_release(t);
}

void dg_tvm_tensor_release(dg_tvm_tensor *t) {
  free(t->owned);
  t->owned = NULL;
  t->data = NULL;
}

int dg_tvm_dtype_in(const char *fn, const dg_tvm_tensor *t, const char *name,
                    unsigned mask) {
  if (mask & DG_TVM_BIT(t->desc.dtype))
    return 0;
  char want[64] = "";
  for (int d = DG_DTYPE_F32; d < DG_DTYPE_COUNT_; d++)
    if (mask & DG_TVM_BIT(d)) {
      size_t at = strlen(want);
      snprintf(want + at, sizeof want - at, "%s%s", at ? "/" : "",
               dg_dtype_name((dg_dtype)d));
    }
  return dg_tvm_fail("TypeError", "%s: %s has dtype %s; expected %s", fn, name,
                     dg_dtype_name(t->desc.dtype), want);
}

int dg_tvm_rank_is(const char *fn, const dg_tvm_tensor *t, const char *name,
                   int r) {
  if (t->desc.rank == r)
    return 0;
  char got[160];
  dg_tvm_format_dims(got, sizeof got, t->desc.rank, t->desc.dims);
  return dg_tvm_fail("ValueError", "%s: %s must have rank %d, got shape %s",
                     fn, name, r, got);
}

int dg_tvm_shape_is(const char *fn, const dg_tvm_tensor *y, const char *name,
                    int rank, const int64_t *dims) {
  bool same = y->desc.rank == rank;
  for (int i = 0; same && i < rank; i++)
    same = y->desc.dims[i] == dims[i];
  if (same)
    return 0;
  char want[160], got[160];
  dg_tvm_format_dims(want, sizeof want, rank, dims);
  dg_tvm_format_dims(got, sizeof got, y->desc.rank, y->desc.dims);
  return dg_tvm_fail("ValueError", "%s: %s has shape %s; the op produces %s",
                     fn, name, got, want);
}

int dg_tvm_int_get(const char *fn, const dg_ffi_any *args, int i,
                   const char *name, int64_t lo, int64_t hi, int64_t *out) {
  const dg_ffi_any *a = &args[i];
  if (a->type_index != DG_FFI_INT && a->type_index != DG_FFI_BOOL)
    return dg_tvm_fail("TypeError",
                       "%s: argument %d (%s) must be an Int, got %s (type "
                       "index %d)",
                       fn, i, name, type_name(a->type_index),
                       (int)a->type_index);
  if (a->v.v_int64 < lo || a->v.v_int64 > hi)
    return dg_tvm_fail("ValueError",
                       "%s: argument %d (%s) is %lld; expected %lld..%lld", fn,
                       i, name, (long long)a->v.v_int64, (long long)lo,
                       (long long)hi);
  *out = a->v.v_int64;
  return 0;
}

int dg_tvm_float_get(const char *fn, const dg_ffi_any *args, int i,
                     const char *name, double *out) {
  const dg_ffi_any *a = &args[i];
  if (a->type_index == DG_FFI_FLOAT)
    *out = a->v.v_float64;
  else if (a->type_index == DG_FFI_INT)
    *out = (double)a->v.v_int64;
  else
    return dg_tvm_fail("TypeError",
                       "%s: argument %d (%s) must be a Float, got %s (type "
                       "index %d)",
                       fn, i, name, type_name(a->type_index),
                       (int)a->type_index);
  return 0;
}
