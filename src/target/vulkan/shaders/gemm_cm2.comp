#version 450
// fp16 GEMM through workgroup-scope cooperative matrices
// (GL_NV_cooperative_matrix2 on top of GL_KHR_cooperative_matrix): the
// whole workgroup owns one BM x BN fp32 accumulator and multiplies BM x BK
// by BK x BN fp16 tiles loaded with tensor addressing; the driver stages
// the tiles through shared memory and picks the tensor-core instructions,
// which is what makes this path fast where subgroup-scope 16x16 fragments
// (gemm_coop.comp) are not. C = act(A B + bias), one rounding to f16.
//   A[m][k] = in0[abase + m*sam + k]       (k-contiguous)
//   B[k][n] = in1[bbase + k*sbk + n]       (n-contiguous), or
//   B[k][n] = in1[bbase + n*sbn + k]       (k-contiguous, FLAGS bit 2)
//   -DCONV: A = the weights W[OG][CG*KH*KW] of group z, B the implicit
//   im2col of x (batch folded into n = (image, oh, ow)) gathered by a
//   decode function, and the epilogue stores NCHW itself.
// Tiles wholly inside the matrices load unclamped; edge tiles through
// clamp-to-zero layouts, and the store clips to M x N. vk_ops.c selects it
// only where the device has the features (vk_device.c) and the operands
// have unit inner strides; it knows BM and BN (VK_CM2_BM, VK_CM2_BN).
// Needs a glslang with GL_NV_cooperative_matrix2 (meson option
// glslang_cm2); built without one, the library has no such module.
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_EXT_buffer_reference : require

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 256
#endif
#ifndef BK
#define BK 64
#endif
layout(local_size_x = 256) in;

layout(constant_id = 0) const int FLAGS = 0;
const bool BKC = (FLAGS & 4) != 0;

layout(set = 0, binding = 0) readonly buffer In0 { float16_t in0[]; };
layout(set = 0, binding = 1) readonly buffer In1 { float16_t in1[]; };
layout(set = 0, binding = 2) readonly buffer Bias { float16_t bias[]; };
layout(set = 0, binding = 3) writeonly buffer Out { float16_t y[]; };

#ifdef CONV
layout(push_constant) uniform PC {
  int N, C, H, W, O, OH, OW, KH, KW, G, CG, OG;
  int sh, sw, dh, dw, pt, pl;
  int has_bias;
  float lo, hi;
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
} pc;
#endif

#define ACC coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>
#define OUT coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>
#define MA coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA>
#define MB coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB>

#ifdef CONV
layout(buffer_reference, std430, buffer_reference_align = 2) buffer HalfRef {
  float16_t v;
};

// B[k][n] of the implicit im2col for this workgroup's group (the
// reference the load passes is not used: the element is found from its
// coordinates; decode functions take no extra arguments).
float16_t im2col(const in HalfRef ref, const in uint32_t bc[2],
                 const in uint32_t ib[2]) {
  uint g = gl_WorkGroupID.z;
  int k = int(bc[0]), n = int(bc[1]);
  int khw = pc.KH * pc.KW, OHW = pc.OH * pc.OW;
  int c = k / khw, r = k - c * khw;
  int kh = r / pc.KW, kw = r - kh * pc.KW;
  int img = n / OHW, p = n - img * OHW;
  int oh = p / pc.OW, ow = p - oh * pc.OW;
  int ih = oh * pc.sh - pc.pt + kh * pc.dh;
  int iw = ow * pc.sw - pc.pl + kw * pc.dw;
  if (ih < 0 || ih >= pc.H || iw < 0 || iw >= pc.W)
    return float16_t(0);
  return in0[((img * pc.C + int(g) * pc.CG + c) * pc.H + ih) * pc.W + iw];
}

// Bias, activation and the NCHW store of output (channel m0 + r of group
// g, pixel n0 + c of the folded batch).
float epilogue(const in uint32_t r, const in uint32_t c, const in float v,
               const in uint32_t m0, const in uint32_t n0, const in uint32_t g) {
  int m = int(m0 + r), n = int(n0 + c);
  int OHW = pc.OH * pc.OW;
  if (m < pc.OG && n < pc.N * OHW) {
    int ch = int(g) * pc.OG + m;
    float x = v + (pc.has_bias != 0 ? float(bias[ch]) : 0.0);
    int img = n / OHW, p = n - img * OHW;
    y[(img * pc.O + ch) * OHW + p] = float16_t(clamp(x, pc.lo, pc.hi));
  }
  return v;
}
#else
// Bias and activation per element (r, c inside the tile at m0, n0).
float epilogue(const in uint32_t r, const in uint32_t c, const in float v,
               const in uint32_t m0, const in uint32_t n0) {
  float x = v;
  if (pc.bias_mode == 1 && int(m0 + r) < pc.M)
    x += float(bias[m0 + r]);
  else if (pc.bias_mode == 2 && int(n0 + c) < pc.N)
    x += float(bias[n0 + c]);
  return clamp(x, pc.lo, pc.hi);
}

