/* Differential tests of dg_graph_unary: every function of src/ops/
 * unary.def x {f32, f16} x every device, on random shapes of rank 1-4 and
 * inputs drawn from the table's range for the function, against the
 * float64 reference; special values (zeros, infinities, NaN, halves);
 * and the builder's errors, each naming its field.
 *
 * The input is a constant (n_in = 0 for run_case): the harness draws
 * graph inputs from symmetric or positive spans only, and functions such
 * as acosh need [1, 100]. Every target reads a constant as it reads an
 * input, from a buffer. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "cpu_kernels.h"        /* dg_cpu_simd_force */
#include "differential.h"
#include "unary_known.h"

enum { UNARY_CASES = 12 };

typedef struct unary_arg {
  dg_unary_fn fn;
  float alpha, beta;
  dg_tensor_desc d;
  const void *data;
} unary_arg;

static dg_tensor make_unary(dg_graph *g, dg_tensor *in, void *arg) {
  (void)in;
  unary_arg *a = arg;
  dg_tensor x = dg_graph_constant(g, "x", &a->d, a->data, 0);
  return dg_graph_unary(g, "op", a->fn, x, a->alpha, a->beta);
}

/* The parameters a case runs with: ONNX's defaults, or (every other
 * case) others, so that a kernel reading the wrong one fails. */
static void params_of(const dg_unary_def *u, int c, float *alpha, float *beta) {
  *alpha = u->params >= 1 ? (float)u->alpha0 : 0.0f;
  *beta = u->params >= 2 ? (float)u->beta0 : 0.0f;
  if (c % 2 && u->params >= 1)
    *alpha = t_uniform(0.1f, 2.0f);
  if (c % 2 && u->params >= 2)
    *beta = t_uniform(0.1f, 1.5f);
  if (c % 2 && u->params == 3) { /* a range: alpha <= beta */
    *alpha = t_uniform(-2.0f, 0.0f);
    *beta = t_uniform(0.1f, 2.0f);
  }
}

static void random_cases(dg_unary_fn fn, dg_dtype t) {
  const dg_unary_def *u = dg_unary_def_get(fn);
  op_stats st = {0};
  for (int c = 0; c < UNARY_CASES; c++) {
    unary_arg a = {.fn = fn};
    params_of(u, c, &a.alpha, &a.beta);
    int rank = t_range(1, 4);
    int64_t dims[4];
    random_dims(rank, dims, 1, rank == 1 ? 3000 : rank == 2 ? 60 : 12);
    a.d = desc_of(t, rank, dims);
    int64_t n = dg_desc_elements(&a.d);
    void *data = malloc(dg_desc_bytes(&a.d));
    for (int64_t i = 0; i < n; i++) {
      float v = t_uniform((float)u->lo, (float)u->hi);
      if (t == DG_DTYPE_F16)
        ((uint16_t *)data)[i] = dg_f32_to_f16(v);
      else
        ((float *)data)[i] = v;
    }
    a.data = data;
    char label[96];
    snprintf(label, sizeof label, "unary %s %s case %d (alpha %g beta %g)",
             u->name, dg_dtype_name(t), c, a.alpha, a.beta);
    run_case(&st, label, 0, NULL, make_unary, &a);
    free(data);
  }
  char name[64];
  snprintf(name, sizeof name, "unary %s %s", u->name, dg_dtype_name(t));
  report(name, &st);
}

/* ---- the reference itself ---- */

/* unary.def's formulas are the reference's and every target's, so the
 * differential cases cannot see a formula that is wrong everywhere: the
 * reference is held to known values here (unary_known.h). */
