/* The base of every layer: status and dtype names and sizes, bounded
 * string copies, dims formatting and structured diagnostics (diag.h). */
#include "diag.h"

#include "names.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define DG_STRING_OF(x) #x
#define DG_STRING(x) DG_STRING_OF(x)
/* From graph.h's macros, the version's one home (meson.build reads them
 * too). */
const char *dg_version_string(void) {
  return DG_STRING(DG_VERSION_MAJOR) "." DG_STRING(
      DG_VERSION_MINOR) "." DG_STRING(DG_VERSION_PATCH);
}

const char *dg_status_string(dg_status s) {
  switch (s) {
  case DG_OK:
    return "ok";
  case DG_ERROR_INVALID_ARGUMENT:
    return "invalid argument";
  case DG_ERROR_INVALID_SHAPE:
    return "invalid shape";
  case DG_ERROR_INVALID_DTYPE:
    return "invalid dtype";
  case DG_ERROR_UNSUPPORTED:
    return "unsupported";
  case DG_ERROR_OUT_OF_MEMORY:
    return "out of memory";
  case DG_ERROR_DEVICE:
    return "device error";
  case DG_ERROR_IO:
    return "i/o error";
  case DG_ERROR_GRAPH_FAILED:
    return "graph already failed";
  case DG_ERROR_NOT_FOUND:
    return "not found";
  case DG_ERROR_MISMATCH:
    return "mismatch";
  case DG_ERROR_OVERFLOW:
    return "size overflow";
  }
  return "unknown status";
}

const char *dg_dtype_name(dg_dtype t) {
  static const char *const names[] = {"invalid", "f32", "f16",  "i8",
                                      "u8",      "i32", "bool", "i64"};
  return (t >= 0 && t < DG_DTYPE_COUNT_) ? names[t] : "?";
}

size_t dg_dtype_size(dg_dtype t) {
  switch (t) {
  case DG_DTYPE_F32:
  case DG_DTYPE_I32:
    return 4;
  case DG_DTYPE_F16:
    return 2;
  case DG_DTYPE_I8:
  case DG_DTYPE_U8:
  case DG_DTYPE_BOOL:
    return 1;
  case DG_DTYPE_I64:
    return 8;
  default:
    return 0;
  }
}

void dg_strlcpy(char *dst, const char *src, size_t size) {
  if (!size)
    return;
  if (!src)
    src = "";
  size_t n = strlen(src);
  if (n >= size)
    n = size - 1;
  memcpy(dst, src, n);
  dst[n] = 0;
}

void dg_format_dims(char *buf, size_t size, int rank, const int64_t *dims) {
  size_t used = 0;
  used += (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < rank && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? ", " : "",
                             (long long)dims[i]);
  if (used < size)
    snprintf(buf + used, size - used, "]");
}

void dg_diag_set(dg_diagnostic *d, dg_status st, int node_index,
                 const char *node_name, const char *op, const char *field,
                 const char *expected, const char *actual, const char *fmt,
                 ...) {
  if (!d)
    return;
  memset(d, 0, sizeof *d);
  d->status = st;
  d->node_index = node_index;
  /* Names (of nodes, inputs, tensors in fields) can be of any length:
   * whatever does not fit is cut visibly, never silently. */
  dg_name_shorten(d->node_name, sizeof d->node_name, node_name);
  dg_name_shorten(d->op, sizeof d->op, op);
  dg_name_shorten(d->field, sizeof d->field, field);
  dg_name_shorten(d->expected, sizeof d->expected, expected);
  dg_name_shorten(d->actual, sizeof d->actual, actual);
  va_list ap;
  va_start(ap, fmt);
  int want = vsnprintf(d->message, sizeof d->message, fmt, ap);
  va_end(ap);
  dg_text_mark_cut(d->message, sizeof d->message, want);
}
