/* f32 GEMM for the CPU target.
 *
 * Structure (per thread, on its own block of C):
 *   for each NC-wide column block, for each KC-deep slice of K:
 *     pack the B slice into NR-wide panels (it then lives in L2),
 *     for each row block of at most MR rows: pack the A micro-panel
 *     (it then lives in L1) and run the register-blocked microkernel
 *     over every B panel.
 * Row blocks are balanced (64 rows with MR=14 become 13,13,13,13,12)
 * instead of leaving a thin remainder. Bias is loaded into the
 * accumulators on the first K slice and the clamp applied on the last,
 * so no extra pass over C is needed. Small problems skip B packing and
 * read B in place; few-row problems with B transposed use dot products.
 * The x86 kernels are compiled with target attributes so this file needs
 * no -m flags; dg_cpu_simd_level() decides which one runs.
 */
#define _POSIX_C_SOURCE 200809L
#include "cpu_kernels.h"
#include "gemm_split.h"
#include "sgemm_tile.h"

#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define DG_X86 1
#include <immintrin.h>
#endif

#ifndef KC
#define KC 256
#endif
#ifndef NC
#define NC 1024
#endif
/* A column block: the whole panels of nr that fit in NC. */
static inline int nc_block(int nr) { return NC / nr * nr; }

typedef void (*kernel_fn)(const ktile *t);

#ifdef DG_X86
/* ---- AVX-512: up to 14 x 32 (28 accumulators + 2 B vectors) ---- */

#define T512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma")))
#define A5_MR 14
#define A5_NR 32
#define PF_K 8 /* rows ahead that the kernel prefetches */

static inline __attribute__((always_inline)) T512 void
k512_body(const int MR, const int NV, const bool BOFF, const ktile *t) {
  __m512 c0[A5_MR], c1[A5_MR];
  int nr = t->nr;
  __mmask16 m0 = nr >= 16 ? 0xffff : (__mmask16)((1u << nr) - 1);
  __mmask16 m1 = nr >= 32  ? 0xffff
                 : nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1)
                           : 0;
  __m512 z = _mm512_setzero_ps();
  if (t->load_c) {
#pragma GCC unroll 14
    for (int i = 0; i < MR; i++) {
      c0[i] = _mm512_maskz_loadu_ps(m0, t->c + i * t->ldc);
      if (NV == 2)
        c1[i] = _mm512_maskz_loadu_ps(m1, t->c + i * t->ldc + 16);
    }
  } else if (t->bias_row) {
#pragma GCC unroll 14
    for (int i = 0; i < MR; i++)
      c0[i] = c1[i] = _mm512_set1_ps(t->bias_row[i]);
  } else {
    __m512 b0 = z, b1 = z;
    if (t->bias_col) {
      b0 = _mm512_maskz_loadu_ps(m0, t->bias_col);
      if (NV == 2)
        b1 = _mm512_maskz_loadu_ps(m1, t->bias_col + 16);
    }
#pragma GCC unroll 14
    for (int i = 0; i < MR; i++) {
      c0[i] = b0;
      c1[i] = b1;
    }
  }
  const float *a = t->a, *b = t->b;
  size_t bs = t->bs;
  int kc = t->kc;
#pragma GCC unroll 2
  for (int k = 0; k < kc; k++) {
    const float *bk = BOFF ? t->b + t->boff[k] : b;
    /* Rows at offsets (shifted planes): no stream for the prefetcher to
     * follow (dg-bench's 3x3 convs 5-9% faster, models within noise). */
    if (BOFF && k + PF_K < kc) {
      const char *ahead = (const char *)(t->b + t->boff[k + PF_K]);
      _mm_prefetch(ahead, _MM_HINT_T0);
      _mm_prefetch(ahead + 64, _MM_HINT_T0);
    }
    __m512 b0 = _mm512_maskz_loadu_ps(m0, bk), b1 = z;
    if (NV == 2)
      b1 = _mm512_maskz_loadu_ps(m1, bk + 16);
#pragma GCC unroll 14
    for (int i = 0; i < MR; i++) {
      __m512 av = _mm512_set1_ps(a[i]);
      c0[i] = _mm512_fmadd_ps(av, b0, c0[i]);
      if (NV == 2)
        c1[i] = _mm512_fmadd_ps(av, b1, c1[i]);
    }
    a += MR;
    b += bs;
  }
  __m512 lo = _mm512_set1_ps(t->lo), hi = _mm512_set1_ps(t->hi);
