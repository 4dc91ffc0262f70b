/* Command-stream decoder (see decode.h). */
#include "decode.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int fail(char *err, size_t n, int idx, uint64_t w, const char *fmt,
                ...) {
  int k = snprintf(err, n, "word %d (0x%016" PRIx64 "): ", idx, w);
  if (k >= 0 && (size_t)k < n) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + k, n - (size_t)k, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static int block_of_target(uint16_t target) {
  for (int b = 0; b < NPU_BLOCK_COUNT; b++)
    if (b != NPU_BLOCK_GLOBAL && dg_npu_blocks[b].id == (target & ~3u))
      return b;
  return -1;
}

/* Op-enable bit of each block that a list may write (PC has none: the
 * trailer writes it). */
static uint32_t block_enable_bit(int b) {
  switch (b) {
  case NPU_BLOCK_CNA:
    return NPU_EN_CNA;
  case NPU_BLOCK_CORE:
    return NPU_EN_CORE;
  case NPU_BLOCK_DPU:
    return NPU_EN_DPU;
  case NPU_BLOCK_DPU_RDMA:
    return NPU_EN_DPU_RDMA;
  case NPU_BLOCK_PPU:
    return NPU_EN_PPU;
  case NPU_BLOCK_PPU_RDMA:
    return NPU_EN_PPU_RDMA;
  default:
    return 0;
  }
}

static int check_write(npu_regfile *rf, const uint64_t *words, int i,
                       uint32_t *written_blocks, char *err, size_t n) {
  uint64_t w = words[i];
  uint16_t target = npu_word_target(w), off = npu_word_offset(w);
  uint32_t value = npu_word_value(w);
  /* Bit 0 marks a register write; bit 1 appears once in the vendor
   * stream (0x1003 on DPU_OFFSET_PEND), meaning unknown, so accepted and
   * counted. */
  int b = (target & 1) ? block_of_target(target) : -1;
  if (b < 0)
    return fail(err, n, i, w, "unknown target 0x%04x", target);
  int r = dg_npu_reg_find(off);
  if (r < 0)
    return fail(err, n, i, w, "unknown register 0x%04x", off);
  if ((int)dg_npu_regs[r].block != b)
    return fail(err, n, i, w, "register %s written with the %s target 0x%04x",
                dg_npu_regs[r].name, dg_npu_blocks[b].name, target);
  uint32_t reserved = value & ~dg_npu_reg_field_mask((npu_reg)r);
  if (reserved)
    return fail(err, n, i, w, "reserved bits 0x%08" PRIx32 " set in %s",
                reserved, dg_npu_regs[r].name);
  if (target & 2)
    rf->vendor_target_words++;
  rf->value[r] = value;
  rf->written[r] = 1;
  rf->last_word[r] = i;
  *written_blocks |= block_enable_bit(b);
  return 0;
}

int dg_npu_decode(const uint64_t *words, int count, npu_regfile *rf, char *err,
                  size_t n) {
  memset(rf, 0, sizeof *rf);
  for (int r = 0; r < NPU_REG_COUNT; r++)
    rf->last_word[r] = -1;
  if (count < 4) {
    snprintf(err, n, "list of %d words: shorter than the 4-word trailer",
             count);
    return -1;
  }
  uint32_t written_blocks = 0;
  int op_en_at = -1;
  for (int i = 0; i < count; i++) {
    uint64_t w = words[i];
    uint16_t target = npu_word_target(w);
    if (w == 0)
      continue; /* no-op (Mesa's single-task PC_BASE_ADDRESS slot) */
    if (target == NPU_TARGET_PRE_OP_EN) {
      if (w != (uint64_t)NPU_TARGET_PRE_OP_EN << 48)
        return fail(err, n, i, w, "0x0041 control word with non-zero bits");
      if (i != count - 2)
        return fail(err, n, i, w, "0x0041 word not just before op-enable");
      continue;
    }
    if (target == NPU_TARGET_OP_EN) {
      uint16_t off = npu_word_offset(w);
      /* Mesa addresses PC_OPERATION_ENABLE (0x0008), the TRM and the
       * vendor GLOBAL_OPERATION_ENABLE (0xf008); same value either way. */
      if (off != dg_npu_regs[NPU_PC_OPERATION_ENABLE].offset &&
          off != dg_npu_regs[NPU_GLOBAL_OPERATION_ENABLE].offset)
        return fail(err, n, i, w, "op-enable word at register 0x%04x", off);
      uint32_t v = npu_word_value(w);
      uint32_t reserved =
          v & ~dg_npu_reg_field_mask(NPU_GLOBAL_OPERATION_ENABLE);
      if (reserved)
        return fail(err, n, i, w, "reserved op-enable bits 0x%08" PRIx32,
                    reserved);
      if (i != count - 1)
        return fail(err, n, i, w, "op-enable word before the end of the list");
      rf->op_en = v;
      op_en_at = i;
      continue;
    }
    if (check_write(rf, words, i, &written_blocks, err, n))
      return -1;
  }
  int last = count - 1;
  if (op_en_at != last)
    return fail(err, n, last, words[last],
                "missing op-enable word (target 0x0081) at the end");
  if (words[last - 1] != (uint64_t)NPU_TARGET_PRE_OP_EN << 48)
    return fail(err, n, last - 1, words[last - 1],
                "missing 0x0041 word before op-enable");
  if (rf->last_word[NPU_PC_REGISTER_AMOUNTS] != last - 2)
    return fail(err, n, last - 2, words[last - 2],
                "trailer: expected PC_REGISTER_AMOUNTS");
  if (words[last - 3] != 0 && rf->last_word[NPU_PC_BASE_ADDRESS] != last - 3)
    return fail(err, n, last - 3, words[last - 3],
                "trailer: expected PC_BASE_ADDRESS or a no-op");
  uint32_t missing = written_blocks & ~rf->op_en;
  if (missing) {
    for (int b = 0; b < NPU_BLOCK_COUNT; b++)
      if (block_enable_bit(b) & missing)
        return fail(err, n, last, words[last],
                    "%s registers written but %s not enabled",
                    dg_npu_blocks[b].name, dg_npu_blocks[b].name);
  }
  if ((rf->op_en & NPU_EN_DPU) && !(rf->op_en & NPU_EN_DPU_RDMA))
    return fail(err, n, last, words[last],
                "DPU enabled without DPU_RDMA (hangs on mainline)");
  if ((rf->op_en & NPU_EN_CNA) &&
      (rf->op_en & (NPU_EN_CORE | NPU_EN_DPU)) != (NPU_EN_CORE | NPU_EN_DPU))
    return fail(err, n, last, words[last],
                "CNA enabled without CORE and DPU to take its results");
  /* The PPU pools what PPU_RDMA reads from memory or what the DPU hands
   * it; PPU_RDMA feeds nothing else (TRM block diagram). */
  if ((rf->op_en & NPU_EN_PPU_RDMA) && !(rf->op_en & NPU_EN_PPU))
    return fail(err, n, last, words[last],
                "PPU_RDMA enabled without the PPU it feeds");
  if ((rf->op_en & NPU_EN_PPU) && !(rf->op_en & (NPU_EN_PPU_RDMA | NPU_EN_DPU)))
    return fail(err, n, last, words[last],
                "PPU enabled with no input (neither PPU_RDMA nor DPU)");
  if (!rf->op_en)
    return fail(err, n, last, words[last], "op-enable enables no block");
  return 0;
}
