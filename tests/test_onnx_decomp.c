/* The ONNX ops the translator composes of other builder ops
 * (src/front/onnx/onnx_ops_decomp.c): NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (reductions, weights, ignore_index),
 * LayerNormalization's Mean and InvStdDev, GlobalMaxPool,
 * InstanceNormalization, MeanVarianceNormalization, CumSum, Hardmax
 * (ties), GatherElements, EyeLike, LRN, LpNormalization and Einsum,
 * and their refusals. Each model is one node written with pb_write on a float
 * input x = 0, 1, .. and constant initializers; the answers are worked
 * out by hand or with the textbook formula in double here. */
#include "graph.h"
#include "harness.h"
#include "onnx_one_node.h"
#include "runtime/session.h" /* dg_f32_to_f16, dg_f16_to_f32 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Runs the loaded model on every device with x = xv (xn values; 0, 1, ..
 * when xv is NULL); output k must be want[k] (want_n[k] values) within
 * 1e-5 relative (1e-6 absolute). */
static void expect_run_x(const char *what, model *m, const float *xv,
                         int64_t xn, int outputs, const double *const *want,
                         const int *want_n) {
  dg_graph *g = NULL;
  dg_diagnostic d = {0};
  dg_status st = load(m, outputs, &g, &d);
  if (st != DG_OK) {
    CHECK(0, "%s: imports (%s)", what, d.message);
    return;
  }
  float x[256], y[4][256];
  for (int64_t i = 0; i < xn; i++)
    x[i] = xv ? xv[i] : (float)i;
  int devices = dg_context_device_count(ctx);
  for (int dev = 0; dev < devices; dev++) {
    dg_session *s = NULL;
    dg_binding in = {"x", x, sizeof(float) * (size_t)xn}, out[4];
    for (int k = 0; k < outputs; k++) {
      static char names[4][8];
      snprintf(names[k], sizeof names[k], "y%d", k);
      out[k] = (dg_binding){names[k], y[k], sizeof(float) * (size_t)want_n[k]};
    }
    dg_compile_options o = {.devices = &dev, .device_count = 1};
    st = dg_graph_compile(g, &o, &s, &d);
    if (st != DG_OK) { /* a device that declines (the NPU) is no answer */
      dg_session_destroy(s);
      continue;
    }
    st = dg_session_run(s, &in, 1, out, outputs, &d);
    int bad = 0;
    double worst = 0;
    for (int k = 0; st == DG_OK && k < outputs; k++)
      for (int i = 0; i < want_n[k]; i++) {
        double e = fabs(y[k][i] - want[k][i]);
        worst = e > worst ? e : worst;
        bad += !(e <= 1e-6 + 1e-5 * fabs(want[k][i]));
      }
    CHECK(st == DG_OK && !bad,
          "%s on device %d: runs and matches (%s, %d wrong, worst %.3g)", what,
          dev, st ? d.message : "ran", bad, worst);
    dg_session_destroy(s);
  }
  dg_graph_destroy(g);
}

/* As expect_run_x with x in f16 and output k f16 where f16[k] (else f32),
 * within f16's precision: 3e-3 relative, 1e-3 absolute. */
static void expect_run_f16(const char *what, model *m, const float *xv,
                           int64_t xn, int outputs, const bool *f16,
                           const double *const *want, const int *want_n) {
  dg_graph *g = NULL;
  dg_diagnostic d = {0};
  dg_status st = load(m, outputs, &g, &d);
  if (st != DG_OK) {
    CHECK(0, "%s: imports (%s)", what, d.message);
    return;
  }
  uint16_t x[256];
  for (int64_t i = 0; i < xn; i++)
    x[i] = dg_f32_to_f16(xv[i]);
  union {
    float f[256];
    uint16_t h[256];
  } y[4];
  int devices = dg_context_device_count(ctx);
  for (int dev = 0; dev < devices; dev++) {
    dg_session *s = NULL;
    dg_binding in = {"x", x, sizeof(uint16_t) * (size_t)xn}, out[4];
    for (int k = 0; k < outputs; k++) {
      static char names[4][8];
      snprintf(names[k], sizeof names[k], "y%d", k);
      out[k] =
          (dg_binding){names[k], &y[k], (f16[k] ? 2 : 4) * (size_t)want_n[k]};
    }
    dg_compile_options o = {.devices = &dev, .device_count = 1};
    st = dg_graph_compile(g, &o, &s, &d);
    if (st != DG_OK) {
      dg_session_destroy(s);
      continue;
    }
    st = dg_session_run(s, &in, 1, out, outputs, &d);
    int bad = 0;
    double worst = 0;
    for (int k = 0; st == DG_OK && k < outputs; k++)
      for (int i = 0; i < want_n[k]; i++) {
        double v = f16[k] ? dg_f16_to_f32(y[k].h[i]) : y[k].f[i];
        double e = fabs(v - want[k][i]);
        worst = e > worst ? e : worst;
        bad += !(e <= 1e-3 + 3e-3 * fabs(want[k][i]));
      }
    CHECK(st == DG_OK && !bad,
          "%s on device %d: runs and matches (%s, %d wrong, worst %.3g)", what,
          dev, st ? d.message : "ran", bad, worst);
    dg_session_destroy(s);
  }
  dg_graph_destroy(g);
}

