#version 450
// The explicit im2col of an f16 convolution, for the KHR cooperative-
// matrix GEMM that follows it in the same node (gemm_coop.comp -DIM2COL):
// B[g][n][k] = x[img][g*CG + c][oh*sh - pt + kh*dh][ow*sw - pl + kw*dw]
// with n = (img, oh, ow) and k = (c, kh, kw), zero outside the input, rows
// padded with zeros to Kp = K rounded up to 8 so that every row starts on
// a 16-byte boundary. One invocation writes one uvec4 (8 consecutive k of
// one n). On the H200, consecutive invocations on consecutive uvec4s of
// one row (coalesced writes, reads 32 channels apart) made the pass most
// of the node's time.
// Why a pass of its own: the implicit gather inside the GEMM redoes the
// address arithmetic for every M-tile and competes with the MMAs for
// issue slots (docs/performance.md, "Conv tiles and gathers").
// Bindings: 0 = x, 3 = B (the node's scratch region); push constants the
// conv's (vk_ops.c setup_conv), so both dispatches share them. Grid:
// x * y workgroups stride over the rows of group z.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#define F16

layout(local_size_x = 256) in;
#include "common.glsl"

layout(set = 0, binding = 0) readonly buffer In0 { float16_t x[]; };
layout(set = 0, binding = 3) writeonly buffer Out { uvec4 b[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_CONV
} pc;

void main() {
  int g = int(gl_WorkGroupID.z);
  int khw = pc.KH * pc.KW, K = pc.CG * khw, KB = (K + 7) / 8;
  int OHW = pc.OH * pc.OW, NN = pc.N * OHW, HW = pc.H * pc.W;
  int total = (NN + 31) / 32 * 32 * KB;
  int stride = int(gl_NumWorkGroups.x * gl_NumWorkGroups.y) * 256;
  for (int i = int(linear_id()); i < total; i += stride) {
    // Blocks of 32 pixels x KB k-blocks, pixel fastest: a subgroup reads
    // 32 neighbouring pixels of one (c, kh, kw) (coalesced), and the
    // next subgroups fill the rest of the same rows while they are hot
    // in L2.
    int blk = i / (32 * KB), rem = i - blk * 32 * KB;
    int kbi = rem / 32, n = blk * 32 + (rem - kbi * 32), k = kbi * 8;
    if (n >= NN)
      continue;
    int img = n / OHW, p = n - img * OHW;
    int oh = p / pc.OW, ow = p - oh * pc.OW;
    int ih0 = oh * pc.sh - pc.pt, iw0 = ow * pc.sw - pc.pl;
    int c = k / khw, rr = k - c * khw;
    int kh = rr / pc.KW, kw = rr - kh * pc.KW;
    int base = (img * pc.C + g * pc.CG + c) * HW;
    float16_t e[8];
    [[unroll]] for (int j = 0; j < 8; j++) {
      int ih = ih0 + kh * pc.dh, iw = iw0 + kw * pc.dw;
      bool ok = k + j < K && uint(ih) < uint(pc.H) && uint(iw) < uint(pc.W);
      e[j] = ok ? x[base + ih * pc.W + iw] : float16_t(0);
      if (++kw == pc.KW) {
        kw = 0;
        if (++kh == pc.KH) {
          kh = 0;
          base += HW;
        }
      }
    }
    b[(g * NN + n) * KB + k / 8] = pk8(e);
  }
}
