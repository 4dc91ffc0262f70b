#version 450
// Data movement, one invocation per output element, moving elements as
// stored (uint words, or with -DF16 halves, -DBYTES bytes, -DW64 pairs of
// words: one module per
// element size serves every dtype of that size). Modes 0-3: the strided
// view of src/ops/view.h (transpose, slice, pad, expand) with the pad
// mode of coordinates outside the extent (0 constant, 1 reflect, 2 edge,
// 3 wrap, dg_pad_mode's values); mode 4: gather, outer x len x inner
// taken at the i32 indices of binding 1 into outer x count x inner.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"

#if defined(W64)
#define ET uvec2 // 8-byte elements (i64) as two words: no shaderInt64
#elif defined(BYTES)
#define ET uint8_t
#elif defined(F16)
#define ET float16_t
#else
#define ET uint
#endif
layout(set = 0, binding = 0) readonly buffer X { ET x[]; };
layout(set = 0, binding = 1) readonly buffer I { int idx[]; };
layout(set = 0, binding = 3) writeonly buffer Y { ET y[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_VIEW
} pc;

// The pad constant: its element bits (for F16, the bits of the float the
// half holds exactly).
ET fill_value() {
#if defined(W64)
  return uvec2(uint(pc.fill), pc.fill < 0 ? 0xffffffffu : 0u); // i32 range
#elif defined(BYTES)
  return uint8_t(pc.fill & 255);
#elif defined(F16)
  return float16_t(intBitsToFloat(pc.fill));
#else
  return uint(pc.fill);
#endif
}

void main() {
  uint id = linear_id();
  int rank = pc.rank_mode & 255, mode = pc.rank_mode >> 8;
  if (mode == 4) {
    int inner = pc.dims[0], count = pc.dims[1], len = pc.dims[2];
    if (id >= uint(pc.dims[3] * count * inner))
      return;
    int i = int(id), j = i % inner, k = (i / inner) % count;
    int o = i / (inner * count), s = idx[k];
    s = s < 0 ? s + len : s; // range-checked at build
    y[i] = x[(o * len + s) * inner + j];
    return;
  }
  int total = 1;
  for (int d = 0; d < rank; d++)
    total *= pc.dims[d];
  if (id >= uint(total))
    return;
  int rem = int(id), off = 0;
  bool fill = false;
  for (int d = rank - 1; d >= 0; d--) {
    int c = rem % pc.dims[d];
    rem /= pc.dims[d];
    int i = pc.start[d] + c * pc.step[d], n = pc.extent[d];
    if (i < 0 || i >= n) {
      if (mode == 1) // reflect: pads < n, one reflection is enough
        i = i < 0 ? -i : 2 * (n - 1) - i;
      else if (mode == 2)
        i = i < 0 ? 0 : n - 1;
      else if (mode == 3) // wrap; GLSL leaves % of a negative undefined
        i = i < 0 ? n - 1 - (-i - 1) % n : i % n;
      else
        fill = true;
    }
    off += i * pc.stride[d];
  }
  y[id] = fill ? fill_value() : x[fill ? 0 : off];
}
