#version 450
// dequantize i8/u8 (-DBYTES, signedness in flags bit 0) or i32 -> f32:
//   y = (float(q) - float(zero)) * scale, each step one fp32 rounding.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"


#ifdef BYTES
layout(set = 0, binding = 0) readonly buffer X { uint8_t x[]; };
#else
layout(set = 0, binding = 0) readonly buffer X { int x[]; };
#endif
layout(set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(set = 0, binding = 4) readonly buffer QP { uint qp[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_DEQUANTIZE
} pc;

void main() {
  uint id = linear_id();
  if (id >= uint(pc.total))
    return;
  int i = int(id);
  float s = pc.scale;
  int z = pc.zero;
  if (pc.per_channel != 0) {
    int c = (i / pc.inner) % pc.chans;
    s = uintBitsToFloat(qp[c]);
    z = int(qp[pc.chans + c]);
  }
#ifdef BYTES
  int q = ld8(x[i], (pc.flags & 1) != 0);
#else
  int q = x[i];
#endif
  precise float d = float(q) - float(z);
  precise float v = d * s;
  y[i] = v;
}
