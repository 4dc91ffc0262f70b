/* The bool-valued ops and the arg reductions on every device against the
 * float64 reference: every compare function (the five comparisons in f32,
 * f16, i32 and i64; and, or, xor, not on bool; isnan and the isinfs on
 * floats sprinkled with NaN and infinities), where in every data dtype
 * with three-way broadcasting, and arg_reduce (max, min; first and last
 * index of ties, keepdims or not, negative axes) on values drawn from a
 * few levels so that ties are common. Random shapes of rank 1-4 with
 * broadcasting on either side. Hand-made cases check the answers without
 * the reference (tie order, infinities, i64 beyond 2^53), and the
 * builder's errors for bad inputs. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "differential.h"

static const dg_dtype numeric[4] = {DG_DTYPE_F32, DG_DTYPE_F16, DG_DTYPE_I32,
                                    DG_DTYPE_I64};

static int fn_inputs(int fn) { return fn >= DG_COMPARE_NOT ? 1 : 2; }

/* Shapes: same, a scalar on one side, or random broadcasting (a suffix of
 * the dims with some set to 1) on either side; count operands of dtype
 * t (where's first one is bool). */
static void shapes(int kind, dg_dtype t, int count, dg_tensor_desc *d) {
  int rank = t_range(1, 4);
  int64_t dims[DG_MAX_RANK];
  random_dims(rank, dims, 1, 6);
  for (int k = 0; k < count; k++)
    d[k] = desc_of(t, rank, dims);
  if (kind == 0 || count < 2)
    return;
  int rb = kind == 1 ? 1 : t_range(1, rank);
  int64_t bd[DG_MAX_RANK];
  for (int i = 0; i < rb; i++)
    bd[i] = kind == 1 ? 1 : t_range(0, 2) ? dims[rank - rb + i] : 1;
  d[t_range(0, count - 1)] = desc_of(t, rb, bd);
}

static dg_tensor make_compare(dg_graph *g, dg_tensor *in, void *arg) {
  int fn = *(int *)arg;
  switch (fn) {
  case DG_COMPARE_NOT:
    return dg_graph_not(g, "op", in[0]);
  case DG_COMPARE_ISNAN:
    return dg_graph_isnan(g, "op", in[0]);
  case DG_COMPARE_ISINF:
    return dg_graph_isinf(g, "op", in[0], 1, 1);
  case DG_COMPARE_ISPOSINF:
    return dg_graph_isinf(g, "op", in[0], 1, 0);
  case DG_COMPARE_ISNEGINF:
    return dg_graph_isinf(g, "op", in[0], 0, 1);
  default:
    return dg_graph_compare(g, "op", fn, in[0], in[1]);
  }
}

static void compare_cases(int fn, dg_dtype t) {
  op_stats st = {0};
  fill_span = 2.0f;
  fill_levels = 4; /* ties: equal is true often enough to matter */
  fill_specials = fn >= DG_COMPARE_ISNAN ? 0.3 : 0;
  for (int c = 0; c < CASES; c++) {
    dg_tensor_desc d[2];
    shapes(c % 3, t, fn_inputs(fn), d);
    char label[64];
    snprintf(label, sizeof label, "%s %s case %d", dg_compare_fn_name(fn),
             dg_dtype_name(t), c);
    run_case(&st, label, fn_inputs(fn), d, make_compare, &fn);
  }
  fill_levels = 0;
  fill_specials = 0;
  char what[64];
  snprintf(what, sizeof what, "%s %s", dg_compare_fn_name(fn),
           dg_dtype_name(t));
  report(what, &st);
}

static dg_tensor make_where(dg_graph *g, dg_tensor *in, void *arg) {
  (void)arg;
  return dg_graph_where(g, "op", in[0], in[1], in[2]);
}

static void where_cases(dg_dtype t) {
  op_stats st = {0};
  fill_span = 1.0f;
  for (int c = 0; c < CASES; c++) {
    dg_tensor_desc d[3];
    shapes(c % 3, t, 3, d);
    d[0].dtype = DG_DTYPE_BOOL;
    char label[64];
    snprintf(label, sizeof label, "where %s case %d", dg_dtype_name(t), c);
    run_case(&st, label, 3, d, make_where, NULL);
  }
  char what[32];
  snprintf(what, sizeof what, "where %s", dg_dtype_name(t));
  report(what, &st);
}

