/* Depthwise convolution on the CPU, f32 and int8 (depthwise.h), a band of
 * output rows at a time.
 *
 * A band's input rows are padded with zeros and split into stride phases:
 * phase (ph, pw) holds padded row sh * r + ph at its row r and padded
 * column sw * c + pw at its column c. Every tap then reads one contiguous
 * run at every stride and dilation: the band's output f = oh * q + ow
 * reads element f + (kh * dh / sh) * q + kw * dw / sw of the tap's phase.
 * So the outputs are made in flat blocks with the sums in registers, one
 * load and one multiply-add per tap and vector, and the columns ow >= OW
 * of each flat row (the q - OW a row's last taps overhang) are computed
 * and dropped.
 *
 * Exactness. The taps are summed in (kh, kw) order from +0, and a padded
 * tap adds w * 0, which changes no sum: so in f32 (multiply, then add,
 * never fused) every output is the reference's to the bit at every SIMD
 * level. int8 runs the same loop on x - zx and w - zw in float: each
 * product is at most 255 * 255 in magnitude, so up to DW_EXACT_TAPS taps
 * every partial sum is an integer below 2^24 and exact in any order (the
 * x86 levels fuse the multiply-add there); the int32 bias is added after.
 * A kernel with more taps takes depthwise_q8.c's int32 loop. */
#include "depthwise.h"

#include "cpu_kernels.h"

#include "ops/requant.h" /* dg_requant_out_q8 */

#include <stdbool.h>
#include <string.h>

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

enum {
  BLOCK = 16,           /* sums are made in runs of whole blocks */
  BAND_FLOATS = 32768,  /* a band's phases and sums: 128 KiB, in L2 */
  MAX_FLOATS = 1 << 22, /* beyond this a band of one row is too wide */
  DW_EXACT_TAPS = 258,  /* 258 * 255 * 255 < 2^24 */
  HEAD_FLOATS = 64,     /* dg_cpu_depthwise_begin's record */
};

/* Where everything lives in a task's scratch, in floats. */
typedef struct band {
  int64_t q;      /* flat row pitch of the phases and the sums */
  int64_t dr;     /* the taps' largest phase-row offset */
  int64_t extra;  /* rows past dr + 1 that a block's overhang reads */
  int64_t br;     /* output rows per band */
  int64_t rows;   /* rows per phase */
  int64_t phases; /* sh * sw */
  int64_t taps;
  int64_t in_rows; /* input rows a band reads, at most */
  bool once;       /* one band a plane: the padding is zeroed once */
  size_t sums, in, wf, off, total; /* offsets and size, in floats */
} band;

static int64_t round_up(int64_t v, int64_t to) {
  return (v + to - 1) / to * to;
}

static band band_of(const dg_conv_geom *d) {
  band b;
  int64_t dc = (d->KW - 1) * d->dw / d->sw;
  b.q = d->OW + dc;
  b.dr = (d->KH - 1) * d->dh / d->sh;
  /* A block's last sum reads up to (rows + dr + 1) * q + BLOCK - 2
   * elements into its phase (dc < q): rows enough for that. */
  b.extra = 1 + (BLOCK - 1) / b.q;
  b.phases = (int64_t)d->sh * d->sw;
  b.taps = d->KH * d->KW;
  int64_t fixed = b.phases * (b.dr + 1 + b.extra) * b.q;
  int64_t per_row = b.phases * b.q + b.q;
  b.br = fixed < BAND_FLOATS ? (BAND_FLOATS - fixed) / per_row : 1;
  if (b.br < 1)
    b.br = 1;
  if (b.br > d->OH)
    b.br = d->OH;
  b.rows = b.br + b.dr + 1 + b.extra;
  b.once = b.br == d->OH;
  size_t at = HEAD_FLOATS + (size_t)round_up(b.phases * b.rows * b.q, BLOCK);
  b.sums = at;
  at += (size_t)round_up(b.br * b.q, BLOCK);
  /* The band's input rows widened to float and/or split into even and
   * odd elements; later the int8 output bytes. */
  b.in_rows = b.rows * d->sh;
  if (b.in_rows > d->H)
    b.in_rows = d->H;
  b.in = at;
  int64_t in = round_up(b.in_rows * d->W + 2, BLOCK),
          out = round_up(b.br * b.q / 4 + 1, BLOCK);
  at += (size_t)(in > out ? in : out);
  b.wf = at; /* the taps' weights */
  at += (size_t)round_up(b.taps, BLOCK);
  b.off = at; /* the taps' offsets, int64 */
  at += (size_t)round_up(2 * b.taps, BLOCK);
  b.total = at;
  return b;
}

