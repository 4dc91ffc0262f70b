/* The NPU target: RK3588 int8 and fp16 convolutions (int8 fully-connected
 * layers and matmuls as 1x1 convolutions, lower.h; int8 max pooling on the
 * PPU, lower_pool.h) from our own command lists, through one of the
 * backends of backend.h. The device exists when
 * DG_NPU_DEVICE names a backend or a node (sim, rocket, rknpu, /dev/...),
 * or, with it unset, when discovery finds a rocket or rknpu driver; the
 * simulator is a device only when asked for. DG_NPU_DEVICE=none hides
 * every NPU. Its int8 results may differ from the contract by 1 LSB (the
 * DPU's fixed-point requantiser, docs/npu.md "Requantisation and
 * rounding"), its f16 results by 1 fp16 ULP (unconfirmed rounding and
 * accumulation, host-side bias): declared in the device info, shown per
 * node in the plan, used by verify. */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#include "core/env.h"
#include "lower.h"
#include "lower_pool.h"
#include "timing.h"

#include "core/clock.h"
#include "core/diag.h"
#include "core/half.h"
#include "core/memplan.h"
#include "core/names.h"
#include "ops/ops.h"
#include "targets/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct npu_device {
  npu_backend *be;
} npu_device;

typedef struct npu_segment {
  npu_device *dev;
  const dg_ir *ir;
  const int *nodes;
  npu_conv *convs;
  npu_pool *pools; /* per node: used where dg_npu_is_pool_op (lower_pool.h) */
  int count;
  void **own; /* per tensor id: its bytes of arena for tensors internal
                 to the segment (NULL: use host[]) */
  void *arena;
  bool timing;
  /* Some node reads another's cubes: the segment runs image by image
   * (every node has the same batch, images) so that a producer's cubes
   * hold the image its reader is at. */
  bool image_major;
  int images;
} npu_segment;

static int npu_supports(dg_device *dev, const dg_ir *ir, const dg_node *n,
                        char *why, size_t why_size) {
  if (dg_npu_is_pool_op(n->op)) {
    npu_device *d = dev->impl;
    return dg_npu_pool_lower(ir, n, d->be->ops->name, NULL, why, why_size);
  }
  return dg_npu_conv_lower(ir, n, NULL, why, why_size);
}

/* A conv by the timing model (timing.h) with the fixed costs of the
 * device's kernel driver (rocket's interrupt a task; otherwise the
 * vendor driver's, which the simulator stands in for); a pooling task by
 * a flat 20 us an image and host packing at about 1 GB/s. A guide for
 * placement only. */
static double npu_estimate(dg_device *dev, const dg_ir *ir, const dg_node *n) {
  const npu_device *nd = dev->impl;
  bool split3 = nd && nd->be && nd->be->cores == 3; /* the latency mode */
  bool rocket = nd && nd->be && !strcmp(nd->be->ops->name, "rocket");
  double bytes = (double)dg_desc_bytes(&dg_ir_tensor(ir, n->inputs[0])->desc) +
                 (double)dg_desc_bytes(&dg_ir_tensor(ir, n->output)->desc);
  if (dg_npu_is_pool_op(n->op)) /* one task per image; fp16 packing, 2x bytes */
    return 20.0 * (double)dg_ir_tensor(ir, n->inputs[0])->desc.dims[0] +
           2 * bytes / 1e3;
  /* A conv: the timing model (timing.h) over its lowering, per image. */
  npu_conv c;
  char why[160];
  if (dg_npu_conv_lower(ir, n, &c, why, sizeof why)) {
    npu_timing tm;
    dg_npu_timing_conv(&c, &tm);
    double us = (split3   ? tm.total3_us
                 : rocket ? tm.rocket_us
                          : tm.total_us) *
                c.N;
    dg_npu_conv_release(&c, NULL);
    return us;
  }
  double macs = dg_op_def_get(n->op)->flops(ir, n) / 2;
  return 50.0 + macs / 460e3 + bytes / 2e3; /* declined anyway: a bound */
}

static void npu_release(void *state) {
  npu_segment *s = state;
  if (!s)
    return;
  for (int i = 0; i < s->count; i++) {
    dg_npu_conv_release(&s->convs[i], s->dev->be);
    dg_npu_pool_release(&s->pools[i], s->dev->be);
  }
  free(s->own);
  free(s->arena);
  free(s->convs);
  free(s->pools);
  free(s);
}

