#define _GNU_SOURCE
/* npu-report: the NPU target's figures for issue 5 (src/targets/npu).
 *
 * For a fixed list of int8 layers (LeNet, ResNet-50, MobileNet-v2 shapes:
 * convolutions, and the fully-connected layers, which the NPU runs as 1x1
 * convolutions) it builds a one-node qconv2d or qfully_connected graph
 * (per-tensor quantisation, i8 x, w and y, batch 1) through the public API,
 * compiles it pinned to the NPU under DG_POLICY_STRICT (DG_NPU_DEVICE=sim
 * unless already set), and prints per layer: taken or declined (the plan's or
 * the diagnostic's reason), the compile time (median of 5), and, through the
 * target's lowering (lower.h), the tasks with their cut (channel blocks x row
 * slices), the command words and the lowering time alone (tiling and
 * command-stream generation, median of 5), and the timing model's
 * estimate on one core and on three (timing.h: a model, not a
 * measurement). A table, then one JSON line per layer.
 *
 *   npu-report                         (exit 0 unless the NPU is missing)
 *   npu-report --model FILE.onnx ...   whole models instead (npu_models.h)
 *
 * Options: usage() below.
 */
#include "common/cli.h"
#include "graph.h"
#include "runtime/internal.h"
#include "targets/npu/lower.h"
#include "targets/npu/timing.h"
#ifdef DG_HAVE_MODELS
#include "npu_models.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 5

typedef struct layer {
  const char *net, *name;
  int c, o, h, k, stride, pad; /* pad < 0: VALID; SAME given as explicit */
  int dw;
  int fc; /* qfully_connected: c inputs, o outputs (h, k, ... unused) */
} layer;

static const layer layers[] = {
    {"lenet", "conv1", 1, 6, 28, 5, 1, 2, 0, 0},
    {"lenet", "conv2", 6, 16, 14, 5, 1, -1, 0, 0},
    {"lenet", "fc1 400->120", 400, 120, 1, 1, 1, 0, 0, 1},
    {"lenet", "fc3 84->10", 84, 10, 1, 1, 1, 0, 0, 1},
    {"resnet50", "conv1 7x7/2", 3, 64, 224, 7, 2, 3, 0, 0},
    {"resnet50", "3x3 64@56", 64, 64, 56, 3, 1, 1, 0, 0},
    {"resnet50", "3x3 128@28", 128, 128, 28, 3, 1, 1, 0, 0},
    {"resnet50", "3x3 256@14", 256, 256, 14, 3, 1, 1, 0, 0},
    {"resnet50", "3x3 512@7", 512, 512, 7, 3, 1, 1, 0, 0},
    {"resnet50", "1x1 256->64@56", 256, 64, 56, 1, 1, 0, 0, 0},
    {"resnet50", "1x1 1024->256@14", 1024, 256, 14, 1, 1, 0, 0, 0},
    {"resnet50", "1x1 2048->512@7", 2048, 512, 7, 1, 1, 0, 0, 0},
    {"resnet50", "fc 2048->1000", 2048, 1000, 1, 1, 1, 0, 0, 1},
    {"mobilenetv2", "dw3x3 32@112/1", 32, 32, 112, 3, 1, 1, 1, 0},
    {"mobilenetv2", "dw3x3 144@56/2", 144, 144, 56, 3, 2, 1, 1, 0},
    {"mobilenetv2", "dw3x3 960@7/1", 960, 960, 7, 3, 1, 1, 1, 0},
    {"mobilenetv2", "pw1x1 32->16@112", 32, 16, 112, 1, 1, 0, 0, 0},
    {"mobilenetv2", "pw1x1 320->1280@7", 320, 1280, 7, 1, 1, 0, 0, 0},
    {"mobilenetv2", "fc 1280->1000", 1280, 1000, 1, 1, 1, 0, 0, 1},
};

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int npu_index(dg_context *ctx) {
  for (int i = 0; i < dg_context_device_count(ctx); i++) {
    dg_device_info info;
    if (dg_context_device_info(ctx, i, &info) == DG_OK &&
        info.kind == DG_DEVICE_NPU)
      return i;
  }
  return -1;
}

