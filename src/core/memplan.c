/* First-fit placement of live intervals in one arena (memplan.h). */
#include "memplan.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

static size_t align_up(size_t v, size_t a, bool *overflow) {
  if (v > SIZE_MAX - (a - 1)) {
    *overflow = true;
    return 0;
  }
  return (v + a - 1) & ~(a - 1);
}

/* A pinned block is live at every step. */
static int first_of(const dg_mem_block *b) {
  return b->pinned ? INT_MIN : b->first;
}

/* Stable merge sort of order[0..n) by first step, so that blocks with the
 * same first step keep the caller's order. */
static void sort_by_first(const dg_mem_block *blocks, int *order, int *tmp,
                          int n) {
  for (int w = 1; w < n; w *= 2)
    for (int lo = 0; lo < n; lo += 2 * w) {
      int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int i = lo, j = mid, k = lo;
      while (i < mid || j < hi)
        tmp[k++] = j >= hi || (i < mid && first_of(&blocks[order[i]]) <=
                                              first_of(&blocks[order[j]]))
                       ? order[i++]
                       : order[j++];
      for (k = lo; k < hi; k++)
        order[k] = tmp[k];
    }
}

size_t dg_memplan_place(dg_mem_block *blocks, int count, size_t align,
                        size_t base, bool *oom) {
  *oom = false;
  if (align == 0)
    align = 1;
  bool overflow = false;
  size_t start = align_up(base, align, &overflow), top = base;
  if (count <= 0)
    return overflow ? SIZE_MAX : top;
  int *order = malloc(sizeof(int) * (size_t)count);
  int *live = malloc(sizeof(int) * (size_t)count); /* sorted by offset */
  if (!order || !live) {
    free(order), free(live);
    *oom = true;
    return 0;
  }
  for (int i = 0; i < count; i++)
    order[i] = i;
  sort_by_first(blocks, order, live, count);
  int nlive = 0;
  for (int k = 0; k < count && !overflow; k++) {
    dg_mem_block *b = &blocks[order[k]];
    /* Drop blocks dead before this one starts. */
    int w = 0;
    for (int r = 0; r < nlive; r++) {
      const dg_mem_block *o = &blocks[live[r]];
      if (o->pinned || o->last >= b->first)
        live[w++] = live[r];
    }
    nlive = w;
    /* Lowest gap between live blocks, in address order, that holds b. */
    size_t cand = start;
    int at = 0;
    for (; at < nlive; at++) {
      const dg_mem_block *o = &blocks[live[at]];
      if (b->size <= SIZE_MAX - cand && o->offset >= cand + b->size)
        break;
      size_t end = o->offset + o->size;
      if (end > cand)
        cand = align_up(end, align, &overflow);
    }
    if (b->size > SIZE_MAX - cand)
      overflow = true;
    b->offset = cand;
    if (!overflow && cand + b->size > top)
      top = cand + b->size;
    for (int r = nlive; r > at; r--)
      live[r] = live[r - 1];
    live[at] = order[k];
    nlive++;
  }
  free(order), free(live);
  return overflow ? SIZE_MAX : top;
}

int dg_memplan_share(dg_mem_block *blocks, int count, size_t *sizes) {
  int *order = malloc(sizeof(int) * (size_t)(count + 1));
  int *tmp = malloc(sizeof(int) * (size_t)(count + 1));
  int *owner = malloc(sizeof(int) * (size_t)(count + 1)); /* per buffer */
  if (!order || !tmp || !owner) {
    free(order), free(tmp), free(owner);
    return -1;
  }
  for (int i = 0; i < count; i++)
    order[i] = i;
  sort_by_first(blocks, order, tmp, count);
  /* owner[buf]: the block last given buffer buf; the buffer is free once
   * that block is dead (a pinned block's never is). */
  int buffers = 0;
  for (int k = 0; k < count; k++) {
    dg_mem_block *b = &blocks[order[k]];
    int best = -1;
    for (int buf = 0; buf < buffers && !b->pinned; buf++) {
      const dg_mem_block *o = &blocks[owner[buf]];
      if (!o->pinned && o->last < b->first && sizes[buf] >= b->size &&
          (best < 0 || sizes[buf] < sizes[best]))
        best = buf;
    }
    if (best < 0) {
      best = buffers++;
      sizes[best] = b->size;
    }
    owner[best] = order[k];
    b->offset = (size_t)best;
  }
  free(order), free(tmp), free(owner);
  return buffers;
}

int dg_memplan_lifetimes(const dg_ir *ir, const int *nodes, int node_count,
                         int *first, int *last, uint32_t *order) {
  int count = 0;
  for (int t = 0; t <= ir->tensor_count; t++)
    first[t] = last[t] = -1;
  for (int i = 0; i < node_count; i++) {
    const dg_node *n = &ir->nodes[nodes[i]];
    for (int k = -1; k < n->input_count; k++) {
      uint32_t id = k < 0 ? n->output : n->inputs[k];
      if (!id)
        continue;
      if (first[id] < 0) {
        first[id] = i;
        if (order)
          order[count] = id;
        count++;
      }
      last[id] = i;
    }
  }
  return count;
}
