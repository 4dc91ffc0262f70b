/* CPU kernels of qbinary, lookup and qavg_pool2d: int8 as stored, with
 * the numerics contract's steps from src/ops/requant.h, so they are
 * bit-exact with the reference and every other target. qbinary walks
 * its broadcast as compare.c's kernels do. */
#include "cpu_ops.h"

#include "ops/ops.h"
#include "ops/requant.h"

/* No FMA contraction: meson passes -ffp-contract=off. */

/* One byte of an i8 or u8 tensor as its integer. */
static inline int32_t load_q8(const uint8_t *p, int64_t i, bool s) {
  return s ? (int32_t)(int8_t)p[i] : (int32_t)p[i];
}

/* ---- qbinary ---- */

typedef struct qbin_ctx {
  const uint8_t *a, *b;
  uint8_t *y;
  bool as, bs; /* a, b signed */
  bool mul;
  int32_t za, zb, zy, lo, hi;
  float fa, fb;
} qbin_ctx;

/* A run where a advances by astep and b by bstep (1 both, or one of them
 * 0: one value for the run, as a squeeze-excite scale is): requant.h's
 * steps, rounded by dg_requant_out_q8, which vectorises; the same bits as
 * dg_requant and dg_requant_sum. Compiled per SIMD level, the steps
 * constants in each. */
static inline __attribute__((always_inline)) void
qbin_body(const qbin_ctx *c, const uint8_t *restrict a,
          const uint8_t *restrict b, uint8_t *restrict y, int64_t n,
          int64_t astep, int64_t bstep) {
  /* Everything in locals: y's byte stores may alias *c, and would make
   * the loop reload it (and not vectorise) otherwise. */
  const float flo = (float)(c->lo - c->zy), fhi = (float)(c->hi - c->zy);
  const bool as = c->as, bs = c->bs, mul = c->mul;
  const int32_t za = c->za, zb = c->zb, zy = c->zy;
  const float fa = c->fa, fb = c->fb;
  for (int64_t i = 0; i < n; i++) {
    uint8_t ab = a[i * astep], bb = b[i * bstep];
    int32_t da = (as ? (int32_t)(int8_t)ab : (int32_t)ab) - za;
    int32_t db = (bs ? (int32_t)(int8_t)bb : (int32_t)bb) - zb;
    float v = mul ? (float)(da * db) * fa : (float)da * fa + (float)db * fb;
    y[i] = dg_requant_out_q8(v, zy, flo, fhi);
  }
}

typedef void (*qbin_fn)(const qbin_ctx *c, const uint8_t *a, const uint8_t *b,
                        uint8_t *y, int64_t n);
#define QBIN_LEVEL(name, attr)                                                 \
  static attr void name##_11(const qbin_ctx *c, const uint8_t *a,              \
                             const uint8_t *b, uint8_t *y, int64_t n) {        \
    qbin_body(c, a, b, y, n, 1, 1);                                            \
  }                                                                            \
  static attr void name##_10(const qbin_ctx *c, const uint8_t *a,              \
                             const uint8_t *b, uint8_t *y, int64_t n) {        \
    qbin_body(c, a, b, y, n, 1, 0);                                            \
  }                                                                            \
  static attr void name##_01(const qbin_ctx *c, const uint8_t *a,              \
                             const uint8_t *b, uint8_t *y, int64_t n) {        \
    qbin_body(c, a, b, y, n, 0, 1);                                            \
  }
QBIN_LEVEL(qbin_base, )
#if defined(__x86_64__)
QBIN_LEVEL(qbin_avx2, __attribute__((target("avx2"))))
QBIN_LEVEL(qbin_avx512, DG_CPU_T512)
#endif

/* The run kernel at the SIMD level in use for the steps (1, 1), (1, 0)
 * or (0, 1). */
