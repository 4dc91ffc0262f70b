/* Data movement (transpose, slice, pad, expand, gather): every op x dtype
 * on seeded random shapes, on every device of the context, against the
 * reference kernels of src/ops/movement.c (integers bit-exact). Then
 * small cases with answers written out by hand, which check the reference
 * itself, and the bad inputs each builder refuses, naming the field. */
#include "differential.h"
#include "ops/view.h"
#ifdef DG_TARGET_VULKAN
#include "targets/vulkan/vulkan_target.h"
#endif

static const dg_dtype dtypes[5] = {DG_DTYPE_F32, DG_DTYPE_F16, DG_DTYPE_I8,
                                   DG_DTYPE_U8, DG_DTYPE_I32};

typedef struct mv_arg {
  dg_op op;
  int32_t perm[DG_MAX_RANK];
  bool perm_null;
  int64_t starts[DG_MAX_RANK], ends[DG_MAX_RANK], steps[DG_MAX_RANK];
  int64_t pads[2 * DG_MAX_RANK];
  dg_pad_mode mode;
  float value;
  int rank;
  int64_t dims[DG_MAX_RANK];
  dg_tensor_desc idesc;
  int32_t idx[64];
  int32_t axis;
} mv_arg;

static dg_tensor make_mv(dg_graph *g, dg_tensor *in, void *arg) {
  mv_arg *a = arg;
  switch (a->op) {
  case DG_OP_TRANSPOSE:
    return dg_graph_transpose(g, "t", in[0], a->perm_null ? NULL : a->perm);
  case DG_OP_SLICE:
    return dg_graph_slice(g, "s", in[0], a->starts, a->ends, a->steps);
  case DG_OP_PAD:
    return dg_graph_pad(g, "p", in[0], a->pads, a->mode, a->value);
  case DG_OP_EXPAND:
    return dg_graph_expand(g, "e", in[0], a->rank, a->dims);
  default:
    return dg_graph_gather(g, "g", in[0],
                           dg_graph_constant(g, "idx", &a->idesc, a->idx, 0),
                           a->axis);
  }
}

/* A random case of op on x (rank r, dims xd); false when the random draw
 * does not fit (the caller draws again). */
static void draw(mv_arg *a, int r, int64_t *xd) {
  switch (a->op) {
  case DG_OP_TRANSPOSE:
    a->perm_null = t_range(0, 5) == 0;
    for (int d = 0; d < r; d++)
      a->perm[d] = d;
    for (int d = r - 1; d > 0; d--) { /* Fisher-Yates */
      int k = t_range(0, d);
      int32_t t = a->perm[d];
      a->perm[d] = a->perm[k];
      a->perm[k] = t;
    }
    break;
  case DG_OP_SLICE:
    for (int d = 0; d < r; d++) {
      int64_t n = xd[d];
      int64_t step = t_range(1, 3) * (t_range(0, 2) == 0 ? -1 : 1);
      if (t_range(0, 9) == 0)
        step = step > 0 ? 1000 : -1000; /* takes one element */
      /* A first index inside the axis, written from either end, and an
       * end beyond it in the step's direction (sometimes far out, which
       * clamps). */
      int64_t first = t_range(0, (int)n - 1);
      a->starts[d] = t_range(0, 1) ? first : first - n;
      int64_t end = step > 0 ? t_range((int)first + 1, (int)n + 2)
                             : t_range(-1, (int)first - 1);
      if (t_range(0, 7) == 0)
        end = step > 0 ? INT64_MAX : INT64_MIN;
      else if (end == -1)
        end = -n - 1 - t_range(0, 3); /* before index 0: clamps to -1 */
      else if (end >= 0 && end < n && t_range(0, 1))
        end -= n; /* the same end counted from the back */
      a->ends[d] = end;
      a->steps[d] = step;
    }
    break;
  case DG_OP_PAD:
    a->mode = (dg_pad_mode)t_range(0, 3);
    a->value = t_uniform(-1, 1);
    for (int i = 0; i < 2 * r; i++) {
      int64_t n = xd[i % r];
      int hi = a->mode == DG_PAD_REFLECT ? (int)(n - 1 < 3 ? n - 1 : 3) : 3;
      if (a->mode == DG_PAD_WRAP && t_range(0, 3) == 0)
        hi = (int)n + 2; /* wrap past a whole period */
      a->pads[i] = t_range(0, hi);
    }
    break;
  case DG_OP_EXPAND: {
    int lead = t_range(0, DG_MAX_RANK - r);
    a->rank = r + lead;
    for (int d = 0; d < a->rank; d++) {
      int64_t xdim = d < lead ? 1 : xd[d - lead];
      /* A 1 of x grows; any dim may be written as 1 (keep x's). */
      a->dims[d] = xdim == 1 ? t_range(1, 4) : t_range(0, 3) ? xdim : 1;
    }
    /* Now and then the target is shorter than x (numpy allows it). */
    if (lead == 0 && r > 1 && t_range(0, 4) == 0) {
      a->rank = r - 1;
      memmove(a->dims, a->dims + 1, sizeof(int64_t) * (size_t)a->rank);
    }
    break;
  }
  default: {
    a->axis = t_range(0, r - 1);
    int ri = t_range(0, DG_MAX_RANK + 1 - r < 2 ? DG_MAX_RANK + 1 - r : 2);
    int64_t n = xd[a->axis], count = 1;
    a->idesc = (dg_tensor_desc){.dtype = DG_DTYPE_I32, .rank = ri};
    for (int d = 0; d < ri; d++)
      count *= a->idesc.dims[d] = t_range(1, 4);
    for (int64_t k = 0; k < count; k++)
      a->idx[k] = t_range(-(int)n, (int)n - 1);
    if (t_range(0, 1))
      a->axis -= r; /* the same axis counted from the back */
    break;
  }
  }
}

