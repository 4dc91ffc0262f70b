/* The differential harness shared by tests/test_differential.c and the
 * per-family tests (test_diff_*.c): build a one-op graph on random inputs,
 * run it on every device of the context, and compare with the op's float64
 * reference kernel from src/ops. Float outputs must be within the dtype's
 * tolerance relative to the largest reference magnitude; integer outputs
 * within the device's declared int8 LSB deviation (0: bit-exact).
 *
 * Header-only (static functions): each test program includes it once and
 * sets ctx before the first case. */
#ifndef DG_TEST_DIFFERENTIAL_H
#define DG_TEST_DIFFERENTIAL_H

#include "graph.h"
#include "harness.h"
#include "ops/ops.h"
#include "runtime/internal.h"
#include "runtime/session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CASES 48
#define MAX_INPUTS 8 /* also bounds the node's inputs (batch_norm has 5) */

static dg_context *ctx; /* set by main before the first case */

typedef struct op_stats {
  int cases, failures, declined;
  double worst;
  char first_failure[400];
} op_stats;

static dg_tensor_desc desc_of(dg_dtype t, int rank, const int64_t *dims) {
  dg_tensor_desc d = {.dtype = t, .rank = rank};
  memcpy(d.dims, dims, sizeof(int64_t) * (size_t)rank);
  if (t == DG_DTYPE_I8 || t == DG_DTYPE_U8) {
    d.quant.scale = t_uniform(0.005f, 0.05f);
    d.quant.zero_point =
        t == DG_DTYPE_I8 ? t_range(-20, 20) : t_range(100, 150);
  }
  return d;
}

/* Floats are drawn from [-fill_span, fill_span]: 1 for most ops, wider
 * where an op's interesting range is (sigmoid's saturation). */
static float fill_span = 1.0f;
/* Set for ops defined only on positive inputs (log, sqrt): floats are then
 * drawn from [fill_span / 100, fill_span]. */
static bool fill_positive = false;

/* Set (> 0) for ops that compare values (comparisons, arg reductions):
 * floats and integers are drawn from 2 * fill_levels + 1 evenly spaced
 * values in [-fill_span, fill_span], so that ties are common. */
static int fill_levels = 0;
/* Set (in (0, 1]) to make that fraction of float elements NaN, +inf or
 * -inf (a third each), for the float tests. */
static double fill_specials = 0;

static float fill_float(void) {
  if (fill_specials > 0 && t_uniform(0, 1) < fill_specials) {
    int k = t_range(0, 2);
    return k == 0 ? NAN : k == 1 ? INFINITY : -INFINITY;
  }
  if (fill_levels > 0)
    return fill_span * (float)t_range(-fill_levels, fill_levels) /
           (float)fill_levels;
  return fill_positive ? t_uniform(fill_span / 100, fill_span)
                       : t_uniform(-fill_span, fill_span);
}

/* Device kinds (mask of dg_device_kind) that may decline a case: an NPU
 * runs a subset of shapes; a test sets more kinds for ops a target does
 * not run. Every other device must run every case. */
static unsigned declines_allowed = DG_DEVICE_NPU;

static void fill(const dg_tensor_desc *d, void *p) {
  int64_t n = dg_desc_elements(d);
  for (int64_t i = 0; i < n; i++)
    switch (d->dtype) {
    case DG_DTYPE_F32:
      ((float *)p)[i] = fill_float();
      break;
    case DG_DTYPE_F16:
      ((uint16_t *)p)[i] = dg_f32_to_f16(fill_float());
      break;
    case DG_DTYPE_I8:
      ((int8_t *)p)[i] = (int8_t)t_range(-128, 127);
      break;
    case DG_DTYPE_U8:
      ((uint8_t *)p)[i] = (uint8_t)t_range(0, 255);
      break;
    case DG_DTYPE_I32:
      ((int32_t *)p)[i] = fill_levels > 0 ? t_range(-fill_levels, fill_levels)
                                          : t_range(-2000, 2000);
      break;
    case DG_DTYPE_BOOL:
      ((uint8_t *)p)[i] = (uint8_t)t_range(0, 1);
      break;
    case DG_DTYPE_I64: /* beyond 2^32 both ways, exact in the double ref */
      ((int64_t *)p)[i] =
          fill_levels > 0
              ? (int64_t)t_range(-fill_levels, fill_levels) * ((int64_t)1 << 33)
              : (int64_t)t_range(-2000, 2000) * 3000000007LL;
      break;
    default:
      break;
    }
}

