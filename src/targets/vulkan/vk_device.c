/* The Vulkan target's entry point: the instance (with the Khronos
 * validation layer and a debug messenger when asked for), one dg_device
 * per physical device with a compute queue (Vulkan 1.1 or later), the
 * features each has, and their destruction. No loader, no driver or no
 * device is not an error: the target then adds nothing. */
#define _POSIX_C_SOURCE 200809L
#include "core/env.h"
#include "vk_coopmat_khr.h"
#include "vk_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

atomic_int dg_vk_submits;
atomic_int dg_vk_staged;
atomic_int dg_vk_records;
atomic_int dg_vk_abandoned;
/* Devices whose work outlived their destroy: kept on this list, not
 * destroyed, so that their memory (which the driver may still write)
 * stays allocated and reachable until the process ends. */
static vk_device *abandoned_devices;
static pthread_mutex_t abandoned_lock = PTHREAD_MUTEX_INITIALIZER;
atomic_int dg_vk_validation_total;
static atomic_int validation_on;

int dg_vk_validation_messages(void) {
  return atomic_load(&dg_vk_validation_total);
}
int dg_vk_validation_enabled(void) { return atomic_load(&validation_on); }
int dg_vk_submit_count(void) { return atomic_load(&dg_vk_submits); }
int dg_vk_staged_count(void) { return atomic_load(&dg_vk_staged); }
int dg_vk_record_count(void) { return atomic_load(&dg_vk_records); }
int dg_vk_abandoned_count(void) { return atomic_load(&dg_vk_abandoned); }

static const dg_target_vtbl vk_vtbl;

static vk_device *vk_of(const dg_device *dev) {
  return dev && dev->vt == &vk_vtbl ? dev->impl : NULL;
}
long dg_vk_cache_loaded_bytes(const dg_device *dev) {
  vk_device *vd = vk_of(dev);
  return vd ? (long)vd->cache_loaded : -1;
}
const char *dg_vk_cache_path(const dg_device *dev) {
  vk_device *vd = vk_of(dev);
  return vd ? vd->cache_path : NULL;
}

/* ---- instance and validation ---- */

static VKAPI_ATTR VkBool32 VKAPI_CALL
on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
           VkDebugUtilsMessageTypeFlagsEXT types,
           const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  (void)types;
  vk_instance *vi = user;
  bool error = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  atomic_fetch_add(&vi->messages, 1);
  atomic_fetch_add(&dg_vk_validation_total, 1);
  const char *msg = data && data->pMessage ? data->pMessage : "(no text)";
  /* The user asked for validation: its findings are bugs, so they are
   * shown even without a log callback. */
  if (vi->log) {
    char buf[1024];
    snprintf(buf, sizeof buf, "vulkan validation %s: %s",
             error ? "error" : "warning", msg);
    vi->log(vi->log_user, error ? DG_LOG_ERROR : DG_LOG_WARNING, buf);
  } else {
    fprintf(stderr, "directgraph: vulkan validation %s: %s\n",
            error ? "error" : "warning", msg);
  }
  return VK_FALSE;
}

static bool validation_wanted(void) {
  const char *v = dg_env(DG_ENV_VULKAN_VALIDATION);
  const char *l = dg_env(DG_ENV_VK_INSTANCE_LAYERS);
  return (v && !strcmp(v, "1")) ||
         (l && strstr(l, "VK_LAYER_KHRONOS_validation"));
}

/* The Vulkan version a layer was written for; 0 when it is not installed. */
static uint32_t layer_version(const char *name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || !n)
    return 0;
  VkLayerProperties *p = calloc(n, sizeof *p);
  uint32_t version = 0;
  if (p && vkEnumerateInstanceLayerProperties(&n, p) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !version; i++)
      if (!strcmp(p[i].layerName, name))
        version = p[i].specVersion ? p[i].specVersion : 1;
  free(p);
  return version;
}

