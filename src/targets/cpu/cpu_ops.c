/* CPU kernels: convolution through im2col + packed GEMM (or GEMM directly
 * for 1x1), a direct depthwise kernel, int8 through the quantised GEMM, and
 * simple loops for the memory-bound ops. Each follows the formula of its
 * reference kernel in src/ops. */
#include "cpu_ops.h"
#include "conv_f32.h"
#include "cpu_reduce.h"
#include "movement.h"

#include "core/half.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* No FMA contraction: meson passes -ffp-contract=off. */

static const dg_tensor_desc *in_desc(const dg_cpu_node *cn, int k) {
  return &dg_ir_tensor(cn->ir, cn->node->inputs[k])->desc;
}
static const dg_tensor_desc *out_desc(const dg_cpu_node *cn) {
  return &dg_ir_tensor(cn->ir, cn->node->output)->desc;
}

static void act_range(dg_activation a, float *lo, float *hi) {
  *lo = a == DG_ACTIVATION_NONE ? -INFINITY : 0.0f;
  *hi = a == DG_ACTIVATION_RELU6 ? 6.0f : INFINITY;
}

/* ---- convolution ---- */

typedef struct conv_dims {
  int64_t N, C, H, W, O, OH, OW, KH, KW, G, CG, OG, K, P;
  int sh, sw, dh, dw, pt, pl;
} conv_dims;

static conv_dims conv_get(const dg_cpu_node *cn) {
  const dg_tensor_desc *x = in_desc(cn, 0), *w = in_desc(cn, 1),
                       *y = out_desc(cn);
  const dg_node_params *p = &cn->node->p;
  conv_dims d = {x->dims[0],
                 x->dims[1],
                 x->dims[2],
                 x->dims[3],
                 w->dims[0],
                 y->dims[2],
                 y->dims[3],
                 w->dims[2],
                 w->dims[3],
                 p->groups,
                 0,
                 0,
                 0,
                 0,
                 p->stride[0],
                 p->stride[1],
                 p->dilation[0],
                 p->dilation[1],
                 p->pads[0],
                 p->pads[1]};
  d.CG = d.C / d.G;
  d.OG = d.O / d.G;
  d.K = d.CG * d.KH * d.KW;
  d.P = d.OH * d.OW;
  return d;
}

static bool conv_is_pointwise(const conv_dims *d) {
  return d->KH == 1 && d->KW == 1 && d->sh == 1 && d->sw == 1 && !d->pt &&
         !d->pl && d->OH == d->H && d->OW == d->W;
}

/* Output columns [lo, hi) of a row whose input column ow*stride - pad +
 * k*dil lies inside [0, W). */
static void valid_cols(int64_t OW, int64_t W, int stride, int pad, int64_t off,
                       int64_t *lo, int64_t *hi) {
  int64_t first = off - pad; /* input column of output 0 */
  *lo = first >= 0 ? 0 : (-first + stride - 1) / stride;
  *hi = W - first <= 0 ? 0 : (W - first + stride - 1) / stride;
  if (*hi > OW)
    *hi = OW;
  if (*lo > *hi)
    *lo = *hi;
}

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define T512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
/* Short rows (LeNet's are 10-28 elements) cost more in memcpy's call and
 * dispatch than in the copy: masked vector moves instead. */
T512 static void copy_u8_512(uint8_t *dst, const uint8_t *src, int64_t n) {
  for (; n > 0; n -= 64, dst += 64, src += 64) {
    __mmask64 m = n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
    _mm512_mask_storeu_epi8(dst, m, _mm512_maskz_loadu_epi8(m, src));
  }
}
#endif

static void copy_u8(uint8_t *dst, const uint8_t *src, int64_t n, bool wide) {
#if defined(__x86_64__) || defined(__i386__)
  if (wide) {
    copy_u8_512(dst, src, n);
    return;
  }
#endif
  (void)wide;
  memcpy(dst, src, (size_t)n);
}

/* Rows [k0, k1) of the uint8/int8 im2col matrix of one group of one
 * image, col[K, P], the padding filled with pad (the input's zero
 * point). A row range so that threads can share one image. */
static void im2col_8(const conv_dims *d, const uint8_t *x, uint8_t *col,
                     uint8_t pad, int64_t k0, int64_t k1) {
  bool wide = dg_cpu_simd_level() >= DG_CPU_SIMD_AVX512;
  int64_t taps = d->KH * d->KW;
  for (int64_t k = k0; k < k1; k++) {
    int64_t c = k / taps, kh = k % taps / d->KW, kw = k % d->KW;
    uint8_t *dst = col + k * d->P;
    const uint8_t *src = x + c * d->H * d->W;
    int64_t lo, hi;
    valid_cols(d->OW, d->W, d->sw, d->pl, kw * d->dw, &lo, &hi);
    for (int64_t oh = 0; oh < d->OH; oh++) {
      int64_t ih = oh * d->sh - d->pt + kh * d->dh;
      uint8_t *row = dst + oh * d->OW;
      if (ih < 0 || ih >= d->H) {
        memset(row, pad, (size_t)d->OW);
        continue;
      }
      const uint8_t *in = src + ih * d->W - d->pl + kw * d->dw;
      for (int64_t ow = 0; ow < lo; ow++)
        row[ow] = pad;
      if (d->sw == 1)
        copy_u8(row + lo, in + lo, hi - lo, wide);
      else
        for (int64_t ow = lo; ow < hi; ow++)
          row[ow] = in[ow * d->sw];
      for (int64_t ow = hi; ow < d->OW; ow++)
        row[ow] = pad;
    }
  }
}

typedef struct dw_job {
  const conv_dims *d;
  const float *x, *w, *b;
  float *y;
  float lo, hi;
} dw_job;

