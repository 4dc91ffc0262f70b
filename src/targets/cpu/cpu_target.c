/* The CPU target: always present, runs every op of its table (cpu_ops.c)
 * in every dtype (f16 through f32 arithmetic), and is the device every
 * other one is compared with. */
#define _GNU_SOURCE
#include "core/env.h"
#include "cpu_ops.h"

#include "core/clock.h"
#include "core/diag.h"
#include "core/half.h"
#include "core/names.h"
#include "ops/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct cpu_device {
  dg_cpu_pool *pool;
  /* Inline (one-thread) pool for small segments: waking workers costs more
   * than it saves below a few MFLOP, and a spinning worker slows the
   * caller when the two share a core. */
  dg_cpu_pool *inline_pool;
  double gflops; /* sustained estimate for compute-bound ops */
} cpu_device;

/* Segments doing less work than this run on the calling thread only. */
#define SMALL_SEGMENT_FLOPS 8e6

typedef struct cpu_segment {
  cpu_device *dev;
  dg_cpu_pool *pool; /* the device's threaded or inline pool */
  const dg_ir *ir;
  dg_cpu_node *nodes;
  int node_count;
  void *scratch; /* shared by all nodes: kernels and f16 staging */
  size_t scratch_bytes;
  bool timing;
  int corrupt; /* test hook: index of a node whose output is damaged */
} cpu_segment;

static int cpu_supports(dg_device *dev, const dg_ir *ir, const dg_node *n,
                        char *why, size_t why_size) {
  (void)dev, (void)ir;
  if (!dg_op_def_get(n->op)) {
    snprintf(why, why_size, "unknown op");
    return 0;
  }
  if (!dg_cpu_runs_op(n->op)) {
    snprintf(why, why_size, "no CPU kernel for %s", dg_op_name(n->op));
    return 0;
  }
  return 1;
}

static double cpu_estimate(dg_device *dev, const dg_ir *ir, const dg_node *n) {
  cpu_device *cd = dev->impl;
  double flops = dg_op_def_get(n->op)->flops(ir, n);
  double bytes = dg_node_io_bytes(ir, n);
  /* 0.2 us of per-node overhead; ~20 GB/s of memory traffic. */
  return 0.2 + flops / (cd->gflops * 1e3) + bytes / 20e3;
}

static size_t f32_bytes(const dg_tensor_desc *d) {
  return (size_t)dg_desc_elements(d) * 4;
}

static size_t align64(size_t v) { return (v + 63) & ~(size_t)63; }

/* Staging for an f16 node: f32 copies of each input and of the output,
 * placed after the kernel's own scratch. */
static size_t f16_staging(const dg_ir *ir, const dg_node *n) {
  size_t s = align64(f32_bytes(&dg_ir_tensor(ir, n->output)->desc));
  for (int k = 0; k < n->input_count; k++)
    if (n->inputs[k])
      s += align64(f32_bytes(&dg_ir_tensor(ir, n->inputs[k])->desc));
  return s;
}

static void cpu_release(void *state) {
  cpu_segment *s = state;
  if (!s)
    return;
  for (int i = 0; i < s->node_count; i++)
    dg_cpu_node_release(&s->nodes[i]);
  free(s->nodes);
  free(s->scratch);
  free(s);
}

