/* Standalone checks for the CPU kernels: the pool, dg_cpu_sgemm against a
 * double-precision loop, and dg_cpu_qgemm bit for bit against a scalar
 * loop written here, for every SIMD level the machine has and for pools
 * of 0 (NULL), 1 and 2 threads. Prints "ok ..." or "FAIL ..." per case;
 * exits nonzero on any failure. */
#define _POSIX_C_SOURCE 200809L
#include "conv_direct.h"
#include "conv_f32.h"
#include "cpu_kernels.h"
#include "depthwise.h"
#include "ops/requant.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures;
static uint64_t rng_state;

static uint32_t rnd(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33);
}
static int rint_in(int lo, int hi) {
  return lo + (int)(rnd() % (uint32_t)(hi - lo + 1));
}
static float rfloat(void) { return (float)rnd() / 2147483648.0f - 1.0f; }

/* Inside a group (one SIMD level and pool size), cases are counted and
 * only failures are printed; group_end prints one line for the group. */
static int group_cases, group_failures;
static void report(int ok, const char *what) {
  printf("%s - %s\n", ok ? "ok" : "FAIL", what);
  if (!ok)
    failures++;
}
static void group_case(int ok, const char *what) {
  group_cases++;
  if (!ok) {
    group_failures++;
    printf("FAIL - %s\n", what);
    failures++;
  }
}
static void group_end(const char *tag) {
  if (!group_failures)
    printf("ok - %s: all %d sgemm/qgemm/conv_f32 cases exact or within "
           "tolerance\n",
           tag, group_cases);
  group_cases = group_failures = 0;
}

/* ---- pool ---- */

typedef struct {
  _Atomic int *hits;
  _Atomic int calls;
  dg_cpu_pool *pool;
} pool_job;

static void count_item(void *arg, int i, int n) {
  pool_job *j = arg;
  (void)n;
  atomic_fetch_add(&j->hits[i], 1);
  atomic_fetch_add(&j->calls, 1);
}

static void nested_item(void *arg, int i, int n) {
  pool_job *j = arg;
  (void)i;
  (void)n;
  /* Must run inline rather than deadlock. */
  dg_cpu_pool_run(j->pool, count_item, j, 3);
}

static void test_pool(int threads) {
  char what[128];
  dg_cpu_pool *pool = dg_cpu_pool_create(threads);
  snprintf(what, sizeof what, "pool create threads=%d", threads);
  report(pool && dg_cpu_pool_threads(pool) == (threads < 1 ? 1 : threads),
         what);
  if (!pool)
    return;
  _Atomic int hits[200];
  pool_job j = {hits, 0, pool};
  int ok = 1;
  for (int rep = 0; rep < 20000 && ok; rep++) {
    int n = rep % 67;
    for (int i = 0; i < n; i++)
      atomic_store(&hits[i], 0);
    atomic_store(&j.calls, 0);
    dg_cpu_pool_run(pool, count_item, &j, n);
    for (int i = 0; i < n; i++)
      ok &= atomic_load(&hits[i]) == 1;
    ok &= atomic_load(&j.calls) == n;
  }
  snprintf(what, sizeof what, "pool 20000 quick runs threads=%d", threads);
  report(ok, what);
  /* Idle longer than the spin so workers sleep, then wake them. */
  ok = 1;
  for (int rep = 0; rep < 5; rep++) {
    struct timespec ts = {0, 3000000};
    nanosleep(&ts, NULL);
    for (int i = 0; i < 50; i++)
      atomic_store(&hits[i], 0);
    dg_cpu_pool_run(pool, count_item, &j, 50);
    for (int i = 0; i < 50; i++)
      ok &= atomic_load(&hits[i]) == 1;
  }
  snprintf(what, sizeof what, "pool wake after sleep threads=%d", threads);
  report(ok, what);
  for (int i = 0; i < 3; i++)
    atomic_store(&hits[i], 0);
  atomic_store(&j.calls, 0);
  dg_cpu_pool_run(pool, nested_item, &j, 4);
  snprintf(what, sizeof what, "pool nested run inline threads=%d", threads);
  report(atomic_load(&j.calls) == 12 && atomic_load(&hits[0]) == 4, what);
  /* Buffers checked out at the same time are distinct; a returned one is
   * reused by the next caller that fits in it. */
  void *s1 = dg_cpu_pool_scratch_get(pool, 100);
  void *s2 = dg_cpu_pool_scratch_get(pool, 1 << 20);
  snprintf(what, sizeof what, "pool scratch aligned threads=%d", threads);
  report(s1 && s2 && s1 != s2 && ((uintptr_t)s1 & 63) == 0 &&
             ((uintptr_t)s2 & 63) == 0,
         what);
  if (s2)
    memset(s2, 1, 1 << 20);
  dg_cpu_pool_scratch_put(pool, s1);
  void *s3 = dg_cpu_pool_scratch_get(pool, 64);
  snprintf(what, sizeof what, "pool scratch reused once returned threads=%d",
           threads);
  report(s3 == s1, what);
  /* More callers at once than the pool keeps: each still gets its own. */
  void *many[12];
  int distinct = 1;
  for (int i = 0; i < 12; i++) {
    many[i] = dg_cpu_pool_scratch_get(pool, 256);
    distinct &= many[i] && many[i] != s2 && many[i] != s3;
    for (int k = 0; k < i; k++)
      distinct &= many[i] != many[k];
  }
  snprintf(what, sizeof what,
           "pool scratch: 14 buffers out at once are distinct threads=%d",
           threads);
  report(distinct, what);
  for (int i = 0; i < 12; i++)
    dg_cpu_pool_scratch_put(pool, many[i]);
  dg_cpu_pool_scratch_put(pool, s2);
  dg_cpu_pool_scratch_put(pool, s3);
  dg_cpu_pool_destroy(pool);
}

/* ---- sgemm ---- */

