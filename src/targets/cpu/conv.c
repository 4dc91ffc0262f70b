/* CPU convolutions (ops/conv.c's conv2d and qconv2d): im2col + packed
 * GEMM, or the GEMM directly for 1x1; a direct depthwise kernel in f32
 * and int8; int8 through the quantised GEMM. */
#include "conv_f32.h"
#include "conv_shift.h"
#include "cpu_ops.h"
#include "depthwise.h"

#include "core/half.h"
#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* No FMA contraction: meson passes -ffp-contract=off. */

typedef dg_conv_geom conv_dims;

static conv_dims conv_get(const dg_cpu_node *cn) {
  return dg_conv_geom_of(cn->ir, cn->node);
}

static bool conv_is_pointwise(const conv_dims *d) {
  return d->KH == 1 && d->KW == 1 && d->sh == 1 && d->sw == 1 && !d->pt &&
         !d->pl && d->OH == d->H && d->OW == d->W;
}

/* Output columns [lo, hi) whose input column ow*stride - pad + off lies
 * inside [0, W). */
static void valid_cols(int64_t OW, int64_t W, int stride, int pad, int64_t off,
                       int64_t *lo, int64_t *hi) {
  dg_cpu_out_cols(OW, W, stride, off - pad, lo, hi);
}

#if defined(__x86_64__) || defined(__i386__)
#define T512 DG_CPU_T512
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

/* row[ow] = in[2 ow] for ow in [lo, hi): restrict, so that the byte
 * stores need not be assumed to alias anything, and it vectorises. */
static void gather_u8_2(uint8_t *restrict row, const uint8_t *restrict in,
                        int64_t lo, int64_t hi) {
  for (int64_t ow = lo; ow < hi; ow++)
    row[ow] = in[2 * ow];
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
      memset(row, pad, (size_t)lo);
      if (d->sw == 1)
        copy_u8(row + lo, in + lo, hi - lo, wide);
      else if (d->sw == 2)
        gather_u8_2(row, in, lo, hi);
      else
        for (int64_t ow = lo; ow < hi; ow++)
          row[ow] = in[ow * d->sw];
      memset(row + hi, pad, (size_t)(d->OW - hi));
    }
  }
}

/* Units [*lo, *hi) of total, claimed from next in pieces of about a
 * quarter of a task's share: a thread that runs slower (a little core, a
 * descheduled vCPU) takes fewer. false once none is left. */
static bool claim(_Atomic int64_t *next, int64_t total, int n, int64_t *lo,
                  int64_t *hi) {
  int64_t step = total / (4 * (int64_t)n);
  step = step < 1 ? 1 : step;
  *lo = atomic_fetch_add(next, step);
  *hi = *lo + step < total ? *lo + step : total;
  return *lo < total;
}

typedef struct dw_job {
  const conv_dims *d;
  const float *x, *w, *b, *r;
  float *y;
  float lo, hi;
  char *scratch; /* per task: dw_share bytes */
  size_t per_task;
  dg_cpu_post post;
  _Atomic int64_t next; /* the next plane or block to claim */
} dw_job;

static void dw_plane_direct(const dw_job *j, const float *x, const float *w,
                            float bias, const float *r, float *y);

/* Depthwise f32, plane i (image, channel), with scratch s. */
static void dw_plane(const dw_job *j, int64_t i, void *s) {
  const conv_dims *d = j->d;
  int64_t c = i % d->C;
  const float *x = j->x + (size_t)i * d->H * d->W;
  const float *w = j->w + c * d->KH * d->KW;
  float *y = j->y + (size_t)i * d->P;
  const float *r = j->r ? j->r + (size_t)i * d->P : NULL;
  float bias = j->b ? j->b[c] : 0.0f;
  if (s) /* the banded kernel takes d (dw_share) */
    dg_cpu_depthwise_plane(d, x, w, bias, r, y, j->lo, j->hi, s);
  else
    dw_plane_direct(j, x, w, bias, r, y);
  if (j->post.fn) /* on the plane while it is in cache */
    dg_cpu_unary(j->post.fn, y, y, d->P, j->post.a, j->post.b);
}

