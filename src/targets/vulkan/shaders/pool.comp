#version 450
// max_pool2d / avg_pool2d, one invocation per output element, with the
// reference's window rules (src/ops/pool.c): the sum runs over the
// window's taps (dilated) inside the input; the divisor is their count, or
// with count_include_pad the count of taps inside the padded input. -DBYTES: max
// pooling of i8/u8 (signedness in flags bit 0).
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

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_POOL
} pc;

#include "window.glsl"

void main() {
  uint id = linear_id();
  if (id >= uint(pc.NC * pc.OH * pc.OW))
    return;
  int i = int(id);
  int ow = i % pc.OW, oh = (i / pc.OW) % pc.OH, c = i / (pc.OW * pc.OH);
  int h0 = oh * pc.sh - pc.pt, w0 = ow * pc.sw - pc.pl;
  ivec2 ti = taps(h0, pc.kh, pc.dh, pc.H), tj = taps(w0, pc.kw, pc.dw, pc.W);
  int base = c * pc.H * pc.W + h0 * pc.W + w0;
#ifdef BYTES
  bool sgn = (pc.flags & 1) != 0;
  int m = -2147483647 - 1; // an empty window stores its low byte, 0, as the CPU does
  for (int a = ti.x; a < ti.y; a++)
    for (int b = tj.x; b < tj.y; b++)
      m = max(m, ld8(x[base + a * pc.dh * pc.W + b * pc.dw], sgn));
  y[i] = uint8_t(m & 255);
#else
  float acc = pc.is_max != 0 ? -f_inf() : 0.0, lost = 0.0;
  for (int a = ti.x; a < ti.y; a++)
    for (int b = tj.x; b < tj.y; b++) {
      float v = float(x[base + a * pc.dh * pc.W + b * pc.dw]);
      if (pc.is_max != 0)
        acc = v > acc ? v : acc;
      else
        ksum_add(acc, lost, v); // a window may be a whole large image
    }
  if (pc.is_max == 0) {
    int cnt = (ti.y - ti.x) * (tj.y - tj.x);
    if (pc.count_include_pad != 0)
      cnt = taps(h0, pc.kh, pc.dh, pc.H + pc.pb).y *
            taps(w0, pc.kw, pc.dw, pc.W + pc.pr).y;
    acc /= float(cnt != 0 ? cnt : 1);
  }
  y[i] = TO_DT(acc);
#endif
}
