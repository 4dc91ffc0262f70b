/* Differential tests of the reduction family: dg_graph_reduce (every
 * function of src/ops/reduce.def), log_softmax and layer_norm, in f32 and
 * f16 on every device of the context against the float64 references, on
 * random shapes (rank 1-5), random axis subsets and both keepdims, plus
 * one large case of each (a million elements reduced or normalised at
 * once, where a plain f32 running sum would drift past the tolerance).
 * Then every bad input: the right status and a message naming the field. */
#include "differential.h"

/* ---- reduce ---- */

typedef struct reduce_arg {
  dg_reduce_fn fn;
  int32_t axes[DG_MAX_RANK];
  int count, keepdims;
} reduce_arg;

static dg_tensor make_reduce(dg_graph *g, dg_tensor *in, void *arg) {
  reduce_arg *a = arg;
  return dg_graph_reduce(g, "reduce", a->fn, in[0], a->axes, a->count,
                         a->keepdims);
}

/* Data each function is defined and well conditioned on: positive sums
 * for log_sum, a wide range for log_sum_exp (so that the max shift
 * matters); sum_square and prod away from 0 and prod with few factors
 * (reduce_cases), so that a one-element result is not an f16 subnormal. */
static void reduce_data(dg_reduce_fn fn) {
  fill_positive = fn == DG_REDUCE_LOG_SUM || fn == DG_REDUCE_SUM_SQUARE ||
                  fn == DG_REDUCE_PROD;
  fill_span = fn == DG_REDUCE_LOG_SUM_EXP ? 30.0f
              : fn == DG_REDUCE_PROD      ? 1.5f
                                          : 1.0f;
}

static void reduce_cases(dg_reduce_fn fn, dg_dtype t) {
  op_stats st = {0};
  reduce_data(fn);
  for (int c = 0; c < CASES; c++) {
    int rank = t_range(1, 5);
    int64_t d[DG_MAX_RANK];
    random_dims(rank, d, 1, fn == DG_REDUCE_PROD ? 2 : 6);
    reduce_arg a = {.fn = fn, .keepdims = t_range(0, 1)};
    /* A random subset in random order, negative half the time; now and
     * then none (every axis). */
    int perm[DG_MAX_RANK];
    for (int i = 0; i < rank; i++)
      perm[i] = i;
    for (int i = rank - 1; i > 0; i--) {
      int j = t_range(0, i), tmp = perm[i];
      perm[i] = perm[j];
      perm[j] = tmp;
    }
    a.count = t_range(0, 5) == 0 ? 0 : t_range(1, rank);
    if (fn == DG_REDUCE_PROD) /* at most 4 factors: f16 normal */
      a.count = t_range(1, rank < 2 ? rank : 2);
    for (int i = 0; i < a.count; i++)
      a.axes[i] = t_range(0, 1) ? perm[i] : perm[i] - rank;
    dg_tensor_desc x = desc_of(t, rank, d);
    char label[96];
    snprintf(label, sizeof label, "reduce %s %s case %d", dg_reduce_fn_name(fn),
             dg_dtype_name(t), c);
    run_case(&st, label, 1, &x, make_reduce, &a);
  }
  char name[64];
  snprintf(name, sizeof name, "reduce %s %s", dg_reduce_fn_name(fn),
           dg_dtype_name(t));
  report(name, &st);
}

/* 2^20 elements into one (every axis), 4 x 2^18 over the inner axis and
 * 300 x 4096 over the outer one, in f32: the float64 reference is the
 * oracle. */
