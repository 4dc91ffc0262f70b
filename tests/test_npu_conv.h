/* Shared by the NPU tests: one qconv2d graph run on an NPU device and on
 * the CPU, compared within the NPU's declared 1 LSB. */
#ifndef TEST_NPU_CONV_H
#define TEST_NPU_CONV_H

#include "graph.h"

#include <stddef.h>

typedef struct npu_case {
  int N, C, O, H, W, K, S;
  int same, dw, relu;
  int x_u8, y_u8, per_channel;
  unsigned seed;
} npu_case;

/* The NPU device of ctx, or -1. */
int npu_device_index(dg_context *ctx);

/* Runs c on device npu (the node pinned there under the strict policy, so
 * a decline is an error) and on the CPU; returns the largest |difference|
 * in LSBs, or -1 with err set. exact/total count outputs. */
int npu_case_run(dg_context *ctx, int npu, const npu_case *c, long *exact,
                 long *total, char *err, size_t n);

/* The conv matrix (Teflon-like shapes) through npu_case_run: returns the
 * number of convs outside 1 LSB or failing; prints a summary line. */
int npu_matrix_run(dg_context *ctx, int npu, const char *label, int quick);

/* An f16 conv2d (bias and activation optional) on the NPU and on the
 * CPU. */
typedef struct npu_f16_case {
  int N, C, O, H, W, K, S;
  int same, bias, act; /* act: dg_activation */
  unsigned seed;
} npu_f16_case;

/* Runs c on device npu (pinned, strict) and on the CPU; returns the
 * largest |npu - cpu| relative to the largest |cpu| of the output, or -1
 * with err set. */
double npu_f16_case_run(dg_context *ctx, int npu, const npu_f16_case *c,
                        char *err, size_t n);

/* An f16 conv matrix (1x1/3x3/5x5, stride 1/2, SAME/VALID, 1..64
 * channels, bias, relu/relu6) through npu_f16_case_run. A conv fails when
 * it errors, or differs from the CPU by more than one fp16 ulp of the
 * largest magnitude (2^-10 relative) without a bias, or by more than the
 * declared verify tolerance (1e-2 + 2^-10) with one. Prints a summary;
 * returns the number failing. */
int npu_f16_matrix_run(dg_context *ctx, int npu, const char *label, int quick);

#endif