/* Escapes s for a JSON string (quotes and backslashes; control chars out). */
static void json_str(const char *s, char *out, size_t n) {
  size_t j = 0;
  for (; *s && j + 2 < n; s++) {
    if (*s == '"' || *s == '\\')
      out[j++] = '\\';
    if ((unsigned char)*s >= 0x20)
      out[j++] = *s;
  }
  out[j] = 0;
}

typedef struct result {
  char shape[64];
  int taken;
  char reason[512];
  double compile_us; /* median, dg_graph_compile */
  double lower_us;   /* median, dg_npu_conv_lower (generation alone) */
  int tasks, words, max_words, lowered;
  int blocks, slices; /* channel blocks x row slices */
  npu_timing tm;      /* the timing model's estimate (timing.h) */
} result;

static dg_graph *build_fc(dg_context *ctx, int npu, const layer *L,
                          const int8_t *w) {
  dg_graph *g = dg_graph_create(ctx, L->name);
  dg_tensor_desc xd = {.dtype = DG_DTYPE_I8,
                       .rank = 2,
                       .dims = {1, L->c},
                       .quant = {.scale = 0.05f, .zero_point = -1}};
  dg_tensor_desc wd = {.dtype = DG_DTYPE_I8,
                       .rank = 2,
                       .dims = {L->o, L->c},
                       .quant = {.scale = 0.01f}};
  dg_tensor x = dg_graph_input(g, "x", &xd);
  dg_tensor wt = dg_graph_constant(g, "w", &wd, w, 0);
  dg_graph_set_device(g, npu);
  dg_quant_params yq = {.scale = 0.1f, .zero_point = 3};
  dg_tensor y = dg_graph_qfully_connected(g, "fc", x, wt, DG_TENSOR_NONE,
                                          DG_ACTIVATION_NONE, DG_DTYPE_I8, &yq);
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  return g;
}

static dg_graph *build(dg_context *ctx, int npu, const layer *L,
                       const int8_t *w) {
  if (L->fc)
    return build_fc(ctx, npu, L, w);
  dg_graph *g = dg_graph_create(ctx, L->name);
  dg_tensor_desc xd = {.dtype = DG_DTYPE_I8,
                       .rank = 4,
                       .dims = {1, L->c, L->h, L->h},
                       .quant = {.scale = 0.05f, .zero_point = -1}};
  dg_tensor_desc wd = {.dtype = DG_DTYPE_I8,
                       .rank = 4,
                       .dims = {L->o, L->dw ? 1 : L->c, L->k, L->k},
                       .quant = {.scale = 0.01f}};
  dg_tensor x = dg_graph_input(g, "x", &xd);
  dg_tensor wt = dg_graph_constant(g, "w", &wd, w, 0);
  dg_graph_set_device(g, npu);
  dg_conv2d_params p = {.stride = {L->stride, L->stride},
                        .dilation = {1, 1},
                        .groups = L->dw ? L->c : 1};
  if (L->pad < 0)
    p.padding = DG_PADDING_VALID;
  else
    for (int i = 0; i < 4; i++)
      p.pads[i] = L->pad;
  dg_quant_params yq = {.scale = 0.1f, .zero_point = 3};
  dg_tensor y =
      dg_graph_qconv2d(g, "conv", x, wt, DG_TENSOR_NONE, &p, DG_DTYPE_I8, &yq);
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  return g;
}

