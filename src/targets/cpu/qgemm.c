/* int8 GEMM (QLinearMatMul / QLinearConv) for the CPU target.
 *
 * The result must match a scalar loop bit for bit, so every path keeps the
 * int32 sum exact (wrapping arithmetic is exact whenever the true sum fits)
 * and requantises with one fp32 multiply and a round-half-even conversion;
 * FP_CONTRACT is off so no compiler may fuse that multiply into an FMA.
 *
 * AVX512-VNNI path: vpdpbusd multiplies u8 by s8, so A is made signed and
 * B unsigned by flipping the top bit where needed (a = a_s + alpha,
 * b = b_u - beta with alpha, beta in {0, 128}). Then
 *   sum (a - za)(b - zb) = sum a_s b_u - zb' sum a_s - za' sum b_u + K za' zb'
 * with za' = za - alpha and zb' = zb + beta; the row sums of A and the
 * column sums of B are taken while packing, and the corrections are folded
 * into per-row and per-column addends (or, with per-row AND per-column zero
 * points, two vector multiplies in the epilogue). K is packed in groups of
 * four to match the instruction.
 *
 * aarch64 dot-product path (sdot, s8 x s8): the same corrections with A
 * and B both made signed (b = b_s + 128 where B is unsigned: beta = -128).
 *
 * AMX path (level DG_CPU_SIMD_AMX, 16 rows or more): VNNI's signedness,
 * flips, sums and epilogue with tile multiplies (tdpbsud) on 32 x 32
 * blocks; A packed per block of 32 rows as the tiles load it, K padded
 * to 64 with zeros; B in VNNI's panels. Fewer rows (fully connected at small
 * batches) run on VNNI.
 *
 * AVX2 and portable paths: the zero points are subtracted while packing
 * into int16, and pairs of k are multiplied with vpmaddwd (no saturation:
 * |a - za|, |b - zb| <= 383), so no corrections are needed.
 *
 * K is not blocked: the int32 sums cannot be parked in the int8 output, and
 * even K = 4608 keeps a 14-row A panel in L2 alongside the B panels.
 */
#define _POSIX_C_SOURCE 200809L
#include "gemm_split.h"
#include "qgemm_tile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Belt and braces: no float expression here has the a * b + c shape a
 * compiler could contract, but say so where the pragma is understood
 * (GCC ignores it and warns; it does not contract in ISO C mode). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* ---- portable kernel on int16 pairs: 4 x 16 ---- */

#define P_MR 4
#define P_NR 16

static void qkern_portable(const qtile *t) {
  int32_t acc[P_MR][P_NR] = {{0}};
  const int16_t *a = t->a, *b = t->b;
  int mr = t->mr;
  for (int g = 0; g < t->ng; g++, a += 2 * mr, b += 2 * P_NR)
    for (int i = 0; i < mr; i++)
      for (int j = 0; j < P_NR; j++)
        acc[i][j] += a[2 * i] * b[2 * j] + a[2 * i + 1] * b[2 * j + 1];
  for (int i = 0; i < mr; i++)
    for (int j = 0; j < t->nr; j++)
      t->c[i * t->ldc + j] = (uint8_t)requant(t, i, j, (uint32_t)acc[i][j]);
}

/* ---- packing and driver ---- */

void dg_cpu_quad_pack_rows(const uint8_t *src, size_t ld, int rows, int K,
                           int ng, uint8_t flip, int32_t *dst, int stride) {
  uint32_t f4 = flip * 0x01010101u;
  for (int i = 0; i < rows; i++) {
    const uint8_t *row = src + (size_t)i * ld;
    int g = 0;
    for (; 4 * g + 4 <= K; g++) {
      uint32_t w;
      memcpy(&w, row + 4 * g, 4);
      w ^= f4;
      memcpy(dst + (size_t)g * stride + i, &w, 4);
    }
    for (; g < ng; g++) {
      uint8_t q[4] = {0};
      for (int b = 0; b < 4 && 4 * g + b < K; b++)
        q[b] = row[4 * g + b] ^ flip;
      memcpy(dst + (size_t)g * stride + i, q, 4);
    }
  }
}

