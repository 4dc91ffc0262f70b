/* A writer of small multi-node ONNX models, built on tests/onnx_one_node.h:
 * that header's model keeps the graph being written (graph) and the node
 * being written (node), so its value_info and attr_* serve here too. A
 * model is begun with graph_begin, then gets graph inputs, initializers
 * and nodes in list order (node_begin, attr_*, node_end), then its
 * outputs, and is loaded with load_graph. Element types cover the
 * quantised ones (u8, i8, i32 zero points and biases).
 *
 * Header-only, static functions marked unused, like onnx_one_node.h;
 * the including test sets that header's ctx before the first load. */
#ifndef DG_TEST_ONNX_GRAPH_WRITER_H
#define DG_TEST_ONNX_GRAPH_WRITER_H

#include "onnx_one_node.h"

enum { ONNX_UINT8 = 2, ONNX_INT8 = 3, ONNX_INT32 = 6 };

static __attribute__((unused)) size_t onnx_elem_size(int elem) {
  switch (elem) {
  case ONNX_UINT8:
  case ONNX_INT8:
    return 1;
  case ONNX_FLOAT16:
    return 2;
  case ONNX_INT64:
    return 8;
  default: /* FLOAT, INT32 */
    return 4;
  }
}

/* A TensorProto of rank dims (rank 0: a scalar) with data in native
 * (little-endian) order as raw_data. */
static __attribute__((unused)) void tensor_proto(pb_buf *t, const char *name,
                                                 int elem, int rank,
                                                 const int64_t *dims,
                                                 const void *data) {
  size_t n = 1;
  for (int i = 0; i < rank; i++) {
    pb_field_int(t, 1, (uint64_t)dims[i]);
    n *= (size_t)dims[i];
  }
  pb_field_int(t, 2, (uint64_t)elem);
  if (name)
    pb_field_str(t, 8, name);
  pb_field_bytes(t, 9, data, n * onnx_elem_size(elem));
}

static __attribute__((unused)) void graph_begin(model *m, int opset) {
  memset(m, 0, sizeof *m);
  m->opset = opset;
}

/* A graph input fed at run time. */
static __attribute__((unused)) void graph_input(model *m, const char *name,
                                                int elem, int rank,
                                                const int64_t *dims) {
  value_info(&m->graph, 11, name, elem, rank, dims);
}

/* A graph output, declared without a type (the importer infers it). */
static __attribute__((unused)) void graph_output(model *m, const char *name) {
  pb_buf v = {0};
  pb_field_str(&v, 1, name);
  pb_field_msg(&m->graph, 12, &v);
}

static __attribute__((unused)) void initializer(model *m, const char *name,
                                                int elem, int rank,
                                                const int64_t *dims,
                                                const void *data) {
  pb_buf t = {0};
  tensor_proto(&t, name, elem, rank, dims, data);
  pb_field_msg(&m->graph, 5, &t);
}

/* Starts node op named name, with the NULL-terminated input and output
 * lists ("" for an absent optional input); attr_* add to it until
 * node_end appends it to the graph. */
static __attribute__((unused)) void node_begin(model *m, const char *op,
                                               const char *name,
                                               const char *const *inputs,
                                               const char *const *outputs) {
  memset(&m->node, 0, sizeof m->node);
  pb_field_str(&m->node, 4, op);
  pb_field_str(&m->node, 3, name);
  for (int i = 0; inputs && inputs[i]; i++)
    pb_field_str(&m->node, 1, inputs[i]);
  for (int i = 0; outputs && outputs[i]; i++)
    pb_field_str(&m->node, 2, outputs[i]);
}

static __attribute__((unused)) void node_end(model *m) {
  pb_field_msg(&m->graph, 1, &m->node);
}

/* A Constant node giving output out the tensor (attribute value). */
static __attribute__((unused)) void constant_node(model *m, const char *name,
                                                  const char *out, int elem,
                                                  int rank, const int64_t *dims,
                                                  const void *data) {
  node_begin(m, "Constant", name, NULL, (const char *const[]){out, NULL});
  pb_buf a = {0}, t = {0};
  pb_field_str(&a, 1, "value");
  tensor_proto(&t, NULL, elem, rank, dims, data);
  pb_field_msg(&a, 5, &t);
  pb_field_int(&a, 20, 4); /* TENSOR */
  pb_field_msg(&m->node, 5, &a);
  node_end(m);
}

/* Finishes the model (IR version 8, the default domain at m->opset) and
 * loads it; the model's buffers are freed either way. */
static __attribute__((unused)) dg_status load_graph(model *m, dg_graph **g,
                                                    dg_diagnostic *d) {
  free(m->node.p);
  memset(&m->node, 0, sizeof m->node);
  pb_field_str(&m->graph, 2, "g");
  pb_buf mp = {0}, op = {0};
  pb_field_int(&mp, 1, 8);
  pb_field_msg(&mp, 7, &m->graph);
  pb_field_int(&op, 2, (uint64_t)m->opset);
  pb_field_msg(&mp, 8, &op);
  dg_status st = mp.oom ? DG_ERROR_OUT_OF_MEMORY
                        : dg_onnx_load_memory(ctx, mp.p, mp.len, NULL, g, d);
  free(mp.p);
  return st;
}

#endif
