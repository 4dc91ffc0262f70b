/* The CPU's f32 depthwise convolution (groups == channels, one output
 * channel per group), used by conv.c. */
#ifndef DG_CPU_DEPTHWISE_H
#define DG_CPU_DEPTHWISE_H

#include "ops/epilogue.h" /* dg_conv_geom */

#include <stdbool.h>

/* Whether the fast kernel takes d (an output row fits its accumulator). */
bool dg_cpu_depthwise_fits(const dg_conv_geom *d);
/* One (image, channel) plane: x [H, W], w [KH, KW], y [OH, OW] =
 * clamp(conv + bias, lo, hi), the sum in the reference's order. */
void dg_cpu_depthwise_plane(const dg_conv_geom *d, const float *x,
                            const float *w, float bias, float *y, float lo,
                            float hi);

#endif
