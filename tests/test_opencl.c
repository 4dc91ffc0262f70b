/* The OpenCL target: device listing, the program binary cache, allocation
 * failures injected into clCreateBuffer, build-failure diagnostics, the
 * placement rule (a CPU-type OpenCL device or a tiny graph never wins over
 * the native CPU) and per-node profiling. Every op's numerics are covered
 * by test_differential and test_int8_golden, which run on every device. */
#define _POSIX_C_SOURCE 200809L
#include "graph.h"
#include "harness.h"
#include "target/opencl/cl_test.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static float xbuf[1 * 3 * 8 * 8], wbuf[8 * 3 * 3 * 3], bbuf[8],
    fwbuf[10 * 128], fbbuf[10];

/* conv 3x3 + relu, max pool, flatten, fc, softmax on x [1,3,8,8]; pinned
 * to device pin when pin >= 0. */
static dg_graph *small_graph(dg_context *ctx, int pin) {
  dg_graph *g = dg_graph_create(ctx, "small");
  if (pin >= 0)
    dg_graph_set_device(g, pin);
  dg_tensor_desc xd = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, 3, 8, 8}};
  dg_tensor_desc wd = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {8, 3, 3, 3}};
  dg_tensor_desc bd = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {8}};
  dg_tensor_desc fwd = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {10, 128}};
  dg_tensor_desc fbd = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {10}};
  dg_tensor x = dg_graph_input(g, "x", &xd);
  dg_conv2d_params cp = {.padding = DG_PADDING_SAME_UPPER,
                         .activation = DG_ACTIVATION_RELU};
  dg_tensor y = dg_graph_conv2d(g, "conv", x,
                                dg_graph_constant(g, "w", &wd, wbuf, 0),
                                dg_graph_constant(g, "b", &bd, bbuf, 0), &cp);
  dg_pool2d_params pp = {.kernel = {2, 2}, .stride = {2, 2}};
  y = dg_graph_max_pool2d(g, "pool", y, &pp);
  y = dg_graph_flatten(g, "flatten", y, 1);
  y = dg_graph_fully_connected(g, "fc", y,
                               dg_graph_constant(g, "fw", &fwd, fwbuf, 0),
                               dg_graph_constant(g, "fb", &fbd, fbbuf, 0),
                               DG_ACTIVATION_NONE);
  y = dg_graph_softmax(g, "softmax", y, -1);
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  return g;
}

static dg_status run_small(dg_session *s, float *y, dg_diagnostic *d) {
  dg_binding in = {"x", xbuf, sizeof xbuf}, out = {"y", y, 10 * sizeof(float)};
  return dg_session_run(s, &in, 1, &out, 1, d);
}

static float want[10]; /* the CPU's answer */

static bool close_to_cpu(const float *y) {
  for (int i = 0; i < 10; i++)
    if (!(fabsf(y[i] - want[i]) <= 1e-5f))
      return false;
  return true;
}

static int opencl_device(dg_context *ctx) {
  for (int i = 0; i < dg_context_device_count(ctx); i++) {
    dg_device_info in;
    if (dg_context_device_info(ctx, i, &in) == DG_OK &&
        in.kind == DG_DEVICE_OPENCL)
      return i;
  }
  return -1;
}

/* Compiles the small graph strictly on the OpenCL device of a new context
 * and runs it; returns the status of the first failing step. */
static dg_status pinned_run(const dg_context_options *o, dg_diagnostic *d,
                            bool *correct) {
  dg_context *ctx;
  dg_status st = dg_context_create(o, &ctx);
  if (st != DG_OK)
    return st;
  dg_graph *g = small_graph(ctx, opencl_device(ctx));
  dg_compile_options co = {.policy = DG_POLICY_STRICT};
  dg_session *s = NULL;
  st = dg_graph_compile(g, &co, &s, d);
  float y[10] = {0};
  if (st == DG_OK)
    st = run_small(s, y, d);
  if (correct)
    *correct = st == DG_OK && close_to_cpu(y);
  dg_session_destroy(s);
  dg_graph_destroy(g);
  dg_context_destroy(ctx);
  return st;
}

static void test_listing(dg_context *ctx, int dev) {
  dg_device_info in;
  dg_context_device_info(ctx, dev, &in);
  printf("# device %d: %s | %s\n", dev, in.name, in.driver);
  CHECK(in.kind == DG_DEVICE_OPENCL && in.name[0] && in.index == dev,
        "device listing: kind, name and index");
  CHECK(strstr(in.driver, "OpenCL C") && strstr(in.driver, "CU") &&
            strstr(in.driver, "KiB local"),
        "device listing: driver names OpenCL C version, compute units and "
        "local memory (%s)", in.driver);
  unsigned want_t = 1u << DG_DTYPE_F32 | 1u << DG_DTYPE_F16 |
                    1u << DG_DTYPE_I8 | 1u << DG_DTYPE_U8;
  uint64_t want_ops = 1ull << DG_OP_CONV2D | 1ull << DG_OP_QCONV2D |
                      1ull << DG_OP_SOFTMAX | 1ull << DG_OP_CONCAT;
  CHECK((in.dtypes & want_t) == want_t && (in.ops & want_ops) == want_ops &&
            !in.is_simulator && in.int8_max_lsb_deviation == 0,
        "device listing: dtypes, ops, not a simulator, int8 bit-exact");
}

