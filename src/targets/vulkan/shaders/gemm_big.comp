#version 450
// fp32 SIMT GEMM for discrete GPUs: one 128x128 output tile per workgroup
// of 256 invocations, 8x8 outputs per invocation in registers (two 4x4
// quadrants per side, 64 apart, so shared reads are vec4 and conflict
// free), K-step 8, A and B tiles double-buffered in shared memory (one
// barrier per step), vec4 global loads where the operand is aligned.
//   default: A[m][k] = in0[abase + m*sam + k*sak],
//            B[k][n] = in1[bbase + k*sbk + n*sbn] (matmul, fully_connected);
//   -DCONV:  A = the weights W[OG][CG*KH*KW] of group z, B the implicit
//            im2col of x with the batch folded into n = (image, oh, ow).
// Bindings as gemm.comp: 0 = x / a, 1 = w / b, 2 = bias, 3 = y.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 256) in;
// The tile, before common.glsl, which checks it against variants.def.
#define BM 128
#define BN 128
#define BK 8
#include "common.glsl"

layout(set = 0, binding = 0) readonly buffer In0 { float in0[]; };
layout(set = 0, binding = 1) readonly buffer In1 { float in1[]; };
layout(set = 0, binding = 0) readonly buffer In0v { vec4 in0v[]; };
layout(set = 0, binding = 1) readonly buffer In1v { vec4 in1v[]; };
layout(set = 0, binding = 2) readonly buffer Bias { float bias[]; };
// y is read back by the convs' fused function (below)
layout(set = 0, binding = 3) buffer Out { float y[]; };
layout(set = 0, binding = 5) readonly buffer Res { float res[]; }; // -DCONV

#include "push_constants.h"
#ifdef CONV
layout(push_constant) uniform PC {
  VK_PC_CONV
} pc;
#else
layout(push_constant) uniform PC {
  VK_PC_GEMM
} pc;
#endif
#ifdef CONV
#include "conv_post.glsl"
#endif

// Specialisation constant 0: bit 0 A loads as vec4, bit 1 B does, bit 2
// B is k-contiguous (constants, so the paths not taken compile out).
layout(constant_id = 0) const int FLAGS = 0;

// [buffer][k][m or n], as vec4 of 4 consecutive m / n; rows padded by one
// vec4 so the transposing scalar stores of a K-step do not all hit the same
// banks.
shared vec4 As[2][BK][BM / 4 + 1];
shared vec4 Bs[2][BK][BN / 4 + 1];

