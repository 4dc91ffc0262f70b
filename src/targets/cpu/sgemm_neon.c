/* The f32 GEMM's NEON microkernel (sgemm_tile.h's contract): up to 8 x
 * 12, 24 accumulators of 4 lanes; per k, three loads of B, two of A (its
 * eight rows' values) and 24 FMAs by lane (fused, as the contract allows
 * f32): 96 multiply-adds in 29 instructions.
 * aarch64 only; sgemm.c picks it at the "neon" level. */
#include "sgemm_tile.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#define AI inline __attribute__((always_inline))

/* A's MR values of one k as two vectors (rows 0-3, 4-7); reads only MR
 * floats, since a panel's last k ends its buffer. */
static AI void load_a(const int MR, const float *a, float32x4_t *a0,
                      float32x4_t *a1) {
  float tmp[8] = {0};
  if (MR == 8) {
    *a0 = vld1q_f32(a);
    *a1 = vld1q_f32(a + 4);
  } else if (MR == 4) {
    *a0 = vld1q_f32(a);
    *a1 = vdupq_n_f32(0.0f);
  } else {
    for (int i = 0; i < MR; i++)
      tmp[i] = a[i];
    *a0 = vld1q_f32(tmp);
    *a1 = vld1q_f32(tmp + 4);
  }
}

/* Row I's three FMAs by lane L of A's vector Q. */
#define FMA_ROW(I, Q, L)                                                       \
  if (MR > I) {                                                                \
    c0[I] = vfmaq_laneq_f32(c0[I], b0, Q, L);                                  \
    c1[I] = vfmaq_laneq_f32(c1[I], b1, Q, L);                                  \
    c2[I] = vfmaq_laneq_f32(c2[I], b2, Q, L);                                  \
  }

/* One k: three loads of B (br), A's values, 3 x MR FMAs. */
#define K_STEP(br)                                                             \
  do {                                                                         \
    float32x4_t b0 = vld1q_f32(br), b1 = vld1q_f32((br) + 4),                  \
                b2 = vld1q_f32((br) + 8), a0, a1;                              \
    load_a(MR, a, &a0, &a1);                                                   \
    FMA_ROW(0, a0, 0)                                                          \
    FMA_ROW(1, a0, 1)                                                          \
    FMA_ROW(2, a0, 2)                                                          \
    FMA_ROW(3, a0, 3)                                                          \
    FMA_ROW(4, a1, 0)                                                          \
    FMA_ROW(5, a1, 1)                                                          \
    FMA_ROW(6, a1, 2)                                                          \
    FMA_ROW(7, a1, 3)                                                          \
  } while (0)

/* The epilogue: the residual, the clamp, and the store of rows 0..mr. */
__attribute__((noinline)) static void kn_store(const ktile *t, int mr,
                                               float (*sums)[DG_CPU_NEON_NR]) {
  float32x4_t lo = vdupq_n_f32(t->lo), hi = vdupq_n_f32(t->hi);
  int full = t->nr == DG_CPU_NEON_NR;
  float row[DG_CPU_NEON_NR];
  for (int i = 0; i < mr; i++) {
    for (int v = 0; v < 3; v++) {
      float32x4_t x = vld1q_f32(sums[i] + 4 * v);
      if (t->res) {
        if (full) {
          x = vaddq_f32(x, vld1q_f32(t->res + i * t->ldr + 4 * v));
        } else {
          float r[4] = {0, 0, 0, 0};
          for (int j = 4 * v; j < 4 * v + 4 && j < t->nr; j++)
            r[j - 4 * v] = t->res[i * t->ldr + j];
          x = vaddq_f32(x, vld1q_f32(r));
        }
      }
      if (t->clamp) /* bound first: a NaN result stays NaN */
        x = vminq_f32(hi, vmaxq_f32(lo, x));
      if (full)
        vst1q_f32(t->c + i * t->ldc + 4 * v, x);
      else
        vst1q_f32(row + 4 * v, x);
    }
    if (!full)
      for (int j = 0; j < t->nr; j++)
        t->c[i * t->ldc + j] = row[j];
  }
}

