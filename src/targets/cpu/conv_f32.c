/* f32 convolution as an implicit GEMM (see conv_f32.h).
 *
 * Per image and group: Y[OG, P] = W[OG, K] * col[K, P] with K = CG*KH*KW
 * and P = OH*OW, where col is the im2col matrix. Materialising col costs a
 * write and a re-read of K x P floats (7 MB for ResNet-50's 64@56 layer),
 * more than the multiply once it spills out of the caches, and ran on one
 * thread. Instead the GEMM calls pack_cols for each KC x NC block it is
 * about to use, which reads the input directly into the GEMM's packed
 * panel layout (in L2), treating out-of-image taps as zero.
 *
 * Threads: with enough images each thread takes whole images (small
 * per-image GEMMs such as LeNet's cannot be split profitably); otherwise
 * one image at a time with the GEMM split across the pool.
 */
#include "conv_f32.h"

#include "conv_direct.h"
#include "conv_shift.h"
#include "transpose.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define DG_X86 1
#define T512 DG_CPU_T512
#endif
#if defined(__aarch64__)
#include <arm_neon.h>
#endif

/* What pack_cols needs: one image's group of channels and the geometry. */
typedef struct conv_src {
  const float *x; /* first channel of the group */
  const dg_cpu_conv_shape *s;
} conv_src;

/* A panel row of w output pixels from pixel p is one segment per output
 * row it touches: lanes [sd, sd + sl) are output row soh from column
 * sow. Returns the number of segments (at most w). */
static int panel_segments(const dg_cpu_conv_shape *s, int p, int w, int *sd,
                          int *sl, int *soh, int *sow) {
  int ns = 0;
  for (int d = 0; d < w; ns++) {
    soh[ns] = p / s->OW;
    sow[ns] = p % s->OW;
    sl[ns] = s->OW - sow[ns] < w - d ? s->OW - sow[ns] : w - d;
    sd[ns] = d;
    d += sl[ns];
    p += sl[ns];
  }
  return ns;
}

/* Packer for any stride / dilation / SIMD level: element (k, j) of col
 * is x[c][oh*sh - pt + kh*dh][ow*sw - pl + kw*dw], or 0 outside. A panel
 * row of nr output pixels is a few runs, one per output row it touches;
 * per run the input row and the columns inside the image are worked out
 * once, so each run is zeros, a copy (a memcpy at stride 1) and zeros. */
enum { MAX_RUNS = 66 }; /* nr <= 64: at most nr runs, plus the edges */
static void pack_runs(const conv_src *cs, float *dst, int nr, int k0, int kc,
                      int j0, int nc) {
  const dg_cpu_conv_shape *s = cs->s;
  int taps = s->KH * s->KW;
  int rd[MAX_RUNS], rl[MAX_RUNS], roh[MAX_RUNS], row0[MAX_RUNS];
  for (int jp = 0; jp < nc; jp += nr, dst += (size_t)kc * nr) {
    int w = nc - jp < nr ? nc - jp : nr;
    int nrun = panel_segments(s, j0 + jp, w, rd, rl, roh, row0);
    int c = k0 / taps, t = k0 % taps;
    for (int k = 0; k < kc; k++) {
      int kh = t / s->KW, kw = t % s->KW;
      const float *plane = cs->x + (size_t)c * s->H * s->W;
      float *row = dst + (size_t)k * nr;
      for (int q = 0; q < nrun; q++) {
        float *o = row + rd[q];
        int len = rl[q], ih = roh[q] * s->sh - s->pt + kh * s->dh;
        if (ih < 0 || ih >= s->H) {
          memset(o, 0, sizeof(float) * (size_t)len);
          continue;
        }
        /* Lane i reads column iw0 + i * sw: inside for i in [lo, hi). */
        int iw0 = row0[q] * s->sw - s->pl + kw * s->dw;
        int lo = iw0 >= 0 ? 0 : (-iw0 + s->sw - 1) / s->sw;
        int hi = iw0 >= s->W ? 0 : (s->W - iw0 + s->sw - 1) / s->sw;
        hi = hi < len ? hi : len;
        lo = lo < hi ? lo : hi;
        const float *xr = plane + (size_t)ih * s->W;
        for (int i = 0; i < lo; i++)
          o[i] = 0.0f;
        if (s->sw == 1)
          memcpy(o + lo, xr + iw0 + lo, sizeof(float) * (size_t)(hi - lo));
        else
          for (int i = lo; i < hi; i++)
            o[i] = xr[iw0 + i * s->sw];
        for (int i = hi; i < len; i++)
          o[i] = 0.0f;
      }
      for (int j = w; j < nr; j++)
        row[j] = 0.0f;
      if (++t == taps)
        t = 0, c++;
    }
  }
}

