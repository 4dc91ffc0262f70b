/* The int8 golden vectors (tests/golden/int8, written once by an independent
 * numpy implementation of the numerics contract) reproduced bit for bit on
 * every device. A change that alters any int8 result fails here.
 *
 * The cases of the ops beyond convolution (qbinary, qunary, requantize,
 * lookup, qavg_pool2d, qglobal_avg_pool, qconcat) were added later; a GPU
 * target that declines one of those is reported as skipped, with its
 * reason, never as passed. */
#include "common/npy.h"
#include "graph.h"
#include "harness.h"

#include <stdbool.h>
#include <string.h>

static const char *const cases[] = {
    "conv_3x3_u8_pertensor", "conv_3x3_i8_perchannel_relu",
    "conv_5x5_dil2_relu6", "conv_dw_3x3", "conv_group2_1x1", "conv_1x1_deep",
    "fc_i8_perchannel", "fc_u8_pertensor", "matmul_i8", "matmul_u8_percolumn",
    "quantize_i8", "quantize_u8",
    /* int8 elementwise, lookup and pooling */
    "qadd_i8_same_shape", "qadd_u8_i8_channel", "qadd_both_sides_saturating",
    "qsub_i8_u8_last_dim", "qsub_u8_saturating", "qmul_u8_scalar",
    "qmul_i8_saturating", "qmul_scalar_first", "qunary_sigmoid_u8",
    "qunary_sigmoid_i8", "qunary_hard_swish_i8", "qunary_hard_sigmoid_i8_u8",
    "qunary_tanh_u8_i8", "qunary_relu_i8_u8", "qunary_leaky_relu_u8",
    "requantize_i8_u8", "requantize_u8_i8", "lookup_i8_u8_table",
    "qavg_3x3_s2_p1_i8", "qavg_2x2_ceil_include_pad_u8",
    "qavg_3x2_dilated_u8_i8", "qavg_5x5_saturating_i8_u8", "qglobal_1x1",
    "qglobal_7x7", "qglobal_56x56", "qconcat_three_axis1",
    "qconcat_two_last_axis", "qavg_3x3_ceil_overhang_include_pad"};

enum { MAX_IN = 8 };

typedef struct params {
  char op[32], fn[32], x_dtype[4], w_dtype[4], y_dtype[4], a_dtype[4],
      b_dtype[4];
  int stride, pad, dilation, groups, activation, x_zero, w_zero, y_zero;
  float x_scale, y_scale;
  /* qbinary's operands; qunary's parameters */
  int a_zero, b_zero;
  float a_scale, b_scale, alpha, beta;
  /* qavg_pool2d */
  int kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_t,
      pad_l, pad_b, pad_r, ceil_mode, count_include_pad;
  /* qconcat: count inputs x0.. with their own quantisations */
  int count, axis;
  char xi_dtype[MAX_IN][4];
  int xi_zero[MAX_IN];
  float xi_scale[MAX_IN];
} params;

static dg_dtype dtype_of(const char *s) {
  return !strcmp(s, "i8") ? DG_DTYPE_I8 : DG_DTYPE_U8;
}

static void copy_str(char *dst, size_t size, const char *src) {
  size_t n = strlen(src);
  n = n < size ? n : size - 1;
  memcpy(dst, src, n);
  dst[n] = 0;
}

