/* The rocket and rknpu backends end to end on a fake kernel
 * (tests/npu/fake_npu.c, preloaded: this program re-executes itself with
 * LD_PRELOAD set): discovery, struct layouts, the ioctl sequence, CPU
 * access bracketing; the conv matrix against the CPU within 1 LSB; an
 * injected driver error and a timeout become clear device errors with
 * nothing leaked; a job addressing memory outside its buffers is rejected
 * before it reaches the kernel. */
#define _GNU_SOURCE
#include "exec_wrapper.h"
#include "test_npu_conv.h"
#include "test_npu_poolcase.h"

#include "targets/npu/backend.h"
#include "targets/npu/gen.h"
#include "targets/npu/gen_ppu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;
static void (*stats_fn)(int out[12], char *fault, size_t n);

static void check(int ok, const char *what) {
  printf("%s - %s\n", ok ? "ok" : "FAIL", what);
  failures += !ok;
}

/* Re-executes with the fake kernel preloaded (ASan wants to be first in
 * the list; the fake module is not instrumented, so that check is off). */
static void preload(char **argv) {
  if (getenv("DG_FAKE_NPU_LOADED"))
    return;
  const char *old = getenv("LD_PRELOAD");
  char pre[2048], asan[1024];
  snprintf(pre, sizeof pre, "%s%s%s", DG_FAKE_NPU, old ? ":" : "",
           old ? old : "");
  const char *ao = getenv("ASAN_OPTIONS");
  snprintf(asan, sizeof asan, "%s%sverify_asan_link_order=0", ao ? ao : "",
           ao ? ":" : "");
  setenv("LD_PRELOAD", pre, 1);
  setenv("ASAN_OPTIONS", asan, 1);
  setenv("DG_FAKE_NPU_LOADED", "1", 1);
  /* The program's own path, not /proc/self/exe, for an exe wrapper (an
   * emulator) to run; where readlink fails, /proc/self/exe still does
   * without one. */
  static char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0)
    self[n] = 0;
  else
    strcpy(self, "/proc/self/exe");
  t_execv(self, argv);
  perror("execv");
  exit(1);
}

/* Nothing of the fake kernel left: files, BOs, mappings; no bracket
 * violation and no BO left for close() to free. */
static int clean(const char *label) {
  int s[12];
  stats_fn(s, NULL, 0);
  if (s[0] || s[1] || s[2] || s[3] || s[4])
    printf("# %s: %d files, %d BOs, %d mappings open; %d bracket "
           "violations; %d BOs freed by close\n",
           label, s[0], s[1], s[2], s[3], s[4]);
  return !s[0] && !s[1] && !s[2] && !s[3] && !s[4];
}

static dg_context *open_ctx(const char *spec, int *npu, dg_device_info *info) {
  setenv("DG_NPU_DEVICE", spec, 1);
  dg_context *ctx = NULL;
  dg_context_options o = {.disable_cache = 1, .cpu_threads = 1};
  *npu = -1;
  if (dg_context_create(&o, &ctx) != DG_OK)
    return NULL;
  *npu = npu_device_index(ctx);
  memset(info, 0, sizeof *info);
  if (*npu >= 0)
    dg_context_device_info(ctx, *npu, info);
  return ctx;
}

