/* dg-bench: directgraph's kernels against the peers that matter on CPU,
 * measured in one run (docs/performance.md, "dg-bench": the method, the
 * anchors and the targets it prints).
 *
 *   dg-bench [--quick] [--device N] [--json FILE] [--weights DIR]
 *   dg-bench --gpu [--quick] [--device N] [--json FILE] [--weights DIR]
 *            [--only BENCH,...] [--gpu-peak F32,F16]
 *   dg-bench --scale [--quick] [--device N] [--json FILE]
 *   dg-bench --models [DIR] [--quick] [--threads N] [--batch N] [--fast]
 *            [--resident] [--ort PATH] [--only MODEL,...] [--json FILE]
 *
 * Every option, with its default: usage() below, or dg-bench --help.
 * Cases, on every device of the context (or only device N):
 *   - machine peak: an AVX-512 (else AVX2) FMA loop on 1 thread and on the
 *     CPU device's thread count, and an AVX512-VNNI loop for int8;
 *   - fp32 conv 3x3 s1 p1 on the ResNet-50 layers 64@56, 128@28, 256@14,
 *     512@7 (batch 1, no bias) vs oneDNN f32 (its preferred layouts);
 *   - int8 qconv2d (u8 x, per-channel i8 w, i32 bias, i8 y) on the same
 *     layers vs our own f32 conv and vs oneDNN u8s8;
 *   - SGEMM 256^3, 1024^3, 2048^3 (both operands graph inputs) vs OpenBLAS;
 *   - LeNet-5 batch-1 latency (f32, int8; median of >= 2000 runs) and
 *     batch-64 time per image.
 * With --gpu, the GPU suite instead (gpu_suite() below), on every non-CPU
 * device. With --scale, build, import and compile time per node of 1k to
 * 100k-node graphs on every device (bench_scale.h). With --models, whole
 * models against ONNX Runtime's CPU EP (bench_models.h).
 * Every directgraph result is spot-checked against a double-precision
 * reference before it is timed. Times are medians of repeated runs after
 * warm-up (CLOCK_MONOTONIC), the lowest of 3 rounds' medians (1 with
 * --quick) for us and the peers alike; ratio = peer_us / ours_us (> 1: we
 * are faster). One table, then one JSON line per row (also written to FILE
 * with --json), then one line per target of the performance issue.
 *
 * OpenBLAS reads OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE from the environment;
 * run as `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE dg-bench` to let it
 * pick its own kernels (dg-bench warns when they are set). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* syscall(), for the AMX grant */
#include "bench_gpu.h"
#include "bench_models.h"
#include "bench_peers.h"
#include "bench_progress.h"
#include "bench_scale.h"
#include "common/cli.h"
#include "common/lenet_model.h"
#include "graph.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#define DG_BENCH_X86 1
#endif

#ifndef DG_SOURCE_DIR
#define DG_SOURCE_DIR "."
#endif

/* ---- rows ---------------------------------------------------------------- */

typedef struct row {
  char bench[24];
  char device[16];
  char shape[40];
  double ours_us;  /* < 0: none */
  double gflops;   /* < 0: none */
  double pct_peak; /* < 0: none */
  char peer[48];   /* "" : none */
  double peer_us;  /* < 0: none */
  double ratio;    /* peer_us / ours_us; < 0: none */
  char check[8];   /* "ok", "FAIL", "" (not checked) */
  int reps;
} row;

static row *rows;
static int nrows, cap_rows;

static row *add_row(const char *bench, const char *device, const char *shape) {
  if (nrows == cap_rows) {
    int nc = cap_rows ? cap_rows * 2 : 64;
    row *nr = realloc(rows, sizeof(row) * (size_t)nc);
    if (!nr) {
      fprintf(stderr, "dg-bench: out of memory\n");
      exit(1);
    }
    rows = nr;
    cap_rows = nc;
  }
  row *r = &rows[nrows++];
  memset(r, 0, sizeof *r);
  snprintf(r->bench, sizeof r->bench, "%s", bench);
  snprintf(r->device, sizeof r->device, "%s", device);
  snprintf(r->shape, sizeof r->shape, "%s", shape);
  r->ours_us = r->gflops = r->pct_peak = r->peer_us = r->ratio = -1;
  return r;
}

static void fmt_num(char *buf, size_t n, double v, int decimals) {
  if (v < 0 || !isfinite(v))
    snprintf(buf, n, "-");
  else
    snprintf(buf, n, "%.*f", decimals, v);
}

static void print_header(void) {
  printf("%-10s %-6s %-21s %10s %8s %6s %-33s %10s %7s %s\n", "bench", "device",
         "shape", "ours_us", "GFLOP/s", "%peak", "peer", "peer_us", "ratio",
         "check");
}

static void print_row(const row *r) {
  char us[32], gf[32], pk[32], pus[32], ra[32];
  fmt_num(us, sizeof us, r->ours_us,
          r->ours_us >= 0 && r->ours_us < 100 ? 2 : 1);
  fmt_num(gf, sizeof gf, r->gflops, 1);
  fmt_num(pk, sizeof pk, r->pct_peak, 1);
  fmt_num(pus, sizeof pus, r->peer_us,
          r->peer_us >= 0 && r->peer_us < 100 ? 2 : 1);
  fmt_num(ra, sizeof ra, r->ratio, 3);
  bench_progress_clear();
  printf("%-10s %-6s %-21s %10s %8s %6s %-33s %10s %7s %s\n", r->bench,
         r->device, r->shape, us, gf, pk, r->peer[0] ? r->peer : "-", pus, ra,
         r->check[0] ? r->check : "-");
  fflush(stdout);
  bench_progress_row();
}

static void json_num(FILE *f, const char *key, double v) {
  if (v < 0 || !isfinite(v))
    fprintf(f, ",\"%s\":null", key);
  else
    fprintf(f, ",\"%s\":%.4f", key, v);
}

static void json_row(FILE *f, const row *r) {
  fprintf(f, "{\"bench\":\"%s\",\"device\":\"%s\",\"shape\":\"%s\"", r->bench,
          r->device, r->shape);
  json_num(f, "ours_us", r->ours_us);
  json_num(f, "gflops", r->gflops);
  json_num(f, "pct_peak", r->pct_peak);
  if (r->peer[0])
    fprintf(f, ",\"peer\":\"%s\"", r->peer);
  else
    fprintf(f, ",\"peer\":null");
  json_num(f, "peer_us", r->peer_us);
  json_num(f, "ratio", r->ratio);
  if (r->check[0])
    fprintf(f, ",\"check\":\"%s\"", r->check);
  else
    fprintf(f, ",\"check\":null");
  fprintf(f, ",\"reps\":%d}\n", r->reps);
}

/* ---- deterministic data
 * -------------------------------------------------------- */

static uint32_t lcg(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}

static void fill_f32(float *p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; i++)
    p[i] = (float)(lcg(&seed) % 2001) / 1000.0f - 1.0f;
}

/* ---- machine peak
 * ----------------------------------------------------------------- */

#ifdef DG_BENCH_X86
#define REP16(X)                                                               \
  X(0)                                                                         \
  X(1)                                                                         \
  X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#define REP12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

/* 16 independent chains of c = c * a + b: 512 flops per iteration. */
__attribute__((target("avx512f"))) static float fma_loop_avx512(long iters,
                                                                float seed) {
  __m512 a = _mm512_set1_ps(0.9999999f), b = _mm512_set1_ps(1e-7f * seed);
#define DECL(i) __m512 c##i = _mm512_set1_ps(seed + 0.01f * (i));
  REP16(DECL)
#undef DECL
  for (long it = 0; it < iters; it++) {
#define STEP(i) c##i = _mm512_fmadd_ps(c##i, a, b);
    REP16(STEP)
#undef STEP
  }
  __m512 s = _mm512_setzero_ps();
#define SUM(i) s = _mm512_add_ps(s, c##i);
  REP16(SUM)
#undef SUM
  return _mm512_reduce_add_ps(s);
}

