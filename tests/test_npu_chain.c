/* Consecutive qconv2d nodes on the NPU handing NC1HWC2 cubes over (lower.h,
 * dg_npu_cube_edge): the chains' internal tensors are eligible, the final
 * outputs equal bit for bit what the same NPU nodes give converting
 * through host NCHW (DG_NPU_CUBES=off), and stay near the CPU (each node
 * may differ by 1 LSB, and a difference travels down the chain). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_npu_conv.h"

#include "runtime/internal.h"
#include "targets/npu/lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned rng = 99;
static int rnd(int lo, int hi) {
  rng = rng * 1103515245u + 12345u;
  return lo + (int)((rng >> 8) % (unsigned)(hi - lo + 1));
}

/* One conv of a chain: out channels, kernel, depthwise, relu, output u8,
 * per-channel scale mode (test_npu_conv.h's per_channel). */
typedef struct link {
  int O, K, dw, relu, y_u8, per_channel;
} link;

typedef struct chain {
  const char *name;
  int N, C, H, x_u8; /* images of C x H x H */
  link links[3];
  int count;
  int cheap;
} chain;

static const chain chains[] = {
    /* Per-channel blocks split at channel 20 (x64 halves): groups of 16
     * that straddle two of the producer's tasks, copied channel by
     * channel; relu clamped on the way; u8 -> i8 -> i8. */
    {"3x3 16->40 relu u8 | dw 3x3 | 1x1 40->24",
     1,
     16,
     20,
     1,
     {{40, 3, 0, 1, 1, 2}, {40, 3, 1, 0, 0, 1}, {24, 1, 0, 0, 0, 1}},
     3,
     1},
    /* Row slices on both sides (MobileNetV2's 112x112 32-channel pair):
     * the consumer's slices read rows of two producer slices. */
    {"dw 3x3 32@112 relu6-ish | 1x1 32->16",
     1,
     32,
     112,
     0,
     {{32, 3, 1, 1, 0, 0}, {16, 1, 0, 0, 1, 0}},
     2,
     0},
    /* Batch 3: the segment runs image by image, so the producer's cubes
     * hold the image its reader is at. */
    {"batch 3: 3x3 8->24 | dw 3x3 | 1x1 24->8",
     3,
     8,
     12,
     0,
     {{24, 3, 0, 1, 0, 1}, {24, 3, 1, 0, 1, 0}, {8, 1, 0, 0, 0, 1}},
     3,
     1},
};

/* Builds the chain, pinned to device when device >= 0. */
static dg_graph *build(dg_context *ctx, const chain *c, int device,
                       int8_t *w[3], int32_t *b[3], float *ws[3]) {
  dg_graph *g = dg_graph_create(ctx, "npu-chain");
  dg_dtype xt = c->x_u8 ? DG_DTYPE_U8 : DG_DTYPE_I8;
  dg_tensor_desc xd = {
      .dtype = xt,
      .rank = 4,
      .dims = {c->N, c->C, c->H, c->H},
      .quant = {.scale = 0.05f, .zero_point = c->x_u8 ? 128 : 0}};
  dg_tensor x = dg_graph_input(g, "x", &xd);
  if (device >= 0)
    dg_graph_set_device(g, device);
  int C = c->C;
  float sx = 0.05f;
  for (int i = 0; i < c->count; i++) {
    const link *l = &c->links[i];
    int per = l->dw ? 1 : C;
    dg_tensor_desc wd = {
        .dtype = DG_DTYPE_I8,
        .rank = 4,
        .dims = {l->O, per, l->K, l->K},
        .quant = {.axis = 0, .channel_count = l->O, .channel_scales = ws[i]}};
    dg_tensor_desc bd = {.dtype = DG_DTYPE_I32, .rank = 1, .dims = {l->O}};
    float sy = sx * 0.01f * (float)(per * l->K * l->K) * 1.5f;
    dg_quant_params yq = {.scale = sy, .zero_point = l->y_u8 ? 100 : -3};
    dg_conv2d_params p = {.stride = {1, 1},
                          .padding = DG_PADDING_SAME_UPPER,
                          .groups = l->dw ? C : 1,
                          .activation = l->relu ? DG_ACTIVATION_RELU
                                                : DG_ACTIVATION_NONE};
    char name[16];
    snprintf(name, sizeof name, "w%d", i);
    dg_tensor wt = dg_graph_constant(g, name, &wd, w[i], 0);
    snprintf(name, sizeof name, "b%d", i);
    dg_tensor bt = dg_graph_constant(g, name, &bd, b[i], 0);
    snprintf(name, sizeof name, "conv%d", i);
    x = dg_graph_qconv2d(g, name, x, wt, bt, &p,
                         l->y_u8 ? DG_DTYPE_U8 : DG_DTYPE_I8, &yq);
    C = l->O, sx = sy;
  }
  dg_graph_output(g, "y", x, DG_LAYOUT_NCHW);
  return g;
}

/* Whether every internal tensor of the chain is a cube edge when all its
 * nodes are on the NPU, and the output is not. */
