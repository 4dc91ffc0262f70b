#version 450
// add and the binary functions of src/ops/binary.def with numpy
// broadcasting: the output index decomposed over up to 6 dims, with
// per-dim element strides for a and b (0 on broadcast axes). pc.fn is the
// dg_binary_fn; every invocation of a dispatch takes the same branch.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"

layout(set = 0, binding = 0) readonly buffer A { DT a_[]; };
layout(set = 0, binding = 1) readonly buffer B { DT b_[]; };
layout(set = 0, binding = 3) writeonly buffer Y { DT y[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_BINARY
} pc;

#define INF uintBitsToFloat(0x7f800000u)
#define NAN uintBitsToFloat(0x7fc00000u)

// GLSL's pow is undefined for a < 0, and for a = 0 with b <= 0: those
// cases as C's pow has them (-0 is taken as +0).
float bin_pow(float a, float b) {
  if (b == 0.0)
    return 1.0;
  float m = abs(a);
  float r = m == 0.0 ? (b > 0.0 ? 0.0 : INF) : pow(m, b);
  if (a < 0.0) {
    if (b != trunc(b))
      return NAN;
    if (mod(b, 2.0) == 1.0) // odd (mod is floored: 1 for negative odd b too)
      r = -r;
  }
  return r;
}

// C's fmod (exact, a's sign) from a rounded quotient: near a multiple of b
// the quotient may be one off, which leaves r with the wrong sign or
// |r| >= |b|; one step of |b| back fixes either. x % 0 and inf % x are NaN
// (0 * inf and inf - inf), x % inf is x.
float bin_fmod(float a, float b) {
  if (abs(b) == INF && abs(a) != INF)
    return a;
  float r = a - b * trunc(a / b);
  float s = a < 0.0 ? -abs(b) : abs(b);
  if (r != 0.0 && (r < 0.0) != (a < 0.0))
    r += s;
  if (abs(r) >= abs(b))
    r -= s;
  return r;
}

// Floored: the truncated remainder moved by b when their signs differ.
float bin_mod(float a, float b) {
  float r = bin_fmod(a, b);
  return r != 0.0 && (r < 0.0) != (b < 0.0) ? r + b : r;
}

// Line k of binary.def is function k (dg_binary_fn counts from 1).
float apply(int fn, float a, float b) {
  int k = 0;
#define DG_BINARY(e, name, formula)                                            \
  if (fn == ++k)                                                               \
    return formula;
#include "../../../ops/binary.def"
#undef DG_BINARY
  return NAN;
}

void main() {
  uint id = linear_id();
  if (id >= uint(pc.total))
    return;
  int i = int(id);
  int ia = 0, ib = 0, rem = i;
  for (int d = pc.rank - 1; d >= 0; d--) {
    int k = rem % pc.dims[d];
    rem /= pc.dims[d];
    ia += k * pc.sa[d];
    ib += k * pc.sb[d];
  }
  y[i] = TO_DT(apply(pc.fn, float(a_[ia]), float(b_[ib])));
}
