#define _POSIX_C_SOURCE 200809L
/* dg_graph_binary (and dg_graph_add, the same kernel) on every device
 * against the float64 reference: every function in f32 and f16, random
 * shapes of rank 1-4 with broadcasting on either side, same-shape pairs
 * and scalars; hand-computed special values (pow of a negative base, IEEE
 * division by zero, the two remainders' signs); and the builder's errors
 * for bad inputs. */
#include "differential.h"

typedef struct bin_arg {
  dg_binary_fn fn;
  bool add;     /* through dg_graph_add instead */
  bool const_b; /* b a constant drawn in the function's domain */
  dg_tensor_desc bd;
  float *bdata;
} bin_arg;

/* b in the function's domain: divisors |b| >= 0.1, and for pow integral
 * exponents in [-2, 3] (the base is signed; f16, whose range ends at
 * 65504, only [0, 3], as bases near 0 overflow it). */
static float domain_b(dg_binary_fn fn, dg_dtype t) {
  if (fn == DG_BINARY_POW)
    return (float)t_range(t == DG_DTYPE_F16 ? 0 : -2, 3);
  float m = t_uniform(0.1f, 2.0f);
  return t_range(0, 1) ? m : -m;
}

static dg_tensor make_bin(dg_graph *g, dg_tensor *in, void *arg) {
  bin_arg *a = arg;
  dg_tensor b = in[1];
  if (a->const_b) {
    int64_t n = dg_desc_elements(&a->bd);
    uint16_t *h = a->bd.dtype == DG_DTYPE_F16 ? malloc(2 * (size_t)n) : NULL;
    for (int64_t i = 0; h && i < n; i++)
      h[i] = dg_f32_to_f16(a->bdata[i]);
    b = dg_graph_constant(g, "b", &a->bd, h ? (void *)h : a->bdata, 0);
    free(h);
  }
  return a->add ? dg_graph_add(g, "op", in[0], b)
                : dg_graph_binary(g, "op", a->fn, in[0], b);
}

/* Shapes: same shape, a scalar on one side, or random broadcasting (a
 * suffix of the dims with some set to 1) on either side. */
static void shapes(int kind, dg_dtype t, dg_tensor_desc *d) {
  int rank = t_range(1, 4);
  int64_t dims[DG_MAX_RANK];
  random_dims(rank, dims, 1, 6);
  d[0] = desc_of(t, rank, dims);
  d[1] = d[0];
  if (kind == 0)
    return;
  int rb = kind == 1 ? 1 : t_range(1, rank);
  int64_t bd[DG_MAX_RANK];
  for (int i = 0; i < rb; i++)
    bd[i] = kind == 1 ? 1 : t_range(0, 2) ? dims[rank - rb + i] : 1;
  if (t_range(0, 1)) { /* the small one on a's side */
    d[0] = desc_of(t, rb, bd);
  } else {
    d[1] = desc_of(t, rb, bd);
  }
}

static bool needs_domain(dg_binary_fn fn) {
  return fn == DG_BINARY_DIV || fn == DG_BINARY_POW || fn == DG_BINARY_FMOD ||
         fn == DG_BINARY_MOD;
}

static void fn_cases(dg_binary_fn fn, bool add, dg_dtype t) {
  op_stats st = {0};
  for (int c = 0; c < CASES; c++) {
    bin_arg a = {.fn = fn, .add = add};
    dg_tensor_desc d[2];
    shapes(c % 3, t, d);
    /* Functions with a domain: half the cases take b as a constant drawn
     * in it (signed); the others feed both operands positive from
     * [0.1, 10] (pow: bases and exponents from [0.02, 2]). */
    fill_span = 1.0f;
    fill_positive = false;
    if (needs_domain(fn)) {
      if (c % 2) {
        a.const_b = true;
        a.bd = d[1];
        int64_t n = dg_desc_elements(&a.bd);
        a.bdata = malloc(sizeof(float) * (size_t)n);
        for (int64_t i = 0; i < n; i++)
          a.bdata[i] = domain_b(fn, t);
      } else {
        fill_positive = true;
        fill_span = fn == DG_BINARY_POW ? 2.0f : 10.0f;
      }
    }
    char label[96];
    snprintf(label, sizeof label, "%s %s case %d",
             add ? "add()" : dg_binary_fn_name(fn), dg_dtype_name(t), c);
    run_case(&st, label, a.const_b ? 1 : 2, d, make_bin, &a);
    free(a.bdata);
  }
  fill_span = 1.0f;
  fill_positive = false;
  char name[64];
  snprintf(name, sizeof name, "%s %s",
           add ? "dg_graph_add" : dg_binary_fn_name(fn), dg_dtype_name(t));
  report(name, &st);
}

