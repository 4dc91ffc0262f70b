#define _GNU_SOURCE
/* The NPU as a device of the library (DG_NPU_DEVICE=sim): discovery, the
 * declared deviation, the conv matrix against the CPU through graphs and
 * sessions, the reasons the plan shows for declined nodes, verify with the
 * declared tolerance. Called from test_npu.c. */
#include "test_npu_target.h"

#include "exec_wrapper.h"
#include "test_npu_conv.h"

#include "runtime/session.h" /* dg_f32_to_f16 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Under the sanitizers (run_tests.sh's second section) only the cheaper
 * tiled shapes run: they take every tiling path (rows, channels, both,
 * per-channel, stride 2, bottom padding, batch), the big ResNet layers
 * add only arithmetic, which the release section checks. */
#if defined(__SANITIZE_ADDRESS__)
#define NPU_BIG_SHAPES 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NPU_BIG_SHAPES 0
#endif
#endif
#ifndef NPU_BIG_SHAPES
#define NPU_BIG_SHAPES 1
#endif

static dg_context *open_ctx(const char *spec) {
  if (spec)
    setenv("DG_NPU_DEVICE", spec, 1);
  else
    unsetenv("DG_NPU_DEVICE");
  dg_context *ctx = NULL;
  dg_context_options o = {.disable_cache = 1, .cpu_threads = 2};
  return dg_context_create(&o, &ctx) == DG_OK ? ctx : NULL;
}

/* Compiles g with default placement and destroys it; out gets the plan's
 * reason for its node 0 (empty when it does not compile). */
static void first_reason(dg_graph *g, char *out, size_t n) {
  dg_session *s = NULL;
  dg_plan_node pn;
  out[0] = 0;
  if (dg_graph_compile(g, NULL, &s, NULL) == DG_OK &&
      dg_plan_get_node(dg_session_plan(s), 0, &pn) == DG_OK)
    snprintf(out, n, "%s", pn.reason_text);
  dg_session_destroy(s);
  dg_graph_destroy(g);
}

/* Reason shown in the plan for node 0 of a one-conv graph pinned to npu
 * under the auto policy (the node falls back to the CPU). */
static void plan_reason(dg_context *ctx, int npu, int f32, int C, int H,
                        int dil, char *out, size_t n) {
  dg_graph *g = dg_graph_create(ctx, "decline");
  dg_dtype t = f32 ? DG_DTYPE_F32 : DG_DTYPE_I8;
  dg_tensor_desc xd = {
      .dtype = t, .rank = 4, .dims = {1, C, H, H}, .quant = {.scale = 0.1f}};
  dg_tensor_desc wd = {
      .dtype = t, .rank = 4, .dims = {16, C, 3, 3}, .quant = {.scale = 0.1f}};
  size_t wn = (size_t)16 * C * 9 * (f32 ? 4 : 1);
  void *w = calloc(1, wn);
  dg_tensor x = dg_graph_input(g, "x", &xd);
  dg_tensor wt = dg_graph_constant(g, "w", &wd, w, 0);
  dg_graph_set_device(g, npu);
  dg_conv2d_params p = {.dilation = {dil, dil}};
  dg_quant_params yq = {.scale = 1.0f};
  dg_tensor y = f32 ? dg_graph_conv2d(g, "c", x, wt, DG_TENSOR_NONE, &p)
                    : dg_graph_qconv2d(g, "c", x, wt, DG_TENSOR_NONE, &p,
                                       DG_DTYPE_I8, &yq);
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  first_reason(g, out, n);
  free(w);
}

/* The plan's reason for a lone qmatmul / qfully_connected pinned to npu. */
static void fc_reason(dg_context *ctx, int npu, int batched_b, int b_input,
                      int K, char *out, size_t n) {
  dg_graph *g = dg_graph_create(ctx, "decline-fc");
  dg_tensor_desc ad = {.dtype = DG_DTYPE_I8,
                       .rank = 3,
                       .dims = {2, 3, K},
                       .quant = {.scale = 0.1f}};
  dg_tensor_desc bd = {.dtype = DG_DTYPE_I8,
                       .rank = batched_b ? 3 : 2,
                       .quant = {.scale = 0.1f}};
  if (batched_b)
    bd.dims[0] = 2, bd.dims[1] = K, bd.dims[2] = 4;
  else
    bd.dims[0] = K, bd.dims[1] = 4;
  void *w = calloc(1, (size_t)K * 8);
  dg_tensor a = dg_graph_input(g, "a", &ad);
  dg_tensor b = b_input ? dg_graph_input(g, "b", &bd)
                        : dg_graph_constant(g, "b", &bd, w, 0);
  dg_graph_set_device(g, npu);
  dg_quant_params yq = {.scale = 1.0f};
  dg_tensor y = dg_graph_qmatmul(g, "mm", a, b, DG_DTYPE_I8, &yq);
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  first_reason(g, out, n);
  free(w);
}

