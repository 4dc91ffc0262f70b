/* One qconv2d on the NPU against the CPU (see test_npu_conv.h). */
#include "test_npu_conv.h"

#include "graph/session.h" /* dg_f32_to_f16 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int npu_device_index(dg_context *ctx) {
  for (int i = 0; i < dg_context_device_count(ctx); i++) {
    dg_device_info info;
    if (dg_context_device_info(ctx, i, &info) == DG_OK &&
        info.kind == DG_DEVICE_NPU)
      return i;
  }
  return -1;
}

static unsigned next(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 8;
}
static int rnd(unsigned *s, int lo, int hi) {
  return lo + (int)(next(s) % (unsigned)(hi - lo + 1));
}

/* Builds the conv, pinned to device (strict) when device >= 0. */
static dg_graph *build(dg_context *ctx, const npu_case *c, int device,
                       const int8_t *w, const int32_t *b, const float *ws) {
  dg_graph *g = dg_graph_create(ctx, "npu-case");
  int per = c->dw ? 1 : c->C;
  dg_dtype xt = c->x_u8 ? DG_DTYPE_U8 : DG_DTYPE_I8;
  dg_tensor_desc xd = {.dtype = xt, .rank = 4, .dims = {c->N, c->C, c->H, c->W},
                       .quant = {.scale = 0.05f, .zero_point = c->x_u8 ? 131 : 3}};
  dg_tensor_desc wd = {.dtype = DG_DTYPE_I8, .rank = 4,
                       .dims = {c->O, per, c->K, c->K},
                       .quant = {.scale = 0.01f}};
  if (c->per_channel)
    wd.quant = (dg_quant_params){.axis = 0, .channel_count = c->O,
                                 .channel_scales = ws};
  dg_tensor_desc bd = {.dtype = DG_DTYPE_I32, .rank = 1, .dims = {c->O}};
  float sy = 0.05f * 0.01f * (float)(per * c->K * c->K) * 2.0f;
  dg_quant_params yq = {.scale = sy, .zero_point = c->y_u8 ? 120 : -4};
  dg_conv2d_params p = {
      .stride = {c->S, c->S},
      .padding = c->same ? DG_PADDING_SAME_UPPER : DG_PADDING_VALID,
      .groups = c->dw ? c->C : 1,
      .activation = c->relu ? DG_ACTIVATION_RELU : DG_ACTIVATION_NONE};
  dg_tensor x = dg_graph_input(g, "x", &xd);
  dg_tensor wt = dg_graph_constant(g, "w", &wd, w, 0);
  dg_tensor bt = dg_graph_constant(g, "b", &bd, b, 0);
  if (device >= 0)
    dg_graph_set_device(g, device);
  dg_tensor y = dg_graph_qconv2d(g, "conv", x, wt, bt, &p,
                                 c->y_u8 ? DG_DTYPE_U8 : DG_DTYPE_I8, &yq);
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  return g;
}

static int run(dg_context *ctx, const npu_case *c, int device, const int8_t *w,
               const int32_t *b, const float *ws, const void *x, size_t xn,
               void *y, size_t yn, char *err, size_t n) {
  dg_graph *g = build(ctx, c, device, w, b, ws);
  dg_compile_options o = {.policy = DG_POLICY_STRICT};
  int only_cpu = 0;
  if (device < 0)
    o.devices = &only_cpu, o.device_count = 1;
  dg_session *s = NULL;
  dg_diagnostic d;
  memset(&d, 0, sizeof d);
  dg_status st = dg_graph_compile(g, &o, &s, &d);
  dg_graph_destroy(g);
  if (st == DG_OK) {
    dg_binding in = {"x", (void *)x, xn}, out = {"y", y, yn};
    st = dg_session_run(s, &in, 1, &out, 1, &d);
  }
  dg_session_destroy(s);
  if (st != DG_OK)
    snprintf(err, n, "%s", d.message);
  return st == DG_OK ? 0 : -1;
}