void main() {
  int tid = int(gl_LocalInvocationIndex);
  // Each subgroup of 32 owns an 8 x 4 block of the 16 x 16 invocation grid
  // (tx along n, ty along m), so a K-step's shared reads touch 8 + 4
  // distinct vec4s per subgroup instead of 16 + 2. With the padding: 3.50
  // -> 3.31 ms for 4096^3 on the H200.
  int tx = ((tid >> 5) & 1) * 8 + (tid & 7);
  int ty = (tid >> 6) * 4 + ((tid >> 3) & 3);
  int m0 = int(gl_WorkGroupID.y) * BM, n0 = int(gl_WorkGroupID.x) * BN;
  int z = int(gl_WorkGroupID.z);
#ifdef CONV
  int g = z;
  int OHW = pc.OH * pc.OW;
  int M = pc.OG, NN = pc.N * OHW, K = pc.CG * pc.KH * pc.KW;
  int khw = pc.KH * pc.KW;
  int abase = g * pc.OG * K, sam = K, sak = 1;
  bool avec = (FLAGS & 1) != 0;
  // B gather: this invocation owns column bn of the tile, rows bk0 + 2i.
  int bn = tid & 127, bk0 = tid >> 7;
  int xb, ih0, iw0;
  {
    int n = n0 + bn;
    int img = n / OHW, p = n - img * OHW;
    int oh = p / pc.OW, ow = p - oh * pc.OW;
    xb = n < NN ? (img * pc.C + g * pc.CG) * pc.H * pc.W : -1;
    ih0 = oh * pc.sh - pc.pt;
    iw0 = ow * pc.sw - pc.pl;
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
  int sam = pc.sam, sak = pc.sak;
  bool avec = (FLAGS & 1) != 0;
  bool bvec = (FLAGS & 2) != 0, bkf = (FLAGS & 4) != 0;
#endif

  // A: invocation t loads row t/2, k (t%2)*4 .. +3 (k-contiguous A).
  int am = tid >> 1, ak = (tid & 1) * 4;
  vec4 ra, rb;

#define LOAD_A(k0)                                                           \
  {                                                                          \
    int m = m0 + am, k = (k0) + ak;                                          \
    ra = vec4(0);                                                            \
    if (m < M && k < K) {                                                    \
      if (avec) {                                                            \
        ra = A_V[(abase + m * sam + k) >> 2];                                \
      } else {                                                               \
        [[unroll]] for (int j = 0; j < 4; j++)                                          \
          if (k + j < K)                                                     \
            ra[j] = A_S[abase + m * sam + (k + j) * sak];                    \
      }                                                                      \
    }                                                                        \
  }
#define STORE_A(b)                                                           \
  {                                                                          \
    [[unroll]] for (int j = 0; j < 4; j++)                                              \
      As[b][ak + j][am >> 2][am & 3] = ra[j];                                \
  }

#ifdef CONV
#define A_V in1v
#define A_S in1
#define LOAD_B(k0)                                                           \
  {                                                                          \
    rb = vec4(0);                                                            \
    [[unroll]] for (int i = 0; i < 4; i++) {                                            \
      int k = (k0) + bk0 + 2 * i;                                            \
      if (k < K && xb >= 0) {                                                \
        int c = k / khw, rr = k - c * khw;                                   \
        int kh = rr / pc.KW, kw = rr - kh * pc.KW;                           \
        int ih = ih0 + kh * pc.dh, iw = iw0 + kw * pc.dw;                    \
        if (ih >= 0 && ih < pc.H && iw >= 0 && iw < pc.W)                    \
          rb[i] = in0[xb + (c * pc.H + ih) * pc.W + iw];                     \
      }                                                                      \
    }                                                                        \
  }
#define STORE_B(b)                                                           \
  {                                                                          \
    [[unroll]] for (int i = 0; i < 4; i++)                                              \
      Bs[b][bk0 + 2 * i][bn >> 2][bn & 3] = rb[i];                           \
  }
#else
#define A_V in0v
#define A_S in0
  // B n-contiguous: invocation t loads row t/32, n (t%32)*4 .. +3;
  // B k-contiguous: as A (column t/2, k (t%2)*4 .. +3).
#define LOAD_B(k0)                                                           \
  {                                                                          \
    rb = vec4(0);                                                            \
    if (bkf) {                                                               \
      int n = n0 + am, k = (k0) + ak;                                        \
      if (n < NN && k < K) {                                                 \
        if (bvec) {                                                          \
          rb = in1v[(bbase + n * pc.sbn + k) >> 2];                          \
        } else {                                                             \
          [[unroll]] for (int j = 0; j < 4; j++)                                        \
            if (k + j < K)                                                   \
              rb[j] = in1[bbase + n * pc.sbn + (k + j) * pc.sbk];            \
        }                                                                    \
      }                                                                      \
    } else {                                                                 \
      int k = (k0) + (tid >> 5), n = n0 + (tid & 31) * 4;                    \
      if (n < NN && k < K) {                                                 \
        if (bvec) {                                                          \
          rb = in1v[(bbase + k * pc.sbk + n) >> 2];                          \
        } else {                                                             \
          [[unroll]] for (int j = 0; j < 4; j++)                                        \
            if (n + j < NN)                                                  \
              rb[j] = in1[bbase + k * pc.sbk + (n + j) * pc.sbn];            \
        }                                                                    \
      }                                                                      \
    }                                                                        \
  }
#define STORE_B(b)                                                           \
  {                                                                          \
    if (bkf) {                                                               \
      [[unroll]] for (int j = 0; j < 4; j++)                                            \
        Bs[b][ak + j][am >> 2][am & 3] = rb[j];                              \
    } else {                                                                 \
      Bs[b][tid >> 5][tid & 31] = rb;                                        \
    }                                                                        \
  }
#endif

  float acc[8][8];
  [[unroll]] for (int i = 0; i < 8; i++)
    [[unroll]] for (int j = 0; j < 8; j++)
      acc[i][j] = 0.0;

  int nk = (K + BK - 1) / BK;
  LOAD_A(0)
  LOAD_B(0)
  STORE_A(0)
  STORE_B(0)
  barrier();
  for (int t = 0; t < nk; t++) {
    int cur = t & 1;
    if (t + 1 < nk) {
      LOAD_A((t + 1) * BK)
      LOAD_B((t + 1) * BK)
    }
    [[unroll]] for (int kk = 0; kk < BK; kk++) {
      vec4 a0 = As[cur][kk][ty], a1 = As[cur][kk][ty + 16];
      vec4 b0 = Bs[cur][kk][tx], b1 = Bs[cur][kk][tx + 16];
      float av[8] = float[8](a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w);
      float bv[8] = float[8](b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w);
      [[unroll]] for (int i = 0; i < 8; i++)
        [[unroll]] for (int j = 0; j < 8; j++)
          acc[i][j] = fma(av[i], bv[j], acc[i][j]);
    }
    if (t + 1 < nk) {
      STORE_A(cur ^ 1)
      STORE_B(cur ^ 1)
    }
    barrier();
  }

  [[unroll]] for (int i = 0; i < 8; i++) {
    int m = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
    [[unroll]] for (int j = 0; j < 8; j++) {
      int n = n0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
      if (m < M && n < NN) {
        float v = acc[i][j];
#ifdef CONV
        int ch = g * pc.OG + m;
        if (pc.has_bias != 0)
          v += bias[ch];
        int img = n / OHW, p = n - img * OHW;
        int yi = (img * pc.O + ch) * OHW + p;
        if (pc.has_res != 0)
          v += res[yi];
#else
        if (pc.bias_mode != 0)
          v += bias[pc.bias_mode == 1 ? m : n];
        int yi = z * M * NN + m * NN + n;
#endif
        v = v < pc.lo ? pc.lo : v;
        v = v > pc.hi ? pc.hi : v;
        y[yi] = v;
      }
    }
  }
#ifdef CONV
  // A fused unary function on the outputs just stored, in a loop kept
  // rolled: in the unrolled stores above its code came 64 times (the
  // module grew from 95 KB to 460 KB; this way, to 103 KB).
  if (pc.post_fn != 0)
    [[dont_unroll]] for (int ij = 0; ij < 64; ij++) {
      int i = ij >> 3, j = ij & 7;
      int m = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
      int n = n0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
      if (m < M && n < NN) {
        int img = n / OHW, p = n - img * OHW;
        int yi = (img * pc.O + g * pc.OG + m) * OHW + p;
        y[yi] = conv_post(y[yi]);
      }
    }
#endif
}
