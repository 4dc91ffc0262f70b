/* f32 convolution straight from a padded copy of the image (see
 * conv_direct.h). */
#include "conv_direct.h"

#include "transpose.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#define DG_X86 1
#define T512 DG_CPU_T512
#endif

/* A tile: V = 4 vectors of 16 output channels by 7 pixels, or (64 - 32
 * channels or fewer left) V = 2 by 14: 28 accumulators either way. */
#define DC_T4 7
#define DC_T2 14
#define DC_PANEL 32      /* the sgemm's B panel width on AVX-512 */
#define DC_RUN 8         /* tiles of a row run together over each slice of K */
#define DC_KS 96         /* k a slice: at most 24 KB of weights, kept in L1 */
#define DC_ACC (28 * 16) /* floats of a tile's sums */

/* The padded copy's rows and row pitch: every tap of every output in
 * range, and every input row and column in it. */
static void padded(const dg_cpu_conv_shape *s, int64_t *Hp, int64_t *Wp) {
  int64_t h = (int64_t)(s->OH - 1) * s->sh + (int64_t)(s->KH - 1) * s->dh + 1,
          w = (int64_t)(s->OW - 1) * s->sw + (int64_t)(s->KW - 1) * s->dw + 1;
  *Hp = h > (int64_t)s->pt + s->H ? h : (int64_t)s->pt + s->H;
  *Wp = w > (int64_t)s->pl + s->W ? w : (int64_t)s->pl + s->W;
}

size_t dg_cpu_conv_direct_floats(const dg_cpu_conv_shape *s) {
  int64_t Hp, Wp;
  padded(s, &Hp, &Wp);
  /* the copy, then the int32 offsets, each region 64-byte aligned */
  size_t copy = ((size_t)(s->C * Hp * Wp) + 15) & ~(size_t)15;
  return copy + (((size_t)s->C * s->KH * s->KW + 15) & ~(size_t)15);
}

int dg_cpu_conv_direct_takes(const dg_cpu_conv_shape *s) {
#ifdef DG_X86
  int64_t Hp, Wp, K = (int64_t)s->C * s->KH * s->KW;
  padded(s, &Hp, &Wp);
  return dg_cpu_simd_level() >= DG_CPU_SIMD_AVX512 &&
         dg_cpu_sgemm_panel_width() == DC_PANEL && s->G == 1 &&
         (s->KH * s->KW > 1 || ((s->sh > 1 || s->sw > 1) && K >= 512)) &&
         K >= 64 && (s->sw == 1 || s->sw == 2) &&
         s->OW >= DC_T4 && s->C * Hp * Wp < INT32_MAX;
#else
  (void)s;
  return 0;
#endif
}

#ifdef DG_X86
typedef struct dc_job {
  const dg_cpu_conv_shape *s;
  const float *x, *panels, *b, *r;
  float *y, lo, hi;
  dg_cpu_post post;
  float *copy;        /* the padded copy */
  const float *xp;    /* what the taps read: the copy, or x itself */
  const int32_t *off; /* per k = (c, kh, kw): the tap's offset in it */
  int64_t Hp, Wp;
  int blocks; /* of 64 output channels (the last may be 32 or fewer) */
  int rows;   /* output rows a piece */
  _Atomic int next;
} dc_job;

/* Channels [c0, c1) into the padded copy, zeros around. */
static void fill(const dc_job *j, int c0, int c1) {
  const dg_cpu_conv_shape *s = j->s;
  size_t Wp = (size_t)j->Wp, pl = (size_t)s->pl, W = (size_t)s->W;
  for (int c = c0; c < c1; c++) {
    float *d = j->copy + (size_t)c * (size_t)(j->Hp * j->Wp);
    const float *src = j->x + (size_t)c * s->H * W;
    memset(d, 0, sizeof(float) * Wp * (size_t)s->pt);
    d += Wp * (size_t)s->pt;
    for (int h = 0; h < s->H; h++, d += Wp, src += W) {
      memset(d, 0, sizeof(float) * pl);
      memcpy(d + pl, src, sizeof(float) * W);
      memset(d + pl + W, 0, sizeof(float) * (Wp - pl - W));
    }
    memset(d, 0, sizeof(float) * Wp * (size_t)(j->Hp - s->pt - s->H));
  }
}

