/* Device buffers (dg_buffer, dg_session_bind_buffer): on every device
 * that has them (the CPU, each Vulkan and OpenCL device; lavapipe and PoCL
 * in CI, and DG_TEST_VULKAN_PATHS=gpu for the staged path of a discrete
 * GPU), two sessions chained through a buffer give the bytes the same
 * sessions give through host memory, bit for bit, with no host copy of
 * the tensor between them (the targets' counters say so); the buffer
 * reads back what the first session made; a session records its Vulkan
 * commands again only when its bound buffers change; and every misuse is
 * refused with a diagnostic naming it. The same chain submitted with
 * both runs in flight (dg_session_submit / dg_session_wait). */
#include "graph.h"
#include "harness.h"
#include "slow_graph.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#ifdef DG_TARGET_VULKAN
#include "targets/vulkan/vulkan_target.h"
#endif
#ifdef DG_TARGET_OPENCL
#include "targets/opencl/cl_test.h"
#endif

enum { C = 3, H = 10, M = 8, O = 4 };

static float x[C * H * H], w1[M * C * 9], b1[M], w2[O * M * 9];
static dg_context *ctx;

static const dg_tensor_desc y_desc = {
    .dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, M, H, H}};

/* A: x -> conv 3x3 + relu -> y. B: x (A's y) -> conv 3x3 -> max pool ->
 * z. Both pinned to dev. */
static dg_session *compile(bool second, int dev, dg_diagnostic *diag) {
  dg_graph *g = dg_graph_create(ctx, second ? "B" : "A");
  dg_graph_set_device(g, dev);
  dg_tensor_desc xd = second ? y_desc
                             : (dg_tensor_desc){.dtype = DG_DTYPE_F32,
                                                .rank = 4,
                                                .dims = {1, C, H, H}};
  dg_tensor t = dg_graph_input(g, "x", &xd);
  dg_conv2d_params cp = {.padding = DG_PADDING_SAME_UPPER};
  if (!second) {
    dg_tensor_desc wd = {
        .dtype = DG_DTYPE_F32, .rank = 4, .dims = {M, C, 3, 3}};
    dg_tensor_desc bd = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {M}};
    cp.activation = DG_ACTIVATION_RELU;
    t = dg_graph_conv2d(g, "conv1", t, dg_graph_constant(g, "w1", &wd, w1, 0),
                        dg_graph_constant(g, "b1", &bd, b1, 0), &cp);
    dg_graph_output(g, "y", t, DG_LAYOUT_NCHW);
  } else {
    dg_tensor_desc wd = {
        .dtype = DG_DTYPE_F32, .rank = 4, .dims = {O, M, 3, 3}};
    t = dg_graph_conv2d(g, "conv2", t, dg_graph_constant(g, "w2", &wd, w2, 0),
                        DG_TENSOR_NONE, &cp);
    dg_pool2d_params pp = {.kernel = {2, 2}, .stride = {2, 2}};
    t = dg_graph_max_pool2d(g, "pool", t, &pp);
    dg_graph_output(g, "z", t, DG_LAYOUT_NCHW);
  }
  dg_compile_options co = {
      .policy = DG_POLICY_STRICT, .devices = &dev, .device_count = 1};
  dg_session *s = NULL;
  dg_graph_compile(g, &co, &s, diag);
  dg_graph_destroy(g);
  return s;
}

static int staged(void) {
  int n = 0;
#ifdef DG_TARGET_VULKAN
  n += dg_vk_staged_count();
#endif
#ifdef DG_TARGET_OPENCL
  dg_opencl_stats st;
  dg_cl_get_stats(&st);
  n += st.staged_tensors;
#endif
  return n;
}

static int records(void) {
#ifdef DG_TARGET_VULKAN
  return dg_vk_record_count();
#else
  return 0;
#endif
}

static bool has(const dg_diagnostic *d, const char *what) {
  return strstr(d->message, what) != NULL;
}