static void run_layer(dg_context *ctx, int npu, const layer *L, result *r) {
  memset(r, 0, sizeof *r);
  size_t wn = (size_t)L->o * (L->dw ? 1 : L->c) * (L->fc ? 1 : L->k * L->k);
  int8_t *w = malloc(wn);
  for (size_t i = 0; i < wn; i++)
    w[i] = (int8_t)((i * 37 + 11) % 255 - 127);
  dg_graph *g = build(ctx, npu, L, w);
  if (dg_graph_status(g) != DG_OK) {
    snprintf(r->reason, sizeof r->reason, "build: %.400s",
             dg_graph_error(g)->message);
    dg_graph_destroy(g);
    free(w);
    return;
  }
  dg_tensor_desc yd;
  dg_graph_tensor_desc(
      g, (dg_tensor){.id = g->ir.nodes[0].output, .graph = g->serial}, &yd);
  if (L->fc)
    snprintf(r->shape, sizeof r->shape, "fc %d -> %d (1x1 conv)", L->c, L->o);
  else
    snprintf(r->shape, sizeof r->shape, "%dx%dx%d -> %dx%dx%d k%d s%d", L->c,
             L->h, L->h, (int)yd.dims[1], (int)yd.dims[2], (int)yd.dims[3],
             L->k, L->stride);

  /* Compile, pinned, strict: median of REPS. */
  double t[REPS];
  dg_compile_options o = {.policy = DG_POLICY_STRICT};
  for (int i = 0; i < REPS; i++) {
    dg_session *s = NULL;
    dg_diagnostic diag;
    memset(&diag, 0, sizeof diag);
    double t0 = now_us();
    dg_status st = dg_graph_compile(g, &o, &s, &diag);
    t[i] = now_us() - t0;
    if (i == 0) {
      dg_plan_node pn;
      if (st == DG_OK &&
          dg_plan_get_node(dg_session_plan(s), 0, &pn) == DG_OK) {
        r->taken = pn.device_kind == DG_DEVICE_NPU;
        snprintf(r->reason, sizeof r->reason, "%s", pn.reason_text);
      } else {
        snprintf(r->reason, sizeof r->reason, "%s", diag.message);
      }
    }
    dg_session_destroy(s);
  }
  r->compile_us = median(t, REPS);

  /* The target's lowering alone (what compile does before buffers). */
  for (int i = 0; i < REPS; i++) {
    npu_conv c;
    char why[160] = "";
    double t0 = now_us();
    bool ok = dg_npu_conv_lower(&g->ir, &g->ir.nodes[0], &c, why, sizeof why);
    t[i] = now_us() - t0;
    if (ok) {
      r->lowered = 1;
      r->tasks = c.task_count;
      r->words = r->max_words = r->blocks = r->slices = 0;
      for (int k = 0; k < c.task_count; k++) {
        r->blocks += c.tasks[k].oh0 == 0;
        r->slices += c.tasks[k].o0 == 0;
        r->words += c.tasks[k].stream.count;
        if (c.tasks[k].stream.count > r->max_words)
          r->max_words = c.tasks[k].stream.count;
      }
      dg_npu_timing_conv(&c, &r->tm);
      dg_npu_conv_release(&c, NULL);
    } else if (i == 0 && !r->taken && !r->reason[0]) {
      snprintf(r->reason, sizeof r->reason, "%s", why);
    }
  }
  r->lower_us = median(t, REPS);
  dg_graph_destroy(g);
  free(w);
}

