/* Differential tests of the spatial family (resize, batch norm with its
 * folding into conv2d, conv transpose, cast) on seeded random
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

/* ---- batch norm ---- */

/* A constant [C] of dtype t from [lo, hi]. */
static dg_tensor const_vec(dg_graph *g, const char *name, dg_dtype t, int64_t C,
                           float lo, float hi) {
  float f[64];
  uint16_t h[64];
  for (int64_t c = 0; c < C; c++) {
    f[c] = t_uniform(lo, hi);
    h[c] = dg_f32_to_f16(f[c]);
  }
  dg_tensor_desc d = {.dtype = t, .rank = 1, .dims = {C}};
  return dg_graph_constant(g, name, &d, t == DG_DTYPE_F16 ? (void *)h : f, 0);
}

typedef struct bn_arg {
  dg_dtype t;
  int64_t C;
  float eps;
  bool fed; /* scale, bias and mean fed at run time (var stays constant) */
} bn_arg;

static dg_tensor make_bn(dg_graph *g, dg_tensor *in, void *arg) {
  bn_arg *a = arg;
  dg_tensor var = const_vec(g, "var", a->t, a->C, 0.05f, 2.0f);
  if (a->fed)
    return dg_graph_batch_norm(g, "bn", in[0], in[1], in[2], in[3], var,
                               a->eps);
  return dg_graph_batch_norm(
      g, "bn", in[0], const_vec(g, "scale", a->t, a->C, -1.5f, 1.5f),
      const_vec(g, "bias", a->t, a->C, -1, 1),
      const_vec(g, "mean", a->t, a->C, -1, 1), var, a->eps);
}

/* Ranks 2..5, parameters constant or fed, epsilon 0 or up to 0.1. */
static void bn_cases(dg_dtype t) {
  op_stats st = {0};
  for (int c = 0; c < CASES; c++) {
    int rank = t_range(2, 5);
    int64_t dims[5];
    random_dims(rank, dims, 1, 7);
    bn_arg a = {t, dims[1], t_range(0, 3) ? t_uniform(1e-5f, 0.1f) : 0,
                c % 2 == 1};
    dg_tensor_desc d[4] = {desc_of(t, rank, dims)};
    for (int i = 1; i < 4; i++)
      d[i] = desc_of(t, 1, &dims[1]);
    char label[64];
    snprintf(label, sizeof label, "batch_norm %s rank %d%s", dg_dtype_name(t),
             rank, a.fed ? " fed" : "");
    run_case(&st, label, a.fed ? 4 : 1, d, make_bn, &a);
  }
  char name[32];
  snprintf(name, sizeof name, "batch_norm %s", dg_dtype_name(t));
  report(name, &st);
}

/* The graph's tensor out computed by the reference kernels, node by
 * node (the graph as built, nothing folded), its inputs ids[i] read from
 * data[i] (floats). */
static double *ref_graph(dg_graph *g, int count, const uint32_t *ids,
                         float *const *data, uint32_t out) {
  const dg_ir *ir = &g->ir;
  double **v = calloc((size_t)ir->tensor_count + 1, sizeof *v);
  for (int t = 1; t <= ir->tensor_count; t++) {
    const dg_tensor_info *ti = dg_ir_tensor(ir, (uint32_t)t);
    int64_t n = dg_desc_elements(&ti->desc);
    if (ti->kind == DG_TENSOR_VALUE)
      continue;
    v[t] = malloc(sizeof(double) * (size_t)n);
    for (int64_t e = 0; e < n; e++)
      v[t][e] = ti->constant
                    ? dg_load_elem(ti->desc.dtype, ti->constant->data, e)
                    : 0;
    for (int i = 0; i < count; i++)
      for (int64_t e = 0; ids[i] == (uint32_t)t && e < n; e++)
        v[t][e] = data[i][e];
  }
  for (int i = 0; i < ir->node_count; i++) {
    const dg_node *n = &ir->nodes[i];
    const double *ins[8] = {0};
    for (int k = 0; k < n->input_count; k++)
      ins[k] = n->inputs[k] ? v[n->inputs[k]] : NULL;
    v[n->output] =
        malloc(sizeof(double) *
               (size_t)dg_desc_elements(&dg_ir_tensor(ir, n->output)->desc));
    dg_op_def_get(n->op)->reference(ir, n, ins, v[n->output]);
  }
  double *r = v[out];
  for (int t = 1; t <= ir->tensor_count; t++)
    if (t != (int)out)
      free(v[t]);
  free(v);
  return r;
}

