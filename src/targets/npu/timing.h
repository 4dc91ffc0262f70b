/* The NPU timing model: what a lowered node (lower.h) would take on the
 * RK3588, estimated, never measured (no board has run it). Placement
 * prices NPU nodes by it and npu-report prints it per layer and per model
 * on one and three cores. docs/npu.md, "Timing model", gives every
 * constant, where it comes from and how it was calibrated against the
 * published RKNN and Mesa figures. */
#ifndef DG_NPU_TIMING_H
#define DG_NPU_TIMING_H

#include "lower.h"

/* One image of a node, in microseconds. compute: the MAC array (a task's
 * MACs at the precision's rate; depthwise at 1/32 of it, one kernel of
 * the 32 a CORE group holds); ddr: its input, weight and output bytes at
 * the NPU's share of DRAM bandwidth, overlapping compute (a task takes
 * the longer of the two); tasks and jobs: the fixed costs of each task
 * (its completion interrupt) and each job (submit and cache syncs);
 * host: the CPU's packing and unpacking of the node's input and output
 * (NCHW <-> NC1HWC2). total = tasks + jobs + host + the sum over tasks of
 * max(compute, ddr) on one core; total3 the same with the tasks dealt
 * over three cores (compute in parallel, DRAM shared, fixed costs per
 * core in parallel too). */
typedef struct npu_timing {
  double compute_us, ddr_us, task_us, job_us, host_us;
  double total_us, total3_us;
} npu_timing;

void dg_npu_timing_conv(const npu_conv *c, npu_timing *t);

#endif
