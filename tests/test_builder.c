/* Every validation path of the builder: the call fails, the graph keeps the
 * first error, and the diagnostic names the node, op and field. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "graph.h"
#include "harness.h"

#include <math.h>
#include <string.h>

static dg_context *ctx;

static dg_tensor_desc f32(int rank, int64_t a, int64_t b, int64_t c,
                          int64_t d) {
  dg_tensor_desc t = {.dtype = DG_DTYPE_F32, .rank = rank};
  int64_t v[4] = {a, b, c, d};
  for (int i = 0; i < rank && i < 4; i++)
    t.dims[i] = v[i];
  return t;
}

static float zeros[1 << 16];

/* Checks that g failed with status st on field, at node index idx. */
static void expect(dg_graph *g, const char *what, dg_status st,
                   const char *field, int idx) {
  const dg_diagnostic *d = dg_graph_error(g);
  int ok = d && d->status == st && dg_graph_status(g) == st &&
           strstr(d->field, field) && d->node_index == idx &&
           strlen(d->message) > 10;
  CHECK(ok, "%s -> %s on '%s' (got %s, field '%s', node %d: %s)", what,
        dg_status_string(st), field,
        d ? dg_status_string(d->status) : "no error", d ? d->field : "",
        d ? d->node_index : -9, d ? d->message : "");
}

static dg_graph *conv_graph(dg_tensor *x, dg_tensor *w) {
  dg_graph *g = dg_graph_create(ctx, "t");
  dg_tensor_desc xd = f32(4, 1, 4, 8, 8), wd = f32(4, 6, 4, 3, 3);
  *x = dg_graph_input(g, "x", &xd);
  *w = dg_graph_constant(g, "w", &wd, zeros, 0);
  return g;
}

static void conv_case(const char *what, dg_conv2d_params p, dg_status st,
                      const char *field) {
  dg_tensor x, w;
  dg_graph *g = conv_graph(&x, &w);
  dg_tensor y = dg_graph_conv2d(g, "c", x, w, DG_TENSOR_NONE, &p);
  CHECK(y.id == 0, "%s returns no tensor", what);
  expect(g, what, st, field, 0);
  const dg_diagnostic *d = dg_graph_error(g);
  CHECK(d && !strncmp(d->message, "dg_graph_conv2d: node 0 'c' (conv2d): ", 38),
        "%s: the message names the call: %s", what, d ? d->message : "");
  dg_graph_destroy(g);
}

/* A name of len bytes: tag, then a filler that makes the names of one test
 * share their first 200 bytes or more, then tag again at the very end. */
static char *long_name(size_t len, const char *tag) {
  char *s = malloc(len + 1);
  if (!s)
    return NULL;
  size_t t = strlen(tag);
  for (size_t i = 0; i < len; i++)
    s[i] = "/features.0/block"[i % 17];
  memcpy(s + len - t, tag, t);
  s[len] = 0;
  return s;
}

/* Does s end in "..." and hold exactly the first strlen(s) - 3 bytes of
 * whole? (A display copy shortened visibly.) */
static int shortened_from(const char *s, const char *whole) {
  size_t n = strlen(s);
  return n > 3 && n < strlen(whole) && !strcmp(s + n - 3, "...") &&
         !strncmp(s, whole, n - 3);
}

/* What a plan writer printed, as a string (caller frees). */
static char *plan_text(const dg_plan *p, dg_plan_format format) {
  FILE *f = tmpfile();
  if (!f)
    return NULL;
  dg_plan_write(p, format, f);
  long n = ftell(f);
  rewind(f);
  char *buf = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
  if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)
    buf[0] = 0;
  fclose(f);
  return buf;
}

/* Names of any length: a graph whose every name is 300+ bytes builds,
 * compiles and runs by those names on every device; names alike in their
 * first 299 bytes stay apart; what is shown (plan, diagnostics) is
 * shortened visibly and still says which node. */
