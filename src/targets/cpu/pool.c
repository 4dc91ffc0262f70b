/* CPU pooling (ops/pool.c): max and average windows, global average. */
#include "cpu_ops.h"

#include "core/half.h"
#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* No FMA contraction: meson passes -ffp-contract=off. */

double dg_cpu_sum_f32(const float *x, int64_t n, int64_t stride) {
  /* Four double accumulators: exact for any f32 sum a tensor can hold
   * to well within f32's precision, and independent chains for speed. */
  double s[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; k++)
      s[k] += x[(i + k) * stride];
  for (; i < n; i++)
    s[0] += x[i * stride];
  return (s[0] + s[1]) + (s[2] + s[3]);
}

/* The taps [lo, hi) of a window starting at s0 (k taps, dilation d) that
 * fall in [0, n): the pooling loops then run over taps, not positions. */
static void pool_taps(int64_t s0, int k, int d, int64_t n, int64_t *lo,
                      int64_t *hi) {
  *lo = s0 < 0 ? (-s0 + d - 1) / d : 0;
  int64_t h = s0 >= n ? 0 : (n - 1 - s0) / d + 1;
  *hi = h < k ? h : k;
  if (*hi < *lo)
    *hi = *lo;
}

/* Pooling, one typed loop per element type: max over the window's taps
 * inside the input; averages divide as the reference does (with
 * count_include_pad, by the taps inside the padded input). */
#define POOL(name, T, ACC, INIT)                                               \
  static void name(dg_cpu_node *cn, const T *x, T *y, bool is_max) {           \
    const dg_tensor_desc *xd = in_desc(cn, 0), *yd = out_desc(cn);             \
    const dg_node_params *p = &cn->node->p;                                    \
    int64_t NC = xd->dims[0] * xd->dims[1], H = xd->dims[2], W = xd->dims[3];  \
    int64_t OH = yd->dims[2], OW = yd->dims[3];                                \
    int dh = p->dilation[0], dw = p->dilation[1];                              \
    for (int64_t c = 0; c < NC; c++, x += H * W)                               \
      for (int64_t oh = 0; oh < OH; oh++) {                                    \
        int64_t h0 = oh * p->stride[0] - p->pads[0], is, ie, ip, unused;       \
        pool_taps(h0, p->kernel[0], dh, H, &is, &ie);                          \
        pool_taps(h0, p->kernel[0], dh, H + p->pads[2], &unused, &ip);         \
        for (int64_t ow = 0; ow < OW; ow++) {                                  \
          int64_t w0 = ow * p->stride[1] - p->pads[1], js, je, jp;             \
          pool_taps(w0, p->kernel[1], dw, W, &js, &je);                        \
          ACC acc = is_max ? INIT : 0;                                         \
          for (int64_t i = is; i < ie; i++)                                    \
            for (int64_t j = js; j < je; j++) {                                \
              ACC v = x[(h0 + i * dh) * W + w0 + j * dw];                      \
              acc = is_max ? (v > acc ? v : acc) : acc + v;                    \
            }                                                                  \
          if (!is_max) {                                                       \
            pool_taps(w0, p->kernel[1], dw, W + p->pads[3], &unused, &jp);     \
            int64_t cnt =                                                      \
                p->count_include_pad ? ip * jp : (ie - is) * (je - js);        \
            acc /= (ACC)(cnt ? cnt : 1);                                       \
          }                                                                    \
          *y++ = (T)acc;                                                       \
        }                                                                      \
      }                                                                        \
  }
/* Sums in double (f32) and int64 (int8): a window may be the whole image,
 * and an f32 running sum of 16M values is off by percents. */
POOL(pool_f32, float, double, -INFINITY)
POOL(pool_i8, int8_t, int64_t, INT32_MIN)
POOL(pool_u8, uint8_t, int64_t, INT32_MIN)
#undef POOL

/* The fast paths below assume undilated windows (dilated ones take the
 * generic loop). */
static bool pool_windows_inside(const dg_cpu_node *cn) {
  const dg_tensor_desc *xd = in_desc(cn, 0), *yd = out_desc(cn);
  const dg_node_params *p = &cn->node->p;
  return p->dilation[0] == 1 && p->dilation[1] == 1 && !p->pads[0] &&
         !p->pads[1] &&
         (yd->dims[2] - 1) * p->stride[0] + p->kernel[0] <= xd->dims[2] &&
         (yd->dims[3] - 1) * p->stride[1] + p->kernel[1] <= xd->dims[3];
}

