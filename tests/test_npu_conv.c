/* One qconv2d on the NPU against the CPU (see test_npu_conv.h). */
#include "test_npu_conv.h"

#include "runtime/internal.h"
#include "runtime/session.h" /* dg_f32_to_f16 */
#include "targets/npu/lower.h"
#include "targets/npu/sim.h"
#include "targets/npu/timing.h"

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
  dg_tensor_desc xd = {
      .dtype = xt,
      .rank = 4,
      .dims = {c->N, c->C, c->H, c->W},
      .quant = {.scale = 0.05f, .zero_point = c->x_u8 ? 131 : 3}};
  dg_tensor_desc wd = {.dtype = DG_DTYPE_I8,
                       .rank = 4,
                       .dims = {c->O, per, c->K, c->K},
                       .quant = {.scale = 0.01f}};
  if (c->per_channel)
    wd.quant = (dg_quant_params){
        .axis = 0, .channel_count = c->O, .channel_scales = ws};
  dg_tensor_desc bd = {.dtype = DG_DTYPE_I32, .rank = 1, .dims = {c->O}};
  float sy = 0.05f * 0.01f * (float)(per * c->K * c->K) * 2.0f;
  dg_quant_params yq = {.scale = sy, .zero_point = c->y_u8 ? 120 : -4};
  dg_conv2d_params p = {
      .stride = {c->S, c->S},
      .padding = c->same ? DG_PADDING_SAME_UPPER : DG_PADDING_VALID,
      .groups = c->dw ? c->C : 1,
      .activation = c->relu ? DG_ACTIVATION_RELU : DG_ACTIVATION_NONE};
  if (c->pad > 0) {
    p.padding = DG_PADDING_EXPLICIT;
    for (int i = 0; i < 4; i++)
      p.pads[i] = c->pad;
  }
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

int npu_graph_run(dg_graph *g, int device, const void *x, size_t x_bytes,
                  void *y, size_t y_bytes, char *err, size_t n) {
  dg_compile_options o = {.policy = DG_POLICY_STRICT};
  int only_cpu = 0;
  if (device < 0)
    o.devices = &only_cpu, o.device_count = 1;
  dg_session *s = NULL;
  dg_diagnostic d;
  memset(&d, 0, sizeof d);
  dg_status st = dg_graph_status(g);
  if (st != DG_OK)
    snprintf(d.message, sizeof d.message, "%s", dg_graph_error(g)->message);
  else
    st = dg_graph_compile(g, &o, &s, &d);
  dg_graph_destroy(g);
  if (st == DG_OK) {
    dg_binding in = {"x", (void *)x, x_bytes}, out = {"y", y, y_bytes};
    st = dg_session_run(s, &in, 1, &out, 1, &d);
  }
  dg_session_destroy(s);
  if (st != DG_OK)
    snprintf(err, n, "%s", d.message);
  return st == DG_OK ? 0 : -1;
}

static int run(dg_context *ctx, const npu_case *c, int device, const int8_t *w,
               const int32_t *b, const float *ws, const void *x, size_t xn,
               void *y, size_t yn, char *err, size_t n) {
  return npu_graph_run(build(ctx, c, device, w, b, ws), device, x, xn, y, yn,
                       err, n);
}

/* Largest |y0 - y1| in LSBs over yn 8-bit outputs (uint8 when u8, else
 * int8); exact and total count equal and compared outputs. */
static int q8_worst(const uint8_t *y0, const uint8_t *y1, size_t yn, int u8,
                    long *exact, long *total) {
  int worst = 0;
  for (size_t i = 0; i < yn; i++) {
    int a = u8 ? y0[i] : (int8_t)y0[i], v = u8 ? y1[i] : (int8_t)y1[i];
    int diff = abs(a - v);
    worst = diff > worst ? diff : worst;
    *exact += diff == 0;
  }
  *total += (long)yn;
  return worst;
}

/* The random operands of an int8 case and its two outputs (NPU, CPU):
 * x in [-128, 127], w in [-127, 127], per channel a bias in +-bias_range
 * and a weight scale in 0.005..0.015, drawn in that order. Returns -1 when
 * memory runs out (everything freed). */
typedef struct q8_operands {
  int8_t *x, *w;
  int32_t *b;
  float *ws;
  uint8_t *y0, *y1;
} q8_operands;
static void q8_operands_free(q8_operands *d) {
  free(d->x), free(d->w), free(d->b), free(d->ws), free(d->y0), free(d->y1);
}
static int q8_operands_make(q8_operands *d, unsigned *s, size_t xn, size_t wn,
                            size_t yn, int channels, int bias_range) {
  d->x = malloc(xn), d->w = malloc(wn);
  d->b = malloc((size_t)channels * 4);
  d->ws = malloc((size_t)channels * sizeof(float));
  d->y0 = malloc(yn), d->y1 = malloc(yn);
  if (!d->x || !d->w || !d->b || !d->ws || !d->y0 || !d->y1) {
    q8_operands_free(d);
    return -1;
  }
  for (size_t i = 0; i < xn; i++)
    d->x[i] = (int8_t)rnd(s, -128, 127);
  for (size_t i = 0; i < wn; i++)
    d->w[i] = (int8_t)rnd(s, -127, 127);
  for (int i = 0; i < channels; i++) {
    d->b[i] = rnd(s, -bias_range, bias_range);
    d->ws[i] = 0.01f * (float)rnd(s, 50, 150) / 100.0f;
  }
  return 0;
}