static void reference_values(void) {
  int bad = -1, checked = 0;
  bool covered[DG_UNARY_COUNT_] = {0};
  for (size_t i = 0; i < sizeof known_values / sizeof *known_values; i++) {
    const struct known_value *k = &known_values[i];
    dg_graph *g = dg_graph_create(ctx, "known");
    dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {1}};
    dg_tensor x = dg_graph_input(g, "x", &d);
    dg_graph_unary(g, "op", k->fn, x, (float)k->alpha, (float)k->beta);
    if (dg_graph_status(g) == DG_OK) {
      /* in double, as the reference reads its inputs */
      const double *ins[1] = {&k->x};
      double y = NAN;
      dg_op_def_get(DG_OP_UNARY)->reference(&g->ir, &g->ir.nodes[0], ins, &y);
      /* alpha and beta pass through float: 1e-7 relative covers them */
      if (!(fabs(y - k->y) <= 1e-7 * fmax(1.0, fabs(k->y))) && bad < 0)
        bad = (int)i;
      covered[k->fn] = true;
      checked++;
    } else if (bad < 0) {
      bad = (int)i;
    }
    dg_graph_destroy(g);
  }
  int missing = 0;
  for (int f = 1; f < DG_UNARY_COUNT_; f++)
    missing += !covered[f];
  CHECK(bad < 0 && missing == 0,
        "reference: %d known values of every function (%d without any)%s%s",
        checked, missing, bad < 0 ? "" : "; first wrong: ",
        bad < 0 ? "" : dg_unary_fn_name(known_values[bad].fn));
}

/* ---- special values ---- */

static const float specials[] = {
    0.0f,  -0.0f,  INFINITY, -INFINITY, NAN,    0.5f,   -0.5f,   1.5f,  -1.5f,
    2.5f,  -2.5f,  1.0f,     -1.0f,     3.0f,   1e-30f, -1e-30f, 20.0f, -20.0f,
    90.0f, -90.0f, 0.25f,    89.0f,     -89.0f, 0.01f,  -0.01f};
enum { NSPEC = sizeof specials / sizeof *specials };

/* Whether got is the reference's value r rounded to float: infinities
 * equal, finite values within 1e-4 of the largest finite reference
 * magnitude of the set (peak), as the harness measures. A NaN reference
 * says nothing (domain ends: log(-1)), and a NaN input only has to be
 * survived. */
static bool special_ok(double r, float got, double peak) {
  if (isnan(r))
    return true;
  float rf = (float)r;
  if (isinf(rf))
    return got == rf;
  return fabs(got - r) <= 1e-4 * (peak > 1 ? peak : 1);
}

static void special_cases(dg_unary_fn fn) {
  const dg_unary_def *u = dg_unary_def_get(fn);
  dg_graph *g = dg_graph_create(ctx, "special");
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {NSPEC}};
  dg_tensor x = dg_graph_constant(g, "x", &d, specials, 0);
  float alpha = u->params >= 1 ? (float)u->alpha0 : 0.0f;
  float beta = u->params >= 2 ? (float)u->beta0 : 0.0f;
  dg_graph_output(g, "y", dg_graph_unary(g, "op", fn, x, alpha, beta),
                  DG_LAYOUT_NCHW);
  if (dg_graph_status(g) != DG_OK) {
    CHECK(0, "unary %s specials: build failed: %s", u->name,
          dg_graph_error(g)->message);
    dg_graph_destroy(g);
    return;
  }
  const dg_node *n = &g->ir.nodes[g->ir.node_count - 1];
  double in[NSPEC], ref[NSPEC];
  for (int i = 0; i < NSPEC; i++)
    in[i] = specials[i];
  const double *ins[1] = {in};
  dg_op_def_get(DG_OP_UNARY)->reference(&g->ir, n, ins, ref);
  double peak = 0;
  for (int i = 0; i < NSPEC; i++)
    if (isfinite((float)ref[i]) && fabs(ref[i]) > peak)
      peak = fabs(ref[i]);
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    dg_compile_options o = {.devices = &dev, .device_count = 1};
    dg_session *s;
    dg_diagnostic diag;
    float out[NSPEC];
    dg_status rc = dg_graph_compile(g, &o, &s, &diag);
    if (rc == DG_ERROR_UNSUPPORTED && info.kind == DG_DEVICE_NPU)
      continue;
    if (rc == DG_OK)
      rc = dg_session_run(s, NULL, 0, &(dg_binding){"y", out, sizeof out}, 1,
                          &diag);
    int bad = -1;
    for (int i = 0; rc == DG_OK && i < NSPEC && bad < 0; i++)
      if (!special_ok(ref[i], out[i], peak))
        bad = i;
    char why[200] = "";
    if (rc)
      snprintf(why, sizeof why, ": %.190s", diag.message);
    else if (bad >= 0)
      snprintf(why, sizeof why, ": x=%g gave %g, want %g", specials[bad],
               out[bad], ref[bad]);
    CHECK(rc == DG_OK && bad < 0,
          "unary %s specials on %s: zeros, +-inf, NaN, halves, tiny and "
          "large as the reference%s",
          u->name, info.name, why);
    dg_session_destroy(s);
  }
  dg_graph_destroy(g);
}

