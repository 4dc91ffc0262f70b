/* The ONNX data movement handlers (src/front/onnx/onnx_ops_movement.c) on the
 * paths libonnx-testdata's node cases do not reach: old opsets'
 * attributes (Slice 1-9, Pad 2-10), negative pads, Split's uneven last
 * chunk (opset 18), int64 and scalar Gather indices, Tile's stages and
 * its rank-6 concatenation, and the refusals. Each model is one node
 * written with pb_write on a float input [0, 1, ..) and constant
 * initializers; the answers are written out by hand. */
#include "graph.h"
#include "harness.h"
#include "onnx_one_node.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Runs the loaded model on the CPU with x = 0, 1, ..; output k must be
 * want[k] (want_n[k] values). */
static void expect_run(const char *what, model *m, int64_t xn, int outputs,
                       const float *const *want, const int *want_n) {
  dg_graph *g = NULL;
  dg_diagnostic d = {0};
  dg_status st = load(m, outputs, &g, &d);
  if (st != DG_OK) {
    CHECK(0, "%s: imports (%s)", what, d.message);
    return;
  }
  float x[1024], y[8][256];
  for (int64_t i = 0; i < xn; i++)
    x[i] = (float)i;
  dg_session *s = NULL;
  dg_binding in = {"x", x, sizeof(float) * (size_t)xn}, out[8];
  for (int k = 0; k < outputs; k++) {
    static char names[8][8];
    snprintf(names[k], sizeof names[k], "y%d", k);
    out[k] = (dg_binding){names[k], y[k], sizeof(float) * (size_t)want_n[k]};
  }
  int cpu = 0;
  dg_compile_options o = {.devices = &cpu, .device_count = 1};
  st = dg_graph_compile(g, &o, &s, &d);
  if (st == DG_OK)
    st = dg_session_run(s, &in, 1, out, outputs, &d);
  int bad = 0;
  for (int k = 0; st == DG_OK && k < outputs; k++)
    for (int i = 0; i < want_n[k]; i++)
      bad += y[k][i] != want[k][i];
  CHECK(st == DG_OK && !bad, "%s: runs and matches (%s, %d wrong)", what,
        st ? d.message : "ran", bad);
  dg_session_destroy(s);
  dg_graph_destroy(g);
}

static void expect_refused(const char *what, model *m, int outputs,
                           const char *field, const char *words) {
  dg_graph *g = NULL;
  dg_diagnostic d = {0};
  dg_status st = load(m, outputs, &g, &d);
  CHECK(st == DG_ERROR_UNSUPPORTED && !g && strstr(d.field, field) &&
            strstr(d.message, words),
        "%s: refused as unsupported naming '%s' (%s: %s)", what, field,
        dg_status_string(st), d.message);
  dg_graph_destroy(g);
}

