/* The translator's driver: passes over the source's node list, each once,
 * none re-entering another (docs/onnx.md, "How a model gets in"):
 *   1. read the nodes and lay out the value table (who produces and who
 *      reads each name: build_table);
 *   2. every Constant node becomes its value (pass_constants);
 *   3. every DequantizeLinear is marked pending (pass_mark_dq);
 *   4. one walk emits the nodes in order through the op table, a Q/DQ
 *      chain at its head (onnx_qdq.c, onnx_qdq_ops.c), then marks the
 *      outputs.
 * Inputs and constants become tensors on first use, because an integer
 * value's quantisation is only known from the node that reads it; a
 * pending DequantizeLinear likewise becomes a float dequantize only where
 * a node outside an int8 fold reads it (emit_dq). */
#include "onnx_tr.h"

#include "core/names.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tr_fail(tr *t, dg_status st, const char *field, const char *fmt, ...) {
  if (t->st != DG_OK)
    return;
  t->st = st;
  if (!t->why)
    return;
  dg_onnx_failure *w = t->why;
  w->status = st;
  w->node = t->n ? t->cur : -1;
  w->node_name = t->n ? t->n->name : NULL;
  w->op = t->n ? t->n->op_type : NULL;
  snprintf(w->field, sizeof w->field, "%s", field ? field : "");
  va_list ap;
  va_start(ap, fmt);
  dg_text_mark_cut(w->reason, sizeof w->reason,
                   vsnprintf(w->reason, sizeof w->reason, fmt, ap));
  va_end(ap);
}

bool tr_check(tr *t) {
  if (t->st != DG_OK)
    return true;
  const dg_diagnostic *e = dg_graph_error(t->g);
  if (!e)
    return false;
  /* A valid model using a dtype the builder does not take is unsupported,
   * not invalid. */
  tr_fail(
      t, e->status == DG_ERROR_INVALID_DTYPE ? DG_ERROR_UNSUPPORTED : e->status,
      e->field, "%s", e->message);
  return true;
}

bool tr_is_op(const dg_onnx_node *n, const char *op) {
  return n->op_type && !strcmp(n->op_type, op) &&
         (!n->domain || !n->domain[0] || !strcmp(n->domain, "ai.onnx"));
}

/* ---- the value table ---- */

static const char *value_name(const void *ctx, int i) {
  return ((const tr *)ctx)->vals[i].name;
}

tr_value *tr_value_find(tr *t, const char *name) {
  int i = dg_name_map_find(&t->names, name, value_name, t);
  return i < 0 ? NULL : &t->vals[i];
}

/* Every name is added before translating, so entries never move. */
static tr_value *value_add(tr *t, const char *name, int *cap) {
  tr_value *v = tr_value_find(t, name);
  if (v)
    return v;
  if (t->nvals == *cap) {
    int n = *cap ? *cap * 2 : 64;
    tr_value *p = realloc(t->vals, sizeof *p * (size_t)n);
    if (!p)
      return NULL;
    t->vals = p;
    *cap = n;
  }
  v = &t->vals[t->nvals];
  memset(v, 0, sizeof *v);
  v->name = name;
  v->producer = v->dq_node = -1;
  if (!dg_name_map_insert(&t->names, name, t->nvals, value_name, t))
    return NULL;
  t->nvals++;
  return v;
}

static bool named(const char *s) { return s && s[0]; }

