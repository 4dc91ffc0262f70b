/* ONNX import: reads the file, unpacks it with protobuf-c, checks the
 * opset, lays out the value table (initializers, Constant nodes, graph
 * inputs, consumer counts) and translates the nodes in order. Graph inputs
 * and initializers are created lazily, on first use, because an integer
 * value's quantisation is only known from the node that reads it. */
#include "onnx_internal.h"

#include "../graph/names.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE_BYTES ((size_t)1 << 31)

void onnx_fail(onnx_ctx *c, dg_status st, const char *field, const char *fmt,
               ...) {
  if (c->st != DG_OK)
    return;
  c->st = st;
  if (!c->diag)
    return;
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  dg_text_mark_cut(msg, sizeof msg, vsnprintf(msg, sizeof msg, fmt, ap));
  va_end(ap);
  dg_diagnostic *d = c->diag;
  memset(d, 0, sizeof *d);
  d->status = st;
  d->node_index = c->node ? c->node_index : -1;
  const char *op = c->node && c->node->op_type ? c->node->op_type : "model";
  /* Node and tensor names (the field often is one) can be of any length:
   * the diagnostic shows them shortened, visibly, and the message quotes
   * the same copies so that the reason still fits. */
  dg_name_shorten(d->node_name, sizeof d->node_name,
                  c->node ? c->node->name : NULL);
  dg_name_shorten(d->op, sizeof d->op, op);
  dg_name_shorten(d->field, sizeof d->field, field);
  int want;
  if (c->node)
    want = snprintf(d->message, sizeof d->message,
                    "onnx node %d '%s' (%s)%s%s: %s", c->node_index,
                    d->node_name, d->op, field ? ", " : "", d->field, msg);
  else
    want = snprintf(d->message, sizeof d->message, "onnx: %s", msg);
  dg_text_mark_cut(d->message, sizeof d->message, want);
}

bool onnx_check_graph(onnx_ctx *c) {
  if (c->st != DG_OK)
    return true;
  const dg_diagnostic *e = dg_graph_error(c->g);
  if (!e)
    return false;
  /* A valid model using a dtype the builder does not take is unsupported,
   * not invalid. */
  onnx_fail(c, e->status == DG_ERROR_INVALID_DTYPE ? DG_ERROR_UNSUPPORTED
                                                   : e->status,
            e->field, "%s", e->message);
  return true;
}

onnx_value *onnx_value_find(onnx_ctx *c, const char *name) {
  for (int i = 0; name && i < c->nvals; i++)
    if (!strcmp(c->vals[i].name, name))
      return &c->vals[i];
  return NULL;
}

/* proto2 leaves unset names NULL: a value must have a non-empty one. */
onnx_value *onnx_value_add(onnx_ctx *c, const char *name) {
  if (!name || !name[0]) {
    onnx_fail(c, DG_ERROR_INVALID_ARGUMENT, "name",
              "a tensor, input or output has no name");
    return NULL;
  }
  onnx_value *v = onnx_value_find(c, name);
  if (v)
    return v;
  if (c->nvals == c->cap) {
    int cap = c->cap ? c->cap * 2 : 64;
    onnx_value *p = realloc(c->vals, sizeof *p * (size_t)cap);
    if (!p) {
      onnx_fail(c, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
      return NULL;
    }
    c->vals = p;
    c->cap = cap;
  }
  v = &c->vals[c->nvals++];
  memset(v, 0, sizeof *v);
  v->name = name;
  v->dq_node = -1;
  return v;
}

/* Creates a graph input from its ValueInfo, with quant for integer types. */
static dg_tensor make_input(onnx_ctx *c, onnx_value *v,
                            const dg_quant_params *quant) {
  const Onnx__TypeProto *tp = v->input->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
      !tp->tensor_type || !tp->tensor_type->shape) {
    onnx_fail(c, DG_ERROR_UNSUPPORTED, v->name,
              "graph input '%s' is not a tensor of known shape", v->name);
    return DG_TENSOR_NONE;
  }
  const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
  dg_tensor_desc d = {.dtype = onnx_dtype(tp->tensor_type->elem_type),
                      .rank = (int32_t)sh->n_dim};
  if (!d.dtype || sh->n_dim > DG_MAX_RANK) {
    onnx_fail(c, DG_ERROR_UNSUPPORTED, v->name,
              "graph input '%s': element type %d or rank %zu not supported",
              v->name, tp->tensor_type->elem_type, sh->n_dim);
    return DG_TENSOR_NONE;
  }
  for (size_t i = 0; i < sh->n_dim; i++) {
    const Onnx__TensorShapeProto__Dimension *dim = sh->dim[i];
    if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
      d.dims[i] = dim->dim_value;
    else if (c->opts.symbolic_dim_value > 0)
      d.dims[i] = c->opts.symbolic_dim_value;
    else {
      onnx_fail(c, DG_ERROR_UNSUPPORTED, v->name,
                "graph input '%s' has symbolic dimension %zu ('%s'); set "
                "dg_onnx_options.symbolic_dim_value", v->name, i,
                dim->value_case ==
                        ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                    ? dim->dim_param
                    : "?");
      return DG_TENSOR_NONE;
    }
  }
  if (d.dtype == DG_DTYPE_I8 || d.dtype == DG_DTYPE_U8)
    d.quant = quant ? *quant : (dg_quant_params){.scale = 1.0f}; /* raw */
  v->t = dg_graph_input(c->g, v->name, &d);
  v->input = NULL;
  onnx_check_graph(c);
  return v->t;
}