static void backend_matrix(const char *spec, const char *driver, int tiled) {
  int npu;
  dg_device_info info;
  dg_context *ctx = open_ctx(spec, &npu, &info);
  char what[320];
  printf("# DG_NPU_DEVICE=%s: device %d, %s, driver %s\n", spec, npu, info.name,
         info.driver);
  snprintf(what, sizeof what, "%s: DG_NPU_DEVICE=%s finds the fake %s node",
           driver, spec, driver);
  check(npu >= 0 && strstr(info.driver, driver) && !info.is_simulator, what);
  if (npu >= 0) {
    int s0[12], s1[12];
    stats_fn(s0, NULL, 0);
    snprintf(what, sizeof what, "%s matrix", driver);
    int bad = npu_matrix_run(ctx, npu, what, 1);
    stats_fn(s1, NULL, 0);
    snprintf(what, sizeof what,
             "%s: conv matrix through the fake kernel (%d jobs) within 1 LSB "
             "of the CPU",
             driver, s1[5] - s0[5]);
    check(bad == 0 && s1[5] > s0[5], what);
    if (tiled) {
      stats_fn(s0, NULL, 0);
      snprintf(what, sizeof what, "%s tiled", driver);
      bad = npu_tiled_run(ctx, npu, what, 1);
      snprintf(what, sizeof what, "%s fc", driver);
      bad += npu_fc_run(ctx, npu, what, 1);
      snprintf(what, sizeof what, "%s f16 tiled", driver);
      bad += npu_f16_tiled_run(ctx, npu, what, 1);
      snprintf(what, sizeof what, "%s chain", driver);
      bad += npu_chain_run(ctx, npu, what, 1);
      stats_fn(s1, NULL, 0);
      snprintf(what, sizeof what,
               "%s: tiled convs (rows, channels, per-channel, batch 2), "
               "fc/matmul as 1x1 convs, tiled f16 convs and a conv chain "
               "handing cubes over through the fake "
               "kernel (%d jobs, %d row slices keeping their weights in the "
               "CBUF) within 1 LSB / the f16 limits of the CPU",
               driver, s1[5] - s0[5], s1[11] - s0[11]);
      check(bad == 0 && s1[5] > s0[5] && s1[11] > s0[11], what);
    }
    /* fp16: a 3x3 conv with bias and relu; a 5x5 one whose weights
     * (64 -> 130 channels) need two tasks, batch 2: its two tasks chained
     * in one job per image, so 2 jobs, 4 tasks (interrupts). */
    npu_f16_case f[2] = {{.N = 1,
                          .C = 16,
                          .O = 24,
                          .H = 9,
                          .W = 9,
                          .K = 3,
                          .S = 1,
                          .same = 1,
                          .bias = 1,
                          .act = 1,
                          .seed = 3},
                         {.N = 2,
                          .C = 64,
                          .O = 130,
                          .H = 6,
                          .W = 7,
                          .K = 5,
                          .S = 2,
                          .same = 1,
                          .seed = 4}};
    char err[512] = "";
    double e0 = npu_f16_case_run(ctx, npu, &f[0], err, sizeof err), e1 = -1;
    stats_fn(s0, NULL, 0);
    if (e0 >= 0)
      e1 = npu_f16_case_run(ctx, npu, &f[1], err, sizeof err);
    stats_fn(s1, NULL, 0);
    printf("# %s f16: relative errors %g, %g; %d jobs, %d tasks for the "
           "split conv %s\n",
           driver, e0, e1, s1[5] - s0[5], s1[6] - s0[6], err);
    snprintf(what, sizeof what,
             "%s: f16 convs (3x3 bias relu; 5x5 stride 2 split over 2 tasks, "
             "batch 2) through the fake kernel within 1e-2 + 1 fp16 ulp of "
             "the CPU, the split conv's tasks chained: one job per image",
             driver);
    check(e0 >= 0 && e1 >= 0 && e0 <= 1e-2 + 1.0 / 1024 && e1 <= 1.0 / 1024 &&
              s1[5] - s0[5] == 2 && s1[6] - s0[6] == 4,
          what);
    /* Per-channel weights whose neighbours' scales differ 64-fold: a task
     * per channel (one task spans a factor 16 at most), 70, more than one
     * job chains (NPU_JOB_MAX_TASKS): 2 jobs, the first of 64 tasks. */
    npu_case pc = {.N = 1,
                   .C = 8,
                   .O = 70,
                   .H = 6,
                   .W = 6,
                   .K = 3,
                   .S = 1,
                   .same = 1,
                   .per_channel = 3,
                   .seed = 11};
    long exact = 0, total = 0;
    stats_fn(s0, NULL, 0);
    int lsb = npu_case_run(ctx, npu, &pc, &exact, &total, err, sizeof err);
    stats_fn(s1, NULL, 0);
    snprintf(what, sizeof what,
             "%s: a node of %d tasks (per-channel scales) within 1 LSB of "
             "the CPU in %d jobs (64 tasks a job at most) %s",
             driver, s1[6] - s0[6], s1[5] - s0[5], err);
    check(lsb >= 0 && lsb <= 1 && s1[6] - s0[6] > 64 &&
              s1[5] - s0[5] == (s1[6] - s0[6] + 63) / 64,
          what);
  }
  dg_context_destroy(ctx);
  snprintf(what, sizeof what,
           "%s: context destroyed: every file, BO and mapping released, CPU "
           "access always bracketed",
           driver);
  check(clean(driver), what);
}

