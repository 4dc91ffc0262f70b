/* The simulator's standalone pooling task (see sim_ppu.h).
 *
 * Modelled: PPU_RDMA reads an fp16 NC1HWC2 cube (C2 = 8) from memory,
 * the PPU takes each window's max, min or average and writes an fp16 cube
 * of the same layout. A tap outside the image reads the pad value
 * (PADDING_VALUE_1_CFG as an fp16 number); the average divides by the
 * whole window kh x kw (the reciprocal registers hold 1/kw and 1/kh, so
 * the hardware cannot count valid taps). Everything else (flying mode
 * from the DPU, index output, non-aligned or multi-surface output, int8
 * precision) is an error, not a guess.
 */
#include "sim_ppu.h"
#include "sim_internal.h"

#include "core/half.h" /* dg_f16_to_f32, dg_f32_to_f16 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define R(reg, field) npu_rf(rf, NPU_##reg##__##field)
#define PPU_PROC_FP16 2u

typedef struct pool_cfg {
  int method, c, h, w, oh, ow, kh, kw, sy, sx, pt, pl, pb, pr;
  float pad, recip_w, recip_h;
  const uint8_t *in;
  uint8_t *out;
} pool_cfg;

/* Modes other than the standalone fp16 pooling of the recipe. */
static int check_modes(const npu_regfile *rf, char *err, size_t n) {
  if (rf->op_en != (NPU_EN_PPU | NPU_EN_PPU_RDMA))
    return dg_npu_sim_fail(err, n,
                           "op-enable 0x%x: only a standalone PPU|PPU_RDMA "
                           "pooling task (0x60) is modelled",
                           rf->op_en);
  if (R(PPU_OPERATION_MODE_CFG, FLYING_MODE) != 1 ||
      R(PPU_DATA_FORMAT, DPU_FLYIN))
    return dg_npu_sim_fail(err, n,
                           "PPU fed by the DPU: not modelled (FLYING_MODE must "
                           "be 1, DPU_FLYIN 0)");
  if (R(PPU_OPERATION_MODE_CFG, INDEX_EN) ||
      R(PPU_OPERATION_MODE_CFG, NOTCH_ADDR) ||
      R(PPU_OPERATION_MODE_CFG, USE_CNT))
    return dg_npu_sim_fail(
        err, n, "PPU index output, notch or use count: not modelled");
  if (R(PPU_OPERATION_MODE_CFG, POOLING_METHOD) > 2)
    return dg_npu_sim_fail(err, n, "PPU pooling method 3 is reserved");
  if (R(PPU_DATA_FORMAT, PROC_PRECISION) != PPU_PROC_FP16 ||
      R(PPU_RDMA_DATA_FORMAT, IN_PRECISION) != PPU_PROC_FP16)
    return dg_npu_sim_fail(
        err, n,
        "PPU precision %u / PPU_RDMA precision %u: only fp16 "
        "(2) is modelled",
        R(PPU_DATA_FORMAT, PROC_PRECISION),
        R(PPU_RDMA_DATA_FORMAT, IN_PRECISION));
  if (R(PPU_MISC_CTRL, NONALIGN) || R(PPU_MISC_CTRL, MC_SURF_OUT) ||
      R(PPU_MISC_CTRL, SURF_LEN))
    return dg_npu_sim_fail(err, n,
                           "PPU non-aligned or multi-surface output: not "
                           "modelled");
  return 0;
}

