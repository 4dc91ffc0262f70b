/* Out-of-memory handling: the library's objects are linked with malloc,
 * calloc, realloc and posix_memalign/aligned_alloc wrapped (-Wl,--wrap), so
 * the n-th allocation can be made to fail. A whole scenario (context,
 * builder, compile, run, verify, one-shot, a buffer bound and a run
 * submitted) is repeated failing at
 * allocation 1, 2, 3, ... until it runs through: every step must return an
 * error or succeed, never crash; under ASan, nothing may leak. */
#define _POSIX_C_SOURCE 200809L
#include "graph.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

static long alloc_count, fail_at = -1;
static int failed_once;

static int should_fail(void) {
  if (fail_at >= 0 && ++alloc_count == fail_at) {
    failed_once = 1;
    return 1;
  }
  return 0;
}

void *__real_malloc(size_t);
void *__real_calloc(size_t, size_t);
void *__real_realloc(void *, size_t);
int __real_posix_memalign(void **, size_t, size_t);
void *__real_aligned_alloc(size_t, size_t);
void *__wrap_malloc(size_t n) { return should_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) {
  return should_fail() ? NULL : __real_calloc(a, b);
}
void *__wrap_realloc(void *p, size_t n) {
  return should_fail() ? NULL : __real_realloc(p, n);
}
int __wrap_posix_memalign(void **p, size_t a, size_t n) {
  return should_fail() ? 12 /* ENOMEM */ : __real_posix_memalign(p, a, n);
}
void *__wrap_aligned_alloc(size_t a, size_t n) {
  return should_fail() ? NULL : __real_aligned_alloc(a, n);
}

static float w1[6 * 1 * 5 * 5], b1[6], w2[10 * 864], img[28 * 28];
static int8_t qw[4 * 6 * 3 * 3];

/* Outputs of the last successful scenario. */
static float out_probs[20], out_qy[400], out_conv[6 * 24 * 24];

/* Returns 1 when every step succeeded. Any failure must be a clean one. */
static int scenario(void) {
  dg_context *ctx;
  int all_ok = 0;
  if (dg_context_create(NULL, &ctx) != DG_OK)
    return 0;
  dg_graph *g = dg_graph_create(ctx, "oom");
  dg_tensor_desc xd = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, 1, 28, 28}};
  dg_tensor_desc wd = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {6, 1, 5, 5}};
  dg_tensor_desc bd = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {6}};
  dg_tensor_desc fd = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {10, 864}};
  dg_tensor_desc qd = {.dtype = DG_DTYPE_I8, .rank = 4, .dims = {4, 6, 3, 3},
                       .quant = {.scale = 0.01f}};
  dg_conv2d_params cp = {.activation = DG_ACTIVATION_RELU};
  dg_pool2d_params pp = {.kernel = {2, 2}, .stride = {2, 2}};
  dg_quant_params q = {.scale = 0.05f, .zero_point = -3};
  dg_tensor x = dg_graph_input(g, "x", &xd);
  dg_tensor y = dg_graph_conv2d(g, "conv", x,
                                dg_graph_constant(g, "w", &wd, w1, 0),
                                dg_graph_constant(g, "b", &bd, b1, 0), &cp);
  dg_tensor p = dg_graph_max_pool2d(g, "pool", y, &pp);
  dg_tensor qx = dg_graph_quantize(g, "q", p, DG_DTYPE_I8, &q);
  dg_tensor qy = dg_graph_qconv2d(g, "qconv", qx,
                                  dg_graph_constant(g, "qw", &qd, qw, 0),
                                  DG_TENSOR_NONE, &cp, DG_DTYPE_I8, &q);
  dg_graph_output(g, "qy", dg_graph_dequantize(g, "dq", qy), DG_LAYOUT_NHWC);
  dg_tensor f = dg_graph_flatten(g, "flat", p, 1);
  f = dg_graph_fully_connected(g, "fc", f,
                               dg_graph_constant(g, "fw", &fd, w2, 0),
                               DG_TENSOR_NONE, DG_ACTIVATION_NONE);
  dg_tensor parts[2] = {f, f};
  f = dg_graph_concat(g, "cat", parts, 2, 1);
  dg_graph_output(g, "probs", dg_graph_softmax(g, "sm", f, 1), 0);
  dg_session *s = NULL;
  if (g && dg_graph_compile(g, NULL, &s, NULL) == DG_OK) {
    dg_binding in = {"x", img, sizeof img};
    dg_binding out[2] = {{"probs", out_probs, sizeof out_probs},
                         {"qy", out_qy, sizeof out_qy}};
    dg_verify_report r;
    if (dg_session_run(s, &in, 1, out, 2, NULL) == DG_OK &&
        dg_session_verify(s, &in, 1, &r) == DG_OK) {
      dg_tensor_desc y1d = {.dtype = DG_DTYPE_F32, .rank = 4,
                            .dims = {1, 6, 24, 24}};
      all_ok = dg_oneshot_conv2d(ctx, 0, &xd, img, &wd, w1, &bd, b1, &cp,
                                 &y1d, out_conv, sizeof out_conv, NULL) == DG_OK;
    }
  }
  /* The input from a buffer, the run submitted and waited for. */
  dg_buffer *xb = NULL;
  if (all_ok)
    all_ok = dg_buffer_create(ctx, 0, &xd, &xb, NULL) == DG_OK &&
             dg_buffer_write(xb, img, sizeof img, NULL) == DG_OK &&
             dg_session_bind_buffer(s, "x", xb, NULL) == DG_OK;
  if (all_ok) {
    dg_binding out[2] = {{"probs", out_probs, sizeof out_probs},
                         {"qy", out_qy, sizeof out_qy}};
    all_ok = dg_session_submit(s, NULL, 0, out, 2, NULL) == DG_OK &&
             dg_session_wait(s, NULL) == DG_OK;
  }
  dg_session_destroy(s);
  dg_buffer_destroy(xb);
  dg_graph_destroy(g);
  dg_context_destroy(ctx);
  return all_ok;
}

