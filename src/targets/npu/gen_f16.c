/* Command-stream generator for one fp16 direct conv task (see gen.h).
 *
 * The register sequence is the int8 one (Mesa's order, gen.c); the values
 * that differ for fp16 (docs/npu.md, "fp16 convolution") were
 * cross-checked field by field against the vendor fp16 stream (the
 * vendor-fp16-conv golden set, docs/npu.md "Golden data";
 * tests/test_npu_f16.c lists every field that differs and why):
 *   - CNA, CORE and DPU precisions 2 (fp16 in, fp16 processing, fp16 out);
 *   - features in 8-channel atoms, weights in 16-kernel x 32-channel groups;
 *   - CBUF entries per input row = ceil(W x channel bytes / 64);
 *   - the DPU writes fp16 through OUT_CVT's fp32 -> fp16 converter
 *     (FP32TOFP16_EN, scale 1, shift 0), one element size (SIZE_E 1),
 *     SURF_ADD = 2 x the output plane, as in the vendor stream;
 *   - every DPU stage (bias, BN, eltwise, LUT) bypassed: the public fp16
 *     code never adds a bias on the NPU ([unverified]), so the
 *     caller adds it on the host; no requantisation (CORE QD_EN 0, as the
 *     vendor writes it).
 */
#include "gen.h"

#include "gen_emit.h"
#include "pack.h"

#include <stdio.h>
#include <string.h>

/* CBUF entries per input row: ceil(W x bytes per pixel / 64), the rule
 * both the int8 formula (Mesa) and the fp16 one (RUS, HW-confirmed
 * according to its author) reduce to; for fp16, ceil(W x C8 / 32). */
static int entries_per_row_f16(int c, int w) {
  return (w * npu_channels_f16(c) * 2 + 63) / 64;
}

static bool refuse(char *why, size_t n, const char *what) {
  snprintf(why, n, "%s", what);
  return false;
}

bool dg_npu_conv_plan_make_f16(const npu_conv_desc *d, npu_conv_plan *p,
                               char *why, size_t n) {
  memset(p, 0, sizeof *p);
  if (d->depthwise) {
    p->misfit = NPU_MISFIT_DEPTHWISE;
    return refuse(why, n, "fp16 depthwise conv: not generated yet");
  }
  if (d->x_zp || d->w_zp || d->y_zp || d->truncate_bits)
    return refuse(why, n, "fp16 conv with zero points or truncation");
  /* The limits and reasons of the int8 planner (gen.c), which the tiler
   * of lower.c reads the same way for both precisions. */
  if (!dg_npu_plan_sizes_fit(d, p, why, n))
    return false;
  int c8 = npu_channels_f16(d->in_c);
  size_t per_kernel = (size_t)d->k_h * d->k_w * c8 * 2;
  if (per_kernel > NPU_KERNEL_BYTES_MAX) {
    p->misfit = NPU_MISFIT_KERNEL;
    snprintf(why, n, "fp16 kernel %dx%dx%d = %zu B > %d KB bank", d->k_h,
             d->k_w, c8, per_kernel, NPU_KERNEL_BYTES_MAX / 1024);
    return false;
  }
  int entries = entries_per_row_f16(d->in_c, d->in_w);
  size_t wbytes = dg_npu_weight_bytes_f16(d->out_c, d->in_c, d->k_h, d->k_w);
  /* The int8 planner's bank rule, its spare weight bank (Mesa's) too. */
  if (!dg_npu_plan_banks(p, entries, d->in_h, wbytes, "fp16 ", why, n))
    return false;
  /* The CORE and DPU work in 16-channel groups (the vendor stream runs a
   * 1-channel conv as 16); the kernels themselves are not padded. */
  p->out_channels = npu_align(d->out_c, 16);
  p->input_bytes = dg_npu_feature_bytes(c8, d->in_h, d->in_w, 2);
  p->weight_bytes = wbytes;
  p->bias_bytes = 0;
  p->output_bytes =
      dg_npu_feature_bytes(p->out_channels, d->out_h, d->out_w, 2);
  return true;
}

