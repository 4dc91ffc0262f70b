/* The per-process directgraph context behind the TVM entry points. TVM
 * calls kernels with no handle of ours, so the context is a process global,
 * made once (pthread_once) on the first call and kept until the library is
 * unloaded: its memoised one-node sessions are what makes repeated calls
 * cheap. A mutex serialises the calls, because the context's one-shot
 * cache and its sessions are not thread-safe. */
#include "core/env.h"
#include "tvm_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static dg_context *ctx_global;
static dg_status ctx_status;
static int device_global = -1;
static bool ctx_all_devices;   /* opened beyond the CPU (DG_TVM_DEVICE) */
static char device_error[160]; /* non-empty: $DG_TVM_DEVICE is unusable */

/* Sessions for relu/softmax/max_pool2d, which have no dg_oneshot_* form. */
typedef struct unary_entry {
  struct unary_entry *next;
  dg_tvm_unary_key key;
  dg_session *session;
} unary_entry;
static unary_entry *unary_cache;

/* By default only the CPU is opened: the entry points take host memory, and
 * a context holding GPU drivers must not be torn down by the destructor
 * below at process exit, after those drivers may already be gone (seen
 * with torch and NVIDIA's drivers). DG_TVM_DEVICE=N opens every device and
 * pins the calls to device N. */
static void init(void) {
  const char *env = dg_env(DG_ENV_TVM_DEVICE);
  bool automatic = !env || !*env || !strcmp(env, "auto");
  dg_context_options o = {.device_kinds = automatic ? DG_DEVICE_CPU : 0};
  ctx_status = dg_context_create(&o, &ctx_global);
  ctx_all_devices = !automatic;
  if (ctx_status != DG_OK || automatic)
    return; /* -1: cost-based placement */
  char *end;
  errno = 0;
  long v = strtol(env, &end, 10);
  if (errno || *end || v < 0 || v >= dg_context_device_count(ctx_global))
    snprintf(device_error, sizeof device_error,
             "DG_TVM_DEVICE='%.40s' is not 'auto' or a device index "
             "0..%d",
             env, dg_context_device_count(ctx_global) - 1);
  else
    device_global = (int)v;
}

int dg_tvm_enter(const char *fn, dg_context **ctx, int *device) {
  pthread_once(&once, init);
  if (ctx_status != DG_OK)
    return dg_tvm_fail("RuntimeError",
                       "%s: could not create the directgraph context: %s", fn,
                       dg_status_string(ctx_status));
  if (device_error[0])
    return dg_tvm_fail("ValueError", "%s: %s", fn, device_error);
  pthread_mutex_lock(&lock);
  *ctx = ctx_global;
  *device = device_global;
  return 0;
}

void dg_tvm_leave(void) { pthread_mutex_unlock(&lock); }

static dg_tensor add_node(dg_graph *g, const dg_tvm_unary_key *k, dg_tensor x) {
  switch (k->op) {
  case DG_OP_MAX_POOL2D:
    return dg_graph_max_pool2d(g, "max_pool2d", x, &k->pool);
  case DG_OP_SOFTMAX:
    return dg_graph_softmax(g, "softmax", x, k->axis);
  default:
    return dg_graph_relu(g, "relu", x);
  }
}

int dg_tvm_unary_session(const char *fn, dg_context *ctx,
                         const dg_tvm_unary_key *key, dg_session **out) {
  for (unary_entry *e = unary_cache; e; e = e->next)
    if (!memcmp(&e->key, key, sizeof *key)) {
      *out = e->session;
      return 0;
    }
  dg_graph *g = dg_graph_create(ctx, "tvm");
  if (!g)
    return dg_tvm_fail("MemoryError", "%s: no memory for a graph", fn);
  dg_tensor x = dg_graph_input(g, "x", &key->x);
  dg_graph_set_device(g, key->device);
  dg_graph_output(g, "y", add_node(g, key, x), DG_LAYOUT_NCHW);
  dg_diagnostic diag = {0};
  dg_session *s = NULL;
  dg_status st = dg_graph_status(g);
  if (st != DG_OK) {
    diag = *dg_graph_error(g);
  } else {
    /* A chosen device is a requirement (strict); auto lets cost decide. */
    dg_compile_options o = {.policy = key->device >= 0 ? DG_POLICY_STRICT
                                                       : DG_POLICY_AUTO};
    st = dg_graph_compile(g, &o, &s, &diag);
  }
  dg_graph_destroy(g);
  if (st != DG_OK)
    return dg_tvm_fail_status(fn, st, &diag);
  unary_entry *e = calloc(1, sizeof *e);
  if (!e) {
    dg_session_destroy(s);
    return dg_tvm_fail("MemoryError", "%s: no memory for a session", fn);
  }
  e->key = *key;
  e->session = s;
  e->next = unary_cache;
  unary_cache = e;
  *out = s;
  return 0;
}

/* Frees the context and the sessions when the library is unloaded
 * (dlclose, or process exit), so that a host which unloads us does not leak
 * them. Runs after the last entry-point call a well-behaved host makes. */
__attribute__((destructor)) static void fini(void) {
  pthread_mutex_lock(&lock);
  while (unary_cache) {
    unary_entry *e = unary_cache;
    unary_cache = e->next;
    dg_session_destroy(e->session);
    free(e);
  }
  /* A context holding GPU drivers is left alone (still reachable, so not
   * a leak): at process exit their libraries may already be finalised,
   * and tearing them down then crashes or leaks inside the driver. */
  if (!ctx_all_devices) {
    dg_context_destroy(ctx_global); /* NULL when never created */
    ctx_global = NULL;
  }
  pthread_mutex_unlock(&lock);
}