/* 2x2 windows with stride 2: max of two rows, then of column pairs. */
#define MAXPOOL_2X2(name, T)                                                   \
  static void name(const dg_cpu_node *cn, const T *x, T *y) {                  \
    const dg_tensor_desc *xd = in_desc(cn, 0), *yd = out_desc(cn);             \
    int64_t NC = xd->dims[0] * xd->dims[1], H = xd->dims[2], W = xd->dims[3];  \
    int64_t OH = yd->dims[2], OW = yd->dims[3];                                \
    for (int64_t c = 0; c < NC; c++, x += H * W)                               \
      for (int64_t oh = 0; oh < OH; oh++, y += OW) {                           \
        const T *r0 = x + 2 * oh * W, *r1 = r0 + W;                            \
        for (int64_t ow = 0; ow < OW; ow++) {                                  \
          T a = r0[2 * ow] > r0[2 * ow + 1] ? r0[2 * ow] : r0[2 * ow + 1];     \
          T b = r1[2 * ow] > r1[2 * ow + 1] ? r1[2 * ow] : r1[2 * ow + 1];     \
          y[ow] = a > b ? a : b;                                               \
        }                                                                      \
      }                                                                        \
  }
MAXPOOL_2X2(maxpool_2x2_f32, float)
MAXPOOL_2X2(maxpool_2x2_i8, int8_t)
MAXPOOL_2X2(maxpool_2x2_u8, uint8_t)
#undef MAXPOOL_2X2

/* Max pooling with padding, undilated (ResNet's 3x3/2 pad 1): per output
 * row, the max over the window's rows inside the input, one vectorised
 * pass over the row, then per output the max over the columns inside.
 * Taps outside the input count for nothing, and a NaN never wins (v > m
 * is false), both as in the generic loop, so the result is the same;
 * planes are dealt to the pool's threads. */
enum { ROW_MAX = 4096, MAXPOOL_PAD = 64 };
typedef struct rows_job {
  const dg_cpu_node *cn;
  const void *x;
  void *y;
  int64_t planes;
} rows_job;

/* The column pass: y[ow] = the max of the window's taps in rowp, which
 * holds the row's maxima at [pl, pl + W) and INIT around them (padded
 * taps, which never win). KW and SW are constants where inlined (3, 2 /
 * 3, 1: ResNet's and Inception's pools), so the loop vectorises. */
#define MAXPOOL_COLS(name, T, ACC, INIT)                                       \
  static inline __attribute__((always_inline)) void name(                      \
      T *restrict y, const ACC *restrict rowp, int64_t OW, int KW, int SW) {   \
    for (int64_t ow = 0; ow < OW; ow++) {                                      \
      ACC m = INIT;                                                            \
      for (int k = 0; k < KW; k++)                                             \
        m = rowp[ow * SW + k] > m ? rowp[ow * SW + k] : m;                     \
      y[ow] = (T)m;                                                            \
    }                                                                          \
  }