/* The direct sums, for planes the banded kernel does not take. */
static void dw_plane_direct(const dw_job *j, const float *x, const float *w,
                            float bias, const float *r, float *y) {
  const conv_dims *d = j->d;
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
      if (r)
        s += r[oh * d->OW + ow];
      y[oh * d->OW + ow] = s < j->lo ? j->lo : (s > j->hi ? j->hi : s);
    }
}

/* Task t of n: a share of the (image, channel) planes (one pool item per
 * plane cost more than MobileNet's 7x7 planes themselves). */
static void dw_task(void *arg, int t, int n) {
  dw_job *j = arg;
  int64_t planes = j->d->N * j->d->C, lo, hi;
  /* the share may be the cb kernel's alone, where the banded one does
   * not fit (then the planes are summed directly) */
  void *s = j->per_task && dg_cpu_depthwise_fits(j->d)
                ? j->scratch + (size_t)t * j->per_task
                : NULL;
  if (s)
    dg_cpu_depthwise_begin(j->d, false, s);
  while (claim(&j->next, planes, n, &lo, &hi))
    for (int64_t i = lo; i < hi; i++)
      dw_plane(j, i, s);
}

/* The (image, block of channels) pairs the cb kernels go by. */
static int64_t cb_blocks(const conv_dims *d) {
  int64_t L = dg_cpu_depthwise_cb_width();
  return L ? d->N * ((d->C + L - 1) / L) : 0;
}

/* Block i of cb_blocks: its first plane (image * C + channel) and first
 * channel; returns its channels. */
static int cb_block(const conv_dims *d, int64_t i, int64_t *at, int64_t *c0) {
  int64_t L = dg_cpu_depthwise_cb_width(), nb = (d->C + L - 1) / L;
  *c0 = i % nb * L;
  *at = i / nb * d->C + *c0;
  return (int)(d->C - *c0 < L ? d->C - *c0 : L);
}

/* A block of channels at a time (depthwise_cb.c): task t of n takes a
 * share of the (image, block of channels) pairs. */
static void dw_cb_task(void *arg, int t, int n) {
  dw_job *j = arg;
  const conv_dims *d = j->d;
  int64_t taps = d->KH * d->KW, lo, hi, at, c0;
  void *s = j->scratch + (size_t)t * j->per_task;
  while (claim(&j->next, cb_blocks(d), n, &lo, &hi))
    for (int64_t i = lo; i < hi; i++) {
      int nch = cb_block(d, i, &at, &c0);
      float *y = j->y + (size_t)at * d->P;
      dg_cpu_depthwise_cb(d, j->x + (size_t)at * d->H * d->W, j->w + c0 * taps,
                          j->b ? j->b + c0 : NULL,
                          j->r ? j->r + (size_t)at * d->P : NULL, y, nch, j->lo,
                          j->hi, s);
      for (int k = 0; k < nch && j->post.fn; k++)
        dg_cpu_unary(j->post.fn, y + (size_t)k * d->P, y + (size_t)k * d->P,
                     d->P, j->post.a, j->post.b);
    }
}

/* The int8 cb kernel's share: its tile, then a block's taps. */
static size_t dw_q8_cb_bytes(const conv_dims *d) {
  if (!dg_cpu_depthwise_q8_cb_takes(d))
    return 0;
  return ((dg_cpu_depthwise_cb_scratch(d) + 63) & ~(size_t)63) +
         sizeof(int32_t) * 16 * (size_t)(d->KH * d->KW);
}

/* Depthwise scratch: 64-byte aligned shares, one per thread, of the
 * larger of the f32 or the int8 kernels' bytes. */
