/* The int8 GEMM's x86 microkernels (qgemm_tile.h's contract): AVX2 on
 * int16 pairs (6 x 16) and AVX512-VNNI on u8 x s8 quads (up to 14 x 32),
 * with the VNNI packing helpers; qgemm.c picks one at run time. */
#define _POSIX_C_SOURCE 200809L
#include "qgemm_tile.h"

#include <stdlib.h>
#include <string.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#ifdef DG_X86
/* ---- AVX2 kernel on int16 pairs: 6 x 16 ---- */

#define T256 __attribute__((target("avx2,fma")))

T256 static __m256i q_mask8(int n) {
  n = n < 0 ? 0 : (n > 8 ? 8 : n);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

T256 static inline int32_t load_i32(const void *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return v;
}

/* Requantises and stores a tile's parked sums (mr rows, nr columns), as
 * requant() says; the column terms loaded once per 8 columns (the byte
 * stores may alias them, so the compiler would reload them per row). */
__attribute__((noinline)) T256 static void
epi_rows_avx2(const qtile *t, int mr, int32_t (*sums)[A2_NR]) {
  float blo, bhi;
  requant_bounds(t, &blo, &bhi);
  const __m256i czero = _mm256_set1_epi32(t->czero);
  const __m256 flo = _mm256_set1_ps(blo), fhi = _mm256_set1_ps(bhi);
  for (int j = 0; j < t->nr; j += 8) {
    int n = t->nr - j > 8 ? 8 : t->nr - j;
    __m256i mk = q_mask8(n);
    __m256i cadd = _mm256_maskload_epi32(t->cadd + j, mk);
    __m256 cm = t->cmult ? _mm256_maskload_ps(t->cmult + j, mk)
                         : _mm256_set1_ps(t->mult);
    for (int i = 0; i < mr; i++) {
      __m256i s =
          _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(sums[i] + j)),
                           _mm256_set1_epi32(t->radd[i]));
      s = _mm256_add_epi32(s, cadd);
      __m256 m = t->rmult ? _mm256_set1_ps(t->rmult[i]) : cm;
      __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(s), m);
      f = _mm256_min_ps(_mm256_max_ps(f, flo), fhi);
      __m256i v = _mm256_add_epi32(_mm256_cvtps_epi32(f), czero);
      /* the 8 low bytes of the 32-bit lanes, in order */
      __m256i b = _mm256_shuffle_epi8(
          v, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                              -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1,
                              -1, -1, -1, -1, -1, -1));
      __m128i bytes = _mm_unpacklo_epi32(_mm256_castsi256_si128(b),
                                         _mm256_extracti128_si256(b, 1));
      /* eight bytes as one store; a shorter tail through a copy (a memcpy
       * call per 8 outputs cost as much as the multiply at small K) */
      if (n == 8) {
        _mm_storel_epi64((__m128i *)(t->c + i * t->ldc + j), bytes);
        continue;
      }
      uint8_t out[16];
      _mm_storeu_si128((__m128i *)out, bytes);
      memcpy(t->c + i * t->ldc + j, out, (size_t)n);
    }
  }
}

static inline __attribute__((always_inline)) T256 void
qk256_body(const int MR, const qtile *t) {
  __m256i c0[A2_MR], c1[A2_MR];
#pragma GCC unroll 6
  for (int i = 0; i < MR; i++)
    c0[i] = c1[i] = _mm256_setzero_si256();
  const int16_t *a = t->a, *b = t->b;
  for (int g = 0; g < t->ng; g++, a += 2 * MR, b += 2 * A2_NR) {
    __m256i b0 = _mm256_loadu_si256((const __m256i *)b);
    __m256i b1 = _mm256_loadu_si256((const __m256i *)(b + 16));
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) {
      __m256i av = _mm256_set1_epi32(load_i32(a + 2 * i));
      c0[i] = _mm256_add_epi32(c0[i], _mm256_madd_epi16(av, b0));
      c1[i] = _mm256_add_epi32(c1[i], _mm256_madd_epi16(av, b1));
    }
  }
  /* parked, so that the epilogue's registers do not compete with the
   * accumulators */
  int32_t sums[A2_MR][A2_NR];
#pragma GCC unroll 6
  for (int i = 0; i < MR; i++) {
    _mm256_storeu_si256((__m256i *)sums[i], c0[i]);
    _mm256_storeu_si256((__m256i *)(sums[i] + 8), c1[i]);
  }
  epi_rows_avx2(t, MR, sums);
}

