/* Shared by the NPU tests: one qconv2d graph run on an NPU device and on
 * the CPU, compared within the NPU's declared 1 LSB. */
#ifndef TEST_NPU_CONV_H
#define TEST_NPU_CONV_H

#include "graph.h"

#include <stddef.h>

typedef struct npu_case {
  int N, C, O, H, W, K, S;
  int same, dw, relu;
  int pad; /* > 0: that padding on every side (overrides same) */
  /* per_channel: 1 scales 0.005..0.015 (one task reaches them all through
   * the BS multiplier), 2 the second half of the channels x 64 (two runs),
   * 3 the odd channels x 64 (a run per channel). */
  int x_u8, y_u8, per_channel;
  unsigned seed;
} npu_case;

/* Compiles g (destroyed here) under the strict policy, pinned to device,
 * or on the CPU alone when device < 0, and runs it once with input "x"
 * and output "y". 0, or -1 with the builder's or compiler's diagnostic in
 * err. */
int npu_graph_run(dg_graph *g, int device, const void *x, size_t x_bytes,
                  void *y, size_t y_bytes, char *err, size_t n);

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

/* How the NPU target cut c's node (lower.h), found by lowering it. */
typedef struct npu_cut_info {
  int tasks, blocks, slices;   /* channel blocks, row slices */
  int top_pad_tasks_not_first; /* tasks with top padding not at row 0 */
  int bottom_pad_tasks_not_last;
  int bottom_pad_tasks; /* tasks with implied bottom padding */
} npu_cut_info;
/* 0, or -1 with err set (declined, or the graph does not build). */
int npu_case_cut(dg_context *ctx, const npu_case *c, npu_cut_info *info,
                 char *err, size_t n);

/* The shapes that need tiling (ResNet-50, MobileNet-v2 layers and a few
 * made for the purpose) against the CPU within 1 LSB, each checked to be
 * cut as its label says. quick: only the cheaper ones. Returns the number
 * failing; prints one line per case. */
int npu_tiled_run(dg_context *ctx, int npu, const char *label, int quick);

/* Lowers a sweep of conv shapes (channels 3..1024, sizes 5..230, kernels
 * 1/3/7, strides 1/2, VALID/SAME, direct and depthwise; qconv2d, or f16
 * conv2d when f16) without running them: every task of a taken conv must
 * pass the simulator's static checks at its offsets in the node's buffers
 * and the tasks must cover every (channel, row) once; a declined one must
 * say why in at most 60 characters (what a fallback's plan shows). Returns
 * the number of bad shapes; counts the taken and declined ones. */
int npu_tiling_sweep(dg_context *ctx, int f16, int *taken, int *declined);

/* qfully_connected (x [M][K], w [N][K]) or qmatmul (a [B][M][K] with a
 * constant b [K][N]) on device npu against the CPU. */
typedef struct npu_fc_case {
  int matmul, B, M, K, N;
  int x_u8, y_u8, per_channel, relu, bias;
  unsigned seed;
} npu_fc_case;
int npu_fc_case_run(dg_context *ctx, int npu, const npu_fc_case *c, long *exact,
                    long *total, char *err, size_t n);
/* A set of fc/matmul cases (single row, batched rows, tiled along rows and
 * kernels); returns the number failing. */
int npu_fc_run(dg_context *ctx, int npu, const char *label, int quick);
/* Chains of qconv2d nodes handing cubes over (test_npu_chain.c); the
 * number failing, each printed under label. */
int npu_chain_run(dg_context *ctx, int npu, const char *label, int quick);

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

/* How the NPU target cut c's node, found by lowering it (npu_case_cut's
 * f16 twin). */
int npu_f16_case_cut(dg_context *ctx, const npu_f16_case *c, npu_cut_info *info,
                     char *err, size_t n);

/* f16 convs that need tiling (rows; stride 2 with bottom padding; rows and
 * channels; a ResNet-50 layer) against the CPU within the f16 matrix's
 * limits, each checked to be cut as its label says. quick: only the
 * cheaper ones. Returns the number failing; prints one line per case. */
int npu_f16_tiled_run(dg_context *ctx, int npu, const char *label, int quick);

#endif
