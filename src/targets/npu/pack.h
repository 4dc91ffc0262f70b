/* Host-side data layouts of the NPU (docs/npu.md, "Data layouts"), int8
 * values in the NPU's signed domain (int8 tensors as they are; uint8
 * tensors minus 128, done by the caller).
 *
 * Features: NC1HWC2, [C/C2][H][W][C2] with 16-byte atoms: C2 = 16 for
 * int8, 8 for fp16. Channels past C are filled with a pad value (the input
 * zero point, so that they contribute nothing: their weights are the
 * weight zero point).
 *
 * Weights (Mesa rkt_coefs.c, hardware-validated): per output group of 32
 * kernels, per input group of G channels (32 direct, 64 depthwise),
 * [kh][kw][kernel][channel]; channels padded to a multiple of 16 (the
 * last group may be short), kernels padded to an even count (depthwise:
 * one kernel holding every channel).
 */
#ifndef DG_NPU_PACK_H
#define DG_NPU_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NPU_ATOM 16 /* bytes per feature atom */

static inline int npu_align(int x, int a) { return (x + a - 1) / a * a; }

/* Bytes of an NC1HWC2 cube of c channels with elem-byte elements. */
size_t dg_npu_feature_bytes(int c, int h, int w, int elem);

void dg_npu_pack_feature_i8(const int8_t *chw, int c, int h, int w, int8_t pad,
                            uint8_t *cube);
/* Rows [y0, y0 + h) of a CHW image of plane_h rows, packed as a cube of h
 * rows (a height slice of a tiled conv). */
void dg_npu_pack_rows_i8(const int8_t *chw, int c, int plane_h, int w, int y0,
                         int h, int8_t pad, uint8_t *cube);
void dg_npu_unpack_feature_i8(const uint8_t *cube, int c, int h, int w,
                              int8_t *chw);
void dg_npu_pack_feature_f16(const uint16_t *chw, int c, int h, int w,
                             uint16_t pad, uint8_t *cube);
/* The fp16 dg_npu_pack_rows_i8. */
void dg_npu_pack_rows_f16(const uint16_t *chw, int c, int plane_h, int w,
                          int y0, int h, uint16_t pad, uint8_t *cube);
void dg_npu_unpack_feature_f16(const uint8_t *cube, int c, int h, int w,
                               uint16_t *chw);

/* Input channels as the CNA sees them: at least 16, a multiple of 16. */
static inline int npu_channels16(int c) {
  return npu_align(c < 16 ? 16 : c, 16);
}
/* Kernels in the weight cube: even count; 1 for depthwise. */
static inline int npu_kernels(int o, bool dw) {
  return dw ? 1 : npu_align(o, 2);
}

/* Size of the weight buffer: the packed bytes plus the slack Mesa
 * allocates (twice the 32-aligned size), which its dumps include. */
size_t dg_npu_weight_buffer_bytes(int o, int c, int kh, int kw, bool dw);
/* Packed bytes (what CNA_WEIGHT_SIZE0 counts). */
size_t dg_npu_weight_bytes(int o, int c, int kh, int kw, bool dw);

/* w: OIHW int8 (depthwise: [C][1][KH][KW]); w_pad: the weight zero point
 * in the signed domain, written for padded channels. Fills
 * dg_npu_weight_buffer_bytes() bytes (slack zeroed). */
void dg_npu_pack_weights_i8(const int8_t *w, int o, int c, int kh, int kw,
                            bool dw, int8_t w_pad, uint8_t *out);

/* The int32 bias cube: per output channel, the bias minus the input zero
 * point's contribution (x_zp * sum of (w - w_zp) over the kernel), divided
 * by 2^truncate_bits as C division (Mesa), because the CORE truncates the
 * accumulator before the DPU adds it. bias may be NULL (zeros). Returns
 * false if a value does not fit int32. */
bool dg_npu_pack_bias(const int32_t *bias, const int8_t *w, int o, int c,
                      int kh, int kw, bool dw, int32_t w_zp, int32_t x_zp,
                      int truncate_bits, int32_t *out);

/* Per-channel requantisation (gen.h's per_channel): BRDMA data use 7 reads
 * a 64-byte group per 8 output channels, channel c at group c / 8, lane
 * i = c % 8: int32 A (the folded bias) at 4i, int16 B (a per-channel
 * weight-zero-point term, read only with BS_OW_CFG.OW_SRC: written 0) at
 * 32 + 2i, int16 C (the multiplier, dpu_requant.h) at 48 + 2i (the vendor's
 * layout, measured by RUS; docs/npu.md). Packs o channels from bias and
 * mul into groups for o_padded channels (a multiple of 8; past o: 0). */
#define NPU_BS_GROUP_BYTES 64
void dg_npu_pack_bs_groups(const int32_t *bias, const int16_t *mul, int o,
                           int o_padded, uint8_t *out);

/* ---- fp16 (direct conv only) ----
 * Input channels as the CNA sees them: a multiple of 8, the fp16 atom
 * (the vendor stream programs a 1-channel fp16 input as 8). RUS pads to
 * 32 instead; this is the one place to change if a board disagrees. */
static inline int npu_channels_f16(int c) {
  return npu_align(c < 8 ? 8 : c, 8);
}

/* Weight cube (oc group 16, ic group 32; docs/npu.md, "Data layouts"): per
 * group of 16 kernels (the last holds the rest), per group of 32 input
 * channels (the last holds the rest of npu_channels_f16(c)),
 * [kh][kw][kernel][channel], little-endian binary16; padded channels are
 * +0.0. No kernel padding: the vendor stream runs an odd kernel count (1). */
size_t dg_npu_weight_bytes_f16(int o, int c, int kh, int kw);
/* w: OIHW binary16 bits. Fills dg_npu_weight_bytes_f16() bytes. */
void dg_npu_pack_weights_f16(const uint16_t *w, int o, int c, int kh, int kw,
                             uint8_t *out);

#endif
