/* conv2d, conv2d_relu and qlinear_conv2d entry points, on top of
 * dg_oneshot_conv2d (which memoises one compiled one-node session per
 * shape and parameter set). Argument orders are documented in dg_tvm.h. */
#include "tvm_internal.h"

#include <stdlib.h>

enum { X, W, B, Y, NT };

static void release_all(dg_tvm_tensor *t, int n) {
  for (int i = 0; i < n; i++)
    dg_tvm_tensor_release(&t[i]);
}

/* x, w, b?, y from args[0..3]. */
static int get_operands(const char *fn, const dg_ffi_any *args,
                        dg_tvm_tensor *t) {
  static const char *const names[NT] = {"x", "w", "b", "y"};
  for (int i = 0; i < NT; i++)
    if (dg_tvm_tensor_get(fn, args, i, names[i], i == B, i == Y, &t[i])) {
      release_all(t, i);
      return -1;
    }
  return 0;
}

/* stride h/w, pads t/l/b/r, dilation h/w, groups from args[at..at+8]. */
static int get_conv_params(const char *fn, const dg_ffi_any *args, int at,
                           dg_conv2d_params *p) {
  static const char *const names[9] = {
      "stride_h", "stride_w",   "pad_top",    "pad_left", "pad_bottom",
      "pad_right", "dilation_h", "dilation_w", "groups"};
  int64_t v[9];
  for (int i = 0; i < 9; i++) {
    int64_t lo = (i >= 2 && i < 6) ? 0 : 1;
    if (dg_tvm_int_get(fn, args, at + i, names[i], lo, 65535, &v[i]))
      return -1;
  }
  *p = (dg_conv2d_params){
      .stride = {(int32_t)v[0], (int32_t)v[1]},
      .pads = {(int32_t)v[2], (int32_t)v[3], (int32_t)v[4], (int32_t)v[5]},
      .dilation = {(int32_t)v[6], (int32_t)v[7]},
      .padding = DG_PADDING_EXPLICIT,
      .groups = (int32_t)v[8]};
  return 0;
}

/* Ranks, and y's shape against the convolution's output shape. */
static int check_shapes(const char *fn, const dg_tvm_tensor *t,
                        const dg_conv2d_params *p) {
  if (dg_tvm_rank_is(fn, &t[X], "x", 4) || dg_tvm_rank_is(fn, &t[W], "w", 4) ||
      (t[B].dl && dg_tvm_rank_is(fn, &t[B], "b", 1)))
    return -1;
  int64_t want[4] = {t[X].desc.dims[0], t[W].desc.dims[0], 0, 0};
  for (int i = 0; i < 2; i++) {
    int64_t span = (int64_t)p->dilation[i] * (t[W].desc.dims[2 + i] - 1) + 1;
    int64_t in = t[X].desc.dims[2 + i] + p->pads[i] + p->pads[i + 2];
    if (in < span)
      return dg_tvm_fail("ValueError",
                         "%s: the dilated kernel (%lld) does not fit in the "
                         "padded input (%lld) along %s",
                         fn, (long long)span, (long long)in,
                         i ? "width" : "height");
    want[2 + i] = (in - span) / p->stride[i] + 1;
  }
  return dg_tvm_shape_is(fn, &t[Y], "y", 4, want);
}

/* Runs the one-shot conv and, on success, writes y back. */
static int run(const char *fn, dg_tvm_tensor *t, const dg_conv2d_params *p,
               dg_ffi_any *result) {
  dg_context *ctx;
  int device;
  if (dg_tvm_enter(fn, &ctx, &device))
    return -1;
  dg_diagnostic diag = {0};
  dg_status st = dg_oneshot_conv2d(
      ctx, device, &t[X].desc, t[X].data, &t[W].desc, t[W].data,
      t[B].dl ? &t[B].desc : NULL, t[B].dl ? t[B].data : NULL, p, &t[Y].desc,
      t[Y].data, t[Y].bytes, &diag);
  dg_tvm_leave();
  if (st != DG_OK)
    return dg_tvm_fail_status(fn, st, &diag);
  dg_tvm_tensor_finish(&t[Y]);
  dg_tvm_result_none(result);
  return 0;
}

static int float_conv(const char *fn, const dg_ffi_any *args,
                      int32_t num_args, dg_ffi_any *result,
                      dg_activation act) {
  dg_tvm_tensor t[NT];
  dg_conv2d_params p;
  if (dg_tvm_arity(fn, num_args, 13) || get_operands(fn, args, t))
    return -1;
  int rc = -1;
  if (dg_tvm_dtype_in(fn, &t[X], "x", DG_TVM_FLOATS) ||
      dg_tvm_dtype_in(fn, &t[W], "w", DG_TVM_BIT(t[X].desc.dtype)) ||
      (t[B].dl && dg_tvm_dtype_in(fn, &t[B], "b", DG_TVM_BIT(t[X].desc.dtype))) ||
      dg_tvm_dtype_in(fn, &t[Y], "y", DG_TVM_BIT(t[X].desc.dtype)) ||
      get_conv_params(fn, args, 4, &p) || check_shapes(fn, t, &p))
    goto out;
  p.activation = act;
  rc = run(fn, t, &p, result);
out:
  release_all(t, NT);
  return rc;
}

