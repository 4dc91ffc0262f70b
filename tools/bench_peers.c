/* dg-bench's peers: oneDNN convolutions and OpenBLAS SGEMM, timed with the
 * same loop as directgraph's side. Not part of the library. */
#define _POSIX_C_SOURCE 200809L
#include "bench_peers.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef DG_HAVE_DNNL
#include <dnnl.h>
#endif
#ifdef DG_HAVE_OPENBLAS
#include <cblas.h>
#endif

/* ---- timing ------------------------------------------------------------ */

bench_config bench_cfg = {.warmup = 3,
                          .min_reps = 20,
                          .max_reps = 100000,
                          .min_seconds = 0.3,
                          .rounds = 3};

double bench_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

void bench_settle(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One round: median of at least min_reps calls and min_seconds. */
static double one_round(bench_fn fn, void *arg, int min_reps, int *out_n) {
  int max_reps = bench_cfg.max_reps > min_reps ? bench_cfg.max_reps : min_reps;
  int cap = min_reps < 1024 ? 1024 : min_reps;
  double *t = malloc(sizeof(double) * (size_t)cap);
  if (!t)
    return -1;
  int n = 0;
  double start = bench_now_us();
  while (n < min_reps || (n < max_reps && bench_now_us() - start <
                                              bench_cfg.min_seconds * 1e6)) {
    if (n == cap) {
      double *nt = realloc(t, sizeof(double) * (size_t)cap * 2);
      if (!nt)
        break;
      t = nt;
      cap *= 2;
    }
    double t0 = bench_now_us();
    if (fn(arg)) {
      free(t);
      return -1;
    }
    t[n++] = bench_now_us() - t0;
  }
  qsort(t, (size_t)n, sizeof t[0], cmp_double);
  double med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  free(t);
  *out_n += n;
  return med;
}

double bench_conv3x3_point(const float *x, const float *w, int C, int H, int W,
                           int n, int k, int oy, int ox, double *mag) {
  double ref = 0;
  *mag = 0;
  for (int ci = 0; ci < C; ci++)
    for (int ky = 0; ky < 3; ky++)
      for (int kx = 0; kx < 3; kx++) {
        int iy = oy + ky - 1, ix = ox + kx - 1;
        if (iy < 0 || iy >= H || ix < 0 || ix >= W)
          continue;
        double t = (double)x[(((size_t)n * C + ci) * H + iy) * W + ix] *
                   w[(((size_t)k * C + ci) * 3 + ky) * 3 + kx];
        ref += t;
        *mag += fabs(t);
      }
  return ref;
}

double bench_median_us(bench_fn fn, void *arg, int reps, int *out_reps) {
  int min_reps = reps > 0 ? reps : bench_cfg.min_reps;
  for (int i = 0; i < bench_cfg.warmup; i++)
    if (fn(arg))
      return -1;
  int n = 0, rounds = bench_cfg.rounds > 0 ? bench_cfg.rounds : 1;
  double best = -1;
  for (int r = 0; r < rounds; r++) {
    double med = one_round(fn, arg, min_reps, &n);
    if (med < 0)
      return -1;
    if (best < 0 || med < best)
      best = med;
  }
  if (out_reps)
    *out_reps = n;
  return best;
}

#if defined(DG_HAVE_DNNL) || defined(DG_HAVE_OPENBLAS)
/* Deterministic fill so every run times the same data. */
static uint32_t lcg(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}

static void fill_f32(float *p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; i++)
    p[i] = (float)(lcg(&seed) % 2001) / 1000.0f - 1.0f;
}
#endif

/* ---- oneDNN
 * ------------------------------------------------------------------ */

#ifdef DG_HAVE_DNNL

static char dnnl_impl[128];
static char dnnl_info[128];

int peer_dnnl_available(void) { return 1; }

const char *peer_dnnl_info(void) {
  const dnnl_version_t *v = dnnl_version();
  const char *rt = v->cpu_runtime == DNNL_RUNTIME_OMP          ? "omp"
                   : v->cpu_runtime == DNNL_RUNTIME_TBB        ? "tbb"
                   : v->cpu_runtime == DNNL_RUNTIME_SEQ        ? "seq"
                   : v->cpu_runtime == DNNL_RUNTIME_THREADPOOL ? "threadpool"
                                                               : "?";
  snprintf(dnnl_info, sizeof dnnl_info, "oneDNN %d.%d.%d (cpu runtime %s)",
           v->major, v->minor, v->patch, rt);
  return dnnl_info;
}

const char *peer_dnnl_last_impl(void) { return dnnl_impl; }

typedef struct dnnl_run {
  dnnl_primitive_t prim;
  dnnl_stream_t stream;
  int nargs;
  dnnl_exec_arg_t args[4];
} dnnl_run;

static int dnnl_run_once(void *arg) {
  dnnl_run *r = arg;
  if (dnnl_primitive_execute(r->prim, r->stream, r->nargs, r->args) !=
      dnnl_success)
    return -1;
  return dnnl_stream_wait(r->stream) == dnnl_success ? 0 : -1;
}