/* Depthwise: one task per (image, channel). */
static void dw_task(void *arg, int i, int n) {
  (void)n;
  const dw_job *j = arg;
  const conv_dims *d = j->d;
  int64_t c = i % d->C;
  const float *x = j->x + (size_t)i * d->H * d->W;
  const float *w = j->w + c * d->KH * d->KW;
  float *y = j->y + (size_t)i * d->P;
  float bias = j->b ? j->b[c] : 0.0f;
  for (int64_t oh = 0; oh < d->OH; oh++)
    for (int64_t ow = 0; ow < d->OW; ow++) {
      float s = 0;
      for (int64_t kh = 0; kh < d->KH; kh++) {
        int64_t ih = oh * d->sh - d->pt + kh * d->dh;
        if (ih < 0 || ih >= d->H)
          continue;
        for (int64_t kw = 0; kw < d->KW; kw++) {
          int64_t iw = ow * d->sw - d->pl + kw * d->dw;
          if (iw >= 0 && iw < d->W)
            s += x[ih * d->W + iw] * w[kh * d->KW + kw];
        }
      }
      s += bias;
      y[oh * d->OW + ow] = s < j->lo ? j->lo : (s > j->hi ? j->hi : s);
    }
}

static dg_cpu_conv_shape conv_shape(const conv_dims *d) {
  return (dg_cpu_conv_shape){(int)d->N,  (int)d->C,  (int)d->H,  (int)d->W,
                             (int)d->O,  (int)d->OH, (int)d->OW, (int)d->KH,
                             (int)d->KW, (int)d->G,  d->sh,      d->sw,
                             d->dh,      d->dw,      d->pt,      d->pl};
}

static void conv_f32(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                     void *out, void *scratch) {
  conv_dims d = conv_get(cn);
  const float *x = in[0], *w = in[1], *b = in[2];
  float *y = out;
  float lo, hi;
  act_range(cn->node->p.activation, &lo, &hi);
  if (d.CG == 1 && d.OG == 1) {
    dw_job j = {&d, x, w, b, y, lo, hi};
    dg_cpu_pool_run(pool, dw_task, &j, (int)(d.N * d.C));
    return;
  }
  if (!conv_is_pointwise(&d)) { /* implicit GEMM, no im2col matrix */
    dg_cpu_conv_shape s = conv_shape(&d);
    dg_cpu_conv_f32(pool, &s, x, w, cn->spack, b, y, lo, hi, scratch,
                    cn->scratch_bytes);
    return;
  }
  for (int64_t n = 0; n < d.N; n++)
    for (int64_t g = 0; g < d.G; g++) {
      const float *xg = x + (n * d.C + g * d.CG) * d.H * d.W;
      dg_cpu_sgemm_args a = {.M = (int)d.OG,
                             .N = (int)d.P,
                             .K = (int)d.K,
                             .A = w + g * d.OG * d.K,
                             .lda = (int)d.K,
                             .B = xg,
                             .ldb = (int)d.P,
                             .C = y + (n * d.O + g * d.OG) * d.P,
                             .ldc = (int)d.P,
                             .bias = b ? b + g * d.OG : NULL,
                             .bias_per_row = 1,
                             .clamp_lo = lo,
                             .clamp_hi = hi};
      dg_cpu_sgemm_packed_run(pool, &a, cn->spack ? cn->spack[g] : NULL, NULL);
    }
}

/* A bias fed at run time (not a constant) is read on every run. */
static void refresh_bias(dg_cpu_node *cn, void *const *in, int64_t channels) {
  if (cn->bias_is_input && in[2])
    memcpy(cn->bias, in[2], sizeof(int32_t) * (size_t)channels);
}

typedef struct q8_job {
  dg_cpu_node *cn;
  const conv_dims *d;
  void *const *in;
  void *out;
  uint8_t *scratch;  /* one im2col matrix per task */
  const uint8_t *xg; /* im2col_task: the group being expanded */
  int ntasks;
} q8_job;

/* One image and group through the quantised GEMM; col is its im2col
 * matrix (unused for pointwise convolutions, which read x in place). */
static void q8_gemm(const q8_job *j, dg_cpu_pool *pool, int64_t n, int64_t g,
                    const uint8_t *col) {
  dg_cpu_node *cn = j->cn;
  const conv_dims *d = j->d;
  const dg_tensor_desc *xd = in_desc(cn, 0), *wd = in_desc(cn, 1),
                       *yd = out_desc(cn);
  const int8_t *xg =
      (const int8_t *)j->in[0] + (n * d->C + g * d->CG) * d->H * d->W;
  dg_cpu_qgemm_args a = {.M = (int)d->OG,
                         .N = (int)d->P,
                         .K = (int)d->K,
                         .A = (const int8_t *)j->in[1] + g * d->OG * d->K,
                         .lda = (int)d->K,
                         .a_signed = wd->dtype == DG_DTYPE_I8,
                         .za = cn->w_zero + g * d->OG,
                         .a_zero_per_row = 1,
                         .B = conv_is_pointwise(d) ? (const void *)xg : col,
                         .ldb = (int)d->P,
                         .b_signed = xd->dtype == DG_DTYPE_I8,
                         .zb = &cn->x_zero,
                         .C = (int8_t *)j->out + (n * d->O + g * d->OG) * d->P,
                         .ldc = (int)d->P,
                         .c_signed = yd->dtype == DG_DTYPE_I8,
                         .c_zero = cn->y_zero,
                         .chan_per_row = 1,
                         .per_channel = 1,
                         .bias = cn->bias + g * d->OG,
                         .mult = cn->mult + g * d->OG,
                         .clamp_lo = cn->clamp_lo,
                         .clamp_hi = cn->clamp_hi};
  dg_cpu_qgemm_packed_run(pool, &a, cn->qpack ? cn->qpack[g] : NULL, NULL);
}