#define QBIN_PICK(name) (!astep ? name##_01 : bstep ? name##_11 : name##_10)
static qbin_fn qbin_pick(int64_t astep, int64_t bstep) {
#if defined(__x86_64__)
  int level = dg_cpu_simd_level();
  if (level >= DG_CPU_SIMD_AVX512)
    return QBIN_PICK(qbin_avx512);
  if (level >= DG_CPU_SIMD_AVX2)
    return QBIN_PICK(qbin_avx2);
#endif
  return QBIN_PICK(qbin_base);
}
#undef QBIN_PICK

static void qbin_run(void *ctx, const int64_t *off, const int64_t *st,
                     int64_t n, int64_t out) {
  const qbin_ctx *c = ctx;
  if ((st[0] == 1 && (st[1] == 1 || st[1] == 0)) ||
      (st[0] == 0 && st[1] == 1)) {
    qbin_pick(st[0], st[1])(c, c->a + off[0], c->b + off[1], c->y + out, n);
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    int32_t da = load_q8(c->a, off[0] + i * st[0], c->as) - c->za;
    int32_t db = load_q8(c->b, off[1] + i * st[1], c->bs) - c->zb;
    int32_t v = c->mul
                    ? dg_requant(da * db, c->fa, c->zy, c->lo, c->hi)
                    : dg_requant_sum(da, c->fa, db, c->fb, c->zy, c->lo, c->hi);
    c->y[out + i] = (uint8_t)(v & 0xff);
  }
}

/* One walk of a single run (same-shape operands, the residual adds of
 * QDQ ResNets), in pieces over the pool's threads. */
typedef struct qbin_split {
  const qbin_ctx *c;
  const dg_cpu_walk *w;
} qbin_split;

static void qbin_piece(void *arg, int t, int n) {
  const qbin_split *q = arg;
  int64_t len = q->w->dims[0], i0 = len * t / n, i1 = len * (t + 1) / n;
  int64_t off[2] = {i0 * q->w->s[0][0], i0 * q->w->s[1][0]},
          st[2] = {q->w->s[0][0], q->w->s[1][0]};
  qbin_run((void *)q->c, off, st, i1 - i0, i0);
}

/* Rows [R t / n, R (t + 1) / n) of a rank-2 walk. */
static void qbin_rows(void *arg, int t, int n) {
  const qbin_split *q = arg;
  const dg_cpu_walk *w = q->w;
  int64_t rows = w->dims[0], len = w->dims[1];
  int64_t st[2] = {w->s[0][1], w->s[1][1]};
  for (int64_t r = rows * t / n; r < rows * (t + 1) / n; r++) {
    int64_t off[2] = {r * w->s[0][0], r * w->s[1][0]};
    qbin_run((void *)q->c, off, st, len, r * len);
  }
}

void dg_cpu_qbinary_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                      void *out, void *scratch) {
  (void)scratch;
  const dg_node *n = cn->node;
  const dg_tensor_desc *ad = dg_ir_desc(cn->ir, n->inputs[0]),
                       *bd = dg_ir_desc(cn->ir, n->inputs[1]),
                       *yd = dg_ir_desc(cn->ir, n->output);
  int64_t lo, hi;
  dg_dtype_int_range(yd->dtype, &lo, &hi);
  qbin_ctx c = {in[0],
                in[1],
                out,
                ad->dtype == DG_DTYPE_I8,
                bd->dtype == DG_DTYPE_I8,
                n->p.fn == DG_BINARY_MUL,
                ad->quant.zero_point,
                bd->quant.zero_point,
                yd->quant.zero_point,
                (int32_t)lo,
                (int32_t)hi,
                0,
                0};
  dg_qbinary_factors(cn->ir, n, &c.fa, &c.fb);
  dg_cpu_walk w;
  dg_cpu_walk_init(&w, cn);
  /* One run of 64k bytes or more is split over the threads. */
  int tasks = w.rank == 1 ? dg_cpu_pool_tasks(pool, w.dims[0], 65536, 0) : 1;
  if (tasks > 1) {
    qbin_split q = {&c, &w};
    dg_cpu_pool_run(pool, qbin_piece, &q, tasks);
    return;
  }
  /* Rows of a rank-2 walk (a squeeze-excite scale per channel plane) are
   * dealt out whole: each row's own run. The work per element of a mul
   * pays for a wake-up from 16k elements on. */
  tasks = w.rank == 2
              ? dg_cpu_pool_tasks(pool, w.dims[0] * w.dims[1], 16384, w.dims[0])
              : 1;
  if (tasks > 1) {
    qbin_split q = {&c, &w};
    dg_cpu_pool_run(pool, qbin_rows, &q, tasks);
    return;
  }
  dg_cpu_walk_run(&w, qbin_run, &c);
}

