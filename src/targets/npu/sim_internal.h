/* Shared between the simulator's int8 model (sim.c) and its fp16 model
 * (sim_f16.c). */
#ifndef DG_NPU_SIM_INTERNAL_H
#define DG_NPU_SIM_INTERNAL_H

#include "decode.h"
#include "sim.h"

/* vsnprintf into err; returns -1 (the simulator's error result). */
int dg_npu_sim_fail(char *err, size_t n, const char *fmt, ...);

/* A conv task's geometry as its CNA, CORE, DPU and DPU_RDMA registers
 * state it (cpad: the input channels padded to the precision's atom). */
typedef struct npu_sim_geom {
  int c, cpad, h, w, oh, ow, oc, oc_real, kh, kw, kernels, sx, sy, pt, pl;
} npu_sim_geom;

/* -1 (err set) unless the list enables exactly the conv pipeline the
 * models cover: CNA, CORE, DPU and DPU_RDMA, no PPU. */
int dg_npu_sim_conv_units(const npu_regfile *rf, char *err, size_t n);

/* Reads the geometry; -1 (err set) on empty sizes or input channels not
 * padded to a multiple of atom (16 int8, 8 fp16). */
int dg_npu_sim_geom_read(const npu_regfile *rf, int atom, npu_sim_geom *g,
                         char *err, size_t n);
/* -1 (err set) when the blocks state different output sizes or the
 * output needs more than the padded input. */
int dg_npu_sim_geom_check(const npu_regfile *rf, const npu_sim_geom *g,
                          char *err, size_t n);

/* The CBUF budget (12 banks of 256 entries of 128 bytes): -1 (err set)
 * when the banks, the input's entries over h rows, the weight bytes or
 * per_kernel weight bytes do not fit. */
int dg_npu_sim_cbuf_check(const npu_regfile *rf, int h, uint32_t per_kernel,
                          char *err, size_t n);

/* The job's buffer holding [addr, addr+len), or NULL. */
npu_sim_buffer *dg_npu_sim_find(const npu_sim_job *job, uint32_t addr,
                                size_t len);
/* The host bytes of [addr, addr+len) in the job's buffers, or NULL with
 * err naming what when no buffer holds them or (output) the buffer is not
 * listed as an output. */
uint8_t *dg_npu_sim_map(const npu_sim_job *job, uint32_t addr, size_t len,
                        bool output, const char *what, char *err, size_t n);

/* True when the decoded list asks for fp16 anywhere (CNA input or
 * processing precision): sim_f16.c takes it, and rejects anything but the
 * fully fp16 recipe. */
static inline bool npu_sim_is_f16(const npu_regfile *rf) {
  return npu_rf(rf, NPU_CNA_CONV_CON1__IN_PRECISION) == 2 ||
         npu_rf(rf, NPU_CNA_CONV_CON1__PROC_PRECISION) == 2;
}

/* Validates (and, if run, executes) an fp16 conv list. */
int dg_npu_sim_f16(const npu_sim_job *job, const npu_regfile *rf, bool run,
                   char *err, size_t n);

#endif