#pragma GCC unroll 14
  for (int i = 0; i < MR; i++) {
    __m512 v0 = c0[i], v1 = c1[i];
    if (t->res) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, t->res + i * t->ldr));
      if (NV == 2)
        v1 = _mm512_add_ps(v1,
                           _mm512_maskz_loadu_ps(m1, t->res + i * t->ldr + 16));
    }
    if (t->clamp) {
      /* (bound, v) order keeps NaN results NaN. */
      v0 = _mm512_min_ps(hi, _mm512_max_ps(lo, v0));
      v1 = _mm512_min_ps(hi, _mm512_max_ps(lo, v1));
    }
    _mm512_mask_storeu_ps(t->c + i * t->ldc, m0, v0);
    if (NV == 2)
      _mm512_mask_storeu_ps(t->c + i * t->ldc + 16, m1, v1);
  }
}

/* The row count as a constant: one k512_body per MR. */
// clang-format off
#define K512_MR(M, NV, BOFF)                                                   \
  case M: k512_body(M, NV, BOFF, t); break;
#define K512_CASES(NV, BOFF)                                                   \
  switch (t->mr) {                                                             \
    K512_MR(1, NV, BOFF) K512_MR(2, NV, BOFF) K512_MR(3, NV, BOFF)             \
    K512_MR(4, NV, BOFF) K512_MR(5, NV, BOFF) K512_MR(6, NV, BOFF)             \
    K512_MR(7, NV, BOFF) K512_MR(8, NV, BOFF) K512_MR(9, NV, BOFF)             \
    K512_MR(10, NV, BOFF) K512_MR(11, NV, BOFF) K512_MR(12, NV, BOFF)          \
    K512_MR(13, NV, BOFF)                                                      \
    default: k512_body(14, NV, BOFF, t);                                       \
  }
// clang-format on

T512 static void kern_avx512(const ktile *t) {
  if (t->nr > 16 && t->boff) {
    K512_CASES(2, true)
  } else if (t->nr > 16) {
    K512_CASES(2, false)
  } else if (t->boff) {
    K512_CASES(1, true)
  } else {
    K512_CASES(1, false)
  }
}

/* Four columns at once: four independent FMA chains hide the latency
 * that a single dot product is bound by. */
T512 static void dot_rows_avx512(int rows, int K, const float *a, size_t lda,
                                 const float *b, size_t ldb, int ncols,
                                 float *out) {
  const float *b0 = b, *b1 = ncols > 1 ? b + ldb : b;
  const float *b2 = ncols > 2 ? b + 2 * ldb : b,
              *b3 = ncols > 3 ? b + 3 * ldb : b;
  for (int m = 0; m < rows; m++) {
    const float *ar = a + m * lda;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (int k = 0; k < K; k += 16) {
      __mmask16 mk = K - k >= 16 ? 0xffff : (__mmask16)((1u << (K - k)) - 1);
      __m512 av = _mm512_maskz_loadu_ps(mk, ar + k);
      s0 = _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(mk, b0 + k), s0);
      s1 = _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(mk, b1 + k), s1);
      s2 = _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(mk, b2 + k), s2);
      s3 = _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(mk, b3 + k), s3);
    }
    out[m * 4 + 0] = _mm512_reduce_add_ps(s0);
    out[m * 4 + 1] = _mm512_reduce_add_ps(s1);
    out[m * 4 + 2] = _mm512_reduce_add_ps(s2);
    out[m * 4 + 3] = _mm512_reduce_add_ps(s3);
  }
}

#endif /* DG_X86 */

/* ---- driver ---- */

/* out[m * 4 + j] = dot(A row m, B row j) for m < rows, j < ncols <= 4. */
typedef void (*dot_fn)(int rows, int K, const float *a, size_t lda,
                       const float *b, size_t ldb, int ncols, float *out);

typedef struct plan {
  const dg_cpu_sgemm_args *g;
  kernel_fn kern;
  dot_fn dot;
  int mr, nr;   /* kernel's maximum rows, panel width */
  int tm, tn;   /* task grid */
  int direct_b; /* read B in place instead of packing */
  int rows_b;   /* B rows by offset (b_rows), read in place by the kernel */
  int clamp;
  const dg_cpu_sgemm_packed *pa, *pb; /* prepacked, or NULL */
  float *scratch;                     /* per task: A panel then B block */
  /* Columns in chunks claimed one at a time (0: the static tm x tn grid). */
  int chunks;
  _Atomic int next;
  size_t per_task; /* floats */
  size_t a_floats; /* A panel part of per_task */
} plan;