static void instance_release(vk_instance *vi) {
  if (!vi || --vi->refs > 0)
    return;
  if (vi->messenger && vi->destroy_messenger)
    vi->destroy_messenger(vi->instance, vi->messenger, NULL);
  if (vi->instance) {
    dg_vk_lsan_keep_drivers();
    vkDestroyInstance(vi->instance, NULL);
  }
  free(vi);
}

static vk_instance *instance_create(const dg_context_options *opts,
                                    uint32_t *api, char *why, size_t why_size) {
  uint32_t version = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion(&version) != VK_SUCCESS ||
      version < VK_API_VERSION_1_1) {
    snprintf(why, why_size, "the Vulkan loader is older than 1.1");
    return NULL;
  }
  /* Ask for what we use at most; devices may report less. */
  *api = version < VK_API_VERSION_1_3 ? version : VK_API_VERSION_1_3;
  vk_instance *vi = calloc(1, sizeof *vi);
  if (!vi) {
    snprintf(why, why_size, "out of host memory");
    return NULL;
  }
  vi->refs = 1;
  vi->log = opts->log;
  vi->log_user = opts->log_user;
  const char *layer = "VK_LAYER_KHRONOS_validation";
  const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  uint32_t layer_spec = validation_wanted() ? layer_version(layer) : 0;
  bool validate = layer_spec != 0;
  VkDebugUtilsMessengerCreateInfoEXT mi = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = on_message,
      .pUserData = vi};
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "directgraph",
                           .pEngineName = "directgraph",
                           .engineVersion = VK_MAKE_VERSION(0, 1, 0),
                           .apiVersion = *api};
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                             .pNext = validate ? &mi : NULL,
                             .pApplicationInfo = &app,
                             .enabledLayerCount = validate ? 1 : 0,
                             .ppEnabledLayerNames = &layer,
                             .enabledExtensionCount = validate ? 1 : 0,
                             .ppEnabledExtensionNames = &ext};
  VkResult r = vkCreateInstance(&ci, NULL, &vi->instance);
  if (r != VK_SUCCESS) {
    free(vi);
    /* -9, VK_ERROR_INCOMPATIBLE_DRIVER: the loader found no driver. */
    snprintf(why, why_size, "no Vulkan driver (vkCreateInstance: %d%s)", (int)r,
             r == VK_ERROR_INCOMPATIBLE_DRIVER
                 ? ", VK_ERROR_INCOMPATIBLE_DRIVER"
                 : "");
    return NULL; /* no driver: no Vulkan devices */
  }
  if (validate) {
    PFN_vkCreateDebugUtilsMessengerEXT create =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
            vi->instance, "vkCreateDebugUtilsMessengerEXT");
    vi->destroy_messenger =
        (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
            vi->instance, "vkDestroyDebugUtilsMessengerEXT");
    if (create && vi->destroy_messenger &&
        create(vi->instance, &mi, NULL, &vi->messenger) == VK_SUCCESS) {
      atomic_store(&validation_on, 1);
      vi->validation_spec = layer_spec;
    }
  }
  return vi;
}

/* ---- devices ---- */

static bool has_ext(const VkExtensionProperties *e, uint32_t n,
                    const char *name) {
  for (uint32_t i = 0; i < n; i++)
    if (!strcmp(e[i].extensionName, name))
      return true;
  return false;
}

/* Whether VK_KHR_cooperative_matrix lists f16 x f16 -> f32 products of
 * M x N x K at subgroup scope. Call only where the extension is listed (the
 * loader's trampoline for an unlisted one may crash). */