/* Compiles g for device dev alone: the device in *info, the session (or
 * NULL) in *s, what went wrong in *diag. */
static dg_status compile_on(dg_graph *g, int dev, dg_device_info *info,
                            dg_session **s, dg_diagnostic *diag) {
  dg_compile_options o = {.devices = &dev, .device_count = 1};
  *s = NULL;
  *diag = (dg_diagnostic){0};
  dg_context_device_info(ctx, dev, info);
  return dg_graph_compile(g, &o, s, diag);
}

/* Adds a case's op(s) to g on its inputs in. */
typedef dg_tensor (*make_fn)(dg_graph *g, dg_tensor *in, void *arg);

/* One case's graph g: inputs in0.. of descs, each with data (malloc'd)
 * copied from given[i] when given is not NULL, else made by fill_data, and
 * its binding; make()'s tensor y as the output "y". */
typedef struct case_graph {
  dg_graph *g;
  int n_in;
  dg_tensor in[MAX_INPUTS], y;
  void *data[MAX_INPUTS];
  dg_binding bind[MAX_INPUTS];
  char names[MAX_INPUTS][16];
} case_graph;

static void case_graph_build(case_graph *c, const char *label, int n_in,
                             const dg_tensor_desc *descs,
                             const void *const *given,
                             void (*fill_data)(const dg_tensor_desc *, void *),
                             make_fn make, void *arg) {
  c->g = dg_graph_create(ctx, label);
  c->n_in = n_in;
  for (int i = 0; i < n_in; i++) {
    snprintf(c->names[i], sizeof c->names[i], "in%d", i);
    c->in[i] = dg_graph_input(c->g, c->names[i], &descs[i]);
    size_t bytes = dg_desc_bytes(&descs[i]);
    c->data[i] = malloc(bytes);
    if (given)
      memcpy(c->data[i], given[i], bytes);
    else
      fill_data(&descs[i], c->data[i]);
    c->bind[i] = (dg_binding){c->names[i], c->data[i], bytes};
  }
  c->y = make(c->g, c->in, arg);
  dg_graph_output(c->g, "y", c->y, DG_LAYOUT_NCHW);
}

static void case_graph_free(case_graph *c) {
  for (int i = 0; i < c->n_in; i++)
    free(c->data[i]);
  dg_graph_destroy(c->g);
}

/* Builds the case's graph on random inputs, then on every device compares
 * the session's output with the reference. */
