#define _POSIX_C_SOURCE 200809L
/* The compile-time graph passes (src/runtime/passes.h): what each fuses
 * or removes and what it must leave alone, read from the plan, and on
 * every device of the context the fused session's output bit for bit
 * equal to the same graph compiled with DG_PASSES=none (a relu or relu6
 * clamp in the producer's epilogue is the same float operation as the
 * separate node), and within tolerance of the unfused one where a batch
 * norm was folded (its weights are rounded once more). */
#include "graph.h"
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static dg_context *ctx;

static dg_tensor_desc fdesc(int rank, const int64_t *dims) {
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = rank};
  memcpy(d.dims, dims, sizeof(int64_t) * (size_t)rank);
  return d;
}

static float wts[4096];

static dg_tensor constant(dg_graph *g, const char *name, int rank,
                          const int64_t *dims) {
  dg_tensor_desc d = fdesc(rank, dims);
  return dg_graph_constant(g, name, &d, wts, 0);
}

enum {
  CONV_RELU,
  CONV_RELU6,
  FC_RELU6,
  CONV_CLIP5,
  CONV_TWO_READERS,
  CONV_OUTPUT_TOO,
  CONV_PINNED,
  CONV_BN_RELU,
  IDENTITIES,
  RESHAPE_OUT,
  SILU,
  SILU_READ_TWICE,
  RESIDUAL,
  RESIDUAL_LATE,
  MATMUL_BIAS,
  CONV_SILU,
  CONV_RELU_HSWISH,
  CONV_TANH_READ_TWICE,
  NCASES
};

/* x [1, 4, 6, 6] -> the case's graph -> "y" (and "z" where a second
 * output is part of the case). */
