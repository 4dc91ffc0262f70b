/* Differential tests of the spatial family (resize) on seeded random
 * shapes, parameters and data, on every device of the context, against
 * the float64 reference kernels of src/ops; then each bad input's status
 * and the field its diagnostic names. */
#include "differential.h"

/* The first error of g must be st, naming field, about node idx. */
static void expect(dg_graph *g, const char *what, dg_status st,
                   const char *field, int idx) {
  const dg_diagnostic *d = dg_graph_error(g);
  int ok = d && d->status == st && strstr(d->field, field) &&
           d->node_index == idx && strlen(d->message) > 10;
  CHECK(ok, "%s -> %s on '%s' (got %s, field '%s', node %d: %s)", what,
        dg_status_string(st), field,
        d ? dg_status_string(d->status) : "no error", d ? d->field : "",
        d ? d->node_index : -9, d ? d->message : "");
}

static dg_tensor_desc desc4(dg_dtype t, int64_t n, int64_t c, int64_t h,
                            int64_t w) {
  int64_t d[4] = {n, c, h, w};
  return desc_of(t, 4, d);
}

/* ---- resize ---- */

static dg_tensor make_resize(dg_graph *g, dg_tensor *in, void *arg) {
  return dg_graph_resize(g, "resize", in[0], arg);
}

/* Every coordinate mode with every nearest mode (case c takes pair
 * c % 24), by scales in [0.5, 3], by explicit sizes, or by both. */
static void resize_cases(dg_dtype t, dg_resize_mode mode) {
  op_stats st = {0};
  for (int c = 0; c < CASES; c++) {
    int64_t hw[2];
    random_dims(2, hw, 1, 9);
    int64_t H = hw[0], W = hw[1];
    dg_tensor_desc d = desc4(t, t_range(1, 2), t_range(1, 3), H, W);
    dg_resize_params p = {.mode = mode,
                          .coord = (dg_resize_coord)(c % 6),
                          .nearest = (dg_resize_nearest)(c / 6 % 4)};
    int how = t_range(0, 2); /* 0 scales, 1 sizes, 2 both */
    for (int i = 0; i < 2; i++) {
      int64_t in = i ? W : H;
      float lo = 1.0f / (float)in > 0.5f ? 1.0f / (float)in : 0.5f;
      if (how != 1)
        p.scales[i] = t_uniform(lo, 3.0f);
      if (how != 0)
        p.sizes[i] = t_range(1, 20);
    }
    char label[96];
    snprintf(label, sizeof label, "resize %s %s coord %d nearest %d %s",
             dg_dtype_name(t), mode ? "linear" : "nearest", p.coord, p.nearest,
             how == 0   ? "scales"
             : how == 1 ? "sizes"
                        : "both");
    run_case(&st, label, 1, &d, make_resize, &p);
  }
  char name[64];
  snprintf(name, sizeof name, "resize %s %s", mode ? "linear" : "nearest",
           dg_dtype_name(t));
  report(name, &st);
}

/* Known answers, not from the code under test: ONNX's
 * test_resize_downsample_scales_linear_align_corners (x 1..8 as 2 x 4,
 * scales 0.6: [1, 3.142857]) and a 2x nearest asymmetric upsample. */
static void resize_known(void) {
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[4] = {0};
  dg_graph *g = dg_graph_create(ctx, "known");
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, 1, 2, 4}};
  dg_tensor xi = dg_graph_input(g, "x", &d);
  dg_resize_params p = {.mode = DG_RESIZE_LINEAR,
                        .coord = DG_RESIZE_ALIGN_CORNERS,
                        .scales = {0.6f, 0.6f}};
  dg_graph_output(g, "y", dg_graph_resize(g, "r", xi, &p), DG_LAYOUT_NCHW);
  dg_resize_params q = {.coord = DG_RESIZE_ASYMMETRIC,
                        .nearest = DG_RESIZE_FLOOR,
                        .scales = {1, 2}};
  dg_graph_output(g, "z", dg_graph_resize(g, "n", xi, &q), DG_LAYOUT_NCHW);
  float z[16];
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    dg_compile_options o = {.devices = &dev, .device_count = 1};
    dg_session *s = NULL;
    dg_diagnostic diag;
    dg_binding in = {"x", x, sizeof x};
    dg_binding out[2] = {{"y", y, 2 * sizeof(float)}, {"z", z, sizeof z}};
    dg_status rc = dg_graph_compile(g, &o, &s, &diag);
    if (rc == DG_ERROR_UNSUPPORTED)
      continue; /* an NPU */
    if (rc == DG_OK)
      rc = dg_session_run(s, &in, 1, out, 2, &diag);
    bool ok = rc == DG_OK && fabsf(y[0] - 1.0f) < 1e-5f &&
              fabsf(y[1] - 3.142857f) < 1e-5f;
    for (int i = 0; ok && i < 16; i++)
      ok = z[i] == x[i / 8 * 4 + i % 8 / 2];
    CHECK(ok, "resize known answers on device %d: %g %g, z[3] %g", dev, y[0],
          y[1], z[3]);
    dg_session_destroy(s);
  }
  dg_graph_destroy(g);
}