#ifdef DG_X86
/* AVX-512, stride 1, 32-wide panels. A panel row is up to 32 consecutive
 * output pixels: a few runs ("segments"), one per output row they touch.
 * For a given tap (kh, kw) each segment is one contiguous piece of an
 * input row, the same for every channel; so per panel the segments'
 * source offsets and lane masks are worked out once per tap, and each of
 * the kc rows is then two masked loads per segment and two stores. */
#define MAX_DESC 512
typedef struct seg_desc {
  int64_t off; /* plane offset that lane 0 of the row would read */
  __mmask16 m0, m1;
} seg_desc;

/* The segments of a panel row of w <= 32 output pixels from pixel p0, for
 * every tap t: desc[t * ns + q] for segment q; returns ns. */
static int seg_descs(const dg_cpu_conv_shape *s, int p0, int w,
                     seg_desc *desc) {
  int sd[32], sl[32], soh[32], sow[32];
  int ns = panel_segments(s, p0, w, sd, sl, soh, sow);
  for (int t = 0; t < s->KH * s->KW; t++) {
    int kh = t / s->KW, kw = t % s->KW;
    for (int q = 0; q < ns; q++) {
      seg_desc *e = &desc[t * ns + q];
      int ih = soh[q] * s->sh - s->pt + kh * s->dh;
      int iw0 = sow[q] - s->pl + kw * s->dw; /* input column of lane sd */
      /* Lanes [sd + lo, sd + hi) fall inside the input row. */
      int lo = iw0 < 0 ? -iw0 : 0;
      int hi = s->W - iw0 < sl[q] ? s->W - iw0 : sl[q];
      uint32_t m = 0;
      if (ih >= 0 && ih < s->H && hi > lo)
        m = (uint32_t)((((uint64_t)1 << hi) - 1) & ~(((uint64_t)1 << lo) - 1))
            << sd[q];
      e->m0 = (__mmask16)m;
      e->m1 = (__mmask16)(m >> 16);
      e->off = (int64_t)ih * s->W + iw0 - sd[q];
    }
  }
  return ns;
}

T512 static void pack_512(const conv_src *cs, float *dst, int k0, int kc,
                          int j0, int nc) {
  const dg_cpu_conv_shape *s = cs->s;
  int taps = s->KH * s->KW;
  size_t plane = (size_t)s->H * s->W;
  seg_desc desc[MAX_DESC];
  for (int jp = 0; jp < nc; jp += 32, dst += (size_t)kc * 32) {
    int w = nc - jp < 32 ? nc - jp : 32;
    int ns = seg_descs(s, j0 + jp, w, desc);
    int c = k0 / taps, t = k0 % taps;
    for (int k = 0; k < kc; k++) {
      const float *xp = cs->x + plane * (size_t)c;
      const seg_desc *e = &desc[t * ns];
      __m512 r0 = _mm512_setzero_ps(), r1 = r0;
      for (int q = 0; q < ns; q++) {
        /* Lane i reads xp[off + i]; lanes outside the input are masked,
         * so the address is formed as an integer and never dereferenced
         * there. */
        const float *a =
            (const float *)((uintptr_t)xp + (uintptr_t)(e[q].off * 4));
        r0 = _mm512_mask_loadu_ps(r0, e[q].m0, a);
        r1 = _mm512_mask_loadu_ps(r1, e[q].m1,
                                  (const float *)((uintptr_t)a + 64));
      }
      _mm512_storeu_ps(dst + (size_t)k * 32, r0);
      _mm512_storeu_ps(dst + (size_t)k * 32 + 16, r1);
      if (++t == taps)
        t = 0, c++;
    }
  }
}
#endif

#if defined(__aarch64__)
/* NEON, stride 1, 12-wide panels (the NEON GEMM's): as pack_512, the
 * panel's segments and each tap's source offsets are found once per
 * panel; a row whose 12 lanes all fall inside one input row (most rows,
 * away from the image's edges) is then three loads and three stores. A
 * row of two segments (a panel across two output rows) or one with zero
 * lanes (padding) is blended: two loads per vector, each masked to its
 * segment's lanes, where both 12-float windows lie inside the channel's
 * plane; any other row is zeros and a copy of the lanes inside. */
#define NEON_DESC 512
typedef struct neon_desc {
  int64_t off; /* plane offset of the segment's first lane */
  int d, n;    /* lanes [d, d + n) of the row are read */
} neon_desc;

