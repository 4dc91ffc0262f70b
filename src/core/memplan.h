/* The one memory planner: which bytes of one arena each buffer gets, given
 * when each buffer is live. The host side (session.c) and every target
 * with memory of its own (Vulkan, OpenCL, the NPU) plan with it; they
 * differ only in the alignment and in which tensors they ask about.
 *
 * A buffer is a block: its size, the steps it is live (first..last,
 * inclusive, in whatever step numbering the caller uses, normally node
 * indices) and whether it is pinned (never shares bytes with any other
 * block: buffers uploaded once or read by the caller, and every buffer
 * when verify keeps all values). Two unpinned blocks share bytes only if
 * their live steps do not overlap.
 *
 * Two placements of the same blocks:
 * - dg_memplan_place: offsets in one arena, first fit by address. Blocks
 *   are taken in order of their first step (ties in the order given) and
 *   each goes to the lowest aligned offset not overlapping a block live at
 *   the same time. For memory the target addresses by offset: the host,
 *   Vulkan (one VkBuffer, bound at offsets), the NPU.
 * - dg_memplan_share: whole buffers shared by blocks that are never live
 *   together, best fit. For OpenCL, where each tensor must be a cl_mem of
 *   its own: sub-buffers of one arena would alias, and drivers do not all
 *   track the contents of overlapping sub-buffers (PoCL's migration keeps
 *   them per cl_mem and crashed copying between them).
 * Both take O(n * live) for n blocks of which at most `live` are live at
 * once. */
#ifndef DG_MEMPLAN_H
#define DG_MEMPLAN_H

#include "ir.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct dg_mem_block {
  size_t size;   /* bytes; 0 gets an offset but no bytes */
  int first;     /* first step the block is live */
  int last;      /* last step (>= first) */
  bool pinned;   /* shares bytes with nothing */
  size_t offset; /* out (place): from the arena's start, a multiple of
                    align; (share): the index of the block's buffer */
} dg_mem_block;

/* Places blocks[0..count) at offsets from base (rounded up to align, a
 * power of two) and returns the arena's size in bytes: the end of the
 * highest block, at least base. Returns 0 and sets *oom when the host runs
 * out of memory for the planner's own scratch, SIZE_MAX on overflow. */
size_t dg_memplan_place(dg_mem_block *blocks, int count, size_t align,
                        size_t base, bool *oom);

/* Gives every block a buffer (its index in offset): a dead buffer at
 * least as large, the smallest such, or a new one. sizes receives each
 * buffer's bytes (count entries suffice). Returns the number of buffers,
 * or -1 when the host runs out of memory for the planner's scratch. */
int dg_memplan_share(dg_mem_block *blocks, int count, size_t *sizes);

/* Live steps of the tensors of a node sequence: for step i (node
 * nodes[i] of ir), every input and the output of that node are live.
 * first and last have ir->tensor_count + 1 entries (index = tensor id);
 * tensors the sequence never touches get first = last = -1. order, when
 * not NULL (tensor_count entries), receives the ids touched, each once,
 * in order of first use (within a step, the output before the inputs);
 * returns how many. */
int dg_memplan_lifetimes(const dg_ir *ir, const int *nodes, int node_count,
                         int *first, int *last, uint32_t *order);

#endif
