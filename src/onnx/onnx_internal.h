/* Private to the ONNX importer (src/onnx). The importer only uses the
 * public builder API of include/graph.h (and the header-only name
 * shortening of src/graph/names.h for its diagnostics). */
#ifndef DG_ONNX_INTERNAL_H
#define DG_ONNX_INTERNAL_H

#include "graph.h"
#include "onnx.pb-c.h"

#include <stdbool.h>

/* One named value of the ONNX graph and what it has become so far. */
typedef struct onnx_value {
  const char *name;                   /* owned by the unpacked model */
  dg_tensor t;                        /* materialised tensor, or id 0 */
  const Onnx__TensorProto *init;      /* initializer or Constant output */
  const Onnx__ValueInfoProto *input;  /* graph input not yet created */
  int dq_node;                        /* pending DequantizeLinear, or -1 */
  int consumers;                      /* nodes and graph outputs reading it */
} onnx_value;

#define MAX_CHANNELS 4096

/* Storage for per-channel parameters read from the model; builder calls
 * copy them, so three suffice (input, weights, output of one op). */
typedef struct quant_buf {
  float scales[MAX_CHANNELS];
  int32_t zeros[MAX_CHANNELS];
} quant_buf;

typedef struct onnx_ctx {
  dg_context *dctx;
  dg_graph *g;
  const Onnx__GraphProto *gp;
  int64_t opset;
  dg_onnx_options opts;
  onnx_value *vals;
  int nvals, cap;
  bool *done; /* per node: already handled (folded into another) */
  int node_index;
  const Onnx__NodeProto *node;
  dg_status st;
  dg_diagnostic *diag;
  quant_buf *qbuf; /* 3 */
  int emitting_dq; /* node index of the DequantizeLinear being emitted */
  Onnx__TensorProto *frozen; /* opts.constants as tensors */
  int64_t *frozen_dims;
} onnx_ctx;

/* Records the first error (node, op, field and a sentence). */
void onnx_fail(onnx_ctx *c, dg_status st, const char *field, const char *fmt,
               ...) __attribute__((format(printf, 4, 5)));
/* Turns a builder failure into the importer's error; true if failed. */
bool onnx_check_graph(onnx_ctx *c);

onnx_value *onnx_value_find(onnx_ctx *c, const char *name);
onnx_value *onnx_value_add(onnx_ctx *c, const char *name);

/* The node's i-th input as a tensor of the graph (materialising
 * initializers, graph inputs and pending dequantisations); quant, when
 * not NULL, is the quantisation the consumer expects for an integer value
 * not yet created. Sets an error and returns DG_TENSOR_NONE if absent and
 * not optional. */
dg_tensor onnx_input(onnx_ctx *c, int i, const dg_quant_params *quant,
                     bool optional);
/* Binds the node's i-th output name to t. */
void onnx_output(onnx_ctx *c, int i, dg_tensor t);

/* Constant values (initializers or Constant nodes) read at import time. */
bool onnx_has_input(const onnx_ctx *c, int i);
const Onnx__TensorProto *onnx_const_input(onnx_ctx *c, int i);
bool onnx_const_floats(onnx_ctx *c, const Onnx__TensorProto *t, float *out,
                       int max, int *count);
bool onnx_const_ints(onnx_ctx *c, const Onnx__TensorProto *t, int64_t *out,
                     int max, int *count);

/* Decodes a TensorProto: dtype, dims and a malloc'd copy of the data (int64
 * narrowed to i32 when it fits). false (with err) on anything malformed. */
bool onnx_tensor_decode(const Onnx__TensorProto *t, dg_tensor_desc *desc,
                        void **data, char *err, size_t err_size);
dg_dtype onnx_dtype(int32_t elem_type);

/* Attributes. */
const Onnx__AttributeProto *onnx_attr(const onnx_ctx *c, const char *name);
int64_t onnx_attr_int(const onnx_ctx *c, const char *name, int64_t def);
float onnx_attr_float(const onnx_ctx *c, const char *name, float def);
/* Copies up to max ints; returns the count, or -1 if absent. */
int onnx_attr_ints(const onnx_ctx *c, const char *name, int64_t *out, int max);
/* Fails the import for attributes the op does not know or support. */
bool onnx_attrs_allowed(onnx_ctx *c, const char *const *names);

/* Translates the node at c->node_index (onnx_ops.c). */
void onnx_translate_node(onnx_ctx *c);

#endif