/* A prepacked operand. A: ceil(M / mr) balanced row blocks, block of rows
 * [r, r + mr) stored at data + r * K as [K][mr] (so a KC slice starting at
 * pc is at + pc * mr). B: NR-wide panels, panel q at data + q * K * NR as
 * [K][NR] (slice at + pc * NR). The kernel's mr / nr are recorded so a
 * packing made for another SIMD level is never misread. */
struct dg_cpu_sgemm_packed {
  int is_b;
  int rows, K; /* M or N */
  int unit;    /* mr (A) or nr (B) */
  int nblk;    /* A: row blocks */
  float *data;
};

/* Packs columns jc..jc+nc, k in pc..pc+kc, of op(B) into NR-wide panels
 * [kc][NR], zero-padded to NR. */
static void pack_b_raw(const float *B, int ldb, int trans_b, int NR, float *dst,
                       int pc, int kc, int jc, int nc) {
  for (int j0 = 0; j0 < nc; j0 += NR, dst += (size_t)kc * NR) {
    int w = nc - j0 < NR ? nc - j0 : NR;
    if (!trans_b) {
      const float *src = B + (size_t)pc * ldb + jc + j0;
      for (int k = 0; k < kc; k++) {
        memcpy(dst + (size_t)k * NR, src + (size_t)k * ldb,
               sizeof(float) * (size_t)w);
        for (int j = w; j < NR; j++)
          dst[(size_t)k * NR + j] = 0.0f;
      }
    } else {
      for (int j = 0; j < NR; j++) {
        if (j < w) {
          const float *src = B + (size_t)(jc + j0 + j) * ldb + pc;
          for (int k = 0; k < kc; k++)
            dst[(size_t)k * NR + j] = src[k];
        } else {
          for (int k = 0; k < kc; k++)
            dst[(size_t)k * NR + j] = 0.0f;
        }
      }
    }
  }
}

/* Rows r..r+mr, k in pc..pc+kc, as dst[k * mr + i]. */
static void pack_a_raw(const float *A, int lda, float *dst, int r, int mr,
                       int pc, int kc) {
  for (int i = 0; i < mr; i++) {
    const float *src = A + (size_t)(r + i) * lda + pc;
    for (int k = 0; k < kc; k++)
      dst[(size_t)k * mr + i] = src[k];
  }
}

/* Packs B given by row offsets (b_rows) for kernels that cannot read
 * it in place: panel rows are copies of the rows' column runs. */
static void pack_b_rows(const dg_cpu_sgemm_args *g, int NR, float *dst, int pc,
                        int kc, int jc, int nc) {
  for (int j0 = 0; j0 < nc; j0 += NR, dst += (size_t)kc * NR) {
    int w = nc - j0 < NR ? nc - j0 : NR;
    for (int k = 0; k < kc; k++) {
      memcpy(dst + (size_t)k * NR, g->B + g->b_rows[pc + k] + jc + j0,
             sizeof(float) * (size_t)w);
      for (int j = w; j < NR; j++)
        dst[(size_t)k * NR + j] = 0.0f;
    }
  }
}

static void pack_b(const plan *p, float *dst, int pc, int kc, int jc, int nc) {
  if (p->g->b_rows) {
    pack_b_rows(p->g, p->nr, dst, pc, kc, jc, nc);
    return;
  }
  if (p->g->pack_b) {
    p->g->pack_b(p->g->pack_b_ctx, dst, p->nr, pc, kc, jc, nc);
    return;
  }
  pack_b_raw(p->g->B, p->g->ldb, p->g->trans_b, p->nr, dst, pc, kc, jc, nc);
}

static void pack_a(const dg_cpu_sgemm_args *g, float *dst, int r, int mr,
                   int pc, int kc) {
  if (g->pack_a) {
    g->pack_a(g->pack_a_ctx, dst, mr, r, pc, kc);
    return;
  }
  pack_a_raw(g->A, g->lda, dst, r, mr, pc, kc);
}

