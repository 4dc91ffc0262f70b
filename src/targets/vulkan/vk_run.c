/* Running a compiled segment (vk_segment.c records it): copy the inputs
 * into the staging (or unified) buffer, submit the one command buffer,
 * wait on its fence no longer than the context's time-out, copy the
 * outputs out. And releasing one, which must not destroy what a timed-out
 * run still uses, nor wait for it longer than the time-out. */
#include "vk_segment.h"

#include "core/clock.h"

#include <stdlib.h>
#include <string.h>

static void segment_free(vk_segment *s) {
  vk_device *vd = s->vd;
  if (s->queries)
    vkDestroyQueryPool(vd->dev, s->queries, NULL);
  if (s->fence)
    vkDestroyFence(vd->dev, s->fence, NULL);
  if (s->cmd_pool)
    vkDestroyCommandPool(vd->dev, s->cmd_pool, NULL); /* frees s->cmd */
  if (s->pool)
    vkDestroyDescriptorPool(vd->dev, s->pool, NULL);
  dg_vk_buffer_destroy(vd, &s->dev_buf);
  dg_vk_buffer_destroy(vd, &s->stage_buf);
  for (int i = 0; s->work && i < s->node_count; i++)
    dg_vk_work_release(&s->work[i]);
  free(s->work);
  free(s->param_offset);
  free(s->slot_of);
  free(s->alias);
  free(s->slots);
  free(s->nodes);
  free(s->reads);
  free(s->writes);
  free(s->ts);
  free(s->bound);
  dg_segment_io_free(&s->io);
  free(s);
}

/* A run that timed out may still be on the queue: its objects can go only
 * once the fence signals. The release waits for that no longer than the
 * context's time-out (graph.h, device_timeout_ms), then parks the segment
 * on the device for device_free; parking never fails for memory (it waits
 * without a bound instead, the only safe choice left). */
void dg_vk_release(void *state) {
  vk_segment *s = state;
  if (!s)
    return;
  vk_device *vd = s->vd;
  if (s->in_flight && vkWaitForFences(vd->dev, 1, &s->fence, VK_TRUE,
                                      vd->timeout_ns) != VK_SUCCESS) {
    pthread_mutex_lock(&vd->lock);
    bool room = vd->parked_count < vd->parked_cap;
    if (!room) {
      int cap = vd->parked_cap ? 2 * vd->parked_cap : 4;
      void **p = realloc(vd->parked, sizeof *p * (size_t)cap);
      if (p)
        vd->parked = p, vd->parked_cap = cap, room = true;
    }
    if (room)
      vd->parked[vd->parked_count++] = s;
    pthread_mutex_unlock(&vd->lock);
    if (room)
      return;
    vkWaitForFences(vd->dev, 1, &s->fence, VK_TRUE, UINT64_MAX);
  }
  segment_free(s);
}

int dg_vk_reap_parked(vk_device *vd, uint64_t budget_ns) {
  bool bounded = budget_ns < (uint64_t)INT64_MAX / 2;
  int64_t end = bounded ? dg_clock_ns() + (int64_t)budget_ns : 0;
  pthread_mutex_lock(&vd->lock);
  int kept = 0;
  for (int i = 0; i < vd->parked_count; i++) {
    vk_segment *s = vd->parked[i];
    int64_t left = end - dg_clock_ns();
    uint64_t wait = !bounded ? UINT64_MAX : left > 0 ? (uint64_t)left : 0;
    if (vkWaitForFences(vd->dev, 1, &s->fence, VK_TRUE, wait) == VK_SUCCESS)
      segment_free(s);
    else
      vd->parked[kept++] = s;
  }
  vd->parked_count = kept;
  pthread_mutex_unlock(&vd->lock);
  return kept;
}

/* ---- run ---- */

/* Points s->bound at this run's dg_buffers (resident: per tensor id, NULL
 * for none) and records the command buffer again where they changed: a
 * caller binding the same buffers every run records once. */
static dg_status bind_resident(vk_segment *s, void *const *resident,
                               dg_diagnostic *diag) {
  bool changed = s->stale;
  for (int pass = 0; pass < 2; pass++) {
    const uint32_t *ids = pass ? s->io.outputs : s->io.inputs;
    int n = pass ? s->io.output_count : s->io.input_count;
    for (int i = 0; i < n; i++) {
      vk_resident *want = resident ? resident[ids[i]] : NULL;
      int slot = s->slot_of[ids[i]];
      if (s->bound[slot] != want)
        s->bound[slot] = want, changed = true;
    }
  }
  return changed ? dg_vk_record(s, diag) : DG_OK;
}

/* After a time-out the device may still write the bound buffers: their
 * destroy must leave them to the device's (vk_buffer.c). */
static void mark_bound_busy(vk_segment *s) {
  for (int i = 0; i < s->slot_count; i++)
    if (s->bound[i])
      atomic_store(&s->bound[i]->busy, true);
}

