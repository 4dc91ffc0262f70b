/* Builds one directgraph graph from a set of ORT nodes with the ONNX
 * translator the importer uses (src/front/onnx/onnx_translate.h): this file is
 * the translator's source over OrtApi (nodes, attributes, initializers,
 * shapes). GetCapability uses it to try candidates (whatever fails here
 * is declined, with the importer's reason), Compile to build what was
 * claimed: the same code on both sides, so that Compile never meets a node
 * the trial did not. */
#include "ep_internal.h"

#include "core/names.h"
#include "front/onnx/onnx_translate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One node as read from ORT, with the arrays the node view points at. */
typedef struct ep_node {
  const OrtNode *node;
  const OrtValueInfo **in, **out;
  int nin, nout;
  const char **in_names, **out_names, **attr_names;
  int nattr;
} ep_node;

typedef struct ep_src {
  const ep_ort *o;
  ep_node *nodes; /* in dependency order */
  int count;
  const char *const *outputs;
  size_t output_count;
} ep_src;

/* ---- attributes ---- */

static const ep_ort *ort_of(const dg_onnx_node *n) {
  return ((const ep_src *)n->source)->o;
}

static bool attr_int(const dg_onnx_node *n, const char *name, int64_t *v) {
  return ep_attr_int(ort_of(n), n->impl, name, v);
}

static bool attr_float(const dg_onnx_node *n, const char *name, float *v) {
  return ep_attr_float(ort_of(n), n->impl, name, v);
}

static int attr_ints(const dg_onnx_node *n, const char *name, int64_t *out,
                     int max) {
  return ep_attr_ints(ort_of(n), n->impl, name, out, max);
}

static bool attr_string(const dg_onnx_node *n, const char *name, char *buf,
                        size_t len) {
  return ep_attr_string(ort_of(n), n->impl, name, buf, len);
}

/* ---- nodes ---- */

static bool read_node(void *self, int k, dg_onnx_node *out) {
  ep_src *s = self;
  const ep_node *e = &s->nodes[k];
  const char *name = ep_node_name(s->o, e->node);
  /* Unnamed nodes (common in generated models) go by their output. */
  if (!name[0] && e->nout > 0)
    name = e->out_names[0];
  *out = (dg_onnx_node){
      .op_type = ep_node_op(s->o, e->node),
      .domain = ep_node_domain(s->o, e->node),
      .name = name,
      .opset = ep_node_opset(s->o, e->node),
      .n_inputs = e->nin,
      .n_outputs = e->nout,
      .inputs = e->in_names,
      .outputs = e->out_names,
      .n_attrs = e->nattr,
      .attr_names = e->attr_names,
      .impl = e->node,
      .source = s,
      .attr_int = attr_int,
      .attr_float = attr_float,
      .attr_ints = attr_ints,
      .attr_string = attr_string,
      .constant_value = NULL, /* ORT made Constant nodes initializers */
  };
  return true;
}

/* The ValueInfo called name among the set's inputs (or outputs). */
static const OrtValueInfo *find_info(const ep_src *s, const char *name,
                                     bool outputs) {
  for (int k = 0; k < s->count; k++) {
    const ep_node *e = &s->nodes[k];
    int n = outputs ? e->nout : e->nin;
    for (int i = 0; i < n; i++)
      if (!strcmp(outputs ? e->out_names[i] : e->in_names[i], name))
        return outputs ? e->out[i] : e->in[i];
  }
  return NULL;
}

static void read_value(void *self, const char *name, dg_onnx_value *out) {
  ep_src *s = self;
  memset(out, 0, sizeof *out);
  out->rank = -1;
  const OrtValueInfo *produced = find_info(s, name, true);
  const OrtValueInfo *v = produced ? produced : find_info(s, name, false);
  ep_const c;
  if (!v)
    return;
  if (!produced && ep_value_const(s->o, v, &c)) {
    out->kind = DG_ONNX_VALUE_CONST;
    out->elem = c.elem;
    out->rank = c.rank;
    memcpy(out->dims, c.dims, sizeof out->dims);
    out->data = c.data;
    out->count = c.count;
    return;
  }
  out->kind = produced ? DG_ONNX_VALUE_TYPED : DG_ONNX_VALUE_INPUT;
  if (!ep_value_shape(s->o, v, &out->elem, &out->rank, out->dims))
    out->rank = -1;
  for (int k = 0; k < out->rank && !out->symbolic; k++)
    if (out->dims[k] < 0)
      out->symbolic = "?"; /* ORT's value info does not name it */
}

static bool read_outside(void *self, const char *name) {
  ep_src *s = self;
  for (size_t i = 0; i < s->output_count; i++)
    if (!strcmp(s->outputs[i], name))
      return true;
  return false;
}

/* ---- the set ---- */

static void node_free(ep_node *e) {
  free(e->in);
  free(e->out);
  free(e->in_names);
  free(e->out_names);
  free(e->attr_names);
}

static bool node_init(const ep_ort *o, const OrtNode *node, ep_node *e) {
  memset(e, 0, sizeof *e);
  e->node = node;
  e->nin = ep_node_inputs(o, node, &e->in);
  e->nout = ep_node_outputs(o, node, &e->out);
  e->nattr = ep_attr_names(o, node, &e->attr_names);
  if (e->nin < 0 || e->nout < 0 || e->nattr < 0)
    return false;
  e->in_names = calloc((size_t)e->nin + 1, sizeof *e->in_names);
  e->out_names = calloc((size_t)e->nout + 1, sizeof *e->out_names);
  if (!e->in_names || !e->out_names)
    return false;
  for (int i = 0; i < e->nin; i++)
    e->in_names[i] = ep_value_name(o, e->in[i]); /* "" when omitted */
  for (int i = 0; i < e->nout; i++)
    e->out_names[i] = ep_value_name(o, e->out[i]);
  return true;
}