static void pack_neon12(const conv_src *cs, float *dst, int k0, int kc, int j0,
                        int nc) {
  const dg_cpu_conv_shape *s = cs->s;
  int taps = s->KH * s->KW;
  size_t plane = (size_t)s->H * s->W;
  neon_desc desc[NEON_DESC];
  int ndesc[NEON_DESC / 2], whole[NEON_DESC / 2], blend[NEON_DESC / 2];
  /* Blended taps: each segment's window (plane offset of lane 0) and its
   * lanes as all-ones masks. Only the first BLEND_TAPS taps blend. */
  enum { BLEND_TAPS = 64 };
  int64_t base[BLEND_TAPS][2];
  uint32_t mask[BLEND_TAPS][2][12];
  for (int jp = 0; jp < nc; jp += 12, dst += (size_t)kc * 12) {
    int w = nc - jp < 12 ? nc - jp : 12;
    int sd[12], sl[12], soh[12], sow[12];
    int ns = panel_segments(s, j0 + jp, w, sd, sl, soh, sow);
    for (int t = 0; t < taps; t++) {
      int kh = t / s->KW, kw = t % s->KW, n = 0, lanes = 0;
      for (int q = 0; q < ns; q++) {
        int ih = soh[q] * s->sh - s->pt + kh * s->dh;
        int iw0 = sow[q] - s->pl + kw * s->dw;
        int lo = iw0 < 0 ? -iw0 : 0;
        int hi = s->W - iw0 < sl[q] ? s->W - iw0 : sl[q];
        if (ih < 0 || ih >= s->H || hi <= lo)
          continue;
        neon_desc *e = &desc[t * ns + n++];
        e->off = (int64_t)ih * s->W + iw0 + lo;
        e->d = sd[q] + lo;
        e->n = hi - lo;
        lanes += e->n;
      }
      ndesc[t] = n;
      whole[t] = n == 1 && lanes == 12;
      blend[t] = !whole[t] && n >= 1 && n <= 2 && t < BLEND_TAPS;
      for (int q = 0; q < 2 && blend[t]; q++) {
        const neon_desc *e = &desc[t * ns + (q < n ? q : 0)];
        base[t][q] = e->off - e->d;
        if (base[t][q] < 0 || base[t][q] + 12 > (int64_t)plane)
          blend[t] = 0;
        for (int i = 0; i < 12; i++)
          mask[t][q][i] = q < n && i >= e->d && i < e->d + e->n ? ~0u : 0u;
      }
    }
    int c = k0 / taps, t = k0 % taps;
    for (int k = 0; k < kc; k++) {
      const float *xp = cs->x + plane * (size_t)c;
      float *row = dst + (size_t)k * 12;
      const neon_desc *e = &desc[t * ns];
      if (whole[t]) {
        const float *src = xp + e->off;
        vst1q_f32(row, vld1q_f32(src));
        vst1q_f32(row + 4, vld1q_f32(src + 4));
        vst1q_f32(row + 8, vld1q_f32(src + 8));
      } else if (blend[t]) {
        const float *s0 = xp + base[t][0], *s1 = xp + base[t][1];
        for (int v = 0; v < 3; v++) {
          uint32x4_t a = vandq_u32(vreinterpretq_u32_f32(vld1q_f32(s0 + 4 * v)),
                                   vld1q_u32(mask[t][0] + 4 * v));
          uint32x4_t b = vandq_u32(vreinterpretq_u32_f32(vld1q_f32(s1 + 4 * v)),
                                   vld1q_u32(mask[t][1] + 4 * v));
          vst1q_f32(row + 4 * v, vreinterpretq_f32_u32(vorrq_u32(a, b)));
        }
      } else {
        float32x4_t z = vdupq_n_f32(0.0f);
        vst1q_f32(row, z);
        vst1q_f32(row + 4, z);
        vst1q_f32(row + 8, z);
        for (int q = 0; q < ndesc[t]; q++)
          for (int i = 0; i < e[q].n; i++)
            row[e[q].d + i] = xp[e[q].off + i];
      }
      if (++t == taps)
        t = 0, c++;
    }
  }
}
#endif

/* The sgemm's pack_b callback. */
static void pack_cols(const void *ctx, float *dst, int nr, int k0, int kc,
                      int j0, int nc) {
  const conv_src *cs = ctx;
#ifdef DG_X86
  const dg_cpu_conv_shape *s = cs->s;
  /* Segments per panel: at most 32 / OW + 2. */
  int ns = 32 / s->OW + 2;
  if (nr == 32 && s->sw == 1 && s->KH * s->KW * ns <= MAX_DESC &&
      dg_cpu_simd_level() >= DG_CPU_SIMD_AVX512) {
    pack_512(cs, dst, k0, kc, j0, nc);
    return;
  }
#endif
#if defined(__aarch64__)
  /* Segments per panel: at most 12 / OW + 2. */
  int segs = 12 / cs->s->OW + 2;
  if (nr == 12 && cs->s->sw == 1 &&
      cs->s->KH * cs->s->KW * segs <= NEON_DESC / 2) {
    pack_neon12(cs, dst, k0, kc, j0, nc);
    return;
  }
#endif
  pack_runs(cs, dst, nr, k0, kc, j0, nc);
}