/* Tensors made and used only inside the segment get bytes of an arena of
 * our own, placed by memplan.h: host[] is only promised for the boundary
 * (target.h). */
static dg_status own_buffers(npu_segment *s, const dg_segment *seg) {
  dg_segment_io io;
  dg_status st = dg_segment_boundary(seg, &io);
  if (st != DG_OK)
    return st;
  int T = s->ir->tensor_count, count = 0;
  s->own = calloc((size_t)T + 1, sizeof *s->own);
  int *first = malloc(sizeof(int) * (size_t)(T + 1));
  int *last = malloc(sizeof(int) * (size_t)(T + 1));
  uint32_t *ids = malloc(sizeof(uint32_t) * (size_t)(T + 1));
  dg_mem_block *blocks = malloc(sizeof *blocks * (size_t)(T + 1));
  bool oom = !s->own || !first || !last || !ids || !blocks;
  if (!oom) {
    dg_memplan_lifetimes(s->ir, seg->nodes, seg->node_count, first, last, NULL);
    for (int i = 0; i < seg->node_count; i++) {
      uint32_t t = s->ir->nodes[seg->nodes[i]].output;
      bool boundary = false;
      for (int k = 0; k < io.output_count; k++)
        boundary |= io.outputs[k] == t;
      if (!boundary) {
        blocks[count] =
            (dg_mem_block){dg_desc_bytes(&dg_ir_tensor(s->ir, t)->desc),
                           first[t], last[t], false, 0};
        ids[count++] = t;
      }
    }
  }
  size_t top = oom ? 0 : dg_memplan_place(blocks, count, 64, 0, &oom);
  if (!oom && top == SIZE_MAX)
    oom = true;
  if (!oom && top && posix_memalign(&s->arena, 64, top))
    oom = true;
  for (int c = 0; !oom && c < count; c++)
    s->own[ids[c]] = (char *)s->arena + blocks[c].offset;
  free(first), free(last), free(ids), free(blocks);
  dg_segment_io_free(&io);
  return oom ? DG_ERROR_OUT_OF_MEMORY : st;
}

/* Lowers and prepares node i of the segment: false with err set. */
static bool lower_node(npu_segment *s, const dg_node *n, int i, char *err,
                       size_t en) {
  npu_backend *be = s->dev->be;
  if (dg_npu_is_pool_op(n->op))
    return dg_npu_pool_lower(s->ir, n, be->ops->name, &s->pools[i], err, en) &&
           !dg_npu_pool_prepare(&s->pools[i], be, err, en);
  return dg_npu_conv_lower(s->ir, n, &s->convs[i], err, en) &&
         !dg_npu_conv_prepare(&s->convs[i], s->ir, be, err, en);
}

/* dg_npu_cube_edge's set: the segment's nodes (by ir index). */
static bool in_segment(int node, void *user) {
  const npu_segment *s = user;
  for (int i = 0; i < s->count; i++)
    if (s->nodes[i] == node)
      return true;
  return false;
}

/* Links every reader of an internal tensor that can stay in NC1HWC2 to
 * its producer's cubes (lower.h: from, out_on_npu). own[t] is set only
 * for a tensor no one outside the segment reads (verify's keep_all
 * included). */
/* The batch of node i's NCHW images; -1 for an fc / matmul (rows). */
static int node_images(const npu_segment *s, int i) {
  const dg_node *n = &s->ir->nodes[s->nodes[i]];
  if (dg_npu_is_pool_op(n->op))
    return s->pools[i].N;
  return s->convs[i].layout == NPU_LAYOUT_NCHW ? s->convs[i].N : -1;
}

