/* f32 convolution straight from a padded copy of the image (see
 * conv_direct.h). */
#include "conv_direct.h"

#include "conv_direct_kern.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define DC_RUN 8 /* tiles run together over each slice of K */
#define DC_KS 96 /* k a slice: at most 24 KB of weights, kept in L1 */

/* The padded copy's rows and row pitch: every tap of every output in
 * range, and every input row and column in it. */
static void padded(const dg_cpu_conv_shape *s, int64_t *Hp, int64_t *Wp) {
  int64_t h = (int64_t)(s->OH - 1) * s->sh + (int64_t)(s->KH - 1) * s->dh + 1,
          w = (int64_t)(s->OW - 1) * s->sw + (int64_t)(s->KW - 1) * s->dw + 1;
  *Hp = h > (int64_t)s->pt + s->H ? h : (int64_t)s->pt + s->H;
  *Wp = w > (int64_t)s->pl + s->W ? w : (int64_t)s->pl + s->W;
}

/* Scratch: the copy's floats, 64-byte aligned; the int32 tap offsets
 * follow them. */
static size_t copy_floats(const dg_cpu_conv_shape *s, int64_t Hp, int64_t Wp) {
  return ((size_t)(s->C * Hp * Wp) + 15) & ~(size_t)15;
}

size_t dg_cpu_conv_direct_floats(const dg_cpu_conv_shape *s) {
  int64_t Hp, Wp;
  padded(s, &Hp, &Wp);
  return copy_floats(s, Hp, Wp) +
         (((size_t)s->C * s->KH * s->KW + 15) & ~(size_t)15);
}

int dg_cpu_conv_direct_takes(const dg_cpu_conv_shape *s) {
  int64_t Hp, Wp, K = (int64_t)s->C * s->KH * s->KW;
  padded(s, &Hp, &Wp);
  const dg_cpu_dc_isa *isa = dg_cpu_dc_isa_get();
  return isa && (isa->long_rows || s->sw > 1 || s->OW <= 32) && s->G == 1 &&
         (s->KH * s->KW > 1 || ((s->sh > 1 || s->sw > 1) && K >= 512)) &&
         K >= 64 && (s->sw == 1 || s->sw == 2) && s->OW >= 7 &&
         s->C * Hp * Wp < INT32_MAX;
}

