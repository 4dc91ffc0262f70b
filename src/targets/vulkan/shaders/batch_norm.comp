#version 450
// Inference batch norm in two passes, as the five tensors it reads and
// writes do not fit the four bindings a pass has besides scratch.
// -DPRE (one invocation per channel): from scale, bias, mean and var
// (bindings 0..3) the per-channel factor a = scale / sqrt(var + eps) and
// offset b = bias - mean * a into scratch (binding 4, a then b). Main
// pass (one invocation per element): y = x * a + b for x's channel.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"

#ifdef PRE
layout(set = 0, binding = 0) readonly buffer S { DT scale[]; };
layout(set = 0, binding = 1) readonly buffer B { DT bias[]; };
layout(set = 0, binding = 2) readonly buffer M { DT mean[]; };
layout(set = 0, binding = 3) readonly buffer V { DT var[]; };
layout(set = 0, binding = 4) writeonly buffer AB { float ab[]; };
#else
layout(set = 0, binding = 0) readonly buffer X { DT x[]; };
layout(set = 0, binding = 3) writeonly buffer Y { DT y[]; };
layout(set = 0, binding = 4) readonly buffer AB { float ab[]; };
#endif

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_BNORM
} pc;

void main() {
  uint id = linear_id();
#ifdef PRE
  if (id >= uint(pc.C))
    return;
  int c = int(id);
  precise float a = float(scale[c]) / sqrt(float(var[c]) + pc.eps);
  ab[c] = a;
  ab[pc.C + c] = float(bias[c]) - float(mean[c]) * a;
#else
  if (id >= uint(pc.total))
    return;
  int i = int(id), c = (i / pc.inner) % pc.C;
  precise float v = float(x[i]) * ab[c] + ab[pc.C + c];
  y[i] = TO_DT(v);
#endif
}