/* ---- lookup: an i8 byte indexes the table at x + 128, a u8 at x ---- */

typedef struct lookup_job {
  const uint8_t *x, *t;
  uint8_t *y, flip;
  int64_t n;
} lookup_job;

/* A share of the elements; the table and the flip in locals, since the
 * byte stores may alias them. */
static void lookup_piece(void *arg, int i, int n) {
  const lookup_job *j = arg;
  const uint8_t *restrict x = j->x, *restrict t = j->t;
  uint8_t *restrict y = j->y;
  const uint8_t flip = j->flip;
  for (int64_t e = j->n * i / n, end = j->n * (i + 1) / n; e < end; e++)
    y[e] = t[x[e] ^ flip];
}

#if defined(__x86_64__)
/* The 256-entry table in four registers, 64 lookups an iteration: vpermi2b
 * picks from each half by the index's low 7 bits, its top bit chooses the
 * half (AVX-512 VBMI: Ice Lake and later, Zen 4). */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static void
lookup_piece_vbmi(void *arg, int i, int n) {
  const lookup_job *j = arg;
  const __m512i t0 = _mm512_loadu_si512(j->t),
                t1 = _mm512_loadu_si512(j->t + 64),
                t2 = _mm512_loadu_si512(j->t + 128),
                t3 = _mm512_loadu_si512(j->t + 192);
  const __m512i f = _mm512_set1_epi8((char)j->flip);
  int64_t e = j->n * i / n, end = j->n * (i + 1) / n;
  for (; e < end; e += 64) {
    __mmask64 mk =
        end - e >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (end - e)) - 1;
    __m512i idx = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mk, j->x + e), f);
    __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1),
            hi = _mm512_permutex2var_epi8(t2, idx, t3);
    _mm512_mask_storeu_epi8(
        j->y + e, mk, _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lo, hi));
  }
}
#endif

void dg_cpu_lookup_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                     void *out, void *scratch) {
  (void)scratch;
  const dg_tensor_desc *xd = dg_ir_desc(cn->ir, cn->node->inputs[0]);
  int64_t e = dg_desc_elements(xd);
  lookup_job j = {in[0], in[1], out, xd->dtype == DG_DTYPE_I8 ? 0x80 : 0, e};
  void (*piece)(void *, int, int) = lookup_piece;
#if defined(__x86_64__)
  if (dg_cpu_simd_level() >= DG_CPU_SIMD_AVX512 &&
      __builtin_cpu_supports("avx512vbmi"))
    piece = lookup_piece_vbmi;
#endif
  dg_cpu_pool_run(pool, piece, &j, dg_cpu_pool_tasks(pool, e, 65536, 0));
}

/* ---- qavg_pool2d ---- */

/* Global int8 average pooling (one window, the whole plane, no pads: the
 * squeeze-excite blocks' pools), planes dealt to the pool's threads: the
 * window's sum is sum(x) - HW * zx, the same int32 as the generic loop's
 * sum of (x - zx), and its count HW. */