/* The chain on device dev, through host memory and through a buffer. */
static void chain_on(int dev, const dg_device_info *info) {
  const char *nm = info->name;
  dg_diagnostic diag = {0};
  if (info->kind == DG_DEVICE_NPU) {
    dg_buffer *nb = NULL;
    dg_status st = dg_buffer_create(ctx, dev, &y_desc, &nb, &diag);
    CHECK(st == DG_ERROR_UNSUPPORTED && !nb && has(&diag, "no buffers"),
          "%s: no buffers on the NPU, said (%s)", nm, diag.message);
    return;
  }
  dg_session *a = compile(false, dev, &diag),
             *b = a ? compile(true, dev, &diag) : NULL;
  if (!a || !b) {
    CHECK(0, "%s: the chain compiles (%s)", nm, diag.message);
    dg_session_destroy(a);
    return;
  }
  static float y_host[M * H * H], z_host[O * (H / 2) * (H / 2)],
      z_buf[O * (H / 2) * (H / 2)], y_back[M * H * H];
  dg_binding in = {"x", x, sizeof x}, yb = {"y", y_host, sizeof y_host},
             yin = {"x", y_host, sizeof y_host},
             zb = {"z", z_host, sizeof z_host};
  bool ok = dg_session_run(a, &in, 1, &yb, 1, &diag) == DG_OK &&
            dg_session_run(b, &yin, 1, &zb, 1, &diag) == DG_OK;
  CHECK(ok, "%s: the chain runs through host memory (%s)", nm,
        ok ? "" : diag.message);

  dg_buffer *mid = NULL;
  dg_status st = dg_buffer_create(ctx, dev, &y_desc, &mid, &diag);
  CHECK(st == DG_OK && mid, "%s: a buffer is made (%s)", nm,
        st ? diag.message : "");
  if (!mid) {
    dg_session_destroy(a), dg_session_destroy(b);
    return;
  }
  ok = dg_session_bind_buffer(a, "y", mid, &diag) == DG_OK &&
       dg_session_bind_buffer(b, "x", mid, &diag) == DG_OK;
  CHECK(ok, "%s: A's output and B's input bound to it (%s)", nm,
        ok ? "" : diag.message);
  dg_binding zo = {"z", z_buf, sizeof z_buf};
  int staged0 = staged(), rec0 = records();
  bool same = true;
  for (int run = 0; run < 3 && ok; run++) {
    memset(z_buf, 0xff, sizeof z_buf);
    ok = dg_session_run(a, &in, 1, NULL, 0, &diag) == DG_OK &&
         dg_session_run(b, NULL, 0, &zo, 1, &diag) == DG_OK;
    same = same && ok && !memcmp(z_buf, z_host, sizeof z_buf);
    if (run == 0 && info->kind == DG_DEVICE_VULKAN)
      CHECK(records() - rec0 == 2,
            "%s: each session records its commands again once for the "
            "buffer (%d records)",
            nm, records() - rec0);
  }
  CHECK(ok, "%s: the chain runs through the buffer (%s)", nm,
        ok ? "" : diag.message);
  CHECK(same, "%s: z through the buffer is z through host memory, bit for bit",
        nm);
  if (info->kind == DG_DEVICE_VULKAN)
    CHECK(records() - rec0 == 2,
          "%s: runs binding the same buffers record nothing (%d records in "
          "3 chains)",
          nm, records() - rec0);
  if (info->kind == DG_DEVICE_VULKAN || info->kind == DG_DEVICE_OPENCL)
    CHECK(staged() - staged0 == 2 * 3,
          "%s: only x and z cross the host, y never (%d host copies in 3 "
          "chains)",
          nm, staged() - staged0);
  st = dg_buffer_read(mid, y_back, sizeof y_back, &diag);
  CHECK(st == DG_OK && !memcmp(y_back, y_host, sizeof y_back),
        "%s: the buffer reads back A's y, bit for bit (%s)", nm,
        st ? diag.message : "");

  /* An input written by the host into a buffer; y unbound again goes to
   * host memory. */
  dg_buffer *xb = NULL;
  dg_tensor_desc xd = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, C, H, H}};
  static float y2[M * H * H];
  memset(y2, 0xff, sizeof y2);
  dg_binding y2b = {"y", y2, sizeof y2};
  ok = dg_buffer_create(ctx, dev, &xd, &xb, &diag) == DG_OK &&
       dg_buffer_write(xb, x, sizeof x, &diag) == DG_OK &&
       dg_session_bind_buffer(a, "x", xb, &diag) == DG_OK &&
       dg_session_bind_buffer(a, "y", NULL, &diag) == DG_OK &&
       dg_session_run(a, NULL, 0, &y2b, 1, &diag) == DG_OK;
  CHECK(ok && !memcmp(y2, y_host, sizeof y2),
        "%s: an input written into a buffer gives the host input's y, into "
        "host memory once y is unbound (%s)",
        nm, ok ? "" : diag.message);

  /* Misuse, each refused naming what is wrong. */
  st = dg_session_run(a, &in, 1, &yb, 1, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "bound to a buffer"),
        "%s: a host binding of a buffer-bound input is refused (%s)", nm,
        diag.message);
  st = dg_session_bind_buffer(a, "y", xb, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "holds f32 [1, 3,"),
        "%s: a buffer of other dims is refused (%s)", nm, diag.message);
  st = dg_session_bind_buffer(b, "z", mid, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "holds"),
        "%s: ... and for an output (%s)", nm, diag.message);
  dg_context *other = NULL;
  dg_buffer *ob = NULL;
  dg_context_options oo = {.device_kinds = DG_DEVICE_CPU};
  if (dg_context_create(&oo, &other) == DG_OK &&
      dg_buffer_create(other, 0, &y_desc, &ob, &diag) == DG_OK) {
    st = dg_session_bind_buffer(a, "y", ob, &diag);
    CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "another context"),
          "%s: a buffer of another context is refused (%s)", nm, diag.message);
  }
  dg_buffer_destroy(ob);
  dg_context_destroy(other);
  st = dg_session_bind_buffer(a, "nope", xb, &diag);
  CHECK(st == DG_ERROR_NOT_FOUND && has(&diag, "'nope'"),
        "%s: an unknown name is refused (%s)", nm, diag.message);
  dg_verify_report rep;
  CHECK(dg_session_verify(a, NULL, 0, &rep) == DG_ERROR_INVALID_ARGUMENT,
        "%s: verify refuses a buffer-bound input", nm);
  st = dg_buffer_write(xb, x, sizeof x - 4, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "expected 1200"),
        "%s: a write of the wrong size is refused (%s)", nm, diag.message);
  st = dg_buffer_read(xb, NULL, sizeof x, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "NULL"),
        "%s: a read into NULL is refused (%s)", nm, diag.message);
  dg_buffer_destroy(xb);
  st = dg_session_run(a, NULL, 0, &yb, 1, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "destroyed"),
        "%s: a run whose bound buffer was destroyed fails, saying so (%s)", nm,
        diag.message);
  st = dg_buffer_write(xb, x, sizeof x, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "not a live buffer"),
        "%s: a destroyed buffer is refused (%s)", nm, diag.message);
  dg_buffer_destroy(xb); /* a second destroy: a no-op */
  dg_session_destroy(a), dg_session_destroy(b);
  dg_buffer_destroy(mid);
}

