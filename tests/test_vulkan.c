/* The Vulkan target on every Vulkan device present (in CI: Mesa's
 * lavapipe), with the Khronos validation layer on and zero messages
 * accepted: the module table (on any machine, device or not), device
 * listing, a graph covering every op (f32, f16, int8) checked by verify
 * and against the CPU, one submit per run, per-node GPU times, the pipeline
 * cache on disk (reuse, corrupt and foreign files), allocation-failure
 * injection, and the placement rule. */
#define _POSIX_C_SOURCE 200809L
#include "graph.h"
#include "harness.h"
#include "runtime/internal.h"
#include "runtime/session.h"
#include "slow_graph.h"
#include "targets/vulkan/vk_internal.h"
#include "targets/vulkan/vulkan_target.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char cache_dir[256];

/* ---- graph helpers ---- */

static float rnd_store[1 << 16];
static int rnd_used;

/* Uniform data in [-a, a] (valid until 64K more values are drawn; the
 * graph copies constants). */
static const float *rnd(int n, float a) {
  if (n > (int)(sizeof rnd_store / sizeof rnd_store[0])) {
    fprintf(stderr, "test_vulkan: rnd(%d) exceeds the pool\n", n);
    abort();
  }
  if (rnd_used + n > (int)(sizeof rnd_store / sizeof rnd_store[0]))
    rnd_used = 0;
  float *p = rnd_store + rnd_used;
  rnd_used += n;
  for (int i = 0; i < n; i++)
    p[i] = t_uniform(-a, a);
  return p;
}

static dg_tensor_desc fdesc(dg_dtype t, int rank, const int64_t *dims) {
  dg_tensor_desc d = {.dtype = t, .rank = rank};
  memcpy(d.dims, dims, sizeof(int64_t) * (size_t)rank);
  return d;
}

static dg_tensor fconst(dg_graph *g, const char *name, dg_dtype t, int rank,
                        const int64_t *dims) {
  dg_tensor_desc d = fdesc(t, rank, dims);
  int64_t n = dg_desc_elements(&d);
  /* Any size: drawn like rnd(n, 0.5f), into a buffer of its own. */
  float *v = malloc(sizeof(float) * (size_t)n);
  uint16_t *h = t == DG_DTYPE_F16 ? malloc(sizeof(uint16_t) * (size_t)n) : NULL;
  dg_tensor c = DG_TENSOR_NONE;
  if (v && (t != DG_DTYPE_F16 || h)) {
    for (int64_t i = 0; i < n; i++)
      v[i] = t_uniform(-0.5f, 0.5f);
    for (int64_t i = 0; h && i < n; i++)
      h[i] = dg_f32_to_f16(v[i]);
    c = dg_graph_constant(g, name, &d, h ? (const void *)h : v, 0);
  }
  free(v);
  free(h);
  return c;
}

/* Every float op, in dtype t: x [1,3,12,12] -> y [1,3]. */
static dg_graph *float_graph(dg_context *ctx, dg_dtype t, int pin) {
  dg_graph *g = dg_graph_create(ctx, "all float ops");
  dg_graph_set_device(g, pin);
  int64_t xd[4] = {1, 3, 12, 12};
  dg_tensor_desc x_desc = fdesc(t, 4, xd);
  dg_tensor x = dg_graph_input(g, "x", &x_desc);
  dg_conv2d_params cp = {.padding = DG_PADDING_SAME_UPPER,
                         .activation = DG_ACTIVATION_RELU};
  dg_tensor c1 = dg_graph_conv2d(
      g, "conv", x, fconst(g, "w1", t, 4, (int64_t[]){16, 3, 3, 3}),
      fconst(g, "b1", t, 1, (int64_t[]){16}), &cp);
  dg_conv2d_params dp = {.padding = DG_PADDING_SAME_UPPER,
                         .groups = 16,
                         .activation = DG_ACTIVATION_RELU6};
  dg_tensor c2 = dg_graph_conv2d(
      g, "dwconv", c1, fconst(g, "w2", t, 4, (int64_t[]){16, 1, 3, 3}),
      DG_TENSOR_NONE, &dp);
  dg_pool2d_params mp = {.kernel = {2, 2}, .stride = {2, 2}};
  dg_tensor p1 = dg_graph_max_pool2d(g, "maxpool", c2, &mp); /* 16x6x6 */
  dg_pool2d_params ap = {.kernel = {3, 3}, .padding = DG_PADDING_SAME_UPPER};
  dg_tensor p2 = dg_graph_avg_pool2d(g, "avgpool", p1, &ap);
  dg_tensor cl = dg_graph_clip(g, "clip", p2, -0.25f, 0.25f);
  dg_tensor ad = dg_graph_add(g, "add", cl,
                              fconst(g, "shift", t, 3, (int64_t[]){16, 1, 1}));
  dg_tensor cc = dg_graph_concat(g, "concat", (dg_tensor[]){ad, p1}, 2, 1);
  dg_tensor gp = dg_graph_global_avg_pool(g, "gap", cc); /* [1,32,1,1] */
  dg_tensor fl = dg_graph_flatten(g, "flatten", cc, 1);  /* [1,1152] */
  dg_tensor fc = dg_graph_fully_connected(
      g, "fc", fl, fconst(g, "wf", t, 2, (int64_t[]){24, 1152}),
      fconst(g, "bf", t, 1, (int64_t[]){24}), DG_ACTIVATION_NONE);
  dg_tensor r = dg_graph_reshape(g, "reshape", gp, 2, (int64_t[]){1, 32});
  dg_tensor mm = dg_graph_matmul(g, "matmul", r,
                                 fconst(g, "wm", t, 2, (int64_t[]){32, 24}));
  dg_tensor s = dg_graph_add(g, "add2", fc, mm);
  dg_tensor re = dg_graph_relu(g, "relu", s);
  dg_tensor sm = dg_graph_softmax(g, "softmax", re, 1);
  dg_graph_output(g, "y", sm, DG_LAYOUT_NCHW);
  return g;
}

/* The int8 ops: quantize, qconv2d (per-channel), max pool on u8, reshape,
 * qfully_connected, qmatmul, dequantize. x [1,3,10,10] f32 -> y [1,6]. */