static void reduce_large(dg_reduce_fn fn) {
  op_stats st = {0};
  reduce_data(fn);
  fill_positive = fill_positive || fn == DG_REDUCE_SUM ||
                  fn == DG_REDUCE_MEAN; /* a sum far from 0: drift shows */
  int64_t d1[1] = {1 << 20}, d2[2] = {4, 1 << 18};
  reduce_arg all = {.fn = fn}, last = {.fn = fn, .axes = {-1}, .count = 1};
  dg_tensor_desc x1 = desc_of(DG_DTYPE_F32, 1, d1),
                 x2 = desc_of(DG_DTYPE_F32, 2, d2);
  run_case(&st, "reduce 1M into 1", 1, &x1, make_reduce, &all);
  run_case(&st, "reduce 4 x 256K over axis 1", 1, &x2, make_reduce, &last);
  /* Over the outer axis with many outputs: one output per GPU invocation
   * (dg_reduce_serial), 300 elements each. */
  int64_t d3[2] = {300, 4096};
  reduce_arg first = {.fn = fn, .axes = {0}, .count = 1};
  dg_tensor_desc x3 = desc_of(DG_DTYPE_F32, 2, d3);
  run_case(&st, "reduce 300 x 4096 over axis 0", 1, &x3, make_reduce, &first);
  char name[64];
  snprintf(name, sizeof name, "reduce %s large f32", dg_reduce_fn_name(fn));
  report(name, &st);
}

/* The table itself: the reference expands the same reduce.def lines as
 * the kernels, so a wrong line would pass the differential cases. Each
 * function on x = 1, 2, 3, 4 on every device against values worked out
 * by hand. */
static void reduce_known(void) {
  static float x[4] = {1, 2, 3, 4}; /* dg_binding.data is not const */
  const double e = exp(1.0);
  const double want[DG_REDUCE_COUNT_] = {
      [DG_REDUCE_SUM] = 10,
      [DG_REDUCE_MEAN] = 2.5,
      [DG_REDUCE_MAX] = 4,
      [DG_REDUCE_MIN] = 1,
      [DG_REDUCE_PROD] = 24,
      [DG_REDUCE_L1] = 10,
      [DG_REDUCE_L2] = 5.477225575051661,
      [DG_REDUCE_SUM_SQUARE] = 30,
      [DG_REDUCE_LOG_SUM] = 2.302585092994046,
      [DG_REDUCE_LOG_SUM_EXP] =
          4 + log(1 + 1 / e + 1 / (e * e) + 1 / (e * e * e)),
  };
  /* And of a scalar (rank 0: nothing to reduce, each function of the one
   * element, 4). */
  const double one[DG_REDUCE_COUNT_] = {
      [DG_REDUCE_SUM] = 4,
      [DG_REDUCE_MEAN] = 4,
      [DG_REDUCE_MAX] = 4,
      [DG_REDUCE_MIN] = 4,
      [DG_REDUCE_PROD] = 4,
      [DG_REDUCE_L1] = 4,
      [DG_REDUCE_L2] = 4,
      [DG_REDUCE_SUM_SQUARE] = 16,
      [DG_REDUCE_LOG_SUM] = 1.3862943611198906,
      [DG_REDUCE_LOG_SUM_EXP] = 4,
  };
  for (int k = 0; k < 2 * (DG_REDUCE_COUNT_ - 1); k++) {
    int fn = k % (DG_REDUCE_COUNT_ - 1) + 1;
    bool scalar = k >= DG_REDUCE_COUNT_ - 1;
    dg_graph *g = dg_graph_create(ctx, "known");
    int64_t d[1] = {4};
    dg_tensor_desc xd = desc_of(DG_DTYPE_F32, scalar ? 0 : 1, d);
    dg_tensor xt = dg_graph_input(g, "x", &xd);
    dg_graph_output(g, "y",
                    dg_graph_reduce(g, "r", (dg_reduce_fn)fn, xt, NULL, 0, 0),
                    DG_LAYOUT_NCHW);
    for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
      dg_compile_options o = {.devices = &dev, .device_count = 1};
      dg_session *s = NULL;
      dg_diagnostic diag;
      float y = NAN;
      double w = scalar ? one[fn] : want[fn];
      dg_status rc = dg_graph_compile(g, &o, &s, &diag);
      if (rc == DG_OK)
        rc = dg_session_run(
            s, &(dg_binding){"x", scalar ? x + 3 : x, scalar ? 4 : sizeof x}, 1,
            &(dg_binding){"y", &y, sizeof y}, 1, &diag);
      dg_device_info info;
      dg_context_device_info(ctx, dev, &info);
      CHECK((rc == DG_ERROR_UNSUPPORTED && info.kind == DG_DEVICE_NPU) ||
                (rc == DG_OK && fabs(y - w) <= 1e-5 * fabs(w)),
            "reduce %s of %s on device %d: %.9g (want %.9g)",
            dg_reduce_fn_name((dg_reduce_fn)fn),
            scalar ? "the scalar 4" : "1, 2, 3, 4", dev, y, w);
      dg_session_destroy(s);
    }
    dg_graph_destroy(g);
  }
}

