/* The part of the TVM-FFI stable C ABI and of DLPack that directgraph's TVM
 * entry points rely on, declared here in our own words so that the library
 * builds without TVM, tvm-ffi or dlpack headers (docs/integrations.md,
 * "TVM-FFI and DLPack"). Names carry a dg_ prefix so that a translation
 * unit which also sees the real headers never clashes.
 * The layouts are fixed by the ABI; the _Static_asserts below pin every size
 * and offset we read, and tests/tvm/test_dlpack_layout.c cross-checks the
 * DLPack part against Debian's dlpack.h when it is installed. */
#ifndef DG_TVM_FFI_ABI_H
#define DG_TVM_FFI_ABI_H

#include <stddef.h>
#include <stdint.h>

/* ---- DLPack ---------------------------------------------------------- */

/* Device kinds we name in messages (DLDeviceType values). */
enum {
  DG_DL_CPU = 1,
  DG_DL_CUDA = 2,
  DG_DL_CUDA_HOST = 3,
  DG_DL_OPENCL = 4,
  DG_DL_VULKAN = 7,
  DG_DL_METAL = 8,
  DG_DL_ROCM = 10,
};

/* Type codes (DLDataTypeCode values). */
enum {
  DG_DL_INT = 0,
  DG_DL_UINT = 1,
  DG_DL_FLOAT = 2,
  DG_DL_BFLOAT = 4,
  DG_DL_BOOL = 6, /* kDLBool: one byte, 0 or 1 */
};

typedef struct dg_dl_device {
  int32_t device_type; /* an enum in C, which is int-sized on every ABI */
  int32_t device_id;
} dg_dl_device;

typedef struct dg_dl_dtype {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} dg_dl_dtype;

/* A DLTensor. strides are in elements (not bytes); NULL means compact
 * row-major. byte_offset is added to data before any indexing. */
typedef struct dg_dl_tensor {
  void *data;
  dg_dl_device device;
  int32_t ndim;
  dg_dl_dtype dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} dg_dl_tensor;

/* ---- TVM-FFI --------------------------------------------------------- */

/* Type indices of a TVMFFIAny (those we accept or name in messages). */
enum {
  DG_FFI_NONE = 0,
  DG_FFI_INT = 1,
  DG_FFI_BOOL = 2,
  DG_FFI_FLOAT = 3,
  DG_FFI_OPAQUE_PTR = 4,
  DG_FFI_DATA_TYPE = 5,
  DG_FFI_DEVICE = 6,
  DG_FFI_DLTENSOR_PTR = 7, /* payload: a DLTensor* the caller owns */
  DG_FFI_RAW_STR = 8,      /* payload: const char* */
  DG_FFI_STR = 65,
  DG_FFI_FUNCTION = 68,
  DG_FFI_SHAPE = 69,
  DG_FFI_TENSOR = 70, /* payload: object; its DLTensor follows the header */
};

/* The header every TVM-FFI heap object starts with: a 64-bit combined
 * reference count, the object's type index, padding, and a deleter. */
typedef struct dg_ffi_object {
  uint64_t combined_ref_count;
  int32_t type_index;
  uint32_t padding;
  void (*deleter)(void *self, int flags);
} dg_ffi_object;

/* A value on the stack: 4-byte type index, 4 bytes of zero padding (small
 * string length for short strings), then an 8-byte payload. */
typedef struct dg_ffi_any {
  int32_t type_index;
  uint32_t zero_padding;
  union {
    int64_t v_int64;
    double v_float64;
    void *v_ptr;
    const char *v_c_str;
    dg_ffi_object *v_obj;
    uint64_t v_uint64;
  } v;
} dg_ffi_any;

/* The signature of every function exported as __tvm_ffi_<name>: 0 on
 * success; non-zero after raising an error (see dg_tvm.h). */
typedef int (*dg_ffi_safe_call)(void *handle, const dg_ffi_any *args,
                                int32_t num_args, dg_ffi_any *result);

/* What libtvm_ffi exports for raising an error from C; looked up at run
 * time because the library must not depend on it. */
typedef void (*dg_ffi_raise_fn)(const char *kind, const char *message);
#define DG_FFI_RAISE_SYMBOL "TVMFFIErrorSetRaisedFromCStr"
#define DG_FFI_SYMBOL_PREFIX "__tvm_ffi_"

/* The DLTensor of a type-70 tensor object. */
static inline dg_dl_tensor *dg_ffi_tensor_of(dg_ffi_object *obj) {
  return (dg_dl_tensor *)((char *)obj + sizeof(dg_ffi_object));
}

/* ---- layout pins (LP64 targets; the only ones the ABI ships for) ---- */
_Static_assert(sizeof(dg_dl_device) == 8, "DLDevice is 8 bytes");
_Static_assert(sizeof(dg_dl_dtype) == 4, "DLDataType is 4 bytes");
_Static_assert(offsetof(dg_dl_dtype, bits) == 1, "DLDataType.bits");
_Static_assert(offsetof(dg_dl_dtype, lanes) == 2, "DLDataType.lanes");
_Static_assert(offsetof(dg_dl_tensor, device) == 8, "DLTensor.device");
_Static_assert(offsetof(dg_dl_tensor, ndim) == 16, "DLTensor.ndim");
_Static_assert(offsetof(dg_dl_tensor, dtype) == 20, "DLTensor.dtype");
_Static_assert(offsetof(dg_dl_tensor, shape) == 24, "DLTensor.shape");
_Static_assert(offsetof(dg_dl_tensor, strides) == 32, "DLTensor.strides");
_Static_assert(offsetof(dg_dl_tensor, byte_offset) == 40,
               "DLTensor.byte_offset");
_Static_assert(sizeof(dg_dl_tensor) == 48, "DLTensor is 48 bytes");
_Static_assert(sizeof(dg_ffi_object) == 24, "object header is 24 bytes");
_Static_assert(offsetof(dg_ffi_object, type_index) == 8,
               "object header type_index");
_Static_assert(sizeof(dg_ffi_any) == 16, "TVMFFIAny is 16 bytes");
_Static_assert(offsetof(dg_ffi_any, v) == 8, "TVMFFIAny payload at 8");

#endif
