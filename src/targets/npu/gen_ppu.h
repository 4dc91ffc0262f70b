/* Command-stream generator for one standalone pooling task on the PPU:
 * PPU_RDMA reads an NC1HWC2 fp16 cube from memory, the PPU reduces each
 * window (max or average) and writes an fp16 cube of the same layout.
 * No CNA, CORE or DPU; op-enable PPU|PPU_RDMA (0x60).
 *
 * Why fp16 for int8 tensors: the public sources disagree on whether the
 * RK3588 PPU pools int8 natively (README findings); they agree that the
 * fp16 program works on hardware, and every int8/uint8 value is exact in
 * fp16. So the host widens the int8 cube to fp16 and narrows the result:
 * max pooling is exact, average pooling rounds once on the host.
 *
 * Register recipe (values as the TRM's PPU descriptions define the fields,
 * checked against two programs that ran on boards, see regs.def):
 * geometry fields hold value - 1, pads hold the count, strides are in
 * 16-byte atoms, the average multiplies the window sum by the fp16
 * reciprocals 65536/kw and 65536/kh and by 2^-32 (no divider), and the
 * out-of-image taps read the pad value (fp16 -inf for max).
 */
#ifndef DG_NPU_GEN_PPU_H
#define DG_NPU_GEN_PPU_H

#include "gen.h"

/* PPU_OPERATION_MODE_CFG.POOLING_METHOD (TRM: 0 average, 1 max, 2 min). */
typedef enum npu_pool_method {
  NPU_POOL_AVG = 0,
  NPU_POOL_MAX = 1,
  NPU_POOL_MIN = 2,
} npu_pool_method;

/* Field limits (TRM / Mesa registers.xml widths). */
#define NPU_POOL_MAX_KERNEL 16 /* KERNEL_WIDTH/HEIGHT: 4 bits, value - 1 */
#define NPU_POOL_MAX_STRIDE 16 /* KERNEL_STRIDE_*: 4 bits, value - 1 */
#define NPU_POOL_MAX_PAD 7     /* PAD_*: 3 bits, the count */
#define NPU_POOL_MAX_DIM 8192  /* CUBE_* 13 bits, value - 1 */

/* Values in the NPU's signed domain (uint8 tensors minus 128). */
typedef struct npu_pool_desc {
  npu_pool_method method;
  int c, in_h, in_w, out_h, out_w;
  int k_h, k_w, stride_y, stride_x;
  int pad_top, pad_left, pad_bottom, pad_right;
  int pad_value; /* average only: what a padded tap adds (the zero point,
                    i.e. count_include_pad); max/min pad with -inf/+inf */
} npu_pool_desc;

typedef struct npu_pool_plan {
  size_t input_bytes, output_bytes; /* fp16 NC1HWC2 cubes (C2 = 8) */
} npu_pool_plan;

/* False (why set, a reason fit for the plan) when the PPU cannot run d
 * as one task. */
bool dg_npu_pool_plan_make(const npu_pool_desc *d, npu_pool_plan *p, char *why,
                           size_t why_size);

/* RECIP_KERNEL_WIDTH/HEIGHT for a window extent k: the fp16 bits of
 * 65536 / k (k >= 2; 65536 itself does not fit fp16). */
uint32_t dg_npu_pool_recip(int k);

/* Generates the task's list with relocations for NPU_BUF_INPUT and
 * NPU_BUF_OUTPUT. False (why set) when d does not fit the fields. */
bool dg_npu_gen_pool(const npu_pool_desc *d, npu_stream *s, char *why,
                     size_t why_size);

/* Output extent of one axis, floor((in + pads - k) / stride) + 1: what the
 * PPU produces for the given pads (the simulator checks the same). */
static inline int npu_pool_out_dim(int in, int k, int stride, int pad_lo,
                                   int pad_hi) {
  return (in + pad_lo + pad_hi - k) / stride + 1;
}

#endif
