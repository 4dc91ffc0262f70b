/* Builds one directgraph graph from a set of ORT nodes, through the public
 * builder only. GetCapability uses it to try candidates (whatever fails
 * here is declined), Compile to build what was claimed: the same code on
 * both sides, so that Compile never meets a node the trial did not. */
#include "ep_region.h"

#include "../graph/names.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rg_fail(ep_region *r, const char *field, const char *fmt, ...) {
  if (r->failed)
    return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  dg_text_mark_cut(msg, sizeof msg, vsnprintf(msg, sizeof msg, fmt, ap));
  va_end(ap);
  r->failed = true;
  /* The node's and the field's (often a value's) names at any length:
   * shown shortened, so that the reason after them survives. */
  char node[DG_NAME_SHORT], what[DG_NAME_SHORT];
  dg_name_shorten(node, sizeof node, r->node_name ? r->node_name : "?");
  dg_name_shorten(what, sizeof what, field);
  if (r->err && r->errlen)
    dg_text_mark_cut(r->err, r->errlen,
                     snprintf(r->err, r->errlen, "node '%s' (%s)%s%s: %s", node,
                              r->node ? ep_node_op(r->o, r->node) : "?",
                              field ? ", " : "", what, msg));
}

bool rg_check(ep_region *r) {
  if (r->failed)
    return true;
  if (dg_graph_status(r->g) == DG_OK)
    return false;
  const dg_diagnostic *d = dg_graph_error(r->g);
  rg_fail(r, d && d->field[0] ? d->field : NULL, "directgraph: %s",
          d ? d->message : "builder error");
  return true;
}

static ep_value *find(ep_region *r, const char *name) {
  for (int i = 0; i < r->nvalues; i++)
    if (!strcmp(r->values[i].name, name))
      return &r->values[i];
  return NULL;
}

static bool add(ep_region *r, const char *name, dg_tensor t, bool produced) {
  if (r->nvalues == r->cap) {
    int cap = r->cap ? r->cap * 2 : 32;
    ep_value *v = realloc(r->values, sizeof *v * (size_t)cap);
    if (!v)
      return false;
    r->values = v;
    r->cap = cap;
  }
  char *copy = strdup(name);
  if (!copy)
    return false;
  r->values[r->nvalues++] = (ep_value){copy, t, produced};
  return true;
}

bool rg_has_input(const ep_region *r, int i) {
  return i >= 0 && i < r->nin && r->in[i] && ep_value_name(r->o, r->in[i])[0];
}

bool rg_const(ep_region *r, int i, ep_const *c) {
  return rg_has_input(r, i) && ep_value_const(r->o, r->in[i], c);
}

static bool read_numbers(ep_region *r, int i, double *out, int max, int *n) {
  ep_const c;
  if (!rg_const(r, i, &c)) {
    rg_fail(r, ep_value_name(r->o, r->in[i]), "must be a constant initializer");
    return false;
  }
  if (c.count > (size_t)max) {
    rg_fail(r, ep_value_name(r->o, r->in[i]), "%zu values, at most %d taken",
            c.count, max);
    return false;
  }
  for (size_t k = 0; k < c.count; k++) {
    switch (c.elem) {
    case ORT_ELEM_FLOAT: out[k] = ((const float *)c.data)[k]; break;
    case ORT_ELEM_UINT8: out[k] = ((const uint8_t *)c.data)[k]; break;
    case ORT_ELEM_INT8: out[k] = ((const int8_t *)c.data)[k]; break;
    case ORT_ELEM_INT32: out[k] = ((const int32_t *)c.data)[k]; break;
    case ORT_ELEM_INT64: out[k] = (double)((const int64_t *)c.data)[k]; break;
    default:
      rg_fail(r, ep_value_name(r->o, r->in[i]), "element type %d not read",
              c.elem);
      return false;
    }
  }
  *n = (int)c.count;
  return true;
}

bool rg_const_floats(ep_region *r, int i, float *out, int max, int *n) {
  double *tmp = malloc(sizeof(double) * (size_t)(max ? max : 1));
  bool ok = tmp && read_numbers(r, i, tmp, max, n);
  for (int k = 0; ok && k < *n; k++)
    out[k] = (float)tmp[k];
  free(tmp);
  return ok;
}

