#version 450
// qbinary: int8 add, sub and mul with numpy broadcasting, as the CPU
// kernel (src/targets/cpu/int8.c) and the contract's fp32 steps
// (src/ops/requant.h) have them. The broadcast is binary.comp's: the
// output index decomposed over up to 6 dims, with per-dim element
// strides for a and b (0 on broadcast axes). The host factors fa, fb are
// dg_qbinary_factors'.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"

layout(set = 0, binding = 0) readonly buffer A { uint8_t a_[]; };
layout(set = 0, binding = 1) readonly buffer B { uint8_t b_[]; };
layout(set = 0, binding = 3) writeonly buffer Y { uint8_t y[]; };

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_QBINARY
} pc;

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
  int da = ld8(a_[ia], (pc.flags & 1) != 0) - pc.za;
  int db = ld8(b_[ib], (pc.flags & 2) != 0) - pc.zb;
  if (pc.mul != 0) {
    // |da * db| <= 255 * 255: exact in int32 and in its fp32 conversion.
    y[i] = requant(da * db, pc.fa, pc.zy, pc.lo, pc.hi);
  } else {
    // dg_requant_sum: each side one fp32 multiply, then one fp32 add,
    // none fused into a multiply-add.
    precise float pa = float(da) * pc.fa;
    precise float pb = float(db) * pc.fb;
    precise float v = pa + pb;
    y[i] = requant_out(roundEven(v), pc.zy, pc.lo, pc.hi);
  }
}
