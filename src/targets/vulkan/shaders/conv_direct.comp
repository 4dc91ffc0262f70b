#version 450
// Direct convolution, one invocation per output element, no shared memory
// and no barriers. Used for depthwise convolution (one input channel per
// group, where a GEMM tile would waste all but one row), for narrow
// layers, and for every convolution on CPU-type devices (lavapipe), where
// workgroup barriers are expensive and shared memory buys nothing.
// Variants: f32, f16 (-DF16), int8 (-DQ8, the numerics contract).
// -DGEMV (float only): one workgroup of 64 per output instead, its
// invocations striding over the window's CG x KH x KW taps and adding up
// in shared memory: convs with a few output pixels and deep windows (the
// squeeze-excite convs on 1x1 planes), where an invocation per output
// summed a thousand taps alone and left the GPU idle.
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
#ifdef GEMV
#ifdef Q8
#error "the conv GEMV is built for float only"
#endif
shared float red_f[64];
#endif

void main() {
#ifdef GEMV
  uint lid = gl_LocalInvocationID.x;
  uint id = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
#else
  uint id = linear_id();
#endif
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
#ifdef GEMV
  // tap k = (c, kh, kw) of the window, every 64th from lid; the whole
  // workgroup has one output, so it returned above, or none did
  int KK = pc.KH * pc.KW;
  for (int k = int(lid); k < pc.CG * KK; k += 64) {
    int c = k / KK, r = k - c * KK, kh = r / pc.KW, kw = r - kh * pc.KW;
    int ih = ih0 + kh * pc.dh, iw = iw0 + kw * pc.dw;
    if (ih < 0 || ih >= pc.H || iw < 0 || iw >= pc.W)
      continue;
    s += float(x[((n * pc.C + g * pc.CG + c) * pc.H + ih) * pc.W + iw]) *
         float(w[(o * pc.CG + c) * KK + r]);
  }
  red_f[lid] = s;
  barrier();
  for (uint h = 32u; h > 0u; h >>= 1) {
    if (lid < h)
      red_f[lid] += red_f[lid + h];
    barrier();
  }
  if (lid != 0u)
    return;
  s = red_f[0];
#else
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
#endif
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
