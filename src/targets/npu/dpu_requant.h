/* The DPU's int8 requantisation arithmetic, in one place: the OUT_CVT
 * pair of a per-tensor multiplier, and how a task whose output channels
 * have different multipliers reaches them through the BS stage's
 * per-channel multiplier (docs/npu.md, "Requantisation and rounding").
 *
 * Per channel, the DPU computes (BS stage, then OUT_CVT):
 *   v = sat32(round(((acc + A[c]) x C[c]) >> s))
 *   y = sat8(round((v x SCALE) >> SHIFT) + OFFSET)
 * with A the folded int32 bias, C an int16 read with it from BRDMA, s the
 * task's BS shift, and SCALE/SHIFT the task's one OUT_CVT gain G. So
 * channel c gets C[c] x G / 2^s. The plan below puts the block's largest
 * multiplier at C = 32767 and takes the smallest s for which a saturated
 * v still saturates y (G x 2^31 >= 512): the finest G, so the extra
 * rounding of v costs nothing measurable. A channel's own error is
 * 1 / (2 C[c]) relative; C >= NPU_BS_MUL_MIN keeps it under 0.07 LSB of
 * any unsaturated output, inside the NPU's declared 1 LSB.
 */
#ifndef DG_NPU_REQUANT_H
#define DG_NPU_REQUANT_H

#include <stdbool.h>
#include <stdint.h>

/* OUT_CVT_SCALE / OUT_CVT_SHIFT for a multiplier (Mesa's rule, from the
 * fp32 bits: 15-bit scale = 2^14 + top 14 mantissa bits + 1, shift =
 * 141 - biased exponent, one less when truncating). False if out of
 * range. */
bool dg_npu_requant_regs(float multiplier, int truncate_bits, uint32_t *scale,
                         uint32_t *shift);

/* The largest and smallest per-channel multiplier C a plan uses: a block
 * spans multipliers within a factor NPU_BS_MUL_MAX / NPU_BS_MUL_MIN (16). */
#define NPU_BS_MUL_MAX 32767
#define NPU_BS_MUL_MIN 2048

/* Whether multipliers in [lo, hi] can share one task. */
bool dg_npu_bs_spread_ok(float lo, float hi);

/* The task's OUT_CVT gain (as a multiplier for dg_npu_requant_regs) and
 * BS shift for a block whose largest multiplier is hi. False when no
 * shift in 0..63 or no OUT_CVT pair reaches it. */
bool dg_npu_bs_plan(float hi, float *gain, int *bs_shift);

/* C of a channel with multiplier m in a task of gain / bs_shift (the
 * gain's OUT_CVT pair, as the hardware applies it). */
int16_t dg_npu_bs_mul(float m, float gain, int bs_shift);

#endif
