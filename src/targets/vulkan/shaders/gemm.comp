#version 450
// Tiled GEMM through shared memory, one 64x64 output tile per workgroup of
// 16x16 invocations (4x4 outputs each), BK = 16. Variants:
//   default / -DF16: C = act(A B + bias) in fp32 arithmetic;
//   -DQ8: int8 with exact int32 accumulation and the numerics contract's
//         requantisation (docs/numerics.md);
//   -DCONV: B is the implicit im2col of x (no buffer), so a convolution
//         is the GEMM W[OG, CG*KH*KW] x col[CG*KH*KW, OH*OW] per (image,
//         group);
//   split-K (push constant ksplit > 1): workgroup z slice of ksplit sums
//         its slice of K, BK-aligned, into partials [ksplit][Z][M][N]
//         (fp32 from float pbase of binding 4; int8 builds: exact int32,
//         zero-point terms included, at binding 3 in place of y), and
//         splitk_tiled.comp adds the slices up in order and finishes
//         (bias, activation or requantisation); for outputs with too few
//         tiles to fill a GPU (batch-1 convs on small planes);
//   -DQ8 -DDOT: the int8 products as packed 4 x 8-bit dot products
//         (SPV_KHR_integer_dot_product), for devices that accelerate them.
//         Operands are staged as signed bytes (u8 values shifted by -128,
//         their zero points with them, which leaves every a - za as it
//         was), so one signed dot serves every signedness; the zero points
//         come back in the epilogue: sum (a - za)(b - zb) = sum ab
//         - zb sum a - za sum b + K za zb, all exact in wrapping int32
//         arithmetic, hence bit-exact with the element-wise path.
// Bindings: 0 = x / a, 1 = w / b, 2 = bias, 3 = y, 4 = int8 per-channel
// parameters (multiplier bits [0, C), weight zero points [C, 2C)).
#extension GL_GOOGLE_include_directive : require
#ifdef DOT
// OpSDot with packed operands, declared through GL_EXT_spirv_intrinsics:
// Debian 12's glslang predates GL_EXT_integer_dot_product.
#extension GL_EXT_spirv_intrinsics : require
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"],
                  capabilities = [6019, 6018], id = 4450)
int sdot4(int a, int b, spirv_literal int packed_4x8);
#endif
layout(local_size_x = 16, local_size_y = 16) in;
#include "common.glsl"


#define BM 64
#define BN 64
#define BK 16

#ifdef Q8
#define SH int
#define ACC int
layout(set = 0, binding = 0) readonly buffer In0 { uint8_t in0[]; };
layout(set = 0, binding = 1) readonly buffer In1 { uint8_t in1[]; };
layout(set = 0, binding = 2) readonly buffer Bias { int bias[]; };
layout(set = 0, binding = 3) writeonly buffer Out { uint8_t y[]; };
layout(set = 0, binding = 3) writeonly buffer Part { int part[]; };
layout(set = 0, binding = 4) readonly buffer QP { uint qp[]; };
#else
#define SH float
#define ACC float
layout(set = 0, binding = 0) readonly buffer In0 { DT in0[]; };
layout(set = 0, binding = 1) readonly buffer In1 { DT in1[]; };
layout(set = 0, binding = 2) readonly buffer Bias { DT bias[]; };
layout(set = 0, binding = 3) writeonly buffer Out { DT y[]; };
layout(set = 0, binding = 4) writeonly buffer Part { float part[]; };
layout(set = 0, binding = 5) readonly buffer Res { DT res[]; }; // -DCONV
#endif

// The layouts, and what their members mean: push_constants.h.
#include "push_constants.h"
// The int8 builds' tail is VK_PC_Q8 then VK_PC_SPLITK, the float builds'
// VK_PC_SPLITK (vk_internal.h's unions: q8k and coop.splitk).
#ifdef Q8
#define VK_PC_TAIL VK_PC_Q8 VK_PC_SPLITK
#else
#define VK_PC_TAIL VK_PC_SPLITK
#endif
#ifdef CONV
layout(push_constant) uniform PC {
  VK_PC_CONV
  VK_PC_TAIL
} pc;
#else
layout(push_constant) uniform PC {
  VK_PC_GEMM
  VK_PC_TAIL
} pc;
#endif
#if defined(CONV) && !defined(Q8)
#include "conv_post.glsl"
#endif

#ifdef DOT
// [k / 4][m or n]: 4 consecutive k as the bytes of one int (k % 4 = 0 in
// the low byte, the dot product's packed order).
shared int As4[BK / 4][BM];
shared int Bs4[BK / 4][BN];
#else
shared SH As[BK][BM];
shared SH Bs[BK][BN];
#endif

