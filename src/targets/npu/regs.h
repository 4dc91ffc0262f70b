/* RK3588 NPU registers: ids, the 64-bit command word, and field packers,
 * all generated from regs.def (the one register description table).
 *
 * A command word is target << 48 | value << 16 | offset. The target of a
 * register write is its block id | 1; two control targets end a list:
 * 0x0041 (must precede op-enable) and 0x0081 (op-enable of the blocks,
 * value = GLOBAL_OPERATION_ENABLE bits). A word of 0 is a no-op.
 */
#ifndef DG_NPU_REGS_H
#define DG_NPU_REGS_H

#include <stdbool.h>
#include <stdint.h>

typedef enum npu_block {
#define NPU_BLOCK(name, id) NPU_BLOCK_##name,
#define NPU_REG(block, name, offset)
#define NPU_FIELD(block, reg, name, lo, hi)
#include "regs.def"
#undef NPU_BLOCK
#undef NPU_REG
#undef NPU_FIELD
  NPU_BLOCK_COUNT
} npu_block;

typedef enum npu_reg {
#define NPU_BLOCK(name, id)
#define NPU_REG(block, name, offset) NPU_##block##_##name,
#define NPU_FIELD(block, reg, name, lo, hi)
#include "regs.def"
#undef NPU_BLOCK
#undef NPU_REG
#undef NPU_FIELD
  NPU_REG_COUNT
} npu_reg;

typedef enum npu_field {
#define NPU_BLOCK(name, id)
#define NPU_REG(block, name, offset)
#define NPU_FIELD(block, reg, name, lo, hi) NPU_##block##_##reg##__##name,
#include "regs.def"
#undef NPU_BLOCK
#undef NPU_REG
#undef NPU_FIELD
  NPU_FIELD_COUNT
} npu_field;

typedef struct npu_block_info {
  const char *name;
  uint16_t id; /* target = id | 1 */
} npu_block_info;

typedef struct npu_reg_info {
  const char *name; /* "CNA_CONV_CON1" */
  npu_block block;
  uint16_t offset;
} npu_reg_info;

typedef struct npu_field_info {
  const char *name; /* "CONV_MODE" */
  npu_reg reg;
  uint8_t lo, hi;
} npu_field_info;

extern const npu_block_info dg_npu_blocks[NPU_BLOCK_COUNT];
extern const npu_reg_info dg_npu_regs[NPU_REG_COUNT];
extern const npu_field_info dg_npu_fields[NPU_FIELD_COUNT];

/* Control word targets and the op-enable bits (GLOBAL_OPERATION_ENABLE). */
#define NPU_TARGET_PRE_OP_EN 0x0041u
#define NPU_TARGET_OP_EN 0x0081u
enum {
  NPU_EN_CNA = 1u << 0,
  NPU_EN_CORE = 1u << 2,
  NPU_EN_DPU = 1u << 3,
  NPU_EN_DPU_RDMA = 1u << 4,
  NPU_EN_PPU = 1u << 5,
  NPU_EN_PPU_RDMA = 1u << 6,
};

static inline uint64_t npu_word(uint16_t target, uint32_t value,
                                uint16_t offset) {
  return (uint64_t)target << 48 | (uint64_t)value << 16 | offset;
}
static inline uint16_t npu_word_target(uint64_t w) {
  return (uint16_t)(w >> 48);
}
static inline uint32_t npu_word_value(uint64_t w) {
  return (uint32_t)(w >> 16);
}
static inline uint16_t npu_word_offset(uint64_t w) { return (uint16_t)w; }

/* Bits covered by the register's named fields; the rest are reserved. */
uint32_t dg_npu_reg_field_mask(npu_reg r);
/* The register at offset, or -1 when the offset names none. */
int dg_npu_reg_find(uint16_t offset);
/* Field by name within a register ("CNA_CONV_CON1", "CONV_MODE"), -1 if none.
 */
int dg_npu_field_find(npu_reg reg, const char *name);
/* Largest value a field holds. */
static inline uint32_t npu_field_max(npu_field f) {
  unsigned w = dg_npu_fields[f].hi - dg_npu_fields[f].lo + 1u;
  return w >= 32 ? 0xffffffffu : (1u << w) - 1u;
}
/* Reads a field out of a register value. */
static inline uint32_t npu_field_get(npu_field f, uint32_t reg_value) {
  return (reg_value >> dg_npu_fields[f].lo) & npu_field_max(f);
}

/* Builds a register value field by field, remembering the first value
 * that does not fit its field (a generator bug, reported by the caller
 * instead of silently truncated). */
typedef struct npu_value {
  npu_reg reg;
  uint32_t bits;
  int overflow_field; /* -1: none */
} npu_value;

static inline npu_value npu_value_begin(npu_reg reg) {
  npu_value v = {reg, 0, -1};
  return v;
}
void dg_npu_value_set(npu_value *v, npu_field f, uint32_t x);

/* The command word writing value v to register r (target = block id | 1). */
uint64_t dg_npu_reg_word(npu_reg r, uint32_t value);

#endif
