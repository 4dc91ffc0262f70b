/* Shared by the NPU tests: one max_pool2d graph run on an NPU device and
 * on the CPU (max pooling on the NPU is exact). */
#ifndef TEST_NPU_POOLCASE_H
#define TEST_NPU_POOLCASE_H

#include "graph.h"

#include <stddef.h>

typedef struct npu_pool_case {
  int N, C, H, W, K, S;
  int pad;        /* explicit pads on every side (0..K-1) */
  int same, ceil; /* SAME_UPPER padding instead; ceil_mode */
  int u8;
  unsigned seed;
} npu_pool_case;

/* Runs c pinned to device npu (strict: a decline is an error) and on the
 * CPU; returns the number of outputs that differ, or -1 with err set. */
long npu_pool_case_run(dg_context *ctx, int npu, const npu_pool_case *c,
                       char *err, size_t n);

/* The reason the plan shows for a max_pool2d (or, avg non-zero, an
 * avg_pool2d) of dtype t pinned to npu under the auto policy: the node
 * falls back to the CPU, or "" when it was placed on the NPU. */
void npu_pool_plan_reason(dg_context *ctx, int npu, dg_dtype t, int avg, int K,
                          int S, int pad, char *out, size_t n);

#endif