static void sgemm_case(dg_cpu_pool *pool, const char *tag, int M, int N, int K,
                       int trans_b, int bias_mode, int clamp) {
  int lda = K + rint_in(0, 3), ldc = N + rint_in(0, 3);
  int ldb = (trans_b ? K : N) + rint_in(0, 3);
  if (lda < 1)
    lda = 1;
  if (ldb < 1)
    ldb = 1;
  size_t brows = trans_b ? (size_t)N : (size_t)K;
  float *A = malloc(sizeof(float) * ((size_t)M * lda + 1));
  float *B = malloc(sizeof(float) * (brows * ldb + 1));
  float *C = malloc(sizeof(float) * (size_t)M * ldc);
  float *bias = malloc(sizeof(float) * (size_t)(M > N ? M : N));
  for (size_t i = 0; i < (size_t)M * lda; i++)
    A[i] = rfloat();
  for (size_t i = 0; i < brows * ldb; i++)
    B[i] = rfloat();
  for (int i = 0; i < (M > N ? M : N); i++)
    bias[i] = rfloat();
  for (size_t i = 0; i < (size_t)M * ldc; i++)
    C[i] = 12345.0f; /* sentinel for the padding */
  float lo = -INFINITY, hi = INFINITY;
  if (clamp) {
    lo = rfloat() * 0.5f;
    hi = lo + fabsf(rfloat()) * 2.0f;
  }
  dg_cpu_sgemm_args a = {.M = M,
                         .N = N,
                         .K = K,
                         .A = A,
                         .lda = lda,
                         .B = B,
                         .ldb = ldb,
                         .trans_b = trans_b,
                         .C = C,
                         .ldc = ldc,
                         .bias = bias_mode ? bias : NULL,
                         .bias_per_row = bias_mode == 1,
                         .clamp_lo = lo,
                         .clamp_hi = hi};
  dg_cpu_sgemm(pool, &a);
  int ok = 1;
  double worst = 0;
  for (int m = 0; m < M && ok; m++) {
    for (int n = 0; n < N; n++) {
      double s = 0, mag = 0;
      for (int k = 0; k < K; k++) {
        double av = A[(size_t)m * lda + k];
        double bv = trans_b ? B[(size_t)n * ldb + k] : B[(size_t)k * ldb + n];
        s += av * bv;
        mag += fabs(av * bv);
      }
      if (bias_mode) {
        double b = bias[bias_mode == 1 ? m : n];
        s += b;
        mag += fabs(b);
      }
      if (s < lo)
        s = lo;
      if (s > hi)
        s = hi;
      double got = C[(size_t)m * ldc + n];
      double tol = 1e-5 * sqrt((double)K + 1) * mag + 1e-30;
      double err = fabs(got - s);
      if (err / tol > worst)
        worst = err / tol;
      if (!(err <= tol))
        ok = 0;
    }
    for (int n = N; n < ldc; n++)
      ok &= C[(size_t)m * ldc + n] == 12345.0f;
  }
  char what[200];
  snprintf(what, sizeof what,
           "sgemm %s M=%d N=%d K=%d tb=%d bias=%d clamp=%d (err/tol %.3f)", tag,
           M, N, K, trans_b, bias_mode, clamp, worst);
  group_case(ok, what);
  /* Prepacked A, B and both: the same kernels on the same data, so the
   * result is identical to the unpacked call, except that few-row calls
   * with B transposed use dot products unpacked (then: within tolerance
   * of the unpacked result). */
  dg_cpu_sgemm_packed *pa = dg_cpu_sgemm_pack_a(M, K, A, lda);
  dg_cpu_sgemm_packed *pb = dg_cpu_sgemm_pack_b(N, K, B, ldb, trans_b);
  float *C2 = malloc(sizeof(float) * (size_t)M * ldc);
  int pok = (K <= 0 || (pa && pb)) && C2;
  int same_path = !(trans_b && M <= 4);
  dg_cpu_sgemm_args a2 = a;
  a2.C = C2;
  for (int mode = 1; mode <= 3 && pok; mode++) {
    for (size_t i = 0; i < (size_t)M * ldc; i++)
      C2[i] = 12345.0f;
    dg_cpu_sgemm_packed_run(pool, &a2, mode & 1 ? pa : NULL,
                            mode & 2 ? pb : NULL);
    for (int m = 0; m < M && pok; m++)
      for (int n = 0; n < ldc; n++) {
        float want = C[(size_t)m * ldc + n], got = C2[(size_t)m * ldc + n];
        if (same_path || n >= N || mode == 1)
          pok &= want == got || (want != want && got != got);
        else
          pok &= fabsf(want - got) <=
                 1e-5f * (1.0f + fabsf(want)) * sqrtf((float)K + 1);
      }
  }
  snprintf(what, sizeof what, "sgemm packed %s M=%d N=%d K=%d tb=%d", tag, M, N,
           K, trans_b);
  group_case(pok, what);
  dg_cpu_sgemm_packed_free(pa);
  dg_cpu_sgemm_packed_free(pb);
  free(C2);
  free(A);
  free(B);
  free(C);
  free(bias);
}

static void test_sgemm(dg_cpu_pool *pool, const char *tag) {
  static const int fixed[][3] = {
      {1, 1, 1},      {1, 1, 0},       {3, 5, 0},      {6, 784, 25},
      {16, 100, 150}, {1, 120, 400},   {1, 10, 84},    {14, 32, 7},
      {15, 33, 257},  {28, 17, 513},   {29, 64, 64},   {64, 49, 576},
      {5, 1100, 40},  {40, 1100, 300}, {130, 77, 260}, {100, 300, 1000},
      {2, 84, 120},   {3, 10, 84},     {4, 120, 400}};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    for (int tb = 0; tb < 2; tb++)
      sgemm_case(pool, tag, fixed[i][0], fixed[i][1], fixed[i][2], tb,
                 (int)(i % 3), (int)(i % 2));
  for (int r = 0; r < 40; r++) {
    int big = r % 4 == 0;
    sgemm_case(pool, tag, rint_in(1, big ? 90 : 33), rint_in(1, big ? 200 : 70),
               rint_in(1, big ? 600 : 40), rint_in(0, 1), rint_in(0, 2),
               rint_in(0, 1));
  }
}

/* ---- qgemm ---- */

