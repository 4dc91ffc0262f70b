/* Segments on an OpenCL device. compile: the program (built once per
 * device), one buffer per tensor with reuse between tensors whose
 * lifetimes do not overlap, constants uploaded once, per-node kernels with
 * their arguments bound. run: copy the boundary inputs into the segment's
 * pinned staging buffer, upload them from there, enqueue every node in
 * order on the device's in-order queue, download the boundary outputs
 * into the staging buffer, wait once, and only then copy them out; per-node
 * times come from profiling events. The device never sees the caller's
 * memory: a run that fails (a time-out included) leaves nothing queued that
 * could read or write it after the return. */
#define _POSIX_C_SOURCE 200809L
#include "cl_internal.h"

#include "core/memplan.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct cl_segment {
  dg_cl_device *dev;
  const dg_ir *ir;
  dg_cl_node *nodes;
  int node_count;
  dg_segment_io io;
  cl_mem *mem;   /* per tensor id */
  cl_mem *owned; /* every buffer made for tensors, released once */
  int owned_count;
  cl_event *events; /* first and last command of each node */
  /* Host staging for the boundary inputs and outputs: a buffer the
   * driver allocates host-side (pinned where it can), mapped once. */
  cl_mem stage;
  char *stage_map;
  size_t *stage_off; /* per tensor id, into stage_map */
  /* Per tensor id: this run's output goes to a dg_buffer, not host[]. */
  bool *resident_out;
} cl_segment;

void dg_cl_release(void *state) {
  cl_segment *s = state;
  if (!s)
    return;
  /* Work a timed-out run left queued may still use these: OpenCL deletes
   * an object only once its count is zero and the commands using it have
   * finished, so releasing never waits and never frees under the device. */
  for (int i = 0; i < s->node_count; i++)
    dg_cl_node_release(&s->nodes[i]);
  for (int i = 0; i < s->owned_count; i++)
    dg_cl_buffer_free(s->owned[i]);
  if (s->stage_map)
    clEnqueueUnmapMemObject(s->dev->queue, s->stage, s->stage_map, 0, NULL,
                            NULL);
  dg_cl_buffer_free(s->stage);
  free(s->stage_off);
  free(s->resident_out);
  dg_segment_io_free(&s->io);
  free(s->nodes);
  free(s->mem);
  free(s->owned);
  free(s->events);
  free(s);
}

static size_t tensor_bytes(const dg_ir *ir, uint32_t id) {
  return dg_desc_bytes(&dg_ir_tensor(ir, id)->desc);
}

/* Constants get buffers of their own, filled once. The other tensors
 * share buffers through memplan.h (dg_memplan_share): boundary inputs
 * are live from the upload before the first node, boundary outputs until
 * the download after the last, the rest from producer to last reader. */
