#define _POSIX_C_SOURCE 200809L
/* The int8 ops beyond convolution (docs/numerics.md, "int8 elementwise,
 * lookup and pooling"): qbinary, lookup (qunary, requantize and user
 * tables), qavg_pool2d (and qglobal_avg_pool) and qconcat, on random
 * shapes and random int8 data. Every case runs on every device of the
 * context; each output must equal the reference exactly (or within the
 * device's declared int8 LSB deviation), its bytes must equal the CPU's
 * (the contract is bit-exact across targets), and dg_session_verify must
 * pass. A device that declines a node is reported as "skipped", with its
 * reason, never as passed; the CPU must run everything.
 *
 * Values worked by hand from the contract's formulas check the reference
 * itself, and the builders' errors each name their field. */
#include "differential.h"

enum { MAX_DEVS = 8 };

/* Per group of cases: what each device ran or declined. */
typedef struct q8_stats {
  int cases, failures;
  int ran[MAX_DEVS], declined[MAX_DEVS];
  char why[MAX_DEVS][160]; /* the first decline's reason */
  char first_failure[400];
} q8_stats;

static void fail(q8_stats *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void fail(q8_stats *st, const char *fmt, ...) {
  st->failures++;
  if (st->first_failure[0])
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st->first_failure, sizeof st->first_failure, fmt, ap);
  va_end(ap);
}

static dg_dtype rand_q8(void) {
  return t_range(0, 1) ? DG_DTYPE_I8 : DG_DTYPE_U8;
}

static const char *tn(dg_dtype t) { return dg_dtype_name(t); }

/* A zero point of t: typical (near 0 for i8, 128 for u8) or, when
 * extreme, at either end of the range or anywhere in it. */
static int32_t zero_of(dg_dtype t, bool extreme) {
  int32_t lo = t == DG_DTYPE_I8 ? -128 : 0, hi = lo + 255;
  if (!extreme)
    return t == DG_DTYPE_I8 ? t_range(-20, 20) : t_range(100, 150);
  int k = t_range(0, 2);
  return k == 0 ? lo : k == 1 ? hi : t_range(lo, hi);
}

static dg_tensor_desc qdesc(dg_dtype t, int rank, const int64_t *dims,
                            float scale, int32_t zero) {
  dg_tensor_desc d = {.dtype = t, .rank = rank};
  memcpy(d.dims, dims, sizeof(int64_t) * (size_t)rank);
  d.quant.scale = scale;
  d.quant.zero_point = zero;
  return d;
}

/* When set, int8 inputs hold every byte in turn (0, 1, ..., 255, 0, ...)
 * instead of random ones: a lookup then reads every table entry. */
static bool fill_ramp;

static void fill_q8(const dg_tensor_desc *d, void *p) {
  if (!fill_ramp) {
    fill(d, p);
    return;
  }
  for (int64_t i = 0, n = dg_desc_elements(d); i < n; i++)
    ((uint8_t *)p)[i] = (uint8_t)(i & 0xff);
}

/* The whole graph's reference: every node's float64 reference kernel in
 * order, each on its inputs' reference values (graph inputs from data,
 * constants from the graph), so that composite builders (qconcat) are
 * covered. Returns y's values (malloc'd) or NULL. */
static double *ref_graph(const dg_ir *ir, int n_in, const dg_tensor *in,
                         void *const *data, uint32_t y) {
  double **val = calloc((size_t)ir->tensor_count + 1, sizeof *val);
  if (!val)
    return NULL;
  for (int i = 0; i < n_in; i++) {
    const dg_tensor_info *t = dg_ir_tensor(ir, in[i].id);
    int64_t m = dg_desc_elements(&t->desc);
    val[in[i].id] = malloc(sizeof(double) * (size_t)m);
    for (int64_t e = 0; e < m; e++)
      val[in[i].id][e] = dg_load_elem(t->desc.dtype, data[i], e);
  }
  for (int i = 0; i < ir->node_count; i++) {
    const dg_node *n = &ir->nodes[i];
    const double *ins[MAX_INPUTS] = {0};
    for (int k = 0; k < n->input_count; k++) {
      uint32_t id = n->inputs[k];
      const dg_tensor_info *t = dg_ir_tensor(ir, id);
      if (!t)
        continue;
      if (!val[id] && t->constant) {
        int64_t m = dg_desc_elements(&t->desc);
        val[id] = malloc(sizeof(double) * (size_t)m);
        for (int64_t e = 0; e < m; e++)
          val[id][e] = dg_load_elem(t->desc.dtype, t->constant->data, e);
      }
      ins[k] = val[id];
    }
    const dg_tensor_info *o = dg_ir_tensor(ir, n->output);
    val[n->output] =
        malloc(sizeof(double) * (size_t)dg_desc_elements(&o->desc));
    dg_op_def_get(n->op)->reference(ir, n, ins, val[n->output]);
  }
  double *out = val[y];
  val[y] = NULL;
  for (int i = 0; i <= ir->tensor_count; i++)
    free(val[i]);
  free(val);
  return out;
}

/* The part of a compile's "can run on no allowed device (A: why; B:
 * why)" that is about the device named name, or the whole message. */
static void device_reason(const char *msg, const char *name, char *out,
                          size_t size) {
  const char *p = strstr(msg, name);
  if (!p || strncmp(p + strlen(name), ": ", 2)) {
    snprintf(out, size, "%s", msg);
    return;
  }
  p += strlen(name) + 2;
  const char *e = strstr(p, "; ");
  size_t n = e ? (size_t)(e - p) : strlen(p);
  if (!e && n && p[n - 1] == ')')
    n--; /* the list's closing parenthesis */
  snprintf(out, size, "%.*s", (int)n, p);
}

/* One case: inputs from descs (random, or given when not NULL), make()
 * adds the op(s), y is compared on every device with the reference, with
 * the CPU's bytes and, when want is not NULL, with those hand-computed
 * bytes (the reference too). */
static void q8_case(q8_stats *st, const char *label, int n_in,
                    const dg_tensor_desc *descs, const void *const *given,
                    make_fn make, void *arg, const uint8_t *want) {
  case_graph c;
  case_graph_build(&c, label, n_in, descs, given, fill_q8, make, arg);
  dg_graph *g = c.g;
  dg_tensor y = c.y;
  st->cases++;
  double *ref = NULL;
  uint8_t *out = NULL, *cpu = NULL;
  if (dg_graph_status(g) != DG_OK) {
    fail(st, "%s: build failed: %.200s", label, dg_graph_error(g)->message);
    goto done;
  }
  const dg_tensor_desc *yd = &dg_ir_tensor(&g->ir, y.id)->desc;
  int64_t ne = dg_desc_elements(yd);
  size_t ybytes = dg_desc_bytes(yd);
  ref = ref_graph(&g->ir, n_in, c.in, c.data, y.id);
  out = malloc(ybytes);
  cpu = malloc(ybytes);
  for (int64_t e = 0; want && e < ne; e++)
    if (ref[e] != dg_load_elem(yd->dtype, want, e)) {
      fail(st, "%s: the reference gives y[%lld] = %g, by hand %g", label,
           (long long)e, ref[e], dg_load_elem(yd->dtype, want, e));
      break;
    }
  bool have_cpu = false;
  for (int dev = 0; dev < dg_context_device_count(ctx) && dev < MAX_DEVS;
       dev++) {
    dg_session *s;
    dg_diagnostic diag;
    dg_device_info info;
    dg_status rc = compile_on(g, dev, &info, &s, &diag);
    if (rc == DG_ERROR_UNSUPPORTED && info.kind != DG_DEVICE_CPU) {
      if (!st->declined[dev]++)
        device_reason(diag.message, info.name, st->why[dev],
                      sizeof st->why[dev]);
      continue;
    }
    memset(out, 0xa5, ybytes);
    if (rc == DG_OK)
      rc = dg_session_run(s, c.bind, n_in, &(dg_binding){"y", out, ybytes}, 1,
                          &diag);
    if (rc != DG_OK) {
      fail(st, "%s on device %d (%s): %.200s", label, dev, info.name,
           diag.message);
      dg_session_destroy(s);
      continue;
    }
    st->ran[dev]++;
    int64_t bad = -1, worst = 0;
    for (int64_t e = 0; e < ne; e++) {
      double d = fabs(dg_load_elem(yd->dtype, out, e) - ref[e]);
      if (d > worst) {
        worst = (int64_t)d;
        bad = e;
      }
    }
    if (worst > info.int8_max_lsb_deviation)
      fail(st, "%s on device %d (%s): y[%lld] = %g, reference %g", label, dev,
           info.name, (long long)bad, dg_load_elem(yd->dtype, out, bad),
           ref[bad]);
    else if (want && info.int8_max_lsb_deviation == 0 &&
             memcmp(out, want, ybytes))
      fail(st, "%s on device %d (%s): not the hand-computed bytes", label, dev,
           info.name);
    if (info.kind == DG_DEVICE_CPU && !have_cpu) {
      memcpy(cpu, out, ybytes);
      have_cpu = true;
    } else if (have_cpu && info.int8_max_lsb_deviation == 0) {
      for (size_t i = 0; i < ybytes; i++)
        if (out[i] != cpu[i]) {
          fail(st, "%s on device %d (%s): byte %zu is 0x%02x, the CPU's 0x%02x",
               label, dev, info.name, i, out[i], cpu[i]);
          break;
        }
    }
    dg_verify_report rep = {0};
    rc = dg_session_verify(s, c.bind, n_in, &rep);
    if (rc != DG_OK || !rep.ok)
      fail(st, "%s on device %d (%s): verify %s at node '%s' (%lld LSB)", label,
           dev, info.name, dg_status_string(rc), rep.node_name,
           (long long)rep.max_lsb_error);
    dg_session_destroy(s);
  }
  if (!have_cpu)
    fail(st, "%s: no CPU device ran it", label);
done:
  free(ref);
  free(out);
  free(cpu);
  case_graph_free(&c);
}