/* The per_channel modes' spread over the drawn scales (test_npu_conv.h). */
static void spread_scales(float *ws, int count, int mode) {
  for (int i = 0; i < count; i++)
    if ((mode == 2 && i >= count / 2) || (mode == 3 && i % 2))
      ws[i] *= 64.0f;
}

int npu_case_run(dg_context *ctx, int npu, const npu_case *c, long *exact,
                 long *total, char *err, size_t n) {
  unsigned s = c->seed ? c->seed : 1;
  int per = c->dw ? 1 : c->C;
  int OH = c->same ? (c->H + c->S - 1) / c->S : (c->H - c->K) / c->S + 1;
  int OW = c->same ? (c->W + c->S - 1) / c->S : (c->W - c->K) / c->S + 1;
  if (c->pad > 0) {
    OH = (c->H + 2 * c->pad - c->K) / c->S + 1;
    OW = (c->W + 2 * c->pad - c->K) / c->S + 1;
  }
  size_t xn = (size_t)c->N * c->C * c->H * c->W,
         wn = (size_t)c->O * per * c->K * c->K;
  size_t yn = (size_t)c->N * c->O * OH * OW;
  q8_operands d;
  if (q8_operands_make(&d, &s, xn, wn, yn, c->O, 2000))
    return -1;
  spread_scales(d.ws, c->O, c->per_channel);
  int worst = -1;
  if (!run(ctx, c, npu, d.w, d.b, d.ws, d.x, xn, d.y1, yn, err, n) &&
      !run(ctx, c, -1, d.w, d.b, d.ws, d.x, xn, d.y0, yn, err, n))
    worst = q8_worst(d.y0, d.y1, yn, c->y_u8, exact, total);
  q8_operands_free(&d);
  return worst;
}

int npu_matrix_run(dg_context *ctx, int npu, const char *label, int quick) {
  static const int direct[][2] = {{1, 6}, {3, 8}, {20, 40}, {64, 64}};
  static const int depth[] = {8, 16, 40, 64};
  static const int sizes[][2] = {{5, 5}, {16, 16}, {7, 12}};
  long exact = 0, total = 0;
  int cases = 0, ran = 0, bad = 0, worst = 0;
  for (int si = 0; si < 3; si++)
    for (int K = 1; K <= 5; K += 2)
      for (int S = 1; S <= 2; S++)
        for (int dw = 0; dw < 2; dw++)
          for (int ci = 0; ci < 4; ci++) {
            int v = cases;
            if (quick && v % 4) {
              cases++;
              continue;
            }
            npu_case c = {.N = 1 + (v % 7 == 0),
                          .C = dw ? depth[ci] : direct[ci][0],
                          .O = dw ? depth[ci] : direct[ci][1],
                          .H = sizes[si][0],
                          .W = sizes[si][1],
                          .K = K,
                          .S = S,
                          .same = (v / 3) % 2 || K > sizes[si][0],
                          .dw = dw,
                          .relu = v % 3 == 0,
                          .x_u8 = v % 5 == 1,
                          .y_u8 = v % 5 == 2,
                          .per_channel = v % 4 == 3,
                          .seed = (unsigned)v + 7};
            char err[512] = "";
            int e = npu_case_run(ctx, npu, &c, &exact, &total, err, sizeof err);
            cases++, ran++;
            if (e < 0 || e > 1) {
              bad++;
              printf("# %s: C%d O%d %dx%d k%d s%d %s%s: %s (max diff %d)\n",
                     label, c.C, c.O, c.H, c.W, K, S, c.same ? "SAME" : "VALID",
                     dw ? " dw" : "", err, e);
            }
            worst = e > worst ? e : worst;
          }
  /* The ends of the Teflon test range: inputs of 3 and 112, 1 and 256
   * channels, kernel 5 with stride 2 (these tile where they must). */
  static const npu_case edges[] = {
      {.N = 1, .C = 4, .O = 8, .H = 3, .W = 3, .K = 3, .S = 1, .same = 1},
      {.N = 1, .C = 16, .O = 16, .H = 3, .W = 3, .K = 1, .S = 2, .dw = 1},
      {.N = 1, .C = 1, .O = 1, .H = 9, .W = 9, .K = 3, .S = 1, .same = 1},
      {.N = 1,
       .C = 3,
       .O = 16,
       .H = 112,
       .W = 112,
       .K = 5,
       .S = 2,
       .same = 1,
       .relu = 1},
      {.N = 1, .C = 256, .O = 256, .H = 7, .W = 7, .K = 1, .S = 1, .x_u8 = 1},
      {.N = 1,
       .C = 256,
       .O = 256,
       .H = 14,
       .W = 14,
       .K = 3,
       .S = 2,
       .dw = 1,
       .y_u8 = 1},
  };
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
    if (quick && i % 2)
      continue;
    npu_case c = edges[i];
    c.seed = 101 + (unsigned)i;
    char err[512] = "";
    int e = npu_case_run(ctx, npu, &c, &exact, &total, err, sizeof err);
    ran++;
    if (e < 0 || e > 1) {
      bad++;
      printf("# %s: edge C%d O%d %dx%d k%d s%d%s: %s (max diff %d)\n", label,
             c.C, c.O, c.H, c.W, c.K, c.S, c.dw ? " dw" : "", err, e);
    }
    worst = e > worst ? e : worst;
  }
  printf("# %s: %d convs, %ld/%ld outputs equal to the CPU (%.2f%%), max diff "
         "%d LSB\n",
         label, ran, exact, total, total ? 100.0 * exact / total : 0.0, worst);
  return bad;
}

