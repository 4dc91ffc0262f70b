/* Buffers, packing, submission and read-back of a lowered node (lower.h).
 * The node's tasks share four buffers (input slices, weights, biases,
 * outputs) at the offsets the lowering chose, and a fifth holding every
 * task's command list. Weights and biases are packed once; every run
 * packs each distinct input slice once, submits all the tasks as one
 * chained job per image (NPU_JOB_MAX_TASKS at most: more make several),
 * waits once, and unpacks every task's output cube into its channels and
 * rows. The CPU touches a buffer
 * only between cpu_begin and cpu_end. An f16 node (lower_f16.c) runs the
 * same way, without a bias buffer, its input packed straight from the
 * caller's image and its output finished on the host. */
#include "lower.h"

#include "pack.h"

#include "core/names.h"

#include <stdlib.h>
#include <string.h>

/* The job of count tasks from the first (their lists, in order, in
 * refs); the bias buffer only where the node has one (fp16 tasks read
 * none). */
static npu_job tasks_job(npu_conv *c, int first, int count, npu_task_ref *refs,
                         npu_bo *ins[3], npu_bo *outs[1]) {
  ins[0] = &c->in, ins[1] = &c->wt, ins[2] = &c->bias;
  outs[0] = &c->out;
  for (int k = 0; k < count; k++)
    refs[k] = c->tasks[first + k].list;
  return (npu_job){.cmd = &c->cmd,
                   .in = ins,
                   .in_count = c->bias_bytes ? 3 : 2,
                   .out = outs,
                   .out_count = 1,
                   .tasks = refs,
                   .task_count = count};
}

/* Calls f on each job the node's tasks make, in order: NPU_JOB_MAX_TASKS
 * tasks a job; the first failure ends it. */
static int each_job(npu_conv *c, npu_backend *b,
                    int (*f)(npu_backend *, const npu_job *, char *, size_t),
                    char *err, size_t n) {
  for (int i = 0; i < c->task_count; i += NPU_JOB_MAX_TASKS) {
    int count = c->task_count - i < NPU_JOB_MAX_TASKS ? c->task_count - i
                                                      : NPU_JOB_MAX_TASKS;
    npu_task_ref refs[NPU_JOB_MAX_TASKS];
    npu_bo *ins[3], *outs[1];
    npu_job job = tasks_job(c, i, count, refs, ins, outs);
    if (f(b, &job, err, n))
      return -1;
  }
  return 0;
}

static int check_job(npu_backend *b, const npu_job *job, char *err, size_t n) {
  (void)b;
  return dg_npu_job_check(job, err, n);
}

/* Weight i (of the C*KH*KW, or KH*KW depthwise, feeding one kernel) of
 * output channel o, in the signed domain. */
static int8_t weight_at(const npu_conv *c, const dg_tensor_info *w, int o,
                        size_t i) {
  size_t per = (size_t)(c->dw ? 1 : c->C) * c->kh * c->kw;
  /* qmatmul's b is [K][N]: channel o is column o. */
  size_t at = c->w_kn ? i * (size_t)c->O + (size_t)o : (size_t)o * per + i;
  uint8_t v = ((const uint8_t *)w->constant->data)[at];
  return w->desc.dtype == DG_DTYPE_U8 ? (int8_t)(v - 128) : (int8_t)v;
}

/* Signed OIHW copy of the weights of the task's channels. */
static int8_t *task_weights(const dg_ir *ir, const npu_conv *c,
                            const npu_task *t) {
  const dg_tensor_info *w = dg_ir_tensor(ir, c->node->inputs[1]);
  size_t per = (size_t)(c->dw ? 1 : c->C) * c->kh * c->kw;
  size_t count = per * (size_t)(t->o1 - t->o0);
  int8_t *out = malloc(count ? count : 1);
  if (!out)
    return NULL;
  for (int o = t->o0; o < t->o1; o++)
    for (size_t i = 0; i < per; i++)
      out[(size_t)(o - t->o0) * per + i] = weight_at(c, w, o, i);
  return out;
}

static const int32_t *task_bias(const dg_ir *ir, const npu_conv *c,
                                const npu_task *t) {
  const dg_node *n = c->node;
  if (n->input_count < 3 || !n->inputs[2])
    return NULL;
  return (const int32_t *)dg_ir_tensor(ir, n->inputs[2])->constant->data +
         t->o0;
}

/* Packs the weights and bias of the block t begins (maps held by the
 * caller). */
