#version 450
// resize over H and W, one invocation per output element. Where each
// output row and column samples the input is tabulated on the host by the
// reference's rule (dg_resize_tap, src/ops/resize.c) into the parameter
// blob: per tap the words i0, i1 and the weight of i1 (float bits), the
// OH row taps first, then the OW column taps. -DBYTES: nearest of i8/u8,
// which copies bytes.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"

#ifdef BYTES
layout(set = 0, binding = 0) readonly buffer X { uint8_t x[]; };
layout(set = 0, binding = 3) writeonly buffer Y { uint8_t y[]; };
#else
layout(set = 0, binding = 0) readonly buffer X { DT x[]; };
layout(set = 0, binding = 3) writeonly buffer Y { DT y[]; };
#endif
layout(set = 0, binding = 4) readonly buffer T { uint taps[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_RESIZE
} pc;

void main() {
  uint id = linear_id();
  if (id >= uint(pc.NC * pc.OH * pc.OW))
    return;
  int i = int(id);
  int ow = i % pc.OW, oh = (i / pc.OW) % pc.OH, c = i / (pc.OW * pc.OH);
  int th = 3 * oh, tw = 3 * (pc.OH + ow);
  int base = c * pc.H * pc.W;
  int r0 = base + int(taps[th]) * pc.W, c0 = int(taps[tw]);
#ifdef BYTES
  y[i] = x[r0 + c0];
#else
  if (pc.linear == 0) {
    y[i] = x[r0 + c0];
    return;
  }
  int r1 = base + int(taps[th + 1]) * pc.W, c1 = int(taps[tw + 1]);
  float wh = uintBitsToFloat(taps[th + 2]), ww = uintBitsToFloat(taps[tw + 2]);
  precise float a = (1.0 - ww) * float(x[r0 + c0]) + ww * float(x[r0 + c1]);
  precise float b = (1.0 - ww) * float(x[r1 + c0]) + ww * float(x[r1 + c1]);
  y[i] = TO_DT((1.0 - wh) * a + wh * b);
#endif
}