/* How the lowering cut cv (int8 or f16). */
static void cut_of(const npu_conv *cv, npu_cut_info *info) {
  info->tasks = cv->task_count;
  for (int i = 0; i < cv->task_count; i++) {
    const npu_task *t = &cv->tasks[i];
    const npu_conv_desc *d = &t->d;
    info->blocks += t->oh0 == 0;
    info->slices += t->o0 == 0;
    int bottom = (d->out_h - 1) * d->stride_y + d->k_h - d->pad_top - d->in_h;
    info->top_pad_tasks_not_first += d->pad_top > 0 && t->oh0 != 0;
    info->bottom_pad_tasks_not_last += bottom > 0 && t->oh1 != cv->OH;
    info->bottom_pad_tasks += bottom > 0;
  }
}

int npu_case_cut(dg_context *ctx, const npu_case *c, npu_cut_info *info,
                 char *err, size_t n) {
  int per = c->dw ? 1 : c->C;
  size_t wn = (size_t)c->O * per * c->K * c->K;
  int8_t *w = calloc(wn, 1);
  int32_t *b = calloc((size_t)c->O, 4);
  float *ws = malloc((size_t)c->O * sizeof(float));
  for (int i = 0; ws && i < c->O; i++)
    ws[i] = 0.01f * (float)(50 + i % 101) / 100.0f;
  if (ws)
    spread_scales(ws, c->O, c->per_channel);
  dg_graph *g = w && b && ws ? build(ctx, c, -1, w, b, ws) : NULL;
  npu_conv cv;
  memset(info, 0, sizeof *info);
  int rc = -1;
  if (!g || dg_graph_status(g) != DG_OK)
    snprintf(err, n, "graph does not build");
  else if (dg_npu_conv_lower(&g->ir, &g->ir.nodes[0], &cv, err, n)) {
    rc = 0;
    cut_of(&cv, info);
    dg_npu_conv_release(&cv, NULL);
  }
  dg_graph_destroy(g);
  free(w), free(b), free(ws);
  return rc;
}

/* Whether a lowered conv (lower_rc 0) was cut as a tiled case expects:
 * into row slices or not (height), into channel blocks or not (channels),
 * top padding only in the first slice and bottom padding only in the last. */
static int cut_as_expected(int lower_rc, const npu_cut_info *cut, int height,
                           int channels) {
  return !lower_rc && (cut->slices > 1) == height &&
         (cut->blocks > 1) == channels && !cut->top_pad_tasks_not_first &&
         !cut->bottom_pad_tasks_not_last;
}

typedef struct tiled_case {
  const char *name;
  npu_case c;
  int height, channels; /* the cut expected: row slices, channel blocks */
  int cheap;            /* in the quick set */
} tiled_case;

/* Conv case shapes in the tables below (int8 and fp16 alike). */
#define SHAPE(n, c, o, h, w, k, s)                                             \
  .N = n, .C = c, .O = o, .H = h, .W = w, .K = k, .S = s
