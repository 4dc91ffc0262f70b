/* Device buffers (graph.h's dg_buffer) on a Vulkan device: one VkBuffer
 * in the tensors' memory type, which segments bind in place of their own
 * regions (vk_segment.c) and the host reads and writes through a staging
 * buffer (or directly where the memory is host-visible: a unified
 * device). What a timed-out run or copy may still use is never destroyed
 * under the device: it waits on the device's leftovers list until the
 * device is idle at its destroy. */
#include "vk_segment.h"

#include <stdlib.h>
#include <string.h>

static atomic_int kept;
int dg_vk_buffers_kept(void) { return atomic_load(&kept); }

static VkDeviceSize round64(size_t v) { return ((VkDeviceSize)v + 63) & ~63u; }

dg_status dg_vk_buffer_new(dg_device *dev, size_t bytes, void **out,
                           dg_diagnostic *diag) {
  vk_device *vd = dev->impl;
  *out = NULL;
  vk_resident *r = calloc(1, sizeof *r);
  if (!r) {
    dg_diag_set(diag, DG_ERROR_OUT_OF_MEMORY, -1, NULL, "dg_buffer_create",
                NULL, NULL, NULL, "%s: out of host memory", vd->label);
    return DG_ERROR_OUT_OF_MEMORY;
  }
  /* Rounded so that a descriptor of the slot's (4-aligned) size fits. */
  VkResult res = dg_vk_buffer_create(vd, round64(bytes), vd->type_device,
                                     VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                         VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                         VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                     &r->b);
  if (res != VK_SUCCESS) {
    free(r);
    return dg_vk_fail(vd, diag, NULL, -1, "vkAllocateMemory (dg_buffer)", res);
  }
  r->bytes = bytes;
  atomic_init(&r->busy, false);
  *out = r;
  return DG_OK;
}

static void leftover_add(vk_device *vd, vk_leftover *l) {
  pthread_mutex_lock(&vd->lock);
  l->next = vd->leftovers;
  vd->leftovers = l;
  pthread_mutex_unlock(&vd->lock);
}

void dg_vk_leftovers_free(vk_device *vd) {
  vk_leftover *l = vd->leftovers;
  vd->leftovers = NULL;
  while (l) {
    vk_leftover *next = l->next;
    if (l->fence)
      vkDestroyFence(vd->dev, l->fence, NULL);
    if (l->pool)
      vkDestroyCommandPool(vd->dev, l->pool, NULL);
    dg_vk_buffer_destroy(vd, &l->buf);
    free(l);
    l = next;
  }
}

void dg_vk_buffer_free(dg_device *dev, void *buf) {
  vk_device *vd = dev->impl;
  vk_resident *r = buf;
  vk_leftover *l = atomic_load(&r->busy) ? calloc(1, sizeof *l) : NULL;
  if (l) { /* a timed-out run may still write it */
    l->buf = r->b;
    leftover_add(vd, l);
    atomic_fetch_add(&kept, 1);
  } else if (!atomic_load(&r->busy)) {
    dg_vk_buffer_destroy(vd, &r->b);
  } /* else: no memory even to remember it; kept allocated */
  free(r);
}

/* One copy between the staging buffer and the resident one, submitted
 * and waited for (bounded). On a time-out the transient objects are left
 * to the device's destroy. */
static dg_status staged_copy(vk_device *vd, vk_resident *r, vk_buffer *stage,
                             bool to_device, dg_diagnostic *diag) {
  VkCommandPool pool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkCommandPoolCreateInfo pi = {.sType =
                                    VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                .queueFamilyIndex = vd->queue_family};
  const char *call = "vkCreateCommandPool";
  VkResult res = vkCreateCommandPool(vd->dev, &pi, NULL, &pool);
  if (res == VK_SUCCESS) {
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    call = "vkCreateFence";
    res = vkCreateFence(vd->dev, &fi, NULL, &fence);
  }
  if (res == VK_SUCCESS) {
    VkCommandBufferAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1};
    call = "vkAllocateCommandBuffers";
    res = vkAllocateCommandBuffers(vd->dev, &ai, &cb);
  }
  if (res == VK_SUCCESS) {
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    call = "vkBeginCommandBuffer";
    res = vkBeginCommandBuffer(cb, &bi);
  }
  if (res == VK_SUCCESS) {
    VkBufferCopy region = {0, 0, r->bytes};
    if (to_device)
      vkCmdCopyBuffer(cb, stage->buffer, r->b.buffer, 1, &region);
    else
      vkCmdCopyBuffer(cb, r->b.buffer, stage->buffer, 1, &region);
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_HOST_READ_BIT |
                                           VK_ACCESS_SHADER_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT |
                             VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         0, 1, &mb, 0, NULL, 0, NULL);
    call = "vkEndCommandBuffer";
    res = vkEndCommandBuffer(cb);
  }
  bool late = false;
  if (res == VK_SUCCESS) {
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &cb};
    call = "vkQueueSubmit (dg_buffer copy)";
    pthread_mutex_lock(&vd->lock);
    res = vkQueueSubmit(vd->queue, 1, &si, fence);
    pthread_mutex_unlock(&vd->lock);
    if (res == VK_SUCCESS) {
      call = "vkWaitForFences (dg_buffer copy, past "
             "dg_context_options.device_timeout_ms)";
      res = vkWaitForFences(vd->dev, 1, &fence, VK_TRUE, vd->timeout_ns);
      late = res != VK_SUCCESS;
    }
  }
  vk_leftover *l = late ? calloc(1, sizeof *l) : NULL;
  if (l) {
    l->buf = *stage, l->pool = pool, l->fence = fence;
    stage->buffer = VK_NULL_HANDLE, stage->memory = VK_NULL_HANDLE;
    leftover_add(vd, l);
    atomic_store(&r->busy, true);
  } else if (late) {
    /* Nowhere to park them: wait, the only safe choice left. */
    vkWaitForFences(vd->dev, 1, &fence, VK_TRUE, UINT64_MAX);
  }
  if (!l) {
    if (fence)
      vkDestroyFence(vd->dev, fence, NULL);
    if (pool)
      vkDestroyCommandPool(vd->dev, pool, NULL);
  }
  return res == VK_SUCCESS ? DG_OK : dg_vk_fail(vd, diag, NULL, -1, call, res);
}

dg_status dg_vk_buffer_copy(dg_device *dev, void *buf, void *host, size_t bytes,
                            bool to_device, dg_diagnostic *diag) {
  vk_device *vd = dev->impl;
  vk_resident *r = buf;
  if (atomic_load(&vd->lost))
    return dg_vk_fail(vd, diag, NULL, -1, "dg_buffer copy",
                      VK_ERROR_DEVICE_LOST);
  if (r->b.map) { /* host-visible and coherent: a plain copy */
    if (to_device)
      memcpy(r->b.map, host, bytes);
    else
      memcpy(host, r->b.map, bytes);
    return DG_OK;
  }
  vk_buffer stage;
  VkResult res = dg_vk_buffer_create(vd, round64(bytes), vd->type_staging,
                                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                         VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                     &stage);
  if (res != VK_SUCCESS)
    return dg_vk_fail(vd, diag, NULL, -1,
                      "vkAllocateMemory (dg_buffer staging)", res);
  if (to_device)
    memcpy(stage.map, host, bytes);
  dg_status st = staged_copy(vd, r, &stage, to_device, diag);
  if (st == DG_OK && !to_device)
    memcpy(host, stage.map, bytes);
  dg_vk_buffer_destroy(vd, &stage); /* a no-op when parked */
  return st;
}