static bool build_table(tr *t) {
  int cap = 0;
  for (int k = 0; k < t->src->node_count && t->st == DG_OK; k++) {
    const dg_onnx_node *n = &t->nodes[k];
    for (int i = 0; i < n->n_inputs; i++) {
      tr_value *v =
          named(n->inputs[i]) ? value_add(t, n->inputs[i], &cap) : NULL;
      if (v)
        v->readers++;
      else if (named(n->inputs[i]))
        tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    }
    for (int i = 0; i < n->n_outputs; i++) {
      tr_value *v =
          named(n->outputs[i]) ? value_add(t, n->outputs[i], &cap) : NULL;
      if (v && v->producer < 0)
        v->producer = k;
      else if (v)
        tr_fail(t, DG_ERROR_INVALID_ARGUMENT, n->outputs[i],
                "value '%s' is written by nodes %d and %d", n->outputs[i],
                v->producer, k);
      else if (named(n->outputs[i]))
        tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    }
  }
  const dg_onnx_source *s = t->src;
  for (int i = 0; i < s->output_count + s->input_count && t->st == DG_OK; i++) {
    const char *name =
        i < s->output_count ? s->outputs[i] : s->inputs[i - s->output_count];
    if (!named(name))
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "name",
              "a tensor, input or output has no name");
    else if (!value_add(t, name, &cap))
      tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
  }
  return t->st == DG_OK;
}

/* ---- inputs ---- */

bool tr_has_input(const tr *t, int i) {
  return t->n && i >= 0 && i < t->n->n_inputs && named(t->n->inputs[i]);
}

/* What the front end says of a value no node produces (or a Constant). */
static void source_value(tr *t, const tr_value *v, dg_onnx_value *out) {
  memset(out, 0, sizeof *out);
  out->rank = -1;
  if (v->has_const)
    *out = v->cv;
  else if (v->producer < 0)
    t->src->value(t->src->self, v->name, out);
}

bool tr_const(tr *t, int i, dg_onnx_value *c) {
  if (!tr_has_input(t, i))
    return false;
  tr_value *v = tr_value_find(t, t->n->inputs[i]);
  if (!v)
    return false;
  source_value(t, v, c);
  if (c->kind == DG_ONNX_VALUE_CONST && c->error) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, v->name, "%s", c->error);
    return false;
  }
  return c->kind == DG_ONNX_VALUE_CONST;
}

void tr_input_type(tr *t, int i, dg_onnx_value *c) {
  memset(c, 0, sizeof *c);
  c->rank = -1;
  if (tr_has_input(t, i))
    t->src->value(t->src->self, t->n->inputs[i], c);
}

dg_dtype tr_dtype(int elem) {
  switch (elem) {
  case DG_ONNX_FLOAT:
    return DG_DTYPE_F32;
  case DG_ONNX_FLOAT16:
    return DG_DTYPE_F16;
  case DG_ONNX_INT8:
    return DG_DTYPE_I8;
  case DG_ONNX_UINT8:
    return DG_DTYPE_U8;
  case DG_ONNX_INT32:
    return DG_DTYPE_I32;
  case DG_ONNX_INT64:
    return DG_DTYPE_I64;
  case DG_ONNX_BOOL:
    return DG_DTYPE_BOOL;
  default:
    return DG_DTYPE_INVALID;
  }
}

static bool is_int8(dg_dtype d) { return d == DG_DTYPE_I8 || d == DG_DTYPE_U8; }

/* A constant as a tensor, of its own element type: int64 stays i64 (shape
 * and axes parameters are read as numbers by tr_const_ints, never through
 * this tensor). */
static dg_tensor make_constant(tr *t, tr_value *v, const dg_onnx_value *c,
                               const dg_quant_params *quant) {
  dg_tensor_desc d = {.dtype = tr_dtype(c->elem), .rank = c->rank};
  const void *data = c->data;
  if (!d.dtype || c->rank < 0 || c->rank > DG_MAX_RANK) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, v->name,
            "constant '%s' has element type %d or rank %d, not supported",
            v->name, c->elem, c->rank);
    return DG_TENSOR_NONE;
  }
  memcpy(d.dims, c->dims, sizeof d.dims);
  for (int k = 0; k < c->rank; k++)
    if (c->dims[k] == 0) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, v->name,
              "constant '%s' is empty (dimension %d is 0); directgraph's "
              "tensors have dimensions >= 1",
              v->name, k);
      return DG_TENSOR_NONE;
    }
  if (quant && (is_int8(d.dtype) || d.dtype == DG_DTYPE_I32))
    d.quant = *quant;
  else if (is_int8(d.dtype))
    d.quant.scale = 1.0f; /* raw integers: shape ops only */
  v->t = dg_graph_constant(t->g, v->name, &d, data, 0); /* copied */
  tr_check(t);
  return v->t;
}