static dg_graph *int8_graph(dg_context *ctx, int pin) {
  static int8_t wq[8 * 3 * 9], wf[6 * 400];
  static int32_t bq[8], bfc[6];
  static uint8_t bm[6 * 6];
  static float wscale[8];
  for (int i = 0; i < 8 * 27; i++)
    wq[i] = (int8_t)t_range(-127, 127);
  for (int i = 0; i < 6 * 400; i++)
    wf[i] = (int8_t)t_range(-127, 127);
  for (int i = 0; i < 8; i++) {
    bq[i] = t_range(-500, 500);
    wscale[i] = t_uniform(0.002f, 0.01f);
  }
  for (int i = 0; i < 6; i++)
    bfc[i] = t_range(-500, 500);
  for (int i = 0; i < 36; i++)
    bm[i] = (uint8_t)t_range(0, 255);
  dg_graph *g = dg_graph_create(ctx, "int8 ops");
  dg_graph_set_device(g, pin);
  dg_tensor_desc xd = fdesc(DG_DTYPE_F32, 4, (int64_t[]){1, 3, 10, 10});
  dg_tensor x = dg_graph_input(g, "x", &xd);
  dg_quant_params xq = {.scale = 0.01f, .zero_point = 128};
  dg_tensor q = dg_graph_quantize(g, "quantize", x, DG_DTYPE_U8, &xq);
  dg_tensor_desc wd = fdesc(DG_DTYPE_I8, 4, (int64_t[]){8, 3, 3, 3});
  wd.quant = (dg_quant_params){.channel_count = 8, .channel_scales = wscale};
  dg_tensor_desc bd = fdesc(DG_DTYPE_I32, 1, (int64_t[]){8});
  dg_conv2d_params cp = {.padding = DG_PADDING_SAME_UPPER,
                         .activation = DG_ACTIVATION_RELU};
  dg_quant_params yq = {.scale = 0.05f, .zero_point = 10};
  dg_tensor c = dg_graph_qconv2d(
      g, "qconv", q, dg_graph_constant(g, "wq", &wd, wq, 0),
      dg_graph_constant(g, "bq", &bd, bq, 0), &cp, DG_DTYPE_I8, &yq);
  dg_pool2d_params mp = {.kernel = {2, 2}, .stride = {2, 2}};
  dg_tensor p = dg_graph_max_pool2d(g, "qpool", c, &mp); /* [1,8,5,5] */
  dg_tensor cc = dg_graph_concat(g, "qconcat", (dg_tensor[]){p, p}, 2, 1);
  dg_tensor fl = dg_graph_reshape(g, "qreshape", cc, 2, (int64_t[]){1, -1});
  dg_tensor_desc wfd = fdesc(DG_DTYPE_I8, 2, (int64_t[]){6, 400});
  wfd.quant.scale = 0.004f;
  dg_tensor_desc bfd = fdesc(DG_DTYPE_I32, 1, (int64_t[]){6});
  dg_quant_params fq = {.scale = 0.1f, .zero_point = 120};
  dg_tensor f = dg_graph_qfully_connected(
      g, "qfc", fl, dg_graph_constant(g, "wf", &wfd, wf, 0),
      dg_graph_constant(g, "bfc", &bfd, bfc, 0), DG_ACTIVATION_RELU6,
      DG_DTYPE_U8, &fq);
  dg_tensor_desc bmd = fdesc(DG_DTYPE_U8, 2, (int64_t[]){6, 6});
  /* a u8 zero point off 128, so that the dot kernels' zero-point terms
   * (rows and whole slices, tests below) are not all zero */
  bmd.quant = (dg_quant_params){.scale = 0.02f, .zero_point = 100};
  dg_quant_params mq = {.scale = 0.2f, .zero_point = -3};
  dg_tensor m =
      dg_graph_qmatmul(g, "qmatmul", f, dg_graph_constant(g, "bm", &bmd, bm, 0),
                       DG_DTYPE_I8, &mq);
  dg_tensor y = dg_graph_dequantize(g, "dequantize", m);
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  return g;
}

/* ---- helpers ---- */

static int vulkan_devices(dg_context *ctx, int *out, int max) {
  int n = 0;
  for (int i = 0; i < dg_context_device_count(ctx) && n < max; i++) {
    dg_device_info info;
    dg_context_device_info(ctx, i, &info);
    if (info.kind == DG_DEVICE_VULKAN)
      out[n++] = i;
  }
  return n;
}

static dg_session *compile_on(dg_graph *g, int dev, dg_diagnostic *d) {
  dg_compile_options o = {
      .policy = DG_POLICY_STRICT, .devices = &dev, .device_count = 1};
  dg_session *s = NULL;
  if (dg_graph_compile(g, &o, &s, d) != DG_OK)
    return NULL;
  return s;
}

/* Whether a node of s's plan is named name (a fused node: "a+b+c"). */
static int has_node(const dg_session *s, const char *name) {
  const dg_plan *p = dg_session_plan(s);
  for (int i = 0; i < dg_plan_node_count(p); i++) {
    dg_plan_node pn;
    dg_plan_get_node(p, i, &pn);
    if (!strcmp(pn.node_name, name))
      return 1;
  }
  return 0;
}

static int all_on(const dg_session *s, int dev) {
  const dg_plan *p = dg_session_plan(s);
  for (int i = 0; i < dg_plan_node_count(p); i++) {
    dg_plan_node pn;
    dg_plan_get_node(p, i, &pn);
    if (pn.device_index != dev)
      return 0;
  }
  return 1;
}

/* ---- tests ---- */

/* Whether SPIR-V module code (words long) declares capability cap. */
static int spirv_has_capability(const uint32_t *code, size_t words,
                                uint32_t cap) {
  for (size_t i = 5; i < words;) {
    uint32_t n = code[i] >> 16, op = code[i] & 0xffff;
    if (!n || i + n > words)
      return 0;
    if (op == 17 /* OpCapability */ && n == 2 && code[i + 1] == cap)
      return 1;
    i += n;
  }
  return 0;
}

/* The one-source property of variants.def, without a device: every enum
 * entry names a module that was built and embedded, the translated ones
 * (and only they) carry KHR cooperative matrices, and every
 * cooperative-matrix module has the tile vk_ops.c sizes its grid by (the
 * build checked its value against the kernel's). */
static void test_variants(void) {
  int missing = 0, dup = 0, khr_bad = 0, tile_bad = 0;
  for (int i = 0; i < SH_COUNT_; i++) {
    const vk_variant *v = &dg_vk_variants[i];
    if (!v->name) {
      CHECK(0, "variant %d has a name", i);
      missing++;
      continue;
    }
    for (int j = 0; j < i; j++)
      if (dg_vk_variants[j].name && !strcmp(dg_vk_variants[j].name, v->name))
        dup++;
    size_t words = 0;
    const uint32_t *code = dg_vk_spirv_find(v->name, &words);
    if (!code || words < 5 || code[0] != 0x07230203u) {
      CHECK(0, "%s: an embedded SPIR-V module", v->name);
      missing++;
      continue;
    }
    int khr = spirv_has_capability(code, words, 6022), /* ...MatrixKHR */
        nv = spirv_has_capability(code, words, 5357);  /* ...MatrixNV */
    if (khr != v->khr || (khr && nv)) {
      CHECK(0, "%s: translated %d, KHR capability %d, NV %d", v->name, v->khr,
            khr, nv);
      khr_bad++;
    }
    if ((v->tile_m > 0) != (v->tile_n > 0) || v->tile_m < 0 || v->tile_n < 0 ||
        ((khr || nv) && !v->tile_m)) {
      CHECK(0, "%s: tile %d x %d", v->name, v->tile_m, v->tile_n);
      tile_bad++;
    }
  }
  CHECK(!missing, "every one of the %d variants has an embedded module",
        SH_COUNT_);
  CHECK(!dup, "variant names are unique");
  CHECK(!khr_bad, "exactly the translated variants use KHR cooperative "
                  "matrices");
  CHECK(!tile_bad, "every cooperative-matrix variant has a tile");
  CHECK(!strcmp(dg_vk_variants[SH_GEMMK_F16].name, "gemmk_f16") &&
            dg_vk_variants[SH_GEMMK_F16].tile_m == 128 &&
            dg_vk_variants[SH_GEMMK_F16].tile_n == 256,
        "SH_GEMMK_F16 is gemmk_f16 with its 128x256 tile");
}

static void test_listing(dg_context *ctx, int dev) {
  dg_device_info info;
  dg_context_device_info(ctx, dev, &info);
  printf("# device %d: %s | %s\n", dev, info.name, info.driver);
  CHECK(info.name[0] &&
            (strstr(info.name, "(cpu)") || strstr(info.name, "(discrete)") ||
             strstr(info.name, "(integrated)") ||
             strstr(info.name, "(virtual)") || strstr(info.name, "(other)")),
        "device %d lists its name and type: %s", dev, info.name);
  CHECK(strstr(info.driver, "Vulkan 1.") && strstr(info.driver, " sg") &&
            strstr(info.driver, "smem"),
        "device %d lists driver, version and features: %s", dev, info.driver);
  CHECK((info.dtypes & (1u << DG_DTYPE_F32)) &&
            (info.ops & (1ull << DG_OP_CONV2D)) &&
            (info.ops & (1ull << DG_OP_SOFTMAX)) &&
            info.int8_max_lsb_deviation == 0,
        "device %d: dtypes 0x%x, ops 0x%llx, int8 bit-exact", dev, info.dtypes,
        (unsigned long long)info.ops);
}

/* Runs g on dev and on the CPU: verify on dev, and outputs compared. */
/* The cost model prices what compile runs: for every node, the work
 * prepared for an estimate makes the same choices as the work compile
 * records (module, passes, grid, blob and scratch sizes) and fills no
 * blob. */
