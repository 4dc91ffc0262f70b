/* Fast CPU kernels used by the CPU target (src/targets/cpu).
 *
 * Contract: every kernel computes exactly what the reference kernels in
 * src/ops compute, up to float reassociation for f32, and bit for bit for
 * int8 (see docs/numerics.md). Matrices are row-major with explicit leading
 * dimensions. None of these functions allocate except through the pool's
 * scratch (dg_cpu_pool_scratch_get), and none of them keep pointers after
 * returning. Each call may run on any thread, concurrently with others on
 * the same pool.
 */
#ifndef DG_CPU_KERNELS_H
#define DG_CPU_KERNELS_H

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
/* The AVX-512 level the f32 and byte kernels are built for (chosen at run
 * time by simd.c); qgemm.c adds VNNI to its own. */
#define DG_CPU_T512                                                            \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#endif

#include <stddef.h>
#include <stdint.h>

/* A fixed set of worker threads. dg_cpu_pool_run calls fn(arg, i, n) for
 * every i in [0, n) spread over the workers and the calling thread, and
 * returns when all calls have returned. threads <= 1 means "run inline".
 * Threads: any number of threads may call dg_cpu_pool_run on one pool at
 * once; one of them gets the workers and the others run their items
 * inline, on their own thread. */
typedef struct dg_cpu_pool dg_cpu_pool;
dg_cpu_pool *dg_cpu_pool_create(int threads); /* NULL on failure */
void dg_cpu_pool_destroy(dg_cpu_pool *pool);  /* NULL is a no-op */
int dg_cpu_pool_threads(const dg_cpu_pool *pool);
void dg_cpu_pool_run(dg_cpu_pool *pool, void (*fn)(void *arg, int i, int n),
                     void *arg, int n);
/* How many tasks to deal work of `work` elements in `items` independent
 * pieces (0: divisible at will) to: 1 below min_work, where waking the
 * workers costs more than the work; else the pool's threads, at most
 * items. Never below 1. */
int dg_cpu_pool_tasks(const dg_cpu_pool *pool, int64_t work, int64_t min_work,
                      int64_t items);
/* Internal to the kernels: checks out a 64-byte aligned buffer of at
 * least `bytes` for one call, returned with dg_cpu_pool_scratch_put. The
 * pool keeps a few for reuse; no two callers ever hold the same buffer,
 * so any number of threads may check out at once (one session per
 * thread on one pool). pool may be NULL (a plain allocation). NULL when
 * allocation fails (kernels then fall back). */
void *dg_cpu_pool_scratch_get(dg_cpu_pool *pool, size_t bytes);
void dg_cpu_pool_scratch_put(dg_cpu_pool *pool, void *scratch);

/* Which SIMD level the kernels picked at run time ("amx", "avx512",
 * "avx2", "neon", "portable"). DG_CPU_SIMD=portable|avx2|avx512|amx
 * lowers it for testing. */
const char *dg_cpu_simd_name(void);
/* Internal: the level as a number (higher is wider on x86), and a way for
 * tests to pick a level after the first query has cached one. force(NULL)
 * restores the hardware level; names may only lower it. */
enum {
  DG_CPU_SIMD_PORTABLE = 0,
  DG_CPU_SIMD_NEON = 1,
  DG_CPU_SIMD_AVX2 = 2,
  DG_CPU_SIMD_AVX512 = 3,      /* F+BW+VL+DQ+FMA */
  DG_CPU_SIMD_AVX512_VNNI = 4, /* the above plus VNNI; named "avx512" */
  DG_CPU_SIMD_AMX = 5, /* the above plus AMX-INT8, granted by the kernel */
};
int dg_cpu_simd_level(void);
void dg_cpu_simd_force(const char *name);
/* aarch64: whether the level is NEON and the core has the dot-product
 * instructions (SDOT/UDOT, as the kernel's hwcaps say); 0 elsewhere. */
int dg_cpu_neon_has_dot(void);

/* y = fn(a, b) for a dg_binary_fn (src/ops/binary.def) over an output of
 * rank dims, stored densely, with a at element strides sa and b at sb (0
 * on broadcast axes, as dg_broadcast_strides gives them), on pool's
 * threads when the output is large (pool may be NULL). binary.c says
 * how. */
void dg_cpu_binary(dg_cpu_pool *pool, int fn, int rank, const int64_t *dims,
                   const float *a, const int64_t *sa, const float *b,
                   const int64_t *sb, float *y);

/* y[i] = 1 / (1 + exp(-x[i])) for i < n, within 1e-6 of the exact value
 * (x and y may be the same array). sigmoid.c says how. */