/* n floats from [-1, 1], rounded to t, and their bytes in t. */
static void fill_as(dg_dtype t, float *f, void *bytes, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint16_t h = dg_f32_to_f16(t_uniform(-1, 1));
    f[i] = t == DG_DTYPE_F16 ? dg_f16_to_f32(h) : t_uniform(-1, 1);
    if (t == DG_DTYPE_F16)
      ((uint16_t *)bytes)[i] = h;
    else
      ((float *)bytes)[i] = f[i];
  }
}

enum { FOLD, SECOND_READER, CONV_IS_OUTPUT, CONV_ACTIVATION, FED_MEAN };

/* x -> conv2d (constant weights and bias) -> batch_norm (constants) on
 * every device: folded into one conv2d named "conv+bn" (the plan), or,
 * in the other shapes, left alone; the result matches the unfolded
 * reference either way. */
static void fold_case(int shape, dg_dtype t) {
  static const char *const names[] = {
      "folds", "second reader", "conv output is a graph output",
      "conv with an activation", "mean fed at run time"};
  int64_t C = t_range(1, 4), O = t_range(1, 6), H = t_range(3, 8);
  size_t es = dg_dtype_size(t);
  dg_graph *g = dg_graph_create(ctx, "fold");
  dg_tensor_desc xd = {.dtype = t, .rank = 4, .dims = {1, C, H, H}};
  dg_tensor_desc md = {.dtype = t, .rank = 1, .dims = {O}};
  dg_tensor x = dg_graph_input(g, "x", &xd);
  float wf[6 * 4 * 9], xf[4 * 64], mf[6];
  char wb[6 * 4 * 9 * 4], xb[4 * 64 * 4], mb[6 * 4], yb[6 * 64 * 4],
      other[6 * 64 * 4];
  fill_as(t, wf, wb, O * C * 9);
  fill_as(t, xf, xb, C * H * H);
  fill_as(t, mf, mb, O);
  dg_tensor_desc wd = {.dtype = t, .rank = 4, .dims = {O, C, 3, 3}};
  dg_conv2d_params cp = {.padding = DG_PADDING_SAME_UPPER,
                         .activation =
                             shape == CONV_ACTIVATION ? DG_ACTIVATION_RELU : 0};
  dg_tensor conv = dg_graph_conv2d(
      g, "conv", x, dg_graph_constant(g, "w", &wd, wb, 0),
      t_range(0, 1) ? const_vec(g, "b", t, O, -1, 1) : DG_TENSOR_NONE, &cp);
  dg_tensor mean = shape == FED_MEAN ? dg_graph_input(g, "mean", &md)
                                     : const_vec(g, "mean", t, O, -1, 1);
  dg_tensor bn = dg_graph_batch_norm(
      g, "bn", conv, const_vec(g, "scale", t, O, -1.5f, 1.5f),
      const_vec(g, "bias", t, O, -1, 1), mean,
      const_vec(g, "var", t, O, 0.05f, 2), 1e-3f);
  dg_graph_output(g, "y", bn, DG_LAYOUT_NCHW);
  if (shape == SECOND_READER)
    dg_graph_output(g, "r", dg_graph_relu(g, "relu", conv), DG_LAYOUT_NCHW);
  if (shape == CONV_IS_OUTPUT)
    dg_graph_output(g, "c", conv, DG_LAYOUT_NCHW);
  CHECK(dg_graph_status(g) == DG_OK, "fold graph builds: %s",
        dg_graph_error(g) ? dg_graph_error(g)->message : "ok");
  int64_t ny = O * H * H;
  uint32_t ids[2] = {x.id, mean.id};
  float *data[2] = {xf, mf};
  double *ref = ref_graph(g, shape == FED_MEAN ? 2 : 1, ids, data, bn.id);
  int want = shape == FOLD ? 1 : shape == SECOND_READER ? 3 : 2;
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    dg_compile_options o = {.devices = &dev, .device_count = 1};
    dg_session *s = NULL;
    dg_diagnostic diag;
    dg_status rc = dg_graph_compile(g, &o, &s, &diag);
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    if (rc == DG_ERROR_UNSUPPORTED && info.kind == DG_DEVICE_NPU)
      continue;
    dg_binding in[2] = {{"x", xb, es * (size_t)(C * H * H)},
                        {"mean", mb, es * (size_t)O}};
    dg_binding out[2] = {
        {"y", yb, es * (size_t)ny},
        {shape == SECOND_READER ? "r" : "c", other, es * (size_t)ny}};
    int nout = shape == SECOND_READER || shape == CONV_IS_OUTPUT ? 2 : 1;
    if (rc == DG_OK)
      rc = dg_session_run(s, in, shape == FED_MEAN ? 2 : 1, out, nout, &diag);
    /* verify runs the rewritten IR against the reference node by node */
    dg_verify_report rep = {0};
    dg_status vs =
        rc == DG_OK ? dg_session_verify(s, in, shape == FED_MEAN ? 2 : 1, &rep)
                    : rc;
    const dg_plan *plan = s ? dg_session_plan(s) : NULL;
    int nodes = plan ? dg_plan_node_count(plan) : -1;
    dg_plan_node pn = {0};
    bool named = false;
    for (int i = 0; plan && i < nodes; i++)
      if (dg_plan_get_node(plan, i, &pn) == DG_OK && pn.op == DG_OP_CONV2D) {
        named = !strcmp(pn.node_name, shape == FOLD ? "conv+bn" : "conv");
        break;
      }
    double err = 0, mx = 0;
    for (int64_t i = 0; rc == DG_OK && i < ny; i++) {
      err = fmax(err, fabs(dg_load_elem(t, yb, i) - ref[i]));
      mx = fmax(mx, fabs(ref[i]));
    }
    err /= mx > 0 ? mx : 1;
    double tol = t == DG_DTYPE_F16 ? 1e-2 : 1e-4;
    CHECK(rc == DG_OK && nodes == want && named && err <= tol && vs == DG_OK,
          "batch norm %s (%s) on device %d: %d plan nodes (want %d), conv "
          "named '%s', error %.3g (%s), verify %s",
          names[shape], dg_dtype_name(t), dev, nodes, want, pn.node_name, err,
          rc == DG_OK ? "ran" : diag.message, dg_status_string(vs));
    dg_session_destroy(s);
  }
  free(ref);
  dg_graph_destroy(g);
}

