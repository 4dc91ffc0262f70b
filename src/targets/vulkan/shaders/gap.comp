#version 450
// global_avg_pool in two passes so that no sum grows long (a running f32
// sum of 16M values is off by percents) and large images fill the GPU:
// workgroup (g, c) sums elements [g*CH, (g+1)*CH) of channel c, each of
// its 64 invocations CH/64 of them, strided, then a tree; with G > 1
// chunks the sums go to scratch (binding 4) and the PARTIALS build (the
// post pass, one workgroup per channel) sums the G of each channel the
// same way and divides.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#include "common.glsl"

#ifdef PARTIALS
layout(set = 0, binding = 4) readonly buffer P { float partial[]; };
#else
layout(set = 0, binding = 0) readonly buffer X { DT x[]; };
layout(set = 0, binding = 4) writeonly buffer P { float partial[]; };
#endif
layout(set = 0, binding = 3) writeonly buffer Y { DT y[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_GAP
} pc;

shared float part[64];

void main() {
  int t = int(gl_LocalInvocationID.x);
  float s = 0.0;
#ifdef PARTIALS
  int c = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
  if (c < pc.NC)
    for (int i = t; i < pc.G; i += 64)
      s += partial[c * pc.G + i];
#else
  int g = int(gl_WorkGroupID.x);
  int c = int(gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y);
  int lo = g * pc.CH, hi = min(pc.HW, lo + pc.CH);
  if (c < pc.NC)
    for (int i = lo + t; i < hi; i += 64)
      s += float(x[c * pc.HW + i]);
#endif
  part[t] = s;
  barrier();
  for (int w = 32; w > 0; w >>= 1) {
    if (t < w)
      part[t] += part[t + w];
    barrier();
  }
  if (t != 0 || c >= pc.NC)
    return;
#ifdef PARTIALS
  y[c] = TO_DT(part[0] / float(pc.HW));
#else
  if (pc.G == 1)
    y[c] = TO_DT(part[0] / float(pc.HW));
  else
    partial[c * pc.G + g] = part[0];
#endif
}
