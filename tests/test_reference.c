/* The oracle checked by hand: small cases whose answers were worked out on
 * paper (or are textbook values), run through both the reference kernels of
 * src/ops and every device. */
#include "graph.h"
#include "harness.h"
#include "ops/ops.h"
#include "runtime/internal.h"
#include "runtime/session.h"

#include <math.h>
#include <string.h>

static dg_context *ctx;

/* Runs graph g (one op, inputs in0.., output y) through the reference and
 * every device and compares with want[n]. */
static void expect(dg_graph *g, const char *what, const void *const *inputs,
                   int n_in, const double *want, int n) {
  if (dg_graph_status(g) != DG_OK) {
    CHECK(0, "%s: builds (%s)", what, dg_graph_error(g)->message);
    return;
  }
  const dg_ir *ir = &g->ir;
  const dg_node *node = &ir->nodes[ir->node_count - 1];
  const dg_tensor_desc *yd = &dg_ir_tensor(ir, node->output)->desc;
  double ref[64], *ins[4] = {0};
  dg_binding b[4];
  int k_in = 0;
  for (int k = 0; k < node->input_count; k++) {
    const dg_tensor_info *t = dg_ir_tensor(ir, node->inputs[k]);
    if (!t)
      continue;
    const void *src = t->constant ? t->constant->data : inputs[k_in];
    if (!t->constant)
      b[k_in] =
          (dg_binding){t->name, (void *)inputs[k_in], dg_desc_bytes(&t->desc)},
      k_in++;
    ins[k] = malloc(sizeof(double) * (size_t)dg_desc_elements(&t->desc));
    for (int64_t e = 0; e < dg_desc_elements(&t->desc); e++)
      ins[k][e] = dg_load_elem(t->desc.dtype, src, e);
  }
  (void)n_in;
  dg_op_def_get(node->op)->reference(ir, node, (const double *const *)ins, ref);
  double err = 0;
  for (int i = 0; i < n; i++)
    err = fmax(err, fabs(ref[i] - want[i]));
  CHECK(dg_desc_elements(yd) == n && err < 1e-6,
        "%s: reference matches the hand-computed answer (err %g)", what, err);
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    dg_compile_options o = {.devices = &dev, .device_count = 1};
    dg_session *s;
    char out[256];
    double e2 = 0;
    dg_status st = dg_graph_compile(g, &o, &s, NULL);
    if (st == DG_OK)
      st = dg_session_run(s, b, k_in,
                          &(dg_binding){"y", out, dg_desc_bytes(yd)}, 1, NULL);
    for (int i = 0; st == DG_OK && i < n; i++)
      e2 = fmax(e2, fabs(dg_load_elem(yd->dtype, out, i) - want[i]));
    CHECK(st == DG_OK && e2 < 1e-5, "%s: device %d matches (err %g)", what, dev,
          e2);
    dg_session_destroy(s);
  }
  for (int k = 0; k < 4; k++)
    free(ins[k]);
}

static dg_tensor_desc fd(int rank, int64_t a, int64_t b, int64_t c, int64_t d) {
  dg_tensor_desc t = {
      .dtype = DG_DTYPE_F32, .rank = rank, .dims = {a, b, c, d}};
  return t;
}