static void mv_cases(dg_op op, dg_dtype t) {
  op_stats st = {0};
  for (int c = 0; c < CASES; c++) {
    mv_arg a = {.op = op};
    int r = t_range(1, DG_MAX_RANK);
    int64_t xd[DG_MAX_RANK];
    /* Small dims at high rank keep the cases quick; some 1s test the
     * degenerate axes (and expand's broadcast). */
    int hi = r <= 2 ? 9 : r <= 4 ? 5 : 3;
    random_dims(r, xd, 1, hi);
    for (int d = 0; d < r; d++)
      if (t_range(0, 5) == 0)
        xd[d] = 1;
    draw(&a, r, xd);
    dg_tensor_desc d[1] = {desc_of(t, r, xd)};
    char label[80];
    snprintf(label, sizeof label, "%s %s case %d (rank %d)", dg_op_name(op),
             dg_dtype_name(t), c, r);
    run_case(&st, label, 1, d, make_mv, &a);
  }
  char name[64];
  snprintf(name, sizeof name, "%s %s", dg_op_name(op), dg_dtype_name(t));
  report(name, &st);
}

/* Outputs of a few MiB, which the CPU splits over its threads. */
static void big_cases(void) {
  const dg_op ops[4] = {DG_OP_TRANSPOSE, DG_OP_SLICE, DG_OP_PAD, DG_OP_EXPAND};
  for (int t = 0; t < 2; t++) {
    op_stats st = {0};
    dg_dtype dt = t ? DG_DTYPE_U8 : DG_DTYPE_F32;
    for (int o = 0; o < 4; o++)
      for (int c = 0; c < 2; c++) {
        mv_arg a = {.op = ops[o]};
        int64_t xd[3] = {t_range(20, 40), t_range(50, 90), t_range(100, 300)};
        if (ops[o] == DG_OP_EXPAND)
          xd[c] = 1;
        draw(&a, 3, xd);
        dg_tensor_desc d[1] = {desc_of(dt, 3, xd)};
        char label[80];
        snprintf(label, sizeof label, "big %s %s case %d", dg_op_name(ops[o]),
                 dg_dtype_name(dt), c);
        run_case(&st, label, 1, d, make_mv, &a);
      }
    char name[64];
    snprintf(name, sizeof name, "big outputs %s", dg_dtype_name(dt));
    report(name, &st);
  }
}

/* Arguments from the edges of their types: a call either fails with a
 * clear status (an output too large to hold is DG_ERROR_OVERFLOW) or
 * builds a node that every device runs like the
 * reference (and nothing crashes, which the ASan run checks). */
static int64_t edge_value(int64_t n) {
  switch (t_range(0, 9)) {
  case 0:
    return INT64_MIN;
  case 1:
    return INT64_MAX;
  case 2:
    return -n - 1;
  case 3:
    return n;
  case 4:
    return (int64_t)1 << 40;
  case 5:
    return -((int64_t)1 << 40);
  case 6:
    return 0;
  default:
    return t_range(-(int)n - 2, (int)n + 2);
  }
}

