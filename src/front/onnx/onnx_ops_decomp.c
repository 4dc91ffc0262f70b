/* ONNX ops that are compositions of existing builder ops, built here in
 * the translator from reductions, elementwise ops, log-softmax and
 * constants computed at import: NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (a gather of the elements the constant target
 * picks), LayerNormalization's Mean and InvStdDev outputs,
 * GlobalMaxPool, LpNormalization, InstanceNormalization,
 * MeanVarianceNormalization, CumSum and Hardmax (a triangular matmul),
 * LRN (a band matmul), GatherElements (a flat gather) and EyeLike.
 * No new builder op and no kernel: every target that runs the parts
 * runs the whole. */
#include "onnx_decomp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A name for a builder node of the current ONNX node ("<node>/<what>"),
 * or NULL (an automatic name) when the node has none. */
const char *tr_sub_name(const tr *t, char *buf, size_t size, const char *what) {
  if (!t->n->name || !t->n->name[0])
    return NULL;
  snprintf(buf, size, "%s/%s", t->n->name, what);
  return buf;
}

int64_t tr_elements(const dg_tensor_desc *d) {
  int64_t n = 1;
  for (int k = 0; k < d->rank; k++)
    n *= d->dims[k];
  return n;
}

/* A constant of dtype dt (f32, or f16 through a cast of the f32 data) and
 * the shape of dims from count floats. */
dg_tensor tr_float_constant(tr *t, const char *name, dg_dtype dt, int rank,
                            const int64_t *dims, const float *v) {
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = rank};
  if (rank)
    memcpy(d.dims, dims, sizeof(int64_t) * (size_t)rank);
  dg_tensor c = dg_graph_constant(t->g, name, &d, v, 0);
  return dt == DG_DTYPE_F32 ? c : dg_graph_cast(t->g, NULL, c, dt);
}

dg_tensor tr_scalar_constant(tr *t, dg_dtype dt, float v) {
  return tr_float_constant(t, NULL, dt, 0, NULL, &v);
}

dg_tensor tr_bin(tr *t, dg_binary_fn fn, dg_tensor a, dg_tensor b) {
  return dg_graph_binary(t->g, NULL, fn, a, b);
}

/* x reduced over axes [from, rank) with keepdims. */
dg_tensor tr_reduce_from(tr *t, dg_reduce_fn fn, dg_tensor x, int from,
                         int rank) {
  int32_t ax[DG_MAX_RANK];
  for (int k = from; k < rank; k++)
    ax[k - from] = k;
  return dg_graph_reduce(t->g, NULL, fn, x, ax, rank - from, 1);
}

/* Whether output i is named and read (by a node, or outside the list). */
bool tr_output_used(tr *t, int i) {
  if (i >= t->n->n_outputs || !t->n->outputs[i][0])
    return false;
  const tr_value *v = tr_value_find(t, t->n->outputs[i]);
  return !v || v->readers > 0 ||
         (t->src->read_outside &&
          t->src->read_outside(t->src->self, t->n->outputs[i]));
}

/* ---- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ---- */

/* IEEE half to float (exact). */

/* ---- LayerNormalization's Mean and InvStdDev ---- */

/* ---- GlobalMaxPool ---- */

void tr_op_global_max_pool(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (!tr_need_float(t, x, "X") || !tr_desc(t, x, &d))
    return;
  if (d.rank < 3) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "X",
            "X must be [N, C, spatial...] (rank %d)", d.rank);
    return;
  }
  int32_t ax[DG_MAX_RANK];
  for (int k = 2; k < d.rank; k++)
    ax[k - 2] = k;
  tr_output(
      t, 0,
      dg_graph_reduce(t->g, t->n->name, DG_REDUCE_MAX, x, ax, d.rank - 2, 1));
}

/* ---- LpNormalization ---- */

/* ---- InstanceNormalization, MeanVarianceNormalization ---- */

/* ---- CumSum, Hardmax: running sums as a triangular matmul ---- */

/* The running sum of x along axis (in [0, rank)): x with the axis last
 * times the constant T[i][j] = 1 where input i adds into output j (i <= j;
 * i < j exclusive; i >= j, i > j in reverse), the axis moved back. */