static void link_cubes(npu_segment *s) {
  const char *knob = dg_env(DG_ENV_NPU_CUBES);
  if (knob && !strcmp(knob, "off"))
    return;
  /* Image by image needs one batch for all the segment's nodes. */
  int images = s->count ? node_images(s, 0) : -1;
  for (int i = 1; i < s->count; i++)
    if (node_images(s, i) != images)
      images = -1;
  if (images < 1)
    return;
  s->images = images;
  for (int i = 0; i < s->count; i++) {
    uint32_t t = s->ir->nodes[s->nodes[i]].output;
    if (!s->own[t] || !dg_npu_cube_edge(s->ir, t, in_segment, s))
      continue;
    s->convs[i].out_on_npu = true;
    s->image_major = true;
    for (int j = i + 1; j < s->count; j++)
      if (s->ir->nodes[s->nodes[j]].inputs[0] == t)
        s->convs[j].from = &s->convs[i], s->convs[j].from_npu = true;
  }
}

static dg_status npu_compile(dg_device *dev, const dg_segment *seg,
                             void **state, dg_diagnostic *diag) {
  npu_segment *s = calloc(1, sizeof *s);
  if (!s || !(s->convs = calloc((size_t)seg->node_count, sizeof *s->convs)) ||
      !(s->pools = calloc((size_t)seg->node_count, sizeof *s->pools))) {
    if (s)
      free(s->convs);
    free(s);
    dg_diag_set(diag, DG_ERROR_OUT_OF_MEMORY, -1, NULL, "compile", NULL, NULL,
                NULL, "npu: out of host memory compiling a segment");
    return DG_ERROR_OUT_OF_MEMORY;
  }
  s->dev = dev->impl;
  s->ir = seg->ir;
  s->nodes = seg->nodes;
  s->timing = seg->profile;
  if (own_buffers(s, seg) != DG_OK) {
    npu_release(s);
    dg_diag_set(diag, DG_ERROR_OUT_OF_MEMORY, -1, NULL, "compile", NULL, NULL,
                NULL, "npu: out of host memory compiling a segment");
    return DG_ERROR_OUT_OF_MEMORY;
  }
  for (int i = 0; i < seg->node_count; i++) {
    const dg_node *n = &seg->ir->nodes[seg->nodes[i]];
    char err[256] = "";
    s->count = i + 1;
    if (!lower_node(s, n, i, err, sizeof err)) {
      npu_release(s);
      char shown[DG_NAME_SHORT];
      dg_name_shorten(shown, sizeof shown, n->name);
      dg_diag_set(diag, DG_ERROR_DEVICE, seg->nodes[i], n->name,
                  dg_op_name(n->op), NULL, NULL, NULL,
                  "npu (%s): cannot compile node %d '%s': %s", dev->info.driver,
                  seg->nodes[i], shown, err);
      return DG_ERROR_DEVICE;
    }
  }
  link_cubes(s);
  *state = s;
  return DG_OK;
}

static double now_us(void) { return (double)dg_clock_ns() / 1e3; }

/* Node i of the segment on image img, or (img < 0) on its whole batch. */
static int run_node(npu_segment *s, int i, int img, void *const *host,
                    char *err, size_t n) {
  const dg_node *nd = &s->ir->nodes[s->nodes[i]];
  uint32_t xt = nd->inputs[0], yt = nd->output;
  const void *x = s->own[xt] ? s->own[xt] : host[xt];
  void *y = s->own[yt] ? s->own[yt] : host[yt];
  npu_backend *b = s->dev->be;
  if (dg_npu_is_pool_op(nd->op))
    return img < 0 ? dg_npu_pool_run(&s->pools[i], b, x, y, err, n)
                   : dg_npu_pool_run_image(&s->pools[i], b, img, x, y, err, n);
  return img < 0 ? dg_npu_conv_run(&s->convs[i], b, x, y, err, n)
                 : dg_npu_conv_run_image(&s->convs[i], b, img, x, y, err, n);
}

static dg_status npu_run(void *state, void *const *host, void *const *resident,
                         double *node_us, dg_diagnostic *diag) {
  (void)resident; /* no buffer_create: never given one */
  npu_segment *s = state;
  if (s->timing && node_us)
    for (int i = 0; i < s->count; i++)
      node_us[i] = 0;
  /* Node by node over the batch, or image by image over the nodes. */
  int passes = s->image_major ? s->images : 1;
  for (int k = 0; k < passes * s->count; k++) {
    int i = k % s->count, img = s->image_major ? k / s->count : -1;
    const dg_node *n = &s->ir->nodes[s->nodes[i]];
    double t0 = s->timing ? now_us() : 0;
    char err[256] = "";
    int rc = run_node(s, i, img, host, err, sizeof err);
    if (rc) {
      char shown[DG_NAME_SHORT];
      dg_name_shorten(shown, sizeof shown, n->name);
      dg_diag_set(diag, DG_ERROR_DEVICE, s->nodes[i], n->name,
                  dg_op_name(n->op), NULL, NULL, NULL,
                  "npu (%s): node %d '%s' failed: %s", s->dev->be->driver,
                  s->nodes[i], shown, err);
      return DG_ERROR_DEVICE;
    }
    if (s->timing && node_us)
      node_us[i] += now_us() - t0;
  }
  return DG_OK;
}