enum { PATH_PORTABLE, PATH_AVX2, PATH_VNNI, PATH_DOT, PATH_AMX };

/* A prepacked operand (see dg_cpu_qgemm_pack_a / _b). A: ceil(M / mr)
 * balanced row blocks; the block of rows [r, r + mr) is at element
 * r * ng of data in the layout pack_a writes (VNNI: int32 quads
 * [ng][mr]; AMX: block b at b * AMX_MR * ng quads, in tiles
 * [ng / 16][2][16 rows][16 quads], rows past the block's zero;
 * int16 paths: pairs [ng][mr][2] with za subtracted). B: panels
 * of nr columns, panel q at q * panel bytes, as pack_b writes them.
 * sums: VNNI only, the flipped row (A) or column (B) sums. */
struct dg_cpu_qgemm_packed {
  int is_b, path, rows, K, unit, ng, nblk, is_signed;
  int32_t *sums;
  void *data;
};

typedef struct qplan {
  const dg_cpu_qgemm_args *g;
  int path;
  qkernel_fn kern;
  int mr, nr, kg, ng; /* max rows, panel width, k per group, groups */
  int nc;             /* column block */
  int tm, tn;
  int alpha, beta; /* VNNI flips (see top) */
  int a_direct;    /* VNNI, few rows: read A in place */
  const dg_cpu_qgemm_packed *pa, *pb;
  uint8_t *scratch;
  size_t per_task, a_bytes, b_bytes; /* per task: A panel, B block, cols */
} qplan;

/* The paths on byte quads with zero-point corrections (see top). */
static inline int quads(const qplan *p) {
  return p->path == PATH_VNNI || p->path == PATH_DOT || p->path == PATH_AMX;
}

/* The flipped sum of K bytes: A's rows are summed as s8; B's columns as
 * the kernel reads them (u8 for VNNI, s8 for sdot). */
static int32_t quad_sum(const qplan *p, const uint8_t *bytes, int K,
                        uint8_t flip, int is_a) {
#ifdef DG_X86
  if (p->path == PATH_VNNI || p->path == PATH_AMX)
    return dg_cpu_vnni_row_sum(bytes, K, flip, is_a);
#endif
#if defined(__aarch64__)
  if (p->path == PATH_DOT)
    return dg_cpu_dot_row_sum(bytes, K, flip);
#endif
  (void)p, (void)bytes, (void)K, (void)flip, (void)is_a;
  return 0;
}

static inline int a_at(const dg_cpu_qgemm_args *g, int m, int k) {
  const uint8_t *p = (const uint8_t *)g->A + (size_t)m * g->lda + k;
  return g->a_signed ? (int)(int8_t)*p : (int)*p;
}

static inline int b_at(const dg_cpu_qgemm_args *g, int k, int n) {
  const uint8_t *p =
      (const uint8_t *)g->B + (g->trans_b  ? (size_t)n * g->ldb + k
                               : g->b_rows ? (size_t)g->b_rows[k] + n
                                           : (size_t)k * g->ldb + n);
  return g->b_signed ? (int)(int8_t)*p : (int)*p;
}

static inline int32_t za_of(const dg_cpu_qgemm_args *g, int m) {
  return g->za[g->a_zero_per_row ? m : 0];
}
static inline int32_t zb_of(const dg_cpu_qgemm_args *g, int n) {
  return g->zb[g->b_zero_per_col ? n : 0];
}
static inline int32_t bias_of(const dg_cpu_qgemm_args *g, int c) {
  return g->bias ? g->bias[g->per_channel ? c : 0] : 0;
}

/* Bytes of one packed B panel (nr columns, all of K). */
static size_t panel_bytes(const qplan *p) {
  return (size_t)p->ng * p->kg * p->nr * (quads(p) ? 1 : sizeof(int16_t));
}

