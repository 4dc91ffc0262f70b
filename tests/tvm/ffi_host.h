/* What a TVM-FFI caller does, in the small: load libdirectgraph with dlopen,
 * look up __tvm_ffi_* symbols, and pack DLTensors and scalars into TVMFFIAny
 * arrays, either as type 7 (DLTensor*) or type 70 (a tensor object whose
 * DLTensor follows the 24-byte header). Used by test_tvm_ffi.c. */
#ifndef DG_TEST_FFI_HOST_H
#define DG_TEST_FFI_HOST_H

#include "tvm_ffi_abi.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A tensor object as TVM lays it out: header, then the DLTensor. */
typedef struct host_tensor_obj {
  dg_ffi_object header;
  dg_dl_tensor dl;
} host_tensor_obj;
_Static_assert(offsetof(host_tensor_obj, dl) == 24, "DLTensor after header");

/* A tensor argument with its own shape/strides storage. */
typedef struct host_tensor {
  host_tensor_obj obj;
  int64_t shape[6];
  int64_t strides[6];
} host_tensor;

static inline dg_dl_dtype host_f32(void) { return (dg_dl_dtype){DG_DL_FLOAT, 32, 1}; }
static inline dg_dl_dtype host_i8(void) { return (dg_dl_dtype){DG_DL_INT, 8, 1}; }
static inline dg_dl_dtype host_u8(void) { return (dg_dl_dtype){DG_DL_UINT, 8, 1}; }
static inline dg_dl_dtype host_i32(void) { return (dg_dl_dtype){DG_DL_INT, 32, 1}; }

/* A compact CPU tensor over data (strides NULL). */
static inline void host_tensor_init(host_tensor *t, void *data, dg_dl_dtype dt,
                                    int ndim, const int64_t *shape) {
  memset(t, 0, sizeof *t);
  t->obj.header.combined_ref_count = 1;
  t->obj.header.type_index = DG_FFI_TENSOR;
  t->obj.dl.data = data;
  t->obj.dl.device = (dg_dl_device){DG_DL_CPU, 0};
  t->obj.dl.ndim = ndim;
  t->obj.dl.dtype = dt;
  memcpy(t->shape, shape, sizeof(int64_t) * (size_t)ndim);
  t->obj.dl.shape = t->shape;
  t->obj.dl.strides = NULL;
}

/* Gives the tensor explicit strides (in elements). */
static inline void host_tensor_strides(host_tensor *t, const int64_t *strides) {
  memcpy(t->strides, strides, sizeof(int64_t) * (size_t)t->obj.dl.ndim);
  t->obj.dl.strides = t->strides;
}

/* The two argument forms of a tensor. */
static inline dg_ffi_any any_tensor(host_tensor *t, bool object) {
  dg_ffi_any a = {0};
  if (object) {
    a.type_index = DG_FFI_TENSOR;
    a.v.v_obj = &t->obj.header;
  } else {
    a.type_index = DG_FFI_DLTENSOR_PTR;
    a.v.v_ptr = &t->obj.dl;
  }
  return a;
}
static inline dg_ffi_any any_int(int64_t v) {
  dg_ffi_any a = {.type_index = DG_FFI_INT};
  a.v.v_int64 = v;
  return a;
}
static inline dg_ffi_any any_float(double v) {
  dg_ffi_any a = {.type_index = DG_FFI_FLOAT};
  a.v.v_float64 = v;
  return a;
}
static inline dg_ffi_any any_none(void) { return (dg_ffi_any){0}; }

/* The loaded library and its entry points. */
typedef struct host_lib {
  void *so;
  const char *(*last_error)(void);
} host_lib;

static inline dg_ffi_safe_call host_sym(host_lib *lib, const char *name) {
  char full[128];
  strcpy(full, DG_FFI_SYMBOL_PREFIX);
  strncat(full, name, sizeof full - strlen(full) - 1);
  dg_ffi_safe_call f;
  *(void **)&f = dlsym(lib->so, full); /* POSIX's function-pointer idiom */
  return f;
}

/* Calls f and returns its status; *result starts as a non-None sentinel so
 * the test sees whether the callee set it. */
static inline int host_call(dg_ffi_safe_call f, const dg_ffi_any *args, int n,
                            dg_ffi_any *result) {
  *result = (dg_ffi_any){.type_index = DG_FFI_INT};
  result->v.v_int64 = 12345;
  return f(NULL, args, n, result);
}

#endif
