/* ONNX import: reads the file, unpacks it with protobuf-c, checks the
 * opset, and hands the graph to the translator (onnx_translate.h) through
 * the source over the ModelProto (onnx_source.c); turns its failure into
 * the importer's diagnostic. */
#define _POSIX_C_SOURCE 200809L /* open, fstat, O_CLOEXEC */
#include "onnx_internal.h"

#include "core/names.h"
#include "runtime/internal.h" /* dg_log: the context's log */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILE_BYTES ((size_t)1 << 31)

/* The importer's diagnostic: "onnx node N 'NAME' (OP), FIELD: REASON", or
 * "onnx: REASON" when no node is concerned. */
static void diagnose(dg_diagnostic *d, dg_status st, int node,
                     const char *node_name, const char *op, const char *field,
                     const char *reason) {
  if (!d)
    return;
  memset(d, 0, sizeof *d);
  d->status = st;
  d->node_index = node;
  /* Node and tensor names (the field often is one) can be of any length:
   * the diagnostic shows them shortened, visibly, and the message quotes
   * the same copies so that the reason still fits. */
  dg_name_shorten(d->node_name, sizeof d->node_name, node_name);
  dg_name_shorten(d->op, sizeof d->op, op ? op : "model");
  dg_name_shorten(d->field, sizeof d->field, field);
  int want;
  if (node >= 0)
    want = snprintf(d->message, sizeof d->message,
                    "onnx node %d '%s' (%s)%s%s: %s", node, d->node_name, d->op,
                    field && field[0] ? ", " : "", d->field, reason);
  else
    want = snprintf(d->message, sizeof d->message, "onnx: %s", reason);
  dg_text_mark_cut(d->message, sizeof d->message, want);
}

/* The translator's failure, with the other unsupported nodes it found
 * named in the message as far as they fit ("; N more not supported: OP
 * (node K), ...") and each logged whole, one line a node, on the graph's
 * context at DG_LOG_ERROR. */
static void diagnose_all(const dg_context *ctx, dg_diagnostic *d,
                         const dg_onnx_failure *why) {
  char reason[512];
  int len = snprintf(reason, sizeof reason, "%s", why->reason);
  if (why->also_count && len < (int)sizeof reason)
    len += snprintf(reason + len, sizeof reason - (size_t)len,
                    "; %d more node%s not supported:", why->also_count,
                    why->also_count > 1 ? "s" : "");
  for (const char *p = why->also; *p && len < (int)sizeof reason;) {
    const char *nl = strchr(p, '\n'), *paren = strchr(p, '(');
    int k = atoi(p + 5); /* "node K '...' (OP): ..." */
    size_t line = nl ? (size_t)(nl - p) : strlen(p);
    if (ctx)
      dg_log(ctx, DG_LOG_ERROR, "onnx %.*s", (int)line, p);
    if (paren && paren < p + line) {
      const char *close = strchr(paren, ')');
      int oplen = close ? (int)(close - paren - 1) : 0;
      len += snprintf(reason + len, sizeof reason - (size_t)len,
                      " %.*s (node %d),", oplen, paren + 1, k);
    }
    p += line + (nl ? 1 : 0);
  }
  if (why->also_count && len < (int)sizeof reason && reason[len - 1] == ',')
    reason[--len] = 0;
  dg_text_mark_cut(reason, sizeof reason, len);
  diagnose(d, why->status, why->node, why->node_name, why->op, why->field,
           reason);
}

static dg_status refuse(dg_diagnostic *d, dg_status st, const char *field,
                        const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static dg_status refuse(dg_diagnostic *d, dg_status st, const char *field,
                        const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  dg_text_mark_cut(msg, sizeof msg, vsnprintf(msg, sizeof msg, fmt, ap));
  va_end(ap);
  diagnose(d, st, -1, NULL, NULL, field, msg);
  return st;
}

static dg_status import(const dg_context *ctx, dg_graph *g,
                        const Onnx__ModelProto *m, const dg_onnx_options *opts,
                        dg_diagnostic *diag) {
  if (!m->graph)
    return refuse(diag, DG_ERROR_INVALID_ARGUMENT, "graph",
                  "the model has no graph");
  int64_t opset = -1;
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = m->opset_import[i];
    if (!o->domain || !o->domain[0] || !strcmp(o->domain, "ai.onnx"))
      opset = o->has_version ? o->version : 1;
  }
  if (opset < 1 || opset > 22)
    return refuse(diag, DG_ERROR_UNSUPPORTED, "opset_import",
                  "default-domain opset %lld is not supported (1..22)",
                  (long long)opset);
  onnx_source s;
  dg_onnx_source src;
  dg_status st = DG_OK;
  const char *field = NULL;
  char msg[512];
  if (!onnx_source_init(&s, m->graph, opset, opts, &src, &st, &field, msg,
                        sizeof msg)) {
    refuse(diag, st, field, "%s", msg);
  } else {
    dg_onnx_failure why;
    st = dg_onnx_translate(g, &src, &why);
    if (st != DG_OK)
      diagnose_all(ctx, diag, &why);
  }
  onnx_source_free(&s);
  return st;
}