static void check_estimate_choices(dg_context *ctx, dg_graph *g, int dev,
                                   const char *what) {
  vk_device *vd = ctx->devices.items[dev].impl;
  int differ = 0, filled = 0, n = g->ir.node_count;
  for (int i = 0; i < n; i++) {
    const dg_node *nd = &g->ir.nodes[i];
    vk_work e, c;
    bool ok_e = dg_vk_work_prepare(vd, &g->ir, nd, &e, true);
    bool ok_c = dg_vk_work_prepare(vd, &g->ir, nd, &c, false);
    differ += ok_e != ok_c || e.is_copy != c.is_copy || e.shader != c.shader ||
              e.pre.on != c.pre.on || e.pre.shader != c.pre.shader ||
              e.post.on != c.post.on || e.post.shader != c.post.shader ||
              memcmp(e.groups, c.groups, sizeof e.groups) ||
              e.params_bytes != c.params_bytes ||
              e.scratch_bytes != c.scratch_bytes;
    filled += e.params != NULL;
    dg_vk_work_release(&e);
    dg_vk_work_release(&c);
  }
  CHECK(!differ && !filled &&
            dg_vk_estimate(&ctx->devices.items[dev], &g->ir, &g->ir.nodes[0]) >
                0,
        "%s: the estimate prices the kernels compile picks (%d of %d nodes "
        "differ, %d blobs filled)",
        what, differ, n, filled);
}

static void check_graph(dg_context *ctx, dg_graph *g, int dev, const char *what,
                        double tol, int xn) {
  CHECK(dg_graph_status(g) == DG_OK, "%s: graph builds%s%s", what,
        dg_graph_status(g) ? ": " : "",
        dg_graph_status(g) ? dg_graph_error(g)->message : "");
  if (dg_graph_status(g) != DG_OK)
    return;
  check_estimate_choices(ctx, g, dev, what);
  dg_diagnostic d;
  dg_session *s = compile_on(g, dev, &d);
  CHECK(s != NULL, "%s: compiles pinned to device %d%s%s", what, dev,
        s ? "" : ": ", s ? "" : d.message);
  if (!s)
    return;
  CHECK(all_on(s, dev), "%s: every node on device %d", what, dev);
  /* The reference: the same graph on the CPU (pins fall back). */
  int cpu = 0;
  dg_compile_options co = {.devices = &cpu, .device_count = 1};
  dg_session *ref = NULL;
  if (dg_graph_compile(g, &co, &ref, &d) != DG_OK)
    ref = NULL;
  static float x[8192], y[2048], y_ref[2048];
  memcpy(x, rnd(xn, 1.0f), sizeof(float) * (size_t)xn);
  size_t xb = sizeof(float) * (size_t)xn;
  dg_tensor_desc xd;
  dg_graph_tensor_desc(g, (dg_tensor){1, g->serial}, &xd);
  if (xd.dtype == DG_DTYPE_F16) {
    uint16_t *h = (uint16_t *)x;
    for (int i = 0; i < xn; i++)
      h[i] = dg_f32_to_f16(x[i]);
    xb = 2 * (size_t)xn;
  }
  dg_tensor_desc yd;
  dg_graph_tensor_desc(g, (dg_tensor){g->ir.outputs[0].tensor, g->serial}, &yd);
  size_t yb = dg_desc_bytes(&yd);
  dg_binding in = {"x", x, xb};
  dg_status a = dg_session_run(s, &in, 1, &(dg_binding){"y", y, yb}, 1, &d);
  dg_status b =
      ref ? dg_session_run(ref, &in, 1, &(dg_binding){"y", y_ref, yb}, 1, NULL)
          : DG_ERROR_DEVICE;
  double err = 0, mag = 0;
  for (int64_t i = 0; i < dg_desc_elements(&yd); i++) {
    double u = dg_load_elem(yd.dtype, y, i),
           v = dg_load_elem(yd.dtype, y_ref, i);
    err = fmax(err, fabs(u - v));
    mag = fmax(mag, fabs(v));
  }
  CHECK(a == DG_OK && b == DG_OK && err <= tol * (mag > 0 ? mag : 1),
        "%s: runs and matches the CPU (max abs diff %.3g, magnitude %.3g)%s%s",
        what, err, mag, a ? ": " : "", a ? d.message : "");
  dg_verify_report r;
  dg_status v = dg_session_verify(s, &in, 1, &r);
  CHECK(v == DG_OK && r.ok,
        "%s: verify passes on all %d nodes (worst rel "
        "%.2g, lsb %lld%s%s)",
        what, r.nodes_checked, r.max_rel_error, (long long)r.max_lsb_error,
        r.ok ? "" : ", first bad: ", r.ok ? "" : r.node_name);
  dg_session_destroy(ref);
  dg_session_destroy(s);
}

/* GEMM-shaped nodes big enough for the 128x128 kernels (the fp32 SIMT
 * one under DG_TEST_VULKAN_PATHS=tiled or on a discrete GPU, the NV
 * cooperative-matrix fp16 one where the device has it): ragged tiles,
 * vector and element-wise operand loads, k- and n-contiguous B.
 * x [2,5,24,24] -> conv 96 (K = 45: element loads) -> conv 40 stride 2
 * (K = 864) + a residual (a 1x1 conv of x, stride 2), relu -> reshape
 * [80,144] -> fully_connected 36 -> reshape [40,72] -> matmul [72,33] (N
 * = 33: element loads) -> y [40,33]. The compile-time passes fuse the
 * add and the relu into conv2 ("conv2+add+relu") and a hard swish after
 * conv1's relu into it ("conv1+hs"), so each path's residual and unary
 * epilogues run. */
static dg_graph *gemm_graph(dg_context *ctx, dg_dtype t, int pin) {
  dg_graph *g = dg_graph_create(ctx, "gemm shapes");
  dg_graph_set_device(g, pin);
  dg_tensor_desc x_desc = fdesc(t, 4, (int64_t[]){2, 5, 24, 24});
  dg_tensor x = dg_graph_input(g, "x", &x_desc);
  dg_conv2d_params cp = {.padding = DG_PADDING_SAME_UPPER,
                         .activation = DG_ACTIVATION_RELU};
  dg_tensor c1 = dg_graph_unary(
      g, "hs", DG_UNARY_HARD_SWISH,
      dg_graph_conv2d(g, "conv1", x,
                      fconst(g, "w1", t, 4, (int64_t[]){96, 5, 3, 3}),
                      fconst(g, "b1", t, 1, (int64_t[]){96}), &cp),
      0, 0);
  dg_conv2d_params sp = {.stride = {2, 2}, .padding = DG_PADDING_SAME_UPPER};
  dg_tensor res = dg_graph_conv2d(
      g, "conv_res", x, fconst(g, "wr", t, 4, (int64_t[]){40, 5, 1, 1}),
      DG_TENSOR_NONE, &(dg_conv2d_params){.stride = {2, 2}});
  dg_tensor c2 = dg_graph_conv2d(
      g, "conv2", c1, fconst(g, "w2", t, 4, (int64_t[]){40, 96, 3, 3}),
      fconst(g, "b2", t, 1, (int64_t[]){40}), &sp);
  dg_tensor sum = dg_graph_relu(g, "relu", dg_graph_add(g, "add", c2, res));
  dg_tensor r1 = dg_graph_reshape(g, "r1", sum, 2, (int64_t[]){80, 144});
  dg_tensor f = dg_graph_fully_connected(
      g, "fc", r1, fconst(g, "wf", t, 2, (int64_t[]){36, 144}),
      fconst(g, "bf", t, 1, (int64_t[]){36}), DG_ACTIVATION_RELU6);
  dg_tensor r2 = dg_graph_reshape(g, "r2", f, 2, (int64_t[]){40, 72});
  dg_tensor mm = dg_graph_matmul(g, "matmul", r2,
                                 fconst(g, "wm", t, 2, (int64_t[]){72, 33}));
  dg_graph_output(g, "y", mm, DG_LAYOUT_NCHW);
  return g;
}