static const tiled_case tiled[] = {
    {"resnet50 3x3 64@56",
     {SHAPE(1, 64, 64, 56, 56, 3, 1), .same = 1, .seed = 1},
     .height = 1},
    {"resnet50 conv1 7x7/2 3->64@224 pad 3",
     {SHAPE(1, 3, 64, 224, 224, 7, 2), .pad = 3, .relu = 1, .seed = 2},
     .height = 1},
    {"resnet50 1x1 256->64@56",
     {SHAPE(1, 256, 64, 56, 56, 1, 1), .x_u8 = 1, .seed = 3},
     .height = 1},
    {"resnet50 1x1 1024->256@14",
     {SHAPE(1, 1024, 256, 14, 14, 1, 1), .y_u8 = 1, .seed = 4},
     .height = 1,
     .channels = 1},
    {"mobilenetv2 dw 32@112",
     {SHAPE(1, 32, 32, 112, 112, 3, 1), .same = 1, .dw = 1, .relu = 1,
      .seed = 5},
     .height = 1,
     .cheap = 1},
    {"mobilenetv2 pw 32->16@112",
     {SHAPE(1, 32, 16, 112, 112, 1, 1), .y_u8 = 1, .seed = 6},
     .height = 1,
     .cheap = 1},
    /* SAME_UPPER at stride 2 on an even height: no top padding, one row of
     * bottom padding, which only the last slice may have. */
    {"3x3/2 SAME 32->48@96x80 u8 relu",
     {SHAPE(1, 32, 48, 96, 80, 3, 2), .same = 1, .relu = 1, .x_u8 = 1,
      .y_u8 = 1, .seed = 7},
     .height = 1,
     .cheap = 1},
    {"3x3 256->128@20 (rows and channels)",
     {SHAPE(1, 256, 128, 20, 20, 3, 1), .same = 1, .seed = 8},
     .height = 1,
     .channels = 1},
    /* Scales within a factor 16 share a task (the BS multiplier); the
     * halves of a x64 spread take a block each. */
    {"3x3 16->8@128 per-channel",
     {SHAPE(1, 16, 8, 128, 128, 3, 1), .same = 1, .per_channel = 1, .seed = 9},
     .height = 1,
     .cheap = 1},
    {"3x3 16->8@128 per-channel, spread x64",
     {SHAPE(1, 16, 8, 128, 128, 3, 1), .same = 1, .per_channel = 2, .seed = 12},
     .height = 1,
     .channels = 1,
     .cheap = 1},
    {"3x3 16->8@120 batch 2 VALID",
     {SHAPE(2, 16, 8, 120, 120, 3, 1), .seed = 10},
     .height = 1,
     .cheap = 1},
};

int npu_tiled_run(dg_context *ctx, int npu, const char *label, int quick) {
  int bad = 0, count = 0;
  for (size_t i = 0; i < sizeof tiled / sizeof tiled[0]; i++) {
    const tiled_case *tc = &tiled[i];
    if (quick && !tc->cheap)
      continue;
    count++;
    npu_cut_info cut;
    char err[512] = "";
    long exact = 0, total = 0;
    int ok_cut =
        cut_as_expected(npu_case_cut(ctx, &tc->c, &cut, err, sizeof err), &cut,
                        tc->height, tc->channels);
    int e =
        ok_cut ? npu_case_run(ctx, npu, &tc->c, &exact, &total, err, sizeof err)
               : -1;
    int ok = ok_cut && e >= 0 && e <= 1;
    bad += !ok;
    printf("# %s: %-38s %3d tasks (%d blocks x %d slices, bottom-padded "
           "%d) %ld/%ld exact, max diff %d%s%s\n",
           label, tc->name, cut.tasks, cut.blocks, cut.slices,
           cut.bottom_pad_tasks, exact, total, e, ok ? "" : "  FAILED: ",
           ok ? "" : (err[0] ? err : "cut not as expected"));
  }
  printf("# %s: %d tiled convs, %d failing\n", label, count, bad);
  return bad;
}

/* The fc or matmul graph, pinned to device (strict) when device >= 0. */
static dg_graph *build_fc(dg_context *ctx, const npu_fc_case *c, int device,
                          const int8_t *w, const int32_t *b, const float *ws) {
  dg_graph *g = dg_graph_create(ctx, "npu-fc");
  dg_dtype xt = c->x_u8 ? DG_DTYPE_U8 : DG_DTYPE_I8;
  dg_quant_params xq = {.scale = 0.05f, .zero_point = c->x_u8 ? 125 : -2};
  dg_tensor_desc xd = {
      .dtype = xt, .rank = 2, .dims = {c->M, c->K}, .quant = xq};
  if (c->matmul && c->B > 0)
    xd = (dg_tensor_desc){
        .dtype = xt, .rank = 3, .dims = {c->B, c->M, c->K}, .quant = xq};
  else if (c->matmul && c->B < 0) /* a rank-1 a: one row */
    xd = (dg_tensor_desc){.dtype = xt, .rank = 1, .dims = {c->K}, .quant = xq};
  dg_tensor_desc wd = {
      .dtype = DG_DTYPE_I8,
      .rank = 2,
      .dims = {c->matmul ? c->K : c->N, c->matmul ? c->N : c->K},
      .quant = {.scale = 0.01f, .zero_point = c->matmul ? 1 : 0}};
  if (c->per_channel)
    wd.quant = (dg_quant_params){
        .axis = c->matmul ? 1 : 0, .channel_count = c->N, .channel_scales = ws};
  float sy = 0.05f * 0.01f * (float)c->K * 1.5f;
  dg_quant_params yq = {.scale = sy, .zero_point = c->y_u8 ? 130 : 5};
  dg_dtype yt = c->y_u8 ? DG_DTYPE_U8 : DG_DTYPE_I8;
  dg_tensor x = dg_graph_input(g, "x", &xd);
  dg_tensor wt = dg_graph_constant(g, "w", &wd, w, 0);
  dg_tensor bt = DG_TENSOR_NONE;
  if (c->bias && !c->matmul) {
    dg_tensor_desc bd = {.dtype = DG_DTYPE_I32, .rank = 1, .dims = {c->N}};
    bt = dg_graph_constant(g, "b", &bd, b, 0);
  }
  if (device >= 0)
    dg_graph_set_device(g, device);
  dg_tensor y = c->matmul
                    ? dg_graph_qmatmul(g, "fc", x, wt, yt, &yq)
                    : dg_graph_qfully_connected(g, "fc", x, wt, bt,
                                                c->relu ? DG_ACTIVATION_RELU
                                                        : DG_ACTIVATION_NONE,
                                                yt, &yq);
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  return g;
}