bool dg_cpu_depthwise_fits(const dg_conv_geom *d) {
  if (d->OH < 1 || d->OW < 1 || d->KH < 1 || d->KW < 1 || d->sh < 1 ||
      d->sw < 1 || d->dh < 1 || d->dw < 1)
    return false;
  /* bounded before the products, so nothing below overflows */
  if (d->OW > MAX_FLOATS || d->W > MAX_FLOATS || d->KH * d->KW > MAX_FLOATS ||
      (int64_t)d->sh * d->sw > 64)
    return false;
  return band_of(d).total <= MAX_FLOATS;
}

size_t dg_cpu_depthwise_scratch(const dg_conv_geom *d) {
  return dg_cpu_depthwise_fits(d) ? sizeof(float) * band_of(d).total : 0;
}

/* ---- the sums: sums[f] = sum over taps t of w[t] * ph[off[t] + f], for f
 * in [0, len), len a multiple of BLOCK. fused: the multiply-add rounds
 * once (int8's exact integers only). ---- */

typedef void core_fn(const float *ph, const int64_t *off, const float *w,
                     int64_t taps, int64_t len, float *sums, bool fused);

static void core_base(const float *ph, const int64_t *off, const float *w,
                      int64_t taps, int64_t len, float *sums, bool fused) {
  (void)fused; /* without -ffp-contract the C below never fuses */
  for (int64_t f = 0; f < len; f += BLOCK) {
    float a[BLOCK] = {0};
    for (int64_t t = 0; t < taps; t++) {
      const float *s = ph + off[t] + f, wv = w[t];
      for (int i = 0; i < BLOCK; i++)
        a[i] += wv * s[i];
    }
    memcpy(sums + f, a, sizeof a);
  }
}

#if defined(__x86_64__)
/* Four vectors of sums per block; fused, odd taps go to four more (exact
 * integers: the split changes nothing) so the FMA's latency is hidden. */
#define X86_CORE(name, attr, V, LANES, zero, load, store, set1, mul, add, fma) \
  static inline attr __attribute__((always_inline)) void name##_at(            \
      const float *ph, const int64_t *off, const float *w, int64_t taps,       \
      int64_t len, float *sums, bool fused) {                                  \
    int64_t f = 0;                                                             \
    for (; f + 4 * LANES <= len; f += 4 * LANES) {                             \
      V a0 = zero(), a1 = a0, a2 = a0, a3 = a0;                                \
      if (fused) {                                                             \
        V b0 = a0, b1 = a0, b2 = a0, b3 = a0;                                  \
        int64_t t = 0;                                                         \
        for (; t + 1 < taps; t += 2) {                                         \
          const float *s = ph + off[t] + f, *u = ph + off[t + 1] + f;          \
          V wv = set1(w[t]), wu = set1(w[t + 1]);                              \
          a0 = fma(wv, load(s), a0), a1 = fma(wv, load(s + LANES), a1);        \
          a2 = fma(wv, load(s + 2 * LANES), a2);                               \
          a3 = fma(wv, load(s + 3 * LANES), a3);                               \
          b0 = fma(wu, load(u), b0), b1 = fma(wu, load(u + LANES), b1);        \
          b2 = fma(wu, load(u + 2 * LANES), b2);                               \
          b3 = fma(wu, load(u + 3 * LANES), b3);                               \
        }                                                                      \
        if (t < taps) {                                                        \
          const float *s = ph + off[t] + f;                                    \
          V wv = set1(w[t]);                                                   \
          a0 = fma(wv, load(s), a0), a1 = fma(wv, load(s + LANES), a1);        \
          a2 = fma(wv, load(s + 2 * LANES), a2);                               \
          a3 = fma(wv, load(s + 3 * LANES), a3);                               \
        }                                                                      \
        a0 = add(a0, b0), a1 = add(a1, b1), a2 = add(a2, b2);                  \
        a3 = add(a3, b3);                                                      \
      } else {                                                                 \
        for (int64_t t = 0; t < taps; t++) {                                   \
          const float *s = ph + off[t] + f;                                    \
          V wv = set1(w[t]);                                                   \
          a0 = add(a0, mul(wv, load(s)));                                      \
          a1 = add(a1, mul(wv, load(s + LANES)));                              \
          a2 = add(a2, mul(wv, load(s + 2 * LANES)));                          \
          a3 = add(a3, mul(wv, load(s + 3 * LANES)));                          \
        }                                                                      \
      }                                                                        \
      store(sums + f, a0), store(sums + f + LANES, a1);                        \
      store(sums + f + 2 * LANES, a2), store(sums + f + 3 * LANES, a3);        \
    }                                                                          \
    for (; f < len; f += LANES) {                                              \
      V a = zero();                                                            \
      for (int64_t t = 0; t < taps; t++) {                                     \
        V x = load(ph + off[t] + f), wv = set1(w[t]);                          \
        a = fused ? fma(wv, x, a) : add(a, mul(wv, x));                        \
      }                                                                        \
      store(sums + f, a);                                                      \
    }                                                                          \
  }                                                                            \
  static attr void name(const float *ph, const int64_t *off, const float *w,   \
                        int64_t taps, int64_t len, float *sums, bool fused) {  \
    if (fused)                                                                 \
      name##_at(ph, off, w, taps, len, sums, true);                            \
    else                                                                       \
      name##_at(ph, off, w, taps, len, sums, false);                           \
  }