static void cna_f16(gen *g, const npu_conv_desc *d, const npu_conv_plan *p) {
  const uint32_t fp16 = NPU_PREC_FP16;
  int c8 = npu_channels_f16(d->in_c);
  uint32_t kernel_bytes = U(d->k_w * d->k_h * c8 * 2);
  put(g, NPU_CNA_CBUF_CON0, 2, F(CNA_CBUF_CON0, WEIGHT_BANK),
      U(p->weight_banks), F(CNA_CBUF_CON0, DATA_BANK), U(p->data_banks));
  put(g, NPU_CNA_DCOMP_REGNUM, 0);
  put(g, NPU_CNA_DCOMP_CTRL, 0);
  put(g, NPU_CNA_CONV_CON1, 2, F(CNA_CONV_CON1, IN_PRECISION), fp16,
      F(CNA_CONV_CON1, PROC_PRECISION), fp16);
  put(g, NPU_DPU_S_POINTER, 3, F(DPU_S_POINTER, POINTER_PP_MODE), 1u,
      F(DPU_S_POINTER, EXECUTER_PP_EN), 1u, F(DPU_S_POINTER, POINTER_PP_EN),
      1u);
  put(g, NPU_DPU_RDMA_S_POINTER, 3, F(DPU_RDMA_S_POINTER, POINTER_PP_MODE), 1u,
      F(DPU_RDMA_S_POINTER, EXECUTER_PP_EN), 1u,
      F(DPU_RDMA_S_POINTER, POINTER_PP_EN), 1u);
  put(g, NPU_CNA_CONV_CON1, 2, F(CNA_CONV_CON1, IN_PRECISION), fp16,
      F(CNA_CONV_CON1, PROC_PRECISION), fp16);
  /* Mesa's grain count, as the int8 path (the vendor's 29 for its
   * 84-row input is not explained; RUS found the field insensitive). */
  put(g, NPU_CNA_CONV_CON2, 1, F(CNA_CONV_CON2, FEATURE_GRAINS),
      U(50 + d->stride_y + 1));
  put(g, NPU_CNA_CONV_CON3, 2, F(CNA_CONV_CON3, CONV_X_STRIDE), U(d->stride_x),
      F(CNA_CONV_CON3, CONV_Y_STRIDE), U(d->stride_y));
  put(g, NPU_CNA_DATA_SIZE0, 2, F(CNA_DATA_SIZE0, DATAIN_WIDTH), U(d->in_w),
      F(CNA_DATA_SIZE0, DATAIN_HEIGHT), U(d->in_h));
  put(g, NPU_CNA_DATA_SIZE1, 2, F(CNA_DATA_SIZE1, DATAIN_CHANNEL_REAL),
      U(d->in_c - 1), F(CNA_DATA_SIZE1, DATAIN_CHANNEL), U(c8));
  put(g, NPU_CNA_DATA_SIZE2, 1, F(CNA_DATA_SIZE2, DATAOUT_WIDTH), U(d->out_w));
  put(g, NPU_CNA_DATA_SIZE3, 1, F(CNA_DATA_SIZE3, DATAOUT_ATOMICS),
      U(d->out_w * d->out_h));
  put(g, NPU_CNA_WEIGHT_SIZE0, 1, F(CNA_WEIGHT_SIZE0, WEIGHT_BYTES),
      U(kernel_bytes * (uint32_t)d->out_c));
  put(g, NPU_CNA_WEIGHT_SIZE1, 1, F(CNA_WEIGHT_SIZE1, WEIGHT_BYTES_PER_KERNEL),
      kernel_bytes);
  put(g, NPU_CNA_WEIGHT_SIZE2, 3, F(CNA_WEIGHT_SIZE2, WEIGHT_WIDTH), U(d->k_w),
      F(CNA_WEIGHT_SIZE2, WEIGHT_HEIGHT), U(d->k_h),
      F(CNA_WEIGHT_SIZE2, WEIGHT_KERNELS), U(d->out_c));
  put(g, NPU_CNA_CBUF_CON0, 2, F(CNA_CBUF_CON0, WEIGHT_BANK),
      U(p->weight_banks), F(CNA_CBUF_CON0, DATA_BANK), U(p->data_banks));
  put(g, NPU_CNA_CBUF_CON1, 1, F(CNA_CBUF_CON1, DATA_ENTRIES),
      U(p->data_entries));
  /* Input converter bypassed, as the vendor writes it for fp16 (the
   * DATA_SIGN/CVT_TYPE bits Mesa sets for int8 are left clear). */
  put(g, NPU_CNA_CVT_CON0, 1, F(CNA_CVT_CON0, CVT_BYPASS), 1u);
  put(g, NPU_CNA_CVT_CON1, 1, F(CNA_CVT_CON1, CVT_SCALE0), 1u);
  put(g, NPU_CNA_CVT_CON2, 1, F(CNA_CVT_CON2, CVT_SCALE1), 1u);
  put(g, NPU_CNA_CVT_CON3, 1, F(CNA_CVT_CON3, CVT_SCALE2), 1u);
  put(g, NPU_CNA_CVT_CON4, 1, F(CNA_CVT_CON4, CVT_SCALE3), 1u);
  put(g, NPU_CNA_FC_CON0, 0);
  put(g, NPU_CNA_FC_CON1, 0);
  put(g, NPU_CNA_PAD_CON0, 2, F(CNA_PAD_CON0, PAD_LEFT), U(d->pad_left),
      F(CNA_PAD_CON0, PAD_TOP), U(d->pad_top));
  put_addr(g, NPU_CNA_FEATURE_DATA_ADDR, NPU_BUF_INPUT, 0);
  put(g, NPU_CNA_FC_CON2, 0);
  put(g, NPU_CNA_DMA_CON0, 2, F(CNA_DMA_CON0, WEIGHT_BURST_LEN), 15u,
      F(CNA_DMA_CON0, DATA_BURST_LEN), 15u);
  /* The atom is 16 bytes for fp16 as for int8: the same strides. */
  int surf = d->in_w * (d->in_h - 4);
  put(g, NPU_CNA_DMA_CON1, 1, F(CNA_DMA_CON1, LINE_STRIDE), U(d->in_w * 4));
  put(g, NPU_CNA_DMA_CON2, 1, F(CNA_DMA_CON2, SURF_STRIDE),
      U(surf < 0 ? 0 : surf));
  put(g, NPU_CNA_FC_DATA_SIZE0, 2, F(CNA_FC_DATA_SIZE0, DMA_WIDTH), U(d->in_w),
      F(CNA_FC_DATA_SIZE0, DMA_HEIGHT), U(d->in_h));
  put(g, NPU_CNA_FC_DATA_SIZE1, 1, F(CNA_FC_DATA_SIZE1, DMA_CHANNEL), U(c8));
  put(g, NPU_CNA_DCOMP_CTRL, 0);
  put(g, NPU_CNA_DCOMP_REGNUM, 0);
  put_addr(g, NPU_CNA_DCOMP_ADDR0, NPU_BUF_WEIGHTS, 0);
  for (int i = 0; i < 16; i++)
    put(g, (npu_reg)(NPU_CNA_DCOMP_AMOUNT0 + i), 0);
  put(g, NPU_CNA_CVT_CON5, 0);
  put(g, NPU_CNA_PAD_CON1, 0); /* pad with +0.0 */
}