/* A squeeze-excite block on 1x1 planes, as EfficientNet's: x [2,300,1,1]
 * -> 3x3 conv (pad 1: eight of nine taps padding) 300 -> 40, bias, relu,
 * silu -> 1x1 conv 40 -> 300, bias, sigmoid -> times x. Few output pixels
 * and deep windows: the conv GEMV on GPUs (and under
 * DG_TEST_VULKAN_PATHS=splitk), with the fused functions in its
 * epilogue. */
static dg_graph *se_graph(dg_context *ctx, dg_dtype t, int pin) {
  dg_graph *g = dg_graph_create(ctx, "squeeze-excite");
  dg_graph_set_device(g, pin);
  dg_tensor_desc x_desc = fdesc(t, 4, (int64_t[]){2, 300, 1, 1});
  dg_tensor x = dg_graph_input(g, "x", &x_desc);
  dg_conv2d_params p1 = {.pads = {1, 1, 1, 1},
                         .activation = DG_ACTIVATION_RELU};
  dg_tensor c1 = dg_graph_conv2d(
      g, "fc1", x, fconst(g, "w1", t, 4, (int64_t[]){40, 300, 3, 3}),
      fconst(g, "b1", t, 1, (int64_t[]){40}), &p1);
  c1 = dg_graph_unary(g, "silu", DG_UNARY_SILU, c1, 0, 0);
  dg_tensor c2 = dg_graph_conv2d(
      g, "fc2", c1, fconst(g, "w2", t, 4, (int64_t[]){300, 40, 1, 1}),
      fconst(g, "b2", t, 1, (int64_t[]){300}), &(dg_conv2d_params){0});
  c2 = dg_graph_unary(g, "sig", DG_UNARY_SIGMOID, c2, 0, 0);
  dg_graph_output(g, "y", dg_graph_binary(g, "scale", DG_BINARY_MUL, x, c2),
                  DG_LAYOUT_NCHW);
  return g;
}

/* The 128x128-class cooperative-matrix kernels only take shapes that fill
 * a big GPU with at least 64 tiles, which the small graphs above never do.
 * Each case is checked node by node against the reference kernels
 * (dg_session_verify):
 *  - matmul [1000,200] x [200,1040]: ragged M and N, K not a multiple of
 *    the K-step (the 64x64 KHR GEMM, or NV's 128x128);
 *  - matmul [1000,200] x [200,2100]: 72 tiles of 128x256 (the KHR 128x256
 *    GEMM);
 *  - batched matmul [3,700,136] x [3,136,2100]: 162 tiles of 128x256 in 3
 *    matrices (batch offsets), ragged M, N and K;
 *  - fully_connected [1000,200] -> 2104 with ReLU, and -> 2100 with a
 *    bias and ReLU6: the 128x256 GEMM with B k-contiguous, its epilogue's
 *    16-byte stores with the clamp (every row aligned) and its 8-byte
 *    ones with the bias;
 *  - 3x3 conv 64 -> 256 on 8 x 28 x 28, padded, bias, ReLU;
 *  - 5x3 conv 32 -> 128 in 2 groups on 4 x 30 x 30, stride 2, dilation
 *    (2, 1): K = 240 steps through (c, kh, kw) with carries in both;
 *  - matmul [200,4000] x [4000,300]: 20 tiles of 64x64 with K = 4000,
 *    which the KHR GEMM splits in 4 slices of K (split-K, summed by
 *    splitk.comp); a 3x3 conv 256 -> 256 on 2 x 7 x 7 (8 tiles, K = 2304),
 *    split only where the conv takes no first pass (DG_VK_CONV_GATHER=
 *    implicit) or DG_VK_SPLITK forces it;
 *  - convs for each kernel over the blocked copies (see the table).
 * Run on GPUs only: on a CPU-type device it would only time the
 * reference. */
