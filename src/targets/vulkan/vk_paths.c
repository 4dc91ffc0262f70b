/* Which kernel a GEMM-shaped node takes on this device (direct, tiled,
 * big f32 tiles, KHR/NV cooperative matrices, split-K, im2col or a
 * channel-blocked first pass), and the int8 epilogue's parameters they
 * share: the choices vk_conv.c and vk_gemm.c make alike. */
#include "vk_internal.h"

#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The int8 parameter blob: multiplier bits [0, C) and weight zero points
 * [C, 2C), per output channel (replicated when per-tensor). */
bool dg_vk_q_params(vk_work *w, const dg_ir *ir, const dg_node *n,
                    int64_t channels) {
  w->params_bytes = sizeof(uint32_t) * 2 * (size_t)channels;
  w->bind[4] = VK_BIND_PARAMS;
  if (w->estimate)
    return true;
  dg_q8_epilogue e;
  uint32_t *p = malloc(w->params_bytes);
  if (!p || !dg_q8_epilogue_init(&e, ir, n, channels)) {
    free(p);
    return false;
  }
  memcpy(p, e.mult, sizeof(float) * (size_t)channels);
  for (int64_t c = 0; c < channels; c++)
    p[channels + c] = (uint32_t)e.w_zero[c];
  dg_q8_epilogue_free(&e);
  w->params = p;
  return true;
}

