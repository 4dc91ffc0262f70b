#version 450
// fp16 GEMM on tensor cores through GL_NV_cooperative_matrix (f16 x f16 ->
// f32 at 16x16x16, subgroup scope, subgroups of 32): C = act(A B + bias)
// with fp32 accumulation and one rounding to f16 at the store.
// One BM x BN output tile per workgroup of WGM x WGN subgroups, each
// subgroup FM x FN fragments of 16x16; K consumed BK at a time, A and B
// tiles staged through shared memory (NBUF buffers, below; uvec4 = 8 halves,
// so aligned operands load with one 16-byte load per 8 elements; others
// gather element by element with bounds checks).
//   default: A[m][k] = in0[abase + m*sam + k*sak],
//            B[k][n] = in1[bbase + k*sbk + n*sbn] (matmul, fully_connected);
//   -DCONV:  A = the weights W[OG][CG*KH*KW] of group z, B the implicit
//            im2col of x with the batch folded into n = (image, oh, ow);
//   -DCONV -DIM2COL: the same with B read from the explicit im2col that
//            im2col.comp wrote to binding 0 earlier in the node;
//   -DCONV -DCBLK: A and B from the channel-blocked copies of the weights
//            (binding 1) and input (binding 0) that cblock.comp wrote
//            earlier in the node (or vk_ops.c, once, for constant
//            weights), with k = (kh, kw, c) and the channels padded to 8,
//            so B gathers one aligned uvec4 of 8 channels per pixel.
// Bindings as gemm.comp: 0 = x / a, 1 = w / b, 2 = bias, 3 = y; 4 = the
// split-K partials where push constant ksplit > 1 (coop_out.glsl).
// Specialisation constant 0 (FLAGS): bit 0 A loads as uvec4, bit 1 B
// does, bit 2 B is k-contiguous; as constants, the paths a shape does not
// take are compiled out (a runtime flag kept every path and a branch
// around each fragment load in the inner loop).
// Built twice: as written (NV cooperative matrices, 16x16 fragments) for
// drivers with only VK_NV_cooperative_matrix, and for spirv_nv2khr.py to
// turn into KHR cooperative matrices, which vk_ops.c prefers (see
// variants.def; the 128x256 GEMM, gemmk_f16, with 16x16 B fragments, the
// others with 16x8).
// Tiles, prefetch depth, fragment shapes, epilogues and gathers were
// chosen by measurement on the H200: the tables are in
// docs/performance.md, "Vulkan f16 cooperative-matrix kernels".
// Selected by vk_ops.c only where the device reports the extension and
// the shape; glslang emits the Vulkan memory model for it (enabled with
// the extension in vk_device.c). The tile macros are build-time choices
// (variants.def), which also gives vk_ops.c each build's tile to size
// grids by; common.glsl checks that it is BM x BN.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#ifdef KHR_GLSL
#extension GL_KHR_cooperative_matrix : require
#else
#extension GL_NV_cooperative_matrix : require
#endif
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#define F16

// 4 x 2 subgroups of 32x64 outputs (the fastest of the 128x128 layouts
// in an earlier NV-only sweep; through KHR with BK 64, 2x4 of 64x32 ran
// the same, and 2x2 of 64x64 needed 255 registers and was slower).
#ifndef WGM
#define WGM 4
#endif
#ifndef WGN
#define WGN 2
#endif
#ifndef FM
#define FM 2
#endif
#ifndef FN
#define FN 4
#endif
#ifndef BK
#define BK 32
#endif
#define NT (32 * WGM * WGN)
#define BM (WGM * FM * 16)
#define BN (WGN * FN * 16)

layout(local_size_x = NT) in;
#include "common.glsl"

layout(constant_id = 0) const int FLAGS = 0;
const bool AVEC = (FLAGS & 1) != 0;
const bool BVEC = (FLAGS & 2) != 0;
#if defined(IM2COL) || defined(CBLK)
const bool BKC = true; // the im2col rows, the blocked pixels: k-contiguous
#else
const bool BKC = (FLAGS & 4) != 0;
#endif