static void decline_fc(dg_context *ctx, int npu, npu_check_fn check) {
  char why[320];
  fc_reason(ctx, npu, 1, 0, 64, why, sizeof why);
  printf("# matmul, batched b: %s\n", why);
  check(strstr(why, "b is a batch of matrices") != NULL,
        "target: a qmatmul with one b per batch is declined with the reason");
  fc_reason(ctx, npu, 0, 1, 64, why, sizeof why);
  printf("# matmul, b an input: %s\n", why);
  check(strstr(why, "weights or bias not constant") != NULL,
        "target: a qmatmul with a non-constant b is declined with the reason");
  fc_reason(ctx, npu, 0, 0, 40000, why, sizeof why);
  printf("# matmul, K = 40000: %s\n", why);
  check(strstr(why, "kernel 1x1x40000 = 40000 B > 32 KB bank; no IC split") !=
            NULL,
        "target: a qmatmul whose K does not fit a bank is declined with the "
        "reason");
}

static void test_verify(dg_context *ctx, int npu, npu_check_fn check) {
  dg_graph *g = dg_graph_create(ctx, "verify");
  dg_tensor_desc xd = {.dtype = DG_DTYPE_I8,
                       .rank = 4,
                       .dims = {1, 8, 9, 9},
                       .quant = {.scale = 0.05f, .zero_point = -3}};
  dg_tensor_desc wd = {.dtype = DG_DTYPE_I8,
                       .rank = 4,
                       .dims = {8, 8, 3, 3},
                       .quant = {.scale = 0.01f}};
  int8_t w[8 * 8 * 9], x[8 * 81];
  for (int i = 0; i < (int)sizeof w; i++)
    w[i] = (int8_t)((i * 37) % 255 - 127);
  for (int i = 0; i < (int)sizeof x; i++)
    x[i] = (int8_t)((i * 91) % 256 - 128);
  dg_tensor xt = dg_graph_input(g, "x", &xd);
  dg_tensor wt = dg_graph_constant(g, "w", &wd, w, 0);
  dg_graph_set_device(g, npu);
  dg_conv2d_params p = {.padding = DG_PADDING_SAME_UPPER};
  dg_quant_params yq = {.scale = 0.0031f, .zero_point = 2};
  dg_tensor y =
      dg_graph_qconv2d(g, "conv", xt, wt, DG_TENSOR_NONE, &p, DG_DTYPE_I8, &yq);
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  dg_session *s = NULL;
  dg_verify_report r;
  memset(&r, 0, sizeof r);
  dg_compile_options o = {.policy = DG_POLICY_STRICT};
  dg_binding in = {"x", x, sizeof x};
  dg_status st = dg_graph_compile(g, &o, &s, NULL);
  if (st == DG_OK)
    st = dg_session_verify(s, &in, 1, &r);
  printf("# verify on the NPU: status %d, max %lld LSB, tolerance %g\n",
         (int)st, (long long)r.max_lsb_error, r.tolerance);
  check(st == DG_OK && r.ok && r.max_lsb_error <= 1,
        "target: dg_session_verify accepts the NPU within its declared 1 LSB");
  dg_plan_node pn;
  check(s && dg_plan_get_node(dg_session_plan(s), 0, &pn) == DG_OK &&
            pn.device_kind == DG_DEVICE_NPU && pn.int8_max_lsb_deviation == 1,
        "target: the plan shows the conv on the NPU with its 1 LSB deviation");
  dg_session_destroy(s);
  dg_graph_destroy(g);
}

/* A one-conv f16 graph (16 -> 8 channels, 3x3, bias, relu6; depthwise
 * when dw) pinned to the NPU under the strict policy; NULL when it does
 * not compile (the plan's reason in why). res: the conv without relu6,
 * plus an input "r" [1, 8, 10, 10], then relu, under the auto policy
 * (the pins are hints there). */
