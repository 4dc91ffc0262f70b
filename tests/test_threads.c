/* Threads (the contract in graph.h's "Threads" paragraph):
 * - N threads x M sessions on every device present (CPU, Vulkan, OpenCL,
 *   the NPU simulator), each thread compiling its own sessions at the same
 *   time as the others (one from a graph they all compile at once) and
 *   running them on several inputs: every output bit-exact against the
 *   same session kind run single-threaded first.
 * - One session run from two threads at once: each call either runs and
 *   is exact, or is refused with DG_ERROR_INVALID_ARGUMENT saying the
 *   session is already running; a claimed session is refused
 *   deterministically.
 * - dg_session_destroy on one thread while another runs the session:
 *   the destroy waits for the run (a claimed session is not freed until
 *   it is let go), and every run either completes exactly or is refused
 *   as not a live session.
 * - dg_oneshot_* from several threads on one context: exact.
 * Built and run under ThreadSanitizer too (tests/run_tests.sh's tsan
 * section). DG_TEST_THREADS=n changes the thread count (default 4). */
#define _GNU_SOURCE
#include "graph.h"
#include "harness.h"
#include "runtime/session.h" /* dg_session_claim */
#ifdef DG_TARGET_VULKAN
#include "targets/vulkan/vulkan_target.h"
#endif

#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define MAX_THREADS 16
#define SESSIONS_PER_THREAD 2
#define ROUNDS 3
#define INPUT_SETS 3

/* ---- the graphs ---- */

typedef enum graph_kind { G_MATMUL, G_CONV, G_QCONV, G_COUNT } graph_kind;
static const char *const graph_names[G_COUNT] = {
    "matmul 64x512x512", "conv+pool+fc+softmax", "int8 qconv+relu"};

typedef struct io_shape {
  dg_tensor_desc in, out;
} io_shape;

static float wmat[512 * 512], wconv[16 * 8 * 9], bconv[16], wfc[10 * 1600];
static int8_t wq[32 * 16 * 9];
static float wq_scales[32];
static int32_t bq[32];

static void make_weights(void) {
  t_seed(20261201);
  for (size_t i = 0; i < sizeof wmat / sizeof *wmat; i++)
    wmat[i] = t_uniform(-0.05f, 0.05f);
  for (size_t i = 0; i < sizeof wconv / sizeof *wconv; i++)
    wconv[i] = t_uniform(-0.3f, 0.3f);
  for (size_t i = 0; i < sizeof bconv / sizeof *bconv; i++)
    bconv[i] = t_uniform(-0.1f, 0.1f);
  for (size_t i = 0; i < sizeof wfc / sizeof *wfc; i++)
    wfc[i] = t_uniform(-0.05f, 0.05f);
  for (size_t i = 0; i < sizeof wq; i++)
    wq[i] = (int8_t)t_range(-127, 127);
  for (int i = 0; i < 32; i++) {
    wq_scales[i] = t_uniform(0.002f, 0.01f);
    bq[i] = t_range(-500, 500);
  }
}

static io_shape shape_of(graph_kind k) {
  io_shape s = {0};
  switch (k) {
  case G_MATMUL:
    s.in =
        (dg_tensor_desc){.dtype = DG_DTYPE_F32, .rank = 2, .dims = {64, 512}};
    s.out =
        (dg_tensor_desc){.dtype = DG_DTYPE_F32, .rank = 2, .dims = {64, 512}};
    break;
  case G_CONV:
    s.in = (dg_tensor_desc){
        .dtype = DG_DTYPE_F32, .rank = 4, .dims = {2, 8, 20, 20}};
    s.out = (dg_tensor_desc){.dtype = DG_DTYPE_F32, .rank = 2, .dims = {2, 10}};
    break;
  default:
    s.in = (dg_tensor_desc){.dtype = DG_DTYPE_I8,
                            .rank = 4,
                            .dims = {1, 16, 16, 16},
                            .quant = {.scale = 0.05f, .zero_point = 3}};
    s.out = (dg_tensor_desc){.dtype = DG_DTYPE_I8,
                             .rank = 4,
                             .dims = {1, 32, 16, 16},
                             .quant = {.scale = 0.1f, .zero_point = -5}};
    break;
  }
  return s;
}

