/* dg-bench's GPU suite (see bench_gpu.h). */
#define _POSIX_C_SOURCE 200809L
#include "bench_gpu.h"

#include "bench_peers.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DG_HAVE_CLBLAST
#define CL_TARGET_OPENCL_VERSION 120
#include <clblast_c.h>
#endif

/* f32 -> f16, round to nearest even (normal range; the data is small). */
static uint16_t to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, ax = x & 0x7fffffff;
  if (ax < 0x38800000) /* tiny: flush, the inputs never get here */
    return (uint16_t)sign;
  uint32_t r = ax + 0xfff + ((ax >> 13) & 1);
  return (uint16_t)(sign | ((r - 0x38000000) >> 13));
}

static float from_half(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f,
           m = h & 0x3ff, bits;
  if (!e)
    bits = sign; /* subnormals do not occur in these outputs' checks */
  else
    bits = sign | ((e + 112) << 23) | (m << 13);
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static uint32_t lcg(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}

/* Values exactly representable in f16, so both dtypes see the same data. */
static void fill(float *p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; i++)
    p[i] = (float)((int)(lcg(&seed) % 2001u) - 1000) / 1024.0f;
}

int bench_case_run(void *arg) {
  bench_case *c = arg;
  return dg_session_run(c->s, c->in, c->nin, &c->out, 1, NULL) == DG_OK ? 0
                                                                        : -1;
}

double bench_device_us(bench_fn fn, void *arg, const dg_session *s) {
  double best = -1;
  for (int r = 0; r < 5; r++) {
    if (fn(arg))
      return -1;
    const dg_plan *p = dg_session_plan(s);
    double sum = 0;
    for (int i = 0; i < dg_plan_node_count(p); i++) {
      dg_plan_node n;
      dg_plan_get_node(p, i, &n);
      sum += n.measured_us;
    }
    if (sum > 0 && (best < 0 || sum < best))
      best = sum;
  }
  return best;
}

static double kernel_time_us(bench_case *c) {
  return bench_device_us(bench_case_run, c, c->s);
}

static int resident_run(void *arg) {
  return dg_session_run(arg, NULL, 0, NULL, 0, NULL) == DG_OK ? 0 : -1;
}

/* c's session with its inputs and output bound to buffers of device
 * (written once from c's host data): the median microseconds of a run,
 * after checking that the output equals the host run's bit for bit
 * (c->out holds it); -1 on any failure (said on stderr). */
static double resident_us(dg_context *ctx, int device, bench_case *c) {
  dg_buffer *b[3] = {NULL, NULL, NULL};
  dg_diagnostic d;
  dg_io_info info;
  double us = -1;
  void *back = malloc(c->out.size);
  bool ok = back != NULL;
  for (int i = 0; ok && i <= c->nin; i++) {
    bool out = i == c->nin;
    const dg_binding *bd = out ? &c->out : &c->in[i];
    int idx = out ? 0 : i;
    ok = (out ? dg_session_output_info(c->s, idx, &info)
              : dg_session_input_info(c->s, idx, &info)) == DG_OK &&
         dg_buffer_create(ctx, device, &info.desc, &b[i], &d) == DG_OK &&
         (out || dg_buffer_write(b[i], bd->data, bd->size, &d) == DG_OK) &&
         dg_session_bind_buffer(c->s, bd->name, b[i], &d) == DG_OK;
  }
  if (ok && resident_run(c->s) == 0 &&
      dg_buffer_read(b[c->nin], back, c->out.size, &d) == DG_OK &&
      !memcmp(back, c->out.data, c->out.size))
    us = bench_median_us(resident_run, c->s, 0, NULL);
  else
    fprintf(stderr, "dg-bench: resident run: %s\n",
            ok ? "the buffer's output differs from the host run's" : d.message);
  for (int i = 0; i <= c->nin; i++) {
    const dg_binding *bd = i == c->nin ? &c->out : &c->in[i];
    dg_session_bind_buffer(c->s, bd->name, NULL, NULL);
    dg_buffer_destroy(b[i]);
  }
  free(back);
  return us;
}

