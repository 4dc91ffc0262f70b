/* Which tensors cross a segment's boundary: the helper every device target
 * with its own memory uses to decide what to upload before a run and what
 * to download after it. */
#include "target.h"

#include <stdlib.h>
#include <string.h>

static bool push(uint32_t **list, int *count, int *cap, uint32_t id) {
  if (*count == *cap) {
    int n = *cap ? *cap * 2 : 16;
    uint32_t *p = realloc(*list, sizeof(uint32_t) * (size_t)n);
    if (!p)
      return false;
    *list = p;
    *cap = n;
  }
  (*list)[(*count)++] = id;
  return true;
}

/* Marks, lists, then the outputs: what a node outside the segment reads,
 * the graph's outputs, or (keep_all) everything the segment makes. Each
 * tensor is looked at once per edge. */
dg_status dg_segment_boundary(const dg_segment *seg, dg_segment_io *io) {
  const dg_ir *ir = seg->ir;
  memset(io, 0, sizeof *io);
  int T = ir->tensor_count, N = ir->node_count;
  bool *in_seg = calloc((size_t)N + 1, sizeof *in_seg);
  bool *read_out = calloc((size_t)T + 1, sizeof *read_out);
  io->role = calloc((size_t)T + 1, sizeof *io->role);
  int cap_in = 0, cap_c = 0, cap_out = 0;
  bool ok = in_seg && read_out && io->role;
  for (int i = 0; ok && i < seg->node_count; i++)
    in_seg[seg->nodes[i]] = true;
  for (int j = 0; ok && j < N; j++)
    for (int k = 0; !in_seg[j] && k < ir->nodes[j].input_count; k++)
      if (ir->nodes[j].inputs[k])
        read_out[ir->nodes[j].inputs[k]] = true;
  for (int o = 0; ok && o < ir->output_count; o++)
    read_out[ir->outputs[o].tensor] = true;
  for (int i = 0; i < seg->node_count && ok; i++) {
    const dg_node *n = &ir->nodes[seg->nodes[i]];
    for (int k = 0; k < n->input_count && ok; k++) {
      uint32_t id = n->inputs[k];
      const dg_tensor_info *t = dg_ir_tensor(ir, id);
      if (!t || io->role[id])
        continue;
      if (t->kind == DG_TENSOR_CONSTANT) {
        ok = push(&io->constants, &io->constant_count, &cap_c, id);
        io->role[id] = DG_IO_CONSTANT;
      } else if (t->kind == DG_TENSOR_INPUT || !in_seg[t->producer]) {
        ok = push(&io->inputs, &io->input_count, &cap_in, id);
        io->role[id] = DG_IO_INPUT;
      }
    }
    uint32_t y = n->output;
    if (ok && (seg->keep_all || read_out[y]) && !(io->role[y] & DG_IO_OUTPUT)) {
      ok = push(&io->outputs, &io->output_count, &cap_out, y);
      io->role[y] |= DG_IO_OUTPUT;
    }
  }
  free(in_seg);
  free(read_out);
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
  free(io->role);
  memset(io, 0, sizeof *io);
}
