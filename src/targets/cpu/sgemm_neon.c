/* The f32 GEMM's NEON microkernel (sgemm_tile.h's contract): up to 8 x
 * 12, 24 accumulators of 4 lanes; per k, three loads of B, one broadcast
 * of A per row, three FMAs per row (fused, as the contract allows f32).
 * aarch64 only; sgemm.c picks it at the "neon" level. */
#include "sgemm_tile.h"

#if defined(__aarch64__)
#include <arm_neon.h>

/* C rows into accumulators: load_c, a bias, or zero; partial tiles
 * through a zero-padded copy (only nr columns of a row are readable). */
static inline __attribute__((always_inline)) void
kn_init(const int MR, const ktile *t, float32x4_t c[][3]) {
  float row[DG_CPU_NEON_NR];
  for (int i = 0; i < MR; i++) {
    for (int j = 0; j < DG_CPU_NEON_NR; j++)
      row[j] = 0.0f;
    if (i < t->mr)
      for (int j = 0; j < t->nr; j++)
        row[j] = t->load_c     ? t->c[i * t->ldc + j]
                 : t->bias_row ? t->bias_row[i]
                 : t->bias_col ? t->bias_col[j]
                               : 0.0f;
    for (int v = 0; v < 3; v++)
      c[i][v] = vld1q_f32(row + 4 * v);
  }
}

static inline __attribute__((always_inline)) void kn_body(const int MR,
                                                          const ktile *t) {
  float32x4_t c[DG_CPU_NEON_MR][3];
  kn_init(MR, t, c);
  const float *a = t->a, *b = t->b;
  size_t bs = t->bs;
  int full = t->nr == DG_CPU_NEON_NR;
  float tb[DG_CPU_NEON_NR] = {0};
  for (int k = 0; k < t->kc; k++, a += MR, b += bs) {
    const float *br = b;
    if (!full) { /* in-place B narrower than a panel */
      for (int j = 0; j < t->nr; j++)
        tb[j] = b[j];
      br = tb;
    }
    float32x4_t b0 = vld1q_f32(br), b1 = vld1q_f32(br + 4),
                b2 = vld1q_f32(br + 8);
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++) {
      float32x4_t av = vld1q_dup_f32(a + i);
      c[i][0] = vfmaq_f32(c[i][0], av, b0);
      c[i][1] = vfmaq_f32(c[i][1], av, b1);
      c[i][2] = vfmaq_f32(c[i][2], av, b2);
    }
  }
  float32x4_t lo = vdupq_n_f32(t->lo), hi = vdupq_n_f32(t->hi);
  float row[DG_CPU_NEON_NR];
  for (int i = 0; i < MR && i < t->mr; i++) {
    for (int v = 0; v < 3; v++) {
      float32x4_t x = c[i][v];
      if (t->res) {
        float r[4] = {0, 0, 0, 0};
        for (int j = 4 * v; j < 4 * v + 4 && j < t->nr; j++)
          r[j - 4 * v] = t->res[i * t->ldr + j];
        x = vaddq_f32(x, vld1q_f32(r));
      }
      if (t->clamp) /* bound first: a NaN result stays NaN */
        x = vminq_f32(hi, vmaxq_f32(lo, x));
      vst1q_f32(row + 4 * v, x);
    }
    for (int j = 0; j < t->nr; j++)
      t->c[i * t->ldc + j] = row[j];
  }
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