static dg_tensor make_constant(onnx_ctx *c, onnx_value *v,
                               const dg_quant_params *quant) {
  dg_tensor_desc d;
  void *data;
  char err[256];
  if (!onnx_tensor_decode(v->init, &d, &data, err, sizeof err)) {
    onnx_fail(c, DG_ERROR_INVALID_ARGUMENT, v->name, "%s", err);
    return DG_TENSOR_NONE;
  }
  if (quant && (d.dtype == DG_DTYPE_I8 || d.dtype == DG_DTYPE_U8 ||
                d.dtype == DG_DTYPE_I32))
    d.quant = *quant;
  else if (d.dtype == DG_DTYPE_I8 || d.dtype == DG_DTYPE_U8)
    d.quant.scale = 1.0f; /* raw integers: shape ops only */
  v->t = dg_graph_constant(c->g, v->name, &d, data, 0);
  free(data);
  onnx_check_graph(c);
  return v->t;
}

bool onnx_has_input(const onnx_ctx *c, int i) {
  return i < (int)c->node->n_input && c->node->input[i] &&
         c->node->input[i][0];
}

const Onnx__TensorProto *onnx_const_input(onnx_ctx *c, int i) {
  if (!onnx_has_input(c, i))
    return NULL;
  onnx_value *v = onnx_value_find(c, c->node->input[i]);
  return v ? v->init : NULL;
}

dg_tensor onnx_input(onnx_ctx *c, int i, const dg_quant_params *quant,
                     bool optional) {
  if (c->st != DG_OK)
    return DG_TENSOR_NONE;
  if (!onnx_has_input(c, i)) {
    if (!optional)
      onnx_fail(c, DG_ERROR_INVALID_ARGUMENT, "input",
                "required input %d is missing", i);
    return DG_TENSOR_NONE;
  }
  onnx_value *v = onnx_value_find(c, c->node->input[i]);
  if (!v) {
    onnx_fail(c, DG_ERROR_INVALID_ARGUMENT, "input",
              "input '%s' is produced by no earlier node, initializer or "
              "graph input", c->node->input[i]);
    return DG_TENSOR_NONE;
  }
  if (v->t.id)
    return v->t;
  if (v->input)
    return make_input(c, v, quant);
  if (v->init)
    return make_constant(c, v, quant);
  if (v->dq_node >= 0) {
    /* A dequantisation nobody folded: emit it now, as a float value. The
     * value forgets its producer first, so a cycle back to it is an
     * error, not an endless recursion. */
    const Onnx__NodeProto *saved = c->node;
    int saved_index = c->node_index, saved_emit = c->emitting_dq;
    int dq = v->dq_node;
    v->dq_node = -1;
    c->node_index = c->emitting_dq = dq;
    c->node = c->gp->node[dq];
    onnx_translate_node(c); /* may grow the value table: v is stale */
    c->emitting_dq = saved_emit;
    c->node = saved;
    c->node_index = saved_index;
    v = onnx_value_find(c, saved->input[i]);
    return v ? v->t : DG_TENSOR_NONE;
  }
  onnx_fail(c, DG_ERROR_INVALID_ARGUMENT, "input",
            "input '%s' is produced by no earlier node, initializer or "
            "graph input", v->name);
  return DG_TENSOR_NONE;
}