int __tvm_ffi_directgraph_conv2d(void *handle, const dg_ffi_any *args,
                                 int32_t num_args, dg_ffi_any *result) {
  (void)handle;
  return float_conv("directgraph_conv2d", args, num_args, result,
                    DG_ACTIVATION_NONE);
}

int __tvm_ffi_directgraph_conv2d_relu(void *handle, const dg_ffi_any *args,
                                      int32_t num_args, dg_ffi_any *result) {
  (void)handle;
  return float_conv("directgraph_conv2d_relu", args, num_args, result,
                    DG_ACTIVATION_RELU);
}

/* Quantisation arguments of qlinear_conv2d (args[4..9]): per-tensor for x
 * and y; w per-tensor (Float) or per output channel (f32 tensor [O]). The
 * per-channel arrays live in *ws and *zps until the call returns. */
static int get_quant(const char *fn, const dg_ffi_any *args, dg_tvm_tensor *t,
                     dg_tvm_tensor *ws, int32_t **zps) {
  double xs, ys, wsv = 0;
  int64_t xz, wz, yz;
  bool per_channel = args[6].type_index == DG_FFI_DLTENSOR_PTR ||
                     args[6].type_index == DG_FFI_TENSOR;
  if (dg_tvm_float_get(fn, args, 4, "x_scale", &xs) ||
      dg_tvm_int_get(fn, args, 5, "x_zero_point", -128, 255, &xz) ||
      (per_channel
           ? dg_tvm_tensor_get(fn, args, 6, "w_scale", false, false, ws)
           : dg_tvm_float_get(fn, args, 6, "w_scale", &wsv)) ||
      dg_tvm_int_get(fn, args, 7, "w_zero_point", -128, 255, &wz) ||
      dg_tvm_float_get(fn, args, 8, "y_scale", &ys) ||
      dg_tvm_int_get(fn, args, 9, "y_zero_point", -128, 255, &yz))
    return -1;
  t[X].desc.quant = (dg_quant_params){.scale = (float)xs,
                                      .zero_point = (int32_t)xz};
  t[Y].desc.quant = (dg_quant_params){.scale = (float)ys,
                                      .zero_point = (int32_t)yz};
  if (!per_channel) {
    t[W].desc.quant = (dg_quant_params){.scale = (float)wsv,
                                        .zero_point = (int32_t)wz};
    return 0;
  }
  int64_t O = t[W].desc.rank == 4 ? t[W].desc.dims[0] : -1;
  if (dg_tvm_dtype_in(fn, ws, "w_scale", DG_TVM_BIT(DG_DTYPE_F32)) ||
      dg_tvm_shape_is(fn, ws, "w_scale", 1, &O))
    return -1;
  if (wz) { /* one zero point for every channel */
    *zps = malloc(sizeof(int32_t) * (size_t)O);
    if (!*zps)
      return dg_tvm_fail("MemoryError", "%s: no memory", fn);
    for (int64_t c = 0; c < O; c++)
      (*zps)[c] = (int32_t)wz;
  }
  t[W].desc.quant = (dg_quant_params){.axis = 0,
                                      .channel_count = (int32_t)O,
                                      .channel_scales = ws->data,
                                      .channel_zero_points = *zps};
  return 0;
}

int __tvm_ffi_directgraph_qlinear_conv2d(void *handle, const dg_ffi_any *args,
                                         int32_t num_args,
                                         dg_ffi_any *result) {
  (void)handle;
  const char *fn = "directgraph_qlinear_conv2d";
  dg_tvm_tensor t[NT], ws = {0};
  int32_t *zps = NULL;
  dg_conv2d_params p;
  int64_t relu;
  if (dg_tvm_arity(fn, num_args, 20) || get_operands(fn, args, t))
    return -1;
  int rc = -1;
  if (dg_tvm_dtype_in(fn, &t[X], "x", DG_TVM_Q8) ||
      dg_tvm_dtype_in(fn, &t[W], "w", DG_TVM_Q8) ||
      (t[B].dl && dg_tvm_dtype_in(fn, &t[B], "b", DG_TVM_BIT(DG_DTYPE_I32))) ||
      dg_tvm_dtype_in(fn, &t[Y], "y", DG_TVM_Q8) ||
      get_quant(fn, args, t, &ws, &zps) ||
      get_conv_params(fn, args, 10, &p) ||
      dg_tvm_int_get(fn, args, 19, "relu", 0, 1, &relu) ||
      check_shapes(fn, t, &p))
    goto out;
  p.activation = relu ? DG_ACTIVATION_RELU : DG_ACTIVATION_NONE;
  rc = run(fn, t, &p, result);
out:
  release_all(t, NT);
  dg_tvm_tensor_release(&ws);
  free(zps);
  return rc;
}
