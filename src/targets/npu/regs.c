/* The register tables, generated from regs.def. */
#include "regs.h"

#include <string.h>

const npu_block_info dg_npu_blocks[NPU_BLOCK_COUNT] = {
#define NPU_BLOCK(name, id) {#name, id},
#define NPU_REG(block, name, offset)
#define NPU_FIELD(block, reg, name, lo, hi)
#include "regs.def"
#undef NPU_BLOCK
#undef NPU_REG
#undef NPU_FIELD
};

/* A field's bits within its register (lo..hi inclusive). */
#define NPU_MASK(lo, hi)                                                       \
  ((uint32_t)((0xffffffffull >> (31 - (hi) + (lo))) << (lo)))

const npu_reg_info dg_npu_regs[NPU_REG_COUNT] = {
#define NPU_BLOCK(name, id)
#define NPU_REG(block, name, offset)                                           \
  [NPU_##block##_##name] = {#block "_" #name, NPU_BLOCK_##block, offset},
#define NPU_FIELD(block, reg, name, lo, hi)
#include "regs.def"
#undef NPU_BLOCK
#undef NPU_REG
#undef NPU_FIELD
};

const npu_field_info dg_npu_fields[NPU_FIELD_COUNT] = {
#define NPU_BLOCK(name, id)
#define NPU_REG(block, name, offset)
#define NPU_FIELD(block, reg, name, lo, hi)                                    \
  {#name, NPU_##block##_##reg, lo, hi},
#include "regs.def"
#undef NPU_BLOCK
#undef NPU_REG
#undef NPU_FIELD
};

/* Computed from the field list each time: no mutable state to share
 * between threads, and a register has few fields. */
uint32_t dg_npu_reg_field_mask(npu_reg r) {
  uint32_t m = 0;
  for (int f = 0; f < NPU_FIELD_COUNT; f++)
    if (dg_npu_fields[f].reg == r)
      m |= NPU_MASK(dg_npu_fields[f].lo, dg_npu_fields[f].hi);
  return m;
}

int dg_npu_reg_find(uint16_t offset) {
  for (int r = 0; r < NPU_REG_COUNT; r++)
    if (dg_npu_regs[r].offset == offset)
      return r;
  return -1;
}

int dg_npu_field_find(npu_reg reg, const char *name) {
  for (int f = 0; f < NPU_FIELD_COUNT; f++)
    if (dg_npu_fields[f].reg == reg && !strcmp(dg_npu_fields[f].name, name))
      return f;
  return -1;
}

void dg_npu_value_set(npu_value *v, npu_field f, uint32_t x) {
  if (dg_npu_fields[f].reg != v->reg || x > npu_field_max(f)) {
    if (v->overflow_field < 0)
      v->overflow_field = (int)f;
    return;
  }
  v->bits |= x << dg_npu_fields[f].lo;
}

uint64_t dg_npu_reg_word(npu_reg r, uint32_t value) {
  return npu_word((uint16_t)(dg_npu_blocks[dg_npu_regs[r].block].id | 1u),
                  value, dg_npu_regs[r].offset);
}