static bool khr_coop_f16(VkInstance inst, VkPhysicalDevice phys, uint32_t m,
                         uint32_t n, uint32_t k) {
  PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR get =
      (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)
          vkGetInstanceProcAddr(
              inst, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
  uint32_t np = 0;
  if (!get || get(phys, &np, NULL) != VK_SUCCESS || !np)
    return false;
  VkCooperativeMatrixPropertiesKHR *cp = calloc(np, sizeof *cp);
  if (!cp)
    return false;
  for (uint32_t i = 0; i < np; i++)
    cp[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR;
  bool found = false;
  if (get(phys, &np, cp) >= VK_SUCCESS)
    for (uint32_t i = 0; i < np; i++)
      found |= cp[i].MSize == m && cp[i].NSize == n && cp[i].KSize == k &&
               cp[i].AType == VK_COMPONENT_TYPE_FLOAT16_KHR &&
               cp[i].BType == VK_COMPONENT_TYPE_FLOAT16_KHR &&
               cp[i].CType == VK_COMPONENT_TYPE_FLOAT32_KHR &&
               cp[i].ResultType == VK_COMPONENT_TYPE_FLOAT32_KHR &&
               cp[i].scope == VK_SCOPE_SUBGROUP_KHR;
  free(cp);
  return found;
}

static const char *type_name(VkPhysicalDeviceType t) {
  switch (t) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    return "discrete";
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    return "integrated";
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
    return "virtual";
  case VK_PHYSICAL_DEVICE_TYPE_CPU:
    return "cpu";
  default:
    return "other";
  }
}

/* Bounded like every wait (graph.h, device_timeout_ms): a device still
 * running a timed-out run's work after the time-out is abandoned, not
 * destroyed (destroying it then would be undefined behaviour). */
static void device_free_idle(vk_device *vd);

static void device_free(vk_device *vd) {
  if (!vd)
    return;
  if (vd->dev && dg_vk_reap_parked(vd, vd->timeout_ns) > 0) {
    pthread_mutex_lock(&abandoned_lock);
    vd->next_abandoned = abandoned_devices;
    abandoned_devices = vd;
    pthread_mutex_unlock(&abandoned_lock);
    atomic_fetch_add(&dg_vk_abandoned, 1);
    return;
  }
  device_free_idle(vd);
}

/* For tests (vulkan_target.h): waits, without a bound, for the abandoned
 * devices' work, then destroys them as device_free would have. */
void dg_vk_abandoned_finish(void) {
  pthread_mutex_lock(&abandoned_lock);
  vk_device *vd = abandoned_devices;
  abandoned_devices = NULL;
  pthread_mutex_unlock(&abandoned_lock);
  while (vd) {
    vk_device *next = vd->next_abandoned;
    dg_vk_reap_parked(vd, UINT64_MAX);
    device_free_idle(vd);
    vd = next;
  }
}

/* The device with nothing parked on it. */
static void device_free_idle(vk_device *vd) {
  if (vd->dev) {
    /* Nothing is in flight now: every run waits for its fence, and a
     * timed-out one is parked until reaped. */
    vkDeviceWaitIdle(vd->dev);
    dg_vk_leftovers_free(vd);
    dg_vk_cache_save(vd);
    dg_vk_pipelines_destroy(vd);
    vkDestroyDevice(vd->dev, NULL);
  }
  pthread_mutex_destroy(&vd->lock);
  instance_release(vd->vi);
  free(vd->parked);
  free(vd);
}

static void vk_destroy(dg_device *dev) {
  device_free(dev->impl);
  dev->impl = NULL;
}

/* The context's resolved cache directory (target.h: NULL when caching is
 * off), copied into buf. */
static char *cache_dir(const dg_context_options *opts, char *buf, size_t size) {
  if (opts->disable_cache || !opts->cache_dir || !*opts->cache_dir)
    return NULL;
  dg_strlcpy(buf, opts->cache_dir, size);
  return buf;
}

/* Opens phys; NULL when it has no usable compute queue or the device
 * cannot be created (then why says so). */
static vk_device *device_open(vk_instance *vi, VkPhysicalDevice phys,
                              uint32_t api, const dg_context_options *opts,
                              char *why, size_t why_size) {
  vk_device *vd = calloc(1, sizeof *vd);
  if (!vd) {
    snprintf(why, why_size, "out of host memory");
    return NULL;
  }
  pthread_mutex_init(&vd->lock, NULL);
  vi->refs++;
  vd->vi = vi;
  vd->phys = phys;
  vkGetPhysicalDeviceProperties(phys, &vd->props);
  vkGetPhysicalDeviceMemoryProperties(phys, &vd->mem);
  uint32_t dev_api = vd->props.apiVersion < api ? vd->props.apiVersion : api;
  if (VK_API_VERSION_MAJOR(dev_api) == 1 && VK_API_VERSION_MINOR(dev_api) < 1) {
    snprintf(why, why_size, "Vulkan 1.0 only");
    goto fail;
  }
  /* Every pipeline declares VK_BINDINGS storage buffers (vk_pipeline.c);
   * the spec guarantees only 4 per stage. */
  if (vd->props.limits.maxPerStageDescriptorStorageBuffers < VK_BINDINGS) {
    snprintf(why, why_size,
             "%u storage buffers per shader stage; the kernels bind %d",
             vd->props.limits.maxPerStageDescriptorStorageBuffers, VK_BINDINGS);
    goto fail;
  }

  /* A compute queue; prefer one with timestamps. */
  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, NULL);
  VkQueueFamilyProperties *qf = calloc(nq ? nq : 1, sizeof *qf);
  if (!qf) {
    snprintf(why, why_size, "out of host memory");
    goto fail;
  }
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, qf);
  int family = -1;
  for (uint32_t i = 0; i < nq; i++)
    if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
        (family < 0 ||
         (!qf[family].timestampValidBits && qf[i].timestampValidBits)))
      family = (int)i;
  if (family >= 0) {
    uint32_t bits = qf[family].timestampValidBits;
    vd->timestamps = bits > 0 && vd->props.limits.timestampPeriod > 0;
    vd->timestamp_mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
    vd->timestamp_ns = vd->props.limits.timestampPeriod;
  }
  free(qf);
  if (family < 0) {
    snprintf(why, why_size, "no compute queue");
    goto fail;
  }
  vd->queue_family = (uint32_t)family;

  /* Extensions and features. */
  uint32_t ne = 0;
  vkEnumerateDeviceExtensionProperties(phys, NULL, &ne, NULL);
  VkExtensionProperties *ext = calloc(ne ? ne : 1, sizeof *ext);
  if (!ext) {
    snprintf(why, why_size, "out of host memory");
    goto fail;
  }
  vkEnumerateDeviceExtensionProperties(phys, NULL, &ne, ext);
  bool core12 = VK_API_VERSION_MINOR(dev_api) >= 2;
  bool has8 = core12 || has_ext(ext, ne, VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
  bool has_f16i8 =
      core12 || has_ext(ext, ne, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  bool has_driver_props =
      core12 || has_ext(ext, ne, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
  bool dot_listed = has_ext(ext, ne, "VK_KHR_shader_integer_dot_product") ||
                    VK_API_VERSION_MINOR(dev_api) >= 3;
  bool coop_khr = has_ext(ext, ne, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  bool coop_nv = has_ext(ext, ne, "VK_NV_cooperative_matrix");
  bool coop_nv2 = has_ext(ext, ne, "VK_NV_cooperative_matrix2");
  vd->coopmat_khr = coop_khr;
  vd->coopmat_nv = coop_nv;

  VkPhysicalDeviceShaderFloat16Int8Features f16i8 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDevice8BitStorageFeatures s8 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDevice16BitStorageFeatures s16 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDeviceFeatures2 f2 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &s16};
  void **tail = &s16.pNext;
  if (has8) {
    *tail = &s8;
    tail = &s8.pNext;
  }
  if (has_f16i8) {
    *tail = &f16i8;
    tail = &f16i8.pNext;
  }
  /* The cooperative matrix paths also need the Vulkan memory model
   * (glslang emits it for every cooperative-matrix shader). */
  bool has_vmm = core12 || has_ext(ext, ne, "VK_KHR_vulkan_memory_model");
  VkPhysicalDeviceCooperativeMatrixFeaturesNV cmf = {
      .sType =
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR ckf = {
      .sType =
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  VkPhysicalDeviceVulkanMemoryModelFeatures vmm = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
  if (coop_nv && has_vmm) {
    *tail = &cmf;
    tail = &cmf.pNext;
  }
  if (coop_khr && has_vmm) {
    *tail = &ckf;
    tail = &ckf.pNext;
  }
  if ((coop_nv || coop_khr) && has_vmm) {
    *tail = &vmm;
    tail = &vmm.pNext;
  }
  VkPhysicalDeviceShaderIntegerDotProductFeatures idf = {
      .sType =
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  if (dot_listed) {
    *tail = &idf;
    tail = &idf.pNext;
  }
  vkGetPhysicalDeviceFeatures2(phys, &f2);
  vd->f16 = f16i8.shaderFloat16 && s16.storageBuffer16BitAccess;
  vd->int8 = f16i8.shaderInt8 && s8.storageBuffer8BitAccess;
  vd->int64 = f2.features.shaderInt64;
  /* Only now, with the extension known to be listed, may the NV
   * properties function be called (on a device without it the loader's
   * trampoline crashes). */
  bool coop_f16 = false;
  if (coop_nv && has_vmm && cmf.cooperativeMatrix && vmm.vulkanMemoryModel &&
      vd->f16) {
    PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV get =
        (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)
            vkGetInstanceProcAddr(
                vi->instance,
                "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV");
    uint32_t np = 0;
    if (get && get(phys, &np, NULL) == VK_SUCCESS && np) {
      VkCooperativeMatrixPropertiesNV *cp = calloc(np, sizeof *cp);
      if (cp) {
        for (uint32_t i = 0; i < np; i++)
          cp[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
        if (get(phys, &np, cp) >= VK_SUCCESS)
          for (uint32_t i = 0; i < np; i++)
            if (cp[i].MSize == 16 && cp[i].NSize == 16 && cp[i].KSize == 16 &&
                cp[i].AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                cp[i].BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                cp[i].CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
                cp[i].DType == VK_COMPONENT_TYPE_FLOAT32_NV &&
                cp[i].scope == VK_SCOPE_SUBGROUP_NV)
              coop_f16 = true;
        free(cp);
      }
    }
  }

  /* KHR: the m16n8k16 shape the translated gemm_coop.comp uses
   * (spirv_nv2khr.py). Preferred over NV where both are there: NVIDIA's
   * driver runs the same kernel markedly faster through it. */
  bool coop_khr_f16 = coop_khr && has_vmm && ckf.cooperativeMatrix &&
                      vmm.vulkanMemoryModel && vd->f16 &&
                      khr_coop_f16(vi->instance, phys, 16, 8, 16);
  /* A validation layer older than the extension (1.3.255) reports every
   * use of it as an error; under such a layer the NV path runs instead,
   * and the device info says so. */
  if (coop_khr_f16 && vi->validation_spec &&
      vi->validation_spec < VK_MAKE_API_VERSION(0, 1, 3, 255)) {
    coop_khr_f16 = false;
    vd->coop_khr_layer_old = true;
  }

  /* Enable only what the shaders use. */
  VkPhysicalDeviceShaderFloat16Int8Features e_f16i8 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES,
      .shaderFloat16 = vd->f16,
      .shaderInt8 = vd->int8};
  VkPhysicalDevice8BitStorageFeatures e_s8 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES,
      .pNext = &e_f16i8,
      .storageBuffer8BitAccess = vd->int8};
  VkPhysicalDevice16BitStorageFeatures e_s16 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
      .pNext = (vd->f16 || vd->int8) ? (void *)&e_s8 : NULL,
      .storageBuffer16BitAccess = vd->f16};
  /* Integer dot products: enabled wherever the feature is there (the
   * int8 dot kernels need it); vk_ops.c takes them where they are
   * accelerated. */
  vd->int_dot = vd->int8 && idf.shaderIntegerDotProduct;
  VkPhysicalDeviceShaderIntegerDotProductFeatures e_idot = {
      .sType =
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES,
      .shaderIntegerDotProduct = VK_TRUE};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV e_cm = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
      .cooperativeMatrix = VK_TRUE};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR e_ck = {
      .sType =
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR,
      .pNext = coop_f16 ? &e_cm : NULL,
      .cooperativeMatrix = VK_TRUE};
  VkPhysicalDeviceVulkanMemoryModelFeatures e_vmm = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES,
      .pNext = coop_khr_f16 ? (void *)&e_ck : (void *)&e_cm,
      .vulkanMemoryModel = VK_TRUE};
  if (coop_f16 || coop_khr_f16)
    e_f16i8.pNext = &e_vmm;
  if (vd->int_dot) {
    e_idot.pNext = e_f16i8.pNext;
    e_f16i8.pNext = &e_idot;
  }
  /* Pipeline statistics (debugging), chained in front of the rest. */
  vd->pipeline_stats = dg_vk_pipeline_stats_wanted(ext, ne);
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR e_pe = {
      .sType =
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
      .pNext = e_s16.pNext,
      .pipelineExecutableInfo = VK_TRUE};
  if (vd->pipeline_stats)
    e_s16.pNext = &e_pe;
  const char *exts[8];
  uint32_t next = 0;
  if (!core12 && vd->int8)
    exts[next++] = VK_KHR_8BIT_STORAGE_EXTENSION_NAME;
  if (!core12 && (vd->int8 || vd->f16))
    exts[next++] = VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME;
  if (vd->pipeline_stats)
    exts[next++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
  if (vd->int_dot && VK_API_VERSION_MINOR(dev_api) < 3)
    exts[next++] = "VK_KHR_shader_integer_dot_product";
  if (coop_f16)
    exts[next++] = "VK_NV_cooperative_matrix";
  if (coop_khr_f16)
    exts[next++] = VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME;
  if ((coop_f16 || coop_khr_f16) && !core12)
    exts[next++] = "VK_KHR_vulkan_memory_model";

  /* Subgroup size and the driver's name. */
  VkPhysicalDeviceDriverProperties drv = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceShaderIntegerDotProductProperties dotp = {
      .sType =
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES,
      .pNext = has_driver_props ? &drv : NULL};
  VkPhysicalDeviceSubgroupProperties sg = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
      .pNext = vd->int_dot        ? (void *)&dotp
               : has_driver_props ? (void *)&drv
                                  : NULL};
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm = {
      .sType =
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV,
      .pNext = &sg};
  bool has_sm = has_ext(ext, ne, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
  VkPhysicalDeviceProperties2 p2 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
      .pNext = has_sm ? (void *)&sm : (void *)&sg};
  vkGetPhysicalDeviceProperties2(phys, &p2);
  vd->subgroup_size = sg.subgroupSize;
  vd->multiprocessors = has_sm ? sm.shaderSMCount : 0;
  vd->int_dot_fast =
      vd->int_dot && dotp.integerDotProduct4x8BitPackedSignedAccelerated;
  vd->coop_nv_f16 = coop_f16 && sg.subgroupSize == 32;
  vd->coop_khr_f16 = coop_khr_f16 && sg.subgroupSize == 32;
  free(ext);

  float prio = 1.0f;
  VkDeviceQueueCreateInfo qi = {.sType =
                                    VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                .queueFamilyIndex = vd->queue_family,
                                .queueCount = 1,
                                .pQueuePriorities = &prio};
  VkPhysicalDeviceFeatures e_core = {.shaderInt64 = vd->int64};
  VkDeviceCreateInfo di = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                           .pNext = &e_s16,
                           .pEnabledFeatures = &e_core,
                           .queueCreateInfoCount = 1,
                           .pQueueCreateInfos = &qi,
                           .enabledExtensionCount = next,
                           .ppEnabledExtensionNames = exts};
  VkResult r = vkCreateDevice(phys, &di, NULL, &vd->dev);
  if (r != VK_SUCCESS) {
    vd->dev = VK_NULL_HANDLE;
    snprintf(why, why_size, "vkCreateDevice failed: %s", dg_vk_result_name(r));
    goto fail;
  }
  vkGetDeviceQueue(vd->dev, vd->queue_family, 0, &vd->queue);
  /* A run polls its fence for up to DG_VK_SPIN_US microseconds (default
   * 1000; 0: never) before blocking: a blocking wait returns tens of
   * microseconds after the GPU finishes on NVIDIA's driver, most of a
   * small graph's latency (CUDA spins the same way). A CPU-type device
   * (lavapipe) never spins: its work runs on the cores a poll would take. */
  vd->loop_limit = strstr(vd->props.deviceName, "llvmpipe") ? 65535 : 0;
  vd->timeout_ns = (uint64_t)opts->device_timeout_ms * 1000000u;
  const char *spin = dg_env(DG_ENV_VK_SPIN_US);
  vd->spin_ns = vd->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU
                    ? 0
                    : (int64_t)(spin ? strtoul(spin, NULL, 10) : 1000) * 1000;
  const char *gather = dg_env(DG_ENV_VK_CONV_GATHER);
  vd->conv_gather = !gather                       ? -1
                    : !strcmp(gather, "implicit") ? 0
                    : !strcmp(gather, "im2col")   ? 1
                    : !strcmp(gather, "blocked")  ? 2
                                                  : -1;
  const char *splitk = dg_env(DG_ENV_VK_SPLITK);
  vd->splitk = splitk && atoi(splitk) > 0 ? atoi(splitk) : -1;
  const char *paths = dg_env(DG_ENV_TEST_VULKAN_PATHS);
  vd->test_paths = !paths                     ? 0
                   : !strcmp(paths, "gpu")    ? 1
                   : !strcmp(paths, "tiled")  ? 2
                   : !strcmp(paths, "dot")    ? 3
                   : !strcmp(paths, "splitk") ? 4
                                              : 0;
  if (!dg_vk_choose_memory(vd)) {
    snprintf(why, why_size, "no usable memory type");
    goto fail;
  }
  char dir[900];
  if ((r = dg_vk_pipelines_init(vd)) != VK_SUCCESS ||
      (r = dg_vk_cache_open(vd, cache_dir(opts, dir, sizeof dir))) !=
          VK_SUCCESS) {
    snprintf(why, why_size, "pipeline setup failed: %s", dg_vk_result_name(r));
    goto fail;
  }
  vd->cost_type = vd->props.deviceType;
  snprintf(vd->label, sizeof vd->label, "vulkan (%.100s)",
           vd->props.deviceName);
  /* Remember the driver strings for the device info. */
  snprintf(vd->driver_text, sizeof vd->driver_text, "%.40s %.60s",
           has_driver_props ? drv.driverName : "driver",
           has_driver_props ? drv.driverInfo : "");
  vd->coopmat_nv2 = coop_nv2;
  return vd;
fail:
  device_free(vd);
  return NULL;
}

