/* qconv2d -> NPU tasks (see lower.h). */
#include "lower.h"

#include "pack.h"

#include "../../ops/requant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool decline(char *why, size_t n, const char *fmt, const char *arg) {
  snprintf(why, n, fmt, arg);
  return false;
}

static bool is_q8(dg_dtype t) { return t == DG_DTYPE_I8 || t == DG_DTYPE_U8; }

/* The node-level checks: everything but the CBUF and field ranges. */
static bool node_ok(const dg_ir *ir, const dg_node *n, char *why, size_t ws) {
  if (n->op != DG_OP_QCONV2D) {
    const dg_tensor_info *y = dg_ir_tensor(ir, n->output);
    if (y && (y->desc.dtype == DG_DTYPE_F32 || y->desc.dtype == DG_DTYPE_F16))
      return decline(why, ws, "%s op", dg_dtype_name(y->desc.dtype));
    return decline(why, ws,
                   "%s: only qconv2d, f16 conv2d and max_pool2d run on the NPU",
                   dg_op_name(n->op));
  }
  const dg_tensor_info *x = dg_ir_tensor(ir, n->inputs[0]),
                       *w = dg_ir_tensor(ir, n->inputs[1]),
                       *b = n->inputs[2] ? dg_ir_tensor(ir, n->inputs[2]) : 0,
                       *y = dg_ir_tensor(ir, n->output);
  if (!is_q8(x->desc.dtype) || !is_q8(w->desc.dtype) || !is_q8(y->desc.dtype))
    return decline(why, ws, "%s", "not an 8-bit conv");
  if (x->desc.rank != 4)
    return decline(why, ws, "%s", "input not rank 4");
  if (w->kind != DG_TENSOR_CONSTANT || (b && b->kind != DG_TENSOR_CONSTANT))
    return decline(why, ws, "%s", "weights or bias not constant");
  if (n->p.dilation[0] != 1 || n->p.dilation[1] != 1)
    return decline(why, ws, "%s", "dilation");
  int64_t C = x->desc.dims[1], O = w->desc.dims[0];
  if (n->p.groups != 1 && !(n->p.groups == C && O == C))
    return decline(why, ws, "%s", "grouped conv (not depthwise)");
  if (n->p.pads[2] > 15 || n->p.pads[3] > 15)
    return decline(why, ws, "%s", "bottom/right padding > 15");
  return true;
}

/* Fills task t for output channels [o0, o1): false with why when the
 * generator refuses it. */
static bool task_make(const npu_conv *c, const dg_ir *ir, int o0, int o1,
                      npu_task *t, char *why, size_t ws) {
  const dg_node *n = c->node;
  const dg_tensor_desc *xd = &dg_ir_tensor(ir, n->inputs[0])->desc,
                       *wd = &dg_ir_tensor(ir, n->inputs[1])->desc,
                       *yd = &dg_ir_tensor(ir, n->output)->desc;
  memset(t, 0, sizeof *t);
  t->o0 = o0, t->o1 = o1;
  int cnt = o1 - o0;
  int32_t w_off = wd->dtype == DG_DTYPE_U8 ? 128 : 0;
  t->d = (npu_conv_desc){
      .in_c = c->dw ? cnt : c->C, .in_h = c->H, .in_w = c->W,
      .out_c = cnt, .out_h = c->OH, .out_w = c->OW,
      .k_h = (int)wd->dims[2], .k_w = (int)wd->dims[3],
      .stride_y = n->p.stride[0], .stride_x = n->p.stride[1],
      .pad_top = n->p.pads[0], .pad_left = n->p.pads[1],
      .depthwise = c->dw,
      .x_zp = xd->quant.zero_point - (c->x_u8 ? 128 : 0),
      .w_zp = dg_quant_zero(wd, o0) - w_off,
      .y_zp = yd->quant.zero_point - (c->y_u8 ? 128 : 0),
      .multiplier = dg_requant_multiplier(
          xd->quant.scale, dg_quant_scale(wd, o0), yd->quant.scale),
      .truncate_bits = 0};
  return npu_gen_conv(&t->d, &t->stream, why, ws) &&
         npu_conv_plan_make(&t->d, &t->plan, why, ws);
}

/* Channels o and o0 share a task only with the same requantisation. */
static bool same_requant(const dg_ir *ir, const dg_node *n, int o0, int o) {
  const dg_tensor_desc *wd = &dg_ir_tensor(ir, n->inputs[1])->desc;
  return dg_quant_scale(wd, o) == dg_quant_scale(wd, o0) &&
         dg_quant_zero(wd, o) == dg_quant_zero(wd, o0);
}

bool npu_conv_lower(const dg_ir *ir, const dg_node *n, npu_conv *out,
                    char *why, size_t ws) {
  if (n->op == DG_OP_CONV2D)
    return npu_conv_lower_f16(ir, n, out, why, ws);
  if (!node_ok(ir, n, why, ws))
    return false;
  npu_conv c;
  memset(&c, 0, sizeof c);
  const dg_tensor_desc *xd = &dg_ir_tensor(ir, n->inputs[0])->desc,
                       *yd = &dg_ir_tensor(ir, n->output)->desc;
  c.node = n;
  c.N = (int)xd->dims[0], c.C = (int)xd->dims[1];
  c.H = (int)xd->dims[2], c.W = (int)xd->dims[3];
  c.O = (int)yd->dims[1], c.OH = (int)yd->dims[2], c.OW = (int)yd->dims[3];
  c.dw = n->p.groups != 1;
  c.x_u8 = xd->dtype == DG_DTYPE_U8, c.y_u8 = yd->dtype == DG_DTYPE_U8;
  int64_t lo, hi;
  dg_dtype_int_range(yd->dtype, &lo, &hi);
  dg_requant_clamp(n->p.activation, yd->quant.scale, yd->quant.zero_point,
                   (int32_t)lo, (int32_t)hi, &c.y_lo, &c.y_hi);
  c.tasks = calloc(NPU_MAX_TASKS_PER_NODE, sizeof *c.tasks);
  if (!c.tasks)
    return decline(why, ws, "%s", "out of host memory");
  bool ok = true;
  for (int o0 = 0; ok && o0 < c.O;) {
    int end = o0 + 1;
    while (end < c.O && same_requant(ir, n, o0, end))
      end++;
    if (c.task_count == NPU_MAX_TASKS_PER_NODE) {
      snprintf(why, ws, "needs more than %d tasks (per-channel scales)",
               NPU_MAX_TASKS_PER_NODE);
      ok = false;
      break;
    }
    /* Halve the run until its weights (and, depthwise, its input) fit. */
    int cnt = end - o0;
    npu_task *t = &c.tasks[c.task_count];
    char reason[160] = "";
    while (!(ok = task_make(&c, ir, o0, o0 + cnt, t, reason, sizeof reason)) &&
           strstr(reason, "CBUF") && cnt > 1)
      cnt = (cnt + 1) / 2;
    if (!ok) {
      if (strstr(reason, "CBUF"))
        snprintf(why, ws, "does not fit the CBUF in one task (%s)", reason);
      else
        snprintf(why, ws, "%s", reason);
      break;
    }
    c.task_count++;
    o0 += cnt;
  }
  if (ok && out)
    *out = c;
  else
    free(c.tasks);
  return ok;
}