static AI void kn_body(const int MR, const ktile *t) {
  /* Three arrays indexed only by constants once unrolled, and never
   * addressed: GCC keeps them in registers (a 2-D array passed to a
   * helper stayed in memory, stored on every k). */
  float32x4_t c0[DG_CPU_NEON_MR], c1[DG_CPU_NEON_MR], c2[DG_CPU_NEON_MR];
  /* C rows into accumulators: load_c, a bias, or zero; partial tiles
   * through a zero-padded copy (only nr columns of a row are readable). */
  if (t->nr == DG_CPU_NEON_NR && t->mr >= MR) { /* full tile */
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++) {
      if (t->load_c) {
        c0[i] = vld1q_f32(t->c + i * t->ldc);
        c1[i] = vld1q_f32(t->c + i * t->ldc + 4);
        c2[i] = vld1q_f32(t->c + i * t->ldc + 8);
      } else if (t->bias_row) {
        c0[i] = c1[i] = c2[i] = vdupq_n_f32(t->bias_row[i]);
      } else if (t->bias_col) {
        c0[i] = vld1q_f32(t->bias_col);
        c1[i] = vld1q_f32(t->bias_col + 4);
        c2[i] = vld1q_f32(t->bias_col + 8);
      } else {
        c0[i] = c1[i] = c2[i] = vdupq_n_f32(0.0f);
      }
    }
  } else {
    float init[DG_CPU_NEON_MR][DG_CPU_NEON_NR];
    for (int i = 0; i < MR; i++)
      for (int j = 0; j < DG_CPU_NEON_NR; j++)
        init[i][j] = i >= t->mr || j >= t->nr ? 0.0f
                     : t->load_c              ? t->c[i * t->ldc + j]
                     : t->bias_row            ? t->bias_row[i]
                     : t->bias_col            ? t->bias_col[j]
                                              : 0.0f;
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++) {
      c0[i] = vld1q_f32(init[i]);
      c1[i] = vld1q_f32(init[i] + 4);
      c2[i] = vld1q_f32(init[i] + 8);
    }
  }
  const float *a = t->a, *b = t->b;
  size_t bs = t->bs;
  if (t->nr == DG_CPU_NEON_NR || t->b_padded) {
#pragma GCC unroll 2
    for (int k = 0; k < t->kc; k++, a += MR, b += bs)
      K_STEP(b);
  } else { /* in-place B narrower than a panel: a padded copy per k */
    float tb[DG_CPU_NEON_NR] = {0};
    for (int k = 0; k < t->kc; k++, a += MR, b += bs) {
      for (int j = 0; j < t->nr; j++)
        tb[j] = b[j];
      K_STEP(tb);
    }
  }
  /* Parked, so that the accumulators stay registers in the loop above
   * (indexed by the tile's run-time rows, GCC kept them in memory). */
  float sums[DG_CPU_NEON_MR][DG_CPU_NEON_NR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; i++) {
    vst1q_f32(sums[i], c0[i]);
    vst1q_f32(sums[i] + 4, c1[i]);
    vst1q_f32(sums[i] + 8, c2[i]);
  }
  kn_store(t, MR < t->mr ? MR : t->mr, sums);
}

void dg_cpu_sgemm_kern_neon(const ktile *t) {
  switch (t->mr) {
  case 1:
    kn_body(1, t);
    break;
  case 2:
    kn_body(2, t);
    break;
  case 3:
    kn_body(3, t);
    break;
  case 4:
    kn_body(4, t);
    break;
  case 5:
    kn_body(5, t);
    break;
  case 6:
    kn_body(6, t);
    break;
  case 7:
    kn_body(7, t);
    break;
  default:
    kn_body(8, t);
    break;
  }
}
#endif
