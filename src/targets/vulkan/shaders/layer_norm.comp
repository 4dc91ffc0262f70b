#version 450
// layer_norm: one workgroup per row of len elements (x's dims from the
// axis on); its 256 invocations sum every 256th element with compensation
// and a tree gives the mean, then the same for the squared deviations (two
// passes: no E[x^2] - E[x]^2 cancellation), then each writes its elements.
// scale and bias are indexed by the row position when they have len
// elements, else through their broadcast strides over the row's dims.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"

layout(set = 0, binding = 0) readonly buffer X { DT x[]; };
layout(set = 0, binding = 1) readonly buffer S { DT scale[]; };
layout(set = 0, binding = 2) readonly buffer B { DT bias[]; };
layout(set = 0, binding = 3) writeonly buffer Y { DT y[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_LAYER_NORM
} pc;

shared float part[256];

float tree_sum(int t, float v) {
  part[t] = v;
  barrier();
  for (int w = 128; w > 0; w >>= 1) {
    if (t < w)
      part[t] += part[t + w];
    barrier();
  }
  float r = part[0];
  barrier();
  return r;
}

// Offset of row position k under strides s over the 6 (padded) dims,
// unrolled: no loop for llvmpipe's limit to count.
#define STEP(d) off += (k % pc.dims[d]) * s[d]; k /= pc.dims[d];
int bcast(int k, int s[6]) {
  int off = 0;
  STEP(5) STEP(4) STEP(3) STEP(2) STEP(1) STEP(0)
  return off;
}

void main() {
  int row = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
  int t = int(gl_LocalInvocationID.x);
  if (row >= pc.rows)
    return; // the whole workgroup: uniform
  int base = row * pc.len;
  float s = 0.0, lost = 0.0;
  for (int k = t; k < pc.len; k += 256)
    ksum_add(s, lost, float(x[base + k]));
  float mean = tree_sum(t, s - lost) / float(pc.len);
  s = 0.0;
  lost = 0.0;
  for (int k = t; k < pc.len; k += 256) {
    float d = float(x[base + k]) - mean;
    ksum_add(s, lost, d * d);
  }
  float var = tree_sum(t, s - lost) / float(pc.len);
  float inv = inversesqrt(var + pc.epsilon);
  for (int k = t; k < pc.len; k += 256) {
    int is = pc.sfull != 0 ? k : bcast(k, pc.ss);
    float v = (float(x[base + k]) - mean) * inv * float(scale[is]);
    if (pc.has_bias != 0)
      v += float(bias[pc.bfull != 0 ? k : bcast(k, pc.sb)]);
    y[base + k] = TO_DT(v);
  }
}