typedef struct big_case {
  const char *what;
  enum {
    BIG_MATMUL,
    BIG_CONV,
    BIG_CONV_WIN, /* weights a graph input (not constant: the blocking
                     pre-pass copies them each run) */
    BIG_FC,       /* fully_connected, cp.activation, no bias */
    BIG_FC_BIAS   /* the same with a bias [O] */
  } kind;
  int64_t x[4], w[4];
  dg_conv2d_params cp;
  int res;          /* convs: a residual input "r" added, then a relu: the plan
                       must show them fused into the conv */
  dg_unary_fn post; /* convs: then this function, fused too */
} big_case;
static void check_big_f16(dg_context *ctx, int dev) {
  /* clang-format off */
  static const big_case cases[] = {
    {"matmul 1000x200x1040", BIG_MATMUL, {1000, 200}, {200, 1040}, {.groups = 0}, 0, 0},
    {"matmul 1000x200x2100", BIG_MATMUL, {1000, 200}, {200, 2100}, {.groups = 0}, 0, 0},
    {"matmul 3x700x136x2100", BIG_MATMUL, {3, 700, 136}, {3, 136, 2100},
     {.groups = 0}, 0, 0},
    /* fully_connected on the 128x256 GEMM (B k-contiguous): the clamp in
       the 16-byte stores, and the bias through the 8-byte ones. */
    {"fully_connected 1000x200 -> 2104, ReLU", BIG_FC, {1000, 200}, {2104, 200},
     {.activation = DG_ACTIVATION_RELU}, 0, 0},
    {"fully_connected 1000x200 -> 2100, bias, ReLU6", BIG_FC_BIAS, {1000, 200},
     {2100, 200}, {.activation = DG_ACTIVATION_RELU6}, 0, 0},
    {"3x3 conv 64->256 @8x28x28", BIG_CONV, {8, 64, 28, 28}, {256, 64, 3, 3},
     {.pads = {1, 1, 1, 1}, .activation = DG_ACTIVATION_RELU}, 0, 0},
    {"3x3 conv 64->256 @8x28x28 + residual, silu", BIG_CONV, {8, 64, 28, 28},
     {256, 64, 3, 3}, {.pads = {1, 1, 1, 1}}, 1, DG_UNARY_SILU},
    {"3x3 conv 64->256 @8x28x28, gelu", BIG_CONV, {8, 64, 28, 28},
     {256, 64, 3, 3}, {.pads = {1, 1, 1, 1}}, 0, DG_UNARY_GELU},
    {"5x3 conv 32->128 g2 s2 d(2,1) @4x30x30", BIG_CONV, {4, 32, 30, 30},
     {128, 16, 5, 3},
     {.stride = {2, 2}, .dilation = {2, 1}, .pads = {2, 1, 2, 1},
      .groups = 2}, 0, 0},
    {"matmul 200x4000x300", BIG_MATMUL, {200, 4000}, {4000, 300}, {.groups = 0}, 0, 0},
    {"3x3 conv 256->256 @2x7x7, hard swish", BIG_CONV, {2, 256, 7, 7},
     {256, 256, 3, 3},
     {.pads = {1, 1, 1, 1}, .activation = DG_ACTIVATION_RELU6}, 0,
     DG_UNARY_HARD_SWISH},
    /* Ragged: 7x7 planes end mid-vector in the 4-wide stores. */
    {"3x3 conv 256->256 @2x7x7 + residual, sigmoid", BIG_CONV, {2, 256, 7, 7},
     {256, 256, 3, 3}, {.pads = {1, 1, 1, 1}}, 1, DG_UNARY_SIGMOID},
    /* Enough 64x64 tiles for two waves on an H200: the 64x128 kernel. */
    {"3x3 conv 16->64 @12x56x56", BIG_CONV, {12, 16, 56, 56}, {64, 16, 3, 3},
     {.pads = {1, 1, 1, 1}, .activation = DG_ACTIVATION_RELU}, 0, 0},
    /* Channels not a multiple of 8: padded in the blocked copies. */
    {"7x7 conv 3->64 s2 @4x64x64", BIG_CONV, {4, 3, 64, 64}, {64, 3, 7, 7},
     {.stride = {2, 2}, .pads = {3, 3, 3, 3}}, 0, 0},
    {"1x1 conv 64->128 s2 @4x32x32 + residual", BIG_CONV, {4, 64, 32, 32},
     {128, 64, 1, 1}, {.stride = {2, 2}}, 1, 0},
    {"3x3 conv 60->96 g3 d2 @2x40x40, weights an input", BIG_CONV_WIN, {2, 60, 40, 40}, {96, 20, 3, 3},
     {.dilation = {2, 2}, .pads = {2, 2, 2, 2}, .groups = 3}, 0, 0},
  };
  /* clang-format on */
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const big_case *bc = &cases[c];
    dg_graph *g = dg_graph_create(ctx, bc->what);
    dg_graph_set_device(g, dev);
    int conv = bc->kind == BIG_CONV || bc->kind == BIG_CONV_WIN;
    int rank = conv ? 4 : bc->x[2] ? 3 : 2;
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
      n *= bc->x[i];
    dg_tensor_desc x_desc = fdesc(DG_DTYPE_F16, rank, bc->x);
    dg_tensor x = dg_graph_input(g, "x", &x_desc);
    dg_tensor_desc w_desc = fdesc(DG_DTYPE_F16, rank, bc->w);
    dg_tensor w = bc->kind == BIG_CONV_WIN
                      ? dg_graph_input(g, "w", &w_desc)
                      : fconst(g, "w", DG_DTYPE_F16, rank, bc->w);
    int64_t nw = dg_desc_elements(&w_desc);
    dg_tensor bias =
        conv || bc->kind == BIG_FC_BIAS
            ? fconst(g, "b", DG_DTYPE_F16, 1, (int64_t[]){bc->w[0]})
            : DG_TENSOR_NONE;
    dg_tensor y =
        conv ? dg_graph_conv2d(g, "conv", x, w, bias, &bc->cp)
        : bc->kind == BIG_MATMUL
            ? dg_graph_matmul(g, "matmul", x, w)
            : dg_graph_fully_connected(g, "fc", x, w, bias, bc->cp.activation);
    dg_tensor_desc yd = {0};
    int64_t nr = 0;
    if (bc->res) {
      dg_graph_tensor_desc(g, y, &yd);
      nr = dg_desc_elements(&yd);
      dg_tensor r = dg_graph_input(g, "r", &yd);
      y = dg_graph_relu(g, "relu", dg_graph_add(g, "add", y, r));
    }
    if (bc->post)
      y = dg_graph_unary(g, "post", bc->post, y, 0, 0);
    dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
    dg_diagnostic d;
    dg_session *s = dg_graph_status(g) ? NULL : compile_on(g, dev, &d);
    uint16_t *h = malloc(sizeof *h * (size_t)(n + nw + nr));
    if (s && h) {
      const float *r = rnd((int)(n < 8192 ? n : 8192), 1.0f);
      for (int64_t i = 0; i < n + nw + nr; i++)
        h[i] = dg_f32_to_f16(r[i % 8192] * (float)(1 + i % 3) / 3.0f);
      dg_binding in[3] = {{"x", h, sizeof *h * (size_t)n},
                          {"w", h + n, sizeof *h * (size_t)nw},
                          {"r", h + n + nw, sizeof *h * (size_t)nr}};
      if (bc->res)
        in[1] = in[2];
      dg_verify_report rep;
      dg_status v = dg_session_verify(
          s, in, bc->kind == BIG_CONV_WIN || bc->res ? 2 : 1, &rep);
      /* the plan's name of the conv with what fused into it */
      char fused[64];
      snprintf(fused, sizeof fused, "conv%s%s", bc->res ? "+add+relu" : "",
               bc->post ? "+post" : "");
      CHECK(v == DG_OK && rep.ok &&
                (!(bc->res || bc->post) || has_node(s, fused)),
            "f16 %s on the big tiles: %smatches the reference (worst "
            "relative error %.2g)",
            bc->what, bc->res || bc->post ? "fused, " : "", rep.max_rel_error);
    } else {
      CHECK(0, "f16 %s: compiles%s%s", bc->what, s ? "" : ": ",
            s ? "" : d.message);
    }
    free(h);
    dg_session_destroy(s);
    dg_graph_destroy(g);
  }
}

/* gemm_graph's residual add and relu fused into conv2, its hard swish into
 * conv1, on device dev. */
static void check_fused_epilogues(dg_graph *g, int dev, const char *what) {
  dg_diagnostic d;
  dg_session *s = compile_on(g, dev, &d);
  CHECK(s && has_node(s, "conv2+add+relu") && has_node(s, "conv1+hs"),
        "%s: the residual add and relu fuse into conv2, the hard swish into "
        "conv1, on device %d%s%s",
        what, dev, s ? "" : ": ", s ? "" : d.message);
  dg_session_destroy(s);
}

static void test_every_op(dg_context *ctx, int dev) {
  dg_graph *gg = gemm_graph(ctx, DG_DTYPE_F32, dev);
  check_fused_epilogues(gg, dev, "gemm shapes, f32");
  check_graph(ctx, gg, dev, "gemm shapes, f32", 1e-4, 2 * 5 * 576);
  dg_graph_destroy(gg);
  dg_device_info ginfo;
  dg_context_device_info(ctx, dev, &ginfo);
  if (ginfo.dtypes & (1u << DG_DTYPE_F16)) {
    gg = gemm_graph(ctx, DG_DTYPE_F16, dev);
    check_fused_epilogues(gg, dev, "gemm shapes, f16");
    check_graph(ctx, gg, dev, "gemm shapes, f16", 1e-2, 2 * 5 * 576);
    dg_graph_destroy(gg);
    if (!strstr(ginfo.name, "(cpu)"))
      check_big_f16(ctx, dev);
    else
      t_skip("f16 128x128-tile kernels: CPU-type device (GPU-only shapes)");
  }

  dg_graph *g = float_graph(ctx, DG_DTYPE_F32, dev);
  check_graph(ctx, g, dev, "every float op, f32", 1e-4, 3 * 144);
  dg_graph_destroy(g);
  dg_device_info info;
  dg_context_device_info(ctx, dev, &info);
  if (info.dtypes & (1u << DG_DTYPE_F16)) {
    g = float_graph(ctx, DG_DTYPE_F16, dev);
    check_graph(ctx, g, dev, "every float op, f16", 1e-2, 3 * 144);
    dg_graph_destroy(g);
  } else {
    t_skip("f16: the device has no shaderFloat16 / 16-bit storage");
  }
  g = int8_graph(ctx, dev);
  check_graph(ctx, g, dev, "int8 ops (bit-exact)", 0, 300);
  dg_graph_destroy(g);
  g = se_graph(ctx, DG_DTYPE_F32, dev);
  check_graph(ctx, g, dev, "squeeze-excite, f32", 1e-4, 600);
  dg_graph_destroy(g);
  if (info.dtypes & (1u << DG_DTYPE_F16)) {
    g = se_graph(ctx, DG_DTYPE_F16, dev);
    check_graph(ctx, g, dev, "squeeze-excite, f16", 1e-2, 600);
    dg_graph_destroy(g);
  }
}

/* A reduction deeper than llvmpipe's loop limit (65535 iterations an
 * invocation, after which its loops stop silently): a matmul with K =
 * 70000 summed 65533 terms there. Every device either declines it naming
 * the limit or computes it exactly (all ones: the sum is K). */