static int run_fc(dg_context *ctx, const npu_fc_case *c, int device,
                  const int8_t *w, const int32_t *b, const float *ws,
                  const void *x, size_t xn, void *y, size_t yn, char *err,
                  size_t n) {
  return npu_graph_run(build_fc(ctx, c, device, w, b, ws), device, x, xn, y, yn,
                       err, n);
}

int npu_fc_case_run(dg_context *ctx, int npu, const npu_fc_case *c, long *exact,
                    long *total, char *err, size_t n) {
  unsigned s = c->seed ? c->seed : 1;
  size_t rows = (size_t)(c->B > 0 ? c->B : 1) * (c->B < 0 ? 1 : c->M);
  size_t xn = rows * c->K, wn = (size_t)c->K * c->N, yn = rows * c->N;
  q8_operands d;
  if (q8_operands_make(&d, &s, xn, wn, yn, c->N, 3000))
    return -1;
  int worst = -1;
  if (!run_fc(ctx, c, npu, d.w, d.b, d.ws, d.x, xn, d.y1, yn, err, n) &&
      !run_fc(ctx, c, -1, d.w, d.b, d.ws, d.x, xn, d.y0, yn, err, n))
    worst = q8_worst(d.y0, d.y1, yn, c->y_u8, exact, total);
  q8_operands_free(&d);
  return worst;
}

typedef struct fc_named {
  const char *name;
  npu_fc_case c;
  int cheap;
} fc_named;

static const fc_named fcs[] = {
    {"fc 1x400 -> 120 bias relu", {0, 0, 1, 400, 120, 0, 0, 0, 1, 1, 21}, 1},
    {"fc 8x256 -> 24 per-channel u8", {0, 0, 8, 256, 24, 1, 1, 1, 0, 1, 22}, 1},
    {"fc 20x2048 -> 256 (kernel blocks)",
     {0, 0, 20, 2048, 256, 0, 0, 0, 0, 1, 23},
     0},
    {"matmul 3x5x64 . 64x40 u8 a", {1, 3, 5, 64, 40, 1, 0, 0, 0, 0, 24}, 1},
    {"matmul 2000x256 . 256x16 (row slices)",
     {1, 0, 2000, 256, 16, 0, 1, 0, 0, 0, 25},
     0},
    {"matmul 96 . 96x10 (rank-1 a)", {1, -1, 1, 96, 10, 0, 0, 0, 0, 0, 26}, 1},
    {"matmul 4x128 . 128x33 per-column",
     {1, 0, 4, 128, 33, 0, 0, 1, 0, 0, 27},
     1},
};

int npu_fc_run(dg_context *ctx, int npu, const char *label, int quick) {
  int bad = 0, count = 0;
  for (size_t i = 0; i < sizeof fcs / sizeof fcs[0]; i++) {
    if (quick && !fcs[i].cheap)
      continue;
    count++;
    long exact = 0, total = 0;
    char err[512] = "";
    int e =
        npu_fc_case_run(ctx, npu, &fcs[i].c, &exact, &total, err, sizeof err);
    int ok = e >= 0 && e <= 1;
    bad += !ok;
    printf("# %s: %-38s %ld/%ld exact, max diff %d%s%s\n", label, fcs[i].name,
           exact, total, e, ok ? "" : "  FAILED: ", err);
  }
  printf("# %s: %d fc/matmul cases, %d failing\n", label, count, bad);
  return bad;
}

/* The timing model's shape on cv (timing.h): every term finite and not
 * negative, each total at least its compute and its DRAM time; rocket
 * dearer than the vendor driver wherever a job chains two tasks or more
 * (an interrupt a task against one a job). (Three cores may come out
 * slower than one: each core's first slice fetches its weights again.)
 * 0 or -1 with err set. */