dg_status dg_onnx_load_memory(dg_context *ctx, const void *data, size_t size,
                              const dg_onnx_options *opts, dg_graph **out,
                              dg_diagnostic *diag) {
  dg_onnx_options o = {0};
  if (out)
    *out = NULL;
  if (!ctx || !out || (!data && size))
    return refuse(diag, DG_ERROR_INVALID_ARGUMENT, NULL,
                  "dg_onnx_load: NULL context, output or data");
  if (dg_context_device_count(ctx) < 1) /* a live one has its CPU */
    return refuse(diag, DG_ERROR_INVALID_ARGUMENT, NULL,
                  "dg_onnx_load: not a live context (destroyed?)");
  if (opts)
    o = *opts;
  if (o.symbolic_dim_value < 0)
    return refuse(diag, DG_ERROR_INVALID_ARGUMENT, "symbolic_dim_value",
                  "must be >= 0");
  if (o.constant_count < 0)
    return refuse(diag, DG_ERROR_INVALID_ARGUMENT, "constant_count",
                  "constant_count is %d: must be >= 0", o.constant_count);
  char why[160];
  if (!onnx_nesting_ok(data, size, ONNX_MAX_NESTING, why, sizeof why))
    return refuse(diag, DG_ERROR_INVALID_ARGUMENT, NULL, "%s", why);
  Onnx__ModelProto *m =
      onnx__model_proto__unpack(NULL, size, (const uint8_t *)data);
  if (!m)
    return refuse(diag, DG_ERROR_INVALID_ARGUMENT, NULL,
                  "not a valid ONNX model (protobuf parse failed: truncated "
                  "or corrupt)");
  dg_graph *g = dg_graph_create(ctx, m->graph && m->graph->name ? m->graph->name
                                                                : "onnx");
  dg_status st =
      g ? import(ctx, g, m, &o, diag)
        : refuse(diag, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
  onnx__model_proto__free_unpacked(m, NULL);
  if (st != DG_OK) {
    dg_graph_destroy(g);
    return st;
  }
  *out = g;
  return DG_OK;
}

dg_status dg_onnx_load(dg_context *ctx, const char *path,
                       const dg_onnx_options *opts, dg_graph **out,
                       dg_diagnostic *diag) {
  if (out)
    *out = NULL;
  if (!ctx || !out || !path)
    return refuse(diag, DG_ERROR_INVALID_ARGUMENT, !path ? "path" : NULL,
                  "dg_onnx_load: NULL %s",
                  !ctx   ? "context"
                  : !out ? "output"
                         : "path");
  /* Non-blocking and checked before reading: a FIFO or a device in place
   * of the model must be refused, not waited on forever. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return refuse(diag, DG_ERROR_IO, "path", "cannot open '%s'", path);
  struct stat sb;
  if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) ||
      (uint64_t)sb.st_size > MAX_FILE_BYTES) {
    close(fd);
    return refuse(diag, DG_ERROR_IO, "path",
                  "'%s' is not a regular file of at most 2 GiB", path);
  }
  size_t len = (size_t)sb.st_size, got = 0;
  void *buf = malloc(len ? len : 1);
  while (buf && got < len) {
    ssize_t r = read(fd, (char *)buf + got, len - got);
    if (r <= 0 && !(r < 0 && errno == EINTR))
      break;
    got += r > 0 ? (size_t)r : 0;
  }
  close(fd);
  if (!buf || got != len) {
    free(buf);
    return refuse(diag, buf ? DG_ERROR_IO : DG_ERROR_OUT_OF_MEMORY, "path",
                  "cannot read '%s'", path);
  }
  /* External data is read from the model's folder unless told another. */
  dg_onnx_options o = {0};
  if (opts)
    o = *opts;
  char dir[4096];
  if (!o.external_data_dir) {
    const char *slash = strrchr(path, '/');
    if (!slash)
      snprintf(dir, sizeof dir, ".");
    else if (slash == path)
      snprintf(dir, sizeof dir, "/");
    else
      snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    o.external_data_dir = dir;
  }
  dg_status st = dg_onnx_load_memory(ctx, buf, (size_t)len, &o, out, diag);
  free(buf);
  return st;
}