static void fill_task(void *arg, int i, int n) {
  const dc_job *j = arg;
  fill(j, (int)((long long)j->s->C * i / n),
       (int)((long long)j->s->C * (i + 1) / n));
}

/* The tile's sums: V vectors of 16 channels by T pixels x[t * S], one
 * fused multiply-add per k of off[0, K) and weights w0 (and w1 for V =
 * 4) from k = 0, starting from the bias (bias non-NULL) or acc, into acc
 * [V][T pixels][16]. */
static inline __attribute__((always_inline)) T512 void
tile_body(const int V, const int T, const int S, const float *x,
          const int32_t *off, int K, const float *w0, const float *w1,
          const __m512 *bias, float *acc) {
  __m512 a[28];
#pragma GCC unroll 4
  for (int v = 0; v < V; v++)
#pragma GCC unroll 14
    for (int t = 0; t < T; t++)
      a[v * T + t] = bias ? bias[v] : _mm512_load_ps(acc + (v * T + t) * 16);
  for (int k = 0; k < K; k++) {
    const float *xk = x + off[k];
    __m512 w[4];
    w[0] = _mm512_loadu_ps(w0 + (size_t)k * DC_PANEL);
    w[1] = _mm512_loadu_ps(w0 + (size_t)k * DC_PANEL + 16);
    if (V == 4) {
      w[2] = _mm512_loadu_ps(w1 + (size_t)k * DC_PANEL);
      w[3] = _mm512_loadu_ps(w1 + (size_t)k * DC_PANEL + 16);
    }
#pragma GCC unroll 14
    for (int t = 0; t < T; t++) {
      __m512 xv = _mm512_set1_ps(xk[t * S]);
#pragma GCC unroll 4
      for (int v = 0; v < V; v++)
        a[v * T + t] = _mm512_fmadd_ps(xv, w[v], a[v * T + t]);
    }
  }
#pragma GCC unroll 4
  for (int v = 0; v < V; v++)
#pragma GCC unroll 14
    for (int t = 0; t < T; t++)
      _mm512_store_ps(acc + (v * T + t) * 16, a[v * T + t]);
}

typedef void (*tile_fn)(const float *x, const int32_t *off, int K,
                        const float *w0, const float *w1, const __m512 *bias,
                        float *acc);

/* One function per (V, T, S), in a table indexed by them. */
#define DC_TILE(V, T, S)                                                       \
  static T512 void tile_##V##_##T##_##S(                                       \
      const float *x, const int32_t *off, int K, const float *w0,              \
      const float *w1, const __m512 *bias, float *acc) {                       \
    tile_body(V, T, S, x, off, K, w0, w1, bias, acc);                          \
  }
// clang-format off
#define DC_TILES7(V, S)                                                        \
  DC_TILE(V, 1, S) DC_TILE(V, 2, S) DC_TILE(V, 3, S) DC_TILE(V, 4, S)          \
  DC_TILE(V, 5, S) DC_TILE(V, 6, S) DC_TILE(V, 7, S)
#define DC_TILES14(S)                                                          \
  DC_TILES7(2, S) DC_TILE(2, 8, S) DC_TILE(2, 9, S) DC_TILE(2, 10, S)          \
  DC_TILE(2, 11, S) DC_TILE(2, 12, S) DC_TILE(2, 13, S) DC_TILE(2, 14, S)
DC_TILES14(1)
DC_TILES14(2)
DC_TILES7(4, 1)
DC_TILES7(4, 2)
#define DC_ROW7(V, S)                                                          \
  tile_##V##_1_##S, tile_##V##_2_##S, tile_##V##_3_##S, tile_##V##_4_##S,      \
  tile_##V##_5_##S, tile_##V##_6_##S, tile_##V##_7_##S
#define DC_ROW14(S)                                                            \
  DC_ROW7(2, S), tile_2_8_##S, tile_2_9_##S, tile_2_10_##S, tile_2_11_##S,     \
  tile_2_12_##S, tile_2_13_##S, tile_2_14_##S
