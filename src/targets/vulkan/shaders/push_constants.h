/* The push-constant layouts, written once for the shaders and vk_ops.c
 * (as kernels/geom.h is for OpenCL). Each macro is a list of member
 * declarations that is both GLSL and C: every shader builds its
 * layout(push_constant) block from these lists, and vk_internal.h lays the
 * same lists out as the C structs vk_ops.c fills (vk_push), so the two
 * sides cannot disagree on where a value is.
 *
 * The layouts stay identical on both sides because they hold only 32-bit
 * int and float scalars and arrays of them: std430 (the push-constant
 * rule) and C both put these at 4 bytes each, in order, with no padding
 * (vk_internal.h asserts the sizes and that every layout fits
 * VK_PUSH_BYTES). A vector or a 64-bit member would break the
 * correspondence; C rejects GLSL's vector types by name.
 *
 * A block is a base list and, where the kernel needs one, a tail after
 * it. Members unused by a kernel stay 0 (vk_work is zeroed). */
#ifndef DG_VK_PUSH_CONSTANTS_H
#define DG_VK_PUSH_CONSTANTS_H

/* Convolutions: gemm.comp and gemm_big.comp with -DCONV, conv_direct.comp,
 * im2col.comp, cblock.comp, coop_out.glsl with -DCONV. x is N x C x H x W,
 * the weights O x CG x KH x KW in G groups of OG; sh sw strides, dh dw
 * dilations, pt pl the top and left padding; has_res 1 where binding 5
 * holds a residual of y's shape and type, added after the bias (float
 * convs: ops/epilogue.h's dg_conv_residual); lo hi the activation's
 * clamp; post_fn, post_a, post_b the fused unary function applied after
 * it (float convs: dg_conv_post_unary; 0 none, conv_post.glsl). */
#define VK_PC_CONV                                                             \
  int N, C, H, W, O, OH, OW, KH, KW, G, CG, OG;                                \
  int sh, sw, dh, dw, pt, pl;                                                  \
  int has_bias, has_res;                                                       \
  float lo, hi;                                                                \
  int post_fn;                                                                 \
  float post_a, post_b;

/* GEMMs: gemm.comp, gemm_big.comp, gemm_direct.comp, coop_out.glsl.
 * A[m][k] = in0[abase + m*sam + k*sak], B[k][n] = in1[bbase + k*sbk +
 * n*sbn]; bias_mode 0: none, 1: per row, 2: per column. The batch
 * decomposes over brank (up to 4) broadcast dims bdim with per-dim
 * strides (in elements) astr for a and bstr for b. */
#define VK_PC_GEMM                                                             \
  int M, N, K;                                                                 \
  int sam, sak, sbk, sbn;                                                      \
  int bias_mode;                                                               \
  int brank;                                                                   \
  int bdim[4];                                                                 \
  int astr[4];                                                                 \
  int bstr[4];                                                                 \
  float lo, hi;

/* Tail of the int8 convs and GEMMs (gemm.comp, conv_direct.comp,
 * gemm_direct.comp, which declare it in every build; the float builds
 * leave it unused): the input's zero point, flags (bit 0 x is i8, bit 1
 * w is, bit 2 y is; else u8), the output's zero point and the
 * requantised clamp [clo, chi]. */
#define VK_PC_Q8 int xz, flags, yz, clo, chi;

/* Tail of the cooperative-matrix kernels (coop_out.glsl, and cblock.comp
 * for the same layout): ksplit slices of K summed by separate workgroups
 * (0 or 1: none), their fp32 partials from float pbase of binding 4. */
#define VK_PC_SPLITK int ksplit, pbase;

/* ... and after it, for the convs: wblk, 1 where cblock.comp blocks the
 * weights into scratch, 0 where vk_ops.c blocked constant weights into the
 * parameter blob once. */
#define VK_PC_CBLK int wblk;

/* pool.comp: NC planes of H x W into OH x OW, kernel kh x kw, strides sh
 * sw, padding pt pl pb pr; is_max, count_include_pad, flags (bit 0: i8);
 * dilations dh dw. */
#define VK_PC_POOL                                                             \
  int NC, H, W, OH, OW, kh, kw, sh, sw, pt, pl, pb, pr;                        \
  int is_max, count_include_pad, flags, dh, dw;

/* gap.comp: NC planes of HW elements. */
#define VK_PC_GAP int NC, HW, G, CH;

/* softmax.comp: outer x len x inner, along len; log_out 1 for
 * log_softmax (x - max - log sum). */
#define VK_PC_SOFTMAX int outer, len, inner, log_out;