static void bn_bad(void) {
  static const struct {
    const char *what, *field;
    dg_dtype xt, pt;
    int xrank, bad; /* bad: the parameter (1..4) given shape [C + 1] */
    float eps;
    dg_status st;
  } cases[] = {
      {"x of i8", "x", DG_DTYPE_I8, DG_DTYPE_F32, 4, 0, 0,
       DG_ERROR_INVALID_DTYPE},
      {"x of rank 1", "x", DG_DTYPE_F32, DG_DTYPE_F32, 1, 0, 0,
       DG_ERROR_INVALID_SHAPE},
      {"scale of another dtype", "scale", DG_DTYPE_F32, DG_DTYPE_F16, 4, 0, 0,
       DG_ERROR_INVALID_DTYPE},
      {"scale of C + 1", "scale", DG_DTYPE_F32, DG_DTYPE_F32, 4, 1, 0,
       DG_ERROR_INVALID_SHAPE},
      {"bias of C + 1", "bias", DG_DTYPE_F32, DG_DTYPE_F32, 4, 2, 0,
       DG_ERROR_INVALID_SHAPE},
      {"mean of C + 1", "mean", DG_DTYPE_F32, DG_DTYPE_F32, 4, 3, 0,
       DG_ERROR_INVALID_SHAPE},
      {"var of C + 1", "var", DG_DTYPE_F32, DG_DTYPE_F32, 4, 4, 0,
       DG_ERROR_INVALID_SHAPE},
      {"negative epsilon", "epsilon", DG_DTYPE_F32, DG_DTYPE_F32, 4, 0, -1,
       DG_ERROR_INVALID_ARGUMENT},
      {"NaN epsilon", "epsilon", DG_DTYPE_F32, DG_DTYPE_F32, 4, 0, NAN,
       DG_ERROR_INVALID_ARGUMENT},
      {"infinite epsilon", "epsilon", DG_DTYPE_F32, DG_DTYPE_F32, 4, 0,
       INFINITY, DG_ERROR_INVALID_ARGUMENT},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    dg_graph *g = dg_graph_create(ctx, "bad");
    int64_t dims[4] = {1, 3, 2, 2};
    dg_tensor_desc d = desc_of(cases[i].xt, cases[i].xrank, dims);
    dg_tensor x = dg_graph_input(g, "x", &d), p[5];
    static const char *const pn[5] = {"", "scale", "bias", "mean", "var"};
    for (int k = 1; k < 5; k++) {
      int64_t c = cases[i].bad == k ? 4 : 3;
      dg_tensor_desc pd = desc_of(k == 1 ? cases[i].pt : cases[i].xt, 1, &c);
      if (pd.dtype == DG_DTYPE_I8)
        pd.dtype = DG_DTYPE_F32;
      p[k] = dg_graph_input(g, pn[k], &pd);
    }
    dg_tensor y =
        dg_graph_batch_norm(g, "bn", x, p[1], p[2], p[3], p[4], cases[i].eps);
    CHECK(y.id == 0, "batch_norm %s returns no tensor", cases[i].what);
    expect(g, cases[i].what, cases[i].st, cases[i].field, 0);
    dg_graph_destroy(g);
  }
  dg_graph *g = dg_graph_create(ctx, "bad");
  int64_t dims[2] = {2, 3}, c = 3;
  dg_tensor_desc d = desc_of(DG_DTYPE_F32, 2, dims),
                 pd = desc_of(DG_DTYPE_F32, 1, &c);
  dg_tensor x = dg_graph_input(g, "x", &d), s = dg_graph_input(g, "s", &pd);
  dg_graph_batch_norm(g, "bn", x, s, s, s, (dg_tensor){77, 0}, 0);
  expect(g, "batch_norm var not in the graph", DG_ERROR_INVALID_ARGUMENT, "var",
         0);
  dg_graph_destroy(g);
  CHECK(dg_graph_batch_norm(NULL, "bn", x, s, s, s, s, 0).id == 0,
        "batch_norm on a NULL graph returns no tensor");
}

