#define _POSIX_C_SOURCE 200809L
/* Sessions: binding errors, layouts, memory reuse, the plan (table, DOT,
 * reasons), placement policies with a second (fake) device, verify, and
 * one-shot ops. */
#include "graph.h"
#include "harness.h"
#include "runtime/internal.h"

#include <math.h>
#include <string.h>

static dg_context *ctx;

static dg_tensor_desc fdesc(int rank, const int64_t *dims) {
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = rank};
  memcpy(d.dims, dims, sizeof(int64_t) * (size_t)rank);
  return d;
}

/* A fake accelerator for placement tests: it runs only plain conv2d (through
 * the CPU's kernels), costs 5 us to launch and 10 ps per byte moved, and
 * computes 100x faster than its estimate says the CPU does. */
static dg_device *cpu_dev;
static int fake_supports(dg_device *d, const dg_ir *ir, const dg_node *n,
                         char *why, size_t size) {
  (void)d, (void)ir;
  /* as the real accelerators, no fused unary function (fuse_unary.h):
   * a unary node between two convs stays a node of its own */
  if (n->op == DG_OP_CONV2D && !n->p.fn)
    return 1;
  snprintf(why, size, "only conv2d");
  return 0;
}
static double fake_estimate(dg_device *d, const dg_ir *ir, const dg_node *n) {
  (void)d;
  return cpu_dev->vt->estimate_us(cpu_dev, ir, n) / 100.0;
}
static dg_status fake_compile(dg_device *d, const dg_segment *seg, void **st,
                              dg_diagnostic *diag) {
  (void)d;
  return cpu_dev->vt->compile(cpu_dev, seg, st, diag);
}

static int add_fake_device(void) {
  static dg_target_vtbl vt;
  vt = *ctx->devices.items[0].vt;
  vt.supports = fake_supports;
  vt.estimate_us = fake_estimate;
  vt.compile = fake_compile;
  vt.destroy = NULL;
  dg_device *d = dg_device_list_add(&ctx->devices, &vt);
  cpu_dev = &ctx->devices.items[0];
  d->info = cpu_dev->info;
  d->info.kind = DG_DEVICE_NPU;
  d->info.index = ctx->devices.count - 1;
  d->info.int8_max_lsb_deviation = 1;
  snprintf(d->info.name, sizeof d->info.name, "fake-accelerator");
  d->launch_us = 5;
  d->transfer_us_per_byte = 1e-5;
  return d->info.index;
}

/* x[1,3,H,W] -> conv 3x3 (8) -> relu -> conv 3x3 (8) -> global pool. */
static dg_graph *small_net(int64_t H, float *w1, float *w2) {
  dg_graph *g = dg_graph_create(ctx, "net");
  int64_t xd[4] = {1, 3, H, H}, w1d[4] = {8, 3, 3, 3}, w2d[4] = {8, 8, 3, 3};
  dg_tensor_desc a = fdesc(4, xd), b = fdesc(4, w1d), c = fdesc(4, w2d);
  dg_tensor x = dg_graph_input(g, "x", &a);
  dg_conv2d_params p = {.padding = DG_PADDING_SAME_UPPER};
  dg_tensor y = dg_graph_conv2d(
      g, "conv1", x, dg_graph_constant(g, "w1", &b, w1, 0), DG_TENSOR_NONE, &p);
  /* An abs, not a relu or a sigmoid: the compile-time passes would fuse
   * those into conv1 (tests/test_passes.c), and placement must see a node
   * between the convs that only the CPU runs. */
  y = dg_graph_unary(g, "abs", DG_UNARY_ABS, y, 0, 0);
  y = dg_graph_conv2d(g, "conv2", y, dg_graph_constant(g, "w2", &c, w2, 0),
                      DG_TENSOR_NONE, &p);
  y = dg_graph_global_avg_pool(g, "gap", y);
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  return g;
}

/* Compile options naming what does not exist are refused as bad
 * arguments, naming the field (they were "can run on no allowed device"). */
