/* The int8 golden vectors (tests/golden/int8, written once by an independent
 * numpy implementation of the numerics contract) reproduced bit for bit on
 * every device. A change that alters any int8 result fails here. */
#include "common/npy.h"
#include "graph.h"
#include "harness.h"

#include <stdbool.h>
#include <string.h>

static const char *const cases[] = {
    "conv_3x3_u8_pertensor", "conv_3x3_i8_perchannel_relu",
    "conv_5x5_dil2_relu6",   "conv_dw_3x3",
    "conv_group2_1x1",       "conv_1x1_deep",
    "fc_i8_perchannel",      "fc_u8_pertensor",
    "matmul_i8",             "matmul_u8_percolumn",
    "quantize_i8",           "quantize_u8"};

typedef struct params {
  char op[32], x_dtype[4], w_dtype[4], y_dtype[4];
  int stride, pad, dilation, groups, activation, x_zero, w_zero, y_zero;
  float x_scale, y_scale;
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
    char k[64], v[64];
    if (sscanf(line, "%63[^=]=%63s", k, v) != 2)
      continue;
#define S(name) if (!strcmp(k, #name)) copy_str(p->name, sizeof p->name, v);
#define I(name) if (!strcmp(k, #name)) p->name = atoi(v);
#define F(name) if (!strcmp(k, #name)) p->name = strtof(v, NULL);
    S(op) S(x_dtype) S(w_dtype) S(y_dtype) I(stride) I(pad) I(dilation)
    I(groups) I(activation) I(x_zero) I(w_zero) I(y_zero) F(x_scale)
    F(y_scale)
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

static void run_case(dg_context *ctx, const char *name) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s/tests/golden/int8/%s", DG_SOURCE_DIR, name);
  params p;
  npy_array x = {0}, w = {0}, ws = {0}, b = {0}, y = {0};
  if (load_params(dir, &p) || load(dir, "x", &x) || load(dir, "y", &y)) {
    CHECK(0, "%s: golden files present", name);
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
  if (dg_graph_status(g) != DG_OK) {
    CHECK(0, "%s: builds (%s)", name, dg_graph_error(g)->message);
  } else {
    for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
      dg_compile_options o = {.devices = &dev, .device_count = 1};
      dg_session *s;
      dg_diagnostic d;
      void *got = calloc(1, y.bytes);
      dg_status st = dg_graph_compile(g, &o, &s, &d);
      if (st == DG_OK)
        st = dg_session_run(s, &(dg_binding){"x", x.data, x.bytes}, 1,
                            &(dg_binding){"y", got, y.bytes}, 1, &d);
      size_t diff = 0;
      for (size_t i = 0; st == DG_OK && i < y.bytes; i++)
        diff += ((unsigned char *)got)[i] != ((unsigned char *)y.data)[i];
      CHECK(st == DG_OK && diff == 0,
            "%s on device %d: bit-exact (%zu of %zu bytes differ)%s%s", name,
            dev, diff, y.bytes, st ? ": " : "", st ? d.message : "");
      free(got);
      dg_session_destroy(s);
    }
  }
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
