/* Conv and the pooling ops (MaxPool, AveragePool, GlobalAveragePool):
 * their window attributes (auto_pad, pads, strides, dilations) onto the
 * builder's parameters, refusing by name what it cannot express. */
#include "onnx_tr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool window_params(tr *t, int rank, dg_padding *mode, int32_t *pads,
                          int32_t *strides, int32_t *dil) {
  int64_t v[8];
  char s[32];
  *mode = DG_PADDING_EXPLICIT;
  /* An empty auto_pad means NOTSET, as ONNX's reference and ORT read it. */
  if (t->n->attr_string(t->n, "auto_pad", s, sizeof s)) {
    if (!strcmp(s, "SAME_UPPER"))
      *mode = DG_PADDING_SAME_UPPER;
    else if (!strcmp(s, "SAME_LOWER"))
      *mode = DG_PADDING_SAME_LOWER;
    else if (!strcmp(s, "VALID"))
      *mode = DG_PADDING_VALID;
    else if (strcmp(s, "NOTSET") && s[0]) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, "auto_pad",
              "auto_pad '%s' is not supported", s);
      return false;
    }
  }
  if (rank != 4 && rank != 3) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "kernel_shape",
            "only 1-D and 2-D windows (rank-3 and rank-4 tensors) are "
            "supported, got rank %d",
            rank);
    return false;
  }
  /* A 1-D window is a 2-D one of height 1 (the caller reshapes [N,C,L]
   * to [N,C,1,L]): its one stride, dilation and pad pair go to width. */
  int sp = rank - 2; /* spatial axes */
  /* ONNX orders pads (begin h, begin w, end h, end w) like ours. */
  int n = tr_attr_ints(t, "pads", v, 8);
  if (n >= 0 && n != 2 * sp) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "pads", "expected %d pads", 2 * sp);
    return false;
  }
  for (int i = 0; n == 2 * sp && i < n; i++)
    if (v[i] < 0) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "pads", "pads[%d] = %lld < 0", i,
              (long long)v[i]);
      return false;
    }
  for (int i = 0; i < 4; i++)
    pads[i] = n != 2 * sp ? 0
              : sp == 2   ? (int32_t)v[i]
              : i % 2     ? (int32_t)v[i / 2]
                          : 0;
  n = tr_attr_ints(t, "strides", v, 8);
  if (n >= 0 && n != sp) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "strides", "expected %d strides", sp);
    return false;
  }
  strides[0] = n == 2 ? (int32_t)v[0] : 1;
  strides[1] = n == sp ? (int32_t)v[sp - 1] : 1;
  if (strides[0] < 1 || strides[1] < 1) { /* the builder reads 0 as 1 */
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "strides", "strides [%d, %d] < 1",
            strides[0], strides[1]);
    return false;
  }
  n = tr_attr_ints(t, "dilations", v, 8);
  if (n >= 0 && n != sp) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "dilations", "expected %d dilations",
            sp);
    return false;
  }
  if (n == 1)
    v[1] = v[0], v[0] = 1;
  if (n >= 1 && (v[0] < 1 || v[1] < 1)) { /* the builder reads 0 as 1 */
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "dilations",
            "dilations [%lld, %lld] < 1", (long long)v[0], (long long)v[1]);
    return false;
  }
  dil[0] = n >= 1 ? (int32_t)v[0] : 1;
  dil[1] = n >= 1 ? (int32_t)v[1] : 1;
  return true;
}

bool tr_conv_params(tr *t, dg_tensor x, dg_conv2d_params *p) {
  dg_tensor_desc d;
  if (!tr_desc(t, x, &d))
    return false;
  memset(p, 0, sizeof *p);
  if (!window_params(t, d.rank, &p->padding, p->pads, p->stride, p->dilation))
    return false;
  p->groups = (int32_t)tr_attr_int(t, "group", 1);
  if (p->groups < 1) { /* the builder reads 0 as 1 */
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "group", "group %d < 1", p->groups);
    return false;
  }
  return true;
}