/* ---- Output pixels as rows: Y^T = col^T W^T ----
 *
 * On small planes (ResNet's 14x14 and 7x7 layers) the GEMM's panels of
 * output pixels run partly empty (49 pixels fill 49 of 64 lanes), while
 * output channels come in multiples of the panel width. There the GEMM
 * runs the other way round: its rows are output pixels, packed per row
 * block straight from the input by pack_pixels (the runs pack_cols
 * reads), its columns output channels, read from the weights packed once
 * as B; the [P][O] result is transposed into the image, with the
 * residual, clamp and fused function applied on the way. */

#ifdef DG_X86
/* AVX-512, stride 1: as pack_512 with one vector of mr <= 16 lanes. */
T512 static void pack_px512(const conv_src *cs, float *dst, int mr, int r0,
                            int k0, int kc) {
  const dg_cpu_conv_shape *s = cs->s;
  int taps = s->KH * s->KW;
  size_t plane = (size_t)s->H * s->W;
  seg_desc desc[MAX_DESC];
  int ns = seg_descs(s, r0, mr, desc);
  __mmask16 keep = (__mmask16)((1u << mr) - 1);
  int c = k0 / taps, t = k0 % taps;
  for (int k = 0; k < kc; k++) {
    const float *xp = cs->x + plane * (size_t)c;
    const seg_desc *e = &desc[t * ns];
    __m512 v = _mm512_setzero_ps();
    for (int q = 0; q < ns; q++)
      v = _mm512_mask_loadu_ps(
          v, e[q].m0,
          (const float *)((uintptr_t)xp + (uintptr_t)(e[q].off * 4)));
    _mm512_mask_storeu_ps(dst + (size_t)k * mr, keep, v);
    if (++t == taps)
      t = 0, c++;
  }
}
#endif

/* The sgemm's pack_a callback: rows are output pixels r0..r0+mr. */
static void pack_pixels(const void *ctx, float *dst, int mr, int r0, int k0,
                        int kc) {
  const conv_src *cs = ctx;
#ifdef DG_X86
  const dg_cpu_conv_shape *s = cs->s;
  if (mr <= 16 && s->sw == 1 && s->KH * s->KW * (16 / s->OW + 2) <= MAX_DESC &&
      dg_cpu_simd_level() >= DG_CPU_SIMD_AVX512) {
    pack_px512(cs, dst, mr, r0, k0, kc);
    return;
  }
#endif
  pack_runs(cs, dst, mr, k0, kc, r0, mr);
}

/* Lanes of work in lanes computed: the pixels' panels (or the shifted
 * planes' rows, overhang included) against the channels' panels, the
 * latter less what packing the pixels costs per panel of channels (a
 * row block's copy, about a quarter of a panel's multiply). Only where
 * the pixels' copy is AVX-512's masked loads and K is deep enough for the
 * transposed copy of the result to vanish beside the multiply: with
 * AVX2's copy, or K under 128, ResNet-50's and MobileNetV2's layers came
 * out slower, not faster (docs/performance.md). */
static int pixel_rows_pay(const dg_cpu_conv_shape *s, int nr, int shifted) {
#ifndef DG_X86
  return 0;
#endif
  if (s->G != 1 || nr != 32 || (int64_t)s->C * s->KH * s->KW < 128 ||
      dg_cpu_simd_level() < DG_CPU_SIMD_AVX512)
    return 0;
  int64_t P = (int64_t)s->OH * s->OW;
  int64_t cols = shifted ? dg_cpu_shift_of(s).n : P;
  double by_pixels = (double)P / (double)((cols + nr - 1) / nr * nr);
  int64_t panels = (s->O + nr - 1) / nr;
  double by_channels =
      (double)s->O / (double)(panels * nr) * panels / (panels + 0.25);
  return by_channels > by_pixels * 1.1;
}

typedef struct px_job {
  const dg_cpu_conv_shape *s;
  const float *tmp, *r; /* [P][O]; r one image's residual, or NULL */
  float *y;             /* one image */
  float lo, hi;
  dg_cpu_post post;
} px_job;

#ifdef DG_X86
/* Output channels [o0, o1) of tmp into the image, 16 at a time: each
 * 16 x 16 block of tmp transposed in registers (pixel rows to channel
 * rows), the residual added and clamped on the way; the fused function
 * on each row block while it is in cache. (The pixel rows run on
 * AVX-512 only: pixel_rows_pay.) */