/* The epilogue's terms for row m of A; sum is its flipped row sum (VNNI
 * only). Split from the packing so prepacked rows share them. */
static void row_terms(const qplan *p, int m, int32_t sum, int32_t *radd,
                      int32_t *rra, int32_t *rza) {
  const dg_cpu_qgemm_args *g = p->g;
  uint32_t add =
      (uint32_t)(g->chan_per_row || !g->per_channel ? bias_of(g, m) : 0);
  if (quads(p)) {
    *rra = sum;
    *rza = (int32_t)((uint32_t)za_of(g, m) - (uint32_t)p->alpha);
    if (!g->b_zero_per_col)
      add -= (uint32_t)(zb_of(g, 0) + p->beta) * (uint32_t)sum;
  } else {
    *rra = *rza = 0;
  }
  *radd = (int32_t)add;
}

/* The epilogue's terms for column n of B, from its flipped column sum. */
static void col_terms(const qplan *p, int n, int32_t colsum, int32_t *cadd,
                      int32_t *czb, int32_t *ccb) {
  const dg_cpu_qgemm_args *g = p->g;
  uint32_t add =
      (uint32_t)(!g->chan_per_row && g->per_channel ? bias_of(g, n) : 0);
  if (quads(p)) {
    uint32_t zbp = (uint32_t)zb_of(g, n) + (uint32_t)p->beta;
    uint32_t cb = (uint32_t)colsum - (uint32_t)g->K * zbp;
    if (!g->a_zero_per_row)
      add -= ((uint32_t)za_of(g, 0) - (uint32_t)p->alpha) * cb;
    *czb = (int32_t)zbp;
    *ccb = (int32_t)cb;
  } else {
    *czb = *ccb = 0;
  }
  *cadd = (int32_t)add;
}

/* Packs rows r..r+mr of A (dst) and returns their flipped sums (VNNI). */
static void pack_a_rows(const qplan *p, void *dst, int r, int mr,
                        int32_t *sums) {
  const dg_cpu_qgemm_args *g = p->g;
  int K = g->K;
  for (int i = 0; i < mr; i++) {
    int m = r + i;
    if (quads(p)) {
      /* a_s = a - alpha as s8 is a top-bit flip when alpha is 128. */
      const uint8_t *row = (const uint8_t *)g->A + (size_t)m * g->lda;
      if (p->path == PATH_AMX) /* a tile row: 16 groups of row i */
        for (int kb = 0; kb < p->ng / AMX_KG; kb++) {
          int k0 = 4 * AMX_KG * kb, kn = K - k0 < 0 ? 0 : K - k0;
          dg_cpu_quad_pack_rows(
              row + (kn ? k0 : 0), 0, 1, kn < 4 * AMX_KG ? kn : 4 * AMX_KG,
              AMX_KG, (uint8_t)p->alpha,
              (int32_t *)dst + ((size_t)kb * 2 + i / 16) * 16 * AMX_KG +
                  (size_t)(i % 16) * AMX_KG,
              1);
        }
      else
        dg_cpu_quad_pack_rows(row, 0, 1, K, p->ng, (uint8_t)p->alpha,
                              (int32_t *)dst + i, mr);
      sums[i] = quad_sum(p, row, K, (uint8_t)p->alpha, 1);
    } else {
      int16_t *d = dst;
      int32_t za = za_of(g, m);
      for (int k = 0; k < p->ng * 2; k++)
        d[((size_t)(k >> 1) * mr + i) * 2 + (k & 1)] =
            (int16_t)(k < K ? a_at(g, m, k) - za : 0);
      sums[i] = 0;
    }
  }
}

/* Packs columns jc..jc+nc of B into panels; colsum gets the flipped
 * column sums (VNNI). */