static dg_session *f16_session(dg_context *ctx, int npu, int dw, int res,
                               char *why, size_t n) {
  enum { C = 16, H = 10 };
  int O = dw ? C : 8, per = dw ? 1 : C;
  static uint16_t w[16 * 16 * 9], b[16];
  for (int i = 0; i < O * per * 9; i++)
    w[i] = dg_f32_to_f16((float)((i * 37) % 29 - 14) / 64.0f);
  for (int i = 0; i < O; i++)
    b[i] = dg_f32_to_f16((float)(i % 5) - 2.0f);
  dg_graph *g = dg_graph_create(ctx, "f16");
  dg_tensor_desc xd = {.dtype = DG_DTYPE_F16, .rank = 4, .dims = {1, C, H, H}};
  dg_tensor_desc wd = {
      .dtype = DG_DTYPE_F16, .rank = 4, .dims = {O, per, 3, 3}};
  dg_tensor_desc bd = {.dtype = DG_DTYPE_F16, .rank = 1, .dims = {O}};
  dg_tensor x = dg_graph_input(g, "x", &xd);
  dg_tensor wt = dg_graph_constant(g, "w", &wd, w, 0);
  dg_tensor bt = dg_graph_constant(g, "b", &bd, b, 0);
  dg_graph_set_device(g, npu);
  dg_conv2d_params p = {.padding = DG_PADDING_SAME_UPPER,
                        .groups = dw ? C : 1,
                        .activation =
                            res ? DG_ACTIVATION_NONE : DG_ACTIVATION_RELU6};
  dg_tensor y = dg_graph_conv2d(g, "conv", x, wt, bt, &p);
  dg_tensor_desc rd = {.dtype = DG_DTYPE_F16, .rank = 4, .dims = {1, O, H, H}};
  if (res)
    y = dg_graph_relu(g, "relu",
                      dg_graph_add(g, "add", y, dg_graph_input(g, "r", &rd)));
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  dg_session *s = NULL;
  dg_diagnostic d;
  memset(&d, 0, sizeof d);
  dg_compile_options o = {.policy = res ? DG_POLICY_AUTO : DG_POLICY_STRICT};
  if (dg_graph_compile(g, &o, &s, &d) != DG_OK)
    snprintf(why, n, "%s", d.message);
  dg_graph_destroy(g);
  return s;
}

/* The tiling sweep (int8, or the same shapes as f16 conv2d) and its
 * verdict. */
static void sweep_check(dg_context *ctx, int f16, npu_check_fn check,
                        const char *what) {
  int taken, declined;
  int bad = npu_tiling_sweep(ctx, f16, &taken, &declined);
  printf("# %stiling sweep: %d convs taken, %d declined, %d bad\n",
         f16 ? "f16 " : "", taken, declined, bad);
  char msg[512];
  snprintf(msg, sizeof msg,
           "target: %s: every task of a taken conv passes the simulator's "
           "static checks at its offsets and the tasks cover each output "
           "once; every decline has a reason of <= 60 chars",
           what);
  check(bad == 0 && taken > 0, msg);
}

