/* The cost model of a Vulkan device, by device type. What it must get
 * right (the measured floors: docs/performance.md, "Cost models"):
 * - a CPU-type device (lavapipe) runs on the same cores as the CPU target,
 *   slower, at ~27 us per dispatch and ~65 us per submit: it must never
 *   win placement over the native CPU target;
 * - a tiny graph loses to the CPU on any GPU: a segment costs a submit and
 *   a fence wait (launch_us), each node a dispatch;
 * - a large convolution wins on a discrete GPU, whose throughput is tens
 *   of TFLOP/s against the CPU's hundreds of GFLOP/s.
 * Figures are deliberately conservative (pessimistic per node), and a
 * node is priced by the kernel compile picks for it (dg_vk_estimate). */
#include "vk_internal.h"

#include "ops/ops.h"

typedef struct cost_figures {
  double launch_us;    /* submit + fence wait of a segment */
  double node_us;      /* per dispatch inside a recorded segment */
  double flops_per_us; /* sustained, fp32 tiled GEMM */
  double bytes_per_us; /* device memory */
  double transfer_us_per_byte;
} cost_figures;

static cost_figures figures(const vk_device *vd) {
  switch (vd->cost_type) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    /* 20 TFLOP/s before the class's scale; 1 TB/s of device memory (a
     * 6.4 MB relu took 7.4 us with its dispatch on the H200); staging at
     * 8 GB/s (6.4 MB in and out measured 9 GB/s there). */
    return (cost_figures){30, 4, 20e6, 1e6, 1.0 / 8e3};
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

/* Throughput of each kernel class (variants.def's cost field) against
 * flops_per_us, on a GPU. Measured on the H200 (dg-bench --gpu and dg-run
 * --plan; docs/performance.md, "Cost models"): SIMT (the 128x128 fp32
 * GEMM) 42 TFLOP/s, SIMTCONV (the same tiles as conv) 7-20, COOPK (the
 * KHR 128x256 GEMM) 265-275, COOP (the cooperative-matrix convs) 74-131.
 * TILED and DIRECT run where the big tiles would leave the GPU idle or
 * where there are none; their figures are assumed, on the pessimistic
 * side. A CPU-type device's figures are for the device as a whole: no
 * class runs faster there. */
static double class_scale(const vk_device *vd, vk_cost_class c) {
  static const double gpu[VK_COST_COUNT_] = {
      [VK_COST_TILED] = 0.25,    [VK_COST_DIRECT] = 0.05,
      [VK_COST_MEMORY] = 0.25,   [VK_COST_SIMT] = 2.0,
      [VK_COST_SIMTCONV] = 0.65, [VK_COST_COOP] = 4.5,
      [VK_COST_COOPK] = 13.0};
  bool is_gpu = vd->cost_type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
                vd->cost_type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
                vd->cost_type == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU;
  return is_gpu && c < VK_COST_COUNT_ ? gpu[c] : 1.0;
}

/* Prices the work compile would record for the node (dg_vk_work_prepare
 * in estimate mode): one dispatch per pass, the flops at the rate of the
 * module's class, and the bytes of the tensors and of any scratch the
 * passes write and read. */
double dg_vk_estimate(dg_device *dev, const dg_ir *ir, const dg_node *n) {
  vk_device *vd = dev->impl;
  cost_figures f = figures(vd);
  const dg_op_def *def = dg_op_def_get(n->op);
  double flops = def ? def->flops(ir, n) : 0;
  double bytes = dg_node_io_bytes(ir, n);
  double rate = f.flops_per_us, dispatches = 1;
  vk_work w;
  if (dg_vk_work_prepare(vd, ir, n, &w, true)) {
    if (!w.is_copy)
      rate *= class_scale(vd, dg_vk_variants[w.shader].cost);
    dispatches += (w.pre.on ? 1 : 0) + (w.post.on ? 1 : 0);
    bytes += 2.0 * (double)w.scratch_bytes;
  }
  dg_vk_work_release(&w);
  return f.node_us * dispatches + flops / rate + bytes / f.bytes_per_us;
}
