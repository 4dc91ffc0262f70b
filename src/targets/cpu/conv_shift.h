/* Shifted planes: a convolution's taps read in place, shared by the f32
 * convolution (conv_f32.c) and the int8 one (conv.c).
 *
 * Packing B from an im2col matrix costs a GEMM one extra copy of every
 * tap of every channel. Instead the input is copied once, padded and
 * split into stride phases (as the depthwise kernel does, see
 * depthwise.c): in phase (ph, pw) of channel c, row r and column u hold
 * padded row sh * r + ph and column sw * u + pw. Output pixel (oh, ow),
 * taken at flat column f = oh * q + ow, then reads tap (kh, kw) of
 * channel c at element f + (kh dh / sh) q + kw dw / sw of its phase: B's
 * row k = (c, kh, kw) is one run at a fixed offset
 * (dg_cpu_shift_offsets), which the GEMMs read in place or pack from
 * (dg_cpu_sgemm_args.b_rows, dg_cpu_qgemm_args.b_rows). The q - OW
 * columns each flat row overhangs are computed and dropped when the
 * result is copied out, so the path suits only where they cost little
 * (dg_cpu_shift_suits). Padded taps read the fill value (zero, or the int8 zero
 * point). */
#ifndef DG_CPU_CONV_SHIFT_H
#define DG_CPU_CONV_SHIFT_H

#include "conv_f32.h" /* dg_cpu_conv_shape */

#include <stddef.h>
#include <stdint.h>

/* One image's layout, in elements: the flat row pitch q, rows per phase,
 * a phase's and a channel's elements, and n = OH * q, the GEMM's
 * columns. */
typedef struct dg_cpu_shift {
  int64_t q, rows, plane, cstride, n;
} dg_cpu_shift;

dg_cpu_shift dg_cpu_shift_of(const dg_cpu_conv_shape *s);

/* Whether the layout suits s: one group, strides of 1 or 2, an overhang
 * (q - OW) of at most q / overhang_div and under `max_elems` elements for
 * the copy (the GEMM's column count stays under 2^30). The f32 GEMM
 * reads rows in place and asks 14; the int8 one packs them anyway, where
 * the copy saves im2col's, so asks 3. */
int dg_cpu_shift_suits(const dg_cpu_conv_shape *s, size_t max_elems,
                       int overhang_div);

/* off[k] for k = (c, kh, kw): where B's row k starts in the copy, written
 * from the first 8-byte boundary at or after `at` (the callers' scratch
 * keeps 8 bytes of slack for it, since what precedes may end anywhere);
 * returns off. */
int64_t *dg_cpu_shift_offsets(const dg_cpu_conv_shape *s, const dg_cpu_shift *g,
                              void *at);

/* Channels [c0, c1) of one image x (C x H x W elements of `elem` bytes,
 * 1 or 4) into their phases at xp, the padding filled with the byte
 * `fill` (0 for floats). */
void dg_cpu_shift_fill(const dg_cpu_conv_shape *s, const dg_cpu_shift *g,
                       const void *x, void *xp, size_t elem, uint8_t fill,
                       int c0, int c1);

#endif