/* Round's halves go to even on every device, and sign keeps its zero. */
static void round_halves(void) {
  static const float x[] = {0.5f,  1.5f, 2.5f,        -0.5f,    -1.5f,
                            -2.5f, 3.5f, 0.49999997f, 1e7f + 1, -4.5f};
  static const float want[] = {0, 2, 2, -0.0f, -2, -2, 4, 0, 1e7f + 1, -4};
  enum { N = sizeof x / sizeof *x };
  dg_graph *g = dg_graph_create(ctx, "halves");
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {N}};
  dg_tensor c = dg_graph_constant(g, "x", &d, x, 0);
  dg_graph_output(g, "y", dg_graph_unary(g, "r", DG_UNARY_ROUND, c, 0, 0),
                  DG_LAYOUT_NCHW);
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    dg_compile_options o = {.devices = &dev, .device_count = 1};
    dg_session *s;
    dg_diagnostic diag;
    float out[N];
    dg_status rc = dg_graph_compile(g, &o, &s, &diag);
    if (rc == DG_ERROR_UNSUPPORTED && info.kind == DG_DEVICE_NPU)
      continue;
    if (rc == DG_OK)
      rc = dg_session_run(s, NULL, 0, &(dg_binding){"y", out, sizeof out}, 1,
                          &diag);
    int bad = -1;
    for (int i = 0; rc == DG_OK && i < N && bad < 0; i++)
      if (out[i] != want[i])
        bad = i;
    char why[200] = "";
    if (rc)
      snprintf(why, sizeof why, ": %.190s", diag.message);
    else if (bad >= 0)
      snprintf(why, sizeof why, ": x=%g gave %g", x[bad], out[bad]);
    CHECK(rc == DG_OK && bad < 0,
          "round on %s: halves to even (0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -2.5 "
          "-> -2)%s",
          info.name, why);
    dg_session_destroy(s);
  }
  dg_graph_destroy(g);
}

/* ---- the CPU kernel alone ---- */

/* dg_cpu_unary at the current SIMD level over 20001 points spanning the
 * table's range, against the double reference: within 1e-6 of the
 * range's largest |f| (the harness allows 1e-4), so that the kernel's own
 * exp, expm1 and tanh (cpu/unary.c) are held to float accuracy. */
static void cpu_sweep(const char *level) {
  enum { N = 20001 };
  static float x[N], y[N];
  static double xd[N], ref[N];
  char worst_fn[32] = "";
  double worst = 0;
  bool ok = true;
  for (int f = 1; f < DG_UNARY_COUNT_; f++) {
    const dg_unary_def *u = dg_unary_def_get(f);
    for (int i = 0; i < N; i++) {
      x[i] = (float)(u->lo + (u->hi - u->lo) * i / (N - 1));
      xd[i] = x[i];
    }
    float a = u->params >= 1 ? (float)u->alpha0 : 0.0f;
    float b = u->params >= 2 ? (float)u->beta0 : 0.0f;
    dg_graph *g = dg_graph_create(ctx, "sweep");
    dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {N}};
    dg_graph_unary(g, "u", (dg_unary_fn)f, dg_graph_input(g, "x", &d), a, b);
    const double *ins[1] = {xd};
    dg_op_def_get(DG_OP_UNARY)->reference(&g->ir, &g->ir.nodes[0], ins, ref);
    dg_graph_destroy(g);
    dg_cpu_unary(f, x, y, N, a, b);
    double peak = 0, err = 0;
    for (int i = 0; i < N; i++)
      peak = fmax(peak, fabs(ref[i]));
    for (int i = 0; i < N; i++) {
      double e = fabs(y[i] - ref[i]) / (peak > 0 ? peak : 1);
      err = isnan(e) ? INFINITY : fmax(err, e);
    }
    if (err > worst) {
      worst = err;
      snprintf(worst_fn, sizeof worst_fn, "%s", u->name);
    }
    ok = ok && err <= 1e-6;
  }
  CHECK(ok,
        "simd=%s: dg_cpu_unary within 1e-6 of the peak over each "
        "function's range (worst %.3g, %s)",
        level, worst, worst_fn);
}

