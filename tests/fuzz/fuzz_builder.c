/* libFuzzer harness for the builder API as a careless caller uses it: the
 * input is a program of random calls with random parameters over two
 * graph slots and two session slots, including handles of other and of
 * destroyed graphs, destroyed sessions run again, huge and negative
 * dims, bad enums. Every call must return (an error or a result), never
 * crash, hang, leak or trip a sanitizer; a graph whose tensors stay small
 * is compiled and run on the CPU.
 *
 *   tests/fuzz/run.sh [seconds] builder
 */
#include "graph.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct prog {
  const uint8_t *p;
  size_t n, at;
} prog;

static unsigned byte(prog *r) { return r->at < r->n ? r->p[r->at++] : 0; }

/* A dimension: mostly small, sometimes 0, negative or huge. */
static int64_t dim(prog *r, bool *huge) {
  unsigned b = byte(r);
  switch (b % 16) {
  case 0:
    return 0;
  case 1:
    return -(int64_t)(b >> 4) - 1;
  case 2:
    *huge = true;
    return INT64_C(1) << (31 + (b >> 4) % 10);
  case 3:
    *huge = true;
    return (INT64_C(1) << 32) + 3;
  default:
    return 1 + (int64_t)(b % 9);
  }
}

static dg_tensor_desc desc(prog *r, bool *huge) {
  dg_tensor_desc d;
  memset(&d, 0, sizeof d);
  d.dtype = (dg_dtype)(byte(r) % (DG_DTYPE_COUNT_ + 1));
  d.rank = (int32_t)(byte(r) % 8) - (byte(r) % 16 == 0); /* 7 and -1 too */
  for (int i = 0; i < d.rank && i < DG_MAX_RANK; i++)
    d.dims[i] = dim(r, huge);
  if (d.dtype == DG_DTYPE_I8 || d.dtype == DG_DTYPE_U8 || byte(r) % 4 == 0) {
    static const float scales[] = {0.05f, 1e-30f, 1e30f, 0.0f, -1.0f};
    d.quant.scale = scales[byte(r) % 5];
    d.quant.zero_point = (int32_t)(byte(r) % 300) - 20;
  }
  return d;
}

#define HANDLES 32

typedef struct state {
  dg_context *ctx;
  dg_graph *g[2];
  bool huge[2];
  dg_session *s[2];
  dg_session *dead;     /* a destroyed session, to run again */
  dg_tensor t[HANDLES]; /* of any graph, live or not */
  int nt;
} state;

static dg_tensor handle(state *st, prog *r) {
  if (!st->nt || byte(r) % 8 == 0)
    return (dg_tensor){.id = byte(r) % 8, .graph = byte(r) % 4};
  return st->t[byte(r) % (unsigned)st->nt];
}

static void keep(state *st, dg_tensor t) {
  if (t.id)
    st->t[st->nt < HANDLES ? st->nt++ : (int)(t.id % HANDLES)] = t;
}

static float zeros[4096];

static void run_session(dg_session *s) {
  dg_binding in[4], out[2];
  void *bufs[6] = {0};
  int ni = dg_session_input_count(s), no = dg_session_output_count(s);
  bool ok = ni <= 4 && no <= 2;
  for (int i = 0; ok && i < ni + no; i++) {
    dg_io_info io;
    ok = (i < ni ? dg_session_input_info(s, i, &io)
                 : dg_session_output_info(s, i - ni, &io)) == DG_OK;
    size_t bytes = 4;
    for (int k = 0; ok && k < io.desc.rank; k++)
      bytes *= (size_t)io.desc.dims[k];
    ok = ok && bytes <= (1u << 20) && (bufs[i] = calloc(1, bytes));
    if (ok && i < ni)
      in[i] = (dg_binding){io.name, bufs[i], 0};
    else if (ok)
      out[i - ni] = (dg_binding){io.name, bufs[i], 0};
    /* sizes as the library wants them: its own check compares */
    if (ok) {
      size_t es = io.desc.dtype == DG_DTYPE_F16 ? 2
                  : io.desc.dtype == DG_DTYPE_I8 || io.desc.dtype == DG_DTYPE_U8
                      ? 1
                      : 4;
      size_t want = bytes / 4 * es;
      if (i < ni)
        in[i].size = want;
      else
        out[i - ni].size = want;
    }
  }
  if (ok)
    dg_session_run(s, in, ni, out, no, NULL);
  for (int i = 0; i < 6; i++)
    free(bufs[i]);
}