static void core_f16(gen *g, const npu_conv_desc *d, const npu_conv_plan *p) {
  put(g, NPU_CORE_MISC_CFG, 1, F(CORE_MISC_CFG, PROC_PRECISION),
      U(NPU_PREC_FP16));
  put(g, NPU_CORE_DATAOUT_SIZE_0, 2, F(CORE_DATAOUT_SIZE_0, DATAOUT_HEIGHT),
      U(d->out_h - 1), F(CORE_DATAOUT_SIZE_0, DATAOUT_WIDTH), U(d->out_w - 1));
  put(g, NPU_CORE_DATAOUT_SIZE_1, 1, F(CORE_DATAOUT_SIZE_1, DATAOUT_CHANNEL),
      U(p->out_channels - 1));
  put(g, NPU_CORE_CLIP_TRUNCATE, 0);
  put(g, NPU_CORE_UNKNOWN_3030, 0);
}

static void dpu_f16(gen *g, const npu_conv_desc *d, const npu_conv_plan *p) {
  const uint32_t fp16 = NPU_PREC_FP16;
  uint32_t out_atoms = U(d->out_w * d->out_h);
  put(g, NPU_DPU_FEATURE_MODE_CFG, 2, F(DPU_FEATURE_MODE_CFG, BURST_LEN), 15u,
      F(DPU_FEATURE_MODE_CFG, OUTPUT_MODE), 2u);
  put(g, NPU_DPU_DATA_FORMAT, 3, F(DPU_DATA_FORMAT, OUT_PRECISION), fp16,
      F(DPU_DATA_FORMAT, IN_PRECISION), fp16,
      F(DPU_DATA_FORMAT, PROC_PRECISION), fp16);
  put(g, NPU_DPU_OFFSET_PEND, 0);
  put_addr(g, NPU_DPU_DST_BASE_ADDR, NPU_BUF_OUTPUT, 0);
  put(g, NPU_DPU_DST_SURF_STRIDE, 1, F(DPU_DST_SURF_STRIDE, DST_SURF_STRIDE),
      out_atoms);
  put(g, NPU_DPU_DATA_CUBE_WIDTH, 1, F(DPU_DATA_CUBE_WIDTH, WIDTH),
      U(d->out_w - 1));
  put(g, NPU_DPU_DATA_CUBE_HEIGHT, 1, F(DPU_DATA_CUBE_HEIGHT, HEIGHT),
      U(d->out_h - 1));
  put(g, NPU_DPU_DATA_CUBE_NOTCH_ADDR, 0);
  put(g, NPU_DPU_DATA_CUBE_CHANNEL, 2, F(DPU_DATA_CUBE_CHANNEL, ORIG_CHANNEL),
      U(d->out_c - 1), F(DPU_DATA_CUBE_CHANNEL, CHANNEL),
      U(p->out_channels - 1));
  /* BS, BN and EW bypassed: no bias, no activation on the NPU. */
  put(g, NPU_DPU_BS_CFG, 4, F(DPU_BS_CFG, BS_RELU_BYPASS), 1u,
      F(DPU_BS_CFG, BS_MUL_BYPASS), 1u, F(DPU_BS_CFG, BS_ALU_BYPASS), 1u,
      F(DPU_BS_CFG, BS_BYPASS), 1u);
  put(g, NPU_DPU_BS_ALU_CFG, 0);
  put(g, NPU_DPU_BS_MUL_CFG, 0);
  put(g, NPU_DPU_BS_RELUX_CMP_VALUE, 0);
  /* One element size for fp16 out; OD_BYPASS as the vendor (and RUS). */
  put(g, NPU_DPU_BS_OW_CFG, 4, F(DPU_BS_OW_CFG, SIZE_E_2), 1u,
      F(DPU_BS_OW_CFG, SIZE_E_1), 1u, F(DPU_BS_OW_CFG, SIZE_E_0), 1u,
      F(DPU_BS_OW_CFG, OD_BYPASS), 1u);
  put(g, NPU_DPU_BS_OW_OP, 0);
  put(g, NPU_DPU_WDMA_SIZE_0, 1, F(DPU_WDMA_SIZE_0, CHANNEL_WDMA),
      U(p->out_channels - 1));
  put(g, NPU_DPU_WDMA_SIZE_1, 2, F(DPU_WDMA_SIZE_1, HEIGHT_WDMA),
      U(d->out_h - 1), F(DPU_WDMA_SIZE_1, WIDTH_WDMA), U(d->out_w - 1));
  put(g, NPU_DPU_BN_CFG, 4, F(DPU_BN_CFG, BN_RELU_BYPASS), 1u,
      F(DPU_BN_CFG, BN_MUL_BYPASS), 1u, F(DPU_BN_CFG, BN_ALU_BYPASS), 1u,
      F(DPU_BN_CFG, BN_BYPASS), 1u);
  put(g, NPU_DPU_BN_ALU_CFG, 0);
  put(g, NPU_DPU_BN_MUL_CFG, 0);
  put(g, NPU_DPU_BN_RELUX_CMP_VALUE, 0);
  put(g, NPU_DPU_EW_CFG, 5, F(DPU_EW_CFG, EW_RELU_BYPASS), 1u,
      F(DPU_EW_CFG, EW_OP_CVT_BYPASS), 1u, F(DPU_EW_CFG, EW_LUT_BYPASS), 1u,
      F(DPU_EW_CFG, EW_OP_BYPASS), 1u, F(DPU_EW_CFG, EW_BYPASS), 1u);
  put(g, NPU_DPU_EW_CVT_OFFSET_VALUE, 0);
  put(g, NPU_DPU_EW_CVT_SCALE_VALUE, 1,
      F(DPU_EW_CVT_SCALE_VALUE, EW_OP_CVT_SCALE), 1u);
  put(g, NPU_DPU_EW_RELUX_CMP_VALUE, 0);
  /* The fp32 accumulator to fp16: scale 1, shift 0, the converter on. */
  put(g, NPU_DPU_OUT_CVT_OFFSET, 0);
  put(g, NPU_DPU_OUT_CVT_SCALE, 2, F(DPU_OUT_CVT_SCALE, FP32TOFP16_EN), 1u,
      F(DPU_OUT_CVT_SCALE, OUT_CVT_SCALE), 1u);
  put(g, NPU_DPU_OUT_CVT_SHIFT, 0);
  for (int i = 0; i < 8; i++)
    put(g, (npu_reg)(NPU_DPU_EW_OP_VALUE_0 + i), 0);
  put(g, NPU_DPU_SURFACE_ADD, 1, F(DPU_SURFACE_ADD, SURF_ADD), out_atoms * 2);
  put(g, NPU_DPU_UNKNOWN_40C4, 0);
  for (npu_reg r = NPU_DPU_LUT_ACCESS_CFG; r <= NPU_DPU_LUT_LO_SLOPE_SHIFT;
       r = (npu_reg)(r + 1))
    put(g, r, 0);
}