/* [V == 4][S == 2][T - 1] */
static const tile_fn tiles[2][2][DC_T2] = {{{DC_ROW14(1)}, {DC_ROW14(2)}},
                                           {{DC_ROW7(4, 1)}, {DC_ROW7(4, 2)}}};
// clang-format on

/* The tile's T pixels from ow0 of row oh, channels o0 .. o0 + 16 V (those
 * under O) into y: transposed to channel rows, the residual added, then
 * the clamp ((bound, v) order keeps NaN results NaN). */
static T512 void tile_store(const dc_job *j, const float *acc, int V, int T,
                            int o0, int oh, int ow0) {
  const dg_cpu_conv_shape *s = j->s;
  size_t P = (size_t)s->OH * s->OW, at = (size_t)oh * s->OW + (size_t)ow0;
  __mmask16 mp = (__mmask16)((1u << T) - 1);
  const __m512 lo = _mm512_set1_ps(j->lo), hi = _mm512_set1_ps(j->hi);
  for (int v = 0; v < V && o0 + 16 * v < s->O; v++) {
    __m512 r[16];
    for (int i = 0; i < 16; i++)
      r[i] =
          i < T ? _mm512_load_ps(acc + (v * T + i) * 16) : _mm512_setzero_ps();
    dg_cpu_transpose16(r);
    int n = s->O - (o0 + 16 * v) < 16 ? s->O - (o0 + 16 * v) : 16;
    for (int k = 0; k < n; k++) {
      size_t o = (size_t)(o0 + 16 * v + k);
      __m512 u = r[k];
      if (j->r)
        u = _mm512_add_ps(u, _mm512_maskz_loadu_ps(mp, j->r + o * P + at));
      u = _mm512_min_ps(hi, _mm512_max_ps(lo, u));
      _mm512_mask_storeu_ps(j->y + o * P + at, mp, u);
    }
  }
}

/* Tile i of rows from r0 on, tw pixels a tile and per_row tiles a row:
 * its row, first pixel and width. */
static int tile_at(const dc_job *j, int r0, int i, int tw, int per_row, int *oh,
                   int *ow0) {
  *oh = r0 + i / per_row;
  *ow0 = i % per_row * tw;
  return j->s->OW - *ow0 < tw ? j->s->OW - *ow0 : tw;
}

/* Block q of 64 output channels (or what is left of O), output rows [r0,
 * r1): runs of up to DC_RUN tiles (across rows where rows are short),
 * each slice of K through all of a run's tiles while its weights are in
 * L1, the sums kept in acc between slices (exactly: f32 stores). */
static T512 void piece(const dc_job *j, int q, int r0, int r1) {
  const dg_cpu_conv_shape *s = j->s;
  int K = s->C * s->KH * s->KW, o0 = 64 * q, V = s->O - o0 > 32 ? 4 : 2;
  const float *w0 = j->panels + (size_t)(2 * q) * K * DC_PANEL,
              *w1 = V == 4 ? w0 + (size_t)K * DC_PANEL : w0;
  __m512 bias[4];
  for (int v = 0; v < 4; v++) {
    int n = s->O - (o0 + 16 * v);
    n = n < 0 ? 0 : n > 16 ? 16 : n;
    bias[v] = j->b ? _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1),
                                           j->b + o0 + 16 * v)
                   : _mm512_setzero_ps();
  }
  float acc[DC_RUN * DC_ACC] __attribute__((aligned(64)));
  int tw = V == 4 ? DC_T4 : DC_T2, per_row = (s->OW + tw - 1) / tw,
      total = (r1 - r0) * per_row;
  for (int i0 = 0; i0 < total; i0 += DC_RUN) {
    int i1 = i0 + DC_RUN < total ? i0 + DC_RUN : total, oh, ow0;
    for (int k0 = 0; k0 < K; k0 += DC_KS) {
      int kn = K - k0 < DC_KS ? K - k0 : DC_KS;
      for (int i = i0; i < i1; i++) {
        int T = tile_at(j, r0, i, tw, per_row, &oh, &ow0);
        const float *x =
            j->xp + (size_t)oh * s->sh * (size_t)j->Wp + (size_t)ow0 * s->sw;
        tiles[V == 4][s->sw == 2][T - 1](
            x, j->off + k0, kn, w0 + (size_t)k0 * DC_PANEL,
            w1 + (size_t)k0 * DC_PANEL, k0 ? NULL : bias,
            acc + (i - i0) * DC_ACC);
      }
    }
    for (int i = i0; i < i1; i++) {
      int T = tile_at(j, r0, i, tw, per_row, &oh, &ow0);
      tile_store(j, acc + (i - i0) * DC_ACC, V, T, o0, oh, ow0);
    }
  }
  if (j->post.fn) /* the fused function on the rows just written */
    for (int o = o0; o < o0 + 16 * V && o < s->O; o++) {
      float *yr = j->y + ((size_t)o * s->OH + r0) * s->OW;
      dg_cpu_unary(j->post.fn, yr, yr, (size_t)(r1 - r0) * s->OW, j->post.a,
                   j->post.b);
    }
}