typedef struct waiter {
  dg_session *s;
  dg_status st;
  dg_diagnostic diag;
} waiter;

static void *wait_on_thread(void *arg) {
  waiter *w = arg;
  w->st = dg_session_wait(w->s, &w->diag);
  return NULL;
}

/* dg_session_submit / dg_session_wait on device dev: the chain through a
 * buffer with both runs in flight at once (B submitted before A is waited
 * for: the device's queue order carries A's y to B), B waited for on
 * another thread; a session is busy between its submit and its wait; a
 * failed submit needs no wait; a destroy drops a run nobody waited for
 * without writing its output. */
static void async_on(int dev, const dg_device_info *info) {
  const char *nm = info->name;
  if (info->kind == DG_DEVICE_NPU)
    return;
  dg_diagnostic diag = {0};
  dg_session *a = compile(false, dev, &diag),
             *b = a ? compile(true, dev, &diag) : NULL;
  dg_buffer *mid = NULL;
  if (!a || !b || dg_buffer_create(ctx, dev, &y_desc, &mid, &diag) != DG_OK ||
      dg_session_bind_buffer(a, "y", mid, &diag) != DG_OK ||
      dg_session_bind_buffer(b, "x", mid, &diag) != DG_OK) {
    CHECK(0, "%s: async: the chain compiles and binds (%s)", nm, diag.message);
    dg_session_destroy(a), dg_session_destroy(b), dg_buffer_destroy(mid);
    return;
  }
  static float z_ref[O * (H / 2) * (H / 2)], z[O * (H / 2) * (H / 2)];
  dg_binding in = {"x", x, sizeof x}, zr = {"z", z_ref, sizeof z_ref},
             zb = {"z", z, sizeof z};
  bool ok = dg_session_run(a, &in, 1, NULL, 0, &diag) == DG_OK &&
            dg_session_run(b, NULL, 0, &zr, 1, &diag) == DG_OK;
  memset(z, 0xa5, sizeof z);
  ok = ok && dg_session_submit(a, &in, 1, NULL, 0, &diag) == DG_OK &&
       dg_session_submit(b, NULL, 0, &zb, 1, &diag) == DG_OK;
  CHECK(ok, "%s: A and B submitted, both in flight (%s)", nm,
        ok ? "" : diag.message);
  dg_status st = dg_session_run(a, &in, 1, NULL, 0, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "already running"),
        "%s: a run of a session submitted and not waited for is refused (%s)",
        nm, diag.message);
  st = dg_session_bind_buffer(a, "y", NULL, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "already running"),
        "%s: ... and a bind (%s)", nm, diag.message);
  waiter w = {b, DG_ERROR_DEVICE, {0}};
  pthread_t th;
  bool threaded = ok && pthread_create(&th, NULL, wait_on_thread, &w) == 0;
  ok = ok && dg_session_wait(a, &diag) == DG_OK;
  if (threaded)
    pthread_join(th, NULL);
  CHECK(ok && threaded && w.st == DG_OK && !memcmp(z, z_ref, sizeof z),
        "%s: waited for (B on another thread), z is the synchronous runs' z, "
        "bit for bit (%s)",
        nm, ok ? w.diag.message : diag.message);
  st = dg_session_wait(a, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "no run"),
        "%s: a second wait is refused (%s)", nm, diag.message);
  dg_binding bad = {"z", z, sizeof z - 4};
  st = dg_session_submit(b, NULL, 0, &bad, 1, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "wrong size") &&
            dg_session_run(b, NULL, 0, &zb, 1, &diag) == DG_OK,
        "%s: a refused submit needs no wait: the session runs again", nm);
  /* Dropped: destroyed with its run in flight; a GPU's output is written
   * at the wait, so it stays as it was. */
  memset(z, 0xa5, sizeof z);
  st = dg_session_submit(b, NULL, 0, &zb, 1, &diag);
  dg_session_destroy(b);
  bool marked = true;
  for (size_t i = 0; i < sizeof z; i++)
    marked = marked && ((unsigned char *)z)[i] == 0xa5;
  if (info->kind == DG_DEVICE_CPU)
    CHECK(st == DG_OK, "%s: a submitted run is dropped by the destroy", nm);
  else
    CHECK(st == DG_OK && marked,
          "%s: a submitted run is dropped by the destroy, its output not "
          "written",
          nm);
  dg_session_destroy(a);
  dg_buffer_destroy(mid);
}

