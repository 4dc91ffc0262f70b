/* One max_pool2d on the NPU against the CPU (see test_npu_poolcase.h). */
#include "test_npu_poolcase.h"
#include "test_npu_conv.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static dg_graph *build(dg_context *ctx, const npu_pool_case *c, int device,
                       dg_tensor *y_out) {
  dg_graph *g = dg_graph_create(ctx, "npu-pool");
  dg_tensor_desc xd = {
      .dtype = c->u8 ? DG_DTYPE_U8 : DG_DTYPE_I8,
      .rank = 4,
      .dims = {c->N, c->C, c->H, c->W},
      .quant = {.scale = 0.05f, .zero_point = c->u8 ? 128 : -3}};
  dg_pool2d_params p = {.kernel = {c->K, c->K},
                        .stride = {c->S, c->S},
                        .pads = {c->pad, c->pad, c->pad, c->pad},
                        .padding = c->same ? DG_PADDING_SAME_UPPER
                                           : DG_PADDING_EXPLICIT,
                        .ceil_mode = c->ceil};
  dg_tensor x = dg_graph_input(g, "x", &xd);
  if (device >= 0)
    dg_graph_set_device(g, device);
  dg_tensor y = dg_graph_max_pool2d(g, "pool", x, &p);
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  *y_out = y;
  return g;
}

/* Compiles and runs (npu_graph_run); the output size comes from the
 * graph's shape inference. */
static int run(dg_context *ctx, const npu_pool_case *c, int device,
               const void *x, size_t xn, uint8_t **y, size_t *yn, char *err,
               size_t n) {
  dg_tensor yt;
  dg_graph *g = build(ctx, c, device, &yt);
  dg_tensor_desc yd;
  *yn = 0;
  if (dg_graph_tensor_desc(g, yt, &yd) == DG_OK)
    *yn = (size_t)(yd.dims[0] * yd.dims[1] * yd.dims[2] * yd.dims[3]);
  /* A graph in error (no desc) still goes to npu_graph_run, which reports
   * the graph's error and destroys it. */
  *y = malloc(*yn ? *yn : 1);
  if (!*y) {
    dg_graph_destroy(g);
    snprintf(err, n, "out of memory");
    return -1;
  }
  return npu_graph_run(g, device, x, xn, *y, *yn, err, n);
}

long npu_pool_case_run(dg_context *ctx, int npu, const npu_pool_case *c,
                       char *err, size_t n) {
  unsigned s = c->seed ? c->seed : 1;
  size_t xn = (size_t)c->N * c->C * c->H * c->W;
  uint8_t *x = malloc(xn), *y0 = NULL, *y1 = NULL;
  size_t n0 = 0, n1 = 0;
  for (size_t i = 0; i < xn; i++) {
    s = s * 1103515245u + 12345u;
    x[i] = (uint8_t)(s >> 16);
  }
  long differ = -1;
  if (!run(ctx, c, npu, x, xn, &y1, &n1, err, n) &&
      !run(ctx, c, -1, x, xn, &y0, &n0, err, n)) {
    differ = n0 == n1 ? 0 : -1;
    for (size_t i = 0; differ >= 0 && i < n0; i++)
      differ += y0[i] != y1[i];
    if (n0 != n1)
      snprintf(err, n, "output sizes differ: %zu vs %zu", n1, n0);
  }
  free(x), free(y0), free(y1);
  return differ;
}

void npu_pool_plan_reason(dg_context *ctx, int npu, dg_dtype t, int avg, int K,
                          int S, int pad, char *out, size_t n) {
  dg_graph *g = dg_graph_create(ctx, "pool-decline");
  dg_tensor_desc xd = {
      .dtype = t, .rank = 4, .dims = {1, 8, 20, 20}, .quant = {.scale = 0.1f}};
  dg_pool2d_params p = {
      .kernel = {K, K}, .stride = {S, S}, .pads = {pad, pad, pad, pad}};
  dg_tensor x = dg_graph_input(g, "x", &xd);
  dg_graph_set_device(g, npu);
  dg_tensor y = avg ? dg_graph_avg_pool2d(g, "pool", x, &p)
                    : dg_graph_max_pool2d(g, "pool", x, &p);
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  dg_session *s = NULL;
  dg_plan_node pn;
  snprintf(out, n, "(no plan)");
  if (dg_graph_compile(g, NULL, &s, NULL) == DG_OK &&
      dg_plan_get_node(dg_session_plan(s), 0, &pn) == DG_OK)
    snprintf(out, n, "%s",
             pn.device_kind == DG_DEVICE_NPU ? "" : pn.reason_text);
  dg_session_destroy(s);
  dg_graph_destroy(g);
}