typedef struct dc_job {
  const dg_cpu_conv_shape *s;
  const dg_cpu_dc_isa *isa;
  const float *x, *panels, *b;
  dg_cpu_dc_out out;
  dg_cpu_post post;
  float *copy;        /* the padded copy */
  const float *xp;    /* what the taps read: the copy, or x itself */
  const int32_t *off; /* per k = (c, kh, kw): the tap's offset in it */
  int64_t Hp, Wp;
  int blocks; /* of the isa's block of output channels */
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

/* Whether the block from output channel o0 takes the narrow tiles: half
 * a block or fewer channels left, where the isa has them. */
static int narrow_from(const dc_job *j, int o0) {
  return j->isa->tw_narrow && j->s->O - o0 <= j->isa->block / 2;
}

/* Tile i of rows from r0 on, tw pixels a tile and per_row tiles a row:
 * its row, first pixel and width. */
static int tile_at(const dc_job *j, int r0, int i, int tw, int per_row, int *oh,
                   int *ow0) {
  *oh = r0 + i / per_row;
  *ow0 = i % per_row * tw;
  return j->s->OW - *ow0 < tw ? j->s->OW - *ow0 : tw;
}

/* Block q of output channels, output rows [r0, r1): runs of up to DC_RUN
 * tiles (across rows where rows are short), each slice of K through all
 * of a run's tiles while its weights are in L1, the sums kept in acc
 * between slices (exactly: f32 stores). A block with half its channels
 * or fewer left takes the narrow tiles where the isa has them. */
static void piece(const dc_job *j, int q, int r0, int r1) {
  const dg_cpu_conv_shape *s = j->s;
  const dg_cpu_dc_isa *isa = j->isa;
  int K = s->C * s->KH * s->KW, o0 = isa->block * q;
  int narrow = narrow_from(j, o0);
  int V = (narrow ? isa->block / 2 : isa->block) / isa->vec;
  const float *w0 = j->panels + (size_t)(o0 / isa->panel) * K * isa->panel,
              *w1 = w0 + (size_t)K * isa->panel; /* read by wide tiles
                                                    only where they span
                                                    two panels */
  float bias[64] = {0};
  for (int i = 0; i < V * isa->vec && o0 + i < s->O && j->b; i++)
    bias[i] = j->b[o0 + i];
  float acc[DC_RUN * DG_CPU_DC_ACC] __attribute__((aligned(64)));
  int tw = narrow ? isa->tw_narrow : isa->tw, per_row = (s->OW + tw - 1) / tw,
      total = (r1 - r0) * per_row;
  for (int i0 = 0; i0 < total; i0 += DC_RUN) {
    int i1 = i0 + DC_RUN < total ? i0 + DC_RUN : total, oh, ow0;
    for (int k0 = 0; k0 < K; k0 += DC_KS) {
      int kn = K - k0 < DC_KS ? K - k0 : DC_KS;
      for (int i = i0; i < i1; i++) {
        int T = tile_at(j, r0, i, tw, per_row, &oh, &ow0);
        const float *x =
            j->xp + (size_t)oh * s->sh * (size_t)j->Wp + (size_t)ow0 * s->sw;
        isa->tile(narrow, s->sw,
                  T)(x, j->off + k0, kn, w0 + (size_t)k0 * isa->panel,
                     w1 + (size_t)k0 * isa->panel, k0 ? NULL : bias,
                     acc + (i - i0) * DG_CPU_DC_ACC);
      }
    }
    for (int i = i0; i < i1; i++) {
      int T = tile_at(j, r0, i, tw, per_row, &oh, &ow0);
      isa->store(&j->out, acc + (i - i0) * DG_CPU_DC_ACC, V, T, o0,
                 (size_t)oh * s->OW + (size_t)ow0);
    }
  }
  if (j->post.fn) /* the fused function on the rows just written */
    for (int o = o0; o < o0 + V * isa->vec && o < s->O; o++) {
      float *yr = j->out.y + ((size_t)o * s->OH + r0) * s->OW;
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
  const dg_cpu_dc_isa *isa = j->isa;
  int tw = narrow_from(j, 0) ? isa->tw_narrow : isa->tw,
      per_row = (s->OW + tw - 1) / tw;
  int rows = (DC_RUN + per_row - 1) / per_row;
  rows = rows < s->OH ? rows : s->OH;
  while (rows > 1 &&
         (int64_t)j->blocks * ((s->OH + rows - 1) / rows) < 2 * threads)
    rows = (rows + 1) / 2;
  return rows;
}

void dg_cpu_conv_direct(dg_cpu_pool *pool, const dg_cpu_conv_shape *s,
                        const float *x, const float *panels, const float *b,
                        const float *r, float *y, float lo, float hi,
                        const dg_cpu_post *post, float *scratch) {
  dc_job j = {.s = s,
              .isa = dg_cpu_dc_isa_get(),
              .x = x,
              .panels = panels,
              .b = b,
              .out = {y, r, s->O, (size_t)s->OH * s->OW, lo, hi},
              .post = post ? *post : (dg_cpu_post){0},
              .copy = scratch,
              .xp = scratch};
  if (!j.isa)
    return; /* dg_cpu_conv_direct_takes says no */
  j.blocks = (s->O + j.isa->block - 1) / j.isa->block;
  padded(s, &j.Hp, &j.Wp);
  int32_t *off = (int32_t *)(scratch + copy_floats(s, j.Hp, j.Wp));
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
}