typedef struct arg_case {
  dg_arg_fn fn;
  int axis, keepdims, last;
} arg_case;

static dg_tensor make_arg(dg_graph *g, dg_tensor *in, void *arg) {
  arg_case *a = arg;
  return dg_graph_arg_reduce(g, "op", a->fn, in[0], a->axis, a->keepdims,
                             a->last);
}

static void arg_cases(dg_arg_fn fn, dg_dtype t) {
  op_stats st = {0};
  fill_span = 1.0f;
  fill_levels = 2; /* five values: most lines hold ties */
  for (int c = 0; c < CASES; c++) {
    dg_tensor_desc d;
    shapes(0, t, 1, &d);
    arg_case a = {fn, t_range(-d.rank, d.rank - 1), c % 2, (c / 2) % 2};
    char label[96];
    snprintf(label, sizeof label, "arg %s %s axis %d keepdims %d last %d",
             fn == DG_ARG_MAX ? "max" : "min", dg_dtype_name(t), a.axis,
             a.keepdims, a.last);
    run_case(&st, label, 1, &d, make_arg, &a);
  }
  fill_levels = 0;
  char what[48];
  snprintf(what, sizeof what, "arg_reduce %s %s",
           fn == DG_ARG_MAX ? "max" : "min", dg_dtype_name(t));
  report(what, &st);
}

/* Data movement moves bool and i64 bytes as any other dtype: each of
 * concat, reshape, transpose, slice, pad, expand and gather on random
 * shapes (one node each, as run_case checks the graph's last node). */
enum {
  MV_CONCAT,
  MV_RESHAPE,
  MV_TRANSPOSE,
  MV_SLICE,
  MV_PAD,
  MV_EXPAND,
  MV_GATHER,
  MV_COUNT
};
static const char *const mv_names[MV_COUNT] = {
    "concat", "reshape", "transpose", "slice", "pad", "expand", "gather"};

typedef struct move_arg {
  int kind, axis, rank;
  int32_t perm[DG_MAX_RANK];
  int64_t a[2 * DG_MAX_RANK], b[DG_MAX_RANK], dims[DG_MAX_RANK];
} move_arg;

static dg_tensor make_move(dg_graph *g, dg_tensor *in, void *arg) {
  move_arg *m = arg;
  int64_t flat = -1;
  int32_t idx[3] = {0, -1, 0};
  dg_tensor_desc id = {.dtype = DG_DTYPE_I32, .rank = 1, .dims = {3}};
  switch (m->kind) {
  case MV_CONCAT:
    return dg_graph_concat(g, "op", in, 2, m->axis);
  case MV_RESHAPE:
    return dg_graph_reshape(g, "op", in[0], 1, &flat);
  case MV_TRANSPOSE:
    return dg_graph_transpose(g, "op", in[0], m->perm);
  case MV_SLICE:
    return dg_graph_slice(g, "op", in[0], m->a, m->b, NULL);
  case MV_PAD: /* the constant 3.7: 4 as i64, true as bool */
    return dg_graph_pad(g, "op", in[0], m->a,
                        m->axis % 2 ? DG_PAD_EDGE : DG_PAD_CONSTANT, 3.7f);
  case MV_EXPAND:
    return dg_graph_expand(g, "op", in[0], m->rank, m->dims);
  default:
    return dg_graph_gather(g, "op", in[0],
                           dg_graph_constant(g, "idx", &id, idx, 0), m->axis);
  }
}