#endif

#ifdef CONV
void main() {
  uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
  uint g = gl_WorkGroupID.z;
  uint M = uint(pc.OG), NN = uint(pc.N * pc.OH * pc.OW);
  uint K = uint(pc.CG * pc.KH * pc.KW);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> la =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lb =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  la = setTensorLayoutDimensionNV(la, M, K);
  la = setTensorLayoutStrideNV(la, K, 1);
  lb = setTensorLayoutDimensionNV(lb, K, NN);
  ACC acc = ACC(0.0);
  for (uint k0 = 0; k0 < K; k0 += BK) {
    MA a;
    MB b;
    coopMatLoadTensorNV(a, in1, g * M * K,
                        sliceTensorLayoutNV(la, m0, BM, k0, BK));
    coopMatLoadTensorNV(b, in0, 0, sliceTensorLayoutNV(lb, k0, BK, n0, BN),
                        im2col);
    acc = coopMatMulAdd(a, b, acc);
  }
  coopMatPerElementNV(acc, acc, epilogue, m0, n0, g);
}
#else
void main() {
  uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
  int z = int(gl_WorkGroupID.z);
  uint M = uint(pc.M), N = uint(pc.N), K = uint(pc.K);
  int abase = 0, bbase = 0, rem = z;
  for (int d = pc.brank - 1; d >= 0; d--) {
    int i = rem % pc.bdim[d];
    rem /= pc.bdim[d];
    abase += i * pc.astr[d];
    bbase += i * pc.bstr[d];
  }

  tensorLayoutNV<2> la = createTensorLayoutNV(2);
  tensorLayoutNV<2> lb = createTensorLayoutNV(2);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lac =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lbc =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> ly =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  la = setTensorLayoutDimensionNV(la, M, K);
  lac = setTensorLayoutDimensionNV(lac, M, K);
  la = setTensorLayoutStrideNV(la, uint(pc.sam), 1);
  lac = setTensorLayoutStrideNV(lac, uint(pc.sam), 1);
  // B k-contiguous is stored as the N x K matrix B^T and loaded through a
  // transposing view.
  uint bs = uint(BKC ? pc.sbn : pc.sbk);
  lb = setTensorLayoutDimensionNV(lb, BKC ? N : K, BKC ? K : N);
  lbc = setTensorLayoutDimensionNV(lbc, BKC ? N : K, BKC ? K : N);
  lb = setTensorLayoutStrideNV(lb, bs, 1);
  lbc = setTensorLayoutStrideNV(lbc, bs, 1);
  ly = setTensorLayoutDimensionNV(ly, M, N);
  ly = setTensorLayoutStrideNV(ly, N, 1);
  tensorViewNV<2, false, 1, 0> tv = createTensorViewNV(2, false, 1, 0);

  ACC acc = ACC(0.0);
  bool inside = m0 + BM <= M && n0 + BN <= N && K % BK == 0;
  if (inside) {
    for (uint k0 = 0; k0 < K; k0 += BK) {
      MA a;
      MB b;
      coopMatLoadTensorNV(a, in0, abase, sliceTensorLayoutNV(la, m0, BM, k0, BK));
      if (BKC)
        coopMatLoadTensorNV(b, in1, bbase,
                            sliceTensorLayoutNV(lb, n0, BN, k0, BK), tv);
      else
        coopMatLoadTensorNV(b, in1, bbase,
                            sliceTensorLayoutNV(lb, k0, BK, n0, BN));
      acc = coopMatMulAdd(a, b, acc);
    }
  } else {
    for (uint k0 = 0; k0 < K; k0 += BK) {
      MA a;
      MB b;
      coopMatLoadTensorNV(a, in0, abase,
                          sliceTensorLayoutNV(lac, m0, BM, k0, BK));
      if (BKC)
        coopMatLoadTensorNV(b, in1, bbase,
                            sliceTensorLayoutNV(lbc, n0, BN, k0, BK), tv);
      else
        coopMatLoadTensorNV(b, in1, bbase,
                            sliceTensorLayoutNV(lbc, k0, BK, n0, BN));
      acc = coopMatMulAdd(a, b, acc);
    }
  }
  coopMatPerElementNV(acc, acc, epilogue, m0, n0);
  OUT o = OUT(acc);
  coopMatStoreTensorNV(o, y, uint(z) * M * N,
                       sliceTensorLayoutNV(ly, m0, BM, n0, BN));
}
#endif