/* 12 chains of 8 lanes: 192 flops per iteration. */
__attribute__((target("avx2,fma"))) static float fma_loop_avx2(long iters,
                                                               float seed) {
  __m256 a = _mm256_set1_ps(0.9999999f), b = _mm256_set1_ps(1e-7f * seed);
#define DECL(i) __m256 c##i = _mm256_set1_ps(seed + 0.01f * (i));
  REP12(DECL)
#undef DECL
  for (long it = 0; it < iters; it++) {
#define STEP(i) c##i = _mm256_fmadd_ps(c##i, a, b);
    REP12(STEP)
#undef STEP
  }
  __m256 s = _mm256_setzero_ps();
#define SUM(i) s = _mm256_add_ps(s, c##i);
  REP12(SUM)
#undef SUM
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}

/* 16 chains of vpdpbusd (64 u8*s8 MACs each): 2048 int ops per iteration. */
__attribute__((target("avx512f,avx512vnni"))) static float
vnni_loop(long iters, float seed) {
  __m512i a = _mm512_set1_epi32(0x01010101), b = _mm512_set1_epi32(0x01fe01fe);
#define DECL(i) __m512i c##i = _mm512_set1_epi32((int)seed + (i));
  REP16(DECL)
#undef DECL
  for (long it = 0; it < iters; it++) {
#define STEP(i) c##i = _mm512_dpbusd_epi32(c##i, a, b);
    REP16(STEP)
#undef STEP
  }
  __m512i s = _mm512_setzero_si512();
#define SUM(i) s = _mm512_add_epi32(s, c##i);
  REP16(SUM)
#undef SUM
  return (float)_mm512_reduce_add_epi32(s);
}
#endif

#ifdef DG_BENCH_X86
/* AMX-INT8: four 16x16 int32 tiles, each taking 16x64 u8 by 64x16 s8
 * (16384 MACs) per tdpbsud, from operands loaded once: 131072 int ops per
 * iteration. The tile configuration is per thread; GCC's intrinsics are
 * asm that names 8 of its 64 bytes, hence the barrier. */
typedef struct amx_cfg {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} amx_cfg;

#ifdef __x86_64__
__attribute__((target("amx-tile,amx-int8"))) static float amx_loop(long iters,
                                                                   float seed) {
  _Alignas(64) uint8_t ab[2][1024]; /* per thread: no shared writes */
  memset(ab, (int)seed, sizeof ab);
  amx_cfg c;
  memset(&c, 0, sizeof c);
  c.palette = 1;
  for (int i = 0; i < 6; i++) {
    c.colsb[i] = 64;
    c.rows[i] = 16;
  }
  __asm__ volatile("" ::: "memory");
  _tile_loadconfig(&c);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, ab[0], 64);
  _tile_loadd(5, ab[1], 64);
  for (long it = 0; it < iters; it++) {
    _tile_dpbsud(0, 4, 5);
    _tile_dpbsud(1, 4, 5);
    _tile_dpbsud(2, 4, 5);
    _tile_dpbsud(3, 4, 5);
  }
  _Alignas(64) int32_t out[16 * 16];
  _tile_stored(0, out, 64);
  __asm__ volatile("" ::: "memory");
  _tile_release();
  return (float)out[0];
}
#else
static float amx_loop(long iters, float seed) { /* never asked: no grant */
  (void)iters;
  return seed;
}
#endif

/* Whether this process may use AMX-INT8: the CPU has it and Linux grants
 * the tile data (as the library's simd.c asks; asking again is
 * harmless). */
static int amx_granted(void) {
#if defined(__x86_64__) && defined(__linux__)
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) ||
      !(d & (1u << 25)))
    return 0;
  return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */,
                 18 /* XFEATURE_XTILEDATA */) == 0;
#else
  return 0;
#endif
}
#endif

typedef enum peak_kind {
  PEAK_AVX512,
  PEAK_AVX2,
  PEAK_VNNI,
  PEAK_AMX
} peak_kind;

typedef struct peak_arg {
  peak_kind kind;
  long iters;
  pthread_barrier_t *barrier;
  volatile float sink;
  double t0, t1; /* the thread's own start and end */
} peak_arg;

static void *peak_thread(void *p) {
  peak_arg *a = p;
  pthread_barrier_wait(a->barrier);
  a->t0 = bench_now_us();
#ifdef DG_BENCH_X86
  a->sink = a->kind == PEAK_AVX512 ? fma_loop_avx512(a->iters, 1.0f)
            : a->kind == PEAK_AVX2 ? fma_loop_avx2(a->iters, 1.0f)
            : a->kind == PEAK_AMX  ? amx_loop(a->iters, 1.0f)
                                   : vnni_loop(a->iters, 1.0f);
#endif
  a->t1 = bench_now_us();
  pthread_barrier_wait(a->barrier);
  return NULL;
}

/* Best of `trials` runs of the loop on `threads` threads, in G(FL)OP/s. */
static double measure_peak(peak_kind kind, int threads, int trials) {
  double ops_per_iter = kind == PEAK_AVX512 ? 512
                        : kind == PEAK_AVX2 ? 192
                        : kind == PEAK_AMX  ? 131072
                                            : 2048;
  long iters = kind == PEAK_AMX    ? 250000
               : kind == PEAK_VNNI ? 4000000
                                   : 16000000;
  double best = 0;
  pthread_t *tid = malloc(sizeof(pthread_t) * (size_t)threads);
  peak_arg *args = malloc(sizeof(peak_arg) * (size_t)threads);
  if (!tid || !args) {
    free(tid);
    free(args);
    return -1;
  }
  for (int t = 0; t < trials; t++) {
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)threads + 1);
    int started = 0;
    for (int i = 0; i < threads; i++) {
      args[i] = (peak_arg){.kind = kind, .iters = iters, .barrier = &bar};
      if (pthread_create(&tid[i], NULL, peak_thread, &args[i]) == 0)
        started++;
    }
    if (started != threads) { /* cannot happen short of resource limits */
      fprintf(stderr, "dg-bench: could not start peak threads\n");
      exit(1);
    }
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar);
    /* The span of the threads' own clocks: with as many threads as cores
     * this (waiting) thread may read its clock late, which made short
     * loops look faster than the machine. */
    double t0 = args[0].t0, t1 = args[0].t1;
    for (int i = 1; i < threads; i++) {
      t0 = args[i].t0 < t0 ? args[i].t0 : t0;
      t1 = args[i].t1 > t1 ? args[i].t1 : t1;
    }
    for (int i = 0; i < threads; i++)
      pthread_join(tid[i], NULL);
    pthread_barrier_destroy(&bar);
    double g = ops_per_iter * (double)iters * threads / (t1 - t0) / 1e3;
    if (g > best)
      best = g;
  }
  free(tid);
  free(args);
  return best;
}

/* ---- directgraph side
 * -------------------------------------------------------------- */

typedef struct opts {
  int quick;       /* the default; --full clears it */
  int all_devices; /* also CPU-hosted GPU drivers and simulators */
  int gpu;    /* the GPU suite on non-CPU devices instead of the CPU suite */
  int scale;  /* the scale bench instead (bench_scale.h) */
  int models; /* the whole-model suite instead (bench_models.h) */
  bench_models_opts m;
  int device; /* -1: all */
  const char *json;
  const char *weights;
  unsigned only; /* GPU suite: mask of gpu_benches to run; 0: all */
  /* GPU suite: the device's fp32 and fp16 peaks in GFLOP/s (--gpu-peak,
   * given in TFLOP/s: Vulkan and OpenCL do not report them); <= 0:
   * unknown, and the rows' pct_peak stays null. */
  double gpu_peak_f32, gpu_peak_f16;
} opts;

/* The GPU suite's benches, as --only names them. */
static const char *const gpu_benches[] = {"sgemm", "hgemm", "conv", "lenet",
                                          "node"};
enum { NGPU_BENCHES = sizeof gpu_benches / sizeof gpu_benches[0] };

/* Whether the GPU suite runs bench (one of gpu_benches). */
static int wanted(const opts *o, const char *bench) {
  for (int k = 0; k < NGPU_BENCHES; k++)
    if (!strcmp(bench, gpu_benches[k]))
      return !o->only || (o->only >> k & 1);
  return 0;
}