static size_t dw_share(const conv_dims *d, bool q) {
  size_t b = q ? dg_cpu_depthwise_q8_scratch(d) : dg_cpu_depthwise_scratch(d);
  size_t cb = q ? dw_q8_cb_bytes(d) : dg_cpu_depthwise_cb_scratch(d);
  return ((b > cb ? b : cb) + 63) & ~(size_t)63;
}

static size_t dw_scratch(const conv_dims *d, bool q, int threads) {
  return dw_share(d, q) * (size_t)(threads > 1 ? threads : 1);
}

/* As many tasks as the scratch has shares for, and planes to share. */
static int dw_tasks(const dg_cpu_node *cn, dg_cpu_pool *pool, bool q) {
  const conv_dims d = conv_get(cn);
  size_t share = dw_share(&d, q);
  int64_t tasks = dg_cpu_pool_threads(pool);
  if (share && tasks > (int64_t)(cn->scratch_bytes / share))
    tasks = (int64_t)(cn->scratch_bytes / share);
  bool cb =
      q ? dg_cpu_depthwise_q8_cb_takes(&d) : dg_cpu_depthwise_cb_takes(&d);
  int64_t units = cb ? cb_blocks(&d) : d.N * d.C;
  if (tasks > units)
    tasks = units;
  return tasks < 1 ? 1 : (int)tasks;
}

/* Whether the cb kernel runs a depthwise node: it takes d at the current
 * level and the compiled scratch holds its share for every task (a SIMD
 * level forced after the compile may take the other kernel). */
static bool cb_runs(const dg_cpu_node *cn, const conv_dims *d, bool q,
                    const void *scratch, size_t share, int tasks) {
  bool takes =
      q ? dg_cpu_depthwise_q8_cb_takes(d) : dg_cpu_depthwise_cb_takes(d);
  size_t need = q ? dw_q8_cb_bytes(d) : dg_cpu_depthwise_cb_scratch(d);
  return takes && scratch && share >= need &&
         cn->scratch_bytes >= share * (size_t)tasks;
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
  /* a residual add fused into the conv (runtime/fuse_residual.h) */
  const float *r = cn->node->input_count > 3 ? in[3] : NULL;
  float *y = out;
  float lo, hi;
  dg_activation_range(cn->node->p.activation, &lo, &hi);
  /* a unary node fused into the conv (runtime/fuse_unary.h) */
  const dg_cpu_post post = {dg_conv_post_unary(cn->node), cn->node->p.alpha,
                            cn->node->p.beta};
  if (d.CG == 1 && d.OG == 1) {
    dw_job j = {.d = &d,
                .x = x,
                .w = w,
                .b = b,
                .r = r,
                .y = y,
                .lo = lo,
                .hi = hi,
                .scratch = scratch,
                .per_task = dw_share(&d, false),
                .post = post};
    atomic_init(&j.next, 0);
    int tasks = dw_tasks(cn, pool, false);
    bool cb = cb_runs(cn, &d, false, scratch, j.per_task, tasks);
    dg_cpu_pool_run(pool, cb ? dw_cb_task : dw_task, &j, tasks);
    return;
  }
  dg_cpu_conv_shape s = conv_shape(&d);
  /* implicit GEMM, no im2col matrix; pointwise convs too where their
   * output pixels run as the GEMM's rows */
  if (!conv_is_pointwise(&d) || dg_cpu_conv_f32_by_pixels(&s)) {
    dg_cpu_conv_f32(pool, &s, x, w, cn->spack, b, r, y, lo, hi, &post, scratch,
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
                             .residual =
                                 r ? r + (n * d.O + g * d.OG) * d.P : NULL,
                             .ldr = (int)d.P,
                             .clamp_lo = lo,
                             .clamp_hi = hi,
                             .post = post};
      dg_cpu_sgemm_packed_run(pool, &a, cn->spack ? cn->spack[g] : NULL, NULL);
    }
}

