/* Command-stream generator for one int8 conv task (see gen.h). */
#include "gen.h"

#include "gen_emit.h"
#include "pack.h"

#include <stdio.h>
#include <string.h>

#define CBUF_BANKS 12
#define CBUF_ENTRIES_PER_BANK 256
#define CBUF_ENTRY_BYTES 128

/* Input CBUF entries per row as the CNA is programmed with them (Mesa's
 * formula, x2 of the natural atoms/8; hardware-validated). The bank budget
 * must come from the same number the simulator and the hardware use, or a
 * conv is accepted here and then fails at compile (npu-report found 7
 * such layers). */
static int entries_per_row(int c, int w) {
  return (w * 2 * ((c + 15) / 16) + 7) / 8;
}

bool dg_npu_plan_sizes_fit(const npu_conv_desc *d, npu_conv_plan *p, char *why,
                           size_t n) {
  /* CNA_DATA_SIZE0/2 hold the input width/height and the output width in
   * 11 bits; the tiler splits the height, nothing splits the width. */
  if (d->in_w <= NPU_MAX_DIM && d->out_w <= NPU_MAX_DIM &&
      d->in_h <= NPU_MAX_DIM)
    return true;
  p->misfit = NPU_MISFIT_SIZE;
  if (d->in_h > NPU_MAX_DIM)
    snprintf(why, n, "height %d > %d", d->in_h, NPU_MAX_DIM);
  else
    snprintf(why, n, "width %d > %d", d->in_w > d->out_w ? d->in_w : d->out_w,
             NPU_MAX_DIM);
  return false;
}

bool dg_npu_plan_banks(npu_conv_plan *p, int entries_per_row, int in_h,
                       size_t wbytes, const char *what, char *why, size_t n) {
  int data_banks = (entries_per_row * in_h + CBUF_ENTRIES_PER_BANK - 1) /
                   CBUF_ENTRIES_PER_BANK;
  size_t wentries = (wbytes + CBUF_ENTRY_BYTES - 1) / CBUF_ENTRY_BYTES;
  /* Mesa adds a spare weight bank ("the calc above might be wrong"). */
  int weight_banks =
      (int)((wentries + CBUF_ENTRIES_PER_BANK - 1) / CBUF_ENTRIES_PER_BANK) + 1;
  p->data_banks = data_banks, p->weight_banks = weight_banks;
  if (data_banks + weight_banks > CBUF_BANKS) {
    p->misfit = NPU_MISFIT_BANKS;
    snprintf(why, n, "%sneeds %d data + %d weight CBUF banks > %d", what,
             data_banks, weight_banks, CBUF_BANKS);
    return false;
  }
  /* The CNA gets every bank the input does not need. */
  p->data_entries = entries_per_row;
  p->weight_banks = CBUF_BANKS - data_banks;
  return true;
}

bool dg_npu_conv_plan_make(const npu_conv_desc *d, npu_conv_plan *p, char *why,
                           size_t n) {
  if (d->precision == NPU_PREC_FP16)
    return dg_npu_conv_plan_make_f16(d, p, why, n);
  memset(p, 0, sizeof *p);
  if (d->depthwise && d->in_c != d->out_c) {
    p->misfit = NPU_MISFIT_DEPTHWISE;
    snprintf(why, n, "depthwise with channel multiplier != 1");
    return false;
  }
  if (!dg_npu_plan_sizes_fit(d, p, why, n))
    return false;
  /* One kernel's weights must sit in one bank (the simulator checks
   * CNA_WEIGHT_SIZE1 against it; MTX declines the same way). */
  int c16 = npu_channels16(d->in_c);
  size_t per_kernel = (size_t)d->k_w * d->k_h * c16;
  if (per_kernel > NPU_KERNEL_BYTES_MAX) {
    p->misfit = NPU_MISFIT_KERNEL;
    snprintf(why, n, "kernel %dx%dx%d = %zu B > %d KB bank", d->k_h, d->k_w,
             c16, per_kernel, NPU_KERNEL_BYTES_MAX / 1024);
    return false;
  }
  /* The weight bytes the CNA is programmed with (CNA_WEIGHT_SIZE0:
   * channels padded to 16, kernels to an even count), not the tensor's:
   * for 3 input channels the two differ five-fold. */
  size_t wbytes = per_kernel * (size_t)npu_kernels(d->out_c, d->depthwise);
  if (!dg_npu_plan_banks(p, entries_per_row(d->in_c, d->in_w), d->in_h, wbytes,
                         "", why, n))
    return false;
  int oc = npu_align(d->out_c < 32 ? 32 : d->out_c, 32);
  if (d->depthwise) {
    if (d->out_c <= 32)
      oc *= 2;
    oc = npu_align(oc, 64);
  }
  p->out_channels = oc;
  /* Mesa allocates feature cubes with the channel groups doubled; keep
   * the slack so that its dumps compare byte for byte. */
  p->input_bytes = 2 * dg_npu_feature_bytes(d->in_c, d->in_h, d->in_w, 1);
  p->weight_bytes = dg_npu_weight_buffer_bytes(d->out_c, d->in_c, d->k_h,
                                               d->k_w, d->depthwise);
  /* Per channel, BRDMA reads a 64-byte group per 8 channels (pack.h);
   * sized for every channel the DPU produces, padding included. */
  p->bias_bytes = d->per_channel ? (size_t)(oc / 8) * NPU_BS_GROUP_BYTES
                                 : (size_t)d->out_c * 4;
  size_t out_cube = dg_npu_feature_bytes(oc, d->out_h, d->out_w, 1);
  size_t mesa_out = 2 * dg_npu_feature_bytes(d->out_c, d->out_h, d->out_w, 1);
  p->output_bytes = out_cube > mesa_out ? out_cube : mesa_out;
  return true;
}

