/* The compile-time passes' rewrite kit (rewrite.h). */
#include "rewrite.h"

#include "passes.h" /* dg_pass_devices */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool dg_rewrite_begin(dg_rewrite *rw, dg_ir *ir) {
  size_t T = (size_t)ir->tensor_count + 1, N = (size_t)ir->node_count + 1;
  memset(rw, 0, sizeof *rw);
  rw->ir = ir;
  rw->tensors = ir->tensor_count;
  rw->readers = calloc(T, sizeof *rw->readers);
  rw->outputs = calloc(T, sizeof *rw->outputs);
  rw->repl = calloc(T, sizeof *rw->repl);
  rw->dead = calloc(N, sizeof *rw->dead);
  if (!rw->readers || !rw->outputs || !rw->repl || !rw->dead) {
    free(rw->readers), free(rw->outputs), free(rw->repl), free(rw->dead);
    return false;
  }
  for (int i = 0; i < ir->node_count; i++)
    for (int k = 0; k < ir->nodes[i].input_count; k++)
      rw->readers[ir->nodes[i].inputs[k]]++;
  for (int o = 0; o < ir->output_count; o++) {
    rw->readers[ir->outputs[o].tensor]++;
    rw->outputs[ir->outputs[o].tensor] = true;
  }
  rw->readers[0] = 0; /* absent optional inputs */
  return true;
}

/* The tensor a reader of id ends up reading (bypasses chain). Tensors
 * added since begin (folded constants) are never replaced. */
static uint32_t resolve(const dg_rewrite *rw, uint32_t id) {
  while (id && id <= rw->tensors && rw->repl[id])
    id = rw->repl[id];
  return id;
}

void dg_rewrite_end(dg_rewrite *rw) {
  dg_ir *ir = rw->ir;
  int out = 0;
  int *index = malloc(sizeof(int) * ((size_t)ir->node_count + 1));
  for (int i = 0; i < ir->node_count; i++) {
    dg_node *n = &ir->nodes[i];
    if (rw->dead[i]) {
      free(n->name);
      free(n->inputs);
      if (index)
        index[i] = -1;
      continue;
    }
    for (int k = 0; k < n->input_count; k++)
      n->inputs[k] = resolve(rw, n->inputs[k]);
    if (index)
      index[i] = out;
    ir->nodes[out++] = *n;
  }
  ir->node_count = out;
  for (int t = 0; t < ir->tensor_count; t++) {
    int p = ir->tensors[t].producer;
    /* Without the index (out of memory) every producer is recomputed
     * below from the outputs. */
    if (p >= 0)
      ir->tensors[t].producer = index ? index[p] : -1;
  }
  if (!index)
    for (int i = 0; i < ir->node_count; i++)
      ir->tensors[ir->nodes[i].output - 1].producer = i;
  free(index);
  free(rw->readers), free(rw->outputs), free(rw->repl), free(rw->dead);
  memset(rw, 0, sizeof *rw);
}

/* A dead node's inputs are read no more. */
static void drop_reads(dg_rewrite *rw, const dg_node *d) {
  for (int k = 0; k < d->input_count; k++)
    if (d->inputs[k] && d->inputs[k] <= rw->tensors)
      rw->readers[d->inputs[k]]--;
}

int dg_rewrite_producer(const dg_rewrite *rw, uint32_t id) {
  const dg_tensor_info *t = dg_ir_tensor(rw->ir, id);
  if (!t || t->kind != DG_TENSOR_VALUE || t->producer < 0 ||
      rw->dead[t->producer])
    return -1;
  return t->producer;
}

int dg_rewrite_sole_producer(const dg_rewrite *rw, uint32_t id, int r) {
  int p = dg_rewrite_producer(rw, id);
  if (p < 0 || id > rw->tensors || rw->readers[id] != 1 || rw->outputs[id] ||
      rw->ir->nodes[p].pinned_device != rw->ir->nodes[r].pinned_device)
    return -1;
  return p;
}