static size_t desc_bytes(const dg_tensor_desc *d) {
  size_t n = d->dtype == DG_DTYPE_F32 ? 4 : 1;
  for (int i = 0; i < d->rank; i++)
    n *= (size_t)d->dims[i];
  return n;
}

/* Builds graph k with every node pinned to device dev. */
static dg_graph *build(dg_context *ctx, graph_kind k, int dev) {
  dg_graph *g = dg_graph_create(ctx, graph_names[k]);
  io_shape s = shape_of(k);
  dg_graph_set_device(g, dev);
  dg_tensor x = dg_graph_input(g, "x", &s.in), y;
  if (k == G_MATMUL) {
    dg_tensor_desc wd = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {512, 512}};
    y = dg_graph_matmul(g, "mm", x, dg_graph_constant(g, "w", &wd, wmat, 0));
  } else if (k == G_CONV) {
    dg_tensor_desc wd = {
        .dtype = DG_DTYPE_F32, .rank = 4, .dims = {16, 8, 3, 3}};
    dg_tensor_desc bd = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {16}};
    dg_tensor_desc fd = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {10, 1600}};
    dg_conv2d_params cp = {.padding = DG_PADDING_SAME_UPPER,
                           .activation = DG_ACTIVATION_RELU};
    dg_tensor c =
        dg_graph_conv2d(g, "conv", x, dg_graph_constant(g, "w", &wd, wconv, 0),
                        dg_graph_constant(g, "b", &bd, bconv, 0), &cp);
    dg_pool2d_params pp = {.kernel = {2, 2}, .stride = {2, 2}};
    dg_tensor p = dg_graph_max_pool2d(g, "pool", c, &pp);
    dg_tensor f = dg_graph_fully_connected(
        g, "fc", p, dg_graph_constant(g, "wfc", &fd, wfc, 0), DG_TENSOR_NONE,
        DG_ACTIVATION_NONE);
    y = dg_graph_softmax(g, "softmax", f, -1);
  } else {
    dg_tensor_desc wd = {
        .dtype = DG_DTYPE_I8,
        .rank = 4,
        .dims = {32, 16, 3, 3},
        .quant = {.axis = 0, .channel_count = 32, .channel_scales = wq_scales}};
    dg_tensor_desc bd = {.dtype = DG_DTYPE_I32, .rank = 1, .dims = {32}};
    dg_conv2d_params cp = {.padding = DG_PADDING_SAME_UPPER,
                           .activation = DG_ACTIVATION_RELU};
    y = dg_graph_qconv2d(g, "qconv", x, dg_graph_constant(g, "w", &wd, wq, 0),
                         dg_graph_constant(g, "b", &bd, bq, 0), &cp,
                         DG_DTYPE_I8, &s.out.quant);
  }
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  return g;
}

/* Every node on its pinned device, or a compile error. */
static dg_status compile_graph(dg_graph *g, dg_session **out,
                               dg_diagnostic *diag) {
  dg_compile_options o = {.policy = DG_POLICY_STRICT};
  return dg_graph_compile(g, &o, out, diag);
}

static dg_status compile(dg_context *ctx, graph_kind k, int dev,
                         dg_session **out, dg_diagnostic *diag) {
  dg_graph *g = build(ctx, k, dev);
  dg_status st = compile_graph(g, out, diag);
  dg_graph_destroy(g);
  return st;
}

/* ---- what each (device, graph) pair must produce ---- */

typedef struct pair {
  int dev;
  graph_kind k;
  void *in[INPUT_SETS];
  void *want[INPUT_SETS]; /* single-threaded outputs */
  size_t in_bytes, out_bytes;
  dg_graph *shared; /* compiled by every thread at once */
  atomic_int runs, wrong, errors;
  char first_error[600];
  atomic_flag error_noted;
} pair;

static pair pairs[64];
static int pair_count;

static void fill_input(pair *p, int set) {
  io_shape s = shape_of(p->k);
  t_seed(1000u + (unsigned)set * 7u + (unsigned)p->k);
  if (s.in.dtype == DG_DTYPE_F32)
    for (size_t i = 0; i < p->in_bytes / 4; i++)
      ((float *)p->in[set])[i] = t_uniform(-1, 1);
  else
    for (size_t i = 0; i < p->in_bytes; i++)
      ((int8_t *)p->in[set])[i] = (int8_t)t_range(-128, 127);
}