// Shared row strides in uvec4 (8 halves), one uvec4 of padding per row
// against bank conflicts: k-contiguous rows (A; B when BKC) hold BK
// halves, n-contiguous rows (B otherwise) BN halves.
#define SK (BK / 8 + 1)
#define SN (BN / 8 + 1)
#define ABUF (BM * SK)
#define BBUF_K (BN * SK)
#define BBUF_N (BK * SN)
#define BBUF (BBUF_K > BBUF_N ? BBUF_K : BBUF_N)
#define BUF (ABUF + BBUF)
// uvec4 chunks of one A tile / one B tile, and per invocation.
#define ACH (BM * BK / 8)
#define BCH (BN * BK / 8)
#define APT (ACH / NT)
#define BPT (BCH / NT)

layout(set = 0, binding = 0) readonly buffer In0 { float16_t in0[]; };
layout(set = 0, binding = 1) readonly buffer In1 { float16_t in1[]; };
layout(set = 0, binding = 0) readonly buffer In0v { uvec4 in0v[]; };
layout(set = 0, binding = 1) readonly buffer In1v { uvec4 in1v[]; };
#include "coop_out.glsl"

// NBUF: shared buffers of the A and B tiles. 2: the next K-step's tile is
// stored while this one is read (one barrier per step); 1: it waits in
// registers for a second barrier, which halves the shared memory and so
// allows BK = 64 or wider tiles within the 48 KiB a workgroup may have;
// 0: no prefetch, each step loads, stores and waits before its MMAs. 0
// holds no tile in registers across the MMAs, so small tiles stay at 128
// registers and four workgroups share a multiprocessor, whose latency
// hiding beat the prefetch for every conv measured (docs/performance.md).
#ifndef NBUF
#define NBUF 2
#endif
// The epilogue stages its fragments in the same memory: per subgroup, a
// conv's one 16xNW fragment (64 uvec4), a GEMM's 16 rows of FN*16 floats
// (ERW uvec4 apart: the pad chunk puts the rows read together in one
// access on different banks).
#define TILE_WORDS ((NBUF > 0 ? NBUF : 1) * BUF)
#ifdef CONV
#define STAGE_WORDS (NT / 32 * 64)
#else
#define ERW (FN * 4 + 1)
#if 32 % (FN * 2) != 0
#error "the GEMM epilogue takes FN*2 lanes per staged row: FN of 1, 2, 4, 8 or 16"
#endif
#define STAGE_WORDS (NT / 32 * 16 * ERW)
#endif
shared uvec4 smem[TILE_WORDS > STAGE_WORDS ? TILE_WORDS : STAGE_WORDS];


// NW: the width of the B and accumulator fragments, 16 (m16n16k16) or 8
// (m16n8k16). At 16, A and B share one NV type, which spirv_nv2khr.py
// splits by data flow into the KHR A and B types.
#ifndef NW
#define NW 16
#endif
#define NF (FN * 16 / NW)
// KHR_GLSL: the same kernel written against GL_KHR_cooperative_matrix
// directly, for glslang 13 and later (not Debian 12's); the build uses the
// NV form and spirv_nv2khr.py.
#ifdef KHR_GLSL
#define FA coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define FB coopmat<float16_t, gl_ScopeSubgroup, 16, NW, gl_MatrixUseB>
#define FC coopmat<float, gl_ScopeSubgroup, 16, NW, gl_MatrixUseAccumulator>
#define CM_LOAD(m, buf, off, stride, colmajor)                               \
  coopMatLoad(m, buf, off, stride,                                           \
              (colmajor) ? gl_CooperativeMatrixLayoutColumnMajor             \
                         : gl_CooperativeMatrixLayoutRowMajor)
#define CM_STORE(m, buf, off, stride)                                        \
  coopMatStore(m, buf, off, stride, gl_CooperativeMatrixLayoutRowMajor)
