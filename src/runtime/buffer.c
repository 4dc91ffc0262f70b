/* Device buffers (graph.h's dg_buffer): a tensor's bytes on one device.
 * The CPU's are aligned host memory kept here; a GPU target's come from
 * its vtbl (buffer_create / buffer_copy / buffer_destroy). Binding them
 * to a session's run is session.c's. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define HOST_ALIGN 64

static dg_status refuse(dg_diagnostic *diag, dg_status st, const char *call,
                        const char *field, const char *fmt, const char *what) {
  dg_diag_set(diag, st, -1, NULL, call, field, NULL, NULL, fmt, call, what);
  return st;
}

/* dtype and dims a buffer can hold, and their byte size; NULL or why. */
static const char *check_desc(const dg_tensor_desc *d, size_t *bytes) {
  if (d->dtype <= DG_DTYPE_INVALID || d->dtype >= DG_DTYPE_COUNT_)
    return "desc.dtype is not a dtype";
  if (d->rank < 0 || d->rank > DG_MAX_RANK)
    return "desc.rank is outside 0..6";
  uint64_t n = dg_dtype_size(d->dtype);
  for (int i = 0; i < d->rank; i++) {
    if (d->dims[i] < 1)
      return "desc.dims has a dim below 1";
    if ((uint64_t)d->dims[i] > (UINT64_MAX >> 2) / n)
      return "desc.dims overflow a size";
    n *= (uint64_t)d->dims[i];
  }
  if (n > SIZE_MAX / 2)
    return "desc.dims overflow a size";
  *bytes = (size_t)n;
  return NULL;
}

dg_status dg_buffer_create(dg_context *ctx, int device_index,
                           const dg_tensor_desc *desc, dg_buffer **out,
                           dg_diagnostic *diag) {
  const char *call = "dg_buffer_create";
  if (out)
    *out = NULL;
  if (!out || !desc)
    return refuse(diag, DG_ERROR_INVALID_ARGUMENT, call, out ? "desc" : "out",
                  "%s: %s is NULL", out ? "desc" : "out");
  if (!(ctx = dg_context_alive(ctx)))
    return refuse(diag, DG_ERROR_INVALID_ARGUMENT, call, "ctx", "%s: %s",
                  "not a live context");
  if (device_index < 0 || device_index >= ctx->devices.count) {
    dg_diag_set(diag, DG_ERROR_NOT_FOUND, -1, NULL, call, "device_index", NULL,
                NULL, "%s: no device %d (the context has 0..%d)", call,
                device_index, ctx->devices.count - 1);
    return DG_ERROR_NOT_FOUND;
  }
  size_t bytes = 0;
  const char *bad = check_desc(desc, &bytes);
  if (bad)
    return refuse(diag, DG_ERROR_INVALID_ARGUMENT, call, "desc", "%s: %s", bad);
  dg_device *dev = &ctx->devices.items[device_index];
  if (!dev->host_memory && !dev->vt->buffer_create) {
    dg_diag_set(diag, DG_ERROR_UNSUPPORTED, -1, NULL, call, "device_index",
                NULL, NULL,
                "%s: device %d (%s) keeps no buffers of its own; bind host "
                "memory for it",
                call, device_index, dev->info.name);
    return DG_ERROR_UNSUPPORTED;
  }
  dg_buffer *b = calloc(1, sizeof *b);
  if (!b)
    return refuse(diag, DG_ERROR_OUT_OF_MEMORY, call, NULL, "%s: %s",
                  "out of host memory");
  b->device_index = device_index;
  b->dev = dev;
  b->desc.dtype = desc->dtype;
  b->desc.rank = desc->rank;
  memcpy(b->desc.dims, desc->dims, sizeof b->desc.dims);
  b->bytes = bytes;
  dg_status st = DG_OK;
  if (dev->host_memory) {
    size_t round = (bytes + HOST_ALIGN - 1) / HOST_ALIGN * HOST_ALIGN;
    if (posix_memalign(&b->host, HOST_ALIGN, round ? round : HOST_ALIGN)) {
      b->host = NULL;
      st = refuse(diag, DG_ERROR_OUT_OF_MEMORY, call, NULL, "%s: %s",
                  "out of host memory");
    }
  } else {
    st = dev->vt->buffer_create(dev, bytes, &b->impl, diag);
  }
  if (st == DG_OK && !dg_live_add(b, DG_LIVE_BUFFER)) {
    st = refuse(diag, DG_ERROR_OUT_OF_MEMORY, call, NULL, "%s: %s",
                "out of host memory");
    if (b->impl)
      dev->vt->buffer_destroy(dev, b->impl);
  }
  if (st != DG_OK) {
    free(b->host);
    free(b);
    return st;
  }
  dg_context_ref(ctx);
  b->ctx = ctx;
  *out = b;
  return DG_OK;
}

void dg_buffer_destroy(dg_buffer *b) {
  if (!b || !dg_live_remove(b, DG_LIVE_BUFFER))
    return;
  if (b->impl)
    b->dev->vt->buffer_destroy(b->dev, b->impl);
  free(b->host);
  dg_context *ctx = b->ctx;
  free(b);
  dg_context_unref(ctx);
}

static dg_status copy(dg_buffer *b, void *data, size_t size, bool to_device,
                      const char *call, dg_diagnostic *diag) {
  if (!(b = dg_buffer_alive(b)))
    return refuse(diag, DG_ERROR_INVALID_ARGUMENT, call, "buffer", "%s: %s",
                  "not a live buffer (destroyed?)");
  if (!data)
    return refuse(diag, DG_ERROR_INVALID_ARGUMENT, call, "data", "%s: %s",
                  "data is NULL");
  if (size != b->bytes) {
    char dims[96];
    dg_format_dims(dims, sizeof dims, b->desc.rank, b->desc.dims);
    dg_diag_set(diag, DG_ERROR_INVALID_ARGUMENT, -1, NULL, call, "size", NULL,
                NULL, "%s: size %zu bytes, expected %zu (%s %s)", call, size,
                b->bytes, dg_dtype_name(b->desc.dtype), dims);
    return DG_ERROR_INVALID_ARGUMENT;
  }
  if (b->host) {
    if (to_device)
      memcpy(b->host, data, size);
    else
      memcpy(data, b->host, size);
    return DG_OK;
  }
  return b->dev->vt->buffer_copy(b->dev, b->impl, data, size, to_device, diag);
}

dg_status dg_buffer_write(dg_buffer *b, const void *data, size_t size,
                          dg_diagnostic *diag) {
  return copy(b, (void *)data, size, true, "dg_buffer_write", diag);
}

dg_status dg_buffer_read(dg_buffer *b, void *data, size_t size,
                         dg_diagnostic *diag) {
  return copy(b, data, size, false, "dg_buffer_read", diag);
}

dg_status dg_buffer_info(const dg_buffer *buffer, dg_tensor_desc *desc,
                         int *device_index) {
  const dg_buffer *b = dg_buffer_alive(buffer);
  if (!b)
    return DG_ERROR_INVALID_ARGUMENT;
  if (desc)
    *desc = b->desc;
  if (device_index)
    *device_index = b->device_index;
  return DG_OK;
}