static void test_loop_limit(dg_context *ctx, int dev) {
  enum { K = 70000, N = 4 };
  static float a[K], b[K * N], y[N];
  for (int i = 0; i < K; i++)
    a[i] = 1.0f;
  for (int i = 0; i < K * N; i++)
    b[i] = 1.0f;
  dg_graph *g = dg_graph_create(ctx, "deep");
  dg_tensor_desc ad = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {1, K}};
  dg_tensor_desc bd = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {K, N}};
  dg_tensor x = dg_graph_input(g, "x", &ad);
  dg_tensor w = dg_graph_constant(g, "w", &bd, b, 0);
  dg_graph_output(g, "y", dg_graph_matmul(g, "mm", x, w), DG_LAYOUT_NCHW);
  dg_compile_options co = {.devices = &dev, .device_count = 1};
  dg_session *s = NULL;
  dg_diagnostic d;
  dg_status st = dg_graph_compile(g, &co, &s, &d);
  dg_device_info info;
  dg_context_device_info(ctx, dev, &info);
  if (st != DG_OK) {
    CHECK(strstr(info.name, "llvmpipe") && strstr(d.message, "llvmpipe stops"),
          "K = %d matmul: declined on device %d only for llvmpipe's loop "
          "limit (%s)",
          K, dev, d.message);
  } else {
    st = dg_session_run(s, &(dg_binding){"x", a, sizeof a}, 1,
                        &(dg_binding){"y", y, sizeof y}, 1, &d);
    bool exact = st == DG_OK;
    for (int i = 0; i < N; i++)
      exact = exact && y[i] == (float)K;
    CHECK(exact && !strstr(info.name, "llvmpipe"),
          "K = %d matmul on device %d: every sum is %d (%g)", K, dev, K,
          (double)y[0]);
  }
  dg_session_destroy(s);
  dg_graph_destroy(g);
}

/* dg_context_options.device_timeout_ms bounds the fence wait: a run far
 * longer than 1 ms (a few large matmuls: 0.3 GFLOP on a CPU-type device,
 * 550 on a GPU) fails with DG_ERROR_DEVICE naming the option. A careless
 * caller then frees the input and reuses the output at once; destroying
 * the session and the context waits for the still-running work at most
 * the time-out each, abandoning the device (counted) rather than waiting
 * for it, and once the work ends the output is untouched. No validation
 * message either way. */
static void test_timeout(int nth) {
  dg_context_options o = {.device_timeout_ms = 1,
                          .device_kinds = DG_DEVICE_VULKAN};
  dg_context *c = NULL;
  int devs[8];
  if (dg_context_create(&o, &c) != DG_OK || vulkan_devices(c, devs, 8) <= nth) {
    dg_context_destroy(c);
    return;
  }
  int dev = devs[nth];
  dg_device_info info;
  dg_context_device_info(c, dev, &info);
  slow_graph sg = slow_graph_make(c, strstr(info.name, "(cpu)") != NULL);
  dg_session *s = NULL;
  dg_diagnostic diag = {0};
  int abandoned = dg_vk_abandoned_count();
  double t0 = slow_graph_now_ms();
  dg_status st = slow_graph_run(&sg, dev, &s, &diag);
  CHECK(st == DG_ERROR_DEVICE && strstr(diag.message, "device_timeout_ms"),
        "device %d, device_timeout_ms = 1: a long run fails naming the "
        "option (%s)",
        dev, diag.message);
  slow_graph_after_error(&sg);
  double t1 = slow_graph_now_ms();
  dg_session_destroy(s);
  dg_graph_destroy(sg.g);
  sg.g = NULL;
  dg_context_destroy(c);
  double destroy_ms = slow_graph_now_ms() - t1;
  bool left = dg_vk_abandoned_count() > abandoned;
  dg_vk_abandoned_finish();
  double work_ms = slow_graph_now_ms() - t0;
  if (st == DG_ERROR_DEVICE && !left) {
    char why[160];
    snprintf(why, sizeof why,
             "device %d finished its work (%.1f ms) before the destroy's "
             "bounded waits ended; nothing to abandon",
             dev, work_ms);
    t_skip(why);
  } else
    CHECK(left && destroy_ms < 250 && destroy_ms < work_ms / 2,
          "device %d: destroy after the time-out took %.1f ms, the work "
          "%.1f ms: the device was abandoned, not waited for",
          dev, destroy_ms, work_ms);
  CHECK(slow_graph_output_marked(&sg),
        "device %d: the output buffer was not written after the failed run",
        dev);
  slow_graph_free(&sg);
}

/* One submit and one fence per run of a one-segment session; node times
 * from timestamps. */
static void test_submits_and_timestamps(dg_context *ctx, int dev) {
  dg_graph *g = float_graph(ctx, DG_DTYPE_F32, dev);
  dg_diagnostic d;
  dg_session *s = compile_on(g, dev, &d);
  if (!s) {
    CHECK(0, "compile for the submit count: %s", d.message);
    dg_graph_destroy(g);
    return;
  }
  float x[3 * 144], y[24];
  memcpy(x, rnd(3 * 144, 1), sizeof x);
  dg_binding in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  int before = dg_vk_submit_count();
  int ok = 1;
  for (int i = 0; i < 3; i++)
    ok &= dg_session_run(s, &in, 1, &out, 1, NULL) == DG_OK;
  int submits = dg_vk_submit_count() - before;
  const dg_plan *p = dg_session_plan(s);
  CHECK(ok && submits == 3, "%d nodes, 3 runs: %d vkQueueSubmit calls",
        dg_plan_node_count(p), submits);
  int timed = 0;
  double total = 0;
  for (int i = 0; i < dg_plan_node_count(p); i++) {
    dg_plan_node pn;
    dg_plan_get_node(p, i, &pn);
    timed += pn.measured_us > 0;
    total += pn.measured_us;
  }
  CHECK(timed >= dg_plan_node_count(p) - 2,
        "timestamps give node times: %d of %d nodes timed, %.1f us in all",
        timed, dg_plan_node_count(p), total);
  dg_session_destroy(s);
  dg_graph_destroy(g);
}

static int run_small(dg_context *ctx, int dev, dg_diagnostic *d) {
  dg_graph *g = float_graph(ctx, DG_DTYPE_F32, dev);
  dg_session *s = compile_on(g, dev, d);
  int ok = s != NULL;
  if (s) {
    float x[3 * 144], y[24];
    memcpy(x, rnd(3 * 144, 1), sizeof x);
    ok = dg_session_run(s, &(dg_binding){"x", x, sizeof x}, 1,
                        &(dg_binding){"y", y, sizeof y}, 1, d) == DG_OK;
  }
  dg_session_destroy(s);
  dg_graph_destroy(g);
  return ok;
}

static int vulkan_index(dg_context *ctx, int nth) {
  int idx[8];
  int n = vulkan_devices(ctx, idx, 8);
  return nth < n ? idx[nth] : -1;
}

/* The pipeline cache: written at context end, read back by the next
 * context, corrupt and foreign files ignored (and replaced). */
