#version 450
// global_avg_pool: one workgroup of 64 invocations per (image, channel),
// strided partial sums reduced through shared memory.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#include "common.glsl"


layout(set = 0, binding = 0) readonly buffer X { DT x[]; };
layout(set = 0, binding = 3) writeonly buffer Y { DT y[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_GAP
} pc;

shared float part[64];

void main() {
  int c = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
  int t = int(gl_LocalInvocationID.x);
  float s = 0.0;
  if (c < pc.NC)
    for (int i = t; i < pc.HW; i += 64)
      s += float(x[c * pc.HW + i]);
  part[t] = s;
  barrier();
  for (int w = 32; w > 0; w >>= 1) {
    if (t < w)
      part[t] += part[t + w];
    barrier();
  }
  if (t == 0 && c < pc.NC)
    y[c] = TO_DT(part[0] / float(pc.HW));
}