static void test_bad_options(void) {
  float w1[216] = {0}, w2[576] = {0};
  dg_graph *g = small_net(8, w1, w2);
  int dev99 = 99, neg = -1;
  struct {
    dg_compile_options o;
    const char *field, *says;
  } cases[] = {
      {{.devices = &dev99, .device_count = 1},
       "options.devices",
       "devices[0] is 99"},
      {{.devices = &neg, .device_count = 1},
       "options.devices",
       "devices[0] is -1"},
      {{.device_kinds = 0x100}, "options.device_kinds", "0x100"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    dg_session *s = NULL;
    dg_diagnostic d;
    dg_status st = dg_graph_compile(g, &cases[i].o, &s, &d);
    CHECK(st == DG_ERROR_INVALID_ARGUMENT && !s &&
              !strcmp(d.field, cases[i].field) &&
              strstr(d.message, cases[i].says),
          "compile options: %s refused naming it (%s: %s)", cases[i].says,
          dg_status_string(st), d.message);
    dg_session_destroy(s);
  }
  dg_graph_destroy(g);
}

/* A CPU-only context c of its own, and small_net(8) built in it: the
 * objects the destroy tests destroy. false (said) when no context. */
static bool own_small_net(dg_context **c, dg_graph **g, float *w1, float *w2) {
  dg_context_options co = {.device_kinds = DG_DEVICE_CPU};
  *c = NULL;
  if (dg_context_create(&co, c) != DG_OK) {
    CHECK(0, "context");
    return false;
  }
  dg_context *keep = ctx;
  ctx = *c; /* small_net builds in ctx */
  *g = small_net(8, w1, w2);
  ctx = keep;
  return true;
}

/* Issue 18's probes: use after destroy and the context destroyed before
 * its sessions. Each touched freed memory (ASan: heap-use-after-free). */
static void test_after_destroy(void) {
  float w1[216] = {0}, w2[576] = {0}, x[3 * 64] = {0}, y[8];
  dg_context *c;
  dg_graph *g;
  if (!own_small_net(&c, &g, w1, w2))
    return;
  dg_session *s = NULL, *s2 = NULL;
  dg_diagnostic d;
  dg_status st = dg_graph_compile(g, NULL, &s, &d);
  st = st == DG_OK ? dg_graph_compile(g, NULL, &s2, &d) : st;
  dg_binding in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  /* The context goes first: its sessions keep it alive, and run. */
  dg_context_destroy(c);
  dg_status r = st == DG_OK ? dg_session_run(s, &in, 1, &out, 1, &d) : st;
  CHECK(r == DG_OK, "a session runs after its context was destroyed (%s)",
        r ? d.message : "ok");
  CHECK(dg_context_device_count(c) == 0 && !dg_graph_create(c, "late") &&
            dg_context_cache_dir(c) == NULL,
        "the destroyed context itself is refused: no devices, no graph");
  dg_session_destroy(s);
  r = dg_session_run(s, &in, 1, &out, 1, &d);
  CHECK(r == DG_ERROR_INVALID_ARGUMENT && strstr(d.message, "not a live"),
        "running a destroyed session: invalid argument (%s)", d.message);
  dg_verify_report rep;
  CHECK(dg_session_verify(s, &in, 1, &rep) == DG_ERROR_INVALID_ARGUMENT &&
            !dg_session_plan(s) && dg_session_input_count(s) == 0,
        "verify, plan and info of a destroyed session are refused");
  dg_session_destroy(s); /* a second destroy: nothing happens */
  dg_graph_destroy(g);
  CHECK(dg_graph_status(g) == DG_ERROR_INVALID_ARGUMENT &&
            dg_graph_relu(g, "r", DG_TENSOR_NONE).id == 0 &&
            dg_graph_node_count(g) == 0 && !dg_graph_error(g),
        "a destroyed graph is refused by the builder and its queries");
  dg_session *s3 = (dg_session *)1;
  CHECK(dg_graph_compile(g, NULL, &s3, &d) == DG_ERROR_INVALID_ARGUMENT &&
            !s3 && strstr(d.message, "not a live graph"),
        "compiling a destroyed graph: invalid argument (%s)", d.message);
  dg_graph_destroy(g);
  /* The last session frees the context (LeakSanitizer checks it). */
  r = dg_session_run(s2, &in, 1, &out, 1, &d);
  CHECK(r == DG_OK, "the second session still runs (%s)", r ? d.message : "ok");
  dg_session_destroy(s2);
}

static void test_bindings(void) {
  float w1[216], w2[576], x[3 * 64], y[8], y2[8];
  for (int i = 0; i < 216; i++)
    w1[i] = t_uniform(-1, 1);
  for (int i = 0; i < 576; i++)
    w2[i] = t_uniform(-1, 1);
  for (int i = 0; i < 3 * 64; i++)
    x[i] = t_uniform(-1, 1);
  dg_graph *g = small_net(8, w1, w2);
  dg_session *s;
  dg_diagnostic d;
  CHECK(dg_graph_compile(g, NULL, &s, &d) == DG_OK, "compile small net");
  dg_binding in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  CHECK(dg_session_run(s, &in, 1, &out, 1, &d) == DG_OK, "run small net");
  dg_binding bad = {"x", x, sizeof x - 4};
  CHECK(
      dg_session_run(s, &bad, 1, &out, 1, &d) == DG_ERROR_INVALID_ARGUMENT &&
          strstr(d.message, "size 764 bytes, expected 768 (f32 [1, 3, 8, 8])"),
      "wrong input size is refused, naming the dtype and shape: %s", d.message);
  bad = (dg_binding){"nope", x, sizeof x};
  CHECK(dg_session_run(s, &bad, 1, &out, 1, &d) != DG_OK,
        "unknown input name is refused: %s", d.message);
  CHECK(dg_session_run(s, NULL, 0, &out, 1, &d) == DG_ERROR_INVALID_ARGUMENT &&
            strstr(d.message, "not bound"),
        "missing input is refused: %s", d.message);
  bad = (dg_binding){"x", NULL, sizeof x};
  CHECK(dg_session_run(s, &bad, 1, &out, 1, &d) == DG_ERROR_INVALID_ARGUMENT,
        "NULL input data is refused");
  dg_binding bo = {"z", y, sizeof y};
  CHECK(dg_session_run(s, &in, 1, &bo, 1, &d) == DG_ERROR_NOT_FOUND,
        "unknown output name is refused: %s", d.message);
  bo = (dg_binding){"y", y, 3};
  CHECK(dg_session_run(s, &in, 1, &bo, 1, &d) == DG_ERROR_INVALID_ARGUMENT &&
            strstr(d.message, "expected 32: f32 [1, 8, 1, 1]"),
        "wrong output size is refused, naming the dtype and shape: %s",
        d.message);
  /* Destroying the graph must not affect the session. */
  dg_graph_destroy(g);
  memset(y2, 0, sizeof y2);
  dg_binding out2 = {"y", y2, sizeof y2};
  CHECK(dg_session_run(s, &in, 1, &out2, 1, &d) == DG_OK &&
            !memcmp(y, y2, sizeof y),
        "a session outlives its graph and gives the same result");
  dg_verify_report r;
  dg_status vs = dg_session_verify(s, &in, 1, &r);
  CHECK(vs == DG_OK && r.ok && r.nodes_checked == 4,
        "verify: all %d nodes within tolerance (worst rel %.2g at %s)",
        r.nodes_checked, r.max_rel_error, r.node_name);
  dg_session_destroy(s);
}

static void test_nhwc_and_reuse(void) {
  /* A chain long enough that buffers are reused; NHWC in and out. */
  int64_t xd[4] = {2, 3, 5, 4};
  dg_tensor_desc a = fdesc(4, xd);
  dg_graph *g = dg_graph_create(ctx, "chain");
  dg_tensor x = dg_graph_input(g, "x", &a);
  dg_graph_input_layout(g, "x", DG_LAYOUT_NHWC);
  dg_tensor y = x;
  for (int i = 0; i < 12; i++)
    y = i % 2 ? dg_graph_relu(g, NULL, y) : dg_graph_clip(g, NULL, y, -2, 2);
  y = dg_graph_add(g, "add", y, x);
  dg_graph_output(g, "y", y, DG_LAYOUT_NHWC);
  dg_graph_output(g, "y_nchw", y, DG_LAYOUT_NCHW);
  float in[120], out[120], out_nchw[120];
  for (int i = 0; i < 120; i++)
    in[i] = t_uniform(-3, 3);
  dg_session *s;
  CHECK(dg_graph_compile(g, NULL, &s, NULL) == DG_OK, "compile chain");
  dg_binding bi = {"x", in, sizeof in};
  dg_binding bo[2] = {{"y", out, sizeof out},
                      {"y_nchw", out_nchw, sizeof out_nchw}};
  CHECK(dg_session_run(s, &bi, 1, bo, 2, NULL) == DG_OK, "run chain");
  int bad = 0;
  for (int n = 0; n < 2; n++)
    for (int h = 0; h < 5; h++)
      for (int w = 0; w < 4; w++)
        for (int c = 0; c < 3; c++) {
          float v = in[((n * 5 + h) * 4 + w) * 3 + c];
          float want = (v > 2 ? 2 : (v < 0 ? 0 : v)) + v;
          bad += out[((n * 5 + h) * 4 + w) * 3 + c] != want;
          bad += out_nchw[((n * 3 + c) * 5 + h) * 4 + w] != want;
        }
  CHECK(!bad, "NHWC input and output, reused buffers: %d wrong values", bad);
  dg_session_destroy(s);
  dg_graph_destroy(g);
}

static void test_placement(int fake) {
  static float w1[216], w2[576];
  for (int i = 0; i < 216; i++)
    w1[i] = t_uniform(-1, 1);
  for (int i = 0; i < 576; i++)
    w2[i] = t_uniform(-1, 1);
  /* Tiny net: launch cost dominates, everything stays on the CPU. */
  dg_graph *g = small_net(4, w1, w2);
  dg_session *s;
  dg_plan_node pn;
  CHECK(dg_graph_compile(g, NULL, &s, NULL) == DG_OK, "compile tiny net");
  dg_plan_get_node(dg_session_plan(s), 0, &pn);
  CHECK(pn.device_kind == DG_DEVICE_CPU && pn.reason == DG_REASON_CHEAPEST,
        "tiny conv stays on the CPU (%s: %s)", pn.device_name, pn.reason_text);
  dg_session_destroy(s);
  dg_graph_destroy(g);

  /* Large net: both convs go to the accelerator even though the abs
   * between them runs on the CPU (placement weighs the whole path). */
  g = small_net(96, w1, w2);
  CHECK(dg_graph_compile(g, NULL, &s, NULL) == DG_OK, "compile large net");
  const dg_plan *plan = dg_session_plan(s);
  dg_plan_node p0, p1, p2;
  dg_plan_get_node(plan, 0, &p0);
  dg_plan_get_node(plan, 1, &p1);
  dg_plan_get_node(plan, 2, &p2);
  CHECK(p0.device_index == fake && p2.device_index == fake &&
            p1.device_index == 0 && p0.bytes_transferred > 0,
        "large convs go to the accelerator, abs to the CPU (%d %d %d), "
        "transfers counted (%llu B)",
        p0.device_index, p1.device_index, p2.device_index,
        (unsigned long long)p0.bytes_transferred);
  CHECK(p0.int8_max_lsb_deviation == 1,
        "the plan carries the device's declared int8 deviation");
  FILE *f = tmpfile();
  dg_plan_write(plan, DG_PLAN_FORMAT_DOT, f);
  char buf[4096] = {0};
  rewind(f);
  size_t got = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  CHECK(got > 0 && strstr(buf, "digraph") && strstr(buf, "gold") &&
            strstr(buf, "lightblue") && strstr(buf, "n0 -> n1"),
        "DOT output has coloured nodes and edges");
  f = tmpfile();
  dg_plan_write(plan, DG_PLAN_FORMAT_TABLE, f);
  rewind(f);
  got = fread(buf, 1, sizeof buf - 1, f);
  buf[got] = 0;
  fclose(f);
  CHECK(strstr(buf, "conv1") && strstr(buf, "npu:") && strstr(buf, "segment"),
        "table output names nodes, devices and segments");
  float x[3 * 96 * 96], y[8], y_cpu[8];
  for (int i = 0; i < 3 * 96 * 96; i++)
    x[i] = t_uniform(-1, 1);
  dg_binding in = {"x", x, sizeof x};
  dg_session_run(s, &in, 1, &(dg_binding){"y", y, sizeof y}, 1, NULL);
  dg_session_destroy(s);

  /* Allow-list: CPU only. */
  dg_compile_options cpu_only = {.device_kinds = DG_DEVICE_CPU};
  CHECK(dg_graph_compile(g, &cpu_only, &s, NULL) == DG_OK,
        "compile with a CPU-only allow-list");
  dg_plan_get_node(dg_session_plan(s), 0, &pn);
  CHECK(pn.device_index == 0 && pn.reason == DG_REASON_ONLY_DEVICE,
        "allow-list keeps the conv on the CPU (%s)", pn.reason_text);
  dg_session_run(s, &in, 1, &(dg_binding){"y", y_cpu, sizeof y_cpu}, 1, NULL);
  float diff = 0;
  for (int i = 0; i < 8; i++)
    diff = fmaxf(diff, fabsf(y[i] - y_cpu[i]));
  CHECK(diff < 1e-4f, "mixed placement and CPU agree (max diff %g)", diff);
  dg_session_destroy(s);

  /* Allow-list that runs nothing. */
  dg_compile_options npu_only = {.device_kinds = DG_DEVICE_NPU};
  dg_diagnostic d;
  CHECK(dg_graph_compile(g, &npu_only, &s, &d) == DG_ERROR_UNSUPPORTED &&
            d.node_index == 1 && strstr(d.message, "abs") &&
            strstr(d.message, "only conv2d"),
        "an allow-list that cannot run a node names it: %s", d.message);
  dg_graph_destroy(g);

  /* Pins: strict fails naming the node; auto falls back visibly. */
  g = dg_graph_create(ctx, "pinned");
  int64_t xd[2] = {2, 3};
  dg_tensor_desc a = fdesc(2, xd);
  dg_tensor x2 = dg_graph_input(g, "x", &a);
  dg_graph_set_device(g, fake);
  dg_tensor r = dg_graph_relu(g, "pinned_relu", x2);
  dg_graph_set_device(g, -1);
  dg_graph_output(g, "y", r, DG_LAYOUT_NCHW);
  dg_compile_options strict = {.policy = DG_POLICY_STRICT};
  CHECK(dg_graph_compile(g, &strict, &s, &d) == DG_ERROR_UNSUPPORTED &&
            !strcmp(d.node_name, "pinned_relu") &&
            strstr(d.message, "fake-accelerator"),
        "strict: a pinned node its device cannot run fails: %s", d.message);
  CHECK(dg_graph_compile(g, NULL, &s, &d) == DG_OK, "auto: compiles");
  dg_plan_get_node(dg_session_plan(s), 0, &pn);
  CHECK(pn.reason == DG_REASON_FALLBACK && pn.device_index == 0 &&
            strstr(pn.reason_text, "only conv2d"),
        "auto: the fallback is in the plan with its reason (%s)",
        pn.reason_text);
  dg_session_destroy(s);
  dg_graph_destroy(g);
}

/* Verify must find a wrong node: corrupt the CPU output of one node
 * through the test hook and check the report names it. */
static void test_verify_detects(void) {
  float w1[216], w2[576], x[3 * 64];
  for (int i = 0; i < 216; i++)
    w1[i] = t_uniform(-1, 1);
  for (int i = 0; i < 576; i++)
    w2[i] = t_uniform(-1, 1);
  for (int i = 0; i < 192; i++)
    x[i] = t_uniform(-1, 1);
  setenv("DG_TEST_CORRUPT_NODE", "conv2", 1);
  dg_graph *g = small_net(8, w1, w2);
  dg_session *s;
  dg_graph_compile(g, NULL, &s, NULL);
  dg_verify_report r;
  dg_binding in = {"x", x, sizeof x};
  dg_status st = dg_session_verify(s, &in, 1, &r);
  CHECK(st == DG_ERROR_MISMATCH && !r.ok && r.node_index == 2 &&
            !strcmp(r.node_name, "conv2") && r.max_abs_error > 0.5,
        "verify names the first wrong node (%s, abs err %g)", r.node_name,
        r.max_abs_error);
  unsetenv("DG_TEST_CORRUPT_NODE");
  dg_session_destroy(s);
  dg_graph_destroy(g);
}

static void test_oneshot(void) {
  int64_t xd[4] = {1, 4, 9, 9}, wd[4] = {6, 4, 3, 3}, bd[1] = {6};
  dg_tensor_desc xs = fdesc(4, xd), ws = fdesc(4, wd), bs = fdesc(1, bd);
  float x[324], w[216], b[6], y[6 * 81], y2[6 * 81];
  for (int i = 0; i < 324; i++)
    x[i] = t_uniform(-1, 1);
  for (int i = 0; i < 216; i++)
    w[i] = t_uniform(-1, 1);
  for (int i = 0; i < 6; i++)
    b[i] = t_uniform(-1, 1);
  dg_conv2d_params p = {.padding = DG_PADDING_SAME_UPPER,
                        .activation = DG_ACTIVATION_RELU};
  dg_diagnostic d;
  dg_status st = dg_oneshot_conv2d(ctx, 0, &xs, x, &ws, w, &bs, b, &p, NULL, y,
                                   sizeof y, &d);
  CHECK(st == DG_OK, "one-shot conv2d on the CPU (%s)", st ? d.message : "ok");
  /* Same through a graph. */
  dg_graph *g = dg_graph_create(ctx, "g");
  dg_tensor t = dg_graph_conv2d(
      g, "c", dg_graph_input(g, "x", &xs), dg_graph_constant(g, "w", &ws, w, 0),
      dg_graph_constant(g, "b", &bs, b, DG_CONSTANT_LEND), &p);
  dg_graph_output(g, "y", t, DG_LAYOUT_NCHW);
  dg_session *s;
  dg_graph_compile(g, NULL, &s, NULL);
  dg_session_run(s, &(dg_binding){"x", x, sizeof x}, 1,
                 &(dg_binding){"y", y2, sizeof y2}, 1, NULL);
  CHECK(!memcmp(y, y2, sizeof y), "one-shot equals the graph result");
  dg_session_destroy(s);
  dg_graph_destroy(g);
  /* Memoised: a second call with new data reuses the session. */
  int before = 0;
  for (dg_oneshot_entry *e = ctx->oneshots; e; e = *(dg_oneshot_entry **)e)
    before++;
  w[0] += 1;
  dg_oneshot_conv2d(ctx, 0, &xs, x, &ws, w, &bs, b, &p, NULL, y2, sizeof y2,
                    NULL);
  int after = 0;
  for (dg_oneshot_entry *e = ctx->oneshots; e; e = *(dg_oneshot_entry **)e)
    after++;
  CHECK(before == 1 && after == 1 && memcmp(y, y2, sizeof y),
        "one-shot sessions are memoised by descriptor, data is fresh");
  st = dg_oneshot_conv2d(ctx, 0, &xs, x, &ws, w, &bs, b, &p, NULL, y,
                         sizeof y - 4, &d);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && strstr(d.message, "size"),
        "one-shot with a short output buffer: %s", d.message);
  ws.dims[1] = 5;
  st = dg_oneshot_conv2d(ctx, 0, &xs, x, &ws, w, &bs, b, &p, NULL, y, sizeof y,
                         &d);
  CHECK(st == DG_ERROR_INVALID_SHAPE && strstr(d.field, "w.dims[1]"),
        "one-shot with mismatched shapes: %s", d.message);
  st = dg_oneshot_conv2d(ctx, 0, &xs, NULL, &ws, w, NULL, NULL, &p, NULL, y,
                         sizeof y, &d);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT, "one-shot with NULL data");

  /* fully connected and matmul */
  int64_t fx[2] = {3, 5}, fw[2] = {4, 5}, mb[2] = {5, 4};
  dg_tensor_desc fxs = fdesc(2, fx), fws = fdesc(2, fw), mbs = fdesc(2, mb);
  float a[15], wf[20], yf[12], ym[12], wt[20];
  for (int i = 0; i < 15; i++)
    a[i] = t_uniform(-1, 1);
  for (int i = 0; i < 20; i++)
    wf[i] = t_uniform(-1, 1);
  for (int o = 0; o < 4; o++)
    for (int k = 0; k < 5; k++)
      wt[k * 4 + o] = wf[o * 5 + k];
  st = dg_oneshot_fully_connected(ctx, -1, &fxs, a, &fws, wf, NULL, NULL,
                                  DG_ACTIVATION_NONE, NULL, yf, sizeof yf, &d);
  dg_status st2 =
      dg_oneshot_matmul(ctx, -1, &fxs, a, &mbs, wt, NULL, ym, sizeof ym, &d);
  float diff = 0;
  for (int i = 0; i < 12; i++)
    diff = fmaxf(diff, fabsf(yf[i] - ym[i]));
  CHECK(st == DG_OK && st2 == DG_OK && diff < 1e-6f,
        "one-shot fully_connected equals matmul with w transposed (%g)", diff);
}