static void pack_b_cols(const qplan *p, uint8_t *dst, int jc, int nc,
                        int32_t *colsum) {
  const dg_cpu_qgemm_args *g = p->g;
  int K = g->K, NR = p->nr;
  size_t panel = panel_bytes(p);
  for (int j0 = 0; j0 < nc; j0 += NR, dst += panel) {
    int w = nc - j0 < NR ? nc - j0 : NR;
    if (quads(p)) {
      uint8_t flip = (uint8_t)p->beta;
      int32_t *cs = colsum + j0;
      if (!g->trans_b) {
        const uint8_t *src = (const uint8_t *)g->B + jc + j0;
#ifdef DG_X86
        if (p->path == PATH_VNNI || p->path == PATH_AMX)
          dg_cpu_vnni_pack_b32(src, (size_t)g->ldb, g->b_rows, K, w, flip, dst,
                               cs);
        int kq = (K + 3) / 4; /* AMX: the groups past K, zero */
        if (p->ng > kq)
          memset(dst + (size_t)kq * 4 * NR, 0, (size_t)(p->ng - kq) * 4 * NR);
#endif
#if defined(__aarch64__)
        if (p->path == PATH_DOT)
          dg_cpu_dot_pack_b12(src, (size_t)g->ldb, K, w, g->N - (jc + j0), flip,
                              dst, cs);
#endif
      } else {
        /* B is [N, K]: each column is a contiguous row of bytes. */
        const uint8_t *src = (const uint8_t *)g->B + (size_t)(jc + j0) * g->ldb;
        memset(dst, 0, panel);
        dg_cpu_quad_pack_rows(src, (size_t)g->ldb, w, K, p->ng, flip,
                              (int32_t *)dst, NR);
        for (int j = 0; j < w; j++)
          cs[j] = quad_sum(p, src + (size_t)j * g->ldb, K, flip, 0);
      }
    } else {
      int16_t *d = (int16_t *)dst;
#ifdef DG_X86
      if (p->path == PATH_AVX2 && !g->trans_b) {
        int16_t zb[A2_NR] = {0};
        for (int j = 0; j < w; j++) {
          zb[j] = (int16_t)zb_of(g, jc + j0 + j);
          colsum[j0 + j] = 0;
        }
        dg_cpu_avx2_pack_b16((const uint8_t *)g->B + jc + j0, (size_t)g->ldb,
                             g->b_rows, K, w, g->b_signed, zb, d);
        continue;
      }
#endif
      for (int j = 0; j < NR; j++) {
        int n = jc + j0 + j;
        int32_t zb = j < w ? zb_of(g, n) : 0;
        for (int k = 0; k < p->ng * 2; k++)
          d[((size_t)(k >> 1) * NR + j) * 2 + (k & 1)] =
              (int16_t)(j < w && k < K ? b_at(g, k, n) - zb : 0);
        if (j < w)
          colsum[j0 + j] = 0;
      }
    }
  }
}

