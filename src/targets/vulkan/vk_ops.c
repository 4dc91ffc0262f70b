/* Per node: whether this device runs it, and what it records (the shader,
 * its bindings, push constants and workgroup counts, or the buffer copies
 * of reshape and concat). Each setup follows the op's reference kernel in
 * src/ops and the CPU kernel in src/targets/cpu/cpu_ops.c. */
#include "vk_internal.h"

#include "ops/view.h"

#include "ops/epilogue.h" /* dg_matmul_bias */
#include "ops/ops.h"
#include "ops/requant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The op table (vk_op_table, after the setups it names). */
struct vk_op_entry;
static const struct vk_op_entry *op_entry(dg_op op);

static bool moves_bytes(dg_op op) {
  return op == DG_OP_RESHAPE || op == DG_OP_CONCAT;
}

/* Workgroups along z (batch, image x group) are capped by the device. */
static int64_t z_groups(const dg_ir *ir, const dg_node *n) {
  if (n->op == DG_OP_CONV2D || n->op == DG_OP_QCONV2D)
    return dg_ir_desc(ir, n->inputs[0])->dims[0] * n->p.groups;
  if (n->op == DG_OP_MATMUL || n->op == DG_OP_QMATMUL) {
    dg_matmul_shape s;
    int r;
    int64_t od[DG_MAX_RANK];
    dg_matmul_shape_get(dg_ir_desc(ir, n->inputs[0]),
                        dg_ir_desc(ir, n->inputs[1]), &s, &r, od);
    return s.batch_rank > 4 ? INT64_MAX : s.batch;
  }
  return 1;
}

/* An upper bound on the loop iterations one invocation of the node's
 * kernel runs, in all its loops (each level of a nest counted): a GEMM's
 * or conv's reduction depth, a pooling window, three passes over a
 * softmax row; 64 covers the small fixed loops (ranks, tiles) of every
 * kernel. Measured on lavapipe: a matmul with K = 70000 summed 65533
 * terms. */
static uint64_t loop_trips(const dg_ir *ir, const dg_node *n) {
  const dg_tensor_desc *x = dg_ir_desc(ir, n->inputs[0]);
  uint64_t t = 64;
  switch (n->op) {
  case DG_OP_CONV2D:
  case DG_OP_QCONV2D: {
    const dg_tensor_desc *w = dg_ir_desc(ir, n->inputs[1]);
    uint64_t cg = (uint64_t)w->dims[1], kh = (uint64_t)w->dims[2],
             kw = (uint64_t)w->dims[3];
    return t + cg * (1 + kh + kh * kw);
  }
  case DG_OP_CONV_TRANSPOSE2D: { /* w [C_in, OG, KH, KW]: CG channels */
    const dg_tensor_desc *w = dg_ir_desc(ir, n->inputs[1]);
    uint64_t cg = (uint64_t)(w->dims[0] / n->p.groups),
             kh = (uint64_t)w->dims[2], kw = (uint64_t)w->dims[3];
    return t + cg * (1 + kh + kh * kw);
  }
  case DG_OP_FULLY_CONNECTED:
  case DG_OP_QFULLY_CONNECTED:
    return t + (uint64_t)x->dims[x->rank - 1];
  case DG_OP_MATMUL:
  case DG_OP_QMATMUL:
    return t + (uint64_t)x->dims[x->rank - 1];
  case DG_OP_MAX_POOL2D:
  case DG_OP_AVG_POOL2D:  /* pool.comp: taps, kh x kw at any dilation */
  case DG_OP_QAVG_POOL2D: /* qavg_pool.comp: the same window */
    return t + (uint64_t)n->p.kernel[0] * (1 + (uint64_t)n->p.kernel[1]);
  case DG_OP_SOFTMAX:
  case DG_OP_LOG_SOFTMAX:
    return t + 3 * (uint64_t)x->dims[n->p.axis];
  case DG_OP_BINARY:  /* binary.comp: a pass over the output's dims */
  case DG_OP_QBINARY: /* qbinary.comp: the same pass */
    return t + DG_MAX_RANK;
  case DG_OP_REDUCE:
  case DG_OP_LAYER_NORM:
    return t + dg_vk_reduce_trips(ir, n);
  case DG_OP_UNARY: /* no loop: one element, one formula */
    return t;
  case DG_OP_COMPARE: /* compare.comp: a pass over the output's dims, and
                       * the function's lines */
  case DG_OP_WHERE:
    return t + DG_MAX_RANK + DG_COMPARE_COUNT_;
  case DG_OP_ARG_REDUCE: /* compare.comp -DARG: one line */
    return t + (uint64_t)x->dims[n->p.axis];
  default: /* global_avg_pool: 64 per invocation a pass (gap.comp) */
    return t;
  }
}

