#define _POSIX_C_SOURCE 200809L
/* Dilated pooling: random max_pool2d / avg_pool2d cases with dilations
 * 1..3 on every device against the float64 reference (the NPU declines
 * the dilated ones, saying why), a few outputs worked out by hand (so that
 * the reference itself is checked), and bad dilated parameters naming
 * their field. */
#include "differential.h"

/* The first error of g must be st, naming field. */
static void expect(dg_graph *g, const char *what, dg_status st,
                   const char *field) {
  const dg_diagnostic *d = dg_graph_error(g);
  int ok = d && d->status == st && strstr(d->field, field) &&
           strlen(d->message) > 10;
  CHECK(ok, "%s -> %s on '%s' (got %s, field '%s': %s)", what,
        dg_status_string(st), field,
        d ? dg_status_string(d->status) : "no error", d ? d->field : "",
        d ? d->message : "");
}

typedef struct pool_arg {
  bool is_max;
  dg_pool2d_params p;
} pool_arg;

static dg_tensor make_pool(dg_graph *g, dg_tensor *in, void *arg) {
  pool_arg *a = arg;
  return a->is_max ? dg_graph_max_pool2d(g, "pool", in[0], &a->p)
                   : dg_graph_avg_pool2d(g, "pool", in[0], &a->p);
}

static void random_cases(bool is_max, dg_dtype t) {
  op_stats st = {0};
  for (int c = 0; c < CASES; c++) {
    pool_arg a = {.is_max = is_max};
    int64_t xd[4] = {t_range(1, 2), t_range(1, 5), 0, 0};
    for (int i = 0; i < 2; i++) {
      a.p.kernel[i] = t_range(1, 4);
      a.p.stride[i] = t_range(1, 3);
      /* 0 is the default, 1; a third of the cases are undilated. */
      a.p.dilation[i] = t_range(0, 3);
      int span =
          (a.p.kernel[i] - 1) * (a.p.dilation[i] ? a.p.dilation[i] : 1) + 1;
      a.p.pads[i] = t_range(0, span - 1);
      a.p.pads[i + 2] = t_range(0, span - 1);
      xd[2 + i] = t_range(span, span + 9); /* the window always fits */
    }
    a.p.padding = (dg_padding)t_range(0, 3);
    a.p.ceil_mode = t_range(0, 1);
    a.p.count_include_pad = t_range(0, 1);
    dg_tensor_desc d = desc_of(t, 4, xd);
    char label[96];
    snprintf(label, sizeof label,
             "%s %s case %d (k %dx%d, dil %dx%d, pad mode %d)",
             is_max ? "max_pool2d" : "avg_pool2d", dg_dtype_name(t), c,
             a.p.kernel[0], a.p.kernel[1], a.p.dilation[0], a.p.dilation[1],
             (int)a.p.padding);
    run_case(&st, label, 1, &d, make_pool, &a);
  }
  char name[64];
  snprintf(name, sizeof name, "dilated %s %s",
           is_max ? "max_pool2d" : "avg_pool2d", dg_dtype_name(t));
  report(name, &st);
}

/* Pools big enough (2 x 24 planes of 40 x 40) that the CPU deals their
 * planes to its threads (DG_TEST_CPU_THREADED: a one-node graph would
 * get one), with padding, ceil mode and both counts, against the
 * reference on every device. */
static void threaded_cases(void) {
  setenv("DG_TEST_CPU_THREADED", "1", 1);
  op_stats st = {0};
  for (int c = 0; c < 8; c++) {
    pool_arg a = {.is_max = c % 2 == 0};
    int64_t xd[4] = {2, 24, 40, 40};
    a.p.kernel[0] = a.p.kernel[1] = 3;
    a.p.stride[0] = a.p.stride[1] = 1 + c / 4;
    a.p.pads[0] = a.p.pads[1] = a.p.pads[2] = a.p.pads[3] = (c / 2) % 2;
    a.p.ceil_mode = c / 4;
    a.p.count_include_pad = (c / 2) % 2;
    dg_tensor_desc d = desc_of(DG_DTYPE_F32, 4, xd);
    char label[96];
    snprintf(label, sizeof label, "%s f32 threaded case %d",
             a.is_max ? "max_pool2d" : "avg_pool2d", c);
    run_case(&st, label, 1, &d, make_pool, &a);
  }
  report("pooling 2x24x40x40, planes over the CPU's threads", &st);
  unsetenv("DG_TEST_CPU_THREADED");
}

/* x = 0, 1, 2, ... of shape [1,1,H,W] pooled on every device; y must be
 * the hand-computed want (exact: small integers and quarters). */
