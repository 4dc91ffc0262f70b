/* The simulator's fp16 direct conv (see sim.h for what it assumes). Only
 * the configuration gen_f16.c writes is accepted: fp16 in, processing and
 * out, every DPU stage bypassed, OUT_CVT's fp32 -> fp16 converter on with
 * scale 1 and shift 0; anything else is an error rather than a guess. */
#include "sim_internal.h"

#include "core/half.h" /* dg_f16_to_f32, dg_f32_to_f16 */

#include <stdlib.h>

#define R(reg, field) npu_rf(rf, NPU_##reg##__##field)

typedef struct f16_cfg {
  npu_sim_geom g; /* cpad: input channels padded to 8 */
  uint16_t pad;
  const uint8_t *in, *wt;
  uint8_t *out;
  size_t out_surf; /* bytes between output channel groups of 8 */
} f16_cfg;

static int check_modes(const npu_regfile *rf, char *err, size_t n) {
  if (dg_npu_sim_conv_units(rf, err, n))
    return -1;
  if (R(CNA_CONV_CON1, IN_PRECISION) != 2 ||
      R(CNA_CONV_CON1, PROC_PRECISION) != 2 ||
      R(CORE_MISC_CFG, PROC_PRECISION) != 2 ||
      R(DPU_DATA_FORMAT, IN_PRECISION) != 2 ||
      R(DPU_DATA_FORMAT, PROC_PRECISION) != 2 ||
      R(DPU_DATA_FORMAT, OUT_PRECISION) != 2)
    return dg_npu_sim_fail(err, n,
                           "fp16: CNA, CORE and DPU must all be fp16 (mixed "
                           "precisions are not modelled)");
  if (R(CNA_CONV_CON1, ARGB_IN) || R(CNA_CONV_CON1, NONALIGN_DMA) ||
      R(CNA_CONV_CON1, DECONV) || rf->value[NPU_CNA_CONV_CON3] >> 6)
    return dg_npu_sim_fail(err, n,
                           "ARGB, non-aligned, deconvolution or dilation mode");
  if (R(CNA_CONV_CON1, CONV_MODE) || R(CORE_MISC_CFG, DW_EN) ||
      R(DPU_FEATURE_MODE_CFG, CONV_MODE) ||
      R(DPU_RDMA_FEATURE_MODE_CFG, CONV_MODE))
    return dg_npu_sim_fail(err, n, "fp16: only direct convolution is modelled");
  if (R(CORE_MISC_CFG, QD_EN) || R(CORE_CLIP_TRUNCATE, CLIP_TRUNCATE) ||
      R(DPU_FEATURE_MODE_CFG, OUTPUT_MODE) != 2)
    return dg_npu_sim_fail(err, n,
                           "fp16: only the raw accumulator (QD_EN 0, no "
                           "truncation) written to memory is modelled");
  if (!R(DPU_BS_CFG, BS_BYPASS) || !R(DPU_BN_CFG, BN_BYPASS) ||
      !R(DPU_EW_CFG, EW_BYPASS) || R(DPU_RDMA_BRDMA_CFG, BRDMA_DATA_USE) ||
      R(DPU_RDMA_NRDMA_CFG, NRDMA_DATA_USE) ||
      !R(DPU_RDMA_ERDMA_CFG, ERDMA_DISABLE) ||
      !R(DPU_RDMA_FEATURE_MODE_CFG, MRDMA_DISABLE))
    return dg_npu_sim_fail(err, n,
                           "fp16: DPU stages (bias, BN, eltwise) not modelled");
  if (!R(DPU_OUT_CVT_SCALE, FP32TOFP16_EN) ||
      R(DPU_OUT_CVT_SCALE, OUT_CVT_SCALE) != 1 ||
      rf->value[NPU_DPU_OUT_CVT_SHIFT] || rf->value[NPU_DPU_OUT_CVT_OFFSET])
    return dg_npu_sim_fail(err, n,
                           "fp16: only OUT_CVT fp32 -> fp16 with scale 1, "
                           "shift 0, offset 0 is modelled");
  if (R(DPU_BS_OW_CFG, SIZE_E_0) != 1 || R(DPU_BS_OW_CFG, SIZE_E_1) != 1 ||
      R(DPU_BS_OW_CFG, SIZE_E_2) != 1)
    return dg_npu_sim_fail(err, n, "fp16: SIZE_E must be 1 for fp16 output");
  return 0;
}