static dg_status plan_buffers(cl_segment *s, const dg_segment *seg,
                              dg_diagnostic *diag) {
  const dg_ir *ir = s->ir;
  int T = ir->tensor_count;
  int *first = malloc(sizeof(int) * (size_t)(T + 1));
  int *last = malloc(sizeof(int) * (size_t)(T + 1));
  uint32_t *order = malloc(sizeof(uint32_t) * (size_t)(T + 1));
  dg_mem_block *blocks = malloc(sizeof *blocks * (size_t)(T + 1));
  size_t *sizes = malloc(sizeof(size_t) * (size_t)(T + 1));
  int count = 0, buffers = -1;
  if (first && last && order && blocks && sizes) {
    int touched = dg_memplan_lifetimes(ir, seg->nodes, seg->node_count, first,
                                       last, order);
    for (int i = 0; i < s->io.input_count; i++)
      first[s->io.inputs[i]] = 0;
    for (int o = 0; o < s->io.output_count; o++)
      last[s->io.outputs[o]] = seg->node_count;
    for (int c = 0; c < touched;
         c++) { /* constants have buffers of their own */
      uint32_t id = order[c];
      if (s->io.role[id] & DG_IO_CONSTANT)
        continue;
      blocks[count] =
          (dg_mem_block){tensor_bytes(ir, id), first[id], last[id], false, 0};
      order[count++] = id;
    }
    buffers = dg_memplan_share(blocks, count, sizes);
  }
  free(first), free(last);
  cl_mem *made =
      buffers >= 0 ? calloc((size_t)buffers + 1, sizeof *made) : NULL;
  if (!made) {
    free(order), free(blocks), free(sizes);
    dg_diag_set(diag, DG_ERROR_OUT_OF_MEMORY, -1, NULL, "compile", NULL, NULL,
                NULL, "opencl: out of host memory planning buffers");
    return DG_ERROR_OUT_OF_MEMORY;
  }
  cl_int err = CL_SUCCESS;
  const char *what = "constant";
  for (int i = 0; i < s->io.constant_count && err == CL_SUCCESS; i++) {
    uint32_t id = s->io.constants[i];
    cl_mem m =
        dg_cl_buffer(s->dev->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                     tensor_bytes(ir, id),
                     (void *)dg_ir_tensor(ir, id)->constant->data, &err);
    if (m)
      s->mem[id] = s->owned[s->owned_count++] = m;
  }
  /* Where the device shares memory with the host, let the driver put the
   * buffers in host-accessible memory, so uploads and downloads are plain
   * copies within host memory. */
  cl_mem_flags flags = CL_MEM_READ_WRITE;
  if (s->dev->host_unified)
    flags |= CL_MEM_ALLOC_HOST_PTR;
  int failed_node = -1;
  for (int c = 0; c < count && err == CL_SUCCESS; c++) {
    size_t b = blocks[c].offset;
    if (!made[b]) { /* the buffer's first tensor makes it */
      what = "input";
      made[b] = dg_cl_buffer(s->dev->context, flags, sizes[b], NULL, &err);
      if (!made[b]) {
        if (!(s->io.role[order[c]] & DG_IO_INPUT))
          failed_node = dg_ir_tensor(ir, order[c])->producer;
        break;
      }
      s->owned[s->owned_count++] = made[b];
      if (flags & CL_MEM_ALLOC_HOST_PTR)
        dg_cl_stat_add(&dg_cl_stats.host_buffers, 1);
    }
    s->mem[order[c]] = made[b];
  }
  free(order), free(blocks), free(sizes), free(made);
  if (err == CL_SUCCESS)
    return DG_OK;
  if (failed_node >= 0)
    return dg_cl_fail(diag, err, failed_node, &ir->nodes[failed_node],
                      "clCreateBuffer");
  dg_status st = dg_cl_fail(diag, err, -1, NULL, "clCreateBuffer");
  if (diag) {
    size_t used = strlen(diag->message);
    snprintf(diag->message + used, sizeof diag->message - used, " (%s buffer)",
             what);
  }
  return st;
}

/* The staging buffer: every boundary input and output at a 64-byte
 * aligned offset of one host-allocated buffer, mapped for the session's
 * life. */
static dg_status plan_staging(cl_segment *s, dg_diagnostic *diag) {
  size_t total = 0;
  for (int pass = 0; pass < 2; pass++) {
    const uint32_t *ids = pass ? s->io.outputs : s->io.inputs;
    int n = pass ? s->io.output_count : s->io.input_count;
    for (int i = 0; i < n; i++) {
      if (pass && (s->io.role[ids[i]] & DG_IO_INPUT))
        continue; /* passed through: staged once, as an input */
      s->stage_off[ids[i]] = total;
      total += (tensor_bytes(s->ir, ids[i]) + 63) / 64 * 64;
    }
  }
  cl_int err = CL_SUCCESS;
  const char *call = "clCreateBuffer";
  s->stage =
      dg_cl_buffer(s->dev->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                   total ? total : 64, NULL, &err);
  if (s->stage) {
    call = "clEnqueueMapBuffer";
    s->stage_map = clEnqueueMapBuffer(s->dev->queue, s->stage, CL_TRUE,
                                      CL_MAP_READ | CL_MAP_WRITE, 0,
                                      total ? total : 64, 0, NULL, NULL, &err);
  }
  if (err == CL_SUCCESS && s->stage_map) {
    dg_cl_stat_add(&dg_cl_stats.staging_buffers, 1);
    return DG_OK;
  }
  s->stage_map = NULL;
  dg_status st =
      dg_cl_fail(diag, err ? err : CL_OUT_OF_HOST_MEMORY, -1, NULL, call);
  if (diag) {
    size_t used = strlen(diag->message);
    snprintf(diag->message + used, sizeof diag->message - used,
             " (staging buffer, %zu bytes)", total);
  }
  return st;
}

