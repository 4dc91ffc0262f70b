/* dg_compile_options.precision: DG_PRECISION_FAST_F16 runs an f32 graph in
 * f16 storage with f32 accumulation where an allowed GPU computes in f16,
 * with f32 bindings; exact leaves it as built; the plan says which, and
 * why not. Checked on every Vulkan and OpenCL device that lists f16
 * (lavapipe, PoCL in CI) against the CPU's exact run. */
#include "graph.h"
#include "harness.h"

#include "core/half.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C = 8, H = 12, O = 16, CLASSES = 10 };

static float wconv[O * C * 9], bconv[O], wfc[CLASSES * O * 36], bfc[CLASSES];

/* conv 3x3 + relu -> max pool 2x2 -> flatten -> fully connected ->
 * softmax; quantize_too adds a quantize/dequantize pair at the end. */
static dg_graph *make_graph(dg_context *c, bool quantize_too) {
  dg_graph *g = dg_graph_create(c, "precision");
  dg_tensor_desc xd = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, C, H, H}};
  dg_tensor x = dg_graph_input(g, "x", &xd);
  dg_tensor_desc wd = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {O, C, 3, 3}};
  dg_tensor_desc bd = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {O}};
  dg_conv2d_params cp = {.padding = DG_PADDING_SAME_UPPER,
                         .activation = DG_ACTIVATION_RELU};
  dg_tensor t =
      dg_graph_conv2d(g, "conv", x, dg_graph_constant(g, "w", &wd, wconv, 0),
                      dg_graph_constant(g, "b", &bd, bconv, 0), &cp);
  dg_pool2d_params pp = {.kernel = {2, 2}, .stride = {2, 2}};
  t = dg_graph_max_pool2d(g, "pool", t, &pp);
  t = dg_graph_reshape(g, "flat", t, 2, (int64_t[]){1, -1});
  dg_tensor_desc fd = {
      .dtype = DG_DTYPE_F32, .rank = 2, .dims = {CLASSES, O * 36}};
  dg_tensor_desc fbd = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {CLASSES}};
  t = dg_graph_fully_connected(
      g, "fc", t, dg_graph_constant(g, "wf", &fd, wfc, 0),
      dg_graph_constant(g, "bf", &fbd, bfc, 0), DG_ACTIVATION_NONE);
  t = dg_graph_softmax(g, "softmax", t, 1);
  if (quantize_too) {
    dg_quant_params q = {.scale = 1.0f / 255, .zero_point = 0};
    t = dg_graph_dequantize(g, "dq",
                            dg_graph_quantize(g, "q", t, DG_DTYPE_U8, &q));
  }
  dg_graph_output(g, "y", t, DG_LAYOUT_NCHW);
  return g;
}

static float x[C * H * H];

/* Compiles g for dev (-1: every device, auto) with precision p and runs
 * it into y; the session, or NULL (diag says why). */
static dg_session *compile_run(dg_graph *g, int dev, dg_precision p, float *y,
                               dg_diagnostic *diag) {
  dg_compile_options co = {.policy =
                               dev >= 0 ? DG_POLICY_STRICT : DG_POLICY_AUTO,
                           .devices = dev >= 0 ? &dev : NULL,
                           .device_count = dev >= 0,
                           .precision = p};
  if (dev >= 0)
    dg_graph_set_device(g, dev);
  dg_session *s = NULL;
  if (dg_graph_compile(g, &co, &s, diag) != DG_OK)
    return NULL;
  dg_binding in = {"x", x, sizeof x}, out = {"y", y, sizeof(float) * CLASSES};
  if (dg_session_run(s, &in, 1, &out, 1, diag) != DG_OK) {
    dg_session_destroy(s);
    return NULL;
  }
  return s;
}

static bool every_node(const dg_session *s, dg_dtype dt) {
  const dg_plan *p = dg_session_plan(s);
  for (int i = 0; i < dg_plan_node_count(p); i++) {
    dg_plan_node pn;
    if (dg_plan_get_node(p, i, &pn) != DG_OK || pn.compute_dtype != dt)
      return false;
  }
  return dg_plan_node_count(p) > 0;
}

/* Device buffers under the fast precision hold the f16 tensors as they
 * run: x written as f16 (rounded as the session rounds it), y read back
 * as f16, equal bit for bit to the f32-bound run's y (y_host) rounded
 * there; an f32 buffer is refused naming f16; a CPU f16 buffer works
 * the same. */