static char last_log[1024];
static int log_calls;
static void on_log(void *user, dg_log_level level, const char *msg) {
  (void)user;
  if (level == DG_LOG_ERROR) {
    snprintf(last_log, sizeof last_log, "%s", msg);
    log_calls++;
  }
}

/* Logging goes through the callback only, at the level asked for. */
static void test_logging(void) {
  dg_context *c;
  dg_context_options o = {.log = on_log,
                          .log_level = DG_LOG_ERROR,
                          .device_kinds = DG_DEVICE_CPU,
                          .cpu_threads = 1,
                          .disable_cache = 1};
  CHECK(dg_context_create(&o, &c) == DG_OK && dg_context_cache_dir(c) == NULL,
        "context with logging, one thread, no cache");
  dg_device_info info;
  dg_context_device_info(c, 0, &info);
  CHECK(dg_context_device_count(c) == 1 && strstr(info.driver, "1 thread"),
        "cpu_threads is honoured (%s)", info.driver);
  dg_graph *g = dg_graph_create(c, "g");
  dg_graph_relu(g, "bad", DG_TENSOR_NONE);
  CHECK(log_calls == 1 && strstr(last_log, "bad"),
        "a builder error reaches the log callback: %s", last_log);
  dg_graph_destroy(g);
  dg_context_destroy(c);
  o = (dg_context_options){.cache_dir = "/tmp/dg-cache-test"};
  CHECK(dg_context_create(&o, &c) == DG_OK &&
            !strcmp(dg_context_cache_dir(c), "/tmp/dg-cache-test"),
        "cache_dir option is used");
  dg_context_destroy(c);
}