/* One small conv with a fault injected; returns the run's error. */
static void injected(const char *spec, const char *driver, const char *fault,
                     const char *expect) {
  setenv("FAKE_NPU_FAIL", fault, 1);
  setenv("DG_NPU_TIMEOUT_MS", "100", 1);
  int npu;
  dg_device_info info;
  dg_context *ctx = open_ctx(spec, &npu, &info);
  npu_case c = {.N = 1,
                .C = 8,
                .O = 8,
                .H = 6,
                .W = 6,
                .K = 3,
                .S = 1,
                .same = 1,
                .seed = 5};
  long e = 0, t = 0;
  char err[512] = "";
  int rc = npu >= 0 ? npu_case_run(ctx, npu, &c, &e, &t, err, sizeof err) : 0;
  dg_context_destroy(ctx);
  unsetenv("FAKE_NPU_FAIL");
  unsetenv("DG_NPU_TIMEOUT_MS");
  printf("# %s, %s: %s\n", driver, fault, err);
  char what[200];
  snprintf(what, sizeof what,
           "%s: injected %s -> a clear error naming the node and the driver, "
           "nothing leaked",
           driver, fault);
  check(rc < 0 && strstr(err, expect) && strstr(err, "'conv'") &&
            strstr(err, driver) && clean(fault),
        what);
}

/* A job that times out, then the same session again: the kernel resets
 * the core on its time-out (rocket's scheduler, rknpu's soft reset; the
 * fake clears the hang), the run reports the time-out naming the node, and
 * the next run of that session computes the right result. */