/* ---- conv transpose ---- */

typedef struct ct_arg {
  dg_conv2d_params p;
  int32_t op[2];
  bool bias;
} ct_arg;

static dg_tensor make_ct(dg_graph *g, dg_tensor *in, void *arg) {
  ct_arg *a = arg;
  return dg_graph_conv_transpose2d(
      g, "convt", in[0], in[1], a->bias ? in[2] : DG_TENSOR_NONE, &a->p, a->op);
}

/* Random groups, kernels, strides, dilations, output padding, padding
 * modes (explicit pads cropping part of the full output, SAME where the
 * kernel reaches H * stride, VALID) and activations. */
static void ct_cases(dg_dtype t) {
  op_stats st = {0};
  for (int c = 0; c < CASES; c++) {
    ct_arg a = {.bias = t_range(0, 1)};
    int64_t N = t_range(1, 2), G = t_range(0, 2) ? 1 : t_range(2, 3);
    int64_t CG = t_range(1, 4), OG = t_range(1, 4), K[2], in[2];
    a.p.groups = (int32_t)G;
    a.p.activation = (dg_activation)t_range(0, 2);
    a.p.padding = (dg_padding)t_range(0, 3);
    for (int i = 0; i < 2; i++) {
      K[i] = t_range(1, 4);
      in[i] = t_range(1, 7);
      a.p.stride[i] = t_range(1, 3);
      a.p.dilation[i] = t_range(1, 2);
      int32_t s = a.p.stride[i], d = a.p.dilation[i];
      a.op[i] = t_range(0, (s > d ? s : d) - 1);
      int64_t full = s * (in[i] - 1) + a.op[i] + (K[i] - 1) * d + 1;
      if (a.p.padding >= DG_PADDING_SAME_UPPER && full < in[i] * s)
        a.p.padding = DG_PADDING_EXPLICIT;
      int64_t room = full - 1; /* pads leave at least one output */
      a.p.pads[i] = t_range(0, (int)(room / 2 < 2 ? room / 2 : 2));
      a.p.pads[i + 2] = t_range(0, (int)(room / 2 < 2 ? room / 2 : 2));
    }
    int64_t xd[4] = {N, G * CG, in[0], in[1]}, wd[4] = {G * CG, OG, K[0], K[1]},
            bd[1] = {G * OG};
    dg_tensor_desc d[3] = {desc_of(t, 4, xd), desc_of(t, 4, wd),
                           desc_of(t, 1, bd)};
    char label[128];
    snprintf(label, sizeof label,
             "conv_transpose %s g%lld k%lldx%lld s%dx%d d%dx%d op%dx%d pad %d",
             dg_dtype_name(t), (long long)G, (long long)K[0], (long long)K[1],
             a.p.stride[0], a.p.stride[1], a.p.dilation[0], a.p.dilation[1],
             a.op[0], a.op[1], a.p.padding);
    run_case(&st, label, a.bias ? 3 : 2, d, make_ct, &a);
  }
  char name[32];
  snprintf(name, sizeof name, "conv_transpose2d %s", dg_dtype_name(t));
  report(name, &st);
}

