#version 450
// The second pass of a split-K cooperative-matrix GEMM or conv
// (gemm_coop.comp with push constant ksplit > 1): each invocation sums the
// ksplit fp32 partials of one output, in slice order (so the result does
// not depend on scheduling), and stores it like the one-pass kernel
// (store_out: bias, activation, one rounding to f16). Same push constants
// as the GEMM pass; -DCONV for convs. Bindings: 2 = bias, 3 = y,
// 4 = partials.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#define F16

layout(local_size_x = 256) in;
#include "common.glsl"
#include "coop_out.glsl"

void main() {
#ifdef CONV
  int Z = pc.G, M = pc.OG, NN = pc.N * pc.OH * pc.OW;
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
  store_out(z, m, n, v);
}