/* A live object handed to another kind's destroy (a cast by mistake) is
 * refused, untouched: before, 4 of the 6 pairs crashed in release (ASan:
 * SEGV in free_tensor) and the others freed the wrong layout. */
static void test_destroy_wrong_kind(void) {
  float w1[216] = {0}, w2[576] = {0}, x[3 * 64] = {0}, y[8];
  dg_context *c;
  dg_graph *g;
  if (!own_small_net(&c, &g, w1, w2))
    return;
  dg_session *s = NULL;
  dg_diagnostic d;
  dg_status st = dg_graph_compile(g, NULL, &s, &d);
  CHECK(st == DG_OK, "compile (%s)", st ? d.message : "ok");
  if (st != DG_OK) {
    dg_graph_destroy(g);
    dg_context_destroy(c);
    return;
  }
  dg_session_destroy((dg_session *)g);
  dg_session_destroy((dg_session *)c);
  dg_graph_destroy((dg_graph *)s);
  dg_graph_destroy((dg_graph *)c);
  dg_context_destroy((dg_context *)g);
  dg_context_destroy((dg_context *)s);
  dg_binding in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  dg_status r = dg_session_run(s, &in, 1, &out, 1, &d);
  CHECK(r == DG_OK && dg_graph_status(g) == DG_OK &&
            dg_graph_node_count(g) > 0 && dg_context_device_count(c) == 1,
        "each destroy given another kind's live object leaves it alone: the "
        "session runs (%s), the graph and the context still answer",
        r ? d.message : "ok");
  dg_session_destroy(s);
  dg_graph_destroy(g);
  dg_context_destroy(c);
  CHECK(!dg_session_plan(s) &&
            dg_graph_status(g) == DG_ERROR_INVALID_ARGUMENT &&
            dg_context_device_count(c) == 0,
        "then each is destroyed by its own destroy");
}