dg_status dg_cl_compile(dg_device *dev, const dg_segment *seg, void **state,
                        dg_diagnostic *diag) {
  dg_cl_device *d = dev->impl;
  *state = NULL;
  cl_program prog;
  dg_status st = dg_cl_program_get(d, &prog, diag);
  if (st != DG_OK)
    return st;
  cl_segment *s = calloc(1, sizeof *s);
  int T = seg->ir->tensor_count;
  if (!s ||
      (s->dev = d, s->ir = seg->ir,
       dg_segment_boundary(seg, &s->io) != DG_OK) ||
      !(s->nodes = calloc((size_t)seg->node_count, sizeof *s->nodes)) ||
      !(s->mem = calloc((size_t)T + 1, sizeof(cl_mem))) ||
      !(s->owned = calloc((size_t)T + 1, sizeof(cl_mem))) ||
      !(s->stage_off = calloc((size_t)T + 1, sizeof(size_t))) ||
      !(s->resident_out = calloc((size_t)T + 1, sizeof(bool))) ||
      !(s->events = calloc((size_t)seg->node_count * 2, sizeof(cl_event)))) {
    dg_cl_release(s);
    dg_diag_set(diag, DG_ERROR_OUT_OF_MEMORY, -1, NULL, "compile", NULL, NULL,
                NULL, "opencl: out of host memory compiling a segment");
    return DG_ERROR_OUT_OF_MEMORY;
  }
  st = plan_buffers(s, seg, diag);
  if (st == DG_OK)
    st = plan_staging(s, diag);
  for (int i = 0; i < seg->node_count && st == DG_OK; i++) {
    st = dg_cl_node_prepare(d, prog, seg->ir, seg->nodes[i], s->mem,
                            &s->nodes[i], diag);
    s->node_count = i + 1;
    /* The cost model priced the kernel its dry run chose: count any
     * difference, so that tests see the two drift apart. */
    char priced[sizeof s->nodes[i].tile];
    dg_cl_node_choice(d, seg->ir, seg->nodes[i], priced, sizeof priced);
    if (st == DG_OK && strcmp(priced, s->nodes[i].tile))
      dg_cl_stat_add(&dg_cl_stats.estimate_mismatches, 1);
  }
  if (st != DG_OK) {
    dg_cl_release(s);
    return st;
  }
  *state = s;
  return DG_OK;
}

/* Enqueues node i; first/last receive the events of its first and last
 * command. */
static cl_int enqueue(cl_segment *s, dg_cl_node *cn, cl_event *first,
                      cl_event *last, const char **call) {
  cl_command_queue q = s->dev->queue;
  const dg_node *n = cn->node;
  if (cn->cmd == CL_CMD_KERNEL) {
    *call = "clEnqueueNDRangeKernel";
    cl_int err = clEnqueueNDRangeKernel(q, cn->kernel, cn->dims, NULL, cn->gws,
                                        cn->lws, 0, NULL, first);
    if (err == CL_SUCCESS && cn->post) /* in order: after the first */
      err = clEnqueueNDRangeKernel(q, cn->post, 2, NULL, cn->post_gws,
                                   cn->post_lws, 0, NULL, last);
    return err;
  }
  if (cn->cmd == CL_CMD_COPY) {
    *call = "clEnqueueCopyBuffer";
    return clEnqueueCopyBuffer(q, s->mem[n->inputs[0]], s->mem[n->output], 0, 0,
                               tensor_bytes(s->ir, n->output), 0, NULL, first);
  }
  /* concat: one rectangular copy per input, rows of len bytes. */
  *call = "clEnqueueCopyBufferRect";
  const dg_tensor_desc *yd = &dg_ir_tensor(s->ir, n->output)->desc;
  int axis = n->p.axis;
  size_t es = dg_dtype_size(yd->dtype);
  int64_t outer64, inner64;
  dg_desc_split(yd, axis, &outer64, &inner64);
  size_t outer = (size_t)outer64, inner = (size_t)inner64;
  size_t row = (size_t)yd->dims[axis] * inner * es, off = 0;
  for (int t = 0; t < n->input_count; t++) {
    size_t len =
        (size_t)dg_ir_tensor(s->ir, n->inputs[t])->desc.dims[axis] * inner * es;
    size_t src[3] = {0, 0, 0}, dst[3] = {off, 0, 0},
           region[3] = {len, outer, 1};
    cl_event *ev = t == 0 ? first : t == n->input_count - 1 ? last : NULL;
    cl_int err =
        clEnqueueCopyBufferRect(q, s->mem[n->inputs[t]], s->mem[n->output], src,
                                dst, region, len, 0, row, 0, 0, NULL, ev);
    if (err != CL_SUCCESS)
      return err;
    off += len;
  }
  return CL_SUCCESS;
}