/* Splits [0, len) into `parts` pieces aligned to `unit`. */
static void finish(const plan *p, float *c, int m, int n) {
  const dg_cpu_sgemm_args *g = p->g;
  float v = *c;
  if (g->bias)
    v += g->bias_per_row ? g->bias[m] : g->bias[n];
  if (g->residual)
    v += g->residual[(size_t)m * g->ldr + n];
  if (p->clamp)
    v = v < g->clamp_lo ? g->clamp_lo : (v > g->clamp_hi ? g->clamp_hi : v);
  *c = v;
  if (g->post.fn)
    dg_cpu_unary(g->post.fn, c, c, 1, g->post.a, g->post.b);
}

/* Few rows with B stored [N, K]: one dot product per output. */
static void run_dot(const plan *p, int n0, int n1) {
  const dg_cpu_sgemm_args *g = p->g;
  float out[8 * 4];
  for (int n = n0; n < n1; n += 4) {
    int cols = n1 - n < 4 ? n1 - n : 4;
    const float *b = g->B + (size_t)n * g->ldb;
    for (int m0 = 0; m0 < g->M; m0 += 8) {
      int rows = g->M - m0 < 8 ? g->M - m0 : 8;
      p->dot(rows, g->K, g->A + (size_t)m0 * g->lda, (size_t)g->lda, b,
             (size_t)g->ldb, cols, out);
      for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
          float *c = g->C + (size_t)(m0 + i) * g->ldc + n + j;
          *c = out[i * 4 + j];
          finish(p, c, m0 + i, n + j);
        }
    }
  }
}

/* One task's rectangle t of C, with the task's scratch. */
static void run_range(const plan *p, int task, const gemm_task_range *tr) {
  const dg_cpu_sgemm_args *g = p->g;
  const dg_cpu_sgemm_packed *pa = p->pa, *pb = p->pb;
  int m0 = tr->m0, m1 = tr->m1, n0 = tr->n0, n1 = tr->n1, b0 = tr->b0,
      nblk = tr->nblk;
  /* No scratch when both operands come prepacked or in place. */
  float *apan = p->scratch ? p->scratch + p->per_task * (size_t)task : NULL;
  float *bblk = apan ? apan + p->a_floats : NULL;
  /* Column blocks of whole panels (NC need not be a multiple of nr:
   * NEON's is 12), so that a prepacked B's panels start at each block. */
  const int ncb = nc_block(p->nr);
  for (int jc = n0; jc < n1; jc += ncb) {
    int nc = n1 - jc < ncb ? n1 - jc : ncb;
    int pc = 0;
    do {
      int kc = g->K - pc < KC ? g->K - pc : KC;
      int last = pc + kc >= g->K;
      const float *bsrc;
      size_t bs, bpanel;
      if (pb) {
        bsrc = pb->data + (size_t)jc * g->K + (size_t)pc * p->nr;
        bs = (size_t)p->nr;
        bpanel = (size_t)g->K * p->nr;
      } else if (p->rows_b) {
        bsrc = g->B + jc;
        bs = 0;
        bpanel = (size_t)p->nr;
      } else if (p->direct_b) {
        bsrc = g->B + (size_t)pc * g->ldb + jc;
        bs = (size_t)g->ldb;
        bpanel = (size_t)p->nr;
      } else {
        pack_b(p, bblk, pc, kc, jc, nc);
        bsrc = bblk;
        bs = (size_t)p->nr;
        bpanel = (size_t)kc * p->nr;
      }
      for (int rb = 0; rb < nblk; rb++) {
        int r, re;
        const float *a;
        if (pa) {
          r = gemm_blk_row(g->M, pa->nblk, b0 + rb);
          re = gemm_blk_row(g->M, pa->nblk, b0 + rb + 1);
          a = pa->data + (size_t)r * g->K + (size_t)pc * (re - r);
        } else {
          r = m0 + (int)((long long)(m1 - m0) * rb / nblk);
          re = m0 + (int)((long long)(m1 - m0) * (rb + 1) / nblk);
          pack_a(g, apan, r, re - r, pc, kc);
          a = apan;
        }
        int mr = re - r;
        ktile t = {.mr = mr,
                   .kc = kc,
                   .a = a,
                   .bs = bs,
                   .b_padded = (!p->direct_b && !p->rows_b) || pb,
                   .boff = p->rows_b ? g->b_rows + pc : NULL,
                   .ldc = (size_t)g->ldc,
                   .load_c = pc > 0,
                   .bias_row =
                       !pc && g->bias && g->bias_per_row ? g->bias + r : NULL,
                   .clamp = last && p->clamp,
                   .lo = g->clamp_lo,
                   .hi = g->clamp_hi};
        for (int jr = 0, pi = 0; jr < nc; jr += p->nr, pi++) {
          t.nr = nc - jr < p->nr ? nc - jr : p->nr;
          t.b = bsrc + bpanel * (size_t)pi;
          t.c = g->C + (size_t)r * g->ldc + jc + jr;
          t.bias_col =
              !pc && g->bias && !g->bias_per_row ? g->bias + jc + jr : NULL;
          t.res = last && g->residual
                      ? g->residual + (size_t)r * g->ldr + jc + jr
                      : NULL;
          t.ldr = (size_t)g->ldr;
          p->kern(&t);
        }
        /* the fused unary function, on the row block's columns while
         * they are in L2 (per tile, the calls cost more than the loop) */
        if (last && g->post.fn)
          for (int i = 0; i < mr; i++) {
            float *row = g->C + (size_t)(r + i) * g->ldc + jc;
            dg_cpu_unary(g->post.fn, row, row, nc, g->post.a, g->post.b);
          }
      }
      pc += kc;
    } while (pc < g->K);
  }
}

