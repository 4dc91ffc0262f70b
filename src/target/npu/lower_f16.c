/* conv2d (f16) -> NPU tasks, and running them (see lower.h). A node
 * becomes one task per run of output channels whose weights fit the CBUF
 * with the input; the host packs the input once per task, reads the fp16
 * result back, adds the bias and clamps the activation. */
#include "lower.h"

#include "pack.h"

#include "../../graph/session.h" /* dg_f16_to_f32, dg_f32_to_f16 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool decline(char *why, size_t n, const char *what) {
  snprintf(why, n, "%s", what);
  return false;
}

/* The node-level checks: everything but the CBUF and field ranges. */
static bool node_ok_f16(const dg_ir *ir, const dg_node *n, char *why,
                        size_t ws) {
  const dg_tensor_info *x = dg_ir_tensor(ir, n->inputs[0]),
                       *w = dg_ir_tensor(ir, n->inputs[1]),
                       *b = n->inputs[2] ? dg_ir_tensor(ir, n->inputs[2]) : 0,
                       *y = dg_ir_tensor(ir, n->output);
  if (x->desc.dtype == DG_DTYPE_F32 || y->desc.dtype == DG_DTYPE_F32)
    return decline(why, ws,
                   "f32 op: the NPU computes in fp16/int8; convert "
                   "the graph to f16");
  if (x->desc.dtype != DG_DTYPE_F16 || w->desc.dtype != DG_DTYPE_F16 ||
      y->desc.dtype != DG_DTYPE_F16)
    return decline(why, ws, "conv2d: x, w and y must all be f16");
  if (x->desc.rank != 4)
    return decline(why, ws, "input not rank 4");
  if (w->kind != DG_TENSOR_CONSTANT || (b && b->kind != DG_TENSOR_CONSTANT))
    return decline(why, ws, "weights or bias not constant");
  if (n->p.dilation[0] != 1 || n->p.dilation[1] != 1)
    return decline(why, ws, "dilation");
  if (n->p.groups != 1)
    return decline(why, ws, "f16 grouped/depthwise conv: not yet on the NPU");
  if (n->p.pads[0] > 15 || n->p.pads[1] > 15 || n->p.pads[2] > 15 ||
      n->p.pads[3] > 15)
    return decline(why, ws, "padding > 15");
  return true;
}

static bool task_make_f16(const npu_conv *c, const dg_ir *ir, int o0, int o1,
                          npu_task *t, char *why, size_t ws) {
  const dg_node *n = c->node;
  const dg_tensor_desc *wd = &dg_ir_tensor(ir, n->inputs[1])->desc;
  memset(t, 0, sizeof *t);
  t->o0 = o0, t->o1 = o1;
  t->d = (npu_conv_desc){.in_c = c->C,
                         .in_h = c->H,
                         .in_w = c->W,
                         .out_c = o1 - o0,
                         .out_h = c->OH,
                         .out_w = c->OW,
                         .k_h = (int)wd->dims[2],
                         .k_w = (int)wd->dims[3],
                         .stride_y = n->p.stride[0],
                         .stride_x = n->p.stride[1],
                         .pad_top = n->p.pads[0],
                         .pad_left = n->p.pads[1],
                         .precision = NPU_PREC_FP16};
  return npu_gen_conv(&t->d, &t->stream, why, ws) &&
         npu_conv_plan_make(&t->d, &t->plan, why, ws);
}

