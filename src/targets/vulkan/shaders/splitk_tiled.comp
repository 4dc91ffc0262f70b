#version 450
// The second pass of a split-K tiled f32 GEMM or conv (gemm.comp with push
// constant ksplit > 1): each invocation sums the ksplit fp32 partials of
// one output in slice order (so the result does not depend on
// scheduling), adds the bias and clamps like gemm.comp's epilogue. Same
// push constants as the first pass; -DCONV for convs. Bindings: 2 = bias,
// 3 = y, 4 = partials ([ksplit][Z][M][N] from float pbase, Z the
// matrices: images x groups, or the GEMM's batch).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256) in;
#include "common.glsl"

layout(set = 0, binding = 2) readonly buffer Bias { DT bias[]; };
layout(set = 0, binding = 3) writeonly buffer Out { DT y[]; };
layout(set = 0, binding = 4) readonly buffer Part { float part[]; };

#include "push_constants.h"
#ifdef CONV
layout(push_constant) uniform PC {
  VK_PC_CONV
  VK_PC_SPLITK
} pc;
#else
layout(push_constant) uniform PC {
  VK_PC_GEMM
  VK_PC_SPLITK
} pc;
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
  float v = 0.0;
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
  v += hb ? float(bias[ch]) : 0.0;
  v = v < pc.lo ? pc.lo : v;
  v = v > pc.hi ? pc.hi : v;
  y[ybase + m * NN + n] = TO_DT(v);
}
