/* The CPU's depthwise convolution, f32 and int8 (groups == channels, one
 * output channel per group), used by conv.c. */
#ifndef DG_CPU_DEPTHWISE_H
#define DG_CPU_DEPTHWISE_H

#include "ops/epilogue.h" /* dg_conv_geom */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Output columns [lo, hi) of a row of OW whose input column ow * stride +
 * first lies in [0, W) (first: the input column of output 0, pads and
 * the tap's offset included). Every row-wise conv kernel's tap range. */
static inline void dg_cpu_out_cols(int64_t OW, int64_t W, int stride,
                                   int64_t first, int64_t *lo, int64_t *hi) {
  *lo = first >= 0 ? 0 : (-first + stride - 1) / stride;
  *hi = W - first <= 0 ? 0 : (W - first + stride - 1) / stride;
  if (*hi > OW)
    *hi = OW;
  if (*lo > *hi)
    *lo = *hi;
}

/* Whether the banded kernel takes d: its scratch stays bounded
 * (depthwise.c). conv.c sums the rest directly. */
bool dg_cpu_depthwise_fits(const dg_conv_geom *d);
/* Scratch bytes of one plane's call (floats' alignment); 0 unless fits. */
size_t dg_cpu_depthwise_scratch(const dg_conv_geom *d);
/* Before the planes of d on one scratch (f32, or int8 when q8): lays
 * out the scratch and keeps that at its head for the planes' calls. The
 * planes' calls then need only their own data, so one call per task
 * serves all its planes. */
void dg_cpu_depthwise_begin(const dg_conv_geom *d, bool q8, void *scratch);
/* One (image, channel) plane: x [H, W], w [KH, KW], y [OH, OW] =
 * clamp(conv + bias + r, lo, hi), the sum in the reference's order (taps
 * in (kh, kw) order, then the bias, then r): the same bits at every SIMD
 * level. r (a fused residual plane, [OH, OW]) may be NULL. */
void dg_cpu_depthwise_plane(const dg_conv_geom *d, const float *x,
                            const float *w, float bias, const float *r,
                            float *y, float lo, float hi, void *scratch);

/* A block of channels at a time, vectors across them (depthwise_cb.c):
 * width() channels a block (16 on AVX-512, 8 on AVX2, 0 elsewhere),
 * planes up to a tile of 1 MiB, where the banded kernel's per-plane
 * costs dominate. f32: x, w, b (or NULL), r (or NULL) and y start at the
 * block's first channel of one image, nch <= width() channels are read
 * and written. int8: per block, the nch channels' taps less the weight
 * zero points (wv[j * KH * KW + t], each in [-255, 255]), their int32
 * biases and multipliers; up to 258 taps (q8_cb_takes). scratch:
 * cb_scratch bytes, float-aligned. The same bits as the banded kernel. */
typedef struct dg_cpu_dw_q8 {
  bool x_signed;
  int32_t zx, zy, lo, hi;
  const int32_t *wv, *bias;
  const float *mult;
} dg_cpu_dw_q8;
int dg_cpu_depthwise_cb_width(void);
bool dg_cpu_depthwise_cb_takes(const dg_conv_geom *d);
bool dg_cpu_depthwise_q8_cb_takes(const dg_conv_geom *d);
size_t dg_cpu_depthwise_cb_scratch(const dg_conv_geom *d);
void dg_cpu_depthwise_cb(const dg_conv_geom *d, const float *x, const float *w,
                         const float *b, const float *r, float *y, int nch,
                         float lo, float hi, void *scratch);
void dg_cpu_depthwise_q8_cb(const dg_conv_geom *d, const uint8_t *x,
                            const dg_cpu_dw_q8 *q, uint8_t *y, int nch,
                            void *scratch);

/* int8: x and y one plane each (bytes; x i8 when x_signed, else u8), wv
 * the KH * KW taps minus the weight zero point (each in [-255, 255]), then
 * the sums requantised by m to y's zero point zy and clamp [lo, hi],
 * exactly as requant.h does. scratch: dg_cpu_depthwise_q8_scratch(d)
 * bytes (int32 aligned), of which the last KH * KW ints may hold wv
 * itself. Up to 258 taps it runs the banded kernel, beyond that the
 * int32 one (depthwise_q8.c): the same bits. */
size_t dg_cpu_depthwise_q8_scratch(const dg_conv_geom *d);
void dg_cpu_depthwise_q8_plane(const dg_conv_geom *d, const uint8_t *x,
                               bool x_signed, int32_t zx, const int32_t *wv,
                               int32_t bias, float m, int32_t zy, int32_t lo,
                               int32_t hi, uint8_t *y, void *scratch);
/* The int32 kernel, any geometry: its scratch (taps included) and plane. */
size_t dg_cpu_depthwise_q8_int32_scratch(const dg_conv_geom *d);
void dg_cpu_depthwise_q8_int32(const dg_conv_geom *d, const uint8_t *x,
                               bool x_signed, int32_t zx, const int32_t *wv,
                               int32_t bias, float m, int32_t zy, int32_t lo,
                               int32_t hi, uint8_t *y, void *scratch);

#endif