/* The help: the one place that says what it takes. */
static void usage(FILE *f) {
  fputs("usage: npu-report [--model FILE.onnx]...\n"
        "\n"
        "The NPU target's figures on int8 LeNet, ResNet-50 and MobileNet-v2\n"
        "layers (convolutions; fully-connected layers as 1x1 convolutions),\n"
        "each a one-node graph compiled pinned to the NPU under the strict\n"
        "policy: taken or declined and why, the compile time, and from the\n"
        "target's lowering the tasks and their cut, the command words and\n"
        "the lowering time (medians of 5), and the timing model's estimate\n"
        "on one core and three (a model: docs/npu.md). A table, then one\n"
        "JSON line per layer. The NPU is the one DG_NPU_DEVICE names\n"
        "(default sim, the simulator).\n"
        "\n"
        "  --model FILE.onnx  a whole model instead (repeatable), every node\n"
        "              pinned to the NPU under the auto policy (what it\n"
        "              declines falls back to the CPU), batch 1: nodes\n"
        "              and MACs on the NPU, its tasks and\n"
        "              jobs per run, CPU<->NPU edges (host conversions),\n"
        "              compile time (best of 3) and the timing model's\n"
        "              estimate of the NPU's share on 1 and 3 cores\n"
        "  -h, --help  print this help and exit\n"
        "\n"
        "Examples:\n"
        "  npu-report                      on the simulator\n"
        "  DG_NPU_DEVICE=rocket npu-report on a board\n"
        "  npu-report --model ZOO/qdq_resnet18/model.onnx\n"
        "\n"
        "Environment: DG_NPU_DEVICE (rocket, rknpu, a /dev path or sim).\n"
        "Exit status: 0 done, 1 no NPU device, 2 a bad argument.\n",
        f);
}

int main(int argc, char **argv) {
  const char *models[64];
  int nmodels = 0;
  for (int i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(argv[i], "--model")) {
      if (i + 1 >= argc || nmodels == 64) {
        fprintf(stderr, "npu-report: --model needs a FILE.onnx (64 at most)\n");
        return 2;
      }
      models[nmodels++] = argv[++i];
      continue;
    }
    return cli_unknown("npu-report", argv[i]);
  }
#ifndef DG_HAVE_MODELS
  if (nmodels) {
    fprintf(stderr, "npu-report: --model needs ONNX import, and this build "
                    "has none (-Donnx=disabled or no protobuf-c)\n");
    return 2;
  }
#endif
  if (!getenv("DG_NPU_DEVICE"))
    setenv("DG_NPU_DEVICE", "sim", 1);
  dg_context *ctx = NULL;
  dg_context_options co = {.disable_cache = 1, .cpu_threads = 2};
  if (dg_context_create(&co, &ctx) != DG_OK) {
    fprintf(stderr, "npu-report: no context\n");
    return 1;
  }
  int npu = npu_index(ctx);
  if (npu < 0) {
    fprintf(stderr, "npu-report: no NPU device (DG_NPU_DEVICE=%s)\n",
            getenv("DG_NPU_DEVICE"));
    dg_context_destroy(ctx);
    return 1;
  }
  dg_device_info info;
  dg_context_device_info(ctx, npu, &info);
#ifdef DG_HAVE_MODELS
  if (nmodels) {
    printf("# npu-report: device %d: %s (driver %s), CPU and NPU allowed, "
           "nodes pinned to the NPU (declined ones fall back), batch 1; lists: "
           "ms lowering and generating the command lists, compile: ms of the "
           "whole compile (weights packed, CPU nodes too); est: the timing "
           "model (a model, not a measurement) of the NPU's nodes, one core "
           "under the vendor driver (rknpu, tasks chained by the PC), est3: "
           "one run split "
           "over three cores (latency mode), thr3: throughput of three "
           "sessions, one per core, against one (throughput mode), rocket: "
           "one core under mainline rocket (an interrupt a task)\n",
           npu, info.name, info.driver);
    printf("%-26s %11s %7s %6s %5s %6s %9s %9s %9s %9s %7s %9s\n", "model",
           "npu/nodes", "macs", "tasks", "jobs", "edges", "lists", "compile",
           "est_ms", "est3_ms", "thr3", "rocket_ms");
    int bad = 0;
    for (int i = 0; i < nmodels; i++)
      bad |= npu_model_report(ctx, npu, models[i]);
    dg_context_destroy(ctx);
    return bad;
  }