static void cases(void) {
  model m;
  const int64_t d10[1] = {10}, d23[2] = {2, 3}, d3[1] = {3}, d1[1] = {1},
                d2[1] = {2};

  /* Slice at opset 9: attributes, an end past INT64_MAX's clamp. */
  begin(&m, "Slice", 9, 2, d23);
  attr_ints(&m, "starts", (const int64_t[]){1, -2}, 2);
  attr_ints(&m, "ends", (const int64_t[]){INT64_MAX, INT64_MAX}, 2);
  expect_run("Slice-9 starts 1,-2 ends max", &m, 6, 1,
             (const float *const[]){(const float[]){4, 5}}, (int[]){2});

  begin(&m, "Slice", 9, 2, d23);
  attr_ints(&m, "starts", (const int64_t[]){0}, 1);
  attr_ints(&m, "ends", (const int64_t[]){2}, 1);
  attr_ints(&m, "axes", (const int64_t[]){-1}, 1);
  expect_run("Slice-9 on axis -1", &m, 6, 1,
             (const float *const[]){(const float[]){0, 1, 3, 4}}, (int[]){4});

  /* Slice at opset 13: constant inputs with steps. */
  begin(&m, "Slice", 13, 1, d10);
  const_tensor(&m, "s", ONNX_INT64, 1, d1, (const int64_t[]){-1});
  const_tensor(&m, "e", ONNX_INT64, 1, d1, (const int64_t[]){INT64_MIN});
  const_tensor(&m, "a", ONNX_INT64, 1, d1, (const int64_t[]){0});
  const_tensor(&m, "p", ONNX_INT64, 1, d1, (const int64_t[]){-4});
  expect_run("Slice-13 [-1::-4]", &m, 10, 1,
             (const float *const[]){(const float[]){9, 5, 1}}, (int[]){3});

  begin(&m, "Slice", 13, 1, d10);
  const_tensor(&m, "s", ONNX_INT64, 1, d1, (const int64_t[]){5});
  const_tensor(&m, "e", ONNX_INT64, 1, d1, (const int64_t[]){5});
  expect_refused("Slice-13 empty", &m, 1, "starts", "empty");

  /* Pad at opset 2 (attributes), reflect; opset 13 with a crop. */
  begin(&m, "Pad", 2, 1, d3);
  attr_ints(&m, "pads", (const int64_t[]){2, 1}, 2);
  attr_str(&m, "mode", "reflect");
  expect_run("Pad-2 reflect", &m, 3, 1,
             (const float *const[]){(const float[]){2, 1, 0, 1, 2, 1}},
             (int[]){6});

  begin(&m, "Pad", 13, 2, d23);
  const_tensor(&m, "pads", ONNX_INT64, 1, (const int64_t[]){4},
               (const int64_t[]){1, -1, 0, 1});
  expect_run("Pad-13 crop and pad", &m, 6, 1,
             (const float *const[]){(const float[]){0, 0, 0, 1, 2, 0, 4, 5, 0}},
             (int[]){9});

  begin(&m, "Pad", 13, 1, d3);
  const_tensor(&m, "pads", ONNX_INT64, 1, d2, (const int64_t[]){-1, 1});
  attr_str(&m, "mode", "edge");
  expect_refused("Pad-13 negative edge pad", &m, 1, "pads",
                 "constant mode only");

  begin(&m, "Pad", 18, 1, d3);
  attr_str(&m, "mode", "wrap");
  const_tensor(&m, "pads", ONNX_INT64, 1, d2, (const int64_t[]){1, 1});
  expect_refused("Pad-18 wrap (opset 19)", &m, 1, "mode", "wrap");

  begin(&m, "Pad", 19, 1, d3);
  attr_str(&m, "mode", "wrap");
  const_tensor(&m, "pads", ONNX_INT64, 1, d2, (const int64_t[]){1, 2});
  expect_run("Pad-19 wrap", &m, 3, 1,
             (const float *const[]){(const float[]){2, 0, 1, 2, 0, 1}},
             (int[]){6});

  /* Split at opset 18: num_outputs with a smaller last chunk. */
  begin(&m, "Split", 18, 1, d10);
  attr_int(&m, "num_outputs", 3);
  expect_run("Split-18 num_outputs 3 of 10", &m, 10, 3,
             (const float *const[]){(const float[]){0, 1, 2, 3},
                                    (const float[]){4, 5, 6, 7},
                                    (const float[]){8, 9}},
             (int[]){4, 4, 2});

  begin(&m, "Split", 11, 2, d23);
  attr_int(&m, "axis", 1);
  attr_ints(&m, "split", (const int64_t[]){1, 2}, 2);
  expect_run("Split-11 split attribute", &m, 6, 2,
             (const float *const[]){(const float[]){0, 3},
                                    (const float[]){1, 2, 4, 5}},
             (int[]){2, 4});

  /* Gather: a scalar int64 index drops the axis; out of range refused. */
  begin(&m, "Gather", 13, 2, d23);
  const_tensor(&m, "i", ONNX_INT64, 0, NULL, (const int64_t[]){-1});
  attr_int(&m, "axis", 1);
  expect_run("Gather scalar -1 on axis 1", &m, 6, 1,
             (const float *const[]){(const float[]){2, 5}}, (int[]){2});

  begin(&m, "Gather", 13, 2, d23);
  const_tensor(&m, "i", ONNX_INT64, 1, d2,
               (const int64_t[]){0, (int64_t)1 << 40});
  {
    dg_graph *g = NULL;
    dg_diagnostic d = {0};
    dg_status st = load(&m, 1, &g, &d);
    CHECK(st == DG_ERROR_INVALID_ARGUMENT && !g && strstr(d.field, "indices") &&
              strstr(d.message, "out of range"),
          "Gather index 2^40 refused naming indices (%s)", d.message);
    dg_graph_destroy(g);
  }

  /* Tile: [2, 3] by [2, 2] (one stage), and rank 6 by concatenation. */
  begin(&m, "Tile", 13, 2, d23);
  const_tensor(&m, "r", ONNX_INT64, 1, d2, (const int64_t[]){2, 2});
  expect_run("Tile [2,3] x [2,2]", &m, 6, 1,
             (const float *const[]){(const float[]){0, 1, 2, 0, 1, 2, 3, 4,
                                                    5, 3, 4, 5, 0, 1, 2, 0,
                                                    1, 2, 3, 4, 5, 3, 4, 5}},
             (int[]){24});

  const int64_t d6[6] = {1, 1, 2, 1, 1, 3};
  begin(&m, "Tile", 13, 6, d6);
  const_tensor(&m, "r", ONNX_INT64, 1, (const int64_t[]){6},
               (const int64_t[]){1, 1, 1, 1, 2, 1});
  expect_run("Tile rank 6 by concatenation", &m, 6, 1,
             (const float *const[]){
                 (const float[]){0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}},
             (int[]){12});

  const int64_t d4[4] = {1, 2, 1, 2};
  begin(&m, "Tile", 13, 4, d4);
  const_tensor(&m, "r", ONNX_INT64, 1, (const int64_t[]){4},
               (const int64_t[]){2, 1, 3, 1});
  /* Two repeated axes in room for two: one stage; [2, 2, 3, 2]. */
  expect_run("Tile rank 4 x [2,1,3,1]", &m, 4, 1,
             (const float *const[]){(const float[]){0, 1, 0, 1, 0, 1, 2, 3,
                                                    2, 3, 2, 3, 0, 1, 0, 1,
                                                    0, 1, 2, 3, 2, 3, 2, 3}},
             (int[]){24});

  const int64_t d5[5] = {1, 2, 1, 1, 2};
  begin(&m, "Tile", 13, 5, d5);
  const_tensor(&m, "r", ONNX_INT64, 1, (const int64_t[]){5},
               (const int64_t[]){2, 1, 1, 2, 1});
  /* Room for one repeated axis a stage: two stages; [2, 2, 1, 2, 2]. */
  expect_run("Tile rank 5 in two stages", &m, 4, 1,
             (const float *const[]){(const float[]){0, 1, 0, 1, 2, 3, 2, 3, 0,
                                                    1, 0, 1, 2, 3, 2, 3}},
             (int[]){16});

  /* Transpose: a perm of the wrong length. */
  begin(&m, "Transpose", 13, 2, d23);
  attr_ints(&m, "perm", (const int64_t[]){0, 1, 2}, 3);
  {
    dg_graph *g = NULL;
    dg_diagnostic d = {0};
    dg_status st = load(&m, 1, &g, &d);
    CHECK(st == DG_ERROR_INVALID_ARGUMENT && !g && strstr(d.field, "perm"),
          "Transpose perm of 3 for rank 2 refused naming perm (%s)", d.message);
    dg_graph_destroy(g);
  }

  /* Expand: a shape given at run time stays refused. */
  begin(&m, "Expand", 13, 1, d3);
  run_input(&m, "shape", ONNX_FLOAT, 1, d1);
  expect_refused("Expand with a run-time shape", &m, 1, "shape",
                 "must be a constant");
}

int main(void) {
  if (dg_context_create(NULL, &ctx) != DG_OK) {
    CHECK(0, "context");
    return 1;
  }
  cases();
  dg_context_destroy(ctx);
  return t_exit();
}
