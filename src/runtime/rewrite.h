/* The kit the compile-time graph passes share (passes.h): a rewrite of a
 * session's own IR copy in which nodes are marked dead and tensors
 * redirected while a pass walks, then applied in one sweep, so that every
 * pass stays linear in the graph's size (dg-bench --scale compiles
 * 100k-node graphs). */
#ifndef DG_RUNTIME_REWRITE_H
#define DG_RUNTIME_REWRITE_H

#include "core/ir.h"

#include <stdbool.h>

typedef struct dg_rewrite {
  dg_ir *ir;
  int *readers;   /* [tensor id]: node inputs and graph outputs reading it */
  bool *outputs;  /* [tensor id]: bound as a graph output */
  bool *dead;     /* [node]: removed by dg_rewrite_end */
  uint32_t *repl; /* [tensor id]: read this tensor instead (0: itself) */
  /* Tensors at begin: the arrays' bound (passes add constants, never
   * nodes). */
  uint32_t tensors;
} dg_rewrite;

/* Counts the readers of every tensor; false on out-of-memory. */
bool dg_rewrite_begin(dg_rewrite *rw, dg_ir *ir);
/* Redirects every reader of the replaced tensors, removes the dead nodes
 * (the survivors keep their order) and frees rw. */
void dg_rewrite_end(dg_rewrite *rw);

static inline bool dg_rewrite_is_constant(const dg_ir *ir, uint32_t id) {
  const dg_tensor_info *t = dg_ir_tensor(ir, id);
  return t && t->kind == DG_TENSOR_CONSTANT && t->constant;
}

/* The node producing tensor id, or -1 (an input, a constant, a dead
 * producer). */
int dg_rewrite_producer(const dg_rewrite *rw, uint32_t id);

/* The node producing tensor id, where node r is the only reader of id,
 * id is no graph output and both nodes have the same pin (what fusing a
 * producer into its reader needs); else -1. */
int dg_rewrite_sole_producer(const dg_rewrite *rw, uint32_t id, int r);

/* Whether n is a two-input binary node of function fn with an f32 or f16
 * output. */
bool dg_rewrite_float_binary(const dg_ir *ir, const dg_node *n, int fn);

/* Node ni takes over the output of node di (ni's output read by di alone;
 * di then dead, and its inputs' reader counts drop: a caller that moves
 * one of them to ni counts it again). The fused node's name becomes
 * "<ni's name>+<di's name>", what the plan shows. false on out-of-memory
 * (nothing changed). */
bool dg_rewrite_absorb(dg_rewrite *rw, int ni, int di);

struct dg_pass_devices; /* passes.h */

/* Whether a and b have the same dtype and dims. */
bool dg_rewrite_same_shape(const dg_tensor_desc *a, const dg_tensor_desc *b);

/* Node ni takes one more input, tensor extra (as its input_count-th), and
 * the output of node di, an add reading ni's output and extra
 * (dg_rewrite_absorb) — where ask says every device keeps the node
 * (passes.h's dg_pass_devices; NULL: never). 1 fused, 0 not (nothing
 * changed), -1 out of memory. */
int dg_rewrite_absorb_add(dg_rewrite *rw, int ni, int di, uint32_t extra,
                          const struct dg_pass_devices *ask);

/* Node di is dead and its readers read tensor src instead. */
void dg_rewrite_bypass(dg_rewrite *rw, int di, uint32_t src);

/* Appends a constant tensor that owns data (freed on failure); its id, or
 * 0 on out-of-memory. */
uint32_t dg_rewrite_add_constant(dg_ir *ir, const char *name,
                                 const dg_tensor_desc *d, void *data);

#endif
