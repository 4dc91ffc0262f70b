/* The int8 GEMM's aarch64 microkernel (qgemm_tile.h's contract): signed
 * x signed quads through the dot-product instructions (sdot, ARMv8.2's
 * DotProd; the RK3588's Cortex-A76 and A55 have it), up to 8 x 12, with
 * the packing helpers the driver calls. qgemm.c picks it only when the
 * kernel reports the feature (dg_cpu_neon_has_dot), so this file alone
 * is compiled for it and nothing here runs on a core without it.
 *
 * Per group of four k: three loads of B (12 columns x 4 k), one or two of
 * A (up to 8 rows x 4 k) and 24 sdots, each of which adds four products
 * to each of four sums: 16 multiply-adds an instruction. */
#define _POSIX_C_SOURCE 200809L
#include "qgemm_tile.h"

#include <string.h>

#if defined(__aarch64__)
#include <arm_neon.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#define DOT __attribute__((target("dotprod")))
#else
#define DOT __attribute__((target("arch=armv8.2-a+dotprod")))
#endif
#define AI inline __attribute__((always_inline))

/* n (1-4) rows' quads from a, zero above; reads only those n quads. */
static AI int8x16_t load_quads(const int8_t *a, const int n) {
  int32x4_t z = vdupq_n_s32(0);
  if (n >= 4)
    return vld1q_s8(a);
  if (n == 1)
    return vreinterpretq_s8_s32(vld1q_lane_s32((const int32_t *)a, z, 0));
  int8x8_t lo = vld1_s8(a);
  int32x2_t hi = vdup_n_s32(0);
  if (n == 3)
    hi = vld1_lane_s32((const int32_t *)(a + 8), hi, 0);
  return vcombine_s8(lo, vreinterpret_s8_s32(hi));
}

/* Requantises one row's 12 sums (nr valid) and stores them. The
 * column arrays hold 12 readable entries (a padded copy when nr < 12). */
static void epi_row(const qtile *t, int i, const int32_t *s,
                    const int32_t *cadd, const int32_t *czb, const int32_t *ccb,
                    const float *cmult) {
  int32_t radd = t->radd[i];
  uint8_t out[16];
  int16x8_t h01 = vdupq_n_s16(0);
  int16x4_t h2 = vdup_n_s16(0);
  for (int v = 0; v < 3; v++) {
    int32x4_t x = vaddq_s32(vld1q_s32(s + 4 * v), vdupq_n_s32(radd));
    x = vaddq_s32(x, vld1q_s32(cadd + 4 * v));
    if (t->cross_b)
      x = vsubq_s32(x, vmulq_n_s32(vld1q_s32(czb + 4 * v), t->rra[i]));
    if (t->cross_a)
      x = vsubq_s32(x, vmulq_n_s32(vld1q_s32(ccb + 4 * v), t->rza[i]));
    float32x4_t m = t->rmult ? vdupq_n_f32(t->rmult[i])
                    : cmult  ? vld1q_f32(cmult + 4 * v)
                             : vdupq_n_f32(t->mult);
    /* One rounding multiply (no FMA), then round half to even. */
    float32x4_t f = vmulq_f32(vcvtq_f32_s32(x), m);
    f = vminq_f32(vmaxq_f32(f, vdupq_n_f32(-F_LIM)), vdupq_n_f32(F_LIM));
    int32x4_t q = vaddq_s32(vcvtnq_s32_f32(f), vdupq_n_s32(t->czero));
    q = vmaxq_s32(q, vdupq_n_s32(t->qmin));
    q = vminq_s32(q, vdupq_n_s32(t->qmax));
    q = vmaxq_s32(q, vdupq_n_s32(t->lo));
    q = vminq_s32(q, vdupq_n_s32(t->hi));
    /* Values lie in [-128, 255]: the low byte is the stored one. */
    if (v == 0)
      h01 = vcombine_s16(vmovn_s32(q), vget_high_s16(h01));
    else if (v == 1)
      h01 = vcombine_s16(vget_low_s16(h01), vmovn_s32(q));
    else
      h2 = vmovn_s32(q);
  }
  vst1q_u8(out,
           vreinterpretq_u8_s8(vcombine_s8(
               vmovn_s16(h01), vmovn_s16(vcombine_s16(h2, vdup_n_s16(0))))));
  uint8_t *c = t->c + (size_t)i * t->ldc;
  if (t->nr == DG_DOT_NR) { /* constant sizes: two plain stores */
    memcpy(c, out, 8);
    memcpy(c + 8, out + 8, 4);
  } else {
    memcpy(c, out, (size_t)t->nr);
  }
}

