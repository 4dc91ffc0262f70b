/* Pooling nodes -> one standalone PPU task (see lower_pool.h). */
#include "lower_pool.h"

#include "pack.h"
#include "why.h"

#include "core/half.h" /* dg_f16_to_f32, dg_f32_to_f16 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool dg_npu_is_pool_op(dg_op op) {
  return op == DG_OP_MAX_POOL2D || op == DG_OP_AVG_POOL2D ||
         op == DG_OP_GLOBAL_AVG_POOL;
}

bool dg_npu_pool_has_kernel(dg_op op) { return op == DG_OP_MAX_POOL2D; }

static bool is_q8(dg_dtype t) { return t == DG_DTYPE_I8 || t == DG_DTYPE_U8; }

/* Node-level reasons, before the PPU's field limits. */
static bool node_ok(const dg_ir *ir, const dg_node *n, const char *backend,
                    char *why, size_t ws) {
  const dg_tensor_info *x = dg_ir_tensor(ir, n->inputs[0]),
                       *y = dg_ir_tensor(ir, n->output);
  if (!is_q8(x->desc.dtype))
    return dg_npu_why(why, ws, "%s op", dg_dtype_name(x->desc.dtype));
  if (n->op != DG_OP_MAX_POOL2D)
    return dg_npu_why(why, ws,
                      "%s: only int8 max pooling is lowered to the PPU",
                      dg_op_name(n->op));
  if (x->desc.rank != 4 || y->desc.dtype != x->desc.dtype)
    return dg_npu_why(why, ws, "%s",
                      "input not rank 4 or output dtype differs");
  /* regs.def documents dilation for the CNA (convolution) only, none for
   * the PPU's pooling window: declined rather than guessed. */
  if (n->p.dilation[0] != 1 || n->p.dilation[1] != 1)
    return dg_npu_why(why, ws,
                      "dilated pooling (%dx%d): the PPU has no dilation",
                      n->p.dilation[0], n->p.dilation[1]);
  if (x->desc.quant.channel_scales ||
      y->desc.quant.scale != x->desc.quant.scale ||
      y->desc.quant.zero_point != x->desc.quant.zero_point)
    return dg_npu_why(why, ws, "%s", "input and output quantisation differ");
  if (backend && !strcmp(backend, "rocket"))
    /* The kernel's IRQ handler ignores the PPU's interrupt (docs/npu.md,
     * "rocket"); kept short, the plan's reason text is bounded. */
    return dg_npu_why(
        why, ws, "%s",
        "PPU-only task: rocket completes on the DPU interrupt only");
  return true;
}

/* The PPU's pads: top/left as given; bottom/right just what the output
 * size needs (ceil mode windows hang past the end; a max never takes a
 * padded tap, so fewer pads than the node's give the same result). */
static bool describe(const dg_ir *ir, const dg_node *n, npu_pool *p, char *why,
                     size_t ws) {
  const dg_tensor_desc *xd = &dg_ir_tensor(ir, n->inputs[0])->desc,
                       *yd = &dg_ir_tensor(ir, n->output)->desc;
  p->node = n;
  p->N = (int)xd->dims[0], p->C = (int)xd->dims[1];
  p->H = (int)xd->dims[2], p->W = (int)xd->dims[3];
  p->OH = (int)yd->dims[2], p->OW = (int)yd->dims[3];
  p->u8 = xd->dtype == DG_DTYPE_U8;
  npu_pool_desc *d = &p->d;
  *d = (npu_pool_desc){.method = NPU_POOL_MAX,
                       .c = p->C,
                       .in_h = p->H,
                       .in_w = p->W,
                       .out_h = p->OH,
                       .out_w = p->OW,
                       .k_h = n->p.kernel[0],
                       .k_w = n->p.kernel[1],
                       .stride_y = n->p.stride[0],
                       .stride_x = n->p.stride[1],
                       .pad_top = n->p.pads[0],
                       .pad_left = n->p.pads[1]};
  int pb = (p->OH - 1) * d->stride_y + d->k_h - p->H - d->pad_top;
  int pr = (p->OW - 1) * d->stride_x + d->k_w - p->W - d->pad_left;
  d->pad_bottom = pb > 0 ? pb : 0;
  d->pad_right = pr > 0 ? pr : 0;
  return dg_npu_gen_pool(d, &p->stream, why, ws) &&
         dg_npu_pool_plan_make(d, &p->plan, why, ws);
}

bool dg_npu_pool_lower(const dg_ir *ir, const dg_node *n, const char *backend,
                       npu_pool *out, char *why, size_t ws) {
  if (!node_ok(ir, n, backend, why, ws))
    return false;
  npu_pool *p = malloc(sizeof *p); /* the stream is large for a stack */
  if (!p)
    return dg_npu_why(why, ws, "%s", "out of host memory");
  memset(p, 0, sizeof *p);
  bool ok = describe(ir, n, p, why, ws);
  if (ok && out)
    *out = *p;
  free(p);
  return ok;
}