static void hostile_cases(void) {
  op_stats st = {0};
  int refused = 0, unclear = 0;
  char first_unclear[200] = "";
  for (int c = 0; c < 200; c++) {
    mv_arg a = {.op = (dg_op[]){DG_OP_TRANSPOSE, DG_OP_SLICE, DG_OP_PAD,
                                DG_OP_EXPAND}[c % 4]};
    int r = t_range(1, 4);
    int64_t xd[DG_MAX_RANK];
    random_dims(r, xd, 1, 5);
    for (int d = 0; d < r; d++) {
      a.perm[d] = (int32_t)t_range(-1, r);
      a.starts[d] = edge_value(xd[d]);
      a.ends[d] = edge_value(xd[d]);
      a.steps[d] = edge_value(xd[d]);
      a.pads[d] = t_range(0, 3) ? t_range(0, 3) : edge_value(xd[d]);
      a.pads[d + r] = t_range(0, 3) ? t_range(0, 3) : edge_value(xd[d]);
    }
    a.mode = (dg_pad_mode)t_range(-1, 4);
    a.rank = t_range(-1, 7);
    for (int d = 0; d < DG_MAX_RANK; d++)
      a.dims[d] = t_range(0, 3) ? t_range(1, 4) : edge_value(4);
    dg_tensor_desc d[1] = {desc_of(DG_DTYPE_F32, r, xd)};
    dg_graph *g = dg_graph_create(ctx, "hostile");
    dg_tensor x = dg_graph_input(g, "in0", d);
    dg_tensor y = make_mv(g, &x, &a);
    dg_status gs = dg_graph_status(g);
    if (gs != DG_OK) {
      refused++;
      const dg_diagnostic *e = dg_graph_error(g);
      bool clear = y.id == 0 &&
                   (gs == DG_ERROR_INVALID_ARGUMENT ||
                    gs == DG_ERROR_INVALID_SHAPE || gs == DG_ERROR_OVERFLOW) &&
                   e && e->field[0] && strlen(e->message) > 10;
      if (!clear && !unclear++)
        snprintf(first_unclear, sizeof first_unclear, "%s: %s (%.120s)",
                 dg_op_name(a.op), dg_status_string(gs),
                 e ? e->message : "no diagnostic");
    }
    dg_graph_destroy(g);
    if (gs == DG_OK) {
      char label[64];
      snprintf(label, sizeof label, "hostile %s case %d", dg_op_name(a.op), c);
      run_case(&st, label, 1, d, make_mv, &a);
    }
  }
  CHECK(!unclear,
        "hostile arguments: %d of 200 calls refused, each with "
        "a status and a field%s%s",
        refused, unclear ? "; first not: " : "", first_unclear);
  report("hostile arguments that build", &st);
}

/* ---- answers written out by hand ---- */

typedef dg_tensor (*known_fn)(dg_graph *g, dg_tensor x);

/* x = {0, 1, .., n-1} of dtype t (dims xd) through make; on every device
 * the output must be exactly want (as the dtype's stored values). */
static void known(const char *what, dg_dtype t, int r, const int64_t *xd,
                  known_fn make, const double *want, int64_t want_n) {
  dg_graph *g = dg_graph_create(ctx, what);
  dg_tensor_desc d = {.dtype = t, .rank = r};
  memcpy(d.dims, xd, sizeof(int64_t) * (size_t)r);
  if (t == DG_DTYPE_I8 || t == DG_DTYPE_U8)
    d.quant = (dg_quant_params){.scale = 0.5f, .zero_point = 3};
  dg_tensor x = dg_graph_input(g, "x", &d);
  dg_graph_output(g, "y", make(g, x), DG_LAYOUT_NCHW);
  int64_t n = dg_desc_elements(&d);
  char xb[1024], yb[1024];
  for (int64_t i = 0; i < n; i++)
    switch (t) {
    case DG_DTYPE_F32:
      ((float *)xb)[i] = (float)i;
      break;
    case DG_DTYPE_I8:
      ((int8_t *)xb)[i] = (int8_t)i;
      break;
    default:
      ((int32_t *)xb)[i] = (int32_t)i;
      break;
    }
  bool built = dg_graph_status(g) == DG_OK;
  for (int dev = 0; built && dev < dg_context_device_count(ctx); dev++) {
    dg_session *s;
    dg_diagnostic diag;
    dg_device_info info;
    dg_status rc = compile_on(g, dev, &info, &s, &diag);
    if (rc == DG_ERROR_UNSUPPORTED && info.kind == DG_DEVICE_NPU)
      continue;
    size_t yn = (size_t)want_n * dg_dtype_size(t);
    if (rc == DG_OK)
      rc = dg_session_run(s, &(dg_binding){"x", xb, dg_desc_bytes(&d)}, 1,
                          &(dg_binding){"y", yb, yn}, 1, &diag);
    int64_t bad = -1;
    for (int64_t i = 0; rc == DG_OK && bad < 0 && i < want_n; i++)
      if (dg_load_elem(t, yb, i) != want[i])
        bad = i;
    CHECK(rc == DG_OK && bad < 0, "%s on device %d (%s)%s%s", what, dev,
          dg_device_kind_name(info.kind), rc ? ": " : "",
          rc         ? diag.message
          : bad >= 0 ? ": wrong element"
                     : "");
    if (bad >= 0)
      printf("#   element %lld: got %g, want %g\n", (long long)bad,
             dg_load_elem(t, yb, bad), want[bad]);
    dg_session_destroy(s);
  }
  CHECK(built, "%s builds (%s)", what,
        built ? "ok" : dg_graph_error(g)->message);
  dg_graph_destroy(g);
}