static bool all_nodes(int node, void *user) {
  (void)user;
  return node >= 0;
}
static int eligible(dg_context *ctx, const chain *c, int8_t *w[3],
                    int32_t *b[3], float *ws[3]) {
  dg_graph *g = build(ctx, c, -1, w, b, ws);
  int ok = dg_graph_status(g) == DG_OK;
  for (int i = 0; ok && i < g->ir.node_count; i++) {
    uint32_t t = g->ir.nodes[i].output;
    bool last = i + 1 == g->ir.node_count;
    ok = dg_npu_cube_edge(&g->ir, t, all_nodes, NULL) == !last;
  }
  dg_graph_destroy(g);
  return ok;
}

/* Runs the chain on device (the CPU alone when < 0) into y. */
static int run(dg_context *ctx, const chain *c, int device, int8_t *w[3],
               int32_t *b[3], float *ws[3], const uint8_t *x, size_t xn,
               uint8_t *y, size_t yn, char *err, size_t n) {
  dg_graph *g = build(ctx, c, device, w, b, ws);
  return npu_graph_run(g, device, x, xn, y, yn, err, n);
}

static int one_chain(dg_context *ctx, int npu, const chain *c, char *msg,
                     size_t mn) {
  int8_t *w[3] = {0};
  int32_t *b[3] = {0};
  float *ws[3] = {0};
  int C = c->C, rc = -1;
  for (int i = 0; i < c->count; i++) {
    const link *l = &c->links[i];
    size_t wn = (size_t)l->O * (l->dw ? 1 : C) * l->K * l->K;
    w[i] = malloc(wn), b[i] = malloc((size_t)l->O * 4);
    ws[i] = malloc((size_t)l->O * sizeof(float));
    if (!w[i] || !b[i] || !ws[i])
      goto done;
    for (size_t k = 0; k < wn; k++)
      w[i][k] = (int8_t)rnd(-127, 127);
    for (int k = 0; k < l->O; k++) {
      b[i][k] = rnd(-3000, 3000);
      ws[i][k] = 0.01f * (float)rnd(50, 150) / 100.0f;
      if ((l->per_channel == 2 && k >= l->O / 2) || (l->per_channel == 0 && k))
        ws[i][k] = l->per_channel == 2 ? ws[i][k] * 64.0f : ws[i][0];
    }
    C = l->O;
  }
  size_t xn = (size_t)c->N * c->C * c->H * c->H,
         yn = (size_t)c->N * C * c->H * c->H;
  uint8_t *x = malloc(xn), *y_cube = malloc(yn), *y_host = malloc(yn),
          *y_cpu = malloc(yn);
  if (!x || !y_cube || !y_host || !y_cpu) {
    free(x), free(y_cube), free(y_host), free(y_cpu);
    goto done;
  }
  for (size_t i = 0; i < xn; i++)
    x[i] = (uint8_t)rnd(0, 255);
  char err[512] = "";
  int ok_edges = eligible(ctx, c, w, b, ws);
  int r1 = run(ctx, c, npu, w, b, ws, x, xn, y_cube, yn, err, sizeof err);
  setenv("DG_NPU_CUBES", "off", 1);
  int r2 =
      r1 ? r1 : run(ctx, c, npu, w, b, ws, x, xn, y_host, yn, err, sizeof err);
  unsetenv("DG_NPU_CUBES");
  int r3 =
      r2 ? r2 : run(ctx, c, -1, w, b, ws, x, xn, y_cpu, yn, err, sizeof err);
  if (!r3) {
    int u8 = c->links[c->count - 1].y_u8, worst = 0;
    long near = 0;
    for (size_t i = 0; i < yn; i++) {
      int a = u8 ? y_cpu[i] : (int8_t)y_cpu[i];
      int v = u8 ? y_cube[i] : (int8_t)y_cube[i];
      int d = abs(a - v);
      worst = d > worst ? d : worst;
      near += d <= 1;
    }
    bool same = !memcmp(y_cube, y_host, yn);
    snprintf(msg, mn,
             "%s: edges %s, cubes %s host path, vs CPU max diff %d, %.2f%% "
             "within 1 LSB",
             c->name, ok_edges ? "eligible" : "NOT eligible",
             same ? "==" : "!=", worst, 100.0 * near / (double)yn);
    rc = ok_edges && same && worst <= 8 && near * 100 >= (long)yn * 95 ? 0 : 1;
  } else {
    snprintf(msg, mn, "%s: %s", c->name, err);
  }
  free(x), free(y_cube), free(y_host), free(y_cpu);
done:
  for (int i = 0; i < 3; i++)
    free(w[i]), free(b[i]), free(ws[i]);
  return rc;
}

int npu_chain_run(dg_context *ctx, int npu, const char *label, int quick) {
  int bad = 0, count = 0;
  for (size_t i = 0; i < sizeof chains / sizeof chains[0]; i++) {
    if (quick && !chains[i].cheap)
      continue;
    char msg[600] = "";
    int rc = one_chain(ctx, npu, &chains[i], msg, sizeof msg);
    count++;
    bad += rc != 0;
    printf("# %s: %s%s\n", label, msg, rc ? "  FAILED" : "");
  }
  printf("# %s: %d conv chains, %d failing\n", label, count, bad);
  return bad;
}