typedef struct dev {
  int index;
  dg_device_info info;
  char label[16];
  int threads;
  double peak;      /* f32 G(FL)OP/s on `threads` threads; < 0: unknown */
  double peak_int8; /* int8 GOP/s; < 0: unknown */
} dev;

static const int64_t conv_layers[][3] = {
    {64, 56, 56}, {128, 28, 28}, {256, 14, 14}, {512, 7, 7}};
#define NLAYERS 4

static double conv_flops(int C, int K, int H, int W) {
  return 2.0 * K * H * W * C * 9;
}

/* Spot check positions: corners and edges included. */
static void pick_points(int K, int H, int W, int i, int *k, int *oy, int *ox) {
  uint32_t s = 777u + (uint32_t)i * 31u;
  *k = (int)(lcg(&s) % (uint32_t)K);
  if (i < 4) {
    *oy = (i & 1) ? H - 1 : 0;
    *ox = (i & 2) ? W - 1 : 0;
  } else {
    *oy = (int)(lcg(&s) % (uint32_t)H);
    *ox = (int)(lcg(&s) % (uint32_t)W);
  }
}

static dg_context *ctx;

static void set_perf(row *r, double flops, double us, double peak) {
  r->ours_us = us;
  if (us > 0 && flops > 0) {
    r->gflops = flops / us / 1e3;
    if (peak > 0)
      r->pct_peak = 100.0 * r->gflops / peak;
  }
}

static void set_peer(row *r, const char *peer, double peer_us) {
  snprintf(r->peer, sizeof r->peer, "%s", peer);
  r->peer_us = peer_us;
  if (peer_us > 0 && r->ours_us > 0)
    r->ratio = peer_us / r->ours_us;
}

/* fp32 3x3 s1 p1 conv C->C at HxW, batch 1, through a session on d. */
static double our_conv_f32(const dev *d, int C, int H, int W, row *r) {
  int K = C;
  size_t xn = (size_t)C * H * W, wn = (size_t)K * C * 9;
  size_t yn = (size_t)K * H * W;
  float *x = malloc(xn * 4), *w = malloc(wn * 4), *y = malloc(yn * 4);
  double us = -1;
  dg_session *s = NULL;
  if (!x || !w || !y)
    goto done;
  fill_f32(x, xn, 1);
  fill_f32(w, wn, 2);
  dg_graph *g = dg_graph_create(ctx, "conv_f32");
  if (!g)
    goto done;
  dg_graph_set_device(g, d->index);
  dg_tensor_desc xd = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, C, H, W}};
  dg_tensor_desc wd = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {K, C, 3, 3}};
  dg_conv2d_params cp = {.padding = DG_PADDING_EXPLICIT, .pads = {1, 1, 1, 1}};
  dg_tensor xt = dg_graph_input(g, "x", &xd);
  dg_tensor wt = dg_graph_constant(g, "w", &wd, w, 0);
  dg_tensor yt = dg_graph_conv2d(g, "conv", xt, wt, DG_TENSOR_NONE, &cp);
  dg_graph_output(g, "y", yt, DG_LAYOUT_NCHW);
  s = bench_compile_on(g, d->index, "conv f32");
  dg_graph_destroy(g);
  if (!s)
    goto done;
  bench_case c = {
      .s = s, .in = {{"x", x, xn * 4}}, .nin = 1, .out = {"y", y, yn * 4}};
  if (bench_case_run(&c))
    goto done;
  int bad = 0;
  for (int i = 0; i < 48; i++) {
    int k, oy, ox;
    pick_points(K, H, W, i, &k, &oy, &ox);
    double mag, ref = bench_conv3x3_point(x, w, C, H, W, 0, k, oy, ox, &mag);
    double got = y[((size_t)k * H + oy) * W + ox];
    if (!(fabs(got - ref) <= 1e-4 * mag + 1e-6))
      bad++;
  }
  snprintf(r->check, sizeof r->check, "%s", bad ? "FAIL" : "ok");
  us = bench_median_us(bench_case_run, &c, 0, &r->reps);
done:
  dg_session_destroy(s);
  free(x);
  free(w);
  free(y);
  return us;
}

/* int8 qconv2d: u8 x (zero point 0), i8 w per output channel, i32 bias,
 * i8 y; same shape as the f32 case. */
static double our_conv_int8(const dev *d, int C, int H, int W, row *r) {
  int K = C;
  size_t xn = (size_t)C * H * W, wn = (size_t)K * C * 9;
  size_t yn = (size_t)K * H * W;
  uint8_t *x = malloc(xn);
  int8_t *w = malloc(wn), *y = malloc(yn);
  int32_t *b = malloc(sizeof(int32_t) * (size_t)K);
  float *ws = malloc(sizeof(float) * (size_t)K);
  double us = -1;
  dg_session *s = NULL;
  if (!x || !w || !y || !b || !ws)
    goto done;
  uint32_t seed = 12345;
  for (size_t i = 0; i < xn; i++)
    x[i] = (uint8_t)(lcg(&seed) & 255);
  for (size_t i = 0; i < wn; i++)
    w[i] = (int8_t)((int)(lcg(&seed) % 255) - 127);
  for (int k = 0; k < K; k++) {
    b[k] = (int32_t)(lcg(&seed) % 20001) - 10000;
    ws[k] = 0.01f * (1.0f + (float)(k % 7) / 7.0f);
  }
  /* Output scale that puts a typical accumulator near |y| = 30. */
  float xs = 1.0f / 64.0f;
  float ys = (float)(xs * 0.01 * sqrt(9.0 * C) * 10890.0 / 30.0);
  dg_graph *g = dg_graph_create(ctx, "conv_int8");
  if (!g)
    goto done;
  dg_graph_set_device(g, d->index);
  dg_tensor_desc xd = {.dtype = DG_DTYPE_U8,
                       .rank = 4,
                       .dims = {1, C, H, W},
                       .quant = {.scale = xs}};
  dg_tensor_desc wd = {
      .dtype = DG_DTYPE_I8,
      .rank = 4,
      .dims = {K, C, 3, 3},
      .quant = {.axis = 0, .channel_count = K, .channel_scales = ws}};
  dg_tensor_desc bd = {.dtype = DG_DTYPE_I32, .rank = 1, .dims = {K}};
  dg_quant_params yq = {.scale = ys};
  dg_conv2d_params cp = {.padding = DG_PADDING_EXPLICIT, .pads = {1, 1, 1, 1}};
  dg_tensor xt = dg_graph_input(g, "x", &xd);
  dg_tensor wt = dg_graph_constant(g, "w", &wd, w, 0);
  dg_tensor bt = dg_graph_constant(g, "b", &bd, b, 0);
  dg_tensor yt =
      dg_graph_qconv2d(g, "qconv", xt, wt, bt, &cp, DG_DTYPE_I8, &yq);
  dg_graph_output(g, "y", yt, DG_LAYOUT_NCHW);
  s = bench_compile_on(g, d->index, "conv int8");
  dg_graph_destroy(g);
  if (!s)
    goto done;
  bench_case c = {.s = s, .in = {{"x", x, xn}}, .nin = 1, .out = {"y", y, yn}};
  if (bench_case_run(&c))
    goto done;
  int bad = 0, tol = d->info.int8_max_lsb_deviation > 1
                         ? d->info.int8_max_lsb_deviation
                         : 1;
  for (int i = 0; i < 48; i++) {
    int k, oy, ox;
    pick_points(K, H, W, i, &k, &oy, &ox);
    int64_t acc = b[k];
    for (int ci = 0; ci < C; ci++)
      for (int ky = 0; ky < 3; ky++)
        for (int kx = 0; kx < 3; kx++) {
          int iy = oy + ky - 1, ix = ox + kx - 1;
          if (iy < 0 || iy >= H || ix < 0 || ix >= W)
            continue;
          acc += (int64_t)x[((size_t)ci * H + iy) * W + ix] *
                 w[(((size_t)k * C + ci) * 3 + ky) * 3 + kx];
        }
    double q = nearbyint((double)acc * ((double)xs * ws[k] / ys));
    q = q < -128 ? -128 : q > 127 ? 127 : q;
    int got = y[((size_t)k * H + oy) * W + ox];
    if (fabs(got - q) > tol)
      bad++;
  }
  snprintf(r->check, sizeof r->check, "%s", bad ? "FAIL" : "ok");
  us = bench_median_us(bench_case_run, &c, 0, &r->reps);
done:
  dg_session_destroy(s);
  free(x);
  free(w);
  free(y);
  free(b);
  free(ws);
  return us;
}

