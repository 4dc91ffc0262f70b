/* The graph object's life: created on a context (holding a reference on
 * it), destroyed, and pinned to one of the context's devices. Everything
 * else a builder call does is the build kit's (src/ops/build.c). */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <stdatomic.h>
#include <stdlib.h>

dg_graph *dg_graph_create(dg_context *ctx, const char *name) {
  if (!dg_context_alive(ctx))
    return NULL;
  dg_graph *g = calloc(1, sizeof *g);
  if (!g)
    return NULL;
  static atomic_uint serials;
  g->ctx = ctx;
  g->serial = atomic_fetch_add(&serials, 1) + 1; /* never 0 */
  if (!g->serial)
    g->serial = atomic_fetch_add(&serials, 1) + 1;
  g->pin = -1;
  g->log = ctx->opts.log;
  g->log_user = ctx->opts.log_user;
  g->log_level = ctx->opts.log_level;
  g->name = dg_name_dup(name ? name : "graph");
  if (!g->name || !dg_live_add(g, DG_LIVE_GRAPH)) {
    free(g->name);
    free(g);
    return NULL;
  }
  dg_context_ref(ctx);
  return g;
}

void dg_graph_destroy(dg_graph *g) {
  if (!g || !dg_live_remove(g, DG_LIVE_GRAPH)) /* NULL, or not a live graph */
    return;
  dg_context *ctx = g->ctx;
  dg_ir_free(&g->ir);
  free(g->name);
  free(g);
  dg_context_unref(ctx);
}

dg_status dg_graph_set_device(dg_graph *g, int device_index) {
  if (!(g = dg_graph_alive(g)))
    return DG_ERROR_INVALID_ARGUMENT;
  if (g->failed)
    return DG_ERROR_GRAPH_FAILED;
  if (device_index < -1 || device_index >= g->ctx->devices.count)
    return DG_ERROR_NOT_FOUND;
  g->pin = device_index;
  return DG_OK;
}