void dg_cpu_sigmoid(const float *x, float *y, int64_t n);

/* y[i] = fn(x[i]) for i < n, fn a dg_unary_fn with parameters a and b
 * (src/ops/unary.def; x and y may be the same array). unary.c. */
void dg_cpu_unary(int fn, const float *x, float *y, int64_t n, float a,
                  float b);

/* The sum of n floats stride apart, accumulated in double (cpu_ops.c):
 * the reductions' (global average pooling, softmax) accurate at any
 * size. */
double dg_cpu_sum_f32(const float *x, int64_t n, int64_t stride);

/* A unary function a kernel applies to its results last (fn, a dg_unary_fn
 * with parameters a and b, as dg_cpu_unary takes them; fn 0: none): a
 * unary node fused into a conv (runtime/fuse_unary.h). */
typedef struct dg_cpu_post {
  int fn;
  float a, b;
} dg_cpu_post;

/* C[M,N] = act(A[M,K] * op(B) + bias), op(B) = B[K,N] (trans_b == 0) or
 * B[N,K]^T (trans_b != 0). bias is NULL, or has M entries (bias_per_row)
 * or N entries. The result is clamped to [clamp_lo, clamp_hi] (pass
 * -INFINITY/INFINITY for none). */
typedef struct dg_cpu_sgemm_args {
  int M, N, K;
  const float *A;
  int lda;
  const float *B;
  int ldb;
  int trans_b;
  float *C;
  int ldc;
  const float *bias;
  int bias_per_row;
  /* Optional: C = A op(B) + bias + residual, then the clamp; residual is
   * M x N, rows ldr apart (a residual add fused into a conv). */
  const float *residual;
  int ldr;
  float clamp_lo, clamp_hi;
  /* Optional implicit B (convolution without an im2col matrix): when set,
   * B, ldb and trans_b are ignored and the GEMM asks pack_b for each block
   * it needs: rows k0..k0+kc, columns j0..j0+nc of op(B), written as
   * nr-wide panels dst[panel][kc][nr], the last one zero-padded to nr.
   * Called from several threads at once on disjoint blocks. */
  void (*pack_b)(const void *ctx, float *dst, int nr, int k0, int kc, int j0,
                 int nc);
  const void *pack_b_ctx;
  /* Optional implicit A, as pack_b for B: when set, A and lda are ignored
   * and the GEMM asks pack_a for each row block it multiplies: rows
   * r0..r0+mr, columns k0..k0+kc of A, written dst[k * mr + i]. Called
   * from several threads at once. (A conv with output pixels as rows:
   * conv_f32.c.) */
  void (*pack_a)(const void *ctx, float *dst, int mr, int r0, int k0, int kc);
  const void *pack_a_ctx;
  /* Optional B by row offsets: op(B)[k][j] = B[b_rows[k] + j] for the K
   * entries of b_rows (ldb, trans_b and pack_b ignored); B[b_rows[k] + j]
   * must be readable for every j < N. A conv reads its taps in place so
   * (conv_f32.c's shifted planes). */
  const int64_t *b_rows;
  /* Optional: applied to C last, after the clamp (post.fn 0: none). */
  dg_cpu_post post;
  /* Optional caller-owned scratch (64-byte aligned), used instead of the
   * pool's when it holds at least what the call needs:
   * dg_cpu_sgemm_task_floats(M, N, K) per task, one task per pool thread
   * (one when the pool is NULL). */
  float *scratch;
  size_t scratch_floats;
} dg_cpu_sgemm_args;
void dg_cpu_sgemm(dg_cpu_pool *pool, const dg_cpu_sgemm_args *args);
/* The width of the GEMM's column panels at the current SIMD level. */
int dg_cpu_sgemm_panel_width(void);
/* Scratch floats one task of an M x N x K call needs at most (packed B,
 * at the current SIMD level). */
size_t dg_cpu_sgemm_task_floats(int M, int N, int K);

/* Packs a constant operand once so that every later dg_cpu_sgemm call
 * skips the copy: A[M, K] (lda), or op(B) as the N x K operand given by
 * B, ldb and trans_b exactly as in dg_cpu_sgemm_args. Layout follows the
 * SIMD level at the time of the call. NULL on OOM or M/N/K <= 0 (then
 * call without it). */
typedef struct dg_cpu_sgemm_packed dg_cpu_sgemm_packed;
dg_cpu_sgemm_packed *dg_cpu_sgemm_pack_a(int M, int K, const float *A, int lda);
dg_cpu_sgemm_packed *dg_cpu_sgemm_pack_b(int N, int K, const float *B, int ldb,
                                         int trans_b);