static int load_params(const char *dir, params *p) {
  char path[1024], line[256];
  snprintf(path, sizeof path, "%s/params.txt", dir);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  memset(p, 0, sizeof *p);
  while (fgets(line, sizeof line, f)) {
    char k[64], v[64], sub[16];
    int i;
    if (sscanf(line, "%63[^=]=%63s", k, v) != 2)
      continue;
    if (sscanf(k, "x%d_%15s", &i, sub) == 2 && i >= 0 && i < MAX_IN) {
      if (!strcmp(sub, "dtype"))
        copy_str(p->xi_dtype[i], sizeof p->xi_dtype[i], v);
      else if (!strcmp(sub, "zero"))
        p->xi_zero[i] = atoi(v);
      else if (!strcmp(sub, "scale"))
        p->xi_scale[i] = strtof(v, NULL);
      continue;
    }
#define S(name) if (!strcmp(k, #name)) copy_str(p->name, sizeof p->name, v);
#define I(name) if (!strcmp(k, #name)) p->name = atoi(v);
#define F(name) if (!strcmp(k, #name)) p->name = strtof(v, NULL);
    /* clang-format off */
    S(op) S(x_dtype) S(w_dtype) S(y_dtype) I(stride) I(pad) I(dilation)
    I(groups) I(activation) I(x_zero) I(w_zero) I(y_zero) F(x_scale)
    F(y_scale)
    /* the ops beyond convolution */
    S(fn) S(a_dtype) S(b_dtype) I(a_zero) I(b_zero) F(a_scale) F(b_scale)
    F(alpha) F(beta) I(kernel_h) I(kernel_w) I(stride_h) I(stride_w)
    I(dilation_h) I(dilation_w) I(pad_t) I(pad_l) I(pad_b) I(pad_r)
    I(ceil_mode) I(count_include_pad) I(count) I(axis)
    /* clang-format on */
#undef S
#undef I
#undef F
  }
  fclose(f);
  return 0;
}

static int load(const char *dir, const char *name, npy_array *a) {
  char path[1024], err[256];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  return npy_load(path, a, err, sizeof err);
}

/* dg_unary_fn or dg_binary_fn by name, 0 when none has it. */
static int unary_fn_of(const char *s) {
  for (int fn = 1; fn < DG_UNARY_COUNT_; fn++)
    if (!strcmp(dg_unary_fn_name((dg_unary_fn)fn), s))
      return fn;
  return 0;
}
static int binary_fn_of(const char *s) {
  for (int fn = 1; fn < DG_BINARY_COUNT_; fn++)
    if (!strcmp(dg_binary_fn_name((dg_binary_fn)fn), s))
      return fn;
  return 0;
}

/* An input of the graph from in[*n] (loaded from dir/file.npy) with the
 * given quantisation, bound as file; DG_TENSOR_NONE if it is missing. */
static dg_tensor q_input(dg_graph *g, const char *dir, const char *file,
                         float scale, int zero, npy_array *in,
                         const char **names, int *n) {
  if (*n >= MAX_IN || load(dir, file, &in[*n]))
    return DG_TENSOR_NONE;
  dg_tensor_desc d = npy_desc(&in[*n]);
  d.quant = (dg_quant_params){.scale = scale, .zero_point = zero};
  names[*n] = file;
  dg_tensor t = dg_graph_input(g, file, &d);
  (*n)++;
  return t;
}

/* The graph of one case of the ops beyond convolution: its inputs into
 * in / names / *n, its output returned (none if a file is missing). */
static dg_tensor build_int8_op(dg_graph *g, const char *dir, const params *p,
                               npy_array *in, const char **names, int *n) {
  static char xnames[MAX_IN][8];
  dg_quant_params yq = {.scale = p->y_scale, .zero_point = p->y_zero};
  dg_dtype yt = dtype_of(p->y_dtype);
  dg_tensor x = DG_TENSOR_NONE;
  if (strcmp(p->op, "qbinary") && strcmp(p->op, "qconcat")) {
    x = q_input(g, dir, "x", p->x_scale, p->x_zero, in, names, n);
    if (!x.id)
      return x;
  }
  if (!strcmp(p->op, "qbinary")) {
    dg_tensor a = q_input(g, dir, "a", p->a_scale, p->a_zero, in, names, n);
    dg_tensor b = q_input(g, dir, "b", p->b_scale, p->b_zero, in, names, n);
    if (!a.id || !b.id)
      return DG_TENSOR_NONE;
    return dg_graph_qbinary(g, "op", (dg_binary_fn)binary_fn_of(p->fn), a, b,
                            yt, &yq);
  }
  if (!strcmp(p->op, "qunary"))
    return dg_graph_qunary(g, "op", (dg_unary_fn)unary_fn_of(p->fn), x,
                           p->alpha, p->beta, yt, &yq);
  if (!strcmp(p->op, "requantize"))
    return dg_graph_requantize(g, "op", x, yt, &yq);
  if (!strcmp(p->op, "lookup")) {
    npy_array t = {0};
    if (load(dir, "table", &t) || t.bytes != 256)
      return DG_TENSOR_NONE;
    dg_tensor y = dg_graph_lookup(g, "op", x, t.data, yt, &yq);
    npy_free(&t); /* copied into the graph */
    return y;
  }
  if (!strcmp(p->op, "qavg_pool2d")) {
    dg_pool2d_params pp = {.kernel = {p->kernel_h, p->kernel_w},
                           .stride = {p->stride_h, p->stride_w},
                           .dilation = {p->dilation_h, p->dilation_w},
                           .pads = {p->pad_t, p->pad_l, p->pad_b, p->pad_r},
                           .ceil_mode = p->ceil_mode,
                           .count_include_pad = p->count_include_pad};
    return dg_graph_qavg_pool2d(g, "op", x, &pp, yt, &yq);
  }
  if (!strcmp(p->op, "qglobal_avg_pool"))
    return dg_graph_qglobal_avg_pool(g, "op", x, yt, &yq);
  if (!strcmp(p->op, "qconcat") && p->count >= 1 && p->count <= MAX_IN) {
    dg_tensor t[MAX_IN];
    for (int i = 0; i < p->count; i++) {
      snprintf(xnames[i], sizeof xnames[i], "x%d", i);
      t[i] = q_input(g, dir, xnames[i], p->xi_scale[i], p->xi_zero[i], in,
                     names, n);
      if (!t[i].id)
        return DG_TENSOR_NONE;
    }
    return dg_graph_qconcat(g, "op", t, p->count, p->axis, yt, &yq);
  }
  return DG_TENSOR_NONE;
}