static int qval(const void *p, size_t i, int is_signed) {
  return is_signed ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

/* The scalar definition of the semantics in cpu_kernels.h. */
static int ref_q(const dg_cpu_qgemm_args *q, int m, int n) {
  int64_t acc = 0;
  int32_t za = q->za[q->a_zero_per_row ? m : 0];
  int32_t zb = q->zb[q->b_zero_per_col ? n : 0];
  for (int k = 0; k < q->K; k++) {
    int a = qval(q->A, (size_t)m * q->lda + k, q->a_signed);
    size_t bi = q->trans_b ? (size_t)n * q->ldb + k : (size_t)k * q->ldb + n;
    int b = qval(q->B, bi, q->b_signed);
    acc += (int64_t)(a - za) * (b - zb);
  }
  int c = q->chan_per_row ? m : n;
  if (q->bias)
    acc += q->bias[q->per_channel ? c : 0];
  float f = (float)(int32_t)acc;
  volatile float prod = f * q->mult[q->per_channel ? c : 0];
  float r = nearbyintf(prod);
  int64_t v;
  if (r > 1e12f)
    v = 1000000000000ll;
  else if (r < -1e12f)
    v = -1000000000000ll;
  else
    v = (int64_t)r;
  v += q->c_zero;
  int qmin = q->c_signed ? -128 : 0, qmax = q->c_signed ? 127 : 255;
  v = v < qmin ? qmin : (v > qmax ? qmax : v);
  v = v < q->clamp_lo ? q->clamp_lo : v;
  v = v > q->clamp_hi ? q->clamp_hi : v;
  return (int)v;
}

static void fill_q(uint8_t *p, size_t n, int mode) {
  for (size_t i = 0; i < n; i++) {
    uint32_t r = rnd();
    /* mode 1: mostly extremes, to push sums towards the int32 edges */
    if (mode == 1 && (r & 3))
      p[i] = (r & 4) ? 0x7f : 0x80 + ((r >> 3) & 1) * 0x7f;
    else
      p[i] = (uint8_t)(r >> 8);
  }
}

static void qgemm_case(dg_cpu_pool *pool, const char *tag, int M, int N, int K,
                       int flags) {
  dg_cpu_qgemm_args q = {0};
  q.M = M, q.N = N, q.K = K;
  q.a_signed = flags & 1, q.b_signed = (flags >> 1) & 1;
  q.c_signed = (flags >> 2) & 1;
  q.trans_b = (flags >> 3) & 1;
  q.a_zero_per_row = (flags >> 4) & 1, q.b_zero_per_col = (flags >> 5) & 1;
  q.chan_per_row = (flags >> 6) & 1, q.per_channel = (flags >> 7) & 1;
  int has_bias = (flags >> 8) & 1, extremes = (flags >> 9) & 1;
  int mult_mode = (flags >> 10) & 3, clamp = (flags >> 12) & 1;
  q.lda = K + rint_in(0, 5);
  q.ldb = (q.trans_b ? K : N) + rint_in(0, 5);
  q.ldc = N + rint_in(0, 5);
  size_t brows = q.trans_b ? (size_t)N : (size_t)K;
  uint8_t *A = malloc((size_t)M * q.lda + 1), *B = malloc(brows * q.ldb + 1);
  uint8_t *C = malloc((size_t)M * q.ldc);
  fill_q(A, (size_t)M * q.lda, extremes);
  fill_q(B, brows * q.ldb, extremes);
  memset(C, 0xA5, (size_t)M * q.ldc);
  int32_t *za = malloc(sizeof(int32_t) * M), *zb = malloc(sizeof(int32_t) * N);
  int nch = q.per_channel ? (q.chan_per_row ? M : N) : 1;
  int32_t *bias = malloc(sizeof(int32_t) * nch);
  float *mult = malloc(sizeof(float) * nch);
  for (int i = 0; i < M; i++)
    za[i] = extremes && (i & 1)
                ? (q.a_signed ? -128 : 255)
                : (q.a_signed ? rint_in(-128, 127) : rint_in(0, 255));
  for (int i = 0; i < N; i++)
    zb[i] = extremes && (i & 1)
                ? (q.b_signed ? 127 : 0)
                : (q.b_signed ? rint_in(-128, 127) : rint_in(0, 255));
  /* Scale so typical outputs span the range; mode 2 makes exact ties
   * (x.5) common, mode 3 saturates. */
  float base = 1.0f / (60.0f * sqrtf((float)K + 1) * 40.0f);
  for (int i = 0; i < nch; i++) {
    bias[i] = (int32_t)(rnd() % 200001) - 100000;
    mult[i] = mult_mode == 2 ? 0.5f
              : mult_mode == 3
                  ? base * 100.0f
                  : base * (0.25f + (float)(rnd() % 1000) / 500.0f);
  }
  q.A = A, q.B = B, q.C = C, q.za = za, q.zb = zb;
  q.bias = has_bias ? bias : NULL;
  q.mult = mult;
  q.c_zero = q.c_signed ? rint_in(-128, 127) : rint_in(0, 255);
  q.clamp_lo = q.c_signed ? -128 : 0;
  q.clamp_hi = q.c_signed ? 127 : 255;
  if (clamp) {
    q.clamp_lo = q.c_zero; /* relu */
    if (rnd() & 1)
      q.clamp_hi = q.c_zero + 40 < q.clamp_hi ? q.c_zero + 40 : q.clamp_hi;
  }
  dg_cpu_qgemm(pool, &q);
  int ok = 1, bad_m = -1, bad_n = -1, want = 0, got = 0;
  for (int m = 0; m < M && ok; m++) {
    for (int n = 0; n < N && ok; n++) {
      want = ref_q(&q, m, n);
      got = qval(C, (size_t)m * q.ldc + n, q.c_signed);
      if (want != got)
        ok = 0, bad_m = m, bad_n = n;
    }
    for (int n = N; n < q.ldc; n++)
      ok &= C[(size_t)m * q.ldc + n] == 0xA5;
  }
  char what[256];
  snprintf(what, sizeof what, "qgemm %s M=%d N=%d K=%d flags=0x%x%s", tag, M, N,
           K, flags, ok ? "" : " mismatch");
  if (!ok)
    printf("  at m=%d n=%d want %d got %d\n", bad_m, bad_n, want, got);
  group_case(ok, what);
  /* Prepacked A, B and both must give the same bytes (bit-exact). */
  dg_cpu_qgemm_packed *pa =
      dg_cpu_qgemm_pack_a(M, K, A, q.lda, q.a_signed, za, q.a_zero_per_row);
  dg_cpu_qgemm_packed *pb = dg_cpu_qgemm_pack_b(
      N, K, B, q.ldb, q.b_signed, q.trans_b, zb, q.b_zero_per_col);
  uint8_t *C2 = malloc((size_t)M * q.ldc);
  int pok = (K <= 0 || (pa && pb)) && C2;
  dg_cpu_qgemm_args q2 = q;
  q2.C = C2;
  for (int mode = 1; mode <= 3 && pok; mode++) {
    memset(C2, 0xA5, (size_t)M * q.ldc);
    dg_cpu_qgemm_packed_run(pool, &q2, mode & 1 ? pa : NULL,
                            mode & 2 ? pb : NULL);
    pok &= !memcmp(C, C2, (size_t)M * q.ldc);
  }
  snprintf(what, sizeof what, "qgemm packed %s M=%d N=%d K=%d flags=0x%x", tag,
           M, N, K, flags);
  group_case(pok, what);
  dg_cpu_qgemm_packed_free(pa);
  dg_cpu_qgemm_packed_free(pb);
  free(C2);
  free(A), free(B), free(C), free(za), free(zb), free(bias), free(mult);
}

static void test_qgemm(dg_cpu_pool *pool, const char *tag) {
  static const int fixed[][3] = {
      {1, 1, 1},    {1, 1, 0},        {2, 3, 3},       {6, 784, 25},
      {14, 32, 4},  {15, 33, 5},      {13, 17, 1023},  {1, 120, 400},
      {29, 49, 64}, {20, 1100, 1001}, {128, 96, 1152}, {1, 84, 120},
      {2, 10, 84},  {3, 120, 400},    {4, 33, 64},     {4, 70, 18}};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    for (int f = 0; f < 3; f++)
      qgemm_case(pool, tag, fixed[i][0], fixed[i][1], fixed[i][2],
                 (int)(rnd() & 0x1fff));
  /* Every combination of the boolean options on one odd shape. */
  for (int f = 0; f < 512; f += 1)
    qgemm_case(pool, tag, 7, 19, 13, f | (int)(rnd() & 0x1e00));
  for (int r = 0; r < 80; r++) {
    int big = r % 5 == 0;
    qgemm_case(pool, tag, rint_in(1, big ? 60 : 20), rint_in(1, big ? 150 : 40),
               rint_in(1, big ? 700 : 37), (int)(rnd() & 0x1fff));
  }
}

/* A packing made at one SIMD level and used at another is ignored (the
 * call reads A / B): results stay right when tests force levels. */
static void test_pack_level_mismatch(void) {
  static const char *levels[] = {"amx", "avx512", "avx2", "portable"};
  int ok = 1;
  for (int from = 0; from < 4; from++)
    for (int to = 0; to < 4; to++) {
      dg_cpu_simd_force(levels[from]);
      int M = 20, N = 37, K = 24; /* M >= 16: AMX packs A */
      float A[20 * 24], B[37 * 24], C[20 * 37], C2[20 * 37];
      int8_t qa[20 * 24], qb[37 * 24], qc[20 * 37], qc2[20 * 37];
      for (int i = 0; i < M * K; i++)
        A[i] = rfloat(), qa[i] = (int8_t)rnd();
      for (int i = 0; i < N * K; i++)
        B[i] = rfloat(), qb[i] = (int8_t)rnd();
      dg_cpu_sgemm_packed *pa = dg_cpu_sgemm_pack_a(M, K, A, K);
      dg_cpu_sgemm_packed *pb = dg_cpu_sgemm_pack_b(N, K, B, K, 1);
      int32_t za = 3, zb = -2, bias = 100;
      float mult = 0.01f;
      dg_cpu_qgemm_packed *qpa = dg_cpu_qgemm_pack_a(M, K, qa, K, 1, &za, 0);
      dg_cpu_qgemm_packed *qpb = dg_cpu_qgemm_pack_b(N, K, qb, K, 1, 1, &zb, 0);
      dg_cpu_simd_force(levels[to]);
      dg_cpu_sgemm_args a = {.M = M,
                             .N = N,
                             .K = K,
                             .A = A,
                             .lda = K,
                             .B = B,
                             .ldb = K,
                             .trans_b = 1,
                             .C = C,
                             .ldc = N,
                             .clamp_lo = -INFINITY,
                             .clamp_hi = INFINITY};
      dg_cpu_sgemm(NULL, &a);
      a.C = C2;
      dg_cpu_sgemm_packed_run(NULL, &a, pa, pb);
      ok &= !memcmp(C, C2, sizeof C);
      dg_cpu_qgemm_args q = {.M = M,
                             .N = N,
                             .K = K,
                             .A = qa,
                             .lda = K,
                             .a_signed = 1,
                             .za = &za,
                             .B = qb,
                             .ldb = K,
                             .b_signed = 1,
                             .trans_b = 1,
                             .zb = &zb,
                             .C = qc,
                             .ldc = N,
                             .c_signed = 1,
                             .bias = &bias,
                             .mult = &mult,
                             .clamp_lo = -128,
                             .clamp_hi = 127};
      dg_cpu_qgemm(NULL, &q);
      q.C = qc2;
      dg_cpu_qgemm_packed_run(NULL, &q, qpa, qpb);
      ok &= !memcmp(qc, qc2, sizeof qc);
      for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++)
          ok &= qc2[m * N + n] == ref_q(&q, m, n);
      dg_cpu_sgemm_packed_free(pa);
      dg_cpu_sgemm_packed_free(pb);
      dg_cpu_qgemm_packed_free(qpa);
      dg_cpu_qgemm_packed_free(qpb);
    }
  dg_cpu_simd_force(NULL);
  report(ok, "packed operands made at another SIMD level are ignored");
  dg_cpu_sgemm_packed_free(NULL);
  dg_cpu_qgemm_packed_free(NULL);
  report(!dg_cpu_sgemm_pack_a(0, 3, NULL, 3) &&
             !dg_cpu_qgemm_pack_b(3, 0, "", 1, 0, 0, (const int32_t[]){0}, 0),
         "packing empty operands gives NULL; freeing NULL is a no-op");
}