T512 static void px_out(const px_job *j, int o0, int o1) {
  const dg_cpu_conv_shape *s = j->s;
  int64_t P = (int64_t)s->OH * s->OW;
  const __m512 lo = _mm512_set1_ps(j->lo), hi = _mm512_set1_ps(j->hi);
  for (int ob = o0; ob < o1; ob += 16) {
    int no = o1 - ob < 16 ? o1 - ob : 16;
    __mmask16 mo = (__mmask16)((1u << no) - 1);
    for (int64_t p0 = 0; p0 < P; p0 += 16) {
      int np = P - p0 < 16 ? (int)(P - p0) : 16;
      __mmask16 mp = (__mmask16)((1u << np) - 1);
      __m512 v[16];
      for (int i = 0; i < 16; i++)
        v[i] = i < np ? _mm512_maskz_loadu_ps(mo, j->tmp + (p0 + i) * s->O + ob)
                      : _mm512_setzero_ps();
      dg_cpu_transpose16(v);
      for (int k = 0; k < no; k++) {
        float *yr = j->y + (ob + k) * P + p0;
        __m512 o = v[k];
        if (j->r) /* (bound, v) order keeps NaN results NaN */
          o = _mm512_min_ps(
              hi, _mm512_max_ps(
                      lo, _mm512_add_ps(o, _mm512_maskz_loadu_ps(
                                               mp, j->r + (ob + k) * P + p0))));
        _mm512_mask_storeu_ps(yr, mp, o);
      }
    }
    for (int k = 0; k < no && j->post.fn; k++) {
      float *yr = j->y + (ob + k) * P;
      dg_cpu_unary(j->post.fn, yr, yr, (size_t)P, j->post.a, j->post.b);
    }
  }
}
#else
static void px_out(const px_job *j, int o0, int o1) {
  (void)j, (void)o0, (void)o1; /* pixel rows are x86's (pixel_rows_pay) */
}
#endif

static void px_out_task(void *arg, int i, int n) {
  const px_job *j = arg;
  int O = j->s->O;
  /* whole blocks of 16 channels per task */
  int blocks = (O + 15) / 16;
  int b0 = (int)((long long)blocks * i / n),
      b1 = (int)((long long)blocks * (i + 1) / n);
  px_out(j, b0 * 16, b1 * 16 < O ? b1 * 16 : O);
}

/* Floats of one image's [P][O] result, 64-byte aligned. */
static size_t px_result_floats(const dg_cpu_conv_shape *s) {
  return ((size_t)s->OH * s->OW * (size_t)s->O + 15) & ~(size_t)15;
}

/* Scratch floats of one image: the [P][O] result, then the GEMM's. */
static size_t px_floats(const dg_cpu_conv_shape *s, int gemm_tasks) {
  return px_result_floats(s) +
         dg_cpu_sgemm_task_floats(s->OH * s->OW, s->O, s->C * s->KH * s->KW) *
             (size_t)gemm_tasks;
}

/* Scratch floats of a conv by pixel rows: one image per thread, each
 * GEMM on its thread alone, or one image at a time, its GEMM on all. */
static size_t px_scratch_floats(const dg_cpu_conv_shape *s, int threads,
                                int by_images) {
  return by_images ? px_floats(s, 1) * (size_t)threads : px_floats(s, threads);
}

static int group_k(const dg_cpu_conv_shape *s) {
  return s->C / s->G * s->KH * s->KW;
}

int dg_cpu_conv_by_images(int N, int threads) {
  return threads > 1 && N >= threads && (N % threads == 0 || N >= 4 * threads);
}

typedef struct conv_job {
  const dg_cpu_conv_shape *s;
  const float *x, *w, *b, *r;
  dg_cpu_sgemm_packed *const *packs;
  float *y, lo, hi;
  dg_cpu_post post;
  float *scratch;
  size_t task_floats;  /* per thread, when by images */
  const float *panels; /* the weights packed as B (conv_direct.h) */
  /* One image straight (dc_one), by shifted planes (shift_one) or pixel
   * rows (px_one), in task_floats of scratch; NULL: by groups
   * (conv_one). */
  void (*one)(const struct conv_job *j, dg_cpu_pool *pool, int img,
              float *scratch);
  _Atomic int next; /* by images: the next image to claim */
} conv_job;