static npu_job pool_job(npu_pool *p, npu_bo *ins[1], npu_bo *outs[1]) {
  ins[0] = &p->in;
  outs[0] = &p->out;
  return (npu_job){.cmd = &p->cmd,
                   .word_count = p->stream.count,
                   .in = ins,
                   .in_count = 1,
                   .out = outs,
                   .out_count = 1};
}

int dg_npu_pool_prepare(npu_pool *p, npu_backend *b, char *err, size_t n) {
  const npu_backend_ops *ops = b->ops;
  size_t cmd_bytes = (size_t)p->stream.count * 8;
  p->x_chw = malloc((size_t)p->C * p->H * p->W * sizeof *p->x_chw);
  p->y_chw = malloc((size_t)p->C * p->OH * p->OW * sizeof *p->y_chw);
  if (!p->x_chw || !p->y_chw)
    return dg_npu_errf(err, n, "npu: out of host memory");
  if (ops->bo_alloc(b, p->plan.input_bytes, &p->in, err, n) ||
      ops->bo_alloc(b, p->plan.output_bytes, &p->out, err, n) ||
      ops->bo_alloc(b, cmd_bytes, &p->cmd, err, n))
    return -1;
  const uint32_t iova[NPU_BUF_COUNT] = {[NPU_BUF_INPUT] = (uint32_t)p->in.iova,
                                        [NPU_BUF_OUTPUT] =
                                            (uint32_t)p->out.iova};
  dg_npu_stream_patch(&p->stream, iova);
  if (ops->cpu_begin(b, &p->cmd, err, n))
    return -1;
  memcpy(p->cmd.map, p->stream.words, cmd_bytes);
  if (ops->cpu_end(b, &p->cmd, err, n))
    return -1;
  npu_bo *ins[1], *outs[1];
  npu_job job = pool_job(p, ins, outs);
  return dg_npu_job_check(&job, err, n);
}

int8_t dg_npu_pool_narrow(uint16_t f16) {
  float v = nearbyintf(dg_f16_to_f32(f16)); /* default mode: half to even */
  return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
}

static int run_image(npu_pool *p, npu_backend *b, const uint8_t *x, uint8_t *y,
                     char *err, size_t n) {
  const npu_backend_ops *ops = b->ops;
  size_t in_n = (size_t)p->C * p->H * p->W,
         out_n = (size_t)p->C * p->OH * p->OW;
  for (size_t i = 0; i < in_n; i++) /* int8 values are exact in fp16 */
    p->x_chw[i] = dg_f32_to_f16((float)(p->u8 ? x[i] - 128 : (int8_t)x[i]));
  if (ops->cpu_begin(b, &p->in, err, n))
    return -1;
  dg_npu_pack_feature_f16(p->x_chw, p->C, p->H, p->W, 0, p->in.map);
  npu_bo *ins[1], *outs[1];
  npu_job job = pool_job(p, ins, outs);
  if (ops->cpu_end(b, &p->in, err, n) || dg_npu_backend_run(b, &job, err, n) ||
      ops->cpu_begin(b, &p->out, err, n))
    return -1;
  dg_npu_unpack_feature_f16(p->out.map, p->C, p->OH, p->OW, p->y_chw);
  if (ops->cpu_end(b, &p->out, err, n))
    return -1;
  for (size_t i = 0; i < out_n; i++)
    y[i] = (uint8_t)(dg_npu_pool_narrow(p->y_chw[i]) + (p->u8 ? 128 : 0));
  return 0;
}

int dg_npu_pool_run_image(npu_pool *p, npu_backend *b, int img, const void *x,
                          void *y, char *err, size_t n) {
  size_t in_img = (size_t)p->C * p->H * p->W;
  size_t out_img = (size_t)p->C * p->OH * p->OW;
  return run_image(p, b, (const uint8_t *)x + in_img * img,
                   (uint8_t *)y + out_img * img, err, n);
}

int dg_npu_pool_run(npu_pool *p, npu_backend *b, const void *x, void *y,
                    char *err, size_t n) {
  for (int img = 0; img < p->N; img++)
    if (dg_npu_pool_run_image(p, b, img, x, y, err, n))
      return -1;
  return 0;
}

void dg_npu_pool_release(npu_pool *p, npu_backend *b) {
  npu_bo *bos[3] = {&p->in, &p->out, &p->cmd};
  for (int k = 0; k < 3; k++)
    if (bos[k]->map)
      b->ops->bo_free(b, bos[k]);
  free(p->x_chw);
  free(p->y_chw);
  memset(p, 0, sizeof *p);
}