#ifdef Q8
// The channel axis of the per-channel parameters: rows for conv (output
// channels), columns for fully_connected / matmul.
int channels() {
#ifdef CONV
  return pc.O;
#else
  return pc.N;
#endif
}
int wzero(int ch) { return int(qp[channels() + ch]); }
#endif
#ifdef CONV
// Implicit im2col: the offset in one image's channel group of the input
// element at k = (c, kh, kw), n = (oh, ow); -1 where it is padding.
int col_offset(int k, int n) {
  int khw = pc.KH * pc.KW;
  int c = k / khw, rr = k % khw;
  int kh = rr / pc.KW, kw = rr % pc.KW;
  int oh = n / pc.OW, ow = n % pc.OW;
  int ih = oh * pc.sh - pc.pt + kh * pc.dh;
  int iw = ow * pc.sw - pc.pl + kw * pc.dw;
  return ih >= 0 && ih < pc.H && iw >= 0 && iw < pc.W
             ? (c * pc.H + ih) * pc.W + iw
             : -1;
}
#endif
#ifdef DOT
// A byte value (signed or not) as the signed byte the dot product sees:
// u8 values and zero points move down by 128.
int shifted(int v, bool is_signed) { return is_signed ? v : v - 128; }
#endif

void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  int tid = int(ty * 16u + tx);
  int m0 = int(gl_WorkGroupID.y) * BM, n0 = int(gl_WorkGroupID.x) * BN;
  int z = int(gl_WorkGroupID.z);
  int ks = pc.ksplit > 1 ? pc.ksplit : 1;
  int slice = z % ks;
  z /= ks;
#ifdef CONV
  int img = z / pc.G, g = z % pc.G;
  int M = pc.OG, NN = pc.OH * pc.OW, K = pc.CG * pc.KH * pc.KW;
  int wbase = g * pc.OG * K;                          // weights of group g
  int xbase = (img * pc.C + g * pc.CG) * pc.H * pc.W; // its input channels
  int ybase = (img * pc.O + g * pc.OG) * NN;
  bool a_kfast = true, b_kfast = false;
#else
  int M = pc.M, NN = pc.N, K = pc.K;
  int abase = 0, bbase = 0, rem = z;
  for (int d = pc.brank - 1; d >= 0; d--) {
    int i = rem % pc.bdim[d];
    rem /= pc.bdim[d];
    abase += i * pc.astr[d];
    bbase += i * pc.bstr[d];
  }
  int ybase = z * M * NN;
  // Load order that keeps neighbouring invocations on neighbouring
  // addresses.
  bool a_kfast = pc.sak == 1, b_kfast = pc.sbk == 1;
#endif
  // This workgroup's slice of K: whole BK steps, so that no step
  // straddles two slices.
  int kstep = ((K + ks - 1) / ks + BK - 1) / BK * BK;
  int kb = slice * kstep, ke = min(K, kb + kstep);
  int klen = max(ke - kb, 0); // real k in the slice
#ifdef Q8
  bool xs = (pc.flags & 1) != 0, ws = (pc.flags & 2) != 0;
#endif

  ACC acc[4][4];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      acc[i][j] = ACC(0);

#ifdef DOT
  // Row sums of A and column sums of B (of the shifted bytes), for the
  // zero-point terms.
  int rsum[4] = int[4](0, 0, 0, 0), csum[4] = int[4](0, 0, 0, 0);
  for (int k0 = kb; k0 < ke; k0 += BK) {
    // One packed word of A and one of B per invocation: m (n) = tid % 64,
    // k = k0 + 4 * (tid / 64) + 0..3. Outside the matrix: 0, which adds
    // nothing to any sum; a convolution's padding: x's zero point.
    int mn = tid % BM, k4 = tid / BM;
    int wa = 0, wb = 0;
    for (int q = 0; q < 4; q++) {
      int k = k0 + 4 * k4 + q;
      int m = m0 + mn, n = n0 + mn;
      int va = 0, vb = 0;
      if (m < M && k < K) {
#ifdef CONV
        va = shifted(ld8(in1[wbase + m * K + k], ws), ws);
#else
        va = shifted(ld8(in0[abase + m * pc.sam + k * pc.sak], xs), xs);
#endif
      }
      if (n < NN && k < K) {
#ifdef CONV
        int o = col_offset(k, n);
        vb = shifted(o >= 0 ? ld8(in0[xbase + o], xs) : pc.xz, xs);
#else
        vb = shifted(ld8(in1[bbase + k * pc.sbk + n * pc.sbn], ws), ws);
#endif
      }
      wa |= (va & 255) << (8 * q);
      wb |= (vb & 255) << (8 * q);
    }
    As4[k4][mn] = wa;
    Bs4[k4][mn] = wb;
    barrier();
    for (int kk = 0; kk < BK / 4; kk++) {
      int av[4], bv[4];
      for (int i = 0; i < 4; i++)
        av[i] = As4[kk][int(ty) + 16 * i];
      for (int j = 0; j < 4; j++)
        bv[j] = Bs4[kk][int(tx) + 16 * j];
      for (int i = 0; i < 4; i++) {
        rsum[i] += sdot4(av[i], 0x01010101, 0);
        for (int j = 0; j < 4; j++)
          acc[i][j] += sdot4(av[i], bv[j], 0);
      }
      for (int j = 0; j < 4; j++)
        csum[j] += sdot4(bv[j], 0x01010101, 0);
    }
    barrier();
  }