/* Parked sums through the epilogue; a partial tile's column terms are
 * copied into padded arrays first so every load reads 12 entries. */
__attribute__((noinline)) static void epi_rows(const qtile *t, int mr,
                                               int32_t (*s)[DG_DOT_NR]) {
  const int32_t *cadd = t->cadd, *czb = t->czb, *ccb = t->ccb;
  const float *cmult = t->cmult;
  int32_t pa[DG_DOT_NR] = {0}, pz[DG_DOT_NR] = {0}, pc[DG_DOT_NR] = {0};
  float pm[DG_DOT_NR] = {0};
  if (t->nr < DG_DOT_NR) {
    memcpy(pa, cadd, sizeof(int32_t) * (size_t)t->nr);
    cadd = pa;
    if (t->cross_b) {
      memcpy(pz, czb, sizeof(int32_t) * (size_t)t->nr);
      czb = pz;
    }
    if (t->cross_a) {
      memcpy(pc, ccb, sizeof(int32_t) * (size_t)t->nr);
      ccb = pc;
    }
    if (cmult) {
      memcpy(pm, cmult, sizeof(float) * (size_t)t->nr);
      cmult = pm;
    }
  }
  for (int i = 0; i < mr; i++)
    epi_row(t, i, s[i], cadd, czb, ccb, cmult);
}

/* One row's three sdots against lane L of the rows' quads q. */
#define DOT_ROW(I, Q, L)                                                       \
  if (MR > I) {                                                                \
    c[I][0] = vdotq_laneq_s32(c[I][0], b0, Q, L);                              \
    c[I][1] = vdotq_laneq_s32(c[I][1], b1, Q, L);                              \
    c[I][2] = vdotq_laneq_s32(c[I][2], b2, Q, L);                              \
  }

static AI DOT void qd_body(const int MR, const qtile *t) {
  int32x4_t c[DG_DOT_MR][3];
  for (int i = 0; i < MR; i++)
    c[i][0] = c[i][1] = c[i][2] = vdupq_n_s32(0);
  const int8_t *a = t->a, *b = t->b;
#pragma GCC unroll 2
  for (int g = 0; g < t->ng; g++, a += 4 * MR, b += 4 * DG_DOT_NR) {
    int8x16_t b0 = vld1q_s8(b), b1 = vld1q_s8(b + 16), b2 = vld1q_s8(b + 32);
    int8x16_t q0 = load_quads(a, MR < 4 ? MR : 4);
    DOT_ROW(0, q0, 0)
    DOT_ROW(1, q0, 1)
    DOT_ROW(2, q0, 2)
    DOT_ROW(3, q0, 3)
    if (MR > 4) {
      int8x16_t q1 = load_quads(a + 16, MR - 4);
      DOT_ROW(4, q1, 0)
      DOT_ROW(5, q1, 1)
      DOT_ROW(6, q1, 2)
      DOT_ROW(7, q1, 3)
    }
  }
  int32_t s[DG_DOT_MR][DG_DOT_NR];
  for (int i = 0; i < MR; i++)
    for (int v = 0; v < 3; v++)
      vst1q_s32(s[i] + 4 * v, c[i][v]);
  epi_rows(t, MR, s);
}

DOT void dg_cpu_qkern_dot(const qtile *t) {
  switch (t->mr) {
  case 1:
    qd_body(1, t);
    break;
  case 2:
    qd_body(2, t);
    break;
  case 3:
    qd_body(3, t);
    break;
  case 4:
    qd_body(4, t);
    break;
  case 5:
    qd_body(5, t);
    break;
  case 6:
    qd_body(6, t);
    break;
  case 7:
    qd_body(7, t);
    break;
  default:
    qd_body(8, t);
    break;
  }
}