static void test_long_names(void) {
  char *gname = long_name(310, "graph"), *xn = long_name(300, "x1"),
       *x2n = long_name(300, "x2"), *wn = long_name(305, "weights"),
       *cn = long_name(320, "conv"), *rn = long_name(320, "relu"),
       *an = long_name(330, "add"), *yan = long_name(300, "y1"),
       *ybn = long_name(300, "y2");
  if (!gname || !xn || !x2n || !wn || !cn || !rn || !an || !yan || !ybn) {
    CHECK(0, "long names allocated");
    goto done;
  }
  dg_graph *g = dg_graph_create(ctx, gname);
  dg_tensor_desc xd = f32(4, 1, 2, 3, 3), wd = f32(4, 2, 2, 1, 1);
  static const float wv[4] = {1, -2, 0.5f, 3};
  dg_tensor x = dg_graph_input(g, xn, &xd);
  dg_tensor x2 = dg_graph_input(g, x2n, &xd);
  dg_tensor w = dg_graph_constant(g, wn, &wd, wv, 0);
  dg_conv2d_params cp = {0};
  dg_tensor c = dg_graph_conv2d(g, cn, x, w, DG_TENSOR_NONE, &cp);
  dg_tensor y = dg_graph_add(g, an, dg_graph_relu(g, rn, c), x2);
  dg_graph_output(g, yan, c, DG_LAYOUT_NCHW);
  dg_graph_output(g, ybn, y, DG_LAYOUT_NCHW);
  const dg_diagnostic *e = dg_graph_error(g);
  CHECK(dg_graph_status(g) == DG_OK && dg_graph_node_count(g) == 3,
        "300+-byte graph, input, constant, node and output names build, two "
        "inputs and two outputs alike up to byte 299 (%s)",
        e ? e->message : "ok");
  dg_io_info ii[2] = {{0}}, oi[2] = {{0}};
  for (int i = 0; i < 2; i++) {
    dg_graph_input_info(g, i, &ii[i]);
    dg_graph_output_info(g, i, &oi[i]);
  }
  CHECK(ii[0].name && !strcmp(ii[0].name, xn) && ii[1].name &&
            !strcmp(ii[1].name, x2n) && oi[0].name &&
            !strcmp(oi[0].name, yan) && oi[1].name && !strcmp(oi[1].name, ybn),
        "io info gives every long name whole");
  char cut[101]; /* a prefix as long as 100 bytes names nothing */
  memcpy(cut, x2n, 100);
  cut[100] = 0;
  CHECK(dg_graph_input_layout(g, x2n, DG_LAYOUT_NCHW) == DG_OK &&
            dg_graph_input_layout(g, cut, DG_LAYOUT_NCHW) == DG_ERROR_NOT_FOUND,
        "input layout found by the long name, not by its first 100 bytes");
  /* c = w x (1x1 conv), y = relu(c) + x2 */
  float xv[18], x2v[18], want_c[18], want_y[18];
  for (int i = 0; i < 18; i++) {
    xv[i] = (float)(i % 7) - 3;
    x2v[i] = 0.25f * (float)i;
  }
  for (int o = 0; o < 2; o++)
    for (int p = 0; p < 9; p++) {
      want_c[o * 9 + p] = wv[o * 2] * xv[p] + wv[o * 2 + 1] * xv[9 + p];
      want_y[o * 9 + p] =
          (want_c[o * 9 + p] > 0 ? want_c[o * 9 + p] : 0) + x2v[o * 9 + p];
    }
  int devices = dg_context_device_count(ctx);
  for (int dev = 0; dev < devices; dev++) {
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    dg_compile_options co = {
        .policy = DG_POLICY_STRICT, .devices = &dev, .device_count = 1};
    dg_session *s = NULL;
    dg_diagnostic d;
    dg_status st = dg_graph_compile(g, &co, &s, &d);
    if (st == DG_ERROR_UNSUPPORTED) {
      printf("skipped: long names on device %d (%s): %s\n", dev, info.name,
             d.message);
      continue;
    }
    if (st != DG_OK) {
      CHECK(0, "long names compile on device %d (%s): %s", dev, info.name,
            d.message);
      continue;
    }
    float gc[18] = {0}, gy[18] = {0};
    dg_binding in[2] = {{x2n, x2v, sizeof x2v}, {xn, xv, sizeof xv}};
    dg_binding out[2] = {{ybn, gy, sizeof gy}, {yan, gc, sizeof gc}};
    st = dg_session_run(s, in, 2, out, 2, &d);
    float err = 0;
    for (int i = 0; i < 18; i++) {
      float a = gc[i] - want_c[i], b = gy[i] - want_y[i];
      err = fmaxf(err, fmaxf(fabsf(a), fabsf(b)));
    }
    CHECK(st == DG_OK && err < 1e-3f,
          "device %d (%s): runs bound by the long names, each output where "
          "its name says (max error %g%s%s)",
          dev, info.name, err, st ? ": " : "", st ? d.message : "");
    dg_binding bad = {cut, xv, sizeof xv};
    in[1] = bad;
    st = dg_session_run(s, in, 2, out, 2, &d);
    CHECK(st == DG_ERROR_NOT_FOUND && strstr(d.message, "...") &&
              strstr(d.message, "no input of this name"),
          "device %d: an input bound by the first 100 bytes of its name is "
          "not found; the message shortens it visibly and says why: %s",
          dev, d.message);
    dg_io_info si;
    CHECK(dg_session_input_info(s, 1, &si) == DG_OK && !strcmp(si.name, x2n),
          "device %d: session io info gives the long name whole", dev);
    const dg_plan *p = dg_session_plan(s);
    dg_plan_node pn[3];
    int plan_ok = dg_plan_node_count(p) == 3;
    for (int i = 0; plan_ok && i < 3; i++)
      plan_ok =
          dg_plan_get_node(p, i, &pn[i]) == DG_OK && pn[i].node_index == i;
    CHECK(plan_ok && shortened_from(pn[0].node_name, cn) &&
              shortened_from(pn[1].node_name, rn) &&
              shortened_from(pn[2].node_name, an) &&
              strlen(pn[0].node_name) == sizeof pn[0].node_name - 1,
          "device %d: plan nodes carry their names shortened visibly (%s)", dev,
          plan_ok ? pn[0].node_name : "no plan");
    char *table = plan_text(p, DG_PLAN_FORMAT_TABLE);
    char *dot = plan_text(p, DG_PLAN_FORMAT_DOT);
    CHECK(table && strstr(table, cn) && strstr(table, rn) &&
              strstr(table, an) && dot && strstr(dot, cn) && strstr(dot, rn) &&
              strstr(dot, an),
          "device %d: the plan table and the DOT graph give nodes their "
          "whole names (%zu-byte names)",
          dev, strlen(cn));
    free(table);
    free(dot);
    dg_verify_report r;
    in[1] = (dg_binding){xn, xv, sizeof xv};
    st = dg_session_verify(s, in, 2, &r);
    /* The names share their first 316 bytes: every display copy is the
     * same. */
    CHECK(st == DG_OK && r.ok && r.nodes_checked == 3 &&
              shortened_from(r.node_name, cn),
          "device %d: verify runs by the long names; the report's node name "
          "is shortened visibly (%s)",
          dev, r.node_name);
    dg_session_destroy(s);
  }
  { /* DG_TEST_CORRUPT_NODE matches the whole name on the CPU */
    int cpu = 0;
    dg_compile_options co = {.devices = &cpu, .device_count = 1};
    setenv("DG_TEST_CORRUPT_NODE", rn, 1); /* read by verify's compile */
    dg_session *s = NULL;
    dg_status st = dg_graph_compile(g, &co, &s, NULL);
    dg_binding in[2] = {{xn, xv, sizeof xv}, {x2n, x2v, sizeof x2v}};
    dg_verify_report r = {0};
    dg_status vs = st == DG_OK ? dg_session_verify(s, in, 2, &r) : st;
    unsetenv("DG_TEST_CORRUPT_NODE");
    CHECK(vs == DG_ERROR_MISMATCH && r.node_index == 1 &&
              shortened_from(r.node_name, rn),
          "DG_TEST_CORRUPT_NODE set to a 320-byte name damages that node, "
          "and verify names it: node %d '%s'",
          r.node_index, r.node_name);
    dg_session_destroy(s);
  }
  /* Duplicates are told apart by the whole name. */
  dg_graph_output(g, ybn, c, DG_LAYOUT_NCHW);
  e = dg_graph_error(g);
  CHECK(e && e->status == DG_ERROR_INVALID_ARGUMENT &&
            !strcmp(e->field, "name") && shortened_from(e->actual, ybn) &&
            strstr(e->message, "exists"),
        "a second output of the same 300-byte name is refused, the "
        "diagnostic shows the name shortened visibly: %s",
        e ? e->message : "no error");
  dg_graph_destroy(g);

  /* A failing node with a long name: its diagnostic shows the name
   * shortened visibly, its index, and the whole reason. */
  g = dg_graph_create(ctx, gname);
  x = dg_graph_input(g, xn, &xd);
  dg_graph_relu(g, rn, x);
  dg_graph_add(g, an, x, DG_TENSOR_NONE);
  e = dg_graph_error(g);
  char where[96];
  snprintf(where, sizeof where, "node 1 '%s' (binary)", e ? e->node_name : "");
  CHECK(e && e->node_index == 1 && shortened_from(e->node_name, an) &&
            !strcmp(e->op, "binary") && strstr(e->message, where) &&
            strstr(e->message, "tensor is missing"),
        "a long-named node's diagnostic gives index, shortened name, op and "
        "reason: %s",
        e ? e->message : "no error");
  dg_graph_destroy(g);

  /* Empty names for inputs and outputs are still refused, clearly. */
  g = dg_graph_create(ctx, "t");
  dg_graph_input(g, "", &xd);
  e = dg_graph_error(g);
  CHECK(e && e->status == DG_ERROR_INVALID_ARGUMENT &&
            !strcmp(e->field, "name") && strstr(e->message, "empty"),
        "an empty input name is refused: %s", e ? e->message : "no error");
  dg_graph_destroy(g);
  g = dg_graph_create(ctx, "t");
  x = dg_graph_input(g, "x", &xd);
  dg_status st = dg_graph_output(g, NULL, x, DG_LAYOUT_NCHW);
  e = dg_graph_error(g);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && e && strstr(e->message, "NULL"),
        "a NULL output name is refused: %s", e ? e->message : "no error");
  dg_graph_destroy(g);