/* Task i of n expands rows [K*i/n, K*(i+1)/n) of one group's im2col. */
static void im2col_task(void *arg, int i, int n) {
  const q8_job *j = arg;
  im2col_8(j->d, j->xg, j->scratch, (uint8_t)j->cn->x_zero, j->d->K * i / n,
           j->d->K * (i + 1) / n);
}

/* Task i of ntasks: a contiguous range of images with its own im2col
 * buffer, each GEMM on this thread alone. */
static void q8_images_task(void *arg, int i, int n) {
  (void)n;
  const q8_job *j = arg;
  const conv_dims *d = j->d;
  uint8_t *col = j->scratch + (size_t)(d->K * d->P) * (size_t)i;
  for (int64_t img = d->N * i / j->ntasks; img < d->N * (i + 1) / j->ntasks;
       img++)
    for (int64_t g = 0; g < d->G; g++) {
      const uint8_t *xg =
          (const uint8_t *)j->in[0] + (img * d->C + g * d->CG) * d->H * d->W;
      if (!conv_is_pointwise(d))
        im2col_8(d, xg, col, (uint8_t)j->cn->x_zero, 0, d->K);
      q8_gemm(j, NULL, img, g, col);
    }
}

/* im2col bytes the int8 convolution needs on a pool of `threads`. */
static size_t q8_scratch(const conv_dims *d, int threads) {
  if (conv_is_pointwise(d))
    return 0;
  size_t one = (size_t)(d->K * d->P);
  return dg_cpu_conv_by_images((int)d->N, threads) ? one * (size_t)threads
                                                   : one;
}

static void conv_q8(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                    void *out, void *scratch) {
  conv_dims d = conv_get(cn);
  refresh_bias(cn, in, d.O);
  int threads = dg_cpu_pool_threads(pool);
  q8_job j = {cn, &d, in, out, scratch, NULL, threads};
  if (dg_cpu_conv_by_images((int)d.N, threads) &&
      cn->scratch_bytes >= q8_scratch(&d, threads)) {
    dg_cpu_pool_run(pool, q8_images_task, &j, threads);
    return;
  }
  /* One image at a time: the expansion split by rows when it is big
   * enough to pay for the hand-off, then the GEMM split by the GEMM. */
  int parts = d.K * d.P >= 65536 ? threads : 1;
  for (int64_t n = 0; n < d.N; n++)
    for (int64_t g = 0; g < d.G; g++) {
      j.xg = (const uint8_t *)in[0] + (n * d.C + g * d.CG) * d.H * d.W;
      if (!conv_is_pointwise(&d))
        dg_cpu_pool_run(pool, im2col_task, &j, parts);
      q8_gemm(&j, pool, n, g, scratch);
    }
}

/* Depthwise int8 (groups = C = O): each output plane is its input
 * plane's window sums, made directly, row by row, into an int32 row:
 * no im2col and no GEMM per group, which cost MobileNet's depthwise
 * layers most of their time. Each tap adds its column range where the
 * input is inside the plane (valid_cols); padding adds nothing, as a
 * padded x equals zx. The sums are exact integers, so the order does
 * not matter and the result is the GEMM path's, bit for bit. */
typedef struct dw_q8_job {
  dg_cpu_node *cn;
  const conv_dims *d;
  const uint8_t *x, *w;
  uint8_t *y;
  int32_t *rows; /* one OW row of sums per task */
  int ntasks;
} dw_q8_job;

static inline int32_t q8_at(const uint8_t *p, int64_t i, bool s) {
  return s ? (int32_t)(int8_t)p[i] : (int32_t)p[i];
}

static void dw_q8_task(void *arg, int t, int n) {
  const dw_q8_job *j = arg;
  const conv_dims *d = j->d;
  const dg_cpu_node *cn = j->cn;
  bool xs = in_desc(cn, 0)->dtype == DG_DTYPE_I8,
       ws = in_desc(cn, 1)->dtype == DG_DTYPE_I8;
  int64_t planes = d->N * d->C, p0 = planes * t / n, p1 = planes * (t + 1) / n;
  /* restrict: a uint8_t pointer may alias anything, which would keep
   * GCC from vectorising the row sums */
  int32_t *restrict acc = j->rows + (int64_t)t * d->OW;
  int32_t zx = cn->x_zero;
  /* Each tap column's output range is the same on every row: found once
   * (its divisions cost more than the short rows' sums otherwise). */
  enum { MAX_KW = 64 };
  int64_t lo_of[MAX_KW], hi_of[MAX_KW];
  for (int64_t kw = 0; kw < d->KW && kw < MAX_KW; kw++)
    valid_cols(d->OW, d->W, d->sw, d->pl, kw * d->dw, &lo_of[kw], &hi_of[kw]);
  for (int64_t pc = p0; pc < p1; pc++) {
    int64_t c = pc % d->C;
    const uint8_t *xp = j->x + pc * d->H * d->W, *wp = j->w + c * d->KH * d->KW;
    uint8_t *yp = j->y + pc * d->OH * d->OW;
    for (int64_t oh = 0; oh < d->OH; oh++) {
      for (int64_t ow = 0; ow < d->OW; ow++)
        acc[ow] = cn->bias[c];
      for (int64_t kh = 0; kh < d->KH; kh++) {
        int64_t ih = oh * d->sh - d->pt + kh * d->dh;
        if (ih < 0 || ih >= d->H)
          continue;
        const uint8_t *row = xp + ih * d->W;
        for (int64_t kw = 0; kw < d->KW; kw++) {
          int32_t wv = q8_at(wp, kh * d->KW + kw, ws) - cn->w_zero[c];
          int64_t lo, hi, off = kw * d->dw - d->pl;
          if (kw < MAX_KW)
            lo = lo_of[kw], hi = hi_of[kw];
          else
            valid_cols(d->OW, d->W, d->sw, d->pl, kw * d->dw, &lo, &hi);
          /* stride 1 (most depthwise layers) reads contiguously, which
           * GCC vectorises */
          const uint8_t *restrict src = row + off;
          if (d->sw == 1 && xs)
            for (int64_t ow = lo; ow < hi; ow++)
              acc[ow] += ((int32_t)(int8_t)src[ow] - zx) * wv;
          else if (d->sw == 1)
            for (int64_t ow = lo; ow < hi; ow++)
              acc[ow] += ((int32_t)src[ow] - zx) * wv;
          else if (xs)
            for (int64_t ow = lo; ow < hi; ow++)
              acc[ow] += ((int32_t)(int8_t)src[ow * d->sw] - zx) * wv;
          else
            for (int64_t ow = lo; ow < hi; ow++)
              acc[ow] += ((int32_t)src[ow * d->sw] - zx) * wv;
        }
      }
      for (int64_t ow = 0; ow < d->OW; ow++)
        yp[oh * d->OW + ow] =
            (uint8_t)(dg_requant(acc[ow], cn->mult[c], cn->y_zero, cn->clamp_lo,
                                 cn->clamp_hi) &
                      0xff);
    }
  }
}