static dg_graph *build(int c, int dev) {
  dg_graph *g = dg_graph_create(ctx, "passes");
  int64_t xd[4] = {1, 4, 6, 6}, wd[4] = {5, 4, 3, 3}, bd[1] = {5};
  dg_tensor_desc xs = fdesc(4, xd);
  dg_tensor x = dg_graph_input(g, "x", &xs);
  dg_conv2d_params p = {.padding = DG_PADDING_SAME_UPPER};
  if (c == CONV_PINNED)
    dg_graph_set_device(g, dev);
  dg_tensor y = DG_TENSOR_NONE;
  if (c == FC_RELU6) {
    int64_t fd[2] = {1, 144}, fw[2] = {7, 144};
    dg_tensor f = dg_graph_reshape(g, "flat", x, 2, fd);
    y = dg_graph_fully_connected(g, "fc", f, constant(g, "fw", 2, fw),
                                 DG_TENSOR_NONE, DG_ACTIVATION_NONE);
  } else if (c != IDENTITIES && c != RESHAPE_OUT && c != SILU &&
             c != SILU_READ_TWICE && c != RESIDUAL_LATE && c != MATMUL_BIAS) {
    y = dg_graph_conv2d(g, "conv", x, constant(g, "w", 4, wd),
                        constant(g, "b", 1, bd), &p);
  }
  dg_graph_set_device(g, -1);
  switch (c) {
  case CONV_RELU:
  case CONV_PINNED:
    y = dg_graph_relu(g, "relu", y);
    break;
  case CONV_RELU6:
  case FC_RELU6:
    y = dg_graph_clip(g, "clip", y, 0, 6);
    break;
  case CONV_CLIP5:
    y = dg_graph_clip(g, "clip", y, 0, 5);
    break;
  case CONV_TWO_READERS:
    y = dg_graph_add(g, "add", dg_graph_relu(g, "relu", y), y);
    break;
  case CONV_OUTPUT_TOO:
    dg_graph_output(g, "z", y, DG_LAYOUT_NCHW);
    y = dg_graph_relu(g, "relu", y);
    break;
  case CONV_BN_RELU: {
    dg_tensor s = constant(g, "s", 1, bd), b = constant(g, "bb", 1, bd),
              m = constant(g, "m", 1, bd);
    /* var: the weights are in [0.5, 1.5) from here on. */
    dg_tensor_desc vd = fdesc(1, bd);
    static float var[5] = {0.5f, 1.0f, 1.5f, 0.7f, 1.2f};
    dg_tensor v = dg_graph_constant(g, "v", &vd, var, 0);
    y = dg_graph_relu(g, "relu",
                      dg_graph_batch_norm(g, "bn", y, s, b, m, v, 1e-5f));
    break;
  }
  case IDENTITIES: {
    int32_t perm[4] = {0, 2, 3, 1}, back[4] = {0, 3, 1, 2};
    y = dg_graph_reshape(g, "same_shape", x, 4, xd);
    y = dg_graph_transpose(g, "to_nhwc", y, perm);
    y = dg_graph_transpose(g, "to_nchw", y, back);
    y = dg_graph_cast(g, "same_dtype", y, DG_DTYPE_F32);
    dg_graph_sigmoid(g, "unread", y);
    y = dg_graph_relu(g, "relu", y);
    break;
  }
  case RESHAPE_OUT:
    y = dg_graph_reshape(g, "same_shape", dg_graph_relu(g, "relu", x), 4, xd);
    break;
  case SILU:
    y = dg_graph_binary(g, "mul", DG_BINARY_MUL, x,
                        dg_graph_sigmoid(g, "sig", x));
    break;
  case RESIDUAL: { /* conv + a constant of its shape, then relu */
    int64_t yd[4] = {1, 5, 6, 6};
    y = dg_graph_relu(g, "relu",
                      dg_graph_add(g, "add", y, constant(g, "r", 4, yd)));
    break;
  }
  case MATMUL_BIAS: { /* x [1,4,6,6] times [6,5], plus a bias [5] */
    int64_t md[2] = {6, 5}, nd[1] = {5};
    y = dg_graph_add(g, "add",
                     dg_graph_matmul(g, "mm", x, constant(g, "mw", 2, md)),
                     constant(g, "mb", 1, nd));
    break;
  }
  case RESIDUAL_LATE: { /* a + b, b's conv after a's: b's takes a */
    dg_tensor a = dg_graph_conv2d(g, "conv_a", x, constant(g, "wa", 4, wd),
                                  DG_TENSOR_NONE, &p);
    dg_tensor b = dg_graph_conv2d(g, "conv_b", x, constant(g, "wb", 4, wd),
                                  constant(g, "bb", 1, bd), &p);
    y = dg_graph_add(g, "add", a, b);
    break;
  }
  case CONV_SILU: /* EfficientNet's: the silu fuses, then into the conv */
    y = dg_graph_binary(g, "mul", DG_BINARY_MUL, y,
                        dg_graph_sigmoid(g, "sig", y));
    break;
  case CONV_RELU_HSWISH: /* after the activation */
    y = dg_graph_unary(g, "hs", DG_UNARY_HARD_SWISH,
                       dg_graph_relu(g, "relu", y), 0, 0);
    break;
  case CONV_TANH_READ_TWICE: {
    dg_tensor t = dg_graph_unary(g, "tanh", DG_UNARY_TANH, y, 0, 0);
    y = dg_graph_add(g, "add", t, y);
    break;
  }
  case SILU_READ_TWICE: {
    dg_tensor sg = dg_graph_sigmoid(g, "sig", x);
    y = dg_graph_add(g, "add", dg_graph_binary(g, "mul", DG_BINARY_MUL, sg, x),
                     sg);
    break;
  }
  }
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  return g;
}

/* The plan's node names, joined by " | ". */
static void names(const dg_plan *p, char *out, size_t n) {
  out[0] = 0;
  for (int i = 0; i < dg_plan_node_count(p); i++) {
    dg_plan_node pn;
    dg_plan_get_node(p, i, &pn);
    size_t len = strlen(out);
    snprintf(out + len, n - len, "%s%s", i ? " | " : "", pn.node_name);
  }
}

