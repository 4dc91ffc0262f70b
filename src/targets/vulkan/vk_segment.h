/* The Vulkan target's compiled segment, shared by vk_segment.c (compile:
 * memory plan, uploads, recording) and vk_run.c (run, release). */
#ifndef DG_VK_SEGMENT_H
#define DG_VK_SEGMENT_H

#include "vk_internal.h"

typedef struct vk_slot {
  VkDeviceSize offset, size; /* in the device buffer */
  VkDeviceSize stage_offset; /* in the staging buffer (inputs, outputs) */
} vk_slot;

typedef struct vk_range {
  VkDeviceSize lo, hi;
} vk_range;

typedef struct vk_segment {
  vk_device *vd;
  const dg_ir *ir;
  int node_count;
  int *nodes;
  vk_work *work;
  VkDeviceSize *param_offset; /* per node, for its parameter blob */
  int *slot_of;               /* per tensor id: index into slots, -1 */
  int *alias; /* per tensor id: the tensor whose slot it shares (itself,
                 or a reshape's input: plan_memory's views) */
  vk_slot *slots;
  int slot_count;
  vk_range scratch; /* shared by every node's pre-pass (vk_work) */
  dg_segment_io io;
  vk_buffer dev_buf, stage_buf;
  VkDescriptorPool pool;
  VkCommandPool cmd_pool;
  VkCommandBuffer cmd;
  VkFence fence;
  VkQueryPool queries;
  /* Pending accesses since the last barrier, while recording. */
  vk_range *reads, *writes;
  int read_count, write_count, read_cap, write_cap;
  uint64_t *ts;   /* timestamps read back */
  bool in_flight; /* submitted and not yet waited for */
  /* Per slot: the dg_buffer bound in place of its region of dev_buf when
   * the command buffer was recorded (NULL: the region); a run binding
   * others records it again (dg_vk_record). */
  vk_resident **bound;
  bool stale; /* the recording failed half way: record before running */
} vk_segment;

/* The dg_buffer bound to boundary tensor id for the recording, or NULL
 * (its region of dev_buf). */
static inline vk_resident *dg_vk_bound(const vk_segment *s, uint32_t id) {
  return s->bound ? s->bound[s->slot_of[id]] : NULL;
}

/* Records the segment's command buffer (again: resetting its pool and
 * descriptor sets first) for the buffers in s->bound. Does not release s
 * on failure. */
dg_status dg_vk_record(vk_segment *s, dg_diagnostic *diag);

#endif
