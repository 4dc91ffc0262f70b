/* The emitter shared by the command-list generators (gen.c: int8,
 * gen_f16.c: fp16, gen_ppu.c: pooling): words are appended to an npu_stream,
 * every value is built through the field packers of regs.h, and the first field
 * that overflows is remembered so that the generator can name it. */
#ifndef DG_NPU_GEN_EMIT_H
#define DG_NPU_GEN_EMIT_H

#include "gen.h"

#include <stdarg.h>
#include <stdio.h>

typedef struct gen {
  npu_stream *s;
  int bad_field; /* first field that overflowed, -1 if none */
} gen;

static inline void push(gen *g, uint64_t w) {
  if (g->s->count >= NPU_STREAM_MAX) {
    g->s->overflow = true;
    return;
  }
  g->s->words[g->s->count++] = w;
}

/* Writes register r from (field, value) pairs, nf of them. */
static inline void put(gen *g, npu_reg r, int nf, ...) {
  npu_value v = npu_value_begin(r);
  va_list ap;
  va_start(ap, nf);
  for (int i = 0; i < nf; i++) {
    npu_field f = (npu_field)va_arg(ap, int);
    uint32_t x = va_arg(ap, uint32_t);
    dg_npu_value_set(&v, f, x);
  }
  va_end(ap);
  if (v.overflow_field >= 0 && g->bad_field < 0)
    g->bad_field = v.overflow_field;
  push(g, dg_npu_reg_word(r, v.bits));
}

/* A whole-register address field, patched later. */
static inline void put_addr(gen *g, npu_reg r, npu_buffer b, uint32_t offset) {
  npu_stream *s = g->s;
  if (s->reloc_count < (int)(sizeof s->relocs / sizeof s->relocs[0]))
    s->relocs[s->reloc_count++] = (npu_reloc){s->count, b, offset};
  push(g, dg_npu_reg_word(r, 0));
}

/* Ends a task's list: no next list (a no-op in PC_BASE_ADDRESS's slot),
 * register amount 0, the 0x0041 word, then the op-enable mask of the
 * blocks the task runs. False (why set) when a value overflowed its field
 * or the list outgrew NPU_STREAM_MAX. */
static inline bool finish(gen *g, uint32_t op_en, char *why, size_t n) {
  push(g, 0);
  put(g, NPU_PC_REGISTER_AMOUNTS, 0);
  push(g, npu_word(NPU_TARGET_PRE_OP_EN, 0, 0));
  push(g, npu_word(NPU_TARGET_OP_EN, op_en,
                   dg_npu_regs[NPU_PC_OPERATION_ENABLE].offset));
  if (g->bad_field >= 0) {
    snprintf(why, n, "value does not fit %s.%s",
             dg_npu_regs[dg_npu_fields[g->bad_field].reg].name,
             dg_npu_fields[g->bad_field].name);
    return false;
  }
  if (g->s->overflow) {
    snprintf(why, n, "command list longer than %d words", NPU_STREAM_MAX);
    return false;
  }
  return true;
}

#define F(reg, field) (int)NPU_##reg##__##field
#define U(x) (uint32_t)(x)

#endif