/* A buffer on one device bound to a tensor another device uses. */
static void wrong_device(int gpu, int cpu) {
  dg_diagnostic diag = {0};
  dg_session *a = compile(false, cpu, &diag);
  dg_buffer *mid = NULL;
  dg_buffer_create(ctx, gpu, &y_desc, &mid, &diag);
  dg_status st = dg_session_bind_buffer(a, "y", mid, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "node 'conv1' makes") &&
            has(&diag, "on device 0"),
        "a device %d buffer for an output made on the CPU is refused (%s)", gpu,
        diag.message);
  dg_session_destroy(a);
  dg_buffer_destroy(mid);
}

/* A buffer holds a tensor as the session holds it: an input bound NHWC
 * (converted on the host at each run) takes no buffer, not even the
 * CPU's (it would be read unconverted). */
static void nhwc_refused(void) {
  dg_diagnostic diag = {0};
  dg_graph *g = dg_graph_create(ctx, "nhwc");
  dg_tensor_desc xd = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, 2, 3, 3}};
  dg_graph_output(g, "y", dg_graph_relu(g, "r", dg_graph_input(g, "x", &xd)),
                  DG_LAYOUT_NCHW);
  dg_graph_input_layout(g, "x", DG_LAYOUT_NHWC);
  dg_session *s = NULL;
  dg_buffer *b = NULL;
  dg_status st = dg_graph_compile(g, NULL, &s, &diag);
  if (st == DG_OK)
    st = dg_buffer_create(ctx, 0, &xd, &b, &diag);
  if (st == DG_OK)
    st = dg_session_bind_buffer(s, "x", b, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "NHWC"),
        "a CPU buffer for an input bound NHWC is refused (%s)", diag.message);
  dg_buffer_destroy(b);
  dg_session_destroy(s);
  dg_graph_destroy(g);
}

