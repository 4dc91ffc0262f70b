/* max_pool2d, relu and softmax entry points: single-input ops with no
 * dg_oneshot_* form, run through one-node sessions memoised by
 * dg_tvm_unary_session. The compiled session also tells the output shape,
 * which y must match. */
#include "tvm_internal.h"

#include <string.h>

/* Runs x -> y through the memoised session for key. */
static int run_unary(const char *fn, dg_tvm_unary_key *key, dg_tvm_tensor *x,
                     dg_tvm_tensor *y, dg_ffi_any *result) {
  dg_context *ctx;
  int device;
  if (dg_tvm_enter(fn, &ctx, &device))
    return -1;
  key->device = device;
  dg_session *s;
  int rc = dg_tvm_unary_session(fn, ctx, key, &s);
  dg_io_info out;
  if (!rc && dg_session_output_info(s, 0, &out) == DG_OK &&
      ((rc = dg_tvm_shape_is(fn, y, "y", out.desc.rank, out.desc.dims)) ||
       (rc = dg_tvm_dtype_in(fn, y, "y", DG_TVM_BIT(out.desc.dtype)))))
    rc = -1;
  if (!rc) {
    dg_binding in = {"x", x->data, x->bytes}, o = {"y", y->data, y->bytes};
    dg_diagnostic diag = {0};
    dg_status st = dg_session_run(s, &in, 1, &o, 1, &diag);
    if (st != DG_OK)
      rc = dg_tvm_fail_status(fn, st, &diag);
  }
  dg_tvm_leave();
  if (!rc) {
    dg_tvm_tensor_finish(y);
    dg_tvm_result_none(result);
  }
  return rc;
}

/* Decodes x and y, fills the key's input descriptor and requires dtypes. */
static int get_xy(const char *fn, const dg_ffi_any *args, unsigned dtypes,
                  dg_tvm_tensor *x, dg_tvm_tensor *y, dg_tvm_unary_key *key) {
  memset(key, 0, sizeof *key);
  memset(y, 0, sizeof *y); /* the caller releases both on any failure */
  if (dg_tvm_tensor_get(fn, args, 0, "x", false, false, x))
    return -1;
  if (dg_tvm_tensor_get(fn, args, 1, "y", false, true, y)) {
    dg_tvm_tensor_release(x);
    return -1;
  }
  if (dg_tvm_dtype_in(fn, x, "x", dtypes) ||
      dg_tvm_dtype_in(fn, y, "y", DG_TVM_BIT(x->desc.dtype)))
    return -1;
  key->x = x->desc;
  /* Max pooling commutes with the monotonic quantisation, so any valid
   * quantisation gives the same int8 result; the builder wants one. */
  if (x->desc.dtype == DG_DTYPE_I8 || x->desc.dtype == DG_DTYPE_U8)
    key->x.quant.scale = 1.0f;
  return 0;
}

int __tvm_ffi_directgraph_relu(void *handle, const dg_ffi_any *args,
                               int32_t num_args, dg_ffi_any *result) {
  (void)handle;
  const char *fn = "directgraph_relu";
  dg_tvm_tensor x, y;
  dg_tvm_unary_key key;
  if (dg_tvm_arity(fn, num_args, 2))
    return -1;
  int rc = get_xy(fn, args, DG_TVM_FLOATS, &x, &y, &key);
  if (!rc) {
    key.op = DG_OP_UNARY; /* relu: add_node's default */
    rc = run_unary(fn, &key, &x, &y, result);
  }
  dg_tvm_tensor_release(&x);
  dg_tvm_tensor_release(&y);
  return rc;
}

int __tvm_ffi_directgraph_softmax(void *handle, const dg_ffi_any *args,
                                  int32_t num_args, dg_ffi_any *result) {
  (void)handle;
  const char *fn = "directgraph_softmax";
  dg_tvm_tensor x, y;
  dg_tvm_unary_key key;
  int64_t axis;
  if (dg_tvm_arity(fn, num_args, 3))
    return -1;
  int rc = get_xy(fn, args, DG_TVM_FLOATS, &x, &y, &key);
  if (!rc && !(rc = dg_tvm_int_get(fn, args, 2, "axis", -x.desc.rank,
                                   x.desc.rank - 1, &axis))) {
    key.op = DG_OP_SOFTMAX;
    key.axis = (int32_t)axis;
    rc = run_unary(fn, &key, &x, &y, result);
  }
  dg_tvm_tensor_release(&x);
  dg_tvm_tensor_release(&y);
  return rc;
}

int __tvm_ffi_directgraph_max_pool2d(void *handle, const dg_ffi_any *args,
                                     int32_t num_args, dg_ffi_any *result) {
  (void)handle;
  const char *fn = "directgraph_max_pool2d";
  static const char *const names[9] = {
      "kernel_h", "kernel_w", "stride_h",  "stride_w", "pad_top",
      "pad_left", "pad_bottom", "pad_right", "ceil_mode"};
  dg_tvm_tensor x, y;
  dg_tvm_unary_key key;
  int64_t v[9];
  if (dg_tvm_arity(fn, num_args, 11))
    return -1;
  int rc = get_xy(fn, args, DG_TVM_FLOATS | DG_TVM_Q8, &x, &y, &key);
  if (!rc)
    rc = dg_tvm_rank_is(fn, &x, "x", 4);
  for (int i = 0; !rc && i < 9; i++)
    rc = dg_tvm_int_get(fn, args, 2 + i, names[i],
                        i < 4 ? 1 : 0, i == 8 ? 1 : 65535, &v[i]);
  if (!rc) {
    key.op = DG_OP_MAX_POOL2D;
    key.pool = (dg_pool2d_params){
        .kernel = {(int32_t)v[0], (int32_t)v[1]},
        .stride = {(int32_t)v[2], (int32_t)v[3]},
        .pads = {(int32_t)v[4], (int32_t)v[5], (int32_t)v[6], (int32_t)v[7]},
        .padding = DG_PADDING_EXPLICIT,
        .ceil_mode = (int32_t)v[8]};
    rc = run_unary(fn, &key, &x, &y, result);
  }
  dg_tvm_tensor_release(&x);
  dg_tvm_tensor_release(&y);
  return rc;
}