/* ---- special values, computed by hand ---- */

typedef struct special {
  dg_binary_fn fn;
  float a, b, y; /* y NaN: any NaN */
} special;

static const special specials[] = {
    {DG_BINARY_POW, -2, 3, -8},         {DG_BINARY_POW, -2, 2, 4},
    {DG_BINARY_POW, -2, -1, -0.5f},     {DG_BINARY_POW, -2, -2, 0.25f},
    {DG_BINARY_POW, 0, 0, 1},           {DG_BINARY_POW, -3, 0, 1},
    {DG_BINARY_POW, 0, 2, 0},           {DG_BINARY_POW, 0, -1, INFINITY},
    {DG_BINARY_POW, -8, 0.5f, NAN},     {DG_BINARY_POW, 4, 0.5f, 2},
    {DG_BINARY_POW, 2, -3, 0.125f},     {DG_BINARY_DIV, 1, 0, INFINITY},
    {DG_BINARY_DIV, -1, 0, -INFINITY},  {DG_BINARY_DIV, 0, 0, NAN},
    {DG_BINARY_DIV, 3, -4, -0.75f},     {DG_BINARY_FMOD, -5, 3, -2},
    {DG_BINARY_FMOD, 5, -3, 2},         {DG_BINARY_FMOD, 7.5f, 2, 1.5f},
    {DG_BINARY_FMOD, -7.5f, 2, -1.5f},  {DG_BINARY_MOD, -5, 3, 1},
    {DG_BINARY_MOD, 5, -3, -1},         {DG_BINARY_MOD, -5, -3, -2},
    {DG_BINARY_MOD, 5, 3, 2},           {DG_BINARY_MOD, -7.5f, 2, 0.5f},
    {DG_BINARY_MOD, 6, 3, 0},           {DG_BINARY_MAX, -1, 2, 2},
    {DG_BINARY_MAX, 3, -2, 3},          {DG_BINARY_MIN, -1, 2, -1},
    {DG_BINARY_MIN, 3, -2, -2},         {DG_BINARY_PRELU, -2, 0.25f, -0.5f},
    {DG_BINARY_PRELU, 2, 0.25f, 2},     {DG_BINARY_PRELU, -2, -3, 6},
    {DG_BINARY_SUB, 1, 3, -2},          {DG_BINARY_MUL, -1.5f, 4, -6},
    {DG_BINARY_ADD, 1.25f, -3, -1.75f},
};
enum { NSPECIAL = sizeof specials / sizeof *specials };

static bool same(float got, float want) {
  return isnan(want) ? isnan(got) : got == want;
}

/* One graph per function over that function's rows, run on every device
 * in f32 and f16 (every value above is exact in f16). */
static void special_values(dg_dtype t) {
  for (int fn = DG_BINARY_ADD; fn < DG_BINARY_COUNT_; fn++) {
    float a[NSPECIAL], b[NSPECIAL], want[NSPECIAL];
    uint16_t ha[NSPECIAL], hb[NSPECIAL], hy[NSPECIAL];
    float y[NSPECIAL];
    int n = 0;
    for (int i = 0; i < NSPECIAL; i++)
      if ((int)specials[i].fn == fn) {
        a[n] = specials[i].a, b[n] = specials[i].b, want[n] = specials[i].y;
        ha[n] = dg_f32_to_f16(a[n]), hb[n] = dg_f32_to_f16(b[n]);
        n++;
      }
    bool f16 = t == DG_DTYPE_F16;
    dg_tensor_desc d = {.dtype = t, .rank = 1, .dims = {n}};
    dg_graph *g = dg_graph_create(ctx, "special");
    dg_tensor y_t = dg_graph_binary(g, "op", fn, dg_graph_input(g, "a", &d),
                                    dg_graph_input(g, "b", &d));
    dg_graph_output(g, "y", y_t, DG_LAYOUT_NCHW);
    size_t bytes = dg_desc_bytes(&d);
    dg_binding in[2] = {{"a", f16 ? (void *)ha : a, bytes},
                        {"b", f16 ? (void *)hb : b, bytes}};
    for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
      dg_device_info info;
      dg_context_device_info(ctx, dev, &info);
      dg_compile_options o = {.devices = &dev, .device_count = 1};
      dg_session *s = NULL;
      dg_diagnostic diag;
      dg_status rc = dg_graph_compile(g, &o, &s, &diag);
      if (rc == DG_ERROR_UNSUPPORTED && info.kind == DG_DEVICE_NPU)
        continue;
      if (rc == DG_OK)
        rc = dg_session_run(s, in, 2,
                            &(dg_binding){"y", f16 ? (void *)hy : y, bytes}, 1,
                            &diag);
      int bad = -1;
      for (int i = 0; rc == DG_OK && i < n && bad < 0; i++) {
        float v = f16 ? dg_f16_to_f32(hy[i]) : y[i];
        if (!same(v, want[i]))
          bad = i;
      }
      CHECK(rc == DG_OK && bad < 0,
            "%s %s special values on device %d (%s)%s: %s",
            dg_binary_fn_name(fn), dg_dtype_name(t), dev, info.name,
            rc ? diag.message : "", bad < 0 ? "all exact" : "wrong");
      if (rc == DG_OK && bad >= 0)
        printf("#   %s(%g, %g) = %g, want %g\n", dg_binary_fn_name(fn), a[bad],
               b[bad], f16 ? dg_f16_to_f32(hy[bad]) : y[bad], want[bad]);
      dg_session_destroy(s);
    }
    dg_graph_destroy(g);
  }
}

