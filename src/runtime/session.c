/* Compile (placement, segments, host memory plan, per-target compile) and
 * run. */
#define _POSIX_C_SOURCE 200809L
#include "session.h"

#include "core/half.h"

#include "concat_slices.h"
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
  /* Concat inputs in their slices of the output (concat_slices.h): they
   * get no block of their own. */
  uint32_t *slice_of = malloc(sizeof(uint32_t) * (size_t)(T + 1));
  size_t *slice_at = malloc(sizeof(size_t) * (size_t)(T + 1));
  bool *host_node = malloc(sizeof(bool) * (size_t)(N + 1));
  if (!slice_of || !slice_at || !host_node) {
    free(first), free(last), free(seg_of), free(blocks), free(tid);
    free(slice_of), free(slice_at), free(host_node);
    return DG_ERROR_OUT_OF_MEMORY;
  }
  for (int i = 0; i < N; i++)
    host_node[i] = s->segments[seg_of[i]].dev->host_memory;
  s->plan.concats_in_place =
      dg_concat_slices(ir, host_node, first, last, slice_of, slice_at, ALIGN);
  free(host_node);
  /* Tensors in id order, which is creation order: the planner's ties
   * then follow the graph. */
  int count = 0;
  for (int t = 1; t <= T; t++)
    if (first[t] >= 0 && ir->tensors[t - 1].kind == DG_TENSOR_VALUE &&
        !slice_of[t]) {
      blocks[count] = (dg_mem_block){dg_desc_bytes(&ir->tensors[t - 1].desc),
                                     first[t], last[t], s->keep_all, 0};
      tid[count++] = (uint32_t)t;
    }
  free(first), free(last), free(seg_of);
  bool oom = false;
  size_t top = dg_memplan_place(blocks, count, ALIGN, 0, &oom);
  if (oom || top == SIZE_MAX) {
    free(blocks), free(tid), free(slice_of), free(slice_at);
    return DG_ERROR_OUT_OF_MEMORY;
  }
  for (int t = 0; t < T; t++)
    s->offsets[t] = SIZE_MAX;
  for (int c = 0; c < count; c++)
    s->offsets[tid[c] - 1] = blocks[c].offset;
  /* a slice's offset: its own in its holder's, which may be a slice of
   * another (DenseNet's), up to one that got a block above */
  for (int t = 1; t <= T; t++) {
    if (!slice_of[t])
      continue;
    size_t at = 0;
    uint32_t h = (uint32_t)t;
    for (; slice_of[h]; h = slice_of[h])
      at += slice_at[h];
    s->offsets[t - 1] = s->offsets[h - 1] + at;
  }
  free(blocks), free(tid), free(slice_of), free(slice_at);
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
  if (s && dg_session_alive(s))
    dg_session_drop_run(s); /* a submitted run nobody waited for */
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

bool dg_session_check(const dg_session *s, const char *call,
                      dg_diagnostic *diag) {
  if (s && dg_session_alive(s))
    return true;
  dg_diag_set(diag, DG_ERROR_INVALID_ARGUMENT, -1, NULL, call, "session",
              "a live session", s ? "not one" : "NULL", "%s: %s", call,
              s ? "not a live session (destroyed?)" : "session is NULL");
  return false;
}

bool dg_session_claim(dg_session *s, const char *call, dg_diagnostic *diag) {
  dg_live_claim_result r =
      s ? dg_live_claim(s, DG_LIVE_SESSION) : DG_LIVE_NOT_LIVE;
  if (r == DG_LIVE_CLAIMED)
    return true;
  if (r == DG_LIVE_NOT_LIVE)
    return dg_session_check(s, call, diag); /* false, saying why */
  dg_diag_set(diag, DG_ERROR_INVALID_ARGUMENT, -1, NULL, call, "session",
              "no other run of this session in progress", "a run in progress",
              "%s: the session is already running (dg_session_run or "
              "dg_session_verify on another thread, or a dg_session_submit "
              "not yet waited for); one session runs one call at a time: "
              "compile one session per thread",
              call);
  return false;
}