X86_CORE(core_avx512, DG_CPU_T512, __m512, 16, _mm512_setzero_ps,
         _mm512_loadu_ps, _mm512_storeu_ps, _mm512_set1_ps, _mm512_mul_ps,
         _mm512_add_ps, _mm512_fmadd_ps)
X86_CORE(core_avx2, __attribute__((target("avx2,fma"))), __m256, 8,
         _mm256_setzero_ps, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_set1_ps,
         _mm256_mul_ps, _mm256_add_ps, _mm256_fmadd_ps)
#endif

#if defined(__aarch64__)
static void core_neon(const float *ph, const int64_t *off, const float *w,
                      int64_t taps, int64_t len, float *sums, bool fused) {
  for (int64_t f = 0; f < len; f += BLOCK) {
    float32x4_t a0 = vdupq_n_f32(0), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t t = 0; t < taps; t++) {
      const float *s = ph + off[t] + f;
      float wv = w[t];
      float32x4_t x0 = vld1q_f32(s), x1 = vld1q_f32(s + 4),
                  x2 = vld1q_f32(s + 8), x3 = vld1q_f32(s + 12);
      if (fused) {
        a0 = vfmaq_n_f32(a0, x0, wv), a1 = vfmaq_n_f32(a1, x1, wv);
        a2 = vfmaq_n_f32(a2, x2, wv), a3 = vfmaq_n_f32(a3, x3, wv);
      } else {
        a0 = vaddq_f32(a0, vmulq_n_f32(x0, wv));
        a1 = vaddq_f32(a1, vmulq_n_f32(x1, wv));
        a2 = vaddq_f32(a2, vmulq_n_f32(x2, wv));
        a3 = vaddq_f32(a3, vmulq_n_f32(x3, wv));
      }
    }
    vst1q_f32(sums + f, a0), vst1q_f32(sums + f + 4, a1);
    vst1q_f32(sums + f + 8, a2), vst1q_f32(sums + f + 12, a3);
  }
}
#endif

static core_fn *core_for_level(void) {
  int level = dg_cpu_simd_level();
#if defined(__x86_64__)
  if (level >= DG_CPU_SIMD_AVX512)
    return core_avx512;
  if (level >= DG_CPU_SIMD_AVX2)
    return core_avx2;
#elif defined(__aarch64__)
  if (level == DG_CPU_SIMD_NEON)
    return core_neon;
#endif
  (void)level;
  return core_base;
}

/* ---- a plane, band by band ---- */

/* What goes in and comes out: f32 x, or bytes xq (i8 when xs) less zx;
 * f32 y = clamp(sum + bias (+ res), lo, hi), or bytes yq requantised. */