static void recovers(const char *spec, const char *driver) {
  setenv("DG_NPU_TIMEOUT_MS", "100", 1);
  int npu;
  dg_device_info info;
  dg_context *ctx = open_ctx(spec, &npu, &info);
  char what[240], err[512] = "";
  bool ok = false;
  if (npu >= 0) {
    dg_graph *g = dg_graph_create(ctx, "recover");
    dg_tensor_desc xd = {.dtype = DG_DTYPE_I8,
                         .rank = 4,
                         .dims = {1, 8, 6, 6},
                         .quant = {.scale = 0.05f}};
    dg_tensor_desc wd = {.dtype = DG_DTYPE_I8,
                         .rank = 4,
                         .dims = {8, 8, 3, 3},
                         .quant = {.scale = 0.01f}};
    int8_t w[8 * 8 * 9], x[8 * 36];
    uint8_t y0[8 * 36], y1[8 * 36], y2[8 * 36];
    for (int i = 0; i < 8 * 8 * 9; i++)
      w[i] = (int8_t)(i * 37 % 255 - 127);
    for (int i = 0; i < 8 * 36; i++)
      x[i] = (int8_t)(i * 53 % 255 - 127);
    dg_quant_params yq = {.scale = 0.05f * 0.01f * 72};
    dg_conv2d_params p = {
        .stride = {1, 1}, .padding = DG_PADDING_SAME_UPPER, .groups = 1};
    dg_tensor xt = dg_graph_input(g, "x", &xd);
    dg_tensor wt = dg_graph_constant(g, "w", &wd, w, 0);
    dg_graph_set_device(g, npu);
    dg_graph_output(g, "y",
                    dg_graph_qconv2d(g, "conv", xt, wt, DG_TENSOR_NONE, &p,
                                     DG_DTYPE_I8, &yq),
                    DG_LAYOUT_NCHW);
    dg_compile_options o = {.policy = DG_POLICY_STRICT};
    dg_session *s = NULL;
    dg_diagnostic d;
    memset(&d, 0, sizeof d);
    dg_binding in = {"x", x, sizeof x};
    dg_binding o0 = {"y", y0, sizeof y0}, o1 = {"y", y1, sizeof y1},
               o2 = {"y", y2, sizeof y2};
    if (dg_graph_compile(g, &o, &s, &d) == DG_OK &&
        dg_session_run(s, &in, 1, &o0, 1, &d) == DG_OK) {
      setenv("FAKE_NPU_FAIL", "hang", 1);
      dg_status hung = dg_session_run(s, &in, 1, &o1, 1, &d);
      snprintf(err, sizeof err, "%s", d.message);
      unsetenv("FAKE_NPU_FAIL");
      ok = hung == DG_ERROR_DEVICE && strstr(err, "timed out") &&
           strstr(err, "'conv'") &&
           dg_session_run(s, &in, 1, &o2, 1, &d) == DG_OK &&
           !memcmp(y0, y2, sizeof y0);
    } else {
      snprintf(err, sizeof err, "%s", d.message);
    }
    dg_session_destroy(s);
    dg_graph_destroy(g);
  }
  dg_context_destroy(ctx);
  unsetenv("DG_NPU_TIMEOUT_MS");
  printf("# %s, recovery: %s\n", driver, err);
  snprintf(what, sizeof what,
           "%s: a job that times out fails its run naming the node; the "
           "next run of the same session gives the first run's bytes, "
           "nothing leaked",
           driver);
  check(ok && clean(driver), what);
}

/* Runs case c on the NPU (npu >= 0) between two reads of the fake's
 * counters; its largest difference to the CPU, or -1. */
static int stats_run(dg_context *ctx, int npu, const npu_case *c,
                     int before[12], int after[12], char *err, size_t n) {
  long exact = 0, total = 0;
  stats_fn(before, NULL, 0);
  int lsb = npu >= 0 ? npu_case_run(ctx, npu, c, &exact, &total, err, n) : -1;
  stats_fn(after, NULL, 0);
  return lsb;
}

/* DG_NPU_CORES on the vendor driver: a node's 70 tasks (two jobs) split
 * over 3 and 2 cores in balanced ranges, or one free core per job (auto),
 * within 1 LSB of the CPU; the device name says which; a bad value, and
 * a split on rocket (whose uAPI names no core), refused with the reason. */