/* Row q of a group of four: 16 bytes of B from src (w valid, `readable`
 * bytes there), flipped, zero beyond w or past K. */
static AI uint8x16_t b_row(const uint8_t *src, int valid, int w, int readable,
                           uint8x16_t fx, uint8x16_t keep) {
  if (!valid)
    return vdupq_n_u8(0);
  uint8x16_t r;
  if (readable >= 16) {
    r = vld1q_u8(src);
  } else {
    uint8_t tmp[16] = {0};
    memcpy(tmp, src, (size_t)w);
    r = vld1q_u8(tmp);
  }
  return vandq_u8(veorq_u8(r, fx), keep);
}

DOT void dg_cpu_dot_pack_b12(const uint8_t *src, size_t ldb, int K, int w,
                             int readable, uint8_t flip, uint8_t *dst,
                             int32_t *colsum) {
  static const uint8_t idx[16] = {0, 1, 2,  3,  4,  5,  6,  7,
                                  8, 9, 10, 11, 12, 13, 14, 15};
  w = w > DG_DOT_NR ? DG_DOT_NR : w;
  uint8x16_t keep = vcltq_u8(vld1q_u8(idx), vdupq_n_u8((uint8_t)w));
  uint8x16_t fx = vdupq_n_u8(flip);
  int8x16_t ones = vdupq_n_s8(1);
  int32x4_t s0 = vdupq_n_s32(0), s1 = s0, s2 = s0;
  for (int k = 0; k < K; k += 4, dst += 4 * DG_DOT_NR) {
    uint8x16_t r0 = b_row(src + (size_t)k * ldb, 1, w, readable, fx, keep);
    uint8x16_t r1 =
        b_row(src + (size_t)(k + 1) * ldb, k + 1 < K, w, readable, fx, keep);
    uint8x16_t r2 =
        b_row(src + (size_t)(k + 2) * ldb, k + 2 < K, w, readable, fx, keep);
    uint8x16_t r3 =
        b_row(src + (size_t)(k + 3) * ldb, k + 3 < K, w, readable, fx, keep);
    /* Bytes to pairs (k, k+1) per column, then pairs to quads. */
    uint16x8_t t0 = vreinterpretq_u16_u8(vzip1q_u8(r0, r1));
    uint16x8_t t1 = vreinterpretq_u16_u8(vzip2q_u8(r0, r1));
    uint16x8_t t2 = vreinterpretq_u16_u8(vzip1q_u8(r2, r3));
    uint16x8_t t3 = vreinterpretq_u16_u8(vzip2q_u8(r2, r3));
    int8x16_t u0 = vreinterpretq_s8_u16(vzip1q_u16(t0, t2));
    int8x16_t u1 = vreinterpretq_s8_u16(vzip2q_u16(t0, t2));
    int8x16_t u2 = vreinterpretq_s8_u16(vzip1q_u16(t1, t3));
    vst1q_s8((int8_t *)dst, u0);
    vst1q_s8((int8_t *)dst + 16, u1);
    vst1q_s8((int8_t *)dst + 32, u2);
    s0 = vdotq_s32(s0, u0, ones);
    s1 = vdotq_s32(s1, u1, ones);
    s2 = vdotq_s32(s2, u2, ones);
  }
  int32_t tmp[DG_DOT_NR];
  vst1q_s32(tmp, s0);
  vst1q_s32(tmp + 4, s1);
  vst1q_s32(tmp + 8, s2);
  memcpy(colsum, tmp, sizeof(int32_t) * (size_t)w);
}

DOT int32_t dg_cpu_dot_row_sum(const uint8_t *p, int K, uint8_t flip) {
  uint8x16_t fx = vdupq_n_u8(flip);
  int8x16_t ones = vdupq_n_s8(1);
  int32x4_t acc = vdupq_n_s32(0);
  int k = 0;
  for (; k + 16 <= K; k += 16)
    acc = vdotq_s32(acc, vreinterpretq_s8_u8(veorq_u8(vld1q_u8(p + k), fx)),
                    ones);
  int32_t s = vaddvq_s32(acc);
  for (; k < K; k++)
    s += (int8_t)(p[k] ^ flip);
  return s;
}
#endif /* __aarch64__ */
