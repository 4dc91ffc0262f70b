/* Private structures of the runtime: the context (and, through
 * ops/build.h, the graph it builds); session.h has the session. */
#ifndef DG_INTERNAL_H
#define DG_INTERNAL_H

#include "core/diag.h"
#include "core/half.h"
#include "core/ir.h"
#include "core/live.h"
#include "core/names.h"
#include "ops/build.h"
#include "targets/target.h"

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
  /* Why there is no device of kind 1 << k (dg_context_device_absence);
   * empty where there is one. */
  char absence[8][192];
  dg_oneshot_entry *oneshots; /* memoised one-node sessions */
  /* One dg_oneshot_* call at a time per context: the memo list and each
   * memoised session are shared by every caller of the context. */
  pthread_mutex_t oneshot_lock;
};

/* The object when it is live (live.h), else NULL: the API's door. */
static inline dg_context *dg_context_alive(const dg_context *c) {
  return dg_live_is(c, DG_LIVE_CONTEXT) ? (dg_context *)c : NULL;
}
static inline dg_session *dg_session_alive(const dg_session *s) {
  return dg_live_is(s, DG_LIVE_SESSION) ? (dg_session *)s : NULL;
}
/* A device buffer (graph.h's dg_buffer, buffer.c). */
struct dg_buffer {
  dg_context *ctx; /* holds a reference */
  int device_index;
  dg_device *dev;
  dg_tensor_desc desc; /* dtype and dims; quant zero */
  size_t bytes;
  void *host; /* a host-memory device's (the CPU's) bytes */
  void *impl; /* else the target's (buffer_create) */
};
static inline dg_buffer *dg_buffer_alive(const dg_buffer *b) {
  return dg_live_is(b, DG_LIVE_BUFFER) ? (dg_buffer *)b : NULL;
}

/* Takes a reference on ctx for a graph or session; drops one, freeing the
 * context with the last (context.c). */
void dg_context_ref(dg_context *ctx);
void dg_context_unref(dg_context *ctx);

/* Logging through the context's callback (no-op without one). */
void dg_log(const dg_context *ctx, dg_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
