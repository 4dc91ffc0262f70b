#version 450
// fp16 GEMM on tensor cores through GL_NV_cooperative_matrix (f16 x f16 ->
// f32 at 16x16x16, subgroup scope, subgroups of 32): C = act(A B + bias)
// with fp32 accumulation and one rounding to f16 at the store.
// One 128x128 output tile per workgroup of 256 invocations (8 subgroups
// as 2 x 4, 64x32 outputs = 4x2 fragments each), K-step 32, A and B tiles
// staged through double-buffered shared memory (uvec4 = 8 halves, so
// aligned operands load with one 16-byte load per 8 elements; others
// gather element by element with bounds checks).
//   default: A[m][k] = in0[abase + m*sam + k*sak],
//            B[k][n] = in1[bbase + k*sbk + n*sbn] (matmul, fully_connected);
//   -DCONV:  A = the weights W[OG][CG*KH*KW] of group z, B the implicit
//            im2col of x with the batch folded into n = (image, oh, ow).
// Bindings as gemm.comp: 0 = x / a, 1 = w / b, 2 = bias, 3 = y.
// Selected by vk_ops.c only where the device reports the extension and
// the shape; glslang emits the Vulkan memory model for it (enabled with
// the extension in vk_device.c).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#define F16
layout(local_size_x = 256) in;
#include "common.glsl"

#define BM 128
#define BN 128
#define BK 32
// Shared row strides in uvec4 (8 halves): 32 + 8 halves for k-contiguous
// rows, 128 + 8 halves for n-contiguous rows (padding against bank
// conflicts).
#define SK 5
#define SN 17
#define ABUF (BM * SK)  // 640
#define BBUF (BN * SK)  // 640 >= BK * SN = 544
#define BUF (ABUF + BBUF)

layout(set = 0, binding = 0) readonly buffer In0 { float16_t in0[]; };
layout(set = 0, binding = 1) readonly buffer In1 { float16_t in1[]; };
layout(set = 0, binding = 0) readonly buffer In0v { uvec4 in0v[]; };
layout(set = 0, binding = 1) readonly buffer In1v { uvec4 in1v[]; };
layout(set = 0, binding = 2) readonly buffer Bias { float16_t bias[]; };
layout(set = 0, binding = 3) writeonly buffer Out { float16_t y[]; };

#ifdef CONV
layout(push_constant) uniform PC {
  int N, C, H, W, O, OH, OW, KH, KW, G, CG, OG;
  int sh, sw, dh, dw, pt, pl;
  int has_bias;
  float lo, hi;
  int flags; // bit 0: A (weights) rows load as uvec4
} pc;
#else
layout(push_constant) uniform PC {
  int M, N, K;
  int sam, sak, sbk, sbn;
  int bias_mode;
  int brank;
  int bdim[4];
  int astr[4];
  int bstr[4];
  float lo, hi;
  int flags; // bit 0: A as uvec4; bit 1: B as uvec4; bit 2: B k-contiguous
} pc;
#endif

shared uvec4 smem[2 * BUF];

uint pk(float16_t a, float16_t b) { return packFloat2x16(f16vec2(a, b)); }

#define FA fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define FC fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>