static void resize_bad(void) {
  static const struct {
    const char *what;
    dg_dtype t;
    int rank;
    dg_resize_params p;
    bool null_params;
    dg_status st;
    const char *field;
  } cases[] = {
      {"NULL params",
       DG_DTYPE_F32,
       4,
       {.scales = {2, 2}},
       true,
       DG_ERROR_INVALID_ARGUMENT,
       "params"},
      {"mode 7",
       DG_DTYPE_F32,
       4,
       {.mode = 7, .scales = {2, 2}},
       false,
       DG_ERROR_INVALID_ARGUMENT,
       "params.mode"},
      {"coord -1",
       DG_DTYPE_F32,
       4,
       {.coord = -1, .scales = {2, 2}},
       false,
       DG_ERROR_INVALID_ARGUMENT,
       "params.coord"},
      {"nearest 9",
       DG_DTYPE_F32,
       4,
       {.nearest = 9, .scales = {2, 2}},
       false,
       DG_ERROR_INVALID_ARGUMENT,
       "params.nearest"},
      {"negative scale",
       DG_DTYPE_F32,
       4,
       {.scales = {2, -1}},
       false,
       DG_ERROR_INVALID_ARGUMENT,
       "params.scales"},
      {"NaN scale",
       DG_DTYPE_F32,
       4,
       {.scales = {NAN, 2}},
       false,
       DG_ERROR_INVALID_ARGUMENT,
       "params.scales"},
      {"infinite scale",
       DG_DTYPE_F32,
       4,
       {.scales = {INFINITY, 2}},
       false,
       DG_ERROR_INVALID_ARGUMENT,
       "params.scales"},
      {"no scale and no size",
       DG_DTYPE_F32,
       4,
       {.scales = {2, 0}},
       false,
       DG_ERROR_INVALID_ARGUMENT,
       "params.scales"},
      {"negative size",
       DG_DTYPE_F32,
       4,
       {.sizes = {4, -3}},
       false,
       DG_ERROR_INVALID_ARGUMENT,
       "params.sizes"},
      {"scale to an empty axis",
       DG_DTYPE_F32,
       4,
       {.scales = {0.1f, 2}},
       false,
       DG_ERROR_INVALID_SHAPE,
       "params.scales"},
      {"linear of i8",
       DG_DTYPE_I8,
       4,
       {.mode = DG_RESIZE_LINEAR, .scales = {2, 2}},
       false,
       DG_ERROR_INVALID_DTYPE,
       "x"},
      {"nearest of i32",
       DG_DTYPE_I32,
       4,
       {.scales = {2, 2}},
       false,
       DG_ERROR_INVALID_DTYPE,
       "x"},
      {"rank 3",
       DG_DTYPE_F32,
       3,
       {.scales = {2, 2}},
       false,
       DG_ERROR_INVALID_SHAPE,
       "x"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    dg_graph *g = dg_graph_create(ctx, "bad");
    int64_t dims[4] = {1, 2, 4, 4};
    dg_tensor_desc d = desc_of(cases[i].t, cases[i].rank, dims);
    dg_tensor x = dg_graph_input(g, "x", &d);
    dg_tensor y =
        dg_graph_resize(g, "r", x, cases[i].null_params ? NULL : &cases[i].p);
    CHECK(y.id == 0, "resize %s returns no tensor", cases[i].what);
    expect(g, cases[i].what, cases[i].st, cases[i].field, 0);
    dg_graph_destroy(g);
  }
  dg_graph *g = dg_graph_create(ctx, "bad");
  dg_resize_params p = {.scales = {2, 2}};
  dg_graph_resize(g, "r", (dg_tensor){77, 0}, &p);
  expect(g, "resize of a tensor not in the graph", DG_ERROR_INVALID_ARGUMENT,
         "x", 0);
  dg_graph_destroy(g);
  CHECK(dg_graph_resize(NULL, "r", (dg_tensor){1, 0}, &p).id == 0,
        "resize on a NULL graph returns no tensor");
}

int main(int argc, char **argv) {
  unsigned long long seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261201;
  t_seed(seed);
  printf("# seed %llu\n", seed);
  if (dg_context_create(NULL, &ctx) != DG_OK) {
    CHECK(0, "context");
    return 1;
  }
  dg_dtype floats[2] = {DG_DTYPE_F32, DG_DTYPE_F16};
  for (int f = 0; f < 2; f++) {
    resize_cases(floats[f], DG_RESIZE_NEAREST);
    resize_cases(floats[f], DG_RESIZE_LINEAR);
  }
  resize_cases(DG_DTYPE_I8, DG_RESIZE_NEAREST);
  resize_cases(DG_DTYPE_U8, DG_RESIZE_NEAREST);
  resize_known();
  resize_bad();
  dg_context_destroy(ctx);
  return t_exit();
}
