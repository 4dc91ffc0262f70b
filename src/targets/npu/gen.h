/* Command-stream generator for one int8 convolution task (direct or
 * depthwise, per-tensor quantisation) that fits the CBUF in one task.
 * Emission order and formulas follow Mesa's hardware-validated recipe
 * (docs/npu.md, "One int8 convolution"); every value goes through the
 * field packers of regs.h.
 * Addresses are emitted as relocations: the backend patches the IOVAs of
 * its buffers (they differ per file descriptor, and 0 is a valid IOVA).
 * An fp16 direct conv task (precision NPU_PREC_FP16) goes through the same
 * entry points to gen_f16.c.
 */
#ifndef DG_NPU_GEN_H
#define DG_NPU_GEN_H

#include "dpu_requant.h"
#include "regs.h"

#include <stdbool.h>
#include <stddef.h>

/* The precision of a conv task: the CNA/CORE/DPU precision code (TRM:
 * 0 int8, 2 fp16). Zero, the default, is the int8 path. */
typedef enum npu_precision {
  NPU_PREC_INT8 = 0,
  NPU_PREC_FP16 = 2,
} npu_precision;

/* All values in the NPU's signed int8 domain (uint8 tensors: minus 128).
 * fp16 tasks (precision NPU_PREC_FP16, gen_f16.c) are direct convs with
 * fp16 input, weights and output and no bias, zero point or requant:
 * those fields must be 0, depthwise false. */
typedef struct npu_conv_desc {
  int in_c, in_h, in_w;
  int out_c, out_h, out_w;
  int k_h, k_w, stride_y, stride_x;
  int pad_top, pad_left; /* bottom/right follow from the output size */
  bool depthwise;
  int32_t x_zp;            /* input zero point = pad value */
  int32_t w_zp;            /* weight zero point (BS_OW_OP = -w_zp) */
  int32_t y_zp;            /* output zero point (OUT_CVT_OFFSET) */
  float multiplier;        /* (sx * sw) / sy in fp32; per_channel: the gain */
  int truncate_bits;       /* CORE_CLIP_TRUNCATE; bias divided accordingly */
  npu_precision precision; /* NPU_PREC_INT8 unless set */
  /* Output channels with different multipliers (dpu_requant.h): BRDMA reads
   * 64-byte groups (bias, 0, multiplier C per channel) instead of the
   * int32 biases, the BS stage multiplies by C and shifts by bs_shift,
   * OUT_CVT applies `multiplier` (the task's gain). truncate_bits 0. */
  bool per_channel;
  int bs_shift;
} npu_conv_desc;

typedef enum npu_buffer {
  NPU_BUF_INPUT,
  NPU_BUF_WEIGHTS,
  NPU_BUF_BIAS,
  NPU_BUF_OUTPUT,
  NPU_BUF_COUNT
} npu_buffer;

typedef struct npu_reloc {
  int word; /* index of the word whose value is an address */
  npu_buffer buffer;
  uint32_t offset; /* added to the buffer's IOVA */
} npu_reloc;

#define NPU_STREAM_MAX 192
typedef struct npu_stream {
  uint64_t words[NPU_STREAM_MAX];
  int count;
  npu_reloc relocs[8];
  int reloc_count;
  bool overflow; /* more words than NPU_STREAM_MAX (a generator bug) */
} npu_stream;

/* Limits of one task: 11-bit width/height fields; one kernel's weights
 * in one 32 KB CBUF bank. */
#define NPU_MAX_DIM 2047
#define NPU_KERNEL_BYTES_MAX 32768

/* Which limit a conv that does not fit one task hit. */
typedef enum npu_misfit {
  NPU_FITS,
  NPU_MISFIT_DEPTHWISE, /* channel multiplier != 1 */
  NPU_MISFIT_SIZE,      /* a width/height over the 11-bit fields */
  NPU_MISFIT_KERNEL,    /* one kernel's weights over a bank */
  NPU_MISFIT_BANKS,     /* input + weight banks over 12 */
} npu_misfit;

/* CBUF plan of a one-task conv. */
typedef struct npu_conv_plan {
  npu_misfit misfit; /* NPU_FITS when dg_npu_conv_plan_make succeeded */
  /* Banks the CNA is given; on NPU_MISFIT_BANKS, the banks needed. */
  int data_banks, weight_banks;
  int data_entries; /* CNA_CBUF_CON1 */
  int out_channels; /* channels the CORE/DPU produce (padded) */
  size_t input_bytes, weight_bytes, bias_bytes, output_bytes; /* buffers */
} npu_conv_plan;

/* False (why set) when the conv cannot run as one task: the one rule of
 * "fits" (the tiler of lower.c asks it about every candidate slice). */
bool dg_npu_conv_plan_make(const npu_conv_desc *d, npu_conv_plan *p, char *why,
                           size_t why_size);

/* Generates the task's list. False (why set) on a field overflow or a
 * shape that does not fit. */
bool dg_npu_gen_conv(const npu_conv_desc *d, npu_stream *s, char *why,
                     size_t why_size);

/* The fp16 versions (gen_f16.c), reached through the two functions above
 * when d->precision is NPU_PREC_FP16. The plan's bias_bytes is 0: the
 * list reads no bias buffer. */
/* The planners' shared rules (gen.c). Sizes: the 11-bit width/height
 * fields (misfit NPU_MISFIT_SIZE). Banks: entries_per_row x in_h input
 * entries and wbytes of weights, plus a spare weight bank, within the 12
 * CBUF banks (misfit NPU_MISFIT_BANKS, why prefixed with what); on success
 * data_entries and both bank counts are set, the weights getting every
 * bank the input leaves. */
bool dg_npu_plan_sizes_fit(const npu_conv_desc *d, npu_conv_plan *p, char *why,
                           size_t why_size);
bool dg_npu_plan_banks(npu_conv_plan *p, int entries_per_row, int in_h,
                       size_t wbytes, const char *what, char *why,
                       size_t why_size);

bool dg_npu_conv_plan_make_f16(const npu_conv_desc *d, npu_conv_plan *p,
                               char *why, size_t why_size);
bool dg_npu_gen_conv_f16(const npu_conv_desc *d, npu_stream *s, char *why,
                         size_t why_size);

/* Adds offset[b] to every relocation into buffer b: a task placed at an
 * offset inside a buffer shared with other tasks. */
void dg_npu_stream_rebase(npu_stream *s, const uint32_t offset[NPU_BUF_COUNT]);

/* Sets CNA_CBUF_CON0.WEIGHT_REUSE in the list (both of its writes): the
 * CNA keeps the weights the previous task on the core loaded instead of
 * fetching them (Mesa sets it on every task but the first of a conv whose
 * weights fit, all on one core). The caller guarantees the previous task
 * on the core had the same weights and the same bank split. */
void dg_npu_stream_weight_reuse(npu_stream *s);

/* Writes the buffers' IOVAs into the relocated words. */
void dg_npu_stream_patch(npu_stream *s, const uint32_t iova[NPU_BUF_COUNT]);

#endif
