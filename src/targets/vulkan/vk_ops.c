/* Per node: whether this device runs it, and what it records (the shader,
 * its bindings, push constants and workgroup counts, or the buffer copies
 * of reshape and concat). Each setup follows the op's reference kernel in
 * src/ops and the CPU kernel in src/targets/cpu/cpu_ops.c. */
#include "vk_internal.h"

#include "ops/view.h"

#include "ops/ops.h"
#include "ops/requant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The op table (vk_op_table, after the setups it names). */
struct vk_op_entry;
static const struct vk_op_entry *op_entry(dg_op op);

static const dg_tensor_desc *tdesc(const dg_ir *ir, uint32_t id) {
  return &dg_ir_tensor(ir, id)->desc;
}

static bool moves_bytes(dg_op op) {
  return op == DG_OP_RESHAPE || op == DG_OP_CONCAT;
}

/* Workgroups along z (batch, image x group) are capped by the device. */
static int64_t z_groups(const dg_ir *ir, const dg_node *n) {
  if (n->op == DG_OP_CONV2D || n->op == DG_OP_QCONV2D)
    return tdesc(ir, n->inputs[0])->dims[0] * n->p.groups;
  if (n->op == DG_OP_MATMUL || n->op == DG_OP_QMATMUL) {
    dg_matmul_shape s;
    int r;
    int64_t od[DG_MAX_RANK];
    dg_matmul_shape_get(tdesc(ir, n->inputs[0]), tdesc(ir, n->inputs[1]), &s,
                        &r, od);
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
  const dg_tensor_desc *x = tdesc(ir, n->inputs[0]);
  uint64_t t = 64;
  switch (n->op) {
  case DG_OP_CONV2D:
  case DG_OP_QCONV2D: {
    const dg_tensor_desc *w = tdesc(ir, n->inputs[1]);
    uint64_t cg = (uint64_t)w->dims[1], kh = (uint64_t)w->dims[2],
             kw = (uint64_t)w->dims[3];
    return t + cg * (1 + kh + kh * kw);
  }
  case DG_OP_CONV_TRANSPOSE2D: { /* w [C_in, OG, KH, KW]: CG channels */
    const dg_tensor_desc *w = tdesc(ir, n->inputs[1]);
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
  case DG_OP_ADD:
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
  uint64_t range = vd->props.limits.maxStorageBufferRange;
  for (int k = -1; k < n->input_count; k++) {
    uint32_t id = k < 0 ? n->output : n->inputs[k];
    if (!id)
      continue;
    const dg_tensor_desc *d = tdesc(ir, id);
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
static void grid_1d(uint32_t grid[3], int64_t total, int local) {
  int64_t groups = (total + local - 1) / local;
  int64_t gx = groups < 65535 ? groups : 65535;
  grid[0] = (uint32_t)(gx ? gx : 1);
  grid[1] = (uint32_t)((groups + gx - 1) / (gx ? gx : 1));
  grid[2] = 1;
}

void dg_vk_grid_1d(uint32_t grid[3], int64_t total, int local) {
  grid_1d(grid, total, local);
}

static void act_range(dg_activation a, float *lo, float *hi) {
  *lo = a == DG_ACTIVATION_NONE ? -INFINITY : 0.0f;
  *hi = a == DG_ACTIVATION_RELU6 ? 6.0f : INFINITY;
}

/* The int8 parameter blob: multiplier bits [0, C) and weight zero points
 * [C, 2C), per output channel (replicated when per-tensor). */
static bool q_params(vk_work *w, const dg_ir *ir, const dg_node *n,
                     int64_t channels) {
  const dg_tensor_desc *xd = tdesc(ir, n->inputs[0]),
                       *wd = tdesc(ir, n->inputs[1]),
                       *yd = tdesc(ir, n->output);
  w->params_bytes = sizeof(uint32_t) * 2 * (size_t)channels;
  w->bind[4] = VK_BIND_PARAMS;
  if (w->estimate)
    return true;
  uint32_t *p = malloc(w->params_bytes);
  if (!p)
    return false;
  bool pc = wd->quant.channel_count != 0;
  for (int64_t c = 0; c < channels; c++) {
    float m = dg_requant_multiplier(
        xd->quant.scale, dg_quant_scale(wd, pc ? c : 0), yd->quant.scale);
    memcpy(&p[c], &m, 4);
    p[channels + c] = (uint32_t)dg_quant_zero(wd, pc ? c : 0);
  }
  w->params = p;
  return true;
}

/* The int8 tail of the GEMM and conv layouts. */
static void q_push(vk_pc_q8 *q, const dg_ir *ir, const dg_node *n) {
  const dg_tensor_desc *xd = tdesc(ir, n->inputs[0]),
                       *wd = tdesc(ir, n->inputs[1]),
                       *yd = tdesc(ir, n->output);
  int64_t lo, hi;
  dg_dtype_int_range(yd->dtype, &lo, &hi);
  int32_t clo, chi;
  dg_requant_clamp(n->p.activation, yd->quant.scale, yd->quant.zero_point,
                   (int32_t)lo, (int32_t)hi, &clo, &chi);
  q->xz = xd->quant.zero_point;
  q->flags = (xd->dtype == DG_DTYPE_I8) | (wd->dtype == DG_DTYPE_I8) << 1 |
             (yd->dtype == DG_DTYPE_I8) << 2;
  q->yz = yd->quant.zero_point;
  q->clo = clo;
  q->chi = chi;
}

/* Tiled (shared memory) or direct kernels. CPU-type devices always take
 * the direct ones: their workgroup barriers cost more than shared memory
 * saves. On GPUs, the 64x64 tiles pay once both sides of the output are
 * wide enough to fill them. */
static bool cpu_like(const vk_device *vd) {
  return vd->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && !vd->test_paths;
}
/* The int8 tiled kernels through packed dot products where the device
 * accelerates them (or DG_TEST_VULKAN_PATHS=dot asks, to test them where
 * the feature is only emulated). */
static bool use_dot(const vk_device *vd) {
  return vd->int_dot && (vd->int_dot_fast || vd->test_paths == 3);
}
static bool direct_conv(const vk_device *vd, int64_t OG, int64_t P) {
  if (vd->test_paths >= 2)
    return false;
  return cpu_like(vd) || OG < 8 || P < 16;
}
static bool direct_gemm(const vk_device *vd, int64_t M, int64_t N) {
  if (vd->test_paths >= 2)
    return false;
  return cpu_like(vd) || M < 8 || N < 8;
}

/* The 128x128-class kernels (gemm_big.comp for f32, gemm_coop.comp for
 * f16 on cooperative matrices): on GPUs once the GEMM is big enough to
 * fill the device with 128x128 tiles; "tiled" test paths force the f32
 * one on any shape (the coopmat one needs the device). Workgroup counts
 * stay within the guaranteed 65535 per dimension even at the smallest
 * tile, 64x64. */
static bool big_fits(const vk_device *vd, int64_t M, int64_t N, int64_t z) {
  const uint32_t *lim = vd->props.limits.maxComputeWorkGroupCount;
  return (N + 63) / 64 <= lim[0] && (M + 63) / 64 <= lim[1] && z <= lim[2];
}
static bool use_big_f32(const vk_device *vd, int64_t M, int64_t N, int64_t K,
                        int64_t z) {
  if (!big_fits(vd, M, N, z))
    return false;
  if (vd->test_paths >= 2)
    return true;
  return !cpu_like(vd) && M >= 64 && N >= 64 && K >= 16 &&
         M * N * z >= 256 * 256;
}
static bool use_coop_f16(const vk_device *vd, int64_t M, int64_t N, int64_t K,
                         int64_t z) {
  (void)z;
  return (vd->coop_nv_f16 || vd->coop_khr_f16) && big_fits(vd, M, N, z) &&
         M >= 32 && N >= 32 && K >= 32;
}

/* The NV coopmat kernels' tile side: 128, or 64 where 128x128 tiles would
 * be half empty (M <= 64) or so few that most of a large GPU idles (H200
 * figures: docs/performance.md, "Tile and path choices"). */
static int coop_tile(int64_t M, int64_t N, int64_t z) {
  int64_t tiles = ((M + 127) / 128) * ((N + 127) / 128) * z;
  return M <= 64 || tiles < 64 ? 64 : 128;
}

/* The grid of a tiled kernel over an M x N output in z matrices, by the
 * tile its module was built with (variants.def; the build checks it
 * against the kernel's BM x BN). */
static void tile_grid(vk_work *w, int64_t M, int64_t N, int64_t z) {
  const vk_variant *v = &dg_vk_variants[w->shader];
  w->groups[0] = (uint32_t)((N + v->tile_n - 1) / v->tile_n);
  w->groups[1] = (uint32_t)((M + v->tile_m - 1) / v->tile_m);
  w->groups[2] = (uint32_t)z;
}
/* The KHR GEMMs' 128x256 tiles where at least 64 of them fill the output,
 * else 64x64 ones. */
static bool khr_wide(int64_t M, int64_t N, int64_t z) {
  return M > 64 && ((M + 127) / 128) * ((N + 255) / 256) * z >= 64;
}

/* Dispatch of a 128x128-tile kernel (sh) over an M x N output in z
 * matrices. A coopmat kernel becomes: through KHR, the implicit 64x64
 * conv, or the 128x256 or 64x64 GEMM (khr_wide); through NV, its 64x64
 * variant (sh64) where coop_tile says so. flags: specialisation constant
 * 0. */
static void big_work(const vk_device *vd, vk_work *w, vk_shader sh,
                     vk_shader sh64, uint32_t flags, int64_t M, int64_t N,
                     int64_t z) {
  w->shader = sh;
  if (sh == SH_CONVC_F16 && vd->coop_khr_f16)
    w->shader = SH_CONVK_F16;
  else if (sh == SH_GEMMC_F16 && vd->coop_khr_f16)
    w->shader = khr_wide(M, N, z) ? SH_GEMMK_F16 : SH_GEMMK64_F16;
  else if ((sh == SH_GEMMC_F16 || sh == SH_CONVC_F16) &&
           coop_tile(M, N, z) == 64)
    w->shader = sh64;
  w->spec[0] = flags;
  w->spec_count = 1;
  tile_grid(w, M, N, z);
}

/* Most scratch memory one node may take: 256 MiB, and no more than one
 * storage-buffer descriptor can address (maxStorageBufferRange, 128 MiB
 * at the least). */
static VkDeviceSize scratch_limit(const vk_device *vd) {
  VkDeviceSize range = vd->props.limits.maxStorageBufferRange;
  return range < ((VkDeviceSize)256 << 20) ? range : (VkDeviceSize)256 << 20;
}

/* 64x64 cooperative-matrix workgroups (128 invocations, 128 registers)
 * resident at once: four per multiprocessor, as on the H200, which has
 * 132; that count where the device does not say its own. */
static int64_t resident64(const vk_device *vd) {
  return 4 * (int64_t)(vd->multiprocessors ? vd->multiprocessors : 132);
}

/* Split-K for the KHR cooperative-matrix kernels (after big_work): where
 * the output has too few tiles to fill the GPU (fewer than half of
 * resident64, 264 on the H200) and K is deep, workgroups sum ksplit
 * slices of K into fp32 partials in scratch, and splitk.comp adds them up
 * and finishes the outputs. Up to 4 slices of at least 512 each, as many
 * as keep the workgroups within one wave (resident64), within
 * scratch_limit. Not after the blocked copies unless forced: there it
 * lost (H200 figures: docs/performance.md, "Tile and path choices"). M x N
 * outputs in z matrices, K deep; conv: the conv's push layout (else the
 * GEMM's). */
static void splitk_work(const vk_device *vd, vk_work *w, bool conv, int64_t M,
                        int64_t N, int64_t K, int64_t z) {
  int64_t tiles = (int64_t)w->groups[0] * w->groups[1] * w->groups[2];
  int64_t ks = vd->splitk;
  if (ks < 0) {
    int64_t r = resident64(vd);
    ks = 2 * tiles >= r || K < 1024 || w->pre.on ? 1 : r / tiles;
    ks = ks > 4 ? 4 : ks;
    ks = ks > K / 512 ? K / 512 : ks;
  }
  /* The partials follow a pre-pass's scratch, if any. */
  VkDeviceSize base = (w->scratch_bytes + 15) / 16 * 16;
  VkDeviceSize bytes = base + (VkDeviceSize)(ks * z * M * N) * 4;
  if (ks < 2 || bytes > scratch_limit(vd) ||
      base / 4 + ks * z * M * N > INT32_MAX ||
      w->groups[2] * ks > vd->props.limits.maxComputeWorkGroupCount[2])
    return;
  vk_pc_splitk *sk = conv ? &w->push.conv.coop.splitk : &w->push.gemm.splitk;
  sk->ksplit = (int)ks;
  sk->pbase = (int)(base / 4);
  w->groups[2] *= (uint32_t)ks;
  w->bind[4] = VK_BIND_SCRATCH;
  w->scratch_bytes = bytes;
  w->post.on = true;
  w->post.shader = conv ? SH_SPLITKC_F16 : SH_SPLITK_F16;
  w->post.bind[2] = w->bind[2];
  w->post.bind[3] = w->bind[3];
  w->post.bind[4] = VK_BIND_SCRATCH;
  grid_1d(w->post.groups, z * M * N, 256);
}

/* Points the main dispatch's binding 0 at the scratch region and records
 * pre-pass sh before it: reads the node's bindings 0 and 1, writes bytes
 * of scratch (binding 3), over groups workgroups (a row of at most 65535;
 * the pre-pass shaders stride) times gz. */
static void scratch_pre(vk_work *w, vk_shader sh, VkDeviceSize bytes,
                        int64_t groups, int64_t gz) {
  w->scratch_bytes = bytes;
  w->pre.on = true;
  w->pre.shader = sh;
  w->pre.bind[0] = w->bind[0];
  w->pre.bind[1] = w->bind[1];
  w->pre.bind[3] = VK_BIND_SCRATCH;
  w->pre.groups[0] = (uint32_t)(groups < 65535 ? groups : 65535);
  w->pre.groups[1] = 1;
  w->pre.groups[2] = (uint32_t)gz;
  w->bind[0] = VK_BIND_SCRATCH;
}

/* An f16 conv on KHR cooperative matrices (after big_work) as im2col.comp
 * writing B = [G][N][K rounded up to 8] into scratch, then the GEMM
 * reading it (convik*); only where DG_VK_CONV_GATHER=im2col asks: on the
 * H200 it beat the implicit gather only at OG >= 512 and lost to the
 * blocked copies everywhere (docs/performance.md, "Tile and path
 * choices"). M x N outputs per group, K per output. */
static bool im2col_work(const vk_device *vd, vk_work *w, int64_t M, int64_t N,
                        int64_t K, int64_t G) {
  int64_t kb = (K + 7) / 8, rows = N * kb;
  VkDeviceSize bytes = (VkDeviceSize)(G * rows) * 16;
  if (vd->conv_gather != 1 || bytes > scratch_limit(vd) || rows > INT32_MAX / 8)
    return false;
  scratch_pre(w, SH_IM2COL_F16, bytes, (rows + 255) / 256, G);
  w->shader = khr_wide(M, N, G) ? SH_CONVIK_F16 : SH_CONVIK64_F16;
  tile_grid(w, M, N, G);
  return true;
}

/* The GEMM over blocked copies for an OG x NP output in G groups, by how
 * its tiles fill the GPU: resident64 workgroups of 64x64 run at once (528
 * on the H200), and a wave left partly empty costs as much as a full
 * one. 64x128 tiles where they take at most half the waves of 64x64 ones;
 * BK 64 where every 64x64 tile is resident at two per multiprocessor; else
 * 64x64. The table of ResNet-50's layers behind this rule:
 * docs/performance.md, "Tile and path choices". */
static vk_shader cblock_kernel(const vk_device *vd, int64_t OG, int64_t NP,
                               int64_t G) {
  int64_t mt = (OG + 63) / 64, t64 = mt * ((NP + 63) / 64) * G,
          t128 = mt * ((NP + 127) / 128) * G, r = resident64(vd);
  if (2 * ((t128 + r - 1) / r) <= (t64 + r - 1) / r)
    return SH_CONVNK_F16;
  return t64 <= r / 2 ? SH_CONVNK64D_F16 : SH_CONVNK64_F16;
}

/* An f16 conv on KHR cooperative matrices (after big_work) as cblock.comp
 * writing channel-blocked copies of x and w into scratch ([G][N][H][W][CP]
 * and [G][OG][KH][KW][CP], CP = CG rounded up to 8), then the GEMM
 * gathering B from them one 16-byte load per 8 channels (convnk*). The
 * default wherever the copies fit the scratch limit. Constant weights
 * (wconst, f16 [G*OG][CG][KH][KW]) are blocked here once, into the node's
 * parameter blob, instead of on every run (push constant wblk says
 * which): at ResNet-50's 512@7 they are three times the input. Then
 * split-K over the padded K where DG_VK_SPLITK forces it. x: N x (G*CG) x
 * H x W, NP = N*OH*OW outputs per channel. -1: out of host memory; 0: not
 * taken; 1: taken. */
static int cblock_work(const vk_device *vd, vk_work *w, int64_t N, int64_t H,
                       int64_t W, int64_t G, int64_t CG, int64_t OG,
                       int64_t khw, int64_t NP, const uint16_t *wconst) {
  int64_t CP = (CG + 7) / 8 * 8, xh = G * N * H * W * CP,
          wh = G * OG * khw * CP;
  bool wblk = !wconst || (VkDeviceSize)wh * 2 > scratch_limit(vd);
  int64_t halves = xh + (wblk ? wh : 0);
  VkDeviceSize bytes = (VkDeviceSize)halves * 2;
  if ((vd->conv_gather != -1 && vd->conv_gather != 2) ||
      bytes > scratch_limit(vd) || xh + wh > INT32_MAX)
    return 0;
  if (!wblk && w->estimate) {
    w->params_bytes = (size_t)wh * 2;
  } else if (!wblk) {
    uint16_t *p = malloc((size_t)wh * 2);
    if (!p)
      return -1;
    for (int64_t go = 0; go < G * OG; go++)
      for (int64_t q = 0; q < khw; q++)
        for (int64_t c = 0; c < CP; c++)
          p[(go * khw + q) * CP + c] =
              c < CG ? wconst[(go * CG + c) * khw + q] : 0;
    w->params = p;
    w->params_bytes = (size_t)wh * 2;
  }
  scratch_pre(w, SH_CBLOCK_F16, bytes, (halves / 8 + 255) / 256, 1);
  w->push.conv.coop.wblk = wblk;
  w->bind[1] = wblk ? VK_BIND_SCRATCH : VK_BIND_PARAMS;
  w->shader = cblock_kernel(vd, OG, NP, G);
  w->spec[0] = 1; /* A, the blocked weights, loads as uvec4 */
  tile_grid(w, OG, NP, G);
  splitk_work(vd, w, true, OG, NP, khw * CP, G);
  return 1;
}

static bool setup_conv(const vk_device *vd, vk_work *w, const dg_ir *ir,
                       const dg_node *n) {
  const dg_tensor_desc *xd = tdesc(ir, n->inputs[0]),
                       *wd = tdesc(ir, n->inputs[1]),
                       *yd = tdesc(ir, n->output);
  const dg_node_params *p = &n->p;
  bool q = n->op == DG_OP_QCONV2D, f16 = xd->dtype == DG_DTYPE_F16;
  int64_t N = xd->dims[0], C = xd->dims[1], O = wd->dims[0], G = p->groups;
  int64_t CG = C / G, OG = O / G, OH = yd->dims[2], OW = yd->dims[3];
  vk_pc_conv *pc = &w->push.conv;
  *pc = (vk_pc_conv){.N = N,
                     .C = C,
                     .H = xd->dims[2],
                     .W = xd->dims[3],
                     .O = O,
                     .OH = OH,
                     .OW = OW,
                     .KH = wd->dims[2],
                     .KW = wd->dims[3],
                     .G = G,
                     .CG = CG,
                     .OG = OG,
                     .sh = p->stride[0],
                     .sw = p->stride[1],
                     .dh = p->dilation[0],
                     .dw = p->dilation[1],
                     .pt = p->pads[0],
                     .pl = p->pads[1],
                     .has_bias = n->input_count > 2 && n->inputs[2]};
  act_range(p->activation, &pc->lo, &pc->hi);
  w->bind[0] = n->inputs[0];
  w->bind[1] = n->inputs[1];
  w->bind[2] = n->input_count > 2 ? n->inputs[2] : 0;
  w->bind[3] = n->output;
  int64_t KG = CG * wd->dims[2] * wd->dims[3], NP = N * OH * OW;
  bool coop = !q && f16 && use_coop_f16(vd, OG, NP, KG, G);
  bool big = !q && !f16 && use_big_f32(vd, OG, NP, KG, G);
  if (coop || big) {
    /* Batch folded into the GEMM's n; z = group. Specialisation constant
     * 0: A (the weight rows) loads as vectors (K a multiple of the vector
     * width). */
    big_work(vd, w, coop ? SH_CONVC_F16 : SH_CONVB_F32, SH_CONVC64_F16,
             KG % (coop ? 8 : 4) == 0, OG, NP, G);
    if (coop && vd->coop_khr_f16) {
      const dg_tensor_info *wt = &ir->tensors[n->inputs[1] - 1];
      const uint16_t *wconst =
          wt->kind == DG_TENSOR_CONSTANT && wd->dtype == DG_DTYPE_F16
              ? wt->constant->data
              : NULL;
      int cb = cblock_work(vd, w, N, xd->dims[2], xd->dims[3], G, CG, OG,
                           wd->dims[2] * wd->dims[3], NP, wconst);
      if (cb < 0)
        return false;
      if (!cb && !im2col_work(vd, w, OG, NP, KG, G))
        splitk_work(vd, w, true, OG, NP, KG, G);
    }
  } else if (direct_conv(vd, OG, OH * OW)) {
    w->shader = q ? SH_CONVD_Q8 : f16 ? SH_CONVD_F16 : SH_CONVD_F32;
    grid_1d(w->groups, N * O * OH * OW, 64);
  } else {
    w->shader = q     ? (use_dot(vd) ? SH_CONVDOT_Q8 : SH_CONV_Q8)
                : f16 ? SH_CONV_F16
                      : SH_CONV_F32;
    w->groups[0] = (uint32_t)((OH * OW + 63) / 64);
    w->groups[1] = (uint32_t)((OG + 63) / 64);
    w->groups[2] = (uint32_t)(N * G);
  }
  if (q) {
    q_push(&pc->q8, ir, n);
    return q_params(w, ir, n, O);
  }
  return true;
}

/* The GEMM layout of one matrix product (no batch: brank 0). */
static void gemm_push(vk_work *w, int64_t M, int64_t N, int64_t K, int64_t sam,
                      int64_t sak, int64_t sbk, int64_t sbn, int bias_mode,
                      dg_activation act) {
  vk_pc_gemm *pc = &w->push.gemm;
  *pc = (vk_pc_gemm){.M = M,
                     .N = N,
                     .K = K,
                     .sam = sam,
                     .sak = sak,
                     .sbk = sbk,
                     .sbn = sbn,
                     .bias_mode = bias_mode,
                     .brank = 0,
                     .bdim = {1, 1, 1, 1}};
  act_range(act, &pc->lo, &pc->hi);
}

/* Specialisation constant 0 of the 128x128 kernels: bit 0 A loads as vectors of
 * vw elements, bit 1 B does, bit 2 B is k-contiguous (fully_connected's
 * weights). Vectors need the contiguous stride 1, the other stride, K or N
 * and every batch offset multiples of vw (tensor bases are aligned to at
 * least 64 bytes by the memory plan). */
static uint32_t big_flags(const vk_work *w, int vw) {
  const vk_pc_gemm *p = &w->push.gemm;
  int32_t N = p->N, K = p->K, sam = p->sam, sak = p->sak, sbk = p->sbk,
          sbn = p->sbn;
  bool abat = true, bbat = true;
  for (int d = 0; d < p->brank; d++) {
    abat = abat && p->astr[d] % vw == 0;
    bbat = bbat && p->bstr[d] % vw == 0;
  }
  bool bk = sbk == 1 && sbn != 1;
  bool av = sak == 1 && sam % vw == 0 && K % vw == 0 && abat;
  bool bv = bk ? (sbn % vw == 0 && K % vw == 0 && bbat)
               : (sbn == 1 && sbk % vw == 0 && N % vw == 0 && bbat);
  return (uint32_t)av | (uint32_t)bv << 1 | (uint32_t)bk << 2;
}

/* Picks the tiled or direct GEMM for M x N outputs in batch matrices
 * (after gemm_push: the 128x128 kernels read its strides). */
static void gemm_kernel(const vk_device *vd, vk_work *w, bool q, bool f16,
                        int64_t M, int64_t N, int64_t batch) {
  int64_t K = w->push.gemm.K;
  bool coop = !q && f16 && use_coop_f16(vd, M, N, K, batch);
  bool big = !q && !f16 && use_big_f32(vd, M, N, K, batch);
  if (coop || big) {
    big_work(vd, w, coop ? SH_GEMMC_F16 : SH_GEMMB_F32, SH_GEMMC64_F16,
             big_flags(w, coop ? 8 : 4), M, N, batch);
    if (coop && vd->coop_khr_f16)
      splitk_work(vd, w, false, M, N, K, batch);
  } else if (direct_gemm(vd, M, N)) {
    w->shader = q ? SH_GEMMD_Q8 : f16 ? SH_GEMMD_F16 : SH_GEMMD_F32;
    grid_1d(w->groups, batch * M * N, 64);
  } else {
    w->shader = q     ? (use_dot(vd) ? SH_GEMMDOT_Q8 : SH_GEMM_Q8)
                : f16 ? SH_GEMM_F16
                      : SH_GEMM_F32;
    w->groups[0] = (uint32_t)((N + 63) / 64);
    w->groups[1] = (uint32_t)((M + 63) / 64);
    w->groups[2] = (uint32_t)batch;
  }
}

static bool setup_fc(const vk_device *vd, vk_work *w, const dg_ir *ir,
                     const dg_node *n) {
  const dg_tensor_desc *xd = tdesc(ir, n->inputs[0]),
                       *wd = tdesc(ir, n->inputs[1]),
                       *yd = tdesc(ir, n->output);
  bool q = n->op == DG_OP_QFULLY_CONNECTED;
  int64_t M = yd->dims[0], N = wd->dims[0], K = wd->dims[1];
  bool bias = n->input_count > 2 && n->inputs[2];
  /* B[k][n] = w[n][k]: the weights read transposed. */
  gemm_push(w, M, N, K, K, 1, 1, K, bias ? 2 : 0, n->p.activation);
  w->bind[0] = n->inputs[0];
  w->bind[1] = n->inputs[1];
  w->bind[2] = bias ? n->inputs[2] : 0;
  w->bind[3] = n->output;
  gemm_kernel(vd, w, q, xd->dtype == DG_DTYPE_F16, M, N, 1);
  if (q) {
    q_push(&w->push.gemm.q8, ir, n);
    return q_params(w, ir, n, N);
  }
  return true;
}

static bool setup_matmul(const vk_device *vd, vk_work *w, const dg_ir *ir,
                         const dg_node *n) {
  const dg_tensor_desc *ad = tdesc(ir, n->inputs[0]),
                       *bd = tdesc(ir, n->inputs[1]);
  bool q = n->op == DG_OP_QMATMUL;
  dg_matmul_shape s;
  int r;
  int64_t od[DG_MAX_RANK];
  dg_matmul_shape_get(ad, bd, &s, &r, od);
  gemm_push(w, s.M, s.N, s.K, s.K, 1, s.N, 1, 0, DG_ACTIVATION_NONE);
  vk_pc_gemm *pc = &w->push.gemm;
  pc->brank = s.batch_rank;
  for (int d = 0; d < s.batch_rank; d++) {
    pc->bdim[d] = s.batch_dims[d];
    pc->astr[d] = s.a_bstride[d] * s.M * s.K;
    pc->bstr[d] = s.b_bstride[d] * s.K * s.N;
  }
  /* Bound before gemm_kernel: a split-K post-pass takes its output
   * binding from them. */
  w->bind[0] = n->inputs[0];
  w->bind[1] = n->inputs[1];
  w->bind[3] = n->output;
  gemm_kernel(vd, w, q, ad->dtype == DG_DTYPE_F16, s.M, s.N, s.batch);
  if (q) {
    /* qmatmul has no activation: the clamp is the dtype's range. */
    q_push(&pc->q8, ir, n);
    return q_params(w, ir, n, s.N);
  }
  return true;
}

vk_pc_pool dg_vk_pool_push(const dg_ir *ir, const dg_node *n) {
  const dg_tensor_desc *xd = tdesc(ir, n->inputs[0]),
                       *yd = tdesc(ir, n->output);
  const dg_node_params *p = &n->p;
  return (vk_pc_pool){.NC = xd->dims[0] * xd->dims[1],
                      .H = xd->dims[2],
                      .W = xd->dims[3],
                      .OH = yd->dims[2],
                      .OW = yd->dims[3],
                      .kh = p->kernel[0],
                      .kw = p->kernel[1],
                      .sh = p->stride[0],
                      .sw = p->stride[1],
                      .pt = p->pads[0],
                      .pl = p->pads[1],
                      .pb = p->pads[2],
                      .pr = p->pads[3],
                      .is_max = n->op == DG_OP_MAX_POOL2D,
                      .count_include_pad = p->count_include_pad,
                      .flags = xd->dtype == DG_DTYPE_I8,
                      .dh = p->dilation[0],
                      .dw = p->dilation[1]};
}

static bool setup_pool(const vk_device *vd, vk_work *w, const dg_ir *ir,
                       const dg_node *n) {
  (void)vd;
  const dg_tensor_desc *xd = tdesc(ir, n->inputs[0]),
                       *yd = tdesc(ir, n->output);
  w->push.pool = dg_vk_pool_push(ir, n);
  w->shader = xd->dtype == DG_DTYPE_F32   ? SH_POOL_F32
              : xd->dtype == DG_DTYPE_F16 ? SH_POOL_F16
                                          : SH_POOL_8;
  w->bind[0] = n->inputs[0];
  w->bind[3] = n->output;
  grid_1d(w->groups, dg_desc_elements(yd), 256);
  return true;
}

static bool setup_gap(const vk_device *vd, vk_work *w, const dg_ir *ir,
                      const dg_node *n) {
  (void)vd;
  const dg_tensor_desc *xd = tdesc(ir, n->inputs[0]);
  bool f16 = xd->dtype == DG_DTYPE_F16;
  int64_t NC = xd->dims[0] * xd->dims[1], HW = xd->dims[2] * xd->dims[3];
  /* Chunks of 4096 (64 per invocation), more where a row of workgroups
   * would pass 65535; gap.comp says why two passes. */
  int64_t CH = 4096;
  if ((HW + CH - 1) / CH > 65535)
    CH = ((HW + 65534) / 65535 + 63) / 64 * 64;
  int64_t G = (HW + CH - 1) / CH;
  int64_t cz = (NC + 65534) / 65535;
  w->push.gap =
      (vk_pc_gap){.NC = (int)NC, .HW = (int)HW, .G = (int)G, .CH = (int)CH};
  w->shader = f16 ? SH_GAP_F16 : SH_GAP_F32;
  w->bind[0] = n->inputs[0];
  w->bind[3] = n->output;
  w->groups[0] = (uint32_t)G;
  w->groups[1] = (uint32_t)(NC < 65535 ? NC : 65535);
  w->groups[2] = (uint32_t)cz;
  if (G > 1) {
    w->scratch_bytes = (VkDeviceSize)(NC * G) * 4;
    w->bind[4] = VK_BIND_SCRATCH;
    w->post.on = true;
    w->post.shader = f16 ? SH_GAPSUM_F16 : SH_GAPSUM_F32;
    w->post.bind[3] = n->output;
    w->post.bind[4] = VK_BIND_SCRATCH;
    grid_1d(w->post.groups, NC, 1); /* one workgroup per channel */
  }
  return true;
}

static bool setup_softmax(const vk_device *vd, vk_work *w, const dg_ir *ir,
                          const dg_node *n) {
  (void)vd;
  const dg_tensor_desc *d = tdesc(ir, n->output);
  int axis = n->p.axis;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; i++)
    outer *= d->dims[i];
  for (int i = axis + 1; i < d->rank; i++)
    inner *= d->dims[i];
  w->push.softmax = (vk_pc_softmax){.outer = outer,
                                    .len = d->dims[axis],
                                    .inner = inner,
                                    .log_out = n->op == DG_OP_LOG_SOFTMAX};
  w->shader = d->dtype == DG_DTYPE_F16 ? SH_SOFTMAX_F16 : SH_SOFTMAX_F32;
  w->bind[0] = n->inputs[0];
  w->bind[3] = n->output;
  grid_1d(w->groups, outer * inner, 64);
  return true;
}

static bool setup_eltwise(const vk_device *vd, vk_work *w, const dg_ir *ir,
                          const dg_node *n) {
  (void)vd;
  const dg_tensor_desc *yd = tdesc(ir, n->output);
  int64_t total = dg_desc_elements(yd);
  vk_pc_eltwise *pc = &w->push.eltwise;
  pc->total = total;
  w->bind[0] = n->inputs[0];
  w->bind[3] = n->output;
  if (n->op == DG_OP_SIGMOID) {
    pc->mode = 2;
  } else {
    bool relu = n->op == DG_OP_RELU;
    pc->mode = 0;
    pc->lo = relu ? 0.0f : n->p.clip_lo;
    pc->hi = relu ? INFINITY : n->p.clip_hi;
  }
  w->shader = yd->dtype == DG_DTYPE_F16 ? SH_ELTWISE_F16 : SH_ELTWISE_F32;
  grid_1d(w->groups, total, 256);
  return true;
}

/* Per-channel quantisation of d as the blob [scale bits, zero points]:
 * inner is the element stride of the channel axis. */
static bool quant_blob(vk_work *w, const dg_tensor_desc *d, int64_t *inner,
                       int64_t *chans) {
  *inner = 1;
  *chans = 1;
  if (!d->quant.channel_count) {
    w->bind[4] = 0;
    return true;
  }
  for (int k = d->quant.axis + 1; k < d->rank; k++)
    *inner *= d->dims[k];
  *chans = d->dims[d->quant.axis];
  w->params_bytes = sizeof(uint32_t) * 2 * (size_t)*chans;
  w->bind[4] = VK_BIND_PARAMS;
  if (w->estimate)
    return true;
  uint32_t *p = malloc(w->params_bytes);
  if (!p)
    return false;
  for (int64_t c = 0; c < *chans; c++) {
    float s = dg_quant_scale(d, c);
    memcpy(&p[c], &s, 4);
    p[*chans + c] = (uint32_t)dg_quant_zero(d, c);
  }
  w->params = p;
  return true;
}

static bool setup_quant(const vk_device *vd, vk_work *w, const dg_ir *ir,
                        const dg_node *n) {
  (void)vd;
  bool quantize = n->op == DG_OP_QUANTIZE;
  const dg_tensor_desc *xd = tdesc(ir, n->inputs[0]),
                       *yd = tdesc(ir, n->output);
  const dg_tensor_desc *qd = quantize ? yd : xd; /* carries the quant */
  int64_t inner, chans;
  if (!quant_blob(w, qd, &inner, &chans))
    return false;
  int64_t total = dg_desc_elements(yd);
  bool per_channel = qd->quant.channel_count != 0;
  if (quantize) {
    int64_t lo, hi;
    dg_dtype_int_range(yd->dtype, &lo, &hi);
    w->push.quantize = (vk_pc_quantize){.total = total,
                                        .inner = inner,
                                        .chans = chans,
                                        .per_channel = per_channel,
                                        .lo = lo,
                                        .hi = hi,
                                        .scale = qd->quant.scale,
                                        .zero = qd->quant.zero_point};
    w->shader = yd->dtype == DG_DTYPE_I32 ? SH_QUANTIZE_32 : SH_QUANTIZE_8;
  } else {
    w->push.dequantize = (vk_pc_dequantize){.total = total,
                                            .inner = inner,
                                            .chans = chans,
                                            .per_channel = per_channel,
                                            .flags = xd->dtype == DG_DTYPE_I8,
                                            .scale = qd->quant.scale,
                                            .zero = qd->quant.zero_point};
    w->shader = xd->dtype == DG_DTYPE_I32 ? SH_DEQUANTIZE_32 : SH_DEQUANTIZE_8;
  }
  w->bind[0] = n->inputs[0];
  w->bind[3] = n->output;
  grid_1d(w->groups, total, 256);
  return true;
}

/* reshape: one copy; concat: one region per input and outer index. */
static bool setup_copies(const vk_device *vd, vk_work *w, const dg_ir *ir,
                         const dg_node *n) {
  (void)vd;
  w->is_copy = true;
  const dg_tensor_desc *yd = tdesc(ir, n->output);
  if (n->op == DG_OP_RESHAPE) {
    w->copies = malloc(sizeof *w->copies);
    if (!w->copies)
      return false;
    w->copies[0] = (vk_copy){n->inputs[0], n->output, 0, 0, dg_desc_bytes(yd)};
    w->copy_count = 1;
    return true;
  }
  int axis = n->p.axis;
  size_t es = dg_dtype_size(yd->dtype);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; i++)
    outer *= yd->dims[i];
  for (int i = axis + 1; i < yd->rank; i++)
    inner *= yd->dims[i];
  w->copies = malloc(sizeof *w->copies * (size_t)(outer * n->input_count));
  if (!w->copies)
    return false;
  int64_t off = 0, row = yd->dims[axis] * inner;
  for (int t = 0; t < n->input_count; t++) {
    int64_t len = tdesc(ir, n->inputs[t])->dims[axis] * inner;
    for (int64_t o = 0; o < outer; o++)
      w->copies[w->copy_count++] =
          (vk_copy){n->inputs[t], n->output, (VkDeviceSize)(o * len) * es,
                    (VkDeviceSize)(o * row + off) * es, (VkDeviceSize)len * es};
    off += len;
  }
  return true;
}

/* The ops this target runs: for each, the setup that records its work
 * and what the device must have. supports() declines an op without a line
 * here (the plan shows why), and the device's info.ops lists exactly the
 * lines the device qualifies for. */
typedef bool (*vk_setup_fn)(const vk_device *vd, vk_work *w, const dg_ir *ir,
                            const dg_node *n);
enum { VK_NEEDS_INT8 = 1 };
static const struct vk_op_entry {
  dg_op op;
  vk_setup_fn setup;
  unsigned needs;
} vk_op_table[] = {
    {DG_OP_CONV2D, setup_conv, 0},
    {DG_OP_QCONV2D, setup_conv, VK_NEEDS_INT8},
    {DG_OP_FULLY_CONNECTED, setup_fc, 0},
    {DG_OP_QFULLY_CONNECTED, setup_fc, VK_NEEDS_INT8},
    {DG_OP_MATMUL, setup_matmul, 0},
    {DG_OP_QMATMUL, setup_matmul, VK_NEEDS_INT8},
    {DG_OP_MAX_POOL2D, setup_pool, 0},
    {DG_OP_AVG_POOL2D, setup_pool, 0},
    {DG_OP_GLOBAL_AVG_POOL, setup_gap, 0},
    {DG_OP_SOFTMAX, setup_softmax, 0},
    {DG_OP_RELU, setup_eltwise, 0},
    {DG_OP_CLIP, setup_eltwise, 0},
    {DG_OP_SIGMOID, setup_eltwise, 0},
    {DG_OP_ADD, dg_vk_setup_binary, 0},
    {DG_OP_BINARY, dg_vk_setup_binary, 0},
    {DG_OP_UNARY, dg_vk_setup_unary, 0},
    {DG_OP_RESHAPE, setup_copies, 0},
    {DG_OP_CONCAT, setup_copies, 0},
    {DG_OP_QUANTIZE, setup_quant, 0},
    {DG_OP_DEQUANTIZE, setup_quant, 0},
    {DG_OP_TRANSPOSE, dg_vk_setup_view, 0},
    {DG_OP_SLICE, dg_vk_setup_view, 0},
    {DG_OP_PAD, dg_vk_setup_view, 0},
    {DG_OP_EXPAND, dg_vk_setup_view, 0},
    {DG_OP_GATHER, dg_vk_setup_gather, 0},
    {DG_OP_REDUCE, dg_vk_setup_reduce, 0},
    {DG_OP_LOG_SOFTMAX, setup_softmax, 0},
    {DG_OP_LAYER_NORM, dg_vk_setup_layer_norm, 0},
    {DG_OP_RESIZE, dg_vk_setup_resize, 0},
    {DG_OP_BATCH_NORM, dg_vk_setup_batch_norm, 0},
    {DG_OP_CONV_TRANSPOSE2D, dg_vk_setup_conv_transpose, 0},
    {DG_OP_CAST, dg_vk_setup_cast, 0},
    {DG_OP_COMPARE, dg_vk_setup_compare, VK_NEEDS_INT8},
    {DG_OP_WHERE, dg_vk_setup_compare, VK_NEEDS_INT8},
    {DG_OP_ARG_REDUCE, dg_vk_setup_compare, 0},
    {DG_OP_QBINARY, dg_vk_setup_qbinary, VK_NEEDS_INT8},
    {DG_OP_LOOKUP, dg_vk_setup_lookup, VK_NEEDS_INT8},
    {DG_OP_QAVG_POOL2D, dg_vk_setup_qavg_pool, VK_NEEDS_INT8},
};

static const struct vk_op_entry *op_entry(dg_op op) {
  for (size_t i = 0; i < sizeof vk_op_table / sizeof *vk_op_table; i++)
    if (vk_op_table[i].op == op)
      return &vk_op_table[i];
  return NULL;
}

static bool qualifies(const vk_device *vd, const struct vk_op_entry *e) {
  return !(e->needs & VK_NEEDS_INT8) || vd->int8;
}

uint64_t dg_vk_ops(const vk_device *vd) {
  uint64_t ops = 0;
  for (size_t i = 0; i < sizeof vk_op_table / sizeof *vk_op_table; i++)
    if (qualifies(vd, &vk_op_table[i]))
      ops |= 1ull << vk_op_table[i].op;
  return ops;
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