static void run_task(void *arg, int task, int ntasks) {
  (void)ntasks;
  const qplan *p = arg;
  const dg_cpu_qgemm_args *g = p->g;
  const dg_cpu_qgemm_packed *pa = p->pa, *pb = p->pb;
  gemm_task_range t;
  if (!gemm_task_range_of(g->M, g->N, pa ? pa->nblk : 0, p->mr, p->nr, p->tm,
                          p->tn, task, &t))
    return;
  int m0 = t.m0, m1 = t.m1, n0 = t.n0, n1 = t.n1, b0 = t.b0, nblk = t.nblk;
  uint8_t *apan = p->scratch + p->per_task * (size_t)task;
  uint8_t *bblk = apan + p->a_bytes;
  int32_t *cadd = (int32_t *)(bblk + p->b_bytes);
  int32_t *czb = cadd + p->nc, *ccb = czb + p->nc;
  int32_t radd[V_ROWS_MAX], rra[V_ROWS_MAX], rza[V_ROWS_MAX];
  int32_t rsum[V_ROWS_MAX];
  size_t panel = panel_bytes(p);
  size_t col_bytes = (size_t)p->ng * 4; /* packed bytes per row / col */
  int crow = g->chan_per_row && g->per_channel;
  int ccol = !g->chan_per_row && g->per_channel;
#ifdef DG_X86
  if (p->path == PATH_AMX)
    dg_cpu_amx_begin();
#endif
  for (int jc = n0; jc < n1; jc += p->nc) {
    int nc = n1 - jc < p->nc ? n1 - jc : p->nc;
    const uint8_t *bsrc = bblk;
    const int32_t *colsum = ccb;
    if (pb) {
      bsrc = (const uint8_t *)pb->data + (size_t)(jc / p->nr) * panel;
      colsum = pb->sums ? pb->sums + jc : NULL;
    } else {
      pack_b_cols(p, bblk, jc, nc, ccb);
    }
    for (int j = 0; j < nc; j++) /* reads colsum[j] before ccb[j] */
      col_terms(p, jc + j, colsum ? colsum[j] : 0, &cadd[j], &czb[j], &ccb[j]);
    for (int rb = 0; rb < nblk; rb++) {
      int r, re;
      if (pa) {
        r = gemm_blk_row(g->M, pa->nblk, b0 + rb);
        re = gemm_blk_row(g->M, pa->nblk, b0 + rb + 1);
      } else {
        r = m0 + (int)((long long)(m1 - m0) * rb / nblk);
        re = m0 + (int)((long long)(m1 - m0) * (rb + 1) / nblk);
      }
      int mr = re - r;
      const void *a = apan;
      const uint8_t *arow = NULL;
      if (pa) {
        a = (const uint8_t *)pa->data +
            (p->path == PATH_AMX ? (size_t)(b0 + rb) * AMX_MR : (size_t)r) *
                col_bytes;
        for (int i = 0; i < mr; i++)
          rsum[i] = pa->sums ? pa->sums[r + i] : 0;
      } else if (p->a_direct) {
#ifdef DG_X86
        arow = (const uint8_t *)g->A + (size_t)r * g->lda;
        for (int i = 0; i < mr; i++)
          rsum[i] = dg_cpu_vnni_row_sum(arow + (size_t)i * g->lda, g->K,
                                        (uint8_t)p->alpha, 1);
#endif
      } else {
        pack_a_rows(p, apan, r, mr, rsum);
      }
      for (int i = 0; i < mr; i++)
        row_terms(p, r + i, rsum[i], &radd[i], &rra[i], &rza[i]);
      qtile t = {.mr = mr,
                 .ng = p->ng,
                 .a = a,
                 .arow = arow,
                 .ald = (size_t)g->lda,
                 .aflip = (uint32_t)p->alpha * 0x01010101u,
                 .ldc = (size_t)g->ldc,
                 .radd = radd,
                 .rra = rra,
                 .rza = rza,
                 .rmult = crow ? g->mult + r : NULL,
                 .cross_b = quads(p) && g->b_zero_per_col,
                 .cross_a = quads(p) && g->a_zero_per_row,
                 .mult = g->mult[0],
                 .czero = g->c_zero,
                 .qmin = g->c_signed ? -128 : 0,
                 .qmax = g->c_signed ? 127 : 255,
                 .lo = g->clamp_lo,
                 .hi = g->clamp_hi};
      qkernel_fn kern = p->kern;
#ifdef DG_X86
      if (arow)
        kern = dg_cpu_qkern_vnni_direct;
#endif
      for (int jr = 0, pi = 0; jr < nc; jr += p->nr, pi++) {
        t.nr = nc - jr < p->nr ? nc - jr : p->nr;
        t.b = bsrc + panel * (size_t)pi;
        t.c = (uint8_t *)g->C + (size_t)r * g->ldc + jc + jr;
        t.cadd = cadd + jr;
        t.czb = czb + jr;
        t.ccb = ccb + jr;
        t.cmult = ccol ? g->mult + jc + jr : NULL;
        kern(&t);
      }
    }
  }
#ifdef DG_X86
  if (p->path == PATH_AMX)
    dg_cpu_amx_end();
#endif
}

