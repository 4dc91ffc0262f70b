/* A compiled segment: its memory plan, descriptor sets and ONE command
 * buffer recorded at compile time; a run copies inputs in, submits once,
 * waits on one fence and copies outputs out.
 *
 * Memory plan. Every tensor the segment touches gets a region of one
 * device buffer (aligned for storage-buffer descriptors). Inputs, outputs,
 * constants and the nodes' parameter blobs keep their own regions;
 * tensors produced and consumed inside the segment share bytes when their
 * lifetimes (producer to last consumer, in segment order) do not overlap.
 * On a unified device (CPU-type or integrated, device-local memory the
 * host can map) the host reads and writes that buffer directly; otherwise
 * inputs and outputs also get regions of a host-visible staging buffer and
 * the command buffer starts and ends with the copies.
 *
 * Barriers. A global memory barrier is recorded before a node only when it
 * reads bytes written since the last barrier (data flow) or writes bytes
 * read or written since then (reuse of a shared region). */
#include "vk_segment.h"

#include "core/clock.h"
#include "core/memplan.h"

#include <stdlib.h>
#include <string.h>

#define DUMMY_BYTES 64

static VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) {
  return (v + a - 1) / a * a;
}

static dg_status oom(vk_segment *s, dg_diagnostic *diag, const char *what) {
  dg_diag_set(diag, DG_ERROR_OUT_OF_MEMORY, -1, NULL, "compile", NULL, NULL,
              NULL, "%s: out of host memory (%s)", s->vd->label, what);
  dg_vk_release(s);
  return DG_ERROR_OUT_OF_MEMORY;
}

static dg_status fail(vk_segment *s, dg_diagnostic *diag, int node,
                      const char *call, VkResult r) {
  dg_status st = dg_vk_fail(s->vd, diag, s->ir, node, call, r);
  dg_vk_release(s);
  return st;
}

/* ---- memory plan ---- */

static bool place_params(vk_segment *s, VkDeviceSize align,
                         VkDeviceSize *dev_bytes);

/* Tensors through memplan.h, then the parameter blobs and scratch. */
static bool plan_memory(vk_segment *s, VkDeviceSize *dev_bytes,
                        VkDeviceSize *stage_bytes) {
  const dg_ir *ir = s->ir;
  VkDeviceSize align = s->vd->props.limits.minStorageBufferOffsetAlignment;
  if (align < 64)
    align = 64;
  int T = ir->tensor_count;
  s->slot_of = malloc(sizeof(int) * (size_t)(T + 1));
  s->alias = malloc(sizeof(int) * (size_t)(T + 1));
  s->slots = calloc((size_t)T + 1, sizeof *s->slots);
  int *first = malloc(sizeof(int) * (size_t)(T + 1));
  int *last = malloc(sizeof(int) * (size_t)(T + 1));
  uint32_t *order = malloc(sizeof(uint32_t) * (size_t)(T + 1));
  dg_mem_block *blocks = malloc(sizeof *blocks * (size_t)(T + 1));
  bool ok =
      s->slot_of && s->alias && s->slots && first && last && order && blocks;
  if (ok) {
    for (int t = 0; t <= T; t++)
      s->slot_of[t] = -1, s->alias[t] = t;
    /* Tensors in order of first use; what crosses the boundary is pinned
     * (uploaded once, or staged while other tensors are live). */
    int touched =
        dg_memplan_lifetimes(ir, s->nodes, s->node_count, first, last, order);
    /* A reshape's output is its input's bytes (a view): one slot, live
     * as long as either, and nothing recorded for the node. Not across
     * the boundary, where each tensor has its own staging or buffer. */
    for (int i = 0; i < s->node_count; i++) {
      const dg_node *n = &ir->nodes[s->nodes[i]];
      uint32_t in = n->inputs[0], out = n->output;
      if (n->op != DG_OP_RESHAPE || s->io.role[in] || s->io.role[out])
        continue;
      uint32_t r = (uint32_t)s->alias[in];
      s->alias[out] = (int)r;
      first[r] = first[out] < first[r] ? first[out] : first[r];
      last[r] = last[out] > last[r] ? last[out] : last[r];
    }
    int count = 0;
    for (int c = 0; c < touched; c++)
      if (s->alias[order[c]] == (int)order[c])
        order[count++] = order[c];
    for (int c = 0; c < count; c++) {
      uint32_t id = order[c];
      blocks[c] = (dg_mem_block){
          align_up(dg_desc_bytes(&dg_ir_tensor(ir, id)->desc), 4), first[id],
          last[id], s->io.role[id] != 0, 0};
    }
    bool oom = false;
    VkDeviceSize top =
        dg_memplan_place(blocks, count, (size_t)align, DUMMY_BYTES, &oom);
    ok = !oom && top != SIZE_MAX;
    VkDeviceSize stage = 0;
    for (int c = 0; ok && c < count; c++) {
      uint32_t id = order[c];
      s->slot_of[id] = s->slot_count;
      vk_slot *sl = &s->slots[s->slot_count++];
      sl->offset = blocks[c].offset;
      sl->size = blocks[c].size;
      if (!s->vd->unified && (s->io.role[id] & (DG_IO_INPUT | DG_IO_OUTPUT))) {
        sl->stage_offset = stage;
        stage = align_up(stage + sl->size, 64);
      }
    }
    for (int t = 1; ok && t <= T; t++)
      if (s->alias[t] != t)
        s->slot_of[t] = s->slot_of[s->alias[t]];
    *dev_bytes = top;
    *stage_bytes = stage;
  }
  free(first), free(last), free(order), free(blocks);
  return ok ? place_params(s, align, dev_bytes) : false;
}