static dg_status run_once(dg_session *s, pair *p, int set, void *out,
                          dg_diagnostic *diag) {
  dg_binding in = {"x", p->in[set], p->in_bytes};
  dg_binding o = {"y", out, p->out_bytes};
  return dg_session_run(s, &in, 1, &o, 1, diag);
}

/* ---- N threads x M sessions ---- */

typedef struct worker {
  dg_context *ctx;
  int id;
  pthread_barrier_t *start;
} worker;

static void note_error(pair *p, const char *msg) {
  atomic_fetch_add(&p->errors, 1);
  if (!atomic_flag_test_and_set(&p->error_noted))
    snprintf(p->first_error, sizeof p->first_error, "%s", msg);
}

/* Round r of worker w's sessions of pair p: each on an input of its own,
 * compared byte for byte with the single-threaded output. */
static void run_sessions(const worker *w, pair *p, dg_session *const *ss, int r,
                         void *out) {
  for (int m = 0; m < SESSIONS_PER_THREAD; m++) {
    if (!ss[m])
      continue;
    int set = (r + m + w->id) % INPUT_SETS;
    dg_diagnostic d = {0};
    memset(out, 0xa5, p->out_bytes);
    atomic_fetch_add(&p->runs, 1);
    if (run_once(ss[m], p, set, out, &d) != DG_OK)
      note_error(p, d.message);
    else if (memcmp(out, p->want[set], p->out_bytes))
      atomic_fetch_add(&p->wrong, 1);
  }
}

static void *worker_main(void *arg) {
  worker *w = arg;
  dg_session *ss[64][SESSIONS_PER_THREAD] = {{0}};
  void *out = malloc(64 * 512 * 4);
  /* Everyone compiles at the same time (the first session from the
   * pair's one shared graph, the others from graphs of their own), then
   * runs at the same time. */
  pthread_barrier_wait(w->start);
  for (int i = 0; i < pair_count; i++)
    for (int m = 0; m < SESSIONS_PER_THREAD; m++) {
      dg_diagnostic d = {0};
      dg_status st =
          m == 0 ? compile_graph(pairs[i].shared, &ss[i][m], &d)
                 : compile(w->ctx, pairs[i].k, pairs[i].dev, &ss[i][m], &d);
      if (st != DG_OK)
        note_error(&pairs[i], d.message);
    }
  /* First every thread on the same pair at once (the most contention
   * for one device), then every thread walking the pairs from a
   * different place (devices busy with each other's work). */
  for (int i = 0; i < pair_count; i++) {
    pthread_barrier_wait(w->start);
    for (int r = 0; r < ROUNDS; r++)
      run_sessions(w, &pairs[i], ss[i], r, out);
  }
  pthread_barrier_wait(w->start);
  for (int r = 0; r < ROUNDS; r++)
    for (int j = 0; j < pair_count; j++) {
      int i = (j + w->id) % pair_count;
      run_sessions(w, &pairs[i], ss[i], r, out);
    }
  for (int i = 0; i < pair_count; i++)
    for (int m = 0; m < SESSIONS_PER_THREAD; m++)
      dg_session_destroy(ss[i][m]);
  free(out);
  return NULL;
}

/* Runs fn on n threads at once, thread t given args + t * size, and
 * joins them all. */
static void run_threads(int n, void *(*fn)(void *), void *args, size_t size) {
  pthread_t tid[MAX_THREADS];
  for (int t = 0; t < n; t++)
    pthread_create(&tid[t], NULL, fn, (char *)args + (size_t)t * size);
  for (int t = 0; t < n; t++)
    pthread_join(tid[t], NULL);
}

static int thread_count(void) {
  const char *e = getenv("DG_TEST_THREADS");
  int n = e ? atoi(e) : 4;
  return n < 2 ? 2 : n > MAX_THREADS ? MAX_THREADS : n;
}

