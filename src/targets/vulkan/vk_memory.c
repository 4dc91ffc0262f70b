/* Device memory: the choice of memory types, buffers bound to their own
 * allocation, and the allocation-failure injection used by the tests. */
#include "core/env.h"
#include "vk_internal.h"

#include <stdlib.h>

static atomic_int alloc_calls;

void dg_vk_reset_alloc_count(void) { atomic_store(&alloc_calls, 0); }
int dg_vk_alloc_count(void) { return atomic_load(&alloc_calls); }

VkResult dg_vk_allocate(vk_device *vd, VkDeviceSize size, uint32_t type,
                        VkDeviceMemory *out) {
  int call = atomic_fetch_add(&alloc_calls, 1) + 1;
  const char *fail = dg_env(DG_ENV_TEST_VULKAN_FAIL_ALLOC);
  if (fail && *fail && atoi(fail) == call) {
    *out = VK_NULL_HANDLE;
    return VK_ERROR_OUT_OF_DEVICE_MEMORY;
  }
  VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                             .allocationSize = size,
                             .memoryTypeIndex = type};
  return vkAllocateMemory(vd->dev, &ai, NULL, out);
}

/* A type allowed by bits with at least the flags of type want (the
 * preferred one when allowed). */
static int type_like(const vk_device *vd, uint32_t bits, uint32_t want) {
  if (bits & (1u << want))
    return (int)want;
  VkMemoryPropertyFlags f = vd->mem.memoryTypes[want].propertyFlags;
  for (uint32_t i = 0; i < vd->mem.memoryTypeCount; i++)
    if ((bits & (1u << i)) && (vd->mem.memoryTypes[i].propertyFlags & f) == f)
      return (int)i;
  return -1;
}

VkResult dg_vk_buffer_create(vk_device *vd, VkDeviceSize size, uint32_t type,
                             VkBufferUsageFlags usage, vk_buffer *out) {
  out->buffer = VK_NULL_HANDLE;
  out->memory = VK_NULL_HANDLE;
  out->map = NULL;
  out->size = size;
  VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                           .size = size,
                           .usage = usage,
                           .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = vkCreateBuffer(vd->dev, &bi, NULL, &out->buffer);
  if (r != VK_SUCCESS)
    return r;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(vd->dev, out->buffer, &req);
  int t = type_like(vd, req.memoryTypeBits, type);
  if (t < 0) {
    dg_vk_buffer_destroy(vd, out);
    return VK_ERROR_OUT_OF_DEVICE_MEMORY;
  }
  r = dg_vk_allocate(vd, req.size, (uint32_t)t, &out->memory);
  if (r == VK_SUCCESS)
    r = vkBindBufferMemory(vd->dev, out->buffer, out->memory, 0);
  if (r == VK_SUCCESS && (vd->mem.memoryTypes[t].propertyFlags &
                          VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
    r = vkMapMemory(vd->dev, out->memory, 0, VK_WHOLE_SIZE, 0, &out->map);
  if (r != VK_SUCCESS)
    dg_vk_buffer_destroy(vd, out);
  return r;
}

void dg_vk_buffer_destroy(vk_device *vd, vk_buffer *b) {
  if (b->buffer)
    vkDestroyBuffer(vd->dev, b->buffer, NULL);
  if (b->memory)
    vkFreeMemory(vd->dev, b->memory, NULL); /* unmaps too */
  b->buffer = VK_NULL_HANDLE;
  b->memory = VK_NULL_HANDLE;
  b->map = NULL;
}

static int find_type(const vk_device *vd, VkMemoryPropertyFlags want,
                     VkMemoryPropertyFlags avoid) {
  for (uint32_t i = 0; i < vd->mem.memoryTypeCount; i++) {
    VkMemoryPropertyFlags f = vd->mem.memoryTypes[i].propertyFlags;
    if ((f & want) == want && !(f & avoid))
      return (int)i;
  }
  return -1;
}

bool dg_vk_choose_memory(vk_device *vd) {
  const VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                              host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                              cached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  /* A CPU or integrated device whose device-local memory the host can map
   * is unified: tensors live there and the host reads and writes them
   * directly (no staging copies). On a discrete GPU the host-visible
   * device-local type is the small BAR window: not for tensors. */
  bool shared =
      (vd->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ||
       vd->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU) &&
      !vd->test_paths;
  int t = -1;
  if (shared) {
    t = find_type(vd, local | host | cached, 0);
    if (t < 0)
      t = find_type(vd, local | host, 0);
  }
  vd->unified = t >= 0;
  if (t < 0)
    t = find_type(vd, local, 0);
  if (t < 0)
    t = find_type(vd, 0, 0);
  int s = find_type(vd, host | cached, 0);
  if (s < 0)
    s = find_type(vd, host, 0);
  if (t < 0 || s < 0)
    return false;
  vd->type_device = (uint32_t)t;
  vd->type_staging = (uint32_t)s;
  return true;
}