void main() {
  int tid = int(gl_LocalInvocationIndex);
  int warp = tid >> 5, lane = tid & 31;
  int wm = warp >> 2, wn = warp & 3; // 2 x 4 subgroups
  int m0 = int(gl_WorkGroupID.y) * BM, n0 = int(gl_WorkGroupID.x) * BN;
  int z = int(gl_WorkGroupID.z);
#ifdef CONV
  int g = z;
  int OHW = pc.OH * pc.OW;
  int M = pc.OG, NN = pc.N * OHW, K = pc.CG * pc.KH * pc.KW;
  int khw = pc.KH * pc.KW;
  int abase = g * pc.OG * K, sam = K;
  bool avec = (pc.flags & 1) != 0;
  bool bvec = false, bk = false;
  // This invocation gathers 8 consecutive n (columns nb..nb+7) of B rows
  // kr and kr + 16 of each K-step: their image bases and input origins.
  int nb = (tid & 15) * 8, kr = tid >> 4;
  int xb[8], ih0[8], iw0[8];
  [[unroll]] for (int j = 0; j < 8; j++) {
    int n = n0 + nb + j;
    int img = n / OHW, p = n - img * OHW;
    int oh = p / pc.OW, ow = p - oh * pc.OW;
    xb[j] = n < NN ? (img * pc.C + g * pc.CG) * pc.H * pc.W : -1;
    ih0[j] = oh * pc.sh - pc.pt;
    iw0[j] = ow * pc.sw - pc.pl;
  }
#else
  int M = pc.M, NN = pc.N, K = pc.K;
  int abase = 0, bbase = 0, rem = z;
  for (int d = pc.brank - 1; d >= 0; d--) {
    int i = rem % pc.bdim[d];
    rem /= pc.bdim[d];
    abase += i * pc.astr[d];
    bbase += i * pc.bstr[d];
  }
  int sam = pc.sam;
  bool avec = (pc.flags & 1) != 0;
  bool bvec = (pc.flags & 2) != 0, bk = (pc.flags & 4) != 0;
#endif

  uvec4 ra[2], rb[2];

  // Global -> registers for the K-step at k0.
#define LOAD_TILE(k0)                                                        \
  {                                                                          \
    [[unroll]] for (int r = 0; r < 2; r++) {                                            \
      int v = tid + r * 256;                                                 \
      int mm = v >> 2, kv = (v & 3) * 8;                                     \
      int m = m0 + mm, k = (k0) + kv;                                        \
      uvec4 q = uvec4(0);                                                    \
      if (m < M && k < K) {                                                  \
        if (avec) {                                                          \
          q = A_V[(abase + m * sam + k) >> 3];                               \
        } else {                                                             \
          float16_t e[8];                                                    \
          [[unroll]] for (int j = 0; j < 8; j++)                                        \
            e[j] = k + j < K ? A_S[abase + m * sam + (k + j) * A_SK]         \
                             : float16_t(0);                                 \
          q = uvec4(pk(e[0], e[1]), pk(e[2], e[3]), pk(e[4], e[5]),          \
                    pk(e[6], e[7]));                                         \
        }                                                                    \
      }                                                                      \
      ra[r] = q;                                                             \
    }                                                                        \
    LOAD_B(k0)                                                               \
  }

#ifdef CONV
#define A_V in1v
#define A_S in1
#define A_SK 1
#define LOAD_B(k0)                                                           \
  [[unroll]] for (int r = 0; r < 2; r++) {                                              \
    int k = (k0) + kr + 16 * r;                                              \
    float16_t e[8];                                                          \
    [[unroll]] for (int j = 0; j < 8; j++)                                              \
      e[j] = float16_t(0);                                                   \
    if (k < K) {                                                             \
      int c = k / khw, rr = k - c * khw;                                     \
      int kh = rr / pc.KW, kw = rr - kh * pc.KW;                             \
      [[unroll]] for (int j = 0; j < 8; j++) {                                          \
        int ih = ih0[j] + kh * pc.dh, iw = iw0[j] + kw * pc.dw;              \
        if (xb[j] >= 0 && ih >= 0 && ih < pc.H && iw >= 0 && iw < pc.W)      \
          e[j] = in0[xb[j] + (c * pc.H + ih) * pc.W + iw];                   \
      }                                                                      \
    }                                                                        \
    rb[r] = uvec4(pk(e[0], e[1]), pk(e[2], e[3]), pk(e[4], e[5]),            \
                  pk(e[6], e[7]));                                           \
  }
#else
#define A_V in0v
#define A_S in0
#define A_SK pc.sak
#define LOAD_B(k0)                                                           \
  [[unroll]] for (int r = 0; r < 2; r++) {                                              \
    int v = tid + r * 256;                                                   \
    uvec4 q = uvec4(0);                                                      \
    if (bk) {                                                                \
      int nn = v >> 2, kv = (v & 3) * 8;                                     \
      int n = n0 + nn, k = (k0) + kv;                                        \
      if (n < NN && k < K) {                                                 \
        if (bvec) {                                                          \
          q = in1v[(bbase + n * pc.sbn + k) >> 3];                           \
        } else {                                                             \
          float16_t e[8];                                                    \
          [[unroll]] for (int j = 0; j < 8; j++)                                        \
            e[j] = k + j < K ? in1[bbase + n * pc.sbn + (k + j) * pc.sbk]    \
                             : float16_t(0);                                 \
          q = uvec4(pk(e[0], e[1]), pk(e[2], e[3]), pk(e[4], e[5]),          \
                    pk(e[6], e[7]));                                         \
        }                                                                    \
      }                                                                      \
    } else {                                                                 \
      int kk = v >> 4, nv = (v & 15) * 8;                                    \
      int n = n0 + nv, k = (k0) + kk;                                        \
      if (n < NN && k < K) {                                                 \
        if (bvec) {                                                          \
          q = in1v[(bbase + k * pc.sbk + n) >> 3];                           \
        } else {                                                             \
          float16_t e[8];                                                    \
          [[unroll]] for (int j = 0; j < 8; j++)                                        \
            e[j] = n + j < NN ? in1[bbase + k * pc.sbk + (n + j) * pc.sbn]   \
                              : float16_t(0);                                \
          q = uvec4(pk(e[0], e[1]), pk(e[2], e[3]), pk(e[4], e[5]),          \
                    pk(e[6], e[7]));                                         \
        }                                                                    \
      }                                                                      \
    }                                                                        \
    rb[r] = q;                                                               \
  }
#endif

  // Registers -> shared buffer b.
#ifdef CONV
#define STORE_B(b)                                                           \
  [[unroll]] for (int r = 0; r < 2; r++)                                                \
    smem[(b) * BUF + ABUF + (kr + 16 * r) * SN + (nb >> 3)] = rb[r];
#else
#define STORE_B(b)                                                           \
  [[unroll]] for (int r = 0; r < 2; r++) {                                              \
    int v = tid + r * 256;                                                   \
    smem[(b) * BUF + ABUF + (bk ? (v >> 2) * SK + (v & 3)                    \
                                : (v >> 4) * SN + (v & 15))] = rb[r];        \
  }
#endif
#define STORE_TILE(b)                                                        \
  {                                                                          \
    [[unroll]] for (int r = 0; r < 2; r++) {                                            \
      int v = tid + r * 256;                                                 \
      smem[(b) * BUF + (v >> 2) * SK + (v & 3)] = ra[r];                     \
    }                                                                        \
    STORE_B(b)                                                               \
  }

  FC acc[4][2];
  [[unroll]] for (int i = 0; i < 4; i++)
    [[unroll]] for (int j = 0; j < 2; j++)
      acc[i][j] = FC(0.0);

  int nk = (K + BK - 1) / BK;
  LOAD_TILE(0)
  STORE_TILE(0)
  barrier();
  for (int t = 0; t < nk; t++) {
    int cur = t & 1;
    if (t + 1 < nk)
      LOAD_TILE((t + 1) * BK)
    int ab = cur * BUF, bb = cur * BUF + ABUF;
    [[unroll]] for (int ks = 0; ks < 2; ks++) {
      FA fa[4], fb[2];
      [[unroll]] for (int i = 0; i < 4; i++)
        coopMatLoadNV(fa[i], smem, uint(ab + (wm * 64 + i * 16) * SK + ks * 2),
                      uint(SK), false);
      [[unroll]] for (int j = 0; j < 2; j++) {
        if (bk)
          coopMatLoadNV(fb[j], smem,
                        uint(bb + (wn * 32 + j * 16) * SK + ks * 2), uint(SK),
                        true);
        else
          coopMatLoadNV(fb[j], smem,
                        uint(bb + (ks * 16) * SN + wn * 4 + j * 2), uint(SN),
                        false);
      }
      [[unroll]] for (int i = 0; i < 4; i++)
        [[unroll]] for (int j = 0; j < 2; j++)
          acc[i][j] = coopMatMulAddNV(fa[i], fb[j], acc[i][j]);
    }
    if (t + 1 < nk)
      STORE_TILE(cur ^ 1)
    barrier();
  }

  // Epilogue: each subgroup stages one 16x16 fp32 fragment at a time in
  // its own 1 KiB of shared memory (64 uvec4), then every lane finishes 8
  // outputs of it (bias, activation, one rounding to f16).
  int stage = warp * 64;
  int er = lane >> 1, ec = (lane & 1) * 8;
  [[unroll]] for (int i = 0; i < 4; i++)
    [[unroll]] for (int j = 0; j < 2; j++) {
      coopMatStoreNV(acc[i][j], smem, uint(stage), 4u, false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      int m = m0 + wm * 64 + i * 16 + er;
      int nbase = n0 + wn * 32 + j * 16 + ec;
      uvec4 lo = smem[stage + er * 4 + (ec >> 2)];
      uvec4 hi = smem[stage + er * 4 + (ec >> 2) + 1];
      float vals[8] = float[8](uintBitsToFloat(lo.x), uintBitsToFloat(lo.y),
                               uintBitsToFloat(lo.z), uintBitsToFloat(lo.w),
                               uintBitsToFloat(hi.x), uintBitsToFloat(hi.y),
                               uintBitsToFloat(hi.z), uintBitsToFloat(hi.w));
      [[unroll]] for (int e = 0; e < 8; e++) {
        int n = nbase + e;
        if (m < M && n < NN) {
          float v = vals[e];
#ifdef CONV
          int ch = g * pc.OG + m;
          if (pc.has_bias != 0)
            v += float(bias[ch]);
          int img = n / OHW, p = n - img * OHW;
          int yi = (img * pc.O + ch) * OHW + p;
#else
          if (pc.bias_mode != 0)
            v += float(bias[pc.bias_mode == 1 ? m : n]);
          int yi = z * M * NN + m * NN + n;
#endif
          v = v < pc.lo ? pc.lo : v;
          v = v > pc.hi ? pc.hi : v;
          y[yi] = float16_t(v);
        }
      }
      subgroupBarrier();
    }
}
