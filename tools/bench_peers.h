/* dg-bench's peer libraries (oneDNN, OpenBLAS) and its timing loop.
 * Not part of the library. Each peer is optional at build time
 * (DG_HAVE_DNNL, DG_HAVE_OPENBLAS); a peer that is not built in, or whose
 * call fails, makes its function return a negative time. */
#ifndef DG_TOOLS_BENCH_PEERS_H
#define DG_TOOLS_BENCH_PEERS_H

#include <stddef.h>

/* ---- timing ------------------------------------------------------------ */

double bench_now_us(void);
/* Sleeps ms milliseconds: lets a library's spinning worker threads go to
 * sleep before another library is timed on the same cores. */
void bench_settle(int ms);

/* Every timed case runs `warmup` untimed calls, then `rounds` rounds of
 * at least min_reps timed calls and at least min_seconds each (capped at
 * max_reps); the result is the lowest of the rounds' medians, so that a
 * round spoilt by another process on a shared host does not decide it. */
typedef struct bench_config {
  int warmup;
  int min_reps;
  int max_reps;
  double min_seconds;
  int rounds;
} bench_config;
extern bench_config bench_cfg;

typedef int (*bench_fn)(void *arg); /* 0 on success */
/* Microseconds per call of fn under bench_cfg (best round median;
 * min_reps overridden by reps when reps > 0); negative if a call fails.
 * *out_reps (may be NULL) receives the number of timed calls, all rounds
 * together. */
double bench_median_us(bench_fn fn, void *arg, int reps, int *out_reps);

/* ---- spot checks -----------------------------------------------------------
 */

/* Output (n, k, oy, ox) of a 3x3 stride-1 pad-1 conv of NCHW x [., C, H, W]
 * with w [., C, 3, 3], in float64; *mag gets the sum of the products'
 * magnitudes (for a tolerance). */
double bench_conv3x3_point(const float *x, const float *w, int C, int H, int W,
                           int n, int k, int oy, int ox, double *mag);

/* ---- peers --------------------------------------------------------------- */

int peer_dnnl_available(void);
int peer_openblas_available(void);
/* One line describing the peer build ("oneDNN 2.6.3 (cpu_runtime omp)",
 * "OpenBLAS 0.3.21 ... core Cooperlake"); "" when not built in. */
const char *peer_dnnl_info(void);
const char *peer_openblas_info(void);
/* The implementation oneDNN chose for its last created convolution
 * ("brgconv:avx512_core", ...), "" if none. */
const char *peer_dnnl_last_impl(void);
/* OpenBLAS's kernel family for this CPU ("SkylakeX", "Haswell",
 * "Prescott", ...), "" if unknown. */
const char *peer_openblas_core(void);

/* 3x3 convolution, stride 1, pad 1, batch 1, C -> K channels at HxW.
 * f32: no bias, src/weights/dst in oneDNN's preferred layouts
 * (format_tag_any), inputs reordered before timing. u8s8: u8 src, s8
 * weights with per-channel output scales, s32 bias, s8 dst. Returns the
 * median microseconds per call, negative when unavailable or failing. */
double peer_dnnl_conv_f32_us(int C, int K, int H, int W, int reps);
double peer_dnnl_conv_u8s8_us(int C, int K, int H, int W, int reps);

/* Row-major C[M,N] = A[M,K] * B[K,N] with cblas_sgemm. */
double peer_openblas_sgemm_us(int M, int N, int K, int reps);

#endif