/* y[M,N] = a[M,K] x b[K,N], both operands graph inputs. */
static double our_sgemm(const dev *d, int M, int N, int K, row *r) {
  size_t an = (size_t)M * K, bn = (size_t)K * N, yn = (size_t)M * N;
  float *a = malloc(an * 4), *b = malloc(bn * 4), *y = malloc(yn * 4);
  double us = -1;
  dg_session *s = NULL;
  if (!a || !b || !y)
    goto done;
  fill_f32(a, an, 3);
  fill_f32(b, bn, 4);
  dg_graph *g = dg_graph_create(ctx, "sgemm");
  if (!g)
    goto done;
  dg_graph_set_device(g, d->index);
  dg_tensor_desc ad = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {M, K}};
  dg_tensor_desc bd = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {K, N}};
  dg_tensor at = dg_graph_input(g, "a", &ad);
  dg_tensor bt = dg_graph_input(g, "b", &bd);
  dg_graph_output(g, "y", dg_graph_matmul(g, "matmul", at, bt), DG_LAYOUT_NCHW);
  s = bench_compile_on(g, d->index, "sgemm");
  dg_graph_destroy(g);
  if (!s)
    goto done;
  bench_case c = {.s = s,
                  .in = {{"a", a, an * 4}, {"b", b, bn * 4}},
                  .nin = 2,
                  .out = {"y", y, yn * 4}};
  if (bench_case_run(&c))
    goto done;
  int bad = 0;
  for (int i = 0; i < 48; i++) {
    uint32_t sd = 99u + (uint32_t)i * 7u;
    int m = i < 2 ? (i ? M - 1 : 0) : (int)(lcg(&sd) % (uint32_t)M);
    int n = i < 2 ? (i ? N - 1 : 0) : (int)(lcg(&sd) % (uint32_t)N);
    double ref = 0, mag = 0;
    for (int k = 0; k < K; k++) {
      double t = (double)a[(size_t)m * K + k] * b[(size_t)k * N + n];
      ref += t;
      mag += fabs(t);
    }
    if (!(fabs(y[(size_t)m * N + n] - ref) <= 1e-4 * mag + 1e-6))
      bad++;
  }
  snprintf(r->check, sizeof r->check, "%s", bad ? "FAIL" : "ok");
  us = bench_median_us(bench_case_run, &c, 0, &r->reps);
done:
  dg_session_destroy(s);
  free(a);
  free(b);
  free(y);
  return us;
}

/* LeNet end to end; returns median us per run, or -2 when the weights are
 * missing (err says why). */
static double our_lenet(const dev *d, const char *weights, int batch, int int8,
                        int reps, row *r, char *err, size_t err_size) {
  dg_graph *g = lenet_build(ctx, weights, batch, int8, d->index, err, err_size);
  if (!g)
    return -2;
  dg_session *s =
      bench_compile_on(g, d->index, int8 ? "lenet int8" : "lenet f32");
  dg_graph_destroy(g);
  size_t xn = (size_t)784 * batch, pn = (size_t)10 * batch;
  float *x = malloc(xn * 4), *p = malloc(pn * 4);
  double us = -1;
  if (!s || !x || !p)
    goto done;
  uint32_t seed = 5;
  for (size_t i = 0; i < xn; i++)
    x[i] = (float)(lcg(&seed) % 256) / 255.0f;
  bench_case c = {.s = s,
                  .in = {{"image", x, xn * 4}},
                  .nin = 1,
                  .out = {"probs", p, pn * 4}};
  /* The library's own reference kernels check every node once. */
  dg_verify_report rep;
  dg_status vs = dg_session_verify(s, c.in, 1, &rep);
  snprintf(r->check, sizeof r->check, "%s", vs == DG_OK ? "ok" : "FAIL");
  if (vs != DG_OK)
    fprintf(stderr, "dg-bench: lenet verify: %s (node %s, max abs %.3g)\n",
            dg_status_string(vs), rep.node_name, rep.max_abs_error);
  us = bench_median_us(bench_case_run, &c, reps, &r->reps);
done:
  dg_session_destroy(s);
  free(x);
  free(p);
  return us;
}

/* ---- main
 * -------------------------------------------------------------------------- */

/* Seconds a suite takes per device (the "expected" line in main), from
 * whole runs: the CPU suite on the 2-core CI machine took 5.5 s quick and
 * 20.5 s full without peers (oneDNN and OpenBLAS, when installed, about
 * double it); on the H200 machine a Vulkan or OpenCL device added about
 * 3 s to the quick CPU suite, and the GPU suite took 7.5 s quick and
 * 26 s full per device. */
enum {
  CPU_QUICK_S = 10,
  CPU_FULL_S = 40,
  CPU_SUITE_GPU_QUICK_S = 3,
  CPU_SUITE_GPU_FULL_S = 10,
  GPU_QUICK_S = 8,
  GPU_FULL_S = 30
};

/* The help: the one place that lists the options. */
static void usage(FILE *f) {
  fputs(
      "usage: dg-bench [--full] [--device N | --all-devices] [--json FILE]\n"
      "                [--weights DIR]\n"
      "       dg-bench --gpu [--full] [--device N | --all-devices] "
      "[--json FILE]\n"
      "                [--weights DIR] [--only BENCH,...] "
      "[--gpu-peak F32,F16]\n"
      "       dg-bench --scale [--full] [--device N] [--json FILE]\n"
      "       dg-bench --models [DIR] [--full] [--threads N] [--batch N]\n"
      "                [--fast] [--resident] [--ort PATH] [--only MODEL,...]\n"
      "                [--json FILE]\n"
      "\n"
      "Benchmarks directgraph's kernels against the peers installed (oneDNN,\n"
      "OpenBLAS; CLBlast with --gpu), measured in the same run: a table, one\n"
      "JSON line per row, then one line per performance target. The CPU\n"
      "suite (default), on every real device: machine peak, f32 and int8\n"
      "3x3 conv on the ResNet-50 layers, SGEMM, LeNet. Every result is\n"
      "checked before it is timed. The expected duration is printed first;\n"
      "on a terminal a progress line follows the rows (none when piped).\n"
      "\n"
      "  --full              per case 3 rounds of >= 20 runs and >= 0.3 s,\n"
      "                      7 peak trials; with --gpu the whole GEMM sizes\n"
      "                      and batch 32 convs; with --models 3 rounds of\n"
      "                      >= 1 s (default: quick, 1 round of >= 5 runs\n"
      "                      and >= 0.1 s, 3 trials, 1/4 sizes, batch 4;\n"
      "                      --models 2 rounds of >= 0.2 s)\n"
      "  --quick             the default, said explicitly\n"
      "  --all-devices       also the devices that only emulate one (a GPU\n"
      "                      driver on the host CPU: lavapipe, PoCL; the\n"
      "                      NPU simulator) (default: real devices only)\n"
      "  --gpu               the GPU suite instead, on every non-CPU device:\n"
      "                      SGEMM, HGEMM, f32 and f16 conv, per-node\n"
      "                      overhead, LeNet batch-1 latency\n"
      "  --scale             build, import and compile time per node of\n"
      "                      relu chains of 1k and 10k nodes (--full: also\n"
      "                      100k) on every device\n"
      "  --models [DIR]      whole models instead, ours (on the CPU, or\n"
      "                      --device N) against\n"
      "                      ONNX Runtime's CPU EP in the same process,\n"
      "                      alternating: DIR/<name>/model.onnx as\n"
      "                      tests/zoo/make_bench_zoo.py DIR writes them\n"
      "                      (default DIR: $HOME/.cache/directgraph-ci/\n"
      "                      bench-zoo); about 1 minute for its 19 models\n"
      "                      on 2 cores, 4 minutes with --full\n"
      "  --threads N         with --models: threads on both sides (default:\n"
      "                      one per online core)\n"
      "  --batch N           with --models: the batch size (default 1)\n"
      "  --fast              with --models: ours in the fast precision\n"
      "                      (f32 graphs in f16 on a GPU; default: exact)\n"
      "  --resident          with --models: ours also with the input and\n"
      "                      output bound to buffers of the device (no host\n"
      "                      copies), beside the device's own time\n"
      "  --ort PATH          with --models: libonnxruntime.so (default:\n"
      "                      $DG_ORT_LIB, else tests/ort/fetch-ort.sh's\n"
      "                      cache)\n"
      "  --device N          only device N, an index as dg-info lists them,\n"
      "                      real or not (default: every real device);\n"
      "                      with --models: ours on device N, strictly\n"
      "                      (default: the CPU), ORT on the CPU still\n"
      "  --json FILE         also write the JSON lines to FILE\n"
      "  --weights DIR       LeNet's weights (default: the source tree's\n"
      "                      examples/lenet-weights)\n"
      "  --only BENCH,...    with --gpu: run only these of\n"
      "                      sgemm,hgemm,conv,lenet,node (default: all);\n"
      "                      with --models: only these models\n"
      "  --gpu-peak F32,F16  with --gpu: the device's fp32 and fp16 peaks in\n"
      "                      TFLOP/s, e.g. 67,989 for an H200, for the rows'\n"
      "                      %peak (default: none, %peak left empty)\n"
      "  -h, --help          print this help and exit\n"
      "\n"
      "Examples:\n"
      "  dg-bench                      the CPU suite, quick (about a minute)\n"
      "  dg-bench --gpu --only sgemm   SGEMM on every real GPU\n"
      "  dg-bench --models --full      whole models against ONNX Runtime\n"
      "\n"
      "Environment: DG_ORT_LIB (ONNX Runtime for --models), DG_CPU_SIMD\n"
      "(a lower CPU SIMD level). OpenBLAS reads OPENBLAS_CORETYPE and\n"
      "OPENBLAS_L2_SIZE; run as\n"
      "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE dg-bench to let it pick\n"
      "its own kernels.\n"
      "Exit status: 0 done, 1 a result check failed, 2 a bad argument.\n",
      f);
}

