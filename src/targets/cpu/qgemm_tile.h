/* The int8 GEMM's microkernel contract (qgemm.c drives, qgemm_x86.c
 * holds the AVX2 and AVX512-VNNI kernels, qgemm_neon.c the aarch64
 * dot-product one): one tile call with everything
 * its epilogue needs, and the scalar requantisation every kernel must
 * reproduce bit for bit. */
#ifndef DG_CPU_QGEMM_TILE_H
#define DG_CPU_QGEMM_TILE_H

#include "cpu_kernels.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#define DG_X86 1
#endif

/* Bounds applied before float->int conversion so the conversion is
 * defined; anything beyond saturates to the same output anyway. */
#define F_LIM 1073741824.0f

/* One microkernel call plus everything its epilogue needs. */
typedef struct qtile {
  int mr, nr, ng; /* rows, valid columns, K groups */
  const void *a, *b;
  uint8_t *c;
  size_t ldc;
  const uint8_t *arow;             /* direct A: row 0, or NULL (packed) */
  size_t ald;                      /* direct A: bytes between rows */
  uint32_t aflip;                  /* direct A: xor applied to 4 bytes */
  const int32_t *radd, *rra, *rza; /* per row of the tile */
  const float *rmult;              /* per row, or NULL */
  const int32_t *cadd, *czb, *ccb; /* per column of the tile */
  const float *cmult;              /* per column, or NULL */
  int cross_b, cross_a;            /* subtract czb*rra / ccb*rza */
  float mult;
  int32_t czero, qmin, qmax, lo, hi;
} qtile;

typedef void (*qkernel_fn)(const qtile *t);

#define V_ROWS_MAX 32 /* the largest MR of any kernel (AMX's) */
#define AMX_MR 32     /* AMX's rows per tile block, of two tiles */
#define AMX_KG 16     /* AMX's groups of 4 k per tile */

/* Row i of src (K bytes, contiguous in k) becomes dst[g * stride + i] for
 * each group g of 4 k, flipped, zero-padded after K (qgemm.c). */
void dg_cpu_quad_pack_rows(const uint8_t *src, size_t ld, int rows, int K,
                           int ng, uint8_t flip, int32_t *dst, int stride);

/* The scalar definition every path must reproduce. */
static inline int32_t requant_value(const qtile *t, int32_t acc, float m) {
  float f = (float)acc * m;
  f = nearbyintf(f);
  f = f < -F_LIM ? -F_LIM : (f > F_LIM ? F_LIM : f);
  int32_t v = (int32_t)f + t->czero;
  v = v < t->qmin ? t->qmin : (v > t->qmax ? t->qmax : v);
  v = v < t->lo ? t->lo : v;
  return v > t->hi ? t->hi : v;
}

/* requant_value's three clamps as one range of the product before it is
 * rounded and the zero point added: [*flo, *fhi], integers held exactly
 * as floats. The two integer clamps compose into one, [L, H] (each step
 * is monotone); rounding is monotone and keeps integers, so clamping the
 * product to [L - czero, H - czero] and then rounding gives what rounding
 * and then clamping gives, and F_LIM's bound lies outside the range. The
 * vector epilogues take 2 operations for the 6 clamps. */
static inline void requant_bounds(const qtile *t, float *flo, float *fhi) {
  int32_t lo = t->qmin < t->lo ? t->lo : t->qmin;
  lo = lo > t->hi ? t->hi : lo;
  int32_t hi = t->qmax < t->lo ? t->lo : t->qmax;
  hi = hi > t->hi ? t->hi : hi;
  *flo = (float)(lo - t->czero);
  *fhi = (float)(hi - t->czero);
}

static inline int32_t requant(const qtile *t, int i, int j, uint32_t s) {
  s += (uint32_t)t->radd[i] + (uint32_t)t->cadd[j];
  float m = t->rmult ? t->rmult[i] : (t->cmult ? t->cmult[j] : t->mult);
  return requant_value(t, (int32_t)s, m);
}

#ifdef DG_X86
/* qgemm_x86.c: the AVX2 kernel's tile (rows x columns) and the VNNI
 * one's, and the kernels and packing helpers the driver calls. */
#define A2_MR 6
#define A2_NR 16
#define V_MR 14
#define V_NR 32
void dg_cpu_qkern_vnni(const qtile *t);
/* Packs one V_NR-column panel of B for VNNI and AMX: row k of B at
 * src + rows[k] when rows is not NULL, else src + k ldb. */
void dg_cpu_vnni_pack_b32(const uint8_t *src, size_t ldb, const int64_t *rows,
                          int K, int w, uint8_t flip, uint8_t *dst,
                          int32_t *colsum);
void dg_cpu_qkern_vnni_direct(const qtile *t);
void dg_cpu_qkern_avx2(const qtile *t);
/* Packs one A2_NR-column panel of row-major B (or rows at offsets) as the
 * AVX2 kernel reads it, less the columns' zero points (zb: A2_NR). */
void dg_cpu_avx2_pack_b16(const uint8_t *src, size_t ldb, const int64_t *rows,
                          int K, int w, int b_signed, const int16_t *zb,
                          int16_t *dst);
/* AMX-INT8 (level DG_CPU_SIMD_AMX): up to AMX_MR x V_NR, the groups a
 * multiple of AMX_KG; begin loads the tile configuration on the calling
 * thread and end releases it, around a task's kernel calls. */
void dg_cpu_qkern_amx(const qtile *t);
void dg_cpu_amx_begin(void);
void dg_cpu_amx_end(void);
int32_t dg_cpu_vnni_row_sum(const uint8_t *p, int K, uint8_t flip,
                            int as_signed);
#endif

#if defined(__aarch64__)
/* qgemm_neon.c: s8 x s8 quads through sdot, up to 8 x 12; only called
 * when dg_cpu_neon_has_dot() says the core has the instructions. A is
 * packed as for VNNI (int32 quads [ng][mr]); B panels are [ng][12][4]. */
#define DG_DOT_MR 8
#define DG_DOT_NR 12
void dg_cpu_qkern_dot(const qtile *t);
/* Packs B[k, 0..w) of a row-major B (w <= 12, `readable` bytes readable
 * from each row at src) into one panel, flipped by `flip`, with the
 * columns' signed sums. */
void dg_cpu_dot_pack_b12(const uint8_t *src, size_t ldb, int K, int w,
                         int readable, uint8_t flip, uint8_t *dst,
                         int32_t *colsum);
/* Sum of the K bytes at p after xor with `flip`, read as s8. */
int32_t dg_cpu_dot_row_sum(const uint8_t *p, int K, uint8_t flip);
#endif

#endif