dg_session *bench_compile_on(dg_graph *g, int device, const char *what) {
  if (dg_graph_status(g) != DG_OK) {
    fprintf(stderr, "dg-bench: %s: build: %s\n", what,
            dg_graph_error(g)->message);
    return NULL;
  }
  dg_compile_options co = {
      .policy = DG_POLICY_STRICT, .devices = &device, .device_count = 1};
  dg_session *s = NULL;
  dg_diagnostic d;
  if (dg_graph_compile(g, &co, &s, &d) != DG_OK) {
    fprintf(stderr, "dg-bench: %s: compile: %s\n", what, d.message);
    return NULL;
  }
  return s;
}

/* Host buffers in dtype from f32 data. */
static void *as_dtype(const float *src, size_t n, dg_dtype t) {
  size_t es = t == DG_DTYPE_F16 ? 2 : 4;
  void *p = malloc(n * es);
  if (p && t == DG_DTYPE_F16)
    for (size_t i = 0; i < n; i++)
      ((uint16_t *)p)[i] = to_half(src[i]);
  else if (p)
    memcpy(p, src, n * 4);
  return p;
}

static double value(const void *p, size_t i, dg_dtype t) {
  return t == DG_DTYPE_F16 ? from_half(((const uint16_t *)p)[i])
                           : ((const float *)p)[i];
}

double bench_gpu_gemm_us(dg_context *ctx, int device, int M, int N, int K,
                         dg_dtype t, char *check, size_t cs, int *reps,
                         double *kernel_us, double *res_us) {
  *kernel_us = *res_us = -1;
  size_t an = (size_t)M * K, bn = (size_t)K * N, yn = (size_t)M * N;
  size_t es = t == DG_DTYPE_F16 ? 2 : 4;
  float *a = malloc(an * 4), *b = malloc(bn * 4);
  void *ad = NULL, *bd = NULL, *y = malloc(yn * es);
  double us = -1;
  dg_session *s = NULL;
  snprintf(check, cs, "FAIL");
  if (!a || !b || !y)
    goto done;
  fill(a, an, 3);
  fill(b, bn, 4);
  ad = as_dtype(a, an, t);
  bd = as_dtype(b, bn, t);
  dg_graph *g = dg_graph_create(ctx, "gemm");
  if (!g || !ad || !bd) {
    dg_graph_destroy(g);
    goto done;
  }
  dg_tensor_desc da = {.dtype = t, .rank = 2, .dims = {M, K}};
  dg_tensor_desc db = {.dtype = t, .rank = 2, .dims = {K, N}};
  dg_graph_set_device(g, device);
  dg_graph_output(g, "y",
                  dg_graph_matmul(g, "gemm", dg_graph_input(g, "a", &da),
                                  dg_graph_input(g, "b", &db)),
                  DG_LAYOUT_NCHW);
  s = bench_compile_on(g, device, "gemm");
  dg_graph_destroy(g);
  if (!s)
    goto done;
  bench_case c = {
      s, {{"a", ad, an * es}, {"b", bd, bn * es}}, 2, {"y", y, yn * es}};
  if (bench_case_run(&c))
    goto done;
  int bad = 0;
  for (int i = 0; i < 32; i++) {
    uint32_t sd = 11u + (uint32_t)i * 13u;
    int m = (int)(lcg(&sd) % (uint32_t)M), n = (int)(lcg(&sd) % (uint32_t)N);
    double ref = 0, mag = 0;
    for (int k = 0; k < K; k++) {
      double v = (double)a[(size_t)m * K + k] * b[(size_t)k * N + n];
      ref += v;
      mag += fabs(v);
    }
    double tol = (t == DG_DTYPE_F16 ? 1e-2 : 1e-4) * mag + 1e-3;
    if (!(fabs(value(y, (size_t)m * N + n, t) - ref) <= tol))
      bad++;
  }
  snprintf(check, cs, "%s", bad ? "FAIL" : "ok");
  us = bench_median_us(bench_case_run, &c, 0, reps);
  *kernel_us = kernel_time_us(&c);
  *res_us = resident_us(ctx, device, &c);
done:
  dg_session_destroy(s);
  free(a), free(b), free(ad), free(bd), free(y);
  return us;
}