static void bad_create(void) {
  dg_diagnostic diag = {0};
  dg_buffer *b = (dg_buffer *)&diag;
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {4, 0}};
  dg_status st = dg_buffer_create(ctx, 0, &d, &b, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && !b && has(&diag, "dim below 1"),
        "a zero dim is refused (%s)", diag.message);
  d.dims[1] = 4;
  st = dg_buffer_create(ctx, 99, &d, &b, &diag);
  CHECK(st == DG_ERROR_NOT_FOUND && has(&diag, "no device 99"),
        "a device index out of range is refused (%s)", diag.message);
  d.dtype = (dg_dtype)77;
  st = dg_buffer_create(ctx, 0, &d, &b, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "dtype"),
        "a bad dtype is refused (%s)", diag.message);
  st = dg_buffer_create(ctx, 0, NULL, &b, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "desc is NULL"),
        "a NULL desc is refused (%s)", diag.message);
  CHECK(dg_buffer_info(NULL, NULL, NULL) == DG_ERROR_INVALID_ARGUMENT,
        "info of NULL is refused");
  st = dg_buffer_create(NULL, 0, &d, &b, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "not a live context"),
        "a NULL context is refused (%s)", diag.message);
  st = dg_buffer_write(NULL, x, 4, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "not a live buffer"),
        "a write to NULL is refused (%s)", diag.message);
  st = dg_session_bind_buffer(NULL, "x", NULL, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "session"),
        "a bind on a NULL session is refused (%s)", diag.message);
  st = dg_session_submit(NULL, NULL, 0, NULL, 0, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "NULL"),
        "a submit of a NULL session is refused (%s)", diag.message);
  st = dg_session_wait(NULL, &diag);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && has(&diag, "NULL"),
        "a wait on a NULL session is refused (%s)", diag.message);
  dg_buffer_destroy(NULL); /* a no-op */
  d.dtype = DG_DTYPE_I8;
  st = dg_buffer_create(ctx, 0, &d, &b, &diag);
  dg_tensor_desc got;
  int dev = -1;
  CHECK(st == DG_OK && dg_buffer_info(b, &got, &dev) == DG_OK &&
            got.dtype == DG_DTYPE_I8 && got.rank == 2 && got.dims[1] == 4 &&
            dev == 0,
        "info says the dtype, dims and device");
  dg_buffer_destroy(b);
}

#ifdef DG_TARGET_VULKAN
/* A run whose output is a buffer times out (device_timeout_ms = 1 on a
 * long run): the buffer destroyed at once keeps its memory for the
 * device's destroy instead of freeing it under the still-running work
 * (counted; the validation layer would say "in use" otherwise), and the
 * destroys stay bounded. */