static void f16_tests(dg_context *ctx, int npu, npu_check_fn check) {
  check(npu_f16_matrix_run(ctx, npu, "sim f16 matrix", 0) == 0,
        "target: f16 conv2d matrix (1x1/3x3/5x5, stride 1/2, SAME/VALID, "
        "1..64 channels, bias, relu/relu6) on the NPU: within 1 fp16 ulp of "
        "the CPU without bias, within the declared tolerance with one");
  check(npu_f16_tiled_run(ctx, npu, "sim f16 tiled", !NPU_BIG_SHAPES) == 0,
        "target: f16 convs that need tiling (rows with batch 2, stride 2 with "
        "bottom padding, rows and channels) cut as expected and within the "
        "f16 matrix's limits of the CPU");
  sweep_check(ctx, 1, check, "the sweep of conv shapes as f16 conv2d");
  char why[512] = "";
  dg_session *s = f16_session(ctx, npu, 0, 0, why, sizeof why);
  uint16_t x[16 * 100];
  for (int i = 0; i < 1600; i++)
    x[i] = dg_f32_to_f16((float)((i * 91) % 256 - 128) / 50.0f);
  dg_verify_report r;
  memset(&r, 0, sizeof r);
  dg_binding in = {"x", x, sizeof x};
  dg_status st = s ? dg_session_verify(s, &in, 1, &r) : DG_ERROR_DEVICE;
  printf("# f16 verify on the NPU: status %d, max rel error %g, tolerance "
         "%g %s\n",
         (int)st, r.max_rel_error, r.tolerance, why);
  check(st == DG_OK && r.ok && r.tolerance == 1e-2 + 1.0 / 1024,
        "target: dg_session_verify accepts an f16 conv (bias, relu6) on the "
        "NPU within 1e-2 + its declared 1 fp16 ulp");
  dg_plan_node pn;
  char table[2048] = "";
  FILE *f = fmemopen(table, sizeof table - 1, "w");
  if (s && f)
    dg_plan_write(dg_session_plan(s), DG_PLAN_FORMAT_TABLE, f);
  if (f)
    fclose(f);
  const char *row = strchr(table, '\n') ? strchr(table, '\n') + 1 : table;
  printf("# f16 plan: %.*s", (int)strcspn(row, "\n") + 1, row);
  check(s && dg_plan_get_node(dg_session_plan(s), 0, &pn) == DG_OK &&
            pn.device_kind == DG_DEVICE_NPU && pn.f16_max_ulp_deviation == 1 &&
            strstr(table, "(f16 +-1 ulp)") && !strstr(table, "LSB"),
        "target: the plan shows the f16 conv on the NPU with its 1 ulp "
        "deviation");
  dg_session_destroy(s);
  s = f16_session(ctx, npu, 1, 0, why, sizeof why);
  printf("# f16 depthwise pinned strictly: %s\n", why);
  check(!s && strstr(why, "f16 grouped/depthwise conv: not yet on the NPU"),
        "target: an f16 depthwise conv is declined with its reason");
  dg_session_destroy(s);
  /* The NPU has no residual epilogue: the add stays a node (on the CPU),
   * the conv runs on the NPU, and the result is right. */
  why[0] = 0;
  s = f16_session(ctx, npu, 0, 1, why, sizeof why);
  uint16_t rbuf[8 * 100];
  for (int i = 0; i < 800; i++)
    rbuf[i] = dg_f32_to_f16((float)((i * 53) % 64 - 32) / 16.0f);
  dg_binding in2[2] = {{"x", x, sizeof x}, {"r", rbuf, sizeof rbuf}};
  memset(&r, 0, sizeof r);
  st = s ? dg_session_verify(s, in2, 2, &r) : DG_ERROR_DEVICE;
  dg_plan_node p0 = {0};
  if (s)
    dg_plan_get_node(dg_session_plan(s), 0, &p0);
  printf("# f16 conv + residual, auto policy: first node \"%s\" on %s, "
         "verify %d %s\n",
         p0.node_name, p0.device_name, (int)st, why);
  check(s && !strcmp(p0.node_name, "conv") && p0.device_kind == DG_DEVICE_NPU &&
            st == DG_OK && r.ok,
        "target: an f16 conv with a residual add after it: the add is not "
        "fused into the NPU's conv, and the result verifies");
  dg_session_destroy(s);
}

/* tools/npu-hw-check against the simulator: the board check runs, writes
 * its golden sets, and they replay byte for byte. */
static void hw_check(npu_check_fn check) {
  char dir[] = "/tmp/dg-npu-hw-check-XXXXXX", cmd[2048];
  if (!mkdtemp(dir)) {
    printf("skipped: npu-hw-check: no temporary directory\n");
    return;
  }
  const char *w = t_exe_wrapper(); /* exec_wrapper.h: for an emulator */
  snprintf(cmd, sizeof cmd,
           "DG_NPU_DEVICE=sim %s '%s' --out %s/golden > %s/log 2>&1 && "
           "%s '%s' --replay %s/golden >> %s/log 2>&1",
           w, DG_NPU_HW_CHECK, dir, dir, w, DG_NPU_HW_CHECK, dir, dir);
  fflush(stdout); /* the child's lines must not land inside ours */
  int rc = system(cmd);
  snprintf(cmd, sizeof cmd, "sed 's/^/# hw-check: /' %s/log; rm -rf %s", dir,
           dir);
  if (system(cmd) != 0)
    printf("# could not clean %s\n", dir);
  check(rc == 0, "npu-hw-check on the simulator: matrix passes, golden sets "
                 "written and replayed byte for byte");
}