/* Sizes, window and strides, all consistent between PPU and PPU_RDMA. */
static int read_geometry(const npu_regfile *rf, pool_cfg *k, char *err,
                         size_t n) {
  k->method = (int)R(PPU_OPERATION_MODE_CFG, POOLING_METHOD);
  k->w = (int)R(PPU_DATA_CUBE_IN_WIDTH, CUBE_IN_WIDTH) + 1;
  k->h = (int)R(PPU_DATA_CUBE_IN_HEIGHT, CUBE_IN_HEIGHT) + 1;
  k->c = (int)R(PPU_DATA_CUBE_IN_CHANNEL, CUBE_IN_CHANNEL) + 1;
  k->ow = (int)R(PPU_DATA_CUBE_OUT_WIDTH, CUBE_OUT_WIDTH) + 1;
  k->oh = (int)R(PPU_DATA_CUBE_OUT_HEIGHT, CUBE_OUT_HEIGHT) + 1;
  k->kw = (int)R(PPU_POOLING_KERNEL_CFG, KERNEL_WIDTH) + 1;
  k->kh = (int)R(PPU_POOLING_KERNEL_CFG, KERNEL_HEIGHT) + 1;
  k->sx = (int)R(PPU_POOLING_KERNEL_CFG, KERNEL_STRIDE_WIDTH) + 1;
  k->sy = (int)R(PPU_POOLING_KERNEL_CFG, KERNEL_STRIDE_HEIGHT) + 1;
  k->pl = (int)R(PPU_POOLING_PADDING_CFG, PAD_LEFT);
  k->pt = (int)R(PPU_POOLING_PADDING_CFG, PAD_TOP);
  k->pr = (int)R(PPU_POOLING_PADDING_CFG, PAD_RIGHT);
  k->pb = (int)R(PPU_POOLING_PADDING_CFG, PAD_BOTTOM);
  if ((int)R(PPU_DATA_CUBE_OUT_CHANNEL, CUBE_OUT_CHANNEL) + 1 != k->c ||
      (int)R(PPU_RDMA_CUBE_IN_WIDTH, CUBE_IN_WIDTH) + 1 != k->w ||
      (int)R(PPU_RDMA_CUBE_IN_HEIGHT, CUBE_IN_HEIGHT) + 1 != k->h ||
      (int)R(PPU_RDMA_CUBE_IN_CHANNEL, CUBE_IN_CHANNEL) + 1 != k->c)
    return dg_npu_sim_fail(err, n,
                           "input or channel sizes differ between PPU and "
                           "PPU_RDMA");
  if (k->ow != (k->w + k->pl + k->pr - k->kw) / k->sx + 1 ||
      k->oh != (k->h + k->pt + k->pb - k->kh) / k->sy + 1 ||
      k->w + k->pl + k->pr < k->kw || k->h + k->pt + k->pb < k->kh)
    return dg_npu_sim_fail(err, n,
                           "PPU output %dx%d is not what a %dx%d window, "
                           "stride %dx%d and pads give over %dx%d",
                           k->oh, k->ow, k->kh, k->kw, k->sy, k->sx, k->h,
                           k->w);
  if ((int)R(PPU_RDMA_SRC_LINE_STRIDE, SRC_LINE_STRIDE) != k->w ||
      (int)R(PPU_RDMA_SRC_SURF_STRIDE, SRC_SURF_STRIDE) != k->w * k->h ||
      (int)R(PPU_DST_SURF_STRIDE, DST_SURF_STRIDE) != k->ow * k->oh ||
      R(PPU_DATA_FORMAT, INDEX_ADD) != R(PPU_DST_SURF_STRIDE, DST_SURF_STRIDE))
    return dg_npu_sim_fail(err, n,
                           "PPU strides outside the modelled recipe (dense "
                           "NC1HWC2 cubes)");
  return 0;
}

/* The pad value and, for an average, the reciprocals, as fp16 numbers. */
static int read_values(const npu_regfile *rf, pool_cfg *k, char *err,
                       size_t n) {
  uint32_t pad = rf->value[NPU_PPU_PADDING_VALUE_1_CFG];
  if (pad > 0xffff || R(PPU_PADDING_VALUE_2_CFG, PAD_VALUE_1))
    return dg_npu_sim_fail(err, n, "PPU pad value 0x%x is not an fp16 number",
                           pad);
  k->pad = dg_f16_to_f32((uint16_t)pad);
  if (isnan(k->pad))
    return dg_npu_sim_fail(err, n, "PPU pad value is NaN");
  if (k->method != 0)
    return 0;
  uint32_t rw = R(PPU_RECIP_KERNEL_WIDTH, RECIP_KERNEL_WIDTH),
           rh = R(PPU_RECIP_KERNEL_HEIGHT, RECIP_KERNEL_HEIGHT);
  k->recip_w = rw <= 0xffff ? dg_f16_to_f32((uint16_t)rw) : NAN;
  k->recip_h = rh <= 0xffff ? dg_f16_to_f32((uint16_t)rh) : NAN;
  if (!(k->recip_w > 0 && k->recip_h > 0 && isfinite(k->recip_w) &&
        isfinite(k->recip_h)))
    return dg_npu_sim_fail(
        err, n,
        "PPU average reciprocals 0x%x, 0x%x are not positive "
        "fp16 numbers",
        rw, rh);
  /* Anything but 65536/k (to fp16 precision) is a generator bug. */
  if (fabsf(k->recip_w * (float)k->kw - 65536.0f) > 65536.0f / 1024 ||
      fabsf(k->recip_h * (float)k->kh - 65536.0f) > 65536.0f / 1024)
    return dg_npu_sim_fail(err, n,
                           "PPU average reciprocals %g, %g do not match the "
                           "%dx%d window",
                           (double)k->recip_w, (double)k->recip_h, k->kh,
                           k->kw);
  return 0;
}

