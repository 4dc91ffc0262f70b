/* The x86 kernels of conv_direct.c: a tile's sums and their store, per
 * instruction set (AVX-512, AVX2), behind one small table. */
#ifndef DG_CPU_CONV_DIRECT_KERN_H
#define DG_CPU_CONV_DIRECT_KERN_H

#include <stddef.h>
#include <stdint.h>

/* Floats of one tile's sums: at most 28 accumulators of 16. */
#define DG_CPU_DC_ACC (28 * 16)

/* Where a tile's outputs go: y [O][P], r (the residual) NULL or shaped as
 * y, then the clamp [lo, hi]. */
typedef struct dg_cpu_dc_out {
  float *y;
  const float *r;
  int O;
  size_t P;
  float lo, hi;
} dg_cpu_dc_out;

/* A tile's sums: V vectors of output channels by T pixels x[t * S] (S
 * the stride), one fused multiply-add per k of off[0, K) with weights w0
 * (panel rows of the isa's panel width; w1 the next panel, for tiles
 * wider than one), starting from bias (V vectors) or, bias NULL, from
 * acc; into acc [V][T][vector]. */
typedef void (*dg_cpu_dc_tile_fn)(const float *x, const int32_t *off, int K,
                                  const float *w0, const float *w1,
                                  const float *bias, float *acc);

/* A tile's sums into y: channels o0 .. o0 + V vectors (those under O),
 * pixels at .. at + T of each channel's plane, transposed, with the
 * residual and the clamp ((bound, v) order keeps NaN results NaN). */
typedef void (*dg_cpu_dc_store_fn)(const dg_cpu_dc_out *o, const float *acc,
                                   int V, int T, int o0, size_t at);

typedef struct dg_cpu_dc_isa {
  int panel;     /* the sgemm's B panel width the weights come packed in */
  int vec;       /* floats a vector */
  int block;     /* output channels a block: a wide tile's */
  int tw;        /* pixels a wide tile */
  int tw_narrow; /* pixels a narrow tile (half a block or fewer channels
                    left), 0 where there are none */
  int long_rows; /* stride-1 rows over 32 output pixels go straight too
                    (AVX2: its GEMM fills 16-wide pixel panels there, and
                    ResNet's 64@56 ran 0.95x straight) */
  dg_cpu_dc_tile_fn (*tile)(int narrow, int S, int T); /* S 1 or 2 */
  dg_cpu_dc_store_fn store;
} dg_cpu_dc_isa;

/* The kernels for the current SIMD level, where its sgemm panels are the
 * ones they read; else NULL. */
const dg_cpu_dc_isa *dg_cpu_dc_isa_get(void);

#endif
