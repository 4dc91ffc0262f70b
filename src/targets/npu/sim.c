/* The simulator (see sim.h). */
#include "sim.h"
#include "core/env.h"

#include "decode.h"
#include "sim_internal.h"
#include "sim_ppu.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R(reg, field) npu_rf(rf, NPU_##reg##__##field)

int dg_npu_sim_fail(char *err, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
  return -1;
}

npu_sim_buffer *dg_npu_sim_find(const npu_sim_job *job, uint32_t addr,
                                size_t len) {
  for (int i = 0; i < job->buffer_count; i++) {
    npu_sim_buffer *b = &job->buffers[i];
    if (addr >= b->iova && addr - b->iova <= b->size &&
        len <= b->size - (addr - b->iova))
      return b;
  }
  return NULL;
}

uint8_t *dg_npu_sim_map(const npu_sim_job *job, uint32_t addr, size_t len,
                        bool output, const char *what, char *err, size_t n) {
  npu_sim_buffer *b = dg_npu_sim_find(job, addr, len);
  if (!b) {
    dg_npu_sim_fail(err, n, "%s [0x%x, +%zu) outside every buffer", what, addr,
                    len);
    return NULL;
  }
  if (output && !b->is_output) {
    dg_npu_sim_fail(err, n, "%s written into buffer '%s' not listed as output",
                    what, b->name ? b->name : "?");
    return NULL;
  }
  return b->data + (addr - b->iova);
}

static int64_t round_shift(int64_t v, unsigned sh, npu_round mode) {
  if (!sh)
    return v;
  int64_t half = (int64_t)1 << (sh - 1);
  switch (mode) {
  case NPU_ROUND_HALF_AWAY:
    return v >= 0 ? (v + half) >> sh : -((-v + half) >> sh);
  case NPU_ROUND_HALF_EVEN: {
    int64_t q = v >> sh, r = v - q * ((int64_t)1 << sh);
    return (r > half || (r == half && (q & 1))) ? q + 1 : q;
  }
  default:
    return (v + half) >> sh;
  }
}

typedef struct conv_cfg {
  npu_sim_geom g; /* cpad: input channels padded to 16 */
  bool dw;
  uint32_t pad_value; /* CNA_PAD_CON1 as written: see pad_lane */
  int32_t ow_op, out_offset;
  unsigned trunc, cvt_shift;
  uint32_t cvt_scale;
  const uint8_t *in, *wt, *bias;
  uint8_t *out;
  uint32_t out_surf; /* bytes between output channel groups */
  bool bs_mul;       /* BS multiplier live: per-channel C from BRDMA */
  unsigned bs_shift_pos, bs_shift_neg; /* its shifts by product sign */
} conv_cfg;

int dg_npu_sim_geom_read(const npu_regfile *rf, int atom, npu_sim_geom *k,
                         char *err, size_t n) {
  k->w = (int)R(CNA_DATA_SIZE0, DATAIN_WIDTH);
  k->h = (int)R(CNA_DATA_SIZE0, DATAIN_HEIGHT);
  k->c = (int)R(CNA_DATA_SIZE1, DATAIN_CHANNEL_REAL) + 1;
  k->cpad = (int)R(CNA_DATA_SIZE1, DATAIN_CHANNEL);
  k->ow = (int)R(CORE_DATAOUT_SIZE_0, DATAOUT_WIDTH) + 1;
  k->oh = (int)R(CORE_DATAOUT_SIZE_0, DATAOUT_HEIGHT) + 1;
  k->oc = (int)R(CORE_DATAOUT_SIZE_1, DATAOUT_CHANNEL) + 1;
  k->oc_real = (int)R(DPU_DATA_CUBE_CHANNEL, ORIG_CHANNEL) + 1;
  k->kw = (int)R(CNA_WEIGHT_SIZE2, WEIGHT_WIDTH);
  k->kh = (int)R(CNA_WEIGHT_SIZE2, WEIGHT_HEIGHT);
  k->kernels = (int)R(CNA_WEIGHT_SIZE2, WEIGHT_KERNELS);
  k->sx = (int)R(CNA_CONV_CON3, CONV_X_STRIDE);
  k->sy = (int)R(CNA_CONV_CON3, CONV_Y_STRIDE);
  k->pl = (int)R(CNA_PAD_CON0, PAD_LEFT);
  k->pt = (int)R(CNA_PAD_CON0, PAD_TOP);
  if (k->w < 1 || k->h < 1 || k->cpad < k->c || k->cpad % atom || k->kw < 1 ||
      k->kh < 1 || k->sx < 1 || k->sy < 1 || k->kernels < 1)
    return dg_npu_sim_fail(err, n, "empty or inconsistent CNA sizes");
  return 0;
}