static void run_task(void *arg, int task, int ntasks) {
  (void)ntasks;
  plan *p = arg;
  const dg_cpu_sgemm_args *g = p->g;
  int nblk = p->pa ? p->pa->nblk : 0;
  gemm_task_range t;
  if (p->chunks) {
    /* Column chunks claimed as tasks free up: a thread that was held up
     * (a little core, a descheduled vCPU) takes fewer. */
    for (int c; (c = atomic_fetch_add(&p->next, 1)) < p->chunks;)
      if (gemm_task_range_of(g->M, g->N, nblk, p->mr, p->nr, 1, p->chunks, c,
                             &t))
        run_range(p, task, &t);
    return;
  }
  if (!gemm_task_range_of(g->M, g->N, nblk, p->mr, p->nr, p->tm, p->tn, task,
                          &t))
    return;
  if (p->dot)
    run_dot(p, t.n0, t.n1);
  else
    run_range(p, task, &t);
}

/* A[m][k] for the last resort, whether A is given or implicit. */
static float naive_a(const dg_cpu_sgemm_args *g, int m, int k) {
  float v;
  if (!g->pack_a)
    return g->A[(size_t)m * g->lda + k];
  g->pack_a(g->pack_a_ctx, &v, 1, m, k, 1);
  return v;
}

/* Last resort when no scratch memory can be had: correct, slow, no
 * allocation. */
static void run_naive(const plan *p) {
  const dg_cpu_sgemm_args *g = p->g;
  if (g->pack_b) {  /* B exists only through pack_b: one row at a time */
    float brow[64]; /* nr <= 32 */
    for (int j0 = 0; j0 < g->N; j0 += p->nr) {
      int w = g->N - j0 < p->nr ? g->N - j0 : p->nr;
      for (int m = 0; m < g->M; m++) {
        float s[64] = {0};
        for (int k = 0; k < g->K; k++) {
          g->pack_b(g->pack_b_ctx, brow, p->nr, k, 1, j0, w);
          for (int j = 0; j < w; j++)
            s[j] += naive_a(g, m, k) * brow[j];
        }
        for (int j = 0; j < w; j++) {
          float *c = g->C + (size_t)m * g->ldc + j0 + j;
          *c = s[j];
          finish(p, c, m, j0 + j);
        }
      }
    }
    return;
  }
  for (int m = 0; m < g->M; m++)
    for (int n = 0; n < g->N; n++) {
      float s = 0.0f;
      for (int k = 0; k < g->K; k++) {
        float b = g->b_rows    ? g->B[g->b_rows[k] + n]
                  : g->trans_b ? g->B[(size_t)n * g->ldb + k]
                               : g->B[(size_t)k * g->ldb + n];
        s += naive_a(g, m, k) * b;
      }
      float *c = g->C + (size_t)m * g->ldc + n;
      *c = s;
      finish(p, c, m, n);
    }
}

/* Floats of one packed B block: kc rows of at most nc_block columns
 * (nb is N rounded up to whole panels). */
static size_t b_block_floats(int kc, int nb, int nr) {
  int cols = nb < nc_block(nr) ? nb : nc_block(nr);
  return (size_t)kc * (size_t)cols;
}