static void ct_bad(void) {
  static const struct {
    const char *what, *field;
    dg_conv2d_params p;
    int32_t op[2];
    int64_t wc, wo, bias_len; /* w dims 0, 1; bias length (0: none) */
    dg_dtype wt;
    bool null_params;
    dg_status st;
  } cases[] = {
      {"NULL params",
       "params",
       {.groups = 0},
       {0, 0},
       4,
       2,
       0,
       DG_DTYPE_F32,
       true,
       DG_ERROR_INVALID_ARGUMENT},
      {"negative stride",
       "params.stride",
       {.stride = {-1, 1}},
       {0, 0},
       4,
       2,
       0,
       DG_DTYPE_F32,
       false,
       DG_ERROR_INVALID_ARGUMENT},
      {"negative dilation",
       "params.dilation",
       {.dilation = {1, -2}},
       {0, 0},
       4,
       2,
       0,
       DG_DTYPE_F32,
       false,
       DG_ERROR_INVALID_ARGUMENT},
      {"padding mode 9",
       "params.padding",
       {.padding = 9},
       {0, 0},
       4,
       2,
       0,
       DG_DTYPE_F32,
       false,
       DG_ERROR_INVALID_ARGUMENT},
      {"negative pad",
       "params.pads",
       {.pads = {0, -1, 0, 0}},
       {0, 0},
       4,
       2,
       0,
       DG_DTYPE_F32,
       false,
       DG_ERROR_INVALID_ARGUMENT},
      {"activation 5",
       "params.activation",
       {.activation = 5},
       {0, 0},
       4,
       2,
       0,
       DG_DTYPE_F32,
       false,
       DG_ERROR_INVALID_ARGUMENT},
      {"groups not dividing C_in",
       "params.groups",
       {.groups = 3},
       {0, 0},
       4,
       2,
       0,
       DG_DTYPE_F32,
       false,
       DG_ERROR_INVALID_ARGUMENT},
      {"w.dims[0] not C_in",
       "w.dims[0]",
       {.groups = 0},
       {0, 0},
       5,
       2,
       0,
       DG_DTYPE_F32,
       false,
       DG_ERROR_INVALID_SHAPE},
      {"w of another dtype",
       "w",
       {.groups = 0},
       {0, 0},
       4,
       2,
       0,
       DG_DTYPE_F16,
       false,
       DG_ERROR_INVALID_DTYPE},
      {"output_padding >= stride",
       "output_padding",
       {.stride = {2, 2}},
       {2, 0},
       4,
       2,
       0,
       DG_DTYPE_F32,
       false,
       DG_ERROR_INVALID_ARGUMENT},
      {"negative output_padding",
       "output_padding",
       {.groups = 0},
       {0, -1},
       4,
       2,
       0,
       DG_DTYPE_F32,
       false,
       DG_ERROR_INVALID_ARGUMENT},
      {"pads cropping everything",
       "params.pads",
       {.pads = {3, 0, 3, 0}},
       {0, 0},
       4,
       2,
       0,
       DG_DTYPE_F32,
       false,
       DG_ERROR_INVALID_SHAPE},
      {"SAME with stride past the kernel",
       "params.padding",
       {.stride = {5, 1}, .padding = DG_PADDING_SAME_UPPER},
       {0, 0},
       4,
       2,
       0,
       DG_DTYPE_F32,
       false,
       DG_ERROR_INVALID_SHAPE},
      {"bias of the wrong length",
       "bias",
       {.groups = 0},
       {0, 0},
       4,
       2,
       3,
       DG_DTYPE_F32,
       false,
       DG_ERROR_INVALID_SHAPE},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    dg_graph *g = dg_graph_create(ctx, "bad");
    dg_tensor_desc xd = desc4(DG_DTYPE_F32, 1, 4, 3, 3);
    dg_tensor_desc wd = desc4(cases[i].wt, cases[i].wc, cases[i].wo, 3, 3);
    int64_t bl = cases[i].bias_len;
    dg_tensor_desc bd = desc_of(DG_DTYPE_F32, 1, &bl);
    dg_tensor x = dg_graph_input(g, "x", &xd), w = dg_graph_input(g, "w", &wd);
    dg_tensor b = bl ? dg_graph_input(g, "b", &bd) : DG_TENSOR_NONE;
    dg_tensor y = dg_graph_conv_transpose2d(
        g, "ct", x, w, b, cases[i].null_params ? NULL : &cases[i].p,
        cases[i].op);
    CHECK(y.id == 0, "conv_transpose2d %s returns no tensor", cases[i].what);
    expect(g, cases[i].what, cases[i].st, cases[i].field, 0);
    dg_graph_destroy(g);
  }
  dg_graph *g = dg_graph_create(ctx, "bad");
  dg_tensor_desc xd = desc4(DG_DTYPE_I8, 1, 4, 3, 3);
  dg_conv2d_params p = {0};
  dg_tensor x = dg_graph_input(g, "x", &xd);
  dg_graph_conv_transpose2d(g, "ct", x, x, DG_TENSOR_NONE, &p, NULL);
  expect(g, "conv_transpose2d of i8", DG_ERROR_INVALID_DTYPE, "x", 0);
  dg_graph_destroy(g);
}