/* One ok/FAIL line naming the devices that ran the cases, and a
 * "skipped" line for each device that declined some. */
static void q8_report(const char *what, const q8_stats *st) {
  char ran[256] = "";
  size_t len = 0;
  int n = dg_context_device_count(ctx);
  for (int dev = 0; dev < n && dev < MAX_DEVS; dev++) {
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    if (st->ran[dev] && len < sizeof ran)
      len += (size_t)snprintf(ran + len, sizeof ran - len, "%s%s %d",
                              len ? ", " : "", info.name, st->ran[dev]);
    if (st->declined[dev]) {
      char line[400];
      snprintf(line, sizeof line,
               "%s on device %d (%s): %d of %d cases "
               "declined: %s",
               what, dev, info.name, st->declined[dev], st->cases,
               st->why[dev]);
      t_skip(line);
    }
  }
  CHECK(st->failures == 0,
        "%s: %d cases exact against the reference and the "
        "CPU's bytes (ran: %s)%s%s",
        what, st->cases, len ? ran : "nowhere",
        st->failures ? "; first failure: " : "", st->first_failure);
}

/* ---- qbinary ---- */

typedef struct qb_arg {
  dg_binary_fn fn;
  dg_dtype yt;
  dg_quant_params yq;
} qb_arg;

static dg_tensor make_qbinary(dg_graph *g, dg_tensor *in, void *arg) {
  qb_arg *a = arg;
  return dg_graph_qbinary(g, "op", a->fn, in[0], in[1], a->yt, &a->yq);
}

static const char *const shape_kinds[] = {
    "same shape", "[N,C,H,W] with [1,C,1,1]", "[N,C,H,W] with [W]",
    "with a scalar [1]", "broadcast on both sides"};
enum { SHAPE_KINDS = 5 };

/* a's and b's dims for a shape kind; the small side is a or b at random. */
static void qb_shapes(int kind, int *ra, int64_t *da, int *rb, int64_t *db) {
  int64_t d[4] = {t_range(1, 3), t_range(1, 8), t_range(1, 9), t_range(1, 9)};
  if (t_range(0, 7) == 0) { /* now and then more than a workgroup a plane */
    d[2] = t_range(17, 40);
    d[3] = t_range(17, 40);
  }
  *ra = 4;
  memcpy(da, d, sizeof d);
  switch (kind) {
  case 0:
    *ra = *rb = t_range(1, 4);
    memcpy(da, d + 4 - *ra, sizeof(int64_t) * (size_t)*ra);
    memcpy(db, da, sizeof(int64_t) * (size_t)*ra);
    return;
  case 1:
    *rb = 4;
    db[0] = 1, db[1] = d[1], db[2] = 1, db[3] = 1;
    break;
  case 2:
    *rb = 1;
    db[0] = d[3];
    break;
  case 3:
    *rb = 1;
    db[0] = 1;
    break;
  default:
    *rb = 4;
    for (int i = 0; i < 4; i++) {
      bool one_a = t_range(0, 1);
      da[i] = one_a ? 1 : d[i];
      db[i] = one_a || t_range(0, 1) ? d[i] : 1;
    }
    return;
  }
  if (t_range(0, 1)) { /* the small one on a's side */
    int64_t t[4];
    memcpy(t, da, sizeof t);
    memcpy(da, db, sizeof(int64_t) * (size_t)*rb);
    memcpy(db, t, sizeof t);
    int r = *ra;
    *ra = *rb;
    *rb = r;
  }
}

/* Quantisations by mode: 0, 1 typical; 2 saturating (a y scale far
 * smaller than the inputs', zero points at the ends); 3 extreme
 * magnitudes of the scales whose ratios are still normal floats. */
static void qb_quants(dg_binary_fn fn, int mode, float *sa, float *sb,
                      float *sy) {
  bool mul = fn == DG_BINARY_MUL;
  *sa = t_uniform(0.005f, 0.05f);
  *sb = t_uniform(0.005f, 0.05f);
  if (mode == 3) {
    float k = t_range(0, 1) ? 1e-30f : 1e25f;
    *sa *= mul ? 1e-18f : k;
    *sb *= mul ? 1e18f : k;
  }
  if (mode == 2)
    *sy = mul ? *sa * *sb * t_uniform(0.5f, 3)
              : (*sa + *sb) * t_uniform(0.005f, 0.02f);
  else
    *sy = mul ? *sa * *sb * t_uniform(30, 300)
              : (*sa + *sb) * t_uniform(0.3f, 1.5f);
}

static void qbinary_cases(dg_binary_fn fn) {
  q8_stats st = {0};
  for (int c = 0; c < CASES; c++) {
    int kind = c % SHAPE_KINDS, mode = (c / SHAPE_KINDS) % 4;
    int ra, rb;
    int64_t da[4], db[4];
    qb_shapes(kind, &ra, da, &rb, db);
    float sa, sb, sy;
    qb_quants(fn, mode, &sa, &sb, &sy);
    dg_dtype at = rand_q8(), bt = rand_q8();
    qb_arg a = {.fn = fn, .yt = rand_q8()};
    a.yq =
        (dg_quant_params){.scale = sy, .zero_point = zero_of(a.yt, mode >= 2)};
    dg_tensor_desc d[2] = {qdesc(at, ra, da, sa, zero_of(at, mode >= 2)),
                           qdesc(bt, rb, db, sb, zero_of(bt, mode >= 2))};
    char label[160];
    snprintf(label, sizeof label,
             "qbinary %s case %d (%s, %s %s -> %s, quant mode %d)",
             dg_binary_fn_name(fn), c, shape_kinds[kind], tn(at), tn(bt),
             tn(a.yt), mode);
    q8_case(&st, label, 2, d, NULL, make_qbinary, &a, NULL);
  }
  /* Same shape and large enough (120000 values) that the CPU splits the
   * run over its threads (DG_TEST_CPU_THREADED: a one-node graph would
   * run on one). */
  int64_t big[4] = {1, 3, 200, 200};
  qb_arg a = {.fn = fn, .yt = DG_DTYPE_U8};
  float sa, sb, sy;
  qb_quants(fn, 0, &sa, &sb, &sy);
  a.yq = (dg_quant_params){.scale = sy, .zero_point = 128};
  dg_tensor_desc d[2] = {qdesc(DG_DTYPE_U8, 4, big, sa, 120),
                         qdesc(DG_DTYPE_I8, 4, big, sb, -3)};
  char label[160];
  snprintf(label, sizeof label,
           "qbinary %s of 120000 values (split over the CPU's threads)",
           dg_binary_fn_name(fn));
  setenv("DG_TEST_CPU_THREADED", "1", 1);
  q8_case(&st, label, 2, d, NULL, make_qbinary, &a, NULL);
  /* A squeeze-excite scale: [1, 64, 24, 24] by [1, 64, 1, 1], 36864
   * values in 64 rows, which the CPU deals out by rows. */
  int64_t planes[4] = {1, 64, 24, 24}, scale[4] = {1, 64, 1, 1};
  dg_tensor_desc se[2] = {qdesc(DG_DTYPE_U8, 4, planes, sa, 120),
                          qdesc(DG_DTYPE_I8, 4, scale, sb, -3)};
  snprintf(label, sizeof label,
           "qbinary %s of 64 planes by one value each (rows over the CPU's "
           "threads)",
           dg_binary_fn_name(fn));
  q8_case(&st, label, 2, se, NULL, make_qbinary, &a, NULL);
  unsetenv("DG_TEST_CPU_THREADED");
  char what[64];
  snprintf(what, sizeof what, "qbinary %s", dg_binary_fn_name(fn));
  q8_report(what, &st);
}

