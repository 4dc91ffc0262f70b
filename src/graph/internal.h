/* Private structures of the graph layer: context, graph, session. */
#ifndef DG_INTERNAL_H
#define DG_INTERNAL_H

#include "../target/target.h"
#include "live.h"

#include "ir.h"
#include "names.h"
#include <stdatomic.h>

#include <pthread.h>
#include <stdarg.h>

typedef struct dg_oneshot_entry dg_oneshot_entry;

struct dg_context {
  /* The caller's reference and one per graph and session made from it:
   * destroyed before them (against graph.h's rule), the context lives on
   * until the last of them goes, unusable through the API (live.h). */
  atomic_int refs;
  dg_context_options opts;
  char *cache_dir; /* NULL when disabled */
  dg_device_list devices;
  dg_oneshot_entry *oneshots; /* memoised one-node sessions */
  /* One dg_oneshot_* call at a time per context: the memo list and each
   * memoised session are shared by every caller of the context. */
  pthread_mutex_t oneshot_lock;
};

struct dg_graph {
  dg_context *ctx;
  uint32_t serial; /* unique in the process: the graph field of handles */
  char *name; /* owned */
  dg_ir ir;
  bool failed;
  dg_diagnostic error;
  int pin; /* device index for new nodes, -1 none */
};

/* The object when it is live (live.h), else NULL: the API's door. */
static inline dg_context *dg_context_alive(const dg_context *c) {
  return dg_live_is(c, DG_LIVE_CONTEXT) ? (dg_context *)c : NULL;
}
static inline dg_graph *dg_graph_alive(const dg_graph *g) {
  return dg_live_is(g, DG_LIVE_GRAPH) ? (dg_graph *)g : NULL;
}
static inline dg_session *dg_session_alive(const dg_session *s) {
  return dg_live_is(s, DG_LIVE_SESSION) ? (dg_session *)s : NULL;
}
/* Takes a reference on ctx for a graph or session; drops one, freeing the
 * context with the last (context.c). */
void dg_context_ref(dg_context *ctx);
void dg_context_unref(dg_context *ctx);

/* Logging through the context's callback (no-op without one). */
void dg_log(const dg_context *ctx, dg_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Fills a diagnostic. Any string may be NULL; each is shortened visibly
 * (dg_name_shorten) to its field, and a message that does not fit ends in
 * "...". Names quoted in fmt's arguments should be display copies, so that
 * the rest of the message fits. */
void dg_diag_set(dg_diagnostic *d, dg_status st, int node_index,
                 const char *node_name, const char *op, const char *field,
                 const char *expected, const char *actual, const char *fmt,
                 ...) __attribute__((format(printf, 9, 10)));

/* Copies src into dst[size] with truncation, always terminated. */
void dg_strlcpy(char *dst, const char *src, size_t size);

/* Input (output) index of ir as a dg_io_info. */
dg_status dg_io_info_get(const dg_ir *ir, bool output, int index,
                         dg_io_info *out);

/* Formats dims as "[1, 3, 32, 32]". */
void dg_format_dims(char *buf, size_t size, int rank, const int64_t *dims);

#endif
