/* A graph that keeps a device busy far longer than a millisecond, for the
 * device_timeout_ms tests of the GPU targets: passes of an M x M matmul
 * chain (0.3 GFLOP on a CPU-type device, 550 on a GPU), its input and
 * output buffers malloc'd here (the caller frees them with free()). */
#ifndef DG_TEST_SLOW_GRAPH_H
#define DG_TEST_SLOW_GRAPH_H

#include "graph.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct slow_graph {
  dg_graph *g;
  float *x, *y;
  size_t bytes;
} slow_graph;

static __attribute__((unused)) slow_graph slow_graph_make(dg_context *c,
                                                          bool cpu_type) {
  int M = cpu_type ? 512 : 4096, passes = cpu_type ? 2 : 4;
  slow_graph s = {NULL, NULL, NULL, sizeof(float) * (size_t)M * (size_t)M};
  s.x = malloc(s.bytes);
  s.y = malloc(s.bytes);
  for (size_t i = 0; s.x && i < (size_t)M * M; i++)
    s.x[i] = (float)(i % 7) - 3.0f;
  s.g = dg_graph_create(c, "slow");
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {M, M}};
  dg_tensor x = dg_graph_input(s.g, "x", &d), t = x;
  for (int i = 0; i < passes; i++)
    t = dg_graph_matmul(s.g, NULL, t, x);
  dg_graph_output(s.g, "y", t, DG_LAYOUT_NCHW);
  return s;
}

/* Compiles the graph on dev alone and runs it once: the run's status
 * (the compile's on failure), diag filled. *out gets the session. */
static __attribute__((unused)) dg_status
slow_graph_run(slow_graph *s, int dev, dg_session **out, dg_diagnostic *diag) {
  dg_compile_options co = {.devices = &dev, .device_count = 1};
  *out = NULL;
  dg_status st = s->x && s->y ? dg_graph_compile(s->g, &co, out, diag)
                              : DG_ERROR_OUT_OF_MEMORY;
  dg_binding in = {"x", s->x, s->bytes}, o = {"y", s->y, s->bytes};
  return st == DG_OK ? dg_session_run(*out, &in, 1, &o, 1, diag) : st;
}

/* What a careless caller does after a failed run: frees the input at
 * once and reuses the output buffer (filled with a mark, which
 * slow_graph_output_marked then looks for: a device writing the output
 * after the run returned would change it). */
static __attribute__((unused)) void slow_graph_after_error(slow_graph *s) {
  free(s->x);
  s->x = NULL;
  if (s->y)
    memset(s->y, 0xa5, s->bytes);
}

static __attribute__((unused)) bool
slow_graph_output_marked(const slow_graph *s) {
  const unsigned char *b = (const unsigned char *)s->y;
  for (size_t i = 0; b && i < s->bytes; i++)
    if (b[i] != 0xa5)
      return false;
  return b != NULL;
}

static __attribute__((unused)) double slow_graph_now_ms(void) {
  struct timespec t;
  timespec_get(&t, TIME_UTC);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static __attribute__((unused)) void slow_graph_free(slow_graph *s) {
  dg_graph_destroy(s->g);
  free(s->x);
  free(s->y);
}

#endif
