/* The op table (ops.def), indexed by dg_op: names, reference kernels,
 * costs and the parameters each op reads. */
#include "ops.h"

#include <string.h>

/* Each line's position is its dg_op value, and the table covers the enum:
 * a line out of order or missing fails the build, not a run. */
enum {
#define DG_OP(e, name, reads) OP_LINE_##e,
#define DG_OP_RESERVED(e, name) OP_LINE_##e,
#include "ops.def"
#undef DG_OP
#undef DG_OP_RESERVED
  OP_LINES
};
#define DG_OP(e, name, reads)                                                  \
  _Static_assert((int)DG_OP_##e == (int)OP_LINE_##e + 1,                       \
                 "ops.def: " #e " is not on the line of its dg_op value");
#define DG_OP_RESERVED(e, name) DG_OP(e, name, 0)
#include "ops.def"
#undef DG_OP
#undef DG_OP_RESERVED
_Static_assert(OP_LINES + 1 == DG_OP_COUNT_,
               "ops.def does not have one line per dg_op");

static const dg_op_def table[DG_OP_COUNT_] = {
#define DG_OP(e, x, r) [DG_OP_##e] = {#x, dg_ref_##x, dg_flops_##x, (r), false},
#define DG_OP_RESERVED(e, x) [DG_OP_##e] = {#x, NULL, NULL, 0, true},
#include "ops.def"
#undef DG_OP
#undef DG_OP_RESERVED
};

const dg_op_def *dg_op_def_get(dg_op op) {
  return (op > DG_OP_INVALID && op < DG_OP_COUNT_) ? &table[op] : NULL;
}

const char *dg_op_name(dg_op op) {
  const dg_op_def *d = dg_op_def_get(op);
  return d ? d->name : "?";
}

unsigned dg_node_params_set(const dg_node_params *p) {
  static const dg_node_params zero;
  unsigned set = 0;
#define FIELD(bit, f)                                                          \
  if (memcmp(&p->f, &zero.f, sizeof p->f))                                     \
    set |= bit;
  FIELD(DG_P_STRIDE, stride)
  FIELD(DG_P_DILATION, dilation)
  FIELD(DG_P_PADS, pads)
  FIELD(DG_P_KERNEL, kernel)
  FIELD(DG_P_GROUPS, groups)
  FIELD(DG_P_CEIL_MODE, ceil_mode)
  FIELD(DG_P_COUNT_INCLUDE_PAD, count_include_pad)
  FIELD(DG_P_ACTIVATION, activation)
  FIELD(DG_P_AXIS, axis)
  FIELD(DG_P_CLIP, clip_lo)
  FIELD(DG_P_CLIP, clip_hi)
  FIELD(DG_P_FN, fn)
  FIELD(DG_P_PERM, perm)
  FIELD(DG_P_SLICE, starts)
  FIELD(DG_P_SLICE, steps)
  FIELD(DG_P_PAD, pad_begin)
  FIELD(DG_P_PAD, pad_end)
  FIELD(DG_P_PAD, pad_mode)
  FIELD(DG_P_PAD, pad_value)
  FIELD(DG_P_AXES, axes_mask)
  FIELD(DG_P_AXES, keepdims)
  FIELD(DG_P_EPSILON, epsilon)
  FIELD(DG_P_ALPHA, alpha)
  FIELD(DG_P_ALPHA, beta)
  FIELD(DG_P_RESIZE, resize_mode)
  FIELD(DG_P_RESIZE, resize_coord)
  FIELD(DG_P_RESIZE, resize_nearest)
  FIELD(DG_P_RESIZE, resize_scales)
  FIELD(DG_P_OUTPUT_PADDING, output_padding)
  FIELD(DG_P_SELECT_LAST, select_last_index)
#undef FIELD
  return set;
}
