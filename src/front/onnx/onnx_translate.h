/* The ONNX translator shared by the importer (src/onnx, over protobuf-c's
 * NodeProto) and the ONNX Runtime plugin EP (src/ort_ep, over OrtApi): it
 * maps a list of ONNX nodes onto builder calls of include/graph.h, or
 * declines with a reason, the same reason in both.
 *
 * A front end describes what it reads through a dg_onnx_source: the nodes
 * in topological order (each a dg_onnx_node: names, attributes), the
 * values the nodes read that no node of the list produces (constants,
 * graph inputs), the declared types of node outputs, which values are
 * read outside the list, and which values to mark as graph outputs. The
 * translator owns everything else: the op table (onnx_op_table.c), the
 * attribute checks, the Q/DQ folding (onnx_qdq.c), materialising inputs
 * and constants, and checking each output against its declared type.
 *
 * Built into the library with the importer (-Donnx) and into the EP
 * module, which exists in every configuration (src/front/ort_ep/meson.build):
 * it needs nothing but graph.h, so neither side depends on the other. */
#ifndef DG_ONNX_TRANSLATE_H
#define DG_ONNX_TRANSLATE_H

#include "graph.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ONNX TensorProto.DataType values (ORT's element types are the same). */
enum {
  DG_ONNX_FLOAT = 1,
  DG_ONNX_UINT8 = 2,
  DG_ONNX_INT8 = 3,
  DG_ONNX_INT32 = 6,
  DG_ONNX_INT64 = 7,
  DG_ONNX_BOOL = 9,
  DG_ONNX_FLOAT16 = 10,
};

/* A value a node reads or writes, as the front end knows it. */
typedef enum dg_onnx_kind {
  DG_ONNX_VALUE_NONE = 0, /* unknown to the front end */
  DG_ONNX_VALUE_CONST,    /* constant data (initializer, Constant node) */
  DG_ONNX_VALUE_INPUT,    /* fed at run time (graph input, region input) */
  DG_ONNX_VALUE_TYPED,    /* an intermediate whose type is declared */
} dg_onnx_kind;

typedef struct dg_onnx_value {
  dg_onnx_kind kind;
  int elem;                  /* DG_ONNX_*; 0: not a supported tensor type */
  int rank;                  /* -1: unknown */
  int64_t dims[DG_MAX_RANK]; /* -1: symbolic */
  const char *symbolic;      /* the first symbolic dim's name, or NULL */
  /* CONST only: count elements of elem, native byte order, int64 kept
   * as int64. Owned by the front end, valid until the translation ends. */
  const void *data;
  size_t count;
  /* A front end's refusal of the value itself (external data, a corrupt
   * tensor): the translator fails with it, status INVALID_ARGUMENT.
   * Owned by the front end, like data. */
  const char *error;
} dg_onnx_value;

/* One node. Every string and array is owned by the front end and valid
 * until the translation ends; an omitted optional input or output is "". */
typedef struct dg_onnx_node dg_onnx_node;
struct dg_onnx_node {
  const char *op_type, *domain; /* domain "" or "ai.onnx": the default */
  const char *name;             /* for diagnostics and the builder; "" ok */
  int64_t opset; /* the op's version in effect (importer: the model's
                  * default-domain opset; EP: the schema's since_version:
                  * every threshold the handlers test is a since_version,
                  * so both give the same answers) */
  int n_inputs, n_outputs;
  const char *const *inputs, *const *outputs;
  int n_attrs;
  const char *const *attr_names; /* the attributes present */
  const void *impl;              /* the front end's node */
  void *source;                  /* the front end's state */
  /* Attribute readers: false / -1 when absent or of another type. */
  bool (*attr_int)(const dg_onnx_node *n, const char *name, int64_t *v);
  bool (*attr_float)(const dg_onnx_node *n, const char *name, float *v);
  /* Copies up to max values; returns how many there are. */
  int (*attr_ints)(const dg_onnx_node *n, const char *name, int64_t *out,
                   int max);
  /* Copies a NUL-terminated string, cut to len - 1 bytes. */
  bool (*attr_string)(const dg_onnx_node *n, const char *name, char *buf,
                      size_t len);
  /* The tensor attribute 'value' of a Constant node as a CONST value;
   * NULL where the front end never sees Constant nodes (ORT turns them
   * into initializers). */
  bool (*constant_value)(const dg_onnx_node *n, dg_onnx_value *v);
};

typedef struct dg_onnx_source {
  void *self;
  int node_count;
  /* Node k (0 <= k < node_count), in topological order; *out stays
   * valid until the translation ends. false: unreadable. */
  bool (*node)(void *self, int k, dg_onnx_node *out);
  /* What the front end knows of a value by name: for a value no node of
   * the list produces, CONST or INPUT (NONE: it comes from nowhere); for a
   * node output, TYPED when its type is declared. */
  void (*value)(void *self, const char *name, dg_onnx_value *out);
  /* Whether something outside the list reads the value (a graph output,
   * a node of another region): folding must not swallow it. */
  bool (*read_outside)(void *self, const char *name);
  /* The values to mark as graph outputs, in order. */
  int output_count;
  const char *const *outputs;
  /* Graph inputs to create even if no node reads them (the importer's
   * graph inputs; the EP has none). */
  int input_count;
  const char *const *inputs;
  /* Appended to the reason for a symbolic input dimension: how this
   * front end fixes it ("" for none). */
  const char *symbolic_hint;
} dg_onnx_source;

/* Why the translation stopped: the node (index in the list, -1 for the
 * graph's inputs and outputs), its name and op, the field (attribute,
 * input or value name; "" for none) and the reason. The reason is what
 * the importer and the EP both report, each after its own prefix. */
typedef struct dg_onnx_failure {
  dg_status status;
  int node;
  const char *node_name; /* the node's strings (front end's), or NULL */
  const char *op;
  char field[128];
  char reason[512];
  /* When the failure is DG_ERROR_UNSUPPORTED: the later nodes that would
   * be refused too, found by checking each one's op, opset and attributes
   * against the op table (their inputs are not built): also_count of them,
   * listed in also as "node K 'NAME' (OP): REASON" lines (cut, visibly,
   * where they do not fit). */
  int also_count;
  char also[4096];
} dg_onnx_failure;

/* Translates the source's nodes into g (which must be empty of them);
 * DG_OK, or the status with *why filled in (why may be NULL). g keeps
 * whatever was built before a failure: the caller destroys it. */
dg_status dg_onnx_translate(dg_graph *g, const dg_onnx_source *src,
                            dg_onnx_failure *why);

#endif
