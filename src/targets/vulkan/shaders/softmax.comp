#version 450
// softmax along an axis: one invocation per (outer, inner) row of length
// len with stride inner; max, exp-sum, then scale (as the CPU does), or
// for log_softmax (pc.log_out) x - max - log(sum).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#include "common.glsl"


layout(set = 0, binding = 0) readonly buffer X { DT x[]; };
layout(set = 0, binding = 3) buffer Y { DT y[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_SOFTMAX
} pc;

void main() {
  uint id = linear_id();
  if (id >= uint(pc.outer * pc.inner))
    return;
  int o = int(id) / pc.inner, j = int(id) % pc.inner;
  int base = o * pc.len * pc.inner + j;
  float mx = -f_inf();
  for (int k = 0; k < pc.len; k++)
    mx = max(mx, float(x[base + k * pc.inner]));
  float s = 0.0, lost = 0.0; // compensated: rows may be 64M long
  for (int k = 0; k < pc.len; k++)
    ksum_add(s, lost, exp(float(x[base + k * pc.inner]) - mx));
  if (pc.log_out != 0) {
    float ls = log(s);
    for (int k = 0; k < pc.len; k++)
      y[base + k * pc.inner] = TO_DT(float(x[base + k * pc.inner]) - mx - ls);
    return;
  }
  float inv = 1.0 / s;
  for (int k = 0; k < pc.len; k++)
    y[base + k * pc.inner] = TO_DT(exp(float(x[base + k * pc.inner]) - mx) * inv);
}
