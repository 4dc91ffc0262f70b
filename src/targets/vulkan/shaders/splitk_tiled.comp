#version 450
// The second pass of a split-K tiled GEMM or conv (gemm.comp with push
// constant ksplit > 1): each invocation sums the ksplit partials of one
// output in slice order (so the result does not depend on scheduling) and
// finishes it like gemm.comp's epilogue: bias and clamp (f32), or bias and
// requantisation of the exact int32 sum (-DQ8: bit-exact with the
// one-pass kernel). Same push constants as the first pass; -DCONV for
// convs. Partials [ksplit][Z][M][N] from pbase, Z the matrices (images x
// groups, or the GEMM's batch). Bindings: 2 = bias, 3 = y; f32: 4 =
// partials, 5 = a conv's residual; -DQ8: 0 = partials, 4 = the
// per-channel parameters.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256) in;
#include "common.glsl"

#ifdef Q8
#define ACC int
layout(set = 0, binding = 0) readonly buffer Part { int part[]; };
layout(set = 0, binding = 2) readonly buffer Bias { int bias[]; };
layout(set = 0, binding = 3) writeonly buffer Out { uint8_t y[]; };
layout(set = 0, binding = 4) readonly buffer QP { uint qp[]; };
#define VK_PC_TAIL VK_PC_Q8 VK_PC_SPLITK
#else
#define ACC float
layout(set = 0, binding = 2) readonly buffer Bias { DT bias[]; };
layout(set = 0, binding = 3) writeonly buffer Out { DT y[]; };
layout(set = 0, binding = 4) readonly buffer Part { float part[]; };
layout(set = 0, binding = 5) readonly buffer Res { DT res[]; };
#define VK_PC_TAIL VK_PC_SPLITK
#endif

#include "push_constants.h"
#ifdef CONV
layout(push_constant) uniform PC {
  VK_PC_CONV
  VK_PC_TAIL
} pc;
#else
layout(push_constant) uniform PC {
  VK_PC_GEMM
  VK_PC_TAIL
} pc;
#endif
#if defined(CONV) && !defined(Q8)
#include "conv_post.glsl"
#endif

void main() {
#ifdef CONV
  int Z = pc.N * pc.G, M = pc.OG, NN = pc.OH * pc.OW;
#else
  int Z = 1, M = pc.M, NN = pc.N;
  for (int d = 0; d < pc.brank; d++)
    Z *= pc.bdim[d];
#endif
  int i = int(linear_id());
  if (i >= Z * M * NN)
    return;
  int z = i / (M * NN), r = i - z * M * NN;
  int m = r / NN, n = r - m * NN;
  ACC v = ACC(0);
  for (int s = 0; s < pc.ksplit; s++)
    v += part[pc.pbase + ((s * Z + z) * M + m) * NN + n];
#ifdef CONV
  int img = z / pc.G, g = z % pc.G;
  int ch = g * pc.OG + m, ybase = (img * pc.O + g * pc.OG) * NN;
  bool hb = pc.has_bias != 0;
#else
  int ch = pc.bias_mode == 1 ? m : n, ybase = z * M * NN;
  bool hb = pc.bias_mode != 0;
#endif
#ifdef Q8
  v += hb ? bias[ch] : 0;
  y[ybase + m * NN + n] =
      requant(v, uintBitsToFloat(qp[ch]), pc.yz, pc.clo, pc.chi);
#else
  v += hb ? float(bias[ch]) : 0.0;
#ifdef CONV
  if (pc.has_res != 0)
    v += float(res[ybase + m * NN + n]);
#endif
  v = v < pc.lo ? pc.lo : v;
  v = v > pc.hi ? pc.hi : v;
#ifdef CONV
  v = conv_post(v);
#endif
  y[ybase + m * NN + n] = TO_DT(v);
#endif
}