/* ---- bad inputs ---- */

static void expect(dg_graph *g, const char *what, dg_status st,
                   const char *field) {
  expect_error(g, what, DG_TENSOR_NONE, st, field);
}

typedef struct bad_case {
  const char *what;
  int fn;
  float alpha, beta;
  dg_dtype dtype;
  const char *field;
  dg_status st;
} bad_case;

static void bad_inputs(void) {
  const bad_case cases[] = {
      {"fn 0 (DG_UNARY_INVALID)", 0, 0, 0, DG_DTYPE_F32, "fn",
       DG_ERROR_INVALID_ARGUMENT},
      {"fn DG_UNARY_COUNT_", DG_UNARY_COUNT_, 0, 0, DG_DTYPE_F32, "fn",
       DG_ERROR_INVALID_ARGUMENT},
      {"fn 999", 999, 0, 0, DG_DTYPE_F32, "fn", DG_ERROR_INVALID_ARGUMENT},
      {"fn -1", -1, 0, 0, DG_DTYPE_F32, "fn", DG_ERROR_INVALID_ARGUMENT},
      {"tanh with alpha 1", DG_UNARY_TANH, 1, 0, DG_DTYPE_F32, "alpha",
       DG_ERROR_INVALID_ARGUMENT},
      {"exp with beta 2", DG_UNARY_EXP, 0, 2, DG_DTYPE_F32, "beta",
       DG_ERROR_INVALID_ARGUMENT},
      {"leaky_relu (alpha only) with beta 1", DG_UNARY_LEAKY_RELU, 0.1f, 1,
       DG_DTYPE_F32, "beta", DG_ERROR_INVALID_ARGUMENT},
      {"elu with alpha NaN", DG_UNARY_ELU, NAN, 0, DG_DTYPE_F32, "alpha",
       DG_ERROR_INVALID_ARGUMENT},
      {"selu with gamma inf", DG_UNARY_SELU, 1, INFINITY, DG_DTYPE_F32, "beta",
       DG_ERROR_INVALID_ARGUMENT},
      {"celu with alpha 0", DG_UNARY_CELU, 0, 0, DG_DTYPE_F32, "alpha",
       DG_ERROR_INVALID_ARGUMENT},
      {"tanh of i8", DG_UNARY_TANH, 0, 0, DG_DTYPE_I8, "x",
       DG_ERROR_INVALID_DTYPE},
      {"sqrt of i32", DG_UNARY_SQRT, 0, 0, DG_DTYPE_I32, "x",
       DG_ERROR_INVALID_DTYPE},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const bad_case *c = &cases[i];
    dg_graph *g = dg_graph_create(ctx, "bad");
    dg_tensor_desc d = {.dtype = c->dtype, .rank = 1, .dims = {4}};
    if (c->dtype == DG_DTYPE_I8)
      d.quant.scale = 0.5f;
    dg_tensor x = dg_graph_input(g, "x", &d);
    dg_tensor y =
        dg_graph_unary(g, "u", (dg_unary_fn)c->fn, x, c->alpha, c->beta);
    CHECK(y.id == 0, "%s returns no tensor", c->what);
    expect(g, c->what, c->st, c->field);
    dg_graph_destroy(g);
  }
  dg_graph *g = dg_graph_create(ctx, "bad");
  dg_graph_unary(g, "u", DG_UNARY_TANH, (dg_tensor){.id = 77}, 0, 0);
  expect(g, "unary of a tensor not in the graph", DG_ERROR_INVALID_ARGUMENT,
         "x");
  dg_graph_destroy(g);
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {4}};
  g = dg_graph_create(ctx, "bad");
  dg_graph *other = dg_graph_create(ctx, "other");
  dg_graph_input(g, "x", &d); /* the same id in g as the other's x */
  dg_graph_unary(g, "u", DG_UNARY_TANH, dg_graph_input(other, "x", &d), 0, 0);
  expect(g, "unary of another graph's tensor", DG_ERROR_INVALID_ARGUMENT, "x");
  dg_graph_destroy(other);
  dg_graph_destroy(g);
  g = dg_graph_create(ctx, "ok");
  dg_tensor x = dg_graph_input(g, "x", &d);
  CHECK(dg_graph_unary(NULL, "u", DG_UNARY_TANH, x, 0, 0).id == 0,
        "unary on a NULL graph returns no tensor");
  /* Parameters a function takes may be anything finite, 0 included. */
  dg_tensor y = dg_graph_unary(g, "u", DG_UNARY_LEAKY_RELU, x, 0, 0);
  y = dg_graph_unary(g, "v", DG_UNARY_SHRINK, y, -1.0f, 3.0f);
  CHECK(y.id != 0 && dg_graph_status(g) == DG_OK,
        "leaky_relu with alpha 0 and shrink with lambd -1, bias 3 build");
  dg_graph_destroy(g);
}

