/* conv2d -> batch_norm as one conv2d (fold_bn.h says when and how). */
#include "fold_bn.h"

#include "core/half.h" /* dg_f32_to_f16, dg_load_elem */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The conv (the batch norm's sole producer: dg_rewrite_sole_producer)
 * and the batch norm have what folding needs. */
static bool foldable(const dg_rewrite *rw, const dg_node *conv,
                     const dg_node *bn) {
  const dg_ir *ir = rw->ir;
  if (conv->op != DG_OP_CONV2D || conv->p.activation != DG_ACTIVATION_NONE ||
      !dg_rewrite_is_constant(ir, conv->inputs[1]) ||
      (conv->inputs[2] && !dg_rewrite_is_constant(ir, conv->inputs[2])))
    return false;
  for (int k = 1; k < 5; k++)
    if (!dg_rewrite_is_constant(ir, bn->inputs[k]))
      return false;
  return true;
}

static void store(dg_dtype t, void *p, int64_t i, double v) {
  if (t == DG_DTYPE_F16)
    ((uint16_t *)p)[i] = dg_f32_to_f16((float)v);
  else
    ((float *)p)[i] = (float)v;
}

static bool fold(dg_rewrite *rw, int ci, int bi) {
  dg_ir *ir = rw->ir;
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
  if (!nw || !nb) {
    free(nw), free(nb);
    return false;
  }
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
  /* Named after the batch norm, whose parameters they now hold. */
  uint32_t wid = dg_rewrite_add_constant(ir, bn->name, &wd, nw);
  uint32_t bid = wid ? dg_rewrite_add_constant(ir, bn->name, &bd, nb) : 0;
  if (!wid)
    free(nb);
  /* An unused weight constant may stay: nothing reads it. */
  if (!bid || !dg_rewrite_absorb(rw, ci, bi))
    return false;
  conv = &ir->nodes[ci];
  conv->inputs[1] = wid;
  conv->inputs[2] = bid;
  return true;
}

bool dg_fold_batch_norm(dg_rewrite *rw) {
  dg_ir *ir = rw->ir;
  for (int i = 0; i < ir->node_count; i++) {
    const dg_node *bn = &ir->nodes[i];
    int c = bn->op == DG_OP_BATCH_NORM
                ? dg_rewrite_sole_producer(rw, bn->inputs[0], i)
                : -1;
    if (c >= 0 && foldable(rw, &ir->nodes[c], bn) && !fold(rw, c, i))
      return false;
  }
  return true;
}
