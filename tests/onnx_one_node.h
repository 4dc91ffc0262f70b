/* A writer of one-node ONNX models, shared by tests/test_onnx_movement.c
 * and tests/test_onnx_decomp.c: begin a model of one op node whose first
 * input is x, add its other inputs (constant initializers, or graph inputs
 * fed at run time) and its attributes, then load it with outputs y0, ..
 * into a graph. The protobuf is written with examples/common/pb_write.h,
 * so a test needs no protobuf library and no model files.
 *
 * Header-only (static functions, marked unused: a test need not call them
 * all): each test program includes it once and sets the header's ctx, as
 * with tests/differential.h, before the first load. */
#ifndef DG_TEST_ONNX_ONE_NODE_H
#define DG_TEST_ONNX_ONE_NODE_H

#include "common/pb_write.h"
#include "graph.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static dg_context *ctx; /* set by main before the first model is loaded */

enum { ONNX_FLOAT = 1, ONNX_INT64 = 7, ONNX_FLOAT16 = 10 };

/* A model under construction: the graph's fields and the node's. */
typedef struct model {
  pb_buf graph, node;
  int opset;
} model;

static __attribute__((unused)) void value_info(pb_buf *graph, int field,
                                               const char *name, int elem,
                                               int rank, const int64_t *dims) {
  pb_buf v = {0}, type = {0}, tensor = {0}, shape = {0};
  for (int i = 0; i < rank; i++) {
    pb_buf dim = {0};
    pb_field_int(&dim, 1, (uint64_t)dims[i]);
    pb_field_msg(&shape, 1, &dim);
  }
  pb_field_int(&tensor, 1, (uint64_t)elem);
  pb_field_msg(&tensor, 2, &shape);
  pb_field_msg(&type, 1, &tensor);
  pb_field_str(&v, 1, name);
  pb_field_msg(&v, 2, &type);
  pb_field_msg(graph, field, &v);
}

/* A model of one op node whose first input is x, of element type elem. */
static __attribute__((unused)) void begin_t(model *m, const char *op, int opset,
                                            int elem, int rank,
                                            const int64_t *dims) {
  memset(m, 0, sizeof *m);
  m->opset = opset;
  pb_field_str(&m->node, 4, op);
  pb_field_str(&m->node, 1, "x");
  value_info(&m->graph, 11, "x", elem, rank, dims);
}

static __attribute__((unused)) void begin(model *m, const char *op, int opset,
                                          int rank, const int64_t *dims) {
  begin_t(m, op, opset, ONNX_FLOAT, rank, dims);
}

/* An initializer (elem FLOAT or INT64, data in native order) as the
 * node's next input. */
static __attribute__((unused)) void const_tensor(model *m, const char *name,
                                                 int elem, int rank,
                                                 const int64_t *dims,
                                                 const void *data) {
  pb_buf t = {0};
  size_t n = 1;
  for (int i = 0; i < rank; i++) {
    pb_field_int(&t, 1, (uint64_t)dims[i]);
    n *= (size_t)dims[i];
  }
  pb_field_int(&t, 2, (uint64_t)elem);
  pb_field_str(&t, 8, name);
  pb_field_bytes(&t, 9, data,
                 n * (elem == ONNX_INT64     ? 8
                      : elem == ONNX_FLOAT16 ? 2
                                             : 4));
  pb_field_msg(&m->graph, 5, &t);
  pb_field_str(&m->node, 1, name);
}

/* A graph input fed at run time as the node's next input. */
static __attribute__((unused)) void
run_input(model *m, const char *name, int elem, int rank, const int64_t *dims) {
  value_info(&m->graph, 11, name, elem, rank, dims);
  pb_field_str(&m->node, 1, name);
}

static __attribute__((unused)) void attr_int(model *m, const char *name,
                                             int64_t v) {
  pb_buf a = {0};
  pb_field_str(&a, 1, name);
  pb_field_int(&a, 3, (uint64_t)v);
  pb_field_int(&a, 20, 2); /* INT */
  pb_field_msg(&m->node, 5, &a);
}

static __attribute__((unused)) void attr_ints(model *m, const char *name,
                                              const int64_t *v, int n) {
  pb_buf a = {0};
  pb_field_str(&a, 1, name);
  for (int i = 0; i < n; i++)
    pb_field_int(&a, 8, (uint64_t)v[i]);
  pb_field_int(&a, 20, 7); /* INTS */
  pb_field_msg(&m->node, 5, &a);
}

/* pb_write has no fixed32 writer: AttributeProto.f (field 2, wire type
 * 5) is appended by hand, little-endian. */
static __attribute__((unused)) void attr_float(model *m, const char *name,
                                               float v) {
  pb_buf a = {0};
  pb_field_str(&a, 1, name);
  uint32_t bits;
  memcpy(&bits, &v, 4);
  uint8_t raw[5] = {(2 << 3) | 5, (uint8_t)bits, (uint8_t)(bits >> 8),
                    (uint8_t)(bits >> 16), (uint8_t)(bits >> 24)};
  uint8_t *p = realloc(a.p, a.len + sizeof raw);
  if (!p) {
    a.oom = 1;
  } else {
    memcpy(p + a.len, raw, sizeof raw);
    a.p = p;
    a.len += sizeof raw;
    a.cap = a.len;
  }
  pb_field_int(&a, 20, 1); /* FLOAT */
  pb_field_msg(&m->node, 5, &a);
}

static __attribute__((unused)) void attr_str(model *m, const char *name,
                                             const char *s) {
  pb_buf a = {0};
  pb_field_str(&a, 1, name);
  pb_field_str(&a, 4, s);
  pb_field_int(&a, 20, 3); /* STRING */
  pb_field_msg(&m->node, 5, &a);
}

/* Finishes the node with outputs y0.. (declared without a type) and
 * loads the model. */
static __attribute__((unused)) dg_status load(model *m, int outputs,
                                              dg_graph **g, dg_diagnostic *d) {
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

#endif