static void stress(dg_context *ctx) {
  int nt = thread_count();
  worker w[MAX_THREADS];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, (unsigned)nt);
  for (int t = 0; t < nt; t++)
    w[t] = (worker){ctx, t, &start};
  run_threads(nt, worker_main, w, sizeof *w);
  pthread_barrier_destroy(&start);
  for (int i = 0; i < pair_count; i++) {
    pair *p = &pairs[i];
    dg_device_info info;
    dg_context_device_info(ctx, p->dev, &info);
    CHECK(atomic_load(&p->wrong) == 0 && atomic_load(&p->errors) == 0 &&
              atomic_load(&p->runs) == 2 * nt * SESSIONS_PER_THREAD * ROUNDS,
          "%d threads x %d sessions, %s on device %d (%s, %s): %d runs, %d "
          "differ from the single-threaded run, %d errors%s%s",
          nt, SESSIONS_PER_THREAD, graph_names[p->k], p->dev,
          dg_device_kind_name(info.kind), info.name, atomic_load(&p->runs),
          atomic_load(&p->wrong), atomic_load(&p->errors),
          atomic_load(&p->errors) ? ": " : "", p->first_error);
  }
}

/* ---- one session, two threads ---- */

typedef struct shared_run {
  dg_session *s;
  pair *p;
  pthread_barrier_t *start;
  int ok, refused, wrong, other;
  char other_msg[600];
} shared_run;

static void *shared_main(void *arg) {
  shared_run *r = arg;
  void *out = malloc(r->p->out_bytes);
  pthread_barrier_wait(r->start);
  for (int i = 0; i < 40; i++) {
    dg_diagnostic d = {0};
    dg_status st = run_once(r->s, r->p, i % INPUT_SETS, out, &d);
    if (st == DG_OK)
      r->ok++, r->wrong +=
               memcmp(out, r->p->want[i % INPUT_SETS], r->p->out_bytes) != 0;
    else if (st == DG_ERROR_INVALID_ARGUMENT &&
             strstr(d.message, "already running"))
      r->refused++;
    else if (!r->other++)
      snprintf(r->other_msg, sizeof r->other_msg, "%s: %s",
               dg_status_string(st), d.message);
  }
  free(out);
  return NULL;
}

static void one_session_two_threads(dg_context *ctx, pair *p) {
  dg_session *s = NULL;
  dg_diagnostic d = {0};
  if (compile(ctx, p->k, p->dev, &s, &d) != DG_OK) {
    CHECK(0, "one session, two threads: compile: %.200s", d.message);
    return;
  }
  /* Deterministic: a session claimed by a run in progress is refused. */
  CHECK(dg_session_claim(s, "test", NULL), "a session can be claimed");
  void *out = malloc(p->out_bytes);
  dg_status st = run_once(s, p, 0, out, &d);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && strstr(d.message, "already running"),
        "dg_session_run during another run of the session: %s (%s)",
        dg_status_string(st), d.message);
  dg_binding in = {"x", p->in[0], p->in_bytes};
  dg_verify_report rep;
  st = dg_session_verify(s, &in, 1, &rep);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT,
        "dg_session_verify during another run of the session: %s",
        dg_status_string(st));
  dg_session_unclaim(s);
  st = run_once(s, p, 0, out, &d);
  CHECK(st == DG_OK && !memcmp(out, p->want[0], p->out_bytes),
        "the same session runs again once the other run ended: %s",
        dg_status_string(st));
  free(out);

  /* Racing: every call is exact or refused, nothing else. */
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, 2);
  shared_run r[2] = {{s, p, &start, 0, 0, 0, 0, ""},
                     {s, p, &start, 0, 0, 0, 0, ""}};
  run_threads(2, shared_main, r, sizeof *r);
  pthread_barrier_destroy(&start);
  CHECK(r[0].wrong + r[1].wrong == 0 && r[0].other + r[1].other == 0 &&
            r[0].ok + r[1].ok > 0,
        "one %s session from two threads at once: %d exact runs, %d refused "
        "as already running, %d wrong, %d other errors%s%s",
        graph_names[p->k], r[0].ok + r[1].ok, r[0].refused + r[1].refused,
        r[0].wrong + r[1].wrong, r[0].other + r[1].other,
        r[0].other ? ": " : "", r[0].other ? r[0].other_msg : r[1].other_msg);
  dg_session_destroy(s);
}

/* ---- destroy on one thread, run on another ---- */

typedef struct destroy_run {
  dg_session *s;
  atomic_int done;
} destroy_run;

static void *destroy_main(void *arg) {
  destroy_run *r = arg;
  dg_session_destroy(r->s);
  atomic_store(&r->done, 1);
  return NULL;
}

typedef struct runner_run {
  dg_session *s;
  pair *p;
  atomic_int *started;
  int ok, gone, wrong, other;
  char other_msg[600];
} runner_run;

