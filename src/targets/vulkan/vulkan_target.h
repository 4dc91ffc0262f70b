/* Internal hooks of the Vulkan target for tests and tools (not part of the
 * public API). All counters are process-wide. */
#ifndef DG_VULKAN_TARGET_H
#define DG_VULKAN_TARGET_H

#include <stddef.h>

typedef struct dg_device dg_device;

/* Validation-layer warnings and errors reported so far (validation is on
 * when DG_VULKAN_VALIDATION=1 or VK_INSTANCE_LAYERS names
 * VK_LAYER_KHRONOS_validation at context creation). */
int dg_vk_validation_messages(void);
/* Whether the contexts created so far ran with the validation layer. */
int dg_vk_validation_enabled(void);
/* vkQueueSubmit calls made by segment runs so far. */
int dg_vk_submit_count(void);
/* Segment inputs and outputs copied between the caller's host memory and
 * the device (staged or mapped) by runs so far: a dg_buffer binding
 * copies none. */
int dg_vk_staged_count(void);
/* Segment command buffers recorded so far: once at compile, and again
 * when a run binds other dg_buffers than the last. */
int dg_vk_record_count(void);
/* dg_buffers destroyed while a timed-out run or copy might still use
 * them: their memory kept until their device's destroy (graph.h). */
int dg_vk_buffers_kept(void);
/* Devices destroyed (with their context) while a timed-out run was still
 * running on them after a further device_timeout_ms: left allocated, not
 * destroyed, for the process's lifetime (graph.h). */
int dg_vk_abandoned_count(void);
/* Waits without a bound for the abandoned devices' work and destroys
 * them (tests call it so that the sanitizer's leak check sees them go). */
void dg_vk_abandoned_finish(void);
/* Restarts the count that DG_TEST_VULKAN_FAIL_ALLOC=N refers to. */
void dg_vk_reset_alloc_count(void);
/* vkAllocateMemory calls so far (since the last reset). */
int dg_vk_alloc_count(void);

/* For a Vulkan device of a context: bytes of pipeline cache accepted from
 * disk when it was opened (0: none, or the file was corrupt or foreign),
 * and the cache file's path ("" when caching is off). -1 / NULL when dev is
 * not a Vulkan device. */
long dg_vk_cache_loaded_bytes(const dg_device *dev);
const char *dg_vk_cache_path(const dg_device *dev);
/* Test hook for the cost model: makes the device estimate as if it were
 * of this VkPhysicalDeviceType (1 integrated, 2 discrete, 4 cpu; -1: its
 * own type again). */
void dg_vk_pretend_device_type(dg_device *dev, int type);

#endif