static dg_status cpu_compile(dg_device *dev, const dg_segment *seg,
                             void **state, dg_diagnostic *diag) {
  cpu_segment *s = calloc(1, sizeof *s);
  if (!s || !(s->nodes = calloc((size_t)seg->node_count, sizeof *s->nodes))) {
    free(s);
    dg_diag_set(diag, DG_ERROR_OUT_OF_MEMORY, -1, NULL, "compile", NULL, NULL,
                NULL, "cpu: out of host memory compiling a segment");
    return DG_ERROR_OUT_OF_MEMORY;
  }
  s->dev = dev->impl;
  s->ir = seg->ir;
  double flops = 0;
  for (int i = 0; i < seg->node_count; i++) {
    const dg_node *n = &seg->ir->nodes[seg->nodes[i]];
    flops += dg_op_def_get(n->op)->flops(seg->ir, n);
  }
  const char *threaded = dg_env(DG_ENV_TEST_CPU_THREADED);
  s->pool = flops < SMALL_SEGMENT_FLOPS && !(threaded && threaded[0] == '1')
                ? s->dev->inline_pool
                : s->dev->pool;
  s->timing = seg->profile;
  /* DG_TEST_CORRUPT_NODE=name damages that node's output, so that tests
   * can check verify finds it. */
  const char *corrupt = dg_env(DG_ENV_TEST_CORRUPT_NODE);
  s->corrupt = -1;
  for (int i = 0; i < seg->node_count; i++) {
    const dg_node *n = &seg->ir->nodes[seg->nodes[i]];
    s->node_count = i + 1;
    if (corrupt && !strcmp(corrupt, n->name))
      s->corrupt = i;
    if (!dg_cpu_node_prepare(&s->nodes[i], seg->ir, n,
                             dg_cpu_pool_threads(s->pool))) {
      cpu_release(s);
      char shown[DG_NAME_SHORT];
      dg_name_shorten(shown, sizeof shown, n->name);
      dg_diag_set(diag, DG_ERROR_OUT_OF_MEMORY, seg->nodes[i], n->name,
                  dg_op_name(n->op), NULL, NULL, NULL,
                  "cpu: cannot prepare node %d '%s': out of memory",
                  seg->nodes[i], shown);
      return DG_ERROR_OUT_OF_MEMORY;
    }
    size_t need = align64(s->nodes[i].scratch_bytes);
    if (s->nodes[i].f16)
      need += f16_staging(seg->ir, n);
    if (need > s->scratch_bytes)
      s->scratch_bytes = need;
  }
  if (s->scratch_bytes && !(s->scratch = aligned_alloc(64, s->scratch_bytes))) {
    size_t bytes = s->scratch_bytes;
    cpu_release(s);
    dg_diag_set(diag, DG_ERROR_OUT_OF_MEMORY, -1, NULL, "compile", NULL, NULL,
                NULL, "cpu: cannot allocate %zu bytes of scratch", bytes);
    return DG_ERROR_OUT_OF_MEMORY;
  }
  *state = s;
  return DG_OK;
}

static void to_f32(const dg_tensor_desc *d, const void *src, float *dst) {
  int64_t n = dg_desc_elements(d);
  if (d->dtype == DG_DTYPE_F16)
    for (int64_t i = 0; i < n; i++)
      dst[i] = dg_f16_to_f32(((const uint16_t *)src)[i]);
  else
    memcpy(dst, src, (size_t)n * 4);
}

static void run_node(cpu_segment *s, dg_cpu_node *cn, void *const *host) {
  const dg_node *n = cn->node;
  void *in[64];
  void **ins = n->input_count > 64
                   ? malloc(sizeof(void *) * (size_t)n->input_count)
                   : in;
  if (!ins) /* concat of > 64 inputs without memory: nothing sane to do */
    return;
  for (int k = 0; k < n->input_count; k++)
    ins[k] = n->inputs[k] ? host[n->inputs[k]] : NULL;
  void *out = host[n->output];
  if (!cn->f16) {
    cn->run(cn, s->pool, ins, out, s->scratch);
  } else {
    char *stage = (char *)s->scratch + align64(cn->scratch_bytes);
    for (int k = 0; k < n->input_count; k++) {
      if (!ins[k])
        continue;
      const dg_tensor_desc *d = &dg_ir_tensor(s->ir, n->inputs[k])->desc;
      to_f32(d, ins[k], (float *)stage);
      ins[k] = stage;
      stage += align64(f32_bytes(d));
    }
    const dg_tensor_desc *yd = &dg_ir_tensor(s->ir, n->output)->desc;
    cn->run(cn, s->pool, ins, stage, s->scratch);
    for (int64_t i = 0, e = dg_desc_elements(yd); i < e; i++)
      ((uint16_t *)out)[i] = dg_f32_to_f16(((float *)stage)[i]);
  }
  if (ins != in)
    free(ins);
}

static double now_us(void) { return (double)dg_clock_ns() / 1e3; }