double bench_gpu_conv_us(dg_context *ctx, int device, int N, int C, int H,
                         int W, dg_dtype t, char *check, size_t cs, int *reps,
                         double *kernel_us) {
  *kernel_us = -1;
  size_t xn = (size_t)N * C * H * W, wn = (size_t)C * C * 9, yn = xn;
  size_t es = t == DG_DTYPE_F16 ? 2 : 4;
  float *x = malloc(xn * 4), *w = malloc(wn * 4);
  void *xd = NULL, *wdata = NULL, *y = malloc(yn * es);
  double us = -1;
  dg_session *s = NULL;
  snprintf(check, cs, "FAIL");
  if (!x || !w || !y)
    goto done;
  fill(x, xn, 5);
  fill(w, wn, 6);
  xd = as_dtype(x, xn, t);
  wdata = as_dtype(w, wn, t);
  dg_graph *g = dg_graph_create(ctx, "conv");
  if (!g || !xd || !wdata) {
    dg_graph_destroy(g);
    goto done;
  }
  dg_tensor_desc dx = {.dtype = t, .rank = 4, .dims = {N, C, H, W}};
  dg_tensor_desc dw = {.dtype = t, .rank = 4, .dims = {C, C, 3, 3}};
  dg_conv2d_params cp = {.pads = {1, 1, 1, 1}};
  dg_graph_set_device(g, device);
  dg_graph_output(g, "y",
                  dg_graph_conv2d(g, "conv", dg_graph_input(g, "x", &dx),
                                  dg_graph_constant(g, "w", &dw, wdata, 0),
                                  DG_TENSOR_NONE, &cp),
                  DG_LAYOUT_NCHW);
  s = bench_compile_on(g, device, "conv");
  dg_graph_destroy(g);
  if (!s)
    goto done;
  bench_case c = {s, {{"x", xd, xn * es}}, 1, {"y", y, yn * es}};
  if (bench_case_run(&c))
    goto done;
  int bad = 0;
  for (int i = 0; i < 32; i++) {
    uint32_t sd = 17u + (uint32_t)i * 29u;
    int n = (int)(lcg(&sd) % (uint32_t)N), k = (int)(lcg(&sd) % (uint32_t)C),
        oy = (int)(lcg(&sd) % (uint32_t)H), ox = (int)(lcg(&sd) % (uint32_t)W);
    double mag, ref = bench_conv3x3_point(x, w, C, H, W, n, k, oy, ox, &mag);
    double tol = (t == DG_DTYPE_F16 ? 1e-2 : 1e-4) * mag + 1e-3;
    size_t o = (((size_t)n * C + k) * H + oy) * W + ox;
    if (!(fabs(value(y, o, t) - ref) <= tol))
      bad++;
  }
  snprintf(check, cs, "%s", bad ? "FAIL" : "ok");
  us = bench_median_us(bench_case_run, &c, 0, reps);
  *kernel_us = kernel_time_us(&c);
done:
  dg_session_destroy(s);
  free(x), free(w), free(xd), free(wdata), free(y);
  return us;
}