static int pack_block(npu_conv *c, const dg_ir *ir, const npu_task *t,
                      char *err, size_t n) {
  if (c->f16) {
    dg_npu_f16_pack_block(c, ir, t);
    return 0;
  }
  int8_t *w = task_weights(ir, c, t);
  if (!w)
    return dg_npu_errf(err, n, "npu: out of host memory packing weights");
  const npu_conv_desc *d = &t->d;
  dg_npu_pack_weights_i8(w, d->out_c, d->in_c, d->k_h, d->k_w, c->dw,
                         (int8_t)d->w_zp, c->wt.map + t->wt_off);
  uint8_t *dst = c->bias.map + t->bias_off;
  /* Per channel, the folded biases go into the BS groups with each
   * channel's multiplier (pack.h); staged here first. */
  int32_t *folded =
      d->per_channel ? malloc((size_t)d->out_c * sizeof *folded) : NULL;
  int16_t *mul = d->per_channel ? malloc((size_t)d->out_c * sizeof *mul) : NULL;
  if (d->per_channel && (!folded || !mul)) {
    free(w), free(folded), free(mul);
    return dg_npu_errf(err, n, "npu: out of host memory packing biases");
  }
  bool ok = dg_npu_pack_bias(task_bias(ir, c, t), w, d->out_c, d->in_c, d->k_h,
                             d->k_w, c->dw, d->w_zp, d->x_zp, d->truncate_bits,
                             folded ? folded : (int32_t *)(void *)dst);
  if (d->per_channel) {
    for (int k = 0; k < d->out_c; k++)
      mul[k] = dg_npu_bs_mul(dg_npu_channel_multiplier(ir, c->node, t->o0 + k),
                             d->multiplier, d->bs_shift);
    dg_npu_pack_bs_groups(folded, mul, d->out_c, t->plan.out_channels, dst);
  }
  free(w), free(folded), free(mul);
  if (!ok) {
    char shown[DG_NAME_SHORT]; /* leaves room for the reason */
    dg_name_shorten(shown, sizeof shown, c->node->name);
    return dg_npu_errf(err, n, "npu: node '%s': folded bias exceeds int32",
                       shown);
  }
  return 0;
}

static int pack_constants(npu_conv *c, const dg_ir *ir, npu_backend *b,
                          char *err, size_t n) {
  const npu_backend_ops *ops = b->ops;
  bool bias = c->bias_bytes > 0; /* fp16 nodes have no bias buffer */
  if (ops->cpu_begin(b, &c->wt, err, n))
    return -1;
  if (bias && ops->cpu_begin(b, &c->bias, err, n)) {
    ops->cpu_end(b, &c->wt, err, n);
    return -1;
  }
  int rc = 0;
  for (int i = 0; !rc && i < c->task_count; i++)
    if (c->tasks[i].packs_weights)
      rc = pack_block(c, ir, &c->tasks[i], err, n);
  int rc2 = bias ? ops->cpu_end(b, &c->bias, err, n) : 0;
  int rc3 = ops->cpu_end(b, &c->wt, err, n);
  return rc ? rc : rc2 ? rc2 : rc3;
}

/* This backend's addresses into every task's list, the lists into one
 * command buffer, then the static check every job gets (per chained
 * job, as run). */
static int load_lists(npu_conv *c, npu_backend *b, char *err, size_t n) {
  const npu_backend_ops *ops = b->ops;
  size_t bytes = 0;
  for (int i = 0; i < c->task_count; i++) {
    npu_task *t = &c->tasks[i];
    t->list = (npu_task_ref){(uint32_t)bytes, t->stream.count};
    bytes += ((size_t)t->stream.count * 8 + 63) / 64 * 64;
  }
  if (ops->bo_alloc(b, bytes ? bytes : 64, &c->cmd, err, n))
    return -1;
  const uint32_t iova[NPU_BUF_COUNT] = {
      (uint32_t)c->in.iova, (uint32_t)c->wt.iova, (uint32_t)c->bias.iova,
      (uint32_t)c->out.iova};
  if (ops->cpu_begin(b, &c->cmd, err, n))
    return -1;
  for (int i = 0; i < c->task_count; i++) {
    npu_task *t = &c->tasks[i];
    dg_npu_stream_patch(&t->stream, iova);
    t->reuses_weights = dg_npu_task_reuses_weights(c, i, b->cores);
    if (t->reuses_weights)
      dg_npu_stream_weight_reuse(&t->stream);
    memcpy(c->cmd.map + t->list.offset, t->stream.words,
           (size_t)t->stream.count * 8);
  }
  if (ops->cpu_end(b, &c->cmd, err, n))
    return -1;
  return each_job(c, b, check_job, err, n);
}