static void test_pipeline_cache(int nth) {
  dg_context *c;
  dg_context_options o = {.cache_dir = cache_dir};
  dg_diagnostic d;
  char path[1024];
  if (dg_context_create(&o, &c) != DG_OK)
    return;
  int dev = vulkan_index(c, nth);
  snprintf(path, sizeof path, "%s", dg_vk_cache_path(&c->devices.items[dev]));
  unlink(path);
  dg_context_destroy(c);
  dg_context_create(&o, &c);
  dev = vulkan_index(c, nth);
  CHECK(dg_vk_cache_loaded_bytes(&c->devices.items[dev]) == 0,
        "no cache file: nothing loaded");
  CHECK(run_small(c, dev, &d), "runs with an empty cache");
  dg_context_destroy(c);
  struct stat st;
  int found = stat(path, &st) == 0;
  CHECK(found && st.st_size > 0,
        "the pipeline cache is written at context end (%s, %lld bytes)", path,
        (long long)st.st_size);
  dg_context_create(&o, &c);
  dev = vulkan_index(c, nth);
  long loaded = dg_vk_cache_loaded_bytes(&c->devices.items[dev]);
  CHECK(loaded > 0, "the next context loads it (%ld bytes)", loaded);
  CHECK(run_small(c, dev, &d), "runs from the loaded cache");
  dg_context_destroy(c);

  /* Corrupt: flip bytes in the middle (the hash no longer matches). */
  FILE *f = fopen(path, "r+b");
  if (f) {
    fseek(f, (long)st.st_size / 2, SEEK_SET);
    fputs("garbage!", f);
    fclose(f);
  }
  dg_context_create(&o, &c);
  dev = vulkan_index(c, nth);
  CHECK(dg_vk_cache_loaded_bytes(&c->devices.items[dev]) == 0,
        "a corrupt cache file is ignored");
  CHECK(run_small(c, dev, &d), "runs after ignoring it");
  dg_context_destroy(c);
  dg_context_create(&o, &c);
  dev = vulkan_index(c, nth);
  CHECK(dg_vk_cache_loaded_bytes(&c->devices.items[dev]) > 0,
        "and it was rewritten whole");
  dg_context_destroy(c);

  /* Foreign: a file of another driver/device (random bytes, or a
   * truncated one). */
  f = fopen(path, "wb");
  if (f) {
    for (int i = 0; i < 4096; i++)
      fputc(t_range(0, 255), f);
    fclose(f);
  }
  dg_context_create(&o, &c);
  dev = vulkan_index(c, nth);
  CHECK(dg_vk_cache_loaded_bytes(&c->devices.items[dev]) == 0 &&
            run_small(c, dev, &d),
        "a foreign cache file is ignored");
  dg_context_destroy(c);
  if (truncate(path, 40) != 0) { /* keep the header's first bytes only */
  }
  dg_context_create(&o, &c);
  dev = vulkan_index(c, nth);
  CHECK(dg_vk_cache_loaded_bytes(&c->devices.items[dev]) == 0,
        "a truncated cache file is ignored");
  dg_context_destroy(c);

  /* disable_cache: nothing read or written. */
  unlink(path);
  dg_context_options off = {.cache_dir = cache_dir, .disable_cache = 1};
  dg_context_create(&off, &c);
  dev = vulkan_index(c, nth);
  CHECK(!dg_vk_cache_path(&c->devices.items[dev])[0] && run_small(c, dev, &d),
        "disable_cache: no cache file used");
  dg_context_destroy(c);
  CHECK(stat(path, &st) != 0, "disable_cache: nothing written");
}

/* DG_TEST_VULKAN_FAIL_ALLOC=N fails the N-th vkAllocateMemory: every N
 * gives a clean DG_ERROR_OUT_OF_MEMORY naming the call and VkResult (the
 * sanitizer build checks nothing leaks); then everything works again. A
 * strict graph vulkan - cpu - vulkan has two Vulkan segments. */
static void test_alloc_failures(dg_context *ctx, int dev) {
  dg_graph *g = dg_graph_create(ctx, "two segments");
  int64_t xd[4] = {1, 2, 6, 6};
  dg_tensor_desc x_desc = fdesc(DG_DTYPE_F32, 4, xd);
  dg_tensor x = dg_graph_input(g, "x", &x_desc);
  dg_graph_set_device(g, dev);
  dg_conv2d_params cp = {.padding = DG_PADDING_VALID};
  dg_tensor c = dg_graph_conv2d(
      g, "conv", x, fconst(g, "w", DG_DTYPE_F32, 4, (int64_t[]){4, 2, 3, 3}),
      DG_TENSOR_NONE, &cp);
  dg_graph_set_device(g, 0);
  dg_tensor r = dg_graph_relu(g, "relu_cpu", c);
  dg_graph_set_device(g, dev);
  dg_tensor f = dg_graph_fully_connected(
      g, "fc", r, fconst(g, "wf", DG_DTYPE_F32, 2, (int64_t[]){3, 64}),
      DG_TENSOR_NONE, DG_ACTIVATION_RELU);
  dg_graph_output(g, "y", f, DG_LAYOUT_NCHW);
  float xv[72], y[3];
  memcpy(xv, rnd(72, 1), sizeof xv);
  dg_compile_options strict = {.policy = DG_POLICY_STRICT};
  int failures = 0, clean = 0, last = 0;
  for (int n = 1; n < 20; n++) {
    char v[16];
    snprintf(v, sizeof v, "%d", n);
    setenv("DG_TEST_VULKAN_FAIL_ALLOC", v, 1);
    dg_vk_reset_alloc_count();
    dg_session *s = NULL;
    dg_diagnostic d = {0};
    dg_status st = dg_graph_compile(g, &strict, &s, &d);
    if (st == DG_OK)
      st = dg_session_run(s, &(dg_binding){"x", xv, sizeof xv}, 1,
                          &(dg_binding){"y", y, sizeof y}, 1, &d);
    dg_session_destroy(s);
    int calls = dg_vk_alloc_count();
    if (calls < n) { /* the failure point lies past the last allocation */
      last = n;
      CHECK(st == DG_OK,
            "allocation %d never reached: compile and run "
            "succeed (%d allocations)",
            n, calls);
      break;
    }
    failures++;
    clean += st == DG_ERROR_OUT_OF_MEMORY &&
             strstr(d.message, "VK_ERROR_OUT_OF_DEVICE_MEMORY") &&
             strstr(d.message, "vkAllocateMemory");
    if (st != DG_ERROR_OUT_OF_MEMORY)
      printf("# allocation %d: status %d: %s\n", n, (int)st, d.message);
  }
  unsetenv("DG_TEST_VULKAN_FAIL_ALLOC");
  CHECK(failures >= 2 && clean == failures && last > 0,
        "allocation failure injected at each of %d allocations: %d clean "
        "DG_ERROR_OUT_OF_MEMORY with the call and VkResult named",
        failures, clean);
  dg_diagnostic d;
  CHECK(run_small(ctx, dev, &d), "the device works after the failures");
  dg_graph_destroy(g);
}

static dg_graph *conv_graph(dg_context *ctx, int64_t n, int64_t c, int64_t hw,
                            int pin) {
  dg_graph *g = dg_graph_create(ctx, "conv");
  dg_graph_set_device(g, pin);
  dg_tensor_desc xd = fdesc(DG_DTYPE_F32, 4, (int64_t[]){n, c, hw, hw});
  dg_tensor x = dg_graph_input(g, "x", &xd);
  float *w = calloc((size_t)(c * c * 9), sizeof(float)); /* copied below */
  dg_tensor_desc wd = fdesc(DG_DTYPE_F32, 4, (int64_t[]){c, c, 3, 3});
  dg_conv2d_params cp = {.padding = DG_PADDING_SAME_UPPER,
                         .activation = DG_ACTIVATION_RELU};
  dg_tensor y = dg_graph_conv2d(
      g, "conv", x, dg_graph_constant(g, "w", &wd, w, 0), DG_TENSOR_NONE, &cp);
  free(w);
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  return g;
}

static int placed_on(dg_graph *g, const dg_compile_options *o, int dev,
                     char *reason, size_t size) {
  dg_session *s = NULL;
  if (dg_graph_compile(g, o, &s, NULL) != DG_OK)
    return -1;
  int on = 0;
  const dg_plan *p = dg_session_plan(s);
  for (int i = 0; i < dg_plan_node_count(p); i++) {
    dg_plan_node pn;
    dg_plan_get_node(p, i, &pn);
    on += pn.device_index == dev;
    if (i == 0)
      dg_strlcpy(reason, pn.reason_text, size);
  }
  dg_session_destroy(s);
  return on;
}

/* The cost model through the plan: a CPU-type device or a tiny graph
 * never wins over the CPU; pinning under STRICT does place nodes there; a
 * large convolution goes to a discrete GPU. */
/* The placement checks run in a context whose CPU has 2 threads, so that
 * the answer does not depend on the machine: against a 64-core CPU the
 * PCIe transfers of a one-conv graph rightly keep even a big conv home. */
static void test_placement_in(dg_context *ctx, int dev);
static void test_placement(dg_context *ctx_all, int dev) {
  (void)ctx_all;
  dg_context *ctx;
  dg_context_options o = {.cpu_threads = 2, .cache_dir = cache_dir};
  if (dg_context_create(&o, &ctx) != DG_OK) {
    CHECK(0, "placement context");
    return;
  }
  test_placement_in(ctx, dev); /* same device order as ctx_all */
  dg_context_destroy(ctx);
}