static size_t dw_q8_scratch(const conv_dims *d, int threads) {
  return sizeof(int32_t) * (size_t)d->OW * (size_t)(threads > 1 ? threads : 1);
}

static void conv_q8_dw(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                       void *out, void *scratch) {
  conv_dims d = conv_get(cn);
  refresh_bias(cn, in, d.O);
  /* as many tasks as the scratch has rows for, and planes to share */
  int64_t cap = (int64_t)(cn->scratch_bytes / (sizeof(int32_t) * d.OW));
  int64_t tasks = dg_cpu_pool_threads(pool);
  if (tasks > cap)
    tasks = cap;
  if (tasks > d.N * d.C)
    tasks = d.N * d.C;
  dw_q8_job j = {cn, &d, in[0], in[1], out, scratch, (int)tasks};
  if (tasks > 0)
    dg_cpu_pool_run(pool, dw_q8_task, &j, (int)tasks);
}

/* ---- fully connected, matmul ---- */

static void fc_f32(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                   void *out, void *scratch) {
  (void)scratch;
  const dg_tensor_desc *wd = in_desc(cn, 1);
  float lo, hi;
  act_range(cn->node->p.activation, &lo, &hi);
  int M = (int)out_desc(cn)->dims[0], N = (int)wd->dims[0],
      K = (int)wd->dims[1];
  dg_cpu_sgemm_args a = {.M = M,
                         .N = N,
                         .K = K,
                         .A = in[0],
                         .lda = K,
                         .B = in[1],
                         .ldb = K,
                         .trans_b = 1,
                         .C = out,
                         .ldc = N,
                         .bias = in[2],
                         .clamp_lo = lo,
                         .clamp_hi = hi};
  dg_cpu_sgemm_packed_run(pool, &a, NULL, cn->spack ? cn->spack[0] : NULL);
}

static void fc_q8(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                  void *out, void *scratch) {
  (void)scratch;
  const dg_tensor_desc *xd = in_desc(cn, 0), *wd = in_desc(cn, 1),
                       *yd = out_desc(cn);
  int M = (int)yd->dims[0], N = (int)wd->dims[0], K = (int)wd->dims[1];
  refresh_bias(cn, in, N);
  dg_cpu_qgemm_args a = {.M = M,
                         .N = N,
                         .K = K,
                         .A = in[0],
                         .lda = K,
                         .a_signed = xd->dtype == DG_DTYPE_I8,
                         .za = &cn->x_zero,
                         .B = in[1],
                         .ldb = K,
                         .b_signed = wd->dtype == DG_DTYPE_I8,
                         .trans_b = 1,
                         .zb = cn->w_zero,
                         .b_zero_per_col = 1,
                         .C = out,
                         .ldc = N,
                         .c_signed = yd->dtype == DG_DTYPE_I8,
                         .c_zero = cn->y_zero,
                         .per_channel = 1,
                         .bias = cn->bias,
                         .mult = cn->mult,
                         .clamp_lo = cn->clamp_lo,
                         .clamp_hi = cn->clamp_hi};
  dg_cpu_qgemm_packed_run(pool, &a, NULL, cn->qpack ? cn->qpack[0] : NULL);
}

static void matmul_any(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                       void *out, bool q) {
  dg_matmul_shape s;
  int r;
  int64_t od[DG_MAX_RANK];
  const dg_tensor_desc *ad = in_desc(cn, 0), *bd = in_desc(cn, 1),
                       *yd = out_desc(cn);
  dg_matmul_shape_get(ad, bd, &s, &r, od);
  size_t es = q ? 1 : 4;
  for (int64_t i = 0; i < s.batch; i++) {
    int64_t ia, ib;
    dg_matmul_batch_index(&s, i, &ia, &ib);
    const char *A = (const char *)in[0] + (size_t)(ia * s.M * s.K) * es;
    const char *B = (const char *)in[1] + (size_t)(ib * s.K * s.N) * es;
    char *C = (char *)out + (size_t)(i * s.M * s.N) * es;
    if (!q) {
      dg_cpu_sgemm_args a = {.M = (int)s.M,
                             .N = (int)s.N,
                             .K = (int)s.K,
                             .A = (const float *)A,
                             .lda = (int)s.K,
                             .B = (const float *)B,
                             .ldb = (int)s.N,
                             .C = (float *)C,
                             .ldc = (int)s.N,
                             .clamp_lo = -INFINITY,
                             .clamp_hi = INFINITY};
      dg_cpu_sgemm(pool, &a);
      continue;
    }
    bool pc = bd->quant.channel_count != 0;
    dg_cpu_qgemm_args a = {.M = (int)s.M,
                           .N = (int)s.N,
                           .K = (int)s.K,
                           .A = A,
                           .lda = (int)s.K,
                           .a_signed = ad->dtype == DG_DTYPE_I8,
                           .za = &cn->x_zero,
                           .B = B,
                           .ldb = (int)s.N,
                           .b_signed = bd->dtype == DG_DTYPE_I8,
                           .zb = cn->w_zero,
                           .b_zero_per_col = pc,
                           .C = C,
                           .ldc = (int)s.N,
                           .c_signed = yd->dtype == DG_DTYPE_I8,
                           .c_zero = cn->y_zero,
                           .per_channel = pc,
                           .mult = cn->mult,
                           .clamp_lo = cn->clamp_lo,
                           .clamp_hi = cn->clamp_hi};
    dg_cpu_qgemm(pool, &a);
  }
}