typedef struct dw_io {
  const float *x;
  const uint8_t *xq;
  bool xs;
  int32_t zx;
  float bias, lo, hi;
  const float *res;
  float *y;
  int32_t qbias, zy;
  float m, flo, fhi;
  uint8_t *yq;
} dw_io;

/* The band's input rows [ih0, ih0 + n / W) as the phases are filled from
 * them: f32 rows at stride 1 are read in place; otherwise they are
 * widened (int8, less zx) into buf, and at stride 2 split there into
 * even and odd flat elements, E = buf, O = buf + (n + 1) / 2, so that
 * each phase row is one copy. One flat loop over the band's rows
 * vectorises where a loop per row would spend itself on tails. */
static inline __attribute__((always_inline)) void
band_input(const dw_io *io, int64_t first, int64_t n, int sw,
           float *restrict buf) {
  const int64_t h = (n + 1) / 2;
  float *restrict e = buf, *restrict o = buf + h;
  if (!io->xq) {
    const float *restrict x = io->x + first;
    if (sw == 2) {
      for (int64_t k = 0; k < n / 2; k++)
        e[k] = x[2 * k], o[k] = x[2 * k + 1];
      if (n & 1)
        e[n / 2] = x[n - 1];
    }
    return;
  }
  const uint8_t *restrict x = io->xq + first;
  const float zx = (float)io->zx; /* |x - zx| <= 255: exact in float */
  if (sw == 2) {
    if (io->xs)
      for (int64_t k = 0; k < n / 2; k++)
        e[k] = (float)(int8_t)x[2 * k] - zx,
        o[k] = (float)(int8_t)x[2 * k + 1] - zx;
    else
      for (int64_t k = 0; k < n / 2; k++)
        e[k] = (float)x[2 * k] - zx, o[k] = (float)x[2 * k + 1] - zx;
    if (n & 1)
      e[n / 2] = (io->xs ? (float)(int8_t)x[n - 1] : (float)x[n - 1]) - zx;
  } else if (io->xs) {
    for (int64_t k = 0; k < n; k++)
      buf[k] = (float)(int8_t)x[k] - zx;
  } else {
    for (int64_t k = 0; k < n; k++)
      buf[k] = (float)x[k] - zx;
  }
}

/* Phase row dst (q columns) of phase column pw: padded column sw * c + pw
 * of input row ih; zero outside the row where pad (else already zero). */
static inline __attribute__((always_inline)) void
phase_row(float *restrict dst, const dw_io *io, const float *buf,
          int64_t band_first, int64_t n, const dg_conv_geom *d, int64_t q,
          int sw, int64_t ih, int64_t pw, bool pad) {
  const int64_t W = d->W, first = pw - d->pl;
  int64_t lo, hi;
  dg_cpu_out_cols(q, W, sw, first, &lo, &hi);
  if (pad)
    memset(dst, 0, sizeof(float) * (size_t)lo);
  int64_t iw = sw * lo + first;         /* the first input column read */
  int64_t l = ih * W + iw - band_first; /* its element in the band */
  if (sw == 2) {
    const float *src = (l & 1 ? buf + (n + 1) / 2 : buf) + l / 2;
    memcpy(dst + lo, src, sizeof(float) * (size_t)(hi - lo));
  } else {
    const float *src = io->xq ? buf + l : io->x + ih * W + iw;
    if (sw == 1)
      memcpy(dst + lo, src, sizeof(float) * (size_t)(hi - lo));
    else
      for (int64_t c = 0; c < hi - lo; c++)
        dst[lo + c] = src[sw * c];
  }
  if (pad)
    memset(dst + hi, 0, sizeof(float) * (size_t)(q - hi));
}

/* The sums of a band's rows to its outputs: flat over the band where the
 * epilogue allows (then a copy per row), by rows for a residual. */