/* Parameter blobs after the tensors, then the scratch region: nodes run
 * one after another, so the largest pre-pass sizes it. */
static bool place_params(vk_segment *s, VkDeviceSize align,
                         VkDeviceSize *dev_bytes) {
  VkDeviceSize top = *dev_bytes;
  for (int i = 0; i < s->node_count; i++)
    if (s->work[i].params_bytes) {
      s->param_offset[i] = align_up(top, align);
      top = s->param_offset[i] + align_up(s->work[i].params_bytes, 4);
    }
  VkDeviceSize scratch = 0;
  for (int i = 0; i < s->node_count; i++)
    if (s->work[i].scratch_bytes > scratch)
      scratch = s->work[i].scratch_bytes;
  if (scratch) {
    s->scratch.lo = align_up(top, align);
    s->scratch.hi = s->scratch.lo + align_up(scratch, 4);
    top = s->scratch.hi;
  }
  *dev_bytes = top;
  return true;
}

/* ---- uploads done once ---- */

static const void *constant_data(const vk_segment *s, uint32_t id) {
  const dg_tensor_info *t = dg_ir_tensor(s->ir, id);
  return t->constant ? t->constant->data : NULL;
}

/* Constants and parameter blobs: written straight into unified memory, or
 * through a temporary staging buffer and one submit. */
