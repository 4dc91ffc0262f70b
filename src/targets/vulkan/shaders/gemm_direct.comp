#version 450
// GEMM, one invocation per output element, no shared memory and no
// barriers: for matrix-vector shapes (batch-1 fully_connected), and for
// every GEMM on CPU-type devices (lavapipe), where workgroup barriers are
// expensive. Push constants and bindings as gemm.comp (without -DCONV);
// variants f32, f16 (-DF16) and int8 (-DQ8). -DGEMV: one workgroup of 64
// per output instead, its invocations striding over K (neighbours on
// neighbouring addresses where K is a row's fast axis, as in a
// fully_connected's weights) and adding up in shared memory: batch-1
// fully-connected layers on GPUs, where one invocation per output leaves
// most of the device idle and reads K-strided. Integer sums are exact in
// any order, so the int8 build stays bit-exact.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#include "common.glsl"

#ifdef Q8
layout(set = 0, binding = 0) readonly buffer In0 { uint8_t in0[]; };
layout(set = 0, binding = 1) readonly buffer In1 { uint8_t in1[]; };
layout(set = 0, binding = 2) readonly buffer Bias { int bias[]; };
layout(set = 0, binding = 3) writeonly buffer Out { uint8_t y[]; };
layout(set = 0, binding = 4) readonly buffer QP { uint qp[]; };
#else
layout(set = 0, binding = 0) readonly buffer In0 { DT in0[]; };
layout(set = 0, binding = 1) readonly buffer In1 { DT in1[]; };
layout(set = 0, binding = 2) readonly buffer Bias { DT bias[]; };
layout(set = 0, binding = 3) writeonly buffer Out { DT y[]; };
#endif

#include "push_constants.h"
layout(push_constant) uniform PC {
  VK_PC_GEMM
  VK_PC_Q8
} pc;

#ifdef GEMV
shared float red_f[64];
shared int red_i[64];
#endif

void main() {
#ifdef GEMV
  uint lid = gl_LocalInvocationID.x;
  uint id = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  int k0 = int(lid), kstep = 64;
#else
  uint id = linear_id();
  int k0 = 0, kstep = 1;
#endif
  int MN = pc.M * pc.N;
  int batch = 1;
  for (int d = 0; d < pc.brank; d++)
    batch *= pc.bdim[d];
  if (id >= uint(batch * MN))
    return;
  int i = int(id), z = i / MN, m = (i % MN) / pc.N, n = i % pc.N;
  int abase = 0, bbase = 0, rem = z;
  for (int d = pc.brank - 1; d >= 0; d--) {
    int k = rem % pc.bdim[d];
    rem /= pc.bdim[d];
    abase += k * pc.astr[d];
    bbase += k * pc.bstr[d];
  }
  int ap = abase + m * pc.sam, bp = bbase + n * pc.sbn;
  int ch = pc.bias_mode == 1 ? m : n;
#ifdef Q8
  bool xs = (pc.flags & 1) != 0, ws = (pc.flags & 2) != 0;
  int wz = int(qp[pc.N + n]);
  int s = 0;
  for (int k = k0; k < pc.K; k += kstep)
    s += (ld8(in0[ap + k * pc.sak], xs) - pc.xz) *
         (ld8(in1[bp + k * pc.sbk], ws) - wz);
#ifdef GEMV
  red_i[lid] = s;
  barrier();
  for (uint h = 32u; h > 0u; h >>= 1) {
    if (lid < h)
      red_i[lid] += red_i[lid + h];
    barrier();
  }
  if (lid != 0u)
    return;
  s = red_i[0];
#endif
  if (pc.bias_mode != 0)
    s += bias[ch];
  y[i] = requant(s, uintBitsToFloat(qp[ch]), pc.yz, pc.clo, pc.chi);
#else
  float s = 0.0;
  for (int k = k0; k < pc.K; k += kstep)
    s += float(in0[ap + k * pc.sak]) * float(in1[bp + k * pc.sbk]);
#ifdef GEMV
  red_f[lid] = s;
  barrier();
  for (uint h = 32u; h > 0u; h >>= 1) {
    if (lid < h)
      red_f[lid] += red_f[lid + h];
    barrier();
  }
  if (lid != 0u)
    return;
  s = red_f[0];
#endif
  if (pc.bias_mode != 0)
    s += float(bias[ch]);
  s = s < pc.lo ? pc.lo : s;
  s = s > pc.hi ? pc.hi : s;
  y[i] = TO_DT(s);
#endif
}