/* A memory in the layout `want`, filled from a plain buffer `user_md`
 * holding data (reordered outside any timed region). */
static dnnl_memory_t dnnl_mem_from(dnnl_engine_t eng, dnnl_stream_t st,
                                   const dnnl_memory_desc_t *user_md,
                                   void *data, const dnnl_memory_desc_t *want) {
  dnnl_memory_t user = NULL, mem = NULL;
  dnnl_primitive_desc_t rpd = NULL;
  dnnl_primitive_t reorder = NULL;
  if (dnnl_memory_create(&user, user_md, eng, data) != dnnl_success)
    return NULL;
  if (dnnl_memory_create(&mem, want, eng, DNNL_MEMORY_ALLOCATE) != dnnl_success)
    goto fail;
  if (dnnl_reorder_primitive_desc_create(&rpd, user_md, eng, want, eng, NULL) !=
          dnnl_success ||
      dnnl_primitive_create(&reorder, rpd) != dnnl_success)
    goto fail;
  dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, mem}};
  if (dnnl_primitive_execute(reorder, st, 2, a) != dnnl_success ||
      dnnl_stream_wait(st) != dnnl_success)
    goto fail;
  dnnl_primitive_destroy(reorder);
  dnnl_primitive_desc_destroy(rpd);
  dnnl_memory_destroy(user);
  return mem;
fail:
  if (reorder)
    dnnl_primitive_destroy(reorder);
  if (rpd)
    dnnl_primitive_desc_destroy(rpd);
  if (mem)
    dnnl_memory_destroy(mem);
  dnnl_memory_destroy(user);
  return NULL;
}

static double dnnl_conv(int C, int K, int H, int W, int reps, int int8) {
  double result = -1;
  dnnl_engine_t eng = NULL;
  dnnl_stream_t st = NULL;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_t prim = NULL;
  dnnl_memory_t src = NULL, wei = NULL, bia = NULL, dst = NULL;
  size_t xn = (size_t)C * H * W, wn = (size_t)K * C * 9;
  void *x = malloc(xn * 4), *w = malloc(wn * 4), *b = malloc((size_t)K * 4);
  float *scales = malloc(sizeof(float) * (size_t)K);
  dnnl_impl[0] = 0;
  if (!x || !w || !b || !scales)
    goto done;
  if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success ||
      dnnl_stream_create(&st, eng, dnnl_stream_default_flags) != dnnl_success)
    goto done;

  dnnl_data_type_t xt = int8 ? dnnl_u8 : dnnl_f32;
  dnnl_data_type_t wt = int8 ? dnnl_s8 : dnnl_f32;
  dnnl_data_type_t yt = int8 ? dnnl_s8 : dnnl_f32;
  dnnl_dims_t sd = {1, C, H, W}, wd = {K, C, 3, 3}, dd = {1, K, H, W};
  dnnl_dims_t bd = {K}, strides = {1, 1}, pad = {1, 1};
  dnnl_memory_desc_t src_any, w_any, dst_any, b_md, src_user, w_user;
  dnnl_memory_desc_init_by_tag(&src_any, 4, sd, xt, dnnl_format_tag_any);
  dnnl_memory_desc_init_by_tag(&w_any, 4, wd, wt, dnnl_format_tag_any);
  dnnl_memory_desc_init_by_tag(&dst_any, 4, dd, yt, dnnl_format_tag_any);
  dnnl_memory_desc_init_by_tag(&b_md, 1, bd, dnnl_s32, dnnl_x);
  dnnl_memory_desc_init_by_tag(&src_user, 4, sd, xt, dnnl_nchw);
  dnnl_memory_desc_init_by_tag(&w_user, 4, wd, wt, dnnl_oihw);

  dnnl_convolution_desc_t cd;
  if (dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                         dnnl_convolution_direct, &src_any,
                                         &w_any, int8 ? &b_md : NULL, &dst_any,
                                         strides, pad, pad) != dnnl_success)
    goto done;
  if (int8) {
    if (dnnl_primitive_attr_create(&attr) != dnnl_success)
      goto done;
    for (int k = 0; k < K; k++)
      scales[k] = 1.0f / (float)(2048 + 64 * (k % 16)) / (float)C;
    if (dnnl_primitive_attr_set_output_scales(attr, K, 1 << 1, scales) !=
        dnnl_success)
      goto done;
  }
  if (dnnl_primitive_desc_create(&pd, &cd, attr, eng, NULL) != dnnl_success)
    goto done;
  const char *impl = NULL;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) ==
          dnnl_success &&
      impl)
    snprintf(dnnl_impl, sizeof dnnl_impl, "%s", impl);

  /* Data: plain buffers, reordered into oneDNN's chosen layouts. */
  uint32_t seed = 12345;
  if (int8) {
    uint8_t *xu = x;
    int8_t *ws = w;
    int32_t *bs = b;
    for (size_t i = 0; i < xn; i++)
      xu[i] = (uint8_t)(lcg(&seed) & 255);
    for (size_t i = 0; i < wn; i++)
      ws[i] = (int8_t)((int)(lcg(&seed) % 255) - 127);
    for (int k = 0; k < K; k++)
      bs[k] = (int32_t)(lcg(&seed) % 20001) - 10000;
  } else {
    fill_f32(x, xn, 1);
    fill_f32(w, wn, 2);
  }
  const dnnl_memory_desc_t *src_md =
      dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  const dnnl_memory_desc_t *w_md =
      dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  const dnnl_memory_desc_t *dst_md =
      dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  if (!src_md || !w_md || !dst_md)
    goto done;
  src = dnnl_mem_from(eng, st, &src_user, x, src_md);
  wei = dnnl_mem_from(eng, st, &w_user, w, w_md);
  if (!src || !wei ||
      dnnl_memory_create(&dst, dst_md, eng, DNNL_MEMORY_ALLOCATE) !=
          dnnl_success)
    goto done;
  if (int8 && dnnl_memory_create(&bia, &b_md, eng, b) != dnnl_success)
    goto done;
  if (dnnl_primitive_create(&prim, pd) != dnnl_success)
    goto done;

  dnnl_run r = {.prim = prim, .stream = st, .nargs = 0};
  r.args[r.nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, src};
  r.args[r.nargs++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, wei};
  if (int8)
    r.args[r.nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, bia};
  r.args[r.nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST, dst};
  result = bench_median_us(dnnl_run_once, &r, reps, NULL);