static dg_status upload_constants(vk_segment *s, dg_diagnostic *diag) {
  vk_device *vd = s->vd;
  if (vd->unified) {
    for (int c = 0; c < s->io.constant_count; c++) {
      uint32_t id = s->io.constants[c];
      memcpy((char *)s->dev_buf.map + s->slots[s->slot_of[id]].offset,
             constant_data(s, id),
             dg_desc_bytes(&dg_ir_tensor(s->ir, id)->desc));
    }
    for (int i = 0; i < s->node_count; i++)
      if (s->work[i].params_bytes)
        memcpy((char *)s->dev_buf.map + s->param_offset[i], s->work[i].params,
               s->work[i].params_bytes);
    return DG_OK;
  }
  int regions = s->io.constant_count + s->node_count;
  VkBufferCopy *copy = calloc((size_t)regions + 1, sizeof *copy);
  if (!copy)
    return oom(s, diag, "constant upload");
  VkDeviceSize bytes = 0;
  int nr = 0;
  for (int c = 0; c < s->io.constant_count; c++) {
    uint32_t id = s->io.constants[c];
    VkDeviceSize size = dg_desc_bytes(&dg_ir_tensor(s->ir, id)->desc);
    copy[nr++] = (VkBufferCopy){bytes, s->slots[s->slot_of[id]].offset, size};
    bytes = align_up(bytes + size, 16);
  }
  for (int i = 0; i < s->node_count; i++)
    if (s->work[i].params_bytes) {
      copy[nr++] =
          (VkBufferCopy){bytes, s->param_offset[i], s->work[i].params_bytes};
      bytes = align_up(bytes + s->work[i].params_bytes, 16);
    }
  if (!nr) {
    free(copy);
    return DG_OK;
  }
  vk_buffer tmp;
  VkResult r = dg_vk_buffer_create(vd, bytes, vd->type_staging,
                                   VK_BUFFER_USAGE_TRANSFER_SRC_BIT, &tmp);
  if (r != VK_SUCCESS) {
    free(copy);
    return fail(s, diag, -1, "vkAllocateMemory (constant staging)", r);
  }
  nr = 0;
  for (int c = 0; c < s->io.constant_count; c++) {
    uint32_t id = s->io.constants[c];
    memcpy((char *)tmp.map + copy[nr].srcOffset, constant_data(s, id),
           (size_t)copy[nr].size);
    nr++;
  }
  for (int i = 0; i < s->node_count; i++)
    if (s->work[i].params_bytes) {
      memcpy((char *)tmp.map + copy[nr].srcOffset, s->work[i].params,
             s->work[i].params_bytes);
      nr++;
    }
  VkCommandBufferAllocateInfo ai = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
      .commandPool = s->cmd_pool,
      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
      .commandBufferCount = 1};
  VkCommandBuffer cb = VK_NULL_HANDLE;
  const char *call = "vkAllocateCommandBuffers";
  r = vkAllocateCommandBuffers(vd->dev, &ai, &cb);
  if (r == VK_SUCCESS) {
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    vkBeginCommandBuffer(cb, &bi);
    vkCmdCopyBuffer(cb, tmp.buffer, s->dev_buf.buffer, (uint32_t)nr, copy);
    call = "vkEndCommandBuffer";
    r = vkEndCommandBuffer(cb);
  }
  if (r == VK_SUCCESS) {
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &cb};
    call = "vkQueueSubmit (constant upload)";
    pthread_mutex_lock(&vd->lock);
    r = vkQueueSubmit(vd->queue, 1, &si, s->fence);
    pthread_mutex_unlock(&vd->lock);
    if (r == VK_SUCCESS) {
      s->in_flight = true;
      call = "vkWaitForFences (constant upload)";
      r = vkWaitForFences(vd->dev, 1, &s->fence, VK_TRUE, vd->timeout_ns);
      if (r == VK_SUCCESS) {
        s->in_flight = false;
        r = vkResetFences(vd->dev, 1, &s->fence);
      }
    }
  }
  if (cb)
    vkFreeCommandBuffers(vd->dev, s->cmd_pool, 1, &cb);
  dg_vk_buffer_destroy(vd, &tmp);
  free(copy);
  if (r != VK_SUCCESS)
    return fail(s, diag, -1, call, r);
  return DG_OK;
}

/* ---- recording ---- */

static bool track(vk_segment *s, bool write, vk_range r) {
  vk_range **list = write ? &s->writes : &s->reads;
  int *count = write ? &s->write_count : &s->read_count;
  int *cap = write ? &s->write_cap : &s->read_cap;
  if (*count == *cap) {
    int c = *cap ? 2 * *cap : 32;
    vk_range *a = realloc(*list, sizeof *a * (size_t)c);
    if (!a)
      return false;
    *list = a;
    *cap = c;
  }
  (*list)[(*count)++] = r;
  return true;
}

static bool overlaps(const vk_range *list, int count, vk_range r) {
  for (int i = 0; i < count; i++)
    if (r.lo < list[i].hi && list[i].lo < r.hi)
      return true;
  return false;
}

static vk_range range_of(const vk_segment *s, uint32_t id) {
  const vk_slot *sl = &s->slots[s->slot_of[id]];
  return (vk_range){sl->offset, sl->offset + sl->size};
}

/* The buffer and offset tensor id is read from or written to: a bound
 * dg_buffer (an input or output of the segment), else its region of
 * dev_buf. Hazards are still tracked by the region (range_of), which no
 * other tensor shares. */
static VkBuffer where(const vk_segment *s, uint32_t id, VkDeviceSize *off) {
  vk_resident *r = dg_vk_bound(s, id);
  *off = r ? 0 : s->slots[s->slot_of[id]].offset;
  return r ? r->b.buffer : s->dev_buf.buffer;
}

static void barrier(VkCommandBuffer cb, VkPipelineStageFlags dst_stage,
                    VkAccessFlags dst_access) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT |
                                         VK_ACCESS_TRANSFER_WRITE_BIT,
                        .dstAccessMask = dst_access};
  vkCmdPipelineBarrier(
      cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
      dst_stage, 0, 1, &mb, 0, NULL, 0, NULL);
}

