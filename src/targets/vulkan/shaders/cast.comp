#version 450
// cast between f32, f16 and i32, one invocation per element; the pair is
// a build-time variant (-DSRC_* -DDST_*; -DF16 where either side is f16,
// for its storage). To i32: toward zero, saturating, NaN to 0, as
// src/ops/cast.c; to a float: the conversion's rounding.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"

#if defined(SRC_F16)
layout(set = 0, binding = 0) readonly buffer X { float16_t x[]; };
#elif defined(SRC_I32)
layout(set = 0, binding = 0) readonly buffer X { int x[]; };
#else
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
#endif
#if defined(DST_F16)
layout(set = 0, binding = 3) writeonly buffer Y { float16_t y[]; };
#elif defined(DST_I32)
layout(set = 0, binding = 3) writeonly buffer Y { int y[]; };
#else
layout(set = 0, binding = 3) writeonly buffer Y { float y[]; };
#endif

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_CAST
} pc;

void main() {
  uint id = linear_id();
  if (id >= uint(pc.total))
    return;
  int i = int(id);
#if defined(DST_I32)
  float v = float(x[i]);
  // NaN by its bits: a compiler may assume comparisons rule it out.
  bool nan = (floatBitsToUint(v) & 0x7fffffffu) > 0x7f800000u;
  y[i] = nan ? 0
         : v >= 2147483648.0 ? 2147483647
         : v < -2147483648.0 ? -2147483647 - 1
                             : int(v);
#elif defined(DST_F16)
  y[i] = float16_t(float(x[i]));
#else
  y[i] = float(x[i]);
#endif
}
