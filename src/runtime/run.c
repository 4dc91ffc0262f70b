/* Running a compiled session: host bindings checked and converted
 * (NHWC, the fast precision's f16), bound buffers used, every segment
 * run in order, outputs delivered; dg_session_run does it all at once,
 * dg_session_submit / dg_session_wait split it at the last segment's
 * device wait (graph.h). */
#define _POSIX_C_SOURCE 200809L
#include "session.h"

#include "core/half.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

dg_status dg_run_refuse(dg_diagnostic *diag, dg_status st, const char *name,
                        const char *field, const char *what) {
  char shown[DG_NAME_SHORT]; /* a long name must leave room for what */
  dg_name_shorten(shown, sizeof shown, name ? name : "(null)");
  dg_diag_set(diag, st, -1, NULL, "dg_session_run", field, NULL, NULL,
              "dg_session_run: %s '%s': %s", field, shown, what);
  return st;
}

/* This run's use of a bound buffer: its host memory (*host, a CPU's) or
 * its target's buffer in s->resident; fails if it was destroyed. */
static dg_status use_buffer(dg_session *s, dg_buffer *buf,
                            const dg_io_binding *b, const char *what,
                            void **host, dg_diagnostic *diag) {
  *host = NULL;
  if (!dg_buffer_alive(buf))
    return dg_run_refuse(
        diag, DG_ERROR_INVALID_ARGUMENT, b->name, what,
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
  return dg_run_refuse(diag, DG_ERROR_INVALID_ARGUMENT, name, what,
                       "bound to a buffer (dg_session_bind_buffer): give it no "
                       "host binding, or unbind the buffer");
}

/* Binds every input: a host binding checked (and converted: the fast
 * precision's f16, NHWC) into s->host, a bound buffer into s->resident
 * (or s->host, a CPU's). */
static dg_status bind_inputs(dg_session *s, const dg_binding *inputs,
                             int input_count, dg_diagnostic *diag) {
  const dg_ir *ir = &s->ir;
  if (input_count < 0 || (input_count && !inputs))
    return dg_run_refuse(diag, DG_ERROR_INVALID_ARGUMENT, "", "inputs",
                         "input array is NULL or its count negative");
  for (int k = 0; k < input_count; k++) {
    bool known = false;
    for (int i = 0; i < ir->input_count && !known; i++)
      known = inputs[k].name && !strcmp(inputs[k].name, ir->inputs[i].name);
    if (!known)
      return dg_run_refuse(diag, DG_ERROR_NOT_FOUND, inputs[k].name, "input",
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
      return dg_run_refuse(diag, DG_ERROR_INVALID_ARGUMENT, b->name, "input",
                           "not bound");
    if (!u->data)
      return dg_run_refuse(diag, DG_ERROR_INVALID_ARGUMENT, b->name, "input",
                           "data is NULL");
    dg_tensor_desc bd = dg_ir_io_desc(ir, b);
    if (u->size != dg_desc_bytes(&bd)) {
      char msg[192], dims[96];
      dg_format_dims(dims, sizeof dims, bd.rank, bd.dims);
      snprintf(msg, sizeof msg, "size %zu bytes, expected %zu (%s %s%s)",
               u->size, dg_desc_bytes(&bd), dg_dtype_name(bd.dtype), dims,
               b->layout == DG_LAYOUT_NHWC ? ", NCHW dims, bound as NHWC" : "");
      return dg_run_refuse(diag, DG_ERROR_INVALID_ARGUMENT, b->name, "input",
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
  return DG_OK;
}

/* Runs every segment in order. With async, the last one's device work is
 * only submitted where its target splits submit from wait (s->waiting
 * then; wait_last ends it); everything else runs to its end here. */
static dg_status run_segments(dg_session *s, bool async, dg_diagnostic *diag) {
  for (int i = 0; i < s->segment_count; i++) {
    dg_segment_rt *seg = &s->segments[i];
    const dg_target_vtbl *vt = seg->dev->vt;
    dg_status st;
    if (async && i == s->segment_count - 1 && vt->submit) {
      st = vt->submit(seg->state, s->host, s->resident, diag);
      s->waiting = st == DG_OK;
    } else {
      st = vt->run(seg->state, s->host, s->resident, s->node_us + seg->first,
                   diag);
    }
    if (st != DG_OK)
      return st;
  }
  return DG_OK;
}

/* Ends the submitted last segment: its outputs into s->host, or nowhere
 * when deliver is false (a destroy). */
static dg_status wait_last(dg_session *s, bool deliver, dg_diagnostic *diag) {
  dg_segment_rt *seg = &s->segments[s->segment_count - 1];
  s->waiting = false;
  return seg->dev->vt->wait(seg->state, deliver ? s->host : NULL,
                            s->node_us + seg->first, diag);
}

static void keep_times(dg_session *s) {
  for (int i = 0; i < s->ir.node_count; i++)
    s->plan.nodes[i].measured_us = s->node_us[i];
}

dg_status dg_session_execute(dg_session *s, const dg_binding *inputs,
                             int input_count, dg_diagnostic *diag) {
  dg_status st = bind_inputs(s, inputs, input_count, diag);
  if (st == DG_OK)
    st = run_segments(s, false, diag);
  if (st == DG_OK)
    keep_times(s);
  return st;
}

static const dg_io_binding *find_output(const dg_ir *ir, const char *name) {
  for (int o = 0; name && o < ir->output_count; o++)
    if (!strcmp(name, ir->outputs[o].name))
      return &ir->outputs[o];
  return NULL;
}

/* The outputs a run delivers (s->out): checked, each host binding's
 * data (a CPU buffer's too; NULL for a device's buffer, its target
 * writes it), and where the caller's memory stands in for the arena
 * (direct: the arena pointer to put back). */
static dg_status prepare_outputs(dg_session *s, const dg_binding *outputs,
                                 int output_count, dg_diagnostic *diag) {
  const dg_ir *ir = &s->ir;
  dg_run_outputs *ro = &s->out;
  if (output_count < 0 || (output_count && !outputs))
    return dg_run_refuse(diag, DG_ERROR_INVALID_ARGUMENT, "", "outputs",
                         "output array is NULL or its count negative");
  /* Check output bindings before running, so nothing runs in vain. */
  for (int k = 0; k < output_count; k++) {
    const dg_io_binding *b = find_output(ir, outputs[k].name);
    if (!b)
      return dg_run_refuse(diag, DG_ERROR_NOT_FOUND, outputs[k].name, "output",
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
      return dg_run_refuse(diag, DG_ERROR_INVALID_ARGUMENT, outputs[k].name,
                           "output", msg);
    }
  }
  int n = output_count;
  for (int o = 0; o < ir->output_count; o++)
    n += s->out_buf[o] != NULL;
  ro->direct = calloc((size_t)n + 1, sizeof(void *));
  ro->data = calloc((size_t)n + 1, sizeof(void *));
  ro->which = calloc((size_t)n + 1, sizeof *ro->which);
  if (!ro->direct || !ro->data || !ro->which)
    return dg_run_refuse(diag, DG_ERROR_OUT_OF_MEMORY, "", "outputs",
                         "out of host memory");
  ro->n = n;
  ro->bound_from = output_count;
  /* The caller's host bindings, then the bound buffers: a CPU's as host
   * memory, a device's (data NULL) left to its target. */
  for (int k = 0; k < output_count; k++)
    ro->data[k] = outputs[k].data,
    ro->which[k] = find_output(ir, outputs[k].name);
  for (int o = 0, k = output_count; o < ir->output_count; o++)
    if (s->out_buf[o]) {
      ro->which[k] = &ir->outputs[o];
      dg_status st = use_buffer(s, s->out_buf[o], ro->which[k], "output",
                                &ro->data[k], diag);
      if (st != DG_OK)
        return st;
      k++;
    }
  /* NCHW outputs made by a node are written straight into the caller's
   * memory (no copy); the arena region is simply left unused this run. */
  for (int k = 0; k < n; k++) {
    const dg_io_binding *b = ro->which[k];
    uint32_t t = b->tensor;
    if (ro->data[k] &&
        (k >= ro->bound_from ||
         (b->layout == DG_LAYOUT_NCHW && !b->host_f32)) &&
        dg_ir_tensor(ir, t)->kind == DG_TENSOR_VALUE &&
        s->offsets[t - 1] != SIZE_MAX &&
        s->host[t] == (char *)s->arena + s->offsets[t - 1]) {
      ro->direct[k] = s->host[t];
      s->host[t] = ro->data[k];
    }
  }
  return DG_OK;
}

/* Ends a run that got as far as prepare_outputs (or failed in it): on
 * success (and deliver) the outputs converted or copied into the
 * caller's memory; the arena pointers put back either way. */
static dg_status finish(dg_session *s, dg_status st, bool deliver) {
  const dg_ir *ir = &s->ir;
  dg_run_outputs *ro = &s->out;
  if (st == DG_OK)
    keep_times(s);
  for (int k = 0; k < ro->n && st == DG_OK && deliver; k++) {
    const dg_io_binding *b = ro->which[k];
    const dg_tensor_desc *d = &dg_ir_tensor(ir, b->tensor)->desc;
    void *dst = ro->data[k];
    if (!dst)
      continue;
    if (k >= ro->bound_from) {
      if (s->host[b->tensor] != dst)
        memcpy(dst, s->host[b->tensor], dg_desc_bytes(d));
    } else if (b->host_f32)
      dg_f16_to_f32_n(s->host[b->tensor], dst, dg_desc_elements(d));
    else if (b->layout == DG_LAYOUT_NHWC)
      nchw_to_nhwc(d, s->host[b->tensor], dst);
    else if (s->host[b->tensor] != dst)
      memcpy(dst, s->host[b->tensor], dg_desc_bytes(d));
  }
  for (int k = ro->n - 1; k >= 0; k--)
    if (ro->direct && ro->direct[k])
      s->host[ro->which[k]->tensor] = ro->direct[k];
  free(ro->direct), free(ro->data), free(ro->which);
  memset(ro, 0, sizeof *ro);
  /* Only bound tensors were set (use_buffer): not a sweep of every id. */
  for (int i = 0; i < ir->input_count; i++)
    s->resident[ir->inputs[i].tensor] = NULL;
  for (int o = 0; o < ir->output_count; o++)
    s->resident[ir->outputs[o].tensor] = NULL;
  return st;
}

/* A claimed session's run up to its end (async false) or up to the last
 * segment's submission. */
static dg_status begin(dg_session *s, const dg_binding *inputs, int input_count,
                       const dg_binding *outputs, int output_count, bool async,
                       dg_diagnostic *diag) {
  dg_status st = prepare_outputs(s, outputs, output_count, diag);
  if (st == DG_OK)
    st = bind_inputs(s, inputs, input_count, diag);
  if (st == DG_OK)
    st = run_segments(s, async, diag);
  return st;
}

dg_status dg_session_run(dg_session *s, const dg_binding *inputs,
                         int input_count, const dg_binding *outputs,
                         int output_count, dg_diagnostic *diag) {
  if (!dg_session_claim(s, "dg_session_run", diag))
    return DG_ERROR_INVALID_ARGUMENT;
  dg_status st =
      begin(s, inputs, input_count, outputs, output_count, false, diag);
  st = finish(s, st, true);
  dg_session_unclaim(s);
  return st;
}

dg_status dg_session_submit(dg_session *s, const dg_binding *inputs,
                            int input_count, const dg_binding *outputs,
                            int output_count, dg_diagnostic *diag) {
  if (!dg_session_claim(s, "dg_session_submit", diag))
    return DG_ERROR_INVALID_ARGUMENT;
  dg_status st =
      begin(s, inputs, input_count, outputs, output_count, true, diag);
  if (st != DG_OK) { /* nothing left on a device: ended here */
    finish(s, st, false);
    dg_session_unclaim(s);
    return st;
  }
  atomic_store(&s->submitted, true); /* claimed until dg_session_wait */
  return DG_OK;
}

dg_status dg_session_wait(dg_session *s, dg_diagnostic *diag) {
  const char *call = "dg_session_wait";
  if (!dg_session_check(s, call, diag))
    return DG_ERROR_INVALID_ARGUMENT;
  if (!atomic_exchange(&s->submitted, false)) {
    dg_diag_set(diag, DG_ERROR_INVALID_ARGUMENT, -1, NULL, call, "session",
                "a submitted run", "none",
                "%s: no run of the session was submitted (or another thread "
                "waits for it)",
                call);
    return DG_ERROR_INVALID_ARGUMENT;
  }
  dg_status st = s->waiting ? wait_last(s, true, diag) : DG_OK;
  st = finish(s, st, true);
  dg_session_unclaim(s);
  return st;
}

void dg_session_drop_run(dg_session *s) {
  if (!atomic_exchange(&s->submitted, false))
    return;
  if (s->waiting)
    wait_last(s, false, NULL);
  finish(s, DG_OK, false);
  dg_session_unclaim(s);
}
