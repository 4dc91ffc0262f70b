/* Lowering a qconv2d node to NPU tasks, and running them.
 *
 * A node becomes one or more one-task convolutions, each over a run of
 * output channels: a new task starts where the requantisation multiplier
 * or the weight zero point changes (per-channel weights: the DPU's
 * OUT_CVT takes one multiplier per task, NPU.md 2.6) or where the weights
 * of more channels would not fit the CBUF. Everything else about the node
 * (padding, strides, zero points, uint8 tensors, fused relu/relu6 as an
 * output clamp) maps onto the one-task generator of gen.h.
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

#endif
