// A conv's fused unary function (ops/epilogue.h's dg_conv_post_unary,
// runtime/fuse_unary.h): push constant post_fn (a dg_unary_fn, 0: none)
// with post_a and post_b, applied to the clamped output in fp32 before
// its rounding to the storage type, as the CPU applies it. Include after
// the convs' push-constant block (VK_PC_CONV).
#include "unary_math.glsl"
#define UNARY_FUSES_ONLY
#include "unary_fn.glsl"
#undef UNARY_FUSES_ONLY

float conv_post(float v) {
  return pc.post_fn != 0 ? unary(pc.post_fn, v, pc.post_a, pc.post_b) : v;
}
