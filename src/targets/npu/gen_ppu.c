/* Command-stream generator for one standalone PPU pooling task (see
 * gen_ppu.h). Every value goes through the field packers of regs.h, so a
 * value that does not fit its field is reported, not truncated. */
#include "gen_ppu.h"

#include "gen_emit.h"
#include "pack.h"
#include "why.h"

#include "core/half.h" /* dg_f32_to_f16 */

#include <stdio.h>
#include <string.h>

#define F16_NEG_INF 0xfc00u
#define F16_POS_INF 0x7c00u
#define PPU_PROC_FP16 2u /* DATA_FORMAT precision code of fp16 */

bool dg_npu_pool_plan_make(const npu_pool_desc *d, npu_pool_plan *p, char *why,
                           size_t n) {
  memset(p, 0, sizeof *p);
  if (d->method != NPU_POOL_MAX && d->method != NPU_POOL_AVG &&
      d->method != NPU_POOL_MIN)
    return dg_npu_why(why, n, "pooling method %d unknown", (int)d->method);
  if (d->k_h < 1 || d->k_w < 1 || d->k_h > NPU_POOL_MAX_KERNEL ||
      d->k_w > NPU_POOL_MAX_KERNEL)
    return dg_npu_why(why, n,
                      "kernel %dx%d outside 1..%d (PPU kernel fields are "
                      "4 bits)",
                      d->k_h, d->k_w, NPU_POOL_MAX_KERNEL);
  if (d->stride_y < 1 || d->stride_x < 1 || d->stride_y > NPU_POOL_MAX_STRIDE ||
      d->stride_x > NPU_POOL_MAX_STRIDE)
    return dg_npu_why(why, n,
                      "stride %dx%d outside 1..%d (PPU stride fields are "
                      "4 bits)",
                      d->stride_y, d->stride_x, NPU_POOL_MAX_STRIDE);
  int pads[4] = {d->pad_top, d->pad_left, d->pad_bottom, d->pad_right};
  for (int i = 0; i < 4; i++)
    if (pads[i] < 0 || pads[i] > NPU_POOL_MAX_PAD)
      return dg_npu_why(why, n,
                        "padding %d outside 0..%d (PPU pad fields are 3 "
                        "bits)",
                        pads[i], NPU_POOL_MAX_PAD);
  /* 65536/1 does not fit the fp16 reciprocal: an average over a 1-wide
   * window is not expressible (and is a copy anyway). */
  if (d->method == NPU_POOL_AVG && (d->k_h < 2 || d->k_w < 2))
    return dg_npu_why(why, n,
                      "average over a %dx%d window (the fp16 reciprocal "
                      "65536/1 overflows)",
                      d->k_h, d->k_w);
  int dims[5] = {d->c, d->in_h, d->in_w, d->out_h, d->out_w};
  for (int i = 0; i < 5; i++)
    if (dims[i] < 1 || dims[i] > NPU_POOL_MAX_DIM)
      return dg_npu_why(why, n, "cube dimension %d outside 1..%d", dims[i],
                        NPU_POOL_MAX_DIM);
  if (d->out_h != npu_pool_out_dim(d->in_h, d->k_h, d->stride_y, d->pad_top,
                                   d->pad_bottom) ||
      d->out_w != npu_pool_out_dim(d->in_w, d->k_w, d->stride_x, d->pad_left,
                                   d->pad_right))
    return dg_npu_why(why, n,
                      "output %dx%d is not what the window, stride and "
                      "pads give",
                      d->out_h, d->out_w);
  if (d->method == NPU_POOL_AVG &&
      (d->pad_value < -2048 || d->pad_value > 2048))
    return dg_npu_why(why, n, "pad value %d not exact in fp16", d->pad_value);
  p->input_bytes = dg_npu_feature_bytes(d->c, d->in_h, d->in_w, 2);
  p->output_bytes = dg_npu_feature_bytes(d->c, d->out_h, d->out_w, 2);
  return true;
}