void npu_target_tests(npu_check_fn check) {
  hw_check(check);
  dg_context *ctx = open_ctx("none");
  check(ctx && npu_device_index(ctx) < 0,
        "target: DG_NPU_DEVICE=none: no NPU device");
  dg_context_destroy(ctx);
  ctx = open_ctx("sim");
  int npu = ctx ? npu_device_index(ctx) : -1;
  dg_device_info info;
  memset(&info, 0, sizeof info);
  if (npu >= 0)
    dg_context_device_info(ctx, npu, &info);
  printf("# device %d: %s, driver %s\n", npu, info.name, info.driver);
  check(
      npu >= 0 && info.is_simulator == 1 && info.int8_max_lsb_deviation == 1 &&
          info.f16_max_ulp_deviation == 1 &&
          info.ops == (1ull << DG_OP_QCONV2D | 1ull << DG_OP_QFULLY_CONNECTED |
                       1ull << DG_OP_QMATMUL | 1ull << DG_OP_CONV2D |
                       1ull << DG_OP_MAX_POOL2D),
      "target: DG_NPU_DEVICE=sim: a simulated NPU device (qconv2d, "
      "qfully_connected, qmatmul, f16 conv2d and the PPU's max pooling; "
      "no average pools), 1 LSB and 1 fp16 ulp declared");
  if (npu < 0) {
    dg_context_destroy(ctx);
    return;
  }
  check(npu_matrix_run(ctx, npu, "sim matrix", 0) == 0,
        "target: conv matrix (direct, depthwise, 1/3/5, stride 1/2, u8/i8, "
        "relu, per-channel; inputs 3..112, channels 1..256) on the NPU "
        "within 1 LSB of the CPU");
  if (!NPU_BIG_SHAPES)
    printf("# sanitizer build: the cheaper tiled and fc shapes only\n");
  check(npu_tiled_run(ctx, npu, "sim tiled", !NPU_BIG_SHAPES) == 0,
        "target: convs that need tiling (ResNet-50 / MobileNet-v2 layers, "
        "stride 2, bottom padding, rows and channels, per-channel, batch 2) "
        "cut as expected and within 1 LSB of the CPU");
  check(npu_chain_run(ctx, npu, "sim chain", !NPU_BIG_SHAPES) == 0,
        "target: consecutive qconv2d nodes hand NC1HWC2 cubes over (edges "
        "eligible, output bit-identical to DG_NPU_CUBES=off, near the CPU)");
  sweep_check(ctx, 0, check,
              "a sweep of conv shapes (3..1024 channels, 5..230 pixels, "
              "k 1/3/7, s 1/2, VALID/SAME, depthwise)");
  check(npu_fc_run(ctx, npu, "sim fc", !NPU_BIG_SHAPES) == 0,
        "target: qfully_connected and qmatmul as 1x1 convs (one row, batched "
        "rows, row slices, kernel blocks, per-channel, u8) within 1 LSB of "
        "the CPU");
  char why[320];
  plan_reason(ctx, npu, 1, 16, 8, 1, why, sizeof why);
  printf("# f32 conv: %s\n", why);
  /* A fallback's plan shows 60 characters of the reason: all of this. */
  check(strstr(why, "declined: f32 op: NPU runs f16/int8; convert the graph "
                    "to f16") != NULL,
        "target: an f32 conv is declined whole within the plan's 60 "
        "characters: f32 op, the NPU runs f16/int8, convert to f16");
  plan_reason(ctx, npu, 0, 16, 8, 2, why, sizeof why);
  printf("# dilated conv: %s\n", why);
  check(strstr(why, "dilation") != NULL, "target: a dilated conv is declined");
  /* 3x3 kernels over 4096 channels: 36 KB per kernel, more than a bank
   * holds; only an input-channel split (not implemented) would help. */
  plan_reason(ctx, npu, 0, 4096, 4, 1, why, sizeof why);
  printf("# wide-kernel conv: %s\n", why);
  check(strstr(why, "kernel 3x3x4096 = 36864 B > 32 KB bank; no IC split") !=
            NULL,
        "target: a conv no tiling of rows or channels fits is declined with "
        "the reason (one kernel over a bank, input-channel split not "
        "implemented)");
  /* The int8 ops of QDQ models the NPU declines say what stands in the
   * way, not just "no lowering". */
  {
    dg_graph *g = dg_graph_create(ctx, "qadd");
    dg_tensor_desc xd = {.dtype = DG_DTYPE_I8,
                         .rank = 4,
                         .dims = {1, 8, 4, 4},
                         .quant = {.scale = 0.1f}};
    dg_tensor a = dg_graph_input(g, "a", &xd), b = dg_graph_input(g, "b", &xd);
    dg_graph_set_device(g, npu);
    dg_quant_params yq = {.scale = 0.2f};
    dg_graph_output(
        g, "y",
        dg_graph_qbinary(g, "add", DG_BINARY_ADD, a, b, DG_DTYPE_I8, &yq),
        DG_LAYOUT_NCHW);
    first_reason(g, why, sizeof why);
    printf("# int8 add: %s\n", why);
    check(strstr(why, "qbinary: EW requant unknown (Mesa: per-scale table)") !=
              NULL,
          "target: an int8 residual add is declined naming why (the EW "
          "requantisation: Mesa's recipe is a per-scale table)");
  }
  decline_fc(ctx, npu, check);
  test_verify(ctx, npu, check);
  f16_tests(ctx, npu, check);
  dg_context_destroy(ctx);
  unsetenv("DG_NPU_DEVICE");
}
