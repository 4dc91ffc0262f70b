/* softmax, and relu, sigmoid and clip, which are unary functions now
 * (unary.c): their builders are wrappers that emit the unary node. */
#include "build.h"
#include "ops.h"

#include <math.h>
#include <stdio.h>

static dg_tensor softmax(dg_graph *g, const char *name, dg_tensor x,
                         const dg_node_params *p) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_SOFTMAX, name))
    return DG_TENSOR_NONE;
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(&b, x, "x", false, &ok);
  if (!ok || !dg_build_dtype(&b, xi, "x", DG_FLOAT_TYPES))
    return DG_TENSOR_NONE;
  int r = xi->desc.rank;
  if (r < 1 || p->axis < -r || p->axis >= r) {
    char exp[32], got[32];
    snprintf(exp, sizeof exp, "in [-%d, %d)", r, r);
    snprintf(got, sizeof got, "%d", p->axis);
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "axis", exp, got,
                  "softmax axis out of range");
    return DG_TENSOR_NONE;
  }
  dg_node_params q = *p;
  if (q.axis < 0)
    q.axis += xi->desc.rank;
  uint32_t ins[1] = {x.id};
  return dg_build_finish(&b, ins, 1, &xi->desc, &q);
}

/* The old calls of the functions that became unary.def's lines. */
dg_tensor dg_graph_relu(dg_graph *g, const char *name, dg_tensor x) {
  return dg_graph_unary(g, name, DG_UNARY_RELU, x, 0, 0);
}

dg_tensor dg_graph_sigmoid(dg_graph *g, const char *name, dg_tensor x) {
  return dg_graph_unary(g, name, DG_UNARY_SIGMOID, x, 0, 0);
}

dg_tensor dg_graph_clip(dg_graph *g, const char *name, dg_tensor x, float lo,
                        float hi) {
  return dg_graph_unary(g, name, DG_UNARY_CLIP, x, lo, hi);
}

dg_tensor dg_graph_softmax(dg_graph *g, const char *name, dg_tensor x,
                           int32_t axis) {
  dg_node_params p = {.axis = axis};
  return softmax(g, name, x, &p);
}

/* ---- reference ---- */

static int64_t elems(const dg_ir *ir, uint32_t id) {
  return dg_desc_elements(&dg_ir_tensor(ir, id)->desc);
}

void dg_ref_softmax(const dg_ir *ir, const dg_node *n, const double *const *in,
                    double *out) {
  const dg_tensor_desc *d = &dg_ir_tensor(ir, n->output)->desc;
  int64_t outer, len = d->dims[n->p.axis], inner;
  dg_desc_split(d, n->p.axis, &outer, &inner);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      const double *x = in[0] + o * len * inner + j;
      double *y = out + o * len * inner + j;
      double mx = -INFINITY, s = 0;
      for (int64_t k = 0; k < len; k++)
        mx = x[k * inner] > mx ? x[k * inner] : mx;
      for (int64_t k = 0; k < len; k++)
        s += (y[k * inner] = exp(x[k * inner] - mx));
      for (int64_t k = 0; k < len; k++)
        y[k * inner] /= s;
    }
}

static double out_elems(const dg_ir *ir, const dg_node *n) {
  return (double)elems(ir, n->output);
}
double dg_flops_softmax(const dg_ir *ir, const dg_node *n) {
  return 5 * out_elems(ir, n);
}