/* ---- lookup: qunary, requantize, user tables ---- */

typedef struct lu_arg {
  int kind; /* 0 qunary, 1 requantize, 2 user table */
  dg_unary_fn fn;
  float alpha, beta;
  dg_dtype yt;
  dg_quant_params yq;
  uint8_t table[256];
} lu_arg;

static dg_tensor make_lookup(dg_graph *g, dg_tensor *in, void *arg) {
  lu_arg *a = arg;
  if (a->kind == 0)
    return dg_graph_qunary(g, "op", a->fn, in[0], a->alpha, a->beta, a->yt,
                           &a->yq);
  if (a->kind == 1)
    return dg_graph_requantize(g, "op", in[0], a->yt, &a->yq);
  return dg_graph_lookup(g, "op", in[0], a->table, a->yt, &a->yq);
}

/* x's dims: the first case of each group a ramp over all 256 bytes (see
 * fill_ramp), the others random of rank 1 to 4. */
static int lookup_dims(int c, int64_t *dims) {
  if (c == 0) {
    dims[0] = 256 * t_range(1, 3);
    return 1;
  }
  int rank = t_range(1, 4);
  random_dims(rank, dims, 1, rank == 1 ? 3000 : rank == 2 ? 60 : 12);
  return rank;
}

enum { LOOKUP_CASES = 12 };

static void qunary_cases(dg_unary_fn fn) {
  const dg_unary_def *u = dg_unary_def_get(fn);
  q8_stats st = {0};
  for (int c = 0; c < LOOKUP_CASES; c++) {
    lu_arg a = {.kind = 0, .fn = fn, .yt = rand_q8()};
    /* ONNX's defaults, or (every other case) others */
    a.alpha = u->params >= 1 ? (float)u->alpha0 : 0;
    a.beta = u->params >= 2 ? (float)u->beta0 : 0;
    if (c % 2 && u->params >= 1)
      a.alpha = t_uniform(0.05f, 1.0f);
    if (c % 2 && u->params >= 2)
      a.beta = t_uniform(0.1f, 0.9f);
    int64_t dims[4];
    int rank = lookup_dims(c, dims);
    dg_dtype xt = rand_q8();
    /* x spans about [-u->hi, u->hi] over its 256 values */
    float sx = (float)u->hi / t_uniform(60, 200);
    bool extreme = c % 4 == 3;
    float sy = fn == DG_UNARY_SIGMOID || fn == DG_UNARY_HARD_SIGMOID
                   ? t_uniform(1.0f / 256, 1.0f / 100)
                   : sx * t_uniform(0.3f, 2);
    if (extreme)
      sy *= 0.05f; /* most values saturate */
    a.yq = (dg_quant_params){.scale = sy, .zero_point = zero_of(a.yt, extreme)};
    dg_tensor_desc d = qdesc(xt, rank, dims, sx, zero_of(xt, extreme));
    char label[160];
    snprintf(label, sizeof label,
             "qunary %s case %d (%s -> %s, alpha %g, beta %g%s)", u->name, c,
             tn(xt), tn(a.yt), a.alpha, a.beta, c ? "" : ", every byte");
    fill_ramp = c == 0;
    q8_case(&st, label, 1, &d, NULL, make_lookup, &a, NULL);
    fill_ramp = false;
  }
  char what[64];
  snprintf(what, sizeof what, "qunary %s", u->name);
  q8_report(what, &st);
}

static void requantize_cases(void) {
  static const dg_dtype pairs[4][2] = {{DG_DTYPE_I8, DG_DTYPE_U8},
                                       {DG_DTYPE_U8, DG_DTYPE_I8},
                                       {DG_DTYPE_I8, DG_DTYPE_I8},
                                       {DG_DTYPE_U8, DG_DTYPE_U8}};
  for (int p = 0; p < 4; p++) {
    q8_stats st = {0};
    for (int c = 0; c < LOOKUP_CASES; c++) {
      lu_arg a = {.kind = 1, .yt = pairs[p][1]};
      int64_t dims[4];
      int rank = lookup_dims(c, dims);
      float sx = t_uniform(0.005f, 0.05f);
      bool extreme = c % 3 == 2;
      /* scale changes both ways; every fourth case only the zero point */
      float sy = c % 4 == 1 ? sx : sx * t_uniform(0.1f, 10);
      a.yq =
          (dg_quant_params){.scale = sy, .zero_point = zero_of(a.yt, extreme)};
      dg_tensor_desc d =
          qdesc(pairs[p][0], rank, dims, sx, zero_of(pairs[p][0], extreme));
      char label[160];
      snprintf(label, sizeof label,
               "requantize %s -> %s case %d (scale x %g, zero %d -> %d)",
               tn(pairs[p][0]), tn(a.yt), c, (double)(sy / sx),
               d.quant.zero_point, a.yq.zero_point);
      fill_ramp = c == 0;
      q8_case(&st, label, 1, &d, NULL, make_lookup, &a, NULL);
      fill_ramp = false;
    }
    char what[64];
    snprintf(what, sizeof what, "requantize %s -> %s", tn(pairs[p][0]),
             tn(pairs[p][1]));
    q8_report(what, &st);
  }
}

static void lookup_cases(void) {
  q8_stats st = {0};
  for (int c = 0; c < LOOKUP_CASES; c++) {
    lu_arg a = {.kind = 2, .yt = rand_q8()};
    for (int i = 0; i < 256; i++)
      a.table[i] = (uint8_t)t_range(0, 255);
    a.yq = (dg_quant_params){.scale = t_uniform(0.01f, 1),
                             .zero_point = zero_of(a.yt, true)};
    int64_t dims[4];
    int rank = lookup_dims(c, dims);
    dg_dtype xt = rand_q8();
    dg_tensor_desc d = qdesc(xt, rank, dims, 0.1f, zero_of(xt, false));
    char label[96];
    snprintf(label, sizeof label, "lookup case %d (%s -> %s, random table)", c,
             tn(xt), tn(a.yt));
    fill_ramp = c == 0;
    q8_case(&st, label, 1, &d, NULL, make_lookup, &a, NULL);
    fill_ramp = false;
  }
  q8_report("lookup with a user table", &st);
}

/* ---- qavg_pool2d, qglobal_avg_pool ---- */

typedef struct qp_arg {
  bool global;
  dg_pool2d_params p;
  dg_dtype yt;
  dg_quant_params yq;
} qp_arg;

static dg_tensor make_qpool(dg_graph *g, dg_tensor *in, void *arg) {
  qp_arg *a = arg;
  return a->global ? dg_graph_qglobal_avg_pool(g, "op", in[0], a->yt, &a->yq)
                   : dg_graph_qavg_pool2d(g, "op", in[0], &a->p, a->yt, &a->yq);
}

static void qavg_cases(dg_dtype xt) {
  q8_stats st = {0};
  for (int c = 0; c < CASES; c++) {
    qp_arg a = {.yt = rand_q8()};
    /* every eighth case a wide window (up to 9 x 9) */
    int kmax = c % 8 == 7 ? 9 : 4;
    int64_t xd[4] = {t_range(1, 2), t_range(1, 5), 0, 0};
    for (int i = 0; i < 2; i++) {
      a.p.kernel[i] = t_range(1, kmax);
      a.p.stride[i] = t_range(1, 3);
      a.p.dilation[i] = t_range(0, 3); /* 0 is the default, 1 */
      if (kmax > 4)
        a.p.dilation[i] = t_range(0, 1);
      int span =
          (a.p.kernel[i] - 1) * (a.p.dilation[i] ? a.p.dilation[i] : 1) + 1;
      a.p.pads[i] = t_range(0, span - 1);
      a.p.pads[i + 2] = t_range(0, span - 1);
      xd[2 + i] = t_range(span, span + 9);
    }
    /* explicit pads in 5 cases of 8: only they, with ceil mode, give
     * windows that hang past the end padding */
    int mode = t_range(0, 7);
    a.p.padding = mode <= 3 ? (dg_padding)mode : DG_PADDING_EXPLICIT;
    a.p.ceil_mode = t_range(0, 1);
    a.p.count_include_pad = t_range(0, 1);
    bool extreme = c % 4 == 3;
    float sx = t_uniform(0.005f, 0.05f);
    float sy = sx * (extreme ? t_uniform(0.005f, 0.02f) : t_uniform(0.2f, 2));
    a.yq = (dg_quant_params){.scale = sy, .zero_point = zero_of(a.yt, extreme)};
    dg_tensor_desc d = qdesc(xt, 4, xd, sx, zero_of(xt, extreme));
    char label[200];
    snprintf(label, sizeof label,
             "qavg_pool2d %s -> %s case %d (k %dx%d, s %dx%d, dil %dx%d, pads "
             "%d %d %d %d, mode %d, ceil %d, include pad %d)",
             tn(xt), tn(a.yt), c, a.p.kernel[0], a.p.kernel[1], a.p.stride[0],
             a.p.stride[1], a.p.dilation[0], a.p.dilation[1], a.p.pads[0],
             a.p.pads[1], a.p.pads[2], a.p.pads[3], (int)a.p.padding,
             a.p.ceil_mode, a.p.count_include_pad);
    q8_case(&st, label, 1, &d, NULL, make_qpool, &a, NULL);
  }
  char what[64];
  snprintf(what, sizeof what, "qavg_pool2d %s", tn(xt));
  q8_report(what, &st);
}