static dg_status cpu_run(void *state, void *const *host, void *const *resident,
                         double *node_us, dg_diagnostic *diag) {
  (void)diag, (void)resident; /* host memory: no buffers of its own */
  cpu_segment *s = state;
  for (int i = 0; i < s->node_count; i++) {
    double t0 = s->timing ? now_us() : 0;
    run_node(s, &s->nodes[i], host);
    if (i == s->corrupt) {
      const dg_node *n = s->nodes[i].node;
      unsigned char *p = host[n->output];
      p[dg_desc_bytes(&dg_ir_tensor(s->ir, n->output)->desc) - 1] ^= 0x40;
    }
    if (s->timing && node_us)
      node_us[i] = now_us() - t0;
  }
  return DG_OK;
}

static void cpu_destroy(dg_device *dev) {
  cpu_device *cd = dev->impl;
  if (cd) {
    dg_cpu_pool_destroy(cd->pool);
    dg_cpu_pool_destroy(cd->inline_pool);
  }
  free(cd);
}

static int cpu_runs_op(dg_device *dev, dg_op op) {
  (void)dev;
  return dg_cpu_runs_op(op);
}

static const dg_target_vtbl cpu_vtbl = {
    .runs_op = cpu_runs_op,
    .supports = cpu_supports,
    .estimate_us = cpu_estimate,
    .compile = cpu_compile,
    .run = cpu_run,
    .release = cpu_release,
    .destroy = cpu_destroy, /* buffers: host memory, the runtime's own */
};

static void cpu_model_name(char *buf, size_t size) {
  dg_strlcpy(buf, "cpu", size);
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f)
    return;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (colon && !strncmp(line, "model name", 10)) {
      colon += 2;
      colon[strcspn(colon, "\n")] = 0;
      dg_strlcpy(buf, colon, size);
      break;
    }
  }
  fclose(f);
}

static dg_status cpu_enumerate_devices(const dg_context_options *opts,
                                       dg_device_list *out) {
  int threads = opts->cpu_threads;
  if (threads <= 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    threads = n > 0 ? (int)n : 1;
  }
  if (threads > 256)
    threads = 256;
  cpu_device *cd = calloc(1, sizeof *cd);
  if (!cd || !(cd->pool = dg_cpu_pool_create(threads)) ||
      !(cd->inline_pool = dg_cpu_pool_create(1))) {
    if (cd)
      dg_cpu_pool_destroy(cd->pool);
    free(cd);
    return DG_ERROR_OUT_OF_MEMORY;
  }
  const char *simd = dg_cpu_simd_name();
  double per_core = !strcmp(simd, "avx512") || !strcmp(simd, "amx") ? 150.0
                    : !strcmp(simd, "avx2")                         ? 80.0
                    : !strcmp(simd, "neon")                         ? 30.0
                                                                    : 8.0;
  cd->gflops = per_core * threads;
  dg_device *d = dg_device_list_add(out, &cpu_vtbl);
  if (!d) {
    dg_cpu_pool_destroy(cd->pool);
    dg_cpu_pool_destroy(cd->inline_pool);
    free(cd);
    return DG_ERROR_OUT_OF_MEMORY;
  }
  d->impl = cd;
  d->launch_us = 0;
  d->transfer_us_per_byte = 0; /* host memory */
  d->host_memory = true;
  char model[96];
  cpu_model_name(model, sizeof model);
  d->info.kind = DG_DEVICE_CPU;
  snprintf(d->info.name, sizeof d->info.name, "%s", model);
  snprintf(d->info.driver, sizeof d->info.driver,
           "directgraph cpu %s, %d thread%s", simd, threads,
           threads == 1 ? "" : "s");
  for (int t = DG_DTYPE_F32; t < DG_DTYPE_COUNT_; t++)
    d->info.dtypes |= 1u << t;
  return DG_OK;
}

static dg_status cpu_enumerate(const dg_context_options *opts,
                               dg_device_list *out, char *why,
                               size_t why_size) {
  (void)why, (void)why_size; /* the CPU is always there */
  return cpu_enumerate_devices(opts, out);
}

const dg_target dg_target_cpu = {"cpu", DG_DEVICE_CPU, cpu_enumerate};
