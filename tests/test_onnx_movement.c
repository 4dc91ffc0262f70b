/* The ONNX data movement handlers (src/onnx/onnx_ops_movement.c) on the
 * paths libonnx-testdata's node cases do not reach: old opsets'
 * attributes (Slice 1-9, Pad 2-10), negative pads, Split's uneven last
 * chunk (opset 18), int64 and scalar Gather indices, Tile's stages and
 * its rank-6 concatenation, and the refusals. Each model is one node
 * written with pb_write on a float input [0, 1, ..) and constant
 * initializers; the answers are written out by hand. */
#include "common/pb_write.h"
#include "graph.h"
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static dg_context *ctx;

enum { ONNX_FLOAT = 1, ONNX_INT64 = 7 };

/* A model under construction: the graph's fields and the node's. */
typedef struct model {
  pb_buf graph, node;
  int opset;
} model;

static void value_info(pb_buf *graph, int field, const char *name, int rank,
                       const int64_t *dims) {
  pb_buf v = {0}, type = {0}, tensor = {0}, shape = {0};
  for (int i = 0; i < rank; i++) {
    pb_buf dim = {0};
    pb_field_int(&dim, 1, (uint64_t)dims[i]);
    pb_field_msg(&shape, 1, &dim);
  }
  pb_field_int(&tensor, 1, ONNX_FLOAT);
  pb_field_msg(&tensor, 2, &shape);
  pb_field_msg(&type, 1, &tensor);
  pb_field_str(&v, 1, name);
  pb_field_msg(&v, 2, &type);
  pb_field_msg(graph, field, &v);
}

static void begin(model *m, const char *op, int opset, int rank,
                  const int64_t *dims) {
  memset(m, 0, sizeof *m);
  m->opset = opset;
  pb_field_str(&m->node, 4, op);
  pb_field_str(&m->node, 1, "x");
  value_info(&m->graph, 11, "x", rank, dims);
}

/* An int64 initializer (rank 1 of n, or a scalar when n < 0) as the
 * node's next input. */
static void const_ints(model *m, const char *name, const int64_t *v, int n) {
  pb_buf t = {0};
  if (n >= 0)
    pb_field_int(&t, 1, (uint64_t)n);
  pb_field_int(&t, 2, ONNX_INT64);
  pb_field_str(&t, 8, name);
  pb_field_bytes(&t, 9, v, sizeof(int64_t) * (size_t)(n < 0 ? 1 : n));
  pb_field_msg(&m->graph, 5, &t);
  pb_field_str(&m->node, 1, name);
}

static void attr_ints(model *m, const char *name, const int64_t *v, int n) {
  pb_buf a = {0};
  pb_field_str(&a, 1, name);
  for (int i = 0; i < n; i++)
    pb_field_int(&a, 8, (uint64_t)v[i]);
  pb_field_int(&a, 20, 7); /* INTS */
  pb_field_msg(&m->node, 5, &a);
}

static void attr_int(model *m, const char *name, int64_t v) {
  pb_buf a = {0};
  pb_field_str(&a, 1, name);
  pb_field_int(&a, 3, (uint64_t)v);
  pb_field_int(&a, 20, 2); /* INT */
  pb_field_msg(&m->node, 5, &a);
}

static void attr_str(model *m, const char *name, const char *s) {
  pb_buf a = {0};
  pb_field_str(&a, 1, name);
  pb_field_str(&a, 4, s);
  pb_field_int(&a, 20, 3); /* STRING */
  pb_field_msg(&m->node, 5, &a);
}

/* Finishes the node with outputs y0.. (each declared without a shape) and
 * loads the model. */