/* A simulator is never chosen as best: with the fake accelerator marked a
 * simulator, the convs it would win stay on the CPU unless the compile
 * options name it (or its kind), and the plan says why. */
static void test_simulator_not_best(int fake) {
  float w1[216] = {0}, w2[576] = {0};
  dg_graph *g = small_net(96, w1, w2);
  ctx->devices.items[fake].info.is_simulator = 1;
  int both[2] = {0, fake};
  const struct {
    const char *what;
    dg_compile_options o;
    int want; /* conv1's device */
  } cases[] = {
      {"every device allowed", {0}, 0},
      {"the device list names it", {.devices = both, .device_count = 2}, fake},
      {"the kinds name its kind",
       {.device_kinds = DG_DEVICE_CPU | DG_DEVICE_NPU},
       fake},
  };
  for (int i = 0; i < 3; i++) {
    dg_session *s = NULL;
    dg_diagnostic d;
    dg_status st = dg_graph_compile(g, &cases[i].o, &s, &d);
    dg_plan_node pn = {0};
    if (st == DG_OK)
      dg_plan_get_node(dg_session_plan(s), 0, &pn);
    CHECK(st == DG_OK && pn.device_index == cases[i].want,
          "a simulator with %s: conv1 on device %d (want %d; %s)",
          cases[i].what, pn.device_index, cases[i].want,
          st ? d.message : pn.reason_text);
    dg_session_destroy(s);
  }
  ctx->devices.items[fake].info.is_simulator = 0;
  dg_session *s = NULL;
  dg_status st = dg_graph_compile(g, NULL, &s, NULL);
  dg_plan_node pn = {0};
  if (st == DG_OK)
    dg_plan_get_node(dg_session_plan(s), 0, &pn);
  CHECK(st == DG_OK && pn.device_index == fake,
        "the same device, not a simulator, wins conv1 by cost (device %d)",
        pn.device_index);
  dg_session_destroy(s);
  dg_graph_destroy(g);
}

int main(void) {
  t_seed(7);
  test_logging();
  /* The CPU only: the placement tests add a fake accelerator and must not
   * see the machine's real GPUs (differential tests cover those). */
  dg_context_options copts = {.device_kinds = DG_DEVICE_CPU};
  if (dg_context_create(&copts, &ctx) != DG_OK) {
    CHECK(0, "context");
    return 1;
  }
  dg_device_info info;
  CHECK(dg_context_device_count(ctx) >= 1 &&
            dg_context_device_info(ctx, 0, &info) == DG_OK &&
            info.kind == DG_DEVICE_CPU && info.ops && info.dtypes,
        "device 0 is the CPU and lists its ops and dtypes (%s, %s)", info.name,
        info.driver);
  CHECK(dg_context_device_info(ctx, 99, &info) == DG_ERROR_NOT_FOUND,
        "device index out of range");
  test_bad_options();
  test_after_destroy();
  test_destroy_wrong_kind();
  test_bindings();
  test_nhwc_and_reuse();
  test_verify_detects();
  test_oneshot();
  int fake = add_fake_device();
  test_placement(fake);
  test_simulator_not_best(fake);
  dg_context_destroy(ctx);
  return t_exit();
}
