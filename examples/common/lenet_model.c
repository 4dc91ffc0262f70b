/* The LeNet graph, in the style of Arm Compute Library's graph_lenet: one
 * builder call per layer. Weights are constants copied into the graph, so
 * the .npy buffers are freed right after each call. */
#include "lenet_model.h"

#include "npy.h"

#include <stdio.h>
#include <string.h>

typedef struct loader {
  dg_graph *g;
  const char *dir;
  char *err;
  size_t err_size;
  int failed;
} loader;

/* Loads dir/name.npy into a graph constant (quant may be NULL). */
static dg_tensor constant(loader *l, const char *name,
                          const dg_quant_params *quant) {
  char path[1024];
  npy_array a;
  if (l->failed)
    return DG_TENSOR_NONE;
  snprintf(path, sizeof path, "%s/%s.npy", l->dir, name);
  if (npy_load(path, &a, l->err, l->err_size)) {
    l->failed = 1;
    return DG_TENSOR_NONE;
  }
  dg_tensor_desc d = npy_desc(&a);
  if (quant)
    d.quant = *quant;
  dg_tensor t = dg_graph_constant(l->g, name, &d, a.data, 0);
  npy_free(&a);
  return t;
}

/* Reads a small float vector (scales, (scale, zero) pairs). */
static int floats(loader *l, const char *name, float *out, int n) {
  char path[1024];
  npy_array a;
  if (l->failed)
    return -1;
  snprintf(path, sizeof path, "%s/%s.npy", l->dir, name);
  if (npy_load(path, &a, l->err, l->err_size)) {
    l->failed = 1;
    return -1;
  }
  int64_t count = a.rank ? a.dims[0] : 1;
  if (a.dtype != DG_DTYPE_F32 || count != n) {
    snprintf(l->err, l->err_size, "%s: expected %d f32 values", path, n);
    npy_free(&a);
    l->failed = 1;
    return -1;
  }
  memcpy(out, a.data, sizeof(float) * (size_t)n);
  npy_free(&a);
  return 0;
}

static dg_tensor f32_layers(loader *l, dg_tensor x) {
  dg_graph *g = l->g;
  dg_conv2d_params c1 = {.padding = DG_PADDING_SAME_UPPER,
                         .activation = DG_ACTIVATION_RELU};
  dg_conv2d_params c2 = {.activation = DG_ACTIVATION_RELU};
  dg_pool2d_params pool = {.kernel = {2, 2}, .stride = {2, 2}};
  x = dg_graph_conv2d(g, "conv1", x, constant(l, "conv1_w", NULL),
                      constant(l, "conv1_b", NULL), &c1);
  x = dg_graph_max_pool2d(g, "pool1", x, &pool);
  x = dg_graph_conv2d(g, "conv2", x, constant(l, "conv2_w", NULL),
                      constant(l, "conv2_b", NULL), &c2);
  x = dg_graph_max_pool2d(g, "pool2", x, &pool);
  x = dg_graph_flatten(g, "flatten", x, 1);
  x = dg_graph_fully_connected(g, "fc1", x, constant(l, "fc1_w", NULL),
                               constant(l, "fc1_b", NULL),
                               DG_ACTIVATION_RELU);
  x = dg_graph_fully_connected(g, "fc2", x, constant(l, "fc2_w", NULL),
                               constant(l, "fc2_b", NULL),
                               DG_ACTIVATION_RELU);
  return dg_graph_fully_connected(g, "fc3", x, constant(l, "fc3_w", NULL),
                                  constant(l, "fc3_b", NULL),
                                  DG_ACTIVATION_NONE);
}

/* One quantised layer: weights per output channel, int32 bias. */
static dg_tensor q_layer(loader *l, const char *layer, dg_tensor x,
                         const dg_conv2d_params *conv, dg_activation act) {
  char name[64];
  float scales[128], yq[2];
  int channels = !strcmp(layer, "conv1")   ? 6
                 : !strcmp(layer, "conv2") ? 16
                 : !strcmp(layer, "fc1")   ? 120
                 : !strcmp(layer, "fc2")   ? 84
                                           : 10;
  snprintf(name, sizeof name, "%s_wscale", layer);
  floats(l, name, scales, channels);
  snprintf(name, sizeof name, "%s_yq", layer);
  floats(l, name, yq, 2);
  dg_quant_params wq = {.axis = 0, .channel_count = channels,
                        .channel_scales = scales};
  dg_quant_params y = {.scale = yq[0], .zero_point = (int32_t)yq[1]};
  snprintf(name, sizeof name, "%s_wq", layer);
  dg_tensor w = constant(l, name, &wq);
  snprintf(name, sizeof name, "%s_bq", layer);
  dg_tensor b = constant(l, name, NULL);
  if (conv)
    return dg_graph_qconv2d(l->g, layer, x, w, b, conv, DG_DTYPE_I8, &y);
  return dg_graph_qfully_connected(l->g, layer, x, w, b, act, DG_DTYPE_I8,
                                   &y);
}

static dg_tensor int8_layers(loader *l, dg_tensor x) {
  dg_graph *g = l->g;
  float qin[2];
  floats(l, "q_input", qin, 2);
  dg_quant_params q = {.scale = qin[0], .zero_point = (int32_t)qin[1]};
  dg_conv2d_params c1 = {.padding = DG_PADDING_SAME_UPPER,
                         .activation = DG_ACTIVATION_RELU};
  dg_conv2d_params c2 = {.activation = DG_ACTIVATION_RELU};
  dg_pool2d_params pool = {.kernel = {2, 2}, .stride = {2, 2}};
  x = dg_graph_quantize(g, "quantize", x, DG_DTYPE_I8, &q);
  x = q_layer(l, "conv1", x, &c1, 0);
  x = dg_graph_max_pool2d(g, "pool1", x, &pool);
  x = q_layer(l, "conv2", x, &c2, 0);
  x = dg_graph_max_pool2d(g, "pool2", x, &pool);
  x = dg_graph_flatten(g, "flatten", x, 1);
  x = q_layer(l, "fc1", x, NULL, DG_ACTIVATION_RELU);
  x = q_layer(l, "fc2", x, NULL, DG_ACTIVATION_RELU);
  x = q_layer(l, "fc3", x, NULL, DG_ACTIVATION_NONE);
  return dg_graph_dequantize(g, "dequantize", x);
}

dg_graph *lenet_build(dg_context *ctx, const char *weights_dir, int batch,
                      int int8, int device, char *err, size_t err_size) {
  dg_graph *g = dg_graph_create(ctx, int8 ? "lenet-int8" : "lenet");
  if (!g) {
    snprintf(err, err_size, "out of memory");
    return NULL;
  }
  loader l = {g, weights_dir, err, err_size, 0};
  dg_tensor_desc in = {.dtype = DG_DTYPE_F32, .rank = 4,
                       .dims = {batch, 1, 28, 28}};
  dg_tensor x = dg_graph_input(g, "image", &in);
  if (device >= 0)
    dg_graph_set_device(g, device);
  x = int8 ? int8_layers(&l, x) : f32_layers(&l, x);
  x = dg_graph_softmax(g, "softmax", x, 1);
  dg_graph_output(g, "probs", x, DG_LAYOUT_NCHW);
  if (l.failed) {
    dg_graph_destroy(g);
    return NULL;
  }
  return g;
}