/* PAD_CON1 for pad byte x_zp: the byte in both bytes of the low half, sign
 * extended (the shape of Mesa's 0xffff8080 and 0x0b0b). Odd channel lanes
 * below 32 read byte 1 (sim.c, pad_lane), so the plain sign-extended value
 * would pad them with 0 or -1 instead of the zero point. */
static uint32_t pad_word(int32_t x_zp) {
  uint32_t b = (uint32_t)x_zp & 0xffu;
  return b * 0x101u | (b & 0x80u ? 0xffff0000u : 0u);
}

bool dg_npu_gen_conv(const npu_conv_desc *d, npu_stream *s, char *why,
                     size_t n) {
  if (d->precision == NPU_PREC_FP16)
    return dg_npu_gen_conv_f16(d, s, why, n);
  memset(s, 0, sizeof *s);
  npu_conv_plan p;
  if (!dg_npu_conv_plan_make(d, &p, why, n))
    return false;
  if (d->per_channel &&
      (d->truncate_bits || d->bs_shift < 0 || d->bs_shift > 63)) {
    snprintf(why, n, "per-channel requantisation with truncate %d, shift %d",
             d->truncate_bits, d->bs_shift);
    return false;
  }
  uint32_t cvt_scale, cvt_shift;
  if (!dg_npu_requant_regs(d->multiplier, d->truncate_bits, &cvt_scale,
                           &cvt_shift)) {
    snprintf(why, n, "requantisation multiplier %g out of the DPU's range",
             (double)d->multiplier);
    return false;
  }
  gen g = {s, -1};
  bool dw = d->depthwise;
  int c16 = npu_channels16(d->in_c), kernels = npu_kernels(d->out_c, dw);
  int out_atoms = d->out_w * d->out_h;
  uint32_t conv_mode = dw ? 3 : 0;

  put(&g, NPU_CNA_CBUF_CON0, 2, F(CNA_CBUF_CON0, WEIGHT_BANK),
      U(p.weight_banks), F(CNA_CBUF_CON0, DATA_BANK), U(p.data_banks));
  put(&g, NPU_CNA_DCOMP_REGNUM, 0);
  put(&g, NPU_CNA_DCOMP_CTRL, 0);
  put(&g, NPU_CNA_CONV_CON1, 1, F(CNA_CONV_CON1, CONV_MODE), conv_mode);
  put(&g, NPU_DPU_S_POINTER, 3, F(DPU_S_POINTER, POINTER_PP_MODE), 1u,
      F(DPU_S_POINTER, EXECUTER_PP_EN), 1u, F(DPU_S_POINTER, POINTER_PP_EN),
      1u);
  put(&g, NPU_DPU_RDMA_S_POINTER, 3, F(DPU_RDMA_S_POINTER, POINTER_PP_MODE), 1u,
      F(DPU_RDMA_S_POINTER, EXECUTER_PP_EN), 1u,
      F(DPU_RDMA_S_POINTER, POINTER_PP_EN), 1u);
  put(&g, NPU_CNA_CONV_CON1, 1, F(CNA_CONV_CON1, CONV_MODE), conv_mode);
  /* 50 + stride + 1: Mesa's "magic" grain count (TRM suggests
   * stride + kernel_h + 1); kept because it is what ran on hardware. */
  put(&g, NPU_CNA_CONV_CON2, 1, F(CNA_CONV_CON2, FEATURE_GRAINS),
      U(50 + d->stride_y + 1));
  put(&g, NPU_CNA_CONV_CON3, 2, F(CNA_CONV_CON3, CONV_X_STRIDE), U(d->stride_x),
      F(CNA_CONV_CON3, CONV_Y_STRIDE), U(d->stride_y));
  put(&g, NPU_CNA_DATA_SIZE0, 2, F(CNA_DATA_SIZE0, DATAIN_WIDTH), U(d->in_w),
      F(CNA_DATA_SIZE0, DATAIN_HEIGHT), U(d->in_h));
  put(&g, NPU_CNA_DATA_SIZE1, 2, F(CNA_DATA_SIZE1, DATAIN_CHANNEL_REAL),
      U(d->in_c - 1), F(CNA_DATA_SIZE1, DATAIN_CHANNEL), U(c16));
  put(&g, NPU_CNA_DATA_SIZE2, 1, F(CNA_DATA_SIZE2, DATAOUT_WIDTH), U(d->out_w));
  put(&g, NPU_CNA_DATA_SIZE3, 1, F(CNA_DATA_SIZE3, DATAOUT_ATOMICS),
      U(out_atoms));
  put(&g, NPU_CNA_WEIGHT_SIZE0, 1, F(CNA_WEIGHT_SIZE0, WEIGHT_BYTES),
      U(d->k_w * d->k_h * c16 * kernels));
  put(&g, NPU_CNA_WEIGHT_SIZE1, 1, F(CNA_WEIGHT_SIZE1, WEIGHT_BYTES_PER_KERNEL),
      U(d->k_w * d->k_h * c16));
  put(&g, NPU_CNA_WEIGHT_SIZE2, 3, F(CNA_WEIGHT_SIZE2, WEIGHT_WIDTH), U(d->k_w),
      F(CNA_WEIGHT_SIZE2, WEIGHT_HEIGHT), U(d->k_h),
      F(CNA_WEIGHT_SIZE2, WEIGHT_KERNELS), U(kernels));
  put(&g, NPU_CNA_CBUF_CON0, 2, F(CNA_CBUF_CON0, WEIGHT_BANK),
      U(p.weight_banks), F(CNA_CBUF_CON0, DATA_BANK), U(p.data_banks));
  put(&g, NPU_CNA_CBUF_CON1, 1, F(CNA_CBUF_CON1, DATA_ENTRIES),
      U(p.data_entries));
  put(&g, NPU_CNA_CVT_CON0, 3, F(CNA_CVT_CON0, DATA_SIGN), 1u,
      F(CNA_CVT_CON0, CVT_TYPE), 1u, F(CNA_CVT_CON0, CVT_BYPASS), 1u);
  put(&g, NPU_CNA_CVT_CON1, 1, F(CNA_CVT_CON1, CVT_SCALE0), 1u);
  put(&g, NPU_CNA_CVT_CON2, 1, F(CNA_CVT_CON2, CVT_SCALE1), 1u);
  put(&g, NPU_CNA_CVT_CON3, 1, F(CNA_CVT_CON3, CVT_SCALE2), 1u);
  put(&g, NPU_CNA_CVT_CON4, 1, F(CNA_CVT_CON4, CVT_SCALE3), 1u);
  put(&g, NPU_CNA_FC_CON0, 0);
  put(&g, NPU_CNA_FC_CON1, 0);
  put(&g, NPU_CNA_PAD_CON0, 2, F(CNA_PAD_CON0, PAD_LEFT), U(d->pad_left),
      F(CNA_PAD_CON0, PAD_TOP), U(d->pad_top));
  put_addr(&g, NPU_CNA_FEATURE_DATA_ADDR, NPU_BUF_INPUT, 0);
  put(&g, NPU_CNA_FC_CON2, 0);
  put(&g, NPU_CNA_DMA_CON0, 2, F(CNA_DMA_CON0, WEIGHT_BURST_LEN), 15u,
      F(CNA_DMA_CON0, DATA_BURST_LEN), 15u);
  /* Mesa's strides: line = W*16/4; surface = line*(H/4 - 1) = W*(H-4),
   * clamped at 0 (its float maths goes negative below H = 4). */
  int surf = d->in_w * (d->in_h - 4);
  put(&g, NPU_CNA_DMA_CON1, 1, F(CNA_DMA_CON1, LINE_STRIDE), U(d->in_w * 4));
  put(&g, NPU_CNA_DMA_CON2, 1, F(CNA_DMA_CON2, SURF_STRIDE),
      U(surf < 0 ? 0 : surf));
  put(&g, NPU_CNA_FC_DATA_SIZE0, 2, F(CNA_FC_DATA_SIZE0, DMA_WIDTH), U(d->in_w),
      F(CNA_FC_DATA_SIZE0, DMA_HEIGHT), U(d->in_h));
  put(&g, NPU_CNA_FC_DATA_SIZE1, 1, F(CNA_FC_DATA_SIZE1, DMA_CHANNEL), U(c16));
  put(&g, NPU_CNA_DCOMP_CTRL, 0);
  put(&g, NPU_CNA_DCOMP_REGNUM, 0);
  put_addr(&g, NPU_CNA_DCOMP_ADDR0, NPU_BUF_WEIGHTS, 0);
  for (int i = 0; i < 16; i++)
    put(&g, (npu_reg)(NPU_CNA_DCOMP_AMOUNT0 + i), 0);
  put(&g, NPU_CNA_CVT_CON5, 0);
  put(&g, NPU_CNA_PAD_CON1, 1, F(CNA_PAD_CON1, PAD_VALUE), pad_word(d->x_zp));

  put(&g, NPU_CORE_MISC_CFG, 2, F(CORE_MISC_CFG, QD_EN), 1u,
      F(CORE_MISC_CFG, DW_EN), U(dw));
  put(&g, NPU_CORE_DATAOUT_SIZE_0, 2, F(CORE_DATAOUT_SIZE_0, DATAOUT_HEIGHT),
      U(d->out_h - 1), F(CORE_DATAOUT_SIZE_0, DATAOUT_WIDTH), U(d->out_w - 1));
  put(&g, NPU_CORE_DATAOUT_SIZE_1, 1, F(CORE_DATAOUT_SIZE_1, DATAOUT_CHANNEL),
      U(p.out_channels - 1));
  put(&g, NPU_CORE_CLIP_TRUNCATE, 1, F(CORE_CLIP_TRUNCATE, CLIP_TRUNCATE),
      U(d->truncate_bits));
  put(&g, NPU_CORE_UNKNOWN_3030, 0);

  put(&g, NPU_DPU_FEATURE_MODE_CFG, 3, F(DPU_FEATURE_MODE_CFG, BURST_LEN), 15u,
      F(DPU_FEATURE_MODE_CFG, OUTPUT_MODE), 2u,
      F(DPU_FEATURE_MODE_CFG, CONV_MODE), conv_mode);
  /* The BS multiplier's shift of a negative product (RUS: the hardware
   * shifts by sign, both fields set or negative values come back at the
   * wrong scale); 0 when the multiplier is bypassed. */
  uint32_t bs_shift = d->per_channel ? U(d->bs_shift) : 0u;
  put(&g, NPU_DPU_DATA_FORMAT, 1, F(DPU_DATA_FORMAT, BS_MUL_SHIFT_VALUE_NEG),
      bs_shift);
  put(&g, NPU_DPU_OFFSET_PEND, 0);
  put_addr(&g, NPU_DPU_DST_BASE_ADDR, NPU_BUF_OUTPUT, 0);
  put(&g, NPU_DPU_DST_SURF_STRIDE, 1, F(DPU_DST_SURF_STRIDE, DST_SURF_STRIDE),
      U(out_atoms));
  put(&g, NPU_DPU_DATA_CUBE_WIDTH, 1, F(DPU_DATA_CUBE_WIDTH, WIDTH),
      U(d->out_w - 1));
  put(&g, NPU_DPU_DATA_CUBE_HEIGHT, 1, F(DPU_DATA_CUBE_HEIGHT, HEIGHT),
      U(d->out_h - 1));
  put(&g, NPU_DPU_DATA_CUBE_NOTCH_ADDR, 0);
  put(&g, NPU_DPU_DATA_CUBE_CHANNEL, 2, F(DPU_DATA_CUBE_CHANNEL, ORIG_CHANNEL),
      U(d->out_c - 1), F(DPU_DATA_CUBE_CHANNEL, CHANNEL),
      U(p.out_channels - 1));
  /* Bias: per-channel add from BRDMA, ReLU bypassed; the multiplier too,
   * unless the channels have their own (then from BRDMA, shifted). */
  put(&g, NPU_DPU_BS_CFG, 4, F(DPU_BS_CFG, BS_ALU_ALGO), 2u,
      F(DPU_BS_CFG, BS_ALU_SRC), 1u, F(DPU_BS_CFG, BS_RELU_BYPASS), 1u,
      F(DPU_BS_CFG, BS_MUL_BYPASS), U(!d->per_channel));
  put(&g, NPU_DPU_BS_ALU_CFG, 0);
  put(&g, NPU_DPU_BS_MUL_CFG, 2, F(DPU_BS_MUL_CFG, BS_MUL_SRC),
      U(d->per_channel), F(DPU_BS_MUL_CFG, BS_MUL_SHIFT_VALUE), bs_shift);
  put(&g, NPU_DPU_BS_RELUX_CMP_VALUE, 0);
  uint32_t size_e = dw ? 3 : 1;
  put(&g, NPU_DPU_BS_OW_CFG, 3, F(DPU_BS_OW_CFG, SIZE_E_2), size_e,
      F(DPU_BS_OW_CFG, SIZE_E_1), size_e, F(DPU_BS_OW_CFG, SIZE_E_0), size_e);
  /* Weight zero point: the hardware adds OW_OP x (input window sum). */
  put(&g, NPU_DPU_BS_OW_OP, 1, F(DPU_BS_OW_OP, OW_OP), U(-d->w_zp) & 0xffffu);
  put(&g, NPU_DPU_WDMA_SIZE_0, 1, F(DPU_WDMA_SIZE_0, CHANNEL_WDMA),
      U(p.out_channels - 1));
  put(&g, NPU_DPU_WDMA_SIZE_1, 2, F(DPU_WDMA_SIZE_1, HEIGHT_WDMA),
      U(d->out_h - 1), F(DPU_WDMA_SIZE_1, WIDTH_WDMA), U(d->out_w - 1));
  put(&g, NPU_DPU_BN_CFG, 4, F(DPU_BN_CFG, BN_RELU_BYPASS), 1u,
      F(DPU_BN_CFG, BN_MUL_BYPASS), 1u, F(DPU_BN_CFG, BN_ALU_BYPASS), 1u,
      F(DPU_BN_CFG, BN_BYPASS), 1u);
  put(&g, NPU_DPU_BN_ALU_CFG, 0);
  put(&g, NPU_DPU_BN_MUL_CFG, 0);
  put(&g, NPU_DPU_BN_RELUX_CMP_VALUE, 0);
  put(&g, NPU_DPU_EW_CFG, 5, F(DPU_EW_CFG, EW_RELU_BYPASS), 1u,
      F(DPU_EW_CFG, EW_OP_CVT_BYPASS), 1u, F(DPU_EW_CFG, EW_LUT_BYPASS), 1u,
      F(DPU_EW_CFG, EW_OP_BYPASS), 1u, F(DPU_EW_CFG, EW_BYPASS), 1u);
  put(&g, NPU_DPU_EW_CVT_OFFSET_VALUE, 0);
  put(&g, NPU_DPU_EW_CVT_SCALE_VALUE, 1,
      F(DPU_EW_CVT_SCALE_VALUE, EW_OP_CVT_SCALE), 1u);
  put(&g, NPU_DPU_EW_RELUX_CMP_VALUE, 0);
  put(&g, NPU_DPU_OUT_CVT_OFFSET, 1, F(DPU_OUT_CVT_OFFSET, OUT_CVT_OFFSET),
      U(d->y_zp));
  put(&g, NPU_DPU_OUT_CVT_SCALE, 1, F(DPU_OUT_CVT_SCALE, OUT_CVT_SCALE),
      cvt_scale);
  put(&g, NPU_DPU_OUT_CVT_SHIFT, 1, F(DPU_OUT_CVT_SHIFT, OUT_CVT_SHIFT),
      cvt_shift);
  for (int i = 0; i < 8; i++)
    put(&g, (npu_reg)(NPU_DPU_EW_OP_VALUE_0 + i), 0);
  put(&g, NPU_DPU_SURFACE_ADD, 1, F(DPU_SURFACE_ADD, SURF_ADD),
      U(out_atoms * 2 * (dw ? 2 : 1)));
  put(&g, NPU_DPU_UNKNOWN_40C4, 0);
  for (npu_reg r = NPU_DPU_LUT_ACCESS_CFG; r <= NPU_DPU_LUT_LO_SLOPE_SHIFT;
       r = (npu_reg)(r + 1))
    put(&g, r, 0);

  put(&g, NPU_DPU_RDMA_DATA_CUBE_WIDTH, 1, F(DPU_RDMA_DATA_CUBE_WIDTH, WIDTH),
      U(d->out_w - 1));
  put(&g, NPU_DPU_RDMA_DATA_CUBE_HEIGHT, 1,
      F(DPU_RDMA_DATA_CUBE_HEIGHT, HEIGHT), U(d->out_h - 1));
  put(&g, NPU_DPU_RDMA_DATA_CUBE_CHANNEL, 1,
      F(DPU_RDMA_DATA_CUBE_CHANNEL, CHANNEL), U(p.out_channels - 1));
  put(&g, NPU_DPU_RDMA_SRC_BASE_ADDR, 0); /* MRDMA disabled below */
  /* Data use 1: one int32 bias per channel (Mesa); 7: bias, operand and
   * multiplier groups (the vendor's per-channel program, RUS). */
  put(&g, NPU_DPU_RDMA_BRDMA_CFG, 1, F(DPU_RDMA_BRDMA_CFG, BRDMA_DATA_USE),
      d->per_channel ? 7u : 1u);
  put_addr(&g, NPU_DPU_RDMA_BS_BASE_ADDR, NPU_BUF_BIAS, 0);
  put(&g, NPU_DPU_RDMA_NRDMA_CFG, 0);
  put(&g, NPU_DPU_RDMA_BN_BASE_ADDR, 0);
  put(&g, NPU_DPU_RDMA_ERDMA_CFG, 1, F(DPU_RDMA_ERDMA_CFG, ERDMA_DISABLE), 1u);
  put(&g, NPU_DPU_RDMA_EW_BASE_ADDR, 0);
  put(&g, NPU_DPU_RDMA_EW_SURF_STRIDE, 0);
  put(&g, NPU_DPU_RDMA_FEATURE_MODE_CFG, 3,
      F(DPU_RDMA_FEATURE_MODE_CFG, BURST_LEN), 15u,
      F(DPU_RDMA_FEATURE_MODE_CFG, MRDMA_DISABLE), 1u,
      F(DPU_RDMA_FEATURE_MODE_CFG, CONV_MODE), conv_mode);
  put(&g, NPU_DPU_RDMA_SRC_DMA_CFG, 0);
  put(&g, NPU_DPU_RDMA_SURF_NOTCH, 0);
  put(&g, NPU_DPU_RDMA_PAD_CFG, 0);
  put(&g, NPU_DPU_RDMA_WEIGHT, 4, F(DPU_RDMA_WEIGHT, E_WEIGHT), 1u,
      F(DPU_RDMA_WEIGHT, N_WEIGHT), 1u, F(DPU_RDMA_WEIGHT, B_WEIGHT), 1u,
      F(DPU_RDMA_WEIGHT, M_WEIGHT), 1u);
  put(&g, NPU_DPU_RDMA_EW_SURF_NOTCH, 0);

  /* Trailer with the op-enable of CNA|CORE|DPU|DPU_RDMA. */
  return finish(&g, NPU_EN_CNA | NPU_EN_CORE | NPU_EN_DPU | NPU_EN_DPU_RDMA,
                why, n);
}

