/* dg_session_bind_buffer: device buffers bound to a session's inputs
 * and outputs, checked once against graph.h's rules (run.c uses them at
 * every run). */
#define _POSIX_C_SOURCE 200809L
#include "session.h"

#include <stdio.h>
#include <string.h>

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
  dg_diag_set(diag, DG_ERROR_INVALID_ARGUMENT, -1, NULL, call, what, NULL, NULL,
              "%s: %s '%s': %s", call, what, shown, msg);
  return DG_ERROR_INVALID_ARGUMENT;
}

/* Checks buffer buf against graph.h's rules for input or output b of s
 * (dg_session_bind_buffer). */
static dg_status check_buffer(const dg_session *s, const dg_buffer *buf,
                              const dg_io_binding *b, bool output,
                              dg_diagnostic *diag) {
  const char *call = "dg_session_bind_buffer",
             *what = output ? "output" : "input";
  /* A buffer holds the tensor as the session holds it: NCHW, and in f16
   * where the fast precision holds an f32 tensor in f16 (no conversion,
   * on the host or anywhere). */
  dg_tensor_desc bd = dg_ir_io_desc(&s->ir, b);
  if (b->host_f32)
    bd.dtype = DG_DTYPE_F16;
  char msg[512], dims[96], bdims[96];
  if (buf->ctx != s->ctx)
    return bind_error(diag, call, b->name, what,
                      "the buffer belongs to another context");
  if (b->layout == DG_LAYOUT_NHWC)
    return bind_error(diag, call, b->name, what,
                      "bound NHWC: a buffer binds NCHW only");
  dg_format_dims(dims, sizeof dims, bd.rank, bd.dims);
  dg_format_dims(bdims, sizeof bdims, buf->desc.rank, buf->desc.dims);
  if (buf->desc.dtype != bd.dtype || buf->desc.rank != bd.rank ||
      memcmp(buf->desc.dims, bd.dims, sizeof(int64_t) * (size_t)bd.rank)) {
    snprintf(
        msg, sizeof msg, "the buffer holds %s %s, the tensor is %s %s%s",
        dg_dtype_name(buf->desc.dtype), bdims, dg_dtype_name(bd.dtype), dims,
        b->host_f32 ? " (an f32 tensor the fast precision holds in f16)" : "");
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
  if (buf->host) /* the CPU's: host memory, read or written as it is */
    return DG_OK;
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
  if (!dg_session_check(s, call, diag))
    return DG_ERROR_INVALID_ARGUMENT;
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