int main(void) {
  for (size_t i = 0; i < sizeof w1 / sizeof w1[0]; i++)
    w1[i] = 0.01f * (float)(i % 7);
  for (size_t i = 0; i < sizeof w2 / sizeof w2[0]; i++)
    w2[i] = 0.001f * (float)(i % 13);
  for (size_t i = 0; i < sizeof img / sizeof img[0]; i++)
    img[i] = (float)(i % 17) / 17.0f;
  for (size_t i = 0; i < sizeof qw; i++)
    qw[i] = (int8_t)(i % 11 - 5);
  CHECK(scenario(), "the scenario runs through without injected failures");
  float want_probs[20], want_qy[400], want_conv[6 * 24 * 24];
  memcpy(want_probs, out_probs, sizeof want_probs);
  memcpy(want_qy, out_qy, sizeof want_qy);
  memcpy(want_conv, out_conv, sizeof want_conv);
  long points = 0, degraded = 0;
  int finished = 0;
  for (long n = 1; n < 5000 && !finished; n++) {
    alloc_count = 0;
    failed_once = 0;
    fail_at = n;
    int ok = scenario();
    fail_at = -1;
    points++;
    finished = !failed_once; /* ran past every allocation */
    /* Kernels may take a slower path that needs no memory; then the
     * results must be exactly the same. */
    if (failed_once && ok) {
      degraded++;
      if (memcmp(want_probs, out_probs, sizeof want_probs) ||
          memcmp(want_qy, out_qy, sizeof want_qy) ||
          memcmp(want_conv, out_conv, sizeof want_conv)) {
        CHECK(0, "allocation %ld failed, the scenario went on and its "
              "results changed", n);
        break;
      }
    }
  }
  CHECK(finished, "every one of %ld allocation points fails cleanly (no "
        "crash%s; %ld degrade to a path with the same results)", points - 1,
#if defined(__SANITIZE_ADDRESS__)
        ", no leak under ASan"
#else
        ""
#endif
        , degraded);
  return t_exit();
}