static void step(state *st, prog *r) {
  unsigned op = byte(r) % 45, slot = byte(r) % 2;
  dg_graph *g = st->g[slot];
  bool huge = false;
  dg_conv2d_params cp = {
      .stride = {(int32_t)(byte(r) % 4), (int32_t)(byte(r) % 4)},
      .dilation = {(int32_t)(byte(r) % 3), (int32_t)(byte(r) % 3)},
      .pads = {(int32_t)(byte(r) % 3), (int32_t)(byte(r) % 3),
               (int32_t)(byte(r) % 3), (int32_t)(byte(r) % 3)},
      .groups = (int32_t)(byte(r) % 4) - 1,
      .padding = (dg_padding)(byte(r) % 5),
      .activation = (dg_activation)(byte(r) % 4)};
  dg_pool2d_params pp = {
      .kernel = {(int32_t)(byte(r) % 5), (int32_t)(byte(r) % 5)},
      .stride = {(int32_t)(byte(r) % 3), (int32_t)(byte(r) % 3)},
      .padding = (dg_padding)(byte(r) % 5),
      .ceil_mode = (int32_t)(byte(r) % 2),
      .count_include_pad = (int32_t)(byte(r) % 2)};
  dg_quant_params yq = {.scale = byte(r) % 5 ? 0.1f : 1e-30f,
                        .zero_point = (int32_t)(byte(r) % 256) - 128};
  dg_dtype yt = (dg_dtype)(byte(r) % (DG_DTYPE_COUNT_ + 1));
  dg_tensor a = handle(st, r), b = handle(st, r), c = handle(st, r), y = {0};
  switch (op) {
  case 0:
    if (!g) {
      st->g[slot] = dg_graph_create(st->ctx, byte(r) % 2 ? "g" : NULL);
      st->huge[slot] = false;
    }
    return;
  case 1: /* its handles stay in the pool: foreign from now on */
    dg_graph_destroy(g);
    st->g[slot] = NULL;
    if (byte(r) % 4 == 0)
      dg_graph_destroy(g); /* a second destroy */
    return;
  case 2: {
    dg_tensor_desc d = desc(r, &huge);
    y = dg_graph_input(g, byte(r) % 3 ? "x" : "x2", &d);
    break;
  }
  case 3: {
    dg_tensor_desc d = desc(r, &huge);
    size_t n = 1;
    for (int i = 0; i < d.rank && i < DG_MAX_RANK; i++)
      n *= d.dims[i] > 0 && d.dims[i] < 4096 ? (size_t)d.dims[i] : 4096;
    if (!huge && n * 8 <= sizeof zeros) /* i64: 8 bytes an element */
      y = dg_graph_constant(g, "w", &d, zeros, byte(r) % 2);
    break;
  }
  case 4:
    y = dg_graph_conv2d(g, "conv", a, b, c, &cp);
    break;
  case 5:
    y = dg_graph_qconv2d(g, "qconv", a, b, c, &cp, yt,
                         byte(r) % 8 ? &yq : NULL);
    break;
  case 6:
    y = dg_graph_max_pool2d(g, "maxp", a, &pp);
    break;
  case 7:
    y = dg_graph_avg_pool2d(g, "avgp", a, &pp);
    break;
  case 8:
    y = dg_graph_global_avg_pool(g, "gap", a);
    break;
  case 9:
    y = dg_graph_fully_connected(g, "fc", a, b, c,
                                 (dg_activation)(byte(r) % 4));
    break;
  case 10:
    y = dg_graph_qfully_connected(g, "qfc", a, b, c,
                                  (dg_activation)(byte(r) % 4), yt, &yq);
    break;
  case 11:
    y = dg_graph_matmul(g, "mm", a, b);
    break;
  case 12:
    y = dg_graph_qmatmul(g, "qmm", a, b, yt, &yq);
    break;
  case 13:
    y = dg_graph_softmax(g, "sm", a, (int32_t)(byte(r) % 16) - 8);
    break;
  case 14:
    y = dg_graph_relu(g, "relu", a);
    break;
  case 15:
    y = dg_graph_sigmoid(g, "sig", a);
    break;
  case 16:
    y = dg_graph_clip(g, "clip", a, (float)byte(r) - 128, (float)byte(r));
    break;
  case 17:
    y = dg_graph_add(g, "add", a, b);
    break;
  case 18: {
    int64_t dims[8];
    int rank = (int)(byte(r) % 9) - 1;
    for (int i = 0; i < 8; i++)
      dims[i] = dim(r, &huge) - (byte(r) % 8 == 0 ? 2 : 0); /* -1 too */
    y = dg_graph_reshape(g, "reshape", a, rank, dims);
    break;
  }
  case 19: {
    dg_tensor in[3] = {a, b, c};
    y = dg_graph_concat(g, "cat", in, (int)(byte(r) % 4),
                        (int32_t)(byte(r) % 8) - 2);
    break;
  }
  case 20:
    dg_graph_output(g, byte(r) % 2 ? "y" : "y2", a, (dg_layout)(byte(r) % 3));
    return;
  case 21: /* compile (small graphs only: a huge one may really need the
            * memory) and run */
    if (g && !st->huge[slot] && !st->s[slot]) {
      int dev = 0;
      dg_compile_options co = {.devices = &dev,
                               .device_count = byte(r) % 2,
                               .policy = (dg_policy)(byte(r) % 3)};
      if (dg_graph_compile(g, &co, &st->s[slot], NULL) == DG_OK)
        run_session(st->s[slot]);
    }
    return;
  case 22: /* destroy a session, then run the destroyed one */
    if (st->s[slot]) {
      dg_session_destroy(st->s[slot]);
      st->dead = st->s[slot];
      st->s[slot] = NULL;
    }
    if (st->dead)
      dg_session_run(st->dead, NULL, 0, NULL, 0, NULL);
    return;
  /* Issue 17's ops: every family with fuzzed kinds and parameters. */
  case 24:
    y = dg_graph_unary(g, "un", (dg_unary_fn)(byte(r) % (DG_UNARY_COUNT_ + 2)),
                       a, (float)byte(r) / 16 - 4, (float)(byte(r) % 3));
    break;
  case 25:
    y = dg_graph_binary(g, "bin",
                        (dg_binary_fn)(byte(r) % (DG_BINARY_COUNT_ + 2)), a, b);
    break;
  case 26: {
    int32_t axes[8];
    int n = (int)(byte(r) % 9) - 1;
    for (int i = 0; i < 8; i++)
      axes[i] = (int32_t)(byte(r) % 16) - 8;
    y = dg_graph_reduce(g, "red",
                        (dg_reduce_fn)(byte(r) % (DG_REDUCE_COUNT_ + 2)), a,
                        byte(r) % 8 ? axes : NULL, n, byte(r) % 2);
    break;
  }
  case 27:
    y = dg_graph_log_softmax(g, "lsm", a, (int32_t)(byte(r) % 16) - 8);
    break;
  case 28:
    y = dg_graph_layer_norm(g, "ln", a, b, byte(r) % 2 ? c : DG_TENSOR_NONE,
                            (int32_t)(byte(r) % 16) - 8,
                            byte(r) % 8 ? 1e-5f : -1.0f);
    break;
  case 29: {
    int32_t perm[8];
    for (int i = 0; i < 8; i++)
      perm[i] = (int32_t)(byte(r) % 8) - 1;
    y = dg_graph_transpose(g, "tr", a, byte(r) % 4 ? perm : NULL);
    break;
  }
  case 30: {
    int64_t st0[8], en[8], sp[8];
    for (int i = 0; i < 8; i++) {
      st0[i] = (int64_t)(byte(r) % 16) - 8;
      en[i] = (int64_t)(byte(r) % 16) - 4;
      sp[i] = (int64_t)(byte(r) % 5) - 2;
    }
    y = dg_graph_slice(g, "sl", a, st0, en, byte(r) % 2 ? sp : NULL);
    break;
  }
  case 31: {
    int64_t pads[16];
    for (int i = 0; i < 16; i++)
      pads[i] = (int64_t)(byte(r) % 6) - 1;
    y = dg_graph_pad(g, "pad", a, pads, (dg_pad_mode)(byte(r) % 5),
                     (float)byte(r));
    break;
  }
  case 32: {
    int64_t dims[8];
    for (int i = 0; i < 8; i++)
      dims[i] = dim(r, &huge);
    y = dg_graph_expand(g, "ex", a, (int)(byte(r) % 9) - 1, dims);
    break;
  }
  case 33:
    y = dg_graph_gather(g, "ga", a, b, (int32_t)(byte(r) % 16) - 8);
    break;
  case 34: {
    dg_resize_params rp = {
        .mode = (dg_resize_mode)(byte(r) % 3),
        .coord = (dg_resize_coord)(byte(r) % 7),
        .nearest = (dg_resize_nearest)(byte(r) % 5),
        .scales = {(float)(byte(r) % 8) / 2, (float)(byte(r) % 8) / 2},
        .sizes = {(int64_t)(byte(r) % 4), (int64_t)(byte(r) % 4)}};
    y = dg_graph_resize(g, "rs", a, byte(r) % 8 ? &rp : NULL);
    break;
  }
  case 35:
    y = dg_graph_batch_norm(g, "bn", a, b, c, b, c,
                            byte(r) % 8 ? 1e-5f : -1.0f);
    break;
  case 36: {
    int32_t op2[2] = {(int32_t)(byte(r) % 4) - 1, (int32_t)(byte(r) % 4)};
    y = dg_graph_conv_transpose2d(g, "ct", a, b, c, &cp, op2);
    break;
  }
  case 37:
    y = dg_graph_cast(g, "cast", a, yt);
    break;
  /* int8 between the convolutions */
  case 38:
    y = dg_graph_qbinary(g, "qbin", (dg_binary_fn)(byte(r) % 6), a, b, yt,
                         byte(r) % 8 ? &yq : NULL);
    break;
  case 39: {
    uint8_t table[256];
    for (int i = 0; i < 256; i++)
      table[i] = (uint8_t)(i * 7 + byte(r));
    y = dg_graph_lookup(g, "lut", a, byte(r) % 8 ? table : NULL, yt, &yq);
    break;
  }
  case 40:
    y = dg_graph_qunary(
        g, "qun", (dg_unary_fn)(byte(r) % (DG_UNARY_COUNT_ + 2)), a,
        (float)(byte(r) % 4) / 4, (float)(byte(r) % 4) / 4, yt, &yq);
    break;
  case 41:
    y = dg_graph_requantize(g, "rq", a, yt, byte(r) % 8 ? &yq : NULL);
    break;
  case 42:
    y = dg_graph_qavg_pool2d(g, "qavg", a, byte(r) % 8 ? &pp : NULL, yt, &yq);
    break;
  case 43:
    y = dg_graph_qglobal_avg_pool(g, "qgap", a, yt, &yq);
    break;
  case 44: {
    dg_tensor in[3] = {a, b, c};
    y = dg_graph_qconcat(g, "qcat", in, (int)(byte(r) % 4),
                         (int32_t)(byte(r) % 8) - 4, yt, &yq);
    break;
  }
  default: { /* queries on any handle */
    dg_tensor_desc d;
    dg_graph_tensor_desc(g, a, &d);
    dg_graph_status(g);
    dg_graph_error(g);
    dg_graph_node_count(g);
    dg_graph_set_device(g, (int)(byte(r) % 4) - 1);
    return;
  }
  }
  if (huge)
    st->huge[slot] = true;
  keep(st, y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static dg_context *ctx;
  if (!ctx) {
    dg_context_options o = {
        .device_kinds = DG_DEVICE_CPU, .cpu_threads = 1, .disable_cache = 1};
    if (dg_context_create(&o, &ctx) != DG_OK)
      return 0;
  }
  state st;
  memset(&st, 0, sizeof st);
  st.ctx = ctx;
  prog r = {data, size, 0};
  for (int i = 0; i < 256 && r.at < r.n; i++)
    step(&st, &r);
  for (int i = 0; i < 2; i++) {
    dg_session_destroy(st.s[i]);
    dg_graph_destroy(st.g[i]);
  }
  return 0;
}
