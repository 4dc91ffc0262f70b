/* LeNet-5 on Fashion-MNIST, built layer by layer and run on the best device
 * (or the one asked for): prints accuracy over the 10,000 test images,
 * the warm median latency per image at batch 1 and at the batch size, and
 * the plan.
 *
 *   lenet [--weights DIR] [--data DIR] [--device N] [--int8] [--batch B]
 *         [--limit N] [--dot FILE] [--check]
 *
 * --device takes a device index only (as listed at the start of a run, or
 * by dg-info), never a kind name: "gpu" is refused with the valid indices.
 * --check runs the f32 and the int8 network on every device (or device N)
 * and prints one "ok"/"FAIL" line per requirement (accuracy >= 89%, int8
 * within 1.5 points of f32, agreement with the training script's figures,
 * verify). Every option, with its default: usage() below, or lenet --help. */
#define _POSIX_C_SOURCE 200809L
#include "common/cli.h"
#include "common/fashion_mnist.h"
#include "common/lenet_model.h"
#include "common/npy.h"
#include "common/timing.h"
#include "graph.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct options {
  const char *weights, *data, *dot;
  int device, int8, batch, limit, check;
  int device_limit; /* --check: images on devices other than the CPU */
} options;

static void to_input(const mnist_set *set, int first, int n, float *x) {
  for (int i = 0; i < n * 784; i++)
    x[i] = (float)set->images[(size_t)first * 784 + (size_t)i] / 255.0f;
}

static int argmax10(const float *p) {
  int best = 0;
  for (int k = 1; k < 10; k++)
    if (p[k] > p[best])
      best = k;
  return best;
}

/* Latencies are warm (each session ran once, untimed, before) medians:
 * batch1_us over up to 1000 batch-1 runs, batch_us over the batches. */
typedef struct result {
  double accuracy, batch1_us, batch_us;
  int ok, batch1_runs, batch_runs;
} result;

/* Compiles the network for batch b on device (-1: auto). */
static dg_session *compile(dg_context *ctx, const options *o, int batch,
                           int int8, int device, int strict) {
  char err[512];
  dg_graph *g =
      lenet_build(ctx, o->weights, batch, int8, device, err, sizeof err);
  if (!g) {
    fprintf(stderr, "lenet: %s\n", err);
    return NULL;
  }
  if (dg_graph_status(g) != DG_OK) {
    fprintf(stderr, "lenet: %s\n", dg_graph_error(g)->message);
    dg_graph_destroy(g);
    return NULL;
  }
  dg_session *s = NULL;
  dg_diagnostic d;
  dg_compile_options co = {.policy =
                               strict ? DG_POLICY_STRICT : DG_POLICY_AUTO};
  if (dg_graph_compile(g, &co, &s, &d) != DG_OK)
    fprintf(stderr, "lenet: compile: %s\n", d.message);
  dg_graph_destroy(g);
  return s;
}