/* One implicit-GEMM convolution against a double loop over the NCHW
 * definition; scratch_mode 0: none (the GEMM finds its own), 1: as
 * dg_cpu_conv_f32_scratch asks. Packed weights are used on odd cases
 * (and with force bit 0), a residual on every fifth (and with bit 1). */
static void conv_case(dg_cpu_pool *pool, const char *tag, int idx,
                      dg_cpu_conv_shape s, int pb, int pr, int scratch_mode,
                      int force) {
  int packed = idx % 2 || (force & 1), residual = idx % 5 == 2 || (force & 2);
  s.OH = (s.H + s.pt + pb - s.dh * (s.KH - 1) - 1) / s.sh + 1;
  s.OW = (s.W + s.pl + pr - s.dw * (s.KW - 1) - 1) / s.sw + 1;
  int CG = s.C / s.G, OG = s.O / s.G, K = CG * s.KH * s.KW;
  size_t xn = (size_t)s.N * s.C * s.H * s.W, wn = (size_t)s.O * K;
  size_t yn = (size_t)s.N * s.O * s.OH * s.OW;
  float *x = malloc(4 * xn), *w = malloc(4 * wn), *y = malloc(4 * yn);
  float *b = malloc(4 * (size_t)s.O);
  dg_cpu_sgemm_packed **packs = calloc((size_t)s.G, sizeof *packs);
  size_t sb =
      scratch_mode ? dg_cpu_conv_f32_scratch(&s, dg_cpu_pool_threads(pool)) : 0;
  void *scratch = sb ? aligned_alloc(64, (sb + 63) & ~(size_t)63) : NULL;
  for (size_t i = 0; i < xn; i++)
    x[i] = rfloat();
  for (size_t i = 0; i < wn; i++)
    w[i] = rfloat();
  for (int i = 0; i < s.O; i++)
    b[i] = rfloat();
  /* packed as the path taken packs them (pixel rows: as B) */
  for (int g = 0; g < s.G && packed; g++)
    packs[g] = dg_cpu_conv_f32_weights_as_b(&s)
                   ? dg_cpu_sgemm_pack_b(OG, K, w + (size_t)g * OG * K, K, 1)
                   : dg_cpu_sgemm_pack_a(OG, K, w + (size_t)g * OG * K, K);
  float lo = idx % 3 == 0 ? 0.0f : -INFINITY, hi = INFINITY;
  /* a fused residual add on every fifth case, before the clamp */
  float *r = residual ? malloc(4 * yn) : NULL;
  for (size_t i = 0; r && i < yn; i++)
    r[i] = rfloat();
  dg_cpu_conv_f32(pool, &s, x, w, packed ? packs : NULL,
                  idx % 4 == 1 ? NULL : b, r, y, lo, hi, NULL, scratch, sb);
  /* Straight from the image (conv_direct.h, packed weights only): the
   * same bits as a GEMM path (no packing given: the GEMM's own). */
  int straight = packed && sb && dg_cpu_conv_direct_takes(&s);
  float *y2 = straight ? malloc(4 * yn) : NULL;
  if (y2)
    dg_cpu_conv_f32(pool, &s, x, w, NULL, idx % 4 == 1 ? NULL : b, r, y2, lo,
                    hi, NULL, scratch, sb);
  int same = !y2 || !memcmp(y, y2, 4 * yn);
  double worst = 0, mag = 1e-30;
  for (int n = 0; n < s.N; n++)
    for (int o = 0; o < s.O; o++)
      for (int oh = 0; oh < s.OH; oh++)
        for (int ow = 0; ow < s.OW; ow++) {
          int g = o / OG;
          double acc = idx % 4 == 1 ? 0.0 : b[o];
          for (int c = 0; c < CG; c++)
            for (int kh = 0; kh < s.KH; kh++)
              for (int kw = 0; kw < s.KW; kw++) {
                int ih = oh * s.sh - s.pt + kh * s.dh;
                int iw = ow * s.sw - s.pl + kw * s.dw;
                if (ih < 0 || ih >= s.H || iw < 0 || iw >= s.W)
                  continue;
                acc += (double)
                           x[(((size_t)n * s.C + g * CG + c) * s.H + ih) * s.W +
                             iw] *
                       w[(((size_t)o * CG + c) * s.KH + kh) * s.KW + kw];
              }
          size_t at = (((size_t)n * s.O + o) * s.OH + oh) * s.OW + ow;
          if (r)
            acc += r[at];
          if (acc < lo)
            acc = lo;
          double got = y[at];
          double e = fabs(got - acc);
          worst = e > worst || e != e ? e : worst;
          mag = fabs(acc) > mag ? fabs(acc) : mag;
        }
  char what[256];
  snprintf(what, sizeof what,
           "%s conv_f32 case %d: N%d C%d O%d G%d %dx%d k%dx%d s%d,%d d%d,%d "
           "p%d,%d,%d,%d scratch %d%s%s: error %.3g of %.3g",
           tag, idx, s.N, s.C, s.O, s.G, s.H, s.W, s.KH, s.KW, s.sh, s.sw, s.dh,
           s.dw, s.pt, s.pl, pb, pr, scratch_mode, r ? " residual" : "",
           !straight ? ""
           : same    ? ", straight: the GEMM's bits"
                     : ", straight: bits differ from the GEMM's",
           worst, mag);
  group_case(worst <= 1e-4 * mag && same, what);
  free(y2);
  for (int g = 0; g < s.G; g++)
    dg_cpu_sgemm_packed_free(packs[g]);
  free(packs);
  free(scratch);
  free(r);
  free(x);
  free(w);
  free(y);
  free(b);
}

