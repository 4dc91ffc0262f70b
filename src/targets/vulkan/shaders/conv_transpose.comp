#version 450
// Transposed convolution, one invocation per output element, gathering
// the inputs whose window covers it (src/ops/conv_transpose.c scatters
// instead): oh = ih * sh + kh * dh - pt, so an input row contributes only
// where sh divides oh + pt - kh * dh. The conv push layout, with C the
// input channels in G groups of CG, O the output channels (OG per group)
// and the weights [C][OG][KH][KW].
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#include "common.glsl"

layout(set = 0, binding = 0) readonly buffer X { DT x[]; };
layout(set = 0, binding = 1) readonly buffer Wt { DT w[]; };
layout(set = 0, binding = 2) readonly buffer B { DT bias[]; };
layout(set = 0, binding = 3) writeonly buffer Y { DT y[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_CONV
} pc;

void main() {
  uint id = linear_id();
  if (id >= uint(pc.N * pc.O * pc.OH * pc.OW))
    return;
  int i = int(id);
  int ow = i % pc.OW, oh = (i / pc.OW) % pc.OH;
  int o = (i / (pc.OW * pc.OH)) % pc.O, b = i / (pc.OW * pc.OH * pc.O);
  int grp = o / pc.OG, oc = o % pc.OG;
  float s = 0.0;
  for (int c = grp * pc.CG; c < (grp + 1) * pc.CG; c++) {
    int xb = (b * pc.C + c) * pc.H * pc.W;
    int wb = (c * pc.OG + oc) * pc.KH * pc.KW;
    for (int kh = 0; kh < pc.KH; kh++) {
      int th = oh + pc.pt - kh * pc.dh;
      if (th < 0 || th % pc.sh != 0 || th / pc.sh >= pc.H)
        continue;
      for (int kw = 0; kw < pc.KW; kw++) {
        int tw = ow + pc.pl - kw * pc.dw;
        if (tw < 0 || tw % pc.sw != 0 || tw / pc.sw >= pc.W)
          continue;
        s += float(x[xb + th / pc.sh * pc.W + tw / pc.sw]) *
             float(w[wb + kh * pc.KW + kw]);
      }
    }
  }
  if (pc.has_bias != 0)
    s += float(bias[o]);
  y[i] = TO_DT(min(max(s, pc.lo), pc.hi));
}