#define ALL_RW                                                                 \
  (VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |                    \
   VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT)
#define COMPUTE_AND_TRANSFER                                                   \
  (VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT)

/* What node n (with work w) writes and reads, for the hazards of the
 * nodes after it: its output, its inputs, its scratch. */
static bool track_node(vk_segment *s, const dg_node *n, const vk_work *w) {
  bool ok = track(s, true, range_of(s, n->output));
  for (int k = 0; k < n->input_count && ok; k++)
    if (n->inputs[k])
      ok = track(s, false, range_of(s, n->inputs[k]));
  if (ok && w->scratch_bytes)
    ok = track(s, false, s->scratch);
  return ok;
}

static int dispatches_of(const vk_work *w) {
  return w->is_copy ? 0 : 1 + w->pre.on + w->post.on;
}

/* Records one dispatch of node i (segment order) into set: shader with
 * spec, bindings bind (see vk_work), the node's push constants, groups. */
static VkResult dispatch(vk_segment *s, int i, vk_shader shader,
                         const uint32_t *spec, int spec_count,
                         const uint32_t *bind, const uint32_t *groups,
                         VkDescriptorSet set, VkPipeline *bound) {
  vk_device *vd = s->vd;
  const vk_work *w = &s->work[i];
  VkPipeline pipe;
  VkResult r = dg_vk_pipeline_get(vd, shader, spec, spec_count, &pipe);
  if (r != VK_SUCCESS)
    return r;
  VkDescriptorBufferInfo info[VK_BINDINGS];
  VkWriteDescriptorSet wr[VK_BINDINGS];
  for (int b = 0; b < VK_BINDINGS; b++) {
    VkDeviceSize off = 0, size = DUMMY_BYTES;
    VkBuffer buf = s->dev_buf.buffer;
    if (bind[b] == VK_BIND_PARAMS) {
      off = s->param_offset[i];
      size = align_up(w->params_bytes, 4);
    } else if (bind[b] == VK_BIND_SCRATCH) {
      off = s->scratch.lo;
      size = align_up(w->scratch_bytes, 4);
    } else if (bind[b]) {
      buf = where(s, bind[b], &off);
      size = s->slots[s->slot_of[bind[b]]].size;
    }
    info[b] = (VkDescriptorBufferInfo){buf, off, size};
    wr[b] = (VkWriteDescriptorSet){
        .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
        .dstSet = set,
        .dstBinding = (uint32_t)b,
        .descriptorCount = 1,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .pBufferInfo = &info[b]};
  }
  vkUpdateDescriptorSets(vd->dev, VK_BINDINGS, wr, 0, NULL);
  VkCommandBuffer cb = s->cmd;
  if (pipe != *bound)
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
  *bound = pipe;
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, vd->layout, 0, 1,
                          &set, 0, NULL);
  vkCmdPushConstants(cb, vd->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                     w->push_bytes, w->push.words);
  vkCmdDispatch(cb, groups[0], groups[1], groups[2]);
  return VK_SUCCESS;
}

/* Whether boundary tensor id is staged through the host (not unified,
 * not bound to a dg_buffer). */
static bool staged(const vk_segment *s, uint32_t id) {
  return !s->vd->unified && !dg_vk_bound(s, id);
}

/* The recording's own failures: a status, s kept (dg_vk_record's callers
 * decide). */
static dg_status rec_oom(vk_segment *s, dg_diagnostic *diag) {
  dg_diag_set(diag, DG_ERROR_OUT_OF_MEMORY, -1, NULL, "compile", NULL, NULL,
              NULL, "%s: out of host memory (recording)", s->vd->label);
  return DG_ERROR_OUT_OF_MEMORY;
}

static dg_status record(vk_segment *s, dg_diagnostic *diag);

dg_status dg_vk_record(vk_segment *s, dg_diagnostic *diag) {
  vk_device *vd = s->vd;
  s->stale = true;
  VkResult r = vkResetCommandPool(vd->dev, s->cmd_pool, 0);
  if (r == VK_SUCCESS && s->pool)
    r = vkResetDescriptorPool(vd->dev, s->pool, 0);
  if (r != VK_SUCCESS)
    return dg_vk_fail(vd, diag, s->ir, -1, "vkResetCommandPool", r);
  s->read_count = s->write_count = 0;
  dg_status st = record(s, diag);
  s->stale = st != DG_OK;
  return st;
}