done:
  free(gname), free(xn), free(x2n), free(wn), free(cn), free(rn), free(an),
      free(yan), free(ybn);
}

/* Issue 18's probes: sizes that overflowed or truncated, requantisation
 * multipliers that are inf or 0. */
static void test_sizes_and_scales(void) {
  static const int64_t big[2] = {INT64_C(1) << 31, (INT64_C(1) << 32) + 3};
  for (int i = 0; i < 2; i++) {
    dg_graph *g = dg_graph_create(ctx, "t");
    dg_tensor_desc xd = f32(4, 1, 1, big[i], 1);
    dg_tensor_desc wd = f32(4, 1, 1, big[i], 1);
    dg_tensor x = dg_graph_input(g, "x", &xd);
    dg_tensor w = dg_graph_input(g, "w", &wd);
    dg_conv2d_params p = {0};
    dg_graph_conv2d(g, "c", x, w, DG_TENSOR_NONE, &p);
    expect(g,
           i ? "conv kernel of 2^32 + 3 rows (was cut to 3)"
             : "conv kernel of 2^31 rows (overflowed an int)",
           DG_ERROR_INVALID_SHAPE, "w.dims[2]", 0);
    dg_graph_destroy(g);
  }
  {
    dg_graph *g = dg_graph_create(ctx, "t");
    dg_tensor_desc xd = {.dtype = DG_DTYPE_F32,
                         .rank = 2,
                         .dims = {INT64_C(1) << 20, INT64_C(1) << 20}};
    dg_tensor x = dg_graph_input(g, "x", &xd);
    int64_t to[2] = {INT64_C(1) << 40, INT64_C(1) << 40};
    dg_graph_reshape(g, "r", x, 2, to);
    expect(g, "reshape of 2^40 elements to [2^40, 2^40] (overflowed int64)",
           DG_ERROR_INVALID_SHAPE, "dims", 0);
    dg_graph_destroy(g);
  }
  { /* SAME padding of a kernel dilated past 2^33: pads beyond int32 */
    dg_graph *g = dg_graph_create(ctx, "t");
    dg_tensor_desc xd = f32(4, 1, 1, 8, 8), wd = f32(4, 1, 1, 5, 5);
    dg_tensor x = dg_graph_input(g, "x", &xd);
    dg_tensor w = dg_graph_input(g, "w", &wd);
    dg_conv2d_params p = {.padding = DG_PADDING_SAME_UPPER,
                          .dilation = {INT32_MAX, 1}};
    dg_graph_conv2d(g, "c", x, w, DG_TENSOR_NONE, &p);
    expect(g, "SAME pads of a kernel dilated to 2^33 (cut to int32 before)",
           DG_ERROR_INVALID_SHAPE, "x.dims[2]", 0);
    dg_graph_destroy(g);
  }
  /* x.scale * w.scale / y.scale: inf, 0, a denormal; then a usable one. */
  static const float sx[4] = {1e30f, 1e-30f, 1e-20f, 0.1f};
  static const float sy[4] = {1e-30f, 1e30f, 1.0f, 0.2f};
  for (int i = 0; i < 4; i++) {
    dg_graph *g = dg_graph_create(ctx, "t");
    dg_tensor_desc xd = {.dtype = DG_DTYPE_U8,
                         .rank = 4,
                         .dims = {1, 2, 5, 5},
                         .quant = {.scale = sx[i], .zero_point = 128}};
    dg_tensor_desc wd = {.dtype = DG_DTYPE_I8,
                         .rank = 4,
                         .dims = {3, 2, 3, 3},
                         .quant = {.scale = sx[i]}};
    dg_tensor x = dg_graph_input(g, "x", &xd);
    dg_tensor w = dg_graph_constant(g, "w", &wd, zeros, 0);
    dg_conv2d_params p = {0};
    dg_quant_params yq = {.scale = sy[i], .zero_point = 0};
    dg_tensor y =
        dg_graph_qconv2d(g, "qc", x, w, DG_TENSOR_NONE, &p, DG_DTYPE_I8, &yq);
    if (i < 3)
      expect(g,
             i == 0   ? "qconv multiplier inf"
             : i == 1 ? "qconv multiplier 0"
                      : "qconv multiplier denormal",
             DG_ERROR_INVALID_ARGUMENT, "y_quant.scale", 0);
    else
      CHECK(y.id && dg_graph_status(g) == DG_OK,
            "qconv multiplier 0.025 accepted");
    dg_graph_destroy(g);
  }
  {
    dg_graph *g = dg_graph_create(ctx, "t");
    dg_tensor_desc xd = {.dtype = DG_DTYPE_I8,
                         .rank = 2,
                         .dims = {1, 8},
                         .quant = {.scale = 1e30f}};
    dg_tensor_desc wd = {.dtype = DG_DTYPE_I8,
                         .rank = 2,
                         .dims = {4, 8},
                         .quant = {.scale = 1e30f}};
    dg_tensor x = dg_graph_input(g, "x", &xd);
    dg_tensor w = dg_graph_constant(g, "w", &wd, zeros, 0);
    dg_quant_params yq = {.scale = 1e-30f};
    dg_graph_qfully_connected(g, "fc", x, w, DG_TENSOR_NONE, DG_ACTIVATION_NONE,
                              DG_DTYPE_I8, &yq);
    expect(g, "qfully_connected multiplier inf", DG_ERROR_INVALID_ARGUMENT,
           "y_quant.scale", 0);
    dg_graph_destroy(g);
    g = dg_graph_create(ctx, "t");
    wd.dims[0] = 8, wd.dims[1] = 4;
    x = dg_graph_input(g, "x", &xd);
    w = dg_graph_constant(g, "w", &wd, zeros, 0);
    dg_graph_qmatmul(g, "mm", x, w, DG_DTYPE_I8, &yq);
    expect(g, "qmatmul multiplier inf", DG_ERROR_INVALID_ARGUMENT,
           "y_quant.scale", 0);
    dg_graph_destroy(g);
  }
}