int npu_case_run(dg_context *ctx, int npu, const npu_case *c, long *exact,
                 long *total, char *err, size_t n) {
  unsigned s = c->seed ? c->seed : 1;
  int per = c->dw ? 1 : c->C;
  int OH = c->same ? (c->H + c->S - 1) / c->S : (c->H - c->K) / c->S + 1;
  int OW = c->same ? (c->W + c->S - 1) / c->S : (c->W - c->K) / c->S + 1;
  size_t xn = (size_t)c->N * c->C * c->H * c->W, wn = (size_t)c->O * per * c->K * c->K;
  size_t yn = (size_t)c->N * c->O * OH * OW;
  int8_t *x = malloc(xn), *w = malloc(wn);
  int32_t *b = malloc((size_t)c->O * 4);
  float *ws = malloc((size_t)c->O * sizeof(float));
  uint8_t *y0 = malloc(yn), *y1 = malloc(yn);
  for (size_t i = 0; i < xn; i++)
    x[i] = (int8_t)rnd(&s, -128, 127);
  for (size_t i = 0; i < wn; i++)
    w[i] = (int8_t)rnd(&s, -127, 127);
  for (int i = 0; i < c->O; i++) {
    b[i] = rnd(&s, -2000, 2000);
    ws[i] = 0.01f * (float)rnd(&s, 50, 150) / 100.0f;
  }
  int worst = -1;
  if (!run(ctx, c, npu, w, b, ws, x, xn, y1, yn, err, n) &&
      !run(ctx, c, -1, w, b, ws, x, xn, y0, yn, err, n)) {
    worst = 0;
    for (size_t i = 0; i < yn; i++) {
      int a = c->y_u8 ? y0[i] : (int8_t)y0[i], v = c->y_u8 ? y1[i] : (int8_t)y1[i];
      int diff = abs(a - v);
      worst = diff > worst ? diff : worst;
      *exact += diff == 0;
    }
    *total += (long)yn;
  }
  free(x), free(w), free(b), free(ws), free(y0), free(y1);
  return worst;
}

int npu_matrix_run(dg_context *ctx, int npu, const char *label, int quick) {
  static const int direct[][2] = {{1, 6}, {3, 8}, {20, 40}, {64, 64}};
  static const int depth[] = {8, 16, 40, 64};
  static const int sizes[][2] = {{5, 5}, {16, 16}, {7, 12}};
  long exact = 0, total = 0;
  int cases = 0, bad = 0, worst = 0;
  for (int si = 0; si < 3; si++)
    for (int K = 1; K <= 5; K += 2)
      for (int S = 1; S <= 2; S++)
        for (int dw = 0; dw < 2; dw++)
          for (int ci = 0; ci < 4; ci++) {
            int v = cases;
            if (quick && v % 4)
              { cases++; continue; }
            npu_case c = {.N = 1 + (v % 7 == 0), .C = dw ? depth[ci] : direct[ci][0],
                          .O = dw ? depth[ci] : direct[ci][1],
                          .H = sizes[si][0], .W = sizes[si][1], .K = K, .S = S,
                          .same = (v / 3) % 2 || K > sizes[si][0], .dw = dw,
                          .relu = v % 3 == 0, .x_u8 = v % 5 == 1,
                          .y_u8 = v % 5 == 2, .per_channel = v % 4 == 3,
                          .seed = (unsigned)v + 7};
            char err[512] = "";
            int e = npu_case_run(ctx, npu, &c, &exact, &total, err, sizeof err);
            cases++;
            if (e < 0 || e > 1) {
              bad++;
              printf("# %s: C%d O%d %dx%d k%d s%d %s%s: %s (max diff %d)\n",
                     label, c.C, c.O, c.H, c.W, K, S, c.same ? "SAME" : "VALID",
                     dw ? " dw" : "", err, e);
            }
            worst = e > worst ? e : worst;
          }
  printf("# %s: %d convs, %ld/%ld outputs equal to the CPU (%.2f%%), max diff "
         "%d LSB\n", label, quick ? (cases + 3) / 4 : cases, exact, total,
         total ? 100.0 * exact / total : 0.0, worst);
  return bad;
}

/* ---- f16 conv2d ---- */

static uint16_t rnd_half(unsigned *s, float scale) {
  return dg_f32_to_f16(scale * (float)rnd(s, -1000, 1000) / 1000.0f);
}

static int run_f16(dg_context *ctx, const npu_f16_case *c, int device,
                   const uint16_t *w, const uint16_t *b, const uint16_t *x,
                   size_t xn, uint16_t *y, size_t yn, char *err, size_t n) {
  dg_graph *g = dg_graph_create(ctx, "npu-f16-case");
  dg_tensor_desc xd = {.dtype = DG_DTYPE_F16, .rank = 4,
                       .dims = {c->N, c->C, c->H, c->W}};
  dg_tensor_desc wd = {.dtype = DG_DTYPE_F16, .rank = 4,
                       .dims = {c->O, c->C, c->K, c->K}};
  dg_tensor_desc bd = {.dtype = DG_DTYPE_F16, .rank = 1, .dims = {c->O}};
  dg_conv2d_params p = {
      .stride = {c->S, c->S},
      .padding = c->same ? DG_PADDING_SAME_UPPER : DG_PADDING_VALID,
      .groups = 1, .activation = (dg_activation)c->act};
  dg_tensor xt = dg_graph_input(g, "x", &xd);
  dg_tensor wt = dg_graph_constant(g, "w", &wd, w, 0);
  dg_tensor bt = c->bias ? dg_graph_constant(g, "b", &bd, b, 0) : DG_TENSOR_NONE;
  if (device >= 0)
    dg_graph_set_device(g, device);
  dg_tensor yt = dg_graph_conv2d(g, "conv", xt, wt, bt, &p);
  dg_graph_output(g, "y", yt, DG_LAYOUT_NCHW);
  dg_compile_options o = {.policy = DG_POLICY_STRICT};
  int only_cpu = 0;
  if (device < 0)
    o.devices = &only_cpu, o.device_count = 1;
  dg_session *s = NULL;
  dg_diagnostic d;
  memset(&d, 0, sizeof d);
  dg_status st = dg_graph_compile(g, &o, &s, &d);
  dg_graph_destroy(g);
  if (st == DG_OK) {
    dg_binding in = {"x", (void *)x, xn * 2}, out = {"y", y, yn * 2};
    st = dg_session_run(s, &in, 1, &out, 1, &d);
  }
  dg_session_destroy(s);
  if (st != DG_OK)
    snprintf(err, n, "%s", d.message);
  return st == DG_OK ? 0 : -1;
}