void onnx_output(onnx_ctx *c, int i, dg_tensor t) {
  if (c->st != DG_OK || onnx_check_graph(c))
    return;
  if (i >= (int)c->node->n_output) {
    onnx_fail(c, DG_ERROR_INVALID_ARGUMENT, "output", "missing output %d", i);
    return;
  }
  onnx_value *v = onnx_value_add(c, c->node->output[i]);
  if (v)
    v->t = t;
}

/* ---- attributes ---- */

const Onnx__AttributeProto *onnx_attr(const onnx_ctx *c, const char *name) {
  for (size_t i = 0; i < c->node->n_attribute; i++)
    if (c->node->attribute[i]->name &&
        !strcmp(c->node->attribute[i]->name, name))
      return c->node->attribute[i];
  return NULL;
}

int64_t onnx_attr_int(const onnx_ctx *c, const char *name, int64_t def) {
  const Onnx__AttributeProto *a = onnx_attr(c, name);
  return a && a->has_i ? a->i : def;
}

float onnx_attr_float(const onnx_ctx *c, const char *name, float def) {
  const Onnx__AttributeProto *a = onnx_attr(c, name);
  return a && a->has_f ? a->f : def;
}

int onnx_attr_ints(const onnx_ctx *c, const char *name, int64_t *out,
                   int max) {
  const Onnx__AttributeProto *a = onnx_attr(c, name);
  if (!a)
    return -1;
  int n = (int)(a->n_ints < (size_t)max ? a->n_ints : (size_t)max);
  for (int i = 0; i < n; i++)
    out[i] = a->ints[i];
  return (int)a->n_ints;
}

bool onnx_attrs_allowed(onnx_ctx *c, const char *const *names) {
  for (size_t i = 0; i < c->node->n_attribute; i++) {
    const char *a = c->node->attribute[i]->name ? c->node->attribute[i]->name
                                                : "";
    bool known = false;
    for (int k = 0; names && names[k] && !known; k++)
      known = !strcmp(a, names[k]);
    if (!known) {
      onnx_fail(c, DG_ERROR_UNSUPPORTED, a, "attribute '%s' is not supported",
                a);
      return false;
    }
  }
  return true;
}

/* ---- the model ---- */

static int32_t onnx_type_of(dg_dtype t) {
  static const int32_t map[DG_DTYPE_COUNT_] = {
      [DG_DTYPE_F32] = 1, [DG_DTYPE_U8] = 2, [DG_DTYPE_I8] = 3,
      [DG_DTYPE_I32] = 6, [DG_DTYPE_F16] = 10};
  return t > 0 && t < DG_DTYPE_COUNT_ ? map[t] : 0;
}

/* Graph inputs the caller fixed (dg_onnx_options.constants) become
 * initializers: TensorProtos made here, pointing at the caller's data. */