static void qglobal_cases(void) {
  static const int64_t planes[][2] = {{1, 1},  {7, 7},  {56, 56}, {3, 5},
                                      {13, 1}, {1, 17}, {32, 32}, {100, 90}};
  q8_stats st = {0};
  for (size_t i = 0; i < sizeof planes / sizeof *planes; i++)
    for (int c = 0; c < 4; c++) {
      qp_arg a = {.global = true, .yt = rand_q8()};
      dg_dtype xt = rand_q8();
      int64_t xd[4] = {t_range(1, 2), t_range(1, planes[i][0] > 50 ? 4 : 16),
                       planes[i][0], planes[i][1]};
      bool extreme = c == 3;
      float sx = t_uniform(0.005f, 0.05f);
      float sy = sx * (extreme ? t_uniform(0.005f, 0.02f) : t_uniform(0.2f, 2));
      a.yq =
          (dg_quant_params){.scale = sy, .zero_point = zero_of(a.yt, extreme)};
      dg_tensor_desc d = qdesc(xt, 4, xd, sx, zero_of(xt, extreme));
      char label[160];
      snprintf(label, sizeof label,
               "qglobal_avg_pool %s -> %s [%lld,%lld,%lld,%lld]", tn(xt),
               tn(a.yt), (long long)xd[0], (long long)xd[1], (long long)xd[2],
               (long long)xd[3]);
      q8_case(&st, label, 1, &d, NULL, make_qpool, &a, NULL);
    }
  q8_report("qglobal_avg_pool (planes 1x1 to 100x90)", &st);
}

/* ---- qconcat ---- */

typedef struct qc_arg {
  int count, axis, requants; /* requants: inputs whose quant is not y's */
  dg_dtype yt;
  dg_quant_params yq;
} qc_arg;

static dg_tensor make_qconcat(dg_graph *g, dg_tensor *in, void *arg) {
  qc_arg *a = arg;
  return dg_graph_qconcat(g, "op", in, a->count, a->axis, a->yt, &a->yq);
}

static int count_op(const dg_graph *g, dg_op op) {
  int n = 0;
  for (int i = 0; i < g->ir.node_count; i++)
    n += g->ir.nodes[i].op == op;
  return n;
}

static void qconcat_cases(void) {
  q8_stats st = {0};
  enum { QCONCAT_CASES = 24 };
  for (int c = 0; c < QCONCAT_CASES; c++) {
    qc_arg a = {.count = t_range(1, 4), .yt = rand_q8()};
    a.yq = (dg_quant_params){.scale = t_uniform(0.005f, 0.05f),
                             .zero_point = zero_of(a.yt, c % 4 == 3)};
    int rank = t_range(1, 4);
    int64_t dims[4];
    random_dims(rank, dims, 1, 6);
    int ax = t_range(0, rank - 1);
    a.axis = t_range(0, 1) ? ax : ax - rank; /* negative axes too */
    dg_tensor_desc d[4];
    for (int i = 0; i < a.count; i++) {
      dims[ax] = t_range(1, 5);
      if (t_range(0, 2) == 0) { /* y's own: joined as it is */
        d[i] = qdesc(a.yt, rank, dims, a.yq.scale, a.yq.zero_point);
        continue;
      }
      dg_dtype t = rand_q8();
      d[i] = qdesc(t, rank, dims, a.yq.scale * t_uniform(0.2f, 5),
                   zero_of(t, c % 4 == 3));
      a.requants++;
    }
    char label[160];
    snprintf(label, sizeof label,
             "qconcat case %d (%d inputs, %d requantised, rank %d, axis %d, "
             "-> %s)",
             c, a.count, a.requants, rank, a.axis, tn(a.yt));
    q8_case(&st, label, a.count, d, NULL, make_qconcat, &a, NULL);
    /* the composition itself: one lookup per input not in y's quant */
    dg_graph *g = dg_graph_create(ctx, "count");
    dg_tensor in[4];
    for (int i = 0; i < a.count; i++) {
      char name[8];
      snprintf(name, sizeof name, "in%d", i);
      in[i] = dg_graph_input(g, name, &d[i]);
    }
    make_qconcat(g, in, &a);
    if (count_op(g, DG_OP_LOOKUP) != a.requants ||
        count_op(g, DG_OP_CONCAT) != 1)
      fail(&st, "%s: %d lookup and %d concat nodes, want %d and 1", label,
           count_op(g, DG_OP_LOOKUP), count_op(g, DG_OP_CONCAT), a.requants);
    dg_graph_destroy(g);
  }
  q8_report("qconcat (requantising lookups + concat)", &st);
}

/* ---- values worked by hand from docs/numerics.md ---- */

/* One hand case: inputs a (and b) of the given descs and bytes; want the
 * expected output bytes, which the reference must give too. */
static void hand(const char *what, int n_in, const dg_tensor_desc *d,
                 const void *a, const void *b, make_fn make, void *arg,
                 const void *want) {
  q8_stats st = {0};
  const void *given[2] = {a, b};
  q8_case(&st, what, n_in, d, given, make, arg, want);
  char label[200];
  snprintf(label, sizeof label, "by hand: %s", what);
  q8_report(label, &st);
}

static dg_tensor_desc row(dg_dtype t, int64_t n, float scale, int32_t zero) {
  return qdesc(t, 1, (int64_t[]){n}, scale, zero);
}

static void hand_qbinary(void) {
  /* add: ra = 0.5 / 1, rb = 0.25 / 1 (exact); v = rint(0.5 da + 0.25 db)
   * half to even, then + zy = 100, saturated at 127 */
  dg_tensor_desc d[2] = {row(DG_DTYPE_I8, 8, 0.5f, 0),
                         row(DG_DTYPE_I8, 8, 0.25f, 0)};
  qb_arg add = {DG_BINARY_ADD, DG_DTYPE_I8, {.scale = 1, .zero_point = 100}};
  hand("qbinary add i8: ties to even, + zy, saturation at 127", 2, d,
       (int8_t[]){1, 3, 5, -1, -3, 100, -100, 2},
       (int8_t[]){0, 0, 0, 0, 0, 127, -128, 2}, make_qbinary, &add,
       (int8_t[]){100, 102, 102, 100, 98, 127, 18, 102});
  /* sub u8: ra = 1, rb = -1: y = (a - 128) - (b - 128) + 10 in [0, 255] */
  dg_tensor_desc u[2] = {row(DG_DTYPE_U8, 4, 0.5f, 128),
                         row(DG_DTYPE_U8, 4, 0.5f, 128)};
  qb_arg sub = {DG_BINARY_SUB, DG_DTYPE_U8, {.scale = 0.5f, .zero_point = 10}};
  hand("qbinary sub u8: saturation at both ends", 2, u,
       (uint8_t[]){128, 0, 255, 130}, (uint8_t[]){128, 255, 0, 129},
       make_qbinary, &sub, (uint8_t[]){10, 0, 255, 11});
  /* mul i8 x u8 -> i8: m = (0.5 * 0.25) / 0.25 = 0.5; acc = (a - 1)(b -
   * 128): 1, -4, -16256, -16128, 0, 16384, 3, 5 -> 0.5 (to 0), -2, sat,
   * sat, 0, sat, 1.5 (to 2), 2.5 (to 2), + zy = -3 */
  dg_tensor_desc m[2] = {row(DG_DTYPE_I8, 8, 0.5f, 1),
                         row(DG_DTYPE_U8, 8, 0.25f, 128)};
  qb_arg mul = {DG_BINARY_MUL, DG_DTYPE_I8, {.scale = 0.25f, .zero_point = -3}};
  hand("qbinary mul i8 x u8: ties to even, saturation", 2, m,
       (int8_t[]){2, 3, -127, 127, 1, -127, 4, 6},
       (uint8_t[]){129, 126, 255, 0, 77, 0, 129, 129}, make_qbinary, &mul,
       (int8_t[]){-3, -5, -128, -128, -3, 127, -1, -1});
  /* a [2,2] i8 + a scalar u8 3, all scales 1: y = a + 3 saturated to u8 */
  dg_tensor_desc s[2] = {qdesc(DG_DTYPE_I8, 2, (int64_t[]){2, 2}, 1, 0),
                         row(DG_DTYPE_U8, 1, 1, 0)};
  qb_arg sc = {DG_BINARY_ADD, DG_DTYPE_U8, {.scale = 1, .zero_point = 0}};
  hand("qbinary add of a scalar, i8 + u8 -> u8", 2, s,
       (int8_t[]){-5, 0, 100, 127}, (uint8_t[]){3}, make_qbinary, &sc,
       (uint8_t[]){0, 3, 103, 130});
}