/* The kernel the current SIMD level uses, and its shape. */
static void pick_kernel(plan *p, dot_fn *dot) {
  p->kern = dg_cpu_sgemm_kern_portable;
  p->mr = DG_CPU_PORTABLE_MR;
  p->nr = DG_CPU_PORTABLE_NR;
  *dot = dg_cpu_sgemm_dot_portable;
  int level = dg_cpu_simd_level();
#ifdef DG_X86
  if (level >= DG_CPU_SIMD_AVX512) {
    p->kern = kern_avx512;
    p->mr = A5_MR;
    p->nr = A5_NR;
    *dot = dot_rows_avx512;
  } else if (level >= DG_CPU_SIMD_AVX2) {
    p->kern = dg_cpu_sgemm_kern_avx2;
    p->mr = DG_CPU_AVX2_MR;
    p->nr = DG_CPU_AVX2_NR;
    *dot = dg_cpu_sgemm_dot_avx2;
  }
#elif defined(__aarch64__)
  if (level >= DG_CPU_SIMD_NEON) {
    p->kern = dg_cpu_sgemm_kern_neon;
    p->mr = DG_CPU_NEON_MR;
    p->nr = DG_CPU_NEON_NR;
  }
#else
  (void)level;
#endif
}

static dg_cpu_sgemm_packed *packed_new(int is_b, int rows, int K,
                                       size_t floats) {
  dg_cpu_sgemm_packed *pk = malloc(sizeof *pk);
  if (!pk)
    return NULL;
  *pk = (dg_cpu_sgemm_packed){.is_b = is_b, .rows = rows, .K = K};
  pk->data = aligned_alloc(64, (sizeof(float) * floats + 63) & ~(size_t)63);
  if (!pk->data) {
    free(pk);
    return NULL;
  }
  return pk;
}

dg_cpu_sgemm_packed *dg_cpu_sgemm_pack_a(int M, int K, const float *A,
                                         int lda) {
  if (M <= 0 || K <= 0 || !A)
    return NULL;
  plan p;
  dot_fn dot;
  pick_kernel(&p, &dot);
  dg_cpu_sgemm_packed *pk = packed_new(0, M, K, (size_t)M * K);
  if (!pk)
    return NULL;
  pk->unit = p.mr;
  pk->nblk = (M + p.mr - 1) / p.mr;
  for (int b = 0; b < pk->nblk; b++) {
    int r = gemm_blk_row(M, pk->nblk, b), re = gemm_blk_row(M, pk->nblk, b + 1);
    pack_a_raw(A, lda, pk->data + (size_t)r * K, r, re - r, 0, K);
  }
  return pk;
}

dg_cpu_sgemm_packed *dg_cpu_sgemm_pack_b(int N, int K, const float *B, int ldb,
                                         int trans_b) {
  if (N <= 0 || K <= 0 || !B)
    return NULL;
  plan p;
  dot_fn dot;
  pick_kernel(&p, &dot);
  size_t panels = ((size_t)N + p.nr - 1) / p.nr;
  dg_cpu_sgemm_packed *pk = packed_new(1, N, K, panels * p.nr * K);
  if (!pk)
    return NULL;
  pk->unit = p.nr;
  pack_b_raw(B, ldb, trans_b, p.nr, pk->data, 0, K, 0, N);
  return pk;
}

const float *dg_cpu_sgemm_packed_panels(const dg_cpu_sgemm_packed *pk, int N,
                                        int K) {
  if (!pk || !pk->is_b || pk->rows != N || pk->K != K ||
      pk->unit != dg_cpu_sgemm_panel_width())
    return NULL;
  return pk->data;
}

void dg_cpu_sgemm_packed_free(dg_cpu_sgemm_packed *pk) {
  if (pk)
    free(pk->data);
  free(pk);
}

size_t dg_cpu_sgemm_task_floats(int M, int N, int K) {
  (void)M;
  plan p;
  dot_fn dot;
  pick_kernel(&p, &dot);
  int kc = K < KC ? (K > 0 ? K : 1) : KC;
  int nb = (N + p.nr - 1) / p.nr * p.nr;
  return (((size_t)p.mr * kc + 15) & ~(size_t)15) +
         b_block_floats(kc, nb, p.nr);
}

int dg_cpu_sgemm_panel_width(void) {
  plan p;
  dot_fn dot;
  pick_kernel(&p, &dot);
  return p.nr;
}