static dg_status record(vk_segment *s, dg_diagnostic *diag) {
  vk_device *vd = s->vd;
  VkCommandBuffer cb = s->cmd;
  atomic_fetch_add(&dg_vk_records, 1);
  VkCommandBufferBeginInfo bi = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VkResult r = vkBeginCommandBuffer(cb, &bi);
  if (r != VK_SUCCESS)
    return dg_vk_fail(vd, diag, s->ir, -1, "vkBeginCommandBuffer", r);
  if (s->queries)
    vkCmdResetQueryPool(cb, s->queries, 0, (uint32_t)s->node_count + 1);
  int n_in = s->io.input_count, n_out = s->io.output_count;
  VkBufferCopy *copy =
      calloc((size_t)(n_in > n_out ? n_in : n_out) + 1, sizeof *copy);
  if (!copy)
    return rec_oom(s, diag);
  int nc = 0;
  for (int i = 0; i < n_in; i++) {
    if (!staged(s, s->io.inputs[i]))
      continue;
    const vk_slot *sl = &s->slots[s->slot_of[s->io.inputs[i]]];
    copy[nc++] = (VkBufferCopy){sl->stage_offset, sl->offset, sl->size};
    if (!track(s, true, range_of(s, s->io.inputs[i]))) {
      free(copy);
      return rec_oom(s, diag);
    }
  }
  if (nc)
    vkCmdCopyBuffer(cb, s->stage_buf.buffer, s->dev_buf.buffer, (uint32_t)nc,
                    copy);
  /* The first node's time starts once the inputs have arrived: written at
   * the bottom of the pipe, this timestamp waits for the upload above
   * (written at the top, it did not, and the first node was charged with
   * the whole host-to-device copy: 5 ms of a 8192^2 f16 GEMM's "kernel"
   * time on the H200). */
  if (s->queries)
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->queries,
                        0);
  VkPipeline bound = VK_NULL_HANDLE;
  VkDescriptorSet *sets = NULL;
  int dispatches = 0;
  for (int i = 0; i < s->node_count; i++)
    dispatches += dispatches_of(&s->work[i]);
  if (dispatches) {
    VkDescriptorSetLayout *layouts =
        malloc(sizeof *layouts * (size_t)dispatches);
    sets = calloc((size_t)dispatches, sizeof *sets);
    if (!layouts || !sets) {
      free(layouts), free(sets), free(copy);
      return rec_oom(s, diag);
    }
    for (int i = 0; i < dispatches; i++)
      layouts[i] = vd->set_layout;
    VkDescriptorSetAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorPool = s->pool,
        .descriptorSetCount = (uint32_t)dispatches,
        .pSetLayouts = layouts};
    r = vkAllocateDescriptorSets(vd->dev, &ai, sets);
    free(layouts);
    if (r != VK_SUCCESS) {
      free(sets), free(copy);
      return dg_vk_fail(vd, diag, s->ir, -1, "vkAllocateDescriptorSets", r);
    }
  }
  int d = 0;
  for (int i = 0; i < s->node_count; i++) {
    vk_work *w = &s->work[i];
    int node = s->nodes[i];
    const dg_node *n = &s->ir->nodes[node];
    if (s->alias[n->output] != (int)n->output) { /* a view: nothing runs */
      if (s->queries)
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                            s->queries, (uint32_t)i + 1);
      continue;
    }
    /* Hazards against what ran since the last barrier. */
    vk_range out = range_of(s, n->output);
    bool hazard = overlaps(s->writes, s->write_count, out) ||
                  overlaps(s->reads, s->read_count, out);
    for (int k = 0; k < n->input_count && !hazard; k++)
      if (n->inputs[k])
        hazard = overlaps(s->writes, s->write_count, range_of(s, n->inputs[k]));
    if (w->scratch_bytes)
      hazard = hazard || overlaps(s->writes, s->write_count, s->scratch) ||
               overlaps(s->reads, s->read_count, s->scratch);
    if (hazard) {
      barrier(cb, COMPUTE_AND_TRANSFER, ALL_RW);
      s->read_count = s->write_count = 0;
    }
    if (w->pre.on) {
      /* The pre-pass, and a barrier before the main dispatch reads its
       * scratch (the tracking restarts after it). */
      r = dispatch(s, i, w->pre.shader, NULL, 0, w->pre.bind, w->pre.groups,
                   sets[d++], &bound);
      if (r != VK_SUCCESS) {
        free(sets), free(copy);
        return dg_vk_fail(vd, diag, s->ir, node, "vkCreateComputePipelines", r);
      }
      barrier(cb, COMPUTE_AND_TRANSFER, ALL_RW);
      s->read_count = s->write_count = 0;
    }
    if (!track_node(s, n, w)) {
      free(sets), free(copy);
      return rec_oom(s, diag);
    }
    if (w->is_copy) {
      VkBufferCopy *rg = malloc(sizeof *rg * (size_t)w->copy_count);
      if (!rg) {
        free(sets), free(copy);
        return rec_oom(s, diag);
      }
      /* Regions between the same two buffers go in one command. */
      for (int c = 0; c < w->copy_count;) {
        VkDeviceSize so, dofs;
        VkBuffer src = where(s, w->copies[c].src, &so);
        VkBuffer dst = where(s, w->copies[c].dst, &dofs);
        int k = 0;
        for (; c < w->copy_count; c++, k++) {
          VkDeviceSize a, b;
          if (where(s, w->copies[c].src, &a) != src ||
              where(s, w->copies[c].dst, &b) != dst)
            break;
          rg[k] =
              (VkBufferCopy){a + w->copies[c].src_offset,
                             b + w->copies[c].dst_offset, w->copies[c].size};
        }
        vkCmdCopyBuffer(cb, src, dst, (uint32_t)k, rg);
      }
      free(rg);
    } else {
      r = dispatch(s, i, w->shader, w->spec, w->spec_count, w->bind, w->groups,
                   sets[d], &bound);
      if (r != VK_SUCCESS) {
        free(sets), free(copy);
        return dg_vk_fail(vd, diag, s->ir, node, "vkCreateComputePipelines", r);
      }
      d++;
    }
    if (w->post.on) {
      /* A barrier, then the post-pass reading what the main dispatch left
       * in scratch (the tracking restarts after the barrier). */
      barrier(cb, COMPUTE_AND_TRANSFER, ALL_RW);
      s->read_count = s->write_count = 0;
      r = dispatch(s, i, w->post.shader, NULL, 0, w->post.bind, w->post.groups,
                   sets[d++], &bound);
      if (r != VK_SUCCESS) {
        free(sets), free(copy);
        return dg_vk_fail(vd, diag, s->ir, node, "vkCreateComputePipelines", r);
      }
      if (!track_node(s, n, w)) {
        free(sets), free(copy);
        return rec_oom(s, diag);
      }
    }
    if (s->queries)
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->queries,
                          (uint32_t)i + 1);
  }
  free(sets);
  nc = 0;
  for (int i = 0; i < n_out; i++) {
    if (!staged(s, s->io.outputs[i]))
      continue;
    const vk_slot *sl = &s->slots[s->slot_of[s->io.outputs[i]]];
    copy[nc++] = (VkBufferCopy){sl->offset, sl->stage_offset, sl->size};
  }
  if (nc) {
    barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    vkCmdCopyBuffer(cb, s->dev_buf.buffer, s->stage_buf.buffer, (uint32_t)nc,
                    copy);
  }
  free(copy);
  /* Make the results visible to the host's reads after the fence, and
   * to the next submission's shaders and copies (a bound dg_buffer is
   * read by the next session's segment). */
  barrier(cb, VK_PIPELINE_STAGE_HOST_BIT | COMPUTE_AND_TRANSFER,
          VK_ACCESS_HOST_READ_BIT | ALL_RW);
  r = vkEndCommandBuffer(cb);
  if (r != VK_SUCCESS)
    return dg_vk_fail(vd, diag, s->ir, -1, "vkEndCommandBuffer", r);
  return DG_OK;
}