/* ---- cast ---- */

static dg_tensor make_cast(dg_graph *g, dg_tensor *in, void *arg) {
  return dg_graph_cast(g, "cast", in[0], *(dg_dtype *)arg);
}

/* Every pair of f32, f16 and i32; f32 to i32 from values far past the
 * i32 range (saturation), f16 to i32 over f16's range, to f16 within
 * it. */
static void cast_cases(dg_dtype from, dg_dtype to) {
  op_stats st = {0};
  fill_span = to == DG_DTYPE_I32 && from == DG_DTYPE_F32   ? 5e9f
              : from == DG_DTYPE_F16 || to == DG_DTYPE_F16 ? 6e4f
                                                           : 1e6f;
  for (int c = 0; c < CASES; c++) {
    int rank = t_range(1, 4);
    int64_t dims[4];
    random_dims(rank, dims, 1, 9);
    dg_tensor_desc d = desc_of(from, rank, dims);
    char label[64];
    snprintf(label, sizeof label, "cast %s -> %s rank %d", dg_dtype_name(from),
             dg_dtype_name(to), rank);
    run_case(&st, label, 1, &d, make_cast, &to);
  }
  fill_span = 1.0f;
  char name[32];
  snprintf(name, sizeof name, "cast %s -> %s", dg_dtype_name(from),
           dg_dtype_name(to));
  report(name, &st);
}

/* Known answers of the contract (graph.h): truncation toward zero,
 * saturation, NaN to 0; i32 to f32 rounding to nearest even. */