/* ---- log_softmax ---- */

static dg_tensor make_log_softmax(dg_graph *g, dg_tensor *in, void *arg) {
  return dg_graph_log_softmax(g, "log_softmax", in[0], *(int32_t *)arg);
}

static void log_softmax_cases(dg_dtype t) {
  op_stats st = {0};
  fill_positive = false;
  fill_span = 10.0f;
  for (int c = 0; c < CASES; c++) {
    int rank = t_range(1, 5);
    int64_t d[DG_MAX_RANK];
    random_dims(rank, d, 1, 7);
    int32_t axis = t_range(-rank, rank - 1);
    dg_tensor_desc x = desc_of(t, rank, d);
    char label[96];
    snprintf(label, sizeof label, "log_softmax %s case %d", dg_dtype_name(t),
             c);
    run_case(&st, label, 1, &x, make_log_softmax, &axis);
  }
  char name[64];
  snprintf(name, sizeof name, "log_softmax %s", dg_dtype_name(t));
  report(name, &st);
}

static void log_softmax_large(void) {
  op_stats st = {0};
  fill_positive = false;
  fill_span = 10.0f;
  int64_t d[2] = {1024, 1024};
  int32_t last = -1, first = 0;
  dg_tensor_desc x = desc_of(DG_DTYPE_F32, 2, d);
  run_case(&st, "log_softmax 1024 x 1024, axis -1", 1, &x, make_log_softmax,
           &last);
  run_case(&st, "log_softmax 1024 x 1024, axis 0", 1, &x, make_log_softmax,
           &first);
  report("log_softmax large f32", &st);
}

/* ---- layer_norm ---- */

typedef struct norm_arg {
  int32_t axis;
  float epsilon;
  bool bias;
} norm_arg;

static dg_tensor make_norm(dg_graph *g, dg_tensor *in, void *arg) {
  norm_arg *a = arg;
  return dg_graph_layer_norm(g, "layer_norm", in[0], in[1],
                             a->bias ? in[2] : DG_TENSOR_NONE, a->axis,
                             a->epsilon);
}

static void layer_norm_cases(dg_dtype t) {
  op_stats st = {0};
  fill_positive = false;
  fill_span = 2.0f;
  for (int c = 0; c < CASES; c++) {
    int rank = t_range(1, 5);
    int64_t d[DG_MAX_RANK];
    random_dims(rank, d, 1, 7);
    norm_arg a = {.axis = t_range(-rank, rank - 1),
                  .epsilon = t_range(0, 1) ? 1e-5f : t_uniform(0, 0.5f),
                  .bias = t_range(0, 1)};
    int ax = a.axis < 0 ? a.axis + rank : a.axis;
    /* scale and bias: x's dims from the axis on, some leading dims
     * dropped and some set to 1 (broadcast) at random. */
    dg_tensor_desc xs[3] = {desc_of(t, rank, d)};
    for (int k = 1; k < 3; k++) {
      int drop = t_range(0, 2) == 0 ? t_range(0, rank - ax) : 0;
      int64_t sd[DG_MAX_RANK];
      int sr = rank - ax - drop;
      for (int i = 0; i < sr; i++)
        sd[i] = t_range(0, 3) == 0 ? 1 : d[ax + drop + i];
      xs[k] = desc_of(t, sr, sd);
    }
    char label[96];
    snprintf(label, sizeof label, "layer_norm %s case %d%s", dg_dtype_name(t),
             c, a.bias ? " with bias" : "");
    run_case(&st, label, a.bias ? 3 : 2, xs, make_norm, &a);
  }
  char name[64];
  snprintf(name, sizeof name, "layer_norm %s", dg_dtype_name(t));
  report(name, &st);
}