/* The implicit-GEMM f32 convolution: edge shapes (rows shorter and longer
 * than a 32-wide panel, every pad, stride and dilation 1-2, groups,
 * batches that go by image and by GEMM, rows wide enough for the x86
 * levels' shifted planes) and random ones. */
static void test_conv_f32(dg_cpu_pool *pool, const char *tag) {
  static const int fixed[][12] = {
      /* N C O G H W KH KW s d p */
      {1, 64, 64, 1, 56, 56, 3, 3, 1, 1, 1, 1},
      {1, 16, 24, 1, 7, 7, 3, 3, 1, 1, 1, 1},
      {2, 3, 5, 1, 1, 1, 3, 3, 1, 1, 1, 1},
      {3, 4, 6, 2, 9, 40, 5, 5, 1, 1, 2, 2},
      {4, 1, 6, 1, 28, 28, 5, 5, 1, 1, 2, 2},
      {8, 6, 16, 1, 14, 14, 5, 5, 1, 1, 0, 0},
      {1, 8, 8, 1, 33, 1, 3, 1, 1, 1, 1, 0},
      {2, 6, 4, 2, 17, 19, 3, 3, 2, 1, 1, 1},
      {1, 5, 7, 1, 15, 16, 3, 3, 1, 2, 2, 2},
      /* wide enough for the shifted planes: stride 2, a 7x7 stem */
      {1, 8, 12, 1, 20, 61, 3, 3, 2, 1, 1, 1},
      {2, 3, 16, 1, 30, 64, 7, 7, 2, 1, 3, 3},
      {1, 4, 6, 1, 21, 70, 3, 3, 2, 2, 2, 2},
      /* small planes, K >= 128: output pixels as the GEMM's rows on
       * AVX-512 (segments across output rows, stride 2, dilation, 1x2,
       * 1x1 with a residual, one output column, a partial channel panel,
       * batches) */
      {1, 64, 64, 1, 7, 7, 3, 3, 1, 1, 1, 1},
      {2, 64, 96, 1, 14, 14, 3, 3, 2, 1, 1, 1},
      {1, 520, 96, 1, 5, 9, 1, 2, 1, 1, 0, 0},
      {3, 64, 64, 1, 6, 6, 3, 3, 1, 2, 2, 2},
      {4, 64, 80, 1, 3, 3, 3, 3, 1, 1, 1, 1},
      {1, 512, 64, 1, 7, 7, 1, 1, 1, 1, 0, 0},
      {1, 200, 64, 1, 20, 1, 3, 1, 1, 1, 1, 0},
      /* rows of >= 7 output pixels: straight from the image on AVX-512
       * (conv_direct.h): 64-channel blocks whole, part (40, 100: four
       * vectors, the last partly padding; 20: two), rows of several
       * runs of tiles and a short last tile (61, 30), slices of K (C 40
       * x 9), stride 2 with dilation, 5x5, batches */
      {1, 40, 40, 1, 30, 61, 3, 3, 1, 1, 1, 1},
      {3, 16, 100, 1, 9, 16, 3, 3, 1, 1, 1, 1},
      {2, 12, 20, 1, 16, 30, 3, 3, 2, 2, 2, 2},
      {1, 8, 64, 1, 20, 40, 5, 5, 1, 1, 2, 2},
      {1, 3, 64, 1, 30, 30, 7, 7, 2, 1, 3, 3},
      /* 1x1 with stride 2: the image read in place, or (padded) copied */
      {1, 512, 80, 1, 15, 29, 1, 1, 2, 1, 0, 0},
      {2, 512, 40, 1, 14, 14, 1, 1, 2, 1, 1, 1},
  };
  /* where the pixel-rows cases start in `fixed`, and the straight ones */
  enum { FIRST_PIXELS = 12, FIRST_STRAIGHT = 19 };
  int idx = 0;
  for (size_t f = 0; f < sizeof fixed / sizeof fixed[0]; f++, idx++) {
    const int *v = fixed[f];
    dg_cpu_conv_shape s = {.N = v[0],
                           .C = v[1],
                           .O = v[2],
                           .G = v[3],
                           .H = v[4],
                           .W = v[5],
                           .KH = v[6],
                           .KW = v[7],
                           .sh = v[8],
                           .sw = v[8],
                           .dh = v[9],
                           .dw = v[9],
                           .pt = v[10],
                           .pl = v[11]};
    /* the straight cases packed always, every other one with a residual */
    conv_case(pool, tag, idx, s, v[10], v[11], 1,
              f >= FIRST_STRAIGHT ? 1 | (f % 2) << 1 : 0);
    if (f >= FIRST_PIXELS && dg_cpu_simd_level() >= DG_CPU_SIMD_AVX512) {
      s.OH = (s.H + 2 * s.pt - s.dh * (s.KH - 1) - 1) / s.sh + 1;
      s.OW = (s.W + 2 * s.pl - s.dw * (s.KW - 1) - 1) / s.sw + 1;
      /* small planes go by pixel rows, or straight where rows are long
       * enough (OW >= 7) */
      int straight = dg_cpu_conv_direct_takes(&s);
      char what[160];
      snprintf(what, sizeof what, "%s conv_f32 case %d runs %s", tag, idx,
               f >= FIRST_STRAIGHT || straight ? "straight from the image"
                                               : "by pixel rows");
      group_case(f >= FIRST_STRAIGHT || straight
                     ? straight && !dg_cpu_conv_f32_by_pixels(&s)
                     : dg_cpu_conv_f32_by_pixels(&s),
                 what);
    }
  }
  for (int r = 0; r < 24; r++, idx++) {
    dg_cpu_conv_shape s = {.N = rint_in(1, 5),
                           .G = rint_in(1, 2),
                           .KH = rint_in(1, 4),
                           .KW = rint_in(1, 4),
                           .sh = rint_in(1, 2),
                           .sw = rint_in(1, 2),
                           .dh = rint_in(1, 2),
                           .dw = rint_in(1, 2),
                           .pt = rint_in(0, 2),
                           .pl = rint_in(0, 2)};
    s.C = s.G * rint_in(1, 6);
    s.O = s.G * rint_in(1, 20);
    int pb = rint_in(0, 2), pr = rint_in(0, 2);
    /* At least one output row and column. */
    s.H = rint_in(1, 24), s.W = rint_in(1, 70);
    if (s.H + s.pt + pb < s.dh * (s.KH - 1) + 1)
      s.H = s.dh * (s.KH - 1) + 1;
    if (s.W + s.pl + pr < s.dw * (s.KW - 1) + 1)
      s.W = s.dw * (s.KW - 1) + 1;
    conv_case(pool, tag, idx, s, pb, pr, r % 3 != 0, 0);
  }
}

