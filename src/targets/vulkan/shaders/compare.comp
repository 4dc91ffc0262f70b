#version 450
// compare (every function of src/ops/compare.def), where and arg_reduce,
// one output element (arg_reduce: one line) per invocation.
//
// Variants (variants.def): the input type of compare and arg_reduce
// (IN_F32, IN_F16, IN_I32, IN_I64, IN_BOOL), where's element size
// (WHERE alone: 4 bytes as uint, with W64 8 bytes as uvec2, with IN_F16
// float16_t). Inputs are read in their own type, so i64 compares exactly; bool
// is a uint8_t, 0 or 1. arg_reduce's i64 indices are written as two uints
// (low, high = 0: an index is below 2^31), so only an i64 input needs
// shaderInt64.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#define BYTES // bool conditions and outputs are uint8_t
#ifdef IN_F16
#define F16
#endif
#include "common.glsl"
#ifdef IN_I64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif

#if defined(WHERE) && defined(W64)
#define ST uvec2 // where moves elements: 8 bytes as two uints, no int64
#elif defined(WHERE) && !defined(IN_F16)
#define ST uint // bits, never through float (no flush, no NaN quieting)
#elif defined(IN_F16)
#define T float
#define ST float16_t
#elif defined(IN_I32)
#define T int
#define ST int
#elif defined(IN_I64)
#define T int64_t
#define ST int64_t
#elif defined(IN_BOOL)
#define T int
#define ST uint8_t
#else
#define T float
#define ST float
#endif

#include "push_constants.h"
layout(push_constant) uniform PC {
#ifdef ARG
  VK_PC_ARG
#else
  VK_PC_COMPARE
#endif
} pc;

#if defined(ARG)
layout(set = 0, binding = 0) readonly buffer X { ST x[]; };
layout(set = 0, binding = 3) writeonly buffer Y { uint y[]; };
#elif defined(WHERE)
layout(set = 0, binding = 0) readonly buffer C { uint8_t cond[]; };
layout(set = 0, binding = 1) readonly buffer X { ST x[]; };
layout(set = 0, binding = 2) readonly buffer V { ST v[]; };
layout(set = 0, binding = 3) writeonly buffer Y { ST y[]; };
#else
layout(set = 0, binding = 0) readonly buffer A { ST a_[]; };
layout(set = 0, binding = 1) readonly buffer B { ST b_[]; };
layout(set = 0, binding = 3) writeonly buffer Y { uint8_t y[]; };
#endif

#if !defined(ARG) && !defined(WHERE)
// GLSL's isnan and isinf take floats only: the integer variants never
// run these functions, but their lines must compile.
#if defined(IN_I32) || defined(IN_I64) || defined(IN_BOOL)
bool cmp_isnan(T a) { return false; }
bool cmp_isinf(T a) { return false; }
#else
bool cmp_isnan(T a) { return isnan(a); }
bool cmp_isinf(T a) { return isinf(a); }
#endif

// Line k of compare.def is function k (dg_compare_fn counts from 1). A
// one-input function gets a for b (its formula ignores b).
bool apply(int fn, T a, T b) {
  int k = 0;
#define DG_COMPARE(e, name, inputs, takes, formula)                            \
  if (fn == ++k)                                                               \
    return formula;
#include "../../../ops/compare.def"
#undef DG_COMPARE
  return false;
}
#endif

#ifdef ARG
void main() {
  uint id = linear_id();
  if (id >= uint(pc.outer * pc.inner))
    return;
  int i = int(id), inner = pc.inner, len = pc.len;
  int base = (i / inner) * len * inner + i % inner, at = 0;
  bool mx = pc.fn == 1, last = pc.last != 0;
  T best = T(x[base]);
  // arg_reduce.c's scan: replace on strictly better, or equal with last.
  for (int k = 1; k < len; k++) {
    T e = T(x[base + k * inner]);
    if ((mx ? e > best : e < best) || (last && e == best)) {
      best = e;
      at = k;
    }
  }
  y[2 * i] = uint(at);
  y[2 * i + 1] = 0u;
}
#else
void main() {
  uint id = linear_id();
  if (id >= uint(pc.total))
    return;
  int i = int(id);
  int ia = 0, ib = 0, ic = 0, rem = i;
  for (int d = pc.rank - 1; d >= 0; d--) {
    int k = rem % pc.dims[d];
    rem /= pc.dims[d];
    ia += k * pc.sa[d];
    ib += k * pc.sb[d];
    ic += k * pc.sc[d];
  }
#ifdef WHERE
  y[i] = uint(cond[ia]) != 0u ? x[ib] : v[ic];
#else
  y[i] = apply(pc.fn, T(a_[ia]), T(b_[ib])) ? uint8_t(1) : uint8_t(0);
#endif
}
#endif
