/* Compile (placement, segments, host memory plan, per-target compile) and
 * run. */
#define _POSIX_C_SOURCE 200809L
#include "session.h"

#include "core/half.h"

#include "core/env.h"
#include "core/memplan.h"
#include "passes.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN 64

static size_t align_up(size_t v) {
  return (v + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

/* Marks tensor t live on the host at step. */
static void touch(int *first, int *last, uint32_t t, int step) {
  if (first[t] < 0 || step < first[t])
    first[t] = step;
  if (step > last[t])
    last[t] = step;
}

/* Where a segment touches a tensor in host memory: at the node itself on
 * a host-memory device; over the whole segment elsewhere (it uploads its
 * inputs before its first node and downloads its outputs after its
 * last). */
static void touch_at(const dg_session *s, const int *seg_of, int *first,
                     int *last, uint32_t t, int node) {
  const dg_segment_rt *seg = &s->segments[seg_of[node]];
  if (seg->dev->host_memory) {
    touch(first, last, t, node);
  } else {
    touch(first, last, t, seg->first);
    touch(first, last, t, seg->first + seg->node_count - 1);
  }
}

/* Host memory plan, made after segmentation so that only tensors the host
 * really holds get bytes: every tensor a host-memory device (the CPU)
 * touches, every tensor crossing from one segment to another, the graph's
 * outputs, and with keep_all (verify) every value. Graph inputs bound as
 * NCHW are not copied: host[] points at the caller's buffer; constants
 * point at their data. Placement is memplan.h's; keep_all pins every
 * block so no value is overwritten before verify reads it. */
static dg_status plan_memory(dg_session *s) {
  const dg_ir *ir = &s->ir;
  int T = ir->tensor_count, N = ir->node_count;
  int *first = malloc(sizeof(int) * (size_t)(T + 1));
  int *last = malloc(sizeof(int) * (size_t)(T + 1));
  int *seg_of = malloc(sizeof(int) * (size_t)(N + 1));
  dg_mem_block *blocks = malloc(sizeof *blocks * (size_t)(T + 1));
  uint32_t *tid = malloc(sizeof(uint32_t) * (size_t)(T + 1));
  s->offsets = malloc(sizeof(size_t) * (size_t)(T + 1));
  s->host = calloc((size_t)T + 1, sizeof(void *));
  if (!first || !last || !seg_of || !blocks || !tid || !s->offsets ||
      !s->host) {
    free(first), free(last), free(seg_of), free(blocks), free(tid);
    return DG_ERROR_OUT_OF_MEMORY;
  }
  for (int t = 0; t <= T; t++)
    first[t] = last[t] = -1;
  for (int g = 0; g < s->segment_count; g++)
    for (int k = 0; k < s->segments[g].node_count; k++)
      seg_of[s->segments[g].nodes[k]] = g;
  for (int i = 0; i < N; i++) {
    const dg_node *n = &ir->nodes[i];
    bool host = s->segments[seg_of[i]].dev->host_memory;
    if (host || s->keep_all)
      touch_at(s, seg_of, first, last, n->output, i);
    for (int k = 0; k < n->input_count; k++) {
      uint32_t t = n->inputs[k];
      const dg_tensor_info *ti = dg_ir_tensor(ir, t);
      if (!ti || ti->kind != DG_TENSOR_VALUE)
        continue;
      if (host || seg_of[ti->producer] != seg_of[i]) {
        touch_at(s, seg_of, first, last, t, ti->producer);
        touch_at(s, seg_of, first, last, t, i);
      }
    }
  }
  for (int o = 0; o < ir->output_count; o++) {
    uint32_t t = ir->outputs[o].tensor;
    const dg_tensor_info *ti = dg_ir_tensor(ir, t);
    if (ti->kind != DG_TENSOR_VALUE)
      continue;
    touch_at(s, seg_of, first, last, t, ti->producer);
    touch(first, last, t, N); /* read back after the last segment */
  }
  /* Tensors in id order, which is creation order: the planner's ties
   * then follow the graph. */
  int count = 0;
  for (int t = 1; t <= T; t++)
    if (first[t] >= 0 && ir->tensors[t - 1].kind == DG_TENSOR_VALUE) {
      blocks[count] = (dg_mem_block){dg_desc_bytes(&ir->tensors[t - 1].desc),
                                     first[t], last[t], s->keep_all, 0};
      tid[count++] = (uint32_t)t;
    }
  free(first), free(last), free(seg_of);
  bool oom = false;
  size_t top = dg_memplan_place(blocks, count, ALIGN, 0, &oom);
  if (oom || top == SIZE_MAX) {
    free(blocks), free(tid);
    return DG_ERROR_OUT_OF_MEMORY;
  }
  for (int t = 0; t < T; t++)
    s->offsets[t] = SIZE_MAX;
  for (int c = 0; c < count; c++)
    s->offsets[tid[c] - 1] = blocks[c].offset;
  free(blocks), free(tid);
  s->arena_size = top;
  s->plan.host_bytes = top;
  if (top && posix_memalign(&s->arena, ALIGN, top))
    return DG_ERROR_OUT_OF_MEMORY;
  for (int t = 0; t < T; t++) {
    if (s->offsets[t] != SIZE_MAX)
      s->host[t + 1] = (char *)s->arena + s->offsets[t];
    else if (ir->tensors[t].constant)
      s->host[t + 1] = (void *)ir->tensors[t].constant->data;
  }
  /* NHWC inputs, and f32 inputs held in f16, are converted into a
   * scratch buffer of their own. */
  size_t io = 0;
  s->io_offsets = calloc((size_t)ir->input_count + 1, sizeof(size_t));
  if (!s->io_offsets)
    return DG_ERROR_OUT_OF_MEMORY;
  for (int i = 0; i < ir->input_count; i++) {
    s->io_offsets[i] = io;
    if (ir->inputs[i].layout == DG_LAYOUT_NHWC || ir->inputs[i].host_f32)
      io += align_up(
          dg_desc_bytes(&dg_ir_tensor(ir, ir->inputs[i].tensor)->desc));
  }
  if (io && posix_memalign(&s->io_scratch, ALIGN, io))
    return DG_ERROR_OUT_OF_MEMORY;
  return DG_OK;
}

/* Splits the placement into segments and compiles each on its device.
 * *target_failed tells a target's own error (diagnostic filled) from an
 * allocation failure here. */
static dg_status make_segments(dg_session *s, dg_diagnostic *diag,
                               bool *target_failed) {
  const dg_ir *ir = &s->ir;
  int N = ir->node_count;
  s->segments = calloc((size_t)N + 1, sizeof *s->segments);
  if (!s->segments)
    return DG_ERROR_OUT_OF_MEMORY;
  for (int i = 0; i < N;) {
    int j = i;
    while (j < N && s->placement[j] == s->placement[i])
      j++;
    dg_segment_rt *seg = &s->segments[s->segment_count++];
    seg->dev = &s->ctx->devices.items[s->placement[i]];
    seg->first = i;
    seg->node_count = j - i;
    seg->nodes = malloc(sizeof(int) * (size_t)(j - i));
    if (!seg->nodes)
      return DG_ERROR_OUT_OF_MEMORY;
    for (int k = i; k < j; k++)
      seg->nodes[k - i] = k;
    dg_segment desc = {ir, seg->nodes, seg->node_count, s->keep_all,
                       s->opts.profile || dg_env(DG_ENV_PROFILE)};
    dg_status st = seg->dev->vt->compile(seg->dev, &desc, &seg->state, diag);
    if (st != DG_OK) {
      *target_failed = true; /* the target wrote the diagnostic */
      return st;
    }
    i = j;
  }
  s->plan.segment_count = s->segment_count;
  return DG_OK;
}

void dg_session_destroy(dg_session *s) {
  if (!s ||
      !dg_live_remove(s, DG_LIVE_SESSION)) /* NULL, or not a live session */
    return;
  dg_context *ctx = s->ctx;
  dg_session_destroy(s->verify_twin);
  for (int i = 0; i < s->segment_count; i++) {
    if (s->segments[i].state)
      s->segments[i].dev->vt->release(s->segments[i].state);
    free(s->segments[i].nodes);
  }
  free(s->segments);
  free(s->placement);
  free(s->devices_allowed);
  free(s->arena);
  free(s->offsets);
  free(s->host);
  free(s->io_scratch);
  free(s->io_offsets);
  free(s->node_us);
  free(s->resident);
  free(s->in_buf);
  free(s->out_buf);
  free(s->plan.nodes);
  dg_ir_free(&s->ir);
  free(s);
  dg_context_unref(ctx);
}

/* dg_pass_devices' question for this session: no device placement would
 * weigh loses the node by its fusion. */
static bool keeps_devices(void *ctx, const dg_ir *ir, const dg_node *before,
                          const dg_node *after) {
  const dg_session *s = ctx;
  char why[160];
  for (int d = 0; d < s->ctx->devices.count; d++) {
    dg_device *dev = &s->ctx->devices.items[d];
    if (dg_place_considers(s, d, before->pinned_device) &&
        dev->vt->supports(dev, ir, before, why, sizeof why) &&
        !dev->vt->supports(dev, ir, after, why, sizeof why))
      return false;
  }
  return true;
}

dg_status dg_session_compile(dg_context *ctx, const dg_ir *ir,
                             const dg_compile_options *opts, bool keep_all,
                             dg_session **out, dg_diagnostic *diag) {
  dg_session *s = calloc(1, sizeof *s);
  if (!s || !dg_live_add(s, DG_LIVE_SESSION)) {
    free(s);
    return DG_ERROR_OUT_OF_MEMORY;
  }
  dg_context_ref(ctx); /* dg_session_destroy drops it */
  s->ctx = ctx;
  s->keep_all = keep_all;
  if (opts)
    s->opts = *opts;
  s->opts.devices = NULL;
  dg_status st = DG_ERROR_OUT_OF_MEMORY;
  if (opts && opts->device_count > 0) {
    s->devices_allowed = malloc(sizeof(int) * (size_t)opts->device_count);
    if (!s->devices_allowed)
      goto fail;
    memcpy(s->devices_allowed, opts->devices,
           sizeof(int) * (size_t)opts->device_count);
  }
  /* Rewrites on the session's own copy, before anything is sized by its
   * node count; the device-dependent ones ask the allowed devices. */
  dg_pass_devices devs = {keeps_devices, s,     s->opts.precision,
                          false,         false, ""};
  for (int d = 0; d < ctx->devices.count; d++) {
    const dg_device_info *in = &ctx->devices.items[d].info;
    devs.gpu_f16 |=
        dg_place_considers(s, d, -1) &&
        (in->kind == DG_DEVICE_VULKAN || in->kind == DG_DEVICE_OPENCL) &&
        (in->dtypes >> DG_DTYPE_F16 & 1);
  }
  if (!dg_ir_clone(ir, &s->ir) || !dg_passes_run(&s->ir, &devs))
    goto fail;
  snprintf(s->plan.precision, sizeof s->plan.precision, "%s",
           devs.note[0] ? devs.note : "exact");
  int N = s->ir.node_count;
  s->placement = calloc((size_t)N + 1, sizeof(int));
  s->node_us = calloc((size_t)N + 1, sizeof(double));
  s->resident = calloc((size_t)s->ir.tensor_count + 1, sizeof(void *));
  s->in_buf = calloc((size_t)s->ir.input_count + 1, sizeof(dg_buffer *));
  s->out_buf = calloc((size_t)s->ir.output_count + 1, sizeof(dg_buffer *));
  s->plan.nodes = calloc((size_t)N + 1, sizeof(dg_plan_node));
  s->plan.node_count = N;
  s->plan.ir = &s->ir;
  if (!s->placement || !s->node_us || !s->plan.nodes || !s->resident ||
      !s->in_buf || !s->out_buf)
    goto fail;
  st = dg_place(s, diag);
  if (st != DG_OK)
    goto fail_diag;
  if (devs.lowered) { /* how many nodes it reached, after fusion */
    int f16 = 0;
    for (int i = 0; i < N; i++)
      f16 += s->plan.nodes[i].compute_dtype == DG_DTYPE_F16;
    snprintf(s->plan.precision, sizeof s->plan.precision,
             "fast: f16 storage, f32 accumulation on %d of %d nodes", f16, N);
  }
  bool target_failed = false;
  st = make_segments(s, diag, &target_failed);
  if (st != DG_OK && !target_failed)
    goto fail;
  if (st != DG_OK)
    goto fail_diag;
  st = plan_memory(s);
  if (st != DG_OK)
    goto fail;
  *out = s;
  return DG_OK;
fail:
  dg_diag_set(diag, st, -1, NULL, "compile", NULL, NULL, NULL,
              "compile failed: %s", dg_status_string(st));
fail_diag:
  dg_session_destroy(s);
  return st;
}

dg_status dg_graph_compile(dg_graph *g, const dg_compile_options *opts,
                           dg_session **out, dg_diagnostic *diag) {
  if (out)
    *out = NULL;
  if (g && !dg_graph_alive(g)) {
    dg_diag_set(diag, DG_ERROR_INVALID_ARGUMENT, -1, NULL, "dg_graph_compile",
                "graph", "a live graph", "not a live graph",
                "dg_graph_compile: graph is not a live graph (destroyed?)");
    return DG_ERROR_INVALID_ARGUMENT;
  }
  if (!g || !out) {
    dg_diag_set(diag, DG_ERROR_INVALID_ARGUMENT, -1, NULL, "dg_graph_compile",
                g ? "out" : "graph", "non-NULL", "NULL",
                "dg_graph_compile: %s is NULL", g ? "out" : "graph");
    return DG_ERROR_INVALID_ARGUMENT;
  }
  if (g->failed) {
    if (diag) {
      *diag = g->error;
      diag->status = DG_ERROR_GRAPH_FAILED;
    }
    return DG_ERROR_GRAPH_FAILED;
  }
  const char *bad = NULL;
  char why[128] = "";
  if (opts &&
      (opts->policy < DG_POLICY_AUTO || opts->policy > DG_POLICY_STRICT))
    bad = "options.policy";
  else if (opts && (opts->precision < DG_PRECISION_EXACT ||
                    opts->precision > DG_PRECISION_FAST_F16))
    bad = "options.precision";
  else if (opts && (opts->device_count < 0 ||
                    (opts->device_count > 0 && !opts->devices)))
    bad = "options.devices";
  else if (opts && (opts->device_kinds & ~dg_device_kinds_all())) {
    bad = "options.device_kinds";
    snprintf(why, sizeof why, " (0x%x has bits of no device kind; kinds: 0x%x)",
             opts->device_kinds, dg_device_kinds_all());
  } else if (!g->ir.output_count) {
    bad = "outputs";
    snprintf(why, sizeof why, " (the graph has no output)");
  }
  for (int i = 0; !bad && opts && i < opts->device_count; i++)
    if (opts->devices[i] < 0 || opts->devices[i] >= g->ctx->devices.count) {
      bad = "options.devices";
      snprintf(why, sizeof why,
               " (devices[%d] is %d; the context has devices 0..%d)", i,
               opts->devices[i], g->ctx->devices.count - 1);
    }
  if (bad) {
    dg_diag_set(diag, DG_ERROR_INVALID_ARGUMENT, -1, NULL, "dg_graph_compile",
                bad, NULL, NULL, "dg_graph_compile: bad %s%s", bad, why);
    return DG_ERROR_INVALID_ARGUMENT;
  }
  return dg_session_compile(g->ctx, &g->ir, opts, false, out, diag);
}

const dg_plan *dg_session_plan(const dg_session *s) {
  return (s = dg_session_alive(s)) ? &s->plan : NULL;
}

/* ---- run ---- */

static void nhwc_to_nchw(const dg_tensor_desc *d, const void *src, void *dst) {
  size_t es = dg_dtype_size(d->dtype);
  int64_t N = d->dims[0], C = d->dims[1], HW = d->dims[2] * d->dims[3];
  for (int64_t n = 0; n < N; n++)
    for (int64_t p = 0; p < HW; p++)
      for (int64_t c = 0; c < C; c++)
        memcpy((char *)dst + ((n * C + c) * HW + p) * es,
               (const char *)src + ((n * HW + p) * C + c) * es, es);
}

static void nchw_to_nhwc(const dg_tensor_desc *d, const void *src, void *dst) {
  size_t es = dg_dtype_size(d->dtype);
  int64_t N = d->dims[0], C = d->dims[1], HW = d->dims[2] * d->dims[3];
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t p = 0; p < HW; p++)
        memcpy((char *)dst + ((n * HW + p) * C + c) * es,
               (const char *)src + ((n * C + c) * HW + p) * es, es);
}

static dg_status bad_binding(dg_diagnostic *diag, dg_status st,
                             const char *name, const char *field,
                             const char *what) {
  char shown[DG_NAME_SHORT]; /* a long name must leave room for what */
  dg_name_shorten(shown, sizeof shown, name ? name : "(null)");
  dg_diag_set(diag, st, -1, NULL, "dg_session_run", field, NULL, NULL,
              "dg_session_run: %s '%s': %s", field, shown, what);
  return st;
}

/* The device every node touching tensor t (reading it, or making it)
 * runs on; -1 when no node does, -2 when they run on several (*elsewhere
 * then names a node not on the first one's device). */
static int sole_device(const dg_session *s, uint32_t t, int *elsewhere) {
  const dg_ir *ir = &s->ir;
  int dev = -1;
  for (int i = 0; i < ir->node_count; i++) {
    const dg_node *n = &ir->nodes[i];
    bool touches = n->output == t;
    for (int k = 0; k < n->input_count && !touches; k++)
      touches = n->inputs[k] == t;
    if (!touches)
      continue;
    if (dev == -1) {
      dev = s->placement[i];
    } else if (s->placement[i] != dev) {
      *elsewhere = i;
      return -2;
    }
  }
  return dev;
}

static dg_status bind_error(dg_diagnostic *diag, const char *call,
                            const char *name, const char *what,
                            const char *msg) {
  char shown[DG_NAME_SHORT];
  dg_name_shorten(shown, sizeof shown, name ? name : "(null)");
  dg_diag_set(diag, DG_ERROR_INVALID_ARGUMENT, -1, NULL, call, what, NULL,
              NULL, "%s: %s '%s': %s", call, what, shown, msg);
  return DG_ERROR_INVALID_ARGUMENT;
}

/* Checks buffer buf against graph.h's rules for input or output b of s
 * (dg_session_bind_buffer). */
static dg_status check_buffer(const dg_session *s, const dg_buffer *buf,
                              const dg_io_binding *b, bool output,
                              dg_diagnostic *diag) {
  const char *call = "dg_session_bind_buffer",
             *what = output ? "output" : "input";
  dg_tensor_desc bd = dg_ir_io_desc(&s->ir, b);
  char msg[512], dims[96], bdims[96];
  if (buf->ctx != s->ctx)
    return bind_error(diag, call, b->name, what,
                      "the buffer belongs to another context");
  dg_format_dims(dims, sizeof dims, bd.rank, bd.dims);
  dg_format_dims(bdims, sizeof bdims, buf->desc.rank, buf->desc.dims);
  if (buf->desc.dtype != bd.dtype || buf->desc.rank != bd.rank ||
      memcmp(buf->desc.dims, bd.dims, sizeof(int64_t) * (size_t)bd.rank)) {
    snprintf(msg, sizeof msg, "the buffer holds %s %s, the tensor is %s %s",
             dg_dtype_name(buf->desc.dtype), bdims, dg_dtype_name(bd.dtype),
             dims);
    return bind_error(diag, call, b->name, what, msg);
  }
  for (int i = 0; i < s->ir.input_count; i++)
    if (s->in_buf[i] == buf && (output || &s->ir.inputs[i] != b))
      return bind_error(diag, call, b->name, what,
                        "the buffer is bound to another name of the session");
  for (int i = 0; i < s->ir.output_count; i++)
    if (s->out_buf[i] == buf && (!output || &s->ir.outputs[i] != b))
      return bind_error(diag, call, b->name, what,
                        "the buffer is bound to another name of the session");
  if (buf->host) /* the CPU's: host memory, as a host binding */
    return DG_OK;
  if (b->layout == DG_LAYOUT_NHWC || b->host_f32)
    return bind_error(
        diag, call, b->name, what,
        b->host_f32 ? "held in f16 by the fast precision: bind host memory"
                    : "bound NHWC: a device's buffer binds NCHW only");
  if (output && dg_ir_tensor(&s->ir, b->tensor)->kind != DG_TENSOR_VALUE)
    return bind_error(diag, call, b->name, what,
                      "not made by a node (a constant): bind host memory");
  int elsewhere = -1, dev = sole_device(s, b->tensor, &elsewhere);
  if (dev == buf->device_index)
    return DG_OK;
  if (dev == -1) {
    snprintf(msg, sizeof msg,
             "the buffer is on device %d (%s), and no node %s the tensor",
             buf->device_index, buf->dev->info.name,
             output ? "makes" : "reads");
    return bind_error(diag, call, b->name, what, msg);
  }
  int node = dev == -2 ? elsewhere : -1;
  for (int i = 0; node < 0 && i < s->ir.node_count; i++)
    node = s->placement[i] == dev ? i : -1;
  const dg_node *n = &s->ir.nodes[node];
  const dg_device *on = &s->ctx->devices.items[s->placement[node]];
  char nm[DG_NAME_SHORT];
  dg_name_shorten(nm, sizeof nm, n->name);
  snprintf(msg, sizeof msg,
           "the buffer is on device %d (%s) but node '%s' %s the tensor on "
           "device %d (%s): bind host memory, or a buffer of that device",
           buf->device_index, buf->dev->info.name, nm,
           n->output == b->tensor ? "makes" : "reads", on->info.index,
           on->info.name);
  return bind_error(diag, call, b->name, what, msg);
}

dg_status dg_session_bind_buffer(dg_session *s, const char *name,
                                 dg_buffer *buffer, dg_diagnostic *diag) {
  const char *call = "dg_session_bind_buffer";
  if (!s || !dg_session_alive(s))
    return bind_error(diag, call, "", "session",
                      s ? "not a live session (destroyed?)" : "NULL");
  if (buffer && !dg_buffer_alive(buffer))
    return bind_error(diag, call, name, "buffer",
                      "not a live buffer (destroyed?)");
  if (!dg_session_claim(s, call, diag))
    return DG_ERROR_INVALID_ARGUMENT;
  const dg_ir *ir = &s->ir;
  dg_buffer **slot = NULL;
  const dg_io_binding *b = NULL;
  bool output = false;
  for (int i = 0; name && !slot && i < ir->input_count; i++)
    if (!strcmp(name, ir->inputs[i].name))
      slot = &s->in_buf[i], b = &ir->inputs[i];
  for (int i = 0; name && !slot && i < ir->output_count; i++)
    if (!strcmp(name, ir->outputs[i].name))
      slot = &s->out_buf[i], b = &ir->outputs[i], output = true;
  dg_status st = DG_OK;
  if (!slot) {
    char shown[DG_NAME_SHORT];
    dg_name_shorten(shown, sizeof shown, name ? name : "(null)");
    dg_diag_set(diag, DG_ERROR_NOT_FOUND, -1, NULL, call, "name", NULL, NULL,
                "%s: no input or output named '%s'", call, shown);
    st = DG_ERROR_NOT_FOUND;
  } else if (buffer) {
    st = check_buffer(s, buffer, b, output, diag);
  }
  if (st == DG_OK)
    *slot = buffer;
  dg_session_unclaim(s);
  return st;
}

/* This run's use of a bound buffer: its host memory (*host, a CPU's) or
 * its target's buffer in s->resident; fails if it was destroyed. */
static dg_status use_buffer(dg_session *s, dg_buffer *buf,
                            const dg_io_binding *b, const char *what,
                            void **host, dg_diagnostic *diag) {
  *host = NULL;
  if (!dg_buffer_alive(buf))
    return bad_binding(diag, DG_ERROR_INVALID_ARGUMENT, b->name, what,
                       "its bound buffer was destroyed (dg_session_bind_buffer "
                       "NULL unbinds)");
  if (buf->host)
    *host = buf->host;
  else
    s->resident[b->tensor] = buf->impl;
  return DG_OK;
}

/* A host binding of a name bound to a buffer is ambiguous: refused. */
static dg_status also_bound(dg_diagnostic *diag, const char *name,
                            const char *what) {
  return bad_binding(diag, DG_ERROR_INVALID_ARGUMENT, name, what,
                     "bound to a buffer (dg_session_bind_buffer): give it no "
                     "host binding, or unbind the buffer");
}

dg_status dg_session_execute(dg_session *s, const dg_binding *inputs,
                             int input_count, dg_diagnostic *diag) {
  const dg_ir *ir = &s->ir;
  if (input_count < 0 || (input_count && !inputs))
    return bad_binding(diag, DG_ERROR_INVALID_ARGUMENT, "", "inputs",
                       "input array is NULL or its count negative");
  for (int k = 0; k < input_count; k++) {
    bool known = false;
    for (int i = 0; i < ir->input_count && !known; i++)
      known = inputs[k].name && !strcmp(inputs[k].name, ir->inputs[i].name);
    if (!known)
      return bad_binding(diag, DG_ERROR_NOT_FOUND, inputs[k].name, "input",
                         "no input of this name");
  }
  for (int i = 0; i < ir->input_count; i++) {
    const dg_io_binding *b = &ir->inputs[i];
    const dg_binding *u = NULL;
    for (int k = 0; k < input_count; k++)
      if (inputs[k].name && !strcmp(inputs[k].name, b->name))
        u = &inputs[k];
    const dg_tensor_desc *d = &dg_ir_tensor(ir, b->tensor)->desc;
    if (s->in_buf[i]) {
      if (u)
        return also_bound(diag, b->name, "input");
      void *host;
      dg_status st = use_buffer(s, s->in_buf[i], b, "input", &host, diag);
      if (st != DG_OK)
        return st;
      s->host[b->tensor] = host; /* NULL for a device's: never read */
      continue;
    }
    if (!u)
      return bad_binding(diag, DG_ERROR_INVALID_ARGUMENT, b->name, "input",
                         "not bound");
    if (!u->data)
      return bad_binding(diag, DG_ERROR_INVALID_ARGUMENT, b->name, "input",
                         "data is NULL");
    dg_tensor_desc bd = dg_ir_io_desc(ir, b);
    if (u->size != dg_desc_bytes(&bd)) {
      char msg[192], dims[96];
      dg_format_dims(dims, sizeof dims, bd.rank, bd.dims);
      snprintf(msg, sizeof msg, "size %zu bytes, expected %zu (%s %s%s)",
               u->size, dg_desc_bytes(&bd), dg_dtype_name(bd.dtype), dims,
               b->layout == DG_LAYOUT_NHWC ? ", NCHW dims, bound as NHWC" : "");
      return bad_binding(diag, DG_ERROR_INVALID_ARGUMENT, b->name, "input",
                         msg);
    }
    if (b->host_f32) { /* DG_PRECISION_FAST_F16 holds it in f16 */
      uint16_t *dst = (void *)((char *)s->io_scratch + s->io_offsets[i]);
      dg_f32_to_f16_n(u->data, dst, dg_desc_elements(d));
      s->host[b->tensor] = dst;
    } else if (b->layout == DG_LAYOUT_NHWC) {
      void *dst = (char *)s->io_scratch + s->io_offsets[i];
      nhwc_to_nchw(d, u->data, dst);
      s->host[b->tensor] = dst;
    } else {
      s->host[b->tensor] = u->data;
    }
  }
  for (int i = 0; i < s->segment_count; i++) {
    dg_segment_rt *seg = &s->segments[i];
    dg_status st = seg->dev->vt->run(seg->state, s->host, s->resident,
                                     s->node_us + seg->first, diag);
    if (st != DG_OK)
      return st;
  }
  for (int i = 0; i < ir->node_count; i++)
    s->plan.nodes[i].measured_us = s->node_us[i];
  return DG_OK;
}

static const dg_io_binding *find_output(const dg_ir *ir, const char *name) {
  for (int o = 0; name && o < ir->output_count; o++)
    if (!strcmp(name, ir->outputs[o].name))
      return &ir->outputs[o];
  return NULL;
}

bool dg_session_claim(dg_session *s, const char *call, dg_diagnostic *diag) {
  dg_live_claim_result r = dg_live_claim(s, DG_LIVE_SESSION);
  if (r == DG_LIVE_CLAIMED)
    return true;
  if (r == DG_LIVE_NOT_LIVE) {
    dg_diag_set(diag, DG_ERROR_INVALID_ARGUMENT, -1, NULL, call, "session",
                "a live session", "not one",
                "%s: not a live session (destroyed?)", call);
    return false;
  }
  dg_diag_set(diag, DG_ERROR_INVALID_ARGUMENT, -1, NULL, call, "session",
              "no other run of this session in progress", "a run in progress",
              "%s: the session is already running (dg_session_run or "
              "dg_session_verify on another thread); one session runs one "
              "call at a time: compile one session per thread",
              call);
  return false;
}

static dg_status run_claimed(dg_session *s, const dg_binding *inputs,
                             int input_count, const dg_binding *outputs,
                             int output_count, dg_diagnostic *diag);

dg_status dg_session_run(dg_session *s, const dg_binding *inputs,
                         int input_count, const dg_binding *outputs,
                         int output_count, dg_diagnostic *diag) {
  if (!s)
    return bad_binding(diag, DG_ERROR_INVALID_ARGUMENT, "", "session",
                       "session is NULL");
  if (!dg_session_alive(s))
    return bad_binding(diag, DG_ERROR_INVALID_ARGUMENT, "", "session",
                       "not a live session (destroyed?)");
  if (!dg_session_claim(s, "dg_session_run", diag))
    return DG_ERROR_INVALID_ARGUMENT;
  dg_status st =
      run_claimed(s, inputs, input_count, outputs, output_count, diag);
  dg_session_unclaim(s);
  return st;
}

static dg_status run_claimed(dg_session *s, const dg_binding *inputs,
                             int input_count, const dg_binding *outputs,
                             int output_count, dg_diagnostic *diag) {
  const dg_ir *ir = &s->ir;
  if (output_count < 0 || (output_count && !outputs))
    return bad_binding(diag, DG_ERROR_INVALID_ARGUMENT, "", "outputs",
                       "output array is NULL or its count negative");
  /* Check output bindings before running, so nothing runs in vain. */
  for (int k = 0; k < output_count; k++) {
    const dg_io_binding *b = find_output(ir, outputs[k].name);
    if (!b)
      return bad_binding(diag, DG_ERROR_NOT_FOUND, outputs[k].name, "output",
                         "no output of this name");
    if (s->out_buf[b - ir->outputs])
      return also_bound(diag, b->name, "output");
    dg_tensor_desc bd = dg_ir_io_desc(ir, b);
    size_t want = dg_desc_bytes(&bd);
    if (!outputs[k].data || outputs[k].size != want) {
      char msg[192], dims[96];
      dg_format_dims(dims, sizeof dims, bd.rank, bd.dims);
      snprintf(msg, sizeof msg, "%s (size %zu bytes, expected %zu: %s %s)",
               outputs[k].data ? "wrong size" : "data is NULL", outputs[k].size,
               want, dg_dtype_name(bd.dtype), dims);
      return bad_binding(diag, DG_ERROR_INVALID_ARGUMENT, outputs[k].name,
                         "output", msg);
    }
  }
  /* NCHW outputs made by a node are written straight into the caller's
   * buffer (no copy); the arena region is simply left unused this run.
   * So are CPU dg_buffers'; a device's dg_buffer is the target's. */
  int nout = output_count;
  for (int o = 0; o < ir->output_count; o++)
    nout += s->out_buf[o] != NULL;
  void **direct = calloc((size_t)nout + 1, sizeof(void *));
  void **data = calloc((size_t)nout + 1, sizeof(void *));
  const dg_io_binding **which = calloc((size_t)nout + 1, sizeof *which);
  if (!direct || !data || !which) {
    free(direct), free(data), free(which);
    return bad_binding(diag, DG_ERROR_OUT_OF_MEMORY, "", "outputs",
                       "out of host memory");
  }
  /* The caller's host bindings, then the bound buffers: a CPU's as host
   * memory, a device's (data NULL) left to its target. */
  dg_status st = DG_OK;
  for (int k = 0; k < output_count; k++)
    data[k] = outputs[k].data, which[k] = find_output(ir, outputs[k].name);
  for (int o = 0, k = output_count; o < ir->output_count && st == DG_OK; o++)
    if (s->out_buf[o]) {
      which[k] = &ir->outputs[o];
      st = use_buffer(s, s->out_buf[o], which[k], "output", &data[k], diag);
      k++;
    }
  for (int k = 0; k < nout && st == DG_OK; k++) {
    const dg_io_binding *b = which[k];
    uint32_t t = b->tensor;
    if (!data[k]) /* a device's dg_buffer */
      continue;
    if (b->layout == DG_LAYOUT_NCHW && !b->host_f32 &&
        dg_ir_tensor(ir, t)->kind == DG_TENSOR_VALUE &&
        s->offsets[t - 1] != SIZE_MAX &&
        s->host[t] == (char *)s->arena + s->offsets[t - 1]) {
      direct[k] = s->host[t];
      s->host[t] = data[k];
    }
  }
  if (st == DG_OK)
    st = dg_session_execute(s, inputs, input_count, diag);
  for (int k = 0; k < nout && st == DG_OK; k++) {
    const dg_io_binding *b = which[k];
    const dg_tensor_desc *d = &dg_ir_tensor(ir, b->tensor)->desc;
    size_t bytes = dg_desc_bytes(d);
    if (!data[k])
      continue;
    if (b->host_f32)
      dg_f16_to_f32_n(s->host[b->tensor], data[k], dg_desc_elements(d));
    else if (b->layout == DG_LAYOUT_NHWC)
      nchw_to_nhwc(d, s->host[b->tensor], data[k]);
    else if (s->host[b->tensor] != data[k])
      memcpy(data[k], s->host[b->tensor], bytes);
  }
  for (int k = nout - 1; k >= 0; k--)
    if (direct[k])
      s->host[which[k]->tensor] = direct[k];
  free(direct), free(data), free(which);
  memset(s->resident, 0, sizeof(void *) * ((size_t)ir->tensor_count + 1));
  return st;
}