static dg_tensor k_transpose(dg_graph *g, dg_tensor x) {
  return dg_graph_transpose(g, "t", x, NULL);
}
static dg_tensor k_transpose3(dg_graph *g, dg_tensor x) {
  return dg_graph_transpose(g, "t", x, (const int32_t[]){1, 2, 0});
}
static dg_tensor k_slice(dg_graph *g, dg_tensor x) {
  return dg_graph_slice(g, "s", x, (const int64_t[]){-1},
                        (const int64_t[]){-11}, (const int64_t[]){-3});
}
static dg_tensor k_slice2(dg_graph *g, dg_tensor x) {
  return dg_graph_slice(g, "s", x, (const int64_t[]){1, -100},
                        (const int64_t[]){INT64_MAX, 3}, NULL);
}
static dg_tensor pad1(dg_graph *g, dg_tensor x, dg_pad_mode m) {
  return dg_graph_pad(g, "p", x, (const int64_t[]){2, 2}, m, 9);
}
static dg_tensor k_pad_c(dg_graph *g, dg_tensor x) {
  return pad1(g, x, DG_PAD_CONSTANT);
}
static dg_tensor k_pad_r(dg_graph *g, dg_tensor x) {
  return pad1(g, x, DG_PAD_REFLECT);
}
static dg_tensor k_pad_e(dg_graph *g, dg_tensor x) {
  return pad1(g, x, DG_PAD_EDGE);
}
static dg_tensor k_pad_w(dg_graph *g, dg_tensor x) {
  return pad1(g, x, DG_PAD_WRAP);
}
static dg_tensor k_pad_q(dg_graph *g, dg_tensor x) {
  /* 2.0 at scale 0.5 and zero point 3 is 7; -100 saturates to -128. */
  dg_tensor a = dg_graph_pad(g, "p", x, (const int64_t[]){1, 0}, 0, 2.0f);
  return dg_graph_pad(g, "p2", a, (const int64_t[]){0, 1}, 0, -100.0f);
}
static dg_tensor k_pad2(dg_graph *g, dg_tensor x) {
  /* [2, 2] padded by 1 row before and 1 column after, edge. */
  return dg_graph_pad(g, "p", x, (const int64_t[]){1, 0, 0, 1}, DG_PAD_EDGE, 0);
}
static dg_tensor k_pad_outer(dg_graph *g, dg_tensor x) {
  return dg_graph_pad(g, "p", x, (const int64_t[]){1, 0, 1, 0}, DG_PAD_CONSTANT,
                      9);
}
static dg_tensor k_slice_outer(dg_graph *g, dg_tensor x) {
  return dg_graph_slice(g, "s", x, (const int64_t[]){1, 0},
                        (const int64_t[]){3, 2}, NULL);
}
static dg_tensor k_expand(dg_graph *g, dg_tensor x) {
  return dg_graph_expand(g, "e", x, 3, (const int64_t[]){2, 1, 3});
}
static dg_tensor k_gather(dg_graph *g, dg_tensor x) {
  static const int32_t idx[3] = {-1, 0, 1};
  dg_tensor_desc id = {.dtype = DG_DTYPE_I32, .rank = 1, .dims = {3}};
  return dg_graph_gather(g, "g", x, dg_graph_constant(g, "i", &id, idx, 0), -1);
}
static dg_tensor k_gather0(dg_graph *g, dg_tensor x) {
  static const int32_t idx[1] = {-2};
  dg_tensor_desc id = {.dtype = DG_DTYPE_I32, .rank = 0};
  return dg_graph_gather(g, "g", x, dg_graph_constant(g, "i", &id, idx, 0), 0);
}