double npu_f16_case_run(dg_context *ctx, int npu, const npu_f16_case *c,
                        char *err, size_t n) {
  unsigned s = c->seed ? c->seed : 1;
  int OH = c->same ? (c->H + c->S - 1) / c->S : (c->H - c->K) / c->S + 1;
  int OW = c->same ? (c->W + c->S - 1) / c->S : (c->W - c->K) / c->S + 1;
  size_t xn = (size_t)c->N * c->C * c->H * c->W,
         wn = (size_t)c->O * c->C * c->K * c->K,
         yn = (size_t)c->N * c->O * OH * OW;
  uint16_t *x = malloc(xn * 2), *w = malloc(wn * 2), *b = malloc((size_t)c->O * 2);
  uint16_t *y0 = malloc(yn * 2), *y1 = malloc(yn * 2);
  /* Weights scaled by the fan-in so that outputs stay near 1. */
  float ws = 1.0f / sqrtf((float)(c->C * c->K * c->K));
  for (size_t i = 0; i < xn; i++)
    x[i] = rnd_half(&s, 2.0f);
  for (size_t i = 0; i < wn; i++)
    w[i] = rnd_half(&s, ws);
  for (int i = 0; i < c->O; i++)
    b[i] = rnd_half(&s, 1.0f);
  double rel = -1;
  if (!run_f16(ctx, c, npu, w, b, x, xn, y1, yn, err, n) &&
      !run_f16(ctx, c, -1, w, b, x, xn, y0, yn, err, n)) {
    double max_abs = 0, max_ref = 0;
    for (size_t i = 0; i < yn; i++) {
      double a = dg_f16_to_f32(y0[i]), v = dg_f16_to_f32(y1[i]);
      double d = fabs(a - v);
      if (!(d <= max_abs)) /* NaN counts as worst */
        max_abs = isnan(d) ? INFINITY : d;
      max_ref = fabs(a) > max_ref ? fabs(a) : max_ref;
    }
    rel = max_ref > 0 ? max_abs / max_ref : max_abs;
  }
  free(x), free(w), free(b), free(y0), free(y1);
  return rel;
}

int npu_f16_matrix_run(dg_context *ctx, int npu, const char *label, int quick) {
  static const int chans[][2] = {{1, 1}, {3, 8}, {16, 17}, {33, 40}, {64, 64}};
  static const int sizes[][2] = {{5, 5}, {9, 12}, {16, 16}};
  int cases = 0, bad = 0, v = 0;
  double worst_plain = 0, worst_bias = 0;
  for (int si = 0; si < 3; si++)
    for (int K = 1; K <= 5; K += 2)
      for (int S = 1; S <= 2; S++)
        for (int ci = 0; ci < 5; ci++, v++) {
          if (quick ? v % 8 : v % 2)
            continue;
          npu_f16_case c = {.N = 1 + (v % 11 == 0), .C = chans[ci][0],
                            .O = chans[ci][1], .H = sizes[si][0],
                            .W = sizes[si][1], .K = K, .S = S,
                            .same = v % 3 != 0 || K > sizes[si][0],
                            .bias = v % 4 == 1 || v % 4 == 2,
                            .act = v % 3, .seed = (unsigned)v + 11};
          char err[512] = "";
          double e = npu_f16_case_run(ctx, npu, &c, err, sizeof err);
          double limit = c.bias ? 1e-2 + ldexp(1, -10) : ldexp(1, -10);
          cases++;
          if (!(e >= 0 && e <= limit)) {
            bad++;
            printf("# %s: C%d O%d %dx%d k%d s%d %s%s act %d: %s (error %g)\n",
                   label, c.C, c.O, c.H, c.W, K, S, c.same ? "SAME" : "VALID",
                   c.bias ? " bias" : "", c.act, err, e);
          }
          double *worst = c.bias ? &worst_bias : &worst_plain;
          *worst = e > *worst ? e : *worst;
        }
  printf("# %s: %d f16 convs; worst |npu - cpu| / max|cpu|: %.3g without "
         "bias (%.2f fp16 ulp), %.3g with bias\n",
         label, cases, worst_plain, worst_plain * 1024, worst_bias);
  return bad;
}