static void *runner_main(void *arg) {
  runner_run *r = arg;
  void *out = malloc(r->p->out_bytes);
  for (int i = 0; i < 200; i++) {
    dg_diagnostic d = {0};
    dg_status st = run_once(r->s, r->p, i % INPUT_SETS, out, &d);
    atomic_store(r->started, 1);
    if (st == DG_OK)
      r->ok++, r->wrong +=
               memcmp(out, r->p->want[i % INPUT_SETS], r->p->out_bytes) != 0;
    else if (st == DG_ERROR_INVALID_ARGUMENT &&
             strstr(d.message, "not a live session"))
      r->gone++;
    else if (!r->other++)
      snprintf(r->other_msg, sizeof r->other_msg, "%s: %s",
               dg_status_string(st), d.message);
    if (r->gone)
      break;
  }
  free(out);
  return NULL;
}

static void destroy_while_running(dg_context *ctx, pair *p) {
  dg_session *s = NULL;
  dg_diagnostic d = {0};
  if (compile(ctx, p->k, p->dev, &s, &d) != DG_OK) {
    CHECK(0, "destroy while running: compile: %.200s", d.message);
    return;
  }
  /* Deterministic: a claimed session (a run in progress) is not freed by
   * a destroy on another thread until the claim ends. */
  CHECK(dg_session_claim(s, "test", NULL), "a session can be claimed");
  destroy_run dr = {s, 0};
  pthread_t t;
  pthread_create(&t, NULL, destroy_main, &dr);
  struct timespec pause = {0, 50 * 1000 * 1000};
  nanosleep(&pause, NULL);
  int waited = !atomic_load(&dr.done);
  CHECK(waited && dg_session_plan(s) != NULL,
        "dg_session_destroy on another thread waits while the session is "
        "claimed by a run (still live after 50 ms: %s)",
        waited ? "yes" : "no");
  dg_session_unclaim(s);
  pthread_join(t, NULL);
  CHECK(atomic_load(&dr.done) && dg_session_plan(s) == NULL,
        "once the run ends, the waiting destroy frees the session");

  /* Racing: runs on one thread, the destroy on another mid-way. */
  if (compile(ctx, p->k, p->dev, &s, &d) != DG_OK) {
    CHECK(0, "destroy while running: compile: %.200s", d.message);
    return;
  }
  atomic_int started = 0;
  runner_run r = {s, p, &started, 0, 0, 0, 0, ""};
  pthread_t rt;
  pthread_create(&rt, NULL, runner_main, &r);
  while (!atomic_load(&started))
    nanosleep(&(struct timespec){0, 100 * 1000}, NULL);
  dr = (destroy_run){s, 0};
  destroy_main(&dr);
  pthread_join(rt, NULL);
  CHECK(r.wrong == 0 && r.other == 0 && r.ok > 0 && r.gone == 1,
        "dg_session_destroy while another thread runs the session: %d exact "
        "runs, then %d refused as not a live session, %d wrong, %d other "
        "errors%s%s",
        r.ok, r.gone, r.wrong, r.other, r.other ? ": " : "", r.other_msg);
}

/* ---- one-shot calls from several threads ---- */

typedef struct oneshot_run {
  dg_context *ctx;
  int id, wrong, errors;
  pthread_barrier_t *start;
} oneshot_run;

/* y = a * b for a [m,k] of (i + j) % 5 and b [k,n] of (i * j) % 3: small
 * integers, so every device's float sum is exact and comparable. */
static void *oneshot_main(void *arg) {
  oneshot_run *r = arg;
  int m = 8 + 8 * (r->id % 2), k = 32, n = 24;
  float *a = malloc(sizeof(float) * (size_t)(m * k)),
        *b = malloc(sizeof(float) * (size_t)(k * n)),
        *y = malloc(sizeof(float) * (size_t)(m * n));
  for (int i = 0; i < m; i++)
    for (int j = 0; j < k; j++)
      a[i * k + j] = (float)((i + j + r->id) % 5);
  for (int i = 0; i < k; i++)
    for (int j = 0; j < n; j++)
      b[i * n + j] = (float)((i * j) % 3);
  dg_tensor_desc ad = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {m, k}};
  dg_tensor_desc bd = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {k, n}};
  dg_tensor_desc yd = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {m, n}};
  pthread_barrier_wait(r->start);
  for (int it = 0; it < 20; it++) {
    if (dg_oneshot_matmul(r->ctx, 0, &ad, a, &bd, b, &yd, y,
                          sizeof(float) * (size_t)(m * n), NULL) != DG_OK) {
      r->errors++;
      continue;
    }
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) {
        float want = 0;
        for (int q = 0; q < k; q++)
          want += a[i * k + q] * b[q * n + j];
        r->wrong += y[i * n + j] != want;
      }
  }
  free(a), free(b), free(y);
  return NULL;
}