/* Accuracy with batch o->batch; latency at batch 1 over the first images. */
static result evaluate(dg_context *ctx, const options *o, const mnist_set *test,
                       int int8, int device, int strict, int print_plan) {
  result r = {0};
  int n = o->limit < test->count ? o->limit : test->count;
  int B = o->batch;
  dg_session *sb = compile(ctx, o, B, int8, device, strict);
  dg_session *s1 = compile(ctx, o, 1, int8, device, strict);
  float *x = malloc(sizeof(float) * 784 * (size_t)B);
  float *p = malloc(sizeof(float) * 10 * (size_t)B);
  double *t_batch = malloc(sizeof(double) * (size_t)(n / B + 1));
  if (!sb || !s1 || !x || !p || !t_batch)
    goto done;
  int correct = 0, batches = 0;
  /* Warm: one untimed run of each session first (first-run packing,
   * pipeline creation and caches are not the latency asked for). */
  to_input(test, 0, B, x);
  dg_binding win = {"image", x, sizeof(float) * 784 * (size_t)B};
  dg_binding wout = {"probs", p, sizeof(float) * 10 * (size_t)B};
  dg_binding win1 = {"image", x, sizeof(float) * 784};
  dg_binding wout1 = {"probs", p, sizeof(float) * 10};
  if (dg_session_run(sb, &win, 1, &wout, 1, NULL) != DG_OK ||
      dg_session_run(s1, &win1, 1, &wout1, 1, NULL) != DG_OK)
    goto done;
  for (int first = 0; first + B <= n; first += B) {
    to_input(test, first, B, x);
    dg_binding in = {"image", x, sizeof(float) * 784 * (size_t)B};
    dg_binding out = {"probs", p, sizeof(float) * 10 * (size_t)B};
    dg_diagnostic d;
    double t0 = timing_now_us();
    if (dg_session_run(sb, &in, 1, &out, 1, &d) != DG_OK) {
      fprintf(stderr, "lenet: run: %s\n", d.message);
      goto done;
    }
    t_batch[batches++] = timing_now_us() - t0;
    for (int i = 0; i < B; i++)
      correct += argmax10(p + 10 * i) == test->labels[first + i];
  }
  /* The tail that does not fill a batch runs at batch 1. */
  int tail_start = batches * B;
  double lat[1000];
  int nlat = 0;
  for (int i = 0; i < n; i++) {
    if (i >= tail_start || nlat < 1000) {
      to_input(test, i, 1, x);
      dg_binding in = {"image", x, sizeof(float) * 784};
      dg_binding out = {"probs", p, sizeof(float) * 10};
      double t0 = timing_now_us();
      if (dg_session_run(s1, &in, 1, &out, 1, NULL) != DG_OK)
        goto done;
      double t = timing_now_us() - t0;
      if (nlat < 1000)
        lat[nlat++] = t;
      if (i >= tail_start)
        correct += argmax10(p) == test->labels[i];
    }
  }
  r.accuracy = (double)correct / n;
  r.batch1_us = timing_median(lat, nlat);
  r.batch_us = batches ? timing_median(t_batch, batches) : 0;
  r.batch1_runs = nlat;
  r.batch_runs = batches;
  r.ok = 1;
  if (print_plan) {
    printf("\nplan (batch 1):\n");
    dg_plan_write(dg_session_plan(s1), DG_PLAN_FORMAT_TABLE, stdout);
    if (o->dot) {
      FILE *f = fopen(o->dot, "w");
      if (!f || dg_plan_write(dg_session_plan(s1), DG_PLAN_FORMAT_DOT, f)) {
        fprintf(stderr, "lenet: cannot write %s\n", o->dot);
        r.ok = 0;
      }
      if (f)
        fclose(f);
    }
  }
done:
  dg_session_destroy(sb);
  dg_session_destroy(s1);
  free(x);
  free(p);
  free(t_batch);
  return r;
}

static double expected_accuracy(const char *dir, const char *key) {
  char path[1024], k[64];
  double v, found = -1;
  snprintf(path, sizeof path, "%s/expected.txt", dir);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  while (fscanf(f, "%63s %lf", k, &v) == 2)
    if (!strcmp(k, key))
      found = v;
  fclose(f);
  return found > 1 ? found / 100 : found;
}