static const float x9[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
static const float ones[4] = {1, 1, 1, 1};

static void conv_cases(void) {
  dg_tensor_desc xd = fd(4, 1, 1, 3, 3), wd = fd(4, 1, 1, 2, 2);
  const void *in[1] = {x9};
  dg_graph *g = dg_graph_create(ctx, "c");
  dg_conv2d_params p = {0};
  dg_graph_output(g, "y",
                  dg_graph_conv2d(g, "c", dg_graph_input(g, "x", &xd),
                                  dg_graph_constant(g, "w", &wd, ones, 0),
                                  DG_TENSOR_NONE, &p),
                  0);
  expect(g, "conv 2x2 ones over 1..9", in, 1, (double[]){12, 16, 24, 28}, 4);
  dg_graph_destroy(g);

  g = dg_graph_create(ctx, "c");
  p = (dg_conv2d_params){.stride = {2, 2}, .pads = {1, 1, 1, 1}};
  dg_graph_output(g, "y",
                  dg_graph_conv2d(g, "c", dg_graph_input(g, "x", &xd),
                                  dg_graph_constant(g, "w", &wd, ones, 0),
                                  DG_TENSOR_NONE, &p),
                  0);
  expect(g, "conv pad 1 stride 2", in, 1, (double[]){1, 5, 11, 28}, 4);
  dg_graph_destroy(g);

  /* SAME_UPPER vs SAME_LOWER on an even input: the odd pad goes to the
   * end or the beginning. x = 1..6 as [1,1,1,6], w = [1,1,1,3] ones, s 2. */
  static const float x6[6] = {1, 2, 3, 4, 5, 6};
  dg_tensor_desc xr = fd(4, 1, 1, 1, 6), wr = fd(4, 1, 1, 1, 3);
  const void *in6[1] = {x6};
  for (int lower = 0; lower < 2; lower++) {
    g = dg_graph_create(ctx, "c");
    p = (dg_conv2d_params){.stride = {1, 2},
                           .padding = lower ? DG_PADDING_SAME_LOWER
                                            : DG_PADDING_SAME_UPPER};
    dg_graph_output(g, "y",
                    dg_graph_conv2d(g, "c", dg_graph_input(g, "x", &xr),
                                    dg_graph_constant(g, "w", &wr, ones, 0),
                                    DG_TENSOR_NONE, &p),
                    0);
    expect(g,
           lower ? "SAME_LOWER puts the odd pad first"
                 : "SAME_UPPER puts the odd pad last",
           in6, 1, lower ? (double[]){3, 9, 15} : (double[]){6, 12, 11}, 3);
    dg_graph_destroy(g);
  }
}

static void pool_cases(void) {
  dg_tensor_desc xd = fd(4, 1, 1, 3, 3);
  const void *in[1] = {x9};
  struct {
    const char *what;
    dg_pool2d_params p;
    bool max;
    double want[4];
  } c[] = {
      {"avg 2x2 s2 ceil: partial windows divide by what they cover",
       {.kernel = {2, 2}, .stride = {2, 2}, .ceil_mode = 1},
       false,
       {3, 4.5, 7.5, 9}},
      {"avg pad 1, count_include_pad",
       {.kernel = {2, 2},
        .stride = {2, 2},
        .pads = {1, 1, 1, 1},
        .count_include_pad = 1},
       false,
       {0.25, 1.25, 2.75, 7}},
      {"avg pad 1, pads not counted",
       {.kernel = {2, 2}, .stride = {2, 2}, .pads = {1, 1, 1, 1}},
       false,
       {1, 2.5, 5.5, 7}},
      {"max 2x2 s2 ceil",
       {.kernel = {2, 2}, .stride = {2, 2}, .ceil_mode = 1},
       true,
       {5, 6, 8, 9}},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    dg_graph *g = dg_graph_create(ctx, "p");
    dg_tensor x = dg_graph_input(g, "x", &xd);
    dg_graph_output(g, "y",
                    c[i].max ? dg_graph_max_pool2d(g, "p", x, &c[i].p)
                             : dg_graph_avg_pool2d(g, "p", x, &c[i].p),
                    0);
    expect(g, c[i].what, in, 1, c[i].want, 4);
    dg_graph_destroy(g);
  }
}

static void misc_cases(void) {
  static const float v3[3] = {1, 2, 3};
  const void *in[1] = {v3};
  dg_tensor_desc d3 = fd(1, 3, 0, 0, 0);
  dg_graph *g = dg_graph_create(ctx, "s");
  dg_graph_output(g, "y",
                  dg_graph_softmax(g, "s", dg_graph_input(g, "x", &d3), 0), 0);
  expect(g, "softmax [1,2,3]", in, 1,
         (double[]){0.0900305731703804, 0.2447284710547976, 0.6652409557748219},
         3);
  dg_graph_destroy(g);

  /* [2,1,3] + [2,1] broadcasts to [2,2,3]. */
  static const float a6[6] = {1, 2, 3, 4, 5, 6}, b2[2] = {10, 20};
  dg_tensor_desc ad = fd(3, 2, 1, 3, 0), bd = fd(2, 2, 1, 0, 0);
  g = dg_graph_create(ctx, "a");
  dg_graph_output(g, "y",
                  dg_graph_add(g, "a", dg_graph_input(g, "a", &ad),
                               dg_graph_input(g, "b", &bd)),
                  0);
  const void *ab[2] = {a6, b2};
  expect(g, "add broadcast [2,1,3] + [2,1]", ab, 2,
         (double[]){11, 12, 13, 21, 22, 23, 14, 15, 16, 24, 25, 26}, 12);
  dg_graph_destroy(g);

  /* matmul of a rank-1 by a rank-3 batch: [3] x [2,3,2] -> [2,2]. */
  static const float m12[12] = {1, 0, 0, 1, 1, 1, 2, 0, 0, 2, 1, -1};
  dg_tensor_desc md = fd(3, 2, 3, 2, 0);
  g = dg_graph_create(ctx, "m");
  dg_graph_output(g, "y",
                  dg_graph_matmul(g, "m", dg_graph_input(g, "a", &d3),
                                  dg_graph_input(g, "b", &md)),
                  0);
  const void *mm[2] = {v3, m12};
  expect(g, "matmul [3] x [2,3,2]", mm, 2, (double[]){4, 5, 5, 1}, 4);
  dg_graph_destroy(g);
}

/* qconv by hand: x u8 zero 128, w i8, sx 0.5, sw 0.25, sy 1, zy 5, so
 * m = 0.125. acc 16 -> 2.0 -> 7; acc 20 -> 2.5 -> 2 (half to even) -> 7;
 * acc 28 -> 3.5 -> 4 -> 9. */
static void qconv_case(void) {
  static const uint8_t x[2] = {130, 126};
  static const int8_t w[6] = {2, -1, 2, -1, 2, -1};
  static const int32_t b[3] = {10, 14, 22};
  dg_tensor_desc xd = {.dtype = DG_DTYPE_U8,
                       .rank = 4,
                       .dims = {1, 2, 1, 1},
                       .quant = {.scale = 0.5f, .zero_point = 128}};
  dg_tensor_desc wd = {.dtype = DG_DTYPE_I8,
                       .rank = 4,
                       .dims = {3, 2, 1, 1},
                       .quant = {.scale = 0.25f}};
  dg_tensor_desc bd = {.dtype = DG_DTYPE_I32, .rank = 1, .dims = {3}};
  dg_graph *g = dg_graph_create(ctx, "q");
  dg_conv2d_params p = {0};
  dg_quant_params yq = {.scale = 1.0f, .zero_point = 5};
  dg_graph_output(g, "y",
                  dg_graph_qconv2d(g, "q", dg_graph_input(g, "x", &xd),
                                   dg_graph_constant(g, "w", &wd, w, 0),
                                   dg_graph_constant(g, "b", &bd, b, 0), &p,
                                   DG_DTYPE_U8, &yq),
                  0);
  const void *in[1] = {x};
  expect(g, "qconv requantisation rounds half to even", in, 1,
         (double[]){7, 7, 9}, 3);
  dg_graph_destroy(g);
}

int main(void) {
  if (dg_context_create(NULL, &ctx) != DG_OK)
    return 1;
  conv_cases();
  pool_cases();
  misc_cases();
  qconv_case();
  dg_context_destroy(ctx);
  return t_exit();
}