static void move_cases(dg_dtype t) {
  op_stats st = {0};
  for (int c = 0; c < 4 * MV_COUNT; c++) {
    dg_tensor_desc d[2];
    shapes(0, t, 2, d);
    int r = d[0].rank;
    move_arg m = {.kind = c % MV_COUNT, .axis = t_range(0, r - 1), .rank = r};
    if (m.kind == MV_CONCAT)
      d[1].dims[m.axis] = t_range(1, 5);
    for (int k = 0; k < r; k++) {
      m.perm[k] = r - 1 - k; /* reversed axes */
      m.a[k] = m.kind == MV_SLICE ? t_range(0, (int)d[0].dims[k] - 1)
                                  : t_range(0, 2); /* slice start, pad */
      m.a[r + k] = t_range(0, 2);
      if (m.kind == MV_SLICE) /* a non-empty end */
        m.b[k] = m.a[k] + t_range(1, (int)(d[0].dims[k] - m.a[k]));
      m.dims[k] = d[0].dims[k];
    }
    d[0].dims[r - 1] = m.kind == MV_EXPAND ? 1 : d[0].dims[r - 1];
    m.dims[r - 1] = m.kind == MV_EXPAND ? t_range(2, 5) : m.dims[r - 1];
    char label[64];
    snprintf(label, sizeof label, "%s %s", mv_names[m.kind], dg_dtype_name(t));
    run_case(&st, label, m.kind == MV_CONCAT ? 2 : 1, d, make_move, &m);
  }
  char what[80];
  snprintf(what, sizeof what,
           "concat, reshape, transpose, slice, pad, expand, gather of %s",
           dg_dtype_name(t));
  report(what, &st);
  if (t != DG_DTYPE_I64)
    return;
  /* An i64 pad constant beyond the i32 range: exact where it runs (the
   * CPU, OpenCL's two words); Vulkan, whose push constants hold one
   * word, declines it naming the value. */
  int64_t xv[3] = {-5, 6, 7}, yv[5];
  dg_tensor_desc d = {.dtype = DG_DTYPE_I64, .rank = 1, .dims = {3}};
  dg_graph *g = dg_graph_create(ctx, "t");
  dg_graph_output(g, "y",
                  dg_graph_pad(g, "op", dg_graph_input(g, "x", &d),
                               (int64_t[]){1, 1}, DG_PAD_CONSTANT, 0x1p40f),
                  DG_LAYOUT_NCHW);
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    dg_compile_options o = {.devices = &dev, .device_count = 1};
    dg_session *s = NULL;
    dg_diagnostic diag;
    dg_status rc = dg_graph_compile(g, &o, &s, &diag);
    if (info.kind == DG_DEVICE_VULKAN) {
      CHECK(rc == DG_ERROR_UNSUPPORTED && strstr(diag.message, "i32 range"),
            "pad of i64 with 2^40 on device %d (%s) is declined with its "
            "reason: %s",
            dev, info.name, rc ? diag.message : "compiled");
    } else {
      if (rc == DG_OK)
        rc = dg_session_run(s, &(dg_binding){"x", xv, sizeof xv}, 1,
                            &(dg_binding){"y", yv, sizeof yv}, 1, &diag);
      int64_t big = INT64_C(1) << 40;
      CHECK(rc == DG_OK && yv[0] == big && yv[1] == -5 && yv[3] == 7 &&
                yv[4] == big,
            "pad of i64 with 2^40 on device %d (%s): %s", dev, info.name,
            rc ? diag.message : "as written");
    }
    dg_session_destroy(s);
  }
  dg_graph_destroy(g);
}

/* cast to and from bool and i64 (every pair with one of them but i64 ->
 * f16, whose values beyond 2^33 are past f16's range): values from a few
 * levels, so that zeros (false), truncation (-1.5 -> -1) and i64 -> i32
 * saturation (k * 2^33) all occur. Vulkan's cast.comp has no bool or i64
 * modules: it declines them, naming the dtype. */
static dg_tensor make_cast(dg_graph *g, dg_tensor *in, void *arg) {
  return dg_graph_cast(g, "op", in[0], *(dg_dtype *)arg);
}

static void cast_cases(void) {
  static const dg_dtype all[5] = {DG_DTYPE_F32, DG_DTYPE_F16, DG_DTYPE_I32,
                                  DG_DTYPE_I64, DG_DTYPE_BOOL};
  declines_allowed = DG_DEVICE_NPU | DG_DEVICE_VULKAN;
  fill_span = 3.0f;
  fill_levels = 2;
  for (int f = 0; f < 5; f++)
    for (int t = 0; t < 5; t++) {
      bool ours = all[f] == DG_DTYPE_I64 || all[f] == DG_DTYPE_BOOL ||
                  all[t] == DG_DTYPE_I64 || all[t] == DG_DTYPE_BOOL;
      if (!ours || f == t || (all[f] == DG_DTYPE_I64 && all[t] == DG_DTYPE_F16))
        continue;
      op_stats st = {0};
      dg_dtype to = all[t];
      for (int c = 0; c < CASES / 4; c++) {
        dg_tensor_desc d;
        shapes(0, all[f], 1, &d);
        char label[48];
        snprintf(label, sizeof label, "cast %s to %s", dg_dtype_name(all[f]),
                 dg_dtype_name(to));
        run_case(&st, label, 1, &d, make_cast, &to);
      }
      char what[48];
      snprintf(what, sizeof what, "cast %s to %s", dg_dtype_name(all[f]),
               dg_dtype_name(to));
      report(what, &st);
    }
  fill_levels = 0;
  declines_allowed = DG_DEVICE_NPU;
}