/* Exact and allocation-free; used when no scratch can be had or a zero
 * point is outside the range the int16 paths assume. */
static void run_naive(const dg_cpu_qgemm_args *g) {
  qtile t = {.czero = g->c_zero,
             .qmin = g->c_signed ? -128 : 0,
             .qmax = g->c_signed ? 127 : 255,
             .lo = g->clamp_lo,
             .hi = g->clamp_hi};
  for (int m = 0; m < g->M; m++)
    for (int n = 0; n < g->N; n++) {
      int32_t za = za_of(g, m), zb = zb_of(g, n);
      uint32_t acc = 0;
      for (int k = 0; k < g->K; k++)
        acc += (uint32_t)(a_at(g, m, k) - za) * (uint32_t)(b_at(g, k, n) - zb);
      int c = g->chan_per_row ? m : n;
      acc += (uint32_t)bias_of(g, c);
      float mult = g->mult[g->per_channel ? c : 0];
      ((uint8_t *)g->C)[(size_t)m * g->ldc + n] =
          (uint8_t)requant_value(&t, (int32_t)acc, mult);
    }
}

static int zero_points_small(const dg_cpu_qgemm_args *g) {
  int na = g->a_zero_per_row ? g->M : 1, nb = g->b_zero_per_col ? g->N : 1;
  for (int i = 0; i < na; i++)
    if (g->za[i] < -128 || g->za[i] > 255)
      return 0;
  for (int i = 0; i < nb; i++)
    if (g->zb[i] < -128 || g->zb[i] > 255)
      return 0;
  return 1;
}

/* The kernel for the current SIMD level, these signednesses and M rows
 * (-1: not known, as when B is packed ahead); sets the groups of K. */
static void pick_path(qplan *p, int a_signed, int b_signed, int rows, int K) {
  (void)rows; /* x86 only */
  p->path = PATH_PORTABLE;
  p->kern = qkern_portable;
  p->mr = P_MR;
  p->nr = P_NR;
  p->kg = 2;
  int level = dg_cpu_simd_level();
#ifdef DG_X86
  if (level >= DG_CPU_SIMD_AVX512_VNNI) {
    int amx = level >= DG_CPU_SIMD_AMX && rows >= 16;
    p->path = amx ? PATH_AMX : PATH_VNNI;
    p->kern = amx ? dg_cpu_qkern_amx : dg_cpu_qkern_vnni;
    p->mr = amx ? AMX_MR : V_MR;
    p->nr = V_NR;
    p->kg = 4;
    p->alpha = a_signed ? 0 : 128;
    p->beta = b_signed ? 128 : 0;
  } else if (level >= DG_CPU_SIMD_AVX2) {
    p->path = PATH_AVX2;
    p->kern = dg_cpu_qkern_avx2;
    p->mr = A2_MR;
    p->nr = A2_NR;
  }
#elif defined(__aarch64__)
  if (level >= DG_CPU_SIMD_NEON && dg_cpu_neon_has_dot()) {
    p->path = PATH_DOT;
    p->kern = dg_cpu_qkern_dot;
    p->mr = DG_DOT_MR;
    p->nr = DG_DOT_NR;
    p->kg = 4;
    p->alpha = a_signed ? 0 : 128;
    p->beta = b_signed ? 0 : -128;
  }
#else
  (void)level, (void)a_signed, (void)b_signed;
#endif
  K = K > 0 ? K : 0;
  p->ng = (K + p->kg - 1) / p->kg;
#ifdef DG_X86
  if (p->path == PATH_AMX)
    p->ng = (p->ng + AMX_KG - 1) / AMX_KG * AMX_KG;
#endif
}

