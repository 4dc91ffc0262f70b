/* Buffers, packing, submission and read-back of a lowered conv (lower.h).
 * Weights and bias are packed once; every run packs the input image,
 * submits each task, waits and unpacks its channels. The CPU touches a
 * buffer only between cpu_begin and cpu_end. */
#include "lower.h"

#include "pack.h"

#include <stdlib.h>
#include <string.h>

/* The job of a task; the bias buffer only where the task has one (fp16
 * tasks read none). */
npu_job npu_task_job(npu_task *t, npu_bo *ins[3], npu_bo *outs[1]) {
  ins[0] = &t->in, ins[1] = &t->wt, ins[2] = &t->bias;
  outs[0] = &t->out;
  return (npu_job){&t->cmd, t->stream.count, ins, t->bias.map ? 3 : 2, outs,
                   1};
}

/* Signed-domain copy of the task's weights (uint8 weights minus 128). */
static int8_t *task_weights(const dg_ir *ir, const npu_conv *c,
                            const npu_task *t) {
  const dg_tensor_info *w = dg_ir_tensor(ir, c->node->inputs[1]);
  size_t per = (size_t)(c->dw ? 1 : c->C) * t->d.k_h * t->d.k_w;
  size_t count = per * (size_t)(t->o1 - t->o0);
  int8_t *out = malloc(count ? count : 1);
  if (!out)
    return NULL;
  const uint8_t *src = (const uint8_t *)w->constant->data + per * t->o0;
  for (size_t i = 0; i < count; i++)
    out[i] = w->desc.dtype == DG_DTYPE_U8 ? (int8_t)(src[i] - 128)
                                          : (int8_t)src[i];
  return out;
}

static int fill_task(npu_conv *c, const dg_ir *ir, npu_backend *b,
                     npu_task *t, char *err, size_t n) {
  const npu_backend_ops *ops = b->ops;
  const npu_conv_plan *p = &t->plan;
  size_t cmd_bytes = (size_t)t->stream.count * 8;
  if (ops->bo_alloc(b, p->input_bytes, &t->in, err, n) ||
      ops->bo_alloc(b, p->weight_bytes, &t->wt, err, n) ||
      ops->bo_alloc(b, p->bias_bytes, &t->bias, err, n) ||
      ops->bo_alloc(b, p->output_bytes, &t->out, err, n) ||
      ops->bo_alloc(b, cmd_bytes, &t->cmd, err, n))
    return -1;
  int8_t *w = task_weights(ir, c, t);
  if (!w)
    return npu_errf(err, n, "npu: out of host memory packing weights");
  const dg_node *node = c->node;
  const int32_t *bias =
      node->inputs[2]
          ? (const int32_t *)dg_ir_tensor(ir, node->inputs[2])->constant->data +
                t->o0
          : NULL;
  int rc = ops->cpu_begin(b, &t->wt, err, n);
  if (!rc) {
    npu_pack_weights_i8(w, t->d.out_c, t->d.in_c, t->d.k_h, t->d.k_w,
                        c->dw, (int8_t)t->d.w_zp, t->wt.map);
    rc = ops->cpu_end(b, &t->wt, err, n);
  }
  if (!rc && !(rc = ops->cpu_begin(b, &t->bias, err, n))) {
    if (!npu_pack_bias(bias, w, t->d.out_c, t->d.in_c, t->d.k_h, t->d.k_w,
                       c->dw, t->d.w_zp, t->d.x_zp, t->d.truncate_bits,
                       (int32_t *)(void *)t->bias.map))
      rc = npu_errf(err, n, "npu: node '%s': folded bias exceeds int32",
                    node->name);
    int rc2 = ops->cpu_end(b, &t->bias, err, n);
    rc = rc ? rc : rc2;
  }
  free(w);
  if (rc)
    return -1;
  return npu_task_upload(t, b, err, n);
}

int npu_task_upload(npu_task *t, npu_backend *b, char *err, size_t n) {
  const npu_backend_ops *ops = b->ops;
  size_t cmd_bytes = (size_t)t->stream.count * 8;
  /* This backend's addresses into the list, then the list to the NPU. */
  const uint32_t iova[NPU_BUF_COUNT] = {
      (uint32_t)t->in.iova, (uint32_t)t->wt.iova, (uint32_t)t->bias.iova,
      (uint32_t)t->out.iova};
  npu_stream_patch(&t->stream, iova);
  if (ops->cpu_begin(b, &t->cmd, err, n))
    return -1;
  memcpy(t->cmd.map, t->stream.words, cmd_bytes);
  if (ops->cpu_end(b, &t->cmd, err, n))
    return -1;
  npu_bo *ins[3], *outs[1];
  npu_job job = npu_task_job(t, ins, outs);
  return npu_job_check(&job, err, n);
}