int dg_npu_sim_conv_units(const npu_regfile *rf, char *err, size_t n) {
  uint32_t need = NPU_EN_CNA | NPU_EN_CORE | NPU_EN_DPU | NPU_EN_DPU_RDMA;
  if ((rf->op_en & need) != need ||
      (rf->op_en & (NPU_EN_PPU | NPU_EN_PPU_RDMA)))
    return dg_npu_sim_fail(
        err, n, "op-enable 0x%x: only CNA+CORE+DPU+DPU_RDMA modelled",
        rf->op_en);
  return 0;
}

int dg_npu_sim_cbuf_check(const npu_regfile *rf, int h, uint32_t per_kernel,
                          char *err, size_t n) {
  /* 12 banks of 256 entries of 128 bytes. */
  uint32_t dbanks = R(CNA_CBUF_CON0, DATA_BANK),
           wbanks = R(CNA_CBUF_CON0, WEIGHT_BANK);
  uint32_t entries = R(CNA_CBUF_CON1, DATA_ENTRIES);
  uint32_t wbytes = rf->value[NPU_CNA_WEIGHT_SIZE0];
  if (dbanks + wbanks > 12 || !dbanks || !wbanks)
    return dg_npu_sim_fail(err, n, "CBUF banks %u data + %u weight (12 exist)",
                           dbanks, wbanks);
  if (entries * (uint32_t)h > dbanks * 256)
    return dg_npu_sim_fail(err, n,
                           "input needs %u CBUF entries, %u data banks hold %u",
                           entries * h, dbanks, dbanks * 256);
  if (wbytes > wbanks * 32768u || per_kernel > 32768u)
    return dg_npu_sim_fail(err, n, "weights (%u bytes) exceed %u weight banks",
                           wbytes, wbanks);
  return 0;
}

int dg_npu_sim_geom_check(const npu_regfile *rf, const npu_sim_geom *k,
                          char *err, size_t n) {
  if ((int)R(CNA_DATA_SIZE2, DATAOUT_WIDTH) != k->ow ||
      (int)R(CNA_DATA_SIZE3, DATAOUT_ATOMICS) != k->ow * k->oh ||
      (int)R(DPU_DATA_CUBE_WIDTH, WIDTH) + 1 != k->ow ||
      (int)R(DPU_DATA_CUBE_HEIGHT, HEIGHT) + 1 != k->oh ||
      (int)R(DPU_DATA_CUBE_CHANNEL, CHANNEL) + 1 != k->oc ||
      (int)R(DPU_WDMA_SIZE_0, CHANNEL_WDMA) + 1 != k->oc ||
      (int)R(DPU_WDMA_SIZE_1, WIDTH_WDMA) + 1 != k->ow ||
      (int)R(DPU_WDMA_SIZE_1, HEIGHT_WDMA) + 1 != k->oh ||
      (int)R(DPU_RDMA_DATA_CUBE_WIDTH, WIDTH) + 1 != k->ow ||
      (int)R(DPU_RDMA_DATA_CUBE_HEIGHT, HEIGHT) + 1 != k->oh ||
      (int)R(DPU_RDMA_DATA_CUBE_CHANNEL, CHANNEL) + 1 != k->oc)
    return dg_npu_sim_fail(
        err, n, "output sizes differ between CNA, CORE, DPU and RDMA");
  if ((k->ow - 1) * k->sx + k->kw > k->w + k->pl + 15 ||
      (k->oh - 1) * k->sy + k->kh > k->h + k->pt + 15)
    return dg_npu_sim_fail(err, n, "output larger than the padded input");
  return 0;
}