/* A depthwise geometry from {H, W, KH, KW, sh, sw, dilation, pt, pl}
 * (symmetric pads) over `channels` planes. */
static dg_conv_geom dw_geom(const int *g, int channels) {
  dg_conv_geom d = {.N = 1,
                    .C = channels,
                    .H = g[0],
                    .W = g[1],
                    .KH = g[2],
                    .KW = g[3],
                    .sh = g[4],
                    .sw = g[5],
                    .dh = g[6],
                    .dw = g[6],
                    .pt = g[7],
                    .pl = g[8],
                    .G = channels,
                    .CG = 1,
                    .OG = 1,
                    .O = channels};
  d.OH = (d.H + 2 * d.pt - (d.KH - 1) * d.dh - 1) / d.sh + 1;
  d.OW = (d.W + 2 * d.pl - (d.KW - 1) * d.dw - 1) / d.sw + 1;
  d.P = d.OH * d.OW;
  return d;
}

/* One plane's reference sums at output (oh, ow), taps in (kh, kw) order
 * from +0, the padded ones skipped: f32 multiply then add, and int8 in
 * int32 on (x - zx) * w. */
static float dw_ref_f32(const dg_conv_geom *d, const float *x, const float *w,
                        int64_t oh, int64_t ow) {
  float s = 0;
  for (int64_t kh = 0; kh < d->KH; kh++)
    for (int64_t kw = 0; kw < d->KW; kw++) {
      int64_t ih = oh * d->sh - d->pt + kh * d->dh;
      int64_t iw = ow * d->sw - d->pl + kw * d->dw;
      if (ih >= 0 && ih < d->H && iw >= 0 && iw < d->W)
        s += x[ih * d->W + iw] * w[kh * d->KW + kw];
    }
  return s;
}

static int32_t dw_ref_q8(const dg_conv_geom *d, const uint8_t *x, int xs,
                         int32_t zx, const int32_t *w, int64_t oh, int64_t ow) {
  int32_t acc = 0;
  for (int64_t kh = 0; kh < d->KH; kh++)
    for (int64_t kw = 0; kw < d->KW; kw++) {
      int64_t ih = oh * d->sh - d->pt + kh * d->dh;
      int64_t iw = ow * d->sw - d->pl + kw * d->dw;
      if (ih >= 0 && ih < d->H && iw >= 0 && iw < d->W) {
        uint8_t v = x[ih * d->W + iw];
        acc +=
            ((xs ? (int32_t)(int8_t)v : (int32_t)v) - zx) * w[kh * d->KW + kw];
      }
    }
  return acc;
}

/* The depthwise kernel a block of channels at a time (16 on AVX-512, 8
 * on AVX2; other levels say skipped) against the same scalar reference,
 * bit for bit:
 * full and part blocks, bias or none, a residual on odd cases, strides,
 * dilation, asymmetric pads, rows longer than a vector and of one. */