static const char *const want[NCASES] = {
    [CONV_RELU] = "conv+relu",
    [CONV_RELU6] = "conv+clip",
    [FC_RELU6] = "flat | fc+clip",
    [CONV_CLIP5] = "conv | clip",
    [CONV_TWO_READERS] = "conv | relu | add",
    [CONV_OUTPUT_TOO] = "conv | relu",
    [CONV_PINNED] = "conv | relu",
    [CONV_BN_RELU] = "conv+bn+relu",
    [IDENTITIES] = "relu",
    [RESHAPE_OUT] = "relu | same_shape",
    [SILU] = "sig+mul",
    [SILU_READ_TWICE] = "sig | mul | add",
    [RESIDUAL] = "conv+add+relu",
    [RESIDUAL_LATE] = "conv_a | conv_b+add",
    [MATMUL_BIAS] = "mm+add",
    [CONV_SILU] = "conv+sig+mul",
    [CONV_RELU_HSWISH] = "conv+relu+hs",
    [CONV_TANH_READ_TWICE] = "conv | tanh | add",
};
/* Where a device has no epilogue for the fusion (the matmul's bias: the
 * GPU targets), the plan without it. */
static const char *const want_elsewhere[NCASES] = {
    [MATMUL_BIAS] = "mm | add",
};
static const char *const what[NCASES] = {
    [CONV_RELU] = "a relu fuses into its conv",
    [CONV_RELU6] = "a clip to [0, 6] fuses as relu6",
    [FC_RELU6] = "relu6 fuses into a fully connected layer",
    [CONV_CLIP5] = "a clip to [0, 5] stays a node",
    [CONV_TWO_READERS] = "a conv output read twice is not fused",
    [CONV_OUTPUT_TOO] = "a conv output that is a graph output is not fused",
    [CONV_PINNED] = "a conv pinned elsewhere than its relu is not fused",
    [CONV_BN_RELU] = "batch norm folds, then the relu fuses",
    [IDENTITIES] = "identity reshape, transpose pair, identity cast and an "
                   "unread node are removed",
    [RESHAPE_OUT] = "an identity reshape that is a graph output stays",
    [SILU] = "x * sigmoid(x) becomes one silu node",
    [SILU_READ_TWICE] = "a sigmoid read twice stays a node",
    [RESIDUAL] = "a residual add fuses into the conv (then its relu), where "
                 "the device has the epilogue",
    [RESIDUAL_LATE] = "a residual add fuses into the later of two convs",
    [MATMUL_BIAS] = "a constant bias add fuses into its matmul, where the "
                    "device has the epilogue",
    [CONV_SILU] = "a silu fuses into its conv, where the device applies it",
    [CONV_RELU_HSWISH] = "a hard swish fuses after the conv's relu",
    [CONV_TANH_READ_TWICE] = "a conv output read twice keeps its tanh",
};

/* Compiles graph g on device dev (strict) and runs it; 0 on failure. */
static int run(dg_graph *g, int dev, const float *x, float *y, float *z,
               char *plan, size_t plan_n) {
  dg_compile_options o = {
      .policy = DG_POLICY_STRICT, .devices = &dev, .device_count = 1};
  dg_session *s = NULL;
  dg_diagnostic d;
  if (dg_graph_compile(g, &o, &s, &d) != DG_OK) {
    snprintf(plan, plan_n, "compile: %s", d.message);
    return 0;
  }
  names(dg_session_plan(s), plan, plan_n);
  dg_io_info yi;
  dg_graph_output_info(g, 0, &yi);
  dg_binding in = {"x", (void *)x, 144 * sizeof(float)};
  dg_binding out[2] = {{"y", y, 0}, {"z", z, 180 * sizeof(float)}};
  size_t ny = 1;
  for (int k = 0; k < yi.desc.rank; k++)
    ny *= (size_t)yi.desc.dims[k];
  out[0].size = ny * sizeof(float);
  int nout = dg_graph_output_count(g);
  /* outputs are added in order: "z" (when present) is output 0 */
  if (nout == 2) {
    out[0] = (dg_binding){"z", z, 180 * sizeof(float)};
    out[1] = (dg_binding){"y", y, 180 * sizeof(float)};
  }
  dg_status st = dg_session_run(s, &in, 1, out, nout, &d);
  if (st != DG_OK)
    snprintf(plan, plan_n, "run: %s", d.message);
  dg_session_destroy(s);
  return st == DG_OK;
}