/* x ^ 2 with a scalar exponent, as layer norms are exported: the CPU
 * computes it as x * x, which must equal pow in double rounded once to
 * float bit for bit, over random values, overflow, underflow, +-0, +-inf
 * and NaN. */
static void squares(void) {
  enum { N = 4099 };
  static float a[N], y[N];
  for (int i = 0; i < N; i++)
    a[i] = t_uniform(-1, 1) * powf(2.0f, (float)t_range(-80, 80));
  float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -3e38f};
  memcpy(a, sp, sizeof sp);
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {1, N}};
  dg_tensor_desc one = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {1}};
  static const float two = 2.0f;
  dg_graph *g = dg_graph_create(ctx, "square");
  dg_tensor y_t =
      dg_graph_binary(g, "pow", DG_BINARY_POW, dg_graph_input(g, "a", &d),
                      dg_graph_constant(g, "two", &one, &two, 0));
  dg_graph_output(g, "y", y_t, DG_LAYOUT_NCHW);
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    if (info.kind != DG_DEVICE_CPU)
      continue;
    dg_compile_options o = {.devices = &dev, .device_count = 1};
    dg_session *s = NULL;
    dg_diagnostic diag;
    dg_status rc = dg_graph_compile(g, &o, &s, &diag);
    if (rc == DG_OK)
      rc = dg_session_run(s, &(dg_binding){"a", a, sizeof a}, 1,
                          &(dg_binding){"y", y, sizeof y}, 1, &diag);
    int bad = 0;
    for (int i = 0; rc == DG_OK && i < N; i++) {
      float want = (float)pow((double)a[i], 2.0);
      bad += isnan(want) ? !isnan(y[i]) : memcmp(&want, &y[i], 4) != 0;
    }
    CHECK(rc == DG_OK && !bad,
          "pow(x, 2) on device %d (%s) equals pow in double, rounded once: "
          "%d of %d wrong%s",
          dev, info.name, bad, N, rc ? diag.message : "");
    dg_session_destroy(s);
  }
  dg_graph_destroy(g);
}

/* Outputs large enough for the CPU to split them over its threads (by
 * rows, and one long run by pieces; DG_TEST_CPU_THREADED so that a
 * one-node graph gets the threaded pool): a + b with broadcasting,
 * against the float sum, which is the double sum rounded once. */
