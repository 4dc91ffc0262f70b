#version 450
// Direct convolution, one invocation per output element, no shared memory
// and no barriers. Used for depthwise convolution (one input channel per
// group, where a GEMM tile would waste all but one row), for narrow
// layers, and for every convolution on CPU-type devices (lavapipe), where
// workgroup barriers are expensive and shared memory buys nothing.
// Variants: f32, f16 (-DF16), int8 (-DQ8, the numerics contract).
// Bindings as gemm.comp's conv: 0 = x, 1 = w, 2 = bias, 3 = y, 4 = int8
// parameters, 5 = the residual (float builds).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#include "common.glsl"

#ifdef Q8
layout(set = 0, binding = 0) readonly buffer X { uint8_t x[]; };
layout(set = 0, binding = 1) readonly buffer Wt { uint8_t w[]; };
layout(set = 0, binding = 2) readonly buffer Bias { int bias[]; };
layout(set = 0, binding = 3) writeonly buffer Y { uint8_t y[]; };
layout(set = 0, binding = 4) readonly buffer QP { uint qp[]; };
#else
layout(set = 0, binding = 0) readonly buffer X { DT x[]; };
layout(set = 0, binding = 1) readonly buffer Wt { DT w[]; };
layout(set = 0, binding = 2) readonly buffer Bias { DT bias[]; };
layout(set = 0, binding = 3) writeonly buffer Y { DT y[]; };
layout(set = 0, binding = 5) readonly buffer Res { DT res[]; };
#endif

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_CONV
  VK_PC_Q8
} pc;
#ifndef Q8
#include "conv_post.glsl"
#endif

void main() {
  uint id = linear_id();
  int total = pc.N * pc.O * pc.OH * pc.OW;
  if (id >= uint(total))
    return;
  int i = int(id);
  int ow = i % pc.OW, oh = (i / pc.OW) % pc.OH;
  int o = (i / (pc.OW * pc.OH)) % pc.O, n = i / (pc.OW * pc.OH * pc.O);
  int g = o / pc.OG;
  // The window's rows and columns inside the input.
  int ih0 = oh * pc.sh - pc.pt, iw0 = ow * pc.sw - pc.pl;
#ifdef Q8
  bool xs = (pc.flags & 1) != 0, ws = (pc.flags & 2) != 0;
  int wz = int(qp[pc.O + o]);
  int s = 0;
#else
  float s = 0.0;
#endif
  for (int c = 0; c < pc.CG; c++) {
    int xb = ((n * pc.C + g * pc.CG + c) * pc.H) * pc.W;
    int wb = (o * pc.CG + c) * pc.KH * pc.KW;
    for (int kh = 0; kh < pc.KH; kh++) {
      int ih = ih0 + kh * pc.dh;
      if (ih < 0 || ih >= pc.H)
        continue;
      for (int kw = 0; kw < pc.KW; kw++) {
        int iw = iw0 + kw * pc.dw;
        if (iw < 0 || iw >= pc.W)
          continue; // padding: x equals its zero point, adds nothing
#ifdef Q8
        s += (ld8(x[xb + ih * pc.W + iw], xs) - pc.xz) *
             (ld8(w[wb + kh * pc.KW + kw], ws) - wz);
#else
        s += float(x[xb + ih * pc.W + iw]) * float(w[wb + kh * pc.KW + kw]);
#endif
      }
    }
  }
#ifdef Q8
  if (pc.has_bias != 0)
    s += bias[o];
  y[i] = requant(s, uintBitsToFloat(qp[o]), pc.yz, pc.clo, pc.chi);
#else
  if (pc.has_bias != 0)
    s += float(bias[o]);
  if (pc.has_res != 0)
    s += float(res[i]);
  s = s < pc.lo ? pc.lo : s;
  s = s > pc.hi ? pc.hi : s;
  y[i] = TO_DT(conv_post(s));
#endif
}
