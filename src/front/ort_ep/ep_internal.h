/* Shared declarations of the directgraph ONNX Runtime plugin EP. */
#ifndef DG_ORT_EP_INTERNAL_H
#define DG_ORT_EP_INTERNAL_H

#include "graph.h"
#include "ort_abi.h"

#define DG_EP_NAME "DirectGraphExecutionProvider"
#define DG_EP_VENDOR "directgraph"
/* The OrtApi version we request: the oldest with the graph API. */
#define DG_EP_API_VERSION 23u

/* The ORT tables every part of the EP calls through. */
typedef struct ep_ort {
  dg_ort_table api;
  dg_ort_table ep_api;
} ep_ort;

/* What the EP options (session config "ep.<lowercase name>.<key>") ask. */
#define EP_MAX_DEVICES 16
typedef struct ep_options {
  dg_policy policy;
  unsigned device_kinds;       /* 0: all */
  int devices[EP_MAX_DEVICES]; /* allow-list of device indices */
  int device_count;            /* 0: all */
  dg_precision precision;      /* "precision": exact (default), fast_f16 */
} ep_options;

typedef struct ep_factory {
  dg_ort_ep_factory base; /* first: ORT sees a pointer to this */
  ep_ort ort;
  const dg_ort_api_base *api_base;
} ep_factory;

typedef struct ep_state {
  dg_ort_ep base; /* first: ORT sees a pointer to this */
  ep_ort ort;
  ep_options opts;
  dg_context *ctx;
} ep_state;

/* ---- ep_util.c: OrtStatus and graph-reading helpers ---- */

/* false for a NULL status (success); otherwise copies its message into
 * msg (may be NULL), releases the status and returns true. */
bool ep_failed(const ep_ort *o, OrtStatus *st, char *msg, size_t len);
/* A new OrtStatus with a formatted message. */
OrtStatus *ep_error(const ep_ort *o, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

const char *ep_node_op(const ep_ort *o, const OrtNode *n); /* "" on error */
const char *ep_node_domain(const ep_ort *o, const OrtNode *n);
const char *ep_node_name(const ep_ort *o, const OrtNode *n);
int ep_node_opset(const ep_ort *o, const OrtNode *n);
/* Inputs/outputs of a node; *out is malloc'ed (caller frees), entries may
 * be NULL for omitted optional values. Returns the count or -1. */
int ep_node_inputs(const ep_ort *o, const OrtNode *n,
                   const OrtValueInfo ***out);
int ep_node_outputs(const ep_ort *o, const OrtNode *n,
                    const OrtValueInfo ***out);
/* The graph's nodes (malloc'ed); count or -1. */
int ep_graph_nodes(const ep_ort *o, const OrtGraph *g, const OrtNode ***out);
/* NULL-safe: "" for an absent value. */
const char *ep_value_name(const ep_ort *o, const OrtValueInfo *v);
/* ORT element type and dims (-1 = symbolic) of a tensor value; false when
 * the value is not a tensor or its rank is unknown/too large. */
bool ep_value_shape(const ep_ort *o, const OrtValueInfo *v, int *elem,
                    int *rank, int64_t dims[DG_MAX_RANK]);
/* The constant initializer behind v (data and shape), or false. */
typedef struct ep_const {
  int elem;
  int rank;
  int64_t dims[DG_MAX_RANK];
  size_t count;
  const void *data; /* owned by ORT, valid while its graph is */
} ep_const;
bool ep_value_const(const ep_ort *o, const OrtValueInfo *v, ep_const *c);
/* The node producing v, or NULL (graph input, initializer). */
const OrtNode *ep_value_producer(const ep_ort *o, const OrtValueInfo *v);

dg_dtype ep_dtype_of(int ort_elem); /* DG_DTYPE_INVALID if none */

/* Attributes: false / -1 when absent (or, for the scalars, of another
 * type). ep_attr_ints returns how many values there are (0 when of
 * another type), copying up to max; ep_attr_string copies into buf. */
bool ep_attr_int(const ep_ort *o, const OrtNode *n, const char *name,
                 int64_t *v);
bool ep_attr_float(const ep_ort *o, const OrtNode *n, const char *name,
                   float *v);
int ep_attr_ints(const ep_ort *o, const OrtNode *n, const char *name,
                 int64_t *out, int max);
bool ep_attr_string(const ep_ort *o, const OrtNode *n, const char *name,
                    char *buf, size_t len);
/* The names of n's attributes (*out malloc'ed, the caller frees it; the
 * strings are ORT's, valid while its graph is); count or -1. */
int ep_attr_names(const ep_ort *o, const OrtNode *n, const char ***out);
bool ep_value_is_graph_output(const ep_ort *o, const OrtValueInfo *v);

/* ---- ep_options.c ---- */
/* Reads the EP options from the session options; false with a message
 * on an invalid value. */
bool ep_options_read(const ep_ort *o, const OrtSessionOptions *so,
                     ep_options *out, char *err, size_t len);
dg_compile_options ep_compile_options(const ep_options *opts);

/* ---- ep_region.c: one directgraph graph for a set of ORT nodes ---- */

/* Builds a graph for nodes (in any order; they are sorted by their
 * dependencies) through the ONNX translator (src/front/onnx/onnx_translate.h),
 * the importer's. Values produced outside the set become graph inputs, or
 * constants when ORT reports a constant initializer. outputs lists the
 * value names to mark as graph outputs: the values something outside the
 * set reads (ep_region_outputs), which Q/DQ folding must keep. Returns the
 * graph, or NULL with err naming the node and the translator's reason. */
dg_graph *ep_region_build(const ep_ort *o, dg_context *ctx,
                          const OrtNode *const *nodes, size_t count,
                          const char *const *outputs, size_t output_count,
                          char *err, size_t len);
/* The values nodes (a subset of all) produce that a graph output is, or a
 * node of all outside the subset reads, as ORT's fused node would list
 * them; *out is malloc'ed (the caller frees it), the names are ORT's.
 * Count, or -1 on error. */
int ep_region_outputs(const ep_ort *o, const OrtNode *const *all, int nall,
                      const OrtNode *const *nodes, int count,
                      const char ***out);

/* ---- ep_capability.c, ep_compile.c: the OrtEp callbacks ---- */
OrtStatus *ep_get_capability(dg_ort_ep *self, const OrtGraph *graph,
                             OrtEpGraphSupportInfo *info);
OrtStatus *ep_compile(dg_ort_ep *self, const OrtGraph **graphs,
                      const OrtNode **fused_nodes, size_t count,
                      dg_ort_node_compute_info **infos,
                      OrtNode **ep_context_nodes);
void ep_release_compute_infos(dg_ort_ep *self, dg_ort_node_compute_info **infos,
                              size_t count);

#endif