static void known_answers(void) {
  const int64_t d23[2] = {2, 3}, d10[1] = {10}, d3[1] = {3},
                d234[3] = {2, 3, 4}, d22[2] = {2, 2}, d31[2] = {3, 1},
                d33[2] = {3, 3};
  for (int k = 0; k < 3; k++) {
    dg_dtype t = (dg_dtype[]){DG_DTYPE_F32, DG_DTYPE_I8, DG_DTYPE_I32}[k];
    char w[64];
    snprintf(w, sizeof w, "transpose [2,3] %s", dg_dtype_name(t));
    known(w, t, 2, d23, k_transpose, (const double[]){0, 3, 1, 4, 2, 5}, 6);
    snprintf(w, sizeof w, "slice [-1:-11:-3] %s", dg_dtype_name(t));
    known(w, t, 1, d10, k_slice, (const double[]){9, 6, 3, 0}, 4);
    snprintf(w, sizeof w, "pad reflect %s", dg_dtype_name(t));
    known(w, t, 1, d3, k_pad_r, (const double[]){2, 1, 0, 1, 2, 1, 0}, 7);
    snprintf(w, sizeof w, "pad edge %s", dg_dtype_name(t));
    known(w, t, 1, d3, k_pad_e, (const double[]){0, 0, 0, 1, 2, 2, 2}, 7);
    snprintf(w, sizeof w, "pad wrap %s", dg_dtype_name(t));
    known(w, t, 1, d3, k_pad_w, (const double[]){1, 2, 0, 1, 2, 0, 1}, 7);
    snprintf(w, sizeof w, "gather [3,3] axis -1 %s", dg_dtype_name(t));
    known(w, t, 2, d33, k_gather, (const double[]){2, 0, 1, 5, 3, 4, 8, 6, 7},
          9);
  }
  /* Constant 9 at scale 0.5, zero point 3 is 21 for int8. */
  known("pad constant 9 f32", DG_DTYPE_F32, 1, d3, k_pad_c,
        (const double[]){9, 9, 0, 1, 2, 9, 9}, 7);
  known("pad constant 9 i8", DG_DTYPE_I8, 1, d3, k_pad_c,
        (const double[]){21, 21, 0, 1, 2, 21, 21}, 7);
  known("pad constant quantised and saturated i8", DG_DTYPE_I8, 1, d3, k_pad_q,
        (const double[]){7, 0, 1, 2, -128}, 5);
  known("transpose [2,3,4] perm 1,2,0", DG_DTYPE_F32, 3, d234, k_transpose3,
        (const double[]){0, 12, 1, 13, 2, 14, 3, 15, 4,  16, 5,  17,
                         6, 18, 7, 19, 8, 20, 9, 21, 10, 22, 11, 23},
        24);
  known("slice [1:max, -100:3]", DG_DTYPE_F32, 2, d23, k_slice2,
        (const double[]){3, 4, 5}, 3);
  known("pad edge 2-D", DG_DTYPE_F32, 2, d22, k_pad2,
        (const double[]){0, 1, 1, 0, 1, 1, 2, 3, 3}, 9);
  known("expand [3,1] to [2,1,3]", DG_DTYPE_I32, 2, d31, k_expand,
        (const double[]){0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 0, 0, 1, 1, 1, 2, 2, 2},
        18);
  /* Whole inner rows: the view merges the two axes into one. */
  const int64_t d32[2] = {3, 2};
  known("pad constant 9, outer axis only", DG_DTYPE_F32, 2, d32, k_pad_outer,
        (const double[]){9, 9, 0, 1, 2, 3, 4, 5, 9, 9}, 10);
  known("slice outer axis only", DG_DTYPE_I8, 2, d32, k_slice_outer,
        (const double[]){2, 3, 4, 5}, 4);
  {
    dg_graph *g = dg_graph_create(ctx, "merge");
    dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {3, 2}};
    k_pad_outer(g, dg_graph_input(g, "x", &d));
    dg_view v;
    bool ok = dg_view_of(&g->ir, &g->ir.nodes[0], &v);
    CHECK(ok && v.rank == 1 && v.dims[0] == 10 && v.start[0] == -2 &&
              v.extent[0] == 6,
          "a pad of whole rows is one axis in the view (rank %d)", v.rank);
    dg_graph_destroy(g);
  }
  known("gather scalar index -2 of [3]", DG_DTYPE_F32, 1, d3, k_gather0,
        (const double[]){1}, 1);
}