static void test_placement(dg_context *ctx, int dev) {
  dg_graph *g = small_graph(ctx, -1);
  dg_session *s = NULL;
  dg_status st = dg_graph_compile(g, NULL, &s, NULL);
  bool on_cpu = st == DG_OK;
  const dg_plan *p = dg_session_plan(s);
  for (int i = 0; on_cpu && i < dg_plan_node_count(p); i++) {
    dg_plan_node pn;
    dg_plan_get_node(p, i, &pn);
    on_cpu = pn.device_kind == DG_DEVICE_CPU;
  }
  dg_device_info in;
  dg_context_device_info(ctx, dev, &in);
  bool cpu_type = strstr(in.driver, ", cpu") != NULL;
  if (cpu_type)
    CHECK(on_cpu, "auto placement keeps a small graph off the CPU-type "
                  "OpenCL device");
  else
    CHECK(on_cpu, "auto placement keeps a tiny graph on the CPU");
  if (st == DG_OK)
    run_small(s, want, NULL);
  dg_session_destroy(s);
  dg_graph_destroy(g);

  g = small_graph(ctx, dev);
  dg_compile_options co = {.policy = DG_POLICY_STRICT};
  st = dg_graph_compile(g, &co, &s, NULL);
  bool pinned = st == DG_OK;
  p = dg_session_plan(s);
  for (int i = 0; pinned && i < dg_plan_node_count(p); i++) {
    dg_plan_node pn;
    dg_plan_get_node(p, i, &pn);
    pinned = pn.device_index == dev && pn.reason == DG_REASON_PINNED;
  }
  CHECK(pinned, "pinned under STRICT: every node runs on the OpenCL device");
  float y[10];
  st = pinned ? run_small(s, y, NULL) : DG_ERROR_DEVICE;
  CHECK(st == DG_OK && close_to_cpu(y), "pinned run matches the CPU");
  /* Profiling: every node has a measured time. */
  int timed = 0, kernels = 0;
  for (int i = 0; st == DG_OK && i < dg_plan_node_count(p); i++) {
    dg_plan_node pn;
    dg_plan_get_node(p, i, &pn);
    kernels++;
    timed += pn.measured_us > 0;
  }
  CHECK(st == DG_OK && timed == kernels,
        "per-node times from profiling events (%d of %d nodes timed)", timed,
        kernels);
  dg_session_destroy(s);
  dg_graph_destroy(g);
}

static void test_cache(const char *top) {
  char path[4200], dir[4200];
  /* A directory no context has used yet (and that does not exist). */
  snprintf(dir, sizeof dir, "%s/cache", top);
  dg_opencl_stats a, b;
  setenv("DG_CACHE_DIR", dir, 1);
  dg_context_options o = {0};
  bool ok;

  dg_opencl_get_stats(&a);
  dg_status st = pinned_run(&o, NULL, &ok);
  dg_opencl_get_stats(&b);
  CHECK(st == DG_OK && ok && b.source_builds == a.source_builds + 1 &&
            b.cache_writes == a.cache_writes + 1,
        "cache: first context builds from source and writes the cache");

  dg_context *ctx;
  dg_context_create(&o, &ctx);
  int have = dg_opencl_cache_path(ctx, opencl_device(ctx), path, sizeof path);
  dg_context_destroy(ctx);
  CHECK(have && access(path, R_OK) == 0, "cache: file %s exists",
        have ? path : "(none)");

  dg_opencl_get_stats(&a);
  st = pinned_run(&o, NULL, &ok);
  dg_opencl_get_stats(&b);
  CHECK(st == DG_OK && ok && b.cache_loads == a.cache_loads + 1 &&
            b.source_builds == a.source_builds,
        "cache: second context loads the program from the cache");

  /* Damage the binary: the entry must be rejected and rebuilt. */
  FILE *f = fopen(path, "r+b");
  if (f) {
    fseek(f, 40, SEEK_SET);
    fputs("corrupted corrupted", f);
    fclose(f);
  }
  dg_opencl_get_stats(&a);
  st = pinned_run(&o, NULL, &ok);
  dg_opencl_get_stats(&b);
  CHECK(f && st == DG_OK && ok && b.cache_rejects > a.cache_rejects &&
            b.source_builds == a.source_builds + 1 &&
            b.cache_writes == a.cache_writes + 1,
        "cache: a corrupted entry is ignored, rebuilt and rewritten");

  /* A truncated (foreign-sized) entry too. */
  f = fopen(path, "wb");
  if (f) {
    fputs("DGCLPRG1", f);
    fclose(f);
  }
  dg_opencl_get_stats(&a);
  st = pinned_run(&o, NULL, &ok);
  dg_opencl_get_stats(&b);
  CHECK(st == DG_OK && ok && b.cache_rejects > a.cache_rejects &&
            b.source_builds == a.source_builds + 1,
        "cache: a truncated entry is ignored and rebuilt");

  dg_opencl_get_stats(&a);
  o.disable_cache = 1;
  st = pinned_run(&o, NULL, &ok);
  dg_opencl_get_stats(&b);
  CHECK(st == DG_OK && ok && b.cache_loads == a.cache_loads &&
            b.cache_writes == a.cache_writes &&
            b.source_builds == a.source_builds + 1,
        "cache: disable_cache neither reads nor writes the cache");
  if (have)
    remove(path);
  rmdir(dir);
}

