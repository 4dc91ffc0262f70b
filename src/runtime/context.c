/* Context: options, devices from every built-in target, the cache
 * directory, and logging through the context's callback. */
#define _POSIX_C_SOURCE 200809L
#include "core/env.h"
#include "internal.h"
#include "oneshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The index of a single-bit device kind: 0 for the CPU, ... */
static int kind_slot(unsigned kind) {
  int k = 0;
  while (kind > 1 && k < 7) {
    kind >>= 1;
    k++;
  }
  return k;
}

void dg_log(const dg_context *ctx, dg_log_level level, const char *fmt, ...) {
  if (!ctx || !ctx->opts.log || level > ctx->opts.log_level)
    return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ctx->opts.log(ctx->opts.log_user, level, msg);
}

static char *cache_dir_from_env(void) {
  const char *e = dg_env(DG_ENV_CACHE_DIR);
  char buf[4096];
  if (e && *e)
    return strdup(e);
  e = dg_env(DG_ENV_XDG_CACHE_HOME);
  if (e && *e) {
    snprintf(buf, sizeof buf, "%s/directgraph", e);
    return strdup(buf);
  }
  e = dg_env(DG_ENV_HOME);
  if (e && *e) {
    snprintf(buf, sizeof buf, "%s/.cache/directgraph", e);
    return strdup(buf);
  }
  return NULL;
}

dg_status dg_context_create(const dg_context_options *options,
                            dg_context **out) {
  if (!out)
    return DG_ERROR_INVALID_ARGUMENT;
  *out = NULL;
  dg_context_options o = {0};
  if (options)
    o = *options;
  if (o.log_level < DG_LOG_NONE || o.log_level > DG_LOG_DEBUG ||
      o.cpu_threads < 0 || (o.device_kinds & ~dg_device_kinds_all()) ||
      o.device_timeout_ms < 0)
    return DG_ERROR_INVALID_ARGUMENT;
  if (!o.device_timeout_ms)
    o.device_timeout_ms = 120000; /* targets see the resolved value */
  if (!o.device_kinds)
    o.device_kinds = dg_device_kinds_all();
  o.device_kinds |= DG_DEVICE_CPU; /* always present: the fallback */

  dg_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx)
    return DG_ERROR_OUT_OF_MEMORY;
  atomic_init(&ctx->refs, 1);
  if (pthread_mutex_init(&ctx->oneshot_lock, NULL)) {
    free(ctx);
    return DG_ERROR_OUT_OF_MEMORY;
  }
  ctx->opts = o;
  ctx->opts.cache_dir = NULL;
  if (!o.disable_cache) {
    ctx->cache_dir = o.cache_dir ? strdup(o.cache_dir) : cache_dir_from_env();
    if (o.cache_dir && !ctx->cache_dir) {
      pthread_mutex_destroy(&ctx->oneshot_lock);
      free(ctx);
      return DG_ERROR_OUT_OF_MEMORY;
    }
  }
  /* Targets see the resolved directory (owned by the context), or NULL
   * when caching is off. */
  ctx->opts.cache_dir = ctx->cache_dir;
  const dg_target *t;
  for (int k = 0; k < 8; k++) /* kinds.def's, each a bit */
    if (dg_device_kinds_all() & (1u << k))
      snprintf(ctx->absence[k], sizeof ctx->absence[k],
               "not built into this library (meson's summary says why)");
  for (int i = 0; (t = dg_target_get(i)); i++) {
    char *why = ctx->absence[kind_slot(t->kind)];
    if (!(o.device_kinds & t->kind)) {
      snprintf(why, sizeof ctx->absence[0],
               "left out by dg_context_options.device_kinds");
      continue;
    }
    int before = ctx->devices.count;
    why[0] = 0;
    dg_status st =
        t->enumerate(&ctx->opts, &ctx->devices, why, sizeof ctx->absence[0]);
    if (ctx->devices.count > before)
      why[0] = 0;
    else if (!why[0])
      snprintf(why, sizeof ctx->absence[0], "built, but no device found");
    if (st == DG_ERROR_OUT_OF_MEMORY || (t->kind == DG_DEVICE_CPU && st)) {
      dg_context_unref(ctx);
      return st;
    }
    if (st != DG_OK)
      dg_log(ctx, DG_LOG_WARNING, "%s target: %s; its devices are skipped",
             t->name, dg_status_string(st));
    for (int d = before; d < ctx->devices.count; d++) {
      dg_device *dev = &ctx->devices.items[d];
      dev->info.index = d;
      /* The legacy mask: the target's table, for the ops below 64. */
      dev->info.ops = 0;
      for (int op = 1; op < DG_OP_COUNT_ && op < 64; op++)
        if (dev->vt->runs_op(dev, (dg_op)op))
          dev->info.ops |= 1ull << op;
      dg_log(ctx, DG_LOG_INFO, "device %d: %s (%s)", d,
             ctx->devices.items[d].info.name,
             ctx->devices.items[d].info.driver);
    }
  }
  if (!dg_live_add(ctx, DG_LIVE_CONTEXT)) {
    dg_context_unref(ctx);
    return DG_ERROR_OUT_OF_MEMORY;
  }
  *out = ctx;
  return DG_OK;
}

void dg_context_ref(dg_context *ctx) { atomic_fetch_add(&ctx->refs, 1); }

void dg_context_unref(dg_context *ctx) {
  if (atomic_fetch_sub(&ctx->refs, 1) != 1)
    return;
  for (int i = 0; i < ctx->devices.count; i++)
    if (ctx->devices.items[i].vt->destroy)
      ctx->devices.items[i].vt->destroy(&ctx->devices.items[i]);
  free(ctx->devices.items);
  free(ctx->cache_dir);
  pthread_mutex_destroy(&ctx->oneshot_lock);
  free(ctx);
}

/* The caller's reference goes: the context is no longer usable through
 * the API, and is freed once its graphs and sessions are gone too. */
void dg_context_destroy(dg_context *ctx) {
  if (!ctx ||
      !dg_live_remove(ctx, DG_LIVE_CONTEXT)) /* NULL, or not a live context */
    return;
  dg_oneshot_clear(ctx);
  dg_context_unref(ctx);
}

const char *dg_context_device_absence(const dg_context *ctx,
                                      dg_device_kind kind) {
  if (!(ctx = dg_context_alive(ctx)) || !(dg_device_kinds_all() & kind) ||
      (kind & (kind - 1)))
    return NULL;
  const char *why = ctx->absence[kind_slot(kind)];
  return why[0] ? why : NULL;
}

const char *dg_context_cache_dir(const dg_context *ctx) {
  return (ctx = dg_context_alive(ctx)) ? ctx->cache_dir : NULL;
}

int dg_context_device_count(const dg_context *ctx) {
  return (ctx = dg_context_alive(ctx)) ? ctx->devices.count : 0;
}

dg_status dg_context_device_info(const dg_context *ctx, int index,
                                 dg_device_info *out) {
  if (!(ctx = dg_context_alive(ctx)) || !out)
    return DG_ERROR_INVALID_ARGUMENT;
  if (index < 0 || index >= ctx->devices.count)
    return DG_ERROR_NOT_FOUND;
  *out = ctx->devices.items[index].info;
  return DG_OK;
}

int dg_device_supports(const dg_context *ctx, int device, dg_op op) {
  if (!(ctx = dg_context_alive(ctx)) || device < 0 ||
      device >= ctx->devices.count || op <= DG_OP_INVALID || op >= DG_OP_COUNT_)
    return 0;
  dg_device *dev = &ctx->devices.items[device];
  return dev->vt->runs_op(dev, op) ? 1 : 0;
}