static void test_depthwise_cb(const char *tag) {
  static const int g[][10] = {
      /* H, W, KH, KW, sh, sw, dil, pt, pl, channels */
      {14, 14, 3, 3, 1, 1, 1, 1, 1, 16}, {7, 7, 3, 3, 1, 1, 1, 1, 1, 7},
      {15, 15, 3, 3, 2, 2, 1, 1, 1, 16}, {9, 37, 3, 3, 1, 1, 2, 2, 2, 11},
      {12, 20, 5, 5, 1, 1, 1, 2, 2, 16}, {6, 33, 1, 7, 1, 2, 1, 0, 3, 3},
      {1, 17, 1, 3, 1, 1, 1, 0, 1, 16},  {56, 56, 3, 3, 1, 1, 1, 1, 1, 16},
      {10, 9, 3, 3, 2, 1, 1, 0, 1, 1},   {111, 112, 3, 3, 2, 2, 1, 1, 1, 16},
  };
  char what[200];
  int bad = 0, cases = 0;
  for (size_t c = 0; c < sizeof g / sizeof g[0]; c++) {
    int nch = g[c][9];
    dg_conv_geom d = dw_geom(g[c], nch);
    if (!dg_cpu_depthwise_cb_takes(&d)) {
      snprintf(what, sizeof what,
               "skipped: %s: depthwise by blocks of channels (AVX2 and "
               "AVX-512 only)",
               tag);
      printf("%s\n", what);
      return;
    }
    int64_t taps = d.KH * d.KW, plane = d.H * d.W;
    size_t nx = (size_t)(nch * plane), ny = (size_t)(nch * d.P);
    float *x = malloc(sizeof(float) * nx), *y = malloc(sizeof(float) * ny);
    float *w = malloc(sizeof(float) * (size_t)(nch * taps)), b[16];
    float *res = c % 2 ? malloc(sizeof(float) * ny) : NULL;
    for (size_t i = 0; i < nx; i++)
      x[i] = 2 * rfloat();
    for (int64_t i = 0; i < nch * taps; i++)
      w[i] = rfloat();
    for (int i = 0; i < 16; i++)
      b[i] = c % 3 ? rfloat() : 0.0f;
    for (size_t i = 0; res && i < ny; i++)
      res[i] = rfloat();
    void *fs =
        aligned_alloc(64, (dg_cpu_depthwise_cb_scratch(&d) + 63) & ~(size_t)63);
    /* the level's blocks: 16 channels on AVX-512, 8 on AVX2 */
    int L = dg_cpu_depthwise_cb_width();
    for (int c0 = 0; c0 < nch; c0 += L)
      dg_cpu_depthwise_cb(&d, x + c0 * plane, w + c0 * taps,
                          c % 3 ? b + c0 : NULL, res ? res + c0 * d.P : NULL,
                          y + c0 * d.P, nch - c0 < L ? nch - c0 : L, 0.0f, 6.0f,
                          fs);
    /* int8 on the same geometry, u8 and i8 input, per-channel taps,
     * biases and multipliers, against requant.h's dg_requant */
    uint8_t *xq = malloc(nx), *yq = malloc(ny);
    int32_t *wq = malloc(sizeof(int32_t) * (size_t)(nch * taps)), qb[16];
    float qm[16];
    for (size_t i = 0; i < nx; i++)
      xq[i] = (uint8_t)rnd();
    for (int64_t i = 0; i < nch * taps; i++)
      wq[i] = rint_in(-255, 255);
    for (int j = 0; j < 16; j++)
      qb[j] = rint_in(-5000, 5000),
      qm[j] = 0.0005f + 0.0001f * (float)rint_in(0, 50);
    for (int xs = 0; xs < 2; xs++) {
      int32_t zx = xs ? rint_in(-20, 20) : rint_in(100, 150), zy = 7;
      for (int c0 = 0; c0 < nch; c0 += L) {
        dg_cpu_dw_q8 q = {.x_signed = xs,
                          .zx = zx,
                          .zy = zy,
                          .lo = 3,
                          .hi = 250,
                          .wv = wq + c0 * taps,
                          .bias = qb + c0,
                          .mult = qm + c0};
        dg_cpu_depthwise_q8_cb(&d, xq + c0 * plane, &q, yq + c0 * d.P,
                               nch - c0 < L ? nch - c0 : L, fs);
      }
      for (int ch = 0; ch < nch; ch++)
        for (int64_t oh = 0; oh < d.OH; oh++)
          for (int64_t ow = 0; ow < d.OW; ow++) {
            int32_t acc = qb[ch] + dw_ref_q8(&d, xq + ch * plane, xs, zx,
                                             wq + ch * taps, oh, ow);
            bad += yq[ch * d.P + oh * d.OW + ow] !=
                   (uint8_t)dg_requant(acc, qm[ch], zy, 3, 250);
          }
    }
    free(xq), free(yq), free(wq);
    free(fs);
    for (int ch = 0; ch < nch; ch++)
      for (int64_t oh = 0; oh < d.OH; oh++)
        for (int64_t ow = 0; ow < d.OW; ow++) {
          float s = dw_ref_f32(&d, x + ch * plane, w + ch * taps, oh, ow);
          s += b[ch];
          if (res)
            s += res[ch * d.P + oh * d.OW + ow];
          s = s < 0 ? 0 : (s > 6 ? 6 : s);
          bad += memcmp(&s, &y[ch * d.P + oh * d.OW + ow], sizeof s) != 0;
        }
    cases++;
    free(x), free(y), free(w), free(res);
  }
  snprintf(what, sizeof what,
           "%s: depthwise by blocks of channels, f32 and int8 (u8, i8), "
           "bit-exact with "
           "the reference "
           "(%d geometries, %d wrong values)",
           tag, cases, bad);
  report(!bad, what);
}

/* ---- sigmoid ---- */

/* dg_cpu_sigmoid at the current SIMD level against the double formula:
 * every float step over [-100, 100], the lengths that leave vector tails,
 * in place, and the special values. */
static void test_sigmoid(const char *tag) {
  enum { N = 200001 };
  float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
  if (!x || !y) {
    report(0, "sigmoid: out of memory");
    free(x), free(y);
    return;
  }
  for (int i = 0; i < N; i++)
    x[i] = -100.0f + 200.0f * (float)i / (N - 1);
  double worst = 0;
  for (int n = 1; n <= 67; n += 11) { /* tails of every vector width */
    dg_cpu_sigmoid(x + 1000, y, n);
    for (int i = 0; i < n; i++) {
      double r = 1.0 / (1.0 + exp(-(double)x[1000 + i]));
      worst = fmax(worst, fabs(y[i] - r));
    }
  }
  dg_cpu_sigmoid(x, y, N);
  for (int i = 0; i < N; i++)
    worst = fmax(worst, fabs(y[i] - 1.0 / (1.0 + exp(-(double)x[i]))));
  memcpy(y, x, sizeof(float) * N);
  dg_cpu_sigmoid(y, y, N); /* in place */
  for (int i = 0; i < N; i++)
    worst = fmax(worst, fabs(y[i] - 1.0 / (1.0 + exp(-(double)x[i]))));
  float sp[5] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f};
  dg_cpu_sigmoid(sp, sp, 5);
  char what[160];
  snprintf(what, sizeof what,
           "%s: sigmoid within 1e-6 of exact over [-100, 100] (worst %.3g); "
           "NaN stays NaN, +-inf give 1 and 0, +-0 give 0.5",
           tag, worst);
  report(worst <= 1e-6 && isnan(sp[0]) && sp[1] == 1.0f && sp[2] == 0.0f &&
             sp[3] == 0.5f && sp[4] == 0.5f,
         what);
  free(x), free(y);
}

/* ---- depthwise ---- */

/* dg_cpu_depthwise_plane at the current SIMD level against the same sum
 * in the same order (taps in (kh, kw) order, then the bias, then the
 * residual): bit-exact, for strides 1 to 4 (each its own phases; sh !=
 * sw too), dilation, pads that put taps before and after the row, odd
 * widths, planes of many bands, 1x1 and 17x17 kernels (289 taps: int8
 * takes the int32 kernel there), and int8 on the same geometries. */