/* ---- bad inputs ---- */

static void expect(dg_graph *g, const char *what, dg_status st,
                   const char *field) {
  expect_error(g, what, DG_TENSOR_NONE, st, field);
}

static dg_graph *bad_graph(dg_tensor *x, dg_dtype t) {
  dg_graph *g = dg_graph_create(ctx, "bad");
  dg_tensor_desc d = {.dtype = t, .rank = 3, .dims = {2, 3, 4}};
  if (t == DG_DTYPE_I8)
    d.quant.scale = 0.1f;
  *x = dg_graph_input(g, "x", &d);
  return g;
}

static void bad_inputs(void) {
  dg_tensor x, y;
  dg_graph *g;
  const int64_t z3[3] = {0, 0, 0}, e3[3] = {2, 3, 4};

#define BAD(what, st, field, call)                                             \
  do {                                                                         \
    g = bad_graph(&x, DG_DTYPE_F32);                                           \
    y = (call);                                                                \
    CHECK(y.id == 0, "%s returns no tensor", what);                            \
    expect(g, what, st, field);                                                \
    dg_graph_destroy(g);                                                       \
  } while (0)

  BAD("transpose perm repeats an axis", DG_ERROR_INVALID_ARGUMENT, "perm[2]",
      dg_graph_transpose(g, "t", x, (const int32_t[]){0, 1, 1}));
  BAD("transpose perm out of range", DG_ERROR_INVALID_ARGUMENT, "perm[1]",
      dg_graph_transpose(g, "t", x, (const int32_t[]){0, 3, 1}));
  BAD("transpose perm negative", DG_ERROR_INVALID_ARGUMENT, "perm[0]",
      dg_graph_transpose(g, "t", x, (const int32_t[]){-1, 0, 1}));
  BAD("slice step 0", DG_ERROR_INVALID_ARGUMENT, "steps[1]",
      dg_graph_slice(g, "s", x, z3, e3, (const int64_t[]){1, 0, 1}));
  BAD("slice empty (start == end)", DG_ERROR_INVALID_SHAPE, "ends[2]",
      dg_graph_slice(g, "s", x, (const int64_t[]){0, 0, 2},
                     (const int64_t[]){2, 3, 2}, NULL));
  BAD("slice empty (negative step forwards)", DG_ERROR_INVALID_SHAPE, "ends[0]",
      dg_graph_slice(g, "s", x, z3, e3, (const int64_t[]){-1, 1, 1}));
  BAD("slice starts NULL", DG_ERROR_INVALID_ARGUMENT, "starts",
      dg_graph_slice(g, "s", x, NULL, e3, NULL));
  BAD("slice ends NULL", DG_ERROR_INVALID_ARGUMENT, "ends",
      dg_graph_slice(g, "s", x, z3, NULL, NULL));
  BAD("pad negative", DG_ERROR_INVALID_ARGUMENT, "pads[4]",
      dg_graph_pad(g, "p", x, (const int64_t[]){0, 0, 0, 0, -1, 0},
                   DG_PAD_CONSTANT, 0));
  BAD("pad reflect >= dim", DG_ERROR_INVALID_ARGUMENT, "pads[3]",
      dg_graph_pad(g, "p", x, (const int64_t[]){1, 2, 3, 2, 0, 0},
                   DG_PAD_REFLECT, 0));
  BAD("pad bad mode", DG_ERROR_INVALID_ARGUMENT, "mode",
      dg_graph_pad(g, "p", x, (const int64_t[]){0, 0, 0, 0, 0, 0},
                   (dg_pad_mode)7, 0));
  BAD("pad NULL pads", DG_ERROR_INVALID_ARGUMENT, "pads",
      dg_graph_pad(g, "p", x, NULL, DG_PAD_EDGE, 0));
  BAD("expand incompatible", DG_ERROR_INVALID_SHAPE, "dims",
      dg_graph_expand(g, "e", x, 3, (const int64_t[]){2, 5, 4}));
  BAD("expand dim 0", DG_ERROR_INVALID_ARGUMENT, "dims[1]",
      dg_graph_expand(g, "e", x, 3, (const int64_t[]){2, 0, 4}));
  BAD("expand rank 7", DG_ERROR_INVALID_ARGUMENT, "dims",
      dg_graph_expand(g, "e", x, 7, (const int64_t[]){1, 1, 1, 1, 2, 3, 4}));
  {
    static const int32_t idx[2] = {0, 3};
    dg_tensor_desc id = {.dtype = DG_DTYPE_I32, .rank = 1, .dims = {2}};
    dg_tensor_desc i64 = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {2}};
    BAD("gather index out of range", DG_ERROR_INVALID_ARGUMENT, "indices[1]",
        dg_graph_gather(g, "g", x, dg_graph_constant(g, "i", &id, idx, 0), 1));
    BAD("gather index below -d", DG_ERROR_INVALID_ARGUMENT, "indices[0]",
        dg_graph_gather(
            g, "g", x,
            dg_graph_constant(g, "i", &id, (const int32_t[]){-5, 0}, 0),
            2 - 3));
    BAD("gather non-constant indices", DG_ERROR_UNSUPPORTED, "indices",
        dg_graph_gather(g, "g", x, dg_graph_input(g, "i", &id), 0));
    BAD("gather non-i32 indices", DG_ERROR_INVALID_DTYPE, "indices",
        dg_graph_gather(g, "g", x, dg_graph_constant(g, "i", &i64, idx, 0), 0));
    BAD("gather axis out of range", DG_ERROR_INVALID_ARGUMENT, "axis",
        dg_graph_gather(g, "g", x, dg_graph_constant(g, "i", &id, idx, 0), 3));
    BAD("gather axis below -rank", DG_ERROR_INVALID_ARGUMENT, "axis",
        dg_graph_gather(g, "g", x, dg_graph_constant(g, "i", &id, idx, 0), -4));
  }
