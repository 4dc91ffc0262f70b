#version 450
// The channel-blocked copy of an f16 convolution's input and weights, for
// the KHR cooperative-matrix GEMM that follows it in the same node
// (gemm_coop.comp -DCBLK), which then reads 8 consecutive k of one input
// pixel as one aligned 16-byte load:
//   xb[g][img][ih][iw][CP] = x[img][g*CG + c][ih][iw]   (c < CG, else 0)
//   wb[g][o][kh][kw][CP]  = w[g*OG + o][c][kh][kw]      (c < CG, else 0)
// with CP = CG rounded up to 8, wb right after xb in the node's scratch
// region (constant weights are blocked once by vk_ops.c instead: push
// constant wblk 0). So k = (kh, kw, c) instead of the layout's (c, kh, kw), for A
// and B alike, and the zero channels of the padding add nothing.
// Unlike the explicit im2col (im2col.comp), this writes the input once,
// not once per (kh, kw): 1/9 of the traffic at 3x3.
// Input: a workgroup moves a block of 32 pixels x 8 channel groups at a
// time through shared memory, reading 8 channels of one pixel per
// invocation (each of its 8 reads coalesced over 32 neighbouring pixels)
// and writing 8 groups of 4 pixels per subgroup (contiguous 16-byte
// stores; writing from the reading invocations scattered them CP halves
// apart). Weights: one uvec4 per invocation, (kh, kw) fastest.
// Bindings: 0 = x, 1 = w, 3 = the scratch region; push constants the
// conv's (vk_ops.c setup_conv), shared with the GEMM. Grid: x * y
// workgroups stride over the blocks (an input block holds 32 pixels x
// up to 8 groups, fewer where CB is not a multiple of 8; a weight block
// 256 uvec4).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#define F16

layout(local_size_x = 256) in;
#include "common.glsl"

layout(set = 0, binding = 0) readonly buffer In0 { float16_t x[]; };
layout(set = 0, binding = 1) readonly buffer In1 { float16_t w[]; };
layout(set = 0, binding = 3) writeonly buffer Out { uvec4 b[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_CONV
  VK_PC_SPLITK
  VK_PC_CBLK // 0: the weights are blocked already (constants; vk_ops.c)
} pc;

shared uvec4 tile[32 * 9]; // [pixel][group], padded against conflicts

void main() {
  int t = int(gl_LocalInvocationIndex);
  int CB = (pc.CG + 7) / 8, HW = pc.H * pc.W, khw = pc.KH * pc.KW;
  int CBC = (CB + 7) / 8, PC = (HW + 31) / 32;
  int xblocks = pc.G * pc.N * CBC * PC, xu = pc.G * pc.N * CB * HW;
  int wu = pc.wblk != 0 ? pc.G * pc.OG * CB * khw : 0, blocks = xblocks + (wu + 255) / 256;
  int nwg = int(gl_NumWorkGroups.x * gl_NumWorkGroups.y);
  int first = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
  for (int blk = first; blk < blocks; blk += nwg) {
    float16_t e[8];
    if (blk < xblocks) {
      // blk = ((g*N + img)*CBC + cbc)*PC + pcn
      int pcn = blk % PC, r = blk / PC, cbc = r % CBC, gi = r / CBC;
      int g = gi / pc.N, img = gi - g * pc.N;
      int p = pcn * 32 + (t & 31), cb = cbc * 8 + (t >> 5), c0 = cb * 8;
      bool inb = p < HW && cb < CB;
      int src = (img * pc.C + g * pc.CG + c0) * HW + p;
      [[unroll]] for (int j = 0; j < 8; j++)
        e[j] = inb && c0 + j < pc.CG ? x[src + j * HW] : float16_t(0);
      tile[(t & 31) * 9 + (t >> 5)] = pk8(e);
      barrier();
      int p2 = pcn * 32 + (t >> 3), cb2 = cbc * 8 + (t & 7);
      if (p2 < HW && cb2 < CB)
        b[(gi * HW + p2) * CB + cb2] = tile[(t >> 3) * 9 + (t & 7)];
      barrier();
    } else {
      // i = ((g*OG + o)*CB + cb)*khw + q
      int i = (blk - xblocks) * 256 + t;
      if (i < wu) {
        int q = i % khw, r = i / khw, cb = r % CB, go = r / CB, c0 = cb * 8;
        int src = (go * pc.CG + c0) * khw + q;
        [[unroll]] for (int j = 0; j < 8; j++)
          e[j] = c0 + j < pc.CG ? w[src + j * khw] : float16_t(0);
        b[xu + (go * khw + q) * CB + cb] = pk8(e);
      }
    }
  }
}