static dg_tensor make_input(tr *t, tr_value *v, const dg_onnx_value *c,
                            const dg_quant_params *quant) {
  dg_tensor_desc d = {.dtype = tr_dtype(c->elem), .rank = c->rank};
  if (c->rank < 0 || c->rank > DG_MAX_RANK || !d.dtype) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, v->name,
            "graph input '%s' is not a tensor of known rank and supported "
            "element type (type %d, rank %d)",
            v->name, c->elem, c->rank);
    return DG_TENSOR_NONE;
  }
  for (int k = 0; k < c->rank; k++) {
    if (c->dims[k] < 0) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, v->name,
              "graph input '%s' has symbolic dimension %d ('%s')%s", v->name, k,
              c->symbolic ? c->symbolic : "?",
              t->src->symbolic_hint ? t->src->symbolic_hint : "");
      return DG_TENSOR_NONE;
    }
    if (c->dims[k] == 0) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, v->name,
              "graph input '%s' has an empty dimension %d", v->name, k);
      return DG_TENSOR_NONE;
    }
    d.dims[k] = c->dims[k];
  }
  if (is_int8(d.dtype))
    d.quant = quant ? *quant : (dg_quant_params){.scale = 1.0f}; /* raw */
  v->t = dg_graph_input(t->g, v->name, &d);
  tr_check(t);
  return v->t;
}

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

/* Emits the pending DequantizeLinear behind v as a float value, where a
 * node outside an int8 fold (or an output) reads it: the one place a
 * DequantizeLinear is built, called, never the walk. The value forgets
 * its DequantizeLinear first, so that a cycle back to it is an error, not
 * an endless recursion (a DequantizeLinear reading another's output is
 * the only nesting: bounded by TR_MAX_DQ_DEPTH). */
static void emit_dq(tr *t, tr_value *v) {
  if (t->dq_depth >= TR_MAX_DQ_DEPTH) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, v->name,
            "DequantizeLinear nodes feed each other more than %d deep",
            TR_MAX_DQ_DEPTH);
    return;
  }
  t->dq_depth++;
  int dq = v->dq_node, saved = t->cur;
  v->dq_node = -1;
  tr_at(t, dq);
  tr_dq_emit(t);
  t->cur = saved;
  t->n = saved >= 0 ? &t->nodes[saved] : NULL;
  t->dq_depth--;
}

dg_tensor tr_input(tr *t, int i, const dg_quant_params *quant, bool optional) {
  if (t->st != DG_OK)
    return DG_TENSOR_NONE;
  if (!tr_has_input(t, i)) {
    if (!optional)
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "input",
              "required input %d is missing", i);
    return DG_TENSOR_NONE;
  }
  tr_value *v = tr_value_find(t, t->n->inputs[i]);
  if (v && !v->t.id && v->dq_node >= 0)
    emit_dq(t, v);
  if (t->st != DG_OK || !v)
    return DG_TENSOR_NONE;
  if (v->t.id) {
    dg_tensor_desc d;
    /* An int8 value means what its producer's quantisation says; a
     * consumer reading it with other parameters cannot be expressed (the
     * builder has no re-labelling op). */
    if (quant && dg_graph_tensor_desc(t->g, v->t, &d) == DG_OK &&
        is_int8(d.dtype) && !same_quant(&d.quant, quant)) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, v->name,
              "quantisation differs from the producer's");
      return DG_TENSOR_NONE;
    }
    return v->t;
  }
  dg_onnx_value c;
  source_value(t, v, &c);
  if (c.kind == DG_ONNX_VALUE_CONST && c.error) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, v->name, "%s", c.error);
    return DG_TENSOR_NONE;
  }
  if (c.kind == DG_ONNX_VALUE_CONST)
    return make_constant(t, v, &c, quant);
  if (c.kind == DG_ONNX_VALUE_INPUT)
    return make_input(t, v, &c, quant);
  tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "input",
          "input '%s' is produced by no earlier node, initializer or graph "
          "input",
          v->name);
  return DG_TENSOR_NONE;
}

