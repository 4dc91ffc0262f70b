/* Cross-checks src/front/tvm/tvm_ffi_abi.h's own DLPack declarations against
 * Debian's dlpack.h (DLPack 0.6, libdlpack-dev): every size, offset and
 * enum value the entry points read must agree. Only built when the header
 * is installed; the library itself never includes it. */
#include "harness.h"
#include "tvm_ffi_abi.h"

#include <dlpack/dlpack.h>

#define SAME(a, b) CHECK((a) == (b), "%s == %s (%zu)", #a, #b, (size_t)(a))

int main(void) {
  SAME(sizeof(dg_dl_tensor), sizeof(DLTensor));
  SAME(offsetof(dg_dl_tensor, data), offsetof(DLTensor, data));
  SAME(offsetof(dg_dl_tensor, device), offsetof(DLTensor, device));
  SAME(offsetof(dg_dl_tensor, ndim), offsetof(DLTensor, ndim));
  SAME(offsetof(dg_dl_tensor, dtype), offsetof(DLTensor, dtype));
  SAME(offsetof(dg_dl_tensor, shape), offsetof(DLTensor, shape));
  SAME(offsetof(dg_dl_tensor, strides), offsetof(DLTensor, strides));
  SAME(offsetof(dg_dl_tensor, byte_offset), offsetof(DLTensor, byte_offset));
  SAME(sizeof(dg_dl_device), sizeof(DLDevice));
  SAME(offsetof(dg_dl_device, device_id), offsetof(DLDevice, device_id));
  SAME(sizeof(dg_dl_dtype), sizeof(DLDataType));
  SAME(offsetof(dg_dl_dtype, bits), offsetof(DLDataType, bits));
  SAME(offsetof(dg_dl_dtype, lanes), offsetof(DLDataType, lanes));
  SAME((int)DG_DL_CPU, (int)kDLCPU);
  SAME((int)DG_DL_CUDA, (int)kDLCUDA);
  SAME((int)DG_DL_CUDA_HOST, (int)kDLCUDAHost);
  SAME((int)DG_DL_OPENCL, (int)kDLOpenCL);
  SAME((int)DG_DL_VULKAN, (int)kDLVulkan);
  SAME((int)DG_DL_METAL, (int)kDLMetal);
  SAME((int)DG_DL_ROCM, (int)kDLROCM);
  SAME((int)DG_DL_INT, (int)kDLInt);
  SAME((int)DG_DL_UINT, (int)kDLUInt);
  SAME((int)DG_DL_FLOAT, (int)kDLFloat);
  SAME((int)DG_DL_BFLOAT, (int)kDLBfloat);
  return t_exit();
}
