#define _POSIX_C_SOURCE 200809L
/* LeNet int8 with its convolutions, max pools and fully-connected layers
 * (as 1x1 convolutions) on the NPU (the simulator), the other layers
 * falling back to the CPU: the plan says where each node went and why,
 * and the accuracy on Fashion-MNIST test images stays that of the CPU's
 * int8 network. */
#include "test_npu_target.h"

#include "common/fashion_mnist.h"
#include "common/lenet_model.h"
#include "test_npu_conv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 100

/* Top-1 hits over count images (a multiple of BATCH); -1 on error. */
static int accuracy(dg_context *ctx, int device, const mnist_set *set,
                    int count, int print_plan) {
  char err[256] = "";
  dg_graph *g = lenet_build(ctx, DG_SOURCE_DIR "/examples/lenet-weights",
                            BATCH, 1, device, err, sizeof err);
  dg_session *s = NULL;
  dg_diagnostic d;
  memset(&d, 0, sizeof d);
  if (!g || dg_graph_compile(g, NULL, &s, &d) != DG_OK) {
    printf("# lenet: %s%s\n", err, d.message);
    dg_graph_destroy(g);
    return -1;
  }
  dg_graph_destroy(g);
  const dg_plan *plan = dg_session_plan(s);
  int on_npu = 0;
  for (int i = 0; i < dg_plan_node_count(plan); i++) {
    dg_plan_node pn;
    dg_plan_get_node(plan, i, &pn);
    on_npu += pn.device_kind == DG_DEVICE_NPU;
    if (print_plan)
      printf("# lenet plan: %-10s %-17s %-4s %s\n", pn.node_name,
             dg_op_name(pn.op), dg_device_kind_name(pn.device_kind),
             pn.reason_text);
  }
  if (device > 0 && on_npu != 7) {
    printf("# lenet: %d nodes on the NPU, expected conv1, pool1, conv2, "
           "pool2 and fc1..fc3\n",
           on_npu);
    dg_session_destroy(s);
    return -1;
  }
  float *x = malloc(sizeof(float) * BATCH * 784), *p = malloc(40 * BATCH);
  int hits = 0;
  for (int first = 0; first < count && hits >= 0; first += BATCH) {
    for (int i = 0; i < BATCH * 784; i++)
      x[i] = (float)set->images[(size_t)first * 784 + (size_t)i] / 255.0f;
    dg_binding in = {"image", x, sizeof(float) * BATCH * 784};
    dg_binding out = {"probs", p, 40 * BATCH};
    if (dg_session_run(s, &in, 1, &out, 1, &d) != DG_OK) {
      printf("# lenet run: %s\n", d.message);
      hits = -1;
      break;
    }
    for (int b = 0; b < BATCH; b++) {
      int best = 0;
      for (int k = 1; k < 10; k++)
        best = p[b * 10 + k] > p[b * 10 + best] ? k : best;
      hits += best == set->labels[first + b];
    }
  }
  free(x), free(p);
  dg_session_destroy(s);
  return hits;
}

void npu_lenet_tests(npu_check_fn check) {
  mnist_set set;
  char err[256];
  if (mnist_load("/usr/share/datasets/fashion-mnist", "t10k", &set, err,
                 sizeof err)) {
    printf("skipped: lenet on the NPU: %s\n", err);
    return;
  }
  const char *limit = getenv("DG_LENET_LIMIT");
  int count = limit ? atoi(limit) / BATCH * BATCH : 500;
  if (count < BATCH || count > set.count)
    count = 500;
  setenv("DG_NPU_DEVICE", "sim", 1);
  dg_context *ctx = NULL;
  dg_context_options o = {.disable_cache = 1};
  int npu = dg_context_create(&o, &ctx) == DG_OK ? npu_device_index(ctx) : -1;
  int cpu_hits = npu >= 0 ? accuracy(ctx, 0, &set, count, 0) : -1;
  int npu_hits = npu >= 0 ? accuracy(ctx, npu, &set, count, 1) : -1;
  printf("# lenet int8 on %d images: cpu %.1f%%, convs, pools and fcs on "
         "the NPU %.1f%%\n",
         count, 100.0 * cpu_hits / count, 100.0 * npu_hits / count);
  check(cpu_hits > 0 && npu_hits > 0 &&
            abs(cpu_hits - npu_hits) * 100 <= count,
        "lenet int8: conv1/conv2 (per-channel scales, one task per channel), "
        "their max pools and fc1..fc3 (batch 100 on the height) on the NPU, "
        "the rest on the CPU, accuracy within 1 point of the CPU's int8");
  dg_context_destroy(ctx);
  unsetenv("DG_NPU_DEVICE");
  mnist_free(&set);
}