#define MAXPOOL_ROWS(name, T, ACC, INIT)                                       \
  MAXPOOL_COLS(name##_cols, T, ACC, INIT)                                      \
  static void name(void *arg, int t, int n) {                                  \
    const rows_job *j = arg;                                                   \
    const dg_tensor_desc *xd = in_desc(j->cn, 0), *yd = out_desc(j->cn);       \
    const dg_node_params *p = &j->cn->node->p;                                 \
    const int64_t H = xd->dims[2], W = xd->dims[3], OH = yd->dims[2],          \
                  OW = yd->dims[3];                                            \
    const int KH = (int)p->kernel[0], KW = (int)p->kernel[1];                  \
    const int SH = (int)p->stride[0], SW = (int)p->stride[1];                  \
    const int64_t pt = p->pads[0], pl = p->pads[1];                            \
    /* rowp: INIT, the row's maxima, INIT to the last window's end */          \
    ACC rowp[ROW_MAX + 2 * MAXPOOL_PAD];                                       \
    const int64_t span = (OW - 1) * SW + KW;                                   \
    for (int64_t i = 0; i < span; i++)                                         \
      rowp[i] = INIT;                                                          \
    ACC *restrict row = rowp + pl;                                             \
    for (int64_t c = j->planes * t / n; c < j->planes * (t + 1) / n; c++) {    \
      const T *x = (const T *)j->x + c * H * W;                                \
      T *y = (T *)j->y + c * OH * OW;                                          \
      for (int64_t oh = 0; oh < OH; oh++, y += OW) {                           \
        int64_t h0 = oh * SH - pt, is, ie;                                     \
        pool_taps(h0, KH, 1, H, &is, &ie);                                     \
        if (is >= ie) { /* no row inside: as the generic loop */               \
          for (int64_t ow = 0; ow < OW; ow++)                                  \
            y[ow] = (T)(ACC)INIT;                                              \
          continue;                                                            \
        }                                                                      \
        for (int64_t iw = 0; iw < W; iw++)                                     \
          row[iw] = INIT;                                                      \
        for (int64_t i = is; i < ie; i++) {                                    \
          const T *restrict r = x + (h0 + i) * W;                              \
          for (int64_t iw = 0; iw < W; iw++)                                   \
            row[iw] = (ACC)r[iw] > row[iw] ? (ACC)r[iw] : row[iw];             \
        }                                                                      \
        if (KW == 3 && SW == 2)                                                \
          name##_cols(y, rowp, OW, 3, 2);                                      \
        else if (KW == 3 && SW == 1)                                           \
          name##_cols(y, rowp, OW, 3, 1);                                      \
        else                                                                   \
          name##_cols(y, rowp, OW, KW, SW);                                    \
      }                                                                        \
    }                                                                          \
  }
MAXPOOL_ROWS(maxpool_rows_f32, float, float, -INFINITY)
MAXPOOL_ROWS(maxpool_rows_i8, int8_t, int32_t, INT32_MIN)
MAXPOOL_ROWS(maxpool_rows_u8, uint8_t, int32_t, INT32_MIN)
#undef MAXPOOL_ROWS

/* f32 average pooling likewise (Inception's 3x3/1 pad 1): the window's
 * rows summed per column in double, then its columns, divided as the
 * generic loop does (its taps inside, or with count_include_pad the taps
 * inside the padded input). The double sums differ from the generic
 * loop's order only far below float precision. The columns whose window
 * lies wholly inside the row are summed a tap at a time across all of
 * them and divided as one loop, so both vectorise; the few at the edges
 * take the loop per column. Each output's sum is the same either way:
 * +0, then its taps left to right. */
static inline __attribute__((always_inline)) void
avgpool_rows_body(void *arg, int t, int n) {
  const rows_job *j = arg;
  const dg_tensor_desc *xd = in_desc(j->cn, 0), *yd = out_desc(j->cn);
  const dg_node_params *p = &j->cn->node->p;
  int64_t H = xd->dims[2], W = xd->dims[3], OH = yd->dims[2], OW = yd->dims[3];
  const int64_t KW = p->kernel[1], SW = p->stride[1], PL = p->pads[1];
  double row[ROW_MAX], acc[ROW_MAX];
  /* [a, b): the columns whose window is all inside the row, KW taps in
   * either count */
  int64_t a = (PL + SW - 1) / SW,
          b = W - KW + PL < 0 ? 0 : (W - KW + PL) / SW + 1;
  if (b > OW)
    b = OW;
  if (a > b)
    a = b;
  for (int64_t c = j->planes * t / n; c < j->planes * (t + 1) / n; c++) {
    const float *x = (const float *)j->x + c * H * W;
    float *y = (float *)j->y + c * OH * OW;
    for (int64_t oh = 0; oh < OH; oh++, y += OW) {
      int64_t h0 = oh * p->stride[0] - p->pads[0], is, ie, ip, unused;
      pool_taps(h0, p->kernel[0], 1, H, &is, &ie);
      pool_taps(h0, p->kernel[0], 1, H + p->pads[2], &unused, &ip);
      int64_t ch = p->count_include_pad ? ip : ie - is;
      const double chd = (double)(ch ? ch : 1); /* none: every sum is 0 */
      for (int64_t iw = 0; iw < W; iw++)
        row[iw] = 0;
      for (int64_t i = is; i < ie; i++) {
        const float *r = x + (h0 + i) * W;
        for (int64_t iw = 0; iw < W; iw++)
          row[iw] += r[iw];
      }
      /* the generic loop's acc / (double)(count), the product exact */
      for (int64_t ow = a; ow < b; ow++)
        acc[ow] = 0;
      for (int64_t k = 0; k < KW; k++)
        for (int64_t ow = a; ow < b; ow++)
          acc[ow] += row[ow * SW - PL + k];
      for (int64_t ow = a; ow < b; ow++)
        y[ow] = (float)(acc[ow] / (chd * (double)KW));
      /* the columns before a and from b on, one at a time */
      for (int e = 0; e < 2; e++)
        for (int64_t ow = e ? b : 0; ow < (e ? OW : a); ow++) {
          int64_t w0 = ow * SW - PL, js, je, jp;
          pool_taps(w0, (int)KW, 1, W, &js, &je);
          pool_taps(w0, (int)KW, 1, W + p->pads[3], &unused, &jp);
          int64_t cw = p->count_include_pad ? jp : je - js;
          double sum = 0;
          for (int64_t k = js; k < je; k++)
            sum += row[w0 + k];
          y[ow] = (float)(sum / (chd * (double)(cw ? cw : 1)));
        }
    }
  }
}

/* The body at each x86 level (the double sums and divisions vectorise 8
 * or 4 wide; the baseline's are 2 wide), picked per call by
 * avgpool_rows_f32. */
static void avgpool_rows_base(void *arg, int t, int n) {
  avgpool_rows_body(arg, t, n);
}
#if defined(__x86_64__)
__attribute__((target("avx2"))) static void avgpool_rows_avx2(void *arg, int t,
                                                              int n) {
  avgpool_rows_body(arg, t, n);
}
DG_CPU_T512 static void avgpool_rows_avx512(void *arg, int t, int n) {
  avgpool_rows_body(arg, t, n);
}
#endif
static void (*avgpool_rows_f32(void))(void *, int, int) {
#if defined(__x86_64__)
  int level = dg_cpu_simd_level();
  if (level >= DG_CPU_SIMD_AVX512)
    return avgpool_rows_avx512;
  if (level >= DG_CPU_SIMD_AVX2)
    return avgpool_rows_avx2;
#endif
  return avgpool_rows_base;
}

static void pool_generic(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                         void *out, bool is_max) {
  const dg_node_params *p = &cn->node->p;
  if (is_max && pool_windows_inside(cn) && p->kernel[0] == 2 &&
      p->kernel[1] == 2 && p->stride[0] == 2 && p->stride[1] == 2) {
    switch (in_desc(cn, 0)->dtype) {
    case DG_DTYPE_I8:
      maxpool_2x2_i8(cn, in[0], out);
      return;
    case DG_DTYPE_U8:
      maxpool_2x2_u8(cn, in[0], out);
      return;
    default:
      maxpool_2x2_f32(cn, in[0], out);
      return;
    }
  }
  const dg_tensor_desc *xd = in_desc(cn, 0);
  /* max: the padded row of MAXPOOL_COLS holds the columns' pads */
  bool rows =
      p->dilation[0] == 1 && p->dilation[1] == 1 && xd->dims[3] <= ROW_MAX &&
      (is_max ? p->pads[1] <= MAXPOOL_PAD && p->pads[3] <= MAXPOOL_PAD
              : xd->dtype == DG_DTYPE_F32 && out_desc(cn)->dims[3] <= ROW_MAX);
  if (rows) {
    rows_job j = {cn, in[0], out, xd->dims[0] * xd->dims[1]};
    int tasks = dg_cpu_pool_tasks(pool, dg_desc_elements(xd), 65536, j.planes);
    void (*fn)(void *, int, int) = !is_max ? avgpool_rows_f32()
                                   : xd->dtype == DG_DTYPE_I8 ? maxpool_rows_i8
                                   : xd->dtype == DG_DTYPE_U8
                                       ? maxpool_rows_u8
                                       : maxpool_rows_f32;
    dg_cpu_pool_run(pool, fn, &j, tasks);
    return;
  }
  switch (in_desc(cn, 0)->dtype) {
  case DG_DTYPE_I8:
    pool_i8(cn, in[0], out, is_max);
    break;
  case DG_DTYPE_U8:
    pool_u8(cn, in[0], out, is_max);
    break;
  default:
    pool_f32(cn, in[0], out, is_max);
    break;
  }
}

void dg_cpu_maxpool_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                      void *out, void *scratch) {
  (void)scratch;
  pool_generic(cn, pool, in, out, true);
}
void dg_cpu_avgpool_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                      void *out, void *scratch) {
  (void)scratch;
  pool_generic(cn, pool, in, out, false);
}

typedef struct gap_job {
  const float *x;
  float *y;
  int64_t NC, HW;
} gap_job;

/* A share of the planes, each summed in double (numerics.md). */
static void gap_planes(void *arg, int t, int n) {
  const gap_job *j = arg;
  for (int64_t c = j->NC * t / n; c < j->NC * (t + 1) / n; c++)
    j->y[c] =
        (float)(dg_cpu_sum_f32(j->x + c * j->HW, j->HW, 1) / (double)j->HW);
}

void dg_cpu_gap_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                  void *out, void *scratch) {
  (void)scratch;
  const dg_tensor_desc *xd = in_desc(cn, 0);
  gap_job j = {in[0], out, xd->dims[0] * xd->dims[1],
               xd->dims[2] * xd->dims[3]};
  dg_cpu_pool_run(pool, gap_planes, &j,
                  dg_cpu_pool_tasks(pool, j.NC * j.HW, 65536, j.NC));
}
