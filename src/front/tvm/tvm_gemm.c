/* dense (fully connected) and matmul entry points, on top of
 * dg_oneshot_fully_connected and dg_oneshot_matmul. */
#include "tvm_internal.h"

static void release_all(dg_tvm_tensor *t, int n) {
  for (int i = 0; i < n; i++)
    dg_tvm_tensor_release(&t[i]);
}

static int get_all(const char *fn, const dg_ffi_any *args, int n,
                   const char *const *names, int optional, dg_tvm_tensor *t) {
  for (int i = 0; i < n; i++)
    if (dg_tvm_tensor_get(fn, args, i, names[i], i == optional, i == n - 1,
                          &t[i])) {
      release_all(t, i);
      return -1;
    }
  return 0;
}

static int same_float_dtype(const char *fn, const dg_tvm_tensor *t, int n,
                            const char *const *names) {
  if (dg_tvm_dtype_in(fn, &t[0], names[0], DG_TVM_FLOATS))
    return -1;
  for (int i = 1; i < n; i++)
    if (t[i].dl &&
        dg_tvm_dtype_in(fn, &t[i], names[i], DG_TVM_BIT(t[0].desc.dtype)))
      return -1;
  return 0;
}

static int finish(const char *fn, dg_status st, const dg_diagnostic *diag,
                  dg_tvm_tensor *y, dg_ffi_any *result) {
  if (st != DG_OK)
    return dg_tvm_fail_status(fn, st, diag);
  dg_tvm_tensor_finish(y);
  dg_tvm_result_none(result);
  return 0;
}

/* x [...,K] is run as [M,K] with M the product of the leading dims (the
 * buffer is compact, so this is only a different descriptor), y as [M,O]. */
int __tvm_ffi_directgraph_dense(void *handle, const dg_ffi_any *args,
                                int32_t num_args, dg_ffi_any *result) {
  (void)handle;
  const char *fn = "directgraph_dense";
  static const char *const names[4] = {"x", "w", "b", "y"};
  dg_tvm_tensor t[4];
  if (dg_tvm_arity(fn, num_args, 4) || get_all(fn, args, 4, names, 2, t))
    return -1;
  int rc = -1;
  if (same_float_dtype(fn, t, 4, names) || dg_tvm_rank_is(fn, &t[1], "w", 2) ||
      (t[2].dl && dg_tvm_shape_is(fn, &t[2], "b", 1, t[1].desc.dims)))
    goto out;
  if (t[0].desc.rank < 1 || t[0].desc.dims[t[0].desc.rank - 1] != t[1].desc.dims[1]) {
    dg_tvm_fail("ValueError",
                "%s: x's last dimension must equal w's second (K = %lld)", fn,
                (long long)t[1].desc.dims[1]);
    goto out;
  }
  int r = t[0].desc.rank;
  int64_t want[DG_MAX_RANK], m = 1;
  for (int i = 0; i < r - 1; i++)
    m *= want[i] = t[0].desc.dims[i];
  want[r - 1] = t[1].desc.dims[0];
  if (dg_tvm_shape_is(fn, &t[3], "y", r, want))
    goto out;
  dg_tensor_desc xd = {.dtype = t[0].desc.dtype, .rank = 2,
                       .dims = {m, t[1].desc.dims[1]}};
  dg_tensor_desc yd = {.dtype = t[0].desc.dtype, .rank = 2,
                       .dims = {m, t[1].desc.dims[0]}};
  dg_context *ctx;
  int device;
  if (dg_tvm_enter(fn, &ctx, &device))
    goto out;
  dg_diagnostic diag = {0};
  dg_status st = dg_oneshot_fully_connected(
      ctx, device, &xd, t[0].data, &t[1].desc, t[1].data,
      t[2].dl ? &t[2].desc : NULL, t[2].dl ? t[2].data : NULL,
      DG_ACTIVATION_NONE, &yd, t[3].data, t[3].bytes, &diag);
  dg_tvm_leave();
  rc = finish(fn, st, &diag, &t[3], result);
out:
  release_all(t, 4);
  return rc;
}

/* numpy's matmul output shape: rank-1 operands promoted (and the promoted
 * dim dropped again), batch dims broadcast. Returns the rank, or -1. */
static int matmul_shape(const dg_tensor_desc *a, const dg_tensor_desc *b,
                        int64_t *out) {
  int64_t ad[DG_MAX_RANK + 1], bd[DG_MAX_RANK + 1];
  int ar = a->rank, br = b->rank;
  if (ar < 1 || br < 1)
    return -1;
  for (int i = 0; i < ar; i++) ad[i] = a->dims[i];
  for (int i = 0; i < br; i++) bd[i] = b->dims[i];
  bool a1 = ar == 1, b1 = br == 1;
  if (a1) { ad[1] = ad[0]; ad[0] = 1; ar = 2; }
  if (b1) { bd[1] = 1; br = 2; }
  if (ad[ar - 1] != bd[br - 2])
    return -1;
  int batch = (ar > br ? ar : br) - 2, r = 0;
  for (int i = 0; i < batch; i++) {
    int ia = i - (batch - (ar - 2)), ib = i - (batch - (br - 2));
    int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return -1;
    out[r++] = da > db ? da : db;
  }
  if (!a1) out[r++] = ad[ar - 2];
  if (!b1) out[r++] = bd[br - 1];
  return r > DG_MAX_RANK ? -1 : r;
}

int __tvm_ffi_directgraph_matmul(void *handle, const dg_ffi_any *args,
                                 int32_t num_args, dg_ffi_any *result) {
  (void)handle;
  const char *fn = "directgraph_matmul";
  static const char *const names[3] = {"a", "b", "y"};
  dg_tvm_tensor t[3];
  if (dg_tvm_arity(fn, num_args, 3) || get_all(fn, args, 3, names, -1, t))
    return -1;
  int rc = -1;
  int64_t want[DG_MAX_RANK + 2];
  if (same_float_dtype(fn, t, 3, names))
    goto out;
  int r = matmul_shape(&t[0].desc, &t[1].desc, want);
  if (r < 0) {
    char a[160], b[160];
    dg_tvm_format_dims(a, sizeof a, t[0].desc.rank, t[0].desc.dims);
    dg_tvm_format_dims(b, sizeof b, t[1].desc.rank, t[1].desc.dims);
    dg_tvm_fail("ValueError", "%s: shapes %s and %s do not multiply", fn, a,
                b);
    goto out;
  }
  if (dg_tvm_shape_is(fn, &t[2], "y", r, want))
    goto out;
  dg_context *ctx;
  int device;
  if (dg_tvm_enter(fn, &ctx, &device))
    goto out;
  dg_diagnostic diag = {0};
  dg_status st =
      dg_oneshot_matmul(ctx, device, &t[0].desc, t[0].data, &t[1].desc,
                        t[1].data, &t[2].desc, t[2].data, t[2].bytes, &diag);
  dg_tvm_leave();
  rc = finish(fn, st, &diag, &t[2], result);
out:
  release_all(t, 3);
  return rc;
}