static int check_sizes(const npu_regfile *rf, f16_cfg *k, char *err, size_t n) {
  if (dg_npu_sim_geom_read(rf, 8, &k->g, err, n))
    return -1;
  if (k->g.oc % 16 || k->g.kernels < k->g.oc_real || k->g.kernels > k->g.oc)
    return dg_npu_sim_fail(err, n,
                           "weight kernels %d, output channels %d of %d: not "
                           "the fp16 recipe",
                           k->g.kernels, k->g.oc_real, k->g.oc);
  if (dg_npu_sim_geom_check(rf, &k->g, err, n))
    return -1;
  return 0;
}

/* The CBUF budget and the entries/strides of the fp16 recipe. */
static int check_cbuf(const npu_regfile *rf, const f16_cfg *k, char *err,
                      size_t n) {
  uint32_t per_kernel = (uint32_t)(k->g.kw * k->g.kh * k->g.cpad * 2);
  if (dg_npu_sim_cbuf_check(rf, k->g.h, per_kernel, err, n))
    return -1;
  uint32_t entries = R(CNA_CBUF_CON1, DATA_ENTRIES);
  uint32_t wbytes = rf->value[NPU_CNA_WEIGHT_SIZE0];
  int surf = k->g.w * (k->g.h - 4);
  if ((int)entries != (k->g.w * k->g.cpad * 2 + 63) / 64 ||
      (int)R(CNA_DMA_CON1, LINE_STRIDE) != k->g.w * 4 ||
      (int)R(CNA_DMA_CON2, SURF_STRIDE) != (surf < 0 ? 0 : surf) ||
      (int)R(CNA_FC_DATA_SIZE1, DMA_CHANNEL) != k->g.cpad ||
      (int)R(DPU_DST_SURF_STRIDE, DST_SURF_STRIDE) != k->g.ow * k->g.oh ||
      (int)R(DPU_SURFACE_ADD, SURF_ADD) != k->g.ow * k->g.oh * 2 ||
      wbytes != per_kernel * (uint32_t)k->g.kernels ||
      R(CNA_WEIGHT_SIZE1, WEIGHT_BYTES_PER_KERNEL) != per_kernel)
    return dg_npu_sim_fail(
        err, n, "fp16: entries, strides or sizes outside the modelled recipe");
  return 0;
}

/* Addresses: 16-byte aligned, inside the job's buffers, output listed. */
static int check_buffers(const npu_sim_job *job, const npu_regfile *rf,
                         f16_cfg *k, char *err, size_t n) {
  uint32_t a_in = rf->value[NPU_CNA_FEATURE_DATA_ADDR],
           a_wt = rf->value[NPU_CNA_DCOMP_ADDR0],
           a_out = rf->value[NPU_DPU_DST_BASE_ADDR];
  uint32_t wbytes = rf->value[NPU_CNA_WEIGHT_SIZE0];
  if ((a_in | a_wt | a_out) & 15)
    return dg_npu_sim_fail(err, n, "a base address is not 16-byte aligned");
  size_t in_len = (size_t)(k->g.cpad / 8) * k->g.h * k->g.w * 16;
  k->out_surf = (size_t)k->g.ow * k->g.oh * 16;
  size_t out_len = (size_t)(k->g.oc / 8) * k->out_surf;
  if (!(k->in = dg_npu_sim_map(job, a_in, in_len, false, "input", err, n)) ||
      !(k->wt = dg_npu_sim_map(job, a_wt, wbytes, false, "weights", err, n)) ||
      !(k->out = dg_npu_sim_map(job, a_out, out_len, true, "output", err, n)))
    return -1;
  /* The pad value: the low half of PAD_VALUE as binary16 [inference]. */
  k->pad = (uint16_t)rf->value[NPU_CNA_PAD_CON1];
  return 0;
}

static float half_at(const uint8_t *p) {
  return dg_f16_to_f32((uint16_t)(p[0] | p[1] << 8));
}

/* Byte offset of weight (kernel, channel, ky, kx): groups of 16 kernels,
 * then groups of 32 channels, [ky][kx][kernel][channel] within. */
