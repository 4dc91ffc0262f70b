/* The build kit: the graph being built (its IR and first error) and the
 * helpers the op files (src/ops) use to validate a builder call and add its
 * node. A call goes: dg_build_begin -> checks (each failing the graph with a
 * diagnostic on the first problem) -> dg_build_finish. The graph's context
 * is the runtime's (runtime/graph.c creates and destroys graphs); nothing
 * here looks inside it. */
#ifndef DG_OPS_BUILD_H
#define DG_OPS_BUILD_H

#include "core/diag.h"
#include "core/ir.h"
#include "core/live.h"

#include <stdbool.h>

struct dg_graph {
  dg_context *ctx;
  uint32_t serial; /* unique in the process: the graph field of handles */
  char *name;      /* owned */
  dg_ir ir;
  bool failed;
  dg_diagnostic error;
  int pin; /* device index for new nodes, -1 none */
  /* The context's log callback, copied when the graph is created
   * (runtime/graph.c), so that a builder error is logged without the
   * build kit looking inside the context. */
  dg_log_fn log;
  void *log_user;
  dg_log_level log_level;
};

/* g when it is a live graph (core/live.h), else NULL: the API's door. */
static inline dg_graph *dg_graph_alive(const dg_graph *g) {
  return dg_live_is(g, DG_LIVE_GRAPH) ? (dg_graph *)g : NULL;
}

/* Input (output) index of ir as a dg_io_info. */
dg_status dg_io_info_get(const dg_ir *ir, bool output, int index,
                         dg_io_info *out);

typedef struct dg_build {
  dg_graph *g;
  dg_op op;
  const char *name; /* as given, may be NULL */
  int node_index;
  const char *api; /* the graph.h function building it, for messages */
} dg_build;

/* false when g is NULL or already failed (the call is then a no-op).
 * The calling function's name (__func__: dg_graph_conv2d, ...) leads
 * every message, so that a diagnostic names the call that failed. */
#define dg_build_begin(b, g, op, name)                                         \
  dg_build_begin_in((b), (g), (op), (name), __func__)
bool dg_build_begin_in(dg_build *b, dg_graph *g, dg_op op, const char *name,
                       const char *api);

/* Records the first error of the graph (later ones are dropped). */
void dg_build_fail(dg_build *b, dg_status st, const char *field,
                   const char *expected, const char *actual, const char *fmt,
                   ...) __attribute__((format(printf, 6, 7)));

/* Resolves a tensor argument. With optional, id 0 yields NULL without an
 * error; any other bad id fails the graph. */
const dg_tensor_info *dg_build_tensor(dg_build *b, dg_tensor t,
                                      const char *field, bool optional,
                                      bool *ok);

/* Checks t's dtype is one of mask (bits 1u << dg_dtype). */
bool dg_build_dtype(dg_build *b, const dg_tensor_info *t, const char *field,
                    unsigned mask);
/* Checks t's rank. */
bool dg_build_rank(dg_build *b, const dg_tensor_info *t, const char *field,
                   int rank);
/* Checks a, b have the same dtype. */
bool dg_build_same_dtype(dg_build *b, const dg_tensor_info *x,
                         const dg_tensor_info *y, const char *field);
/* Checks quantisation parameters for a tensor of this desc; field names
 * the argument. per_channel_axis >= 0 allows per-channel on that axis. */
/* The requantisation multipliers x.scale * w.scale / y.scale (one per
 * weight channel) of a quantised conv, fully connected or matmul must be
 * finite normal floats: inf, 0 or a denormal would saturate or zero every
 * output, differently per target. false (error set, naming y's scale)
 * otherwise. */
bool dg_build_requant(dg_build *b, const dg_tensor_desc *x,
                      const dg_tensor_desc *w, const dg_tensor_desc *y);
bool dg_build_quant(dg_build *b, const dg_tensor_desc *d, const char *field,
                    int per_channel_axis);

/* out's dims: a's and b's broadcast together (numpy); fails naming
 * field ("b") with both shapes when they do not broadcast. */
bool dg_build_broadcast(dg_build *b, const dg_tensor_info *a,
                        const dg_tensor_info *bt, const char *field,
                        dg_tensor_desc *out);
/* An int8 op's output: y_dtype i8 or u8 ("y_dtype") and y_quant non-NULL
 * and per-tensor ("y_quant"), written into out's dtype and quant. */
bool dg_build_q8_output(dg_build *b, dg_dtype y_dtype,
                        const dg_quant_params *y_quant, dg_tensor_desc *out);

/* Adds the node; out is the inferred output descriptor (quant arrays are
 * copied). Returns the output tensor, or DG_TENSOR_NONE on failure. */
dg_tensor dg_build_finish(dg_build *b, const uint32_t *inputs, int count,
                          const dg_tensor_desc *out, const dg_node_params *p);

/* Validates a user-supplied descriptor (dtype, rank, dims, size overflow,
 * quantisation) and fails the graph naming field. */
bool dg_build_desc(dg_build *b, const dg_tensor_desc *d, const char *field);

#define DG_BIT(t) (1u << (t))
#define DG_FLOAT_TYPES (DG_BIT(DG_DTYPE_F32) | DG_BIT(DG_DTYPE_F16))
#define DG_Q8_TYPES (DG_BIT(DG_DTYPE_I8) | DG_BIT(DG_DTYPE_U8))

#endif