static dg_tensor running_sum(tr *t, dg_tensor x, const dg_tensor_desc *d,
                             int axis, bool exclusive, bool reverse,
                             const char *name) {
  int64_t len = d->dims[axis];
  if (len > DECOMP_MAX_SCAN) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "axis",
            "%lld tr_elements along the axis (at most %d)", (long long)len,
            DECOMP_MAX_SCAN);
    return DG_TENSOR_NONE;
  }
  float *tri = malloc(sizeof *tri * (size_t)(len * len));
  if (!tri) {
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return DG_TENSOR_NONE;
  }
  for (int64_t i = 0; i < len; i++)
    for (int64_t j = 0; j < len; j++) {
      bool in =
          reverse ? (exclusive ? i > j : i >= j) : (exclusive ? i < j : i <= j);
      tri[i * len + j] = in ? 1.0f : 0.0f;
    }
  int64_t td[2] = {len, len};
  dg_tensor tm = tr_float_constant(t, NULL, d->dtype, 2, td, tri);
  free(tri);
  int last = d->rank - 1;
  if (axis == last)
    return dg_graph_matmul(t->g, name, x, tm);
  int32_t perm[DG_MAX_RANK]; /* the swap of axis and last: its own inverse */
  for (int k = 0; k < d->rank; k++)
    perm[k] = k;
  perm[axis] = last;
  perm[last] = axis;
  dg_tensor y =
      dg_graph_matmul(t->g, NULL, dg_graph_transpose(t->g, NULL, x, perm), tm);
  return dg_graph_transpose(t->g, name, y, perm);
}

void tr_op_cumsum(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (!tr_need_float(t, x, "x") || !tr_desc(t, x, &d))
    return;
  dg_onnx_value c;
  if (!tr_const(t, 1, &c)) {
    if (t->st == DG_OK)
      tr_fail(t, DG_ERROR_UNSUPPORTED, "axis", "axis must be a constant");
    return;
  }
  int64_t axis;
  int n = 0;
  if (!tr_const_ints(t, 1, &axis, 1, &n))
    return;
  if (n != 1 || d.rank == 0 || axis < -d.rank || axis >= d.rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axis",
            "axis must be one value in [-%d, %d)", d.rank, d.rank);
    return;
  }
  bool exclusive = tr_attr_int(t, "exclusive", 0) != 0;
  bool reverse = tr_attr_int(t, "reverse", 0) != 0;
  tr_output(t, 0,
            running_sum(t, x, &d, (int)(axis < 0 ? axis + d.rank : axis),
                        exclusive, reverse, t->n->name));
}

/* 1 at the first maximum along axis, else 0, without a comparison op:
 * e = 1 + sign(x - max) is 1 at every maximum; the running count c of e
 * is 1 at the first, so y = e * (1 - sign(c - 1)). Exact in float (the
 * counts are small integers). A slice whose maximum is +inf (or all
 * -inf) gives NaN there (inf - inf): ONNX would mark the first. From
 * opset 13 along axis (default -1); before, over the flattened [axis:]
 * dims (default 1). */
void tr_op_hardmax(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (!tr_need_float(t, x, "input") || !tr_desc(t, x, &d))
    return;
  int64_t axis = tr_attr_int(t, "axis", t->n->opset >= 13 ? -1 : 1);
  if (d.rank == 0 || axis < -d.rank || axis >= d.rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axis",
            "axis %lld out of range for rank %d", (long long)axis, d.rank);
    return;
  }
  if (axis < 0)
    axis += d.rank;
  dg_tensor v = x;
  dg_tensor_desc vd = d;
  if (t->n->opset < 13 && axis != d.rank - 1) {
    v = dg_graph_flatten(t->g, NULL, x, (int32_t)axis);
    if (!tr_desc(t, v, &vd))
      return;
    axis = 1;
  }
  int32_t ax = (int32_t)axis;
  dg_tensor one = tr_scalar_constant(t, d.dtype, 1);
  dg_tensor m = dg_graph_reduce(t->g, NULL, DG_REDUCE_MAX, v, &ax, 1, 1);
  dg_tensor s = dg_graph_unary(t->g, NULL, DG_UNARY_SIGN,
                               tr_bin(t, DG_BINARY_SUB, v, m), 0, 0);
  dg_tensor e = tr_bin(t, DG_BINARY_ADD, s, one);
  if (tr_check(t))
    return;
  dg_tensor c = running_sum(t, e, &vd, (int)axis, false, false, NULL);
  if (t->st != DG_OK)
    return;
  dg_tensor first = dg_graph_unary(t->g, NULL, DG_UNARY_SIGN,
                                   tr_bin(t, DG_BINARY_SUB, c, one), 0, 0);
  bool flat = vd.rank != d.rank;
  dg_tensor y = dg_graph_binary(t->g, flat ? NULL : t->n->name, DG_BINARY_MUL,
                                e, tr_bin(t, DG_BINARY_SUB, one, first));
  if (flat)
    y = dg_graph_reshape(t->g, t->n->name, y, d.rank, d.dims);
  tr_output(t, 0, y);
}