int main(void) {
  if (dg_context_create(NULL, &ctx) != DG_OK) {
    CHECK(0, "context");
    return 1;
  }
  CHECK(dg_context_create(NULL, NULL) == DG_ERROR_INVALID_ARGUMENT,
        "context_create(NULL out)");
  {
    dg_context *c2 = (dg_context *)1;
    dg_context_options o = {.cpu_threads = -1};
    CHECK(dg_context_create(&o, &c2) == DG_ERROR_INVALID_ARGUMENT && !c2,
          "negative cpu_threads rejected, out set to NULL");
    o = (dg_context_options){.device_kinds = 0x100};
    CHECK(dg_context_create(&o, &c2) == DG_ERROR_INVALID_ARGUMENT,
          "unknown device kind bit rejected");
    o = (dg_context_options){.device_timeout_ms = -1};
    CHECK(dg_context_create(&o, &c2) == DG_ERROR_INVALID_ARGUMENT && !c2,
          "negative device_timeout_ms rejected");
  }
  CHECK(dg_graph_create(NULL, "x") == NULL, "graph_create(NULL ctx)");
  test_sizes_and_scales();

  /* conv parameters */
  conv_case("negative stride", (dg_conv2d_params){.stride = {-1, 1}},
            DG_ERROR_INVALID_ARGUMENT, "params.stride");
  conv_case("negative dilation", (dg_conv2d_params){.dilation = {1, -2}},
            DG_ERROR_INVALID_ARGUMENT, "params.dilation");
  conv_case("negative pad", (dg_conv2d_params){.pads = {0, 0, -1, 0}},
            DG_ERROR_INVALID_ARGUMENT, "params.pads");
  conv_case("bad padding enum", (dg_conv2d_params){.padding = 9},
            DG_ERROR_INVALID_ARGUMENT, "params.padding");
  conv_case("bad activation", (dg_conv2d_params){.activation = 7},
            DG_ERROR_INVALID_ARGUMENT, "params.activation");
  conv_case("groups not dividing", (dg_conv2d_params){.groups = 3},
            DG_ERROR_INVALID_ARGUMENT, "params.groups");
  conv_case("groups mismatching w", (dg_conv2d_params){.groups = 2},
            DG_ERROR_INVALID_SHAPE, "w.dims[1]");
  conv_case("negative groups", (dg_conv2d_params){.groups = -1},
            DG_ERROR_INVALID_ARGUMENT, "params.groups");
  conv_case("kernel larger than input", (dg_conv2d_params){.dilation = {5, 1}},
            DG_ERROR_INVALID_SHAPE, "x.dims[2]");
  {
    dg_tensor x, w;
    dg_graph *g = conv_graph(&x, &w);
    dg_tensor y = dg_graph_conv2d(g, "c", x, w, DG_TENSOR_NONE, NULL);
    CHECK(!y.id, "NULL conv params returns no tensor");
    expect(g, "NULL conv params", DG_ERROR_INVALID_ARGUMENT, "params", 0);
    dg_graph_destroy(g);
  }
  { /* wrong dtypes and ranks */
    dg_tensor x, w;
    dg_graph *g = conv_graph(&x, &w);
    dg_tensor_desc bd = f32(1, 5, 0, 0, 0);
    dg_tensor b = dg_graph_constant(g, "b", &bd, zeros, 0);
    dg_conv2d_params p = {0};
    dg_graph_conv2d(g, "c", x, w, b, &p);
    expect(g, "bias of wrong length", DG_ERROR_INVALID_SHAPE, "bias", 0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    dg_tensor_desc xd = f32(3, 4, 8, 8, 0);
    x = dg_graph_input(g, "x", &xd);
    dg_tensor_desc wd = f32(4, 6, 4, 3, 3);
    w = dg_graph_constant(g, "w", &wd, zeros, 0);
    dg_graph_conv2d(g, "c", x, w, DG_TENSOR_NONE, &p);
    expect(g, "rank-3 conv input", DG_ERROR_INVALID_SHAPE, "x", 0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    dg_tensor_desc xi = {
        .dtype = DG_DTYPE_I32, .rank = 4, .dims = {1, 4, 8, 8}};
    x = dg_graph_input(g, "x", &xi);
    w = dg_graph_constant(g, "w", &wd, zeros, 0);
    dg_graph_conv2d(g, "c", x, w, DG_TENSOR_NONE, &p);
    expect(g, "i32 conv input", DG_ERROR_INVALID_DTYPE, "x", 0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    dg_tensor_desc xh = f32(4, 1, 4, 8, 8);
    xh.dtype = DG_DTYPE_F16;
    x = dg_graph_input(g, "x", &xh);
    w = dg_graph_constant(g, "w", &wd, zeros, 0);
    dg_graph_conv2d(g, "c", x, w, DG_TENSOR_NONE, &p);
    expect(g, "f16 x with f32 w", DG_ERROR_INVALID_DTYPE, "w", 0);
    dg_graph_destroy(g);
  }
  { /* descriptors: zero-sized, overflow, bad rank, bad dtype, NULLs */
    dg_graph *g = dg_graph_create(ctx, "t");
    dg_tensor_desc d = f32(2, 3, 0, 0, 0);
    CHECK(!dg_graph_input(g, "x", &d).id, "zero-sized dim returns no tensor");
    expect(g, "zero-sized dim", DG_ERROR_INVALID_SHAPE, "desc.dims[1]", -1);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    d = f32(4, 1 << 20, 1 << 20, 1 << 20, 1);
    dg_graph_input(g, "x", &d);
    expect(g, "overflowing size", DG_ERROR_OVERFLOW, "desc.dims", -1);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    d = f32(7, 1, 1, 1, 1);
    dg_graph_input(g, "x", &d);
    expect(g, "rank 7", DG_ERROR_INVALID_SHAPE, "desc.rank", -1);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    d = f32(1, 4, 0, 0, 0);
    d.dtype = 42;
    dg_graph_input(g, "x", &d);
    expect(g, "unknown dtype", DG_ERROR_INVALID_DTYPE, "desc.dtype", -1);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    dg_graph_input(g, "x", NULL);
    expect(g, "NULL descriptor", DG_ERROR_INVALID_ARGUMENT, "desc", -1);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    d = f32(1, 4, 0, 0, 0);
    dg_graph_constant(g, "w", &d, NULL, 0);
    expect(g, "NULL constant data", DG_ERROR_INVALID_ARGUMENT, "data", -1);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    dg_graph_constant(g, "w", &d, zeros, 8);
    expect(g, "unknown constant flag", DG_ERROR_INVALID_ARGUMENT, "flags", -1);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    dg_graph_input(g, NULL, &d);
    expect(g, "NULL input name", DG_ERROR_INVALID_ARGUMENT, "name", -1);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    dg_graph_input(g, "x", &d);
    dg_graph_input(g, "x", &d);
    expect(g, "duplicate input name", DG_ERROR_INVALID_ARGUMENT, "name", -1);
    dg_graph_destroy(g);
  }
  { /* quantisation parameters */
    dg_graph *g = dg_graph_create(ctx, "t");
    dg_tensor_desc q = {
        .dtype = DG_DTYPE_I8, .rank = 1, .dims = {4}, .quant = {.scale = 0}};
    dg_graph_input(g, "x", &q);
    expect(g, "zero scale", DG_ERROR_INVALID_ARGUMENT, "desc.quant.scale", -1);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    q.quant = (dg_quant_params){.scale = 1, .zero_point = 300};
    dg_graph_input(g, "x", &q);
    expect(g, "i8 zero point 300", DG_ERROR_INVALID_ARGUMENT,
           "desc.quant.zero_point", -1);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    float sc[3] = {1, 1, 1};
    q.quant =
        (dg_quant_params){.axis = 0, .channel_count = 3, .channel_scales = sc};
    dg_graph_constant(g, "w", &q, zeros, 0);
    expect(g, "channel count != dim", DG_ERROR_INVALID_SHAPE,
           "desc.quant.channel_count", -1);
    dg_graph_destroy(g);
  }
  { /* quantised conv: per-channel x, bad y */
    dg_graph *g = dg_graph_create(ctx, "t");
    dg_tensor_desc xd = {.dtype = DG_DTYPE_U8,
                         .rank = 4,
                         .dims = {1, 2, 5, 5},
                         .quant = {.scale = 0.1f, .zero_point = 128}};
    dg_tensor_desc wd = {.dtype = DG_DTYPE_I8,
                         .rank = 4,
                         .dims = {3, 2, 3, 3},
                         .quant = {.scale = 0.05f}};
    dg_tensor x = dg_graph_input(g, "x", &xd);
    dg_tensor w = dg_graph_constant(g, "w", &wd, zeros, 0);
    dg_conv2d_params p = {0};
    dg_quant_params yq = {.scale = 0.2f, .zero_point = 0};
    dg_graph_qconv2d(g, "qc", x, w, DG_TENSOR_NONE, &p, DG_DTYPE_F32, &yq);
    expect(g, "qconv f32 output", DG_ERROR_INVALID_DTYPE, "y_dtype", 0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    x = dg_graph_input(g, "x", &xd);
    w = dg_graph_constant(g, "w", &wd, zeros, 0);
    dg_graph_qconv2d(g, "qc", x, w, DG_TENSOR_NONE, &p, DG_DTYPE_I8, NULL);
    expect(g, "qconv NULL y_quant", DG_ERROR_INVALID_ARGUMENT, "y_quant", 0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    x = dg_graph_input(g, "x", &xd);
    w = dg_graph_constant(g, "w", &wd, zeros, 0);
    dg_tensor_desc bd = f32(1, 3, 0, 0, 0);
    dg_tensor b = dg_graph_constant(g, "b", &bd, zeros, 0);
    dg_graph_qconv2d(g, "qc", x, w, b, &p, DG_DTYPE_I8, &yq);
    expect(g, "qconv f32 bias", DG_ERROR_INVALID_DTYPE, "bias", 0);
    dg_graph_destroy(g);
  }
  { /* pooling */
    dg_graph *g = dg_graph_create(ctx, "t");
    dg_tensor_desc xd = f32(4, 1, 2, 4, 4);
    dg_tensor x = dg_graph_input(g, "x", &xd);
    dg_pool2d_params pp = {0};
    dg_graph_max_pool2d(g, "p", x, &pp);
    expect(g, "pool without kernel", DG_ERROR_INVALID_ARGUMENT, "params.kernel",
           0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    x = dg_graph_input(g, "x", &xd);
    pp = (dg_pool2d_params){.kernel = {5, 5}};
    dg_graph_avg_pool2d(g, "p", x, &pp);
    expect(g, "pool window larger than input", DG_ERROR_INVALID_SHAPE,
           "x.dims[2]", 0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    x = dg_graph_input(g, "x", &xd);
    pp = (dg_pool2d_params){.kernel = {2, 2}, .pads = {2, 0, 0, 0}};
    dg_graph_max_pool2d(g, "p", x, &pp);
    expect(g, "pool pad >= kernel", DG_ERROR_INVALID_ARGUMENT, "params.pads",
           0);
    dg_graph_destroy(g);
  }
  { /* fully connected, matmul, add, softmax, clip, reshape, concat */
    dg_graph *g = dg_graph_create(ctx, "t");
    dg_tensor_desc xd = f32(2, 2, 8, 0, 0), wd = f32(2, 4, 7, 0, 0);
    dg_tensor x = dg_graph_input(g, "x", &xd);
    dg_tensor w = dg_graph_constant(g, "w", &wd, zeros, 0);
    dg_graph_fully_connected(g, "fc", x, w, DG_TENSOR_NONE, 0);
    expect(g, "fc K mismatch", DG_ERROR_INVALID_SHAPE, "w.dims[1]", 0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    dg_tensor_desc ad = f32(3, 2, 3, 4, 0), bd = f32(3, 3, 4, 5, 0);
    dg_tensor a = dg_graph_input(g, "a", &ad);
    dg_tensor b = dg_graph_input(g, "b", &bd);
    dg_graph_matmul(g, "mm", a, b);
    expect(g, "matmul batch mismatch", DG_ERROR_INVALID_SHAPE, "b", 0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    ad = f32(2, 3, 4, 0, 0);
    bd = f32(2, 2, 4, 0, 0);
    a = dg_graph_input(g, "a", &ad);
    b = dg_graph_input(g, "b", &bd);
    dg_graph_add(g, "add", a, b);
    expect(g, "add shapes not broadcastable", DG_ERROR_INVALID_SHAPE, "b", 0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    a = dg_graph_input(g, "a", &ad);
    dg_graph_softmax(g, "sm", a, 2);
    expect(g, "softmax axis 2 of rank 2", DG_ERROR_INVALID_ARGUMENT, "axis", 0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    a = dg_graph_input(g, "a", &ad);
    dg_graph_clip(g, "clip", a, 1.0f, -1.0f);
    expect(g, "clip lo > hi", DG_ERROR_INVALID_ARGUMENT, "lo", 0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    dg_tensor_desc qd = {
        .dtype = DG_DTYPE_I8, .rank = 1, .dims = {4}, .quant = {.scale = 0.5f}};
    dg_graph_sigmoid(g, "sig", dg_graph_input(g, "q", &qd));
    expect(g, "sigmoid of i8", DG_ERROR_INVALID_DTYPE, "x", 0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    dg_graph_sigmoid(g, "sig", (dg_tensor){.id = 77});
    expect(g, "sigmoid of a tensor not in the graph", DG_ERROR_INVALID_ARGUMENT,
           "x", 0);
    CHECK(dg_graph_sigmoid(NULL, "sig", a).id == 0,
          "sigmoid on a NULL graph returns no tensor");
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    a = dg_graph_input(g, "a", &ad);
    int64_t dims[2] = {5, -1};
    dg_graph_reshape(g, "r", a, 2, dims);
    expect(g, "reshape 12 elements to [5,-1]", DG_ERROR_INVALID_SHAPE, "dims",
           0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    a = dg_graph_input(g, "a", &ad);
    int64_t dims2[2] = {-1, -1};
    dg_graph_reshape(g, "r", a, 2, dims2);
    expect(g, "reshape with two -1", DG_ERROR_INVALID_SHAPE, "dims", 0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    a = dg_graph_input(g, "a", &ad);
    b = dg_graph_input(g, "b", &bd);
    dg_tensor ts[2] = {a, b};
    dg_graph_concat(g, "cat", ts, 2, 1);
    expect(g, "concat dims differ off-axis", DG_ERROR_INVALID_SHAPE,
           "tensors[1]", 0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    dg_graph_concat(g, "cat", NULL, 0, 0);
    expect(g, "concat of nothing", DG_ERROR_INVALID_ARGUMENT, "tensors", 0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    a = dg_graph_input(g, "a", &ad);
    dg_graph_quantize(g, "q", a, DG_DTYPE_F16, &(dg_quant_params){.scale = 1});
    expect(g, "quantize to f16", DG_ERROR_INVALID_DTYPE, "dtype", 0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    a = dg_graph_input(g, "a", &ad);
    dg_graph_dequantize(g, "dq", a);
    expect(g, "dequantize f32", DG_ERROR_INVALID_DTYPE, "x", 0);
    dg_graph_destroy(g);
  }
  { /* handles: foreign, missing; sticky error; use after failure */
    dg_graph *g = dg_graph_create(ctx, "t");
    dg_tensor_desc ad = f32(2, 3, 4, 0, 0);
    dg_tensor a = dg_graph_input(g, "a", &ad);
    /* Issue 18's probe: a handle of another graph whose id exists here
     * was taken for this graph's tensor. */
    dg_graph *other = dg_graph_create(ctx, "other");
    dg_tensor b = dg_graph_input(other, "b", &ad);
    dg_tensor r0 = dg_graph_relu(g, "r0", b);
    CHECK(b.id == a.id && !r0.id &&
              dg_graph_status(g) == DG_ERROR_INVALID_ARGUMENT &&
              strstr(dg_graph_error(g)->message, "another graph"),
          "a handle of another graph with an id this graph has is refused "
          "(%s)",
          dg_graph_error(g) ? dg_graph_error(g)->message : "accepted");
    dg_tensor_desc od;
    CHECK(dg_graph_tensor_desc(g, b, &od) == DG_ERROR_INVALID_ARGUMENT,
          "and dg_graph_tensor_desc refuses it too");
    dg_graph_destroy(other);
    dg_graph_destroy(g);
    g = dg_graph_create(ctx, "t");
    a = dg_graph_input(g, "a", &ad);
    dg_graph_relu(g, "r", (dg_tensor){.id = 99});
    expect(g, "foreign tensor handle", DG_ERROR_INVALID_ARGUMENT, "x", 0);
    dg_diagnostic first = *dg_graph_error(g);
    dg_tensor r = dg_graph_relu(g, "r2", a);
    CHECK(!r.id, "calls after failure return no tensor");
    CHECK(!strcmp(dg_graph_error(g)->message, first.message),
          "the first error sticks");
    CHECK(dg_graph_output(g, "y", a, DG_LAYOUT_NCHW) == DG_ERROR_GRAPH_FAILED,
          "output on a failed graph says graph failed");
    dg_session *s = (dg_session *)1;
    dg_diagnostic d;
    CHECK(dg_graph_compile(g, NULL, &s, &d) == DG_ERROR_GRAPH_FAILED && !s &&
              strstr(d.message, "foreign") == NULL &&
              d.status == DG_ERROR_GRAPH_FAILED,
          "compile of a failed graph fails, with the graph's diagnostic");
    CHECK(dg_graph_node_count(g) == 0, "failed calls add no node");
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    a = dg_graph_input(g, "a", &ad);
    dg_graph_add(g, "add", a, DG_TENSOR_NONE);
    expect(g, "missing operand", DG_ERROR_INVALID_ARGUMENT, "b", 0);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    a = dg_graph_input(g, "a", &ad);
    dg_graph_relu(g, "r", a);
    dg_graph_relu(g, "r", (dg_tensor){0});
    expect(g, "second node's error names node 1", DG_ERROR_INVALID_ARGUMENT,
           "x", 1);
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    a = dg_graph_input(g, "a", &ad);
    CHECK(dg_graph_output(g, "y", a, DG_LAYOUT_NHWC) != DG_OK,
          "NHWC output of a rank-2 tensor is refused");
    dg_graph_destroy(g);

    g = dg_graph_create(ctx, "t");
    a = dg_graph_input(g, "a", &ad);
    CHECK(dg_graph_compile(g, NULL, &s, &d) == DG_ERROR_INVALID_ARGUMENT &&
              strstr(d.message, "no output"),
          "compile of a graph without outputs says so");
    CHECK(dg_graph_set_device(g, 99) == DG_ERROR_NOT_FOUND,
          "pinning to a device that does not exist");
    dg_graph_destroy(g);
  }
  { /* Long chains of ops whose output descriptor is their input's: the
     * tensor array grows under them (the ASan run checks no stale read;
     * found by the ONNX fuzzer). */
    dg_graph *g = dg_graph_create(ctx, "chain");
    dg_tensor_desc d = f32(2, 3, 5, 0, 0);
    dg_tensor t = dg_graph_input(g, "x", &d);
    for (int i = 0; i < 300; i++)
      t = i % 3 == 0   ? dg_graph_relu(g, NULL, t)
          : i % 3 == 1 ? dg_graph_softmax(g, NULL, t, -1)
                       : dg_graph_clip(g, NULL, t, -1, 1);
    dg_tensor_desc out;
    CHECK(dg_graph_status(g) == DG_OK &&
              dg_graph_tensor_desc(g, t, &out) == DG_OK && out.rank == 2 &&
              out.dims[0] == 3 && out.dims[1] == 5 &&
              dg_graph_node_count(g) == 300,
          "300 chained unary ops keep their shapes while the graph grows");
    dg_graph_destroy(g);
  }
  test_long_names();
  /* NULL handles everywhere are safe. */
  dg_graph_destroy(NULL);
  dg_session_destroy(NULL);
  dg_context_destroy(NULL);
  CHECK(dg_graph_relu(NULL, "r", (dg_tensor){.id = 1}).id == 0,
        "builder call on a NULL graph");
  CHECK(dg_graph_status(NULL) == DG_ERROR_INVALID_ARGUMENT,
        "status of a NULL graph");
  CHECK(dg_session_run(NULL, NULL, 0, NULL, 0, NULL) ==
            DG_ERROR_INVALID_ARGUMENT,
        "run of a NULL session");
  CHECK(dg_plan_write(NULL, DG_PLAN_FORMAT_TABLE, stdout) ==
            DG_ERROR_INVALID_ARGUMENT,
        "plan_write of a NULL plan");
  dg_context_destroy(ctx);
  return t_exit();
}
