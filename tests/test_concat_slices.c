/* Concats made in place in the host arena (runtime/concat_slices.h): which
 * concats the plan takes, and that every graph computes the same values
 * whether its concats copy or not: the expected values are worked out
 * here from the inputs, and dg_session_verify checks each node against
 * the float64 reference. */
#define _GNU_SOURCE /* fmemopen */
#include "graph.h"
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The concats the plan table says it made in place (0 when it says
 * nothing), -1 if the table cannot be read. */
static int in_place(dg_session *s) {
  char buf[1 << 16] = "";
  FILE *f = fmemopen(buf, sizeof buf - 1, "w");
  if (!f)
    return -1;
  dg_plan_write(dg_session_plan(s), DG_PLAN_FORMAT_TABLE, f);
  fclose(f);
  const char *at = strstr(buf, "bytes of host memory");
  if (!at)
    return -1;
  int v = 0;
  return sscanf(at, "bytes of host memory, %d concat(s) made in place", &v) == 1
             ? v
             : 0;
}

static dg_tensor unary(dg_graph *g, dg_unary_fn fn, dg_tensor x) {
  return dg_graph_unary(g, NULL, fn, x, 0, 0);
}

static dg_tensor cat(dg_graph *g, int n, const dg_tensor *t, int axis) {
  return dg_graph_concat(g, NULL, t, n, axis);
}

/* Compiles g on the CPU, runs x through it into y (ny floats), checks
 * the count of concats in place, the values against want and the nodes
 * against the reference. */
static void run_case(dg_graph *g, const char *what, int want_in_place,
                     const float *x, size_t nx, float *y, size_t ny,
                     const float *want) {
  dg_compile_options co = {.policy = DG_POLICY_STRICT};
  dg_session *s = NULL;
  dg_status st = dg_graph_compile(g, &co, &s, NULL);
  int got = st == DG_OK ? in_place(s) : -1;
  CHECK(got == want_in_place, "%s: %d concat(s) in place (want %d)", what, got,
        want_in_place);
  dg_binding in = {"x", (void *)x, nx * sizeof(float)},
             out = {"y", y, ny * sizeof(float)};
  int wrong = -1;
  for (int r = 0; r < 2 && st == DG_OK; r++) { /* twice: no stale slice */
    memset(y, 0xff, ny * sizeof(float));
    st = dg_session_run(s, &in, 1, &out, 1, NULL);
    wrong = 0;
    for (size_t i = 0; i < ny; i++)
      wrong += y[i] != want[i];
    if (wrong)
      break;
  }
  CHECK(st == DG_OK && wrong == 0, "%s: runs right twice (%s, %d wrong)", what,
        dg_status_string(st), wrong);
  dg_verify_report rep;
  dg_status vst = s ? dg_session_verify(s, &in, 1, &rep) : DG_ERROR_DEVICE;
  CHECK(vst == DG_OK, "%s: verify, every node against the reference (%s)", what,
        dg_status_string(vst));
  dg_session_destroy(s);
  dg_graph_destroy(g);
}

static dg_graph *graph_of(dg_context *ctx, const int64_t *dims, dg_tensor *x) {
  dg_graph *g = dg_graph_create(ctx, "concats");
  dg_graph_set_device(g, 0);
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 4};
  memcpy(d.dims, dims, sizeof(int64_t) * 4);
  *x = dg_graph_input(g, "x", &d);
  return g;
}

/* SqueezeNet's shape: two branches of one value concatenated. */
static void branches(dg_context *ctx) {
  enum { C = 4, HW = 256, N = C * HW };
  float x[N], y[2 * N], want[2 * N];
  for (int i = 0; i < N; i++)
    x[i] = (float)(i % 13) - 6.0f;
  for (int i = 0; i < N; i++) {
    float a = x[i] > 0 ? x[i] : 0; /* relu, then |a| and |-a| */
    want[i] = a, want[N + i] = a;
  }
  dg_tensor t;
  dg_graph *g = graph_of(ctx, (int64_t[]){1, C, 16, 16}, &t);
  dg_tensor a = dg_graph_relu(g, NULL, t);
  dg_tensor parts[2] = {a, unary(g, DG_UNARY_NEG, a)};
  dg_graph_output(g, "y", unary(g, DG_UNARY_ABS, cat(g, 2, parts, 1)),
                  DG_LAYOUT_NCHW);
  run_case(g, "two branches", 1, x, N, y, 2 * N, want);
}

/* DenseNet's shape: each concat's inputs begin with all of the previous
 * one's, and the last is a graph output bound to the caller's memory. */