typedef struct qgap_job {
  const uint8_t *x;
  uint8_t *y;
  int64_t NC, HW;
  bool xs;
  int32_t zx, zy, lo, hi;
  float m;
} qgap_job;

static void qgap_planes(void *arg, int t, int n) {
  const qgap_job *j = arg;
  const int64_t HW = j->HW;
  for (int64_t c = j->NC * t / n; c < j->NC * (t + 1) / n; c++) {
    const uint8_t *restrict x = j->x + c * HW;
    int32_t acc = 0;
    if (j->xs)
      for (int64_t i = 0; i < HW; i++)
        acc += (int32_t)(int8_t)x[i];
    else
      for (int64_t i = 0; i < HW; i++)
        acc += (int32_t)x[i];
    acc -= (int32_t)HW * j->zx;
    int32_t v = dg_requant(acc, j->m, j->zy, j->lo, j->hi);
    j->y[c] = (uint8_t)(v & 0xff);
  }
}

void dg_cpu_qavg_pool_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                        void *out, void *scratch) {
  (void)scratch;
  const dg_node *n = cn->node;
  const dg_node_params *p = &n->p;
  const dg_tensor_desc *xd = dg_ir_desc(cn->ir, n->inputs[0]),
                       *yd = dg_ir_desc(cn->ir, n->output);
  int64_t NC = xd->dims[0] * xd->dims[1], H = xd->dims[2], W = xd->dims[3];
  int64_t OH = yd->dims[2], OW = yd->dims[3], lo, hi;
  dg_dtype_int_range(yd->dtype, &lo, &hi);
  bool xs = xd->dtype == DG_DTYPE_I8;
  int32_t zx = xd->quant.zero_point, zy = yd->quant.zero_point;
  float sx = xd->quant.scale, sy = yd->quant.scale;
  /* HW * 255 must stay an int32, as the generic loop's sum does */
  if (OH == 1 && OW == 1 && p->kernel[0] == H && p->kernel[1] == W &&
      !p->pads[0] && !p->pads[1] && !p->pads[2] && !p->pads[3] &&
      H * W <= (1 << 22)) {
    qgap_job j = {in[0],       out,
                  NC,          H * W,
                  xs,          zx,
                  zy,          (int32_t)lo,
                  (int32_t)hi, dg_requant_pool_multiplier(sx, sy, H * W)};
    dg_cpu_pool_run(pool, qgap_planes, &j,
                    dg_cpu_pool_tasks(pool, NC * H * W, 65536, NC));
    return;
  }
  const uint8_t *x = in[0];
  uint8_t *y = out;
  /* The multiplier of the last divisor seen: every output of a window
   * that lies inside the input shares one. */
  int64_t last_div = -1;
  float m = 0;
  for (int64_t c = 0; c < NC; c++) {
    const uint8_t *plane = x + c * H * W;
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t ow = 0; ow < OW; ow++) {
        int32_t acc = 0;
        int64_t count = 0, padded = 0;
        for (int64_t i = 0; i < p->kernel[0]; i++) {
          int64_t h = oh * p->stride[0] + i * p->dilation[0] - p->pads[0];
          bool hin = h >= 0 && h < H;
          for (int64_t j = 0; j < p->kernel[1]; j++) {
            int64_t w = ow * p->stride[1] + j * p->dilation[1] - p->pads[1];
            if (h < H + p->pads[2] && w < W + p->pads[3])
              padded++;
            if (!hin || w < 0 || w >= W)
              continue;
            acc += load_q8(plane, h * W + w, xs) - zx;
            count++;
          }
        }
        int64_t div = p->count_include_pad ? padded : (count ? count : 1);
        if (div != last_div) {
          m = dg_requant_pool_multiplier(sx, sy, div);
          last_div = div;
        }
        int32_t v = dg_requant(acc, m, zy, (int32_t)lo, (int32_t)hi);
        y[(c * OH + oh) * OW + ow] = (uint8_t)(v & 0xff);
      }
  }
}