/* DPU_RDMA is programmed (and enabled) although nothing is read: on
 * mainline a DPU job without it hangs (the "MRDMA trap", docs/npu.md,
 * "Command lists"). */
static void dpu_rdma_f16(gen *g, const npu_conv_desc *d,
                         const npu_conv_plan *p) {
  put(g, NPU_DPU_RDMA_DATA_CUBE_WIDTH, 1, F(DPU_RDMA_DATA_CUBE_WIDTH, WIDTH),
      U(d->out_w - 1));
  put(g, NPU_DPU_RDMA_DATA_CUBE_HEIGHT, 1, F(DPU_RDMA_DATA_CUBE_HEIGHT, HEIGHT),
      U(d->out_h - 1));
  put(g, NPU_DPU_RDMA_DATA_CUBE_CHANNEL, 1,
      F(DPU_RDMA_DATA_CUBE_CHANNEL, CHANNEL), U(p->out_channels - 1));
  put(g, NPU_DPU_RDMA_SRC_BASE_ADDR, 0);
  put(g, NPU_DPU_RDMA_BRDMA_CFG, 0); /* no bias read */
  put(g, NPU_DPU_RDMA_BS_BASE_ADDR, 0);
  put(g, NPU_DPU_RDMA_NRDMA_CFG, 0);
  put(g, NPU_DPU_RDMA_BN_BASE_ADDR, 0);
  put(g, NPU_DPU_RDMA_ERDMA_CFG, 1, F(DPU_RDMA_ERDMA_CFG, ERDMA_DISABLE), 1u);
  put(g, NPU_DPU_RDMA_EW_BASE_ADDR, 0);
  put(g, NPU_DPU_RDMA_EW_SURF_STRIDE, 0);
  put(g, NPU_DPU_RDMA_FEATURE_MODE_CFG, 2,
      F(DPU_RDMA_FEATURE_MODE_CFG, BURST_LEN), 15u,
      F(DPU_RDMA_FEATURE_MODE_CFG, MRDMA_DISABLE), 1u);
  put(g, NPU_DPU_RDMA_SRC_DMA_CFG, 0);
  put(g, NPU_DPU_RDMA_SURF_NOTCH, 0);
  put(g, NPU_DPU_RDMA_PAD_CFG, 0);
  put(g, NPU_DPU_RDMA_WEIGHT, 4, F(DPU_RDMA_WEIGHT, E_WEIGHT), 1u,
      F(DPU_RDMA_WEIGHT, N_WEIGHT), 1u, F(DPU_RDMA_WEIGHT, B_WEIGHT), 1u,
      F(DPU_RDMA_WEIGHT, M_WEIGHT), 1u);
  put(g, NPU_DPU_RDMA_EW_SURF_NOTCH, 0);
}

bool dg_npu_gen_conv_f16(const npu_conv_desc *d, npu_stream *s, char *why,
                         size_t n) {
  memset(s, 0, sizeof *s);
  npu_conv_plan p;
  if (!dg_npu_conv_plan_make_f16(d, &p, why, n))
    return false;
  gen g = {s, -1};
  cna_f16(&g, d, &p);
  core_f16(&g, d, &p);
  dpu_f16(&g, d, &p);
  dpu_rdma_f16(&g, d, &p);
  /* The int8 trailer: op-enable of CNA|CORE|DPU|DPU_RDMA. */
  return finish(&g, NPU_EN_CNA | NPU_EN_CORE | NPU_EN_DPU | NPU_EN_DPU_RDMA,
                why, n);
}