static void test_alloc_failures(void) {
  dg_opencl_stats base, now;
  dg_opencl_get_stats(&base);
  dg_context_options o = {0};
  int failures = 0, bad = 0, n;
  char msg[200] = "";
  for (n = 1; n < 200; n++) {
    char v[16];
    snprintf(v, sizeof v, "%d", n);
    setenv("DG_TEST_OPENCL_FAIL_ALLOC", v, 1);
    dg_diagnostic d;
    bool ok;
    dg_status st = pinned_run(&o, &d, &ok);
    dg_opencl_get_stats(&now);
    if (now.buffers != base.buffers) {
      bad++;
      snprintf(msg, sizeof msg, "N=%d: %d buffers leaked", n,
               now.buffers - base.buffers);
    }
    if (st == DG_OK) {
      if (!ok) {
        bad++;
        snprintf(msg, sizeof msg, "N=%d: wrong result", n);
      }
      break; /* past the last buffer: nothing left to fail */
    }
    failures++;
    /* The session keeps the status; the message may be its own. */
    if (st != DG_ERROR_OUT_OF_MEMORY || d.status != DG_ERROR_OUT_OF_MEMORY) {
      bad++;
      snprintf(msg, sizeof msg, "N=%d: %s: %.120s", n, dg_status_string(st),
               d.message);
    }
  }
  unsetenv("DG_TEST_OPENCL_FAIL_ALLOC");
  CHECK(failures > 5 && !bad,
        "allocation failures: each of %d injected clCreateBuffer failures "
        "fails compile with out of memory, no buffer leaked%s%s",
        failures, msg[0] ? "; " : "", msg);
}

static void test_build_failure(void) {
  setenv("DG_TEST_OPENCL_BROKEN_SOURCE", "1", 1);
  dg_context_options o = {.disable_cache = 1};
  dg_diagnostic d = {0};
  dg_status st = pinned_run(&o, &d, NULL);
  unsetenv("DG_TEST_OPENCL_BROKEN_SOURCE");
  CHECK(st == DG_ERROR_DEVICE && strstr(d.message, "clBuildProgram") &&
            strstr(d.message, "undeclared_name"),
        "build failure: DG_ERROR_DEVICE with the build log (%.160s)",
        d.message);
  /* The device recovers: the next context builds the good source. */
  bool ok;
  st = pinned_run(&o, NULL, &ok);
  CHECK(st == DG_OK && ok, "after a build failure, a good build works");
}

int main(void) {
  t_seed(4);
  for (size_t i = 0; i < sizeof xbuf / 4; i++)
    xbuf[i] = t_uniform(-1, 1);
  for (size_t i = 0; i < sizeof wbuf / 4; i++)
    wbuf[i] = t_uniform(-0.5f, 0.5f);
  for (size_t i = 0; i < sizeof bbuf / 4; i++)
    bbuf[i] = t_uniform(-0.1f, 0.1f);
  for (size_t i = 0; i < sizeof fwbuf / 4; i++)
    fwbuf[i] = t_uniform(-0.2f, 0.2f);
  for (size_t i = 0; i < sizeof fbbuf / 4; i++)
    fbbuf[i] = t_uniform(-0.1f, 0.1f);
  char dir[] = "/tmp/dg-opencl-test-XXXXXX";
  if (!mkdtemp(dir)) {
    CHECK(0, "temporary cache directory");
    return 1;
  }
  setenv("DG_CACHE_DIR", dir, 1);
  dg_context *ctx;
  if (dg_context_create(NULL, &ctx) != DG_OK) {
    CHECK(0, "context");
    return 1;
  }
  int dev = opencl_device(ctx);
  if (dev < 0) {
    t_skip("no OpenCL device");
    dg_context_destroy(ctx);
    rmdir(dir);
    return 0;
  }
  test_listing(ctx, dev);
  test_placement(ctx, dev);
  dg_context_destroy(ctx);
  test_cache(dir);
  test_alloc_failures();
  test_build_failure();
  rmdir(dir);
  return t_exit();
}