static dg_status load(model *m, int outputs, dg_graph **g, dg_diagnostic *d) {
  for (int i = 0; i < outputs; i++) {
    char name[8];
    snprintf(name, sizeof name, "y%d", i);
    pb_field_str(&m->node, 2, name);
    pb_buf v = {0};
    pb_field_str(&v, 1, name);
    pb_field_msg(&m->graph, 12, &v);
  }
  pb_field_msg(&m->graph, 1, &m->node);
  pb_field_str(&m->graph, 2, "g");
  pb_buf model = {0}, op = {0};
  pb_field_int(&model, 1, 8);
  pb_field_msg(&model, 7, &m->graph);
  pb_field_int(&op, 2, (uint64_t)m->opset);
  pb_field_msg(&model, 8, &op);
  dg_status st = model.oom
                     ? DG_ERROR_OUT_OF_MEMORY
                     : dg_onnx_load_memory(ctx, model.p, model.len, NULL, g, d);
  free(model.p);
  return st;
}

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
  const int64_t d10[1] = {10}, d23[2] = {2, 3}, d3[1] = {3};

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
  const_ints(&m, "s", (const int64_t[]){-1}, 1);
  const_ints(&m, "e", (const int64_t[]){INT64_MIN}, 1);
  const_ints(&m, "a", (const int64_t[]){0}, 1);
  const_ints(&m, "p", (const int64_t[]){-4}, 1);
  expect_run("Slice-13 [-1::-4]", &m, 10, 1,
             (const float *const[]){(const float[]){9, 5, 1}}, (int[]){3});

  begin(&m, "Slice", 13, 1, d10);
  const_ints(&m, "s", (const int64_t[]){5}, 1);
  const_ints(&m, "e", (const int64_t[]){5}, 1);
  expect_refused("Slice-13 empty", &m, 1, "starts", "empty");

  /* Pad at opset 2 (attributes), reflect; opset 13 with a crop. */
  begin(&m, "Pad", 2, 1, d3);
  attr_ints(&m, "pads", (const int64_t[]){2, 1}, 2);
  attr_str(&m, "mode", "reflect");
  expect_run("Pad-2 reflect", &m, 3, 1,
             (const float *const[]){(const float[]){2, 1, 0, 1, 2, 1}},
             (int[]){6});

  begin(&m, "Pad", 13, 2, d23);
  const_ints(&m, "pads", (const int64_t[]){1, -1, 0, 1}, 4);
  expect_run("Pad-13 crop and pad", &m, 6, 1,
             (const float *const[]){(const float[]){0, 0, 0, 1, 2, 0, 4, 5, 0}},
             (int[]){9});

  begin(&m, "Pad", 13, 1, d3);
  const_ints(&m, "pads", (const int64_t[]){-1, 1}, 2);
  attr_str(&m, "mode", "edge");
  expect_refused("Pad-13 negative edge pad", &m, 1, "pads",
                 "constant mode only");

  begin(&m, "Pad", 18, 1, d3);
  attr_str(&m, "mode", "wrap");
  const_ints(&m, "pads", (const int64_t[]){1, 1}, 2);
  expect_refused("Pad-18 wrap (opset 19)", &m, 1, "mode", "wrap");

  begin(&m, "Pad", 19, 1, d3);
  attr_str(&m, "mode", "wrap");
  const_ints(&m, "pads", (const int64_t[]){1, 2}, 2);
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
  const_ints(&m, "i", (const int64_t[]){-1}, -1);
  attr_int(&m, "axis", 1);
  expect_run("Gather scalar -1 on axis 1", &m, 6, 1,
             (const float *const[]){(const float[]){2, 5}}, (int[]){2});

  begin(&m, "Gather", 13, 2, d23);
  const_ints(&m, "i", (const int64_t[]){0, (int64_t)1 << 40}, 2);
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
  const_ints(&m, "r", (const int64_t[]){2, 2}, 2);
  expect_run("Tile [2,3] x [2,2]", &m, 6, 1,
             (const float *const[]){(const float[]){0, 1, 2, 0, 1, 2, 3, 4,
                                                    5, 3, 4, 5, 0, 1, 2, 0,
                                                    1, 2, 3, 4, 5, 3, 4, 5}},
             (int[]){24});

  const int64_t d6[6] = {1, 1, 2, 1, 1, 3};
  begin(&m, "Tile", 13, 6, d6);
  const_ints(&m, "r", (const int64_t[]){1, 1, 1, 1, 2, 1}, 6);
  expect_run("Tile rank 6 by concatenation", &m, 6, 1,
             (const float *const[]){
                 (const float[]){0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}},
             (int[]){12});

  const int64_t d4[4] = {1, 2, 1, 2};
  begin(&m, "Tile", 13, 4, d4);
  const_ints(&m, "r", (const int64_t[]){2, 1, 3, 1}, 4);
  /* Two repeated axes in room for two: one stage; [2, 2, 3, 2]. */
  expect_run("Tile rank 4 x [2,1,3,1]", &m, 4, 1,
             (const float *const[]){(const float[]){0, 1, 0, 1, 0, 1, 2, 3,
                                                    2, 3, 2, 3, 0, 1, 0, 1,
                                                    0, 1, 2, 3, 2, 3, 2, 3}},
             (int[]){24});

  const int64_t d5[5] = {1, 2, 1, 1, 2};
  begin(&m, "Tile", 13, 5, d5);
  const_ints(&m, "r", (const int64_t[]){2, 1, 1, 2, 1}, 5);
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
  pb_field_str(&m.node, 1, "shape");
  value_info(&m.graph, 11, "shape", 1, (const int64_t[]){1});
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