T256 void dg_cpu_qkern_avx2(const qtile *t) {
  switch (t->mr) {
  case 1:
    qk256_body(1, t);
    break;
  case 2:
    qk256_body(2, t);
    break;
  case 3:
    qk256_body(3, t);
    break;
  case 4:
    qk256_body(4, t);
    break;
  case 5:
    qk256_body(5, t);
    break;
  default:
    qk256_body(6, t);
    break;
  }
}

/* Packs B[k, 0..w) (row-major, or row k at src + rows[k]; w <= 16) for
 * the AVX2 kernel: pairs of k per column, [ng][16][2] int16, less each
 * column's zero point zb[j]; zeros past K and past w. */
T256 void dg_cpu_avx2_pack_b16(const uint8_t *src, size_t ldb,
                               const int64_t *rows, int K, int w, int b_signed,
                               const int16_t *zb, int16_t *dst) {
  w = w > 16 ? 16 : (w < 0 ? 0 : w);
  const __m256i zbv = _mm256_loadu_si256((const __m256i *)zb);
  const __m256i keep = _mm256_cmpgt_epi16(
      _mm256_set1_epi16((short)w),
      _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  for (int k = 0; k < K; k += 2, dst += 2 * A2_NR) {
    __m256i r[2];
    for (int h = 0; h < 2; h++) {
      if (k + h >= K) {
        r[h] = _mm256_setzero_si256();
        continue;
      }
      const uint8_t *row =
          src + (rows ? (size_t)rows[k + h] : (size_t)(k + h) * ldb);
      __m128i bytes;
      if (w == 16) {
        bytes = _mm_loadu_si128((const __m128i *)row);
      } else { /* no byte-masked loads in AVX2: never read past w */
        uint8_t tmp[16] = {0};
        memcpy(tmp, row, (size_t)w);
        bytes = _mm_loadu_si128((const __m128i *)tmp);
      }
      __m256i v =
          b_signed ? _mm256_cvtepi8_epi16(bytes) : _mm256_cvtepu8_epi16(bytes);
      r[h] = _mm256_and_si256(_mm256_sub_epi16(v, zbv), keep);
    }
    /* lane 0: columns 0-3 and 4-7; lane 1: 8-11 and 12-15 */
    __m256i lo = _mm256_unpacklo_epi16(r[0], r[1]),
            hi = _mm256_unpackhi_epi16(r[0], r[1]);
    _mm256_storeu_si256((__m256i *)dst,
                        _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256((__m256i *)(dst + 16),
                        _mm256_permute2x128_si256(lo, hi, 0x31));
  }
}

/* ---- AVX512-VNNI kernel on u8 x s8 quads: up to 14 x 32 ---- */

#define T512                                                                   \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

T512 static inline __mmask16 mask16(int n) {
  return n >= 16 ? 0xffff : (n <= 0 ? 0 : (__mmask16)((1u << n) - 1));
}

/* Requantises and stores a tile's parked sums (mr rows, nv groups of 16
 * columns), as requant() says. The column terms are loaded once per
 * group of columns, not per row: the byte stores may alias them, so the
 * compiler could not hoist them itself. A weight zero point of 0 (the
 * exporters' symmetric weights) skips its cross term's multiply. */
__attribute__((noinline)) T512 static void
epi_rows_512(const qtile *t, int mr, int nv, int32_t (*sums)[32]) {
  float blo, bhi;
  requant_bounds(t, &blo, &bhi);
  const __m512i czero = _mm512_set1_epi32(t->czero);
  const __m512 flo = _mm512_set1_ps(blo), fhi = _mm512_set1_ps(bhi);
  for (int h = 0; h < nv; h++) {
    int j = 16 * h;
    __mmask16 mk = mask16(t->nr - j);
    __m512i cadd = _mm512_maskz_loadu_epi32(mk, t->cadd + j);
    __m512i czb = t->cross_b ? _mm512_maskz_loadu_epi32(mk, t->czb + j)
                             : _mm512_setzero_si512();
    __m512i ccb = t->cross_a ? _mm512_maskz_loadu_epi32(mk, t->ccb + j)
                             : _mm512_setzero_si512();
    __m512 cm = t->cmult ? _mm512_maskz_loadu_ps(mk, t->cmult + j)
                         : _mm512_set1_ps(t->mult);
    for (int i = 0; i < mr; i++) {
      __m512i s = _mm512_add_epi32(_mm512_load_si512(sums[i] + j),
                                   _mm512_set1_epi32(t->radd[i]));
      s = _mm512_add_epi32(s, cadd);
      if (t->cross_b)
        s = _mm512_sub_epi32(
            s, _mm512_mullo_epi32(czb, _mm512_set1_epi32(t->rra[i])));
      if (t->cross_a && t->rza[i])
        s = _mm512_sub_epi32(
            s, _mm512_mullo_epi32(ccb, _mm512_set1_epi32(t->rza[i])));
      __m512 m = t->rmult ? _mm512_set1_ps(t->rmult[i]) : cm;
      __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(s), m);
      f = _mm512_min_ps(_mm512_max_ps(f, flo), fhi);
      /* Uses MXCSR rounding, round-half-even by default, like nearbyintf. */
      __m512i v = _mm512_add_epi32(_mm512_cvtps_epi32(f), czero);
      _mm512_mask_cvtepi32_storeu_epi8(t->c + i * t->ldc + j, mk, v);
    }
  }
}

static inline __attribute__((always_inline)) T512 void
qk512_body(const int MR, const int NV, const qtile *t) {
  __m512i c0[V_MR], c1[V_MR];
#pragma GCC unroll 14
  for (int i = 0; i < MR; i++)
    c0[i] = c1[i] = _mm512_setzero_si512();
  const int32_t *a = t->a;
  const uint8_t *b = t->b;
  for (int g = 0; g < t->ng; g++, a += MR, b += 4 * V_NR) {
    __m512i b0 = _mm512_loadu_si512(b), b1 = b0;
    if (NV == 2)
      b1 = _mm512_loadu_si512(b + 64);
#pragma GCC unroll 14
    for (int i = 0; i < MR; i++) {
      __m512i av = _mm512_set1_epi32(a[i]);
      c0[i] = _mm512_dpbusd_epi32(c0[i], b0, av);
      if (NV == 2)
        c1[i] = _mm512_dpbusd_epi32(c1[i], b1, av);
    }
  }
  /* Parking the sums keeps the epilogue's registers from competing with
   * the accumulators (GCC otherwise spills inside the main loop). */
  _Alignas(64) int32_t sums[V_MR][32];
#pragma GCC unroll 14
  for (int i = 0; i < MR; i++) {
    _mm512_store_si512(sums[i], c0[i]);
    if (NV == 2)
      _mm512_store_si512(sums[i] + 16, c1[i]);
  }
  epi_rows_512(t, MR, NV, sums);
}

/* Few rows read in place (no packing of activations): the same sums as
 * qk512_body, with A's four bytes per group loaded from each row and
 * flipped on the fly. Needs K % 4 == 0 so no group reads past a row. */
static inline __attribute__((always_inline)) T512 void
qk512_direct_body(const int MR, const int NV, const qtile *t) {
  __m512i c0[4], c1[4];
#pragma GCC unroll 4
  for (int i = 0; i < MR; i++)
    c0[i] = c1[i] = _mm512_setzero_si512();
  const uint8_t *a = t->arow, *b = t->b;
  size_t ald = t->ald;
  for (int g = 0; g < t->ng; g++, a += 4, b += 4 * V_NR) {
    __m512i b0 = _mm512_loadu_si512(b), b1 = b0;
    if (NV == 2)
      b1 = _mm512_loadu_si512(b + 64);
#pragma GCC unroll 4
    for (int i = 0; i < MR; i++) {
      __m512i av = _mm512_set1_epi32((int)(load_i32(a + i * ald) ^ t->aflip));
      c0[i] = _mm512_dpbusd_epi32(c0[i], b0, av);
      if (NV == 2)
        c1[i] = _mm512_dpbusd_epi32(c1[i], b1, av);
    }
  }
  _Alignas(64) int32_t sums[4][32];
#pragma GCC unroll 4
  for (int i = 0; i < MR; i++) {
    _mm512_store_si512(sums[i], c0[i]);
    if (NV == 2)
      _mm512_store_si512(sums[i] + 16, c1[i]);
  }
  epi_rows_512(t, MR, NV, sums);
}

T512 void dg_cpu_qkern_vnni_direct(const qtile *t) {
  if (t->nr > 16) {
    switch (t->mr) {
    case 1:
      qk512_direct_body(1, 2, t);
      break;
    case 2:
      qk512_direct_body(2, 2, t);
      break;
    case 3:
      qk512_direct_body(3, 2, t);
      break;
    default:
      qk512_direct_body(4, 2, t);
      break;
    }
  } else {
    switch (t->mr) {
    case 1:
      qk512_direct_body(1, 1, t);
      break;
    case 2:
      qk512_direct_body(2, 1, t);
      break;
    case 3:
      qk512_direct_body(3, 1, t);
      break;
    default:
      qk512_direct_body(4, 1, t);
      break;
    }
  }
}

#define QK512_CASES(NV)                                                        \
  switch (t->mr) {                                                             \
  case 1:                                                                      \
    qk512_body(1, NV, t);                                                      \
    break;                                                                     \
  case 2:                                                                      \
    qk512_body(2, NV, t);                                                      \
    break;                                                                     \
  case 3:                                                                      \
    qk512_body(3, NV, t);                                                      \
    break;                                                                     \
  case 4:                                                                      \
    qk512_body(4, NV, t);                                                      \
    break;                                                                     \
  case 5:                                                                      \
    qk512_body(5, NV, t);                                                      \
    break;                                                                     \
  case 6:                                                                      \
    qk512_body(6, NV, t);                                                      \
    break;                                                                     \
  case 7:                                                                      \
    qk512_body(7, NV, t);                                                      \
    break;                                                                     \
  case 8:                                                                      \
    qk512_body(8, NV, t);                                                      \
    break;                                                                     \
  case 9:                                                                      \
    qk512_body(9, NV, t);                                                      \
    break;                                                                     \
  case 10:                                                                     \
    qk512_body(10, NV, t);                                                     \
    break;                                                                     \
  case 11:                                                                     \
    qk512_body(11, NV, t);                                                     \
    break;                                                                     \
  case 12:                                                                     \
    qk512_body(12, NV, t);                                                     \
    break;                                                                     \
  case 13:                                                                     \
    qk512_body(13, NV, t);                                                     \
    break;                                                                     \
  default:                                                                     \
    qk512_body(14, NV, t);                                                     \
    break;                                                                     \
  }

T512 void dg_cpu_qkern_vnni(const qtile *t) {
  if (t->nr > 16) {
    QK512_CASES(2)
  } else {
    QK512_CASES(1)
  }
}

/* ---- AMX-INT8 kernel: up to 32 x 32 from four 16 x 16 int32 tiles ----
 *
 * tdpbsud multiplies s8 A by u8 B, the VNNI kernel's signedness, so the
 * flips, sums and epilogue are VNNI's. A is packed as the tiles load it,
 * [ng / 16][2][16 rows][64 bytes] (each tile 1 KiB in one piece, so the
 * stream of A is sequential), B is the VNNI panel [ng][32][4] (a tile row
 * is one group of 16 columns, 128 bytes apart); ng is a multiple of 16,
 * the groups past K zero in A. Rows past mr and
 * columns past nr are computed from whatever follows (the packings keep
 * it readable) and never stored. Tiles: 0-3 sums, 4-5 A, 6-7 B. */

#define TAMX                                                                   \
  __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,"         \
                        "avx512dq,avx512vnni")))

typedef struct amx_config {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} amx_config;

/* GCC's tile intrinsics are asm statements that name no memory (or, for
 * ldtilecfg, 8 bytes of its 64): the barriers keep the configuration and
 * the packed operands written before them and the sums read after. */
#define AMX_BARRIER() __asm__ volatile("" ::: "memory")

TAMX void dg_cpu_amx_begin(void) {
  amx_config c;
  memset(&c, 0, sizeof c);
  c.palette = 1;
  for (int i = 0; i < 8; i++) {
    c.colsb[i] = 64;
    c.rows[i] = 16;
  }
  AMX_BARRIER();
  _tile_loadconfig(&c);
}

TAMX void dg_cpu_amx_end(void) { _tile_release(); }

TAMX void dg_cpu_qkern_amx(const qtile *t) {
  const uint8_t *a = t->a, *b = t->b;
  int kb = t->ng / 16, two_m = t->mr > 16, two_n = t->nr > 16;
  AMX_BARRIER();
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int k = 0; k < kb; k++) {
    const uint8_t *ak = a + (size_t)k * 2048, *bk = b + (size_t)k * 2048;
    _tile_loadd(4, ak, 64);
    _tile_loadd(6, bk, 4 * V_NR);
    _tile_dpbsud(0, 4, 6);
    if (two_n) {
      _tile_loadd(7, bk + 64, 4 * V_NR);
      _tile_dpbsud(1, 4, 7);
    }
    if (two_m) {
      _tile_loadd(5, ak + 1024, 64);
      _tile_dpbsud(2, 5, 6);
      if (two_n)
        _tile_dpbsud(3, 5, 7);
    }
  }
  _Alignas(64) int32_t sums[32][32];
  _tile_stored(0, sums[0], 128);
  _tile_stored(1, sums[0] + 16, 128);
  _tile_stored(2, sums[16], 128);
  _tile_stored(3, sums[16] + 16, 128);
  AMX_BARRIER();
  epi_rows_512(t, t->mr, two_n ? 2 : 1, sums);
}

