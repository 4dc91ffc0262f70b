/* DG_PRECISION_FAST_F16, one of the compile-time passes (passes.h). */
#ifndef DG_FAST_F16_H
#define DG_FAST_F16_H

#include "passes.h"
#include "rewrite.h"

/* Where devs asks for it (devs->precision FAST_F16) and an allowed device
 * computes in f16 (devs->gpu_f16): every f32 tensor of the graph becomes
 * f16 (constants converted, rounding to nearest even; value tensors
 * retyped), its f32 inputs and outputs marked bound as f32
 * (dg_io_binding.host_f32, converted by the session at each run). Not
 * for graphs holding quantize or dequantize nodes or f16 tensors, or
 * bound NHWC. devs->lowered says it was done, devs->note why not. false on
 * out-of-memory (the graph unchanged, or partly retyped: the compile
 * fails then). */
bool dg_fast_f16(dg_rewrite *rw, dg_pass_devices *devs);

#endif
