/* dg-bench --scale: how building, importing and compiling grow with the
 * size of a graph. A chain of n relu nodes is built through the builder,
 * imported from an ONNX model of the same chain (dg_onnx_load_memory;
 * -1 in a build without ONNX import), and the built graph compiled on
 * each device; the table gives microseconds per node at
 * each size, so that linear growth reads as a flat column. Not a timed
 * test: the figures are printed, never asserted. */
#ifndef DG_BENCH_SCALE_H
#define DG_BENCH_SCALE_H

#include "graph.h"

#include <stdio.h>

/* Runs the scale bench over the context's devices (only `device` when it
 * is >= 0); JSON lines also to jf when not NULL. Returns 0, or 1 when a
 * size failed to build, import or compile (said on stderr). */
int bench_scale(dg_context *ctx, int device, int quick, FILE *jf);

#endif
