#version 450
// The unary functions of src/ops/unary.def, y = f(x) elementwise: the
// table's formulas expanded into a chain of tests on the push constant
// fn (uniform across the dispatch, so every invocation takes the same
// branch), computed in fp32 and stored as DT.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"

layout(set = 0, binding = 0) readonly buffer X { DT xs[]; };
layout(set = 0, binding = 3) writeonly buffer Y { DT ys[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_UNARY
} pc;

#include "unary_math.glsl"

#include "unary_fn.glsl"

void main() {
  uint id = linear_id();
  if (id >= uint(pc.total))
    return;
  int i = int(id);
  ys[i] = TO_DT(unary(pc.fn, float(xs[i]), pc.alpha, pc.beta));
}
