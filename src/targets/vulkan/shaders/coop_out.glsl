// Shared by gemm_coop.comp and splitk.comp: the push constants (the conv's
// with -DCONV, the GEMM's otherwise), the bias and output bindings, and the
// store of one finished fp32 output (bias, activation, one rounding to
// f16) at its place in y. Include after common.glsl with F16 defined.
layout(set = 0, binding = 2) readonly buffer Bias { float16_t bias[]; };
layout(set = 0, binding = 3) writeonly buffer Out { float16_t y[]; };
layout(set = 0, binding = 3) writeonly buffer Out4 { uvec2 y4[]; };
layout(set = 0, binding = 3) writeonly buffer Out8 { uvec4 y8[]; };
// A conv's residual (push constant has_res), y's shape and type.
layout(set = 0, binding = 5) readonly buffer Res { float16_t res[]; };
layout(set = 0, binding = 5) readonly buffer Res4 { uvec2 res4[]; };
// Split-K partials (binding 4, from float pbase on: the scratch region
// may start with a pre-pass's copies): [ksplit][Z][M][N] fp32, Z the
// matrices (conv groups or GEMM batch).
layout(set = 0, binding = 4) buffer Part { float part[]; };

#include "push_constants.h"
// ksplit: slices of K summed by separate workgroups (0 or 1: none).
#ifdef CONV
layout(push_constant) uniform PC {
  VK_PC_CONV
  VK_PC_SPLITK
  VK_PC_CBLK // -DCBLK: 1, cblock.comp blocked the weights after xb in
             // scratch (binding 1); 0, binding 1 is the blob vk_ops.c
             // blocked them into once (constant weights)
} pc;
#else
layout(push_constant) uniform PC {
  VK_PC_GEMM
  VK_PC_SPLITK
} pc;
#endif
#ifdef CONV
#include "conv_post.glsl"
#endif

// Index in y of output (m, n) of matrix z (group, or batch index).
int out_index(int z, int m, int n) {
#ifdef CONV
  int OHW = pc.OH * pc.OW;
  int img = n / OHW, p = n - img * OHW;
  return (img * pc.O + z * pc.OG + m) * OHW + p;
#else
  return (z * pc.M + m) * pc.N + n;
#endif
}

// The activation's clamp, NaN passing through.
vec4 act4(vec4 v) {
  v = mix(v, vec4(pc.lo), lessThan(v, vec4(pc.lo)));
  return mix(v, vec4(pc.hi), greaterThan(v, vec4(pc.hi)));
}

// Output (m, n) of matrix z with value v: bias, a conv's residual,
// activation, a conv's fused function, one rounding to f16.
void store_out(int z, int m, int n, float v) {
#ifdef CONV
  if (pc.has_bias != 0)
    v += float(bias[z * pc.OG + m]);
  if (pc.has_res != 0)
    v += float(res[out_index(z, m, n)]);
#else
  if (pc.bias_mode != 0)
    v += float(bias[pc.bias_mode == 1 ? m : n]);
#endif
#ifdef CONV
  y[out_index(z, m, n)] = float16_t(conv_post(act4(vec4(v)).x));
#else
  y[out_index(z, m, n)] = float16_t(act4(vec4(v)).x);
#endif
}

// Outputs (m, n .. n+3) of matrix z, all four within the matrix: as
// store_out, but with one bias load and one 8-byte store where the four
// land contiguous and aligned (in one image, for convs). The per-output
// division and 2-byte stores were a visible part of short-K convs' time
// (ResNet-50's 64@56).
void store_out4(int z, int m, int n, vec4 v) {
#ifdef CONV
  if (pc.has_bias != 0)
    v += float(bias[z * pc.OG + m]);
  int OHW = pc.OH * pc.OW;
  int img = n / OHW, p = n - img * OHW;
  int yi = (img * pc.O + z * pc.OG + m) * OHW + p;
  bool vec = p + 3 < OHW && (yi & 3) == 0;
  if (pc.has_res != 0 && vec) {
    uvec2 r = res4[yi >> 2];
    v += vec4(unpackFloat2x16(r.x), unpackFloat2x16(r.y));
  } else if (pc.has_res != 0) {
    [[unroll]] for (int e = 0; e < 4; e++)
      v[e] += float(res[out_index(z, m, n + e)]);
  }
#else
  if (pc.bias_mode == 1)
    v += float(bias[m]);
  else if (pc.bias_mode == 2)
    v += vec4(bias[n], bias[n + 1], bias[n + 2], bias[n + 3]);
  int yi = out_index(z, m, n);
  bool vec = (yi & 3) == 0;
#endif
  v = act4(v);
#ifdef CONV
  // a loop kept rolled: one copy of the function's code a call site
  if (pc.post_fn != 0)
    [[dont_unroll]] for (int e = 0; e < 4; e++) v[e] = conv_post(v[e]);
#endif
  if (vec) {
    y4[yi >> 2] =
        uvec2(packFloat2x16(f16vec2(v.xy)), packFloat2x16(f16vec2(v.zw)));
  } else {
    [[unroll]] for (int e = 0; e < 4; e++)
      y[out_index(z, m, n + e)] = float16_t(v[e]);
  }
}

#ifndef CONV
// Outputs (m, n .. n+7) of GEMM matrix z, all eight within the matrix: as
// store_out4, with one 16-byte store where they land aligned and take no
// bias (with the bias added here as well, the kernel's code grew by a
// seventh and 4096^3 took 522 us against 516).
void store_out8(int z, int m, int n, vec4 a, vec4 b) {
  int yi = out_index(z, m, n);
  if ((yi & 7) != 0 || pc.bias_mode != 0) {
    store_out4(z, m, n, a);
    store_out4(z, m, n + 4, b);
    return;
  }
  a = act4(a);
  b = act4(b);
  y8[yi >> 3] =
      uvec4(packFloat2x16(f16vec2(a.xy)), packFloat2x16(f16vec2(a.zw)),
            packFloat2x16(f16vec2(b.xy)), packFloat2x16(f16vec2(b.zw)));
}
#endif
