// Shared by every shader: element-type variants and index helpers.

// The tile check. vk_ops.c sizes a tiled kernel's grid by the tile that
// variants.def gives it, which meson.build passes here as TILE_M x
// TILE_N; a kernel is tiled where it defines its tile as BM x BN before
// including this file. The two must agree, or the module is not built.
#if defined(BM) && !defined(TILE_M)
#error "a tiled kernel (BM x BN) without its tile in variants.def"
#elif defined(TILE_M) && !defined(BM)
#error "a tile in variants.def for a kernel without BM x BN"
#elif defined(TILE_M) && (TILE_M != BM || TILE_N != BN)
#error "variants.def's tile differs from the kernel's BM x BN"
#endif

//
// Float tensors are stored as float (default) or float16_t (-DF16, needs
// 16-bit storage); arithmetic is always fp32, so f16 results carry one
// rounding at the store, like the CPU target's. Byte tensors (i8/u8) are
// uint8_t buffers (8-bit storage); signedness travels in push constants
// so one module serves i8 and u8.
#if defined(Q8) || defined(BYTES)
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#endif
#ifdef F16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define DT float16_t
#define TO_DT(v) float16_t(v)
// 8 halves packed as one uvec4 (16 bytes, as the f16 GEMM kernels load
// and store their tiles).
uvec4 pk8(float16_t e[8]) {
  return uvec4(packFloat2x16(f16vec2(e[0], e[1])),
               packFloat2x16(f16vec2(e[2], e[3])),
               packFloat2x16(f16vec2(e[4], e[5])),
               packFloat2x16(f16vec2(e[6], e[7])));
}
#else
#define DT float
#define TO_DT(v) (v)
#endif

#if defined(Q8) || defined(BYTES)
// A byte as an int, sign-extended when the tensor is i8.
int ld8(uint8_t v, bool is_signed) {
  int x = int(uint(v));
  return (is_signed && x >= 128) ? x - 256 : x;
}
#endif

// Linear invocation index of a 1-D job dispatched as a 2-D grid (the x
// count is capped at 65535 workgroups). Shaders declare their local size
// before including this file: gl_WorkGroupSize used earlier would be the
// default (1, 1, 1).
uint linear_id() {
  return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) *
             gl_WorkGroupSize.x + gl_LocalInvocationID.x;
}

#ifdef Q8
// The numerics contract's requantisation (docs/numerics.md), as
// src/ops/requant.h has it. requant_out: a rounded v saturated in float,
// then the zero point added as an integer and the activation's clamp
// [clo, chi]; returns the byte to store.
uint8_t requant_out(float v, int yz, int clo, int chi) {
  v = v < -2147418112.0 ? -2147418112.0 : v;
  v = v > 2147418112.0 ? 2147418112.0 : v;
  int q = int(v) + yz;
  q = q < clo ? clo : (q > chi ? chi : q);
  return uint8_t(q & 255);
}

// One int32 -> fp32 conversion, one fp32 multiply (precise: never
// fused), round half to even, then requant_out.
uint8_t requant(int acc, float m, int yz, int clo, int chi) {
  precise float v = float(acc) * m;
  return requant_out(roundEven(v), yz, clo, chi);
}
#endif

float f_inf() { return uintBitsToFloat(0x7f800000u); }

// Compensated (Kahan) summation: s is the running sum, lost what its
// rounding dropped, so the error does not grow with the count (a plain
// f32 sum of 16M values is off by percents); precise keeps the compiler
// from reassociating (t - s) - y away.
void ksum_add(inout float s, inout float lost, float v) {
  precise float y = v - lost;
  precise float t = s + y;
  precise float l = (t - s) - y;
  lost = l;
  s = t;
}
