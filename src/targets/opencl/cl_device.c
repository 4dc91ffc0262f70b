/* The OpenCL target: every device of every platform the ICD loader finds,
 * what each can run, and what it costs. A CPU-type device (PoCL) or a tiny
 * graph must never win placement over the native CPU target, so CPU-type
 * devices get a high launch cost and pessimistic per-node estimates; real
 * GPUs get the dispatch floors measured on the H200 (docs/performance.md,
 * "Cost models"). */
#define _POSIX_C_SOURCE 200809L
#include "cl_internal.h"
#include "core/env.h"

#include "ops/epilogue.h" /* dg_matmul_bias */
#include "ops/ops.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool has_ext(const char *exts, const char *name) {
  size_t n = strlen(name);
  for (const char *p = exts; (p = strstr(p, name)); p += n)
    if ((p == exts || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
      return true;
  return false;
}

static int cl_supports(dg_device *dev, const dg_ir *ir, const dg_node *n,
                       char *why, size_t why_size) {
  dg_cl_device *d = dev->impl;
  if (!dg_op_def_get(n->op)) {
    snprintf(why, why_size, "unknown op");
    return 0;
  }
  if (atomic_load(&d->timed_out)) {
    snprintf(why, why_size, "the device timed out in an earlier run");
    return 0;
  }
  unsigned needs = dg_cl_op_needs(n->op);
  if (needs & DG_CL_NO_KERNEL) {
    snprintf(why, why_size, "no OpenCL kernel for %s", dg_op_name(n->op));
    return 0;
  }
  if (dg_matmul_bias(n)) {
    snprintf(why, why_size,
             "matmul with a fused bias add: no OpenCL epilogue for it");
    return 0;
  }
  /* Kernels index with 32-bit ints. */
  uint32_t ids[1 + 64];
  int count = 0;
  ids[count++] = n->output;
  for (int k = 0; k < n->input_count && count < 65; k++)
    if (n->inputs[k])
      ids[count++] = n->inputs[k];
  for (int i = 0; i < count; i++)
    if (dg_desc_elements(&dg_ir_tensor(ir, ids[i])->desc) > INT_MAX / 2) {
      snprintf(why, why_size, "tensor too large for 32-bit indexing");
      return 0;
    }
  if ((needs & DG_CL_NEEDS_CORRECT_DIV) && !d->correct_div) {
    snprintf(why, why_size, "%s needs correctly rounded fp32 division",
             dg_op_name(n->op));
    return 0;
  }
  if (dg_cl_int8_declines(n, why, why_size))
    return 0;
  bool gemm = n->op == DG_OP_CONV2D || n->op == DG_OP_QCONV2D ||
              n->op == DG_OP_FULLY_CONNECTED ||
              n->op == DG_OP_QFULLY_CONNECTED || n->op == DG_OP_MATMUL ||
              n->op == DG_OP_QMATMUL;
  if (gemm && (d->max_wg < 256 || d->local_mem < 16384)) {
    snprintf(why, why_size, "needs 256 work-items and 16 KiB local memory");
    return 0;
  }
  return 1;
}

static double cl_estimate(dg_device *dev, const dg_ir *ir, const dg_node *n) {
  dg_cl_device *d = dev->impl;
  double flops = dg_op_def_get(n->op)->flops(ir, n);
  double bytes = dg_node_io_bytes(ir, n);
  if (d->is_cpu) /* never cheaper than the native CPU kernels */
    return 30.0 + 2.0 * flops / (d->gflops * 1e3) + bytes / 5e3;
  /* ~6 us per back-to-back kernel; device memory at 400 GB/s (a 6.4 MB
   * relu took 18.6 us on the H200); the flops at the speed of the kernel
   * compile will pick. */
  double speed = dg_cl_node_speed(d, ir, (int)(n - ir->nodes));
  double us = 6.0 + flops / (d->gflops * 1e3 * speed) + bytes / 400e3;
  /* pool2d gives each output one work-item summing its window serially,
   * and gap 64 work-items per channel: with fewer of them than lanes, time
   * follows the serial share (pool2d ran a global average over 56x56 in
   * 302 us on the H200 for 512 outputs: 0.096 us an element). Large
   * qavg_pool2d windows get a work-group per output as gap does. */
  if (n->op == DG_OP_MAX_POOL2D || n->op == DG_OP_AVG_POOL2D ||
      n->op == DG_OP_GLOBAL_AVG_POOL || n->op == DG_OP_QAVG_POOL2D) {
    const dg_tensor_desc *x = &dg_ir_tensor(ir, n->inputs[0])->desc;
    bool gap = n->op == DG_OP_GLOBAL_AVG_POOL;
    bool group = gap || dg_cl_qpool_grouped(n);
    double window = gap ? (double)x->dims[2] * (double)x->dims[3]
                        : (double)n->p.kernel[0] * n->p.kernel[1];
    if (group)
      window /= 64;
    double lanes = 64.0 * d->compute_units;
    double outputs =
        (double)dg_desc_elements(&dg_ir_tensor(ir, n->output)->desc) *
        (group ? 64 : 1);
    double waves = outputs / lanes < 1 ? 1 : outputs / lanes;
    us += waves * window * 0.096;
  }
  return us;
}

static void cl_destroy(dg_device *dev) {
  dg_cl_device *d = dev->impl;
  if (!d)
    return;
  if (d->program)
    clReleaseProgram(d->program);
  /* Work left by a run that timed out may still be queued: it only ever
   * touches the library's buffers (cl_segment.c), and OpenCL deletes the
   * queue and context once that work is done, so nothing waits here. */
  if (d->queue)
    clReleaseCommandQueue(d->queue);
  if (d->context)
    clReleaseContext(d->context);
  pthread_mutex_destroy(&d->lock);
  free(d->cache_dir);
  free(d);
  dev->impl = NULL;
}

dg_status dg_cl_compile(dg_device *dev, const dg_segment *seg, void **state,
                        dg_diagnostic *diag);
dg_status dg_cl_run(void *state, void *const *host, void *const *resident,
                    double *node_us, dg_diagnostic *diag);
void dg_cl_release(void *state);
dg_status dg_cl_buffer_new(dg_device *dev, size_t bytes, void **out,
                           dg_diagnostic *diag);
dg_status dg_cl_buffer_copy(dg_device *dev, void *buf, void *host, size_t bytes,
                            bool to_device, dg_diagnostic *diag);
void dg_cl_buffer_release(dg_device *dev, void *buf);
dg_status dg_cl_submit(void *state, void *const *host, void *const *resident,
                       dg_diagnostic *diag);
dg_status dg_cl_wait(void *state, void *const *host, double *node_us,
                     dg_diagnostic *diag);

/* The ops cl_nodes.c's table has a line for, those needing a correctly
 * rounded division only where the device divides so. */
static int cl_runs_op(dg_device *dev, dg_op op) {
  const dg_cl_device *d = dev->impl;
  unsigned needs = dg_cl_op_needs(op);
  return !(needs & DG_CL_NO_KERNEL) &&
         (!(needs & DG_CL_NEEDS_CORRECT_DIV) || d->correct_div);
}

static const dg_target_vtbl cl_vtbl = {
    cl_runs_op,        cl_supports,          cl_estimate,  dg_cl_compile,
    dg_cl_run,         dg_cl_release,        cl_destroy,   dg_cl_buffer_new,
    dg_cl_buffer_copy, dg_cl_buffer_release, dg_cl_submit, dg_cl_wait};

/* The context's resolved cache directory (target.h: NULL when caching is
 * off), copied. */
static char *resolve_cache_dir(const dg_context_options *o) {
  if (o->disable_cache || !o->cache_dir || !*o->cache_dir)
    return NULL;
  return strdup(o->cache_dir);
}

static void info_str(cl_device_id dev, cl_device_info what, char *buf,
                     size_t size) {
  buf[0] = 0;
  if (clGetDeviceInfo(dev, what, size, buf, NULL) != CL_SUCCESS)
    buf[0] = 0;
  buf[size - 1] = 0;
}

/* OpenCL C major*10 + minor from "OpenCL C 1.2 ...". */
static int c_version(const char *s) {
  int maj = 0, min = 0;
  if (sscanf(s, "OpenCL C %d.%d", &maj, &min) != 2)
    return 0;
  return maj * 10 + min;
}

/* Opens one device; DG_OK without adding anything when it is unusable. */
static dg_status add_device(cl_platform_id plat, cl_device_id dev,
                            const dg_context_options *opts,
                            dg_device_list *out) {
  char cver[96], exts[8192], vendor[96], pname[96];
  info_str(dev, CL_DEVICE_OPENCL_C_VERSION, cver, sizeof cver);
  cl_bool compiler = CL_FALSE, avail = CL_FALSE;
  clGetDeviceInfo(dev, CL_DEVICE_COMPILER_AVAILABLE, sizeof compiler, &compiler,
                  NULL);
  clGetDeviceInfo(dev, CL_DEVICE_AVAILABLE, sizeof avail, &avail, NULL);
  if (c_version(cver) < 12 || !compiler || !avail)
    return DG_OK;
  dg_cl_device *d = calloc(1, sizeof *d);
  if (!d)
    return DG_ERROR_OUT_OF_MEMORY;
  pthread_mutex_init(&d->lock, NULL);
  d->platform = plat;
  d->device = dev;
  info_str(dev, CL_DEVICE_NAME, d->name, sizeof d->name);
  info_str(dev, CL_DRIVER_VERSION, d->driver_version, sizeof d->driver_version);
  info_str(dev, CL_DEVICE_VERSION, d->device_version, sizeof d->device_version);
  info_str(dev, CL_DEVICE_EXTENSIONS, exts, sizeof exts);
  info_str(dev, CL_DEVICE_VENDOR, vendor, sizeof vendor);
  if (clGetPlatformInfo(plat, CL_PLATFORM_VERSION, sizeof d->platform_version,
                        d->platform_version, NULL) != CL_SUCCESS)
    d->platform_version[0] = 0;
  d->platform_version[sizeof d->platform_version - 1] = 0;
  if (clGetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof pname, pname, NULL) !=
      CL_SUCCESS)
    pname[0] = 0;
  pname[sizeof pname - 1] = 0;
  cl_device_type type = 0;
  cl_device_fp_config fp = 0;
  cl_uint clock = 0;
  clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof d->compute_units,
                  &d->compute_units, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_wg,
                  &d->max_wg, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof d->local_mem,
                  &d->local_mem, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof clock, &clock,
                  NULL);
  cl_bool unified = CL_FALSE;
  clGetDeviceInfo(dev, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified,
                  NULL);
  d->is_cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
  d->host_unified = unified == CL_TRUE || d->is_cpu;
  d->correct_div = (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
  if (!d->compute_units)
    d->compute_units = 1;
  /* CPU-type: ~10 GFLOP/s per core through OpenCL; GPU: 64 lanes per
   * compute unit at 2 flops per cycle, a third of it sustained. */
  d->gflops =
      d->is_cpu ? 10.0 * d->compute_units
                : d->compute_units * 64 * 2 * (clock ? clock : 1000) / 1e3 / 3;
  /* Per-device GEMM tiles: each needs (TM/8)*(TN/8) work-items and two
   * local buffers of 8 x (TM+4) and 8 x (TN+4) floats. */
  d->big_tiles = 0;
  if (d->max_wg >= 256 && d->local_mem >= 2 * 8 * (132 + 132) * 4)
    d->big_tiles |= 1;
  if (d->max_wg >= 128 && d->local_mem >= 2 * 8 * (68 + 132) * 4)
    d->big_tiles |= 2;
  if (d->max_wg >= 64 && d->local_mem >= 2 * 8 * (68 + 68) * 4)
    d->big_tiles |= 4;
  snprintf(d->build_options, sizeof d->build_options, "-cl-std=CL1.2%s",
           d->correct_div ? " -cl-fp32-correctly-rounded-divide-sqrt" : "");
  cl_int err;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                   (cl_context_properties)plat, 0};
  d->context = clCreateContext(props, 1, &dev, NULL, NULL, &err);
  if (d->context)
    d->queue =
        clCreateCommandQueue(d->context, dev, CL_QUEUE_PROFILING_ENABLE, &err);
  d->cache_dir = resolve_cache_dir(opts);
  d->timeout_ms = opts->device_timeout_ms;
  dg_device *dd = NULL;
  if (!d->context || !d->queue ||
      (!d->cache_dir && !opts->disable_cache && opts->cache_dir) ||
      !(dd = dg_device_list_add(out, &cl_vtbl))) {
    /* A device that cannot open is skipped; host OOM is an error. */
    dg_status st = d->context && d->queue ? DG_ERROR_OUT_OF_MEMORY : DG_OK;
    dg_device tmp = {.impl = d};
    cl_destroy(&tmp);
    return st;
  }
  dd->impl = d;
  dd->launch_us = d->is_cpu ? 50.0 : 10.0;
  /* A GPU's transfers measured 6.5-9.2 GB/s on the H200 (dg-run --plan,
   * run time less node times). */
  dd->transfer_us_per_byte = d->is_cpu ? 1.0 / 10e3 : 1.0 / 8e3;
  dg_device_info *in = &dd->info;
  in->kind = DG_DEVICE_OPENCL;
  snprintf(in->name, sizeof in->name, "%s", d->name);
  bool fp16 = has_ext(exts, "cl_khr_fp16");
  bool dot = has_ext(exts, "cl_khr_integer_dot_product");
  bool sub =
      has_ext(exts, "cl_khr_subgroups") || has_ext(exts, "cl_intel_subgroups");
  int cv = c_version(cver);
  char drv[320]; /* truncated into info.driver below */
  snprintf(drv, sizeof drv,
           "%.20s (%.14s) %.14s, OpenCL C %d.%d, %u CU, %lu KiB local, "
           "gemm %s%s%s%s%s",
           pname, vendor, d->driver_version, cv / 10, cv % 10, d->compute_units,
           (unsigned long)(d->local_mem / 1024),
           d->is_cpu          ? "1x1"
           : d->big_tiles & 2 ? "64x128"
           : d->big_tiles & 4 ? "64x64"
                              : "64x64/4x4",
           fp16 ? ", fp16" : "", dot ? ", int8 dot" : "",
           sub ? ", subgroups" : "", d->is_cpu ? ", cpu" : "");
  dg_strlcpy(in->driver, drv, sizeof in->driver);
  for (int t = DG_DTYPE_F32; t < DG_DTYPE_COUNT_; t++)
    in->dtypes |= 1u << t;
  in->is_simulator = 0;
  in->cpu_hosted = d->is_cpu;
  in->int8_max_lsb_deviation = 0;
  return DG_OK;
}