/* ---- hand-made cases: answers written down, not from the reference ---- */

/* Runs a graph with one output on every device; check() judges it. */
typedef bool (*check_fn)(const void *y, char *why, size_t len);

static void run_fixed(dg_graph *g, const char *what, const dg_binding *in,
                      int nin, size_t ybytes, check_fn check) {
  void *y = malloc(ybytes);
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    dg_compile_options o = {.devices = &dev, .device_count = 1};
    dg_session *s = NULL;
    dg_diagnostic diag;
    dg_status rc = dg_graph_compile(g, &o, &s, &diag);
    if (rc == DG_ERROR_UNSUPPORTED && (info.kind & declines_allowed)) {
      printf("# %s declined on device %d (%s): %s\n", what, dev, info.name,
             diag.message);
      continue;
    }
    if (rc == DG_OK)
      rc = dg_session_run(s, in, nin, &(dg_binding){"y", y, ybytes}, 1, &diag);
    char why[160] = "";
    bool ok = rc == DG_OK && check(y, why, sizeof why);
    CHECK(ok, "%s on device %d (%s): %s", what, dev, info.name,
          rc       ? diag.message
          : why[0] ? why
                   : "as written");
    dg_session_destroy(s);
  }
  free(y);
}

static bool want_bytes(const uint8_t *y, const uint8_t *w, int n, char *why,
                       size_t len) {
  for (int i = 0; i < n; i++)
    if (y[i] != w[i]) {
      snprintf(why, len, "element %d is %d, want %d", i, y[i], w[i]);
      return false;
    }
  return true;
}

/* isnan, isinf and equal on NaN and infinities. */
static const uint8_t want_isnan[6] = {1, 0, 0, 0, 0, 0};
static const uint8_t want_isinf[6] = {0, 1, 1, 0, 0, 0};
static const uint8_t want_pos[6] = {0, 1, 0, 0, 0, 0};
static const uint8_t want_neg[6] = {0, 0, 1, 0, 0, 0};
static const uint8_t want_eq[6] = {0, 1, 1, 1, 1, 1}; /* NaN != NaN */
static const uint8_t *want_now;
static bool check_want6(const void *y, char *why, size_t len) {
  return want_bytes(y, want_now, 6, why, len);
}

static void special_values(dg_dtype t) {
  float v[6] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 65504.0f};
  uint16_t h[6];
  for (int i = 0; i < 6; i++)
    h[i] = dg_f32_to_f16(v[i]);
  bool f16 = t == DG_DTYPE_F16;
  dg_tensor_desc d = {.dtype = t, .rank = 1, .dims = {6}};
  dg_binding in = {"x", f16 ? (void *)h : (void *)v, f16 ? sizeof h : sizeof v};
  struct {
    int fn;
    const uint8_t *want;
  } fs[5] = {{DG_COMPARE_ISNAN, want_isnan},
             {DG_COMPARE_ISINF, want_isinf},
             {DG_COMPARE_ISPOSINF, want_pos},
             {DG_COMPARE_ISNEGINF, want_neg},
             {DG_COMPARE_EQUAL, want_eq}};
  for (int f = 0; f < 5; f++) {
    dg_graph *g = dg_graph_create(ctx, "special");
    dg_tensor x = dg_graph_input(g, "x", &d);
    dg_tensor ins[2] = {x, x};
    dg_graph_output(g, "y", make_compare(g, ins, &fs[f].fn), DG_LAYOUT_NCHW);
    char what[64];
    snprintf(what, sizeof what, "%s %s of NaN, +-inf, +-0, 65504",
             dg_compare_fn_name(fs[f].fn), dg_dtype_name(t));
    want_now = fs[f].want;
    run_fixed(g, what, &in, 1, 6, check_want6);
    dg_graph_destroy(g);
  }
}