/* Whether node k of the set reads only values no unplaced node of the set
 * produces (ORT's node order is not assumed to be topological). */
static bool ready(const ep_ort *o, const OrtNode *const *nodes, size_t count,
                  const bool *placed, size_t k) {
  const OrtValueInfo **ins;
  int n = ep_node_inputs(o, nodes[k], &ins);
  bool ok = n >= 0;
  for (int j = 0; j < n && ok; j++) {
    const OrtNode *p = ins[j] ? ep_value_producer(o, ins[j]) : NULL;
    for (size_t q = 0; p && q < count && ok; q++)
      ok = nodes[q] != p || placed[q] || q == k;
  }
  free(ins);
  return ok;
}

/* s->nodes in dependency order; false on a cycle or no memory. */
static bool sort_nodes(ep_src *s, const OrtNode *const *nodes, size_t count,
                       char *err, size_t len) {
  bool *placed = calloc(count + 1, sizeof *placed);
  s->nodes = calloc(count + 1, sizeof *s->nodes);
  if (!placed || !s->nodes) {
    free(placed);
    snprintf(err, len, "out of memory");
    return false;
  }
  for (s->count = 0; (size_t)s->count < count;) {
    size_t k = 0;
    while (k < count && (placed[k] || !ready(s->o, nodes, count, placed, k)))
      k++;
    if (k == count) {
      snprintf(err, len, "the nodes form a cycle");
      break;
    }
    placed[k] = true;
    if (!node_init(s->o, nodes[k], &s->nodes[s->count++])) {
      snprintf(err, len, "node inputs, outputs or attributes unreadable");
      break;
    }
  }
  free(placed);
  return (size_t)s->count == count;
}

/* "node 'NAME' (OP), FIELD: REASON": the reason is the importer's. */
static void describe(const dg_onnx_failure *w, char *err, size_t len) {
  char node[DG_NAME_SHORT], what[DG_NAME_SHORT];
  dg_name_shorten(node, sizeof node, w->node_name ? w->node_name : "?");
  dg_name_shorten(what, sizeof what, w->field);
  int want;
  if (w->node >= 0)
    want =
        snprintf(err, len, "node '%s' (%s)%s%s: %s", node, w->op ? w->op : "?",
                 w->field[0] ? ", " : "", what, w->reason);
  else
    want = snprintf(err, len, "region outputs: %s", w->reason);
  dg_text_mark_cut(err, len, want);
}

dg_graph *ep_region_build(const ep_ort *o, dg_context *ctx,
                          const OrtNode *const *nodes, size_t count,
                          const char *const *outputs, size_t output_count,
                          char *err, size_t len) {
  char scratch[8];
  if (!err || !len) {
    err = scratch;
    len = sizeof scratch;
  }
  err[0] = 0;
  ep_src s = {.o = o, .outputs = outputs, .output_count = output_count};
  dg_graph *g = dg_graph_create(ctx, "onnxruntime_region");
  bool ok = g && sort_nodes(&s, nodes, count, err, len);
  if (!g)
    snprintf(err, len, "out of memory");
  if (ok) {
    dg_onnx_source src = {
        .self = &s,
        .node_count = s.count,
        .node = read_node,
        .value = read_value,
        .read_outside = read_outside,
        .output_count = (int)output_count,
        .outputs = outputs,
        .symbolic_hint = "",
    };
    dg_onnx_failure why;
    if (dg_onnx_translate(g, &src, &why) != DG_OK) {
      describe(&why, err, len);
      ok = false;
    }
  }
  for (int k = 0; k < s.count; k++)
    node_free(&s.nodes[k]);
  free(s.nodes);
  if (!ok) {
    dg_graph_destroy(g);
    return NULL;
  }
  return g;
}

/* ---- a candidate's outputs ---- */

static bool member(const OrtNode *const *nodes, int count, const OrtNode *n) {
  for (int i = 0; i < count; i++)
    if (nodes[i] == n)
      return true;
  return false;
}

/* Whether a node of all outside the subset reads the value called name. */
static bool read_elsewhere(const ep_ort *o, const OrtNode *const *all, int nall,
                           const OrtNode *const *nodes, int count,
                           const char *name) {
  bool found = false;
  for (int k = 0; k < nall && !found; k++) {
    if (member(nodes, count, all[k]))
      continue;
    const OrtValueInfo **ins;
    int n = ep_node_inputs(o, all[k], &ins);
    for (int i = 0; i < n && !found; i++)
      found = ins[i] && !strcmp(ep_value_name(o, ins[i]), name);
    free(ins);
  }
  return found;
}

int ep_region_outputs(const ep_ort *o, const OrtNode *const *all, int nall,
                      const OrtNode *const *nodes, int count,
                      const char ***out) {
  int cap = 8, n = 0;
  const char **names = malloc(sizeof *names * (size_t)cap);
  for (int k = 0; names && k < count; k++) {
    const OrtValueInfo **outs;
    int no = ep_node_outputs(o, nodes[k], &outs);
    for (int i = 0; i < no && names; i++) {
      const char *name = ep_value_name(o, outs[i]);
      if (!name[0] || (!ep_value_is_graph_output(o, outs[i]) &&
                       !read_elsewhere(o, all, nall, nodes, count, name)))
        continue;
      if (n == cap) {
        const char **p = realloc(names, sizeof *p * (size_t)(cap *= 2));
        if (!p) {
          free(names);
          names = NULL;
          break;
        }
        names = p;
      }
      names[n++] = name;
    }
    free(outs);
  }
  *out = names;
  return names ? n : -1;
}