bool tr_own(tr *t, void *p) {
  void **o = realloc(t->owned, sizeof *o * (size_t)(t->nowned + 1));
  if (!o) {
    free(p);
    return false;
  }
  t->owned = o;
  t->owned[t->nowned++] = p;
  return true;
}

/* ---- outputs ---- */

void tr_output(tr *t, int i, dg_tensor x) {
  if (t->st != DG_OK || tr_check(t))
    return;
  if (i >= t->n->n_outputs || !named(t->n->outputs[i])) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "output", "missing output %d", i);
    return;
  }
  tr_value *v = tr_value_find(t, t->n->outputs[i]);
  dg_tensor_desc d;
  if (!v || dg_graph_tensor_desc(t->g, x, &d) != DG_OK) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "output", "no tensor for output %d",
            i);
    return;
  }
  /* The result must be what the model declares, or a consumer (ORT, the
   * caller's buffer) would read another type or shape. */
  dg_onnx_value c;
  memset(&c, 0, sizeof c);
  c.rank = -1;
  t->src->value(t->src->self, v->name, &c);
  /* An int8 fold's data movement gives int8 where the model says float
   * (onnx_qdq_ops.c: its QuantizeLinear's output takes it). */
  bool pass = v->int8_fold && is_int8_dtype(d.dtype);
  if (c.kind == DG_ONNX_VALUE_TYPED && c.elem && !pass &&
      tr_dtype(c.elem) != d.dtype) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, v->name,
            "directgraph gives %s where the model declares element type %d",
            dg_dtype_name(d.dtype), c.elem);
    return;
  }
  if (c.kind == DG_ONNX_VALUE_TYPED && c.rank >= 0) {
    bool same = c.rank == d.rank;
    for (int k = 0; same && k < c.rank; k++)
      same = c.dims[k] < 0 || c.dims[k] == d.dims[k];
    if (!same) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, v->name,
              "directgraph's shape differs from the declared one");
      return;
    }
  }
  v->t = x;
}

/* ---- constant numbers ---- */

/* A small constant input as doubles (exact for every integer type but
 * int64, which tr_const_ints reads itself, and for f32). */
static bool const_values(tr *t, int i, double *out, int max, int *count,
                         bool floats_ok) {
  dg_onnx_value c;
  const char *name = tr_has_input(t, i) ? t->n->inputs[i] : "input";
  if (!tr_const(t, i, &c)) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, name, "must be a constant initializer");
    return false;
  }
  bool known = c.elem == DG_ONNX_UINT8 || c.elem == DG_ONNX_INT8 ||
               c.elem == DG_ONNX_INT32 || c.elem == DG_ONNX_INT64 ||
               c.elem == DG_ONNX_BOOL || (floats_ok && c.elem == DG_ONNX_FLOAT);
  if (c.count > (size_t)max || !known) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, name, "expected at most %d %s values",
            max, floats_ok ? "float" : "integer");
    return false;
  }
  for (size_t k = 0; k < c.count; k++) {
    switch (c.elem) {
    case DG_ONNX_FLOAT:
      out[k] = ((const float *)c.data)[k];
      break;
    case DG_ONNX_UINT8:
      out[k] = ((const uint8_t *)c.data)[k];
      break;
    case DG_ONNX_BOOL:
      out[k] = ((const uint8_t *)c.data)[k] != 0;
      break;
    case DG_ONNX_INT8:
      out[k] = ((const int8_t *)c.data)[k];
      break;
    case DG_ONNX_INT32:
      out[k] = ((const int32_t *)c.data)[k];
      break;
    default:
      out[k] = (double)((const int64_t *)c.data)[k];
      break;
    }
  }
  *count = (int)c.count;
  return true;
}

bool tr_const_floats(tr *t, int i, float *out, int max, int *count) {
  double *v = malloc(sizeof(double) * (size_t)(max > 0 ? max : 1));
  bool ok = v && const_values(t, i, v, max, count, true);
  for (int k = 0; ok && k < *count; k++)
    out[k] = (float)v[k];
  if (!v)
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
  free(v);
  return ok;
}