/* kernel_shape is optional for convs (the weights have it); where given
 * it must agree with them. */
bool tr_conv_kernel_shape(tr *t, dg_tensor w) {
  int64_t k[4];
  dg_tensor_desc d;
  int n = tr_attr_ints(t, "kernel_shape", k, 4);
  if (n < 0 || !tr_desc(t, w, &d))
    return t->st == DG_OK;
  if (n == 1) { /* 1-D: the weights are [O, C/g, 1, k] by now */
    k[1] = k[0];
    k[0] = 1;
    n = 2;
  }
  if (n != 2 || d.rank != 4 || k[0] != d.dims[2] || k[1] != d.dims[3]) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "kernel_shape",
            "kernel_shape (%d values) contradicts the weights' [%lld, %lld]", n,
            (long long)(d.rank == 4 ? d.dims[2] : -1),
            (long long)(d.rank == 4 ? d.dims[3] : -1));
    return false;
  }
  return true;
}

void tr_op_conv(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_conv2d_params p;
  dg_tensor_desc xd;
  if (!x.id || !tr_need_float(t, x, "X") || !tr_conv_params(t, x, &p) ||
      !tr_desc(t, x, &xd))
    return;
  dg_tensor w = tr_input(t, 1, NULL, false);
  dg_tensor b = tr_input(t, 2, NULL, true);
  if (xd.rank == 3) {
    x = tr_as_2d(t, 0, x);
    w = tr_as_2d(t, 1, w);
  }
  if (!tr_conv_kernel_shape(t, w))
    return;
  tr_output(
      t, 0,
      tr_as_1d(t, dg_graph_conv2d(t->g, t->n->name, x, w, b, &p), xd.rank));
}

bool tr_pool_params(tr *t, const dg_tensor_desc *d, dg_pool2d_params *p) {
  memset(p, 0, sizeof *p);
  int64_t k[4];
  int nk = tr_attr_ints(t, "kernel_shape", k, 4);
  if (nk != d->rank - 2 || (nk != 1 && nk != 2)) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "kernel_shape",
            "only 1-D and 2-D pooling is supported (kernel_shape of %d "
            "values for rank %d)",
            nk, d->rank);
    return false;
  }
  p->kernel[0] = nk == 2 ? (int32_t)k[0] : 1;
  p->kernel[1] = (int32_t)k[nk - 1];
  if (!window_params(t, d->rank, &p->padding, p->pads, p->stride, p->dilation))
    return false;
  p->ceil_mode = (int32_t)tr_attr_int(t, "ceil_mode", 0);
  return true;
}

static void pool(tr *t, bool is_max) {
  if (t->n->n_outputs > 1 && t->n->outputs[1][0]) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "Indices",
            "the Indices output is not supported");
    return;
  }
  if (tr_attr_int(t, "storage_order", 0) != 0) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "storage_order",
            "column-major storage_order is not supported");
    return;
  }
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  dg_pool2d_params p;
  /* The max of raw integers is theirs; their average is not. */
  if (!tr_desc(t, x, &d) || (!is_max && !tr_need_float(t, x, "X")) ||
      !tr_pool_params(t, &d, &p))
    return;
  p.count_include_pad = (int32_t)tr_attr_int(t, "count_include_pad", 0);
  x = tr_as_2d(t, 0, x);
  tr_output(t, 0,
            tr_as_1d(t,
                     is_max ? dg_graph_max_pool2d(t->g, t->n->name, x, &p)
                            : dg_graph_avg_pool2d(t->g, t->n->name, x, &p),
                     d.rank));
}

void tr_op_max_pool(tr *t) { pool(t, true); }

void tr_op_avg_pool(tr *t) { pool(t, false); }

void tr_op_global_avg_pool(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  if (tr_need_float(t, x, "X"))
    tr_output(t, 0, dg_graph_global_avg_pool(t->g, t->n->name, x));
}