static bool freeze_inputs(onnx_ctx *c) {
  int n = c->opts.constant_count;
  if (n <= 0)
    return true;
  if (!c->opts.constants) {
    onnx_fail(c, DG_ERROR_INVALID_ARGUMENT, "constants", "constants is NULL");
    return false;
  }
  c->frozen = calloc((size_t)n, sizeof *c->frozen);
  c->frozen_dims = calloc((size_t)n * DG_MAX_RANK, sizeof *c->frozen_dims);
  if (!c->frozen || !c->frozen_dims) {
    onnx_fail(c, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return false;
  }
  for (int i = 0; i < n; i++) {
    const dg_onnx_constant *k = &c->opts.constants[i];
    onnx_value *v = k->name ? onnx_value_find(c, k->name) : NULL;
    if (!v || !v->input || !k->desc || !k->data ||
        !onnx_type_of(k->desc->dtype) || k->desc->rank < 0 ||
        k->desc->rank > DG_MAX_RANK) {
      onnx_fail(c, DG_ERROR_INVALID_ARGUMENT, "constants",
                "constants[%d] ('%s') is not a graph input with a valid "
                "descriptor and data", i, k->name ? k->name : "(null)");
      return false;
    }
    Onnx__TensorProto *t = &c->frozen[i];
    onnx__tensor_proto__init(t);
    t->name = (char *)k->name;
    t->has_data_type = 1;
    t->data_type = onnx_type_of(k->desc->dtype);
    t->n_dims = (size_t)k->desc->rank;
    t->dims = c->frozen_dims + (size_t)i * DG_MAX_RANK;
    size_t count = 1;
    for (int r = 0; r < k->desc->rank; r++) {
      t->dims[r] = k->desc->dims[r];
      count *= (size_t)(k->desc->dims[r] > 0 ? k->desc->dims[r] : 0);
    }
    t->has_raw_data = 1;
    t->raw_data.len = count * dg_dtype_size(k->desc->dtype);
    t->raw_data.data = (uint8_t *)k->data;
    v->init = t;
    v->input = NULL;
  }
  return true;
}

static dg_status import(onnx_ctx *c, const Onnx__ModelProto *m) {
  if (!m->graph) {
    onnx_fail(c, DG_ERROR_INVALID_ARGUMENT, "graph", "the model has no graph");
    return c->st;
  }
  c->gp = m->graph;
  c->opset = -1;
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = m->opset_import[i];
    if (!o->domain || !o->domain[0] || !strcmp(o->domain, "ai.onnx"))
      c->opset = o->has_version ? o->version : 1;
  }
  if (c->opset < 1 || c->opset > 21) {
    onnx_fail(c, DG_ERROR_UNSUPPORTED, "opset_import",
              "default-domain opset %lld is not supported (1..21)",
              (long long)c->opset);
    return c->st;
  }
  const Onnx__GraphProto *gp = m->graph;
  c->done = calloc(gp->n_node + 1, sizeof *c->done);
  c->qbuf = malloc(3 * sizeof *c->qbuf);
  if (!c->done || !c->qbuf) {
    onnx_fail(c, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return c->st;
  }
  for (size_t i = 0; i < gp->n_initializer && c->st == DG_OK; i++) {
    onnx_value *v = onnx_value_add(c, gp->initializer[i]->name);
    if (v)
      v->init = gp->initializer[i];
  }
  for (size_t i = 0; i < gp->n_input && c->st == DG_OK; i++) {
    onnx_value *v = onnx_value_add(c, gp->input[i]->name);
    if (v && !v->init) /* older models list initializers as inputs too */
      v->input = gp->input[i];
  }
  if (!freeze_inputs(c))
    return c->st;
  for (size_t i = 0; i < gp->n_node && c->st == DG_OK; i++)
    for (size_t k = 0; k < gp->node[i]->n_input; k++) {
      onnx_value *v = onnx_value_find(c, gp->node[i]->input[k]);
      if (v)
        v->consumers++;
      else if (gp->node[i]->input[k] && gp->node[i]->input[k][0]) {
        /* produced by a later node: counted when it appears */
        v = onnx_value_add(c, gp->node[i]->input[k]);
        if (v)
          v->consumers++;
      }
    }
  for (size_t i = 0; i < gp->n_output && c->st == DG_OK; i++) {
    onnx_value *v = onnx_value_add(c, gp->output[i]->name);
    if (v)
      v->consumers++;
  }
  for (size_t i = 0; i < gp->n_node && c->st == DG_OK; i++) {
    if (c->done[i])
      continue;
    c->node_index = (int)i;
    c->node = gp->node[i];
    onnx_translate_node(c);
  }
  c->node = NULL;
  for (size_t i = 0; i < gp->n_output && c->st == DG_OK; i++) {
    onnx_value *v = onnx_value_find(c, gp->output[i]->name);
    if (v && !v->t.id && v->dq_node >= 0) {
      /* A dequantised graph output: emit the DequantizeLinear now. */
      int dq = v->dq_node;
      v->dq_node = -1;
      c->node_index = c->emitting_dq = dq;
      c->node = gp->node[dq];
      onnx_translate_node(c);
      c->emitting_dq = -1;
      c->node = NULL;
      v = onnx_value_find(c, gp->output[i]->name);
    }
    if (v && !v->t.id && (v->init || v->input)) {
      /* An output that is an initializer, an input or a lone DQ. */
      c->node = NULL;
      onnx_fail(c, DG_ERROR_UNSUPPORTED, v->name,
                "graph output '%s' is not computed by any node", v->name);
    } else if (v && !v->t.id) {
      onnx_fail(c, DG_ERROR_INVALID_ARGUMENT, v->name,
                "graph output '%s' is never produced", v->name);
    } else if (v) {
      dg_graph_output(c->g, v->name, v->t, DG_LAYOUT_NCHW);
      onnx_check_graph(c);
    }
  }
  /* Inputs no node read still belong to the graph. */
  for (size_t i = 0; i < gp->n_input && c->st == DG_OK; i++) {
    onnx_value *v = onnx_value_find(c, gp->input[i]->name);
    if (v && v->input)
      make_input(c, v, NULL);
  }
  return c->st;
}

dg_status dg_onnx_load_memory(dg_context *ctx, const void *data, size_t size,
                              const dg_onnx_options *opts, dg_graph **out,
                              dg_diagnostic *diag) {
  onnx_ctx c = {.dctx = ctx, .diag = diag, .emitting_dq = -1};
  if (out)
    *out = NULL;
  if (!ctx || !out || (!data && size)) {
    onnx_fail(&c, DG_ERROR_INVALID_ARGUMENT, NULL,
              "dg_onnx_load: NULL context, output or data");
    return c.st;
  }
  if (opts)
    c.opts = *opts;
  if (c.opts.symbolic_dim_value < 0) {
    onnx_fail(&c, DG_ERROR_INVALID_ARGUMENT, "symbolic_dim_value",
              "must be >= 0");
    return c.st;
  }
  Onnx__ModelProto *m =
      onnx__model_proto__unpack(NULL, size, (const uint8_t *)data);
  if (!m) {
    onnx_fail(&c, DG_ERROR_INVALID_ARGUMENT, NULL,
              "not a valid ONNX model (protobuf parse failed: truncated or "
              "corrupt)");
    return c.st;
  }
  c.g = dg_graph_create(ctx, m->graph && m->graph->name ? m->graph->name
                                                         : "onnx");
  if (!c.g)
    onnx_fail(&c, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
  else
    import(&c, m);
  free(c.vals);
  free(c.done);
  free(c.qbuf);
  free(c.frozen);
  free(c.frozen_dims);
  onnx__model_proto__free_unpacked(m, NULL);
  if (c.st != DG_OK) {
    dg_graph_destroy(c.g);
    return c.st;
  }
  *out = c.g;
  return DG_OK;
}

dg_status dg_onnx_load(dg_context *ctx, const char *path,
                       const dg_onnx_options *opts, dg_graph **out,
                       dg_diagnostic *diag) {
  onnx_ctx c = {.diag = diag};
  if (out)
    *out = NULL;
  if (!path) {
    onnx_fail(&c, DG_ERROR_INVALID_ARGUMENT, "path", "path is NULL");
    return c.st;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    onnx_fail(&c, DG_ERROR_IO, "path", "cannot open '%s'", path);
    return c.st;
  }
  long len = -1;
  if (fseek(f, 0, SEEK_END) == 0)
    len = ftell(f);
  if (len < 0 || (size_t)len > MAX_FILE_BYTES || fseek(f, 0, SEEK_SET)) {
    fclose(f);
    onnx_fail(&c, DG_ERROR_IO, "path", "'%s' is not a readable file of at "
              "most 2 GiB", path);
    return c.st;
  }
  void *buf = malloc((size_t)len ? (size_t)len : 1);
  if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
    free(buf);
    fclose(f);
    onnx_fail(&c, buf ? DG_ERROR_IO : DG_ERROR_OUT_OF_MEMORY, "path",
              "cannot read '%s'", path);
    return c.st;
  }
  fclose(f);
  dg_status st = dg_onnx_load_memory(ctx, buf, (size_t)len, opts, out, diag);
  free(buf);
  return st;
}
