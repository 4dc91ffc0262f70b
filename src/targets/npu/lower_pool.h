/* Lowering a pooling node to one standalone PPU task, and running it.
 *
 * max_pool2d on int8/uint8 tensors (per-tensor quantisation, the output's
 * equal to the input's: the builder keeps it) becomes one PPU task per
 * image over all channels: the host widens the int8 values to an fp16
 * cube (exact), the PPU takes each window's max, the host narrows the
 * result back (exact). Declined with a reason the plan shows: float
 * pooling, average pooling (the builder's avg_pool2d is float-only),
 * global pooling, windows, strides or pads beyond the PPU's fields, and
 * every pooling node on the mainline rocket driver (it completes a job
 * on the DPU's interrupt only, docs/npu.md "rocket": a PPU-only task
 * would time out).
 */
#ifndef DG_NPU_LOWER_POOL_H
#define DG_NPU_LOWER_POOL_H

#include "backend.h"
#include "gen_ppu.h"

#include "core/ir.h"

typedef struct npu_pool {
  const dg_node *node;
  int N, C, H, W, OH, OW;
  bool u8;
  npu_pool_desc d;
  npu_pool_plan plan;
  npu_stream stream;
  npu_bo in, out, cmd;
  uint16_t *x_chw, *y_chw; /* host staging: one image, fp16 */
} npu_pool;

/* Whether op is a pooling op (examined here rather than by lower.c). */
bool dg_npu_is_pool_op(dg_op op);
/* Whether the PPU lowering has a kernel for op at all: max pooling only;
 * average pools are examined and declined with their reason. */
bool dg_npu_pool_has_kernel(dg_op op);

/* Fills p (described, stream generated, nothing allocated) or returns
 * false with a short reason for the plan. backend: the backend's name
 * ("sim", "rocket", "rknpu"). p may be NULL (a supports() query). */
bool dg_npu_pool_lower(const dg_ir *ir, const dg_node *n, const char *backend,
                       npu_pool *p, char *why, size_t why_size);

/* Allocates the buffers on b, patches and checks the list. 0, or -1 with
 * err set. */
int dg_npu_pool_prepare(npu_pool *p, npu_backend *b, char *err, size_t n);
/* Runs image img (x, y: the whole batch). */
int dg_npu_pool_run_image(npu_pool *p, npu_backend *b, int img, const void *x,
                          void *y, char *err, size_t n);
/* Runs every image of the batch. */
int dg_npu_pool_run(npu_pool *p, npu_backend *b, const void *x, void *y,
                    char *err, size_t n);
void dg_npu_pool_release(npu_pool *p, npu_backend *b);

/* fp16 result of the PPU -> int8 in the signed domain: round half to
 * even, saturate (exact for max and min, one rounding for an average). */
int8_t dg_npu_pool_narrow(uint16_t f16);

#endif
