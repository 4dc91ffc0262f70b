#version 450
// lookup: y[i] = table[x[i] - min], the table being the node's second
// input (256 bytes of y's dtype). An i8 byte's index is x + 128, which
// is the byte with its top bit flipped (flip 0x80); a u8 byte is its own
// index (flip 0).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"

layout(set = 0, binding = 0) readonly buffer X { uint8_t x[]; };
layout(set = 0, binding = 1) readonly buffer T { uint8_t table[]; };
layout(set = 0, binding = 3) writeonly buffer Y { uint8_t y[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_LOOKUP
} pc;

void main() {
  uint id = linear_id();
  if (id >= uint(pc.total))
    return;
  y[id] = table[uint(x[id]) ^ uint(pc.flip)];
}