static void *host_side(vk_segment *s, uint32_t id) {
  const vk_slot *sl = &s->slots[s->slot_of[id]];
  return s->vd->unified ? (char *)s->dev_buf.map + sl->offset
                        : (char *)s->stage_buf.map + sl->stage_offset;
}

/* Waits for the run's fence, polling it for up to vd->spin_ns before
 * blocking (see vk_device.c). */
static VkResult wait_fence(vk_device *vd, VkFence fence) {
  int64_t t0 = dg_clock_ns();
  VkResult r;
  while ((r = vkGetFenceStatus(vd->dev, fence)) == VK_NOT_READY &&
         dg_clock_ns() - t0 < vd->spin_ns)
    ;
  if (r == VK_NOT_READY)
    r = vkWaitForFences(vd->dev, 1, &fence, VK_TRUE, vd->timeout_ns);
  return r;
}

dg_status dg_vk_submit(void *state, void *const *host, void *const *resident,
                       dg_diagnostic *diag) {
  vk_segment *s = state;
  vk_device *vd = s->vd;
  if (atomic_load(&vd->lost))
    return dg_vk_fail(vd, diag, NULL, -1, "vkQueueSubmit",
                      VK_ERROR_DEVICE_LOST);
  /* The last run timed out: its work must end before this one reuses the
   * command buffer, fence and buffers. */
  if (s->in_flight) {
    VkResult w = wait_fence(vd, s->fence);
    if (w == VK_SUCCESS)
      w = vkResetFences(vd->dev, 1, &s->fence);
    if (w != VK_SUCCESS)
      return dg_vk_fail(vd, diag, NULL, -1,
                        "vkWaitForFences (the previous run, still running)", w);
    s->in_flight = false;
  }
  dg_status st = bind_resident(s, resident, diag);
  if (st != DG_OK)
    return st;
  for (int i = 0; i < s->io.input_count; i++) {
    uint32_t id = s->io.inputs[i];
    if (dg_vk_bound(s, id))
      continue;
    memcpy(host_side(s, id), host[id],
           dg_desc_bytes(&dg_ir_tensor(s->ir, id)->desc));
    atomic_fetch_add(&dg_vk_staged, 1);
  }
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                     .commandBufferCount = 1,
                     .pCommandBuffers = &s->cmd};
  pthread_mutex_lock(&vd->lock);
  VkResult r = vkQueueSubmit(vd->queue, 1, &si, s->fence);
  pthread_mutex_unlock(&vd->lock);
  if (r != VK_SUCCESS)
    return dg_vk_fail(vd, diag, NULL, -1, "vkQueueSubmit", r);
  atomic_fetch_add(&dg_vk_submits, 1);
  s->in_flight = true;
  return DG_OK;
}

dg_status dg_vk_wait(void *state, void *const *host, double *node_us,
                     dg_diagnostic *diag) {
  vk_segment *s = state;
  vk_device *vd = s->vd;
  VkResult r = wait_fence(vd, s->fence);
  if (r != VK_SUCCESS) {
    mark_bound_busy(s);
    return dg_vk_fail(vd, diag, NULL, -1,
                      r == VK_TIMEOUT ? "vkWaitForFences (past "
                                        "dg_context_options.device_timeout_ms)"
                                      : "vkWaitForFences",
                      r);
  }
  s->in_flight = false;
  r = vkResetFences(vd->dev, 1, &s->fence);
  if (r != VK_SUCCESS)
    return dg_vk_fail(vd, diag, NULL, -1, "vkResetFences", r);
  for (int i = 0; host && i < s->io.output_count; i++) {
    uint32_t id = s->io.outputs[i];
    if (dg_vk_bound(s, id))
      continue;
    memcpy(host[id], host_side(s, id),
           dg_desc_bytes(&dg_ir_tensor(s->ir, id)->desc));
    atomic_fetch_add(&dg_vk_staged, 1);
  }
  if (node_us && s->queries) {
    uint64_t *ts = s->ts;
    r = vkGetQueryPoolResults(
        vd->dev, s->queries, 0, (uint32_t)s->node_count + 1,
        sizeof(uint64_t) * ((size_t)s->node_count + 1), ts, sizeof(uint64_t),
        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r == VK_SUCCESS)
      for (int i = 0; i < s->node_count; i++) {
        uint64_t t = ((ts[i + 1] - ts[i]) & vd->timestamp_mask);
        node_us[i] = (double)t * vd->timestamp_ns / 1e3;
      }
  }
  return DG_OK;
}

dg_status dg_vk_run(void *state, void *const *host, void *const *resident,
                    double *node_us, dg_diagnostic *diag) {
  dg_status st = dg_vk_submit(state, host, resident, diag);
  return st == DG_OK ? dg_vk_wait(state, host, node_us, diag) : st;
}