/* The ops that a GPU target may not run yet (reported as skipped). */
static bool may_decline(const params *p) {
  static const char *const ops[] = {
      "qbinary",     "qunary",           "requantize", "lookup",
      "qavg_pool2d", "qglobal_avg_pool", "qconcat"};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (!strcmp(p->op, ops[i]))
      return true;
  return false;
}

/* g's output "y" on every device, bit for bit against y; a device that
 * declines the graph (where declining is allowed) is skipped with its
 * reason. */
static void run_devices(dg_context *ctx, const char *name, dg_graph *g,
                        const dg_binding *in, int n_in, const npy_array *y,
                        bool declines) {
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    dg_compile_options o = {.devices = &dev, .device_count = 1};
    dg_session *s = NULL;
    dg_diagnostic d = {0};
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    void *got = calloc(1, y->bytes);
    dg_status st = dg_graph_compile(g, &o, &s, &d);
    if (st == DG_ERROR_UNSUPPORTED && declines && info.kind != DG_DEVICE_CPU) {
      char why[700];
      snprintf(why, sizeof why, "%s on device %d (%s): declined: %s", name, dev,
               info.name, d.message);
      t_skip(why);
      free(got);
      continue;
    }
    if (st == DG_OK)
      st =
          dg_session_run(s, in, n_in, &(dg_binding){"y", got, y->bytes}, 1, &d);
    size_t diff = 0;
    for (size_t i = 0; st == DG_OK && i < y->bytes; i++)
      diff += ((unsigned char *)got)[i] != ((unsigned char *)y->data)[i];
    CHECK(st == DG_OK && diff == 0,
          "%s on device %d: bit-exact (%zu of %zu bytes differ)%s%s", name, dev,
          diff, y->bytes, st ? ": " : "", st ? d.message : "");
    free(got);
    dg_session_destroy(s);
  }
}

/* A case of the ops beyond convolution. */
static void run_int8_op(dg_context *ctx, const char *name, const char *dir,
                        const params *p, const npy_array *y) {
  npy_array in[MAX_IN] = {0};
  const char *names[MAX_IN];
  int n = 0;
  dg_graph *g = dg_graph_create(ctx, name);
  dg_tensor out = build_int8_op(g, dir, p, in, names, &n);
  if (out.id)
    dg_graph_output(g, "y", out, DG_LAYOUT_NCHW);
  if (dg_graph_status(g) != DG_OK || !out.id) {
    CHECK(0, "%s: files present and the graph builds (%s)", name,
          dg_graph_status(g) ? dg_graph_error(g)->message : "a file missing");
  } else {
    dg_binding b[MAX_IN];
    for (int i = 0; i < n; i++)
      b[i] = (dg_binding){names[i], in[i].data, in[i].bytes};
    run_devices(ctx, name, g, b, n, y, true);
  }
  dg_graph_destroy(g);
  for (int i = 0; i < n; i++)
    npy_free(&in[i]);
}