static void expect_run(const char *what, model *m, int64_t xn, int outputs,
                       const double *const *want, const int *want_n) {
  expect_run_x(what, m, NULL, xn, outputs, want, want_n);
}

static void expect_refused(const char *what, model *m, int outputs,
                           dg_status want, const char *field,
                           const char *words) {
  dg_graph *g = NULL;
  dg_diagnostic d = {0};
  dg_status st = load(m, outputs, &g, &d);
  CHECK(st == want && !g && strstr(d.field, field) && strstr(d.message, words),
        "%s: refused (%s) naming '%s' (%s: %s)", what, dg_status_string(want),
        field, dg_status_string(st), d.message);
  dg_graph_destroy(g);
}

/* log_softmax of row r of x [rows, c] = 0, 1, ..: x - log(sum exp x). */
static double log_prob(int r, int c, int cls) {
  double s = 0;
  for (int k = 0; k < cls; k++)
    s += exp((double)(r * cls + k));
  return (double)(r * cls + c) - log(s);
}

static void losses(void) {
  model m;
  const int64_t d23[2] = {2, 3}, d2[1] = {2}, d3[1] = {3}, d232[3] = {2, 3, 2},
                d22[2] = {2, 2};

  /* x [2, 3] = 0..5, target (2, 0): -x[0, 2], -x[1, 0]. */
  begin(&m, "NegativeLogLikelihoodLoss", 13, 2, d23);
  const_tensor(&m, "t", ONNX_INT64, 1, d2, (const int64_t[]){2, 0});
  attr_str(&m, "reduction", "none");
  expect_run("NLL none", &m, 6, 1, (const double *const[]){(double[]){-2, -3}},
             (int[]){2});

  /* A log-probability of -inf off the target changes nothing. */
  begin(&m, "NegativeLogLikelihoodLoss", 13, 2, d23);
  const_tensor(&m, "t", ONNX_INT64, 1, d2, (const int64_t[]){2, 0});
  attr_str(&m, "reduction", "none");
  expect_run_x("NLL none, -inf off the target", &m,
               (const float[]){-INFINITY, 1, 2, 3, -INFINITY, 5}, 6, 1,
               (const double *const[]){(double[]){-2, -3}}, (int[]){2});

  /* weight (1, 2, 3), target (2, 1): -(3 * 2 + 2 * 4) / (3 + 2). */
  begin(&m, "NegativeLogLikelihoodLoss", 13, 2, d23);
  const_tensor(&m, "t", ONNX_INT64, 1, d2, (const int64_t[]){2, 1});
  const_tensor(&m, "w", ONNX_FLOAT, 1, d3, (const float[]){1, 2, 3});
  expect_run("NLL mean weighted", &m, 6, 1,
             (const double *const[]){(double[]){-14.0 / 5}}, (int[]){1});

  /* x [2, 3, 2]: x[n, c, d] = 6n + 2c + d; target ((0, 1), (2, 1)) with
   * ignore_index 1 keeps x[0, 0, 0] = 0 and x[1, 2, 0] = 10. */
  begin(&m, "NegativeLogLikelihoodLoss", 12, 3, d232);
  const_tensor(&m, "t", ONNX_INT64, 2, d22, (const int64_t[]){0, 1, 2, 1});
  attr_int(&m, "ignore_index", 1);
  attr_str(&m, "reduction", "sum");
  expect_run("NLL sum ignore_index", &m, 12, 1,
             (const double *const[]){(double[]){-10}}, (int[]){1});
  begin(&m, "NegativeLogLikelihoodLoss", 22, 3, d232);
  const_tensor(&m, "t", ONNX_INT64, 2, d22, (const int64_t[]){0, 1, 2, 1});
  attr_int(&m, "ignore_index", 1);
  expect_run("NLL mean ignore_index (2 kept)", &m, 12, 1,
             (const double *const[]){(double[]){-5}}, (int[]){1});
  /* A negative ignore_index: the only negative target allowed. */
  begin(&m, "NegativeLogLikelihoodLoss", 13, 3, d232);
  const_tensor(&m, "t", ONNX_INT64, 2, d22, (const int64_t[]){-7, 2, 1, -7});
  attr_int(&m, "ignore_index", -7);
  attr_str(&m, "reduction", "none");
  expect_run("NLL none negative ignore_index", &m, 12, 1,
             (const double *const[]){(double[]){0, -5, -8, 0}}, (int[]){4});

  /* SoftmaxCrossEntropyLoss: the mean over both rows, and log_prob. */
  double lp[6], mean = -(log_prob(0, 1, 3) + log_prob(1, 2, 3)) / 2;
  for (int i = 0; i < 6; i++)
    lp[i] = log_prob(i / 3, i % 3, 3);
  begin(&m, "SoftmaxCrossEntropyLoss", 13, 2, d23);
  const_tensor(&m, "t", ONNX_INT64, 1, d2, (const int64_t[]){1, 2});
  expect_run("SCE mean with log_prob", &m, 6, 2,
             (const double *const[]){(double[]){mean}, lp}, (int[]){1, 6});
  begin(&m, "SoftmaxCrossEntropyLoss", 12, 2, d23);
  const_tensor(&m, "t", ONNX_INT64, 1, d2, (const int64_t[]){1, 2});
  const_tensor(&m, "w", ONNX_FLOAT, 1, d3, (const float[]){0.5f, 4, 2});
  attr_str(&m, "reduction", "none");
  expect_run("SCE none weighted", &m, 6, 1,
             (const double *const[]){
                 (double[]){-4 * log_prob(0, 1, 3), -2 * log_prob(1, 2, 3)}},
             (int[]){2});

  /* Refusals. */
  begin(&m, "NegativeLogLikelihoodLoss", 13, 2, d23);
  run_input(&m, "t", ONNX_INT64, 1, d2);
  expect_refused("NLL target at run time", &m, 1, DG_ERROR_UNSUPPORTED,
                 "target", "must be a constant");
  begin(&m, "NegativeLogLikelihoodLoss", 13, 2, d23);
  const_tensor(&m, "t", ONNX_INT64, 1, d2, (const int64_t[]){2, 0});
  run_input(&m, "w", ONNX_FLOAT, 1, d3);
  expect_refused("NLL weight at run time", &m, 1, DG_ERROR_UNSUPPORTED,
                 "weight", "must be a constant");
  begin(&m, "NegativeLogLikelihoodLoss", 13, 2, d23);
  const_tensor(&m, "t", ONNX_INT64, 1, d2, (const int64_t[]){3, 0});
  expect_refused("NLL target out of range", &m, 1, DG_ERROR_INVALID_ARGUMENT,
                 "target", "out of range");
  begin(&m, "NegativeLogLikelihoodLoss", 13, 2, d23);
  const_tensor(&m, "t", ONNX_INT64, 1, d2, (const int64_t[]){-1, 0});
  expect_refused("NLL negative target without ignore_index", &m, 1,
                 DG_ERROR_INVALID_ARGUMENT, "target", "out of range");
  begin(&m, "NegativeLogLikelihoodLoss", 13, 2, d23);
  const_tensor(&m, "t", ONNX_INT64, 1, d3, (const int64_t[]){0, 0, 0});
  expect_refused("NLL target of the wrong shape", &m, 1,
                 DG_ERROR_INVALID_ARGUMENT, "target", "shape");
  begin(&m, "SoftmaxCrossEntropyLoss", 13, 2, d23);
  const_tensor(&m, "t", ONNX_INT64, 1, d2, (const int64_t[]){0, 0});
  attr_str(&m, "reduction", "average");
  expect_refused("SCE bad reduction", &m, 1, DG_ERROR_INVALID_ARGUMENT,
                 "reduction", "average");
  begin(&m, "SoftmaxCrossEntropyLoss", 13, 2, d23);
  const_tensor(&m, "t", ONNX_INT64, 1, d2, (const int64_t[]){0, 0});
  const_tensor(&m, "w", ONNX_FLOAT, 1, d2, (const float[]){1, 1});
  expect_refused("SCE weight of 2 for 3 classes", &m, 1,
                 DG_ERROR_INVALID_ARGUMENT, "weight", "2 values");
}