/* i64 beyond 2^53, where doubles (and so the reference) cannot tell the
 * values apart: the comparison must still be exact. */
static bool check_big(const void *y, char *why, size_t len) {
  static const uint8_t w[3] = {1, 0, 0};
  return want_bytes(y, w, 3, why, len);
}

static void big_i64(void) {
  int64_t a[3] = {(INT64_C(1) << 60), (INT64_C(1) << 60) + 1, INT64_MIN};
  int64_t b[3] = {(INT64_C(1) << 60) + 1, (INT64_C(1) << 60), INT64_MIN};
  dg_tensor_desc d = {.dtype = DG_DTYPE_I64, .rank = 1, .dims = {3}};
  dg_graph *g = dg_graph_create(ctx, "big");
  dg_graph_output(g, "y",
                  dg_graph_compare(g, "op", DG_COMPARE_LESS,
                                   dg_graph_input(g, "a", &d),
                                   dg_graph_input(g, "b", &d)),
                  DG_LAYOUT_NCHW);
  dg_binding in[2] = {{"a", a, sizeof a}, {"b", b, sizeof b}};
  run_fixed(g, "less of i64 near 2^60 (one apart) and of INT64_MIN", in, 2, 3,
            check_big);
  dg_graph_destroy(g);
}

/* argmax / argmin of [[3, 1, 3, 1], [2, 2, 2, 2]] along axis 1: first
 * and last index of the ties, and a NaN first in a line. */
static int64_t want_arg[2];
static bool check_arg(const void *y, char *why, size_t len) {
  const int64_t *v = y;
  if (v[0] == want_arg[0] && v[1] == want_arg[1])
    return true;
  snprintf(why, len, "got [%lld, %lld], want [%lld, %lld]", (long long)v[0],
           (long long)v[1], (long long)want_arg[0], (long long)want_arg[1]);
  return false;
}

static void arg_ties(void) {
  float x[8] = {3, 1, 3, 1, 2, 2, 2, 2};
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {2, 4}};
  static const int64_t want[2][2][2] = {{{0, 0}, {2, 3}}, {{1, 0}, {3, 3}}};
  for (int fn = DG_ARG_MAX; fn <= DG_ARG_MIN; fn++)
    for (int last = 0; last < 2; last++) {
      dg_graph *g = dg_graph_create(ctx, "ties");
      dg_graph_output(g, "y",
                      dg_graph_arg_reduce(
                          g, "op", fn, dg_graph_input(g, "x", &d), -1, 0, last),
                      DG_LAYOUT_NCHW);
      want_arg[0] = want[fn - 1][last][0];
      want_arg[1] = want[fn - 1][last][1];
      char what[64];
      snprintf(what, sizeof what, "arg%s of ties, %s index",
               fn == DG_ARG_MAX ? "max" : "min", last ? "last" : "first");
      run_fixed(g, what, &(dg_binding){"x", x, sizeof x}, 1, 16, check_arg);
      dg_graph_destroy(g);
    }
}

/* dg_session_verify over a chain of the three ops (bool and i64 values
 * between nodes, an i64 graph output): every node checked, all exact; and
 * with DG_TEST_CORRUPT_NODE (the CPU flips a bit of that node's last
 * output byte) the damaged bool of "not" is found and named. */