/* Static checks of a decoded conv list against the job's buffers. */
static int validate(const npu_sim_job *job, const npu_regfile *rf, conv_cfg *k,
                    char *err, size_t n) {
  if (dg_npu_sim_conv_units(rf, err, n))
    return -1;
  /* DATA_FORMAT: int8 precisions (0); the BS multiplier's negative shift
   * is its one other field, and only with the multiplier live. */
  k->bs_mul = !R(DPU_BS_CFG, BS_MUL_BYPASS);
  uint32_t fmt_other = rf->value[NPU_DPU_DATA_FORMAT];
  if (k->bs_mul)
    fmt_other &=
        ~(npu_field_max(NPU_DPU_DATA_FORMAT__BS_MUL_SHIFT_VALUE_NEG)
          << dg_npu_fields[NPU_DPU_DATA_FORMAT__BS_MUL_SHIFT_VALUE_NEG].lo);
  if (R(CNA_CONV_CON1, IN_PRECISION) || R(CNA_CONV_CON1, PROC_PRECISION) ||
      R(CORE_MISC_CFG, PROC_PRECISION) || fmt_other)
    return dg_npu_sim_fail(err, n, "only int8 in and out is modelled");
  if (R(CNA_CONV_CON1, ARGB_IN) || R(CNA_CONV_CON1, NONALIGN_DMA) ||
      R(CNA_CONV_CON1, DECONV) || rf->value[NPU_CNA_CONV_CON3] >> 6)
    return dg_npu_sim_fail(err, n,
                           "ARGB, non-aligned, deconvolution or dilation mode");
  uint32_t mode = R(CNA_CONV_CON1, CONV_MODE);
  if (mode != 0 && mode != 3)
    return dg_npu_sim_fail(err, n, "CNA conv mode %u not modelled", mode);
  k->dw = mode == 3;
  if (k->dw != (bool)R(CORE_MISC_CFG, DW_EN) ||
      (k->dw ? 3u : 0u) != R(DPU_FEATURE_MODE_CFG, CONV_MODE) ||
      (k->dw ? 3u : 0u) != R(DPU_RDMA_FEATURE_MODE_CFG, CONV_MODE))
    return dg_npu_sim_fail(err, n,
                           "depthwise mode differs between CNA, CORE and DPU");
  if (!R(CORE_MISC_CFG, QD_EN) || R(DPU_FEATURE_MODE_CFG, OUTPUT_MODE) != 2)
    return dg_npu_sim_fail(err, n,
                           "only quantised output written to memory modelled");
  if (dg_npu_sim_geom_read(rf, 16, &k->g, err, n))
    return -1;
  if (k->dw ? (k->g.kernels != 1 || k->g.oc_real != k->g.c)
            : k->g.kernels < k->g.oc_real)
    return dg_npu_sim_fail(err, n,
                           "weight kernels %d do not cover %d output channels",
                           k->g.kernels, k->g.oc_real);
  if (dg_npu_sim_geom_check(rf, &k->g, err, n))
    return -1;
  if (dg_npu_sim_cbuf_check(
          rf, k->g.h, R(CNA_WEIGHT_SIZE1, WEIGHT_BYTES_PER_KERNEL), err, n))
    return -1;
  uint32_t entries = R(CNA_CBUF_CON1, DATA_ENTRIES);
  uint32_t wbytes = rf->value[NPU_CNA_WEIGHT_SIZE0];
  /* Only the configurations of the validated recipe. */
  int surf = k->g.w * (k->g.h - 4);
  if ((int)entries != (k->g.w * 2 * (k->g.cpad / 16) + 7) / 8 ||
      (int)R(CNA_DMA_CON1, LINE_STRIDE) != k->g.w * 4 ||
      (int)R(CNA_DMA_CON2, SURF_STRIDE) != (surf < 0 ? 0 : surf) ||
      (int)R(DPU_DST_SURF_STRIDE, DST_SURF_STRIDE) != k->g.ow * k->g.oh ||
      (int)R(DPU_SURFACE_ADD, SURF_ADD) !=
          k->g.ow * k->g.oh * 2 * (k->dw ? 2 : 1) ||
      rf->value[NPU_CNA_WEIGHT_SIZE0] !=
          (uint32_t)(k->g.kw * k->g.kh * k->g.cpad * k->g.kernels) ||
      R(CNA_WEIGHT_SIZE1, WEIGHT_BYTES_PER_KERNEL) !=
          (uint32_t)(k->g.kw * k->g.kh * k->g.cpad))
    return dg_npu_sim_fail(
        err, n, "entries, strides or sizes outside the modelled recipe");
  /* The BS stage: the bias add alone (data use 1), or with the
   * per-channel multiplier from the same BRDMA groups (data use 7). */
  if (R(DPU_BS_CFG, BS_BYPASS) || R(DPU_BS_CFG, BS_ALU_BYPASS) ||
      R(DPU_BS_CFG, BS_ALU_ALGO) != 2 || !R(DPU_BS_CFG, BS_ALU_SRC) ||
      !R(DPU_BS_CFG, BS_RELU_BYPASS) || R(DPU_BS_CFG, BS_MUL_PRELU) ||
      R(DPU_BS_CFG, BS_RELUX_EN) ||
      R(DPU_BS_MUL_CFG, BS_MUL_SRC) != (uint32_t)k->bs_mul ||
      R(DPU_BS_MUL_CFG, BS_TRUNCATE_SRC) || R(DPU_BS_OW_CFG, OW_SRC) ||
      (!k->bs_mul && rf->value[NPU_DPU_BS_MUL_CFG]) ||
      !R(DPU_BN_CFG, BN_BYPASS) || !R(DPU_EW_CFG, EW_BYPASS) ||
      R(DPU_RDMA_BRDMA_CFG, BRDMA_DATA_USE) != (k->bs_mul ? 7u : 1u) ||
      !R(DPU_RDMA_ERDMA_CFG, ERDMA_DISABLE) ||
      !R(DPU_RDMA_FEATURE_MODE_CFG, MRDMA_DISABLE) ||
      R(DPU_RDMA_NRDMA_CFG, NRDMA_DATA_USE))
    return dg_npu_sim_fail(
        err, n,
        "DPU stages other than bias add (x per-channel C) + OUT_CVT not "
        "modelled");
  k->bs_shift_pos = R(DPU_BS_MUL_CFG, BS_MUL_SHIFT_VALUE);
  k->bs_shift_neg = R(DPU_DATA_FORMAT, BS_MUL_SHIFT_VALUE_NEG);
  /* Addresses: 16-byte aligned and inside the job's buffers (only those of
   * enabled readers: a disabled reader's address may be 0, and 0 is also a
   * valid IOVA, so nothing is inferred from the value itself). */
  uint32_t a_in = rf->value[NPU_CNA_FEATURE_DATA_ADDR],
           a_wt = rf->value[NPU_CNA_DCOMP_ADDR0],
           a_bs = rf->value[NPU_DPU_RDMA_BS_BASE_ADDR],
           a_out = rf->value[NPU_DPU_DST_BASE_ADDR];
  if ((a_in | a_wt | a_bs | a_out) & 15)
    return dg_npu_sim_fail(err, n, "a base address is not 16-byte aligned");
  size_t in_len = (size_t)(k->g.cpad / 16) * k->g.h * k->g.w * 16;
  k->out_surf = (uint32_t)k->g.ow * k->g.oh * 16;
  size_t out_len = (size_t)((k->g.oc + 15) / 16) * k->out_surf;
  /* BRDMA reads one int32 per real output channel [inference]; with data
   * use 7 a 64-byte group per 8 channels, asked of every channel the DPU
   * produces (our buffers hold them; how far the hardware reads is not
   * known). */
  size_t bias_len =
      k->bs_mul ? (size_t)(k->g.oc + 7) / 8 * 64 : (size_t)k->g.oc_real * 4;
  if (!(k->in = dg_npu_sim_map(job, a_in, in_len, false, "input", err, n)) ||
      !(k->wt = dg_npu_sim_map(job, a_wt, wbytes, false, "weights", err, n)) ||
      !(k->bias = dg_npu_sim_map(job, a_bs, bias_len, false, "bias", err, n)) ||
      !(k->out = dg_npu_sim_map(job, a_out, out_len, true, "output", err, n)))
    return -1;
  k->pad_value = rf->value[NPU_CNA_PAD_CON1];
  k->ow_op = (int16_t)R(DPU_BS_OW_OP, OW_OP);
  k->out_offset = (int32_t)rf->value[NPU_DPU_OUT_CVT_OFFSET];
  k->trunc = R(CORE_CLIP_TRUNCATE, CLIP_TRUNCATE);
  k->cvt_scale = R(DPU_OUT_CVT_SCALE, OUT_CVT_SCALE);
  k->cvt_shift = R(DPU_OUT_CVT_SHIFT, OUT_CVT_SHIFT);
  if (k->cvt_shift > 62)
    return dg_npu_sim_fail(err, n, "OUT_CVT_SHIFT %u too large", k->cvt_shift);
  return 0;
}