const char *dg_cpu_qgemm_kernel_name(void) {
  qplan p = {0};
  pick_path(&p, 1, 1, 64, 64);
  static const char *const names[] = {
      [PATH_PORTABLE] = "portable", [PATH_AVX2] = "avx2", [PATH_VNNI] = "vnni",
      [PATH_DOT] = "neon-dot",      [PATH_AMX] = "amx",
  };
  return names[p.path];
}

static dg_cpu_qgemm_packed *qpacked_new(const qplan *p, int is_b, int rows,
                                        int K, size_t bytes) {
  dg_cpu_qgemm_packed *pk = malloc(sizeof *pk);
  if (!pk)
    return NULL;
  *pk = (dg_cpu_qgemm_packed){.is_b = is_b,
                              .path = p->path,
                              .rows = rows,
                              .K = K,
                              .unit = is_b ? p->nr : p->mr,
                              .ng = p->ng};
  pk->data = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
  pk->sums = malloc(sizeof(int32_t) * (size_t)rows);
  if (!pk->data || !pk->sums) {
    dg_cpu_qgemm_packed_free(pk);
    return NULL;
  }
  return pk;
}

dg_cpu_qgemm_packed *dg_cpu_qgemm_pack_a(int M, int K, const void *A, int lda,
                                         int a_signed, const int32_t *za,
                                         int a_zero_per_row) {
  if (M <= 0 || K <= 0 || !A || !za)
    return NULL;
  dg_cpu_qgemm_args g = {.M = M,
                         .K = K,
                         .A = A,
                         .lda = lda,
                         .a_signed = a_signed,
                         .za = za,
                         .a_zero_per_row = a_zero_per_row};
  qplan p = {.g = &g};
  pick_path(&p, a_signed, 0, M, K);
  /* Zero points outside the int16 paths' range are packed anyway: such
   * calls run the exact scalar loop, which ignores the packing. */
  size_t col_bytes = (size_t)p.ng * 4;
  int nblk = (M + p.mr - 1) / p.mr, amx = p.path == PATH_AMX;
  size_t bytes = (amx ? (size_t)nblk * AMX_MR : (size_t)M) * col_bytes;
  dg_cpu_qgemm_packed *pk = qpacked_new(&p, 0, M, K, bytes);
  if (!pk)
    return NULL;
  if (amx) /* the rows a block lacks are loaded too */
    memset(pk->data, 0, bytes);
  pk->nblk = nblk;
  for (int b = 0; b < nblk; b++) {
    int r = gemm_blk_row(M, nblk, b), re = gemm_blk_row(M, nblk, b + 1);
    pack_a_rows(&p,
                (uint8_t *)pk->data +
                    (amx ? (size_t)b * AMX_MR : (size_t)r) * col_bytes,
                r, re - r, pk->sums + r);
  }
  pk->is_signed = a_signed;
  return pk;
}

dg_cpu_qgemm_packed *dg_cpu_qgemm_pack_b(int N, int K, const void *B, int ldb,
                                         int b_signed, int trans_b,
                                         const int32_t *zb,
                                         int b_zero_per_col) {
  if (N <= 0 || K <= 0 || !B || !zb)
    return NULL;
  dg_cpu_qgemm_args g = {.N = N,
                         .K = K,
                         .B = B,
                         .ldb = ldb,
                         .b_signed = b_signed,
                         .trans_b = trans_b,
                         .zb = zb,
                         .b_zero_per_col = b_zero_per_col};
  qplan p = {.g = &g};
  pick_path(&p, 0, b_signed, -1, K);
  size_t panels = ((size_t)N + p.nr - 1) / p.nr;
  dg_cpu_qgemm_packed *pk = qpacked_new(&p, 1, N, K, panels * panel_bytes(&p));
  if (!pk)
    return NULL;
  pack_b_cols(&p, pk->data, 0, N, pk->sums);
  pk->is_signed = b_signed;
  return pk;
}

void dg_cpu_qgemm_packed_free(dg_cpu_qgemm_packed *pk) {
  if (!pk)
    return;
  free(pk->data);
  free(pk->sums);
  free(pk);
}