static void cores(void) {
  static const struct {
    const char *v;
    int used;         /* cores given tasks */
    const char *name; /* in the device name */
  } modes[] = {{"3", 3, "a job split over 3 cores"},
               {"2", 2, "a job split over 2 cores"},
               {"auto", 1, "a free core per job"}};
  npu_case pc = {.N = 1,
                 .C = 8,
                 .O = 70,
                 .H = 6,
                 .W = 6,
                 .K = 3,
                 .S = 1,
                 .same = 1,
                 .per_channel = 3,
                 .seed = 13};
  for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
    setenv("DG_NPU_CORES", modes[m].v, 1);
    int npu, s0[12], s1[12];
    dg_device_info info;
    dg_context *ctx = open_ctx("rknpu", &npu, &info);
    char err[512] = "", what[300];
    int lsb = stats_run(ctx, npu, &pc, s0, s1, err, sizeof err);
    /* One block in three row slices: a job on one core keeps the weights
     * for the second and third slice; split over cores, no slice may (the
     * fake faults a WEIGHT_REUSE whose weights its core does not hold). */
    npu_case dw = {.N = 1,
                   .C = 32,
                   .O = 32,
                   .H = 112,
                   .W = 112,
                   .K = 3,
                   .S = 1,
                   .same = 1,
                   .dw = 1,
                   .seed = 5};
    int sa[12], sb[12];
    int lsb2 = stats_run(ctx, npu, &dw, sa, sb, err, sizeof err);
    int reused = sb[11] - sa[11], want = 3 - modes[m].used; /* 3 slices */
    dg_context_destroy(ctx);
    int given[3], used = 0, lo = 1 << 30, hi = 0;
    for (int c = 0; c < 3; c++) {
      given[c] = s1[7 + c] - s0[7 + c];
      if (given[c]) {
        used++;
        lo = given[c] < lo ? given[c] : lo;
        hi = given[c] > hi ? given[c] : hi;
      }
    }
    snprintf(what, sizeof what,
             "rknpu, DG_NPU_CORES=%s ('%s'): 70 tasks in %d jobs, cores given "
             "%d/%d/%d tasks; a 3-slice conv keeps its weights for %d "
             "slices; within 1 LSB of the CPU %s",
             modes[m].v, info.name, s1[5] - s0[5], given[0], given[1], given[2],
             reused, err);
    check(lsb >= 0 && lsb <= 1 && lsb2 >= 0 && lsb2 <= 1 && reused == want &&
              strstr(info.name, modes[m].name) && s1[5] - s0[5] == 2 &&
              used == modes[m].used && given[0] + given[1] + given[2] == 70 &&
              (used == 1 || hi - lo <= 2) && clean("cores"),
          what);
  }
  /* Refusals: the context has no NPU and says why. */
  static const struct {
    const char *spec, *v, *expect;
  } bad[] = {{"rknpu", "5", "expected 1, 2, 3 or auto"},
             {"rocket", "3", "rocket runs each job on one core"},
             {"rocket", "1", "DG_NPU_CUBES=maybe: expected on or off"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("DG_NPU_CORES", bad[i].v, 1);
    if (i == 2)
      setenv("DG_NPU_CUBES", "maybe", 1);
    setenv("DG_NPU_DEVICE", bad[i].spec, 1);
    dg_context *ctx = NULL;
    dg_context_options o = {.disable_cache = 1, .cpu_threads = 1};
    char why[256] = "", what[300];
    int npu = -1;
    if (dg_context_create(&o, &ctx) == DG_OK) {
      npu = npu_device_index(ctx);
      const char *a = dg_context_device_absence(ctx, DG_DEVICE_NPU);
      snprintf(why, sizeof why, "%s", a ? a : "");
    }
    dg_context_destroy(ctx);
    unsetenv("DG_NPU_CUBES");
    snprintf(what, sizeof what,
             "%s, DG_NPU_CORES=%s%s: no NPU, the reason given ('%s')",
             bad[i].spec, bad[i].v, i == 2 ? ", DG_NPU_CUBES=maybe" : "", why);
    check(npu < 0 && strstr(why, bad[i].expect), what);
  }
  unsetenv("DG_NPU_CORES");
}

/* The throughput mode: DG_NPU_CORES=auto on the vendor driver, three
 * threads each compiling and running the 70-task node twice on one
 * context; jobs in flight take a task array each (backend.h's slots),
 * so the submits name all three; every result within 1 LSB of the CPU. */
