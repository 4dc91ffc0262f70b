/* Command-stream decoder: checks every word of one task's register list
 * and collects the register values it leaves behind.
 *
 * Rules (docs/npu.md, "Command lists"): every word is a no-op, a write to
 * a known register with its own block's target, or one of the two
 * trailing control words; reserved bits are zero; the list ends with
 * PC_BASE_ADDRESS (or a no-op), PC_REGISTER_AMOUNTS, 0x0041, 0x0081 op-enable;
 * every block written is enabled, and an enabled DPU has its DPU_RDMA
 * enabled too (mainline hangs otherwise), an enabled PPU has an input
 * (PPU_RDMA or the DPU) and PPU_RDMA is enabled only with the PPU. Errors
 * name the word index.
 */
#ifndef DG_NPU_DECODE_H
#define DG_NPU_DECODE_H

#include "regs.h"

#include <stddef.h>

typedef struct npu_regfile {
  uint32_t value[NPU_REG_COUNT];
  uint8_t written[NPU_REG_COUNT];
  int last_word[NPU_REG_COUNT]; /* index of the last write, -1 if none */
  uint32_t op_en;               /* NPU_EN_* bits of the op-enable word */
  int vendor_target_words;      /* writes with target bit 1 set (0x1003) */
} npu_regfile;

/* 0 when the list is valid (regs filled), -1 otherwise with err set to
 * "word N (0x...): why". */
int dg_npu_decode(const uint64_t *words, int count, npu_regfile *regs,
                  char *err, size_t err_size);

/* A field of the decoded state. */
static inline uint32_t npu_rf(const npu_regfile *rf, npu_field f) {
  return npu_field_get(f, rf->value[dg_npu_fields[f].reg]);
}

#endif
