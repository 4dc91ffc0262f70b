/* bench-insn: one kernel, run ITERS times, for counting instructions.
 *
 *   bench-insn CASE SIDE ITERS [SIZE...]
 *     CASE  conv-f32 | conv-int8 (3x3, stride 1, pad 1, C -> C at H x H,
 *           batch 1; SIZE: C H, default 64 56) | sgemm (M = N = K;
 *           SIZE: N, default 256)
 *     SIDE  ours | xnnpack (convs) | openblas (sgemm)
 *
 * tools/insn_bench.py runs it under qemu-aarch64 at two ITERS and takes the
 * difference, so that setup (weight packing, operator creation, the
 * check) cancels and what is left is the cost of one run. Everything runs
 * on one thread. Before the runs, each side's output is checked against a
 * double-precision reference at sampled points; a wrong result prints
 * FAIL and exits 1. Exit 2: SIDE is not built into this program.
 *
 * int8 is s8 x s8 with per-channel weight scales and an s8 output on both
 * sides (XNNPACK's qc8), so both do the same work. */
#define _POSIX_C_SOURCE 200809L
#include <graph.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DG_HAVE_XNNPACK
#include <xnnpack.h>
#endif
#ifdef DG_HAVE_OPENBLAS
#include <cblas.h>
#endif

typedef struct problem {
  int C, H, N;          /* convs: C, H; sgemm: N */
  float *xf, *wf, *yf;  /* f32: x NCHW, w OIHW, y NCHW (ours' layouts) */
  int8_t *xq, *wq, *yq; /* int8, the same layouts */
  int32_t *bq;
  float *wscale, xs, ys;
} problem;

static uint32_t lcg(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "bench-insn: out of memory (%zu bytes)\n", n);
    exit(1);
  }
  return p;
}

static dg_diagnostic diag;

static int fail(const char *what, dg_status st) {
  fprintf(stderr, "bench-insn: %s failed: %s: %s\n", what, dg_status_string(st),
          diag.message);
  return 1;
}

/* ---- the problems and their references ---- */

static void make_conv(problem *p) {
  int C = p->C, H = p->H;
  size_t xn = (size_t)C * H * H, wn = (size_t)C * C * 9;
  uint32_t s = 12345;
  p->xf = xmalloc(xn * 4), p->wf = xmalloc(wn * 4), p->yf = xmalloc(xn * 4);
  p->xq = xmalloc(xn), p->wq = xmalloc(wn), p->yq = xmalloc(xn);
  p->bq = xmalloc(sizeof(int32_t) * (size_t)C);
  p->wscale = xmalloc(sizeof(float) * (size_t)C);
  for (size_t i = 0; i < xn; i++) {
    p->xf[i] = (float)(lcg(&s) % 2001) / 1000.0f - 1.0f;
    p->xq[i] = (int8_t)((int)(lcg(&s) % 255) - 127);
  }
  for (size_t i = 0; i < wn; i++) {
    p->wf[i] = (float)(lcg(&s) % 2001) / 1000.0f - 1.0f;
    p->wq[i] = (int8_t)((int)(lcg(&s) % 255) - 127);
  }
  for (int k = 0; k < C; k++) {
    p->bq[k] = (int32_t)(lcg(&s) % 20001) - 10000;
    p->wscale[k] = 0.01f * (1.0f + (float)(k % 7) / 7.0f);
  }
  p->xs = 1.0f / 64.0f;
  /* An output scale that puts a typical sum near |y| = 30. */
  p->ys = (float)(p->xs * 0.01 * sqrt(9.0 * C) * 73.0 * 73.0 / 30.0);
}

static void free_problem(problem *p) {
  free(p->xf), free(p->wf), free(p->yf), free(p->xq), free(p->wq);
  free(p->yq), free(p->bq), free(p->wscale);
}

/* The sum at output (k, oy, ox), in double (f32) or exactly (int8). */
static double conv_ref(const problem *p, int q, int k, int oy, int ox) {
  int C = p->C, H = p->H;
  double acc = q ? p->bq[k] : 0.0;
  for (int c = 0; c < C; c++)
    for (int ky = 0; ky < 3; ky++)
      for (int kx = 0; kx < 3; kx++) {
        int iy = oy + ky - 1, ix = ox + kx - 1;
        if (iy < 0 || iy >= H || ix < 0 || ix >= H)
          continue;
        size_t xi = ((size_t)c * H + iy) * H + ix;
        size_t wi = (((size_t)k * C + c) * 3 + ky) * 3 + kx;
        acc +=
            q ? (double)p->xq[xi] * p->wq[wi] : (double)p->xf[xi] * p->wf[wi];
      }
  if (!q)
    return acc;
  double v = nearbyint(acc * ((double)p->xs * p->wscale[k] / p->ys));
  return v < -128 ? -128 : v > 127 ? 127 : v;
}