int main(void) {
  if (dg_context_create(NULL, &ctx) != DG_OK) {
    printf("FAIL - context\n");
    return 1;
  }
  t_seed(25);
  for (int i = 0; i < 4096; i++)
    wts[i] = t_uniform(-0.5f, 0.5f) + (i % 5 == 0 ? 1.0f : 0.0f);
  float x[144];
  for (int i = 0; i < 144; i++)
    x[i] = t_uniform(-3, 3);
  int ndev = dg_context_device_count(ctx);
  for (int c = 0; c < NCASES; c++) {
    for (int dev = 0; dev < ndev; dev++) {
      dg_device_info info;
      dg_context_device_info(ctx, dev, &info);
      if (info.kind == DG_DEVICE_NPU)
        continue; /* f32 nodes: the NPU runs int8 and f16 */
      dg_graph *g = build(c, dev);
      float y[180] = {0}, y0[180] = {0}, z[180] = {0}, z0[180] = {0};
      char plan[1024], plan0[1024];
      int ok = run(g, dev, x, y, z, plan, sizeof plan);
      setenv("DG_PASSES", "none", 1);
      int ok0 = ok && run(g, dev, x, y0, z0, plan0, sizeof plan0);
      unsetenv("DG_PASSES");
      if (!ok || !ok0) {
        CHECK(0, "%s on %s: %s", what[c], info.name, ok ? plan0 : plan);
        dg_graph_destroy(g);
        continue;
      }
      double worst = 0, peak = 1;
      int differ = 0;
      for (int i = 0; i < 180; i++) {
        worst = fmax(worst, fabs((double)y[i] - y0[i]));
        peak = fmax(peak, fabs((double)y0[i]));
        differ += memcmp(&y[i], &y0[i], 4) != 0 || memcmp(&z[i], &z0[i], 4);
      }
      /* the folded weights, silu's own formula, a bias added first and
       * a fused unary function's vector loop round differently */
      int exact = c != CONV_BN_RELU && c != SILU && c != MATMUL_BIAS &&
                  c != CONV_SILU && c != CONV_RELU_HSWISH;
      const char *w = info.kind != DG_DEVICE_CPU && want_elsewhere[c]
                          ? want_elsewhere[c]
                          : want[c];
      CHECK(!strcmp(plan, w) && (exact ? !differ : worst <= 1e-6 * peak),
            "%s on %s: plan \"%s\" (unfused \"%s\"), %s (max diff %.2g)",
            what[c], info.name, plan, plan0,
            exact ? (differ ? "outputs differ" : "bit-exact")
                  : "within 1e-6 of the peak",
            worst);
      dg_graph_destroy(g);
    }
  }
  /* All devices allowed: a fusion happens only when no device that runs
   * the node lacks the epilogue. The matmul's bias: the Vulkan and OpenCL
   * devices lack it; the residual add and the unary function: every
   * device that runs an f32 conv has them. */
  int gpus = 0;
  for (int dev = 0; dev < ndev; dev++) {
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    gpus += (info.kind == DG_DEVICE_VULKAN || info.kind == DG_DEVICE_OPENCL) &&
            dg_device_supports(ctx, dev, DG_OP_MATMUL);
  }
  for (int k = 0; k < 3; k++) {
    int c = k == 0 ? MATMUL_BIAS : k == 1 ? RESIDUAL : CONV_SILU;
    dg_graph *g = build(c, -1);
    dg_session *s = NULL;
    char plan[1024] = "";
    if (dg_graph_compile(g, NULL, &s, NULL) == DG_OK)
      names(dg_session_plan(s), plan, sizeof plan);
    const char *w = gpus && want_elsewhere[c] ? want_elsewhere[c] : want[c];
    CHECK(!strcmp(plan, w),
          "every device allowed, %s (%d GPU device(s) without the matmul's "
          "bias epilogue): plan \"%s\", want \"%s\"",
          what[c], gpus, plan, w);
    dg_session_destroy(s);
    dg_graph_destroy(g);
  }
  dg_context_destroy(ctx);
  return t_exit();
}
