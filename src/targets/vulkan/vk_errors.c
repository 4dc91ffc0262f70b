/* VkResult names and the diagnostics of failed Vulkan calls: every error
 * the target returns names the device, the node (when there is one), the
 * call and the VkResult. */
#include "vk_internal.h"

#include <stdio.h>

const char *dg_vk_result_name(VkResult r) {
  switch (r) {
#define N(x)                                                                   \
  case x:                                                                      \
    return #x;
    N(VK_SUCCESS)
    N(VK_NOT_READY) N(VK_TIMEOUT) N(VK_EVENT_SET) N(VK_EVENT_RESET) N(
        VK_INCOMPLETE) N(VK_ERROR_OUT_OF_HOST_MEMORY)
        N(VK_ERROR_OUT_OF_DEVICE_MEMORY) N(VK_ERROR_INITIALIZATION_FAILED) N(
            VK_ERROR_DEVICE_LOST) N(VK_ERROR_MEMORY_MAP_FAILED)
            N(VK_ERROR_LAYER_NOT_PRESENT) N(VK_ERROR_EXTENSION_NOT_PRESENT) N(
                VK_ERROR_FEATURE_NOT_PRESENT) N(VK_ERROR_INCOMPATIBLE_DRIVER)
                N(VK_ERROR_TOO_MANY_OBJECTS) N(VK_ERROR_FORMAT_NOT_SUPPORTED)
                    N(VK_ERROR_FRAGMENTED_POOL) N(VK_ERROR_UNKNOWN)
                        N(VK_ERROR_OUT_OF_POOL_MEMORY)
                            N(VK_ERROR_INVALID_EXTERNAL_HANDLE)
                                N(VK_ERROR_FRAGMENTATION)
                                    N(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
                                        N(VK_PIPELINE_COMPILE_REQUIRED)
                                            N(VK_ERROR_INVALID_SHADER_NV)
#undef N
                                                default
        : return "VkResult(unknown)";
  }
}

dg_status dg_vk_status(vk_device *vd, VkResult r) {
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
    return DG_ERROR_OUT_OF_MEMORY;
  if (r == VK_ERROR_DEVICE_LOST && vd)
    atomic_store(&vd->lost, true);
  return DG_ERROR_DEVICE;
}

dg_status dg_vk_fail(vk_device *vd, dg_diagnostic *diag, const dg_ir *ir,
                     int node_index, const char *call, VkResult r) {
  dg_status st = dg_vk_status(vd, r);
  const dg_node *n = ir && node_index >= 0 ? &ir->nodes[node_index] : NULL;
  const char *why = r == VK_ERROR_OUT_OF_DEVICE_MEMORY
                        ? " (out of device memory)"
                    : r == VK_ERROR_OUT_OF_HOST_MEMORY ? " (out of host memory)"
                    : r == VK_ERROR_DEVICE_LOST ? " (the device was lost)"
                                                : "";
  char shown[DG_NAME_SHORT];
  dg_name_shorten(shown, sizeof shown, n ? n->name : NULL);
  if (n)
    dg_diag_set(diag, st, node_index, n->name, dg_op_name(n->op), call, NULL,
                dg_vk_result_name(r), "%s: node %d '%s' (%s): %s failed: %s%s",
                vd ? vd->label : "vulkan", node_index, shown, dg_op_name(n->op),
                call, dg_vk_result_name(r), why);
  else
    dg_diag_set(diag, st, -1, NULL, call, call, NULL, dg_vk_result_name(r),
                "%s: %s failed: %s%s", vd ? vd->label : "vulkan", call,
                dg_vk_result_name(r), why);
  return st;
}