/* Packs B[k, jc + 0..w) (row-major, or row k at src + rows[k]; w <= 32)
 * for VNNI and AMX: one V_NR-column panel, 4 k per column in each
 * 128-byte row, flipped to u8; writes the column sums. 256-bit lanes:
 * unpack works within 128-bit lanes, so each lane holds half the
 * columns until the final permutes. */
T512 void dg_cpu_vnni_pack_b32(const uint8_t *src, size_t ldb,
                               const int64_t *rows, int K, int w, uint8_t flip,
                               uint8_t *dst, int32_t *colsum) {
  w = w > 32 ? 32 : w;
  __mmask32 mk = w >= 32 ? ~(__mmask32)0 : (((__mmask32)1 << w) - 1);
  __m256i fx = _mm256_set1_epi8((char)flip), z = _mm256_setzero_si256();
  __m256i ones = _mm256_set1_epi8(1);
  __m256i s0 = z, s1 = z, s2 = z, s3 = z;
  for (int k = 0; k < K; k += 4, dst += 4 * V_NR) {
    __m256i r[4];
    for (int q = 0; q < 4; q++) {
      if (k + q >= K) {
        r[q] = z;
        continue;
      }
      const uint8_t *row =
          src + (rows ? (size_t)rows[k + q] : (size_t)(k + q) * ldb);
      r[q] = _mm256_maskz_mov_epi8(
          mk, _mm256_xor_si256(_mm256_maskz_loadu_epi8(mk, row), fx));
    }
    __m256i t0 = _mm256_unpacklo_epi8(r[0], r[1]),
            t1 = _mm256_unpackhi_epi8(r[0], r[1]);
    __m256i t2 = _mm256_unpacklo_epi8(r[2], r[3]),
            t3 = _mm256_unpackhi_epi8(r[2], r[3]);
    /* lane 0: columns 0-3, 4-7, 8-11, 12-15; lane 1: 16 more */
    __m256i u0 = _mm256_unpacklo_epi16(t0, t2),
            u1 = _mm256_unpackhi_epi16(t0, t2);
    __m256i u2 = _mm256_unpacklo_epi16(t1, t3),
            u3 = _mm256_unpackhi_epi16(t1, t3);
    __m256i o0 = _mm256_permute2x128_si256(u0, u1, 0x20); /* columns 0-7 */
    __m256i o1 = _mm256_permute2x128_si256(u2, u3, 0x20); /* 8-15 */
    __m256i o2 = _mm256_permute2x128_si256(u0, u1, 0x31); /* 16-23 */
    __m256i o3 = _mm256_permute2x128_si256(u2, u3, 0x31); /* 24-31 */
    _mm256_storeu_si256((__m256i *)dst, o0);
    _mm256_storeu_si256((__m256i *)(dst + 32), o1);
    _mm256_storeu_si256((__m256i *)(dst + 64), o2);
    _mm256_storeu_si256((__m256i *)(dst + 96), o3);
    s0 = _mm256_dpbusd_epi32(s0, o0, ones);
    s1 = _mm256_dpbusd_epi32(s1, o1, ones);
    s2 = _mm256_dpbusd_epi32(s2, o2, ones);
    s3 = _mm256_dpbusd_epi32(s3, o3, ones);
  }
  int32_t tmp[32];
  _mm256_storeu_si256((__m256i *)tmp, s0);
  _mm256_storeu_si256((__m256i *)(tmp + 8), s1);
  _mm256_storeu_si256((__m256i *)(tmp + 16), s2);
  _mm256_storeu_si256((__m256i *)(tmp + 24), s3);
  for (int j = 0; j < w; j++)
    colsum[j] = tmp[j];
}

/* Sum of the K bytes at p after xor with `flip`, read as s8 or u8. */
T512 int32_t dg_cpu_vnni_row_sum(const uint8_t *p, int K, uint8_t flip,
                                 int as_signed) {
  /* psadbw sums unsigned bytes; a signed byte is its xor-0x80 minus 128. */
  __m512i fx = _mm512_set1_epi8((char)(flip ^ (as_signed ? 0x80 : 0)));
  __m512i acc = _mm512_setzero_si512();
  for (int k = 0; k < K; k += 64) {
    __mmask64 mk = K - k >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (K - k)) - 1;
    __m512i x = _mm512_maskz_mov_epi8(
        mk, _mm512_xor_si512(_mm512_maskz_loadu_epi8(mk, p + k), fx));
    acc = _mm512_add_epi64(acc, _mm512_sad_epu8(x, _mm512_setzero_si512()));
  }
  int64_t s = _mm512_reduce_add_epi64(acc);
  return (int32_t)(s - (as_signed ? 128 * (int64_t)K : 0));
}

#endif /* DG_X86 */