/* Checks 64 sampled outputs; at(k, y, x) reads the side's output. A
 * double-precision multiplier differs from the exact fp32 one by at most
 * one step, hence the int8 tolerance of 1. */
static int conv_check(const problem *p, int q,
                      double (*at)(const problem *, int, int, int)) {
  uint32_t s = 99;
  int bad = 0;
  for (int i = 0; i < 64; i++) {
    int k = (int)(lcg(&s) % (uint32_t)p->C);
    int oy = (int)(lcg(&s) % (uint32_t)p->H),
        ox = (int)(lcg(&s) % (uint32_t)p->H);
    double ref = conv_ref(p, q, k, oy, ox), got = at(p, k, oy, ox);
    if (!(fabs(got - ref) <= (q ? 1.0 : 1e-3 * (1.0 + fabs(ref)))))
      bad++;
  }
  printf("check: %s (%d of 64 sampled outputs wrong)\n", bad ? "FAIL" : "ok",
         bad);
  return bad ? 1 : 0;
}

static double ours_at_f32(const problem *p, int k, int y, int x) {
  return p->yf[((size_t)k * p->H + y) * p->H + x];
}
static double ours_at_q8(const problem *p, int k, int y, int x) {
  return p->yq[((size_t)k * p->H + y) * p->H + x];
}

/* SGEMM operands of e elements each; returns the generator's state. */
static uint32_t sgemm_fill(float *a, float *b, size_t e) {
  uint32_t s = 7;
  for (size_t i = 0; i < e; i++) {
    a[i] = (float)(lcg(&s) % 2001) / 1000.0f - 1.0f;
    b[i] = (float)(lcg(&s) % 2001) / 1000.0f - 1.0f;
  }
  return s;
}

/* Checks 64 sampled entries of C = A B (n x n) in double; prints the
 * verdict and returns the number wrong. */
static int sgemm_check(const float *a, const float *b, const float *c, int n,
                       uint32_t s) {
  int bad = 0;
  for (int t = 0; t < 64; t++) {
    int i = (int)(lcg(&s) % (uint32_t)n), j = (int)(lcg(&s) % (uint32_t)n);
    double ref = 0, mag = 0;
    for (int k = 0; k < n; k++) {
      ref += (double)a[(size_t)i * n + k] * b[(size_t)k * n + j];
      mag += fabs((double)a[(size_t)i * n + k] * b[(size_t)k * n + j]);
    }
    bad += !(fabs(c[(size_t)i * n + j] - ref) <= 1e-5 * mag + 1e-6);
  }
  printf("check: %s (%d of 64 sampled outputs wrong)\n", bad ? "FAIL" : "ok",
         bad);
  return bad;
}

/* ---- ours, through graph.h ---- */

static dg_context *ctx;