static void fast_buffers(dg_context *c, dg_session *s, int dev,
                         const dg_device_info *info, const float *y_host) {
  static uint16_t xh[C * H * H], yh[CLASSES];
  dg_f32_to_f16_n(x, xh, C * H * H);
  dg_tensor_desc xd = {.dtype = DG_DTYPE_F16, .rank = 4, .dims = {1, C, H, H}};
  dg_tensor_desc yd = {.dtype = DG_DTYPE_F16, .rank = 2, .dims = {1, CLASSES}};
  dg_tensor_desc xf = xd;
  xf.dtype = DG_DTYPE_F32;
  dg_diagnostic d = {0};
  dg_buffer *bx = NULL, *by = NULL, *bf = NULL;
  dg_status st = dg_buffer_create(c, dev, &xf, &bf, &d);
  if (st == DG_OK)
    st = dg_session_bind_buffer(s, "x", bf, &d);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && strstr(d.message, "holds f32") &&
            strstr(d.message, "in f16"),
        "%s: an f32 buffer for an input the fast precision holds in f16 is "
        "refused (%s)",
        info->name, d.message);
  for (int where = 0; where < 2; where++) {
    int bdev = where ? 0 : dev; /* the GPU's own memory, then the CPU's */
    bool ok = dg_buffer_create(c, bdev, &xd, &bx, &d) == DG_OK &&
              dg_buffer_create(c, bdev, &yd, &by, &d) == DG_OK &&
              dg_buffer_write(bx, xh, sizeof xh, &d) == DG_OK &&
              dg_session_bind_buffer(s, "x", bx, &d) == DG_OK &&
              dg_session_bind_buffer(s, "y", by, &d) == DG_OK &&
              dg_session_run(s, NULL, 0, NULL, 0, &d) == DG_OK &&
              dg_buffer_read(by, yh, sizeof yh, &d) == DG_OK;
    bool same = ok;
    for (int i = 0; same && i < CLASSES; i++)
      same = dg_f16_to_f32(yh[i]) == y_host[i];
    CHECK(same,
          "%s: f16 buffers (on device %d) bound to the fast session's x and "
          "y give the f32-bound run's y bit for bit (%s)",
          info->name, bdev, ok ? "" : d.message);
    dg_session_bind_buffer(s, "x", NULL, NULL);
    dg_session_bind_buffer(s, "y", NULL, NULL);
    dg_buffer_destroy(bx), dg_buffer_destroy(by);
    bx = by = NULL;
  }
  dg_buffer_destroy(bf);
}

static void test_device(dg_context *c, int dev, const float *want) {
  dg_device_info info;
  dg_context_device_info(c, dev, &info);
  dg_graph *g = make_graph(c, false);
  float y[CLASSES];
  dg_diagnostic d = {0};
  dg_session *s = compile_run(g, dev, DG_PRECISION_FAST_F16, y, &d);
  const char *pr = s ? dg_plan_precision(dg_session_plan(s)) : "";
  CHECK(s && !strncmp(pr, "fast: f16 storage, f32 accumulation on 5 of 5", 45),
        "%s: fast compiles every node in f16 (%s%s)", info.name, pr,
        s ? "" : d.message);
  CHECK(s && every_node(s, DG_DTYPE_F16),
        "%s: every plan node's compute_dtype is f16", info.name);
  dg_io_info ii, oi;
  CHECK(s && dg_session_input_info(s, 0, &ii) == DG_OK &&
            dg_session_output_info(s, 0, &oi) == DG_OK &&
            ii.desc.dtype == DG_DTYPE_F32 && oi.desc.dtype == DG_DTYPE_F32,
        "%s: the bindings stay f32", info.name);
  /* (One comparison per element, not fmax: aarch64 GCC 12's vectoriser
   * fails on that reduction, an internal compiler error at -O3.) */
  double worst = 0;
  for (int k = 0; s && k < CLASSES; k++) {
    double e = fabs((double)y[k] - want[k]);
    if (e > worst)
      worst = e;
  }
  CHECK(s && worst < 5e-3,
        "%s: the f16 run is within f16 rounding of the CPU's exact run (max "
        "abs diff %.2g on probabilities)",
        info.name, worst);
  bool some_differ = false;
  for (int k = 0; s && k < CLASSES; k++)
    some_differ |= y[k] != want[k];
  CHECK(some_differ, "%s: ... and not bit-equal to it (it did run in f16)",
        info.name);
  dg_binding in = {"x", x, sizeof x};
  dg_verify_report r;
  memset(&r, 0, sizeof r);
  dg_status st = s ? dg_session_verify(s, &in, 1, &r) : DG_ERROR_DEVICE;
  CHECK(st == DG_OK,
        "%s: verify passes every f16 node within its tolerance "
        "(worst rel %.3g)",
        info.name, r.max_rel_error);
  /* A binding of the f16 size is the wrong size: the caller binds f32. */
  uint16_t half[C * H * H];
  dg_binding bad = {"x", half, sizeof half};
  float yb[CLASSES];
  dg_binding out = {"y", yb, sizeof yb};
  st = s ? dg_session_run(s, &bad, 1, &out, 1, &d) : DG_OK;
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && strstr(d.message, "f32"),
        "%s: an f16-sized input is refused, naming f32 (%s)", info.name,
        d.message);
  if (s)
    fast_buffers(c, s, dev, &info, y);
  dg_session_destroy(s);

  /* Exact: as built. */
  s = compile_run(g, dev, DG_PRECISION_EXACT, y, &d);
  CHECK(s && !strcmp(dg_plan_precision(dg_session_plan(s)), "exact") &&
            every_node(s, DG_DTYPE_F32),
        "%s: exact keeps every node f32 and says so", info.name);
  dg_session_destroy(s);
  dg_graph_destroy(g);

  /* Int8 nodes in the graph: not lowered, and the plan says why. */
  g = make_graph(c, true);
  s = compile_run(g, -1, DG_PRECISION_FAST_F16, y, &d);
  pr = s ? dg_plan_precision(dg_session_plan(s)) : "";
  CHECK(s && strstr(pr, "fast not applied: node 'q' (quantize)") &&
            !every_node(s, DG_DTYPE_F16),
        "%s context: a graph with quantize stays as built (%s)", info.name, pr);
  dg_session_destroy(s);
  dg_graph_destroy(g);
}