typedef struct flight {
  dg_context *ctx;
  int npu, worst;
  char err[512];
} flight;
static void *fly(void *arg) {
  flight *f = arg;
  npu_case pc = {.N = 1,
                 .C = 8,
                 .O = 70,
                 .H = 6,
                 .W = 6,
                 .K = 3,
                 .S = 1,
                 .same = 1,
                 .per_channel = 3,
                 .seed = 17};
  f->worst = 0;
  for (int r = 0; r < 2 && f->worst >= 0; r++) {
    long exact = 0, total = 0;
    int e = npu_case_run(f->ctx, f->npu, &pc, &exact, &total, f->err,
                         sizeof f->err);
    f->worst = e < 0 || e > f->worst ? e : f->worst;
  }
  return NULL;
}
static void in_flight(void) {
  setenv("DG_NPU_CORES", "auto", 1);
  int npu, s0[12], s1[12];
  dg_device_info info;
  dg_context *ctx = open_ctx("rknpu", &npu, &info);
  stats_fn(s0, NULL, 0);
  flight f[3];
  pthread_t th[3];
  int started = 0;
  for (int i = 0; npu >= 0 && i < 3; i++) {
    f[i] = (flight){ctx, npu, -1, ""};
    started += !pthread_create(&th[i], NULL, fly, &f[i]);
  }
  int worst = npu >= 0 && started == 3 ? 0 : -1;
  for (int i = 0; i < started; i++) {
    pthread_join(th[i], NULL);
    worst = f[i].worst < 0 || worst < 0 ? -1
            : f[i].worst > worst        ? f[i].worst
                                        : worst;
  }
  stats_fn(s1, NULL, 0);
  dg_context_destroy(ctx);
  unsetenv("DG_NPU_CORES");
  char what[900];
  snprintf(what, sizeof what,
           "rknpu, DG_NPU_CORES=auto: 3 threads x 2 runs of a 70-task node "
           "(%d jobs) through task arrays of %d slots, within 1 LSB of the "
           "CPU %s",
           s1[5] - s0[5], s1[10], started ? f[0].err : "");
  check(worst >= 0 && worst <= 1 && s1[5] - s0[5] == 12 && s1[10] >= 3 &&
            clean("in flight"),
        what);
}

/* A list whose output address lies past its output buffer. */
static void outside(const char *spec) {
  char err[256] = "";
  npu_backend *b = dg_npu_backend_open(spec, err, sizeof err);
  if (!b) {
    check(0, "outside: open the backend");
    printf("# %s\n", err);
    return;
  }
  b->timeout_ms = 100;
  npu_conv_desc d = {16,
                     6,
                     6,
                     16,
                     6,
                     6,
                     3,
                     3,
                     1,
                     1,
                     1,
                     1,
                     false,
                     0,
                     0,
                     0,
                     0.01f,
                     0,
                     NPU_PREC_INT8,
                     false,
                     0};
  npu_stream s;
  npu_conv_plan p;
  npu_bo bo[5];
  memset(bo, 0, sizeof bo);
  int ok = dg_npu_gen_conv(&d, &s, err, sizeof err) &&
           dg_npu_conv_plan_make(&d, &p, err, sizeof err);
  size_t sizes[5] = {p.input_bytes, p.weight_bytes, p.bias_bytes,
                     p.output_bytes, (size_t)s.count * 8};
  for (int i = 0; ok && i < 5; i++)
    ok = !b->ops->bo_alloc(b, sizes[i], &bo[i], err, sizeof err);
  if (ok) {
    uint32_t iova[NPU_BUF_COUNT] = {(uint32_t)bo[0].iova, (uint32_t)bo[1].iova,
                                    (uint32_t)bo[2].iova,
                                    (uint32_t)bo[3].iova + 0x100000};
    dg_npu_stream_patch(&s, iova);
    b->ops->cpu_begin(b, &bo[4], err, sizeof err);
    memcpy(bo[4].map, s.words, (size_t)s.count * 8);
    b->ops->cpu_end(b, &bo[4], err, sizeof err);
    npu_bo *ins[3] = {&bo[0], &bo[1], &bo[2]}, *outs[1] = {&bo[3]};
    npu_job job = {&bo[4], s.count, ins, 3, outs, 1, NULL, 0, 0};
    int rc = dg_npu_job_check(&job, err, sizeof err);
    printf("# %s check: %s\n", spec, err);
    check(rc && strstr(err, "outside every buffer"),
          "outside: a list writing past its output BO is rejected before "
          "submission");
    /* Submitted anyway, the (fake) NPU faults: the job never completes. */
    err[0] = 0;
    rc = b->ops->submit(b, &job, err, sizeof err) ||
         b->ops->wait(b, &job, 100, err, sizeof err);
    char fault[256];
    stats_fn((int[6]){0}, fault, sizeof fault);
    printf("# %s submitted anyway: %s (fake kernel: %s)\n", spec, err, fault);
    char what[160];
    snprintf(what, sizeof what,
             "outside: %s: the same job forced through faults and times out",
             spec);
    check(rc && strstr(err, "timed out") && strstr(fault, "outside"), what);
  } else {
    printf("# %s\n", err);
    check(0, "outside: allocate the job's buffers");
  }
  for (int i = 0; i < 5; i++)
    if (bo[i].map)
      b->ops->bo_free(b, &bo[i]);
  dg_npu_backend_close(b);
  check(clean("outside"), "outside: everything released");
}

