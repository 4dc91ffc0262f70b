/* The OpenCL target: device listing, the program binary cache, allocation
 * failures injected into clCreateBuffer, build-failure diagnostics, the
 * placement rule (a CPU-type OpenCL device or a tiny graph never wins over
 * the native CPU) and per-node profiling. Every op's numerics are covered
 * by test_differential and test_int8_golden, which run on every device. */
#define _POSIX_C_SOURCE 200809L
#include "graph.h"
#include "harness.h"
#include "runtime/internal.h" /* the context's devices */
#include "slow_graph.h"
#include "targets/opencl/cl_test.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static float xbuf[1 * 3 * 8 * 8], wbuf[8 * 3 * 3 * 3], bbuf[8], fwbuf[10 * 128],
    fbbuf[10];

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
  dg_tensor y =
      dg_graph_conv2d(g, "conv", x, dg_graph_constant(g, "w", &wd, wbuf, 0),
                      dg_graph_constant(g, "b", &bd, bbuf, 0), &cp);
  dg_pool2d_params pp = {.kernel = {2, 2}, .stride = {2, 2}};
  y = dg_graph_max_pool2d(g, "pool", y, &pp);
  y = dg_graph_flatten(g, "flatten", y, 1);
  y = dg_graph_fully_connected(
      g, "fc", y, dg_graph_constant(g, "fw", &fwd, fwbuf, 0),
      dg_graph_constant(g, "fb", &fbd, fbbuf, 0), DG_ACTIVATION_NONE);
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
        "local memory (%s)",
        in.driver);
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
  dg_opencl_stats before, after;
  dg_cl_get_stats(&before);
  st = dg_graph_compile(g, &co, &s, NULL);
  dg_cl_get_stats(&after);
  if (cpu_type) /* PoCL shares the host's memory */
    CHECK(st == DG_OK && after.host_buffers > before.host_buffers,
          "a device sharing memory with the host gets host-accessible "
          "buffers (%d made)",
          after.host_buffers - before.host_buffers);
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

  dg_cl_get_stats(&a);
  dg_status st = pinned_run(&o, NULL, &ok);
  dg_cl_get_stats(&b);
  CHECK(st == DG_OK && ok && b.source_builds == a.source_builds + 1 &&
            b.cache_writes == a.cache_writes + 1,
        "cache: first context builds from source and writes the cache");

  dg_context *ctx;
  dg_context_create(&o, &ctx);
  int cl = opencl_device(ctx);
  int have =
      cl >= 0 && dg_cl_cache_path(&ctx->devices.items[cl], path, sizeof path);
  dg_context_destroy(ctx);
  CHECK(have && access(path, R_OK) == 0, "cache: file %s exists",
        have ? path : "(none)");

  dg_cl_get_stats(&a);
  st = pinned_run(&o, NULL, &ok);
  dg_cl_get_stats(&b);
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
  dg_cl_get_stats(&a);
  st = pinned_run(&o, NULL, &ok);
  dg_cl_get_stats(&b);
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
  dg_cl_get_stats(&a);
  st = pinned_run(&o, NULL, &ok);
  dg_cl_get_stats(&b);
  CHECK(st == DG_OK && ok && b.cache_rejects > a.cache_rejects &&
            b.source_builds == a.source_builds + 1,
        "cache: a truncated entry is ignored and rebuilt");

  /* The cache is a security boundary (src/core/cache_file.h): a FIFO in
   * place of the entry is refused at once (it blocked context creation),
   * and a directory others can write is neither read nor written. */
  remove(path);
  int fifo = mkfifo(path, 0600);
  dg_cl_get_stats(&a);
  st = pinned_run(&o, NULL, &ok);
  dg_cl_get_stats(&b);
  CHECK(fifo == 0 && st == DG_OK && ok && b.cache_rejects > a.cache_rejects &&
            b.source_builds == a.source_builds + 1,
        "cache: a FIFO in place of the entry is refused without blocking, "
        "and the program rebuilt");
  remove(path);
  char cdir[4200];
  snprintf(cdir, sizeof cdir, "%s", path);
  char *slash = strrchr(cdir, '/');
  if (slash)
    *slash = 0;
  st = pinned_run(&o, NULL, &ok); /* a good entry again */
  int opened = chmod(cdir, 0777);
  dg_cl_get_stats(&a);
  st = pinned_run(&o, NULL, &ok);
  dg_cl_get_stats(&b);
  CHECK(opened == 0 && st == DG_OK && ok && b.cache_loads == a.cache_loads &&
            b.cache_writes == a.cache_writes &&
            b.source_builds == a.source_builds + 1,
        "cache: in a world-writable directory the entry is not loaded and "
        "nothing is written");
  chmod(cdir, 0700);

  dg_cl_get_stats(&a);
  o.disable_cache = 1;
  st = pinned_run(&o, NULL, &ok);
  dg_cl_get_stats(&b);
  CHECK(st == DG_OK && ok && b.cache_loads == a.cache_loads &&
            b.cache_writes == a.cache_writes &&
            b.source_builds == a.source_builds + 1,
        "cache: disable_cache neither reads nor writes the cache");
  if (have)
    remove(path);
  rmdir(dir);
}