static int device_threads(const dg_device_info *info) {
  const char *p = strstr(info->driver, " thread");
  if (!p)
    return 0;
  const char *q = p;
  while (q > info->driver && q[-1] >= '0' && q[-1] <= '9')
    q--;
  return q < p ? atoi(q) : 0;
}

static void target_line(const char *what, double value, double goal,
                        int less_is_better, const char *unit,
                        const char *missing) {
  if (value < 0 || !isfinite(value)) {
    printf("target %s : n/a (%s)\n", what, missing);
    return;
  }
  int met = less_is_better ? value < goal : value >= goal;
  printf("target %s : %.3f%s (%s)\n", what, value, unit,
         met ? "met" : "not met");
}

/* Warns when other processes were competing for the cores (Linux). */
static void warn_load(const char *when) {
  double load = 0;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  FILE *lf = fopen("/proc/loadavg", "r");
  if (lf) {
    if (fscanf(lf, "%lf", &load) != 1)
      load = 0;
    fclose(lf);
  }
  if (load > 0.5)
    printf("warning: load average %.2f on %ld CPUs %s: other processes "
           "compete for the cores and the timings are noisy\n",
           load, ncpu, when);
}

/* Per-node cost inside one recorded segment: chains of 1 and 65 relu
 * nodes on 256 floats, (t65 - t1) / 64 in wall time (one submit and one
 * wait per run, so this is what a node adds: its dispatch, its barrier and
 * its timestamps) and in the device's summed node times. */
static void node_overhead(dev *d) {
  enum { SHORT = 1, LONG = 65 };
  char check[2][16];
  int reps[2];
  double kus[2], us[2];
  us[0] = bench_gpu_chain_us(ctx, d->index, SHORT, check[0], sizeof check[0],
                             &reps[0], &kus[0]);
  us[1] = bench_gpu_chain_us(ctx, d->index, LONG, check[1], sizeof check[1],
                             &reps[1], &kus[1]);
  row *r = add_row("node_overhead", d->label, "relu chain 1 vs 65, wall");
  snprintf(r->check, sizeof r->check, "%s",
           strcmp(check[0], "ok") || strcmp(check[1], "ok") ? "FAIL" : "ok");
  r->reps = reps[1];
  r->ours_us = us[0] > 0 && us[1] > 0 ? (us[1] - us[0]) / (LONG - SHORT) : -1;
  print_row(r);
  row wall = *r; /* add_row may move the rows */
  row *k = add_row("node_overhead", d->label, "relu chain 1 vs 65, device");
  snprintf(k->check, sizeof k->check, "%s", wall.check);
  k->reps = wall.reps;
  k->ours_us =
      kus[0] > 0 && kus[1] > 0 ? (kus[1] - kus[0]) / (LONG - SHORT) : -1;
  print_row(k);
}

/* The GPU suite: on every non-CPU device, SGEMM 4096^3, HGEMM 4096^3 and
 * 8192^3 (where the device runs f16), f32 and f16 conv on the ResNet-50
 * 3x3 layers at batch 32, LeNet batch-1 latency; CLBlast SGEMM as the
 * OpenCL peer when built with it. cuBLAS/cuDNN figures come from
 * tools/gpu_peers.py run in the same command. With --gpu-peak the rows
 * carry the fraction of the device's peak (fp32 rows against the fp32
 * figure, f16 ones against the fp16 one; with one device in mind, so use
 * it with --device). */