static int check_timing(const npu_conv *cv, char *err, size_t n) {
  npu_timing t;
  dg_npu_timing_conv(cv, &t);
  const double terms[] = {t.compute_us, t.ddr_us,   t.task_us,   t.job_us,
                          t.host_us,    t.total_us, t.total3_us, t.rocket_us};
  for (size_t i = 0; i < sizeof terms / sizeof *terms; i++)
    if (!isfinite(terms[i]) || terms[i] < 0) {
      snprintf(err, n, "timing term %zu is %g", i, terms[i]);
      return -1;
    }
  int jobs = (cv->task_count + NPU_JOB_MAX_TASKS - 1) / NPU_JOB_MAX_TASKS;
  double floor = t.compute_us > t.ddr_us ? t.compute_us : t.ddr_us;
  if (t.total_us < floor || t.rocket_us < floor ||
      (cv->task_count >= 2 * jobs && t.rocket_us <= t.total_us)) {
    snprintf(err, n,
             "timing: %d tasks in %d jobs, compute %g ddr %g, total %g, "
             "three cores %g, rocket %g",
             cv->task_count, jobs, t.compute_us, t.ddr_us, t.total_us,
             t.total3_us, t.rocket_us);
    return -1;
  }
  return 0;
}

/* Every task of cv checked statically at its offsets (IOVAs from 0, as a
 * fresh rocket fd hands out), the tasks' coverage of (channel, row), and
 * the timing model's shape. */
static int check_tasks(npu_conv *cv, char *err, size_t n) {
  size_t sizes[4] = {cv->in_bytes, cv->wt_bytes, cv->bias_bytes, cv->out_bytes};
  uint32_t iova[NPU_BUF_COUNT];
  npu_sim_buffer bufs[4];
  uint32_t at = 0;
  int rc = 0;
  for (int i = 0; i < 4; i++) {
    iova[i] = at;
    /* f16 nodes have no bias buffer (size 0) */
    bufs[i] = (npu_sim_buffer){"node", at, sizes[i],
                               malloc(sizes[i] ? sizes[i] : 1), i == 3};
    at += (uint32_t)((sizes[i] + 4095) / 4096 * 4096);
    if (!bufs[i].data)
      rc = -1, snprintf(err, n, "out of memory");
  }
  int *cover = calloc((size_t)cv->O * cv->OH, sizeof *cover);
  for (int t = 0; !rc && cover && t < cv->task_count; t++) {
    npu_task *k = &cv->tasks[t];
    dg_npu_stream_patch(&k->stream, iova);
    npu_sim_job job = {.words = k->stream.words,
                       .word_count = k->stream.count,
                       .buffers = bufs,
                       .buffer_count = 4};
    char why[256];
    if (dg_npu_sim_check(&job, why, sizeof why)) {
      snprintf(err, n, "task %d (ch %d..%d, rows %d..%d): %s", t, k->o0,
               k->o1 - 1, k->oh0, k->oh1 - 1, why);
      rc = -1;
    }
    for (int o = k->o0; o < k->o1; o++)
      for (int r = k->oh0; r < k->oh1; r++)
        cover[(size_t)o * cv->OH + r]++;
  }
  for (size_t i = 0; !rc && cover && i < (size_t)cv->O * cv->OH; i++)
    if (cover[i] != 1) {
      snprintf(err, n, "channel %zu row %zu covered %d times",
               i / (size_t)cv->OH, i % (size_t)cv->OH, cover[i]);
      rc = -1;
    }
  if (!cover)
    rc = -1, snprintf(err, n, "out of memory");
  if (!rc)
    rc = check_timing(cv, err, n);
  free(cover);
  for (int i = 0; i < 4; i++)
    free(bufs[i].data);
  return rc;
}

static dg_graph *build_f16(dg_context *ctx, const npu_f16_case *c, int groups,
                           int device, const uint16_t *w, const uint16_t *b);

/* One shape of the sweep (an f16 conv2d when f16): 0 taken, 1 declined,
 * -1 bad (err set). */