/* int8 max pooling: on rknpu a standalone PPU task (enable 0x60, PPU
 * interrupt group) equal to the CPU; on rocket declined with the reason,
 * and a PPU task forced through never completes (DPU-only completion). */
static void pooling(void) {
#ifdef DG_NPU_HAVE_LIBDRM
  int npu;
  dg_device_info info;
  dg_context *ctx = open_ctx("rknpu", &npu, &info);
  npu_pool_case c = {.N = 2,
                     .C = 20,
                     .H = 11,
                     .W = 9,
                     .K = 3,
                     .S = 2,
                     .same = 1,
                     .u8 = 1,
                     .seed = 9};
  char err[512] = "";
  int s0[12], s1[12];
  stats_fn(s0, NULL, 0);
  long diff = npu >= 0 ? npu_pool_case_run(ctx, npu, &c, err, sizeof err) : -1;
  stats_fn(s1, NULL, 0);
  dg_context_destroy(ctx);
  if (diff)
    printf("# rknpu pool: %ld differ %s\n", diff, err);
  check(diff == 0 && s1[5] - s0[5] == 2 && clean("rknpu pool"),
        "rknpu: a uint8 max pool runs as a PPU task (2 jobs) through the fake "
        "kernel, equal to the CPU, nothing leaked");
#else
  printf("skipped: rknpu pooling: built without libdrm\n");
#endif
  int rnpu;
  dg_device_info rinfo;
  dg_context *rctx = open_ctx("rocket", &rnpu, &rinfo);
  char why[200] = "";
  if (rnpu >= 0)
    npu_pool_plan_reason(rctx, rnpu, DG_DTYPE_I8, 0, 2, 2, 0, why, sizeof why);
  dg_context_destroy(rctx);
  printf("# rocket pool: %s\n", why);
  check(strstr(why, "DPU interrupt") != NULL,
        "rocket: max pooling is declined (mainline completes jobs on the DPU "
        "interrupt only)");
  /* The same task forced through the rocket backend. */
  npu_backend *b = dg_npu_backend_open("rocket", err, sizeof err);
  npu_pool_desc d = {.method = NPU_POOL_MAX,
                     .c = 8,
                     .in_h = 4,
                     .in_w = 4,
                     .out_h = 2,
                     .out_w = 2,
                     .k_h = 2,
                     .k_w = 2,
                     .stride_y = 2,
                     .stride_x = 2};
  npu_stream *s = malloc(sizeof *s);
  npu_pool_plan p;
  npu_bo bo[3];
  memset(bo, 0, sizeof bo);
  bool ok = b && s && dg_npu_gen_pool(&d, s, err, sizeof err) &&
            dg_npu_pool_plan_make(&d, &p, err, sizeof err);
  size_t sizes[3] = {p.input_bytes, p.output_bytes, (size_t)s->count * 8};
  for (int i = 0; ok && i < 3; i++)
    ok = !b->ops->bo_alloc(b, sizes[i], &bo[i], err, sizeof err);
  if (ok) {
    b->timeout_ms = 100;
    const uint32_t iova[NPU_BUF_COUNT] = {
        [NPU_BUF_INPUT] = (uint32_t)bo[0].iova,
        [NPU_BUF_OUTPUT] = (uint32_t)bo[1].iova};
    dg_npu_stream_patch(s, iova);
    b->ops->cpu_begin(b, &bo[2], err, sizeof err);
    memcpy(bo[2].map, s->words, (size_t)s->count * 8);
    b->ops->cpu_end(b, &bo[2], err, sizeof err);
    npu_bo *ins[1] = {&bo[0]}, *outs[1] = {&bo[1]};
    npu_job job = {&bo[2], s->count, ins, 1, outs, 1, NULL, 0, 0};
    ok = !dg_npu_job_check(&job, err, sizeof err);
    int rc = b->ops->submit(b, &job, err, sizeof err) ||
             b->ops->wait(b, &job, 100, err, sizeof err);
    char fault[256];
    stats_fn((int[6]){0}, fault, sizeof fault);
    printf("# rocket PPU task: %s (fake kernel: %s)\n", err, fault);
    ok = ok && rc && strstr(err, "timed out") && strstr(fault, "DPU");
  }
  check(ok, "rocket: a standalone PPU task passes the checks but never "
            "completes (the fake kernel's DPU-only completion)");
  for (int i = 0; i < 3; i++)
    if (bo[i].map)
      b->ops->bo_free(b, &bo[i]);
  dg_npu_backend_close(b);
  free(s);
  check(clean("rocket pool"), "rocket pool: everything released");
}

