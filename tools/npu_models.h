/* npu-report --model: a whole ONNX model on the NPU and the CPU (every
 * node pinned to the NPU under the auto policy, so that each one it
 * declines falls back to the CPU, visibly), the figures issue 27 asks for per
 * model: nodes and MACs on the NPU, its tasks and jobs per run (a task
 * is one completion interrupt on the board), the CPU <-> NPU edges (each
 * a layout conversion on the host), the compile time, and the timing
 * model's estimate of the NPU's share on one core and on three
 * (src/targets/npu/timing.h: a model, not a measurement). */
#ifndef DG_TOOLS_NPU_MODELS_H
#define DG_TOOLS_NPU_MODELS_H

#include "graph.h"

/* Reports on path with the context's NPU device npu (and its CPU); 0, or
 * 1 when the model cannot be imported or compiled (said on stderr). One
 * table row and one JSON line. */
int npu_model_report(dg_context *ctx, int npu, const char *path);

#endif