static void test_placement_in(dg_context *ctx, int dev) {
  dg_device *d = &ctx->devices.items[dev];
  dg_device_info info;
  dg_context_device_info(ctx, dev, &info);
  char why[160];
  dg_graph *g = float_graph(ctx, DG_DTYPE_F32, -1);
  int on = placed_on(g, NULL, dev, why, sizeof why);
  if (strstr(info.name, "(cpu)"))
    CHECK(on == 0,
          "auto: nothing of a small graph goes to the CPU-type "
          "Vulkan device (%d nodes; %s)",
          on, why);
  dg_graph_destroy(g);
  g = float_graph(ctx, DG_DTYPE_F32, dev);
  dg_compile_options strict = {.policy = DG_POLICY_STRICT};
  on = placed_on(g, &strict, dev, why, sizeof why);
  CHECK(on == dg_graph_node_count(g), "strict pins put all %d nodes there", on);
  dg_graph_destroy(g);
  /* Pretend the device is a discrete GPU (estimates only). */
  dg_vk_pretend_device_type(d, 2 /* discrete */);
  g = float_graph(ctx, DG_DTYPE_F32, -1);
  on = placed_on(g, NULL, dev, why, sizeof why);
  CHECK(on == 0, "discrete GPU: a tiny graph stays on the CPU (%s)", why);
  dg_graph_destroy(g);
  /* Compute-dense (3.7 GFLOP on 1.6 MB in and out). Between the CPU and
   * this device only: another GPU in the machine (the same H200 through
   * OpenCL, with cheaper modelled transfers) may rightly win otherwise. */
  int pair[2] = {0, dev};
  dg_compile_options cpu_and_this = {.devices = pair, .device_count = 2};
  g = conv_graph(ctx, 1, 512, 28, -1);
  on = placed_on(g, &cpu_and_this, dev, why, sizeof why);
  CHECK(on == 1, "discrete GPU: a large conv goes to it (%s)", why);
  dg_graph_destroy(g);
  dg_vk_pretend_device_type(d, 4 /* cpu */);
  g = conv_graph(ctx, 8, 64, 56, -1);
  on = placed_on(g, NULL, dev, why, sizeof why);
  if (strstr(info.name, "(cpu)"))
    CHECK(on == 0, "CPU-type device: even a large conv stays on the CPU (%s)",
          why);
  dg_graph_destroy(g);
  dg_vk_pretend_device_type(d, -1);
}

int main(void) {
  t_seed(7);
  test_variants();
  /* Validation is on unless the caller says DG_VULKAN_VALIDATION=0: on a
   * GPU machine whose layer predates VK_KHR_cooperative_matrix, that is
   * the way to test the KHR kernels, which the device turns off under
   * such a layer. */
  setenv("DG_VULKAN_VALIDATION", "1", 0);
  snprintf(cache_dir, sizeof cache_dir, "/tmp/dg-test-vulkan-%ld",
           (long)getpid());
  dg_context *ctx;
  dg_context_options o = {.cache_dir = cache_dir};
  if (dg_context_create(&o, &ctx) != DG_OK) {
    CHECK(0, "context");
    return 1;
  }
  int devs[8];
  int n = vulkan_devices(ctx, devs, 8);
  if (!n) {
    t_skip("no Vulkan device");
    dg_context_destroy(ctx);
    return 0;
  }
  if (!dg_vk_validation_enabled())
    t_skip("validation layer off (DG_VULKAN_VALIDATION=0) or not installed: "
           "running without it");
  for (int i = 0; i < n; i++) {
    test_listing(ctx, devs[i]);
    test_every_op(ctx, devs[i]);
    test_submits_and_timestamps(ctx, devs[i]);
    test_alloc_failures(ctx, devs[i]);
    test_placement(ctx, devs[i]);
    test_loop_limit(ctx, devs[i]);
    test_timeout(i);
  }
  dg_context_destroy(ctx);

  /* The discrete-GPU paths on whatever device is here: staging buffers
   * with copies recorded around the nodes, constants uploaded by a submit,
   * and the shared-memory tiled GEMM / convolution kernels. */
  setenv("DG_TEST_VULKAN_PATHS", "tiled", 1);
  if (dg_context_create(&o, &ctx) == DG_OK) {
    printf("# with staging buffers and tiled kernels\n");
    for (int i = 0; i < vulkan_devices(ctx, devs, 8); i++) {
      test_every_op(ctx, devs[i]);
      test_alloc_failures(ctx, devs[i]);
    }
    dg_context_destroy(ctx);
  }
  /* The same with int8 through the packed dot-product kernels, which a
   * device takes only where it accelerates them (lavapipe emulates). */
  /* ... once whole, once with every tiled GEMM and conv split in 2
   * slices of K (DG_VK_SPLITK=2: exact int32 partials, each slice with its
   * share of the zero-point terms). */
  setenv("DG_TEST_VULKAN_PATHS", "dot", 1);
  for (int split = 0; split < 2; split++) {
    if (split)
      setenv("DG_VK_SPLITK", "2", 1);
    if (dg_context_create(&o, &ctx) != DG_OK)
      continue;
    printf("# with tiled kernels and int8 through integer dot products%s\n",
           split ? ", split over K" : "");
    for (int i = 0; i < vulkan_devices(ctx, devs, 8); i++) {
      dg_device_info info;
      dg_context_device_info(ctx, devs[i], &info);
      if (!strstr(info.driver, " dot")) {
        t_skip("int8 dot-product kernels: no shaderIntegerDotProduct");
        continue;
      }
      dg_graph *g = int8_graph(ctx, devs[i]);
      check_graph(ctx, g, devs[i],
                  split ? "int8 ops through dot products, split over K "
                          "(bit-exact)"
                        : "int8 ops through dot products (bit-exact)",
                  0, 300);
      dg_graph_destroy(g);
    }
    dg_context_destroy(ctx);
  }
  unsetenv("DG_VK_SPLITK");
  /* f32 and int8 GEMMs and convs through the 64x64 tiles, each split in 3
   * slices of K summed by a second pass (what batch-1 layers take on a
   * GPU), and GEMMs under 8 rows through the GEMV kernel. */
  setenv("DG_TEST_VULKAN_PATHS", "splitk", 1);
  if (dg_context_create(&o, &ctx) == DG_OK) {
    printf("# with 64x64 tiles split over K, and the GEMV kernel\n");
    for (int i = 0; i < vulkan_devices(ctx, devs, 8); i++)
      test_every_op(ctx, devs[i]);
    dg_context_destroy(ctx);
  }
  unsetenv("DG_TEST_VULKAN_PATHS");
  /* The f16 big tiles on GPUs with every GEMM and conv split in 2 slices
   * of K: splitk.comp's epilogue (bias, residual, clamp). */
  setenv("DG_VK_SPLITK", "2", 1);
  if (dg_context_create(&o, &ctx) == DG_OK) {
    for (int i = 0; i < vulkan_devices(ctx, devs, 8); i++) {
      dg_device_info info;
      dg_context_device_info(ctx, devs[i], &info);
      if (strstr(info.name, "(cpu)") || !(info.dtypes & 1u << DG_DTYPE_F16))
        continue; /* test_every_op said why it skipped them */
      printf("# f16 big tiles split over K on device %d\n", devs[i]);
      check_big_f16(ctx, devs[i]);
    }
    dg_context_destroy(ctx);
  }
  unsetenv("DG_VK_SPLITK");

  for (int i = 0; i < n; i++)
    test_pipeline_cache(i);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
  if (system(cmd) != 0)
    printf("# could not remove %s\n", cache_dir);
  int msgs = dg_vk_validation_messages();
  if (dg_vk_validation_enabled())
    CHECK(msgs == 0, "validation layer messages: %d", msgs);
  else
    printf("skipped: validation layer messages: validation is off "
           "(DG_VULKAN_VALIDATION=0 or no layer installed)\n");
  return t_exit();
}
