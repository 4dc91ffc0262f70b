/* One convolution offloaded from plain C buffers, no graph: the third kind
 * of user. Runs a 3x3 f32 conv with a fused relu on each device (or only
 * device N) with dg_oneshot_conv2d and checks it against a loop written
 * here.
 *
 *   conv_offload [--device N]
 *
 * The options are in usage() (conv_offload --help). It checks its own
 * arguments rather than through examples/common/cli.h: this file alone
 * builds against the installed library (tests/examples_test.sh). */
#include "graph.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 1, C = 16, H = 20, W = 20, O = 24, K = 3 };

static float x[N * C * H * W], w[O * C * K * K], b[O], y[N * O * H * W];

/* The conv written out, with SAME padding and a fused relu. */
static float expect(int o, int h, int wo) {
  float s = b[o];
  for (int c = 0; c < C; c++)
    for (int kh = 0; kh < K; kh++)
      for (int kw = 0; kw < K; kw++) {
        int ih = h + kh - 1, iw = wo + kw - 1;
        if (ih >= 0 && ih < H && iw >= 0 && iw < W)
          s += x[(c * H + ih) * W + iw] * w[((o * C + c) * K + kh) * K + kw];
      }
  return s > 0 ? s : 0;
}

static void usage(FILE *f) {
  fputs("usage: conv_offload [--device N]\n"
        "\n"
        "Runs a 3x3 f32 convolution (16 -> 24 channels, 20x20, SAME padding,\n"
        "relu) from plain C buffers with dg_oneshot_conv2d on each device and\n"
        "prints one ok/FAIL line per device against a loop written here.\n"
        "\n"
        "  --device N  run on device N only, an index as dg-info lists them\n"
        "              (default: every device)\n"
        "  -h, --help  print this help and exit\n"
        "\n"
        "Examples:\n"
        "  conv_offload              every device\n"
        "  conv_offload --device 1   device 1 only\n"
        "\n"
        "Environment: DG_CACHE_DIR (the kernel cache), DG_NPU_DEVICE (the NPU\n"
        "backend); docs/environment.md lists the library's.\n"
        "Exit status: 0 every device ok, 1 a failure, 2 a bad argument.\n",
        f);
}

/* v as a device index of ctx: the whole string (strtol alone takes "1x"
 * as 1), in range; else a refusal that lists the valid indices. */
static int parse_device(const dg_context *ctx, const char *v, int *out) {
  char *end;
  long d = strtol(v, &end, 10);
  int n = dg_context_device_count(ctx);
  if (*v && !isspace((unsigned char)*v) && !*end && d >= 0 && d < n) {
    *out = (int)d;
    return 0;
  }
  fprintf(stderr, "conv_offload: --device got '%s'; valid:", v);
  for (int i = 0; i < n; i++) {
    dg_device_info info;
    dg_context_device_info(ctx, i, &info);
    fprintf(stderr, "%s %d (%s: %s)", i ? "," : "", i,
            dg_device_kind_name(info.kind), info.name);
  }
  fprintf(stderr, "\n");
  return -1;
}

int main(int argc, char **argv) {
  const char *device = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--device")) {
      if (i + 1 == argc || !strncmp(argv[i + 1], "--", 2)) {
        fprintf(stderr, "conv_offload: --device needs a value: a device "
                        "index\n");
        return 2;
      }
      device = argv[++i];
    } else {
      fprintf(stderr,
              "conv_offload: unknown option '%s' (conv_offload "
              "--help lists them)\n",
              argv[i]);
      return 2;
    }
  }
  int only = -1; /* every device */
  srand(1);
  for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
    x[i] = (float)rand() / RAND_MAX - 0.5f;
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
    w[i] = (float)rand() / RAND_MAX - 0.5f;
  for (int i = 0; i < O; i++)
    b[i] = (float)rand() / RAND_MAX - 0.5f;

  dg_context *ctx;
  if (dg_context_create(NULL, &ctx) != DG_OK)
    return 1;
  if (device && parse_device(ctx, device, &only)) {
    dg_context_destroy(ctx);
    return 2;
  }
  dg_tensor_desc xd = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {N, C, H, W}};
  dg_tensor_desc wd = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {O, C, K, K}};
  dg_tensor_desc bd = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {O}};
  dg_conv2d_params p = {.padding = DG_PADDING_SAME_UPPER,
                        .activation = DG_ACTIVATION_RELU};
  int failures = 0;
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    if (only >= 0 && dev != only)
      continue;
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    dg_diagnostic d;
    dg_status st = dg_oneshot_conv2d(ctx, dev, &xd, x, &wd, w, &bd, b, &p, NULL,
                                     y, sizeof y, &d);
    if (st != DG_OK) {
      printf("FAIL - device %d (%s): %s\n", dev, info.name, d.message);
      failures++;
      continue;
    }
    float err = 0;
    for (int o = 0; o < O; o++)
      for (int h = 0; h < H; h++)
        for (int wo = 0; wo < W; wo++)
          err = fmaxf(err, fabsf(y[(o * H + h) * W + wo] - expect(o, h, wo)));
    printf("%s - device %d (%s): one-shot f32 conv %dx%dx%dx%d -> %d "
           "channels, max error %.2g\n",
           err < 1e-4f ? "ok" : "FAIL", dev, dg_device_kind_name(info.kind), N,
           C, H, W, O, err);
    failures += err >= 1e-4f;
  }
  dg_context_destroy(ctx);
  return failures != 0;
}