double bench_gpu_chain_us(dg_context *ctx, int device, int nodes, char *check,
                          size_t cs, int *reps, double *kernel_us) {
  *kernel_us = -1;
  enum { ELEMS = 256 };
  float x[ELEMS], y[ELEMS];
  for (int i = 0; i < ELEMS; i++)
    x[i] = (float)(i % 17) - 8.0f;
  double us = -1;
  dg_session *s = NULL;
  snprintf(check, cs, "FAIL");
  dg_graph *g = dg_graph_create(ctx, "chain");
  if (!g)
    return -1;
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {1, ELEMS}};
  dg_graph_set_device(g, device);
  dg_tensor t = dg_graph_input(g, "x", &d);
  /* Every relu is its own node and dispatch; relu of relu is relu, so
   * y = relu(x) checks the chain ran. */
  for (int i = 0; i < nodes; i++)
    t = dg_graph_relu(g, NULL, t);
  dg_graph_output(g, "y", t, DG_LAYOUT_NCHW);
  s = bench_compile_on(g, device, "relu chain");
  dg_graph_destroy(g);
  if (!s)
    return -1;
  bench_case c = {s, {{"x", x, sizeof x}}, 1, {"y", y, sizeof y}};
  if (bench_case_run(&c))
    goto done;
  int bad = 0;
  for (int i = 0; i < ELEMS; i++)
    bad += y[i] != (x[i] > 0 ? x[i] : 0.0f);
  snprintf(check, cs, "%s", bad ? "FAIL" : "ok");
  us = bench_median_us(bench_case_run, &c, 0, reps);
  *kernel_us = kernel_time_us(&c);
done:
  dg_session_destroy(s);
  return us;
}

#ifdef DG_HAVE_CLBLAST
typedef struct clb_case {
  cl_command_queue q;
  cl_mem a, b, c;
  int M, N, K;
} clb_case;

static int clb_run(void *arg) {
  clb_case *c = arg;
  cl_event ev;
  if (CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo,
                   CLBlastTransposeNo, (size_t)c->M, (size_t)c->N, (size_t)c->K,
                   1.0f, c->a, 0, (size_t)c->K, c->b, 0, (size_t)c->N, 0.0f,
                   c->c, 0, (size_t)c->N, &c->q, &ev) != CLBlastSuccess)
    return -1;
  clWaitForEvents(1, &ev);
  clReleaseEvent(ev);
  return 0;
}
#endif

double peer_clblast_sgemm_us(int M, int N, int K, char *name,
                             size_t name_size) {
  snprintf(name, name_size, "clblast");
#ifdef DG_HAVE_CLBLAST
  cl_platform_id plats[8];
  cl_uint np = 0;
  cl_device_id dev = NULL;
  if (clGetPlatformIDs(8, plats, &np) != CL_SUCCESS)
    return -1;
  for (cl_uint i = 0; i < np && !dev; i++)
    if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) !=
        CL_SUCCESS)
      dev = NULL;
  if (!dev)
    return -1;
  char dn[64] = "";
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dn - 1, dn, NULL);
  snprintf(name, name_size, "clblast:%.24s", dn);
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  if (!ctx)
    return -1;
  clb_case c = {
      clCreateCommandQueue(ctx, dev, 0, &err), NULL, NULL, NULL, M, N, K};
  size_t an = (size_t)M * K, bn = (size_t)K * N, cn = (size_t)M * N;
  float *host = malloc((an > bn ? an : bn) * 4);
  double us = -1;
  if (c.q && host) {
    fill(host, an, 3);
    c.a = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, an * 4,
                         host, &err);
    fill(host, bn, 4);
    c.b = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bn * 4,
                         host, &err);
    c.c = clCreateBuffer(ctx, CL_MEM_READ_WRITE, cn * 4, NULL, &err);
    if (c.a && c.b && c.c && clb_run(&c) == 0)
      us = bench_median_us(clb_run, &c, 0, NULL);
  }
  free(host);
  if (c.a)
    clReleaseMemObject(c.a);
  if (c.b)
    clReleaseMemObject(c.b);
  if (c.c)
    clReleaseMemObject(c.c);
  if (c.q)
    clReleaseCommandQueue(c.q);
  clReleaseContext(ctx);
  return us;
#else
  (void)M, (void)N, (void)K;
  return -1;
#endif
}