static void fill_info(dg_device *d, vk_device *vd) {
  d->info.kind = DG_DEVICE_VULKAN;
  snprintf(d->info.name, sizeof d->info.name, "%.90s (%s)",
           vd->props.deviceName, type_name(vd->props.deviceType));
  uint32_t v = vd->props.apiVersion;
  /* Cooperative matrix extensions listed, e.g. " coopmat(khr nv nv2)";
   * "khr-off" where an old validation layer turned the KHR path off. */
  char kinds[24], coop[40] = "";
  snprintf(kinds, sizeof kinds, "%s%s%s",
           !vd->coopmat_khr         ? ""
           : vd->coop_khr_layer_old ? " khr-off"
                                    : " khr",
           vd->coopmat_nv ? " nv" : "", vd->coopmat_nv2 ? " nv2" : "");
  if (kinds[0])
    snprintf(coop, sizeof coop, " coopmat(%s)", kinds + 1);
  char feat[112], mps[16] = "";
  if (vd->multiprocessors)
    snprintf(mps, sizeof mps, " %usm", vd->multiprocessors);
  snprintf(feat, sizeof feat, "%s%s%s%s%s%s sg%u smem%uK%s",
           vd->f16 ? " fp16" : "", vd->f16 ? " s16" : "",
           vd->int8 ? " s8 i8" : "", vd->int64 ? " i64" : "",
           vd->int_dot_fast ? " dot"
           : vd->int_dot    ? " dot(slow)"
                            : "",
           coop, vd->subgroup_size,
           vd->props.limits.maxComputeSharedMemorySize / 1024, mps);
  /* Composed at full length, then cut to the field (the features last). */
  char text[320];
  snprintf(text, sizeof text, "%s (0x%x), Vulkan %u.%u.%u;%s", vd->driver_text,
           vd->props.driverVersion, VK_API_VERSION_MAJOR(v),
           VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v), feat);
  snprintf(d->info.driver, sizeof d->info.driver, "%.*s",
           (int)sizeof d->info.driver - 1, text);
  d->info.dtypes = 1u << DG_DTYPE_F32 | 1u << DG_DTYPE_I32;
  if (vd->f16)
    d->info.dtypes |= 1u << DG_DTYPE_F16;
  if (vd->int8)
    d->info.dtypes |=
        1u << DG_DTYPE_I8 | 1u << DG_DTYPE_U8 | 1u << DG_DTYPE_BOOL;
  if (vd->int64)
    d->info.dtypes |= 1u << DG_DTYPE_I64;
  d->info.int8_max_lsb_deviation = 0; /* bit-exact */
  d->info.is_simulator = 0;
  d->info.cpu_hosted = vd->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