static void timeout_keeps_buffer(void) {
  dg_context_options o = {.device_timeout_ms = 1,
                          .device_kinds = DG_DEVICE_VULKAN};
  dg_context *c = NULL;
  int dev = -1;
  if (dg_context_create(&o, &c) == DG_OK)
    for (int d = 0; dev < 0 && d < dg_context_device_count(c); d++) {
      dg_device_info info;
      dg_context_device_info(c, d, &info);
      dev = info.kind == DG_DEVICE_VULKAN ? d : -1;
    }
  if (dev < 0) {
    dg_context_destroy(c);
    t_skip("no Vulkan device: the time-out case");
    return;
  }
  dg_device_info info;
  dg_context_device_info(c, dev, &info);
  slow_graph sg = slow_graph_make(c, strstr(info.name, "(cpu)") != NULL);
  dg_compile_options co = {.devices = &dev, .device_count = 1};
  dg_session *s = NULL;
  dg_diagnostic diag = {0};
  dg_buffer *yb = NULL;
  dg_io_info oi;
  dg_status st = dg_graph_compile(sg.g, &co, &s, &diag);
  if (st == DG_OK && dg_session_output_info(s, 0, &oi) == DG_OK &&
      dg_buffer_create(c, dev, &oi.desc, &yb, &diag) == DG_OK &&
      dg_session_bind_buffer(s, "y", yb, &diag) == DG_OK) {
    dg_binding in = {"x", sg.x, sg.bytes};
    st = dg_session_run(s, &in, 1, NULL, 0, &diag);
  }
  CHECK(st == DG_ERROR_DEVICE && strstr(diag.message, "device_timeout_ms"),
        "device %d, device_timeout_ms = 1, output in a buffer: the run fails "
        "naming the option (%s)",
        dev, diag.message);
  int kept = dg_vk_buffers_kept();
  double t0 = slow_graph_now_ms();
  dg_session_bind_buffer(s, "y", NULL, NULL);
  dg_buffer_destroy(yb);
  bool was_kept = dg_vk_buffers_kept() > kept;
  dg_session_destroy(s);
  dg_graph_destroy(sg.g);
  sg.g = NULL;
  dg_context_destroy(c);
  double ms = slow_graph_now_ms() - t0;
  dg_vk_abandoned_finish();
  CHECK(was_kept && ms < 250,
        "device %d: the buffer destroyed after the time-out was kept for "
        "the device's destroy (%s), the destroys took %.1f ms",
        dev, was_kept ? "kept" : "freed", ms);
  slow_graph_free(&sg);
}
#endif

int main(void) {
  t_seed(11);
  for (size_t i = 0; i < sizeof x / sizeof *x; i++)
    x[i] = t_uniform(-1, 1);
  for (size_t i = 0; i < sizeof w1 / sizeof *w1; i++)
    w1[i] = t_uniform(-0.5f, 0.5f);
  for (size_t i = 0; i < sizeof b1 / sizeof *b1; i++)
    b1[i] = t_uniform(-0.2f, 0.2f);
  for (size_t i = 0; i < sizeof w2 / sizeof *w2; i++)
    w2[i] = t_uniform(-0.5f, 0.5f);
  if (dg_context_create(NULL, &ctx) != DG_OK) {
    CHECK(0, "context");
    return t_exit();
  }
  bad_create();
  nhwc_refused();
  int gpu = -1;
  for (int d = 0; d < dg_context_device_count(ctx); d++) {
    dg_device_info info;
    dg_context_device_info(ctx, d, &info);
    chain_on(d, &info);
    async_on(d, &info);
    if (gpu < 0 &&
        (info.kind == DG_DEVICE_VULKAN || info.kind == DG_DEVICE_OPENCL))
      gpu = d;
  }
  if (gpu >= 0)
    wrong_device(gpu, 0);
  else
    t_skip("no Vulkan or OpenCL device: the wrong-device case");
  dg_context_destroy(ctx);
#ifdef DG_TARGET_VULKAN
  timeout_keeps_buffer();
  if (dg_vk_validation_enabled())
    CHECK(dg_vk_validation_messages() == 0,
          "the Vulkan validation layer said nothing (%d messages)",
          dg_vk_validation_messages());
#endif
  return t_exit();
}