static void matmul_f32(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                       void *out, void *scratch) {
  (void)scratch;
  matmul_any(cn, pool, in, out, false);
}
static void matmul_q8(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                      void *out, void *scratch) {
  (void)scratch;
  matmul_any(cn, pool, in, out, true);
}

/* ---- pooling ---- */

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

/* The common case: max pooling, no padding, every window inside the
 * input (LeNet's 2x2/2). Rows of the window are combined pairwise, which
 * the compiler vectorises for kw == stride == 2. */
#define MAXPOOL_VALID(name, T)                                                 \
  static void name(const dg_cpu_node *cn, const T *x, T *y) {                  \
    const dg_tensor_desc *xd = in_desc(cn, 0), *yd = out_desc(cn);             \
    const dg_node_params *p = &cn->node->p;                                    \
    int64_t NC = xd->dims[0] * xd->dims[1], H = xd->dims[2], W = xd->dims[3];  \
    int64_t OH = yd->dims[2], OW = yd->dims[3];                                \
    int kh = p->kernel[0], kw = p->kernel[1], sh = p->stride[0],               \
        sw = p->stride[1];                                                     \
    for (int64_t c = 0; c < NC; c++, x += H * W)                               \
      for (int64_t oh = 0; oh < OH; oh++, y += OW) {                           \
        const T *r = x + oh * sh * W;                                          \
        for (int64_t ow = 0; ow < OW; ow++) {                                  \
          T m = r[ow * sw];                                                    \
          for (int i = 0; i < kh; i++)                                         \
            for (int j = 0; j < kw; j++) {                                     \
              T v = r[i * W + ow * sw + j];                                    \
              m = v > m ? v : m;                                               \
            }                                                                  \
          y[ow] = m;                                                           \
        }                                                                      \
      }                                                                        \
  }
MAXPOOL_VALID(maxpool_valid_f32, float)
MAXPOOL_VALID(maxpool_valid_i8, int8_t)
MAXPOOL_VALID(maxpool_valid_u8, uint8_t)
#undef MAXPOOL_VALID

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

static void pool_generic(dg_cpu_node *cn, void *const *in, void *out,
                         bool is_max) {
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
  if (is_max && pool_windows_inside(cn)) {
    switch (in_desc(cn, 0)->dtype) {
    case DG_DTYPE_I8:
      maxpool_valid_i8(cn, in[0], out);
      return;
    case DG_DTYPE_U8:
      maxpool_valid_u8(cn, in[0], out);
      return;
    default:
      maxpool_valid_f32(cn, in[0], out);
      return;
    }
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

static void maxpool(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                    void *out, void *scratch) {
  (void)pool, (void)scratch;
  pool_generic(cn, in, out, true);
}
static void avgpool(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                    void *out, void *scratch) {
  (void)pool, (void)scratch;
  pool_generic(cn, in, out, false);
}

static void gap(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in, void *out,
                void *scratch) {
  (void)pool, (void)scratch;
  const dg_tensor_desc *xd = in_desc(cn, 0);
  int64_t NC = xd->dims[0] * xd->dims[1], HW = xd->dims[2] * xd->dims[3];
  for (int64_t c = 0; c < NC; c++)
    ((float *)out)[c] =
        (float)(dg_cpu_sum_f32((const float *)in[0] + c * HW, HW, 1) /
                (double)HW);
}

/* ---- elementwise, softmax ---- */

static void clip_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                   void *out, void *scratch) {
  (void)pool, (void)scratch;
  float lo = cn->node->op == DG_OP_RELU ? 0.0f : cn->node->p.clip_lo;
  float hi = cn->node->op == DG_OP_RELU ? INFINITY : cn->node->p.clip_hi;
  const float *x = in[0];
  float *y = out;
  for (int64_t i = 0, e = dg_desc_elements(out_desc(cn)); i < e; i++) {
    float v = x[i] < lo ? lo : x[i];
    y[i] = v > hi ? hi : v;
  }
}

static void sigmoid_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                      void *out, void *scratch) {
  (void)pool, (void)scratch;
  dg_cpu_sigmoid(in[0], out, dg_desc_elements(out_desc(cn)));
}

/* add (DG_OP_ADD) and binary: one kernel, fn ADD for add. */
static void binary_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                     void *out, void *scratch) {
  (void)pool, (void)scratch;
  const dg_tensor_desc *ad = in_desc(cn, 0), *bd = in_desc(cn, 1),
                       *yd = out_desc(cn);
  int64_t sa[DG_MAX_RANK], sb[DG_MAX_RANK];
  dg_broadcast_strides(ad->rank, ad->dims, yd->rank, yd->dims, sa);
  dg_broadcast_strides(bd->rank, bd->dims, yd->rank, yd->dims, sb);
  int fn = cn->node->op == DG_OP_ADD ? DG_BINARY_ADD : cn->node->p.fn;
  dg_cpu_binary(fn, yd->rank, yd->dims, in[0], sa, in[1], sb, out);
}