bool npu_conv_lower_f16(const dg_ir *ir, const dg_node *n, npu_conv *out,
                        char *why, size_t ws) {
  if (!node_ok_f16(ir, n, why, ws))
    return false;
  npu_conv c;
  memset(&c, 0, sizeof c);
  const dg_tensor_desc *xd = &dg_ir_tensor(ir, n->inputs[0])->desc,
                       *yd = &dg_ir_tensor(ir, n->output)->desc;
  c.node = n;
  c.f16 = true;
  c.act = n->p.activation;
  c.N = (int)xd->dims[0], c.C = (int)xd->dims[1];
  c.H = (int)xd->dims[2], c.W = (int)xd->dims[3];
  c.O = (int)yd->dims[1], c.OH = (int)yd->dims[2], c.OW = (int)yd->dims[3];
  if (n->inputs[2])
    c.bias_f16 = dg_ir_tensor(ir, n->inputs[2])->constant->data;
  c.tasks = calloc(NPU_MAX_TASKS_PER_NODE, sizeof *c.tasks);
  if (!c.tasks)
    return decline(why, ws, "out of host memory");
  bool ok = true;
  for (int o0 = 0; ok && o0 < c.O;) {
    if (c.task_count == NPU_MAX_TASKS_PER_NODE) {
      snprintf(why, ws, "needs more than %d tasks", NPU_MAX_TASKS_PER_NODE);
      ok = false;
      break;
    }
    /* Halve the run of channels until its weights fit with the input. */
    int cnt = c.O - o0;
    npu_task *t = &c.tasks[c.task_count];
    char reason[160] = "";
    while (
        !(ok = task_make_f16(&c, ir, o0, o0 + cnt, t, reason, sizeof reason)) &&
        strstr(reason, "CBUF banks") && cnt > 1)
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

static int fill_task_f16(npu_conv *c, const dg_ir *ir, npu_backend *b,
                         npu_task *t, char *err, size_t n) {
  const npu_backend_ops *ops = b->ops;
  const npu_conv_plan *p = &t->plan;
  if (ops->bo_alloc(b, p->input_bytes, &t->in, err, n) ||
      ops->bo_alloc(b, p->weight_bytes, &t->wt, err, n) ||
      ops->bo_alloc(b, p->output_bytes, &t->out, err, n) ||
      ops->bo_alloc(b, (size_t)t->stream.count * 8, &t->cmd, err, n) ||
      ops->cpu_begin(b, &t->wt, err, n))
    return -1;
  const uint16_t *w = dg_ir_tensor(ir, c->node->inputs[1])->constant->data;
  size_t per = (size_t)c->C * t->d.k_h * t->d.k_w;
  npu_pack_weights_f16(w + per * t->o0, t->d.out_c, c->C, t->d.k_h, t->d.k_w,
                       t->wt.map);
  if (ops->cpu_end(b, &t->wt, err, n))
    return -1;
  return npu_task_upload(t, b, err, n);
}

int npu_conv_prepare_f16(npu_conv *c, const dg_ir *ir, npu_backend *b,
                         char *err, size_t n) {
  int max_out = 0;
  for (int i = 0; i < c->task_count; i++)
    if (c->tasks[i].d.out_c > max_out)
      max_out = c->tasks[i].d.out_c;
  c->y_f16 = malloc((size_t)max_out * c->OH * c->OW * sizeof *c->y_f16);
  if (!c->y_f16)
    return npu_errf(err, n, "npu: out of host memory");
  for (int i = 0; i < c->task_count; i++)
    if (fill_task_f16(c, ir, b, &c->tasks[i], err, n))
      return -1;
  return 0;
}

/* What the NPU does not do: the bias (a second fp16 rounding: the NPU
 * rounded the sum already) and relu/relu6 (exact: 0 and 6 are fp16). */
static uint16_t epilogue(const npu_conv *c, int o, uint16_t v) {
  if (!c->bias_f16 && c->act == DG_ACTIVATION_NONE)
    return v;
  float f = dg_f16_to_f32(v);
  if (c->bias_f16)
    f += dg_f16_to_f32(c->bias_f16[o]);
  if (c->act != DG_ACTIVATION_NONE && f < 0.0f)
    f = 0.0f;
  if (c->act == DG_ACTIVATION_RELU6 && f > 6.0f)
    f = 6.0f;
  return dg_f32_to_f16(f);
}

static int run_task_f16(npu_conv *c, npu_backend *b, npu_task *t,
                        const uint16_t *x, uint16_t *y, char *err, size_t n) {
  const npu_backend_ops *ops = b->ops;
  if (ops->cpu_begin(b, &t->in, err, n))
    return -1;
  npu_pack_feature_f16(x, c->C, c->H, c->W, 0, t->in.map);
  npu_bo *ins[3], *outs[1];
  npu_job job = npu_task_job(t, ins, outs);
  if (ops->cpu_end(b, &t->in, err, n) || ops->submit(b, &job, err, n) ||
      ops->wait(b, &job, b->timeout_ms, err, n) ||
      ops->cpu_begin(b, &t->out, err, n))
    return -1;
  npu_unpack_feature_f16(t->out.map, t->d.out_c, c->OH, c->OW, c->y_f16);
  if (ops->cpu_end(b, &t->out, err, n))
    return -1;
  size_t oplane = (size_t)c->OH * c->OW;
  for (int o = 0; o < t->d.out_c; o++)
    for (size_t i = 0; i < oplane; i++)
      y[(size_t)(t->o0 + o) * oplane + i] =
          epilogue(c, t->o0 + o, c->y_f16[(size_t)o * oplane + i]);
  return 0;
}

int npu_conv_run_f16(npu_conv *c, npu_backend *b, const void *x, void *y,
                     char *err, size_t n) {
  size_t in_img = (size_t)c->C * c->H * c->W;
  size_t out_img = (size_t)c->O * c->OH * c->OW;
  for (int img = 0; img < c->N; img++)
    for (int i = 0; i < c->task_count; i++)
      if (run_task_f16(c, b, &c->tasks[i], (const uint16_t *)x + in_img * img,
                       (uint16_t *)y + out_img * img, err, n))
        return -1;
  return 0;
}