static void norms(void) {
  model m;
  const int64_t d23[2] = {2, 3}, d3[1] = {3}, d2[1] = {2},
                d1213[4] = {1, 2, 1, 3}, d1222[4] = {1, 2, 2, 2},
                d2211[4] = {2, 2, 1, 1};
  const float eps = 1e-5f;

  /* LayerNormalization over the last axis of rows (0, 1, 2), (3, 4, 5):
   * mean 1 and 4, variance 2/3 each. */
  double inv = 1 / sqrt(2.0 / 3 + eps), y[6];
  for (int i = 0; i < 6; i++)
    y[i] = ((i % 3) - 1) * inv * (i % 3 + 1) + 0.5;
  begin(&m, "LayerNormalization", 17, 2, d23);
  const_tensor(&m, "s", ONNX_FLOAT, 1, d3, (const float[]){1, 2, 3});
  const_tensor(&m, "b", ONNX_FLOAT, 1, d3, (const float[]){0.5f, 0.5f, 0.5f});
  expect_run("LayerNormalization Y, Mean, InvStdDev", &m, 6, 3,
             (const double *const[]){y, (double[]){1, 4}, (double[]){inv, inv}},
             (int[]){6, 2, 2});
  begin(&m, "LayerNormalization", 17, 2, d23);
  const_tensor(&m, "s", ONNX_FLOAT, 1, d3, (const float[]){1, 2, 3});
  attr_int(&m, "stash_type", 10);
  expect_refused("LayerNormalization stash_type 10 with Mean", &m, 2,
                 DG_ERROR_UNSUPPORTED, "stash_type", "stash_type 1");

  begin(&m, "GlobalMaxPool", 1, 4, d1222);
  expect_run("GlobalMaxPool", &m, 8, 1,
             (const double *const[]){(double[]){3, 7}}, (int[]){2});
  begin(&m, "GlobalMaxPool", 1, 2, d23);
  expect_refused("GlobalMaxPool of rank 2", &m, 1, DG_ERROR_INVALID_ARGUMENT,
                 "X", "rank 2");

  /* InstanceNormalization of rows (0, 1, 2) and (3, 4, 5) of [1,2,1,3],
   * scale (1, 2), B (0, 1), epsilon 0.25. */
  double in_inv = 1 / sqrt(2.0 / 3 + 0.25), iy[6];
  for (int i = 0; i < 6; i++)
    iy[i] = ((i % 3) - 1) * in_inv * (i < 3 ? 1 : 2) + (i < 3 ? 0 : 1);
  begin(&m, "InstanceNormalization", 6, 4, d1213);
  const_tensor(&m, "s", ONNX_FLOAT, 1, d2, (const float[]){1, 2});
  const_tensor(&m, "b", ONNX_FLOAT, 1, d2, (const float[]){0, 1});
  attr_float(&m, "epsilon", 0.25f);
  expect_run("InstanceNormalization epsilon 0.25", &m, 6, 1,
             (const double *const[]){iy}, (int[]){6});
  begin(&m, "InstanceNormalization", 6, 4, d1213);
  const_tensor(&m, "s", ONNX_FLOAT, 1, d3, (const float[]){1, 2, 3});
  const_tensor(&m, "b", ONNX_FLOAT, 1, d2, (const float[]){0, 1});
  expect_refused("InstanceNormalization scale of 3 for 2 channels", &m, 1,
                 DG_ERROR_INVALID_ARGUMENT, "scale", "[C]");

  /* BatchNormalization at every opset where its version 15 is in force
   * (refused at 16 and later before the importer resolved versions as
   * ONNX defines them): channel 0 of x (0, 1, 2), channel 1 (3, 4, 5). */
  const double bm[2] = {1, 4}, bv[2] = {4, 1}, bs[2] = {1, 2}, bb[2] = {0, 1};
  double by[6];
  for (int i = 0; i < 6; i++)
    by[i] = (i - bm[i / 3]) / sqrt(bv[i / 3] + 1e-5) * bs[i / 3] + bb[i / 3];
  const int bn_opsets[] = {9, 15, 16, 17, 20, 22, 23};
  for (int k = 0; k < 7; k++) {
    int opset = bn_opsets[k];
    begin(&m, "BatchNormalization", opset, 4, d1213);
    const_tensor(&m, "s", ONNX_FLOAT, 1, d2, (const float[]){1, 2});
    const_tensor(&m, "b", ONNX_FLOAT, 1, d2, (const float[]){0, 1});
    const_tensor(&m, "mean", ONNX_FLOAT, 1, d2, (const float[]){1, 4});
    const_tensor(&m, "var", ONNX_FLOAT, 1, d2, (const float[]){4, 1});
    char what[96];
    snprintf(what, sizeof what, "BatchNormalization at opset %d", opset);
    if (opset <= 22)
      expect_run(what, &m, 6, 1, (const double *const[]){by}, (int[]){6});
    else
      expect_refused(what, &m, 1, DG_ERROR_UNSUPPORTED, "opset", "1..22");
  }
  /* Versions resolved: Upsample's 10 (deprecated) is refused by its
   * number, Gelu before opset 20 does not exist. */
  begin(&m, "Upsample", 10, 4, d1213);
  const_tensor(&m, "scales", ONNX_FLOAT, 1, (const int64_t[]){4},
               (const float[]){1, 1, 1, 2});
  expect_refused("Upsample at opset 10", &m, 1, DG_ERROR_UNSUPPORTED, "opset",
                 "is its version 10, which is not supported (versions 7..9");
  begin(&m, "Gelu", 17, 2, d23);
  expect_refused("Gelu at opset 17", &m, 1, DG_ERROR_UNSUPPORTED, "opset",
                 "Gelu does not exist at opset 17 (its versions: 20)");

  /* MVN over (0, 2, 3) of [2,2,1,1]: channel 0 holds 0 and 2, channel 1
   * 1 and 3: each (-1, 1) in units of its standard deviation 1. */
  begin(&m, "MeanVarianceNormalization", 13, 4, d2211);
  expect_run("MeanVarianceNormalization default axes", &m, 4, 1,
             (const double *const[]){(double[]){-1, -1, 1, 1}}, (int[]){4});
  /* axes (1): rows of two, (0, 1) -> (-1, 1) each. */
  begin(&m, "MeanVarianceNormalization", 13, 2, (const int64_t[]){2, 2});
  attr_ints(&m, "axes", (const int64_t[]){1}, 1);
  expect_run("MeanVarianceNormalization axes 1", &m, 4, 1,
             (const double *const[]){(double[]){-1, 1, -1, 1}}, (int[]){4});
  begin(&m, "MeanVarianceNormalization", 13, 2, (const int64_t[]){2, 2});
  attr_ints(&m, "axes", (const int64_t[]){5}, 1);
  expect_refused("MeanVarianceNormalization axis 5", &m, 1,
                 DG_ERROR_INVALID_ARGUMENT, "axes", "out of range");
}