/* The plan's op column names the function. */
static void plan_label(void) {
  dg_graph *g = dg_graph_create(ctx, "plan");
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {4}};
  dg_tensor x = dg_graph_input(g, "x", &d);
  dg_graph_output(g, "y",
                  dg_graph_unary(g, "u", DG_UNARY_THRESHOLDED_RELU, x, 1, 0),
                  DG_LAYOUT_NCHW);
  dg_session *s = NULL;
  dg_diagnostic diag;
  char *text = NULL;
  size_t size = 0;
  if (dg_graph_compile(g, NULL, &s, &diag) == DG_OK) {
    FILE *f = open_memstream(&text, &size);
    if (f) {
      dg_plan_write(dg_session_plan(s), DG_PLAN_FORMAT_TABLE, f);
      fclose(f);
    }
  }
  CHECK(text && strstr(text, " unary:thresholded_relu "),
        "the plan table's op column reads unary:thresholded_relu");
  free(text);
  dg_session_destroy(s);
  dg_graph_destroy(g);
}

static void names(void) {
  bool ok = true;
  for (int f = 1; f < DG_UNARY_COUNT_; f++) {
    const char *n = dg_unary_fn_name((dg_unary_fn)f);
    ok = ok && n && strcmp(n, "?") && !strcmp(n, dg_unary_def_get(f)->name);
    for (int k = 1; k < f; k++) /* distinct: the plan shows them */
      ok = ok && strcmp(n, dg_unary_fn_name((dg_unary_fn)k));
  }
  CHECK(ok && !strcmp(dg_unary_fn_name(DG_UNARY_TANH), "tanh") &&
            !strcmp(dg_unary_fn_name(DG_UNARY_SIGN), "sign") &&
            !strcmp(dg_unary_fn_name(DG_UNARY_INVALID), "?") &&
            !strcmp(dg_unary_fn_name(DG_UNARY_COUNT_), "?") &&
            !strcmp(dg_unary_fn_name((dg_unary_fn)999), "?"),
        "dg_unary_fn_name: a distinct name per function, \"?\" otherwise");
}

int main(int argc, char **argv) {
  unsigned long long seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261201;
  t_seed(seed);
  printf("# seed %llu\n", seed);
  if (dg_context_create(NULL, &ctx) != DG_OK) {
    CHECK(0, "context");
    return 1;
  }
  names();
  reference_values();
  bad_inputs();
  round_halves();
  plan_label();
  cpu_sweep(dg_cpu_simd_name());
  for (int f = 1; f < DG_UNARY_COUNT_; f++) {
    random_cases((dg_unary_fn)f, DG_DTYPE_F32);
    random_cases((dg_unary_fn)f, DG_DTYPE_F16);
    special_cases((dg_unary_fn)f);
  }
  /* The CPU's loops of the lower SIMD levels (each is compiled apart),
   * where the machine has them: f32 again, and the special values. */
  const char *levels[] = {"avx2", "portable"};
  for (int l = 0; l < 2; l++) {
    dg_cpu_simd_force(levels[l]);
    if (strcmp(dg_cpu_simd_name(), levels[l])) {
      printf("skipped: simd=%s (not available on this CPU)\n", levels[l]);
      continue;
    }
    printf("# simd=%s\n", levels[l]);
    cpu_sweep(levels[l]);
    for (int f = 1; f < DG_UNARY_COUNT_; f++) {
      random_cases((dg_unary_fn)f, DG_DTYPE_F32);
      special_cases((dg_unary_fn)f);
    }
  }
  dg_cpu_simd_force(NULL);
  dg_context_destroy(ctx);
  return t_exit();
}