static double event_us(cl_event a, cl_event b) {
  cl_ulong t0 = 0, t1 = 0;
  if (clGetEventProfilingInfo(a, CL_PROFILING_COMMAND_START, sizeof t0, &t0,
                              NULL) != CL_SUCCESS ||
      clGetEventProfilingInfo(b, CL_PROFILING_COMMAND_END, sizeof t1, &t1,
                              NULL) != CL_SUCCESS ||
      t1 < t0)
    return 0;
  return (double)(t1 - t0) / 1e3;
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* clFinish, bounded: a marker after the run's last command, polled until
 * it completes or d->timeout_ms passes (*late then). A GPU is polled
 * without sleeping for its first millisecond (a blocking wait costs tens
 * of microseconds there); a CPU-type device is never spun on, since its
 * work runs on the cores a poll would take. */
static cl_int finish_within(dg_cl_device *d, bool *late) {
  cl_event marker = NULL;
  cl_int err = clEnqueueMarkerWithWaitList(d->queue, 0, NULL, &marker);
  if (err != CL_SUCCESS)
    return clFinish(d->queue);
  err = clFlush(d->queue);
  int64_t t0 = now_ns(), limit = (int64_t)d->timeout_ms * 1000000;
  long nap = 20000; /* ns, doubling to 1 ms */
  while (err == CL_SUCCESS) {
    cl_int state = CL_QUEUED;
    err = clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS,
                         sizeof state, &state, NULL);
    if (err != CL_SUCCESS || state == CL_COMPLETE)
      break;
    if (state < 0) {
      err = state;
      break;
    }
    int64_t waited = now_ns() - t0;
    if (waited > limit) {
      *late = true;
      break;
    }
    if (d->is_cpu || waited > 1000000) {
      struct timespec ts = {0, nap};
      nanosleep(&ts, NULL);
      nap = nap < 1000000 ? nap * 2 : 1000000;
    }
  }
  clReleaseEvent(marker);
  /* Everything is done: this returns at once and reports what failed. */
  if (!*late && err == CL_SUCCESS)
    err = clFinish(d->queue);
  return err;
}

/* The end of a run, submitted or failed half way: waits for the queue
 * (bounded: the staging buffer may be in flight even after an error),
 * reads the node times and, on success, copies the outputs out (host
 * NULL: dropped). err/call/failed: the submission's own failure. */
static dg_status finish_run(cl_segment *s, void *const *host, double *node_us,
                            cl_int err, const char *call, int failed,
                            dg_diagnostic *diag) {
  bool late = false;
  cl_int ferr = finish_within(s->dev, &late);
  if (late)
    atomic_store(&s->dev->timed_out, true);
  if (err == CL_SUCCESS && ferr != CL_SUCCESS) {
    err = ferr;
    call = "clFinish";
  }
  for (int i = 0; i < s->node_count; i++) {
    cl_event a = s->events[2 * i], b = s->events[2 * i + 1];
    if (node_us && err == CL_SUCCESS && !late && a)
      node_us[i] = event_us(a, b ? b : a);
    if (a)
      clReleaseEvent(a);
    if (b)
      clReleaseEvent(b);
    s->events[2 * i] = s->events[2 * i + 1] = NULL;
  }
  if (late) {
    dg_diag_set(diag, DG_ERROR_DEVICE, -1, NULL, "clFinish", NULL, NULL,
                "timed out",
                "opencl (%s): the run did not finish within %d ms "
                "(dg_context_options.device_timeout_ms); the device is not "
                "used again (its queued work runs on into the library's own "
                "buffers, never the caller's)",
                s->dev->name, s->dev->timeout_ms);
    return DG_ERROR_DEVICE;
  }
  if (err == CL_SUCCESS) {
    for (int i = 0; host && i < s->io.output_count; i++) {
      uint32_t id = s->io.outputs[i];
      if (s->resident_out[id])
        continue;
      memcpy(host[id], s->stage_map + s->stage_off[id],
             tensor_bytes(s->ir, id));
      dg_cl_stat_add(&dg_cl_stats.staged_tensors, 1);
    }
    return DG_OK;
  }
  if (failed >= 0)
    return dg_cl_fail(diag, err, s->nodes[failed].index, s->nodes[failed].node,
                      call);
  return dg_cl_fail(diag, err, -1, NULL, call);
}