/* ---- LRN ---- */

/* ---- GatherElements, EyeLike ---- */

/* out[i] = data[i with its axis coordinate replaced by indices[i]]: a
 * gather from the flattened data at flat offsets computed at import from
 * the constant indices (the output has the indices' shape). */
void tr_op_gather_elements(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (t->st != DG_OK || !tr_desc(t, x, &d))
    return;
  int64_t axis = tr_attr_int(t, "axis", 0);
  if (d.rank == 0 || axis < -d.rank || axis >= d.rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axis",
            "axis %lld out of range for rank %d", (long long)axis, d.rank);
    return;
  }
  if (axis < 0)
    axis += d.rank;
  dg_onnx_value c;
  if (!tr_const(t, 1, &c)) {
    if (t->st == DG_OK)
      tr_fail(t, DG_ERROR_UNSUPPORTED, "indices", "indices must be a constant");
    return;
  }
  if (c.elem != DG_ONNX_INT32 && c.elem != DG_ONNX_INT64) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "indices",
            "indices must be int32 or int64 (element type %d)", c.elem);
    return;
  }
  bool fits = c.rank == d.rank;
  for (int k = 0; fits && k < d.rank; k++)
    fits = c.dims[k] >= 1 && (k == axis || c.dims[k] <= d.dims[k]);
  if (!fits) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "indices",
            "indices must have data's rank and dims no larger off the axis");
    return;
  }
  int64_t total = tr_elements(&d);
  if (total > INT32_MAX || c.count > (size_t)DECOMP_MAX_CONST) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "data",
            "data of %lld tr_elements or indices of %zu is too large",
            (long long)total, c.count);
    return;
  }
  int64_t stride[DG_MAX_RANK];
  for (int k = d.rank - 1, s = 1; k >= 0; s *= (int)d.dims[k], k--)
    stride[k] = s;
  int32_t *flat = malloc(sizeof *flat * (c.count ? c.count : 1));
  if (!flat) {
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return;
  }
  int64_t len = d.dims[axis];
  for (size_t e = 0; e < c.count; e++) {
    int64_t v;
    if (!tr_index_at(t, &c, e, len, axis, &v)) {
      free(flat);
      return;
    }
    int64_t off = 0, rest = (int64_t)e;
    for (int k = d.rank - 1; k >= 0; k--) { /* e's coordinates in indices */
      int64_t i = rest % c.dims[k];
      rest /= c.dims[k];
      off += (k == axis ? (v < 0 ? v + len : v) : i) * stride[k];
    }
    flat[e] = (int32_t)off;
  }
  dg_tensor_desc id = {.dtype = DG_DTYPE_I32, .rank = c.rank};
  memcpy(id.dims, c.dims, sizeof(int64_t) * (size_t)c.rank);
  char nb[256];
  dg_tensor it = dg_graph_constant(
      t->g, tr_sub_name(t, nb, sizeof nb, "offsets"), &id, flat, 0);
  free(flat);
  dg_tensor xf = dg_graph_reshape(t->g, NULL, x, 1, &total);
  tr_output(t, 0, dg_graph_gather(t->g, t->n->name, xf, it, 0));
}