/* Byte offset of weight (kernel, channel, ky, kx) in the packed cube:
 * groups of 32 kernels, then channel groups of 32 (64 depthwise), then
 * [ky][kx][kernel][channel] within the group. */
static size_t weight_at(const conv_cfg *k, int kern, int ch, int ky, int kx) {
  int group = k->dw ? 64 : 32;
  int k1 = kern / 32 * 32, kn = k->g.kernels - k1 < 32 ? k->g.kernels - k1 : 32;
  size_t off =
      (size_t)k1 * k->g.kh * k->g.kw * k->g.cpad; /* earlier kernel groups */
  int c1 = ch / group * group,
      cn = k->g.cpad - c1 < group ? k->g.cpad - c1 : group;
  off += (size_t)c1 * k->g.kh * k->g.kw * kn;
  return off + (((size_t)ky * k->g.kw + kx) * kn + (kern - k1)) * cn +
         (ch - c1);
}

/* The value a padded pixel holds in channel lane ch. Lanes 0..31 of each
 * 64-lane group pair up as 16-bit elements filled with PAD_VALUE[15:0], so
 * an odd lane reads byte 1; lanes 32..63 read byte 0; bytes 2 and 3 are
 * never read. Fits all 4096 bytes of the Teflon capture, whose word was
 * 0x0000007e (odd lanes < 32 padded with 0, the rest with 126); Mesa's
 * 0xffff8080 and 0x0b0b pad words exist for the same reason. Measured on
 * depthwise only: the split at 32 and direct mode are [inference],
 * npu-hw-check's pad-lane probes test both (src/targets/npu/README.md). */