static void oneshots(dg_context *ctx) {
  int nt = thread_count();
  oneshot_run r[MAX_THREADS];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, (unsigned)nt);
  for (int t = 0; t < nt; t++)
    r[t] = (oneshot_run){ctx, t, 0, 0, &start};
  run_threads(nt, oneshot_main, r, sizeof *r);
  pthread_barrier_destroy(&start);
  int wrong = 0, errors = 0;
  for (int t = 0; t < nt; t++)
    wrong += r[t].wrong, errors += r[t].errors;
  CHECK(!wrong && !errors,
        "dg_oneshot_matmul from %d threads on one context (two shapes): %d "
        "wrong values, %d errors",
        nt, wrong, errors);
}

/* ---- one buffer read by every thread's session, runs in flight ---- */

typedef struct buf_worker {
  dg_context *ctx;
  pair *p;
  dg_buffer *in; /* the pair's input set 0, shared */
  int wrong, errors;
  char err[300];
} buf_worker;

/* A session of its own bound to the shared input buffer, submitted and
 * waited for ROUNDS times, each output compared with set 0's. */
static void *buffer_main(void *arg) {
  buf_worker *w = arg;
  dg_session *s = NULL;
  dg_diagnostic d = {0};
  void *out = malloc(w->p->out_bytes);
  dg_binding o = {"y", out, w->p->out_bytes};
  if (!out || compile(w->ctx, w->p->k, w->p->dev, &s, &d) != DG_OK ||
      dg_session_bind_buffer(s, "x", w->in, &d) != DG_OK)
    w->errors++;
  for (int r = 0; r < ROUNDS && !w->errors; r++) {
    memset(out, 0xa5, w->p->out_bytes);
    if (dg_session_submit(s, NULL, 0, &o, 1, &d) != DG_OK ||
        dg_session_wait(s, &d) != DG_OK)
      w->errors++;
    else if (memcmp(out, w->p->want[0], w->p->out_bytes))
      w->wrong++;
  }
  if (w->errors)
    snprintf(w->err, sizeof w->err, "%.299s", d.message);
  dg_session_destroy(s);
  free(out);
  return NULL;
}

typedef struct waiter {
  dg_session *s;
  dg_status st;
} waiter;

static void *wait_main(void *arg) {
  waiter *w = arg;
  w->st = dg_session_wait(w->s, NULL);
  return NULL;
}

/* Per device with buffers: N threads' sessions read one input buffer at
 * once, each submitting and waiting; then a run submitted on this thread
 * and waited for on another. */
static void buffers_in_flight(dg_context *ctx) {
  int n = thread_count();
  for (int i = 0; i < pair_count; i++) {
    pair *p = &pairs[i];
    dg_device_info info;
    dg_context_device_info(ctx, p->dev, &info);
    io_shape sh = shape_of(p->k);
    dg_buffer *in = NULL;
    dg_diagnostic d = {0};
    if (info.kind == DG_DEVICE_NPU ||
        dg_buffer_create(ctx, p->dev, &sh.in, &in, &d) != DG_OK ||
        dg_buffer_write(in, p->in[0], p->in_bytes, &d) != DG_OK) {
      dg_buffer_destroy(in);
      continue;
    }
    buf_worker w[MAX_THREADS];
    for (int t = 0; t < n; t++)
      w[t] = (buf_worker){ctx, p, in, 0, 0, ""};
    run_threads(n, buffer_main, w, sizeof w[0]);
    int wrong = 0, errors = 0;
    for (int t = 0; t < n; t++)
      wrong += w[t].wrong, errors += w[t].errors;
    CHECK(!wrong && !errors,
          "%s on device %d (%s): %d threads' sessions read one buffer, "
          "submitted and waited for: %d wrong, %d errors%s%s",
          graph_names[p->k], p->dev, dg_device_kind_name(info.kind), n, wrong,
          errors, errors ? ": " : "", errors ? w[0].err : "");
    dg_session *s = NULL;
    void *out = malloc(p->out_bytes);
    dg_binding o = {"y", out, p->out_bytes};
    waiter wt = {NULL, DG_ERROR_DEVICE};
    pthread_t th;
    bool ok = out && compile(ctx, p->k, p->dev, &s, &d) == DG_OK &&
              dg_session_bind_buffer(s, "x", in, &d) == DG_OK &&
              dg_session_submit(s, NULL, 0, &o, 1, &d) == DG_OK;
    wt.s = s;
    ok = ok && pthread_create(&th, NULL, wait_main, &wt) == 0;
    if (ok)
      pthread_join(th, NULL);
    CHECK(ok && wt.st == DG_OK && !memcmp(out, p->want[0], p->out_bytes),
          "%s on device %d (%s): submitted here, waited for on another "
          "thread",
          graph_names[p->k], p->dev, dg_device_kind_name(info.kind));
    dg_session_destroy(s);
    free(out);
    dg_buffer_destroy(in);
  }
}