static int gpu_suite(const opts *o, dev *devs, int ndev, FILE *jf) {
  int failed = 0;
  for (int i = 0; i < ndev; i++) {
    dev *d = &devs[i];
    if (d->info.kind == DG_DEVICE_CPU)
      continue;
    int f16 = (d->info.dtypes >> DG_DTYPE_F16) & 1;
    static const int gemm[][2] = {
        {4096, DG_DTYPE_F32}, {4096, DG_DTYPE_F16}, {8192, DG_DTYPE_F16}};
    for (int g = 0; g < 3; g++) {
      if ((gemm[g][1] == DG_DTYPE_F16 && !f16) ||
          !wanted(o, gemm[g][1] == DG_DTYPE_F16 ? "hgemm" : "sgemm"))
        continue;
      int n = o->quick ? gemm[g][0] / 4 : gemm[g][0];
      char shape[40];
      snprintf(shape, sizeof shape, "%dx%dx%d %s", n, n, n,
               dg_dtype_name((dg_dtype)gemm[g][1]));
      row *r = add_row(gemm[g][1] == DG_DTYPE_F16 ? "hgemm" : "sgemm", d->label,
                       shape);
      double kus, rus;
      double us =
          bench_gpu_gemm_us(ctx, d->index, n, n, n, (dg_dtype)gemm[g][1],
                            r->check, sizeof r->check, &r->reps, &kus, &rus);
      double peak =
          gemm[g][1] == DG_DTYPE_F16 ? o->gpu_peak_f16 : o->gpu_peak_f32;
      set_perf(r, 2.0 * n * n * n, us, peak);
      row copy = *r; /* the device's kernel time, without host transfers */
      row *k = add_row(copy.bench, d->label, copy.shape);
      *k = copy;
      snprintf(k->bench, sizeof k->bench, "%.12s_kern", copy.bench);
      set_perf(k, 2.0 * n * n * n, kus, peak);
      r = &rows[nrows - 2];
      if (gemm[g][1] == DG_DTYPE_F32 && d->info.kind == DG_DEVICE_OPENCL) {
        char pname[40];
        double pus = peer_clblast_sgemm_us(n, n, n, pname, sizeof pname);
        if (pus > 0) {
          set_peer(r, pname, pus);
          set_peer(&rows[nrows - 1], pname, pus); /* like for like */
        }
      }
      print_row(r);
      print_row(&rows[nrows - 1]);
      /* With device buffers bound: the wall time against the kernel's. */
      copy = rows[nrows - 1];
      row *res = add_row(copy.bench, d->label, copy.shape);
      *res = copy;
      snprintf(res->bench, sizeof res->bench, "%.12s_res",
               gemm[g][1] == DG_DTYPE_F16 ? "hgemm" : "sgemm");
      set_perf(res, 2.0 * n * n * n, rus, peak);
      if (rus < 0)
        snprintf(res->check, sizeof res->check, "FAIL");
      print_row(res);
      if (rus > 0 && kus > 0)
        printf("  %s %s: wall with device buffers %.1f us = %.3fx the "
               "kernel's %.1f us\n",
               res->bench, res->shape, rus, rus / kus, kus);
    }
    for (int l = 0; l < NLAYERS; l++) {
      for (int t = 0; t < 2; t++) {
        dg_dtype dt = t ? DG_DTYPE_F16 : DG_DTYPE_F32;
        if ((dt == DG_DTYPE_F16 && !f16) || !wanted(o, "conv"))
          continue;
        int C = (int)conv_layers[l][0], H = (int)conv_layers[l][1];
        int batch = o->quick ? 4 : 32;
        char shape[48];
        snprintf(shape, sizeof shape, "3x3 %d@%dx%d b%d %s", C, H, H, batch,
                 dg_dtype_name(dt));
        row *r = add_row("conv_gpu", d->label, shape);
        double kus;
        double us =
            bench_gpu_conv_us(ctx, d->index, batch, C, H, H, dt, r->check,
                              sizeof r->check, &r->reps, &kus);
        double peak = t ? o->gpu_peak_f16 : o->gpu_peak_f32;
        set_perf(r, batch * conv_flops(C, C, H, H), us, peak);
        print_row(r);
        row copy = *r;
        row *k = add_row("conv_kern", d->label, copy.shape);
        *k = copy;
        snprintf(k->bench, sizeof k->bench, "conv_kern");
        set_perf(k, batch * conv_flops(C, C, H, H), kus, peak);
        print_row(k);
      }
    }
    if (wanted(o, "node"))
      node_overhead(d);
    char err[256];
    row tmp;
    memset(&tmp, 0, sizeof tmp);
    double us = wanted(o, "lenet") ? our_lenet(d, o->weights, 1, 0, 2000, &tmp,
                                               err, sizeof err)
                                   : -1;
    if (us > 0) {
      row *r = add_row("lenet_b1", d->label, "f32, latency");
      snprintf(r->check, sizeof r->check, "%s", tmp.check);
      r->reps = tmp.reps;
      r->ours_us = us;
      print_row(r);
    }
  }
  printf("\n");
  for (int i = 0; i < nrows; i++) {
    failed += !strcmp(rows[i].check, "FAIL");
    json_row(stdout, &rows[i]);
    if (jf)
      json_row(jf, &rows[i]);
  }
  return failed ? 1 : 0;
}

int main(int argc, char **argv) {
  static const char P[] = "dg-bench";
  opts o = {
      .quick = 1, .device = -1, .m = {.batch = 1, .rounds = 3, .seconds = 1.0}};
  const char *device = NULL, *gpu_only = NULL, *models_only = NULL;
  static char zoo[1024];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (cli_is_help(a)) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--quick")) {
      o.quick = 1;
    } else if (!strcmp(a, "--full")) {
      o.quick = 0;
    } else if (!strcmp(a, "--all-devices")) {
      o.all_devices = 1;
    } else if (!strcmp(a, "--gpu")) {
      o.gpu = 1;
    } else if (!strcmp(a, "--scale")) {
      o.scale = 1;
    } else if (!strcmp(a, "--models")) {
      o.models = 1;
      if (i + 1 < argc && argv[i + 1][0] != '-')
        o.m.dir = argv[++i];
    } else if (!strcmp(a, "--threads") || !strcmp(a, "--batch")) {
      const char *v = cli_value(P, argc, argv, &i, "N >= 1");
      char *end = NULL;
      long k = v ? strtol(v, &end, 10) : 0;
      if (!v || !end || *end || k < 1 || k > 4096) {
        if (v)
          fprintf(stderr,
                  "dg-bench: %s wants a count from 1 to 4096 (got "
                  "'%s')\n",
                  a, v);
        return CLI_USAGE;
      }
      *(a[2] == 't' ? &o.m.threads : &o.m.batch) = (int)k;
      models_only = a;
    } else if (!strcmp(a, "--fast") || !strcmp(a, "--resident")) {
      *(a[2] == 'f' ? &o.m.fast : &o.m.resident) = 1;
      models_only = a;
    } else if (!strcmp(a, "--ort")) {
      if (!(o.m.ort = cli_value(P, argc, argv, &i, "PATH")))
        return CLI_USAGE;
      models_only = a;
    } else if (!strcmp(a, "--device")) {
      /* Checked against the context's devices once it exists. */
      if (!(device = cli_value(P, argc, argv, &i, "a device index")))
        return CLI_USAGE;
    } else if (!strcmp(a, "--json")) {
      if (!(o.json = cli_value(P, argc, argv, &i, "FILE")))
        return CLI_USAGE;
    } else if (!strcmp(a, "--weights")) {
      if (!(o.weights = cli_value(P, argc, argv, &i, "DIR")))
        return CLI_USAGE;
    } else if (!strcmp(a, "--only")) {
      /* Checked once the suite is known: GPU benches or model names. */
      if (!(o.m.only = cli_value(P, argc, argv, &i, "BENCH,... or MODEL,...")))
        return CLI_USAGE;
    } else if (!strcmp(a, "--gpu-peak")) {
      const char *v = cli_value(P, argc, argv, &i, "F32,F16 in TFLOP/s");
      if (!v)
        return CLI_USAGE;
      char *end = NULL;
      double f32 = strtod(v, &end), f16 = -1;
      if (end && *end == ',')
        f16 = strtod(end + 1, &end);
      if (!end || *end || !(f32 > 0) || !(f16 > 0)) {
        fprintf(stderr,
                "dg-bench: --gpu-peak wants two positive TFLOP/s figures, "
                "fp32 and fp16, as F32,F16 (got '%s')\n",
                v);
        return CLI_USAGE;
      }
      o.gpu_peak_f32 = f32 * 1e3;
      o.gpu_peak_f16 = f16 * 1e3;
      gpu_only = a;
    } else {
      return cli_unknown(P, a);
    }
  }
  if (o.scale + o.gpu + o.models > 1) {
    fprintf(stderr, "dg-bench: --scale, --gpu and --models are separate "
                    "suites: pick one\n");
    return CLI_USAGE;
  }
  if (models_only && !o.models) {
    fprintf(stderr, "dg-bench: %s applies to --models only\n", models_only);
    return CLI_USAGE;
  }
  if (o.models) {
    o.m.device = -1;
    if (device) {
      char *end;
      long k = strtol(device, &end, 10);
      if (*end || end == device || k < 0 || k > 255) {
        fprintf(stderr,
                "dg-bench: --device wants a device index, as "
                "dg-info lists them (got '%s')\n",
                device);
        return CLI_USAGE;
      }
      o.m.device = (int)k;
    }
    if (!o.m.dir) {
      const char *home = getenv("HOME");
      snprintf(zoo, sizeof zoo, "%s/.cache/directgraph-ci/bench-zoo",
               home ? home : "/tmp");
      o.m.dir = zoo;
    }
    if (o.quick) {
      o.m.rounds = 2;
      o.m.seconds = 0.2;
    }
    FILE *jf = NULL;
    if (o.json && !(jf = fopen(o.json, "w"))) {
      fprintf(stderr, "dg-bench: cannot write %s\n", o.json);
      return 2;
    }
    printf("dg-bench --models: directgraph %s\n", dg_version_string());
#ifdef DG_HAVE_MODELS
    int rc = bench_models(&o.m, jf);
#else
    fprintf(stderr, "dg-bench: --models needs ONNX import, and this build "
                    "has none (-Donnx=disabled or no protobuf-c)\n");
    int rc = 2;
#endif
    if (jf)
      fclose(jf);
    return rc;
  }
  if (o.m.only) {
    if (cli_list(P, "--only", o.m.only, gpu_benches, NGPU_BENCHES, &o.only))
      return CLI_USAGE;
    gpu_only = "--only";
  }
  /* The CPU suite would ignore them. */
  if (gpu_only && !o.gpu) {
    fprintf(stderr, "dg-bench: %s applies to the GPU suite only: add --gpu\n",
            gpu_only);
    return CLI_USAGE;
  }
  if (!o.weights)
    o.weights = DG_SOURCE_DIR "/examples/lenet-weights";
  if (o.quick)
    bench_cfg = (bench_config){.warmup = 2,
                               .min_reps = 5,
                               .max_reps = 100000,
                               .min_seconds = 0.1,
                               .rounds = 1};

  if (dg_context_create(NULL, &ctx) != DG_OK) {
    fprintf(stderr, "dg-bench: cannot create a context\n");
    return 1;
  }
  int ndev_all = dg_context_device_count(ctx);
  if (device) {
    int bad = cli_device(P, "--device", device, ctx, &o.device);
    dg_device_info info;
    if (!bad && o.gpu &&
        dg_context_device_info(ctx, o.device, &info) == DG_OK &&
        info.kind == DG_DEVICE_CPU) {
      /* The GPU suite skips CPU devices: it would run nothing. */
      fprintf(stderr,
              "dg-bench: --device got '%s', a cpu device; valid with "
              "--gpu: a non-CPU device (dg-info lists them)\n",
              device);
      bad = 1;
    }
    if (bad) {
      dg_context_destroy(ctx);
      return CLI_USAGE;
    }
  }

  FILE *jf = NULL;
  if (o.json && !(jf = fopen(o.json, "w"))) {
    fprintf(stderr, "dg-bench: cannot write %s\n", o.json);
    dg_context_destroy(ctx);
    return 2;
  }
  if (o.scale) {
    printf("dg-bench --scale: directgraph %s\n", dg_version_string());
    warn_load("before the run");
    int rc = bench_scale(ctx, o.device, o.quick, jf);
    warn_load("after the run");
    if (jf)
      fclose(jf);
    dg_context_destroy(ctx);
    return rc;
  }

  printf("dg-bench: directgraph %s, %s mode: %d warm-up runs, then the "
         "lowest of %d medians, each of >= %d runs and >= %.1f s\n",
         dg_version_string(), o.quick ? "quick" : "full", bench_cfg.warmup,
         bench_cfg.rounds, bench_cfg.min_reps, bench_cfg.min_seconds);
  const char *ct = getenv("OPENBLAS_CORETYPE"),
             *l2 = getenv("OPENBLAS_L2_SIZE");
  if (ct || l2)
    printf("warning: OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s are set; "
           "OpenBLAS will not pick its own kernels (run with env -u "
           "OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)\n",
           ct ? ct : "(unset)", l2 ? l2 : "(unset)");
  if (peer_dnnl_available())
    printf("peer: %s\n", peer_dnnl_info());
  else
    printf("peer oneDNN not installed\n");
  if (peer_openblas_available())
    printf("peer: %s\n", peer_openblas_info());
  else
    printf("peer OpenBLAS not installed\n");