static int8_t pad_lane(const conv_cfg *k, int ch) {
  unsigned byte = (ch & 63) < 32 ? (unsigned)ch & 1u : 0u;
  return (int8_t)(uint8_t)(k->pad_value >> (8 * byte));
}

/* Sum over one output's window of x * w and of x (for OW_OP). wk holds
 * the kernel's weights as [ky][kx][channel] (gathered once per kernel). */
static void window(const conv_cfg *k, const int8_t *wk, int c0, int c1, int oy,
                   int ox, int64_t *acc, int64_t *xsum) {
  int64_t a = 0, s = 0;
  for (int ky = 0; ky < k->g.kh; ky++)
    for (int kx = 0; kx < k->g.kw; kx++) {
      int iy = oy * k->g.sy + ky - k->g.pt, ix = ox * k->g.sx + kx - k->g.pl;
      const int8_t *w = wk + ((size_t)ky * k->g.kw + kx) * k->g.cpad;
      if (iy < 0 || iy >= k->g.h || ix < 0 || ix >= k->g.w) {
        for (int ch = c0; ch < c1; ch++) {
          int8_t x = pad_lane(k, ch);
          a += (int32_t)x * w[ch];
          s += x;
        }
        continue;
      }
      /* Channel ch of this pixel: group ch/16, lane ch%16 (input_at). */
      const int8_t *px =
          (const int8_t *)k->in + ((size_t)iy * k->g.w + ix) * 16;
      size_t group = (size_t)k->g.h * k->g.w * 16;
      for (int ch = c0; ch < c1; ch++) {
        int8_t x = px[(size_t)(ch >> 4) * group + (ch & 15)];
        a += (int32_t)x * w[ch];
        s += x;
      }
    }
  *acc = a, *xsum = s;
}