static int ours_conv(problem *p, int q, int iters) {
  int C = p->C, H = p->H;
  dg_graph *g = dg_graph_create(ctx, "conv");
  dg_conv2d_params cp = {.padding = DG_PADDING_EXPLICIT, .pads = {1, 1, 1, 1}};
  dg_tensor_desc xd = {.dtype = q ? DG_DTYPE_I8 : DG_DTYPE_F32,
                       .rank = 4,
                       .dims = {1, C, H, H},
                       .quant = {.scale = q ? p->xs : 0.0f}};
  dg_tensor_desc wd = {
      .dtype = q ? DG_DTYPE_I8 : DG_DTYPE_F32, .rank = 4, .dims = {C, C, 3, 3}};
  if (q)
    wd.quant = (dg_quant_params){
        .axis = 0, .channel_count = C, .channel_scales = p->wscale};
  dg_tensor x = dg_graph_input(g, "x", &xd), y;
  dg_tensor w = dg_graph_constant(g, "w", &wd, q ? (void *)p->wq : p->wf, 0);
  if (q) {
    dg_tensor_desc bd = {.dtype = DG_DTYPE_I32, .rank = 1, .dims = {C}};
    dg_tensor b = dg_graph_constant(g, "b", &bd, p->bq, 0);
    dg_quant_params yq = {.scale = p->ys};
    y = dg_graph_qconv2d(g, "conv", x, w, b, &cp, DG_DTYPE_I8, &yq);
  } else {
    y = dg_graph_conv2d(g, "conv", x, w, DG_TENSOR_NONE, &cp);
  }
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  dg_session *s = NULL;
  dg_status st = dg_graph_compile(g, NULL, &s, &diag);
  dg_graph_destroy(g);
  if (st != DG_OK)
    return fail("compile", st);
  size_t xn = (size_t)C * H * H;
  dg_binding in = {"x", q ? (void *)p->xq : p->xf, xn * (q ? 1 : 4)};
  dg_binding out = {"y", q ? (void *)p->yq : p->yf, xn * (q ? 1 : 4)};
  int rc = 0;
  for (int i = 0; i < iters && !rc; i++)
    if ((st = dg_session_run(s, &in, 1, &out, 1, &diag)) != DG_OK)
      rc = fail("run", st);
  if (!rc)
    rc = conv_check(p, q, q ? ours_at_q8 : ours_at_f32);
  dg_session_destroy(s);
  return rc;
}

static int ours_sgemm(int n, int iters) {
  size_t e = (size_t)n * n;
  float *a = xmalloc(e * 4), *b = xmalloc(e * 4), *c = xmalloc(e * 4);
  uint32_t s = sgemm_fill(a, b, e);
  dg_graph *g = dg_graph_create(ctx, "sgemm");
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {n, n}};
  dg_tensor ta = dg_graph_input(g, "a", &d), tb = dg_graph_input(g, "b", &d);
  dg_graph_output(g, "c", dg_graph_matmul(g, "mm", ta, tb), DG_LAYOUT_NCHW);
  dg_session *ses = NULL;
  dg_status st = dg_graph_compile(g, NULL, &ses, &diag);
  dg_graph_destroy(g);
  int rc = st == DG_OK ? 0 : fail("compile", st);
  dg_binding in[2] = {{"a", a, e * 4}, {"b", b, e * 4}}, out = {"c", c, e * 4};
  for (int i = 0; i < iters && !rc; i++)
    if ((st = dg_session_run(ses, in, 2, &out, 1, &diag)) != DG_OK)
      rc = fail("run", st);
  int bad = rc ? 0 : sgemm_check(a, b, c, n, s);
  dg_session_destroy(ses);
  free(a), free(b), free(c);
  return rc ? rc : bad ? 1 : 0;
}

/* ---- the peers ---- */

#ifdef DG_HAVE_XNNPACK
static float *xnn_yf;
static int8_t *xnn_yq;
static double xnn_at(const problem *p, int k, int y, int x) {
  size_t i = ((size_t)y * p->H + x) * p->C + k; /* NHWC */
  return xnn_yq ? (double)xnn_yq[i] : (double)xnn_yf[i];
}

static int xnn_conv(problem *p, int q, int iters) {
  int C = p->C, H = p->H;
  size_t xn = (size_t)C * H * H, wn = (size_t)C * C * 9;
  /* The same problem in XNNPACK's layouts: x NHWC, w OHWI. */
  float *xf = xmalloc(xn * 4), *wf = xmalloc(wn * 4);
  int8_t *xq = xmalloc(xn), *wq = xmalloc(wn);
  xnn_yf = xmalloc(xn * 4), xnn_yq = q ? xmalloc(xn) : NULL;
  for (int c = 0; c < C; c++)
    for (int i = 0; i < H * H; i++) {
      xf[(size_t)i * C + c] = p->xf[(size_t)c * H * H + i];
      xq[(size_t)i * C + c] = p->xq[(size_t)c * H * H + i];
    }
  for (int o = 0; o < C; o++)
    for (int c = 0; c < C; c++)
      for (int t = 0; t < 9; t++) {
        wf[((size_t)o * 9 + t) * C + c] = p->wf[((size_t)o * C + c) * 9 + t];
        wq[((size_t)o * 9 + t) * C + c] = p->wq[((size_t)o * C + c) * 9 + t];
      }
  xnn_operator_t op = NULL;
  enum xnn_status st = xnn_initialize(NULL);
  if (st == xnn_status_success)
    st = q ? xnn_create_convolution2d_nhwc_qc8(
                 1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, C, C, C, C, 0, p->xs,
                 p->wscale, wq, p->bq, 0, p->ys, -128, 127, 0, &op)
           : xnn_create_convolution2d_nhwc_f32(1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1,
                                               C, C, C, C, wf, NULL, -INFINITY,
                                               INFINITY, 0, &op);
  if (st == xnn_status_success)
    st = q ? xnn_setup_convolution2d_nhwc_qc8(op, 1, H, H, xq, xnn_yq, NULL)
           : xnn_setup_convolution2d_nhwc_f32(op, 1, H, H, xf, xnn_yf, NULL);
  for (int i = 0; i < iters && st == xnn_status_success; i++)
    st = xnn_run_operator(op, NULL);
  int rc = 1;
  if (st != xnn_status_success)
    fprintf(stderr, "bench-insn: XNNPACK failed (status %d)\n", (int)st);
  else
    rc = conv_check(p, q, xnn_at);
  xnn_delete_operator(op);
  free(xf), free(wf), free(xq), free(wq), free(xnn_yf), free(xnn_yq);
  return rc;
}
#endif