void dg_cpu_sgemm_packed_free(dg_cpu_sgemm_packed *p); /* NULL is a no-op */
/* The panels of a dg_cpu_sgemm_pack_b packing of N x K (trans_b or not):
 * [ceil(N / w)][K][w] floats, w = dg_cpu_sgemm_panel_width(), zero-padded;
 * NULL where p is NULL, another shape, an A packing or made at another
 * SIMD level. Owned by p. */
const float *dg_cpu_sgemm_packed_panels(const dg_cpu_sgemm_packed *p, int N,
                                        int K);
/* dg_cpu_sgemm with A and/or B (either may be NULL) taken from packings.
 * args->A / B must still point at the data that was packed: a packing
 * that does not fit the call (shape, or another SIMD level than the
 * current one) is ignored and A / B are read instead. */
void dg_cpu_sgemm_packed_run(dg_cpu_pool *pool, const dg_cpu_sgemm_args *args,
                             const dg_cpu_sgemm_packed *packed_a,
                             const dg_cpu_sgemm_packed *packed_b);

/* Quantised GEMM with ONNX QLinearMatMul/QLinearConv semantics:
 *   acc[m,n] = sum_k (A[m,k] - za[m]) * (op(B)[k,n] - zb[n]) + bias[c]
 *   C[m,n]   = clamp(saturate(nearbyintf((float)acc * mult[c]) + c_zero))
 * with acc in int32 exactly and the one fp32 multiply (no FMA) and the
 * round-half-even of docs/numerics.md. c is the output channel: the row m
 * when chan_per_row != 0 (convolution, where the weights are A), else the
 * column n (fully connected / matmul, where the weights are B).
 * A, B and C are int8 when their *_signed flag is set, else uint8.
 * za has M entries when a_zero_per_row, else 1; zb has N entries when
 * b_zero_per_col, else 1. bias (NULL = none) and mult have one entry per
 * channel when per_channel, else 1. clamp_lo/clamp_hi are in the output's
 * integer domain (zero point included), for fused relu/relu6; pass the
 * dtype's full range for none. */
typedef struct dg_cpu_qgemm_args {
  int M, N, K;
  const void *A;
  int lda;
  int a_signed;
  const int32_t *za;
  int a_zero_per_row;
  const void *B;
  int ldb;
  /* NULL, or (not trans_b) row k of B at B + b_rows[k] bytes, ldb unused:
   * the convolutions' shifted planes (conv_shift.h) */
  const int64_t *b_rows;
  int b_signed;
  int trans_b;
  const int32_t *zb;
  int b_zero_per_col;
  void *C;
  int ldc;
  int c_signed;
  int32_t c_zero;
  int chan_per_row;
  int per_channel;
  const int32_t *bias;
  const float *mult;
  int32_t clamp_lo, clamp_hi;
} dg_cpu_qgemm_args;
void dg_cpu_qgemm(dg_cpu_pool *pool, const dg_cpu_qgemm_args *args);
/* The int8 GEMM kernel the current level runs: "amx", "vnni", "avx2",
 * "neon-dot" or "portable" (for tests and reports; "amx" takes GEMMs of
 * 16 rows or more, VNNI the rest). */
const char *dg_cpu_qgemm_kernel_name(void);

/* Packs a constant int8 operand once, with the sums the zero-point
 * corrections need: A[M, K] with its zero points (za, a_zero_per_row), or
 * op(B) (N x K given by B, ldb, trans_b) with zb / b_zero_per_col, as in
 * dg_cpu_qgemm_args. NULL on OOM or M/N/K <= 0. */
typedef struct dg_cpu_qgemm_packed dg_cpu_qgemm_packed;
dg_cpu_qgemm_packed *dg_cpu_qgemm_pack_a(int M, int K, const void *A, int lda,
                                         int a_signed, const int32_t *za,
                                         int a_zero_per_row);
dg_cpu_qgemm_packed *dg_cpu_qgemm_pack_b(int N, int K, const void *B, int ldb,
                                         int b_signed, int trans_b,
                                         const int32_t *zb, int b_zero_per_col);
void dg_cpu_qgemm_packed_free(dg_cpu_qgemm_packed *p); /* NULL is a no-op */
/* dg_cpu_qgemm with prepacked A and/or B (either may be NULL), made from
 * the same data, signedness and zero points as args; as for sgemm, a
 * packing that does not fit the call or the SIMD level is ignored. */
void dg_cpu_qgemm_packed_run(dg_cpu_pool *pool, const dg_cpu_qgemm_args *args,
                             const dg_cpu_qgemm_packed *packed_a,
                             const dg_cpu_qgemm_packed *packed_b);

#endif