static void softmax_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                      void *out, void *scratch) {
  (void)pool, (void)scratch;
  const dg_tensor_desc *d = out_desc(cn);
  int axis = cn->node->p.axis;
  int64_t outer = 1, len = d->dims[axis], inner = 1;
  for (int i = 0; i < axis; i++)
    outer *= d->dims[i];
  for (int i = axis + 1; i < d->rank; i++)
    inner *= d->dims[i];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      const float *x = (const float *)in[0] + o * len * inner + j;
      float *y = (float *)out + o * len * inner + j;
      float mx = -INFINITY;
      for (int64_t k = 0; k < len; k++)
        mx = x[k * inner] > mx ? x[k * inner] : mx;
      for (int64_t k = 0; k < len; k++)
        y[k * inner] = expf(x[k * inner] - mx);
      float inv = (float)(1.0 / dg_cpu_sum_f32(y, len, inner));
      for (int64_t k = 0; k < len; k++)
        y[k * inner] *= inv;
    }
}

/* ---- data movement, quantisation ---- */

static void copy_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                   void *out, void *scratch) {
  (void)pool, (void)scratch;
  if (out != in[0])
    memcpy(out, in[0], dg_desc_bytes(out_desc(cn)));
}

static void concat_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                     void *out, void *scratch) {
  (void)pool, (void)scratch;
  const dg_tensor_desc *yd = out_desc(cn);
  int axis = cn->node->p.axis;
  size_t es = dg_dtype_size(yd->dtype);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; i++)
    outer *= yd->dims[i];
  for (int i = axis + 1; i < yd->rank; i++)
    inner *= yd->dims[i];
  int64_t off = 0, row = yd->dims[axis] * inner;
  for (int t = 0; t < cn->node->input_count; t++) {
    int64_t len = in_desc(cn, t)->dims[axis] * inner;
    for (int64_t o = 0; o < outer; o++)
      memcpy((char *)out + (size_t)(o * row + off) * es,
             (const char *)in[t] + (size_t)(o * len) * es, (size_t)len * es);
    off += len;
  }
}

static int64_t channel_of(const dg_tensor_desc *d, int64_t i, int64_t inner) {
  return d->quant.channel_count ? (i / inner) % d->dims[d->quant.axis] : 0;
}

static int64_t inner_of(const dg_tensor_desc *d) {
  int64_t inner = 1;
  for (int k = d->quant.axis + 1; d->quant.channel_count && k < d->rank; k++)
    inner *= d->dims[k];
  return inner;
}

#if defined(__x86_64__) || defined(__i386__)
/* Per-tensor f32 -> i8/u8, 16 at a time: the same fp32 division and
 * round-half-even (roundscale in the current mode, like nearbyintf), then
 * the clamp done on the float before the zero point is added (exact: both
 * sides are small integers). Returns how many elements it did; it stops
 * at the first block holding a NaN, which the scalar loop then handles. */
T512 static int64_t quantize_512(const float *x, void *y, int64_t e,
                                 float scale, int32_t zero, int32_t lo,
                                 int32_t hi, bool is_signed) {
  __m512 s = _mm512_set1_ps(scale);
  __m512 flo = _mm512_set1_ps((float)(lo - zero));
  __m512 fhi = _mm512_set1_ps((float)(hi - zero));
  __m512i z = _mm512_set1_epi32(zero);
  int64_t i = 0;
  for (; i < e; i += 16) {
    __mmask16 m = e - i >= 16 ? 0xffff : (__mmask16)((1u << (e - i)) - 1);
    __m512 q = _mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), s);
    if (_mm512_cmp_ps_mask(q, q, _CMP_UNORD_Q) & m)
      break;
    q = _mm512_roundscale_ps(q, _MM_FROUND_CUR_DIRECTION | _MM_FROUND_NO_EXC);
    q = _mm512_min_ps(_mm512_max_ps(q, flo), fhi);
    __m512i v = _mm512_add_epi32(_mm512_cvtps_epi32(q), z);
    if (is_signed)
      _mm512_mask_cvtepi32_storeu_epi8((int8_t *)y + i, m, v);
    else
      _mm512_mask_cvtusepi32_storeu_epi8((uint8_t *)y + i, m, v);
  }
  return i < e ? i : e;
}
#endif

static void quantize_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                       void *out, void *scratch) {
  (void)pool, (void)scratch;
  const dg_tensor_desc *yd = out_desc(cn);
  int64_t lo, hi, inner = inner_of(yd);
  dg_dtype_int_range(yd->dtype, &lo, &hi);
  int64_t i = 0;
#if defined(__x86_64__) || defined(__i386__)
  if (!yd->quant.channel_count && yd->dtype != DG_DTYPE_I32 &&
      dg_cpu_simd_level() >= DG_CPU_SIMD_AVX512)
    i = quantize_512(in[0], out, dg_desc_elements(yd), yd->quant.scale,
                     yd->quant.zero_point, (int32_t)lo, (int32_t)hi,
                     yd->dtype == DG_DTYPE_I8);
#endif
  for (int64_t e = dg_desc_elements(yd); i < e; i++) {
    int64_t c = channel_of(yd, i, inner);
    float v = nearbyintf(((const float *)in[0])[i] / dg_quant_scale(yd, c));
    double q = (double)v + dg_quant_zero(yd, c);
    int64_t r = q < (double)lo ? lo : (q > (double)hi ? hi : (int64_t)q);
    if (yd->dtype == DG_DTYPE_I8)
      ((int8_t *)out)[i] = (int8_t)r;
    else if (yd->dtype == DG_DTYPE_U8)
      ((uint8_t *)out)[i] = (uint8_t)r;
    else
      ((int32_t *)out)[i] = (int32_t)r;
  }
}

static void dequantize_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                         void *out, void *scratch) {
  (void)pool, (void)scratch;
  const dg_tensor_desc *xd = in_desc(cn, 0);
  int64_t inner = inner_of(xd);
  for (int64_t i = 0, e = dg_desc_elements(xd); i < e; i++) {
    int64_t c = channel_of(xd, i, inner);
    float q = (float)dg_load_elem(xd->dtype, in[0], i);
    ((float *)out)[i] =
        (q - (float)dg_quant_zero(xd, c)) * dg_quant_scale(xd, c);
  }
}