static void hand_case(const char *what, bool is_max, int64_t H, int64_t W,
                      const dg_pool2d_params *p, int64_t OH, int64_t OW,
                      const float *want) {
  dg_graph *g = dg_graph_create(ctx, what);
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, 1, H, W}};
  dg_tensor x = dg_graph_input(g, "x", &d);
  dg_tensor y = is_max ? dg_graph_max_pool2d(g, "pool", x, p)
                       : dg_graph_avg_pool2d(g, "pool", x, p);
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  float xin[64], out[64];
  for (int i = 0; i < H * W; i++)
    xin[i] = (float)i;
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    dg_compile_options o = {.devices = &dev, .device_count = 1};
    dg_session *s = NULL;
    dg_diagnostic diag;
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    dg_status rc = dg_graph_compile(g, &o, &s, &diag);
    if (rc == DG_ERROR_UNSUPPORTED && info.kind == DG_DEVICE_NPU)
      continue; /* f32: npu_declines_dilated checks the int8 reason */
    for (int i = 0; i < OH * OW; i++)
      out[i] = -99;
    if (rc == DG_OK)
      rc = dg_session_run(s, &(dg_binding){"x", xin, sizeof(float) * H * W}, 1,
                          &(dg_binding){"y", out, sizeof(float) * OH * OW}, 1,
                          &diag);
    int bad = -1;
    for (int i = 0; rc == DG_OK && i < OH * OW && bad < 0; i++)
      if (out[i] != want[i])
        bad = i;
    CHECK(rc == DG_OK && bad < 0, "%s on device %d (%s): %s%s", what, dev,
          info.name, rc ? diag.message : "ran",
          bad >= 0 ? ", wrong value" : "");
    if (bad >= 0)
      printf("#   y[%d] = %g, want %g\n", bad, out[bad], want[bad]);
    dg_session_destroy(s);
  }
  dg_graph_destroy(g);
}

static void hand_cases(void) {
  /* x[h][w] = 4h + w. 2x2 taps 2 apart: (0,0) (0,2) (2,0) (2,2) first. */
  dg_pool2d_params mp = {.kernel = {2, 2}, .dilation = {2, 2}};
  hand_case("max 4x4, k 2, dil 2", true, 4, 4, &mp, 2, 2,
            (const float[]){10, 11, 14, 15});
  /* Pads 1, stride 2: the first window's taps are (-1|1) x (-1|1), only
   * x[1][1] = 5 inside the input; all four inside the padded input. */
  dg_pool2d_params ap = {.kernel = {2, 2},
                         .stride = {2, 2},
                         .dilation = {2, 2},
                         .pads = {1, 1, 1, 1},
                         .count_include_pad = 1};
  hand_case("avg 4x4, k 2, dil 2, pads 1, include pad", false, 4, 4, &ap, 2, 2,
            (const float[]){5 / 4.0f, 12 / 4.0f, 18 / 4.0f, 40 / 4.0f});
  ap.count_include_pad = 0;
  hand_case("avg 4x4, k 2, dil 2, pads 1, exclude pad", false, 4, 4, &ap, 2, 2,
            (const float[]){5, 6, 9, 10});
  /* One row of 0..5, k 2, dil 2, stride 2, right pad 1, ceil mode: the
   * last window's taps are 4 and 6, 6 in the padding (counted with
   * count_include_pad: ONNX's taps inside the padded input). */
  dg_pool2d_params cp = {.kernel = {1, 2},
                         .stride = {1, 2},
                         .dilation = {1, 2},
                         .pads = {0, 0, 0, 1},
                         .ceil_mode = 1,
                         .count_include_pad = 1};
  hand_case("avg 1x6, k 2, dil 2, right pad 1, include pad", false, 1, 6, &cp,
            1, 3, (const float[]){1, 3, 2});
  cp.count_include_pad = 0;
  hand_case("avg 1x6, k 2, dil 2, right pad 1, exclude pad", false, 1, 6, &cp,
            1, 3, (const float[]){1, 3, 4});
  /* Without the pad, ceil mode's last window hangs past the input: tap 6
   * is never counted. */
  cp.pads[3] = 0;
  cp.count_include_pad = 1;
  hand_case("avg 1x6, k 2, dil 2, ceil overhang", false, 1, 6, &cp, 1, 3,
            (const float[]){1, 3, 4});
}

/* An NPU (DG_NPU_DEVICE=sim) runs int8 max pooling, but not dilated: it
 * must decline naming the dilation, and take the same node undilated. */