/* A row of 2^20 with an offset mean (the variance from the mean's
 * residue: a one-pass E[x^2] - E[x]^2 in f32 would lose it). */
static void layer_norm_large(void) {
  op_stats st = {0};
  fill_positive = true;
  fill_span = 4.0f;
  int64_t d[2] = {2, 1 << 19}, sd[1] = {1 << 19};
  norm_arg a = {.axis = 1, .epsilon = 1e-5f, .bias = true};
  dg_tensor_desc xs[3] = {desc_of(DG_DTYPE_F32, 2, d),
                          desc_of(DG_DTYPE_F32, 1, sd),
                          desc_of(DG_DTYPE_F32, 1, sd)};
  run_case(&st, "layer_norm 2 x 512K", 3, xs, make_norm, &a);
  int64_t d1[1] = {1 << 20}, s1[1] = {1};
  norm_arg b = {.axis = 0, .epsilon = 1e-5f};
  dg_tensor_desc ys[2] = {desc_of(DG_DTYPE_F32, 1, d1),
                          desc_of(DG_DTYPE_F32, 1, s1)};
  run_case(&st, "layer_norm 1M, broadcast scale", 2, ys, make_norm, &b);
  report("layer_norm large f32", &st);
}

/* ---- llvmpipe's loop limit ----
 * llvmpipe stops a shader invocation's loops after 65535 iterations in
 * all, silently; vk_ops.c's loop_trips bounds each node's so that the
 * Vulkan target declines what would be cut short (vk_reduce.c: count /
 * 256 an invocation, a pass). Compile only, on each Vulkan device: within
 * the bound the node is taken, past it only llvmpipe declines it, saying
 * why. The taken sizes also run (run_case), on every device: the bound
 * is not too loose. */
static void loop_limit(void) {
  op_stats st = {0};
  fill_positive = true;
  fill_span = 1.0f;
  int64_t d23[1] = {1 << 23}, d22[1] = {1 << 22}, d1[1] = {1};
  reduce_arg all = {.fn = DG_REDUCE_SUM};
  norm_arg a = {.axis = 0, .epsilon = 1e-5f};
  dg_tensor_desc x23 = desc_of(DG_DTYPE_F32, 1, d23);
  dg_tensor_desc xs[2] = {desc_of(DG_DTYPE_F32, 1, d22),
                          desc_of(DG_DTYPE_F32, 1, d1)};
  run_case(&st, "reduce sum of 2^23", 1, &x23, make_reduce, &all);
  run_case(&st, "layer_norm row of 2^22", 2, xs, make_norm, &a);
  report("reduce and layer_norm at llvmpipe's bound", &st);
  static const struct {
    const char *what;
    bool norm;
    int64_t len;
    bool over; /* past llvmpipe's limit */
  } cases[] = {
      {"reduce of 2^23", false, 1 << 23, false},
      {"reduce of 2^25", false, 1 << 25, true},
      {"layer_norm row of 2^22", true, 1 << 22, false},
      {"layer_norm row of 2^24", true, 1 << 24, true},
  };
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    if (info.kind != DG_DEVICE_VULKAN)
      continue;
    bool lavapipe = strstr(info.name, "llvmpipe") != NULL;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
      dg_graph *g = dg_graph_create(ctx, "long");
      dg_tensor_desc xd = {
          .dtype = DG_DTYPE_F32, .rank = 1, .dims = {cases[i].len}};
      dg_tensor x = dg_graph_input(g, "x", &xd);
      dg_tensor y =
          cases[i].norm
              ? dg_graph_layer_norm(g, "n", x, x, DG_TENSOR_NONE, 0, 1e-5f)
              : dg_graph_reduce(g, "n", DG_REDUCE_SUM, x, NULL, 0, 0);
      dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
      dg_compile_options o = {
          .devices = &dev, .device_count = 1, .policy = DG_POLICY_STRICT};
      dg_session *s = NULL;
      dg_diagnostic d = {0};
      dg_status rc = dg_graph_compile(g, &o, &s, &d);
      bool declined =
          rc == DG_ERROR_UNSUPPORTED && strstr(d.message, "llvmpipe stops");
      bool want = cases[i].over && lavapipe;
      CHECK(want ? declined : rc == DG_OK, "%s on device %d (%s): %s (%s)",
            cases[i].what, dev, info.name,
            want ? "declined for the loop limit" : "taken",
            rc ? d.message : "ok");
      dg_session_destroy(s);
      dg_graph_destroy(g);
    }
  }
}