/* The int8 tail of the GEMM and conv layouts. */
void dg_vk_q_push(vk_pc_q8 *q, const dg_ir *ir, const dg_node *n) {
  dg_q8_epilogue e;
  dg_q8_epilogue_init(&e, ir, n, 0); /* the per-node fields: cannot fail */
  q->xz = e.x_zero;
  q->flags = e.x_signed | e.w_signed << 1 | e.y_signed << 2;
  q->yz = e.y_zero;
  q->clo = e.clamp_lo;
  q->chi = e.clamp_hi;
  dg_q8_epilogue_free(&e);
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
bool dg_vk_use_dot(const vk_device *vd) {
  return vd->int_dot && (vd->int_dot_fast || vd->test_paths == 3);
}

/* Direct as well where the whole conv is under a million multiply-adds
 * (LeNet's, a batch-1 detector's last layers): there a tiled kernel's
 * few workgroups, split over K with a second pass, cost three dispatches
 * and a barrier where one direct dispatch does the work. */
bool dg_vk_direct_conv(const vk_device *vd, int64_t OG, int64_t P,
                       int64_t macs) {
  if (vd->test_paths >= 2)
    return false;
  return cpu_like(vd) || OG < 8 || P < 16 || macs <= (1 << 20);
}

/* The GEMV kernel (gemm_direct.comp -DGEMV, a workgroup per output) for
 * matrix-vector shapes on GPUs: a few rows (batch-1 fully_connected), K
 * deep enough to share among 64 invocations, and outputs few enough that
 * one workgroup each does not outnumber one invocation each by much
 * (1000 classes: 1000 workgroups). The "splitk" test paths take it for
 * every GEMM under 8 rows. */
bool dg_vk_use_gemv(const vk_device *vd, int64_t M, int64_t N, int64_t K,
                    int64_t z) {
  if (vd->test_paths == 4)
    return M < 8;
  return !cpu_like(vd) && !vd->test_paths && M <= 4 && K >= 256 &&
         M * N * z <= 65536;
}

/* The float convs' GEMV (conv_direct.comp -DGEMV, a workgroup of 64 per
 * output striding over the window's CG x KH x KW taps) for convs with a
 * few output pixels and deep windows: the squeeze-excite convs on a 1x1
 * plane, which with an invocation per output ran K = 1152 taps in one
 * invocation each (EfficientNet-B0's 1152 -> 48: 234 us on the H200, 1.7
 * of its 2.8 ms on Vulkan). Outputs bounded as the GEMV's. The "splitk"
 * test paths take it for every conv under 8 output pixels. */
bool dg_vk_use_conv_gemv(const vk_device *vd, int64_t NP, int64_t KG,
                         int64_t outputs) {
  if (vd->test_paths == 4)
    return NP < 8;
  return !cpu_like(vd) && !vd->test_paths && NP <= 4 && KG >= 256 &&
         outputs <= 65536;
}

bool dg_vk_direct_gemm(const vk_device *vd, int64_t M, int64_t N) {
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

/* Multiprocessors (or compute units) the device reports, else the H200's
 * 132. */
static int64_t sm_count(const vk_device *vd) {
  return vd->multiprocessors ? vd->multiprocessors : 132;
}

/* ... and where its 128x128 tiles are at least one per multiprocessor:
 * with fewer (batch-1 convs on 28x28 planes and below), the 64x64 tiles
 * split over K (dg_vk_splitk_tiled_work) keep more of the GPU busy. */
bool dg_vk_use_big_f32(const vk_device *vd, int64_t M, int64_t N, int64_t K,
                       int64_t z) {
  if (!big_fits(vd, M, N, z))
    return false;
  if (vd->test_paths >= 2)
    return vd->test_paths != 4;
  int64_t tiles = ((M + 127) / 128) * ((N + 127) / 128) * z;
  return !cpu_like(vd) && M >= 64 && N >= 64 && K >= 16 &&
         M * N * z >= 256 * 256 && tiles >= sm_count(vd);
}

bool dg_vk_use_coop_f16(const vk_device *vd, int64_t M, int64_t N, int64_t K,
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
void dg_vk_big_work(const vk_device *vd, vk_work *w, vk_shader sh,
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

/* 64x64 cooperative-matrix workgroups (128 invocations, 128 registers)
 * resident at once: four per multiprocessor, as on the H200, which has
 * 132; that count where the device does not say its own. */
static int64_t resident64(const vk_device *vd) {
  return 4 * (int64_t)(vd->multiprocessors ? vd->multiprocessors : 132);
}

/* Splits w's dispatch into ks slices of K (its z grid times ks) whose
 * partials go to scratch from byte base, sk being where the kernel reads
 * ksplit and pbase, and records post as the second pass over the z x M x
 * N outputs, finishing into the node's bias (binding 2), residual (5)
 * and y (3); the
 * caller points the partials' bindings. false, nothing changed, where ks <
 * 2 or the partials or the grid do not fit. */
static bool splitk_apply(const vk_device *vd, vk_work *w, vk_pc_splitk *sk,
                         int64_t ks, VkDeviceSize base, vk_shader post,
                         int64_t M, int64_t N, int64_t z) {
  VkDeviceSize bytes = base + (VkDeviceSize)(ks * z * M * N) * 4;
  if (ks < 2 || bytes > dg_vk_scratch_limit(vd) ||
      base / 4 + ks * z * M * N > INT32_MAX ||
      w->groups[2] * ks > vd->props.limits.maxComputeWorkGroupCount[2])
    return false;
  sk->ksplit = (int)ks;
  sk->pbase = (int)(base / 4);
  w->groups[2] *= (uint32_t)ks;
  w->scratch_bytes = bytes;
  w->post.on = true;
  w->post.shader = post;
  w->post.bind[2] = w->bind[2];
  w->post.bind[3] = w->bind[3];
  w->post.bind[5] = w->bind[5]; /* a conv's residual */
  dg_vk_grid_1d(w->post.groups, z * M * N, 256);
  return true;
}

/* Split-K for the KHR cooperative-matrix kernels (after dg_vk_big_work): where
 * the output has too few tiles to fill the GPU (fewer than half of
 * resident64, 264 on the H200) and K is deep, workgroups sum ksplit
 * slices of K into fp32 partials in scratch, and splitk.comp adds them up
 * and finishes the outputs. Up to 4 slices of at least 512 each, as many
 * as keep the workgroups within one wave (resident64), within
 * dg_vk_scratch_limit. Not after the blocked copies unless forced: there it
 * lost (H200 figures: docs/performance.md, "Tile and path choices"). M x N
 * outputs in z matrices, K deep; conv: the conv's push layout (else the
 * GEMM's). */
void dg_vk_splitk_work(const vk_device *vd, vk_work *w, bool conv, int64_t M,
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
  vk_pc_splitk *sk = conv ? &w->push.conv.coop.splitk : &w->push.gemm.splitk;
  if (splitk_apply(vd, w, sk, ks, base, conv ? SH_SPLITKC_F16 : SH_SPLITK_F16,
                   M, N, z))
    w->bind[4] = w->post.bind[4] = VK_BIND_SCRATCH;
}

/* Split-K for the 64x64 tiled f32 kernels (gemm.comp, after its grid is
 * set), by target.h's rule (dg_target_splitk_slices: MobileNetV2's 1x1
 * 192->32 convs at 28x28 have 13 tiles, hence slices as shallow as 64):
 * ksplit workgroups per tile sum BK-aligned slices of K into partials in
 * scratch and splitk_tiled.comp adds them up in order and finishes the
 * outputs. int8 (q8) sums exact int32 partials, so it stays bit-exact;
 * DG_VK_SPLITK=N forces N, the "splitk" test paths 3. M x N outputs in z
 * matrices; conv: the conv's push layout. */
void dg_vk_splitk_tiled_work(const vk_device *vd, vk_work *w, bool conv,
                             bool q8, int64_t M, int64_t N, int64_t K,
                             int64_t z) {
  int64_t tiles = (int64_t)w->groups[0] * w->groups[1] * w->groups[2];
  int64_t ks = vd->splitk > 0 ? vd->splitk : vd->test_paths == 4 ? 3 : 1;
  if (vd->splitk < 0 && vd->test_paths != 4 && !cpu_like(vd))
    ks = dg_target_splitk_slices(tiles, sm_count(vd), K);
  vk_pc_splitk *sk =
      q8     ? conv ? &w->push.conv.q8k.splitk : &w->push.gemm.q8k.splitk
      : conv ? &w->push.conv.coop.splitk
             : &w->push.gemm.splitk;
  vk_shader post = q8     ? conv ? SH_SPLITKTC_Q8 : SH_SPLITKT_Q8
                   : conv ? SH_SPLITKTC_F32
                          : SH_SPLITKT_F32;
  if (!splitk_apply(vd, w, sk, ks, 0, post, M, N, z))
    return;
  if (q8) {
    /* int32 partials in y's place; the second pass reads them as its
     * binding 0, the per-channel parameters staying at 4 for both. */
    w->bind[3] = VK_BIND_SCRATCH;
    w->post.bind[0] = VK_BIND_SCRATCH;
    w->post.bind[4] = VK_BIND_PARAMS; /* dg_vk_q_params, after this */
  } else {
    w->bind[4] = w->post.bind[4] = VK_BIND_SCRATCH;
  }
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

/* An f16 conv on KHR cooperative matrices (after dg_vk_big_work) as im2col.comp
 * writing B = [G][N][K rounded up to 8] into scratch, then the GEMM
 * reading it (convik*); only where DG_VK_CONV_GATHER=im2col asks: on the
 * H200 it beat the implicit gather only at OG >= 512 and lost to the
 * blocked copies everywhere (docs/performance.md, "Tile and path
 * choices"). M x N outputs per group, K per output. */
bool dg_vk_im2col_work(const vk_device *vd, vk_work *w, int64_t M, int64_t N,
                       int64_t K, int64_t G) {
  int64_t kb = (K + 7) / 8, rows = N * kb;
  VkDeviceSize bytes = (VkDeviceSize)(G * rows) * 16;
  if (vd->conv_gather != 1 || bytes > dg_vk_scratch_limit(vd) ||
      rows > INT32_MAX / 8)
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

/* An f16 conv on KHR cooperative matrices (after dg_vk_big_work) as cblock.comp
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
int dg_vk_cblock_work(const vk_device *vd, vk_work *w, int64_t N, int64_t H,
                      int64_t W, int64_t G, int64_t CG, int64_t OG, int64_t khw,
                      int64_t NP, const uint16_t *wconst) {
  int64_t CP = (CG + 7) / 8 * 8, xh = G * N * H * W * CP,
          wh = G * OG * khw * CP;
  bool wblk = !wconst || (VkDeviceSize)wh * 2 > dg_vk_scratch_limit(vd);
  int64_t halves = xh + (wblk ? wh : 0);
  VkDeviceSize bytes = (VkDeviceSize)halves * 2;
  if ((vd->conv_gather != -1 && vd->conv_gather != 2) ||
      bytes > dg_vk_scratch_limit(vd) || xh + wh > INT32_MAX)
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
  dg_vk_splitk_work(vd, w, true, OG, NP, khw * CP, G);
  return 1;
}