/* dg_context_options.device_timeout_ms bounds the wait for the queue: a
 * run far longer than 1 ms fails naming the option; the device is then
 * not used again (OpenCL cannot cancel what is queued): the next run
 * fails saying so, and placement declines it with the reason. The work
 * left queued never touches the caller's buffers: the input is freed
 * at once (ASan would see a late read) and the output, marked, is still
 * marked once the device has finished everything; and destroying the
 * session does not wait for that work (cl_device.c's destroy does not
 * either: OpenCL deletes objects once their commands end). */
static void test_timeout(void) {
  dg_context_options o = {.device_timeout_ms = 1,
                          .device_kinds = DG_DEVICE_OPENCL};
  dg_context *c = NULL;
  int dev = dg_context_create(&o, &c) == DG_OK ? opencl_device(c) : -1;
  if (dev < 0) {
    dg_context_destroy(c);
    return;
  }
  dg_device_info info;
  dg_context_device_info(c, dev, &info);
  slow_graph sg = slow_graph_make(c, strstr(info.driver, ", cpu") != NULL);
  dg_session *s = NULL;
  dg_diagnostic diag = {0};
  dg_status st = slow_graph_run(&sg, dev, &s, &diag);
  CHECK(st == DG_ERROR_DEVICE && strstr(diag.message, "device_timeout_ms"),
        "device_timeout_ms = 1: a long run fails naming the option (%s)",
        diag.message);
  slow_graph_after_error(&sg);
  float x[1] = {0};
  dg_binding in = {"x", x, sg.bytes}, out = {"y", sg.y, sg.bytes};
  st = s ? dg_session_run(s, &in, 1, &out, 1, &diag) : DG_OK;
  CHECK(st == DG_ERROR_DEVICE && strstr(diag.message, "earlier run"),
        "after a time-out the device refuses to run again (%s)", diag.message);
  double t0 = slow_graph_now_ms();
  dg_session_destroy(s);
  double ms = slow_graph_now_ms() - t0;
  CHECK(ms < 1000,
        "destroying the session does not wait for its queued work (%.1f ms)",
        ms);
  CHECK(dg_cl_test_finish(&c->devices.items[dev]) &&
            slow_graph_output_marked(&sg),
        "the timed-out run's work, once finished, left the caller's output "
        "alone");
  dg_session *s2 = NULL;
  dg_compile_options co = {.devices = &dev, .device_count = 1};
  st = dg_graph_compile(sg.g, &co, &s2, &diag);
  CHECK(st == DG_ERROR_UNSUPPORTED && strstr(diag.message, "timed out"),
        "and placement declines it, saying why (%s)", diag.message);
  dg_session_destroy(s2);
  slow_graph_free(&sg);
  dg_context_destroy(c);
}