static void execute(const conv_cfg *k, npu_round mode, int8_t *wk) {
  for (int o = 0; o < k->g.oc; o++) {
    /* Channels past the real ones produce no data we model: the
     * bias-free, weight-free result is written [inference]. */
    bool real = o < k->g.oc_real;
    int c0 = k->dw ? o : 0, c1 = k->dw ? o + 1 : k->g.cpad;
    if (real)
      for (int ky = 0; ky < k->g.kh; ky++)
        for (int kx = 0; kx < k->g.kw; kx++)
          for (int ch = c0; ch < c1; ch++)
            wk[((size_t)ky * k->g.kw + kx) * k->g.cpad + ch] =
                (int8_t)k->wt[weight_at(k, k->dw ? 0 : o, ch, ky, kx)];
    int32_t bias = 0, mul = 1;
    if (real) {
      /* Data use 7: A at 4i and C at 48 + 2i of group o / 8 (pack.h). */
      const uint8_t *bp =
          k->bs_mul ? k->bias + (size_t)(o / 8) * 64 + 4 * (size_t)(o % 8)
                    : k->bias + 4 * (size_t)o;
      bias = (int32_t)((uint32_t)bp[0] | (uint32_t)bp[1] << 8 |
                       (uint32_t)bp[2] << 16 | (uint32_t)bp[3] << 24);
      if (k->bs_mul) {
        const uint8_t *cp = k->bias + (size_t)(o / 8) * 64 + 48 + 2 * (o % 8);
        mul = (int16_t)(uint16_t)(cp[0] | cp[1] << 8);
      }
    }
    for (int oy = 0; oy < k->g.oh; oy++)
      for (int ox = 0; ox < k->g.ow; ox++) {
        int64_t acc = 0, xsum = 0;
        if (real)
          window(k, wk, c0, c1, oy, ox, &acc, &xsum);
        /* CORE: OW_OP x window sum (weight zero point), then the
         * CLIP_TRUNCATE right shift [inference on the order]. */
        acc += (int64_t)k->ow_op * xsum;
        acc = round_shift(acc, k->trunc, mode) + bias;
        if (acc > INT32_MAX)
          acc = INT32_MAX; /* the CACC -> DPU path is 32 bits wide */
        if (acc < INT32_MIN)
          acc = INT32_MIN;
        if (k->bs_mul) {
          /* BS multiplier (RUS, measured): the product held wide, shifted
           * by the field of its sign, rounded as OUT_CVT (the switch),
           * saturated to int32. */
          int64_t p = acc * mul;
          acc =
              round_shift(p, p >= 0 ? k->bs_shift_pos : k->bs_shift_neg, mode);
          acc = acc > INT32_MAX ? INT32_MAX : acc < INT32_MIN ? INT32_MIN : acc;
        }
        int64_t y =
            round_shift(acc * (int64_t)k->cvt_scale, k->cvt_shift, mode) +
            k->out_offset;
        y = y < -128 ? -128 : (y > 127 ? 127 : y);
        k->out[(size_t)(o / 16) * k->out_surf +
               ((size_t)oy * k->g.ow + ox) * 16 + o % 16] = (uint8_t)(int8_t)y;
      }
  }
}

static int decode_run(const npu_sim_job *job, bool run, char *err, size_t n) {
  npu_regfile *rf = malloc(sizeof *rf);
  if (!rf)
    return dg_npu_sim_fail(err, n, "out of memory");
  int rc = dg_npu_decode(job->words, job->word_count, rf, err, n);
  if (!rc && (rf->op_en & (NPU_EN_PPU | NPU_EN_PPU_RDMA))) {
    rc = dg_npu_sim_ppu(job, rf, run, err, n); /* a pooling task */
    free(rf);
    return rc;
  }
  if (!rc && npu_sim_is_f16(rf)) {
    rc = dg_npu_sim_f16(job, rf, run, err, n);
    free(rf);
    return rc;
  }
  conv_cfg k = {0};
  if (!rc)
    rc = validate(job, rf, &k, err, n);
  int8_t *wk = NULL;
  if (!rc && run) {
    wk = malloc((size_t)k.g.kh * k.g.kw * k.g.cpad);
    if (!wk)
      rc = dg_npu_sim_fail(err, n, "out of memory");
    else
      execute(&k, job->round, wk);
  }
  free(wk);
  free(rf);
  return rc;
}

int dg_npu_sim_run(const npu_sim_job *job, char *err, size_t n) {
  return decode_run(job, true, err, n);
}

int dg_npu_sim_check(const npu_sim_job *job, char *err, size_t n) {
  return decode_run(job, false, err, n);
}

npu_pool_avg dg_npu_sim_pool_avg_default(void) {
  const char *s = dg_env(DG_ENV_NPU_SIM_POOL_AVG);
  return s && !strcmp(s, "exact") ? NPU_POOL_AVG_EXACT : NPU_POOL_AVG_RECIP;
}

npu_round dg_npu_sim_round_default(void) {
  const char *s = dg_env(DG_ENV_NPU_SIM_ROUND);
  if (s && !strcmp(s, "half-away"))
    return NPU_ROUND_HALF_AWAY;
  if (s && !strcmp(s, "half-even"))
    return NPU_ROUND_HALF_EVEN;
  return NPU_ROUND_HALF_UP;
}