static void npu_declines_dilated(void) {
  bool any = false;
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    if (info.kind != DG_DEVICE_NPU)
      continue;
    any = true;
    for (int dil = 1; dil <= 2; dil++) {
      dg_graph *g = dg_graph_create(ctx, "npu");
      int64_t dims[4] = {1, 4, 8, 8};
      dg_tensor_desc d = desc_of(DG_DTYPE_I8, 4, dims);
      dg_pool2d_params p = {.kernel = {2, 2}, .dilation = {dil, dil}};
      dg_tensor x = dg_graph_input(g, "x", &d);
      dg_graph_output(g, "y", dg_graph_max_pool2d(g, "pool", x, &p),
                      DG_LAYOUT_NCHW);
      dg_compile_options o = {.devices = &dev, .device_count = 1};
      dg_session *s = NULL;
      dg_diagnostic diag;
      dg_status rc = dg_graph_compile(g, &o, &s, &diag);
      if (dil == 1)
        CHECK(rc == DG_OK, "%s takes undilated int8 max pooling: %s", info.name,
              rc ? diag.message : "ok");
      else
        CHECK(rc == DG_ERROR_UNSUPPORTED && strstr(diag.message, "dilat"),
              "%s declines dilated pooling, saying why: %s", info.name,
              rc ? diag.message : "compiled");
      dg_session_destroy(s);
      dg_graph_destroy(g);
    }
  }
  if (!any)
    printf("# no NPU in the context (DG_NPU_DEVICE=sim adds the simulator)\n");
}

static void bad_inputs(void) {
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, 1, 8, 8}};
  for (int is_max = 0; is_max < 2; is_max++) {
    dg_pool2d_params neg = {.kernel = {2, 2}, .dilation = {1, -2}};
    dg_graph *g = dg_graph_create(ctx, "bad");
    dg_tensor x = dg_graph_input(g, "x", &d);
    pool_arg a = {.is_max = is_max, .p = neg};
    make_pool(g, &x, &a);
    expect(g, is_max ? "max_pool2d dilation -2" : "avg_pool2d dilation -2",
           DG_ERROR_INVALID_ARGUMENT, "params.dilation");
    dg_graph_destroy(g);
    /* k 3 at dilation 4 spans 9 > 8 */
    dg_pool2d_params big = {.kernel = {3, 1}, .dilation = {4, 1}};
    g = dg_graph_create(ctx, "bad");
    x = dg_graph_input(g, "x", &d);
    a.p = big;
    make_pool(g, &x, &a);
    expect(g, "dilated window of 9 rows over 8", DG_ERROR_INVALID_SHAPE,
           "x.dims[2]");
    dg_graph_destroy(g);
    /* ... which pads of 1 make fit (8 + 1 >= 9) */
    big.pads[0] = 1;
    g = dg_graph_create(ctx, "ok");
    x = dg_graph_input(g, "x", &d);
    a.p = big;
    make_pool(g, &x, &a);
    CHECK(dg_graph_status(g) == DG_OK, "dilated window fits with a pad: %s",
          dg_graph_status(g) ? dg_graph_error(g)->message : "ok");
    dg_graph_destroy(g);
    /* One row, k 2 at dilation 3, pads 2 and 1: the window's taps are
     * rows -2 and 1, both padding. */
    dg_tensor_desc row = {
        .dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, 1, 1, 8}};
    dg_pool2d_params empty = {
        .kernel = {2, 1}, .dilation = {3, 1}, .pads = {2, 0, 1, 0}};
    g = dg_graph_create(ctx, "bad");
    x = dg_graph_input(g, "x", &row);
    a.p = empty;
    make_pool(g, &x, &a);
    expect(g, "a dilated window of padding only", DG_ERROR_INVALID_ARGUMENT,
           "params.pads[0]");
    dg_graph_destroy(g);
    /* A pad as wide as the dilated window (9) is refused. */
    big.pads[0] = 9;
    g = dg_graph_create(ctx, "bad");
    x = dg_graph_input(g, "x", &d);
    a.p = big;
    make_pool(g, &x, &a);
    expect(g, "pad of a whole dilated window", DG_ERROR_INVALID_ARGUMENT,
           "params.pads");
    dg_graph_destroy(g);
  }
}

int main(int argc, char **argv) {
  unsigned long long seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261201;
  t_seed(seed);
  (void)random_dims; /* the harness's, unused here */
  printf("# seed %llu\n", seed);
  if (dg_context_create(NULL, &ctx) != DG_OK) {
    CHECK(0, "context");
    return 1;
  }
  const dg_dtype types[4] = {DG_DTYPE_F32, DG_DTYPE_F16, DG_DTYPE_I8,
                             DG_DTYPE_U8};
  for (int i = 0; i < 4; i++)
    random_cases(true, types[i]);
  for (int i = 0; i < 2; i++)
    random_cases(false, types[i]);
  hand_cases();
  threaded_cases();
  npu_declines_dilated();
  bad_inputs();
  dg_context_destroy(ctx);
  return t_exit();
}