/* Pieces (block, rows), block-major so that a block's weights stay in L2
 * while the threads take its rows. */
static void pieces_task(void *arg, int i, int n) {
  (void)i, (void)n;
  dc_job *j = arg;
  int groups = (j->s->OH + j->rows - 1) / j->rows, total = j->blocks * groups;
  for (int p; (p = atomic_fetch_add(&j->next, 1)) < total;) {
    int r0 = p % groups * j->rows,
        r1 = r0 + j->rows < j->s->OH ? r0 + j->rows : j->s->OH;
    piece(j, p / groups, r0, r1);
  }
}

/* Rows a piece: enough for a run of DC_RUN tiles where rows are short,
 * fewer where that would leave under two pieces a thread. */
static int piece_rows(const dc_job *j, int threads) {
  const dg_cpu_conv_shape *s = j->s;
  int tw = s->O > 32 ? DC_T4 : DC_T2, per_row = (s->OW + tw - 1) / tw;
  int rows = (DC_RUN + per_row - 1) / per_row;
  rows = rows < s->OH ? rows : s->OH;
  while (rows > 1 &&
         (int64_t)j->blocks * ((s->OH + rows - 1) / rows) < 2 * threads)
    rows = (rows + 1) / 2;
  return rows;
}
#endif

void dg_cpu_conv_direct(dg_cpu_pool *pool, const dg_cpu_conv_shape *s,
                        const float *x, const float *panels, const float *b,
                        const float *r, float *y, float lo, float hi,
                        const dg_cpu_post *post, float *scratch) {
#ifdef DG_X86
  dc_job j = {.s = s,
              .x = x,
              .panels = panels,
              .b = b,
              .r = r,
              .y = y,
              .lo = lo,
              .hi = hi,
              .post = post ? *post : (dg_cpu_post){0},
              .copy = scratch,
              .xp = scratch,
              .blocks = (s->O + 63) / 64};
  padded(s, &j.Hp, &j.Wp);
  size_t copy = ((size_t)(s->C * j.Hp * j.Wp) + 15) & ~(size_t)15;
  int32_t *off = (int32_t *)(scratch + copy);
  for (int c = 0, k = 0; c < s->C; c++)
    for (int kh = 0; kh < s->KH; kh++)
      for (int kw = 0; kw < s->KW; kw++)
        off[k++] = (int32_t)(c * j.Hp * j.Wp + (int64_t)kh * s->dh * j.Wp +
                             (int64_t)kw * s->dw);
  j.off = off;
  atomic_init(&j.next, 0);
  int threads = dg_cpu_pool_threads(pool);
  /* Where no tap falls outside the image (a 1x1 conv with stride 2, say)
   * the image is its own padded copy. */
  if (!s->pt && !s->pl && j.Hp == s->H && j.Wp == s->W)
    j.xp = x;
  else
    dg_cpu_pool_run(pool, fill_task, &j, threads < s->C ? threads : s->C);
  j.rows = piece_rows(&j, threads);
  int pieces = j.blocks * ((s->OH + j.rows - 1) / j.rows);
  dg_cpu_pool_run(pool, pieces_task, &j, threads < pieces ? threads : pieces);
#else
  (void)pool, (void)s, (void)x, (void)panels, (void)b, (void)r, (void)y;
  (void)lo, (void)hi, (void)post, (void)scratch; /* takes() says no */
#endif
}