int main(void) {
  /* The NPU simulator is a device only when asked for. */
  setenv("DG_NPU_DEVICE", "sim", 0);
  make_weights();
  dg_context *ctx;
  dg_context_options co = {.disable_cache = 1};
  if (dg_context_create(&co, &ctx) != DG_OK) {
    CHECK(0, "context");
    return t_exit();
  }
  int ndev = dg_context_device_count(ctx);
  for (int dev = 0; dev < ndev; dev++) {
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    for (int k = 0; k < G_COUNT; k++) {
      dg_session *s = NULL;
      dg_diagnostic d = {0};
      if (compile(ctx, (graph_kind)k, dev, &s, &d) != DG_OK) {
        printf("# %s on device %d (%s): not run there: %s\n", graph_names[k],
               dev, dg_device_kind_name(info.kind), d.message);
        continue;
      }
      pair *p = &pairs[pair_count++];
      io_shape sh = shape_of((graph_kind)k);
      p->dev = dev;
      p->k = (graph_kind)k;
      p->in_bytes = desc_bytes(&sh.in);
      p->out_bytes = desc_bytes(&sh.out);
      p->shared = build(ctx, (graph_kind)k, dev);
      atomic_flag_clear(&p->error_noted);
      int ok = 1;
      for (int set = 0; set < INPUT_SETS; set++) {
        p->in[set] = malloc(p->in_bytes);
        p->want[set] = malloc(p->out_bytes);
        fill_input(p, set);
        ok &= run_once(s, p, set, p->want[set], &d) == DG_OK;
      }
      CHECK(ok, "%s on device %d (%s): single-threaded reference run",
            graph_names[k], dev, dg_device_kind_name(info.kind));
      dg_session_destroy(s);
    }
  }
  int kinds = 0;
  for (int i = 0; i < pair_count; i++) {
    dg_device_info info;
    dg_context_device_info(ctx, pairs[i].dev, &info);
    kinds |= (int)info.kind;
  }
  printf("# %d (device, graph) pairs over %d devices\n", pair_count, ndev);
  stress(ctx);
  for (int i = 0; i < pair_count; i++)
    if (pairs[i].k == G_MATMUL) {
      one_session_two_threads(ctx, &pairs[i]);
      destroy_while_running(ctx, &pairs[i]);
      break;
    }
  oneshots(ctx);
  buffers_in_flight(ctx);
#ifdef DG_TARGET_VULKAN
  if (dg_vk_validation_enabled())
    CHECK(dg_vk_validation_messages() == 0,
          "Vulkan validation layer (thread-safety checks included): %d "
          "messages",
          dg_vk_validation_messages());
  else if (kinds & DG_DEVICE_VULKAN)
    t_skip("Vulkan validation layer off (DG_VULKAN_VALIDATION is not 1, or "
           "no layer is installed)");
#endif
  for (int i = 0; i < pair_count; i++)
    dg_graph_destroy(pairs[i].shared);
  dg_context_destroy(ctx);
  for (int i = 0; i < pair_count; i++)
    for (int set = 0; set < INPUT_SETS; set++)
      free(pairs[i].in[set]), free(pairs[i].want[set]);
  return t_exit();
}