static inline __attribute__((always_inline)) void
band_out(const dg_conv_geom *d, const dw_io *io, float *restrict s, int64_t q,
         int64_t oh0, int64_t nb, uint8_t *restrict bytes) {
  const int64_t n = nb * q, OW = d->OW;
  if (io->yq) {
    const int32_t bias = io->qbias, zy = io->zy;
    const float m = io->m, flo = io->flo, fhi = io->fhi;
    for (int64_t i = 0; i < n; i++) {
      int32_t acc = (int32_t)s[i] + bias;
      bytes[i] = dg_requant_out_q8((float)acc * m, zy, flo, fhi);
    }
    for (int64_t i = 0; i < nb; i++)
      memcpy(io->yq + (oh0 + i) * OW, bytes + i * q, (size_t)OW);
    return;
  }
  const float bias = io->bias, lo = io->lo, hi = io->hi;
  if (io->res) {
    for (int64_t i = 0; i < nb; i++) {
      const float *restrict r = io->res + (oh0 + i) * OW;
      const float *restrict si = s + i * q;
      float *restrict y = io->y + (oh0 + i) * OW;
      for (int64_t ow = 0; ow < OW; ow++) {
        float v = (si[ow] + bias) + r[ow];
        y[ow] = v < lo ? lo : (v > hi ? hi : v);
      }
    }
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    float v = s[i] + bias;
    s[i] = v < lo ? lo : (v > hi ? hi : v);
  }
  for (int64_t i = 0; i < nb; i++)
    memcpy(io->y + (oh0 + i) * OW, s + i * q, sizeof(float) * (size_t)OW);
}

static inline __attribute__((always_inline)) void
run(const dg_conv_geom *d, const band *b, const dw_io *io, float *scratch,
    core_fn *core, bool fused, int sw) {
  const int64_t q = b->q, W = d->W, plane = b->rows * q;
  float *ph = scratch + HEAD_FLOATS, *sums = scratch + b->sums,
        *buf = scratch + b->in;
  const float *wf = scratch + b->wf;
  const int64_t *off = (const int64_t *)(scratch + b->off);
  for (int64_t oh0 = 0; oh0 < d->OH; oh0 += b->br) {
    int64_t nb = d->OH - oh0 < b->br ? d->OH - oh0 : b->br;
    int64_t fill = nb + b->dr + 1 + b->extra;
    /* the input rows the band's phase rows come from */
    int64_t ih0 = oh0 * d->sh - d->pt, ih1 = ih0 + fill * d->sh;
    ih0 = ih0 < 0 ? 0 : (ih0 > d->H ? d->H : ih0);
    ih1 = ih1 > d->H ? d->H : (ih1 < ih0 ? ih0 : ih1);
    int64_t n = (ih1 - ih0) * W;
    band_input(io, ih0 * W, n, sw, buf);
    for (int64_t p = 0; p < d->sh; p++)
      for (int64_t r = 0; r < fill; r++) {
        int64_t ih = (oh0 + r) * d->sh + p - d->pt;
        for (int64_t pw = 0; pw < sw; pw++) {
          float *dst = ph + (p * sw + pw) * plane + r * q;
          if (ih >= 0 && ih < d->H)
            phase_row(dst, io, buf, ih0 * W, n, d, q, sw, ih, pw, !b->once);
          else if (!b->once)
            memset(dst, 0, sizeof(float) * (size_t)q);
        }
      }
    core(ph, off, wf, b->taps, round_up(nb * q, BLOCK), sums, fused);
    band_out(d, io, sums, q, oh0, nb, (uint8_t *)buf);
  }
}

/* The fill and the epilogues at each level; sw a constant where it
 * matters (1, 2). */
#define RUNS(name, attr)                                                       \
  static attr void name(const dg_conv_geom *d, const band *b, const dw_io *io, \
                        float *scratch, core_fn *core, bool fused) {           \
    if (d->sw == 1)                                                            \
      run(d, b, io, scratch, core, fused, 1);                                  \
    else if (d->sw == 2)                                                       \
      run(d, b, io, scratch, core, fused, 2);                                  \
    else                                                                       \
      run(d, b, io, scratch, core, fused, d->sw);                              \
  }

RUNS(run_base, )
#if defined(__x86_64__)
RUNS(run_avx2, __attribute__((target("avx2"))))
RUNS(run_avx512, DG_CPU_T512)
#endif