static dg_status vk_enumerate(const dg_context_options *opts,
                              dg_device_list *out, char *why, size_t why_size) {
  uint32_t api;
  vk_instance *vi = instance_create(opts, &api, why, why_size);
  if (!vi)
    return DG_OK;
  int before = out->count;
  snprintf(why, why_size, "the Vulkan driver lists no physical device");
  uint32_t n = 0;
  VkPhysicalDevice *phys = NULL;
  dg_status st = DG_OK;
  if (vkEnumeratePhysicalDevices(vi->instance, &n, NULL) == VK_SUCCESS && n &&
      (phys = calloc(n, sizeof *phys)) &&
      vkEnumeratePhysicalDevices(vi->instance, &n, phys) >= 0) {
    for (uint32_t i = 0; i < n; i++) {
      char why_dev[160] = "";
      vk_device *vd =
          device_open(vi, phys[i], api, opts, why_dev, sizeof why_dev);
      if (!vd) {
        snprintf(why, why_size, "physical device %u skipped: %s", i, why_dev);
        if (opts->log && opts->log_level >= DG_LOG_INFO) {
          char msg[256];
          snprintf(msg, sizeof msg, "vulkan: physical device %u skipped: %s", i,
                   why_dev);
          opts->log(opts->log_user, DG_LOG_INFO, msg);
        }
        continue;
      }
      dg_device *d = dg_device_list_add(out, &vk_vtbl);
      if (!d) {
        device_free(vd);
        st = DG_ERROR_OUT_OF_MEMORY;
        break;
      }
      d->impl = vd;
      fill_info(d, vd);
      dg_vk_cost_init(d);
    }
  }
  free(phys);
  instance_release(vi); /* devices hold their own references */
  if (out->count > before)
    why[0] = 0;
  return st;
}

static int vk_runs_op(dg_device *dev, dg_op op) {
  return dg_vk_runs_op(dev->impl, op);
}

static const dg_target_vtbl vk_vtbl = {
    vk_runs_op,        dg_vk_supports,    dg_vk_estimate, dg_vk_compile,
    dg_vk_run,         dg_vk_release,     vk_destroy,     dg_vk_buffer_new,
    dg_vk_buffer_copy, dg_vk_buffer_free, dg_vk_submit,   dg_vk_wait};

const dg_target dg_target_vulkan = {"vulkan", DG_DEVICE_VULKAN, vk_enumerate};

void dg_vk_pretend_device_type(dg_device *dev, int type) {
  vk_device *vd = vk_of(dev);
  if (!vd)
    return;
  vd->cost_type = type < 0 ? vd->props.deviceType : (VkPhysicalDeviceType)type;
  dg_vk_cost_init(dev);
}