#ifdef DG_BENCH_X86
  __builtin_cpu_init();
  const char *core = peer_openblas_core();
  if (peer_openblas_available() && core[0] &&
      __builtin_cpu_supports("avx512f") && strcmp(core, "SkylakeX") &&
      strcmp(core, "Cooperlake") && strcmp(core, "SapphireRapids"))
    printf("warning: OpenBLAS runs its %s kernels on this AVX-512 CPU, not "
           "its AVX-512 ones: its SGEMM is below what this machine can do, "
           "so the SGEMM ratio flatters directgraph\n",
           core);
#endif
  warn_load("before the run");

  dev *devs = calloc((size_t)ndev_all, sizeof(dev));
  int ndev = 0;
  for (int i = 0; i < ndev_all; i++) {
    if (o.device >= 0 && i != o.device)
      continue;
    dev *d = &devs[ndev++];
    d->index = i;
    dg_context_device_info(ctx, i, &d->info);
    if (o.device < 0 && !o.all_devices &&
        (d->info.cpu_hosted || d->info.is_simulator)) {
      printf("device %d:%s: %s: left out, it %s (--all-devices or --device "
             "%d to include it)\n",
             i, dg_device_kind_name(d->info.kind), d->info.name,
             d->info.is_simulator ? "is a simulator"
                                  : "computes on the host CPU",
             i);
      ndev--;
      continue;
    }
    snprintf(d->label, sizeof d->label, "%d:%s", i,
             dg_device_kind_name(d->info.kind));
    d->threads = device_threads(&d->info);
    d->peak = d->peak_int8 = -1;
    printf("device %s: %s (%s)\n", d->label, d->info.name, d->info.driver);
  }

  /* The run's expected length, from whole runs timed on the 2-core CI
   * machine (CPU suite) and the H200 (GPU suite), per device, quick and
   * full: a guide printed first, not a promise. */
  double expected = 0;
  int timed = 0; /* the devices the suite runs on */
  for (int i = 0; i < ndev; i++) {
    int s = o.gpu ? (devs[i].info.kind == DG_DEVICE_CPU ? 0
                     : o.quick                          ? GPU_QUICK_S
                                                        : GPU_FULL_S)
            : devs[i].info.kind == DG_DEVICE_CPU
                ? (o.quick ? CPU_QUICK_S : CPU_FULL_S)
                : (o.quick ? CPU_SUITE_GPU_QUICK_S : CPU_SUITE_GPU_FULL_S);
    expected += s;
    timed += s > 0;
  }
  printf("expected: about %.0f s for %d device(s)%s\n", expected, timed,
         o.quick ? " (--full: about 3-4x longer)" : "");
  bench_progress_start(expected);
  print_header();

  /* ---- peak, before anything else warms up a thread pool ---- */
  int trials = o.quick ? 3 : 7;
  peak_kind fk = PEAK_AVX2;
  const char *fk_name = "none";
  int have_fma = 0, have_vnni = 0, have_amx = 0;
#ifdef DG_BENCH_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    fk = PEAK_AVX512;
    fk_name = "f32 zmm fma x16";
    have_fma = 1;
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    fk = PEAK_AVX2;
    fk_name = "f32 ymm fma x12";
    have_fma = 1;
  }
  have_vnni = __builtin_cpu_supports("avx512vnni");
  have_amx = have_vnni && amx_granted();