static void run_case(dg_context *ctx, const char *name) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s/tests/golden/int8/%s", DG_SOURCE_DIR, name);
  params p;
  npy_array x = {0}, w = {0}, ws = {0}, b = {0}, y = {0};
  if (load_params(dir, &p) || load(dir, "y", &y)) {
    CHECK(0, "%s: golden files present", name);
    return;
  }
  if (may_decline(&p)) {
    run_int8_op(ctx, name, dir, &p, &y);
    npy_free(&y);
    return;
  }
  if (load(dir, "x", &x)) {
    CHECK(0, "%s: golden files present", name);
    npy_free(&y);
    return;
  }
  bool quantize = !strcmp(p.op, "quantize");
  if (!quantize && (load(dir, "w", &w) || load(dir, "w_scales", &ws))) {
    CHECK(0, "%s: weight files present", name);
    return;
  }
  bool has_bias = !quantize && load(dir, "b", &b) == 0;
  dg_graph *g = dg_graph_create(ctx, name);
  dg_tensor_desc xd = npy_desc(&x);
  dg_quant_params yq = {.scale = p.y_scale, .zero_point = p.y_zero};
  dg_dtype yt = dtype_of(p.y_dtype);
  dg_tensor out;
  if (quantize) {
    out = dg_graph_quantize(g, "op", dg_graph_input(g, "x", &xd), yt, &yq);
  } else {
    xd.quant = (dg_quant_params){.scale = p.x_scale, .zero_point = p.x_zero};
    dg_tensor_desc wd = npy_desc(&w);
    int32_t zeros[256];
    for (int i = 0; i < 256; i++)
      zeros[i] = p.w_zero;
    int channels = (int)ws.dims[0];
    bool matmul = !strcmp(p.op, "qmatmul");
    if (channels > 1)
      wd.quant = (dg_quant_params){.axis = matmul ? 1 : 0,
                                   .channel_count = channels,
                                   .channel_scales = ws.data,
                                   .channel_zero_points = zeros};
    else
      wd.quant = (dg_quant_params){.scale = ((float *)ws.data)[0],
                                   .zero_point = p.w_zero};
    dg_tensor xt = dg_graph_input(g, "x", &xd);
    dg_tensor wt = dg_graph_constant(g, "w", &wd, w.data, 0);
    dg_tensor bt = DG_TENSOR_NONE;
    if (has_bias) {
      dg_tensor_desc bd = npy_desc(&b);
      bt = dg_graph_constant(g, "b", &bd, b.data, 0);
    }
    if (!strcmp(p.op, "qconv2d")) {
      dg_conv2d_params cp = {
          .stride = {p.stride, p.stride}, .dilation = {p.dilation, p.dilation},
          .pads = {p.pad, p.pad, p.pad, p.pad}, .groups = p.groups,
          .activation = p.activation};
      out = dg_graph_qconv2d(g, "op", xt, wt, bt, &cp, yt, &yq);
    } else if (matmul) {
      out = dg_graph_qmatmul(g, "op", xt, wt, yt, &yq);
    } else {
      out = dg_graph_qfully_connected(g, "op", xt, wt, bt, p.activation, yt,
                                      &yq);
    }
  }
  dg_graph_output(g, "y", out, DG_LAYOUT_NCHW);
  if (dg_graph_status(g) != DG_OK)
    CHECK(0, "%s: builds (%s)", name, dg_graph_error(g)->message);
  else
    run_devices(ctx, name, g, &(dg_binding){"x", x.data, x.bytes}, 1, &y,
                false);
  dg_graph_destroy(g);
  npy_free(&x), npy_free(&w), npy_free(&ws), npy_free(&b), npy_free(&y);
}

int main(void) {
  dg_context *ctx;
  if (dg_context_create(NULL, &ctx) != DG_OK)
    return 1;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    run_case(ctx, cases[i]);
  dg_context_destroy(ctx);
  return t_exit();
}