static int bind_buffers(const npu_sim_job *job, const npu_regfile *rf,
                        pool_cfg *k, char *err, size_t n) {
  uint32_t a_in = rf->value[NPU_PPU_RDMA_SRC_BASE_ADDR],
           a_out = rf->value[NPU_PPU_DST_BASE_ADDR];
  if ((a_in | a_out) & 15)
    return dg_npu_sim_fail(err, n, "a PPU base address is not 16-byte aligned");
  size_t in_len = (size_t)((k->c + 7) / 8) * k->h * k->w * 16;
  size_t out_len = (size_t)((k->c + 7) / 8) * k->oh * k->ow * 16;
  if (!(k->in =
            dg_npu_sim_map(job, a_in, in_len, false, "PPU input", err, n)) ||
      !(k->out =
            dg_npu_sim_map(job, a_out, out_len, true, "PPU output", err, n)))
    return -1;
  return 0;
}

static size_t at(int ch, int y, int x, int h, int w) {
  return ((((size_t)(ch / 8) * h + y) * w + x) * 8 + ch % 8) * 2;
}

static float tap(const pool_cfg *k, int ch, int y, int x) {
  if (y < 0 || y >= k->h || x < 0 || x >= k->w)
    return k->pad;
  size_t i = at(ch, y, x, k->h, k->w);
  return dg_f16_to_f32((uint16_t)(k->in[i] | k->in[i + 1] << 8));
}

/* One output: the window reduced, rounded once to fp16. */
static uint16_t window(const pool_cfg *k, npu_pool_avg avg, int ch, int oy,
                       int ox) {
  double acc = k->method == 1 ? -INFINITY : k->method == 2 ? INFINITY : 0;
  for (int ky = 0; ky < k->kh; ky++)
    for (int kx = 0; kx < k->kw; kx++) {
      double v = tap(k, ch, oy * k->sy + ky - k->pt, ox * k->sx + kx - k->pl);
      if (k->method == 1)
        acc = v > acc ? v : acc;
      else if (k->method == 2)
        acc = v < acc ? v : acc;
      else
        acc += v;
    }
  if (k->method == 0)
    acc = avg == NPU_POOL_AVG_EXACT
              ? acc / (k->kh * k->kw)
              : acc * k->recip_w * k->recip_h / 4294967296.0;
  /* Evaluated in double, then rounded to fp32 and to fp16: how the PPU
   * rounds internally is unknown (README findings); both modes stay well
   * inside the declared 1 LSB after the host's rounding to int8. */
  return dg_f32_to_f16((float)acc);
}

static void execute(const pool_cfg *k, npu_pool_avg avg) {
  for (int ch = 0; ch < k->c; ch++)
    for (int oy = 0; oy < k->oh; oy++)
      for (int ox = 0; ox < k->ow; ox++) {
        uint16_t v = window(k, avg, ch, oy, ox);
        size_t i = at(ch, oy, ox, k->oh, k->ow);
        k->out[i] = (uint8_t)v;
        k->out[i + 1] = (uint8_t)(v >> 8);
      }
}

int dg_npu_sim_ppu(const npu_sim_job *job, const npu_regfile *rf, bool run,
                   char *err, size_t n) {
  pool_cfg k;
  memset(&k, 0, sizeof k);
  if (check_modes(rf, err, n) || read_geometry(rf, &k, err, n) ||
      read_values(rf, &k, err, n) || bind_buffers(job, rf, &k, err, n))
    return -1;
  if (run)
    execute(&k, job->pool_avg);
  return 0;
}