static void scans(void) {
  model m;
  const int64_t d23[2] = {2, 3}, d24[2] = {2, 4}, d32[2] = {3, 2},
                d222[3] = {2, 2, 2};
  const int64_t one = 1, minus2 = -2;

  /* CumSum of rows (0, 1, 2), (3, 4, 5) in its four modes. */
  static const struct {
    int exclusive, reverse;
    double want[6];
  } modes[] = {{0, 0, {0, 1, 3, 3, 7, 12}},
               {1, 0, {0, 0, 1, 0, 3, 7}},
               {0, 1, {3, 3, 2, 12, 9, 5}},
               {1, 1, {3, 2, 0, 9, 5, 0}}};
  for (int i = 0; i < 4; i++) {
    char what[64];
    snprintf(what, sizeof what, "CumSum axis 1 exclusive %d reverse %d",
             modes[i].exclusive, modes[i].reverse);
    begin(&m, "CumSum", 14, 2, d23);
    const_tensor(&m, "axis", ONNX_INT64, 0, NULL, &one);
    attr_int(&m, "exclusive", modes[i].exclusive);
    attr_int(&m, "reverse", modes[i].reverse);
    expect_run(what, &m, 6, 1, (const double *const[]){modes[i].want},
               (int[]){6});
  }
  begin(&m, "CumSum", 11, 2, d23);
  const_tensor(&m, "axis", ONNX_INT64, 0, NULL, &minus2);
  expect_run("CumSum axis -2", &m, 6, 1,
             (const double *const[]){(double[]){0, 1, 2, 3, 5, 7}}, (int[]){6});
  begin(&m, "CumSum", 14, 2, d23);
  run_input(&m, "axis", ONNX_INT64, 0, NULL);
  expect_refused("CumSum axis at run time", &m, 1, DG_ERROR_UNSUPPORTED, "axis",
                 "must be a constant");
  begin(&m, "CumSum", 14, 2, d23);
  const_tensor(&m, "axis", ONNX_INT64, 0, NULL, &(int64_t){2});
  expect_refused("CumSum axis 2 of rank 2", &m, 1, DG_ERROR_INVALID_ARGUMENT,
                 "axis", "[-2, 2)");

  /* Hardmax: ties go to the first maximum. */
  begin(&m, "Hardmax", 13, 2, d24);
  expect_run_x("Hardmax ties, last axis", &m,
               (const float[]){1, 3, 3, 0, 5, 5, 5, 5}, 8, 1,
               (const double *const[]){(double[]){0, 1, 0, 0, 1, 0, 0, 0}},
               (int[]){8});
  begin(&m, "Hardmax", 13, 2, d32);
  attr_int(&m, "axis", 0);
  expect_run_x("Hardmax ties, axis 0", &m, (const float[]){1, 2, 1, 2, 0, 2}, 6,
               1, (const double *const[]){(double[]){1, 1, 0, 0, 0, 0}},
               (int[]){6});
  /* Opset 11, axis 1 of [2, 2, 2]: over the flattened [2, 4]. */
  begin(&m, "Hardmax", 11, 3, d222);
  expect_run_x("Hardmax-11 flattened from axis 1", &m,
               (const float[]){0, 4, 4, 1, -2, -2, -3, -9}, 8, 1,
               (const double *const[]){(double[]){0, 1, 0, 0, 1, 0, 0, 0}},
               (int[]){8});
  begin(&m, "Hardmax", 13, 2, d24);
  attr_int(&m, "axis", 2);
  expect_refused("Hardmax axis 2 of rank 2", &m, 1, DG_ERROR_INVALID_ARGUMENT,
                 "axis", "out of range");
}

