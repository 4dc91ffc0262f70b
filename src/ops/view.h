/* The strided view that describes transpose, slice, pad and expand alike,
 * so that the reference kernel and every target's one copy kernel read the
 * same description of a node.
 *
 * For output coordinate c_d on axis d, the input coordinate along the input
 * axis that output axis reads is
 *
 *   i_d = start_d + c_d * step_d
 *
 * (step 0 on an expanded axis, start < 0 where pad adds elements before).
 * Outside [0, extent_d) -- only pad makes such coordinates -- mode says
 * where the value comes from (dg_view_coord), and the input element is at
 * sum_d i_d * stride_d (strides in elements, permuted for transpose).
 * Adjacent output axes that read like one are merged (movement.c's
 * merge_axes), so the view's rank may be below the output's; its axes
 * still walk the output in order. */
#ifndef DG_VIEW_H
#define DG_VIEW_H

#include "core/ir.h"

typedef struct dg_view {
  int rank; /* <= the output's; the dims' product is its element count */
  int64_t dims[DG_MAX_RANK];
  int64_t start[DG_MAX_RANK], step[DG_MAX_RANK];
  int64_t extent[DG_MAX_RANK]; /* input coordinates are in [0, extent) */
  int64_t stride[DG_MAX_RANK];
  int32_t mode; /* dg_pad_mode for coordinates outside the extent */
  size_t elem_size;
  /* The constant of DG_PAD_CONSTANT as the output dtype holds it: its
   * value (what the reference produces) and its element's bytes. */
  double fill;
  uint64_t fill_bits; /* 8 bytes for i64; the low ones for the others */
} dg_view;

/* The view of a transpose, slice, pad or expand node; false for any other
 * op. */
bool dg_view_of(const dg_ir *ir, const dg_node *n, dg_view *v);

/* Maps a coordinate i on view axis d into [0, extent) by the pad mode;
 * -1 means the constant (DG_PAD_CONSTANT outside the extent). */
static inline int64_t dg_view_map(const dg_view *v, int d, int64_t i) {
  int64_t n = v->extent[d];
  if (i >= 0 && i < n)
    return i;
  switch (v->mode) {
  case DG_PAD_REFLECT: /* pads < n: one reflection is enough */
    return i < 0 ? -i : 2 * (n - 1) - i;
  case DG_PAD_EDGE:
    return i < 0 ? 0 : n - 1;
  case DG_PAD_WRAP:
    return ((i % n) + n) % n;
  default:
    return -1;
  }
}

/* Whether every coordinate of view axis d lies inside its extent (no pad
 * reaches it). */
static inline bool dg_view_inside(const dg_view *v, int d) {
  int64_t first = v->start[d], last = first + (v->dims[d] - 1) * v->step[d];
  return first >= 0 && first < v->extent[d] && last >= 0 && last < v->extent[d];
}

/* The input coordinate of output coordinate c on axis d (-1: constant). */
static inline int64_t dg_view_coord(const dg_view *v, int d, int64_t c) {
  return dg_view_map(v, d, v->start[d] + c * v->step[d]);
}

#endif