/* One image, one group; pool NULL runs it on the calling thread. */
static void conv_one(const conv_job *j, dg_cpu_pool *pool, int n, int g,
                     float *scratch, size_t scratch_floats) {
  const dg_cpu_conv_shape *s = j->s;
  int CG = s->C / s->G, OG = s->O / s->G, K = group_k(s), P = s->OH * s->OW;
  conv_src cs = {j->x + ((size_t)n * s->C + (size_t)g * CG) * s->H * s->W, s};
  dg_cpu_sgemm_args a = {
      .M = OG,
      .N = P,
      .K = K,
      .A = j->w + (size_t)g * OG * K,
      .lda = K,
      .C = j->y + ((size_t)n * s->O + (size_t)g * OG) * P,
      .ldc = P,
      .bias = j->b ? j->b + (size_t)g * OG : NULL,
      .bias_per_row = 1,
      .residual = j->r ? j->r + ((size_t)n * s->O + (size_t)g * OG) * P : NULL,
      .ldr = P,
      .clamp_lo = j->lo,
      .clamp_hi = j->hi,
      .pack_b = pack_cols,
      .pack_b_ctx = &cs,
      .post = j->post,
      .scratch = scratch,
      .scratch_floats = scratch_floats};
  dg_cpu_sgemm_packed_run(pool, &a, j->packs ? j->packs[g] : NULL, NULL);
}

/* ---- Shifted planes: the taps read in place (conv_shift.h) ----
 *
 * For a conv with few output channels (64@56) packing B from the padded
 * copy was a third of the multiply's time; the x86 kernels read the
 * rows in place instead. */
static size_t shift_floats(const dg_cpu_conv_shape *s) {
  dg_cpu_shift g = dg_cpu_shift_of(s);
  int64_t K = (int64_t)s->C * s->KH * s->KW;
  /* the copy, the GEMM's result and the row offsets (int64, two floats
   * each, aligned in the slack) */
  return (size_t)(s->C * g.cstride + s->O * g.n + 2 * K + 16);
}

static int shift_takes(const dg_cpu_conv_shape *s) {
#ifdef DG_X86
  return dg_cpu_simd_level() >= DG_CPU_SIMD_AVX2 && s->KH * s->KW > 1 &&
         dg_cpu_shift_suits(s, (size_t)1 << 28, 14) &&
         shift_floats(s) <= ((size_t)1 << 28);
#else
  (void)s;
  return 0;
#endif
}

typedef struct shift_job {
  const dg_cpu_conv_shape *s;
  dg_cpu_shift g;
  const float *x; /* one image */
  float *xp, *tmp, *y;
  const float *r;
  float lo, hi;
  dg_cpu_post post;
} shift_job;

/* Channels [c0, c1) of the image into their phases. */
static void shift_fill(const shift_job *j, int c0, int c1) {
  dg_cpu_shift_fill(j->s, &j->g, j->x, j->xp, sizeof(float), 0, c0, c1);
}

/* Output channels [o0, o1): the flat rows less their overhang, with the
 * residual and the clamp when there is a residual (else the GEMM
 * clamped). */
static void shift_out(const shift_job *j, int o0, int o1) {
  const dg_cpu_conv_shape *s = j->s;
  for (int o = o0; o < o1; o++)
    for (int oh = 0; oh < s->OH; oh++) {
      const float *src = j->tmp + (size_t)(o * j->g.n + oh * j->g.q);
      size_t at = ((size_t)o * s->OH + oh) * s->OW;
      if (!j->r) {
        if (j->post.fn) /* the fused unary function, as the row moves */
          dg_cpu_unary(j->post.fn, src, j->y + at, s->OW, j->post.a, j->post.b);
        else
          memcpy(j->y + at, src, sizeof(float) * (size_t)s->OW);
        continue;
      }
      const float *rr = j->r + at;
      float *yr = j->y + at, lo = j->lo, hi = j->hi;
      for (int ow = 0; ow < s->OW; ow++) {
        float v = src[ow] + rr[ow];
        yr[ow] = v < lo ? lo : (v > hi ? hi : v);
      }
      if (j->post.fn)
        dg_cpu_unary(j->post.fn, yr, yr, s->OW, j->post.a, j->post.b);
    }
}

static void shift_fill_task(void *arg, int i, int n) {
  const shift_job *j = arg;
  shift_fill(j, (int)((long long)j->s->C * i / n),
             (int)((long long)j->s->C * (i + 1) / n));
}

static void shift_out_task(void *arg, int i, int n) {
  const shift_job *j = arg;
  shift_out(j, (int)((long long)j->s->O * i / n),
            (int)((long long)j->s->O * (i + 1) / n));
}

/* One image by shifted planes in scratch (shift_floats of it); pool NULL
 * runs it on the calling thread. */