/* ---- compile ---- */

dg_status dg_vk_compile(dg_device *dev, const dg_segment *seg, void **state,
                        dg_diagnostic *diag) {
  vk_device *vd = dev->impl;
  *state = NULL;
  if (atomic_load(&vd->lost)) {
    dg_diag_set(diag, DG_ERROR_DEVICE, -1, NULL, "compile", NULL, NULL,
                "VK_ERROR_DEVICE_LOST", "%s: the device was lost earlier",
                vd->label);
    return DG_ERROR_DEVICE;
  }
  vk_segment *s = calloc(1, sizeof *s);
  if (!s) {
    dg_diag_set(diag, DG_ERROR_OUT_OF_MEMORY, -1, NULL, "compile", NULL, NULL,
                NULL, "%s: out of host memory", vd->label);
    return DG_ERROR_OUT_OF_MEMORY;
  }
  s->vd = vd;
  s->ir = seg->ir;
  s->node_count = seg->node_count;
  s->nodes = malloc(sizeof(int) * (size_t)seg->node_count);
  s->work = calloc((size_t)seg->node_count, sizeof *s->work);
  s->param_offset = calloc((size_t)seg->node_count, sizeof *s->param_offset);
  if (!s->nodes || !s->work || !s->param_offset)
    return oom(s, diag, "segment");
  memcpy(s->nodes, seg->nodes, sizeof(int) * (size_t)seg->node_count);
  if (dg_segment_boundary(seg, &s->io) != DG_OK)
    return oom(s, diag, "segment boundary");
  int dispatches = 0;
  for (int i = 0; i < s->node_count; i++) {
    const dg_node *n = &s->ir->nodes[s->nodes[i]];
    if (!dg_vk_work_prepare(vd, s->ir, n, &s->work[i], false))
      return oom(s, diag, "node setup");
    dispatches += dispatches_of(&s->work[i]);
  }
  VkDeviceSize dev_bytes, stage_bytes;
  if (!plan_memory(s, &dev_bytes, &stage_bytes))
    return oom(s, diag, "memory plan");

  /* Device objects. */
  VkResult r;
  const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  r = dg_vk_buffer_create(vd, dev_bytes, vd->type_device, usage, &s->dev_buf);
  if (r != VK_SUCCESS)
    return fail(s, diag, -1, "vkAllocateMemory (tensors)", r);
  if (!vd->unified && stage_bytes) {
    r = dg_vk_buffer_create(vd, stage_bytes, vd->type_staging,
                            VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                            &s->stage_buf);
    if (r != VK_SUCCESS)
      return fail(s, diag, -1, "vkAllocateMemory (staging)", r);
  }
  VkCommandPoolCreateInfo pi = {.sType =
                                    VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                .queueFamilyIndex = vd->queue_family};
  if ((r = vkCreateCommandPool(vd->dev, &pi, NULL, &s->cmd_pool)) !=
      VK_SUCCESS) {
    s->cmd_pool = VK_NULL_HANDLE;
    return fail(s, diag, -1, "vkCreateCommandPool", r);
  }
  VkCommandBufferAllocateInfo ai = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
      .commandPool = s->cmd_pool,
      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
      .commandBufferCount = 1};
  if ((r = vkAllocateCommandBuffers(vd->dev, &ai, &s->cmd)) != VK_SUCCESS)
    return fail(s, diag, -1, "vkAllocateCommandBuffers", r);
  VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if ((r = vkCreateFence(vd->dev, &fi, NULL, &s->fence)) != VK_SUCCESS) {
    s->fence = VK_NULL_HANDLE;
    return fail(s, diag, -1, "vkCreateFence", r);
  }
  if (dispatches) {
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                               (uint32_t)(dispatches * VK_BINDINGS)};
    VkDescriptorPoolCreateInfo dpi = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = (uint32_t)dispatches,
        .poolSizeCount = 1,
        .pPoolSizes = &ps};
    if ((r = vkCreateDescriptorPool(vd->dev, &dpi, NULL, &s->pool)) !=
        VK_SUCCESS) {
      s->pool = VK_NULL_HANDLE;
      return fail(s, diag, -1, "vkCreateDescriptorPool", r);
    }
  }
  if (vd->timestamps) {
    if (!(s->ts = malloc(sizeof(uint64_t) * ((size_t)s->node_count + 1))))
      return oom(s, diag, "timestamps");
    VkQueryPoolCreateInfo qi = {.sType =
                                    VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = (uint32_t)s->node_count + 1};
    if ((r = vkCreateQueryPool(vd->dev, &qi, NULL, &s->queries)) !=
        VK_SUCCESS) {
      s->queries = VK_NULL_HANDLE;
      return fail(s, diag, -1, "vkCreateQueryPool", r);
    }
  }
  dg_status st = upload_constants(s, diag);
  if (st != DG_OK)
    return st; /* s released */
  s->bound = calloc((size_t)s->slot_count + 1, sizeof *s->bound);
  if (!s->bound)
    return oom(s, diag, "recording");
  st = record(s, diag);
  if (st != DG_OK) {
    dg_vk_release(s);
    return st;
  }
  *state = s;
  return DG_OK;
}
