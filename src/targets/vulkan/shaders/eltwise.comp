#version 450
// Elementwise ops. mode 0: y = min(max(x, lo), hi) (relu, clip); mode 2:
// sigmoid, from e = exp(-|x|) so that nothing overflows. (Mode 1 was add,
// now binary.comp's.)
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"


layout(set = 0, binding = 0) readonly buffer A { DT a[]; };
layout(set = 0, binding = 3) writeonly buffer Y { DT y[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_ELTWISE
} pc;

void main() {
  uint id = linear_id();
  if (id >= uint(pc.total))
    return;
  int i = int(id);
  if (pc.mode == 0) {
    // Explicit comparisons: NaN passes through, as on the CPU.
    float v = float(a[i]);
    v = v < pc.lo ? pc.lo : v;
    v = v > pc.hi ? pc.hi : v;
    y[i] = TO_DT(v);
    return;
  }
  if (pc.mode == 2) {
    float v = float(a[i]);
    float e = exp(-abs(v));
    y[i] = TO_DT((v >= 0.0 ? 1.0 : e) / (1.0 + e));
  }
}