static void hand_lookup(void) {
  /* requantize: (q * 0.5) / 1 rounded half to even (-0.5 gives -0 -> 0) */
  dg_tensor_desc x = row(DG_DTYPE_I8, 7, 0.5f, 0);
  lu_arg rq = {.kind = 1, .yt = DG_DTYPE_I8, .yq = {.scale = 1}};
  hand("requantize i8 0.5 -> 1: ties to even", 1, &x,
       (int8_t[]){1, 3, 5, -1, -3, -128, 127}, NULL, make_lookup, &rq,
       (int8_t[]){0, 2, 2, 0, -2, -64, 64});
  /* i8 -> u8 at the same scale with zy = zx + 128: every q gives q + 128
   * (fl(fl(k * s) / s) is within 2^-22 k of k, far from a tie). */
  int8_t ramp[256];
  uint8_t plus128[256];
  for (int i = 0; i < 256; i++) {
    ramp[i] = (int8_t)(i - 128);
    plus128[i] = (uint8_t)i;
  }
  dg_tensor_desc r = row(DG_DTYPE_I8, 256, 0.1f, -3);
  lu_arg sh = {
      .kind = 1, .yt = DG_DTYPE_U8, .yq = {.scale = 0.1f, .zero_point = 125}};
  hand("requantize i8 -> u8, zero point + 128: all 256 values", 1, &r, ramp,
       NULL, make_lookup, &sh, plus128);
  /* relu: r = (q + 10) * 0.5, y = rint(max(r, 0) / 0.25) + 5, <= 255 */
  x = row(DG_DTYPE_I8, 6, 0.5f, -10);
  lu_arg relu = {.kind = 0,
                 .fn = DG_UNARY_RELU,
                 .yt = DG_DTYPE_U8,
                 .yq = {.scale = 0.25f, .zero_point = 5}};
  hand("qunary relu i8 -> u8", 1, &x, (int8_t[]){-10, -20, -9, 0, 117, -128},
       NULL, make_lookup, &relu, (uint8_t[]){5, 5, 7, 25, 255, 5});
  /* sigmoid: r = (q - 128) / 16; 256 sigmoid(r): 128, 255.9 (-> 256,
   * saturated), 0.086, 159.35, 96.65 */
  x = row(DG_DTYPE_U8, 5, 0.0625f, 128);
  lu_arg sig = {.kind = 0,
                .fn = DG_UNARY_SIGMOID,
                .yt = DG_DTYPE_U8,
                .yq = {.scale = 1.0f / 256}};
  hand("qunary sigmoid u8 -> u8 at 1/256", 1, &x,
       (uint8_t[]){128, 255, 0, 136, 120}, NULL, make_lookup, &sig,
       (uint8_t[]){128, 255, 0, 159, 97});
  /* hard_sigmoid alpha 0.25 beta 0.5: clamp(x / 4 + 1 / 2, 0, 1) / 0.125
   * - 64 */
  x = row(DG_DTYPE_I8, 7, 1, 0);
  lu_arg hsg = {.kind = 0,
                .fn = DG_UNARY_HARD_SIGMOID,
                .alpha = 0.25f,
                .beta = 0.5f,
                .yt = DG_DTYPE_I8,
                .yq = {.scale = 0.125f, .zero_point = -64}};
  hand("qunary hard_sigmoid alpha 0.25 beta 0.5", 1, &x,
       (int8_t[]){0, 1, 2, -2, -1, -3, 100}, NULL, make_lookup, &hsg,
       (int8_t[]){-60, -58, -56, -64, -62, -64, -56});
  /* hard_swish x * clamp(x / 6 + 1 / 2, 0, 1), y scale 0.5: 1 gives 2/3
   * / 0.5 = 1.33 -> 1, -1 gives -1/3 / 0.5 -> -1 */
  x = row(DG_DTYPE_I8, 6, 1, 0);
  lu_arg hsw = {.kind = 0,
                .fn = DG_UNARY_HARD_SWISH,
                .yt = DG_DTYPE_I8,
                .yq = {.scale = 0.5f}};
  hand("qunary hard_swish", 1, &x, (int8_t[]){0, 3, -3, 1, 4, -1}, NULL,
       make_lookup, &hsw, (int8_t[]){0, 6, 0, 1, 8, -1});
  /* leaky_relu alpha 0.5: r = q / 2, y = rint(lr(r) / 0.25), saturated */
  x = row(DG_DTYPE_I8, 5, 0.5f, 0);
  lu_arg lr = {.kind = 0,
               .fn = DG_UNARY_LEAKY_RELU,
               .alpha = 0.5f,
               .yt = DG_DTYPE_I8,
               .yq = {.scale = 0.25f}};
  hand("qunary leaky_relu alpha 0.5", 1, &x, (int8_t[]){-4, 4, -1, -128, 127},
       NULL, make_lookup, &lr, (int8_t[]){-4, 8, -1, -128, 127});
  /* tanh: r = q / 4, y = rint(128 tanh(r)): tanh(0.5) = 0.4621 -> 59.15 */
  x = row(DG_DTYPE_I8, 5, 0.25f, 0);
  lu_arg th = {.kind = 0,
               .fn = DG_UNARY_TANH,
               .yt = DG_DTYPE_I8,
               .yq = {.scale = 1.0f / 128}};
  hand("qunary tanh at 1/128", 1, &x, (int8_t[]){0, 127, -128, 2, -2}, NULL,
       make_lookup, &th, (int8_t[]){0, 127, -128, 59, -59});
  /* a user table 255 - i: an i8 x indexes at x + 128, a u8 at x */
  lu_arg ut = {.kind = 2, .yt = DG_DTYPE_U8, .yq = {.scale = 1}};
  for (int i = 0; i < 256; i++)
    ut.table[i] = (uint8_t)(255 - i);
  x = row(DG_DTYPE_I8, 4, 1, 0);
  hand("lookup i8 x: table[x + 128]", 1, &x, (int8_t[]){-128, -1, 0, 127}, NULL,
       make_lookup, &ut, (uint8_t[]){255, 128, 127, 0});
  x = row(DG_DTYPE_U8, 2, 1, 0);
  hand("lookup u8 x: table[x]", 1, &x, (uint8_t[]){0, 200}, NULL, make_lookup,
       &ut, (uint8_t[]){255, 55});
}