static int sweep_one(dg_context *ctx, const npu_case *c, int f16, char *err,
                     size_t n) {
  int per = c->dw ? 1 : c->C;
  size_t wn = (size_t)c->O * per * c->K * c->K;
  int8_t *w = calloc(wn, f16 ? 2 : 1);
  int32_t *b = calloc((size_t)c->O, 4);
  float ws[1] = {0.01f};
  npu_f16_case h = {.N = c->N,
                    .C = c->C,
                    .O = c->O,
                    .H = c->H,
                    .W = c->W,
                    .K = c->K,
                    .S = c->S,
                    .same = c->same,
                    .bias = 1};
  dg_graph *g = !w || !b ? NULL
                : f16    ? build_f16(ctx, &h, c->dw ? c->C : 1, -1,
                                     (const uint16_t *)(void *)w,
                                     (const uint16_t *)(void *)b)
                         : build(ctx, c, -1, w, b, ws);
  int rc = -1;
  npu_conv cv;
  char why[512] = "";
  if (!g || dg_graph_status(g) != DG_OK)
    rc = 1; /* the builder refuses it: nothing for the NPU to say */
  else if (dg_npu_conv_lower(&g->ir, &g->ir.nodes[0], &cv, why, sizeof why)) {
    rc = check_tasks(&cv, err, n) ? -1 : 0;
    dg_npu_conv_release(&cv, NULL);
  } else if (!why[0] || strlen(why) > 60) {
    snprintf(err, n, "declined without a short reason: '%s'", why);
  } else {
    if (getenv("DG_NPU_SWEEP_VERBOSE"))
      printf("# sweep: %sC%d O%d %dx%d k%d s%d%s declined: %s\n",
             f16 ? "f16 " : "", c->C, c->O, c->H, c->W, c->K, c->S,
             c->dw ? " dw" : "", why);
    rc = 1;
  }
  dg_graph_destroy(g);
  free(w), free(b);
  return rc;
}

int npu_tiling_sweep(dg_context *ctx, int f16, int *taken, int *declined) {
  static const int chans[] = {3, 32, 200, 1024}, outs[] = {8, 96, 1000},
                   sizes[] = {5, 57, 230}, ks[] = {1, 3, 7};
  int bad = 0;
  *taken = *declined = 0;
  for (int ci = 0; ci < 4; ci++)
    for (int oi = 0; oi < 4; oi++) /* oi == 3: depthwise */
      for (int si = 0; si < 3; si++)
        for (int ki = 0; ki < 3; ki++)
          for (int S = 1; S <= 2; S++)
            for (int same = 0; same < 2; same++) {
              int dw = oi == 3, C = chans[ci], O = dw ? C : outs[oi % 3];
              int K = ks[ki], H = sizes[si];
              if (K > H || (size_t)O * (dw ? 1 : C) * K * K > (4u << 20))
                continue;
              npu_case c = {.N = 1,
                            .C = C,
                            .O = O,
                            .H = H,
                            .W = H + 3,
                            .K = K,
                            .S = S,
                            .same = same,
                            .dw = dw};
              char err[512] = "";
              int r = sweep_one(ctx, &c, f16, err, sizeof err);
              if (r < 0) {
                bad++;
                printf("# sweep: %sC%d O%d %dx%d k%d s%d %s%s: %s\n",
                       f16 ? "f16 " : "", C, O, H, H + 3, K, S,
                       same ? "SAME" : "VALID", dw ? " dw" : "", err);
              }
              *taken += r == 0;
              *declined += r == 1;
            }
  return bad;
}

/* ---- f16 conv2d ---- */

static uint16_t rnd_half(unsigned *s, float scale) {
  return dg_f32_to_f16(scale * (float)rnd(s, -1000, 1000) / 1000.0f);
}

/* The f16 conv2d graph of c (groups 1, or depthwise with groups C),
 * pinned to device when device >= 0. */
static dg_graph *build_f16(dg_context *ctx, const npu_f16_case *c, int groups,
                           int device, const uint16_t *w, const uint16_t *b) {
  dg_graph *g = dg_graph_create(ctx, "npu-f16-case");
  dg_tensor_desc xd = {
      .dtype = DG_DTYPE_F16, .rank = 4, .dims = {c->N, c->C, c->H, c->W}};
  dg_tensor_desc wd = {.dtype = DG_DTYPE_F16,
                       .rank = 4,
                       .dims = {c->O, c->C / groups, c->K, c->K}};
  dg_tensor_desc bd = {.dtype = DG_DTYPE_F16, .rank = 1, .dims = {c->O}};
  dg_conv2d_params p = {.stride = {c->S, c->S},
                        .padding =
                            c->same ? DG_PADDING_SAME_UPPER : DG_PADDING_VALID,
                        .groups = groups,
                        .activation = (dg_activation)c->act};
  dg_tensor xt = dg_graph_input(g, "x", &xd);
  dg_tensor wt = dg_graph_constant(g, "w", &wd, w, 0);
  dg_tensor bt =
      c->bias ? dg_graph_constant(g, "b", &bd, b, 0) : DG_TENSOR_NONE;
  if (device >= 0)
    dg_graph_set_device(g, device);
  dg_tensor yt = dg_graph_conv2d(g, "conv", xt, wt, bt, &p);
  dg_graph_output(g, "y", yt, DG_LAYOUT_NCHW);
  return g;
}

static int run_f16(dg_context *ctx, const npu_f16_case *c, int device,
                   const uint16_t *w, const uint16_t *b, const uint16_t *x,
                   size_t xn, uint16_t *y, size_t yn, char *err, size_t n) {
  return npu_graph_run(build_f16(ctx, c, 1, device, w, b), device, x, xn * 2, y,
                       yn * 2, err, n);
}