/* ---- preparation ---- */

/* Per-channel multipliers, weight zero points and biases for a quantised
 * node whose weights (per-tensor or per-channel) are input 1. */
static bool prepare_q8(dg_cpu_node *cn, int64_t channels, bool has_bias) {
  const dg_tensor_desc *xd = in_desc(cn, 0), *wd = in_desc(cn, 1),
                       *yd = out_desc(cn);
  cn->w_zero = malloc(sizeof(int32_t) * (size_t)channels);
  cn->bias = calloc((size_t)channels, sizeof(int32_t));
  cn->mult = malloc(sizeof(float) * (size_t)channels);
  if (!cn->w_zero || !cn->bias || !cn->mult)
    return false;
  const int32_t *b = NULL;
  if (has_bias && cn->node->inputs[2]) {
    const dg_tensor_info *bt = dg_ir_tensor(cn->ir, cn->node->inputs[2]);
    b = bt->constant ? bt->constant->data : NULL;
    cn->bias_is_input = !bt->constant;
  }
  bool pc = wd->quant.channel_count != 0;
  for (int64_t c = 0; c < channels; c++) {
    cn->w_zero[c] = dg_quant_zero(wd, pc ? c : 0);
    cn->mult[c] = dg_requant_multiplier(
        xd->quant.scale, dg_quant_scale(wd, pc ? c : 0), yd->quant.scale);
    if (b)
      cn->bias[c] = b[c];
  }
  cn->x_zero = xd->quant.zero_point;
  cn->y_zero = yd->quant.zero_point;
  int64_t lo, hi;
  dg_dtype_int_range(yd->dtype, &lo, &hi);
  dg_requant_clamp(cn->node->p.activation, yd->quant.scale, cn->y_zero,
                   (int32_t)lo, (int32_t)hi, &cn->clamp_lo, &cn->clamp_hi);
  return true;
}

/* The weights (input 1) when they are a graph constant the node reads
 * as stored (not through an f16 copy), else NULL. */
static const void *const_weights(const dg_cpu_node *cn) {
  const dg_tensor_info *wt = dg_ir_tensor(cn->ir, cn->node->inputs[1]);
  return !cn->f16 && wt->constant ? wt->constant->data : NULL;
}

/* Packs constant weights once so runs skip the GEMM's copy of them: conv
 * weights are A (one packing per group), fully connected weights are B.
 * False on OOM: the node then fails to prepare rather than run a path
 * whose f32 sums are ordered differently (results must not depend on
 * whether memory ran short). */
static bool prepare_packs(dg_cpu_node *cn, bool q) {
  const void *w = const_weights(cn);
  if (!w)
    return true;
  const dg_tensor_desc *wd = in_desc(cn, 1);
  bool conv = cn->node->op == DG_OP_CONV2D || cn->node->op == DG_OP_QCONV2D;
  int count = 1;
  int64_t rows = wd->dims[0], K = wd->dims[1];
  if (conv) {
    conv_dims d = conv_get(cn);
    if (d.CG == 1 && d.OG == 1)
      return true; /* depthwise: direct kernel, no GEMM */
    count = (int)d.G;
    rows = d.OG;
    K = d.K;
  }
  if (rows <= 0 || K <= 0)
    return true; /* nothing to pack; the GEMM handles empty shapes */
  if (q)
    cn->qpack = calloc((size_t)count, sizeof *cn->qpack);
  else
    cn->spack = calloc((size_t)count, sizeof *cn->spack);
  if (!cn->qpack && !cn->spack)
    return false;
  cn->pack_count = count;
  bool is8 = wd->dtype == DG_DTYPE_I8;
  for (int g = 0; g < count; g++) {
    size_t off = (size_t)(g * rows * K);
    if (!q && conv)
      cn->spack[g] = dg_cpu_sgemm_pack_a((int)rows, (int)K,
                                         (const float *)w + off, (int)K);
    else if (!q)
      cn->spack[g] = dg_cpu_sgemm_pack_b((int)rows, (int)K, w, (int)K, 1);
    else if (conv)
      cn->qpack[g] =
          dg_cpu_qgemm_pack_a((int)rows, (int)K, (const int8_t *)w + off,
                              (int)K, is8, cn->w_zero + g * rows, 1);
    else
      cn->qpack[g] = dg_cpu_qgemm_pack_b((int)rows, (int)K, w, (int)K, is8, 1,
                                         cn->w_zero, 1);
    if (q ? !cn->qpack[g] : !cn->spack[g])
      return false;
  }
  return true;
}

/* Per op: the kernel and what it prepares once (packed weights, int8
 * multipliers, scratch). */
static bool prep_conv(dg_cpu_node *cn, int threads) {
  conv_dims d = conv_get(cn);
  bool q = cn->node->op == DG_OP_QCONV2D;
  bool dw = d.CG == 1 && d.OG == 1;
  cn->run = q ? (dw ? conv_q8_dw : conv_q8) : conv_f32;
  if (q)
    cn->scratch_bytes =
        dw ? dw_q8_scratch(&d, threads) : q8_scratch(&d, threads);
  else if (!conv_is_pointwise(&d) && !(d.CG == 1 && d.OG == 1)) {
    dg_cpu_conv_shape s = conv_shape(&d);
    cn->scratch_bytes = dg_cpu_conv_f32_scratch(&s, threads);
  }
  if (q && !prepare_q8(cn, d.O, true))
    return false;
  return prepare_packs(cn, q);
}
static bool prep_fc(dg_cpu_node *cn, int threads) {
  (void)threads;
  cn->run = fc_f32;
  return prepare_packs(cn, false);
}
static bool prep_qfc(dg_cpu_node *cn, int threads) {
  (void)threads;
  cn->run = fc_q8;
  return prepare_q8(cn, in_desc(cn, 1)->dims[0], true) &&
         prepare_packs(cn, true);
}
static bool prep_qmatmul(dg_cpu_node *cn, int threads) {
  (void)threads;
  const dg_tensor_desc *bd = in_desc(cn, 1);
  cn->run = matmul_q8;
  return prepare_q8(cn, bd->quant.channel_count ? bd->quant.channel_count : 1,
                    false);
}