int dg_vk_supports(dg_device *dev, const dg_ir *ir, const dg_node *n, char *why,
                   size_t why_size) {
  vk_device *vd = dev->impl;
  if (atomic_load(&vd->lost)) {
    snprintf(why, why_size, "vulkan device lost");
    return 0;
  }
  if (!dg_op_def_get(n->op)) {
    snprintf(why, why_size, "unknown op");
    return 0;
  }
  const struct vk_op_entry *e = op_entry(n->op);
  if (!e) {
    snprintf(why, why_size, "no Vulkan kernel for %s", dg_op_name(n->op));
    return 0;
  }
  if (dg_matmul_bias(n)) {
    snprintf(why, why_size,
             "matmul with a fused bias add: no Vulkan epilogue for it");
    return 0;
  }
  uint64_t range = vd->props.limits.maxStorageBufferRange;
  for (int k = -1; k < n->input_count; k++) {
    uint32_t id = k < 0 ? n->output : n->inputs[k];
    if (!id)
      continue;
    const dg_tensor_desc *d = dg_ir_desc(ir, id);
    if (!moves_bytes(n->op) && d->dtype == DG_DTYPE_F16 && !vd->f16) {
      snprintf(why, why_size,
               "f16 needs shaderFloat16 and 16-bit storage buffers");
      return 0;
    }
    if (!moves_bytes(n->op) && d->dtype == DG_DTYPE_BOOL && !vd->int8) {
      snprintf(why, why_size,
               "bool needs shaderInt8 and 8-bit storage buffers");
      return 0;
    }
    /* cast.comp converts between f32, f16 and i32. */
    if (n->op == DG_OP_CAST &&
        (d->dtype == DG_DTYPE_BOOL || d->dtype == DG_DTYPE_I64)) {
      snprintf(why, why_size, "cast of %s has no Vulkan kernel",
               dg_dtype_name(d->dtype));
      return 0;
    }
    /* movement.comp's 8-byte pad constant is a sign-extended i32 (the
     * push constants have no room for a second word). */
    dg_view v;
    if (n->op == DG_OP_PAD && k < 0 && dg_dtype_size(d->dtype) == 8 &&
        dg_view_of(ir, n, &v) && v.mode == DG_PAD_CONSTANT &&
        (int64_t)v.fill_bits != (int32_t)(uint32_t)v.fill_bits) {
      snprintf(why, why_size,
               "pad constant %.0f of i64 is beyond the i32 range Vulkan "
               "takes",
               v.fill);
      return 0;
    }
    /* compare and arg_reduce compare i64 as i64; where moves it as bits. */
    if ((n->op == DG_OP_COMPARE || n->op == DG_OP_ARG_REDUCE) &&
        d->dtype == DG_DTYPE_I64 && !vd->int64) {
      snprintf(why, why_size, "i64 needs shaderInt64");
      return 0;
    }
    if (!moves_bytes(n->op) &&
        (d->dtype == DG_DTYPE_I8 || d->dtype == DG_DTYPE_U8) && !vd->int8) {
      snprintf(why, why_size,
               "int8 needs shaderInt8 and 8-bit storage buffers");
      return 0;
    }
    size_t bytes = dg_desc_bytes(d);
    if (bytes > range || dg_desc_elements(d) >= ((int64_t)1 << 31)) {
      snprintf(why, why_size,
               "tensor of %zu bytes exceeds maxStorageBufferRange (%llu)",
               bytes, (unsigned long long)range);
      return 0;
    }
  }
  if (dg_vk_qavg_pool_declines(ir, n, why, why_size))
    return 0;
  uint64_t trips = vd->loop_limit ? loop_trips(ir, n) : 0;
  if (trips > vd->loop_limit) {
    snprintf(why, why_size,
             "needs %llu loop iterations an invocation; llvmpipe stops at "
             "%llu",
             (unsigned long long)trips, (unsigned long long)vd->loop_limit);
    return 0;
  }
  int64_t z = z_groups(ir, n);
  if (z > (int64_t)vd->props.limits.maxComputeWorkGroupCount[2]) {
    snprintf(why, why_size, "batch of %lld exceeds the workgroup count limit",
             (long long)z);
    return 0;
  }
  return 1;
}