bool tr_const_ints(tr *t, int i, int64_t *out, int max, int *count) {
  dg_onnx_value c;
  /* int64 is read as such: a double cannot hold every int64. */
  if (tr_const(t, i, &c) && c.elem == DG_ONNX_INT64 && c.count <= (size_t)max) {
    memcpy(out, c.data, sizeof(int64_t) * c.count);
    *count = (int)c.count;
    return true;
  }
  double *v = malloc(sizeof(double) * (size_t)(max > 0 ? max : 1));
  bool ok = v && t->st == DG_OK && const_values(t, i, v, max, count, false);
  for (int k = 0; ok && k < *count; k++)
    out[k] = (int64_t)v[k];
  if (!v)
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
  free(v);
  return ok;
}

bool tr_desc(tr *t, dg_tensor x, dg_tensor_desc *d) {
  return x.id && dg_graph_tensor_desc(t->g, x, d) == DG_OK;
}

/* ONNX float ops on raw integers mean something else than directgraph's
 * quantised ops (wrapping or exact integer arithmetic against requantised
 * results), so only float tensors go to them. */
bool tr_need_float(tr *t, dg_tensor x, const char *what) {
  dg_tensor_desc d;
  if (!tr_desc(t, x, &d))
    return false;
  if (d.dtype != DG_DTYPE_F32 && d.dtype != DG_DTYPE_F16) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, what,
            "%s input: only float tensors are "
            "taken",
            dg_dtype_name(d.dtype));
    return false;
  }
  return true;
}

/* ---- attributes ---- */

static bool fits_int32(tr *t, const char *name, int64_t v) {
  if (v >= INT32_MIN && v <= INT32_MAX)
    return true;
  tr_fail(t, DG_ERROR_INVALID_ARGUMENT, name,
          "attribute '%s' = %lld is outside the 32-bit range", name,
          (long long)v);
  return false;
}

int64_t tr_attr_int(tr *t, const char *name, int64_t def) {
  int64_t v;
  return t->n->attr_int(t->n, name, &v) && fits_int32(t, name, v) ? v : def;
}

float tr_attr_float(const tr *t, const char *name, float def) {
  float v;
  return t->n->attr_float(t->n, name, &v) ? v : def;
}

int tr_attr_ints(tr *t, const char *name, int64_t *out, int max) {
  int n = t->n->attr_ints(t->n, name, out, max);
  for (int i = 0; i < n && i < max; i++)
    if (!fits_int32(t, name, out[i])) {
      out[i] = 0;
      return n;
    }
  return n;
}

bool tr_attrs_allowed(tr *t, const dg_onnx_node *n, const tr_op *row) {
  for (int i = 0; i < n->n_attrs; i++) {
    const char *a = n->attr_names[i] ? n->attr_names[i] : "";
    bool known = false;
    for (int k = 0; row->attrs && row->attrs[k] && !known; k++)
      known = !strcmp(a, row->attrs[k]);
    if (!known) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, a, "attribute '%s' is not supported", a);
      return false;
    }
  }
  return true;
}

/* ---- nodes ---- */

static void translate_node(tr *t) {
  const dg_onnx_node *n = t->n;
  if (named(n->domain) && strcmp(n->domain, "ai.onnx")) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "domain",
            "operator domain '%s' is not supported", n->domain);
    return;
  }
  if (!named(n->op_type) || n->n_outputs < 1) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "op_type",
            "node has no op_type or no output");
    return;
  }
  if (tr_try_fold(t))
    return;
  const tr_op *row = tr_op_find(n->op_type);
  /* An op with no run-time form here may still fold on constants. */
  if (!row && tr_try_const_fold(t))
    return;
  if (!row) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "op_type",
            "operator '%s' is not supported", n->op_type);
    return;
  }
  char why[256];
  if (!tr_op_opset_ok(row, n->opset, why, sizeof why)) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "opset", "%s", why);
    return;
  }
  if (!tr_attrs_allowed(t, n, row))
    return;
  if (!tr_try_const_fold(t))
    row->run(t);
  tr_check(t);
}

