/* Which tensors cross a segment's boundary: the helper every device target
 * with its own memory uses to decide what to upload before a run and what
 * to download after it. */
#include "target.h"

#include <stdlib.h>
#include <string.h>

static bool in_segment(const dg_segment *seg, int node) {
  for (int i = 0; i < seg->node_count; i++)
    if (seg->nodes[i] == node)
      return true;
  return false;
}

static bool push(uint32_t **list, int *count, uint32_t id) {
  for (int i = 0; i < *count; i++)
    if ((*list)[i] == id)
      return true;
  uint32_t *p = realloc(*list, sizeof(uint32_t) * (size_t)(*count + 1));
  if (!p)
    return false;
  p[(*count)++] = id;
  *list = p;
  return true;
}

dg_status dg_segment_boundary(const dg_segment *seg, dg_segment_io *io) {
  const dg_ir *ir = seg->ir;
  memset(io, 0, sizeof *io);
  bool ok = true;
  for (int i = 0; i < seg->node_count && ok; i++) {
    const dg_node *n = &ir->nodes[seg->nodes[i]];
    for (int k = 0; k < n->input_count && ok; k++) {
      const dg_tensor_info *t = dg_ir_tensor(ir, n->inputs[k]);
      if (!t)
        continue;
      if (t->kind == DG_TENSOR_CONSTANT)
        ok = push(&io->constants, &io->constant_count, n->inputs[k]);
      else if (t->kind == DG_TENSOR_INPUT || !in_segment(seg, t->producer))
        ok = push(&io->inputs, &io->input_count, n->inputs[k]);
    }
    /* Outputs: used by a node elsewhere, a graph output, or kept. */
    bool needed = seg->keep_all;
    for (int o = 0; o < ir->output_count && !needed; o++)
      needed = ir->outputs[o].tensor == n->output;
    for (int j = 0; j < ir->node_count && !needed; j++) {
      if (in_segment(seg, j))
        continue;
      for (int k = 0; k < ir->nodes[j].input_count && !needed; k++)
        needed = ir->nodes[j].inputs[k] == n->output;
    }
    if (needed && ok)
      ok = push(&io->outputs, &io->output_count, n->output);
  }
  if (!ok) {
    dg_segment_io_free(io);
    return DG_ERROR_OUT_OF_MEMORY;
  }
  return DG_OK;
}

void dg_segment_io_free(dg_segment_io *io) {
  free(io->inputs);
  free(io->outputs);
  free(io->constants);
  memset(io, 0, sizeof *io);
}