int npu_conv_prepare(npu_conv *c, const dg_ir *ir, npu_backend *b, char *err,
                     size_t n) {
  if (c->f16)
    return npu_conv_prepare_f16(c, ir, b, err, n);
  int max_out = 0;
  for (int i = 0; i < c->task_count; i++)
    if (c->tasks[i].d.out_c > max_out)
      max_out = c->tasks[i].d.out_c;
  c->x_chw = malloc((size_t)c->C * c->H * c->W);
  c->y_chw = malloc((size_t)max_out * c->OH * c->OW);
  if (!c->x_chw || !c->y_chw)
    return npu_errf(err, n, "npu: out of host memory");
  for (int i = 0; i < c->task_count; i++)
    if (fill_task(c, ir, b, &c->tasks[i], err, n))
      return -1;
  return 0;
}

static int run_task(npu_conv *c, npu_backend *b, npu_task *t, uint8_t *y,
                    char *err, size_t n) {
  const npu_backend_ops *ops = b->ops;
  size_t plane = (size_t)c->H * c->W;
  if (ops->cpu_begin(b, &t->in, err, n))
    return -1;
  npu_pack_feature_i8(c->x_chw + (c->dw ? (size_t)t->o0 * plane : 0),
                      t->d.in_c, c->H, c->W, (int8_t)t->d.x_zp, t->in.map);
  npu_bo *ins[3], *outs[1];
  npu_job job = npu_task_job(t, ins, outs);
  if (ops->cpu_end(b, &t->in, err, n) || ops->submit(b, &job, err, n) ||
      ops->wait(b, &job, b->timeout_ms, err, n) ||
      ops->cpu_begin(b, &t->out, err, n))
    return -1;
  npu_unpack_feature_i8(t->out.map, t->d.out_c, c->OH, c->OW, c->y_chw);
  if (ops->cpu_end(b, &t->out, err, n))
    return -1;
  /* Back to the output dtype, clamped by the fused activation (exact:
   * the clamp commutes with the NPU's int8 saturation). */
  size_t oplane = (size_t)c->OH * c->OW;
  for (size_t i = 0; i < (size_t)t->d.out_c * oplane; i++) {
    int v = c->y_chw[i] + (c->y_u8 ? 128 : 0);
    v = v < c->y_lo ? c->y_lo : v > c->y_hi ? c->y_hi : v;
    y[(size_t)t->o0 * oplane + i] = (uint8_t)v;
  }
  return 0;
}

int npu_conv_run(npu_conv *c, npu_backend *b, const void *x, void *y,
                 char *err, size_t n) {
  if (c->f16)
    return npu_conv_run_f16(c, b, x, y, err, n);
  size_t in_img = (size_t)c->C * c->H * c->W;
  size_t out_img = (size_t)c->O * c->OH * c->OW;
  for (int img = 0; img < c->N; img++) {
    const uint8_t *src = (const uint8_t *)x + in_img * img;
    for (size_t i = 0; i < in_img; i++)
      c->x_chw[i] = c->x_u8 ? (int8_t)(src[i] - 128) : (int8_t)src[i];
    for (int i = 0; i < c->task_count; i++)
      if (run_task(c, b, &c->tasks[i], (uint8_t *)y + out_img * img, err, n))
        return -1;
  }
  return 0;
}

void npu_conv_release(npu_conv *c, npu_backend *b) {
  for (int i = 0; c->tasks && i < c->task_count; i++) {
    npu_task *t = &c->tasks[i];
    npu_bo *bos[5] = {&t->in, &t->wt, &t->bias, &t->out, &t->cmd};
    for (int k = 0; k < 5; k++)
      if (bos[k]->map)
        b->ops->bo_free(b, bos[k]);
  }
  free(c->tasks);
  free(c->x_chw);
  free(c->y_chw);
  free(c->y_f16);
  memset(c, 0, sizeof *c);
}