/* The ops this target runs: a kernel to run, or a prepare that picks it.
 * supports() declines an op without a line (the plan shows why), and the
 * device's info.ops lists exactly these. */
static const struct cpu_op_entry {
  dg_op op;
  dg_cpu_kernel_fn run; /* when there is nothing to prepare */
  bool (*prepare)(dg_cpu_node *cn, int threads);
} cpu_op_table[] = {
    {DG_OP_CONV2D, NULL, prep_conv},
    {DG_OP_QCONV2D, NULL, prep_conv},
    {DG_OP_FULLY_CONNECTED, NULL, prep_fc},
    {DG_OP_QFULLY_CONNECTED, NULL, prep_qfc},
    {DG_OP_MATMUL, matmul_f32, NULL},
    {DG_OP_QMATMUL, NULL, prep_qmatmul},
    {DG_OP_MAX_POOL2D, maxpool, NULL},
    {DG_OP_AVG_POOL2D, avgpool, NULL},
    {DG_OP_GLOBAL_AVG_POOL, gap, NULL},
    {DG_OP_SOFTMAX, softmax_k, NULL},
    {DG_OP_RELU, clip_k, NULL},
    {DG_OP_CLIP, clip_k, NULL},
    {DG_OP_SIGMOID, sigmoid_k, NULL},
    {DG_OP_ADD, binary_k, NULL},
    {DG_OP_BINARY, binary_k, NULL},
    {DG_OP_UNARY, dg_cpu_unary_node, NULL},
    {DG_OP_RESHAPE, copy_k, NULL},
    {DG_OP_CONCAT, concat_k, NULL},
    {DG_OP_QUANTIZE, quantize_k, NULL},
    {DG_OP_DEQUANTIZE, dequantize_k, NULL},
    {DG_OP_TRANSPOSE, dg_cpu_view_k, NULL},
    {DG_OP_SLICE, dg_cpu_view_k, NULL},
    {DG_OP_PAD, dg_cpu_view_k, NULL},
    {DG_OP_EXPAND, dg_cpu_view_k, NULL},
    {DG_OP_GATHER, dg_cpu_gather_k, NULL},
    {DG_OP_REDUCE, dg_cpu_reduce_k, NULL},
    {DG_OP_LOG_SOFTMAX, dg_cpu_log_softmax_k, NULL},
    {DG_OP_LAYER_NORM, dg_cpu_layer_norm_k, NULL},
    {DG_OP_RESIZE, NULL, dg_cpu_prep_resize},
    {DG_OP_BATCH_NORM, NULL, dg_cpu_prep_batch_norm},
    {DG_OP_CONV_TRANSPOSE2D, NULL, dg_cpu_prep_conv_transpose},
    {DG_OP_CAST, NULL, dg_cpu_prep_cast},
    {DG_OP_COMPARE, dg_cpu_compare_k, NULL},
    {DG_OP_WHERE, dg_cpu_where_k, NULL},
    {DG_OP_ARG_REDUCE, dg_cpu_arg_reduce_k, NULL},
    {DG_OP_QBINARY, dg_cpu_qbinary_k, NULL},
    {DG_OP_LOOKUP, dg_cpu_lookup_k, NULL},
    {DG_OP_QAVG_POOL2D, dg_cpu_qavg_pool_k, NULL},
};

static const struct cpu_op_entry *op_entry(dg_op op) {
  for (size_t i = 0; i < sizeof cpu_op_table / sizeof *cpu_op_table; i++)
    if (cpu_op_table[i].op == op)
      return &cpu_op_table[i];
  return NULL;
}

uint64_t dg_cpu_ops(void) {
  uint64_t ops = 0;
  for (size_t i = 0; i < sizeof cpu_op_table / sizeof *cpu_op_table; i++)
    ops |= 1ull << cpu_op_table[i].op;
  return ops;
}

bool dg_cpu_node_prepare(dg_cpu_node *cn, const dg_ir *ir, const dg_node *n,
                         int threads) {
  memset(cn, 0, sizeof *cn);
  cn->ir = ir;
  cn->node = n;
  cn->f16 = dg_ir_tensor(ir, n->output)->desc.dtype == DG_DTYPE_F16 ||
            (n->input_count &&
             dg_ir_tensor(ir, n->inputs[0])->desc.dtype == DG_DTYPE_F16);
  if (n->op == DG_OP_RESHAPE || n->op == DG_OP_CONCAT ||
      dg_cpu_moves_bytes(n->op) || n->op == DG_OP_WHERE)
    cn->f16 = false; /* moves bytes, whatever they hold */
  if (n->op == DG_OP_COMPARE || n->op == DG_OP_ARG_REDUCE)
    cn->f16 = false; /* reads f16 itself; the output is bool or i64 */
  const struct cpu_op_entry *e = op_entry(n->op);
  if (!e)
    return false;
  cn->run = e->run;
  return !e->prepare || e->prepare(cn, threads);
}

void dg_cpu_node_release(dg_cpu_node *cn) {
  for (int g = 0; g < cn->pack_count; g++) {
    if (cn->spack)
      dg_cpu_sgemm_packed_free(cn->spack[g]);
    if (cn->qpack)
      dg_cpu_qgemm_packed_free(cn->qpack[g]);
  }
  free(cn->spack);
  free(cn->qpack);
  free(cn->w_zero);
  free(cn->bias);
  free(cn->mult);
}