double npu_f16_case_run(dg_context *ctx, int npu, const npu_f16_case *c,
                        char *err, size_t n) {
  unsigned s = c->seed ? c->seed : 1;
  int OH = c->same ? (c->H + c->S - 1) / c->S : (c->H - c->K) / c->S + 1;
  int OW = c->same ? (c->W + c->S - 1) / c->S : (c->W - c->K) / c->S + 1;
  size_t xn = (size_t)c->N * c->C * c->H * c->W,
         wn = (size_t)c->O * c->C * c->K * c->K,
         yn = (size_t)c->N * c->O * OH * OW;
  uint16_t *x = malloc(xn * 2), *w = malloc(wn * 2),
           *b = malloc((size_t)c->O * 2);
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
          npu_f16_case c = {.N = 1 + (v % 11 == 0),
                            .C = chans[ci][0],
                            .O = chans[ci][1],
                            .H = sizes[si][0],
                            .W = sizes[si][1],
                            .K = K,
                            .S = S,
                            .same = v % 3 != 0 || K > sizes[si][0],
                            .bias = v % 4 == 1 || v % 4 == 2,
                            .act = v % 3,
                            .seed = (unsigned)v + 11};
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

/* The f16 shapes that need tiling: rows (batch 2, bias, relu), stride 2
 * with bottom padding only, rows and channels (1x1 1024 -> 128), and a
 * ResNet-50 3x3 layer. */
typedef struct f16_tiled_case {
  const char *name;
  npu_f16_case c;
  int height, channels; /* the cut expected: row slices, channel blocks */
  int cheap;            /* in the quick set */
} f16_tiled_case;

static const f16_tiled_case f16_tiled[] = {
    {"f16 3x3 8->16@160x96 batch 2 bias relu",
     {SHAPE(2, 8, 16, 160, 96, 3, 1), .same = 1, .bias = 1, .act = 1,
      .seed = 21},
     .height = 1,
     .cheap = 1},
    {"f16 3x3/2 SAME 16->32@96x64",
     {SHAPE(1, 16, 32, 96, 64, 3, 2), .same = 1, .seed = 22},
     .height = 1,
     .cheap = 1},
    {"f16 1x1 1024->128@10 (rows and channels)",
     {SHAPE(1, 1024, 128, 10, 10, 1, 1), .seed = 23},
     .height = 1,
     .channels = 1,
     .cheap = 1},
    {"f16 resnet50 3x3 64@56 bias relu6",
     {SHAPE(1, 64, 64, 56, 56, 3, 1), .same = 1, .bias = 1, .act = 2,
      .seed = 24},
     .height = 1},
};
#undef SHAPE

int npu_f16_case_cut(dg_context *ctx, const npu_f16_case *c, npu_cut_info *info,
                     char *err, size_t n) {
  size_t wn = (size_t)c->O * c->C * c->K * c->K;
  uint16_t *w = calloc(wn, 2), *b = calloc((size_t)c->O, 2);
  dg_graph *g = w && b ? build_f16(ctx, c, 1, -1, w, b) : NULL;
  npu_conv cv;
  memset(info, 0, sizeof *info);
  int rc = -1;
  if (!g || dg_graph_status(g) != DG_OK)
    snprintf(err, n, "graph does not build");
  else if (dg_npu_conv_lower(&g->ir, &g->ir.nodes[0], &cv, err, n)) {
    rc = 0;
    cut_of(&cv, info);
    dg_npu_conv_release(&cv, NULL);
  }
  dg_graph_destroy(g);
  free(w), free(b);
  return rc;
}

int npu_f16_tiled_run(dg_context *ctx, int npu, const char *label, int quick) {
  int bad = 0, count = 0;
  for (size_t i = 0; i < sizeof f16_tiled / sizeof f16_tiled[0]; i++) {
    const f16_tiled_case *tc = &f16_tiled[i];
    if (quick && !tc->cheap)
      continue;
    count++;
    npu_cut_info cut;
    char err[512] = "";
    int ok_cut =
        cut_as_expected(npu_f16_case_cut(ctx, &tc->c, &cut, err, sizeof err),
                        &cut, tc->height, tc->channels);
    double e =
        ok_cut ? npu_f16_case_run(ctx, npu, &tc->c, err, sizeof err) : -1;
    double limit = tc->c.bias ? 1e-2 + ldexp(1, -10) : ldexp(1, -10);
    int ok = ok_cut && e >= 0 && e <= limit;
    bad += !ok;
    printf("# %s: %-40s %3d tasks (%d blocks x %d slices, bottom-padded "
           "%d) relative error %.3g%s%s\n",
           label, tc->name, cut.tasks, cut.blocks, cut.slices,
           cut.bottom_pad_tasks, e, ok ? "" : "  FAILED: ",
           ok ? "" : (err[0] ? err : "cut not as expected"));
  }
  printf("# %s: %d tiled f16 convs, %d failing\n", label, count, bad);
  return bad;
}