/* A constant 2-D matrix with ones on diagonal k, of the input's static
 * shape and the dtype attribute's type (default the input's); a reshape
 * of it is the node writing the output. f32, f16 and i32. */
void tr_op_eye_like(tr *t) {
  dg_onnx_value in;
  tr_input_type(t, 0, &in);
  bool known = in.rank == 2 && in.dims[0] >= 1 && in.dims[1] >= 1;
  if (!known) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "input",
            "input must be 2-D of a known shape (rank %d)", in.rank);
    return;
  }
  int64_t elem = tr_attr_int(t, "dtype", in.elem);
  dg_dtype dt = tr_dtype((int)elem);
  if (dt != DG_DTYPE_F32 && dt != DG_DTYPE_F16 && dt != DG_DTYPE_I32) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "dtype",
            "element type %lld is not supported (FLOAT, FLOAT16, INT32 are)",
            (long long)elem);
    return;
  }
  int64_t k = tr_attr_int(t, "k", 0);
  int64_t rows = in.dims[0], cols = in.dims[1];
  if (rows * cols > DECOMP_MAX_CONST) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "input", "%lld x %lld is too large",
            (long long)rows, (long long)cols);
    return;
  }
  /* The input is still a graph input (the model feeds it). */
  if (!tr_input(t, 0, NULL, false).id)
    return;
  bool ints = dt == DG_DTYPE_I32;
  void *eye =
      calloc((size_t)(rows * cols), ints ? sizeof(int32_t) : sizeof(float));
  if (!eye) {
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return;
  }
  for (int64_t r = 0; r < rows; r++)
    if (r + k >= 0 && r + k < cols) {
      if (ints)
        ((int32_t *)eye)[r * cols + r + k] = 1;
      else
        ((float *)eye)[r * cols + r + k] = 1;
    }
  dg_tensor c;
  if (ints) {
    dg_tensor_desc cd = {
        .dtype = DG_DTYPE_I32, .rank = 2, .dims = {rows, cols}};
    c = dg_graph_constant(t->g, NULL, &cd, eye, 0);
  } else {
    c = tr_float_constant(t, NULL, dt, 2, in.dims, eye);
  }
  free(eye);
  tr_output(t, 0, dg_graph_reshape(t->g, t->n->name, c, 2, in.dims));
}

/* Trilu: x where a constant mask of the last two dims says so (upper:
 * column - row >= k; lower: <= k), else 0 (a select, so that an inf or
 * NaN outside the triangle still becomes 0). k must be known at import. */
void tr_op_trilu(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc xd;
  if (!tr_desc(t, x, &xd))
    return;
  if (xd.rank < 2) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "input",
            "Trilu needs a tensor of rank >= 2 (rank %d)", xd.rank);
    return;
  }
  int64_t k = 0;
  int n = 0;
  if (tr_has_input(t, 1) && (!tr_const_ints(t, 1, &k, 1, &n) || n != 1)) {
    if (t->st == DG_OK)
      tr_fail(t, DG_ERROR_UNSUPPORTED, "k", "k must be one constant value");
    return;
  }
  bool upper = tr_attr_int(t, "upper", 1) != 0;
  int64_t rows = xd.dims[xd.rank - 2], cols = xd.dims[xd.rank - 1];
  if (rows * cols > DECOMP_MAX_CONST) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "input", "%lld x %lld is too large",
            (long long)rows, (long long)cols);
    return;
  }
  uint8_t *mask = malloc((size_t)(rows * cols));
  uint8_t zero[8] = {0}; /* zero in every dtype where takes */
  if (!mask) {
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return;
  }
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++)
      mask[r * cols + c] = upper ? c - r >= k : c - r <= k;
  dg_tensor_desc md = {.dtype = DG_DTYPE_BOOL, .rank = 2, .dims = {rows, cols}};
  dg_tensor_desc zd = {.dtype = xd.dtype, .rank = 1, .dims = {1}};
  dg_tensor m = dg_graph_constant(t->g, NULL, &md, mask, 0);
  dg_tensor z = dg_graph_constant(t->g, NULL, &zd, zero, 0);
  free(mask);
  tr_output(t, 0, dg_graph_where(t->g, t->n->name, m, x, z));
}

/* ---- Einsum ---- */