static void verify_chain(void) {
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {3, 5}};
  float a[15], b[15];
  for (int i = 0; i < 15; i++) {
    a[i] = (float)t_range(-2, 2);
    b[i] = (float)t_range(-2, 2);
  }
  dg_graph *g = dg_graph_create(ctx, "chain");
  dg_tensor ta = dg_graph_input(g, "a", &d), tb = dg_graph_input(g, "b", &d);
  dg_tensor lt = dg_graph_compare(g, "lt", DG_COMPARE_LESS, ta, tb);
  dg_tensor w = dg_graph_where(g, "where", dg_graph_not(g, "not", lt), ta, tb);
  dg_graph_output(g, "y", dg_graph_arg_reduce(g, "arg", DG_ARG_MAX, w, 1, 1, 0),
                  DG_LAYOUT_NCHW);
  dg_binding in[2] = {{"a", a, sizeof a}, {"b", b, sizeof b}};
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    dg_compile_options o = {.devices = &dev, .device_count = 1};
    dg_session *s = NULL;
    dg_diagnostic diag;
    dg_verify_report rep;
    dg_status rc = dg_graph_compile(g, &o, &s, &diag);
    if (rc == DG_OK)
      rc = dg_session_verify(s, in, 2, &rep);
    CHECK(rc == DG_OK && rep.ok && rep.nodes_checked == 4 &&
              rep.max_lsb_error == 0,
          "verify of less, not, where, arg_reduce on device %d: %s, %d nodes",
          dev,
          rc       ? diag.message
          : rep.ok ? "ok"
                   : "differs",
          rc ? 0 : rep.nodes_checked);
    dg_session_destroy(s);
  }
  setenv("DG_TEST_CORRUPT_NODE", "not", 1);
  int cpu = 0; /* the context lists the CPU first */
  dg_compile_options o = {.devices = &cpu, .device_count = 1};
  dg_session *s = NULL;
  dg_diagnostic diag;
  dg_verify_report rep = {0};
  dg_status rc = dg_graph_compile(g, &o, &s, &diag);
  dg_status vs = rc == DG_OK ? dg_session_verify(s, in, 2, &rep) : rc;
  CHECK(vs == DG_ERROR_MISMATCH && !rep.ok && !strcmp(rep.node_name, "not") &&
            rep.max_lsb_error > 0,
        "verify names the corrupted bool output of 'not' on the CPU (%s, "
        "node '%s', %lld LSB)",
        dg_status_string(vs), rep.node_name, (long long)rep.max_lsb_error);
  dg_session_destroy(s);
  unsetenv("DG_TEST_CORRUPT_NODE");
  dg_graph_destroy(g);
}

/* ---- bad inputs ---- */