static void gathers(void) {
  model m;
  const int64_t d33[2] = {3, 3}, d23[2] = {2, 3}, d32[2] = {3, 2},
                d34[2] = {3, 4};

  begin(&m, "GatherElements", 13, 2, d33);
  const_tensor(&m, "i", ONNX_INT64, 2, d23,
               (const int64_t[]){1, 2, 0, 2, 0, 0});
  expect_run("GatherElements axis 0", &m, 9, 1,
             (const double *const[]){(double[]){3, 7, 2, 6, 1, 2}}, (int[]){6});
  begin(&m, "GatherElements", 11, 2, d33);
  const_tensor(&m, "i", ONNX_INT64, 2, d32,
               (const int64_t[]){-1, 0, 1, 1, 0, 2});
  attr_int(&m, "axis", -1);
  expect_run("GatherElements axis -1, negative index", &m, 9, 1,
             (const double *const[]){(double[]){2, 0, 4, 4, 6, 8}}, (int[]){6});
  begin(&m, "GatherElements", 13, 2, d33);
  run_input(&m, "i", ONNX_INT64, 2, d23);
  expect_refused("GatherElements indices at run time", &m, 1,
                 DG_ERROR_UNSUPPORTED, "indices", "must be a constant");
  begin(&m, "GatherElements", 13, 2, d33);
  const_tensor(&m, "i", ONNX_INT64, 2, d23,
               (const int64_t[]){1, 2, 3, 0, 0, 0});
  expect_refused("GatherElements index 3 of 3", &m, 1,
                 DG_ERROR_INVALID_ARGUMENT, "indices", "out of range");
  begin(&m, "GatherElements", 13, 2, d33);
  const_tensor(&m, "i", ONNX_INT64, 2, d34,
               (const int64_t[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  expect_refused("GatherElements indices wider than data off the axis", &m, 1,
                 DG_ERROR_INVALID_ARGUMENT, "indices", "no larger");

  /* EyeLike of a [3, 4] float input, diagonal -1. */
  begin(&m, "EyeLike", 9, 2, d34);
  attr_int(&m, "k", -1);
  expect_run(
      "EyeLike k -1", &m, 12, 1,
      (const double *const[]){(double[]){0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0}},
      (int[]){12});
  begin(&m, "EyeLike", 9, 2, d34);
  attr_int(&m, "dtype", 11);
  expect_refused("EyeLike to double", &m, 1, DG_ERROR_UNSUPPORTED, "dtype",
                 "element type 11");
}

static void channels(void) {
  model m;
  const int64_t d1311[4] = {1, 3, 1, 1}, d22[2] = {2, 2};

  /* LRN of channels (1, 2, 3), size 2: windows c..c+1, sums of squares
   * 5, 13, 9; alpha 1, beta 1, bias 1: y = x / (1 + s / 2). */
  begin(&m, "LRN", 13, 4, d1311);
  attr_int(&m, "size", 2);
  attr_float(&m, "alpha", 1);
  attr_float(&m, "beta", 1);
  attr_float(&m, "bias", 1);
  expect_run_x("LRN size 2", &m, (const float[]){1, 2, 3}, 3, 1,
               (const double *const[]){(double[]){1 / 3.5, 2 / 7.5, 3 / 5.5}},
               (int[]){3});
  /* size 3, defaults alpha 1e-4, beta 0.75, bias 1: windows c-1..c+1. */
  double s3[3] = {1 + 4, 1 + 4 + 9, 4 + 9}, y3[3];
  for (int c = 0; c < 3; c++)
    y3[c] = (c + 1) / pow(1 + 1e-4 / 3 * s3[c], 0.75);
  begin(&m, "LRN", 1, 4, d1311);
  attr_int(&m, "size", 3);
  expect_run_x("LRN size 3, defaults", &m, (const float[]){1, 2, 3}, 3, 1,
               (const double *const[]){y3}, (int[]){3});
  begin(&m, "LRN", 13, 4, d1311);
  expect_refused("LRN without size", &m, 1, DG_ERROR_INVALID_ARGUMENT, "size",
                 "size");

  /* LpNormalization of (0, 1), (2, 3). */
  begin(&m, "LpNormalization", 1, 2, d22);
  attr_int(&m, "p", 1);
  expect_run("LpNormalization p 1", &m, 4, 1,
             (const double *const[]){(double[]){0, 1, 0.4, 0.6}}, (int[]){4});
  begin(&m, "LpNormalization", 1, 2, d22);
  attr_int(&m, "axis", 0);
  expect_run(
      "LpNormalization p 2 axis 0", &m, 4, 1,
      (const double *const[]){(double[]){0, 1 / sqrt(10.0), 1, 3 / sqrt(10.0)}},
      (int[]){4});
  begin(&m, "LpNormalization", 1, 2, d22);
  attr_int(&m, "p", 3);
  expect_refused("LpNormalization p 3", &m, 1, DG_ERROR_INVALID_ARGUMENT, "p",
                 "1 or 2");
}

static void einsums(void) {
  model m;
  const int64_t d223[3] = {2, 2, 3}, d232[3] = {2, 3, 2}, d23[2] = {2, 3},
                d32[2] = {3, 2}, d3[1] = {3}, d2[1] = {2};
  float c12[12], c6[6];
  for (int i = 0; i < 12; i++)
    c12[i] = 0.5f * (float)i - 2;
  for (int i = 0; i < 6; i++)
    c6[i] = (float)(i % 4) - 1.5f;

  /* bij,bjk->bik: x [2,2,3] = 0..11 by c [2,3,2], as loops. */
  double bik[8] = {0};
  for (int b = 0; b < 2; b++)
    for (int i = 0; i < 2; i++)
      for (int k = 0; k < 2; k++)
        for (int j = 0; j < 3; j++)
          bik[(b * 2 + i) * 2 + k] +=
              (double)(b * 6 + i * 3 + j) * c12[(b * 3 + j) * 2 + k];
  begin(&m, "Einsum", 12, 3, d223);
  const_tensor(&m, "c", ONNX_FLOAT, 3, d232, c12);
  attr_str(&m, "equation", "bij, bjk -> bik");
  expect_run("Einsum batched matmul", &m, 12, 1, (const double *const[]){bik},
             (int[]){8});

  /* bij,jk->kbi: the output transposed. */
  double kbi[8] = {0};
  for (int b = 0; b < 2; b++)
    for (int i = 0; i < 2; i++)
      for (int k = 0; k < 2; k++)
        for (int j = 0; j < 3; j++)
          kbi[(k * 2 + b) * 2 + i] +=
              (double)(b * 6 + i * 3 + j) * c6[j * 2 + k];
  begin(&m, "Einsum", 12, 3, d223);
  const_tensor(&m, "c", ONNX_FLOAT, 2, d32, c6);
  attr_str(&m, "equation", "bij,jk->kbi");
  expect_run("Einsum contraction, output transposed", &m, 12, 1,
             (const double *const[]){kbi}, (int[]){8});

  /* Implicit output: ij,kj -> ik (letters used once, sorted). */
  double ik[4] = {0};
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 2; k++)
      for (int j = 0; j < 3; j++)
        ik[i * 2 + k] += (double)(i * 3 + j) * c6[k * 3 + j];
  begin(&m, "Einsum", 12, 2, d23);
  const_tensor(&m, "c", ONNX_FLOAT, 2, d23, c6);
  attr_str(&m, "equation", "ij,kj");
  expect_run("Einsum implicit ij,kj", &m, 6, 1, (const double *const[]){ik},
             (int[]){4});

  /* i,i: the inner product, a scalar; ij,k->i sums k out of c first. */
  begin(&m, "Einsum", 12, 1, d3);
  const_tensor(&m, "c", ONNX_FLOAT, 1, d3, (const float[]){1, 2, 3});
  attr_str(&m, "equation", "i,i");
  expect_run("Einsum inner product", &m, 3, 1,
             (const double *const[]){(double[]){0 * 1 + 1 * 2 + 2 * 3}},
             (int[]){1});
  begin(&m, "Einsum", 12, 2, d23);
  const_tensor(&m, "c", ONNX_FLOAT, 1, d2, (const float[]){2, 0.5f});
  attr_str(&m, "equation", "ij,k->i");
  expect_run("Einsum with a letter of one side summed out", &m, 6, 1,
             (const double *const[]){(double[]){3 * 2.5, 12 * 2.5}},
             (int[]){2});

  /* One operand: a transpose, a sum. */
  begin(&m, "Einsum", 12, 2, d23);
  attr_str(&m, "equation", "ij->ji");
  expect_run("Einsum transpose", &m, 6, 1,
             (const double *const[]){(double[]){0, 3, 1, 4, 2, 5}}, (int[]){6});
  begin(&m, "Einsum", 12, 2, d23);
  attr_str(&m, "equation", "ij->j");
  expect_run("Einsum column sums", &m, 6, 1,
             (const double *const[]){(double[]){3, 5, 7}}, (int[]){3});

  begin(&m, "Einsum", 12, 2, (const int64_t[]){3, 3});
  attr_str(&m, "equation", "ii->i");
  expect_refused("Einsum diagonal", &m, 1, DG_ERROR_UNSUPPORTED, "equation",
                 "diagonal");
  begin(&m, "Einsum", 12, 3, d223);
  attr_str(&m, "equation", "...ij->...ji");
  expect_refused("Einsum ellipsis", &m, 1, DG_ERROR_UNSUPPORTED, "equation",
                 "ellipsis");
  begin(&m, "Einsum", 12, 2, d23);
  const_tensor(&m, "c", ONNX_FLOAT, 2, d32, c6);
  attr_str(&m, "equation", "ij,ij->ij");
  expect_refused("Einsum letters of unequal sizes", &m, 1,
                 DG_ERROR_INVALID_ARGUMENT, "equation", "letter 'i'");
}

/* The f16 forms: constants made at import are cast to f16; Mean and
 * InvStdDev stay f32 (stash_type 1). */
static void halves(void) {
  model m;
  const int64_t d23[2] = {2, 3}, d2[1] = {2}, d3[1] = {3}, d24[2] = {2, 4};
  const float x6[6] = {0, 1, 2, 3, 4, 5};
  uint16_t w3[3] = {dg_f32_to_f16(1), dg_f32_to_f16(2), dg_f32_to_f16(3)};
  const bool h[3] = {true, false, false}, hh[2] = {true, true};

  begin_t(&m, "NegativeLogLikelihoodLoss", 13, ONNX_FLOAT16, 2, d23);
  const_tensor(&m, "t", ONNX_INT64, 1, d2, (const int64_t[]){2, 1});
  const_tensor(&m, "w", ONNX_FLOAT16, 1, d3, w3);
  expect_run_f16("f16 NLL mean weighted", &m, x6, 6, 1, hh,
                 (const double *const[]){(double[]){-14.0 / 5}}, (int[]){1});

  double lp[6];
  for (int i = 0; i < 6; i++)
    lp[i] = log_prob(i / 3, i % 3, 3);
  begin_t(&m, "SoftmaxCrossEntropyLoss", 13, ONNX_FLOAT16, 2, d23);
  const_tensor(&m, "t", ONNX_INT64, 1, d2, (const int64_t[]){0, 2});
  attr_str(&m, "reduction", "none");
  expect_run_f16("f16 SCE none with log_prob", &m, x6, 6, 2, hh,
                 (const double *const[]){(double[]){-lp[0], -lp[5]}, lp},
                 (int[]){2, 6});

  double inv = 1 / sqrt(2.0 / 3 + 1e-5), y[6];
  for (int i = 0; i < 6; i++)
    y[i] = ((i % 3) - 1) * inv;
  uint16_t ones[3] = {dg_f32_to_f16(1), dg_f32_to_f16(1), dg_f32_to_f16(1)};
  begin_t(&m, "LayerNormalization", 17, ONNX_FLOAT16, 2, d23);
  const_tensor(&m, "s", ONNX_FLOAT16, 1, d3, ones);
  expect_run_f16(
      "f16 LayerNormalization, f32 Mean and InvStdDev", &m, x6, 6, 3, h,
      (const double *const[]){y, (double[]){1, 4}, (double[]){inv, inv}},
      (int[]){6, 2, 2});

  begin_t(&m, "Hardmax", 13, ONNX_FLOAT16, 2, d24);
  expect_run_f16(
      "f16 Hardmax ties", &m, (const float[]){1, 3, 3, 0, 5, 5, 5, 5}, 8, 1, hh,
      (const double *const[]){(double[]){0, 1, 0, 0, 1, 0, 0, 0}}, (int[]){8});

  const int64_t one = 1;
  begin_t(&m, "CumSum", 14, ONNX_FLOAT16, 2, d23);
  const_tensor(&m, "axis", ONNX_INT64, 0, NULL, &one);
  attr_int(&m, "reverse", 1);
  expect_run_f16("f16 CumSum reverse", &m, x6, 6, 1, hh,
                 (const double *const[]){(double[]){3, 3, 2, 12, 9, 5}},
                 (int[]){6});
}

int main(void) {
  if (dg_context_create(NULL, &ctx) != DG_OK) {
    CHECK(0, "context");
    return 1;
  }
  losses();
  norms();
  scans();
  gathers();
  channels();
  einsums();
  halves();
  dg_context_destroy(ctx);
  return t_exit();
}