uint32_t dg_npu_pool_recip(int k) {
  return dg_f32_to_f16(65536.0f / (float)(k < 1 ? 1 : k));
}

/* What a tap outside the image reads: never wins a max (min), the zero
 * point for an average. Written only when the window pads, as in the
 * program that ran on hardware. */
static uint32_t pad_fill(const npu_pool_desc *d) {
  if (!(d->pad_top | d->pad_left | d->pad_bottom | d->pad_right))
    return 0;
  switch (d->method) {
  case NPU_POOL_MAX:
    return F16_NEG_INF;
  case NPU_POOL_MIN:
    return F16_POS_INF;
  default:
    return dg_f32_to_f16((float)d->pad_value);
  }
}

static void emit_ppu(gen *e, const npu_pool_desc *d) {
  bool avg = d->method == NPU_POOL_AVG;
  uint32_t out_surf = U(d->out_w * d->out_h); /* atoms per 8 channels */
  put(e, NPU_PPU_DATA_CUBE_IN_WIDTH, 1,
      F(PPU_DATA_CUBE_IN_WIDTH, CUBE_IN_WIDTH), U(d->in_w - 1));
  put(e, NPU_PPU_DATA_CUBE_IN_HEIGHT, 1,
      F(PPU_DATA_CUBE_IN_HEIGHT, CUBE_IN_HEIGHT), U(d->in_h - 1));
  put(e, NPU_PPU_DATA_CUBE_IN_CHANNEL, 1,
      F(PPU_DATA_CUBE_IN_CHANNEL, CUBE_IN_CHANNEL), U(d->c - 1));
  put(e, NPU_PPU_DATA_CUBE_OUT_WIDTH, 1,
      F(PPU_DATA_CUBE_OUT_WIDTH, CUBE_OUT_WIDTH), U(d->out_w - 1));
  put(e, NPU_PPU_DATA_CUBE_OUT_HEIGHT, 1,
      F(PPU_DATA_CUBE_OUT_HEIGHT, CUBE_OUT_HEIGHT), U(d->out_h - 1));
  put(e, NPU_PPU_DATA_CUBE_OUT_CHANNEL, 1,
      F(PPU_DATA_CUBE_OUT_CHANNEL, CUBE_OUT_CHANNEL), U(d->c - 1));
  /* FLYING_MODE 1: the cube comes from PPU_RDMA, not from the DPU. */
  put(e, NPU_PPU_OPERATION_MODE_CFG, 2, F(PPU_OPERATION_MODE_CFG, FLYING_MODE),
      1u, F(PPU_OPERATION_MODE_CFG, POOLING_METHOD), U(d->method));
  put(e, NPU_PPU_POOLING_KERNEL_CFG, 4, F(PPU_POOLING_KERNEL_CFG, KERNEL_WIDTH),
      U(d->k_w - 1), F(PPU_POOLING_KERNEL_CFG, KERNEL_HEIGHT), U(d->k_h - 1),
      F(PPU_POOLING_KERNEL_CFG, KERNEL_STRIDE_WIDTH), U(d->stride_x - 1),
      F(PPU_POOLING_KERNEL_CFG, KERNEL_STRIDE_HEIGHT), U(d->stride_y - 1));
  put(e, NPU_PPU_RECIP_KERNEL_WIDTH, 1,
      F(PPU_RECIP_KERNEL_WIDTH, RECIP_KERNEL_WIDTH),
      avg ? dg_npu_pool_recip(d->k_w) : 0u);
  put(e, NPU_PPU_RECIP_KERNEL_HEIGHT, 1,
      F(PPU_RECIP_KERNEL_HEIGHT, RECIP_KERNEL_HEIGHT),
      avg ? dg_npu_pool_recip(d->k_h) : 0u);
  put(e, NPU_PPU_POOLING_PADDING_CFG, 4, F(PPU_POOLING_PADDING_CFG, PAD_LEFT),
      U(d->pad_left), F(PPU_POOLING_PADDING_CFG, PAD_TOP), U(d->pad_top),
      F(PPU_POOLING_PADDING_CFG, PAD_RIGHT), U(d->pad_right),
      F(PPU_POOLING_PADDING_CFG, PAD_BOTTOM), U(d->pad_bottom));
  put(e, NPU_PPU_PADDING_VALUE_1_CFG, 1,
      F(PPU_PADDING_VALUE_1_CFG, PAD_VALUE_0), pad_fill(d));
  put(e, NPU_PPU_PADDING_VALUE_2_CFG, 0);
  put_addr(e, NPU_PPU_DST_BASE_ADDR, NPU_BUF_OUTPUT, 0);
  put(e, NPU_PPU_DST_SURF_STRIDE, 1, F(PPU_DST_SURF_STRIDE, DST_SURF_STRIDE),
      out_surf);
  /* INDEX_ADD equals the surface stride when no index is written (TRM). */
  put(e, NPU_PPU_DATA_FORMAT, 2, F(PPU_DATA_FORMAT, INDEX_ADD), out_surf,
      F(PPU_DATA_FORMAT, PROC_PRECISION), PPU_PROC_FP16);
  put(e, NPU_PPU_MISC_CTRL, 1, F(PPU_MISC_CTRL, BURST_LEN), 3u);
}

