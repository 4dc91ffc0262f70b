/* qconv2d / qfully_connected / qmatmul / f16 conv2d -> NPU tasks (see
 * lower.h). */
#include "lower.h"

#include "pack.h"
#include "why.h"

#include "ops/epilogue.h" /* dg_conv_residual, dg_conv_post_unary */
#include "ops/ops.h"
#include "ops/requant.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Regions inside the shared buffers start 64-byte aligned: the hardware
 * needs 16, Mesa aligns its task lists to 64 (docs/npu.md, "Command
 * lists"). */
#define REGION_ALIGN 64

static bool is_q8(dg_dtype t) { return t == DG_DTYPE_I8 || t == DG_DTYPE_U8; }
static int ceil_div(int a, int b) { return (a + b - 1) / b; }
static size_t align_up(size_t x) {
  return (x + REGION_ALIGN - 1) / REGION_ALIGN * REGION_ALIGN;
}

/* Input i of n, or NULL when absent (optional, or past the op's inputs). */
static const dg_tensor_info *input(const dg_ir *ir, const dg_node *n, int i) {
  return i < n->input_count && n->inputs[i] ? dg_ir_tensor(ir, n->inputs[i])
                                            : NULL;
}

/* What the three ops share: 8-bit x, w and y; constant weights and bias. */
static bool q8_constant(const dg_ir *ir, const dg_node *n, char *why,
                        size_t ws) {
  const dg_tensor_info *x = input(ir, n, 0), *w = input(ir, n, 1),
                       *b = input(ir, n, 2), *y = dg_ir_tensor(ir, n->output);
  if (!is_q8(x->desc.dtype) || !is_q8(w->desc.dtype) || !is_q8(y->desc.dtype))
    return dg_npu_why(why, ws, "not an 8-bit %s", dg_op_name(n->op));
  if (w->kind != DG_TENSOR_CONSTANT || (b && b->kind != DG_TENSOR_CONSTANT))
    return dg_npu_why(why, ws, "%s", "weights or bias not constant");
  return true;
}

static bool conv_shape(const dg_ir *ir, const dg_node *n, npu_conv *c,
                       char *why, size_t ws) {
  const dg_tensor_desc *xd = &input(ir, n, 0)->desc,
                       *wd = &input(ir, n, 1)->desc,
                       *yd = &dg_ir_tensor(ir, n->output)->desc;
  if (xd->rank != 4)
    return dg_npu_why(why, ws, "%s", "input not rank 4");
  if (n->p.dilation[0] != 1 || n->p.dilation[1] != 1)
    return dg_npu_why(why, ws, "%s", "dilation");
  int64_t C = xd->dims[1], O = wd->dims[0];
  if (n->p.groups != 1 && !(n->p.groups == C && O == C))
    return dg_npu_why(why, ws, "%s", "grouped conv (not depthwise)");
  if (n->p.pads[2] > 15 || n->p.pads[3] > 15)
    return dg_npu_why(why, ws, "%s", "bottom/right padding > 15");
  c->layout = NPU_LAYOUT_NCHW;
  c->N = (int)xd->dims[0], c->C = (int)C;
  c->H = (int)xd->dims[2], c->W = (int)xd->dims[3];
  c->O = (int)yd->dims[1], c->OH = (int)yd->dims[2], c->OW = (int)yd->dims[3];
  c->kh = (int)wd->dims[2], c->kw = (int)wd->dims[3];
  c->sy = n->p.stride[0], c->sx = n->p.stride[1];
  c->pt = n->p.pads[0], c->pl = n->p.pads[1];
  c->dw = n->p.groups != 1;
  return true;
}

/* M x K rows against N kernels: one image K x M x 1 -> N x M x 1. */
static bool rows_shape(npu_conv *c, int64_t M, int64_t K, int64_t N, char *why,
                       size_t ws) {
  if (M > INT_MAX / 2 || K > INT_MAX / 2 || N > INT_MAX / 2 ||
      M * K > INT_MAX / 2)
    return dg_npu_why(why, ws, "%s", "too large for one NPU node");
  c->layout = NPU_LAYOUT_ROWS;
  c->N = 1, c->C = (int)K, c->H = (int)M, c->W = 1;
  c->O = (int)N, c->OH = (int)M, c->OW = 1;
  c->kh = c->kw = c->sy = c->sx = 1;
  return true;
}

static bool fc_shape(const dg_ir *ir, const dg_node *n, npu_conv *c, char *why,
                     size_t ws) {
  const dg_tensor_desc *xd = &input(ir, n, 0)->desc,
                       *wd = &input(ir, n, 1)->desc;
  int64_t M = xd->dims[0];
  return rows_shape(c, M, M ? dg_desc_elements(xd) / M : 0, wd->dims[0], why,
                    ws);
}

/* b must be one matrix for every batch: the batches of a then stack into
 * rows against the same kernels. */
static bool matmul_shape(const dg_ir *ir, const dg_node *n, npu_conv *c,
                         char *why, size_t ws) {
  dg_matmul_shape s;
  int rank;
  int64_t od[DG_MAX_RANK];
  if (!dg_matmul_shape_get(&input(ir, n, 0)->desc, &input(ir, n, 1)->desc, &s,
                           &rank, od))
    return dg_npu_why(why, ws, "%s", "matmul shapes do not match");
  for (int i = 0; i < s.batch_rank; i++)
    if (s.batch_dims[i] > 1 && s.b_bstride[i] != 0)
      return dg_npu_why(why, ws, "%s",
                        "b is a batch of matrices (one 1x1 conv needs one b)");
  c->w_kn = true;
  return rows_shape(c, s.batch * s.M, s.K, s.N, why, ws);
}

/* The ops the conv lowering takes, each onto its 1x1 or k x k conv. */
static const dg_op conv_ops[] = {DG_OP_QCONV2D, DG_OP_QFULLY_CONNECTED,
                                 DG_OP_QMATMUL, DG_OP_CONV2D};

bool dg_npu_conv_op(dg_op op) {
  for (size_t i = 0; i < sizeof conv_ops / sizeof *conv_ops; i++)
    if (conv_ops[i] == op)
      return true;
  return false;
}

/* The int8 ops of QDQ models the NPU declines, each with what stands in
 * the way (a plan shows 60 characters: README.md, "Still declined"). */
static const struct {
  dg_op op;
  const char *why;
} declined[] = {
    {DG_OP_QBINARY, "qbinary: EW requant unknown (Mesa: per-scale table)"},
    {DG_OP_LOOKUP, "lookup: DPU LUT int8 indexing undocumented on RK3588"},
    {DG_OP_QAVG_POOL2D, "qavg_pool2d: PPU int8 average rounding unsettled"},
    {DG_OP_CONCAT, "concat: producers writing at channel offsets: not done"},
};

static bool node_shape(const dg_ir *ir, const dg_node *n, npu_conv *c,
                       char *why, size_t ws) {
  switch (n->op) {
  case DG_OP_QCONV2D:
  case DG_OP_QFULLY_CONNECTED:
  case DG_OP_QMATMUL:
    break;
  case DG_OP_CONV2D: /* f16 only; f32 is declined with a hint */
    return dg_npu_f16_node_ok(ir, n, c, why, ws) &&
           conv_shape(ir, n, c, why, ws);
  default: {
    const dg_tensor_info *y = dg_ir_tensor(ir, n->output);
    if (y && (y->desc.dtype == DG_DTYPE_F32 || y->desc.dtype == DG_DTYPE_F16))
      return dg_npu_why(why, ws, "%s op", dg_dtype_name(y->desc.dtype));
    for (size_t i = 0; i < sizeof declined / sizeof *declined; i++)
      if (declined[i].op == n->op)
        return dg_npu_why(why, ws, "%s", declined[i].why);
    /* Pooling is lower_pool.c's; npu_target.c asks it first. */
    return dg_npu_why(why, ws, "%s: no NPU lowering", dg_op_name(n->op));
  }
  }
  if (!q8_constant(ir, n, why, ws))
    return false;
  if (n->op == DG_OP_QCONV2D)
    return conv_shape(ir, n, c, why, ws);
  if (n->op == DG_OP_QFULLY_CONNECTED)
    return fc_shape(ir, n, c, why, ws);
  return matmul_shape(ir, n, c, why, ws);
}

/* Input rows [*ih0, *ih0 + *in_h) that output rows [oh0, oh1) read, and
 * the padding rows above them. A slice holding every output row reads the
 * whole input (the one-task case, registers as before tiling). */
static void slice_rows(const npu_conv *c, int oh0, int oh1, int *ih0, int *in_h,
                       int *pad_top) {
  if (oh0 == 0 && oh1 == c->OH) {
    *ih0 = 0, *in_h = c->H, *pad_top = c->pt;
    return;
  }
  int first = oh0 * c->sy - c->pt, end = (oh1 - 1) * c->sy - c->pt + c->kh;
  int a = first < 0 ? 0 : first, b = end > c->H ? c->H : end;
  *ih0 = a, *in_h = b - a, *pad_top = a - first;
}

float dg_npu_channel_multiplier(const dg_ir *ir, const dg_node *n, int o) {
  return dg_requant_multiplier(input(ir, n, 0)->desc.quant.scale,
                               dg_quant_scale(&input(ir, n, 1)->desc, o),
                               dg_ir_tensor(ir, n->output)->desc.quant.scale);
}

/* The smallest and largest multiplier of channels [o0, o1). */
static void multiplier_range(const dg_ir *ir, const dg_node *n, int o0, int o1,
                             float *lo, float *hi) {
  *lo = *hi = dg_npu_channel_multiplier(ir, n, o0);
  for (int o = o0 + 1; o < o1; o++) {
    float m = dg_npu_channel_multiplier(ir, n, o);
    *lo = m < *lo ? m : *lo;
    *hi = m > *hi ? m : *hi;
  }
}

/* The one-task conv of channels [o0, o1) and output rows [oh0, oh1). */
static npu_conv_desc task_desc(const npu_conv *c, const dg_ir *ir, int o0,
                               int o1, int oh0, int oh1, int *ih0) {
  const dg_node *n = c->node;
  const dg_tensor_desc *xd = &input(ir, n, 0)->desc,
                       *wd = &input(ir, n, 1)->desc,
                       *yd = &dg_ir_tensor(ir, n->output)->desc;
  int in_h, pad_top;
  slice_rows(c, oh0, oh1, ih0, &in_h, &pad_top);
  npu_conv_desc d = {.in_c = c->dw ? o1 - o0 : c->C,
                     .in_h = in_h,
                     .in_w = c->W,
                     .out_c = o1 - o0,
                     .out_h = oh1 - oh0,
                     .out_w = c->OW,
                     .k_h = c->kh,
                     .k_w = c->kw,
                     .stride_y = c->sy,
                     .stride_x = c->sx,
                     .pad_top = pad_top,
                     .pad_left = c->pl,
                     .depthwise = c->dw,
                     .precision = c->f16 ? NPU_PREC_FP16 : NPU_PREC_INT8};
  if (c->f16) /* no zero points, no requantisation */
    return d;
  int32_t w_off = wd->dtype == DG_DTYPE_U8 ? 128 : 0;
  d.x_zp = xd->quant.zero_point - (c->x_u8 ? 128 : 0);
  d.w_zp = dg_quant_zero(wd, o0) - w_off;
  d.y_zp = yd->quant.zero_point - (c->y_u8 ? 128 : 0);
  float lo, hi;
  multiplier_range(ir, n, o0, o1, &lo, &hi);
  d.multiplier = hi;
  /* Channels with different multipliers: the BS stage's per-channel
   * multiplier (dpu_requant.h); make_tasks only puts together what it can
   * plan, a failure here leaves a multiplier gen.c refuses. */
  if (lo != hi) {
    d.per_channel = true;
    if (!dg_npu_bs_plan(hi, &d.multiplier, &d.bs_shift))
      d.multiplier = 0.0f;
  }
  return d;
}

/* Whether blocks of cnt channels from o0 fit with slices of `rows` output
 * rows. The tallest slice is one in the middle: (rows - 1) * stride +
 * kernel input rows, no padding. */
static bool fits(const npu_conv *c, const dg_ir *ir, int o0, int cnt, int rows,
                 npu_conv_plan *plan, char *why, size_t ws) {
  int ih0;
  npu_conv_desc d =
      task_desc(c, ir, o0, o0 + cnt, 0, rows < c->OH ? rows : c->OH, &ih0);
  if (rows < c->OH) {
    int need = (rows - 1) * c->sy + c->kh;
    d.in_h = need < c->H ? need : c->H;
    d.pad_top = 0;
  }
  npu_conv_plan p;
  return dg_npu_conv_plan_make(&d, plan ? plan : &p, why, ws);
}

/* Most output rows per slice for blocks of cnt channels; 0 when not even
 * one row fits. More rows never need fewer banks, so a bisection. */
static int max_rows(const npu_conv *c, const dg_ir *ir, int o0, int cnt) {
  char why[160];
  if (fits(c, ir, o0, cnt, c->OH, NULL, why, sizeof why))
    return c->OH;
  int lo = 0, hi = c->OH; /* lo fits (or 0), hi does not */
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    if (fits(c, ir, o0, cnt, mid, NULL, why, sizeof why))
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* Block sizes to try for a run of L channels, largest first: the run,
 * even splits of it rounded up to the CORE's 32-kernel groups, then 16,
 * 8, 4, 2, 1. */
static int block_sizes(int L, int out[80]) {
  int n = 0;
  out[n++] = L;
  for (int k = 2; k <= 64 && L > 32; k++) {
    int v = npu_align(ceil_div(L, k), 32);
    if (v < 32)
      break;
    if (v < out[n - 1])
      out[n++] = v;
  }
  for (int v = 32; v >= 1; v /= 2)
    if (v < out[n - 1])
      out[n++] = v;
  return n;
}

typedef struct cut {
  int cnt, rows; /* channels per block, output rows per slice */
} cut;

/* The (block, slice) pair with the fewest tasks for channels [o0, o0+L). */
static bool choose_cut(const npu_conv *c, const dg_ir *ir, int o0, int L,
                       cut *best, char *why, size_t ws) {
  int sizes[80], count = block_sizes(L, sizes);
  long best_tasks = LONG_MAX;
  best->cnt = 0;
  for (int i = 0; i < count; i++) {
    int rows = max_rows(c, ir, o0, sizes[i]);
    if (!rows)
      continue;
    long tasks = (long)ceil_div(L, sizes[i]) * ceil_div(c->OH, rows);
    if (tasks < best_tasks)
      best_tasks = tasks, *best = (cut){sizes[i], rows};
  }
  if (best->cnt)
    return true;
  /* Nothing fits: say what even the smallest task hits. Splitting the
   * input channels would need the DPU's raw int32 output for partial sums
   * added on the host: documented only by MTX's matmul, not modelled by
   * the simulator, so declined rather than guessed ("IC": input
   * channels). A fallback's plan shows 60 characters of this. */
  char r[160];
  npu_conv_plan p;
  fits(c, ir, o0, 1, 1, &p, r, sizeof r);
  if (p.misfit == NPU_MISFIT_KERNEL)
    return dg_npu_why(why, ws, "%s; no IC split", r);
  if (p.misfit == NPU_MISFIT_SIZE)
    return dg_npu_why(why, ws, "%s; no width split", r);
  if (p.misfit == NPU_MISFIT_BANKS)
    return dg_npu_why(why, ws,
                      "1 row x 1 ch: %d+%d CBUF banks > 12; no IC/width split",
                      p.data_banks, p.weight_banks);
  return dg_npu_why(why, ws, "%s", r);
}

/* Offset of the input slice [ih0, ih0 + in_h) of channels [c0, c1): the
 * region of an earlier task reading the same, or a new one. */
static uint32_t input_region(npu_conv *c, npu_task *t) {
  int c0 = c->dw ? t->o0 : 0;
  for (int i = c->task_count - 1; i >= 0; i--) {
    const npu_task *u = &c->tasks[i];
    if (u->packs_input && u->ih0 == t->ih0 && u->d.in_h == t->d.in_h &&
        (c->dw ? u->o0 : 0) == c0 && u->d.in_c == t->d.in_c)
      return u->in_off;
    /* Depthwise slices of other channels never match: stop at the
     * previous block. */
    if (c->dw && u->o0 != t->o0)
      break;
  }
  t->packs_input = true;
  size_t off = align_up(c->in_bytes);
  c->in_bytes = off + t->plan.input_bytes;
  return (uint32_t)off;
}

/* Generates the task for channels [o0, o1) and rows [oh0, oh1) and places
 * it in the shared buffers. */
static bool add_task(npu_conv *c, const dg_ir *ir, int o0, int o1, int oh0,
                     int oh1, bool first_of_block, char *why, size_t ws) {
  npu_task *t = &c->tasks[c->task_count];
  memset(t, 0, sizeof *t);
  t->o0 = o0, t->o1 = o1, t->oh0 = oh0, t->oh1 = oh1;
  t->d = task_desc(c, ir, o0, o1, oh0, oh1, &t->ih0);
  if (t->d.in_h < 1)
    return dg_npu_why(why, ws, "output rows %d..%d read only padding", oh0,
                      oh1 - 1);
  if (!dg_npu_gen_conv(&t->d, &t->stream, why, ws) ||
      !dg_npu_conv_plan_make(&t->d, &t->plan, why, ws))
    return false;
  t->in_off = input_region(c, t);
  if (first_of_block) {
    t->packs_weights = true;
    size_t wo = align_up(c->wt_bytes), bo = align_up(c->bias_bytes);
    c->wt_bytes = wo + t->plan.weight_bytes;
    c->bias_bytes = bo + t->plan.bias_bytes;
    t->wt_off = (uint32_t)wo, t->bias_off = (uint32_t)bo;
  } else {
    t->wt_off = t[-1].wt_off, t->bias_off = t[-1].bias_off;
  }
  size_t oo = align_up(c->out_bytes);
  c->out_bytes = oo + t->plan.output_bytes;
  t->out_off = (uint32_t)oo;
  if (c->in_bytes > UINT32_MAX || c->wt_bytes > UINT32_MAX ||
      c->out_bytes > UINT32_MAX)
    return dg_npu_why(why, ws, "%s", "buffers over 4 GiB (32-bit IOVAs)");
  const uint32_t off[NPU_BUF_COUNT] = {t->in_off, t->wt_off, t->bias_off,
                                       t->out_off};
  dg_npu_stream_rebase(&t->stream, off);
  c->task_count++;
  return true;
}

/* Tasks of channels [o0, o0+L) cut as k says: blocks outside, balanced
 * slices inside (a block's tasks share its weights). */
static bool add_run(npu_conv *c, const dg_ir *ir, int o0, int L, cut k,
                    char *why, size_t ws) {
  int slices = ceil_div(c->OH, k.rows), blocks = ceil_div(L, k.cnt);
  long total = (long)blocks * slices + c->task_count;
  if (total > NPU_MAX_TASKS_PER_NODE)
    return dg_npu_why(why, ws, "needs %ld tasks (%d blocks x %d slices) > %d",
                      total, blocks, slices, NPU_MAX_TASKS_PER_NODE);
  npu_task *grown = realloc(
      c->tasks, sizeof *grown * (size_t)(c->task_count + blocks * slices));
  if (!grown)
    return dg_npu_why(why, ws, "%s", "out of host memory");
  c->tasks = grown;
  int base = c->OH / slices, extra = c->OH % slices;
  for (int b0 = o0; b0 < o0 + L; b0 += k.cnt) {
    int b1 = b0 + k.cnt < o0 + L ? b0 + k.cnt : o0 + L;
    for (int s = 0, oh0 = 0; s < slices; s++) {
      int oh1 = oh0 + base + (s < extra);
      if (!add_task(c, ir, b0, b1, oh0, oh1, s == 0, why, ws))
        return false;
      oh0 = oh1;
    }
  }
  return true;
}

/* A run of channels shares one weight zero point, and multipliers one
 * task can reach: equal ones through OUT_CVT, or within the BS stage's
 * spread (dpu_requant.h). Extends the run [o0, end) by channel end? lo and
 * hi hold the run's multipliers so far. */
static bool joins_run(const npu_conv *c, const dg_ir *ir, int o0, int end,
                      float *lo, float *hi) {
  if (c->f16)
    return true;
  const dg_tensor_desc *wd = &input(ir, c->node, 1)->desc;
  if (dg_quant_zero(wd, end) != dg_quant_zero(wd, o0))
    return false;
  float m = dg_npu_channel_multiplier(ir, c->node, end);
  float nlo = m < *lo ? m : *lo, nhi = m > *hi ? m : *hi;
  float gain;
  int shift;
  if (nlo != nhi &&
      (!dg_npu_bs_spread_ok(nlo, nhi) || !dg_npu_bs_plan(nhi, &gain, &shift)))
    return false;
  *lo = nlo, *hi = nhi;
  return true;
}

static bool make_tasks(npu_conv *c, const dg_ir *ir, char *why, size_t ws) {
  for (int o0 = 0; o0 < c->O;) {
    int end = o0 + 1;
    float lo = 0, hi = 0;
    if (!c->f16)
      lo = hi = dg_npu_channel_multiplier(ir, c->node, o0);
    while (end < c->O && joins_run(c, ir, o0, end, &lo, &hi))
      end++;
    cut k = {0, 0};
    if (!choose_cut(c, ir, o0, end - o0, &k, why, ws) ||
        !add_run(c, ir, o0, end - o0, k, why, ws))
      return false;
    o0 = end;
  }
  return true;
}

bool dg_npu_conv_lower(const dg_ir *ir, const dg_node *n, npu_conv *out,
                       char *why, size_t ws) {
  npu_conv c;
  memset(&c, 0, sizeof c);
  c.node = n;
  if (dg_conv_residual(n))
    return dg_npu_why(why, ws, "%s",
                      "conv2d with a fused residual add: not lowered");
  if (dg_conv_post_unary(n))
    return dg_npu_why(why, ws, "%s",
                      "conv2d with a fused unary function: not lowered");
  if (!node_shape(ir, n, &c, why, ws))
    return false;
  if (c.C < 1 || c.H < 1 || c.W < 1 || c.O < 1 || c.OH < 1 || c.OW < 1)
    return dg_npu_why(why, ws, "%s", "empty tensor");
  const dg_tensor_desc *xd = &input(ir, n, 0)->desc,
                       *yd = &dg_ir_tensor(ir, n->output)->desc;
  c.x_u8 = xd->dtype == DG_DTYPE_U8, c.y_u8 = yd->dtype == DG_DTYPE_U8;
  if (!c.f16) { /* f16: the activation is clamped in lower_f16.c */
    int64_t lo, hi;
    dg_dtype_int_range(yd->dtype, &lo, &hi);
    dg_requant_clamp(n->p.activation, yd->quant.scale, yd->quant.zero_point,
                     (int32_t)lo, (int32_t)hi, &c.y_lo, &c.y_hi);
  }
  bool ok = make_tasks(&c, ir, why, ws);
  if (ok && out)
    *out = c;
  else
    free(c.tasks);
  return ok;
}

/* An int8 qconv2d node (an NCHW image in and out, not fc or f16). */
static bool q8_conv_node(const dg_ir *ir, const dg_node *n) {
  return n->op == DG_OP_QCONV2D && is_q8(dg_ir_desc(ir, n->inputs[0])->dtype) &&
         is_q8(dg_ir_desc(ir, n->output)->dtype);
}

bool dg_npu_cube_edge(const dg_ir *ir, uint32_t t,
                      bool (*in_set)(int node, void *user), void *user) {
  const dg_tensor_info *ti = dg_ir_tensor(ir, t);
  if (!ti || ti->kind != DG_TENSOR_VALUE || ti->desc.rank != 4 ||
      !in_set(ti->producer, user) ||
      !q8_conv_node(ir, &ir->nodes[ti->producer]))
    return false;
  for (int o = 0; o < ir->output_count; o++)
    if (ir->outputs[o].tensor == t)
      return false;
  int readers = 0;
  for (int j = 0; j < ir->node_count; j++) {
    const dg_node *n = &ir->nodes[j];
    for (int k = 0; k < n->input_count; k++) {
      if (n->inputs[k] != t)
        continue;
      if (k != 0 || !in_set(j, user) || !q8_conv_node(ir, n))
        return false;
      readers++;
    }
  }
  return readers > 0;
}

bool dg_npu_task_reuses_weights(const npu_conv *c, int i, int cores) {
  const npu_task *t = &c->tasks[i], *u = i ? &c->tasks[i - 1] : NULL;
  if (!u || t->packs_weights || t->wt_off != u->wt_off ||
      t->plan.data_banks != u->plan.data_banks ||
      t->plan.weight_banks != u->plan.weight_banks)
    return false;
  int j = i % NPU_JOB_MAX_TASKS, first = i - j;
  int in_job = c->task_count - first < NPU_JOB_MAX_TASKS ? c->task_count - first
                                                         : NPU_JOB_MAX_TASKS;
  int start[3], count[3], k;
  dg_npu_core_ranges(cores, in_job, start, count, &k);
  for (int r = 0; r < k; r++)
    if (start[r] == j)
      return false;
  return true;
}