static void test_alloc_failures(void) {
  dg_opencl_stats base, now;
  dg_cl_get_stats(&base);
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
    dg_cl_get_stats(&now);
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

/* ---- GEMM and convolution kernels of GPU-type devices ------------------
 * DG_TEST_OPENCL_GPU_KERNELS=1 makes a CPU-type device (PoCL) choose the
 * kernels a GPU runs: the large-tile GEMMs (each of 128x128, 64x128 and
 * 64x64 by shape), their vector and scalar edge paths, the GEMV of GEMMs
 * under 16 rows, and the implicit GEMM convolution, checked against the CPU
 * device. Values are multiples of 1/64 so that f16 inputs are exact. */

static uint16_t to_f16(float f) { /* exact for the values used here */
  if (f == 0)
    return 0;
  uint16_t sign = f < 0 ? 0x8000 : 0;
  int e;
  float m = frexpf(fabsf(f), &e); /* [0.5, 1) * 2^e */
  return (uint16_t)(sign | (uint16_t)((e + 14) << 10) |
                    (uint16_t)((int)(m * 2048.0f) - 1024));
}

static float from_f16(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  float v = e ? ldexpf((float)(m | 1024), e - 25) : ldexpf((float)m, -24);
  return h & 0x8000 ? -v : v;
}

typedef struct gk_case {
  int op; /* 0 matmul, 1 fully_connected, 2 conv2d, 3 conv2d + a residual
             input "r", then relu: fused into the conv */
  bool f16;
  int ar, ad[4], br, bd[4]; /* matmul a, b; fc x, w; conv x, w */
  dg_conv2d_params cp;
  dg_activation act;
  dg_unary_fn post; /* convs: then this function, fused into the conv */
} gk_case;

static float *gk_data(size_t n) {
  float *v = malloc(n * sizeof(float));
  for (size_t i = 0; v && i < n; i++)
    v[i] = (float)t_range(-64, 64) / 64.0f;
  return v;
}

static size_t gk_count(int r, const int *d) {
  size_t n = 1;
  for (int i = 0; i < r; i++)
    n *= (size_t)d[i];
  return n;
}

/* Runs the case on device dev; y receives the output as f32. */
static dg_status gk_run(dg_context *ctx, int dev, const gk_case *c,
                        const float *a, const float *b, const float *bias,
                        float **y, size_t *yn) {
  dg_dtype dt = c->f16 ? DG_DTYPE_F16 : DG_DTYPE_F32;
  size_t es = c->f16 ? 2 : 4, an = gk_count(c->ar, c->ad),
         bn = gk_count(c->br, c->bd);
  size_t biasn = (size_t)c->bd[0];
  void *ah = malloc(an * es), *bh = malloc(bn * es), *ch = malloc(biasn * es);
  for (size_t i = 0; i < an; i++)
    c->f16 ? (void)(((uint16_t *)ah)[i] = to_f16(a[i]))
           : (void)(((float *)ah)[i] = a[i]);
  for (size_t i = 0; i < bn; i++)
    c->f16 ? (void)(((uint16_t *)bh)[i] = to_f16(b[i]))
           : (void)(((float *)bh)[i] = b[i]);
  for (size_t i = 0; i < biasn; i++)
    c->f16 ? (void)(((uint16_t *)ch)[i] = to_f16(bias[i]))
           : (void)(((float *)ch)[i] = bias[i]);
  dg_graph *g = dg_graph_create(ctx, "gk");
  dg_graph_set_device(g, dev);
  dg_tensor_desc adesc = {.dtype = dt, .rank = c->ar},
                 bdesc = {.dtype = dt, .rank = c->br};
  for (int i = 0; i < c->ar; i++)
    adesc.dims[i] = c->ad[i];
  for (int i = 0; i < c->br; i++)
    bdesc.dims[i] = c->bd[i];
  dg_tensor_desc cdesc = {.dtype = dt, .rank = 1, .dims = {(int64_t)biasn}};
  dg_tensor at = dg_graph_input(g, "a", &adesc), out;
  if (c->op == 0) {
    out = dg_graph_matmul(g, "mm", at, dg_graph_input(g, "b", &bdesc));
  } else if (c->op == 1) {
    out = dg_graph_fully_connected(
        g, "fc", at, dg_graph_constant(g, "w", &bdesc, bh, 0),
        dg_graph_constant(g, "c", &cdesc, ch, 0), c->act);
  } else {
    out =
        dg_graph_conv2d(g, "conv", at, dg_graph_constant(g, "w", &bdesc, bh, 0),
                        dg_graph_constant(g, "c", &cdesc, ch, 0), &c->cp);
  }
  /* op 3: r [i] = a fixed pattern of multiples of 1/64 (exact in f16) */
  dg_tensor_desc rdesc = {0};
  dg_graph_tensor_desc(g, out, &rdesc);
  size_t rn = c->op == 3 ? dg_desc_elements(&rdesc) : 0;
  void *rh = malloc(rn * es + 1);
  for (size_t i = 0; i < rn; i++) {
    float v = (float)((int)(i * 37 % 129) - 64) / 64.0f;
    c->f16 ? (void)(((uint16_t *)rh)[i] = to_f16(v))
           : (void)(((float *)rh)[i] = v);
  }
  if (c->op == 3)
    out = dg_graph_relu(
        g, "relu", dg_graph_add(g, "add", out, dg_graph_input(g, "r", &rdesc)));
  if (c->post)
    out = dg_graph_unary(g, "post", c->post, out, 0, 0);
  dg_graph_output(g, "y", out, DG_LAYOUT_NCHW);
  dg_compile_options co = {.policy = DG_POLICY_STRICT};
  dg_session *s = NULL;
  dg_status st = dg_graph_compile(g, &co, &s, NULL);
  *y = NULL;
  if (st == DG_OK && (c->op == 3 || c->post)) {
    const dg_plan *pl = dg_session_plan(s);
    dg_plan_node pn = {0};
    dg_plan_get_node(pl, 0, &pn);
    char want[64];
    snprintf(want, sizeof want, "conv%s%s", c->op == 3 ? "+add+relu" : "",
             c->post ? "+post" : "");
    CHECK(dg_plan_node_count(pl) == 1 && !strcmp(pn.node_name, want),
          "%s on device %d: one fused node \"%s\" (%d nodes, the first "
          "\"%s\")",
          c->op == 3 ? "conv + residual + relu" : "conv + unary", dev, want,
          dg_plan_node_count(pl), pn.node_name);
  }
  if (st == DG_OK) {
    dg_io_info yi;
    dg_session_output_info(s, 0, &yi);
    *yn = 1;
    for (int i = 0; i < yi.desc.rank; i++)
      *yn *= (size_t)yi.desc.dims[i];
    void *yh = malloc(*yn * es);
    dg_binding in[2] = {{"a", ah, an * es}, {"b", bh, bn * es}};
    if (c->op == 3)
      in[1] = (dg_binding){"r", rh, rn * es};
    dg_binding ob = {"y", yh, *yn * es};
    st = dg_session_run(s, in, c->op == 0 || c->op == 3 ? 2 : 1, &ob, 1, NULL);
    *y = malloc(*yn * sizeof(float));
    for (size_t i = 0; i < *yn; i++)
      (*y)[i] = c->f16 ? from_f16(((uint16_t *)yh)[i]) : ((float *)yh)[i];
    free(yh);
  }
  dg_session_destroy(s);
  dg_graph_destroy(g);
  free(ah), free(bh), free(ch), free(rh);
  return st;
}

static void test_gpu_kernels(dg_context *ctx, int dev, const char *mode) {
  setenv("DG_TEST_OPENCL_GPU_KERNELS", mode, 1);
  const dg_conv2d_params same = {.padding = DG_PADDING_SAME_UPPER,
                                 .activation = DG_ACTIVATION_RELU};
  const gk_case cases[] = {
      /* 128x128, edges */
      {0, 0, 2, {200, 37}, 2, {37, 300}, {.groups = 0}, 0, 0},
      {0, 0, 2, {256, 64}, 2, {64, 256}, {.groups = 0}, 0, 0}, /* all vector */
      {0, 0, 2, {50, 64}, 2, {64, 300}, {.groups = 0}, 0, 0},  /* 64x128 */
      {0, 0, 2, {40, 20}, 2, {20, 100}, {.groups = 0}, 0, 0},  /* 64x64 */
      {0, 0, 3, {3, 130, 33}, 3, {3, 33, 129}, {.groups = 0}, 0, 0}, /* batch */
      /* broadcast b */
      {0, 0, 3, {2, 70, 48}, 2, {48, 132}, {.groups = 0}, 0, 0},
      {0, 1, 2, {70, 40}, 2, {40, 90}, {.groups = 0}, 0, 0}, /* f16 storage */
      {1, 0, 2, {100, 64}, 2, {200, 64}, {.groups = 0}, DG_ACTIVATION_RELU, 0},
      {1, 0, 2, {33, 19}, 2, {70, 19}, {.groups = 0}, DG_ACTIVATION_NONE, 0},
      /* under 16 rows: the GEMV, batch 1, f16 storage, a batched matmul */
      {1, 0, 2, {1, 300}, 2, {70, 300}, {.groups = 0}, DG_ACTIVATION_RELU, 0},
      {1, 1, 2, {2, 130}, 2, {33, 130}, {.groups = 0}, DG_ACTIVATION_NONE, 0},
      {0, 0, 3, {2, 3, 90}, 3, {2, 90, 17}, {.groups = 0}, 0, 0},
      {2, 0, 4, {2, 16, 12, 12}, 4, {40, 16, 3, 3}, same, 0, 0},
      {2,
       0,
       4,
       {2, 8, 11, 13},
       4,
       {130, 8, 3, 3},
       {.stride = {2, 2}, .pads = {1, 0, 1, 2}},
       0,
       0},
      {2,
       0,
       4,
       {1, 12, 10, 10},
       4,
       {72, 4, 3, 3},
       {.dilation = {2, 2},
        .padding = DG_PADDING_SAME_LOWER,
        .groups = 3,
        .activation = DG_ACTIVATION_RELU6},
       0,
       0},
      {2, 0, 4, {4, 32, 7, 7}, 4, {128, 32, 3, 3}, same, 0, 0},
      {2,
       0,
       4,
       {2, 16, 8, 8},
       4,
       {64, 16, 1, 1},
       {.padding = DG_PADDING_VALID},
       0,
       0},
      {2, 1, 4, {2, 8, 9, 9}, 4, {32, 8, 3, 3}, same, 0, 0},
      /* a fused residual: the big tiles, under 16 rows (one item per
       * output), depthwise (the direct conv), f16 */
      {3,
       0,
       4,
       {2, 16, 12, 12},
       4,
       {40, 16, 3, 3},
       {.pads = {1, 1, 1, 1}},
       0,
       0},
      {3, 0, 4, {1, 24, 9, 9}, 4, {8, 24, 1, 1}, {.groups = 0}, 0, 0},
      {3, 0, 4, {2, 6, 10, 10}, 4, {6, 1, 3, 3}, {.groups = 6}, 0, 0},
      {3, 1, 4, {2, 8, 9, 9}, 4, {32, 8, 3, 3}, {.pads = {1, 1, 1, 1}}, 0, 0},
      /* a fused unary function: the same four paths, and after a
       * residual */
      {2, 0, 4, {2, 16, 12, 12}, 4, {40, 16, 3, 3}, same, 0, DG_UNARY_SILU},
      {2,
       0,
       4,
       {1, 24, 9, 9},
       4,
       {8, 24, 1, 1},
       {.groups = 0},
       0,
       DG_UNARY_HARD_SWISH},
      {2,
       0,
       4,
       {2, 6, 10, 10},
       4,
       {6, 1, 3, 3},
       {.groups = 6},
       0,
       DG_UNARY_GELU},
      {2, 1, 4, {2, 8, 9, 9}, 4, {32, 8, 3, 3}, same, 0, DG_UNARY_SIGMOID},
      {3,
       0,
       4,
       {2, 16, 12, 12},
       4,
       {40, 16, 3, 3},
       {.pads = {1, 1, 1, 1}},
       0,
       DG_UNARY_TANH},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const gk_case *c = &cases[i];
    float *a = gk_data(gk_count(c->ar, c->ad));
    float *b = gk_data(gk_count(c->br, c->bd));
    float *bias = gk_data((size_t)c->bd[0]);
    float *want_y = NULL, *got = NULL;
    size_t wn = 0, gn = 0;
    dg_status sw = gk_run(ctx, 0, c, a, b, bias, &want_y, &wn);
    dg_status sg = gk_run(ctx, dev, c, a, b, bias, &got, &gn);
    double worst = 0;
    bool ok = sw == DG_OK && sg == DG_OK && wn == gn && wn > 0;
    for (size_t k = 0; ok && k < wn; k++) {
      double e = fabs((double)got[k] - want_y[k]) / (1 + fabs(want_y[k]));
      worst = e > worst ? e : worst;
    }
    ok = ok && worst <= (c->f16 ? 2e-3 : 1e-5);
    CHECK(ok,
          "GPU kernels on the OpenCL device match the CPU: case %zu "
          "(%s%s%s), worst relative error %.3g",
          i,
          c->op == 0   ? "matmul"
          : c->op == 1 ? "fully_connected"
          : c->op == 2 ? "conv2d"
                       : "conv2d + residual",
          c->post ? " + unary" : "", c->f16 ? " f16" : "", worst);
    free(a), free(b), free(bias), free(want_y), free(got);
  }
  unsetenv("DG_TEST_OPENCL_GPU_KERNELS");
}

/* The same cases with every f32 GEMM and conv on the 64x64 tiles split
 * in 3 slices of K (gemm_f32's partials, gemm_splitk_f32's sum): what
 * batch-1 layers take on a GPU. */
static void test_gpu_kernels_split(dg_context *ctx, int dev) {
  printf("# GPU kernels, split over K\n");
  test_gpu_kernels(ctx, dev, "splitk");
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
  test_gpu_kernels(ctx, dev, "1");
  test_gpu_kernels_split(ctx, dev);
  dg_opencl_stats stats;
  dg_cl_get_stats(&stats);
  CHECK(stats.estimate_mismatches == 0,
        "cost model: every node compiled above (CPU-type and GPU kernels) "
        "runs the kernel its estimate priced (%d differ)",
        stats.estimate_mismatches);
  dg_context_destroy(ctx);
  test_cache(dir);
  test_alloc_failures();
  test_build_failure();
  test_timeout();
  rmdir(dir);
  return t_exit();
}