/* What the op table alone says of node k, without building anything: ""
 * when its op, opset and attributes are taken, the reason otherwise. */
static void static_check(const dg_onnx_node *n, char *why, size_t size) {
  why[0] = 0;
  const tr_op *row = named(n->op_type) ? tr_op_find(n->op_type) : NULL;
  if (named(n->domain) && strcmp(n->domain, "ai.onnx"))
    snprintf(why, size, "operator domain '%s' is not supported", n->domain);
  else if (!row && !tr_fold_has(n))
    snprintf(why, size, "operator '%s' is not supported",
             named(n->op_type) ? n->op_type : "");
  else if (row)
    tr_op_opset_ok(row, n->opset, why, size);
  for (int i = 0; row && !why[0] && i < n->n_attrs; i++) {
    const char *a = n->attr_names[i] ? n->attr_names[i] : "";
    bool known = false;
    for (int k = 0; row->attrs && row->attrs[k] && !known; k++)
      known = !strcmp(a, row->attrs[k]);
    if (!known)
      snprintf(why, size, "attribute '%s' is not supported", a);
  }
}

/* After an unsupported node: every later one the op table refuses too, so
 * that one error lists all a model needs. */
static void list_others(tr *t, int from) {
  dg_onnx_failure *w = t->why;
  if (!w || t->st != DG_ERROR_UNSUPPORTED)
    return;
  size_t len = 0;
  int wanted = 0;
  for (int k = from + 1; k < t->src->node_count; k++) {
    char why[256];
    const dg_onnx_node *n = &t->nodes[k];
    if (t->done[k])
      continue;
    static_check(n, why, sizeof why);
    if (!why[0])
      continue;
    w->also_count++;
    if (len < sizeof w->also) {
      wanted = snprintf(w->also + len, sizeof w->also - len,
                        "node %d '%s' (%s): %s\n", k, n->name ? n->name : "",
                        n->op_type ? n->op_type : "", why);
      len += (size_t)wanted;
    }
  }
  if (len >= sizeof w->also)
    dg_text_mark_cut(w->also, sizeof w->also, (int)len);
}

static void mark_outputs(tr *t) {
  const dg_onnx_source *s = t->src;
  t->cur = -1;
  t->n = NULL;
  for (int i = 0; i < s->output_count && t->st == DG_OK; i++) {
    tr_value *v = tr_value_find(t, s->outputs[i]);
    if (!v->t.id && v->dq_node >= 0)
      emit_dq(t, v); /* a dequantised output */
    if (t->st != DG_OK)
      break;
    dg_onnx_value c;
    source_value(t, v, &c);
    /* An output folded at import (a Shape, shape arithmetic): a copy of
     * the constant computes it, so that the graph (or an EP region) has a
     * node writing it. */
    if (!v->t.id && v->has_const && v->producer >= 0) {
      /* An output must keep the model's type: one the builder has no
       * dtype for cannot be written. */
      if (!tr_dtype(c.elem)) {
        tr_fail(t, DG_ERROR_UNSUPPORTED, v->name,
                "graph output '%s' is a value of element type %d computed "
                "at import; directgraph has no tensors of that type",
                v->name, c.elem);
        break;
      }
      dg_tensor k = make_constant(t, v, &c, NULL);
      dg_tensor_desc kd;
      if (t->st == DG_OK && tr_desc(t, k, &kd))
        v->t = dg_graph_reshape(t->g, v->name, k, kd.rank, kd.dims);
      if (tr_check(t))
        break;
    }
    if (!v->t.id &&
        (c.kind == DG_ONNX_VALUE_CONST || c.kind == DG_ONNX_VALUE_INPUT))
      tr_fail(t, DG_ERROR_UNSUPPORTED, v->name,
              "graph output '%s' is not computed by any node", v->name);
    else if (!v->t.id)
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, v->name,
              "graph output '%s' is never produced", v->name);
    else if (dg_graph_output(t->g, v->name, v->t, DG_LAYOUT_NCHW) != DG_OK)
      tr_check(t);
  }
  /* Inputs no node read still belong to the graph. */
  for (int i = 0; i < s->input_count && t->st == DG_OK; i++) {
    tr_value *v = tr_value_find(t, s->inputs[i]);
    dg_onnx_value c;
    source_value(t, v, &c);
    if (!v->t.id && c.kind == DG_ONNX_VALUE_INPUT)
      make_input(t, v, &c, NULL);
  }
}