#undef BAD
  /* A foreign handle and a NULL graph (every dtype is allowed for x). */
  g = bad_graph(&x, DG_DTYPE_I8);
  dg_graph *g2;
  g2 = dg_graph_create(ctx, "other");
  y = dg_graph_transpose(g2, "t", x, NULL); /* x belongs to g */
  CHECK(y.id == 0, "transpose of a foreign tensor returns no tensor");
  expect(g2, "transpose of a foreign tensor", DG_ERROR_INVALID_ARGUMENT, "x");
  dg_graph_destroy(g2);
  dg_graph_destroy(g);
  CHECK(dg_graph_transpose(NULL, "t", x, NULL).id == 0 &&
            dg_graph_slice(NULL, "s", x, z3, e3, NULL).id == 0 &&
            dg_graph_pad(NULL, "p", x, z3, 0, 0).id == 0 &&
            dg_graph_expand(NULL, "e", x, 3, e3).id == 0 &&
            dg_graph_gather(NULL, "g", x, x, 0).id == 0,
        "every builder with a NULL graph returns no tensor");
}

int main(int argc, char **argv) {
  unsigned long long seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261201;
  t_seed(seed);
  printf("# seed %llu\n", seed);
  /* A second argument limits the devices to one kind ("cpu", ...). */
  dg_context_options co = {0};
  if (argc > 2)
    co.device_kinds = (unsigned)dg_device_kind_from_name(argv[2]);
  if (dg_context_create(&co, &ctx) != DG_OK) {
    CHECK(0, "context");
    return 1;
  }
  const dg_op ops[5] = {DG_OP_TRANSPOSE, DG_OP_SLICE, DG_OP_PAD, DG_OP_EXPAND,
                        DG_OP_GATHER};
  for (int o = 0; o < 5; o++)
    for (int t = 0; t < 5; t++)
      mv_cases(ops[o], dtypes[t]);
  big_cases();
  hostile_cases();
  known_answers();
  bad_inputs();
#ifdef DG_TARGET_VULKAN
  /* meson test turns the layer on (DG_VULKAN_VALIDATION=1). */
  if (dg_vk_validation_enabled())
    CHECK(dg_vk_validation_messages() == 0,
          "Vulkan validation layer: %d messages", dg_vk_validation_messages());
#endif
  dg_context_destroy(ctx);
  return t_exit();
}
