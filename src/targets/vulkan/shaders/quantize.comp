#version 450
// quantize f32 -> i8/u8 (-DBYTES) or i32:
//   q = saturate(round_half_even(x / scale) + zero)
// with one fp32 division (precise) per the numerics contract. Per-channel
// scales and zero points come from binding 4 (scale bits [0, chans),
// zero points [chans, 2 chans)); per-tensor ones from push constants.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"


layout(set = 0, binding = 0) readonly buffer X { float x[]; };
#ifdef BYTES
layout(set = 0, binding = 3) writeonly buffer Y { uint8_t y[]; };
#else
layout(set = 0, binding = 3) writeonly buffer Y { int y[]; };
#endif
layout(set = 0, binding = 4) readonly buffer QP { uint qp[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_QUANTIZE
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
  precise float v = x[i] / s;
  v = roundEven(v);
  // Bring v into int range first; the zero point is then added as an
  // integer with the overflow caught (exact for any |zero| < 2^31 once
  // |v| < 2^31; beyond, v saturates first).
  v = v < -2147483648.0 ? -2147483648.0 : v;
  v = v > 2147483520.0 ? 2147483520.0 : v;
  int q = int(v);
  int r = q + z;
  if (z > 0 && r < q)
    r = pc.hi;
  else if (z < 0 && r > q)
    r = pc.lo;
  r = r < pc.lo ? pc.lo : (r > pc.hi ? pc.hi : r);
#ifdef BYTES
  y[i] = uint8_t(r & 255);
#else
  y[i] = r;
#endif
}
