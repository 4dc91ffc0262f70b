/* The simulator's PPU part (sim_ppu.c), called by sim.c for lists that
 * enable the PPU: validation of a standalone pooling task and its
 * functional model. */
#ifndef DG_NPU_SIM_PPU_H
#define DG_NPU_SIM_PPU_H

#include "decode.h"
#include "sim.h"

#include <stdbool.h>

/* 0 on success (run: the output written); -1 with err set. */
int dg_npu_sim_ppu(const npu_sim_job *job, const npu_regfile *rf, bool run,
                   char *err, size_t err_size);

#endif