static void large(void) {
  setenv("DG_TEST_CPU_THREADED", "1", 1);
  static const int64_t shapes[][2][3] = {
      {{4, 1, 30000}, {1, 1, 30000}},   /* rows */
      {{1, 1, 100000}, {1, 1, 100000}}, /* one run */
      {{2, 3, 20000}, {1, 3, 1}},       /* b per row */
  };
  enum { MAX = 120000 };
  static float a[MAX], b[MAX], y[MAX];
  for (int i = 0; i < MAX; i++)
    a[i] = t_uniform(-5, 5), b[i] = t_uniform(-5, 5);
  for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
    dg_tensor_desc da = {.dtype = DG_DTYPE_F32, .rank = 3},
                   db = {.dtype = DG_DTYPE_F32, .rank = 3};
    memcpy(da.dims, shapes[c][0], sizeof shapes[c][0]);
    memcpy(db.dims, shapes[c][1], sizeof shapes[c][1]);
    int64_t yd[3], n = 1;
    for (int k = 0; k < 3; k++)
      n *= yd[k] = da.dims[k] > db.dims[k] ? da.dims[k] : db.dims[k];
    dg_graph *g = dg_graph_create(ctx, "large");
    dg_graph_output(g, "y",
                    dg_graph_add(g, "add", dg_graph_input(g, "a", &da),
                                 dg_graph_input(g, "b", &db)),
                    DG_LAYOUT_NCHW);
    for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
      dg_device_info info;
      dg_context_device_info(ctx, dev, &info);
      if (info.kind != DG_DEVICE_CPU)
        continue;
      dg_compile_options o = {.devices = &dev, .device_count = 1};
      dg_session *s = NULL;
      dg_diagnostic diag;
      dg_binding in[2] = {{"a", a, dg_desc_bytes(&da)},
                          {"b", b, dg_desc_bytes(&db)}};
      dg_status rc = dg_graph_compile(g, &o, &s, &diag);
      if (rc == DG_OK)
        rc = dg_session_run(s, in, 2,
                            &(dg_binding){"y", y, sizeof(float) * (size_t)n}, 1,
                            &diag);
      int64_t bad = 0;
      for (int64_t i = 0; rc == DG_OK && i < n; i++) {
        int64_t i2 = i % yd[2], i1 = (i / yd[2]) % yd[1],
                i0 = i / yd[2] / yd[1];
        int64_t ia = ((i0 % da.dims[0]) * da.dims[1] + i1 % da.dims[1]) *
                         da.dims[2] +
                     i2 % da.dims[2],
                ib = ((i0 % db.dims[0]) * db.dims[1] + i1 % db.dims[1]) *
                         db.dims[2] +
                     i2 % db.dims[2];
        bad += y[i] != a[ia] + b[ib];
      }
      CHECK(rc == DG_OK && !bad,
            "add of %lld outputs ([%lld,%lld,%lld] + [%lld,%lld,%lld]) on "
            "device %d (%s), split over threads: %lld wrong%s",
            (long long)n, (long long)da.dims[0], (long long)da.dims[1],
            (long long)da.dims[2], (long long)db.dims[0], (long long)db.dims[1],
            (long long)db.dims[2], dev, info.name, (long long)bad,
            rc ? diag.message : "");
      dg_session_destroy(s);
    }
    dg_graph_destroy(g);
  }
  unsetenv("DG_TEST_CPU_THREADED");
}

/* max and min with a NaN on either side: NaN on the CPU (binary.def's
 * comparisons as written); the GPU targets promise nothing there
 * (docs/numerics.md), so what they give is printed, not checked. */
static void nan_values(void) {
  float a[4] = {NAN, 1, NAN, -1}, b[4] = {1, NAN, -1, NAN}, y[4];
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {4}};
  dg_binary_fn fns[2] = {DG_BINARY_MAX, DG_BINARY_MIN};
  for (int f = 0; f < 2; f++) {
    dg_graph *g = dg_graph_create(ctx, "nan");
    dg_tensor y_t = dg_graph_binary(g, "op", fns[f], dg_graph_input(g, "a", &d),
                                    dg_graph_input(g, "b", &d));
    dg_graph_output(g, "y", y_t, DG_LAYOUT_NCHW);
    dg_binding in[2] = {{"a", a, sizeof a}, {"b", b, sizeof b}};
    for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
      dg_device_info info;
      dg_context_device_info(ctx, dev, &info);
      dg_compile_options o = {.devices = &dev, .device_count = 1};
      dg_session *s = NULL;
      dg_diagnostic diag;
      dg_status rc = dg_graph_compile(g, &o, &s, &diag);
      if (rc == DG_OK)
        rc =
            dg_session_run(s, in, 2, &(dg_binding){"y", y, sizeof y}, 1, &diag);
      int nans = 0;
      for (int i = 0; rc == DG_OK && i < 4; i++)
        nans += isnan(y[i]) != 0;
      if (info.kind == DG_DEVICE_CPU)
        CHECK(rc == DG_OK && nans == 4,
              "%s with a NaN on either side on the "
              "CPU: %d of 4 NaN",
              dg_binary_fn_name(fns[f]), nans);
      else if (rc == DG_OK)
        printf("# %s with a NaN on either side on device %d (%s): %d of 4 "
               "NaN (not promised)\n",
               dg_binary_fn_name(fns[f]), dev, info.name, nans);
      dg_session_destroy(s);
    }
    dg_graph_destroy(g);
  }
}

/* ---- bad inputs ---- */