/* The taps' phase offsets, in (kh, kw) order, into the scratch. */
static void tap_offsets(const dg_conv_geom *d, const band *b, float *scratch) {
  int64_t *off = (int64_t *)(scratch + b->off), plane = b->rows * b->q;
  for (int64_t kh = 0; kh < d->KH; kh++)
    for (int64_t kw = 0; kw < d->KW; kw++) {
      int64_t rh = kh * d->dh, rw = kw * d->dw;
      int64_t p = (rh % d->sh) * d->sw + rw % d->sw;
      *off++ = p * plane + rh / d->sh * b->q + rw / d->sw;
    }
}

typedef void run_fn(const dg_conv_geom *d, const band *b, const dw_io *io,
                    float *scratch, core_fn *core, bool fused);

/* What dg_cpu_depthwise_begin leaves at the head of the scratch for the
 * planes that follow: the layout, the level's functions, and whether
 * the int8 planes take the banded kernel. */
typedef struct dw_head {
  band b;
  core_fn *core;
  run_fn *run;
  bool banded;
} dw_head;
_Static_assert(sizeof(dw_head) <= sizeof(float) * HEAD_FLOATS,
               "dw_head fits its slot");

static bool q8_banded(const dg_conv_geom *d) {
  return d->KH * d->KW <= DW_EXACT_TAPS && dg_cpu_depthwise_fits(d);
}

size_t dg_cpu_depthwise_q8_scratch(const dg_conv_geom *d) {
  /* the caller may keep its taps in the last KH * KW ints */
  size_t taps = sizeof(int32_t) * (size_t)(d->KH * d->KW);
  if (q8_banded(d))
    return sizeof(float) * band_of(d).total + taps;
  return sizeof(float) * HEAD_FLOATS + dg_cpu_depthwise_q8_int32_scratch(d) +
         taps;
}

void dg_cpu_depthwise_begin(const dg_conv_geom *d, bool q8, void *scratch) {
  dw_head h = {.banded = q8 ? q8_banded(d) : dg_cpu_depthwise_fits(d)};
  if (!h.banded) {
    memcpy(scratch, &h, sizeof h);
    return;
  }
  h.b = band_of(d);
  h.core = core_for_level();
  h.run = run_base;
#if defined(__x86_64__)
  int level = dg_cpu_simd_level();
  if (level >= DG_CPU_SIMD_AVX512)
    h.run = run_avx512;
  else if (level >= DG_CPU_SIMD_AVX2)
    h.run = run_avx2;
#endif
  float *s = scratch;
  tap_offsets(d, &h.b, s);
  /* One band a plane: its padding is the same for every plane, zeroed
   * here once; the planes write only the cells their input reaches. */
  if (h.b.once)
    memset(s + HEAD_FLOATS, 0, sizeof(float) * (h.b.sums - HEAD_FLOATS));
  memcpy(scratch, &h, sizeof h);
}

void dg_cpu_depthwise_plane(const dg_conv_geom *d, const float *x,
                            const float *w, float bias, const float *r,
                            float *y, float lo, float hi, void *scratch) {
  dw_head h;
  memcpy(&h, scratch, sizeof h);
  float *s = scratch;
  memcpy(s + h.b.wf, w, sizeof(float) * (size_t)h.b.taps);
  dw_io io = {.x = x, .bias = bias, .lo = lo, .hi = hi, .res = r, .y = y};
  h.run(d, &h.b, &io, s, h.core, false);
}

void dg_cpu_depthwise_q8_plane(const dg_conv_geom *d, const uint8_t *x,
                               bool x_signed, int32_t zx, const int32_t *wv,
                               int32_t bias, float m, int32_t zy, int32_t lo,
                               int32_t hi, uint8_t *y, void *scratch) {
  dw_head h;
  memcpy(&h, scratch, sizeof h);
  if (!h.banded) {
    dg_cpu_depthwise_q8_int32(d, x, x_signed, zx, wv, bias, m, zy, lo, hi, y,
                              (float *)scratch + HEAD_FLOATS);
    return;
  }
  float *s = scratch;
  for (int64_t t = 0; t < h.b.taps; t++)
    s[h.b.wf + (size_t)t] = (float)wv[t];
  dw_io io = {.xq = x,
              .xs = x_signed,
              .zx = zx,
              .qbias = bias,
              .zy = zy,
              .m = m,
              .flo = (float)(lo - zy),
              .fhi = (float)(hi - zy),
              .yq = y};
  h.run(d, &h.b, &io, s, h.core, true);
}