static dg_status enumerate(const dg_context_options *opts, dg_device_list *out,
                           char *why, size_t why_size) {
  cl_uint np = 0;
  cl_int err = clGetPlatformIDs(0, NULL, &np);
  if (err != CL_SUCCESS || !np) {
    /* -1001, CL_PLATFORM_NOT_FOUND_KHR: the ICD loader found no ICD. */
    snprintf(why, why_size,
             "no OpenCL platform (clGetPlatformIDs: %d%s): no ICD installed",
             err, err == -1001 ? ", CL_PLATFORM_NOT_FOUND_KHR" : "");
    return DG_OK;
  }
  cl_platform_id *plats = calloc(np, sizeof *plats);
  if (!plats)
    return DG_ERROR_OUT_OF_MEMORY;
  dg_status st = DG_OK;
  int before = out->count;
  if (clGetPlatformIDs(np, plats, NULL) != CL_SUCCESS)
    np = 0;
  for (cl_uint p = 0; p < np && st == DG_OK; p++) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) !=
            CL_SUCCESS ||
        !nd)
      continue;
    cl_device_id *devs = calloc(nd, sizeof *devs);
    if (!devs) {
      st = DG_ERROR_OUT_OF_MEMORY;
      break;
    }
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL) !=
        CL_SUCCESS)
      nd = 0;
    for (cl_uint i = 0; i < nd && st == DG_OK; i++)
      st = add_device(plats[p], devs[i], opts, out);
    free(devs);
  }
  free(plats);
  if (st == DG_OK && out->count == before)
    snprintf(why, why_size, "%u OpenCL platform(s), no device in them", np);
  return st;
}

const dg_target dg_target_opencl = {"opencl", DG_DEVICE_OPENCL, enumerate};