#ifdef DG_HAVE_OPENBLAS
static int blas_sgemm(int n, int iters) {
  size_t e = (size_t)n * n;
  float *a = xmalloc(e * 4), *b = xmalloc(e * 4), *c = xmalloc(e * 4);
  uint32_t s = sgemm_fill(a, b, e);
  openblas_set_num_threads(1);
  for (int i = 0; i < iters; i++)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n,
                b, n, 0.0f, c, n);
  int bad = sgemm_check(a, b, c, n, s);
  free(a), free(b), free(c);
  return bad ? 1 : 0;
}
#endif

static int usage(void) {
  fprintf(stderr,
          "usage: bench-insn conv-f32|conv-int8 ours|xnnpack ITERS [C H]\n"
          "       bench-insn sgemm ours|openblas ITERS [N]\n"
          "Runs one kernel ITERS times on one thread, checked against a\n"
          "double-precision reference; for tools/insn_bench.py, which counts\n"
          "its instructions under qemu-aarch64.\n"
          "examples:\n"
          "  bench-insn conv-int8 ours 3\n"
          "  bench-insn sgemm openblas 2 512\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 4)
    return usage();
  const char *what = argv[1], *side = argv[2];
  int iters = atoi(argv[3]);
  int conv = !strcmp(what, "conv-f32") || !strcmp(what, "conv-int8");
  int q = !strcmp(what, "conv-int8");
  if (iters < 0 || (!conv && strcmp(what, "sgemm")))
    return usage();
  problem p = {.C = argc > 4 ? atoi(argv[4]) : 64,
               .H = argc > 5 ? atoi(argv[5]) : 56,
               .N = argc > 4 ? atoi(argv[4]) : 256};
  if (p.C < 1 || p.H < 1 || p.N < 1 || p.C > 4096 || p.H > 4096 || p.N > 8192) {
    fprintf(stderr, "bench-insn: sizes must lie in 1..4096 (N: 8192)\n");
    return 2;
  }
  if (!strcmp(side, "ours")) {
    dg_context_options o = {
        .device_kinds = DG_DEVICE_CPU, .cpu_threads = 1, .disable_cache = 1};
    dg_status st = dg_context_create(&o, &ctx);
    if (st != DG_OK) {
      fprintf(stderr, "bench-insn: no context: %s\n", dg_status_string(st));
      return 1;
    }
    int rc;
    if (conv) {
      make_conv(&p);
      rc = ours_conv(&p, q, iters);
      free_problem(&p);
    } else {
      rc = ours_sgemm(p.N, iters);
    }
    dg_context_destroy(ctx);
    return rc;
  }
#ifdef DG_HAVE_XNNPACK
  if (!strcmp(side, "xnnpack") && conv) {
    make_conv(&p);
    int rc = xnn_conv(&p, q, iters);
    free_problem(&p);
    return rc;
  }
#endif
#ifdef DG_HAVE_OPENBLAS
  if (!strcmp(side, "openblas") && !conv)
    return blas_sgemm(p.N, iters);
#endif
  fprintf(stderr, "bench-insn: no %s for %s in this build\n", side, what);
  return 2;
}