static void test_depthwise(const char *tag) {
  static const int g[][9] = {
      /* H, W, KH, KW, sh, sw, dil, pt, pl */
      {9, 9, 3, 3, 1, 1, 1, 1, 1},     {9, 113, 3, 3, 2, 2, 1, 1, 1},
      {7, 30, 5, 5, 2, 2, 1, 2, 2},    {8, 17, 3, 3, 1, 3, 2, 2, 2},
      {6, 12, 3, 3, 2, 2, 2, 0, 3},    {5, 2048, 3, 3, 1, 1, 1, 1, 1},
      {5, 4095, 3, 3, 2, 2, 1, 1, 1},  {4, 11, 1, 7, 1, 2, 1, 0, 3},
      {21, 19, 5, 5, 4, 4, 1, 2, 2},   {13, 14, 3, 3, 2, 1, 3, 3, 0},
      {7, 7, 1, 1, 1, 1, 1, 0, 0},     {20, 18, 17, 17, 1, 1, 1, 8, 8},
      {300, 150, 3, 3, 1, 1, 1, 1, 1}, {3, 5, 7, 7, 1, 1, 1, 3, 3},
  };
  int bad = 0, cases = 0;
  for (size_t c = 0; c < sizeof g / sizeof g[0]; c++) {
    dg_conv_geom d = dw_geom(g[c], 1);
    if (!dg_cpu_depthwise_fits(&d)) {
      bad++;
      continue;
    }
    size_t nx = (size_t)(d.H * d.W), ny = (size_t)(d.OH * d.OW);
    float *x = malloc(sizeof(float) * nx), *y = malloc(sizeof(float) * ny);
    float *res = c % 2 ? malloc(sizeof(float) * ny) : NULL;
    float w[512], bias = rfloat();
    for (size_t i = 0; i < nx; i++)
      x[i] = 2 * rfloat();
    for (int i = 0; i < 512; i++)
      w[i] = rfloat();
    for (size_t i = 0; res && i < ny; i++)
      res[i] = rfloat();
    void *fs = malloc(dg_cpu_depthwise_scratch(&d));
    dg_cpu_depthwise_begin(&d, false, fs);
    dg_cpu_depthwise_plane(&d, x, w, bias, res, y, 0.0f, 6.0f, fs);
    free(fs);
    /* int8 on the same geometry: u8 and i8 input, against the sums and
     * requant.h's dg_requant, bit for bit */
    uint8_t *xq = malloc(nx), *yq = malloc(ny);
    int32_t *scratch = malloc(dg_cpu_depthwise_q8_scratch(&d));
    int32_t wq[512];
    for (size_t i = 0; i < nx; i++)
      xq[i] = (uint8_t)rnd();
    for (int i = 0; i < 512; i++)
      wq[i] = rint_in(-255, 255);
    for (int xs = 0; xs < 2; xs++) {
      int32_t zx = xs ? rint_in(-20, 20) : rint_in(100, 150), zy = 7;
      int32_t qb = rint_in(-5000, 5000);
      float m = 0.0005f + 0.0001f * (float)rint_in(0, 50);
      dg_cpu_depthwise_begin(&d, true, scratch);
      dg_cpu_depthwise_q8_plane(&d, xq, xs, zx, wq, qb, m, zy, 3, 250, yq,
                                scratch);
      for (int64_t oh = 0; oh < d.OH; oh++)
        for (int64_t ow = 0; ow < d.OW; ow++) {
          int32_t acc = qb + dw_ref_q8(&d, xq, xs, zx, wq, oh, ow);
          bad += yq[oh * d.OW + ow] != (uint8_t)dg_requant(acc, m, zy, 3, 250);
        }
    }
    free(xq), free(yq), free(scratch);
    for (int64_t oh = 0; oh < d.OH; oh++)
      for (int64_t ow = 0; ow < d.OW; ow++) {
        float s = dw_ref_f32(&d, x, w, oh, ow);
        s += bias;
        if (res)
          s += res[oh * d.OW + ow];
        s = s < 0 ? 0 : (s > 6 ? 6 : s);
        bad += memcmp(&s, &y[oh * d.OW + ow], sizeof s) != 0;
      }
    cases++;
    free(x), free(y), free(res);
  }
  char what[160];
  snprintf(what, sizeof what,
           "%s: depthwise planes, f32 and int8 (u8, i8), bit-exact with the "
           "reference (%d geometries, %d wrong values)",
           tag, cases, bad);
  report(!bad, what);
}

/* The int8 kernel this machine runs is the one the caller expects: the
 * aarch64 stage runs this under qemu as CPUs with and without the dot
 * product (DG_EXPECT_QKERNEL=neon-dot / portable), so a detection that
 * lost the fast path, or took it where it would fault, shows here. */
static void test_qgemm_kernel_choice(void) {
  const char *want = getenv("DG_EXPECT_QKERNEL");
  const char *got = dg_cpu_qgemm_kernel_name();
  if (!want || !*want) {
    printf("skipped: int8 kernel choice (%s here; DG_EXPECT_QKERNEL not "
           "set)\n",
           got);
    return;
  }
  char what[128];
  snprintf(what, sizeof what, "the int8 GEMM runs the %s kernel (got %s)", want,
           got);
  report(!strcmp(want, got), what);
}

int main(void) {
  rng_state = 12345;
  test_qgemm_kernel_choice();
  test_pool(0);
  test_pool(1);
  test_pool(2);
  test_pool(3);
  dg_cpu_pool_destroy(NULL);
  report(1, "pool destroy NULL");

  static const char *levels[] = {"portable", "avx2", "avx512", "amx", "neon"};
  for (int l = 0; l < 5; l++) {
    dg_cpu_simd_force(levels[l]);
    if (strcmp(dg_cpu_simd_name(), levels[l])) {
      printf("skipped: simd=%s (not available on this CPU)\n", levels[l]);
      continue;
    }
    char stag[32];
    snprintf(stag, sizeof stag, "simd=%s", levels[l]);
    test_sigmoid(stag);
    test_depthwise(stag);
    test_depthwise_cb(stag);
    for (int th = 0; th <= 2; th++) {
      dg_cpu_pool *pool = th ? dg_cpu_pool_create(th) : NULL;
      char tag[64];
      snprintf(tag, sizeof tag, "simd=%s threads=%d", levels[l], th);
      rng_state = 1000 + (uint64_t)l * 10 + (uint64_t)th;
      test_sgemm(pool, tag);
      test_qgemm(pool, tag);
      test_conv_f32(pool, tag);
      group_end(tag);
      dg_cpu_pool_destroy(pool);
    }
  }
  dg_cpu_simd_force(NULL);
  test_pack_level_mismatch();
  printf("# %d failure(s)\n", failures);
  return failures ? 1 : 0;
}