static void shift_one(const conv_job *cj, dg_cpu_pool *pool, int img,
                      float *scratch) {
  const dg_cpu_conv_shape *s = cj->s;
  shift_job j = {.s = s,
                 .g = dg_cpu_shift_of(s),
                 .lo = cj->lo,
                 .hi = cj->hi,
                 .post = cj->post};
  size_t P = (size_t)s->OH * s->OW;
  j.x = cj->x + (size_t)img * s->C * s->H * s->W;
  j.y = cj->y + (size_t)img * s->O * P;
  j.r = cj->r ? cj->r + (size_t)img * s->O * P : NULL;
  j.xp = scratch;
  j.tmp = j.xp + (size_t)s->C * j.g.cstride;
  /* the offsets follow the floats (shift_floats keeps 16 of slack for
   * their alignment: O * n and a task's share may be odd) */
  int64_t *off = dg_cpu_shift_offsets(s, &j.g, j.tmp + (size_t)s->O * j.g.n);
  int K = s->C * s->KH * s->KW;
  int threads = dg_cpu_pool_threads(pool);
  dg_cpu_pool_run(pool, shift_fill_task, &j, threads < s->C ? threads : s->C);
  dg_cpu_sgemm_args a = {.M = s->O,
                         .N = (int)j.g.n,
                         .K = K,
                         .A = cj->w,
                         .lda = K,
                         .B = j.xp,
                         .b_rows = off,
                         .C = j.tmp,
                         .ldc = (int)j.g.n,
                         .bias = cj->b,
                         .bias_per_row = 1,
                         .clamp_lo = j.r ? -INFINITY : j.lo,
                         .clamp_hi = j.r ? INFINITY : j.hi};
  dg_cpu_sgemm_packed_run(pool, &a, cj->packs ? cj->packs[0] : NULL, NULL);
  dg_cpu_pool_run(pool, shift_out_task, &j, threads < s->O ? threads : s->O);
}

/* One image by pixel rows in scratch (px_floats of it); pool NULL runs
 * it on the calling thread. The weights' packing is used as B where it
 * was made so (dg_cpu_sgemm_packed_run ignores one that does not fit). */
static void px_one(const conv_job *cj, dg_cpu_pool *pool, int img,
                   float *scratch) {
  const dg_cpu_conv_shape *s = cj->s;
  size_t P = (size_t)s->OH * s->OW;
  int K = s->C * s->KH * s->KW, threads = dg_cpu_pool_threads(pool);
  conv_src cs = {cj->x + (size_t)img * s->C * s->H * s->W, s};
  size_t res = px_result_floats(s);
  float *tmp = scratch;
  dg_cpu_sgemm_args a = {.M = (int)P,
                         .N = s->O,
                         .K = K,
                         .B = cj->w,
                         .ldb = K,
                         .trans_b = 1,
                         .C = tmp,
                         .ldc = s->O,
                         .bias = cj->b,
                         .clamp_lo = cj->r ? -INFINITY : cj->lo,
                         .clamp_hi = cj->r ? INFINITY : cj->hi,
                         .pack_a = pack_pixels,
                         .pack_a_ctx = &cs,
                         .scratch = scratch + res,
                         .scratch_floats = px_floats(s, threads) - res};
  dg_cpu_sgemm_packed_run(pool, &a, NULL, cj->packs ? cj->packs[0] : NULL);
  px_job j = {.s = s,
              .tmp = tmp,
              .r = cj->r ? cj->r + (size_t)img * s->O * P : NULL,
              .y = cj->y + (size_t)img * s->O * P,
              .lo = cj->lo,
              .hi = cj->hi,
              .post = cj->post};
  int blocks = (s->O + 15) / 16;
  dg_cpu_pool_run(pool, px_out_task, &j, threads < blocks ? threads : blocks);
}

/* One image straight from its padded copy (conv_direct.h) in scratch
 * (dg_cpu_conv_direct_floats of it); pool NULL runs it on the calling
 * thread. */
static void dc_one(const conv_job *cj, dg_cpu_pool *pool, int img,
                   float *scratch) {
  const dg_cpu_conv_shape *s = cj->s;
  size_t P = (size_t)s->OH * s->OW, y = (size_t)img * s->O * P;
  dg_cpu_conv_direct(pool, s, cj->x + (size_t)img * s->C * s->H * s->W,
                     cj->panels, cj->b, cj->r ? cj->r + y : NULL, cj->y + y,
                     cj->lo, cj->hi, &cj->post, scratch);
}

int dg_cpu_conv_f32_by_pixels(const dg_cpu_conv_shape *s) {
  return !dg_cpu_conv_direct_takes(s) &&
         pixel_rows_pay(s, dg_cpu_sgemm_panel_width(), shift_takes(s));
}

