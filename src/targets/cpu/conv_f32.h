/* f32 convolution (NCHW) as an implicit GEMM: no im2col matrix is ever
 * built; the GEMM packs its B panels straight from a zero-padded copy of
 * the input (or from the input itself when there is no padding). */
#ifndef DG_CPU_CONV_F32_H
#define DG_CPU_CONV_F32_H

#include "cpu_kernels.h"

#include <stddef.h>

typedef struct dg_cpu_conv_shape {
  int N, C, H, W;     /* input */
  int O, OH, OW;      /* output */
  int KH, KW, G;      /* kernel, groups */
  int sh, sw, dh, dw; /* stride, dilation */
  int pt, pl;         /* pads: top, left (the rest follows from OH/OW) */
} dg_cpu_conv_shape;

/* Whether a convolution of N images on `threads` threads gives each
 * thread whole images (small per-image GEMMs cannot be split profitably,
 * and images are independent): at least one image per thread and an even
 * enough split. Shared by the f32 and int8 convolutions. */
int dg_cpu_conv_by_images(int N, int threads);

/* Scratch bytes dg_cpu_conv_f32 needs when run on a pool of `threads`
 * threads (less scratch still works: the GEMM then takes the pool's). */
size_t dg_cpu_conv_f32_scratch(const dg_cpu_conv_shape *s, int threads);

/* Whether dg_cpu_conv_f32 runs s with output pixels as the GEMM's rows
 * and channels as its columns (small planes, one group), at the current
 * SIMD level; its weights are then best packed as B. */
int dg_cpu_conv_f32_by_pixels(const dg_cpu_conv_shape *s);

/* Whether s's weights are best packed as B (dg_cpu_sgemm_pack_b, N = O,
 * trans_b): by pixel rows, or straight from the image (conv_direct.h),
 * which takes them only so. */
int dg_cpu_conv_f32_weights_as_b(const dg_cpu_conv_shape *s);

/* y = post(clamp(conv(x, w) + b + r)) for every image and group. w is
 * [O][C/G][KH][KW] (packs: one dg_cpu_sgemm_pack_a of it per group, or
 * one dg_cpu_sgemm_pack_b (N = O, trans_b) where weights_as_b, or NULL); b is
 * NULL or O entries; r (a fused residual add) NULL or shaped as y; post (a
 * fused unary function) NULL or fn 0 for none. Images are spread over the
 * threads when there are enough of them, else each image's GEMM is. */
void dg_cpu_conv_f32(dg_cpu_pool *pool, const dg_cpu_conv_shape *s,
                     const float *x, const float *w,
                     dg_cpu_sgemm_packed *const *packs, const float *b,
                     const float *r, float *y, float lo, float hi,
                     const dg_cpu_post *post, void *scratch,
                     size_t scratch_bytes);

#endif
