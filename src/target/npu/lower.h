/* Lowering a qconv2d node to NPU tasks, and running them.
 *
 * A node becomes one or more one-task convolutions, each over a run of
 * output channels: a new task starts where the requantisation multiplier
 * or the weight zero point changes (per-channel weights: the DPU's
 * OUT_CVT takes one multiplier per task, NPU.md 2.6) or where the weights
 * of more channels would not fit the CBUF. Everything else about the node
 * (padding, strides, zero points, uint8 tensors, fused relu/relu6 as an
 * output clamp) maps onto the one-task generator of gen.h. An f16 conv2d
 * node goes the same way through lower_f16.c (declared at the end).
 */
#ifndef DG_NPU_LOWER_H
#define DG_NPU_LOWER_H

#include "backend.h"
#include "gen.h"

#include "../../graph/ir.h"

typedef struct npu_task {
  int o0, o1; /* output channels [o0, o1); depthwise: input channels too */
  npu_conv_desc d;
  npu_conv_plan plan;
  npu_stream stream; /* addresses patched for this backend */
  npu_bo in, wt, bias, out, cmd;
} npu_task;

typedef struct npu_conv {
  const dg_node *node;
  int N, C, H, W, O, OH, OW;
  bool dw, x_u8, y_u8;
  int32_t y_lo, y_hi; /* output clamp in the output dtype (activation) */
  npu_task *tasks;
  int task_count;
  int8_t *x_chw, *y_chw; /* host staging: one image in, one task out */
  /* fp16 conv2d (lower_f16.c): no quantisation; the bias (fp16, may be
   * NULL) and the activation are applied on the host after read-back. */
  bool f16;
  const uint16_t *bias_f16;
  dg_activation act;
  uint16_t *y_f16; /* host staging: one task out */
} npu_conv;

/* Most tasks one node may take before the NPU declines it. */
#define NPU_MAX_TASKS_PER_NODE 256

/* Fills c (tasks described, streams generated, nothing allocated) or
 * returns false with a short reason for the plan ("per-channel weights
 * with more than 256 distinct scales", "f32 op", ...). c may be NULL
 * (a supports() query). */
bool npu_conv_lower(const dg_ir *ir, const dg_node *n, npu_conv *c, char *why,
                    size_t why_size);

/* Allocates the task buffers on b, packs weights and bias, patches and
 * checks the command lists. 0, or -1 with err set. */
int npu_conv_prepare(npu_conv *c, const dg_ir *ir, npu_backend *b, char *err,
                     size_t n);
/* Runs every image of the batch through every task. */
int npu_conv_run(npu_conv *c, npu_backend *b, const void *x, void *y,
                 char *err, size_t n);
void npu_conv_release(npu_conv *c, npu_backend *b);

/* Shared by both paths (conv_exec.c): a task's job (its bias buffer only
 * when it has one), and the last step of preparing a task: this backend's
 * IOVAs patched into the list, the list copied to its buffer and checked
 * against the job's buffers. */
npu_job npu_task_job(npu_task *t, npu_bo *ins[3], npu_bo *outs[1]);
int npu_task_upload(npu_task *t, npu_backend *b, char *err, size_t n);

/* The fp16 conv2d path (lower_f16.c), reached through the functions
 * above for conv2d nodes: f16 x, w, y, constant weights (and bias),
 * direct, no dilation. The NPU computes the bias-free conv in fp16 with
 * fp32 sums (as the simulator assumes); the host adds the bias (one more
 * fp16 rounding) and clamps relu/relu6 (exact). f32 convs are declined. */
bool npu_conv_lower_f16(const dg_ir *ir, const dg_node *n, npu_conv *c,
                        char *why, size_t why_size);
int npu_conv_prepare_f16(npu_conv *c, const dg_ir *ir, npu_backend *b,
                         char *err, size_t n);
int npu_conv_run_f16(npu_conv *c, npu_backend *b, const void *x, void *y,
                     char *err, size_t n);

#endif