static void emit_rdma(gen *e, const npu_pool_desc *d) {
  put(e, NPU_PPU_RDMA_CUBE_IN_WIDTH, 1,
      F(PPU_RDMA_CUBE_IN_WIDTH, CUBE_IN_WIDTH), U(d->in_w - 1));
  put(e, NPU_PPU_RDMA_CUBE_IN_HEIGHT, 1,
      F(PPU_RDMA_CUBE_IN_HEIGHT, CUBE_IN_HEIGHT), U(d->in_h - 1));
  put(e, NPU_PPU_RDMA_CUBE_IN_CHANNEL, 1,
      F(PPU_RDMA_CUBE_IN_CHANNEL, CUBE_IN_CHANNEL), U(d->c - 1));
  put_addr(e, NPU_PPU_RDMA_SRC_BASE_ADDR, NPU_BUF_INPUT, 0);
  put(e, NPU_PPU_RDMA_SRC_LINE_STRIDE, 1,
      F(PPU_RDMA_SRC_LINE_STRIDE, SRC_LINE_STRIDE), U(d->in_w));
  put(e, NPU_PPU_RDMA_SRC_SURF_STRIDE, 1,
      F(PPU_RDMA_SRC_SURF_STRIDE, SRC_SURF_STRIDE), U(d->in_w * d->in_h));
  put(e, NPU_PPU_RDMA_DATA_FORMAT, 1, F(PPU_RDMA_DATA_FORMAT, IN_PRECISION),
      PPU_PROC_FP16);
}

bool dg_npu_gen_pool(const npu_pool_desc *d, npu_stream *s, char *why,
                     size_t n) {
  memset(s, 0, sizeof *s);
  npu_pool_plan p;
  if (!dg_npu_pool_plan_make(d, &p, why, n))
    return false;
  gen e = {s, -1};
  /* Ping-pong pointers as for the DPU (0xe), then the blocks. */
  put(&e, NPU_PPU_S_POINTER, 3, F(PPU_S_POINTER, POINTER_PP_MODE), 1u,
      F(PPU_S_POINTER, EXECUTER_PP_EN), 1u, F(PPU_S_POINTER, POINTER_PP_EN),
      1u);
  put(&e, NPU_PPU_RDMA_S_POINTER, 3, F(PPU_RDMA_S_POINTER, POINTER_PP_MODE), 1u,
      F(PPU_RDMA_S_POINTER, EXECUTER_PP_EN), 1u,
      F(PPU_RDMA_S_POINTER, POINTER_PP_EN), 1u);
  emit_ppu(&e, d);
  emit_rdma(&e, d);
  /* Trailer as for a conv; op-enable of the PPU and its reader only. */
  return finish(&e, NPU_EN_PPU | NPU_EN_PPU_RDMA, why, n);
}