int dg_npu_conv_prepare(npu_conv *c, const dg_ir *ir, npu_backend *b, char *err,
                        size_t n) {
  size_t max_out = 1;
  for (int i = 0; i < c->task_count; i++) {
    const npu_conv_desc *d = &c->tasks[i].d;
    size_t sz = (size_t)d->out_c * d->out_h * d->out_w;
    max_out = sz > max_out ? sz : max_out;
  }
  bool staged;
  if (c->f16) {
    c->y_f16 = malloc(max_out * sizeof *c->y_f16);
    staged = c->y_f16 != NULL;
  } else {
    c->x_chw = malloc((size_t)c->C * c->H * c->W);
    c->y_chw = malloc(max_out);
    staged = c->x_chw && c->y_chw;
  }
  if (!staged)
    return dg_npu_errf(err, n, "npu: out of host memory");
  const npu_backend_ops *ops = b->ops;
  if (ops->bo_alloc(b, c->in_bytes, &c->in, err, n) ||
      ops->bo_alloc(b, c->wt_bytes, &c->wt, err, n) ||
      (c->bias_bytes && ops->bo_alloc(b, c->bias_bytes, &c->bias, err, n)) ||
      ops->bo_alloc(b, c->out_bytes, &c->out, err, n) ||
      pack_constants(c, ir, b, err, n))
    return -1;
  return load_lists(c, b, err, n);
}

/* One image (NCHW) or all rows (fc/matmul: x [M][K] to K planes of M) to
 * signed CHW staging. */
static void stage_input(npu_conv *c, const uint8_t *src) {
  size_t count = (size_t)c->C * c->H * c->W;
  for (size_t i = 0; i < count; i++) {
    int8_t v = c->x_u8 ? (int8_t)(src[i] - 128) : (int8_t)src[i];
    if (c->layout == NPU_LAYOUT_ROWS) /* src[m][k] -> x_chw[k][m] */
      c->x_chw[(i % (size_t)c->C) * (size_t)c->H + i / (size_t)c->C] = v;
    else
      c->x_chw[i] = v;
  }
}

/* The task of producer p holding output channel ch and row y. */
static const npu_task *task_at(const npu_conv *p, int ch, int y) {
  for (int i = 0; i < p->task_count; i++) {
    const npu_task *u = &p->tasks[i];
    if (ch >= u->o0 && ch < u->o1 && y >= u->oh0 && y < u->oh1)
      return u;
  }
  return NULL;
}

/* Input slice t of c from its producer's output cubes (c->from, mapped;
 * batch 1), NC1HWC2 to NC1HWC2: a row of a 16-channel group is one copy of
 * W x 16 bytes where the producer's task holds the group at the same lane
 * offset, else channel by channel; then the producer's activation clamp
 * (it is applied on the way to the host otherwise) and the pad lanes past
 * the real channels (the input zero point, as dg_npu_pack_rows_i8). */
static void pack_slice_from(const npu_conv *c, const npu_task *t,
                            uint8_t *dst) {
  const npu_conv *p = c->from;
  int c0 = c->dw ? t->o0 : 0, cin = t->d.in_c, h = t->d.in_h, W = c->W;
  int8_t lo = (int8_t)(p->y_lo - (p->y_u8 ? 128 : 0));
  int8_t hi = (int8_t)(p->y_hi - (p->y_u8 ? 128 : 0));
  size_t row = (size_t)W * 16;
  for (int g = 0; g < (cin + 15) / 16; g++)
    for (int y = 0; y < h; y++) {
      int8_t *out = (int8_t *)dst + ((size_t)g * h + (size_t)y) * row;
      int ch0 = c0 + g * 16, n = cin - g * 16 < 16 ? cin - g * 16 : 16;
      int iy = t->ih0 + y;
      const npu_task *u = task_at(p, ch0, iy);
      if (u && (ch0 - u->o0) % 16 == 0 && ch0 + n <= u->o1) {
        const uint8_t *src = p->out.map + u->out_off +
                             ((size_t)((ch0 - u->o0) / 16) * u->d.out_h +
                              (size_t)(iy - u->oh0)) *
                                 row;
        memcpy(out, src, row);
      } else {
        for (int l = 0; l < n; l++) {
          const npu_task *v = task_at(p, ch0 + l, iy);
          int k = ch0 + l - v->o0;
          const uint8_t *src =
              p->out.map + v->out_off +
              ((size_t)(k / 16) * v->d.out_h + (size_t)(iy - v->oh0)) * row +
              k % 16;
          for (int x = 0; x < W; x++)
            out[(size_t)x * 16 + l] = (int8_t)src[(size_t)x * 16];
        }
      }
      for (size_t i = 0; i < row; i++) /* vectorises: a byte clamp */
        out[i] = out[i] < lo ? lo : out[i] > hi ? hi : out[i];
      for (int l = n; l < 16; l++)
        for (int x = 0; x < W; x++)
          out[(size_t)x * 16 + l] = (int8_t)t->d.x_zp;
    }
}

/* Each distinct input slice into c->in: from the int8 staging, from the
 * producer's cubes (c->from), or (f16, padded with +0.0) straight from the
 * caller's image x. */