dg_status dg_cl_submit(void *state, void *const *host, void *const *resident,
                       dg_diagnostic *diag) {
  cl_segment *s = state;
  if (atomic_load(&s->dev->timed_out)) {
    dg_diag_set(diag, DG_ERROR_DEVICE, -1, NULL, "dg_session_run", NULL, NULL,
                "timed out",
                "opencl (%s): the device timed out in an earlier run and is "
                "not used again",
                s->dev->name);
    return DG_ERROR_DEVICE;
  }
  cl_command_queue q = s->dev->queue;
  cl_int err = CL_SUCCESS;
  const char *call = "clEnqueueWriteBuffer";
  int failed = -1;
  for (int i = 0; i < s->io.input_count && err == CL_SUCCESS; i++) {
    uint32_t id = s->io.inputs[i];
    if (resident && resident[id]) { /* a dg_buffer: copied on the device */
      call = "clEnqueueCopyBuffer (dg_buffer input)";
      err = clEnqueueCopyBuffer(q, resident[id], s->mem[id], 0, 0,
                                tensor_bytes(s->ir, id), 0, NULL, NULL);
      dg_cl_stat_add(&dg_cl_stats.resident_copies, 1);
      continue;
    }
    char *at = s->stage_map + s->stage_off[id];
    memcpy(at, host[id], tensor_bytes(s->ir, id));
    dg_cl_stat_add(&dg_cl_stats.staged_tensors, 1);
    call = "clEnqueueWriteBuffer";
    err = clEnqueueWriteBuffer(q, s->mem[id], CL_FALSE, 0,
                               tensor_bytes(s->ir, id), at, 0, NULL, NULL);
  }
  for (int i = 0; i < s->node_count && err == CL_SUCCESS; i++) {
    cl_event *ev = &s->events[2 * i];
    err = enqueue(s, &s->nodes[i], ev, ev + 1, &call);
    if (err != CL_SUCCESS)
      failed = i;
  }
  for (int i = 0; i < s->io.output_count && err == CL_SUCCESS; i++) {
    uint32_t id = s->io.outputs[i];
    s->resident_out[id] = resident && resident[id];
    if (s->resident_out[id]) {
      call = "clEnqueueCopyBuffer (dg_buffer output)";
      err = clEnqueueCopyBuffer(q, s->mem[id], resident[id], 0, 0,
                                tensor_bytes(s->ir, id), 0, NULL, NULL);
      dg_cl_stat_add(&dg_cl_stats.resident_copies, 1);
      continue;
    }
    call = "clEnqueueReadBuffer";
    err =
        clEnqueueReadBuffer(q, s->mem[id], CL_FALSE, 0, tensor_bytes(s->ir, id),
                            s->stage_map + s->stage_off[id], 0, NULL, NULL);
  }
  if (err == CL_SUCCESS) {
    call = "clFlush";
    err = clFlush(q);
  }
  if (err != CL_SUCCESS) /* ended here: the session calls no wait */
    return finish_run(s, NULL, NULL, err, call, failed, diag);
  return DG_OK;
}

dg_status dg_cl_wait(void *state, void *const *host, double *node_us,
                     dg_diagnostic *diag) {
  return finish_run(state, host, node_us, CL_SUCCESS, NULL, -1, diag);
}

dg_status dg_cl_run(void *state, void *const *host, void *const *resident,
                    double *node_us, dg_diagnostic *diag) {
  dg_status st = dg_cl_submit(state, host, resident, diag);
  return st == DG_OK ? dg_cl_wait(state, host, node_us, diag) : st;
}
