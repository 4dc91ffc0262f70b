/* Concats made in place in the host arena (concat_slices.h). */
#include "concat_slices.h"

#include <stdlib.h>

/* Whether input t of a concat can live in its slice: a value the host
 * holds, made on a host-memory device, in no other slice and holding
 * none, of the concat's dtype. */
static bool slice_takes(const dg_ir *ir, const bool *host_node,
                        const int *first, const uint32_t *slice_of,
                        const int *holder, uint32_t t, dg_dtype dtype) {
  const dg_tensor_info *ti = dg_ir_tensor(ir, t);
  return ti && ti->kind == DG_TENSOR_VALUE && ti->producer >= 0 &&
         host_node[ti->producer] && first[t] >= 0 && !slice_of[t] &&
         holder[t] < 0 && ti->desc.dtype == dtype;
}

/* DenseNet's concats: layer k concatenates the block's input and every
 * layer's output so far, so each concat's inputs begin with all of the
 * previous one's. The outermost holder of n's first input, when n's
 * inputs begin with exactly that holder's concat's inputs (and more
 * follow), is returned: it becomes n's output's first slice. 0 if none. */
static uint32_t prefix_holder(const dg_ir *ir, const dg_node *n,
                              const uint32_t *slice_of, const size_t *slice_at,
                              const int *holder) {
  uint32_t h = slice_of[n->inputs[0]];
  if (!h || slice_at[n->inputs[0]])
    return 0;
  while (slice_of[h]) {
    if (slice_at[h])
      return 0;
    h = slice_of[h];
  }
  const dg_node *a = &ir->nodes[holder[h]];
  if (a->input_count >= n->input_count)
    return 0;
  for (int k = 0; k < a->input_count; k++)
    if (a->inputs[k] != n->inputs[k])
      return 0;
  return h;
}

static void widen(int *first, int *last, uint32_t y, uint32_t t) {
  if (first[t] < first[y])
    first[y] = first[t];
  if (last[t] > last[y])
    last[y] = last[t];
}

int dg_concat_slices(const dg_ir *ir, const bool *host_node, int *first,
                     int *last, uint32_t *slice_of, size_t *slice_at,
                     size_t align) {
  int T = ir->tensor_count, taken = 0;
  for (int t = 0; t <= T; t++)
    slice_of[t] = 0, slice_at[t] = 0;
  int *holder = malloc(sizeof(int) * ((size_t)T + 1)); /* its concat */
  if (!holder)
    return 0; /* no memory to plan with: every concat copies */
  for (int t = 0; t <= T; t++)
    holder[t] = -1;
  for (int i = 0; i < ir->node_count; i++) {
    const dg_node *n = &ir->nodes[i];
    if (n->op != DG_OP_CONCAT || !host_node[i] || first[n->output] < 0 ||
        n->input_count < 1)
      continue;
    const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
    int64_t outer, inner;
    dg_desc_split(yd, n->p.axis, &outer, &inner);
    uint32_t pre = prefix_holder(ir, n, slice_of, slice_at, holder);
    int from = pre ? ir->nodes[holder[pre]].input_count : 0;
    size_t at = pre ? dg_desc_bytes(&dg_ir_tensor(ir, pre)->desc) : 0;
    bool ok = outer == 1;
    for (int k = from; ok && k < n->input_count; k++) {
      uint32_t t = n->inputs[k];
      ok = at % align == 0 &&
           slice_takes(ir, host_node, first, slice_of, holder, t, yd->dtype);
      for (int j = 0; ok && j < k; j++)
        ok = n->inputs[j] != t; /* one slice per tensor */
      at += dg_desc_bytes(&dg_ir_tensor(ir, t)->desc);
    }
    if (!ok)
      continue;
    uint32_t y = n->output;
    at = 0;
    if (pre) {
      slice_of[pre] = y; /* with the slices it holds */
      at = dg_desc_bytes(&dg_ir_tensor(ir, pre)->desc);
      widen(first, last, y, pre);
    }
    for (int k = from; k < n->input_count; k++) {
      uint32_t t = n->inputs[k];
      slice_of[t] = y;
      slice_at[t] = at;
      at += dg_desc_bytes(&dg_ir_tensor(ir, t)->desc);
      widen(first, last, y, t);
    }
    holder[y] = i;
    taken++;
  }
  free(holder);
  return taken;
}