static int pack_inputs(npu_conv *c, npu_backend *b, const void *x, char *err,
                       size_t n) {
  npu_bo *src = c->from ? &c->from->out : NULL;
  if (src && b->ops->cpu_begin(b, src, err, n))
    return -1;
  if (b->ops->cpu_begin(b, &c->in, err, n)) {
    if (src)
      b->ops->cpu_end(b, src, err, n);
    return -1;
  }
  size_t plane = (size_t)c->H * c->W;
  for (int i = 0; i < c->task_count; i++) {
    const npu_task *t = &c->tasks[i];
    if (!t->packs_input)
      continue;
    if (c->from)
      pack_slice_from(c, t, c->in.map + t->in_off);
    else if (c->f16)
      dg_npu_pack_rows_f16((const uint16_t *)x, t->d.in_c, c->H, c->W, t->ih0,
                           t->d.in_h, 0, c->in.map + t->in_off);
    else
      dg_npu_pack_rows_i8(c->x_chw + (c->dw ? (size_t)t->o0 * plane : 0),
                          t->d.in_c, c->H, c->W, t->ih0, t->d.in_h,
                          (int8_t)t->d.x_zp, c->in.map + t->in_off);
  }
  int rc = b->ops->cpu_end(b, &c->in, err, n);
  int rc2 = src ? b->ops->cpu_end(b, src, err, n) : 0;
  return rc ? rc : rc2;
}

/* t's output cube to its channels and rows of y, back in the output dtype
 * and clamped by the fused activation (exact: the clamp commutes with the
 * NPU's int8 saturation). */
static void scatter_output(npu_conv *c, const npu_task *t, uint8_t *y) {
  const npu_conv_desc *d = &t->d;
  dg_npu_unpack_feature_i8(c->out.map + t->out_off, d->out_c, d->out_h,
                           d->out_w, c->y_chw);
  for (int ch = 0; ch < d->out_c; ch++)
    for (int r = 0; r < d->out_h; r++)
      for (int x = 0; x < d->out_w; x++) {
        int v = c->y_chw[((size_t)ch * d->out_h + r) * d->out_w + x] +
                (c->y_u8 ? 128 : 0);
        v = v < c->y_lo ? c->y_lo : v > c->y_hi ? c->y_hi : v;
        int o = t->o0 + ch, oy = t->oh0 + r;
        size_t at = c->layout == NPU_LAYOUT_ROWS
                        ? (size_t)oy * c->O + (size_t)o
                        : ((size_t)o * c->OH + (size_t)oy) * c->OW + (size_t)x;
        y[at] = (uint8_t)v;
      }
}

static int run_image(npu_conv *c, npu_backend *b, const uint8_t *x, uint8_t *y,
                     char *err, size_t n) {
  const npu_backend_ops *ops = b->ops;
  if (!c->f16 && !c->from)
    stage_input(c, x);
  if (pack_inputs(c, b, x, err, n))
    return -1;
  if (each_job(c, b, dg_npu_backend_run, err, n))
    return -1;
  if (c->out_on_npu) /* its readers copy from the cubes */
    return 0;
  if (ops->cpu_begin(b, &c->out, err, n))
    return -1;
  for (int i = 0; i < c->task_count; i++)
    if (c->f16)
      dg_npu_f16_scatter(c, &c->tasks[i], (uint16_t *)(void *)y);
    else
      scatter_output(c, &c->tasks[i], y);
  return ops->cpu_end(b, &c->out, err, n);
}

int dg_npu_conv_run_image(npu_conv *c, npu_backend *b, int img, const void *x,
                          void *y, char *err, size_t n) {
  size_t elem = c->f16 ? 2 : 1;
  size_t in_img = (size_t)c->C * c->H * c->W * elem;
  size_t out_img = (size_t)c->O * c->OH * c->OW * elem;
  return run_image(c, b, (const uint8_t *)x + in_img * img,
                   (uint8_t *)y + out_img * img, err, n);
}

int dg_npu_conv_run(npu_conv *c, npu_backend *b, const void *x, void *y,
                    char *err, size_t n) {
  for (int img = 0; img < c->N; img++)
    if (dg_npu_conv_run_image(c, b, img, x, y, err, n))
      return -1;
  return 0;
}

void dg_npu_conv_release(npu_conv *c, npu_backend *b) {
  npu_bo *bos[5] = {&c->in, &c->wt, &c->bias, &c->out, &c->cmd};
  for (int k = 0; b && k < 5; k++)
    if (bos[k]->map)
      b->ops->bo_free(b, bos[k]);
  free(c->tasks);
  free(c->x_chw);
  free(c->y_chw);
  free(c->y_f16);
  memset(c, 0, sizeof *c);
}