/* A bias fed at run time (not a constant) is read on every run. */
void dg_cpu_refresh_bias(dg_cpu_node *cn, void *const *in, int64_t channels) {
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

/* The quantised GEMM of one image and group; col is its im2col matrix
 * (unused for pointwise convolutions, which read x in place). */
static dg_cpu_qgemm_args q8_args(const q8_job *j, int64_t n, int64_t g,
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
  return a;
}

static void q8_gemm(const q8_job *j, dg_cpu_pool *pool, int64_t n, int64_t g,
                    const uint8_t *col) {
  dg_cpu_qgemm_args a = q8_args(j, n, g, col);
  dg_cpu_node *cn = j->cn;
  dg_cpu_qgemm_packed_run(pool, &a, cn->qpack ? cn->qpack[g] : NULL, NULL);
}

/* ---- int8 by shifted planes (conv_shift.h): no im2col matrix ----
 *
 * The im2col copy and the packing of it were half of an int8 ResNet's
 * time once the multiply ran on AMX; the packer reads the taps from the
 * padded copy instead (filled with the input's zero point, as im2col's
 * padding). One image's scratch: the copy, the GEMM's result at pitch q,
 * then the row offsets. x86's packers only (AVX2, VNNI, AMX). */
typedef struct q8_shift_job {
  const q8_job *j;
  dg_cpu_conv_shape s;
  dg_cpu_shift g;
  const uint8_t *x; /* one image */
  uint8_t *xp, *tmp, *y;
} q8_shift_job;

static size_t q8_shift_bytes(const conv_dims *d) {
  dg_cpu_conv_shape s = conv_shape(d);
  dg_cpu_shift g = dg_cpu_shift_of(&s);
  return (size_t)(s.C * g.cstride + s.O * g.n) + 8 * (size_t)d->K + 64;
}

static bool q8_shift_takes(const conv_dims *d) {
#if defined(__x86_64__) || defined(__i386__)
  dg_cpu_conv_shape s = conv_shape(d);
  return dg_cpu_simd_level() >= DG_CPU_SIMD_AVX2 && !conv_is_pointwise(d) &&
         dg_cpu_shift_suits(&s, (size_t)1 << 30, 3) &&
         q8_shift_bytes(d) <= ((size_t)1 << 30);
#else
  (void)d;
  return false;
#endif
}

static void q8_shift_fill_task(void *arg, int i, int n) {
  const q8_shift_job *sj = arg;
  int C = sj->s.C;
  dg_cpu_shift_fill(&sj->s, &sj->g, sj->x, sj->xp, 1,
                    (uint8_t)sj->j->cn->x_zero, (int)((long long)C * i / n),
                    (int)((long long)C * (i + 1) / n));
}

/* Output channels of task i of n: the flat rows less their overhang. */
static void q8_shift_out_task(void *arg, int i, int n) {
  const q8_shift_job *sj = arg;
  const dg_cpu_conv_shape *s = &sj->s;
  int o0 = (int)((long long)s->O * i / n),
      o1 = (int)((long long)s->O * (i + 1) / n);
  for (int o = o0; o < o1; o++)
    for (int oh = 0; oh < s->OH; oh++)
      memcpy(sj->y + ((size_t)o * s->OH + oh) * s->OW,
             sj->tmp + (size_t)(o * sj->g.n + oh * sj->g.q), (size_t)s->OW);
}

/* Image n through the shifted planes in scratch (q8_shift_bytes); pool
 * NULL runs it on the calling thread. */
static void q8_shift_one(const q8_job *j, dg_cpu_pool *pool, int64_t n,
                         uint8_t *scratch) {
  const conv_dims *d = j->d;
  q8_shift_job sj = {.j = j, .s = conv_shape(d)};
  sj.g = dg_cpu_shift_of(&sj.s);
  sj.x = (const uint8_t *)j->in[0] + n * d->C * d->H * d->W;
  sj.y = (uint8_t *)j->out + n * d->O * d->P;
  sj.xp = scratch;
  sj.tmp = sj.xp + (size_t)(sj.s.C * sj.g.cstride);
  int64_t *off =
      dg_cpu_shift_offsets(&sj.s, &sj.g, sj.tmp + (size_t)(sj.s.O * sj.g.n));
  int threads = dg_cpu_pool_threads(pool);
  dg_cpu_pool_run(pool, q8_shift_fill_task, &sj,
                  threads < sj.s.C ? threads : sj.s.C);
  dg_cpu_qgemm_args a = q8_args(j, n, 0, NULL);
  a.N = (int)sj.g.n;
  a.B = sj.xp;
  a.ldb = 0;
  a.b_rows = off;
  a.C = sj.tmp;
  a.ldc = (int)sj.g.n;
  dg_cpu_qgemm_packed_run(pool, &a, j->cn->qpack ? j->cn->qpack[0] : NULL,
                          NULL);
  dg_cpu_pool_run(pool, q8_shift_out_task, &sj,
                  threads < sj.s.O ? threads : sj.s.O);
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
  if (q8_shift_takes(d)) {
    uint8_t *own = j->scratch + q8_shift_bytes(d) * (size_t)i;
    for (int64_t img = d->N * i / j->ntasks; img < d->N * (i + 1) / j->ntasks;
         img++)
      q8_shift_one(j, NULL, img, own);
    return;
  }
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
  /* the larger of the two layouts: tests force SIMD levels between
   * compile and run, and the shifted one is x86's only */
  size_t one = (size_t)(d->K * d->P), shift = q8_shift_bytes(d);
  if (shift > one && q8_shift_takes(d))
    one = shift;
  return dg_cpu_conv_by_images((int)d->N, threads) ? one * (size_t)threads
                                                   : one;
}

static void conv_q8(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                    void *out, void *scratch) {
  conv_dims d = conv_get(cn);
  dg_cpu_refresh_bias(cn, in, d.O);
  int threads = dg_cpu_pool_threads(pool);
  q8_job j = {cn, &d, in, out, scratch, NULL, threads};
  if (dg_cpu_conv_by_images((int)d.N, threads) &&
      cn->scratch_bytes >= q8_scratch(&d, threads)) {
    dg_cpu_pool_run(pool, q8_images_task, &j, threads);
    return;
  }
  if (q8_shift_takes(&d) && cn->scratch_bytes >= q8_shift_bytes(&d)) {
    for (int64_t n = 0; n < d.N; n++)
      q8_shift_one(&j, pool, n, scratch);
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
 * plane's window sums, made directly (depthwise_q8.c): no im2col and no
 * GEMM per group, which cost MobileNet's depthwise layers most of their
 * time. The sums are exact integers, so the result is the GEMM path's,
 * bit for bit. One task per thread, each with its own scratch, takes a
 * share of the planes. */
typedef struct dw_q8_job {
  dg_cpu_node *cn;
  const conv_dims *d;
  const uint8_t *x, *w;
  uint8_t *y;
  char *scratch; /* per task: dg_cpu_depthwise_q8_scratch bytes */
  size_t per_task;
  _Atomic int64_t next; /* the next plane or block to claim */
} dw_q8_job;

static void dw_q8_task(void *arg, int t, int n) {
  dw_q8_job *j = arg;
  const conv_dims *d = j->d;
  const dg_cpu_node *cn = j->cn;
  bool xs = in_desc(cn, 0)->dtype == DG_DTYPE_I8,
       ws = in_desc(cn, 1)->dtype == DG_DTYPE_I8;
  int64_t planes = d->N * d->C, p0, p1;
  int32_t *buf = (int32_t *)(j->scratch + (size_t)t * j->per_task);
  int64_t taps = d->KH * d->KW;
  int32_t *wv = (int32_t *)(j->scratch + (size_t)(t + 1) * j->per_task) - taps;
  dg_cpu_depthwise_begin(d, true, buf);
  while (claim(&j->next, planes, n, &p0, &p1))
    for (int64_t pc = p0; pc < p1; pc++) {
      int64_t c = pc % d->C;
      const uint8_t *wp = j->w + c * taps;
      for (int64_t k = 0; k < taps; k++)
        wv[k] = (ws ? (int32_t)(int8_t)wp[k] : (int32_t)wp[k]) - cn->w_zero[c];
      dg_cpu_depthwise_q8_plane(d, j->x + pc * d->H * d->W, xs, cn->x_zero, wv,
                                cn->bias[c], cn->mult[c], cn->y_zero,
                                cn->clamp_lo, cn->clamp_hi,
                                j->y + pc * d->OH * d->OW, buf);
    }
}

/* A block of channels at a time (depthwise_cb.c): the block's taps less
 * their zero points at the end of the task's share. */
static void dw_q8_cb_task(void *arg, int t, int n) {
  dw_q8_job *j = arg;
  const conv_dims *d = j->d;
  const dg_cpu_node *cn = j->cn;
  bool ws = in_desc(cn, 1)->dtype == DG_DTYPE_I8;
  int64_t taps = d->KH * d->KW, lo, hi, at, c0;
  char *s = j->scratch + (size_t)t * j->per_task;
  int32_t *wv = (int32_t *)(s + j->per_task) - 16 * taps;
  while (claim(&j->next, cb_blocks(d), n, &lo, &hi))
    for (int64_t i = lo; i < hi; i++) {
      int nch = cb_block(d, i, &at, &c0);
      for (int k = 0; k < nch; k++)
        for (int64_t tp = 0; tp < taps; tp++) {
          uint8_t b = j->w[(c0 + k) * taps + tp];
          wv[k * taps + tp] =
              (ws ? (int32_t)(int8_t)b : (int32_t)b) - cn->w_zero[c0 + k];
        }
      dg_cpu_dw_q8 q = {.x_signed = in_desc(cn, 0)->dtype == DG_DTYPE_I8,
                        .zx = cn->x_zero,
                        .zy = cn->y_zero,
                        .lo = cn->clamp_lo,
                        .hi = cn->clamp_hi,
                        .wv = wv,
                        .bias = cn->bias + c0,
                        .mult = cn->mult + c0};
      dg_cpu_depthwise_q8_cb(d, j->x + (size_t)at * d->H * d->W, &q,
                             j->y + (size_t)at * d->P, nch, s);
    }
}

static void conv_q8_dw(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                       void *out, void *scratch) {
  conv_dims d = conv_get(cn);
  dg_cpu_refresh_bias(cn, in, d.O);
  int tasks = dw_tasks(cn, pool, true);
  dw_q8_job j = {.cn = cn,
                 .d = &d,
                 .x = in[0],
                 .w = in[1],
                 .y = out,
                 .scratch = scratch,
                 .per_task = dw_share(&d, true)};
  atomic_init(&j.next, 0);
  bool cb = cb_runs(cn, &d, true, scratch, j.per_task, tasks);
  dg_cpu_pool_run(pool, cb ? dw_q8_cb_task : dw_q8_task, &j, tasks);
}

/* Per op: the kernel and what it prepares once (packed weights, int8
 * multipliers, scratch). */
bool dg_cpu_prep_conv(dg_cpu_node *cn, int threads) {
  conv_dims d = conv_get(cn);
  bool q = cn->node->op == DG_OP_QCONV2D;
  bool dw = d.CG == 1 && d.OG == 1;
  cn->run = q ? (dw ? conv_q8_dw : conv_q8) : conv_f32;
  if (dw)
    cn->scratch_bytes = dw_scratch(&d, q, threads);
  else if (q)
    cn->scratch_bytes = q8_scratch(&d, threads);
  else {
    dg_cpu_conv_shape s = conv_shape(&d);
    cn->spack_b = dg_cpu_conv_f32_weights_as_b(&s);
    if (!conv_is_pointwise(&d) || cn->spack_b)
      cn->scratch_bytes = dg_cpu_conv_f32_scratch(&s, threads);
  }
  if (q && !dg_cpu_prepare_q8(cn, d.O, true))
    return false;
  return dg_cpu_prepare_packs(cn, q);
}