bool rg_const_ints(ep_region *r, int i, int64_t *out, int max, int *n) {
  ep_const c;
  /* int64 shapes are read directly: a double cannot hold every int64. */
  if (rg_const(r, i, &c) && c.elem == ORT_ELEM_INT64 && c.count <= (size_t)max) {
    memcpy(out, c.data, sizeof(int64_t) * c.count);
    *n = (int)c.count;
    return true;
  }
  double *tmp = malloc(sizeof(double) * (size_t)(max ? max : 1));
  bool ok = tmp && read_numbers(r, i, tmp, max, n);
  for (int k = 0; ok && k < *n; k++)
    out[k] = (int64_t)tmp[k];
  free(tmp);
  return ok;
}

static bool is_int8(dg_dtype t) { return t == DG_DTYPE_I8 || t == DG_DTYPE_U8; }

static bool same_quant(const dg_quant_params *a, const dg_quant_params *b) {
  if (a->channel_count != b->channel_count)
    return false;
  if (!a->channel_count)
    return a->scale == b->scale && a->zero_point == b->zero_point;
  for (int k = 0; k < a->channel_count; k++) {
    int32_t za = a->channel_zero_points ? a->channel_zero_points[k] : 0;
    int32_t zb = b->channel_zero_points ? b->channel_zero_points[k] : 0;
    if (a->channel_scales[k] != b->channel_scales[k] || za != zb)
      return false;
  }
  return a->axis == b->axis;
}

dg_tensor rg_input(ep_region *r, int i, const dg_quant_params *quant,
                   bool optional) {
  if (r->failed)
    return DG_TENSOR_NONE;
  if (!rg_has_input(r, i)) {
    if (!optional)
      rg_fail(r, "input", "required input %d is missing", i);
    return DG_TENSOR_NONE;
  }
  const char *name = ep_value_name(r->o, r->in[i]);
  ep_value *v = find(r, name);
  if (v) {
    dg_tensor_desc d;
    /* An int8 value means what its producer's quantisation says; a
     * consumer that reads it with other parameters cannot be expressed
     * (the builder has no re-labelling op). */
    if (quant && dg_graph_tensor_desc(r->g, v->t, &d) == DG_OK &&
        is_int8(d.dtype) && !same_quant(&d.quant, quant)) {
      rg_fail(r, name, "quantisation differs from the producer's");
      return DG_TENSOR_NONE;
    }
    return v->t;
  }
  dg_tensor_desc d = {0};
  ep_const c;
  dg_tensor t;
  if (ep_value_const(r->o, r->in[i], &c)) {
    d.dtype = ep_dtype_of(c.elem);
    d.rank = c.rank;
    memcpy(d.dims, c.dims, sizeof d.dims);
    if (!d.dtype) {
      rg_fail(r, name, "constant of element type %d", c.elem);
      return DG_TENSOR_NONE;
    }
    if (quant && (is_int8(d.dtype) || d.dtype == DG_DTYPE_I32))
      d.quant = *quant;
    else if (is_int8(d.dtype))
      d.quant.scale = 1.0f; /* raw integers: shape ops only */
    t = dg_graph_constant(r->g, name, &d, c.data, 0); /* copied */
  } else {
    int elem = 0;
    if (!ep_value_shape(r->o, r->in[i], &elem, &d.rank, d.dims)) {
      rg_fail(r, name, "not a tensor of known rank");
      return DG_TENSOR_NONE;
    }
    d.dtype = ep_dtype_of(elem);
    if (!d.dtype) {
      rg_fail(r, name, "element type %d is not supported", elem);
      return DG_TENSOR_NONE;
    }
    for (int k = 0; k < d.rank; k++)
      if (d.dims[k] < 1) {
        rg_fail(r, name, "dimension %d is symbolic or empty", k);
        return DG_TENSOR_NONE;
      }
    if (is_int8(d.dtype))
      d.quant = quant ? *quant : (dg_quant_params){.scale = 1.0f};
    t = dg_graph_input(r->g, name, &d);
  }
  if (rg_check(r))
    return DG_TENSOR_NONE;
  if (!add(r, name, t, false)) {
    rg_fail(r, NULL, "out of memory");
    return DG_TENSOR_NONE;
  }
  return t;
}

