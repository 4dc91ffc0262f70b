/* dg-bench's GPU suite: GEMM and convolution shapes sized for a discrete
 * GPU, through directgraph sessions pinned to one device, each result spot
 * checked against float64 before it is timed. */
#ifndef DG_BENCH_GPU_H
#define DG_BENCH_GPU_H

#include "bench_peers.h"
#include "graph.h"

/* One session run with up to two inputs and one output: the unit the
 * benches time. Buffers are the caller's. */
typedef struct bench_case {
  dg_session *s;
  dg_binding in[2];
  int nin;
  dg_binding out;
} bench_case;

/* Runs a bench_case once (a bench_fn); 0 on success, -1 otherwise. */
int bench_case_run(void *arg);

/* The device's own time for one run of s (fn(arg) runs it): the sum of
 * its plan's measured_us, best of 5 runs; -1 when a run fails or the
 * device does not measure. */
double bench_device_us(bench_fn fn, void *arg, const dg_session *s);

/* Compiles g for exactly this device (strict placement), or NULL after
 * saying on stderr why, with `what` naming the bench. */
dg_session *bench_compile_on(dg_graph *g, int device, const char *what);

/* Median microseconds of one run of C[M,N] = A[M,K] B[K,N] in dtype (f32
 * or f16) on device, or -1 (with why in check). check gets "ok"/"FAIL".
 * A run includes moving A and B from the host and C back; *kernel_us gets
 * the device's own time for the node (timestamps, best of 5 runs; -1 when
 * the device does not measure), the figure comparable with cuBLAS;
 * *res_us the median run with A, B and C in buffers of the device
 * (dg_session_bind_buffer: no host copies), its output checked equal to
 * the host run's (-1 on failure, said on stderr). */
double bench_gpu_gemm_us(dg_context *ctx, int device, int M, int N, int K,
                         dg_dtype dtype, char *check, size_t check_size,
                         int *reps, double *kernel_us, double *res_us);

/* The same for a 3x3 stride-1 pad-1 conv C->C at HxW with batch N. */
double bench_gpu_conv_us(dg_context *ctx, int device, int N, int C, int H,
                         int W, dg_dtype dtype, char *check, size_t check_size,
                         int *reps, double *kernel_us);

/* Median microseconds of one run of a chain of `nodes` relu nodes on 256
 * floats pinned to device (one segment): the difference between two
 * lengths over their node counts is the per-node cost of a recorded
 * segment (dispatch, barrier, timestamps). *kernel_us as above. */
double bench_gpu_chain_us(dg_context *ctx, int device, int nodes, char *check,
                          size_t check_size, int *reps, double *kernel_us);

/* SGEMM through CLBlast on the first OpenCL GPU, or -1 when CLBlast or a
 * GPU is missing (name gets the device). */
double peer_clblast_sgemm_us(int M, int N, int K, char *name, size_t name_size);

#endif