/* ---- bad inputs ---- */

/* expect_error, then frees g. */
static void expect(dg_graph *g, dg_tensor y, const char *what, dg_status st,
                   const char *field) {
  expect_error(g, what, y, st, field);
  dg_graph_destroy(g);
}

static dg_graph *graph_with(dg_tensor *x, dg_dtype t) {
  dg_graph *g = dg_graph_create(ctx, "bad");
  int64_t d[3] = {2, 3, 4};
  dg_tensor_desc xd = desc_of(t, 3, d);
  *x = dg_graph_input(g, "x", &xd);
  return g;
}

static void bad_inputs(void) {
  dg_tensor x;
  dg_graph *g;
  int32_t ax[4] = {0, 1, 2, 0};
  g = graph_with(&x, DG_DTYPE_F32);
  expect(g, dg_graph_reduce(g, "r", DG_REDUCE_INVALID, x, ax, 1, 1),
         "reduce fn 0", DG_ERROR_INVALID_ARGUMENT, "fn");
  g = graph_with(&x, DG_DTYPE_F32);
  expect(g, dg_graph_reduce(g, "r", DG_REDUCE_COUNT_, x, ax, 1, 1),
         "reduce fn COUNT_", DG_ERROR_INVALID_ARGUMENT, "fn");
  g = graph_with(&x, DG_DTYPE_F32);
  int32_t far[1] = {3}, neg[1] = {-4};
  expect(g, dg_graph_reduce(g, "r", DG_REDUCE_SUM, x, far, 1, 1),
         "reduce axis 3 of rank 3", DG_ERROR_INVALID_ARGUMENT, "axes");
  g = graph_with(&x, DG_DTYPE_F32);
  expect(g, dg_graph_reduce(g, "r", DG_REDUCE_SUM, x, neg, 1, 1),
         "reduce axis -4 of rank 3", DG_ERROR_INVALID_ARGUMENT, "axes");
  g = graph_with(&x, DG_DTYPE_F32);
  int32_t twice[2] = {1, -2};
  expect(g, dg_graph_reduce(g, "r", DG_REDUCE_MAX, x, twice, 2, 0),
         "reduce axis 1 twice (as 1 and -2)", DG_ERROR_INVALID_ARGUMENT,
         "axes");
  g = graph_with(&x, DG_DTYPE_F32);
  expect(g, dg_graph_reduce(g, "r", DG_REDUCE_SUM, x, ax, 4, 1),
         "reduce axis_count 4 > rank 3", DG_ERROR_INVALID_ARGUMENT,
         "axis_count");
  g = graph_with(&x, DG_DTYPE_F32);
  expect(g, dg_graph_reduce(g, "r", DG_REDUCE_SUM, x, ax, -1, 1),
         "reduce axis_count -1", DG_ERROR_INVALID_ARGUMENT, "axis_count");
  g = graph_with(&x, DG_DTYPE_F32);
  expect(g, dg_graph_reduce(g, "r", DG_REDUCE_SUM, x, NULL, 2, 1),
         "reduce NULL axes, count 2", DG_ERROR_INVALID_ARGUMENT, "axes");
  g = graph_with(&x, DG_DTYPE_I8);
  expect(g, dg_graph_reduce(g, "r", DG_REDUCE_SUM, x, ax, 1, 1),
         "reduce int8 x", DG_ERROR_INVALID_DTYPE, "x");
  CHECK(dg_graph_reduce(NULL, "r", DG_REDUCE_SUM, x, ax, 1, 1).id == 0 &&
            dg_graph_log_softmax(NULL, "l", x, 0).id == 0 &&
            dg_graph_layer_norm(NULL, "n", x, x, x, 0, 0).id == 0,
        "a NULL graph gives no tensor");

  g = graph_with(&x, DG_DTYPE_F32);
  expect(g, dg_graph_log_softmax(g, "l", x, 3), "log_softmax axis 3",
         DG_ERROR_INVALID_ARGUMENT, "axis");
  g = graph_with(&x, DG_DTYPE_I8);
  expect(g, dg_graph_log_softmax(g, "l", x, 0), "log_softmax int8 x",
         DG_ERROR_INVALID_DTYPE, "x");

  /* layer_norm on x 2 x 3 x 4 */
  struct {
    const char *what;
    int scale_rank;
    int64_t sd[3];
    dg_dtype st;
    int32_t axis;
    float eps;
    bool bias_bad;
    dg_status want;
    const char *field;
  } ln[] = {
      {"layer_norm scale 5 for dims 4",
       1,
       {5},
       DG_DTYPE_F32,
       -1,
       1e-5f,
       false,
       DG_ERROR_INVALID_SHAPE,
       "scale"},
      {"layer_norm scale 3 x 4 for dims 4",
       2,
       {3, 4},
       DG_DTYPE_F32,
       2,
       1e-5f,
       false,
       DG_ERROR_INVALID_SHAPE,
       "scale"},
      {"layer_norm bias 2 for dims 3 x 4",
       1,
       {4},
       DG_DTYPE_F32,
       1,
       1e-5f,
       true,
       DG_ERROR_INVALID_SHAPE,
       "bias"},
      {"layer_norm f16 scale for f32 x",
       1,
       {4},
       DG_DTYPE_F16,
       -1,
       1e-5f,
       false,
       DG_ERROR_INVALID_DTYPE,
       "scale"},
      {"layer_norm axis 3",
       1,
       {4},
       DG_DTYPE_F32,
       3,
       1e-5f,
       false,
       DG_ERROR_INVALID_ARGUMENT,
       "axis"},
      {"layer_norm axis -4",
       1,
       {4},
       DG_DTYPE_F32,
       -4,
       1e-5f,
       false,
       DG_ERROR_INVALID_ARGUMENT,
       "axis"},
      {"layer_norm epsilon -1e-5",
       1,
       {4},
       DG_DTYPE_F32,
       -1,
       -1e-5f,
       false,
       DG_ERROR_INVALID_ARGUMENT,
       "epsilon"},
      {"layer_norm epsilon NaN",
       1,
       {4},
       DG_DTYPE_F32,
       -1,
       NAN,
       false,
       DG_ERROR_INVALID_ARGUMENT,
       "epsilon"},
      {"layer_norm epsilon inf",
       1,
       {4},
       DG_DTYPE_F32,
       -1,
       INFINITY,
       false,
       DG_ERROR_INVALID_ARGUMENT,
       "epsilon"},
  };
  for (size_t i = 0; i < sizeof ln / sizeof *ln; i++) {
    g = graph_with(&x, DG_DTYPE_F32);
    dg_tensor_desc sd = desc_of(ln[i].st, ln[i].scale_rank, ln[i].sd);
    int64_t two[1] = {2}, four[1] = {4};
    dg_tensor_desc bd = desc_of(DG_DTYPE_F32, 1, ln[i].bias_bad ? two : four);
    dg_tensor s = dg_graph_input(g, "s", &sd), b = dg_graph_input(g, "b", &bd);
    expect(g, dg_graph_layer_norm(g, "n", x, s, b, ln[i].axis, ln[i].eps),
           ln[i].what, ln[i].want, ln[i].field);
  }
  g = graph_with(&x, DG_DTYPE_I8);
  expect(g, dg_graph_layer_norm(g, "n", x, x, DG_TENSOR_NONE, -1, 1e-5f),
         "layer_norm int8 x", DG_ERROR_INVALID_DTYPE, "x");
  g = graph_with(&x, DG_DTYPE_F32);
  expect(
      g,
      dg_graph_layer_norm(g, "n", x, DG_TENSOR_NONE, DG_TENSOR_NONE, -1, 1e-5f),
      "layer_norm without scale", DG_ERROR_INVALID_ARGUMENT, "scale");
  /* A tensor of another graph. */
  dg_tensor other;
  dg_graph *h = graph_with(&other, DG_DTYPE_F32);
  g = graph_with(&x, DG_DTYPE_F32);
  expect(g, dg_graph_reduce(g, "r", DG_REDUCE_SUM, other, ax, 1, 1),
         "reduce of another graph's tensor", DG_ERROR_INVALID_ARGUMENT, "x");
  g = graph_with(&x, DG_DTYPE_F32);
  expect(g, dg_graph_log_softmax(g, "l", other, 0),
         "log_softmax of another graph's tensor", DG_ERROR_INVALID_ARGUMENT,
         "x");
  g = graph_with(&x, DG_DTYPE_F32);
  expect(g, dg_graph_layer_norm(g, "n", x, other, DG_TENSOR_NONE, 0, 0),
         "layer_norm with another graph's scale", DG_ERROR_INVALID_ARGUMENT,
         "scale");
  dg_graph_destroy(h);
  CHECK(strcmp(dg_reduce_fn_name(DG_REDUCE_LOG_SUM_EXP), "log_sum_exp") == 0 &&
            strcmp(dg_reduce_fn_name(DG_REDUCE_INVALID), "?") == 0 &&
            strcmp(dg_reduce_fn_name(DG_REDUCE_COUNT_), "?") == 0,
        "dg_reduce_fn_name");
}

int main(int argc, char **argv) {
  unsigned long long seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261201;
  t_seed(seed);
  printf("# seed %llu\n", seed);
  if (dg_context_create(NULL, &ctx) != DG_OK) {
    CHECK(0, "context");
    return 1;
  }
  bad_inputs();
  reduce_known();
  loop_limit();
  dg_dtype floats[2] = {DG_DTYPE_F32, DG_DTYPE_F16};
  for (int fn = DG_REDUCE_INVALID + 1; fn < DG_REDUCE_COUNT_; fn++) {
    for (int f = 0; f < 2; f++)
      reduce_cases((dg_reduce_fn)fn, floats[f]);
    if (fn != DG_REDUCE_PROD) /* a million factors: 0 or inf */
      reduce_large((dg_reduce_fn)fn);
  }
  for (int f = 0; f < 2; f++) {
    log_softmax_cases(floats[f]);
    layer_norm_cases(floats[f]);
  }
  log_softmax_large();
  layer_norm_large();
  dg_context_destroy(ctx);
  return t_exit();
}
