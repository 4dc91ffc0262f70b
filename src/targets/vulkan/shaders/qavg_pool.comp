#version 450
// qavg_pool2d: one invocation per output, the integer sum of (x - xz)
// over the window's taps inside the input (pool.comp's window rules,
// window.glsl), requantised with the multiplier of the window's divisor
// n. The divisor is the count of those taps, or with count_include_pad
// the count inside the padded input; its multiplier sx / (sy * n) comes
// from the host (binding 4: the bits of entry n - n0 for the node's
// divisors n0..), since the GPU's division is not correctly rounded.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"

layout(set = 0, binding = 0) readonly buffer X { uint8_t x[]; };
layout(set = 0, binding = 3) writeonly buffer Y { uint8_t y[]; };
layout(set = 0, binding = 4) readonly buffer M { uint mult[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_POOL
  VK_PC_QPOOL
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
  bool sgn = (pc.flags & 1) != 0;
  // At most 2^23 taps (the builder's limit) of |x - xz| <= 255: the sum
  // is exact in int32.
  int acc = 0;
  for (int a = ti.x; a < ti.y; a++)
    for (int b = tj.x; b < tj.y; b++)
      acc += ld8(x[base + a * pc.dh * pc.W + b * pc.dw], sgn) - pc.xz;
  // Every window holds a tap of the input (the builder refuses others),
  // so n >= 1.
  int n = (ti.y - ti.x) * (tj.y - tj.x);
  if (pc.count_include_pad != 0)
    n = taps(h0, pc.kh, pc.dh, pc.H + pc.pb).y *
        taps(w0, pc.kw, pc.dw, pc.W + pc.pr).y;
  y[i] = requant(acc, uintBitsToFloat(mult[n - pc.n0]), pc.yz, pc.lo, pc.hi);
}
