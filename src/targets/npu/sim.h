/* The simulator: decodes a task's command list, validates it statically,
 * and runs the functional model CNA -> CORE -> DPU on host buffers that
 * stand in for NPU memory (IOVAs are plain numbers; 0 is valid).
 *
 * Modelled subset: int8 direct and depthwise conv with per-channel bias
 * from BRDMA, OW_OP (weight zero point) and OUT_CVT requantisation, output
 * to memory; only the register configurations Mesa's recipe produces
 * (strides, entry counts) are accepted, anything else is an error rather
 * than a guess. A list that enables only PPU|PPU_RDMA is a standalone
 * pooling task (sim_ppu.c): fp16 max, min and average from memory.
 *
 * Padding: a padded pixel's channel lane reads one byte of CNA_PAD_CON1,
 * not the whole value: in lanes 0..31 of every 64 an odd lane reads byte
 * 1 and an even lane byte 0 (16-bit pad elements), lanes 32..63 read byte
 * 0. This reproduces the Teflon golden capture byte for byte (word
 * 0x0000007e: odd lanes below 32 pad with 0); the split at 32 and direct
 * mode are inference, see src/targets/npu/README.md (findings) and
 * npu-hw-check's pad-lane probes.
 *
 * fp16 direct conv (sim_f16.c), the configuration gen_f16.c writes: fp16
 * input, weights and output, every DPU stage bypassed. ASSUMED, not
 * confirmed on a board (docs/npu.md, "fp16 convolution"): each fp16 x fp16
 * product is exact (it fits binary32) and the products are summed in
 * binary32, in the weight cube's order (32-channel group, ky, kx, channel);
 * OUT_CVT's FP32TOFP16 converter rounds to nearest even (overflow to
 * infinity); PAD_VALUE's low 16 bits are the binary16 pad; output channels
 * past WEIGHT_KERNELS are written as +0.0. A board that accumulates in fp16
 * or truncates at the output will differ by more than the simulator: the
 * target declares 1 fp16 ulp (dg_device_info.f16_max_ulp_deviation); only a
 * board can settle it (npu-hw-check has no fp16 case yet).
 */
#ifndef DG_NPU_SIM_H
#define DG_NPU_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How OUT_CVT rounds (acc * scale) >> shift: disputed (docs/npu.md,
 * "Requantisation and rounding"), so a switch until a board settles it.
 * The golden capture has no ties and cannot tell them apart. */
typedef enum npu_round {
  NPU_ROUND_HALF_UP,   /* add 2^(shift-1), arithmetic shift (default) */
  NPU_ROUND_HALF_AWAY, /* NVDLA-style: ties away from zero */
  NPU_ROUND_HALF_EVEN, /* RUS's measurement */
} npu_round;

/* How the PPU's average is modelled (sim_ppu.c). The sources agree that
 * the PPU has no divider and multiplies the window sum by the fp16
 * reciprocals held in RECIP_KERNEL_WIDTH/HEIGHT (65536/k each) and 2^-32;
 * the precision of that arithmetic is not stated anywhere, so a switch
 * until a board settles it (npu-hw-check's average probe). */
typedef enum npu_pool_avg {
  NPU_POOL_AVG_RECIP, /* sum x fp16 recip_w x fp16 recip_h x 2^-32, the
                         result rounded to fp16 (default) */
  NPU_POOL_AVG_EXACT, /* sum / (kh x kw) rounded to fp16: what an exact
                         divider would give */
} npu_pool_avg;

typedef struct npu_sim_buffer {
  const char *name;
  uint32_t iova;
  size_t size;
  uint8_t *data;
  bool is_output; /* listed as written by the job */
} npu_sim_buffer;

typedef struct npu_sim_job {
  const uint64_t *words;
  int word_count;
  npu_sim_buffer *buffers;
  int buffer_count;
  npu_round round;
  npu_pool_avg pool_avg; /* PPU average model; 0 = NPU_POOL_AVG_RECIP */
} npu_sim_job;

/* 0 on success; -1 with err set when the list or the job is invalid. */
int dg_npu_sim_run(const npu_sim_job *job, char *err, size_t err_size);
/* Decode and static validation only (no buffer is touched): what every
 * backend checks before it submits. */
int dg_npu_sim_check(const npu_sim_job *job, char *err, size_t err_size);
/* DG_NPU_SIM_ROUND=half-up|half-away|half-even, default half-up. */
npu_round dg_npu_sim_round_default(void);
/* DG_NPU_SIM_POOL_AVG=recip|exact, default recip. */
npu_pool_avg dg_npu_sim_pool_avg_default(void);

#endif
