/* The cost model of a Vulkan device, by device type. What it must get
 * right (the measured floors: docs/performance.md, "Cost models"):
 * - a CPU-type device (lavapipe) runs on the same cores as the CPU target,
 *   slower, at ~27 us per dispatch and ~65 us per submit: it must never
 *   win placement over the native CPU target;
 * - a tiny graph loses to the CPU on any GPU: a segment costs a submit and
 *   a fence wait (launch_us), each node a dispatch;
 * - a large convolution wins on a discrete GPU, whose throughput is tens
 *   of TFLOP/s against the CPU's hundreds of GFLOP/s.
 * Figures are deliberately conservative (pessimistic per node). */
#include "vk_internal.h"

#include "../../ops/ops.h"

typedef struct cost_figures {
  double launch_us;     /* submit + fence wait of a segment */
  double node_us;       /* per dispatch inside a recorded segment */
  double flops_per_us;  /* sustained, fp32 tiled GEMM */
  double bytes_per_us;  /* device memory */
  double transfer_us_per_byte;
} cost_figures;

static cost_figures figures(const vk_device *vd) {
  switch (vd->cost_type) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    /* ~20 TFLOP/s sustained (our 128x128 f32 GEMM measured 23 TFLOP/s of
     * kernel time on an H200), hundreds of GB/s, PCIe-class staging. */
    return (cost_figures){30, 4, 20e6, 300e3, 1.0 / 8e3};
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
    /* Shares memory with the host: copies are memcpy-speed. */
    return (cost_figures){40, 8, 3e5, 30e3, 1.0 / 20e3};
  default:
    /* CPU-type (lavapipe) or unknown: far slower than native code. */
    return (cost_figures){2000, 60, 2e3, 2e3, 1.0 / 5e3};
  }
}

void dg_vk_cost_init(dg_device *dev) {
  vk_device *vd = dev->impl;
  cost_figures f = figures(vd);
  dev->launch_us = f.launch_us;
  dev->transfer_us_per_byte = f.transfer_us_per_byte;
}

double dg_vk_estimate(dg_device *dev, const dg_ir *ir, const dg_node *n) {
  vk_device *vd = dev->impl;
  cost_figures f = figures(vd);
  const dg_op_def *def = dg_op_def_get(n->op);
  double flops = def ? def->flops(ir, n) : 0;
  double bytes = (double)dg_desc_bytes(&dg_ir_tensor(ir, n->output)->desc);
  for (int k = 0; k < n->input_count; k++)
    if (n->inputs[k])
      bytes += (double)dg_desc_bytes(&dg_ir_tensor(ir, n->inputs[k])->desc);
  /* Work smaller than a few waves of the device keeps it mostly idle:
   * charge the node at least its dispatch cost. */
  return f.node_us + flops / f.flops_per_us + bytes / f.bytes_per_us;
}