static void npu_destroy(dg_device *dev) {
  npu_device *d = dev->impl;
  if (d)
    dg_npu_backend_close(d->be);
  free(d);
}

/* The ops a lowering takes: the conv lowering's (lower.c) and the
 * pooling one's (lower_pool.c), from their own tables. */
static int npu_runs_op(dg_device *dev, dg_op op) {
  (void)dev;
  return dg_npu_conv_op(op) || dg_npu_pool_has_kernel(op);
}

static const dg_target_vtbl npu_vtbl = {
    .runs_op = npu_runs_op,
    .supports = npu_supports,
    .estimate_us = npu_estimate,
    .compile = npu_compile,
    .run = npu_run,
    .release = npu_release,
    .destroy = npu_destroy, /* no buffers: bind host memory */
};

static void say(const dg_context_options *opts, dg_log_level level,
                const char *msg) {
  if (opts->log && opts->log_level >= level)
    opts->log(opts->log_user, level, msg);
}

static dg_status npu_enumerate(const dg_context_options *opts,
                               dg_device_list *out, char *why,
                               size_t why_size) {
  const char *spec = dg_env(DG_ENV_NPU_DEVICE);
  if (spec && !strcmp(spec, "none")) {
    snprintf(why, why_size, "DG_NPU_DEVICE=none");
    return DG_OK;
  }
  char err[256] = "";
  npu_backend *be = dg_npu_backend_open(spec, err, sizeof err);
  if (!be) {
    char msg[320];
    snprintf(msg, sizeof msg, "npu: no device: %s", err);
    snprintf(why, why_size, "%s", err);
    /* Asked for by name: worth a warning; found by nobody: just info. */
    say(opts, spec && spec[0] ? DG_LOG_WARNING : DG_LOG_INFO, msg);
    return DG_OK;
  }
  npu_device *nd = calloc(1, sizeof *nd);
  dg_device *d = nd ? dg_device_list_add(out, &npu_vtbl) : NULL;
  if (!d) {
    free(nd);
    dg_npu_backend_close(be);
    return DG_ERROR_OUT_OF_MEMORY;
  }
  nd->be = be;
  d->impl = nd;
  d->launch_us = 30;
  d->transfer_us_per_byte = 0.001; /* packing to and from NC1HWC2 */
  d->info.kind = DG_DEVICE_NPU;
  /* The plan shows the device name: it says how jobs meet the cores when
   * DG_NPU_CORES asks for more than core 0. */
  char cores[40] = "";
  if (be->cores != 1)
    snprintf(cores, sizeof cores,
             be->cores ? ", a job split over %d cores"
                       : ", a free core per job",
             be->cores);
  snprintf(d->info.name, sizeof d->info.name, "RK3588 NPU%s (%s%s)",
           be->is_simulator ? " simulator" : "", be->ops->name, cores);
  snprintf(d->info.driver, sizeof d->info.driver, "%s", be->driver);
  d->info.dtypes = 1u << DG_DTYPE_I8 | 1u << DG_DTYPE_U8 | 1u << DG_DTYPE_F16;
  d->info.is_simulator = be->is_simulator;
  d->info.int8_max_lsb_deviation = 1;
  /* fp16: the fp32 -> fp16 rounding of OUT_CVT and the accumulation
   * precision are assumed (sim.h), and a bias is added after the NPU's
   * rounding: one fp16 ULP beyond the contract. */
  d->info.f16_max_ulp_deviation = 1;
  return DG_OK;
}

const dg_target dg_target_npu = {"npu", DG_DEVICE_NPU, npu_enumerate};