void dg_cpu_sgemm(dg_cpu_pool *pool, const dg_cpu_sgemm_args *g) {
  dg_cpu_sgemm_packed_run(pool, g, NULL, NULL);
}

void dg_cpu_sgemm_packed_run(dg_cpu_pool *pool, const dg_cpu_sgemm_args *g,
                             const dg_cpu_sgemm_packed *pa,
                             const dg_cpu_sgemm_packed *pb) {
  if (g->M <= 0 || g->N <= 0)
    return;
  plan p = {.g = g, .clamp = g->clamp_lo > -INFINITY || g->clamp_hi < INFINITY};
  dot_fn dot;
  pick_kernel(&p, &dot);
  /* A packing is usable only if it matches this call and this level. */
  if (pa && !pa->is_b && pa->rows == g->M && pa->K == g->K &&
      pa->unit == p.mr && !g->pack_a)
    p.pa = pa;
  if (pb && pb->is_b && pb->rows == g->N && pb->K == g->K && pb->unit == p.nr &&
      !g->pack_b && !g->b_rows)
    p.pb = pb;
    /* B by row offsets: the x86 kernels read it in place (ktile.boff). */
#ifdef DG_X86
  p.rows_b =
      g->b_rows && (p.kern == kern_avx512 || p.kern == dg_cpu_sgemm_kern_avx2);
#endif
  /* Transposing B into panels costs as much as the multiply itself when
   * A has only a few rows; dot products read it once, in place. A
   * prepacked B needs neither. */
  if (g->trans_b && g->M <= 4 && g->K > 0 && !p.pb && !g->pack_b &&
      !g->b_rows && !g->pack_a)
    p.dot = dot;
  /* Packing B pays off only when the panel is reused by many row blocks
   * (an implicit B must always be packed). */
  p.direct_b = !g->trans_b && g->M <= 2 * p.mr && !g->pack_b && !g->b_rows;

  /* Threads only when the work hides the hand-off (~1 us). */
  double flops = 2.0 * g->M * g->N * (g->K > 0 ? g->K : 1);
  int threads = dg_cpu_pool_threads(pool);
  int ntasks = flops < 200000.0 ? 1 : threads;
  /* Task grid: the factorisation of ntasks that packs the least. */
  p.tm = 1;
  p.tn = ntasks;
  if (p.dot) {
    p.tm = 1, p.tn = ntasks;
  } else {
    double best = -1.0;
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
    if (best < 0) /* too small to split evenly: one task */
      p.tm = p.tn = 1;
  }
  ntasks = p.tm * p.tn;
  /* Split along columns only: deal them out in chunks of at least eight
   * panels, up to four a task, so that threads that run slower do less
   * (big.LITTLE cores, contended vCPUs). Each chunk packs only its own
   * columns of B; A is read again per chunk, so only where it is small
   * enough to stay in L2. */
  int panels = (g->N + p.nr - 1) / p.nr;
  if (!p.dot && p.tm == 1 && ntasks > 1 && panels >= 16 * ntasks &&
      (double)g->M * (g->K > 0 ? g->K : 1) * sizeof(float) <= 1048576.0) {
    p.chunks = panels / 8 < 4 * ntasks ? panels / 8 : 4 * ntasks;
    atomic_init(&p.next, 0);
  }

  void *own = NULL;
  if (!p.dot && !(p.pa && (p.pb || p.direct_b || p.rows_b))) {
    int kc = g->K < KC ? (g->K > 0 ? g->K : 1) : KC;
    int nb = (g->N + p.nr - 1) / p.nr * p.nr;
    p.a_floats = ((size_t)p.mr * kc + 15) & ~(size_t)15;
    p.per_task =
        p.a_floats +
        (p.direct_b || p.rows_b || p.pb ? 0 : b_block_floats(kc, nb, p.nr));
    size_t bytes = sizeof(float) * p.per_task * (size_t)ntasks;
    if (g->scratch && g->scratch_floats >= p.per_task * (size_t)ntasks)
      p.scratch = g->scratch;
    else
      p.scratch = own = dg_cpu_pool_scratch_get(pool, bytes);
    if (!p.scratch) {
      run_naive(&p);
      return;
    }
  }
  dg_cpu_pool_run(pool, run_task, &p, ntasks);
  dg_cpu_pool_scratch_put(pool, own);
}