void rg_output(ep_region *r, int i, dg_tensor t) {
  if (r->failed || rg_check(r))
    return;
  if (i >= r->nout || !r->out[i]) {
    rg_fail(r, "output", "missing output %d", i);
    return;
  }
  const char *name = ep_value_name(r->o, r->out[i]);
  dg_tensor_desc d;
  int elem = 0, rank = 0;
  int64_t dims[DG_MAX_RANK];
  if (dg_graph_tensor_desc(r->g, t, &d) != DG_OK) {
    rg_fail(r, name, "no tensor");
    return;
  }
  /* The result must be what ORT expects, or the fused node would hand
   * ORT a tensor of another type or shape. */
  if (ep_value_shape(r->o, r->out[i], &elem, &rank, dims)) {
    if (ep_dtype_of(elem) != d.dtype) {
      rg_fail(r, name, "directgraph gives %s, ORT expects element type %d",
              dg_dtype_name(d.dtype), elem);
      return;
    }
    bool same = rank == d.rank;
    for (int k = 0; same && k < rank; k++)
      same = dims[k] < 0 || dims[k] == d.dims[k];
    if (!same) {
      rg_fail(r, name, "directgraph's shape differs from ORT's");
      return;
    }
  }
  if (!add(r, name, t, true))
    rg_fail(r, NULL, "out of memory");
}

/* ---- region build ---- */

/* The next node none of whose producers inside the set is still unbuilt
 * (ORT's node order is not assumed to be topological). */
static int next_ready(const ep_ort *o, const OrtNode *const *nodes,
                      size_t count, const bool *done) {
  for (size_t k = 0; k < count; k++) {
    if (done[k])
      continue;
    const OrtValueInfo **ins;
    int n = ep_node_inputs(o, nodes[k], &ins);
    bool ready = n >= 0;
    for (int j = 0; j < n && ready; j++) {
      const OrtNode *p = ins[j] ? ep_value_producer(o, ins[j]) : NULL;
      for (size_t q = 0; p && q < count && ready; q++)
        ready = nodes[q] != p || done[q];
    }
    free(ins);
    if (ready)
      return (int)k;
  }
  return -1;
}

static void mark_outputs(ep_region *r, const char *const *outputs,
                         size_t output_count) {
  for (int i = 0; i < r->nvalues && !r->failed; i++) {
    bool want = !outputs && r->values[i].produced; /* trial: all of them */
    for (size_t k = 0; outputs && k < output_count && !want; k++)
      want = r->values[i].produced && !strcmp(outputs[k], r->values[i].name);
    if (want && dg_graph_output(r->g, r->values[i].name, r->values[i].t,
                                DG_LAYOUT_NCHW) != DG_OK)
      rg_check(r);
  }
  for (size_t k = 0; outputs && k < output_count && !r->failed; k++) {
    ep_value *v = find(r, outputs[k]);
    if (!v || !v->produced)
      rg_fail(r, outputs[k], "fused output is produced by no node");
  }
}

dg_graph *ep_region_build(const ep_ort *o, dg_context *ctx,
                          const OrtNode *const *nodes, size_t count,
                          const char *const *outputs, size_t output_count,
                          char *err, size_t len) {
  ep_region r = {.o = o, .err = err, .errlen = len};
  bool *done = calloc(count ? count : 1, sizeof *done);
  r.g = dg_graph_create(ctx, "onnxruntime_region");
  if (!done || !r.g) {
    free(done);
    dg_graph_destroy(r.g);
    if (err && len)
      snprintf(err, len, "out of memory");
    return NULL;
  }
  if (err && len)
    err[0] = 0;
  for (size_t step = 0; step < count && !r.failed; step++) {
    int k = next_ready(o, nodes, count, done);
    if (k < 0) {
      rg_fail(&r, NULL, "the nodes form a cycle");
      break;
    }
    r.node = nodes[k];
    r.opset = ep_node_opset(o, nodes[k]);
    r.nin = ep_node_inputs(o, nodes[k], &r.in);
    r.nout = ep_node_outputs(o, nodes[k], &r.out);
    /* Unnamed nodes (common in generated models) go by their output. */
    r.node_name = ep_node_name(o, nodes[k]);
    if (!r.node_name[0] && r.nout > 0 && r.out[0])
      r.node_name = ep_value_name(o, r.out[0]);
    if (r.nin < 0 || r.nout < 1)
      rg_fail(&r, NULL, "inputs or outputs unreadable");
    else
      ep_translate_node(&r, nodes[k]);
    rg_check(&r);
    free(r.in);
    free(r.out);
    r.in = r.out = NULL;
    done[k] = true;
  }
  r.node = NULL;
  r.node_name = "(region outputs)";
  if (!r.failed)
    mark_outputs(&r, outputs, output_count);
  for (int i = 0; i < r.nvalues; i++)
    free(r.values[i].name);
  free(r.values);
  free(done);
  if (r.failed) {
    dg_graph_destroy(r.g);
    return NULL;
  }
  return r.g;
}