static void hand_pool(void) {
  /* 2x2 windows, stride 2, of x - 2: sums 6, 2, 10 over n = 4, m = 1 / (1
   * * 4) = 0.25: 1.5, 0.5, 2.5 to even 2, 0, 2, then + zy = -1 */
  dg_tensor_desc x = qdesc(DG_DTYPE_I8, 4, (int64_t[]){1, 1, 2, 6}, 1, 2);
  qp_arg p = {.p = {.kernel = {2, 2}, .stride = {2, 2}},
              .yt = DG_DTYPE_I8,
              .yq = {.scale = 1, .zero_point = -1}};
  hand("qavg_pool2d 2x2: ties to even, + zy", 1, &x,
       (int8_t[]){4, 6, 3, 3, 6, 6, 2, 2, 2, 2, 3, 3}, NULL, make_qpool, &p,
       (int8_t[]){1, -1, 1});
  /* one row 5 7 9, k 2, stride 2, pads 1 and 1: windows {pad, 5} and {7,
   * 9}: n = 1 (5) or with count_include_pad 2 (2.5 -> 2); 16 / 2 = 8 */
  x = qdesc(DG_DTYPE_U8, 4, (int64_t[]){1, 1, 1, 3}, 1, 0);
  qp_arg q = {.p = {.kernel = {1, 2}, .stride = {1, 2}, .pads = {0, 1, 0, 1}},
              .yt = DG_DTYPE_U8,
              .yq = {.scale = 1}};
  hand("qavg_pool2d, a pad excluded from n", 1, &x, (uint8_t[]){5, 7, 9}, NULL,
       make_qpool, &q, (uint8_t[]){5, 8});
  q.p.count_include_pad = 1;
  hand("qavg_pool2d, a pad counted in n", 1, &x, (uint8_t[]){5, 7, 9}, NULL,
       make_qpool, &q, (uint8_t[]){2, 8});
  /* one column 2 4 6, k 3, stride 2, bottom pad 1, ceil mode: windows
   * rows 0-2 (12 / 3) and 2-4: row 2 inside, 3 the pad (counted), 4 past
   * the end padding (never counted): 6 / 2 */
  x = qdesc(DG_DTYPE_I8, 4, (int64_t[]){1, 1, 3, 1}, 1, 0);
  qp_arg ov = {.p = {.kernel = {3, 1},
                     .stride = {2, 1},
                     .pads = {0, 0, 1, 0},
                     .ceil_mode = 1,
                     .count_include_pad = 1},
               .yt = DG_DTYPE_I8,
               .yq = {.scale = 1}};
  hand("qavg_pool2d, ceil mode past the end pad, pads counted", 1, &x,
       (int8_t[]){2, 4, 6}, NULL, make_qpool, &ov, (int8_t[]){4, 3});
  /* the same along a row, u8 */
  x = qdesc(DG_DTYPE_U8, 4, (int64_t[]){1, 1, 1, 3}, 1, 0);
  ov.p = (dg_pool2d_params){.kernel = {1, 3},
                            .stride = {1, 2},
                            .pads = {0, 0, 0, 1},
                            .ceil_mode = 1,
                            .count_include_pad = 1};
  ov.yt = DG_DTYPE_U8;
  hand("qavg_pool2d, ceil mode past the end pad, along a row", 1, &x,
       (uint8_t[]){2, 4, 6}, NULL, make_qpool, &ov, (uint8_t[]){4, 3});
  /* global over 3 taps: m = 0.5 / (0.5 * 3) = fl(1/3) = 0.33333334; sums
   * 6 -> 2.0000000, 381 -> 127.0, -383 -> -127.67 -> -128, then + 1 */
  x = qdesc(DG_DTYPE_I8, 4, (int64_t[]){1, 3, 1, 3}, 0.5f, 0);
  qp_arg gp = {.global = true,
               .yt = DG_DTYPE_I8,
               .yq = {.scale = 0.5f, .zero_point = 1}};
  hand("qglobal_avg_pool over 3 taps, saturation", 1, &x,
       (int8_t[]){1, 2, 3, 127, 127, 127, -128, -128, -127}, NULL, make_qpool,
       &gp, (int8_t[]){3, 127, -127});
}

static void hand_qconcat(void) {
  /* a i8 scale 0.5 -> y (i8, 1, 0): 1, 3 -> 0.5, 1.5 -> 0, 2; b u8 (1,
   * 128): 130, 0 -> 2, -128; c already y's: as it is */
  dg_tensor_desc d[3] = {qdesc(DG_DTYPE_I8, 2, (int64_t[]){1, 2}, 0.5f, 0),
                         qdesc(DG_DTYPE_U8, 2, (int64_t[]){1, 2}, 1, 128),
                         qdesc(DG_DTYPE_I8, 2, (int64_t[]){1, 2}, 1, 0)};
  qc_arg a = {.count = 3, .axis = 1, .yt = DG_DTYPE_I8, .yq = {.scale = 1}};
  q8_stats st = {0};
  const void *given[3] = {(int8_t[]){1, 3}, (uint8_t[]){130, 0},
                          (int8_t[]){5, -7}};
  const char *what = "qconcat of three quantisations, axis 1";
  q8_case(&st, what, 3, d, given, make_qconcat, &a,
          (const uint8_t *)(int8_t[]){0, 2, 2, -128, 5, -7});
  char label[96];
  snprintf(label, sizeof label, "by hand: %s", what);
  q8_report(label, &st);
}

/* ---- bad inputs ---- */

static const int64_t dims_4[4] = {1, 2, 4, 4};

/* A graph with i8 input "x" [1,2,4,4] (scale sx, zero 0) as *x, and,
 * when b is not NULL, a second input "b" of descriptor bd. */
static dg_graph *bad_graph(dg_tensor *x, float sx, dg_tensor *b,
                           const dg_tensor_desc *bd) {
  dg_graph *g = dg_graph_create(ctx, "bad");
  dg_tensor_desc xd = qdesc(DG_DTYPE_I8, 4, dims_4, sx, 0);
  *x = dg_graph_input(g, "x", &xd);
  if (b)
    *b = dg_graph_input(g, "b", bd);
  return g;
}

static void bad_qbinary(void) {
  dg_quant_params yq = {.scale = 0.1f}, tiny = {.scale = 1e-38f};
  float cs[2] = {0.1f, 0.2f};
  int32_t cz[2] = {0, 0};
  dg_quant_params pc = {.axis = 1,
                        .channel_count = 2,
                        .channel_scales = cs,
                        .channel_zero_points = cz};
  dg_tensor_desc same = qdesc(DG_DTYPE_U8, 4, dims_4, 0.1f, 128);
  dg_tensor_desc f32 = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, 2, 4, 4}};
  dg_tensor_desc wide = qdesc(DG_DTYPE_I8, 1, (int64_t[]){3}, 0.1f, 0);
  dg_tensor_desc perch = same;
  perch.quant = pc;
  dg_tensor_desc tinyb = qdesc(DG_DTYPE_U8, 4, dims_4, 1e-30f, 128);
  struct {
    const char *what;
    dg_binary_fn fn;
    const dg_tensor_desc *bd;
    dg_dtype yt;
    const dg_quant_params *yq;
    float sx;
    dg_status st;
    const char *field;
  } cases[] = {
      {"qbinary y_quant NULL", DG_BINARY_ADD, &same, DG_DTYPE_I8, NULL, 0.1f,
       DG_ERROR_INVALID_ARGUMENT, "y_quant"},
      {"qbinary y_dtype f32", DG_BINARY_ADD, &same, DG_DTYPE_F32, &yq, 0.1f,
       DG_ERROR_INVALID_DTYPE, "y_dtype"},
      {"qbinary y_dtype i32", DG_BINARY_MUL, &same, DG_DTYPE_I32, &yq, 0.1f,
       DG_ERROR_INVALID_DTYPE, "y_dtype"},
      {"qbinary per-channel y_quant", DG_BINARY_ADD, &same, DG_DTYPE_I8, &pc,
       0.1f, DG_ERROR_INVALID_ARGUMENT, "y_quant"},
      {"qbinary per-channel b", DG_BINARY_SUB, &perch, DG_DTYPE_I8, &yq, 0.1f,
       DG_ERROR_INVALID_ARGUMENT, "b"},
      {"qbinary f32 b", DG_BINARY_MUL, &f32, DG_DTYPE_I8, &yq, 0.1f,
       DG_ERROR_INVALID_DTYPE, "b"},
      {"qbinary fn DIV", DG_BINARY_DIV, &same, DG_DTYPE_I8, &yq, 0.1f,
       DG_ERROR_INVALID_ARGUMENT, "fn"},
      {"qbinary fn MAX", DG_BINARY_MAX, &same, DG_DTYPE_I8, &yq, 0.1f,
       DG_ERROR_INVALID_ARGUMENT, "fn"},
      {"qbinary fn 999", (dg_binary_fn)999, &same, DG_DTYPE_I8, &yq, 0.1f,
       DG_ERROR_INVALID_ARGUMENT, "fn"},
      {"qbinary [1,2,4,4] with [3]", DG_BINARY_ADD, &wide, DG_DTYPE_I8, &yq,
       0.1f, DG_ERROR_INVALID_SHAPE, "b"},
      {"qbinary add x scale 1e30 over y scale 1e-38", DG_BINARY_ADD, &same,
       DG_DTYPE_I8, &tiny, 1e30f, DG_ERROR_INVALID_ARGUMENT, "y_quant.scale"},
      {"qbinary mul x scale 1e30 over y scale 1e-38", DG_BINARY_MUL, &same,
       DG_DTYPE_I8, &tiny, 1e30f, DG_ERROR_INVALID_ARGUMENT, "y_quant.scale"},
      {"qbinary sub ratio 1e-40 (denormal)", DG_BINARY_SUB, &same, DG_DTYPE_U8,
       &(dg_quant_params){.scale = 1e10f}, 1e-30f, DG_ERROR_INVALID_ARGUMENT,
       "y_quant.scale"},
      {"qbinary mul scale product 1e-60 (0 in fp32)", DG_BINARY_MUL, &tinyb,
       DG_DTYPE_I8, &yq, 1e-30f, DG_ERROR_INVALID_ARGUMENT, "y_quant.scale"},
      /* ratio 1e38 is normal, but 255 times it is inf: inf - inf = NaN */
      {"qbinary add ratio 1e38 (255 x ratio overflows)", DG_BINARY_ADD, &same,
       DG_DTYPE_I8, &(dg_quant_params){.scale = 1e-8f}, 1e30f,
       DG_ERROR_INVALID_ARGUMENT, "y_quant.scale"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    dg_tensor x, b;
    dg_graph *g = bad_graph(&x, cases[i].sx, &b, cases[i].bd);
    dg_tensor y =
        dg_graph_qbinary(g, "op", cases[i].fn, x, b, cases[i].yt, cases[i].yq);
    expect_error(g, cases[i].what, y, cases[i].st, cases[i].field);
    dg_graph_destroy(g);
  }
  /* an f32 a (first operand) names a */
  dg_tensor x, b;
  dg_graph *g = bad_graph(&x, 0.1f, &b, &f32);
  expect_error(g, "qbinary f32 a",
               dg_graph_qbinary(g, "op", DG_BINARY_ADD, b, x, DG_DTYPE_I8, &yq),
               DG_ERROR_INVALID_DTYPE, "a");
  dg_graph_destroy(g);
}