/* Each backend refuses a node whose driver is the other one, naming both,
 * and leaves nothing open. */
static void wrong_driver(void) {
  char err[256] = "";
  npu_backend *b = dg_npu_rocket_open("/dev/dri/renderD200", err, sizeof err);
  check(!b && strstr(err, "driver is rknpu, not rocket"),
        "rocket refuses the rknpu node, naming both drivers");
  if (b)
    dg_npu_backend_close(b);
#ifdef DG_NPU_HAVE_LIBDRM
  err[0] = 0;
  b = dg_npu_rknpu_open("/dev/accel/accel0", err, sizeof err);
  check(!b && strstr(err, "driver is rocket, not rknpu"),
        "rknpu refuses the rocket node, naming both drivers");
  if (b)
    dg_npu_backend_close(b);
#endif
  check(clean("wrong driver"), "wrong driver: nothing left open");
}

int main(int argc, char **argv) {
  (void)argc;
  preload(argv);
  *(void **)&stats_fn = dlsym(RTLD_DEFAULT, "fake_npu_stats");
  if (!stats_fn) {
    check(0, "fake kernel preloaded (" DG_FAKE_NPU ")");
    return 1;
  }
  backend_matrix("rocket", "rocket", 1);
  backend_matrix("/dev/accel/accel0", "rocket", 0);
#ifdef DG_NPU_HAVE_LIBDRM
  backend_matrix("rknpu", "rknpu", 1);
  setenv("FAKE_NPU_RKNPU_VERSION", "0.9.6", 1);
  backend_matrix("/dev/dri/renderD200", "rknpu", 0);
  unsetenv("FAKE_NPU_RKNPU_VERSION");
#else
  printf("skipped: rknpu backend: built without libdrm\n");
#endif
  injected("rocket", "rocket", "submit", "SUBMIT failed");
  injected("rocket", "rocket", "hang", "timed out");
  injected("rocket", "rocket", "create", "CREATE_BO");
  recovers("rocket", "rocket");
#ifdef DG_NPU_HAVE_LIBDRM
  injected("rknpu", "rknpu", "submit", "SUBMIT failed");
  injected("rknpu", "rknpu", "hang", "timed out");
  recovers("rknpu", "rknpu");
  cores();
  in_flight();
#endif
  pooling();
  wrong_driver();
  outside("rocket");
#ifdef DG_NPU_HAVE_LIBDRM
  outside("rknpu");
#endif
  return failures ? 1 : 0;
}