done:
  if (prim)
    dnnl_primitive_destroy(prim);
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  if (src)
    dnnl_memory_destroy(src);
  if (wei)
    dnnl_memory_destroy(wei);
  if (bia)
    dnnl_memory_destroy(bia);
  if (dst)
    dnnl_memory_destroy(dst);
  if (st)
    dnnl_stream_destroy(st);
  if (eng)
    dnnl_engine_destroy(eng);
  free(x);
  free(w);
  free(b);
  free(scales);
  return result;
}

double peer_dnnl_conv_f32_us(int C, int K, int H, int W, int reps) {
  return dnnl_conv(C, K, H, W, reps, 0);
}

double peer_dnnl_conv_u8s8_us(int C, int K, int H, int W, int reps) {
  return dnnl_conv(C, K, H, W, reps, 1);
}

#else /* !DG_HAVE_DNNL */

int peer_dnnl_available(void) { return 0; }
const char *peer_dnnl_info(void) { return ""; }
const char *peer_dnnl_last_impl(void) { return ""; }
double peer_dnnl_conv_f32_us(int C, int K, int H, int W, int reps) {
  (void)C, (void)K, (void)H, (void)W, (void)reps;
  return -1;
}
double peer_dnnl_conv_u8s8_us(int C, int K, int H, int W, int reps) {
  (void)C, (void)K, (void)H, (void)W, (void)reps;
  return -1;
}

#endif

/* ---- OpenBLAS -------------------------------------------------------------
 */

#ifdef DG_HAVE_OPENBLAS

static char blas_info[256];

int peer_openblas_available(void) { return 1; }

const char *peer_openblas_core(void) {
#ifdef DG_HAVE_OPENBLAS_INFO
  char *core = openblas_get_corename();
  return core ? core : "";
#else
  return "";
#endif
}

const char *peer_openblas_info(void) {
#ifdef DG_HAVE_OPENBLAS_INFO
  char *cfg = openblas_get_config(), *core = openblas_get_corename();
  snprintf(blas_info, sizeof blas_info, "%s; core %s; %d threads",
           cfg ? cfg : "OpenBLAS", core ? core : "?",
           openblas_get_num_threads());
#else
  snprintf(blas_info, sizeof blas_info, "cblas (OpenBLAS)");
#endif
  return blas_info;
}

typedef struct sgemm_run {
  int M, N, K;
  const float *A, *B;
  float *C;
} sgemm_run;

static int sgemm_once(void *arg) {
  sgemm_run *r = arg;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r->M, r->N, r->K, 1.0f,
              r->A, r->K, r->B, r->N, 0.0f, r->C, r->N);
  return 0;
}

double peer_openblas_sgemm_us(int M, int N, int K, int reps) {
  float *A = malloc(sizeof(float) * (size_t)M * K);
  float *B = malloc(sizeof(float) * (size_t)K * N);
  float *C = malloc(sizeof(float) * (size_t)M * N);
  double result = -1;
  if (A && B && C) {
    fill_f32(A, (size_t)M * K, 3);
    fill_f32(B, (size_t)K * N, 4);
    sgemm_run r = {M, N, K, A, B, C};
    result = bench_median_us(sgemm_once, &r, reps, NULL);
  }
  free(A);
  free(B);
  free(C);
  return result;
}

#else /* !DG_HAVE_OPENBLAS */

int peer_openblas_available(void) { return 0; }
const char *peer_openblas_info(void) { return ""; }
const char *peer_openblas_core(void) { return ""; }
double peer_openblas_sgemm_us(int M, int N, int K, int reps) {
  (void)M, (void)N, (void)K, (void)reps;
  return -1;
}

#endif
