/* reshape, flatten, concat: data movement only (any dtype; quantisation is
 * carried through unchanged). */
#include "build.h"
#include "ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static dg_tensor reshape_to(dg_build *b, const dg_tensor_info *xi, dg_tensor x,
                            int32_t rank, const int64_t *dims) {
  char got[96], exp[96];
  if (rank < 0 || rank > DG_MAX_RANK || (rank && !dims)) {
    snprintf(got, sizeof got, "rank %d%s", rank, dims ? "" : ", dims NULL");
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "dims", "rank 0..6 with dims",
                  got, "bad target shape");
    return DG_TENSOR_NONE;
  }
  dg_tensor_desc out = xi->desc;
  out.rank = rank;
  int infer = -1;
  int64_t known = 1, total = dg_desc_elements(&xi->desc);
  for (int i = 0; i < rank; i++) {
    int64_t d = dims[i];
    if (d == 0 && i < xi->desc.rank)
      d = xi->desc.dims[i];
    if (d == -1 && infer < 0) {
      infer = i;
      continue;
    }
    if (d < 1) {
      snprintf(got, sizeof got, "dims[%d] = %lld", i, (long long)dims[i]);
      dg_build_fail(b, DG_ERROR_INVALID_SHAPE, "dims",
                    ">= 1, one -1, or 0 within the input rank", got,
                    "bad target dimension");
      return DG_TENSOR_NONE;
    }
    if (d > total / known) {
      known = total + 1; /* cannot match; checked before it overflows */
      break;
    }
    out.dims[i] = d;
    known *= d;
  }
  if (infer >= 0 && known <= total && total % known == 0)
    out.dims[infer] = total / known;
  else if (infer >= 0)
    known = -1;
  if (known < 0 || (infer < 0 && known != total)) {
    dg_format_dims(exp, sizeof exp, xi->desc.rank, xi->desc.dims);
    dg_format_dims(got, sizeof got, rank, dims);
    dg_build_fail(b, DG_ERROR_INVALID_SHAPE, "dims",
                  "the same element count as x", got,
                  "reshape cannot change the element count of %s", exp);
    return DG_TENSOR_NONE;
  }
  uint32_t ins[1] = {x.id};
  return dg_build_finish(b, ins, 1, &out, NULL);
}

dg_tensor dg_graph_reshape(dg_graph *g, const char *name, dg_tensor x,
                           int32_t rank, const int64_t *dims) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_RESHAPE, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  if (!ok)
    return DG_TENSOR_NONE;
  return reshape_to(&b, xi, x, rank, dims);
}

dg_tensor dg_graph_flatten(dg_graph *g, const char *name, dg_tensor x,
                           int32_t axis) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_RESHAPE, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  if (!ok)
    return DG_TENSOR_NONE;
  int r = xi->desc.rank;
  if (axis < -r || axis > r) {
    char exp[32], got[32];
    snprintf(exp, sizeof exp, "in [-%d, %d]", r, r);
    snprintf(got, sizeof got, "%d", axis);
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "axis", exp, got,
                  "flatten axis out of range");
    return DG_TENSOR_NONE;
  }
  if (axis < 0)
    axis += r;
  int64_t dims[2] = {1, 1};
  for (int i = 0; i < r; i++)
    dims[i < axis ? 0 : 1] *= xi->desc.dims[i];
  return reshape_to(&b, xi, x, 2, dims);
}