/* Each lookup-family builder: 0 lookup, 1 qunary (sigmoid), 2 requantize. */
static dg_tensor lookup_builder(int which, dg_graph *g, dg_tensor x,
                                const void *table, dg_dtype yt,
                                const dg_quant_params *yq) {
  return which == 0 ? dg_graph_lookup(g, "op", x, table, yt, yq)
         : which == 1
             ? dg_graph_qunary(g, "op", DG_UNARY_SIGMOID, x, 0, 0, yt, yq)
             : dg_graph_requantize(g, "op", x, yt, yq);
}

static void bad_lookup(void) {
  static const char *const names[3] = {"lookup", "qunary", "requantize"};
  static const uint8_t table[256];
  dg_quant_params yq = {.scale = 0.1f}, pc = {.axis = 1, .channel_count = 2};
  float cs[2] = {0.1f, 0.2f};
  int32_t cz[2] = {0, 0};
  pc.channel_scales = cs, pc.channel_zero_points = cz;
  dg_tensor_desc f32 = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, 2, 4, 4}};
  dg_tensor_desc perch = qdesc(DG_DTYPE_I8, 4, dims_4, 0.1f, 0);
  perch.quant = pc;
  for (int w = 0; w < 3; w++) {
    char what[96];
    dg_tensor x, b;
    dg_graph *g = bad_graph(&x, 0.1f, NULL, NULL);
    snprintf(what, sizeof what, "%s y_quant NULL", names[w]);
    expect_error(g, what, lookup_builder(w, g, x, table, DG_DTYPE_I8, NULL),
                 DG_ERROR_INVALID_ARGUMENT, "y_quant");
    dg_graph_destroy(g);
    g = bad_graph(&x, 0.1f, NULL, NULL);
    snprintf(what, sizeof what, "%s y_dtype f32", names[w]);
    expect_error(g, what, lookup_builder(w, g, x, table, DG_DTYPE_F32, &yq),
                 DG_ERROR_INVALID_DTYPE, "y_dtype");
    dg_graph_destroy(g);
    g = bad_graph(&x, 0.1f, NULL, NULL);
    snprintf(what, sizeof what, "%s per-channel y_quant", names[w]);
    expect_error(g, what, lookup_builder(w, g, x, table, DG_DTYPE_U8, &pc),
                 DG_ERROR_INVALID_ARGUMENT, "y_quant");
    dg_graph_destroy(g);
    g = bad_graph(&x, 0.1f, &b, &f32);
    snprintf(what, sizeof what, "%s f32 x", names[w]);
    expect_error(g, what, lookup_builder(w, g, b, table, DG_DTYPE_I8, &yq),
                 DG_ERROR_INVALID_DTYPE, "x");
    dg_graph_destroy(g);
    if (w == 0)
      continue; /* a lookup's quantisations are labels */
    g = bad_graph(&x, 0.1f, &b, &perch);
    snprintf(what, sizeof what, "%s per-channel x", names[w]);
    expect_error(g, what, lookup_builder(w, g, b, table, DG_DTYPE_I8, &yq),
                 DG_ERROR_INVALID_ARGUMENT, "x");
    dg_graph_destroy(g);
  }
  dg_tensor x;
  dg_graph *g = bad_graph(&x, 0.1f, NULL, NULL);
  expect_error(g, "lookup table NULL",
               dg_graph_lookup(g, "op", x, NULL, DG_DTYPE_I8, &yq),
               DG_ERROR_INVALID_ARGUMENT, "table");
  dg_graph_destroy(g);
  g = bad_graph(&x, 0.1f, NULL, NULL);
  expect_error(g, "qunary fn 0",
               dg_graph_qunary(g, "op", 0, x, 0, 0, DG_DTYPE_I8, &yq),
               DG_ERROR_INVALID_ARGUMENT, "fn");
  dg_graph_destroy(g);
  g = bad_graph(&x, 0.1f, NULL, NULL);
  expect_error(
      g, "qunary relu with an alpha",
      dg_graph_qunary(g, "op", DG_UNARY_RELU, x, 0.5f, 0, DG_DTYPE_I8, &yq),
      DG_ERROR_INVALID_ARGUMENT, "alpha");
  dg_graph_destroy(g);
  g = bad_graph(&x, 0.1f, NULL, NULL);
  expect_error(g, "requantize y scale -1",
               dg_graph_requantize(g, "op", x, DG_DTYPE_I8,
                                   &(dg_quant_params){.scale = -1}),
               DG_ERROR_INVALID_ARGUMENT, "y_quant");
  dg_graph_destroy(g);
  g = bad_graph(&x, 0.1f, NULL, NULL);
  expect_error(
      g, "requantize y zero point 200 for i8",
      dg_graph_requantize(g, "op", x, DG_DTYPE_I8,
                          &(dg_quant_params){.scale = 1, .zero_point = 200}),
      DG_ERROR_INVALID_ARGUMENT, "y_quant");
  dg_graph_destroy(g);
}