static void run_case(op_stats *st, const char *label, int n_in,
                     const dg_tensor_desc *descs, make_fn make, void *arg) {
  case_graph c;
  case_graph_build(&c, label, n_in, descs, NULL, fill, make, arg);
  dg_graph *g = c.g;
  st->cases++;
  if (dg_graph_status(g) != DG_OK) {
    st->failures++;
    if (!st->first_failure[0])
      snprintf(st->first_failure, sizeof st->first_failure,
               "%s: build failed: %.150s", label, dg_graph_error(g)->message);
    goto done;
  }
  const dg_ir *ir = &g->ir;
  const dg_node *n = &ir->nodes[ir->node_count - 1];
  const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
  int64_t ne = dg_desc_elements(yd);
  double *ref = malloc(sizeof(double) * (size_t)ne);
  double *ins[MAX_INPUTS] = {0};
  for (int k = 0; k < n->input_count; k++) {
    if (!n->inputs[k])
      continue;
    const dg_tensor_info *t = dg_ir_tensor(ir, n->inputs[k]);
    int64_t m = dg_desc_elements(&t->desc);
    ins[k] = malloc(sizeof(double) * (size_t)m);
    const void *src = t->constant ? t->constant->data : NULL;
    for (int i = 0; i < n_in; i++)
      if (c.in[i].id == n->inputs[k])
        src = c.data[i];
    for (int64_t e = 0; e < m; e++)
      ins[k][e] = dg_load_elem(t->desc.dtype, src, e);
  }
  dg_op_def_get(n->op)->reference(ir, n, (const double *const *)ins, ref);
  void *out = malloc(dg_desc_bytes(yd));
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    dg_session *s;
    dg_diagnostic diag;
    dg_device_info info;
    dg_status rc = compile_on(g, dev, &info, &s, &diag);
    if (rc == DG_ERROR_UNSUPPORTED && (info.kind & declines_allowed)) {
      st->declined++;
      continue;
    }
    if (rc == DG_OK)
      rc = dg_session_run(s, c.bind, n_in,
                          &(dg_binding){"y", out, dg_desc_bytes(yd)}, 1, &diag);
    double max_abs = 0, max_ref = 0;
    bool is_int = yd->dtype != DG_DTYPE_F32 && yd->dtype != DG_DTYPE_F16;
    for (int64_t e = 0; rc == DG_OK && e < ne; e++) {
      double v = dg_load_elem(yd->dtype, out, e);
      double d = fabs(v - ref[e]);
      if (!(d <= max_abs)) /* NaN counts as worst */
        max_abs = isnan(d) ? INFINITY : d;
      if (fabs(ref[e]) > max_ref)
        max_ref = fabs(ref[e]);
    }
    double err = is_int ? max_abs : max_abs / (max_ref > 0 ? max_ref : 1);
    double tol = is_int ? info.int8_max_lsb_deviation
                 : yd->dtype == DG_DTYPE_F16
                     ? 1e-2 + ldexp(info.f16_max_ulp_deviation, -10)
                     : 1e-4;
    if (rc != DG_OK || err > tol) {
      st->failures++;
      if (!st->first_failure[0])
        snprintf(st->first_failure, sizeof st->first_failure,
                 "%s on device %d: %.150s, error %g > %g", label, dev,
                 rc ? diag.message : "ran", err, tol);
    }
    if (err > st->worst)
      st->worst = err;
    dg_session_destroy(s);
  }
  for (int k = 0; k < MAX_INPUTS; k++)
    free(ins[k]);
  free(ref);
  free(out);
done:
  case_graph_free(&c);
}

static void report(const char *op, const op_stats *st) {
  char declined[64] = "";
  if (st->declined)
    snprintf(declined, sizeof declined, " (%d case-device pairs declined)",
             st->declined);
  CHECK(st->failures == 0,
        "%s: %d random cases on %d device(s)%s, worst "
        "error %.3g%s%s",
        op, st->cases, dg_context_device_count(ctx), declined, st->worst,
        st->failures ? "; first failure: " : "", st->first_failure);
}

static void random_dims(int rank, int64_t *d, int lo, int hi) {
  for (int i = 0; i < rank; i++)
    d[i] = t_range(lo, hi);
}

/* The first error of g must be st, naming field (a substring), and y the
 * failed op's none tensor. Inline: not every test has bad cases. */
static inline void expect_error(dg_graph *g, const char *what, dg_tensor y,
                                dg_status st, const char *field) {
  const dg_diagnostic *d = dg_graph_error(g);
  int ok = y.id == 0 && d && d->status == st && dg_graph_status(g) == st &&
           strstr(d->field, field) && strlen(d->message) > 10;
  CHECK(ok, "%s -> %s on '%s' (got %s, field '%s': %s)", what,
        dg_status_string(st), field,
        d ? dg_status_string(d->status) : "no error", d ? d->field : "",
        d ? d->message : "");
}

/* A builder call that must have failed g with status st naming field,
 * its message holding in_message when that is not NULL. */
static inline void expect_diag(dg_graph *g, const char *what, dg_status st,
                               const char *field, const char *in_message) {
  const dg_diagnostic *d = dg_graph_error(g);
  int ok = d && d->status == st && dg_graph_status(g) == st &&
           strstr(d->field, field) &&
           (!in_message || strstr(d->message, in_message));
  CHECK(ok, "%s -> %s on '%s' (got %s, field '%s': %s)", what,
        dg_status_string(st), field,
        d ? dg_status_string(d->status) : "no error", d ? d->field : "",
        d ? d->message : "");
}

/* main's start: seeds from argv[1] (or the default), prints the seed and
 * sets ctx; false (after a failed check) when no context. Inline: not
 * every test starts this way. */
static inline bool diff_start(int argc, char **argv) {
  unsigned long long seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261201;
  t_seed(seed);
  printf("# seed %llu\n", seed);
  if (dg_context_create(NULL, &ctx) != DG_OK) {
    CHECK(0, "context");
    return false;
  }
  return true;
}

#endif