static int checks_failed;
static void check(int ok, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void check(int ok, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%s - ", ok ? "ok" : "FAIL");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  checks_failed += !ok;
}

/* The first 8 test images against the training script's torch logits
 * (through softmax), on each device. */
static void check_logits(dg_context *ctx, const options *o,
                         const mnist_set *test, int device) {
  char path[1024], err[256];
  npy_array ref;
  snprintf(path, sizeof path, "%s/test_logits8.npy", o->weights);
  if (npy_load(path, &ref, err, sizeof err)) {
    check(0, "reference logits: %s", err);
    return;
  }
  dg_session *s = compile(ctx, o, 8, 0, device, 1);
  float x[8 * 784], p[80], *l = ref.data;
  double err_max = 0;
  to_input(test, 0, 8, x);
  int rc = s ? (int)dg_session_run(s, &(dg_binding){"image", x, sizeof x}, 1,
                                   &(dg_binding){"probs", p, sizeof p}, 1, NULL)
             : -1;
  for (int i = 0; rc == 0 && i < 8; i++) {
    double mx = -INFINITY, sum = 0;
    for (int k = 0; k < 10; k++)
      mx = fmax(mx, l[i * 10 + k]);
    for (int k = 0; k < 10; k++)
      sum += exp(l[i * 10 + k] - mx);
    for (int k = 0; k < 10; k++)
      err_max =
          fmax(err_max, fabs(p[i * 10 + k] - exp(l[i * 10 + k] - mx) / sum));
  }
  check(rc == 0 && err_max < 1e-4,
        "device %d: probabilities of 8 test images match PyTorch's "
        "(max abs diff %.2g)",
        device, err_max);
  if (s) {
    dg_verify_report vr;
    dg_status vs =
        dg_session_verify(s, &(dg_binding){"image", x, sizeof x}, 1, &vr);
    check(vs == DG_OK && vr.ok,
          "device %d: verify passes on every LeNet node (%d checked, worst "
          "rel err %.2g at %s)",
          device, vr.nodes_checked, vr.max_rel_error, vr.node_name);
  }
  dg_session_destroy(s);
  npy_free(&ref);
}

/* Every device (or only o->device) runs LeNet pinned (strict). The CPU
 * runs the whole test set; other devices run o->device_limit images
 * (DG_LENET_DEVICE_LIMIT, default 1000, as CPU implementations of Vulkan
 * and OpenCL are slow in CI) and must match the CPU's accuracy on those
 * same images. Simulators run only when asked for by index. */
static int run_checks(dg_context *ctx, options *o, const mnist_set *test) {
  double want_f32 = expected_accuracy(o->weights, "f32_test_accuracy");
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    if (o->device >= 0 ? dev != o->device : info.is_simulator)
      continue;
    options od = *o;
    if (info.kind != DG_DEVICE_CPU && od.limit > o->device_limit)
      od.limit = o->device_limit;
    int n = od.limit < test->count ? od.limit : test->count;
    result f = evaluate(ctx, &od, test, 0, dev, 1, 0);
    result q = evaluate(ctx, &od, test, 1, dev, 1, 0);
    int full = n >= test->count;
    check(f.ok && f.accuracy >= (full ? 0.89 : 0.85),
          "device %d (%s): f32 accuracy %.2f%% on %d images (floor %s)", dev,
          dg_device_kind_name(info.kind), 100 * f.accuracy, n,
          full ? "89%" : "85% on a subset");
    if (want_f32 > 0 && full)
      check(fabs(f.accuracy - want_f32) <= 0.002,
            "device %d: f32 accuracy agrees with PyTorch's %.2f%%", dev,
            100 * want_f32);
    if (info.kind != DG_DEVICE_CPU) {
      result cf = evaluate(ctx, &od, test, 0, 0, 1, 0);
      result cq = evaluate(ctx, &od, test, 1, 0, 1, 0);
      check(cf.ok && fabs(f.accuracy - cf.accuracy) <= 0.002,
            "device %d: f32 accuracy equals the CPU's on the same %d images "
            "(%.2f%% vs %.2f%%)",
            dev, n, 100 * f.accuracy, 100 * cf.accuracy);
      check(cq.ok && q.ok &&
                fabs(q.accuracy - cq.accuracy) <=
                    (info.int8_max_lsb_deviation ? 0.005 : 0.0),
            "device %d: int8 accuracy equals the CPU's on the same %d images "
            "(%.2f%% vs %.2f%%)",
            dev, n, 100 * q.accuracy, 100 * cq.accuracy);
    }
    check(q.ok && q.accuracy >= f.accuracy - 0.015,
          "device %d: int8 accuracy %.2f%% within 1.5 points of f32", dev,
          100 * q.accuracy);
    check_logits(ctx, o, test, dev);
  }
  return checks_failed ? 1 : 0;
}

/* The help: the one place that lists the options. */
static void usage(FILE *f) {
  fputs(
      "usage: lenet [--weights DIR] [--data DIR] [--device N] [--int8]\n"
      "             [--batch B] [--limit N] [--dot FILE] [--check]\n"
      "\n"
      "LeNet-5 on Fashion-MNIST, built layer by layer: classifies the test\n"
      "images and prints the accuracy, the latency per image at batch 1 and\n"
      "at the batch size (warm medians: each session runs once untimed\n"
      "first), and the plan.\n"
      "\n"
      "  --weights DIR  the trained weights, *.npy and expected.txt\n"
      "                 (default examples/lenet-weights)\n"
      "  --data DIR     Fashion-MNIST's t10k-*-idx*-ubyte.gz files\n"
      "                 (default /usr/share/datasets/fashion-mnist)\n"
      "  --device N     pin every node to device N, strict policy; N is a\n"
      "                 device index as listed at the start of a run or by\n"
      "                 dg-info, not a kind name (default: each node placed\n"
      "                 by cost over all devices)\n"
      "  --int8         run the post-training-quantised network (default "
      "f32)\n"
      "  --batch B      batch size of the accuracy pass, 1..10000 (default "
      "100)\n"
      "  --limit N      classify the first N test images, N >= 1 (default\n"
      "                 DG_LENET_LIMIT, else all 10000)\n"
      "  --dot FILE     also write the batch-1 plan to FILE as Graphviz\n"
      "  --check        run the f32 and the int8 network on every device\n"
      "                 (only device N with --device) and print one ok/FAIL\n"
      "                 line per requirement: accuracy >= 89%, int8 within\n"
      "                 1.5 points of f32, agreement with the training\n"
      "                 script's figures, verify; not with --int8 or --dot\n"
      "  -h, --help     print this help and exit\n"
      "\n"
      "Examples:\n"
      "  lenet                      f32 on the best device\n"
      "  lenet --int8 --device 0    int8 on the CPU\n"
      "  lenet --check              the tests' accuracy checks\n"
      "\n"
      "Environment: DG_LENET_LIMIT, the default of --limit;\n"
      "DG_LENET_DEVICE_LIMIT, the images --check runs on devices other than\n"
      "the CPU (default 1000).\n"
      "Exit status: 0 done (every check ok), 1 a failure, 2 a bad argument.\n",
      f);
}