static void cast_known(void) {
  float x[8] = {NAN,  INFINITY, -INFINITY, -0.7f,
                2.9f, 3e9f,     -3e9f,     -2147483648.0f};
  int32_t want[8] = {0, INT32_MAX, INT32_MIN, 0,
                     2, INT32_MAX, INT32_MIN, INT32_MIN};
  int32_t xi[3] = {INT32_MAX, INT32_MIN, 16777217};
  float wantf[3] = {2147483648.0f, -2147483648.0f, 16777216.0f};
  dg_graph *g = dg_graph_create(ctx, "cast known");
  dg_tensor_desc fd = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {8}};
  dg_tensor_desc id = {.dtype = DG_DTYPE_I32, .rank = 1, .dims = {3}};
  dg_graph_output(
      g, "i", dg_graph_cast(g, "c", dg_graph_input(g, "f", &fd), DG_DTYPE_I32),
      DG_LAYOUT_NCHW);
  dg_graph_output(
      g, "o", dg_graph_cast(g, "d", dg_graph_input(g, "n", &id), DG_DTYPE_F32),
      DG_LAYOUT_NCHW);
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    dg_compile_options o = {.devices = &dev, .device_count = 1};
    dg_session *s = NULL;
    dg_diagnostic diag;
    int32_t yi[8] = {0};
    float yf[3] = {0};
    dg_binding in[2] = {{"f", x, sizeof x}, {"n", xi, sizeof xi}};
    dg_binding out[2] = {{"i", yi, sizeof yi}, {"o", yf, sizeof yf}};
    dg_status rc = dg_graph_compile(g, &o, &s, &diag);
    if (rc == DG_ERROR_UNSUPPORTED)
      continue; /* an NPU */
    if (rc == DG_OK)
      rc = dg_session_run(s, in, 2, out, 2, &diag);
    bool ok = rc == DG_OK && !memcmp(yi, want, sizeof want) &&
              !memcmp(yf, wantf, sizeof wantf);
    CHECK(ok,
          "cast known answers on device %d: %d %d %d %d %d %d %d %d; "
          "%.9g %.9g %.9g",
          dev, yi[0], yi[1], yi[2], yi[3], yi[4], yi[5], yi[6], yi[7], yf[0],
          yf[1], yf[2]);
    dg_session_destroy(s);
  }
  dg_graph_destroy(g);
}

static void cast_bad(void) {
  static const struct {
    const char *what, *field;
    dg_dtype from, to;
  } cases[] = {
      {"cast of i8", "x", DG_DTYPE_I8, DG_DTYPE_F32},
      {"cast of u8", "x", DG_DTYPE_U8, DG_DTYPE_I32},
      {"cast to i8", "to", DG_DTYPE_F32, DG_DTYPE_I8},
      {"cast to u8", "to", DG_DTYPE_I32, DG_DTYPE_U8},
      {"cast to dtype 0", "to", DG_DTYPE_F32, DG_DTYPE_INVALID},
      {"cast to dtype 42", "to", DG_DTYPE_F16, (dg_dtype)42},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    dg_graph *g = dg_graph_create(ctx, "bad");
    int64_t dims[2] = {2, 3};
    dg_tensor_desc d = desc_of(cases[i].from, 2, dims);
    dg_tensor y =
        dg_graph_cast(g, "c", dg_graph_input(g, "x", &d), cases[i].to);
    CHECK(y.id == 0, "%s returns no tensor", cases[i].what);
    expect(g, cases[i].what, DG_ERROR_INVALID_DTYPE, cases[i].field, 0);
    dg_graph_destroy(g);
  }
  dg_graph *g = dg_graph_create(ctx, "bad");
  dg_graph_cast(g, "c", (dg_tensor){77, 0}, DG_DTYPE_F32);
  expect(g, "cast of a tensor not in the graph", DG_ERROR_INVALID_ARGUMENT, "x",
         0);
  dg_graph_destroy(g);
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
  for (int f = 0; f < 2; f++) {
    bn_cases(floats[f]);
    for (int shape = FOLD; shape <= FED_MEAN; shape++)
      fold_case(shape, floats[f]);
  }
  bn_bad();
  for (int f = 0; f < 2; f++)
    ct_cases(floats[f]);
  ct_bad();
  dg_dtype casts[3] = {DG_DTYPE_F32, DG_DTYPE_F16, DG_DTYPE_I32};
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++)
      cast_cases(casts[a], casts[b]);
  cast_known();
  cast_bad();
  dg_context_destroy(ctx);
  return t_exit();
}