bool dg_rewrite_float_binary(const dg_ir *ir, const dg_node *n, int fn) {
  if (n->op != DG_OP_BINARY || n->p.fn != fn || n->input_count != 2)
    return false;
  dg_dtype t = dg_ir_desc(ir, n->output)->dtype;
  return t == DG_DTYPE_F32 || t == DG_DTYPE_F16;
}

bool dg_rewrite_absorb(dg_rewrite *rw, int ni, int di) {
  dg_ir *ir = rw->ir;
  dg_node *n = &ir->nodes[ni], *d = &ir->nodes[di];
  size_t len = strlen(n->name) + strlen(d->name) + 2;
  char *name = malloc(len);
  if (!name)
    return false;
  snprintf(name, len, "%s+%s", n->name, d->name);
  free(n->name);
  n->name = name;
  /* n's old output keeps no reader and no live producer. */
  ir->tensors[n->output - 1].producer = -1;
  n->output = d->output;
  ir->tensors[d->output - 1].producer = ni;
  drop_reads(rw, d);
  rw->dead[di] = true;
  return true;
}

bool dg_rewrite_same_shape(const dg_tensor_desc *a, const dg_tensor_desc *b) {
  if (a->dtype != b->dtype || a->rank != b->rank)
    return false;
  for (int d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d])
      return false;
  return true;
}

int dg_rewrite_absorb_add(dg_rewrite *rw, int ni, int di, uint32_t extra,
                          const dg_pass_devices *ask) {
  dg_node *n = &rw->ir->nodes[ni];
  enum { MAX_IN = 8 };
  uint32_t in[MAX_IN];
  int count = n->input_count + 1;
  if (!ask || count > MAX_IN)
    return 0;
  memcpy(in, n->inputs, sizeof(uint32_t) * (size_t)n->input_count);
  in[count - 1] = extra;
  dg_node after = *n;
  after.inputs = in;
  after.input_count = count;
  if (!ask->keeps(ask->ctx, rw->ir, n, &after))
    return 0;
  uint32_t *grown = realloc(n->inputs, sizeof(uint32_t) * (size_t)count);
  if (!grown)
    return -1;
  n->inputs = grown;
  if (!dg_rewrite_absorb(rw, ni, di)) /* n still reads its old inputs */
    return -1;
  n = &rw->ir->nodes[ni];
  n->inputs[count - 1] = extra;
  n->input_count = count;
  if (extra <= rw->tensors)
    rw->readers[extra]++; /* the add's read of extra, now n's */
  return 1;
}

void dg_rewrite_bypass(dg_rewrite *rw, int di, uint32_t src) {
  dg_node *d = &rw->ir->nodes[di];
  drop_reads(rw, d);
  if (src <= rw->tensors)
    rw->readers[src] += rw->readers[d->output];
  rw->readers[d->output] = 0;
  rw->repl[d->output] = src;
  rw->ir->tensors[d->output - 1].producer = -1;
  rw->dead[di] = true;
}

uint32_t dg_rewrite_add_constant(dg_ir *ir, const char *name,
                                 const dg_tensor_desc *d, void *data) {
  dg_blob *b = malloc(sizeof *b);
  char *nm = dg_name_dup(name);
  if (ir->tensor_count == ir->tensor_cap) {
    int cap = ir->tensor_cap * 2 + 2;
    dg_tensor_info *t = realloc(ir->tensors, sizeof *t * (size_t)cap);
    if (t) {
      ir->tensors = t;
      ir->tensor_cap = cap;
    }
  }
  if (!b || !nm || ir->tensor_count == ir->tensor_cap) {
    free(b), free(nm), free(data);
    return 0;
  }
  atomic_init(&b->refs, 1);
  b->data = b->owned = data;
  b->size = dg_desc_bytes(d);
  dg_tensor_info *t = &ir->tensors[ir->tensor_count];
  memset(t, 0, sizeof *t);
  t->name = nm;
  t->kind = DG_TENSOR_CONSTANT;
  t->desc = *d;
  t->producer = -1;
  t->constant = b;
  return (uint32_t)++ir->tensor_count;
}