dg_tensor dg_graph_concat(dg_graph *g, const char *name,
                          const dg_tensor *tensors, int32_t count,
                          int32_t axis) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_CONCAT, name))
    return DG_TENSOR_NONE;
  char exp[96], got[96], field[32];
  if (!tensors || count < 1 || count > 4096) {
    snprintf(got, sizeof got, "%d tensors%s", count, tensors ? "" : " (NULL)");
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "tensors", "1..4096 tensors",
                  got, "nothing to concatenate");
    return DG_TENSOR_NONE;
  }
  bool ok = true;
  const dg_tensor_info *first =
      dg_build_tensor(&b, tensors[0], "tensors[0]", false, &ok);
  if (!ok)
    return DG_TENSOR_NONE;
  int r = first->desc.rank;
  if (r < 1 || axis < -r || axis >= r) {
    snprintf(exp, sizeof exp, "in [-%d, %d)", r, r);
    snprintf(got, sizeof got, "%d", axis);
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "axis", exp, got,
                  "concat axis out of range");
    return DG_TENSOR_NONE;
  }
  if (axis < 0)
    axis += r;
  dg_tensor_desc out = first->desc;
  out.dims[axis] = 0;
  for (int i = 0; i < count; i++) {
    snprintf(field, sizeof field, "tensors[%d]", i);
    const dg_tensor_info *t =
        dg_build_tensor(&b, tensors[i], field, false, &ok);
    if (!ok || !dg_build_same_dtype(&b, first, t, field))
      return DG_TENSOR_NONE;
    bool same = t->desc.rank == r;
    for (int d = 0; same && d < r; d++)
      same = d == axis || t->desc.dims[d] == first->desc.dims[d];
    if (!same) {
      dg_format_dims(exp, sizeof exp, r, first->desc.dims);
      dg_format_dims(got, sizeof got, t->desc.rank, t->desc.dims);
      dg_build_fail(&b, DG_ERROR_INVALID_SHAPE, field, exp, got,
                    "dims must match tensors[0] except on the axis");
      return DG_TENSOR_NONE;
    }
    if ((t->desc.dtype == DG_DTYPE_I8 || t->desc.dtype == DG_DTYPE_U8) &&
        (t->desc.quant.channel_count || first->desc.quant.channel_count ||
         t->desc.quant.scale != first->desc.quant.scale ||
         t->desc.quant.zero_point != first->desc.quant.zero_point)) {
      dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, field,
                    "the quantisation of tensors[0]", "different",
                    "quantised inputs must share scale and zero point");
      return DG_TENSOR_NONE;
    }
    out.dims[axis] += t->desc.dims[axis];
  }
  uint32_t *ins = malloc(sizeof(uint32_t) * (size_t)count);
  if (!ins) {
    dg_build_fail(&b, DG_ERROR_OUT_OF_MEMORY, "memory", NULL, NULL,
                  "host allocation failed");
    return DG_TENSOR_NONE;
  }
  for (int i = 0; i < count; i++)
    ins[i] = tensors[i].id;
  dg_node_params p = {.axis = axis};
  dg_tensor y = dg_build_finish(&b, ins, count, &out, &p);
  free(ins);
  return y;
}

void dg_ref_reshape(const dg_ir *ir, const dg_node *n, const double *const *in,
                    double *out) {
  memcpy(out, in[0],
         sizeof(double) *
             (size_t)dg_desc_elements(&dg_ir_tensor(ir, n->output)->desc));
}

void dg_ref_concat(const dg_ir *ir, const dg_node *n, const double *const *in,
                   double *out) {
  const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
  int64_t outer, inner;
  dg_desc_split(yd, n->p.axis, &outer, &inner);
  int64_t off = 0, row = yd->dims[n->p.axis] * inner;
  for (int t = 0; t < n->input_count; t++) {
    int64_t len = dg_ir_tensor(ir, n->inputs[t])->desc.dims[n->p.axis] * inner;
    for (int64_t o = 0; o < outer; o++)
      memcpy(out + o * row + off, in[t] + o * len,
             sizeof(double) * (size_t)len);
    off += len;
  }
}

double dg_flops_reshape(const dg_ir *ir, const dg_node *n) {
  (void)ir;
  (void)n;
  return 0;
}
double dg_flops_concat(const dg_ir *ir, const dg_node *n) {
  (void)ir;
  (void)n;
  return 0;
}
