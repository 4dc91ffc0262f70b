// Shared by gemm_coop.comp and splitk.comp: the push constants (the conv's
// with -DCONV, the GEMM's otherwise), the bias and output bindings, and the
// store of one finished fp32 output (bias, activation, one rounding to
// f16) at its place in y. Include after common.glsl with F16 defined.
layout(set = 0, binding = 2) readonly buffer Bias { float16_t bias[]; };
layout(set = 0, binding = 3) writeonly buffer Out { float16_t y[]; };
// Split-K partials (binding 4): [ksplit][Z][M][N] fp32, Z the matrices
// (conv groups or GEMM batch).
layout(set = 0, binding = 4) buffer Part { float part[]; };

// ksplit: slices of K summed by separate workgroups (0 or 1: none).
#ifdef CONV
layout(push_constant) uniform PC {
  int N, C, H, W, O, OH, OW, KH, KW, G, CG, OG;
  int sh, sw, dh, dw, pt, pl;
  int has_bias;
  float lo, hi;
  int ksplit;
} pc;
#else
layout(push_constant) uniform PC {
  int M, N, K;
  int sam, sak, sbk, sbn;
  int bias_mode;
  int brank;
  int bdim[4];
  int astr[4];
  int bstr[4];
  float lo, hi;
  int ksplit;
} pc;
#endif

// Output (m, n) of matrix z (group, or batch index) with value v.
void store_out(int z, int m, int n, float v) {
#ifdef CONV
  int OHW = pc.OH * pc.OW;
  int ch = z * pc.OG + m;
  if (pc.has_bias != 0)
    v += float(bias[ch]);
  int img = n / OHW, p = n - img * OHW;
  int yi = (img * pc.O + ch) * OHW + p;
#else
  if (pc.bias_mode != 0)
    v += float(bias[pc.bias_mode == 1 ? m : n]);
  int yi = (z * pc.M + m) * pc.N + n;
#endif
  v = v < pc.lo ? pc.lo : v;
  v = v > pc.hi ? pc.hi : v;
  y[yi] = float16_t(v);
}