/* reduce.comp: fn (a dg_reduce_fn), outputs of count elements each, the
 * kept and reduced dims and strides of dg_reduce_shape (padded to 3 with
 * dims 1, strides 0); per_inv 1: one output per invocation. */
#define VK_PC_REDUCE                                                           \
  int fn, outputs, count, per_inv;                                             \
  int kdim[3];                                                                 \
  int kstr[3];                                                                 \
  int rdim[3];                                                                 \
  int rstr[3];

/* layer_norm.comp: rows of len; the row's dims (padded to 6 with 1 in
 * front) and the broadcast strides of scale (ss) and bias (sb); sfull,
 * bfull 1 where the tensor has len elements (indexed directly). */
#define VK_PC_LAYER_NORM                                                       \
  int rows, len, sfull, bfull, has_bias;                                       \
  float epsilon;                                                               \
  int dims[6];                                                                 \
  int ss[6];                                                                   \
  int sb[6];

/* binary.comp: total outputs, fn the dg_binary_fn (add is fn 1), rank
 * dims of the output, element strides sa and sb of the broadcast inputs
 * (0 on broadcast axes). */
#define VK_PC_BINARY                                                           \
  int total, fn, rank;                                                         \
  int dims[6];                                                                 \
  int sa[6];                                                                   \
  int sb[6];

/* unary.comp: total elements, fn the dg_unary_fn, alpha and beta its
 * parameters. */
#define VK_PC_UNARY                                                            \
  int total, fn;                                                               \
  float alpha, beta;
/* compare.comp (compare, where): total outputs, fn the dg_compare_fn,
 * rank dims of the output, element strides sa, sb, sc of the broadcast
 * inputs (0 on broadcast axes; where's cond, x, y). */
#define VK_PC_COMPARE                                                          \
  int total, fn, rank;                                                         \
  int dims[6];                                                                 \
  int sa[6];                                                                   \
  int sb[6];                                                                   \
  int sc[6];

/* compare.comp -DARG: outer x len x inner, along len; fn the dg_arg_fn;
 * last: select_last_index. */
#define VK_PC_ARG int outer, len, inner, fn, last;

/* quantize.comp: total elements, per_channel over chans channels inner
 * elements apart (else scale and zero), clamped to [lo, hi]. */
#define VK_PC_QUANTIZE                                                         \
  int total, inner, chans, per_channel, lo, hi;                                \
  float scale;                                                                 \
  int zero;

/* dequantize.comp: as quantize, with flags (bit 0: the input is i8). */
#define VK_PC_DEQUANTIZE                                                       \
  int total, inner, chans, per_channel, flags;                                 \
  float scale;                                                                 \
  int zero;

/* movement.comp: rank | mode << 8 (0-3 the pad modes of a view, 4
 * gather) and the pad constant's bits; per output axis its dims and the
 * view's start, step, extent and input stride (src/ops/view.h). Gather:
 * dims = {inner, count, len, outer}. */
#define VK_PC_VIEW                                                             \
  int rank_mode, fill;                                                         \
  int dims[6];                                                                 \
  int start[6];                                                                \
  int step[6];                                                                 \
  int extent[6];                                                               \
  int stride[6];
/* resize.comp: NC planes of H x W into OH x OW; linear 0 nearest, 1
 * bilinear (the taps are in binding 4). */
#define VK_PC_RESIZE int NC, H, W, OH, OW, linear;

/* batch_norm.comp: total elements of C channels, inner apart; eps. */
#define VK_PC_BNORM                                                            \
  int total, C, inner;                                                         \
  float eps;

/* cast.comp: total elements. */
#define VK_PC_CAST int total;

/* qbinary.comp: total outputs, rank dims of the output and the element
 * strides sa, sb of the broadcast inputs (as binary.comp's); mul 1 for
 * MUL (else ADD or SUB); flags bit 0 a is i8, bit 1 b is (else u8); the
 * zero points, the output's range [lo, hi] and the host factors fa, fb
 * (dg_qbinary_factors). */
#define VK_PC_QBINARY                                                          \
  int total, rank, mul, flags;                                                 \
  int dims[6];                                                                 \
  int sa[6];                                                                   \
  int sb[6];                                                                   \
  int za, zb, zy, lo, hi;                                                      \
  float fa, fb;

/* lookup.comp: total elements; flip 0x80 for an i8 x, 0 for u8. */
#define VK_PC_LOOKUP int total, flip;

/* qavg_pool.comp: after VK_PC_POOL (pool.comp's geometry and flags, as
 * for an avg pool, so that one host setup fills both), x's and y's zero
 * points, y's range [lo, hi], and n0, the least divisor, whose multiplier
 * is entry 0 of binding 4. */
#define VK_PC_QPOOL int xz, yz, lo, hi, n0;

#endif