static void bad_inputs(void) {
  dg_tensor_desc f = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {3, 4}};
  dg_tensor_desc f5 = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {3, 5}};
  dg_tensor_desc h = {.dtype = DG_DTYPE_F16, .rank = 2, .dims = {3, 4}};
  dg_tensor_desc q = {.dtype = DG_DTYPE_I8,
                      .rank = 2,
                      .dims = {3, 4},
                      .quant = {.scale = 0.5f}};
  int fns[3] = {0, DG_BINARY_COUNT_, 999};
  for (int i = 0; i < 3; i++) {
    dg_graph *g = dg_graph_create(ctx, "t");
    dg_tensor a = dg_graph_input(g, "a", &f);
    dg_tensor y = dg_graph_binary(g, "op", fns[i], a, a);
    char what[64], num[16];
    snprintf(what, sizeof what, "binary fn %d", fns[i]);
    snprintf(num, sizeof num, "%d", fns[i]);
    CHECK(y.id == 0, "%s returns no tensor", what);
    expect_diag(g, what, DG_ERROR_INVALID_ARGUMENT, "fn", num);
    dg_graph_destroy(g);
  }
  for (int add = 0; add < 2; add++) {
    dg_graph *g = dg_graph_create(ctx, "t");
    dg_tensor a = dg_graph_input(g, "a", &f), b = dg_graph_input(g, "b", &f5);
    dg_tensor y = add ? dg_graph_add(g, "op", a, b)
                      : dg_graph_binary(g, "op", DG_BINARY_SUB, a, b);
    CHECK(y.id == 0, "[3,4] against [3,5] returns no tensor");
    /* the message names both shapes */
    expect_diag(g, add ? "add [3,4] with [3,5]" : "sub [3,4] with [3,5]",
                DG_ERROR_INVALID_SHAPE, "b", "3, 4");
    expect_diag(g, "... and names b's shape", DG_ERROR_INVALID_SHAPE, "b",
                "3, 5");
    dg_graph_destroy(g);
  }
  dg_graph *g = dg_graph_create(ctx, "t");
  dg_graph_binary(g, "op", DG_BINARY_MUL, dg_graph_input(g, "a", &f),
                  dg_graph_input(g, "b", &h));
  expect_diag(g, "mul of f32 and f16", DG_ERROR_INVALID_DTYPE, "b", NULL);
  dg_graph_destroy(g);
  g = dg_graph_create(ctx, "t");
  dg_tensor qa = dg_graph_input(g, "q", &q);
  dg_graph_binary(g, "op", DG_BINARY_MAX, qa, qa);
  expect_diag(g, "max of i8", DG_ERROR_INVALID_DTYPE, "a", NULL);
  dg_graph_destroy(g);
  g = dg_graph_create(ctx, "t");
  dg_graph *other = dg_graph_create(ctx, "other");
  dg_graph_input(other, "x", &f);
  dg_tensor foreign = dg_graph_input(other, "y", &f);
  dg_tensor a = dg_graph_input(g, "a", &f);
  dg_graph_binary(g, "op", DG_BINARY_DIV, a, foreign);
  expect_diag(g, "div by a tensor of another graph", DG_ERROR_INVALID_ARGUMENT,
              "b", NULL);
  dg_graph_destroy(g);
  dg_graph_destroy(other);
  CHECK(dg_graph_binary(NULL, "op", DG_BINARY_ADD, a, a).id == 0,
        "binary on a NULL graph returns no tensor");
  CHECK(strcmp(dg_binary_fn_name(DG_BINARY_MOD), "mod") == 0 &&
            strcmp(dg_binary_fn_name(DG_BINARY_PRELU), "prelu") == 0 &&
            strcmp(dg_binary_fn_name(DG_BINARY_COUNT_), "?") == 0 &&
            strcmp(dg_binary_fn_name(0), "?") == 0,
        "dg_binary_fn_name: mod, prelu, ? for COUNT_ and 0");
}

int main(int argc, char **argv) {
  if (!diff_start(argc, argv))
    return t_exit();
  for (int d = 0; d < dg_context_device_count(ctx); d++) {
    dg_device_info info;
    dg_context_device_info(ctx, d, &info);
    printf("# device %d: %s\n", d, info.name);
  }
  dg_dtype floats[2] = {DG_DTYPE_F32, DG_DTYPE_F16};
  for (int f = 0; f < 2; f++) {
    for (int fn = DG_BINARY_ADD; fn < DG_BINARY_COUNT_; fn++)
      fn_cases(fn, false, floats[f]);
    fn_cases(DG_BINARY_ADD, true, floats[f]);
    special_values(floats[f]);
  }
  nan_values();
  squares();
  large();
  bad_inputs();
  dg_context_destroy(ctx);
  return t_exit();
}