int main(int argc, char **argv) {
  static const char P[] = "lenet";
  options o = {.weights = "examples/lenet-weights",
               .data = "/usr/share/datasets/fashion-mnist",
               .device = -1,
               .batch = 100,
               .limit = 10000,
               .device_limit = 1000};
  const char *lim = getenv("DG_LENET_LIMIT");
  const char *dlim = getenv("DG_LENET_DEVICE_LIMIT");
  if ((lim && cli_int(P, "DG_LENET_LIMIT", lim, 1, INT_MAX, &o.limit)) ||
      (dlim &&
       cli_int(P, "DG_LENET_DEVICE_LIMIT", dlim, 1, INT_MAX, &o.device_limit)))
    return CLI_USAGE;
  const char *device = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (cli_is_help(a)) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--weights")) {
      if (!(o.weights = cli_value(P, argc, argv, &i, "DIR")))
        return CLI_USAGE;
    } else if (!strcmp(a, "--data")) {
      if (!(o.data = cli_value(P, argc, argv, &i, "DIR")))
        return CLI_USAGE;
    } else if (!strcmp(a, "--dot")) {
      if (!(o.dot = cli_value(P, argc, argv, &i, "FILE")))
        return CLI_USAGE;
    } else if (!strcmp(a, "--device")) {
      /* Checked against the context's devices once it exists. */
      if (!(device = cli_value(P, argc, argv, &i, "a device index")))
        return CLI_USAGE;
    } else if (!strcmp(a, "--batch")) {
      if (cli_int(P, a, cli_value(P, argc, argv, &i, "B, 1..10000"), 1, 10000,
                  &o.batch))
        return CLI_USAGE;
    } else if (!strcmp(a, "--limit")) {
      if (cli_int(P, a, cli_value(P, argc, argv, &i, "N >= 1"), 1, INT_MAX,
                  &o.limit))
        return CLI_USAGE;
    } else if (!strcmp(a, "--int8")) {
      o.int8 = 1;
    } else if (!strcmp(a, "--check")) {
      o.check = 1;
    } else {
      return cli_unknown(P, a);
    }
  }
  /* --check runs both networks and prints no plan: these would be
   * ignored. */
  if (o.check && (o.int8 || o.dot)) {
    fprintf(stderr,
            "lenet: %s has no effect with --check, which runs f32 "
            "and int8 and writes no plan\n",
            o.int8 ? "--int8" : "--dot");
    return CLI_USAGE;
  }
  dg_context *ctx;
  if (dg_context_create(NULL, &ctx) != DG_OK) {
    fprintf(stderr, "lenet: cannot create a context\n");
    return 1;
  }
  if (device && cli_device(P, "--device", device, ctx, &o.device)) {
    dg_context_destroy(ctx);
    return CLI_USAGE;
  }
  mnist_set test;
  char err[512];
  if (mnist_load(o.data, "t10k", &test, err, sizeof err)) {
    fprintf(stderr, "lenet: %s\n", err);
    dg_context_destroy(ctx);
    return 1;
  }
  int rc;
  if (o.check) {
    rc = run_checks(ctx, &o, &test);
  } else {
    printf("devices:\n");
    for (int d = 0; d < dg_context_device_count(ctx); d++) {
      dg_device_info info;
      dg_context_device_info(ctx, d, &info);
      printf("  %d: %-7s %s (%s)\n", d, dg_device_kind_name(info.kind),
             info.name, info.driver);
    }
    result r = evaluate(ctx, &o, &test, o.int8, o.device, o.device >= 0, 1);
    rc = !r.ok;
    if (r.ok)
      printf("\nLeNet %s on Fashion-MNIST: accuracy %.2f%% (%d test "
             "images)\nlatency, warm (each session run once before "
             "timing), medians:\n  batch 1: %.1f us per image (%d runs)\n"
             "  batch %d: %.2f us per image, %.1f us per batch (%d batches)\n",
             o.int8 ? "int8" : "f32", 100 * r.accuracy,
             o.limit < test.count ? o.limit : test.count, r.batch1_us,
             r.batch1_runs, o.batch, r.batch_us / o.batch, r.batch_us,
             r.batch_runs);
  }
  dg_context_destroy(ctx);
  mnist_free(&test);
  return rc;
}
