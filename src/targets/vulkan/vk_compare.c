/* The work of compare, where and arg_reduce nodes: compare.comp's module
 * for the input (where: element) type, with the output dims and the
 * broadcast strides of every input (arg_reduce: the line geometry) in
 * push constants. */
#include "vk_internal.h"

#include "ops/ops.h"

/* A 1-D job of n invocations as a 2-D grid of at most 65535 groups along
 * x (linear_id in common.glsl rebuilds the index). */
static void grid(vk_work *w, int64_t n) {
  int64_t groups = (n + 255) / 256;
  int64_t gx = groups < 65535 ? groups : 65535;
  w->groups[0] = (uint32_t)(gx ? gx : 1);
  w->groups[1] = (uint32_t)((groups + gx - 1) / (gx ? gx : 1));
  w->groups[2] = 1;
}

static bool setup_arg(vk_work *w, const dg_ir *ir, const dg_node *n) {
  const dg_tensor_desc *x = &dg_ir_tensor(ir, n->inputs[0])->desc;
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < n->p.axis; k++)
    outer *= x->dims[k];
  for (int k = n->p.axis + 1; k < x->rank; k++)
    inner *= x->dims[k];
  /* Sizes narrow to the shader's int: supports() keeps tensors below 2^31
   * elements. */
  vk_pc_arg *pc = &w->push.arg;
  pc->outer = (int)outer;
  pc->len = (int)x->dims[n->p.axis];
  pc->inner = (int)inner;
  pc->fn = n->p.fn;
  pc->last = n->p.select_last_index;
  w->bind[0] = n->inputs[0];
  w->bind[3] = n->output;
  w->shader = x->dtype == DG_DTYPE_F16   ? SH_ARG_F16
              : x->dtype == DG_DTYPE_I32 ? SH_ARG_I32
              : x->dtype == DG_DTYPE_I64 ? SH_ARG_I64
                                         : SH_ARG_F32;
  grid(w, outer * inner);
  return true;
}

bool dg_vk_setup_compare(const vk_device *vd, vk_work *w, const dg_ir *ir,
                         const dg_node *n) {
  (void)vd;
  if (n->op == DG_OP_ARG_REDUCE)
    return setup_arg(w, ir, n);
  const dg_tensor_desc *y = &dg_ir_tensor(ir, n->output)->desc;
  const dg_tensor_desc *x = &dg_ir_tensor(ir, n->inputs[0])->desc;
  vk_pc_compare *pc = &w->push.compare;
  int *strides[3] = {pc->sa, pc->sb, pc->sc};
  pc->total = (int)dg_desc_elements(y);
  pc->fn = n->p.fn;
  pc->rank = y->rank;
  for (int d = 0; d < 6; d++)
    pc->dims[d] = d < y->rank ? (int)y->dims[d] : 1;
  for (int k = 0; k < n->input_count; k++) {
    const dg_tensor_desc *d = &dg_ir_tensor(ir, n->inputs[k])->desc;
    int64_t s[DG_MAX_RANK] = {0};
    dg_broadcast_strides(d->rank, d->dims, y->rank, y->dims, s);
    for (int i = 0; i < y->rank; i++)
      strides[k][i] = (int)s[i];
  }
  if (n->op == DG_OP_WHERE) {
    w->bind[0] = n->inputs[0];
    w->bind[1] = n->inputs[1];
    w->bind[2] = n->inputs[2];
    size_t es = dg_dtype_size(y->dtype);
    w->shader = es == 8 ? SH_WHERE_64 : es == 2 ? SH_WHERE_F16 : SH_WHERE_32;
  } else {
    /* A one-input function reads a for b too, with b's strides 0. */
    w->bind[0] = n->inputs[0];
    w->bind[1] = n->inputs[n->input_count > 1 ? 1 : 0];
    w->shader = x->dtype == DG_DTYPE_F16    ? SH_COMPARE_F16
                : x->dtype == DG_DTYPE_I32  ? SH_COMPARE_I32
                : x->dtype == DG_DTYPE_I64  ? SH_COMPARE_I64
                : x->dtype == DG_DTYPE_BOOL ? SH_COMPARE_BOOL
                                            : SH_COMPARE_F32;
  }
  w->bind[3] = n->output;
  grid(w, pc->total);
  return true;
}
