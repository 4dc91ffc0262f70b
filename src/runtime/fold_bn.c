/* conv2d -> batch_norm as one conv2d (fold_bn.h says when and how). */
#include "fold_bn.h"

#include "session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_constant(const dg_ir *ir, uint32_t id) {
  const dg_tensor_info *t = dg_ir_tensor(ir, id);
  return t && t->kind == DG_TENSOR_CONSTANT && t->constant;
}

/* Node inputs and graph outputs that read tensor id. */
static int readers(const dg_ir *ir, uint32_t id) {
  int r = 0;
  for (int i = 0; i < ir->node_count; i++)
    for (int k = 0; k < ir->nodes[i].input_count; k++)
      r += ir->nodes[i].inputs[k] == id;
  for (int o = 0; o < ir->output_count; o++)
    r += ir->outputs[o].tensor == id;
  return r;
}

static bool foldable(const dg_ir *ir, const dg_node *conv, const dg_node *bn) {
  if (conv->op != DG_OP_CONV2D || bn->op != DG_OP_BATCH_NORM ||
      bn->inputs[0] != conv->output ||
      conv->p.activation != DG_ACTIVATION_NONE ||
      !is_constant(ir, conv->inputs[1]) ||
      (conv->inputs[2] && !is_constant(ir, conv->inputs[2])))
    return false;
  for (int k = 1; k < 5; k++)
    if (!is_constant(ir, bn->inputs[k]))
      return false;
  /* Only the batch norm reads the conv's output (and no graph output). */
  return readers(ir, conv->output) == 1;
}

/* Appends a constant tensor owning data; 0 on out-of-memory (data is
 * then freed). */
static uint32_t add_constant(dg_ir *ir, const char *name,
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

static void store(dg_dtype t, void *p, int64_t i, double v) {
  if (t == DG_DTYPE_F16)
    ((uint16_t *)p)[i] = dg_f32_to_f16((float)v);
  else
    ((float *)p)[i] = (float)v;
}

/* Removes node bi (whose output the conv has taken over). */
static void remove_node(dg_ir *ir, int bi) {
  free(ir->nodes[bi].name);
  free(ir->nodes[bi].inputs);
  memmove(&ir->nodes[bi], &ir->nodes[bi + 1],
          sizeof *ir->nodes * (size_t)(ir->node_count - bi - 1));
  ir->node_count--;
  for (int t = 0; t < ir->tensor_count; t++)
    if (ir->tensors[t].producer > bi)
      ir->tensors[t].producer--;
}

static bool fold(dg_ir *ir, int ci, int bi) {
  dg_node *conv = &ir->nodes[ci], *bn = &ir->nodes[bi];
  dg_tensor_desc wd = dg_ir_tensor(ir, conv->inputs[1])->desc;
  dg_dtype dt = wd.dtype;
  int64_t O = wd.dims[0], K = dg_desc_elements(&wd) / O;
  const void *w = dg_ir_tensor(ir, conv->inputs[1])->constant->data;
  const void *cb = conv->inputs[2]
                       ? dg_ir_tensor(ir, conv->inputs[2])->constant->data
                       : NULL;
  const void *p[4];
  for (int k = 0; k < 4; k++)
    p[k] = dg_ir_tensor(ir, bn->inputs[k + 1])->constant->data;
  size_t es = dg_dtype_size(dt);
  void *nw = malloc((size_t)(O * K) * es), *nb = malloc((size_t)O * es);
  size_t len = strlen(conv->name) + strlen(bn->name) + 2;
  char *name = malloc(len);
  if (!nw || !nb || !name) {
    free(nw), free(nb), free(name);
    return false;
  }
  snprintf(name, len, "%s+%s", conv->name, bn->name);
  for (int64_t o = 0; o < O; o++) {
    double scale = dg_load_elem(dt, p[0], o), bias = dg_load_elem(dt, p[1], o),
           mean = dg_load_elem(dt, p[2], o), var = dg_load_elem(dt, p[3], o);
    double a = scale / sqrt(var + (double)bn->p.epsilon);
    for (int64_t k = 0; k < K; k++)
      store(dt, nw, o * K + k, dg_load_elem(dt, w, o * K + k) * a);
    double b0 = cb ? dg_load_elem(dt, cb, o) : 0;
    store(dt, nb, o, (b0 - mean) * a + bias);
  }
  dg_tensor_desc bd = {.dtype = dt, .rank = 1, .dims = {O}};
  uint32_t wid = add_constant(ir, name, &wd, nw);
  uint32_t bid = wid ? add_constant(ir, name, &bd, nb) : 0;
  if (!wid)
    free(nb);
  if (!bid) { /* an unused weight constant may stay: nothing reads it */
    free(name);
    return false;
  }
  conv = &ir->nodes[ci];
  bn = &ir->nodes[bi];
  conv->inputs[1] = wid;
  conv->inputs[2] = bid;
  conv->output = bn->output;
  dg_ir_tensor(ir, bn->output)->producer = ci;
  free(conv->name);
  conv->name = name;
  remove_node(ir, bi);
  return true;
}

bool dg_fold_batch_norm(dg_ir *ir) {
  for (int i = 0; i < ir->node_count; i++) {
    const dg_node *bn = &ir->nodes[i];
    if (bn->op != DG_OP_BATCH_NORM)
      continue;
    const dg_tensor_info *x = dg_ir_tensor(ir, bn->inputs[0]);
    if (x->kind != DG_TENSOR_VALUE || x->producer < 0 ||
        !foldable(ir, &ir->nodes[x->producer], bn))
      continue;
    if (!fold(ir, x->producer, i))
      return false;
    i--; /* node i is now the one after the batch norm */
  }
  return true;
}
