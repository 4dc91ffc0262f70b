/* LpPool and GlobalLpPool: y = (sum over the window of |x|^p)^(1/p),
 * composed of builder ops (the builder has no Lp pooling of its own):
 *   LpPool:       abs -> pow p -> avg_pool2d (count_include_pad) -> mul K
 *                 -> pow 1/p
 *   GlobalLpPool: reduce L1 (p 1), L2 (p 2), else abs -> pow p -> reduce
 *                 sum -> pow 1/p
 * where K is the number of window taps. The average with
 * count_include_pad divides by the taps inside the padded input, and
 * padded taps add 0, so times K it is the window's sum exactly when every
 * tap lies inside the padded input: true without ceil_mode (and with
 * auto_pad, whose pads cover the last window); a ceil_mode window that
 * hangs past the end padding gets the missing end pad instead, which adds
 * zeros only. p = 1 skips the pows. */
#include "onnx_tr.h"

#include <stdio.h>
#include <string.h>

/* A scalar constant [1] of dtype dt (f32 or f16), named after the node.
 * f16 goes through a cast node: the translator needs only graph.h, which
 * has no half conversion. */
static dg_tensor scalar(tr *t, const char *what, dg_dtype dt, float v) {
  char name[96];
  snprintf(name, sizeof name, "%s/%s#%d", t->n->name, what, t->cur);
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {1}};
  dg_tensor c = dg_graph_constant(t->g, name, &d, &v, 0);
  return dt == DG_DTYPE_F16 ? dg_graph_cast(t->g, NULL, c, DG_DTYPE_F16) : c;
}

/* p: an int from opset 2, a float at opset 1 (default 2 in both); it
 * must be positive (1/p is taken). */
static bool read_p(tr *t, float *p) {
  *p = t->n->opset >= 2 ? (float)tr_attr_int(t, "p", 2)
                        : tr_attr_float(t, "p", 2.0f);
  if (t->st != DG_OK)
    return false;
  if (!(*p > 0)) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "p", "p %g is not positive",
            (double)*p);
    return false;
  }
  return true;
}

/* |x|^p (just |x| for p 1). */
static dg_tensor abs_pow(tr *t, dg_tensor x, dg_dtype dt, float p) {
  dg_tensor a = dg_graph_unary(t->g, NULL, DG_UNARY_ABS, x, 0, 0);
  return p == 1 ? a
                : dg_graph_binary(t->g, NULL, DG_BINARY_POW, a,
                                  scalar(t, "p", dt, p));
}

static dg_tensor root(tr *t, const char *name, dg_tensor s, dg_dtype dt,
                      float p) {
  return p == 1 ? s
                : dg_graph_binary(t->g, name, DG_BINARY_POW, s,
                                  scalar(t, "inv_p", dt, 1.0f / p));
}

/* Turns ceil_mode into end padding (see the top): per dim, the output
 * size ceil mode gives, and the end pad that makes every window of it fit
 * (never more than stride - 1 extra). */
static bool ceil_to_pads(tr *t, const dg_tensor_desc *d, dg_pool2d_params *p) {
  if (!p->ceil_mode)
    return true;
  if (p->padding != DG_PADDING_EXPLICIT) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "ceil_mode",
            "LpPool's ceil_mode with auto_pad is not supported");
    return false;
  }
  int sp = d->rank - 2;
  for (int i = 0; i < 2; i++) {
    int64_t in = i == 0 && sp == 1 ? 1 : d->dims[d->rank - 2 + i];
    int64_t span = (int64_t)(p->kernel[i] - 1) * p->dilation[i] + 1;
    int64_t padded = in + p->pads[i] + p->pads[i + 2];
    if (padded < span)
      return true; /* the builder says why */
    int64_t out = (padded - span) / p->stride[i] + 1;
    if ((padded - span) % p->stride[i] &&
        out * p->stride[i] < in + p->pads[i]) /* the ceil rule */
      out++;
    int64_t extra = (out - 1) * p->stride[i] + span - padded;
    if (extra > 0 && p->pads[i + 2] + extra >= span) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, "ceil_mode",
              "LpPool's ceil_mode window would need an end pad of %lld, "
              "not less than the window (%lld)",
              (long long)(p->pads[i + 2] + extra), (long long)span);
      return false;
    }
    if (extra > 0)
      p->pads[i + 2] += (int32_t)extra;
  }
  p->ceil_mode = 0;
  return true;
}

void tr_op_lp_pool(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  dg_pool2d_params pp;
  float p;
  if (!x.id || !tr_need_float(t, x, "X") || !tr_desc(t, x, &d) ||
      !read_p(t, &p) || !tr_pool_params(t, &d, &pp) ||
      !ceil_to_pads(t, &d, &pp))
    return;
  pp.count_include_pad = 1;
  x = tr_as_2d(t, 0, x);
  dg_tensor avg =
      dg_graph_avg_pool2d(t->g, NULL, abs_pow(t, x, d.dtype, p), &pp);
  dg_tensor sum = dg_graph_binary(
      t->g, NULL, DG_BINARY_MUL, avg,
      scalar(t, "taps", d.dtype, (float)pp.kernel[0] * (float)pp.kernel[1]));
  tr_output(t, 0, tr_as_1d(t, root(t, t->n->name, sum, d.dtype, p), d.rank));
}

void tr_op_global_lp_pool(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  float p;
  if (!x.id || !tr_need_float(t, x, "X") || !tr_desc(t, x, &d) ||
      !read_p(t, &p))
    return;
  if (d.rank < 3) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "X",
            "GlobalLpPool needs [N, C, spatial...] (rank %d)", d.rank);
    return;
  }
  int32_t axes[DG_MAX_RANK];
  int na = 0;
  for (int i = 2; i < d.rank; i++)
    axes[na++] = i;
  dg_tensor y;
  if (p == 1 || p == 2)
    y = dg_graph_reduce(t->g, t->n->name, p == 1 ? DG_REDUCE_L1 : DG_REDUCE_L2,
                        x, axes, na, 1);
  else
    y = root(t, t->n->name,
             dg_graph_reduce(t->g, NULL, DG_REDUCE_SUM,
                             abs_pow(t, x, d.dtype, p), axes, na, 1),
             d.dtype, p);
  tr_output(t, 0, y);
}