#define CM_MAD(a, b, c) coopMatMulAdd(a, b, c)
#else
#define FA fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define FB fcoopmatNV<16, gl_ScopeSubgroup, 16, NW>
#define FC fcoopmatNV<32, gl_ScopeSubgroup, 16, NW>
#define CM_LOAD(m, buf, off, stride, colmajor)                               \
  coopMatLoadNV(m, buf, off, stride, colmajor)
#define CM_STORE(m, buf, off, stride) coopMatStoreNV(m, buf, off, stride, false)
#define CM_MAD(a, b, c) coopMatMulAddNV(a, b, c)
#endif

// Output (m, n) of matrix z one at a time, at a tile's ragged edge:
// store_out's finished value, or with ks > 1 the raw partial sum of K
// slice `slice` for splitk.comp.
void store_edge(int z, int m, int n, float v, int M, int NN, int slice,
                int ks) {
  if (ks > 1)
    part[pc.pbase + ((slice * (int(gl_NumWorkGroups.z) / ks) + z) * M + m) *
                        NN +
         n] = v;
  else
    store_out(z, m, n, v);
}

void main() {
  int tid = int(gl_LocalInvocationIndex);
  int warp = tid >> 5, lane = tid & 31;
  int wm = warp / WGN, wn = warp % WGN;
  int m0 = int(gl_WorkGroupID.y) * BM, n0 = int(gl_WorkGroupID.x) * BN;
  // Split-K: workgroup z sums slice z % ks of matrix z / ks's K, from kb0
  // to ke (whole K-steps but for the last), and leaves fp32 partials for
  // splitk.comp.
  int ks = max(pc.ksplit, 1), slice = int(gl_WorkGroupID.z) % ks;
  int z = int(gl_WorkGroupID.z) / ks;
#define K_RANGE                                                              \
  int kc = ((K + ks - 1) / ks + BK - 1) / BK * BK;                           \
  int kb0 = min(K, slice * kc), ke = min(K, kb0 + kc);
#ifdef CONV
  int g = z;
  int OHW = pc.OH * pc.OW;
  int khw = pc.KH * pc.KW;
#ifdef CBLK
  // Channels padded to CP, a multiple of 8: xb = [G][N][H][W][CP] at
  // binding 0, wb = [G][OG][KH*KW*CP] at binding 1, after xb in the same
  // scratch when the pre-pass blocked them too (cblock.comp).
  int CP = (pc.CG + 7) / 8 * 8;
  int M = pc.OG, NN = pc.N * OHW, K = khw * CP;
  K_RANGE
  int abase = (pc.wblk != 0 ? pc.G * pc.N * pc.H * pc.W * CP : 0) +
              g * pc.OG * K,
      sam = K;
#else
  int M = pc.OG, NN = pc.N * OHW, K = pc.CG * khw;
  K_RANGE
  int abase = g * pc.OG * K, sam = K;
#endif
#ifdef IM2COL
  // B was written by im2col.comp: [G][NN][KP] halves, k-contiguous rows
  // padded with zeros to KP (a multiple of 8), read as k-contiguous B.
  int KP = (K + 7) / 8 * 8, bbase = g * NN * KP;
#elif defined(CBLK)
  // This invocation loads k-group kq (8 channels) of BPT columns per
  // K-step: chunk v = tid + r*NT is column v / (BK/8), group v % (BK/8),
  // as the im2col path stores it. Per column: the input origin and the
  // offset of xb[g][img][ih0][iw0][0] (a column past the end gets an
  // origin that fails every bounds check). The group's (kh, kw, c) are
  // divided out once and then stepped by BK with carries; koff is its
  // offset from a column's origin.
  int kq = tid % (BK / 8);
  int cih[BPT], ciw[BPT], cpix[BPT];
  [[unroll]] for (int r = 0; r < BPT; r++) {
    int n = n0 + (tid + r * NT) / (BK / 8);
    int img = n / OHW, p = n - img * OHW;
    int oh = p / pc.OW, ow = p - oh * pc.OW;
    int ih = oh * pc.sh - pc.pt;
    ciw[r] = ow * pc.sw - pc.pl;
    cpix[r] = (((g * pc.N + img) * pc.H + ih) * pc.W + ciw[r]) * CP;
    cih[r] = n < NN ? ih : -0x40000000;
  }
  int bk = kb0 + kq * 8, bpos = bk / CP, bc = bk - bpos * CP;
  int bkh = bpos / pc.KW, bkw = bpos - bkh * pc.KW;
  int koff = (bkh * pc.dh * pc.W + bkw * pc.dw) * CP + bc;
  int sdc = BK % CP, spos = BK / CP, skh = spos / pc.KW;
  int skw = spos - skh * pc.KW;
#else
  // This invocation gathers 8 consecutive n (columns nb..nb+7) of B rows
  // kr + i * KSTEP of each K-step. Per column: the input origin (ih0,
  // iw0) and pix, the offset of x[img][g*CG][ih0][iw0]; a column past the
  // end gets an origin so far out that every bounds check fails.
#define KSTEP (NT / (BN / 8))
  int nb = (tid % (BN / 8)) * 8, kr = tid / (BN / 8);
  int HW = pc.H * pc.W;
  int pix[8], ih0[8], iw0[8];
  [[unroll]] for (int j = 0; j < 8; j++) {
    int n = n0 + nb + j;
    int img = n / OHW, p = n - img * OHW;
    int oh = p / pc.OW, ow = p - oh * pc.OW;
    int ih = oh * pc.sh - pc.pt;
    iw0[j] = ow * pc.sw - pc.pl;
    pix[j] = (img * pc.C + g * pc.CG) * HW + ih * pc.W + iw0[j];
    ih0[j] = n < NN ? ih : -0x40000000;
  }
  // Per B row: k, its (kh, kw) and koff = c*H*W + kh*dh*W + kw*dw, so an
  // element is x[pix + koff]. Divided out once here, then stepped by BK
  // with carries (integer division costs tens of instructions, and the
  // gather competes with the MMAs for issue slots).
  int rk[BPT], rkh[BPT], rkw[BPT], roff[BPT];
  [[unroll]] for (int r = 0; r < BPT; r++) {
    int k = kb0 + kr + KSTEP * r;
    int c = k / khw, rr = k - c * khw;
    rk[r] = k;
    rkh[r] = rr / pc.KW;
    rkw[r] = rr - rkh[r] * pc.KW;
    roff[r] = c * HW + rkh[r] * pc.dh * pc.W + rkw[r] * pc.dw;
  }
  int sc = BK / khw, skh = (BK - sc * khw) / pc.KW;
  int skw = BK - sc * khw - skh * pc.KW;
#endif
#else
  int M = pc.M, NN = pc.N, K = pc.K;
  K_RANGE
  int abase = 0, bbase = 0, rem = z;
  for (int d = pc.brank - 1; d >= 0; d--) {
    int i = rem % pc.bdim[d];
    rem /= pc.bdim[d];
    abase += i * pc.astr[d];
    bbase += i * pc.bstr[d];
  }
  int sam = pc.sam;
#endif

  uvec4 ra[APT], rb[BPT];

  // Global -> registers for the K-step at k0. A chunk v covers row v /
  // (BK/8), halves (v % (BK/8)) * 8 .. +7.
#define LOAD_A(k0)                                                           \
  [[unroll]] for (int r = 0; r < APT; r++) {                                 \
    int v = tid + r * NT;                                                    \
    int m = m0 + v / (BK / 8), k = (k0) + (v % (BK / 8)) * 8;                \
    uvec4 q = uvec4(0);                                                      \
    if (m < M && k < ke) {                                                   \
      if (AVEC) {                                                            \
        q = A_V[(abase + m * sam + k) >> 3];                                 \
      } else {                                                               \
        float16_t e[8];                                                      \
        [[unroll]] for (int j = 0; j < 8; j++)                               \
          e[j] = k + j < ke ? A_S[abase + m * sam + (k + j) * A_SK]          \
                            : float16_t(0);                                  \
        q = pk8(e);                                                          \
      }                                                                      \
    }                                                                        \
    ra[r] = q;                                                               \
  }

#ifdef CONV
#define A_V in1v
#define A_S in1
#define A_SK 1
#if defined(IM2COL) || defined(CBLK)
#ifdef IM2COL
  // B chunk v: column v / (BK/8), halves (v % (BK/8)) * 8, one aligned
  // uvec4 (the padding is zeros, so only n and the tile's K need checks).
#define LOAD_B(k0)                                                           \
  [[unroll]] for (int r = 0; r < BPT; r++) {                                 \
    int v = tid + r * NT;                                                    \
    int n = n0 + v / (BK / 8), k = (k0) + (v % (BK / 8)) * 8;                \
    rb[r] = n < NN && k < ke ? in0v[(bbase + n * KP + k) >> 3] : uvec4(0);   \
  }
#else
  // k0 is implicit, as for the implicit gather below.
#define LOAD_B(k0)                                                           \
  {                                                                          \
    int dhk = bkh * pc.dh, dwk = bkw * pc.dw;                                \
    [[unroll]] for (int r = 0; r < BPT; r++) {                               \
      bool ok = bk < ke && uint(cih[r] + dhk) < uint(pc.H) &&                \
                uint(ciw[r] + dwk) < uint(pc.W);                             \
      rb[r] = ok ? in0v[(cpix[r] + koff) >> 3] : uvec4(0);                   \
    }                                                                        \
    bk += BK;                                                                \
    bc += sdc;                                                               \
    koff += sdc;                                                             \
    if (bc >= CP) {                                                          \
      bc -= CP;                                                              \
      bkw++;                                                                 \
      koff += pc.dw * CP - CP;                                               \
    }                                                                        \
    bkw += skw;                                                              \
    koff += skw * pc.dw * CP;                                                \
    if (bkw >= pc.KW) {                                                      \
      bkw -= pc.KW;                                                          \
      bkh++;                                                                 \
      koff += (pc.dh * pc.W - pc.KW * pc.dw) * CP;                           \
    }                                                                        \
    bkh += skh;                                                              \
    koff += skh * pc.dh * pc.W * CP;                                         \
  }
#endif
#define STORE_B(b)                                                           \
  [[unroll]] for (int r = 0; r < BPT; r++) {                                 \
    int v = tid + r * NT;                                                    \
    smem[(b) * BUF + ABUF + (v / (BK / 8)) * SK + v % (BK / 8)] = rb[r];     \
  }
#else
  // k0 is implicit: LOAD_B is issued once per K-step in order, and each
  // issue steps the rows on by BK.
#define LOAD_B(k0)                                                           \
  [[unroll]] for (int r = 0; r < BPT; r++) {                                 \
    float16_t e[8];                                                          \
    int dhk = rkh[r] * pc.dh, dwk = rkw[r] * pc.dw;                          \
    bool kin = rk[r] < ke;                                                   \
    [[unroll]] for (int j = 0; j < 8; j++) {                                 \
      bool ok = kin && uint(ih0[j] + dhk) < uint(pc.H) &&                    \
                uint(iw0[j] + dwk) < uint(pc.W);                             \
      e[j] = ok ? in0[pix[j] + roff[r]] : float16_t(0);                      \
    }                                                                        \
    rb[r] = pk8(e);                                                          \
    rk[r] += BK;                                                             \
    rkw[r] += skw;                                                           \
    roff[r] += skw * pc.dw + sc * HW + skh * pc.dh * pc.W;                   \
    if (rkw[r] >= pc.KW) {                                                   \
      rkw[r] -= pc.KW;                                                       \
      rkh[r]++;                                                              \
      roff[r] += pc.dh * pc.W - pc.KW * pc.dw;                               \
    }                                                                        \
    rkh[r] += skh;                                                           \
    if (rkh[r] >= pc.KH) {                                                   \
      rkh[r] -= pc.KH;                                                       \
      roff[r] += HW - pc.KH * pc.dh * pc.W;                                  \
    }                                                                        \
  }
#define STORE_B(b)                                                           \
  [[unroll]] for (int r = 0; r < BPT; r++)                                   \
    smem[(b) * BUF + ABUF + (kr + KSTEP * r) * SN + (nb >> 3)] = rb[r];
#endif
#else
#define A_V in0v
#define A_S in0
#define A_SK pc.sak
  // B chunk v: k-contiguous, column v / (BK/8), halves (v % (BK/8)) * 8;
  // n-contiguous, row v / (BN/8), columns (v % (BN/8)) * 8.
#define LOAD_B(k0)                                                           \
  [[unroll]] for (int r = 0; r < BPT; r++) {                                 \
    int v = tid + r * NT;                                                    \
    uvec4 q = uvec4(0);                                                      \
    if (BKC) {                                                               \
      int n = n0 + v / (BK / 8), k = (k0) + (v % (BK / 8)) * 8;              \
      if (n < NN && k < ke) {                                                \
        if (BVEC) {                                                          \
          q = in1v[(bbase + n * pc.sbn + k) >> 3];                           \
        } else {                                                             \
          float16_t e[8];                                                    \
          [[unroll]] for (int j = 0; j < 8; j++)                             \
            e[j] = k + j < ke ? in1[bbase + n * pc.sbn + (k + j) * pc.sbk]   \
                              : float16_t(0);                                \
          q = pk8(e);                                                        \
        }                                                                    \
      }                                                                      \
    } else {                                                                 \
      int k = (k0) + v / (BN / 8), n = n0 + (v % (BN / 8)) * 8;              \
      if (n < NN && k < ke) {                                                \
        if (BVEC) {                                                          \
          q = in1v[(bbase + k * pc.sbk + n) >> 3];                           \
        } else {                                                             \
          float16_t e[8];                                                    \
          [[unroll]] for (int j = 0; j < 8; j++)                             \
            e[j] = n + j < NN ? in1[bbase + k * pc.sbk + (n + j) * pc.sbn]   \
                              : float16_t(0);                                \
          q = pk8(e);                                                        \
        }                                                                    \
      }                                                                      \
    }                                                                        \
    rb[r] = q;                                                               \
  }
#define STORE_B(b)                                                           \
  [[unroll]] for (int r = 0; r < BPT; r++) {                                 \
    int v = tid + r * NT;                                                    \
    smem[(b) * BUF + ABUF +                                                  \
         (BKC ? (v / (BK / 8)) * SK + v % (BK / 8)                           \
              : (v / (BN / 8)) * SN + v % (BN / 8))] = rb[r];                \
  }
#endif

#define STORE_A(b)                                                           \
  [[unroll]] for (int r = 0; r < APT; r++) {                                 \
    int v = tid + r * NT;                                                    \
    smem[(b) * BUF + (v / (BK / 8)) * SK + v % (BK / 8)] = ra[r];            \
  }

  FC acc[FM][NF];
  [[unroll]] for (int i = 0; i < FM; i++)
    [[unroll]] for (int j = 0; j < NF; j++)
      acc[i][j] = FC(0.0);

  int nk = (ke - kb0 + BK - 1) / BK;
#if NBUF > 0
  LOAD_A(kb0)
  LOAD_B(kb0)
  STORE_A(0)
  STORE_B(0)
  barrier();
#endif
  for (int t = 0; t < nk; t++) {
    int cur = NBUF == 2 ? t & 1 : 0;
#if NBUF == 0
    // (The barrier that ends the previous step already keeps these stores
    // behind its MMAs.)
    LOAD_A(kb0 + t * BK)
    LOAD_B(kb0 + t * BK)
    STORE_A(0)
    STORE_B(0)
    barrier();
#else
    if (t + 1 < nk) {
      LOAD_A(kb0 + (t + 1) * BK)
      LOAD_B(kb0 + (t + 1) * BK)
    }
#endif
    int ab = cur * BUF, bb = cur * BUF + ABUF;
    [[unroll]] for (int kk = 0; kk < BK / 16; kk++) {
      FA fa[FM];
      FB fb[NF];
      [[unroll]] for (int i = 0; i < FM; i++)
        CM_LOAD(fa[i], smem,
                      uint(ab + (wm * FM * 16 + i * 16) * SK + kk * 2),
                      uint(SK), false);
      [[unroll]] for (int j = 0; j < NF; j++) {
        if (BKC)
          CM_LOAD(fb[j], smem,
                        uint(bb + (wn * FN * 16 + j * NW) * SK + kk * 2),
                        uint(SK), true);
        else
          CM_LOAD(fb[j], smem,
                        uint(bb + (kk * 16) * SN + wn * FN * 2 + j * (NW / 8)),
                        uint(SN), false);
      }
      [[unroll]] for (int i = 0; i < FM; i++)
        [[unroll]] for (int j = 0; j < NF; j++)
          acc[i][j] = CM_MAD(fa[i], fb[j], acc[i][j]);
    }
#if NBUF > 0
    if (NBUF == 1)
      barrier();
    if (t + 1 < nk) {
      STORE_A(NBUF == 2 ? cur ^ 1 : 0)
      STORE_B(NBUF == 2 ? cur ^ 1 : 0)
    }
#endif
    barrier();
  }

#ifdef CONV
  // Epilogue: each subgroup stages one 16xNW fp32 fragment at a time in
  // its own 1 KiB of shared memory, then every lane finishes NW/2 outputs
  // of one row of it (store_out4: bias, activation, one rounding to f16;
  // or the raw partial sums of a K slice).
  int stage = warp * 64;
  int er = lane >> 1, ec = (lane & 1) * (NW / 2);
  [[unroll]] for (int i = 0; i < FM; i++)
    [[unroll]] for (int j = 0; j < NF; j++) {
      CM_STORE(acc[i][j], smem, uint(stage), uint(NW / 4));
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      int m = m0 + wm * FM * 16 + i * 16 + er;
      int nbase = n0 + wn * FN * 16 + j * NW + ec;
      [[unroll]] for (int q = 0; q < NW / 8; q++) {
        vec4 v = uintBitsToFloat(smem[stage + er * (NW / 4) + (ec >> 2) + q]);
        int n4 = nbase + 4 * q;
        if (m < M && ks <= 1 && n4 + 3 < NN)
          store_out4(z, m, n4, v);
        else if (m < M) // rolled: store_out inlines the fused function
          [[dont_unroll]] for (int e = 0; e < 4; e++)
            if (n4 + e < NN)
              store_edge(z, m, n4 + e, v[e], M, NN, slice, ks);
      }
      subgroupBarrier();
    }
#else
  // Epilogue: each subgroup stages its NF fragments of one 16-row band
  // side by side, then each lane finishes 8 outputs of a row per pass
  // (store_out8: one 16-byte store). Against the conv's one fragment at a
  // time with 8-byte stores: 534 -> 516 us at 4096^3 on the H200 (16-byte
  // stores alone 519; rows not padded 523).
  int stage = warp * 16 * ERW;
  const int LPR = FN * 2, RPP = 32 / LPR; // lanes per row, rows per pass
  [[unroll]] for (int i = 0; i < FM; i++) {
    [[unroll]] for (int j = 0; j < NF; j++)
      CM_STORE(acc[i][j], smem, uint(stage + j * (NW / 4)), uint(ERW));
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    [[unroll]] for (int p = 0; p < 16 / RPP; p++) {
      int er = p * RPP + lane / LPR, ec = (lane % LPR) * 8;
      int m = m0 + wm * FM * 16 + i * 16 + er;
      int n = n0 + wn * FN * 16 + ec;
      vec4 a = uintBitsToFloat(smem[stage + er * ERW + (ec >> 2)]);
      vec4 b = uintBitsToFloat(smem[stage + er * ERW + (ec >> 2) + 1]);
      if (m < M && ks <= 1 && n + 7 < NN)
        store_out8(z, m, n, a, b);
      else if (m < M)
        [[unroll]] for (int e = 0; e < 8; e++)
          if (n + e < NN)
            store_edge(z, m, n + e, e < 4 ? a[e] : b[e - 4], M, NN, slice,
                       ks);
    }
    subgroupBarrier();
  }
#endif
}
