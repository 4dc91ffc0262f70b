/* f32 convolution straight from a padded copy of the image (x86).
 *
 * The implicit GEMMs (conv_f32.c) make output pixels the vector lanes and
 * read each tap of each channel from a different place per K step
 * (packed panels or shifted planes): on ResNet's 3x3 layers they ran at
 * about half the cores' peak. Here the lanes are output channels
 * instead: on AVX-512 a tile is 64 output channels by 7 output pixels of
 * one row (four vectors; where 32 channels or fewer are left, two vectors
 * by 14 pixels), 28 accumulators; on AVX2 16 channels by 6 pixels, 12
 * (conv_direct_kern.c). The weights are packed once as the sgemm's B
 * panels and read in order; each pixel's input is a broadcast
 * from the image's padded copy. A run of up to 8 tiles (across rows,
 * where rows are short) takes K = C x KH x KW in slices of 96, each
 * slice's weights (24 KB) staying in L1 while every tile of the run uses
 * them. The sums are transposed in registers into the image's rows, with
 * the residual, the clamp and the fused function on the way.
 *
 * Bits: each output is the bias, then one fused multiply-add per k =
 * (c, kh, kw) in that order (padding taps add a zero product; sums carried
 * between slices as f32), exactly the sgemm's sequence, so results equal
 * the GEMM paths' bit for bit (test_cpu_kernels checks it).
 *
 * Where no tap falls outside the image (no padding), the image is read
 * in place.
 *
 * Threads: per image, the padded copy by channels, then pieces (a block
 * of 64 output channels, a few output rows) claimed as threads free up. */
#ifndef DG_CPU_CONV_DIRECT_H
#define DG_CPU_CONV_DIRECT_H

#include "conv_f32.h"

#include <stddef.h>

/* Whether s runs here at the current SIMD level: AVX-512 or AVX2 with
 * the sgemm's panels of that level, one group, K >= 64 (shorter sums
 * leave the tiles' fixed costs unpaid), horizontal stride 1 or 2, rows
 * of at least 7 output pixels (on AVX2, at stride 1, at most 32), and a
 * kernel of more than one tap, or a strided 1x1 conv with K >= 512 (ResNet-50's
 * downsampling convs: 512 -> 1024 at 28x28 1.5x and 1024 -> 2048 at 14x14 1.9x
 * faster than the GEMM, but 256 -> 512 at 56x56 1.3x slower; a 1x1 conv with
 * stride 1 is a plain GEMM). */
int dg_cpu_conv_direct_takes(const dg_cpu_conv_shape *s);

/* Scratch floats for one image: the padded copy and the tap offsets. */
size_t dg_cpu_conv_direct_floats(const dg_cpu_conv_shape *s);

/* One image: x [C][H][W], y [O][OH][OW], r NULL or shaped as y, b NULL
 * or O entries; panels the weights as dg_cpu_sgemm_pack_b packs them
 * (N = O, K = C*KH*KW, trans_b: [ceil(O/32)][K][32], zero-padded);
 * scratch dg_cpu_conv_direct_floats(s) floats, 64-byte aligned. pool
 * NULL runs it on the calling thread. */
void dg_cpu_conv_direct(dg_cpu_pool *pool, const dg_cpu_conv_shape *s,
                        const float *x, const float *panels, const float *b,
                        const float *r, float *y, float lo, float hi,
                        const dg_cpu_post *post, float *scratch);

#endif