int dg_cpu_conv_f32_weights_as_b(const dg_cpu_conv_shape *s) {
  return dg_cpu_conv_direct_takes(s) || dg_cpu_conv_f32_by_pixels(s);
}

size_t dg_cpu_conv_f32_scratch(const dg_cpu_conv_shape *s, int threads) {
  if (threads < 1)
    threads = 1;
  size_t task =
      dg_cpu_sgemm_task_floats(s->O / s->G, s->OH * s->OW, group_k(s));
  int by_images = dg_cpu_conv_by_images(s->N, threads);
  size_t floats = task * (size_t)threads;
  if (shift_takes(s)) /* one image per thread, or one at a time */
    floats = shift_floats(s) * (size_t)(by_images ? threads : 1);
  if (dg_cpu_conv_direct_takes(s)) {
    size_t dc =
        dg_cpu_conv_direct_floats(s) * (size_t)(by_images ? threads : 1);
    floats = dc > floats ? dc : floats;
  }
  if (dg_cpu_conv_f32_by_pixels(s)) {
    size_t px = px_scratch_floats(s, threads, by_images);
    floats = px > floats ? px : floats;
  }
  return sizeof(float) * floats;
}

/* Task i: images as they come, with the task's own scratch. */
static void images_task(void *arg, int i, int n) {
  (void)n;
  conv_job *j = arg;
  float *scratch = j->scratch ? j->scratch + j->task_floats * (size_t)i : NULL;
  /* images claimed one at a time: a thread held up does fewer */
  for (int img; (img = atomic_fetch_add(&j->next, 1)) < j->s->N;) {
    if (j->one) {
      j->one(j, NULL, img, scratch);
      continue;
    }
    for (int g = 0; g < j->s->G; g++)
      conv_one(j, NULL, img, g, scratch, scratch ? j->task_floats : 0);
  }
}

void dg_cpu_conv_f32(dg_cpu_pool *pool, const dg_cpu_conv_shape *s,
                     const float *x, const float *w,
                     dg_cpu_sgemm_packed *const *packs, const float *b,
                     const float *r, float *y, float lo, float hi,
                     const dg_cpu_post *post, void *scratch,
                     size_t scratch_bytes) {
  int threads = dg_cpu_pool_threads(pool);
  size_t task =
      dg_cpu_sgemm_task_floats(s->O / s->G, s->OH * s->OW, group_k(s));
  conv_job j = {.s = s,
                .x = x,
                .w = w,
                .b = b,
                .r = r,
                .packs = packs,
                .y = y,
                .lo = lo,
                .hi = hi,
                .scratch = scratch,
                .task_floats = task};
  atomic_init(&j.next, 0);
  if (post)
    j.post = *post;
  int by_images = dg_cpu_conv_by_images(s->N, threads);
  size_t per = by_images ? (size_t)threads : 1; /* images at once */
  /* One image at a time straight, by pixel rows or by shifted planes,
   * where the scratch holds what they need (and, straight, the weights
   * were packed as B). */
  const float *panels =
      packs && s->G == 1
          ? dg_cpu_sgemm_packed_panels(packs[0], s->O, s->C * s->KH * s->KW)
          : NULL;
  if (panels && dg_cpu_conv_direct_takes(s) && scratch &&
      scratch_bytes >= sizeof(float) * dg_cpu_conv_direct_floats(s) * per) {
    j.one = dc_one;
    j.panels = panels;
    j.task_floats = dg_cpu_conv_direct_floats(s);
  } else if (dg_cpu_conv_f32_by_pixels(s) && scratch &&
             scratch_bytes >=
                 sizeof(float) * px_scratch_floats(s, threads, by_images)) {
    j.one = px_one;
    j.task_floats = px_floats(s, 1);
  } else if (shift_takes(s) && scratch &&
             scratch_bytes >= sizeof(float) * shift_floats(s) * per) {
    j.one = shift_one;
    j.task_floats = shift_floats(s);
  }
  if (j.one && by_images) {
    dg_cpu_pool_run(pool, images_task, &j, threads);
    return;
  }
  if (j.one) {
    for (int n = 0; n < s->N; n++)
      j.one(&j, pool, n, scratch);
    return;
  }
  if (by_images) {
    /* Without room for every task's scratch, each GEMM allocates its own
     * (or, failing that, runs its allocation-free loop). */
    if (scratch_bytes < sizeof(float) * task * (size_t)threads)
      j.scratch = NULL;
    dg_cpu_pool_run(pool, images_task, &j, threads);
    return;
  }
  size_t floats = scratch_bytes / sizeof(float);
  for (int n = 0; n < s->N; n++)
    for (int g = 0; g < s->G; g++)
      conv_one(&j, pool, n, g, scratch, floats);
}
