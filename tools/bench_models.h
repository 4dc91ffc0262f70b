/* dg-bench --models: whole models, ours against ONNX Runtime's CPU EP in
 * the same process. For each model folder (DIR/<name>/model.onnx, as
 * tests/zoo/make_bench_zoo.py writes them) the model is imported and
 * compiled strictly on one device (the CPU unless --device names
 * another, a GPU say: ORT stays on the CPU, the peer a user would
 * otherwise pick), ONNX Runtime (loaded with dlopen:
 * the library the EP tests fetch) opens the same file with the same
 * thread count, both run the same seeded input, their outputs are
 * compared, and then they are timed in alternating blocks so that a
 * change in the machine's load reaches both. The table gives the best
 * block median for each, the spread of the block medians, and ours /
 * ORT's speed,
 * with the geomean over f32 and int8 models; one JSON line per model.
 * With resident, two more columns: ours with device buffers bound, and
 * the device's own time for the same run.
 * Not a timed test: nothing is asserted about the figures. */
#ifndef DG_BENCH_MODELS_H
#define DG_BENCH_MODELS_H

#include <stdio.h>

typedef struct bench_models_opts {
  const char *dir;  /* the benchmark zoo */
  const char *ort;  /* libonnxruntime.so path; NULL: the test cache's */
  const char *only; /* comma-separated model names; NULL: every model */
  int threads;      /* both sides' thread count; 0: online cores */
  int batch;        /* the symbolic batch dimension's value, >= 1 */
  int rounds;       /* alternating blocks per side, >= 1 */
  double seconds;   /* minimum time of one block */
  int device;       /* ours on this device index (any kind), strictly;
                       -1: the CPU device, the only one opened then */
  int fast;         /* compile with DG_PRECISION_FAST_F16 */
  /* Also time ours with the input and first output bound to buffers of
   * the device (dg_session_bind_buffer: no host copies), beside the sum
   * of the device's own node times (the plan's measured_us), checking
   * that the buffer's output equals the host run's bit for bit. */
  int resident;
} bench_models_opts;

/* Runs the suite; JSON lines also to jf when not NULL. Returns 0, 1 when
 * a model failed to load, compile or run on either side or the outputs
 * disagree, 2 when the zoo or ONNX Runtime is missing (said on
 * stderr with what to run). */
int bench_models(const bench_models_opts *o, FILE *jf);

#endif