/* ---- setup helpers ----
 * Each setup fills the push-constant layout of its shaders (w->push, laid
 * out by shaders/push_constants.h). Sizes and strides narrow to the
 * shaders' 32-bit int as C converts them: supports() keeps every tensor
 * below 2^31 elements. */

/* A 1-D job of total invocations in workgroups of local, into grid (a
 * dispatch's or a pass's groups): a 2-D grid with at most 65535 groups
 * along x (shaders rebuild the linear index). */
void dg_vk_grid_1d(uint32_t grid[3], int64_t total, int local) {
  int64_t groups = (total + local - 1) / local;
  int64_t gx = groups < 65535 ? groups : 65535;
  grid[0] = (uint32_t)(gx ? gx : 1);
  grid[1] = (uint32_t)((groups + gx - 1) / (gx ? gx : 1));
  grid[2] = 1;
}

/* Most scratch memory one node may take: 256 MiB, and no more than one
 * storage-buffer descriptor can address (maxStorageBufferRange, 128 MiB
 * at the least). */
VkDeviceSize dg_vk_scratch_limit(const vk_device *vd) {
  VkDeviceSize range = vd->props.limits.maxStorageBufferRange;
  return range < ((VkDeviceSize)256 << 20) ? range : (VkDeviceSize)256 << 20;
}

/* The ops this target runs (vk_ops.def), indexed by op. */
static const struct vk_op_entry {
  vk_setup_fn setup;
  unsigned needs;
} vk_op_table[DG_OP_COUNT_] = {
#define DG_VK_OP(op, setup, needs) [DG_OP_##op] = {setup, needs},
#include "vk_ops.def"
#undef DG_VK_OP
};

static const struct vk_op_entry *op_entry(dg_op op) {
  const struct vk_op_entry *e =
      op > DG_OP_INVALID && op < DG_OP_COUNT_ ? &vk_op_table[op] : NULL;
  return e && e->setup ? e : NULL;
}

static bool qualifies(const vk_device *vd, const struct vk_op_entry *e) {
  return !(e->needs & VK_NEEDS_INT8) || vd->int8;
}

bool dg_vk_runs_op(const vk_device *vd, dg_op op) {
  const struct vk_op_entry *e = op_entry(op);
  return e && qualifies(vd, e);
}

bool dg_vk_work_prepare(vk_device *vd, const dg_ir *ir, const dg_node *n,
                        vk_work *w, bool estimate) {
  memset(w, 0, sizeof *w);
  w->push_bytes = VK_PUSH_BYTES;
  w->estimate = estimate;
  const struct vk_op_entry *e = op_entry(n->op);
  return e && e->setup(vd, w, ir, n);
}

void dg_vk_work_release(vk_work *w) {
  free(w->copies);
  free(w->params);
  w->copies = NULL;
  w->params = NULL;
}