#else
  for (int k0 = kb; k0 < ke; k0 += BK) {
    for (int r = 0; r < 4; r++) {
      int e = tid + r * 256;
      int mm = a_kfast ? e / BK : e % BM;
      int kk = a_kfast ? e % BK : e / BM;
      int m = m0 + mm, k = k0 + kk;
      SH v = SH(0);
      if (m < M && k < K) {
#ifdef CONV
#ifdef Q8
        v = ld8(in1[wbase + m * K + k], ws) - wzero(g * pc.OG + m);
#else
        v = float(in1[wbase + m * K + k]);
#endif
#else
#ifdef Q8
        v = ld8(in0[abase + m * pc.sam + k * pc.sak], xs) - pc.xz;
#else
        v = float(in0[abase + m * pc.sam + k * pc.sak]);
#endif
#endif
      }
      As[kk][mm] = v;
    }
    for (int r = 0; r < 4; r++) {
      int e = tid + r * 256;
      int nn = b_kfast ? e / BK : e % BN;
      int kk = b_kfast ? e % BK : e / BN;
      int n = n0 + nn, k = k0 + kk;
      SH v = SH(0);
      if (n < NN && k < K) {
#ifdef CONV
        // Padding reads as zero (for int8: as the zero point, i.e. 0
        // after subtracting).
        int o = col_offset(k, n);
        if (o >= 0) {
#ifdef Q8
          v = ld8(in0[xbase + o], xs) - pc.xz;
#else
          v = float(in0[xbase + o]);
#endif
        }
#else
#ifdef Q8
        v = ld8(in1[bbase + k * pc.sbk + n * pc.sbn], ws) - wzero(n);
#else
        v = float(in1[bbase + k * pc.sbk + n * pc.sbn]);
#endif
#endif
      }
      Bs[kk][nn] = v;
    }
    barrier();
    for (int kk = 0; kk < BK; kk++) {
      SH av[4], bv[4];
      for (int i = 0; i < 4; i++)
        av[i] = As[kk][int(ty) + 16 * i];
      for (int j = 0; j < 4; j++)
        bv[j] = Bs[kk][int(tx) + 16 * j];
      for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
          acc[i][j] += av[i] * bv[j];
    }
    barrier();
  }
#endif

  if (ks > 1) { // partials only: splitk_tiled.comp finishes
    int Z = int(gl_NumWorkGroups.z) / ks;
    int pb = pc.pbase + (slice * Z + z) * M * NN;
    for (int i = 0; i < 4; i++) {
      int m = m0 + int(ty) + 16 * i;
      for (int j = 0; j < 4; j++) {
        int n = n0 + int(tx) + 16 * j;
        if (m >= M || n >= NN)
          continue;
#ifdef DOT
        // This slice's share of the zero-point terms (klen real k).
#ifdef CONV
        int za = shifted(wzero(g * pc.OG + m), ws), zb = shifted(pc.xz, xs);
#else
        int za = shifted(pc.xz, xs), zb = shifted(wzero(n), ws);
#endif
        acc[i][j] += klen * za * zb - zb * rsum[i] - za * csum[j];
#endif
        part[pb + m * NN + n] = acc[i][j];
      }
    }
    return;
  }
  for (int i = 0; i < 4; i++) {
    int m = m0 + int(ty) + 16 * i;
    if (m >= M)
      continue;
    for (int j = 0; j < 4; j++) {
      int n = n0 + int(tx) + 16 * j;
      if (n >= NN)
        continue;
#ifdef CONV
      int ch = g * pc.OG + m;
      bool hb = pc.has_bias != 0;
#else
      int ch = pc.bias_mode == 1 ? m : n;
      bool hb = pc.bias_mode != 0;
#endif
#ifdef DOT
      // The zero-point terms (shifted like the bytes).
#ifdef CONV
      int za = shifted(wzero(ch), ws), zb = shifted(pc.xz, xs);
#else
      int za = shifted(pc.xz, xs), zb = shifted(wzero(n), ws);
#endif
      acc[i][j] += K * za * zb - zb * rsum[i] - za * csum[j];
#endif
#ifdef Q8
      int a = acc[i][j] + (hb ? bias[ch] : 0);
      y[ybase + m * NN + n] =
          requant(a, uintBitsToFloat(qp[ch]), pc.yz, pc.clo, pc.chi);
#else
      float v = acc[i][j] + (hb ? float(bias[ch]) : 0.0);
#ifdef CONV
      if (pc.has_res != 0)
        v += float(res[ybase + m * NN + n]);
#endif
      v = v < pc.lo ? pc.lo : v;
      v = v > pc.hi ? pc.hi : v;
#ifdef CONV
      v = conv_post(v);
#endif
      y[ybase + m * NN + n] = TO_DT(v);
#endif
    }
  }
}