static size_t weight_at(const f16_cfg *k, int kern, int ch, int ky, int kx) {
  int k1 = kern / 16 * 16, kn = k->g.kernels - k1 < 16 ? k->g.kernels - k1 : 16;
  int c1 = ch / 32 * 32, cn = k->g.cpad - c1 < 32 ? k->g.cpad - c1 : 32;
  size_t off = (size_t)k1 * k->g.kh * k->g.kw * k->g.cpad +
               (size_t)c1 * k->g.kh * k->g.kw * kn;
  off += (((size_t)ky * k->g.kw + kx) * kn + (kern - k1)) * cn + (ch - c1);
  return off * 2;
}

/* One output: products of binary16 values are exact in binary32, summed
 * in binary32 in the weight cube's order (32-channel group, ky, kx,
 * channel) [assumption, sim.h]. wk: the kernel as [ky][kx][channel]; xf:
 * the input as [y][x][channel], in binary32. */
static float window(const f16_cfg *k, const float *wk, const float *xf,
                    float pad, int oy, int ox) {
  float acc = 0.0f;
  for (int c1 = 0; c1 < k->g.cpad; c1 += 32) {
    int c2 = c1 + 32 < k->g.cpad ? c1 + 32 : k->g.cpad;
    for (int ky = 0; ky < k->g.kh; ky++)
      for (int kx = 0; kx < k->g.kw; kx++) {
        int iy = oy * k->g.sy + ky - k->g.pt, ix = ox * k->g.sx + kx - k->g.pl;
        bool inside = iy >= 0 && iy < k->g.h && ix >= 0 && ix < k->g.w;
        const float *w = wk + ((size_t)ky * k->g.kw + kx) * k->g.cpad;
        const float *px = xf + ((size_t)iy * k->g.w + ix) * k->g.cpad;
        for (int ch = c1; ch < c2; ch++)
          acc += (inside ? px[ch] : pad) * w[ch];
      }
  }
  return acc;
}

/* The NC1HWC2 input as [y][x][channel] floats (read once, not per MAC). */
static void input_floats(const f16_cfg *k, float *xf) {
  size_t group = (size_t)k->g.h * k->g.w * 16;
  for (int y = 0; y < k->g.h; y++)
    for (int x = 0; x < k->g.w; x++) {
      const uint8_t *px = k->in + ((size_t)y * k->g.w + x) * 16;
      float *row = xf + ((size_t)y * k->g.w + x) * k->g.cpad;
      for (int ch = 0; ch < k->g.cpad; ch++)
        row[ch] =
            half_at(px + (size_t)(ch >> 3) * group + (size_t)(ch & 7) * 2);
    }
}

static void execute(const f16_cfg *k, float *wk, float *xf) {
  float pad = dg_f16_to_f32(k->pad);
  input_floats(k, xf);
  for (int o = 0; o < k->g.oc; o++) {
    /* Channels past the kernels get no weights: written as +0.0
     * [inference, as the int8 model]. */
    bool real = o < k->g.kernels;
    for (int ky = 0; real && ky < k->g.kh; ky++)
      for (int kx = 0; kx < k->g.kw; kx++)
        for (int ch = 0; ch < k->g.cpad; ch++)
          wk[((size_t)ky * k->g.kw + kx) * k->g.cpad + ch] =
              half_at(k->wt + weight_at(k, o, ch, ky, kx));
    for (int oy = 0; oy < k->g.oh; oy++)
      for (int ox = 0; ox < k->g.ow; ox++) {
        uint16_t y = real ? dg_f32_to_f16(window(k, wk, xf, pad, oy, ox)) : 0;
        uint8_t *p = k->out + (size_t)(o / 8) * k->out_surf +
                     ((size_t)oy * k->g.ow + ox) * 16 + (size_t)(o % 8) * 2;
        p[0] = (uint8_t)y;
        p[1] = (uint8_t)(y >> 8);
      }
  }
}

int dg_npu_sim_f16(const npu_sim_job *job, const npu_regfile *rf, bool run,
                   char *err, size_t n) {
  f16_cfg k = {0};
  if (check_modes(rf, err, n) || check_sizes(rf, &k, err, n) ||
      check_cbuf(rf, &k, err, n) || check_buffers(job, rf, &k, err, n))
    return -1;
  if (!run)
    return 0;
  float *wk = malloc(sizeof(float) * (size_t)k.g.kh * k.g.kw * k.g.cpad);
  float *xf = malloc(sizeof(float) * (size_t)k.g.h * k.g.w * k.g.cpad);
  if (wk && xf)
    execute(&k, wk, xf);
  free(wk);
  free(xf);
  return wk && xf ? 0 : dg_npu_sim_fail(err, n, "out of memory");
}
