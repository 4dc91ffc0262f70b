/* Whether a device runs gemm_cm2.comp (workgroup-scope cooperative
 * matrices, VK_NV_cooperative_matrix2 on VK_KHR_cooperative_matrix), and
 * the feature structs that enable it.
 *
 * The distribution headers we build against (Vulkan 1.3.239 on Debian 12)
 * predate both extensions, so their structs and enum values are declared
 * here from the Vulkan registry (vk.xml): the layouts are fixed by the
 * specification, and a newer header that defines them is not used. */
#include "vk_internal.h"

#include <stdlib.h>
#include <string.h>

enum {
  STYPE_COOPMAT_FEATURES_KHR = 1000506000,
  STYPE_COOPMAT2_FEATURES_NV = 1000593000,
  STYPE_COOPMAT_FLEX_PROPERTIES_NV = 1000593001,
  STYPE_COOPMAT2_PROPERTIES_NV = 1000593002,
  COMPONENT_FLOAT16 = 0,
  COMPONENT_FLOAT32 = 1,
  SCOPE_WORKGROUP = 2,
};

typedef struct coopmat2_props {
  uint32_t sType;
  void *pNext;
  uint32_t workgroup_max_invocations;
  uint32_t flexible_max_dimension;
  uint32_t workgroup_reserved_shared;
} coopmat2_props;

typedef struct flex_props {
  uint32_t sType;
  void *pNext;
  uint32_t m_gran, n_gran, k_gran;
  uint32_t a_type, b_type, c_type, result_type;
  VkBool32 saturating;
  uint32_t scope;
  uint32_t invocations;
} flex_props;

typedef VkResult(VKAPI_PTR *get_flex_fn)(VkPhysicalDevice, uint32_t *,
                                         flex_props *);

/* f16 x f16 -> f32 at workgroup scope for 256 invocations, with
 * granularities that divide the shader's tile. */
static bool flexible_sizes_fit(VkInstance inst, VkPhysicalDevice phys) {
  get_flex_fn get = (get_flex_fn)vkGetInstanceProcAddr(
      inst, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV");
  uint32_t n = 0;
  if (!get || get(phys, &n, NULL) != VK_SUCCESS || !n)
    return false;
  flex_props *p = calloc(n, sizeof *p);
  if (!p)
    return false;
  for (uint32_t i = 0; i < n; i++)
    p[i].sType = STYPE_COOPMAT_FLEX_PROPERTIES_NV;
  bool ok = false;
  if (get(phys, &n, p) >= VK_SUCCESS)
    for (uint32_t i = 0; i < n && !ok; i++)
      ok = p[i].a_type == COMPONENT_FLOAT16 &&
           p[i].b_type == COMPONENT_FLOAT16 &&
           p[i].c_type == COMPONENT_FLOAT32 &&
           p[i].result_type == COMPONENT_FLOAT32 &&
           p[i].scope == SCOPE_WORKGROUP && p[i].invocations == 256 &&
           p[i].m_gran && VK_CM2_BM % p[i].m_gran == 0 && p[i].n_gran &&
           VK_CM2_BN % p[i].n_gran == 0 && p[i].k_gran &&
           VK_CM2_BK % p[i].k_gran == 0;
  free(p);
  return ok;
}

bool dg_vk_cm2_probe(VkInstance inst, VkPhysicalDevice phys,
                     uint32_t dev_api, const VkExtensionProperties *ext,
                     uint32_t ne, vk_cm2_enable *en, bool *conv) {
  *conv = false;
  memset(en, 0, sizeof *en);
  bool khr = false, nv2 = false;
  for (uint32_t i = 0; i < ne; i++) {
    khr = khr || !strcmp(ext[i].extensionName, "VK_KHR_cooperative_matrix");
    nv2 = nv2 || !strcmp(ext[i].extensionName, "VK_NV_cooperative_matrix2");
  }
  /* The module is SPIR-V 1.6 (Vulkan 1.3), and exists only when the
   * library was built with a glslang that knows the extension. */
  size_t words;
  if (!khr || !nv2 || VK_API_VERSION_MINOR(dev_api) < 3 ||
      !dg_vk_spirv_find("gemm_cm2_f16", &words))
    return false;
  vk_cm2_features_khr khr_f = {.sType = STYPE_COOPMAT_FEATURES_KHR};
  vk_cm2_features_nv2 nv2_f = {.sType = STYPE_COOPMAT2_FEATURES_NV,
                               .pNext = &khr_f};
  VkPhysicalDeviceFeatures2 f2 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &nv2_f};
  vkGetPhysicalDeviceFeatures2(phys, &f2);
  if (!khr_f.cooperativeMatrix || !nv2_f.workgroup_scope ||
      !nv2_f.flexible_dimensions || !nv2_f.conversions ||
      !nv2_f.per_element_operations || !nv2_f.tensor_addressing)
    return false;
  coopmat2_props cp = {.sType = STYPE_COOPMAT2_PROPERTIES_NV};
  VkPhysicalDeviceProperties2 p2 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &cp};
  vkGetPhysicalDeviceProperties2(phys, &p2);
  if (cp.workgroup_max_invocations < 256 || !flexible_sizes_fit(inst, phys))
    return false;
  /* Enable exactly what the shader uses. */
  en->khr = (vk_cm2_features_khr){.sType = STYPE_COOPMAT_FEATURES_KHR,
                                  .cooperativeMatrix = VK_TRUE};
  en->nv2 = (vk_cm2_features_nv2){.sType = STYPE_COOPMAT2_FEATURES_NV,
                                  .pNext = &en->khr,
                                  .workgroup_scope = VK_TRUE,
                                  .flexible_dimensions = VK_TRUE,
                                  .conversions = VK_TRUE,
                                  .per_element_operations = VK_TRUE,
                                  .tensor_addressing = VK_TRUE,
                                  .block_loads = nv2_f.block_loads};
  /* The conv kernel gathers its im2col through a decode function. */
  *conv = nv2_f.block_loads && dg_vk_spirv_find("conv_cm2_f16", &words);
  return true;
}