int main(void) {
  for (size_t i = 0; i < sizeof wconv / sizeof *wconv; i++)
    wconv[i] = t_uniform(-0.3f, 0.3f);
  for (size_t i = 0; i < sizeof wfc / sizeof *wfc; i++)
    wfc[i] = t_uniform(-0.2f, 0.2f);
  for (int i = 0; i < O; i++)
    bconv[i] = t_uniform(-0.1f, 0.1f);
  for (int i = 0; i < CLASSES; i++)
    bfc[i] = t_uniform(-0.1f, 0.1f);
  for (size_t i = 0; i < sizeof x / sizeof *x; i++)
    x[i] = t_uniform(-1, 1);

  dg_context *c = NULL;
  if (dg_context_create(NULL, &c) != DG_OK) {
    printf("FAIL - context\n");
    return 1;
  }
  /* The CPU's exact run, the reference; fast with only the CPU allowed
   * does nothing, and says why. */
  dg_graph *g = make_graph(c, false);
  float want[CLASSES], y[CLASSES];
  dg_diagnostic d = {0};
  dg_session *s = compile_run(g, 0, DG_PRECISION_EXACT, want, &d);
  CHECK(s != NULL, "the CPU runs the graph exactly (%s)", s ? "" : d.message);
  dg_session_destroy(s);
  s = compile_run(g, 0, DG_PRECISION_FAST_F16, y, &d);
  const char *pr = s ? dg_plan_precision(dg_session_plan(s)) : "";
  CHECK(s && strstr(pr, "fast not applied: no allowed Vulkan or OpenCL") &&
            every_node(s, DG_DTYPE_F32) && !memcmp(y, want, sizeof y),
        "fast on the CPU alone leaves the graph f32, bit-equal (%s)", pr);
  dg_session_destroy(s);
  /* A precision outside the enum is refused by name. */
  dg_compile_options bad = {.precision = (dg_precision)7};
  s = NULL;
  dg_status st = dg_graph_compile(g, &bad, &s, &d);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && !s &&
            strstr(d.message, "options.precision"),
        "a bad precision is refused, naming options.precision (%s)", d.message);
  dg_graph_destroy(g);

  int tried = 0;
  for (int dev = 0; dev < dg_context_device_count(c); dev++) {
    dg_device_info info;
    dg_context_device_info(c, dev, &info);
    if ((info.kind != DG_DEVICE_VULKAN && info.kind != DG_DEVICE_OPENCL) ||
        !(info.dtypes >> DG_DTYPE_F16 & 1))
      continue;
    test_device(c, dev, want);
    tried++;
  }
  if (!tried)
    t_skip("no Vulkan or OpenCL device here computes in f16");
  dg_context_destroy(c);
  return t_exit();
}