static void dense_chain(dg_context *ctx) {
  enum { HW = 64, N0 = 2 * HW }; /* 2 channels of 8 x 8: 512 bytes */
  float x[N0], y[16 * HW], want[16 * HW];
  for (int i = 0; i < N0; i++)
    x[i] = (float)(i % 9) - 4.0f;
  float x0[N0];
  for (int i = 0; i < N0; i++)
    x0[i] = x[i] > 0 ? x[i] : 0;
  /* y1 = -x0; c1 = [x0 y1]; y2 = |c1| = [x0 x0]; c2 = [x0 y1 y2];
   * y3 = -c2; y = [x0 y1 y2 y3], in blocks of 2 channels. */
  const float sign[8] = {1, -1, 1, 1, -1, 1, -1, -1};
  for (int b = 0; b < 8; b++) /* (-0 == 0 where x0 is 0) */
    for (int i = 0; i < N0; i++)
      want[b * N0 + i] = sign[b] * x0[i];
  dg_tensor t;
  dg_graph *g = graph_of(ctx, (int64_t[]){1, 2, 8, 8}, &t);
  dg_tensor f[4];
  f[0] = dg_graph_relu(g, NULL, t);
  f[1] = unary(g, DG_UNARY_NEG, f[0]);
  f[2] = unary(g, DG_UNARY_ABS, cat(g, 2, f, 1));
  f[3] = unary(g, DG_UNARY_NEG, cat(g, 3, f, 1));
  dg_graph_output(g, "y", cat(g, 4, f, 1), DG_LAYOUT_NCHW);
  run_case(g, "a dense chain of three", 3, x, N0, y, 16 * HW, want);
}

/* Concats the plan must leave to copy: a tensor twice, images of a batch
 * (each input is not one run of the output), slices off the arena's
 * alignment (3 x 3 floats), and a value already in another's slice. */
static void copied(dg_context *ctx) {
  enum { N = 4 * 256 };
  float x[2 * N], y[8 * N], want[8 * N];
  for (int i = 0; i < 2 * N; i++)
    x[i] = (float)(i % 11) - 5.0f;
  dg_tensor t;
  dg_graph *g = graph_of(ctx, (int64_t[]){1, 4, 16, 16}, &t);
  dg_tensor a = dg_graph_relu(g, NULL, t);
  dg_graph_output(g, "y", cat(g, 2, (dg_tensor[]){a, a}, 1), DG_LAYOUT_NCHW);
  for (int i = 0; i < N; i++)
    want[i] = want[N + i] = x[i] > 0 ? x[i] : 0;
  run_case(g, "one tensor twice", 0, x, N, y, 2 * N, want);

  g = graph_of(ctx, (int64_t[]){2, 4, 16, 16}, &t);
  a = dg_graph_relu(g, NULL, t);
  dg_tensor b = unary(g, DG_UNARY_ABS, t);
  dg_graph_output(g, "y", cat(g, 2, (dg_tensor[]){a, b}, 1), DG_LAYOUT_NCHW);
  for (int n = 0; n < 2; n++)
    for (int i = 0; i < N; i++) {
      float v = x[n * N + i];
      want[n * 2 * N + i] = v > 0 ? v : 0;
      want[n * 2 * N + N + i] = fabsf(v);
    }
  run_case(g, "a batch of two", 0, x, 2 * N, y, 4 * N, want);

  g = graph_of(ctx, (int64_t[]){1, 1, 3, 3}, &t);
  a = dg_graph_relu(g, NULL, t);
  b = unary(g, DG_UNARY_ABS, t);
  dg_graph_output(g, "y", cat(g, 2, (dg_tensor[]){a, b}, 1), DG_LAYOUT_NCHW);
  for (int i = 0; i < 9; i++)
    want[i] = x[i] > 0 ? x[i] : 0, want[9 + i] = fabsf(x[i]);
  run_case(g, "36-byte slices", 0, x, 9, y, 18, want);

  /* c1 = [a b] in place; c2 = [b a] copies (a and b are in c1's
   * slices), and so does y = [c1 c2] (c1 holds slices, and its first
   * input is no slice): 1 in place. */
  g = graph_of(ctx, (int64_t[]){1, 4, 16, 16}, &t);
  a = dg_graph_relu(g, NULL, t);
  b = unary(g, DG_UNARY_NEG, a);
  dg_tensor c1 = cat(g, 2, (dg_tensor[]){a, b}, 1);
  dg_tensor c2 = cat(g, 2, (dg_tensor[]){b, a}, 1);
  dg_graph_output(g, "y", cat(g, 2, (dg_tensor[]){c1, c2}, 1), DG_LAYOUT_NCHW);
  for (int i = 0; i < N; i++) {
    float r = x[i] > 0 ? x[i] : 0, m = -r;
    want[i] = r, want[N + i] = m, want[2 * N + i] = m, want[3 * N + i] = r;
  }
  run_case(g, "a value in two concats", 1, x, N, y, 4 * N, want);
}

int main(void) {
  dg_context_options o = {.disable_cache = 1};
  dg_context *ctx = NULL;
  if (dg_context_create(&o, &ctx) != DG_OK) {
    CHECK(0, "context");
    return t_exit();
  }
  branches(ctx);
  dense_chain(ctx);
  copied(ctx);
  dg_context_destroy(ctx);
  return t_exit();
}