/* ---- the passes ---- */

/* Pass 2: every Constant node becomes its value before the walk, so that
 * any node reads any constant as such wherever the exporter placed it
 * (PyTorch puts a Clip's bounds, and a QuantizeLinear's scale, after the
 * Conv a fold starts at). A Constant the op table refuses is left for the
 * walk, which reports it in its place. */
static void pass_constants(tr *t) {
  for (int k = 0; k < t->src->node_count && t->st == DG_OK; k++) {
    if (t->done[k] || !tr_is_op(&t->nodes[k], "Constant") ||
        !tr_row_ok(&t->nodes[k]))
      continue;
    tr_at(t, k);
    translate_node(t);
    t->done[k] = true;
    if (t->st != DG_OK)
      list_others(t, k);
  }
  t->cur = -1;
  t->n = NULL;
}

/* Pass 3: every DequantizeLinear the op table takes is pending: its output
 * is not built where it stands, but by an int8 fold that reads its int8
 * input (onnx_qdq.c, onnx_qdq_ops.c), or as a float dequantize where
 * another node or an output reads it (emit_dq). One the table refuses, or
 * without its inputs, is left for the walk, which reports it. */
static void pass_mark_dq(tr *t) {
  for (int k = 0; k < t->src->node_count && t->st == DG_OK; k++) {
    const dg_onnx_node *n = &t->nodes[k];
    char why[256];
    if (t->done[k] || !tr_is_op(n, "DequantizeLinear"))
      continue;
    static_check(n, why, sizeof why);
    tr_value *v = n->n_outputs >= 1 && named(n->outputs[0])
                      ? tr_value_find(t, n->outputs[0])
                      : NULL;
    if (why[0] || n->n_inputs < 2 || !named(n->inputs[0]) || !v)
      continue;
    v->dq_node = k;
    t->done[k] = true;
  }
}

dg_status dg_onnx_translate(dg_graph *g, const dg_onnx_source *src,
                            dg_onnx_failure *why) {
  tr t = {.g = g, .src = src, .cur = -1, .why = why};
  int count = src->node_count > 0 ? src->node_count : 0;
  if (why)
    memset(why, 0, sizeof *why);
  t.nodes = calloc((size_t)count + 1, sizeof *t.nodes);
  t.done = calloc((size_t)count + 1, sizeof *t.done);
  t.q = malloc(3 * sizeof *t.q);
  if (!t.nodes || !t.done || !t.q)
    tr_fail(&t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
  for (int k = 0; k < count && t.st == DG_OK; k++)
    if (!src->node(src->self, k, &t.nodes[k]))
      tr_fail(&t, DG_ERROR_INVALID_ARGUMENT, NULL, "node %d is unreadable", k);
  if (t.st == DG_OK)
    build_table(&t);
  if (t.st == DG_OK)
    pass_constants(&t);
  if (t.st == DG_OK)
    pass_mark_dq(&t);
  for (int k = 0; k < count && t.st == DG_OK; k++) {
    if (t.done[k])
      continue;
    t.cur = k;
    t.n = &t.nodes[k];
    translate_node(&t);
    if (t.st != DG_OK)
      list_others(&t, k);
  }
  if (t.st == DG_OK)
    mark_outputs(&t);
  free(t.nodes);
  free(t.done);
  free(t.q);
  free(t.vals);
  for (int k = 0; k < t.nowned; k++)
    free(t.owned[k]);
  free(t.owned);
  dg_name_map_free(&t.names);
  return t.st;
}