static void bad_inputs(void) {
  dg_tensor_desc f = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {3, 4}};
  dg_tensor_desc f5 = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {3, 5}};
  dg_tensor_desc i = {.dtype = DG_DTYPE_I32, .rank = 2, .dims = {3, 4}};
  dg_tensor_desc l = {.dtype = DG_DTYPE_I64, .rank = 2, .dims = {3, 4}};
  dg_tensor_desc bo = {.dtype = DG_DTYPE_BOOL, .rank = 2, .dims = {3, 4}};
  /* Unknown functions, and functions of the other arity. */
  int fns[4] = {0, DG_COMPARE_COUNT_, 999, DG_COMPARE_NOT};
  for (int k = 0; k < 4; k++) {
    dg_graph *g = dg_graph_create(ctx, "t");
    dg_tensor a = dg_graph_input(g, "a", &f);
    dg_tensor y = dg_graph_compare(g, "op", fns[k], a, a);
    char what[64], num[16];
    snprintf(what, sizeof what, "compare fn %d", fns[k]);
    snprintf(num, sizeof num, "%d", fns[k]);
    CHECK(y.id == 0, "%s returns no tensor", what);
    expect_diag(g, what, DG_ERROR_INVALID_ARGUMENT, "fn", num);
    dg_graph_destroy(g);
  }
  struct {
    const char *what;
    int fn;
    const dg_tensor_desc *a, *b;
    dg_status st;
    const char *field;
  } bad[] = {
      {"less of f32 and i32", DG_COMPARE_LESS, &f, &i, DG_ERROR_INVALID_DTYPE,
       "b"},
      {"equal of i32 and i64", DG_COMPARE_EQUAL, &i, &l, DG_ERROR_INVALID_DTYPE,
       "b"},
      {"greater of bools", DG_COMPARE_GREATER, &bo, &bo, DG_ERROR_INVALID_DTYPE,
       "a"},
      {"and of floats", DG_COMPARE_AND, &f, &f, DG_ERROR_INVALID_DTYPE, "a"},
      {"or of bool and f32", DG_COMPARE_OR, &bo, &f, DG_ERROR_INVALID_DTYPE,
       "b"},
      {"less of [3,4] and [3,5]", DG_COMPARE_LESS, &f, &f5,
       DG_ERROR_INVALID_SHAPE, "b"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    dg_graph *g = dg_graph_create(ctx, "t");
    dg_tensor y =
        dg_graph_compare(g, "op", bad[k].fn, dg_graph_input(g, "a", bad[k].a),
                         dg_graph_input(g, "b", bad[k].b));
    CHECK(y.id == 0, "%s returns no tensor", bad[k].what);
    expect_diag(g, bad[k].what, bad[k].st, bad[k].field, NULL);
    dg_graph_destroy(g);
  }
  dg_graph *g = dg_graph_create(ctx, "t");
  dg_graph_not(g, "op", dg_graph_input(g, "x", &f));
  expect_diag(g, "not of f32", DG_ERROR_INVALID_DTYPE, "x", "bool");
  dg_graph_destroy(g);
  g = dg_graph_create(ctx, "t");
  dg_graph_isnan(g, "op", dg_graph_input(g, "x", &i));
  expect_diag(g, "isnan of i32", DG_ERROR_INVALID_DTYPE, "x", NULL);
  dg_graph_destroy(g);
  g = dg_graph_create(ctx, "t");
  dg_graph_isinf(g, "op", dg_graph_input(g, "x", &f), 0, 0);
  expect_diag(g, "isinf detecting no sign", DG_ERROR_INVALID_ARGUMENT,
              "detect_positive", NULL);
  dg_graph_destroy(g);
  /* bool into a float op. */
  g = dg_graph_create(ctx, "t");
  dg_tensor bt = dg_graph_input(g, "x", &bo);
  dg_graph_binary(g, "op", DG_BINARY_ADD, bt, bt);
  expect_diag(g, "add of bools", DG_ERROR_INVALID_DTYPE, "a", "bool");
  dg_graph_destroy(g);
  g = dg_graph_create(ctx, "t");
  dg_graph_sigmoid(g, "op", dg_graph_input(g, "x", &l));
  expect_diag(g, "sigmoid of i64", DG_ERROR_INVALID_DTYPE, "x", "i64");
  dg_graph_destroy(g);
  /* Quantisation on bool and i64 descriptors. */
  dg_tensor_desc qb = bo, ql = l;
  qb.quant.scale = 0.5f;
  ql.quant.zero_point = 3;
  g = dg_graph_create(ctx, "t");
  CHECK(dg_graph_input(g, "x", &qb).id == 0, "a bool input with a scale "
                                             "returns no tensor");
  expect_diag(g, "bool input with quant.scale", DG_ERROR_INVALID_ARGUMENT,
              "quant", NULL);
  dg_graph_destroy(g);
  g = dg_graph_create(ctx, "t");
  int64_t data[12] = {0};
  dg_graph_constant(g, "c", &ql, data, 0);
  expect_diag(g, "i64 constant with quant.zero_point",
              DG_ERROR_INVALID_ARGUMENT, "quant", NULL);
  dg_graph_destroy(g);
  /* where. */
  g = dg_graph_create(ctx, "t");
  dg_graph_where(g, "op", dg_graph_input(g, "c", &f),
                 dg_graph_input(g, "x", &f), dg_graph_input(g, "y", &f));
  expect_diag(g, "where with an f32 condition", DG_ERROR_INVALID_DTYPE, "cond",
              NULL);
  dg_graph_destroy(g);
  g = dg_graph_create(ctx, "t");
  dg_graph_where(g, "op", dg_graph_input(g, "c", &bo),
                 dg_graph_input(g, "x", &f), dg_graph_input(g, "y", &i));
  expect_diag(g, "where of f32 and i32", DG_ERROR_INVALID_DTYPE, "y", NULL);
  dg_graph_destroy(g);
  g = dg_graph_create(ctx, "t");
  dg_graph_where(g, "op", dg_graph_input(g, "c", &bo),
                 dg_graph_input(g, "x", &bo), dg_graph_input(g, "y", &bo));
  expect_diag(g, "where of bools", DG_ERROR_INVALID_DTYPE, "x", NULL);
  dg_graph_destroy(g);
  g = dg_graph_create(ctx, "t");
  dg_graph_where(g, "op", dg_graph_input(g, "c", &bo),
                 dg_graph_input(g, "x", &f5), dg_graph_input(g, "y", &f));
  expect_diag(g, "where of [3,4] and [3,5]", DG_ERROR_INVALID_SHAPE, "x", NULL);
  dg_graph_destroy(g);
  /* arg_reduce. */
  int axes[2] = {2, -3};
  for (int k = 0; k < 2; k++) {
    g = dg_graph_create(ctx, "t");
    dg_graph_arg_reduce(g, "op", DG_ARG_MAX, dg_graph_input(g, "x", &f),
                        axes[k], 1, 0);
    char what[48], num[16];
    snprintf(what, sizeof what, "arg_reduce axis %d of rank 2", axes[k]);
    snprintf(num, sizeof num, "%d", axes[k]);
    expect_diag(g, what, DG_ERROR_INVALID_ARGUMENT, "axis", num);
    dg_graph_destroy(g);
  }
  g = dg_graph_create(ctx, "t");
  dg_graph_arg_reduce(g, "op", DG_ARG_COUNT_, dg_graph_input(g, "x", &f), 0, 1,
                      0);
  expect_diag(g, "arg_reduce fn COUNT_", DG_ERROR_INVALID_ARGUMENT, "fn", NULL);
  dg_graph_destroy(g);
  g = dg_graph_create(ctx, "t");
  dg_graph_arg_reduce(g, "op", DG_ARG_MIN, dg_graph_input(g, "x", &bo), 0, 1,
                      0);
  expect_diag(g, "arg_reduce of bools", DG_ERROR_INVALID_DTYPE, "x", NULL);
  dg_graph_destroy(g);
  dg_tensor none = DG_TENSOR_NONE;
  CHECK(dg_graph_compare(NULL, "op", DG_COMPARE_LESS, none, none).id == 0 &&
            dg_graph_where(NULL, "op", none, none, none).id == 0 &&
            dg_graph_arg_reduce(NULL, "op", DG_ARG_MAX, none, 0, 1, 0).id == 0,
        "compare, where, arg_reduce on a NULL graph return no tensor");
  CHECK(strcmp(dg_compare_fn_name(DG_COMPARE_LESS_EQUAL), "less_equal") == 0 &&
            strcmp(dg_compare_fn_name(DG_COMPARE_ISNEGINF), "isneginf") == 0 &&
            strcmp(dg_compare_fn_name(DG_COMPARE_COUNT_), "?") == 0 &&
            strcmp(dg_compare_fn_name(0), "?") == 0,
        "dg_compare_fn_name: less_equal, isneginf, ? for COUNT_ and 0");
  CHECK(strcmp(dg_dtype_name(DG_DTYPE_BOOL), "bool") == 0 &&
            strcmp(dg_dtype_name(DG_DTYPE_I64), "i64") == 0 &&
            dg_dtype_size(DG_DTYPE_BOOL) == 1 &&
            dg_dtype_size(DG_DTYPE_I64) == 8,
        "bool and i64: names and sizes");
}

