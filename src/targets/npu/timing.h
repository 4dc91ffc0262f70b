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
 * the longer of the two); host: the CPU's packing and unpacking of the
 * node's input and output (NCHW <-> NC1HWC2). The fixed costs depend on
 * the kernel driver:
 *  - the vendor's rknpu (what RKNN's published figures ran on) hands a
 *    job's tasks to the core's PC, which fetches each task's command list
 *    itself and raises one interrupt at the job's last task (rknpu_job.c:
 *    PC_TASK_CONTROL holds the task count, INT_MASK the last task's):
 *    task_us the fetches, job_us each job's submit, cache syncs and its
 *    one interrupt;
 *  - mainline rocket starts each task from its interrupt handler: an
 *    interrupt a task (Mesa's measurement), the submit a job.
 * total = task_us + job_us + host_us + the sum over tasks of max(compute,
 * ddr) on one core (rknpu); total3 the same with the tasks dealt over
 * three cores (compute in parallel, DRAM shared, fixed costs per core in
 * parallel too; rknpu only: rocket does not split a job); rocket_us the
 * one-core total with rocket's fixed costs. */
typedef struct npu_timing {
  double compute_us, ddr_us, task_us, job_us, host_us;
  double total_us, total3_us, rocket_us;
} npu_timing;

void dg_npu_timing_conv(const npu_conv *c, npu_timing *t);

#endif