static void bad_qpool(void) {
  dg_quant_params yq = {.scale = 0.1f}, tiny = {.scale = 1e-38f};
  dg_quant_params pc = {.axis = 1, .channel_count = 2};
  float cs[2] = {0.1f, 0.2f};
  int32_t cz[2] = {0, 0};
  pc.channel_scales = cs, pc.channel_zero_points = cz;
  dg_pool2d_params ok = {.kernel = {2, 2}};
  struct {
    const char *what;
    dg_pool2d_params p;
    const dg_quant_params *yq;
    dg_dtype yt;
    float sx;
    dg_status st;
    const char *field;
  } cases[] = {
      {"qavg_pool2d y_quant NULL", ok, NULL, DG_DTYPE_I8, 0.1f,
       DG_ERROR_INVALID_ARGUMENT, "y_quant"},
      {"qavg_pool2d y_dtype f32", ok, &yq, DG_DTYPE_F32, 0.1f,
       DG_ERROR_INVALID_DTYPE, "y_dtype"},
      {"qavg_pool2d per-channel y_quant", ok, &pc, DG_DTYPE_I8, 0.1f,
       DG_ERROR_INVALID_ARGUMENT, "y_quant"},
      {"qavg_pool2d x scale 1e30 over y scale 1e-38", ok, &tiny, DG_DTYPE_I8,
       1e30f, DG_ERROR_INVALID_ARGUMENT, "y_quant.scale"},
      /* normal for one tap (3.3e-38), not for the window's 4 (8.3e-39):
       * refused, as the builder checks both ends of the divisors */
      {"qavg_pool2d multiplier of 4 taps denormal", ok,
       &(dg_quant_params){.scale = 3e34f}, DG_DTYPE_I8, 1e-3f,
       DG_ERROR_INVALID_ARGUMENT, "y_quant.scale"},
      {"qavg_pool2d window of 4096 x 4096 taps (> 2^23)",
       {.kernel = {4096, 4096}},
       &yq,
       DG_DTYPE_I8,
       0.1f,
       DG_ERROR_INVALID_ARGUMENT,
       "params.kernel"},
      {"qavg_pool2d kernel 0",
       {.kernel = {0, 2}},
       &yq,
       DG_DTYPE_I8,
       0.1f,
       DG_ERROR_INVALID_ARGUMENT,
       "params.kernel"},
      {"qavg_pool2d stride -1",
       {.kernel = {2, 2}, .stride = {-1, 1}},
       &yq,
       DG_DTYPE_I8,
       0.1f,
       DG_ERROR_INVALID_ARGUMENT,
       "params.stride"},
      {"qavg_pool2d padding mode 99",
       {.kernel = {2, 2}, .padding = 99},
       &yq,
       DG_DTYPE_I8,
       0.1f,
       DG_ERROR_INVALID_ARGUMENT,
       "params.padding"},
      {"qavg_pool2d dilation -2",
       {.kernel = {2, 2}, .dilation = {1, -2}},
       &yq,
       DG_DTYPE_U8,
       0.1f,
       DG_ERROR_INVALID_ARGUMENT,
       "params.dilation"},
      {"qavg_pool2d window of 5 rows over 4",
       {.kernel = {5, 1}},
       &yq,
       DG_DTYPE_I8,
       0.1f,
       DG_ERROR_INVALID_SHAPE,
       "x.dims[2]"},
      {"qavg_pool2d pad as wide as the window",
       {.kernel = {2, 2}, .pads = {2, 0, 0, 0}},
       &yq,
       DG_DTYPE_I8,
       0.1f,
       DG_ERROR_INVALID_ARGUMENT,
       "params.pads"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    dg_tensor x;
    dg_graph *g = bad_graph(&x, cases[i].sx, NULL, NULL);
    dg_tensor y =
        dg_graph_qavg_pool2d(g, "op", x, &cases[i].p, cases[i].yt, cases[i].yq);
    expect_error(g, cases[i].what, y, cases[i].st, cases[i].field);
    dg_graph_destroy(g);
  }
  dg_tensor x, b;
  dg_graph *g = bad_graph(&x, 0.1f, NULL, NULL);
  expect_error(g, "qavg_pool2d params NULL",
               dg_graph_qavg_pool2d(g, "op", x, NULL, DG_DTYPE_I8, &yq),
               DG_ERROR_INVALID_ARGUMENT, "params");
  dg_graph_destroy(g);
  dg_tensor_desc f32 = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, 2, 4, 4}};
  dg_tensor_desc r3 = qdesc(DG_DTYPE_I8, 3, dims_4, 0.1f, 0);
  dg_tensor_desc perch = qdesc(DG_DTYPE_I8, 4, dims_4, 0.1f, 0);
  perch.quant = pc;
  dg_tensor_desc huge =
      qdesc(DG_DTYPE_U8, 4, (int64_t[]){1, 1, 4096, 4096}, 0.1f, 0);
  for (int global = 0; global < 2; global++) {
    const char *op = global ? "qglobal_avg_pool" : "qavg_pool2d";
    const dg_tensor_desc *bds[3] = {&f32, &r3, &perch};
    const char *whats[3] = {"f32 x", "rank-3 x", "per-channel x"};
    dg_status sts[3] = {DG_ERROR_INVALID_DTYPE, DG_ERROR_INVALID_SHAPE,
                        DG_ERROR_INVALID_ARGUMENT};
    for (int k = 0; k < 3; k++) {
      char what[96];
      snprintf(what, sizeof what, "%s %s", op, whats[k]);
      g = bad_graph(&x, 0.1f, &b, bds[k]);
      dg_tensor y =
          global ? dg_graph_qglobal_avg_pool(g, "op", b, DG_DTYPE_I8, &yq)
                 : dg_graph_qavg_pool2d(g, "op", b, &ok, DG_DTYPE_I8, &yq);
      expect_error(g, what, y, sts[k], "x");
      dg_graph_destroy(g);
    }
  }
  g = bad_graph(&x, 0.1f, &b, &huge);
  expect_error(g, "qglobal_avg_pool of a 4096 x 4096 plane (> 2^23 taps)",
               dg_graph_qglobal_avg_pool(g, "op", b, DG_DTYPE_I8, &yq),
               DG_ERROR_INVALID_SHAPE, "x.dims");
  dg_graph_destroy(g);
  g = bad_graph(&x, 1e30f, NULL, NULL);
  expect_error(g, "qglobal_avg_pool x scale 1e30 over y scale 1e-38",
               dg_graph_qglobal_avg_pool(g, "op", x, DG_DTYPE_U8, &tiny),
               DG_ERROR_INVALID_ARGUMENT, "y_quant.scale");
  dg_graph_destroy(g);
  g = bad_graph(&x, 0.1f, NULL, NULL);
  expect_error(g, "qglobal_avg_pool y_quant NULL",
               dg_graph_qglobal_avg_pool(g, "op", x, DG_DTYPE_U8, NULL),
               DG_ERROR_INVALID_ARGUMENT, "y_quant");
  dg_graph_destroy(g);
}

static void bad_qconcat(void) {
  dg_quant_params yq = {.scale = 0.1f};
  dg_tensor_desc f32 = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, 2, 4, 4}};
  dg_tensor_desc other =
      qdesc(DG_DTYPE_U8, 4, (int64_t[]){1, 2, 5, 4}, 0.1f, 3);
  dg_tensor x, b;
  dg_graph *g = bad_graph(&x, 0.1f, NULL, NULL);
  expect_error(
      g, "qconcat y_quant NULL",
      dg_graph_qconcat(g, "op", (dg_tensor[]){x, x}, 2, 1, DG_DTYPE_I8, NULL),
      DG_ERROR_INVALID_ARGUMENT, "y_quant");
  dg_graph_destroy(g);
  g = bad_graph(&x, 0.1f, NULL, NULL);
  expect_error(
      g, "qconcat y_dtype f32",
      dg_graph_qconcat(g, "op", (dg_tensor[]){x, x}, 2, 1, DG_DTYPE_F32, &yq),
      DG_ERROR_INVALID_DTYPE, "y_dtype");
  dg_graph_destroy(g);
  g = bad_graph(&x, 0.1f, NULL, NULL);
  expect_error(g, "qconcat tensors NULL",
               dg_graph_qconcat(g, "op", NULL, 2, 1, DG_DTYPE_I8, &yq),
               DG_ERROR_INVALID_ARGUMENT, "tensors");
  dg_graph_destroy(g);
  g = bad_graph(&x, 0.1f, NULL, NULL);
  expect_error(g, "qconcat of 0 tensors",
               dg_graph_qconcat(g, "op", &x, 0, 1, DG_DTYPE_I8, &yq),
               DG_ERROR_INVALID_ARGUMENT, "tensors");
  dg_graph_destroy(g);
  g = bad_graph(&x, 0.1f, &b, &f32);
  expect_error(
      g, "qconcat with an f32 tensors[1]",
      dg_graph_qconcat(g, "op", (dg_tensor[]){x, b}, 2, 1, DG_DTYPE_I8, &yq),
      DG_ERROR_INVALID_DTYPE, "tensors[1]");
  dg_graph_destroy(g);
  /* [1,2,4,4] and [1,2,5,4] join on axis 2, not 1 */
  g = bad_graph(&x, 0.1f, &b, &other);
  dg_tensor y =
      dg_graph_qconcat(g, "op", (dg_tensor[]){x, b}, 2, 2, DG_DTYPE_I8, &yq);
  CHECK(dg_graph_status(g) == DG_OK && y.id,
        "qconcat [1,2,4,4] and u8 [1,2,5,4] on axis 2 builds: %s",
        dg_graph_status(g) ? dg_graph_error(g)->message : "ok");
  dg_graph_destroy(g);
  g = bad_graph(&x, 0.1f, &b, &other);
  y = dg_graph_qconcat(g, "op", (dg_tensor[]){x, b}, 2, 1, DG_DTYPE_I8, &yq);
  const dg_diagnostic *d = dg_graph_error(g);
  CHECK(y.id == 0 && d && d->status == DG_ERROR_INVALID_SHAPE,
        "qconcat [1,2,4,4] and [1,2,5,4] on axis 1 -> INVALID_SHAPE (got %s: "
        "%s)",
        d ? dg_status_string(d->status) : "no error", d ? d->message : "");
  dg_graph_destroy(g);
}

int main(int argc, char **argv) {
  (void)run_case, (void)report, (void)desc_of;
  if (!diff_start(argc, argv))
    return t_exit();
  for (int d = 0; d < dg_context_device_count(ctx); d++) {
    dg_device_info info;
    dg_context_device_info(ctx, d, &info);
    printf("# device %d: %s (int8 deviation %d LSB)\n", d, info.name,
           info.int8_max_lsb_deviation);
  }
  hand_qbinary();
  hand_lookup();
  hand_pool();
  hand_qconcat();
  qbinary_cases(DG_BINARY_ADD);
  qbinary_cases(DG_BINARY_SUB);
  qbinary_cases(DG_BINARY_MUL);
  static const dg_unary_fn fns[] = {DG_UNARY_SIGMOID,      DG_UNARY_HARD_SWISH,
                                    DG_UNARY_HARD_SIGMOID, DG_UNARY_TANH,
                                    DG_UNARY_RELU,         DG_UNARY_LEAKY_RELU,
                                    DG_UNARY_GELU,         DG_UNARY_EXP};
  for (size_t i = 0; i < sizeof fns / sizeof *fns; i++)
    qunary_cases(fns[i]);
  requantize_cases();
  lookup_cases();
  qavg_cases(DG_DTYPE_I8);
  qavg_cases(DG_DTYPE_U8);
  qglobal_cases();
  qconcat_cases();
  bad_qbinary();
  bad_lookup();
  bad_qpool();
  bad_qconcat();
  dg_context_destroy(ctx);
  return t_exit();
}