void dg_npu_stream_rebase(npu_stream *s, const uint32_t offset[NPU_BUF_COUNT]) {
  for (int i = 0; i < s->reloc_count; i++)
    s->relocs[i].offset += offset[s->relocs[i].buffer];
}

void dg_npu_stream_patch(npu_stream *s, const uint32_t iova[NPU_BUF_COUNT]) {
  for (int i = 0; i < s->reloc_count; i++) {
    const npu_reloc *r = &s->relocs[i];
    uint64_t w = s->words[r->word];
    s->words[r->word] = npu_word(
        npu_word_target(w), iova[r->buffer] + r->offset, npu_word_offset(w));
  }
}

void dg_npu_stream_weight_reuse(npu_stream *s) {
  uint16_t at = dg_npu_regs[NPU_CNA_CBUF_CON0].offset;
  for (int i = 0; i < s->count; i++)
    if (npu_word_offset(s->words[i]) == at && npu_word_target(s->words[i])) {
      npu_value v = npu_value_begin(NPU_CNA_CBUF_CON0);
      v.bits = npu_word_value(s->words[i]);
      dg_npu_value_set(&v, NPU_CNA_CBUF_CON0__WEIGHT_REUSE, 1);
      s->words[i] = dg_npu_reg_word(NPU_CNA_CBUF_CON0, v.bits);
    }
}