int main(int argc, char **argv) {
  if (!diff_start(argc, argv))
    return t_exit();
  for (int d = 0; d < dg_context_device_count(ctx); d++) {
    dg_device_info info;
    dg_context_device_info(ctx, d, &info);
    printf("# device %d: %s\n", d, info.name);
  }
  for (int fn = DG_COMPARE_EQUAL; fn <= DG_COMPARE_GREATER_EQUAL; fn++)
    for (int t = 0; t < 4; t++)
      compare_cases(fn, numeric[t]);
  for (int fn = DG_COMPARE_AND; fn <= DG_COMPARE_NOT; fn++)
    compare_cases(fn, DG_DTYPE_BOOL);
  for (int fn = DG_COMPARE_ISNAN; fn < DG_COMPARE_COUNT_; fn++)
    for (int t = 0; t < 2; t++)
      compare_cases(fn, numeric[t]);
  for (int t = 0; t < 4; t++)
    where_cases(numeric[t]);
  for (int fn = DG_ARG_MAX; fn <= DG_ARG_MIN; fn++)
    for (int t = 0; t < 4; t++)
      arg_cases(fn, numeric[t]);
  move_cases(DG_DTYPE_BOOL);
  move_cases(DG_DTYPE_I64);
  cast_cases();
  special_values(DG_DTYPE_F32);
  special_values(DG_DTYPE_F16);
  big_i64();
  arg_ties();
  verify_chain();
  bad_inputs();
  dg_context_destroy(ctx);
  return t_exit();
}