#endif
  if (!have_fma)
    printf("no AVX-512/AVX2 FMA: %%peak not reported\n");
  else {
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    int tcounts[8], nt = 0;
    tcounts[nt++] = 1;
    for (int i = 0; i < ndev; i++) {
      int t = devs[i].info.kind == DG_DEVICE_CPU
                  ? (devs[i].threads > 0 ? devs[i].threads : (int)nproc)
                  : 0;
      if (t <= 0)
        continue;
      int seen = 0;
      for (int j = 0; j < nt; j++)
        seen |= tcounts[j] == t;
      if (!seen && nt < 8)
        tcounts[nt++] = t;
    }
    for (int j = 0; j < nt; j++) {
      char shape[40];
      double pf = measure_peak(fk, tcounts[j], trials);
      snprintf(shape, sizeof shape, "%s %dthr", fk_name, tcounts[j]);
      row *r = add_row("peak_fma", "cpu", shape);
      r->gflops = pf;
      r->reps = trials;
      print_row(r);
      double pv = -1;
      if (have_vnni) {
        pv = measure_peak(PEAK_VNNI, tcounts[j], trials);
        snprintf(shape, sizeof shape, "u8s8 vpdpbusd x16 %dthr", tcounts[j]);
        r = add_row("peak_vnni", "cpu", shape);
        r->gflops = pv;
        r->reps = trials;
        print_row(r);
      }
      if (have_amx) { /* the int8 GEMM's tiles: the machine's int8 peak */
        double pa = measure_peak(PEAK_AMX, tcounts[j], trials);
        snprintf(shape, sizeof shape, "u8s8 tdpbsud x4 %dthr", tcounts[j]);
        r = add_row("peak_amx", "cpu", shape);
        r->gflops = pa;
        r->reps = trials;
        print_row(r);
        if (pa > pv)
          pv = pa;
      }
      for (int i = 0; i < ndev; i++)
        if (devs[i].info.kind == DG_DEVICE_CPU &&
            (devs[i].threads > 0 ? devs[i].threads : (int)nproc) ==
                tcounts[j]) {
          devs[i].peak = pf;
          devs[i].peak_int8 = pv;
        }
    }
  }

  if (o.gpu) {
    int rc = gpu_suite(&o, devs, ndev, jf);
    if (jf)
      fclose(jf);
    free(devs);
    free(rows);
    dg_context_destroy(ctx);
    return rc;
  }

  /* ---- conv f32 and int8 on the ResNet-50 3x3 layers ---- */
  double *f32_us = calloc((size_t)ndev * NLAYERS, sizeof(double));
  for (int l = 0; l < NLAYERS; l++) {
    int C = (int)conv_layers[l][0], H = (int)conv_layers[l][1],
        W = (int)conv_layers[l][2];
    double flops = conv_flops(C, C, H, W);
    char shape[40];
    snprintf(shape, sizeof shape, "3x3 %d@%dx%d ->%d", C, H, W, C);
    int first = nrows;
    for (int i = 0; i < ndev; i++) {
      row *r = add_row("conv_f32", devs[i].label, shape);
      double us = our_conv_f32(&devs[i], C, H, W, r);
      set_perf(r, flops, us, devs[i].peak);
      f32_us[i * NLAYERS + l] = us;
    }
    bench_settle(50);
    double pus = peer_dnnl_conv_f32_us(C, C, H, W, 0);
    bench_settle(200); /* let OpenMP's spinning workers go to sleep */
    char pname[40];
    snprintf(pname, sizeof pname, "dnnl:%s", peer_dnnl_last_impl());
    for (int i = first; i < nrows; i++) {
      if (peer_dnnl_available())
        set_peer(&rows[i], pname, pus);
      print_row(&rows[i]);
    }

    first = nrows;
    for (int i = 0; i < ndev; i++) {
      row *r = add_row("conv_int8", devs[i].label, shape);
      double us = our_conv_int8(&devs[i], C, H, W, r);
      set_perf(r, flops, us, devs[i].peak_int8);
      set_peer(r, "dg conv_f32", f32_us[i * NLAYERS + l]);
      row copy = *r; /* add_row may move rows */
      row *r2 = add_row("conv_int8", devs[i].label, shape);
      *r2 = copy;
      r2->peer[0] = 0;
      r2->peer_us = r2->ratio = -1;
    }
    bench_settle(50);
    pus = peer_dnnl_conv_u8s8_us(C, C, H, W, 0);
    bench_settle(200);
    snprintf(pname, sizeof pname, "dnnl:%s", peer_dnnl_last_impl());
    for (int i = first; i < nrows; i++) {
      if ((i - first) % 2 == 1 && peer_dnnl_available())
        set_peer(&rows[i], pname, pus);
      print_row(&rows[i]);
    }
  }

  /* ---- SGEMM ---- */
  static const int gemm_sizes[] = {256, 1024, 2048};
  for (int gi = 0; gi < 3; gi++) {
    int n = gemm_sizes[gi];
    char shape[40];
    snprintf(shape, sizeof shape, "%dx%dx%d", n, n, n);
    int first = nrows;
    for (int i = 0; i < ndev; i++) {
      row *r = add_row("sgemm", devs[i].label, shape);
      double us = our_sgemm(&devs[i], n, n, n, r);
      set_perf(r, 2.0 * n * n * n, us, devs[i].peak);
    }
    bench_settle(50);
    double pus = peer_openblas_sgemm_us(n, n, n, 0);
    bench_settle(300); /* OpenBLAS workers spin for ~0.1 s after a call */
    for (int i = first; i < nrows; i++) {
      if (peer_openblas_available())
        set_peer(&rows[i], "openblas", pus);
      print_row(&rows[i]);
    }
  }

  /* ---- LeNet ---- */
  int lenet_missing = 0;
  char err[512] = "";
  for (int i = 0; i < ndev && !lenet_missing; i++) {
    for (int int8 = 0; int8 < 2 && !lenet_missing; int8++) {
      static const int batches[] = {1, 64};
      for (int bi = 0; bi < 2; bi++) {
        int batch = batches[bi];
        char bench[24];
        snprintf(bench, sizeof bench, "lenet_b%d", batch);
        row tmp;
        memset(&tmp, 0, sizeof tmp);
        double us = our_lenet(&devs[i], o.weights, batch, int8,
                              batch == 1 ? 2000 : 0, &tmp, err, sizeof err);
        if (us == -2) {
          lenet_missing = 1;
          break;
        }
        row *r =
            add_row(bench, devs[i].label,
                    batch == 1 ? (int8 ? "int8, latency" : "f32, latency")
                               : (int8 ? "int8, per image" : "f32, per image"));
        snprintf(r->check, sizeof r->check, "%s", tmp.check);
        r->reps = tmp.reps;
        r->ours_us = us > 0 ? us / batch : us;
        print_row(r);
      }
    }
  }
  if (lenet_missing)
    printf("lenet: skipped: lenet weights missing (%s)\n", err);

  /* ---- JSON ---- */
  printf("\n");
  for (int i = 0; i < nrows; i++) {
    json_row(stdout, &rows[i]);
    if (jf)
      json_row(jf, &rows[i]);
  }

  /* ---- targets ---- */
  printf("\n");
  int failed_checks = 0;
  for (int i = 0; i < nrows; i++)
    failed_checks += !strcmp(rows[i].check, "FAIL");
  for (int i = 0; i < nrows; i++) {
    row *r = &rows[i];
    char what[128];
    if (!strcmp(r->bench, "conv_f32")) {
      snprintf(what, sizeof what, "conv f32 %s on %s, ratio vs oneDNN >= 0.5",
               r->shape, r->device);
      target_line(what, r->ratio, 0.5, 0, "",
                  peer_dnnl_available() ? "not measured"
                                        : "peer oneDNN not installed");
    }
  }
  for (int i = 0; i < nrows; i++) {
    row *r = &rows[i];
    char what[128];
    if (!strcmp(r->bench, "sgemm") && !strcmp(r->shape, "1024x1024x1024")) {
      snprintf(what, sizeof what,
               "sgemm 1024^3 on %s, ratio vs OpenBLAS >= 0.6", r->device);
      target_line(what, r->ratio, 0.6, 0, "",
                  peer_openblas_available() ? "not measured"
                                            : "peer OpenBLAS not installed");
    }
  }
  for (int i = 0; i < nrows; i++) {
    row *r = &rows[i];
    char what[128];
    if (!strcmp(r->bench, "conv_int8") && !strcmp(r->peer, "dg conv_f32")) {
      snprintf(what, sizeof what, "conv int8 %s on %s, speedup over f32 >= 2",
               r->shape, r->device);
      target_line(what, r->ratio, 2.0, 0, "x", "not measured");
    }
  }
  int any_lenet = 0;
  for (int i = 0; i < nrows; i++) {
    row *r = &rows[i];
    char what[128];
    if (!strcmp(r->bench, "lenet_b1")) {
      any_lenet = 1;
      snprintf(what, sizeof what, "lenet batch-1 %s on %s < 50 us",
               strncmp(r->shape, "int8", 4) ? "f32" : "int8", r->device);
      target_line(what, r->ours_us, 50.0, 1, " us", "not measured");
    }
  }
  if (!any_lenet)
    printf("target lenet batch-1 < 50 us : n/a (skipped: lenet weights "
           "missing)\n");
  warn_load("at the end of the run (1-minute average)");
  if (failed_checks)
    printf("%d result check(s) FAILED: those timings are of wrong results\n",
           failed_checks);

  if (jf)
    fclose(jf);
  free(f32_us);
  free(devs);
  free(rows);
  dg_context_destroy(ctx);
  return failed_checks ? 1 : 0;
}