#endif
  int n = (int)(sizeof layers / sizeof layers[0]);
  result *res = calloc((size_t)n, sizeof *res);
  printf("# npu-report: device %d: %s (driver %s), policy strict, "
         "median of %d\n",
         npu, info.name, info.driver, REPS);
  printf("# est_us: the timing model (a model, not a measurement: "
         "docs/npu.md, \"Timing model\"), one core and three under the "
         "vendor driver, one core under rocket\n");
  printf("%-11s %-18s %-30s %-8s %10s %10s %5s %7s %6s %8s %8s %9s  %s\n",
         "net", "layer", "shape (CxHxW -> OxOHxOW)", "npu", "compile_us",
         "lower_us", "tasks", "cut", "words", "est_us", "est3_us", "rocket_us",
         "reason");
  for (int i = 0; i < n; i++) {
    const layer *L = &layers[i];
    result *r = &res[i];
    run_layer(ctx, npu, L, r);
    char tk[16] = "-", wd[16] = "-", cut[24] = "-", e1[16] = "-", e3[16] = "-",
         er[16] = "-";
    if (r->lowered) {
      snprintf(tk, sizeof tk, "%d", r->tasks);
      snprintf(wd, sizeof wd, "%d", r->words);
      snprintf(cut, sizeof cut, "%dx%d", r->blocks, r->slices);
      snprintf(e1, sizeof e1, "%.1f", r->tm.total_us);
      snprintf(e3, sizeof e3, "%.1f", r->tm.total3_us);
      snprintf(er, sizeof er, "%.1f", r->tm.rocket_us);
    }
    printf("%-11s %-18s %-30s %-8s %10.1f %10.1f %5s %7s %6s %8s %8s %9s  %s\n",
           L->net, L->name, r->shape, r->taken ? "taken" : "declined",
           r->compile_us, r->lower_us, tk, cut, wd, e1, e3, er, r->reason);
  }
  double lenet_c = 0, lenet_l = 0, rn_c = 0, rn_l = 0;
  for (int i = 0; i < n; i++) {
    const layer *L = &layers[i];
    result *r = &res[i];
    char nm[64], sh[128], why[1100];
    json_str(L->name, nm, sizeof nm);
    json_str(r->shape, sh, sizeof sh);
    json_str(r->reason, why, sizeof why);
    printf("{\"net\":\"%s\",\"layer\":\"%s\",\"shape\":\"%s\",\"taken\":%s,"
           "\"reason\":\"%s\",\"compile_us_median\":%.1f,"
           "\"lower_us_median\":%.1f,\"tasks\":%d,\"channel_blocks\":%d,"
           "\"row_slices\":%d,\"command_words\":%d,"
           "\"max_words_per_task\":%d,\"model_us\":{\"compute\":%.1f,"
           "\"ddr\":%.1f,\"tasks\":%.1f,\"jobs\":%.1f,\"host\":%.1f,"
           "\"total\":%.1f,\"total_3_cores\":%.1f,\"total_rocket\":%.1f}}\n",
           L->net, nm, sh, r->taken ? "true" : "false", why, r->compile_us,
           r->lower_us, r->tasks, r->blocks, r->slices, r->words, r->max_words,
           r->tm.compute_us, r->tm.ddr_us, r->tm.task_us, r->tm.job_us,
           r->tm.host_us, r->tm.total_us, r->tm.total3_us, r->tm.rocket_us);
    if (!strcmp(L->net, "lenet"))
      lenet_c += r->compile_us, lenet_l += r->lower_us;
    if (!strcmp(L->net, "resnet50"))
      rn_c += r->compile_us, rn_l += r->lower_us;
  }
  printf("# totals: lenet convs compile %.1f us, lowering %.1f us; "
         "resnet50 listed convs compile %.1f us, lowering %.1f us\n",
         lenet_c, lenet_l, rn_c, rn_l);
  free(res);
  dg_context_destroy(ctx);
  return 0;
}