void dg_cpu_qgemm(dg_cpu_pool *pool, const dg_cpu_qgemm_args *g) {
  dg_cpu_qgemm_packed_run(pool, g, NULL, NULL);
}

/* A packing fits when made for this path, shape and signedness. */
static int fits(const dg_cpu_qgemm_packed *pk, const qplan *p, int is_b,
                int rows, int is_signed) {
  return pk && pk->is_b == is_b && pk->path == p->path && pk->rows == rows &&
         pk->K == p->g->K && pk->unit == (is_b ? p->nr : p->mr) &&
         pk->ng == p->ng && pk->is_signed == is_signed;
}

void dg_cpu_qgemm_packed_run(dg_cpu_pool *pool, const dg_cpu_qgemm_args *g,
                             const dg_cpu_qgemm_packed *pa,
                             const dg_cpu_qgemm_packed *pb) {
  if (g->M <= 0 || g->N <= 0)
    return;
  qplan p = {.g = g};
  pick_path(&p, g->a_signed, g->b_signed, g->M, g->K);
  /* Row offsets are packed from on x86's quads, or read through b_at by
   * the int16 paths; the dot-product packer takes only a stride. */
  if ((!quads(&p) && !zero_points_small(g)) ||
      (g->b_rows && p.path == PATH_DOT)) {
    run_naive(g);
    return;
  }
  int K = g->K > 0 ? g->K : 0;
  if (fits(pa, &p, 0, g->M, g->a_signed))
    p.pa = pa;
  if (fits(pb, &p, 1, g->N, g->b_signed))
    p.pb = pb;
  /* Few rows (a batch of 1-4 through fully connected): packing A would
   * cost about as much as the multiply, so the kernel reads it in place. */
  p.a_direct = !p.pa && p.path == PATH_VNNI && g->M <= 4 && K > 0 && K % 4 == 0;
  size_t col_bytes = (size_t)p.ng * 4; /* packed bytes per col */
  /* B block of about 1 MiB: stays in L2 while every row block sweeps it. */
  size_t nc = col_bytes ? ((size_t)1 << 20) / col_bytes : 4096;
  nc = nc / (size_t)p.nr * (size_t)p.nr;
  size_t nmax = ((size_t)g->N + p.nr - 1) / p.nr * p.nr;
  if (nc < (size_t)p.nr)
    nc = (size_t)p.nr;
  if (nc > nmax)
    nc = nmax;
  p.nc = (int)nc;

  double ops = 2.0 * g->M * g->N * (K ? K : 1);
  int ntasks = ops < 400000.0 ? 1 : dg_cpu_pool_threads(pool);
  double best = -1.0;
  p.tm = p.tn = 1;
  for (int tm = 1; tm <= ntasks; tm++) {
    if (ntasks % tm)
      continue;
    int tn = ntasks / tm;
    if (tm > (g->M + p.mr - 1) / p.mr || tn > (g->N + p.nr - 1) / p.nr)
      continue;
    double cost = (double)g->M / tm + (double)g->N / tn;
    if (best < 0 || cost < best)
      best = cost, p.tm = tm, p.tn = tn;
  }
  ntasks = p.tm * p.tn;

  p.a_bytes =
      p.pa || p.a_direct ? 0 : ((size_t)p.mr * col_bytes + 63) & ~(size_t)63;
  p.b_bytes = p.pb ? 0 : (nc * col_bytes + 63) & ~(size_t)63;
  p.per_task =
      p.a_bytes + p.b_bytes + ((3 * nc * sizeof(int32_t) + 63) & ~(size_t)63);
  size_t bytes = p.per_task * (size_t)ntasks;
  p.scratch = dg_cpu_pool_scratch_get(pool, bytes);
  if (!p.scratch) {
    run_naive(g);
    return;
  }
  dg_cpu_pool_run(pool, run_task, &p, ntasks);
  dg_cpu_pool_scratch_put(pool, p.scratch);
}
