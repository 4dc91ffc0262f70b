/* The translator's source over a ModelProto's graph: nodes and their
 * attributes read from protobuf-c's structs, and a value table naming
 * initializers (decoded once, on first use), graph inputs (with the
 * caller's frozen ones as constants), graph outputs and value_info. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "onnx_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *value_name(const void *ctx, int i) {
  return ((const onnx_source *)ctx)->vals[i].name;
}

static onnx_value *find(onnx_source *s, const char *name) {
  int i = dg_name_map_find(&s->names, name, value_name, s);
  return i < 0 ? NULL : &s->vals[i];
}

static onnx_value *add(onnx_source *s, const char *name, int *cap) {
  onnx_value *v = find(s, name);
  if (v)
    return v;
  if (s->nvals == *cap) {
    int n = *cap ? *cap * 2 : 64;
    onnx_value *p = realloc(s->vals, sizeof *p * (size_t)n);
    if (!p)
      return NULL;
    s->vals = p;
    *cap = n;
  }
  v = &s->vals[s->nvals];
  memset(v, 0, sizeof *v);
  v->name = name;
  if (!dg_name_map_insert(&s->names, name, s->nvals, value_name, s))
    return NULL;
  s->nvals++;
  return v;
}

/* ---- nodes and attributes ---- */

static const Onnx__AttributeProto *attr(const dg_onnx_node *n,
                                        const char *name) {
  const Onnx__NodeProto *p = n->impl;
  for (size_t i = 0; i < p->n_attribute; i++)
    if (p->attribute[i]->name && !strcmp(p->attribute[i]->name, name))
      return p->attribute[i];
  return NULL;
}

static bool attr_int(const dg_onnx_node *n, const char *name, int64_t *v) {
  const Onnx__AttributeProto *a = attr(n, name);
  if (!a || !a->has_i)
    return false;
  *v = a->i;
  return true;
}

static bool attr_float(const dg_onnx_node *n, const char *name, float *v) {
  const Onnx__AttributeProto *a = attr(n, name);
  if (!a || !a->has_f)
    return false;
  *v = a->f;
  return true;
}

static int attr_ints(const dg_onnx_node *n, const char *name, int64_t *out,
                     int max) {
  const Onnx__AttributeProto *a = attr(n, name);
  if (!a) /* present with another type: 0 values, which checks refuse */
    return -1;
  for (size_t i = 0; i < a->n_ints && i < (size_t)max; i++)
    out[i] = a->ints[i];
  return (int)a->n_ints;
}

static bool attr_string(const dg_onnx_node *n, const char *name, char *buf,
                        size_t len) {
  const Onnx__AttributeProto *a = attr(n, name);
  if (!a || !a->has_s || !len)
    return false;
  snprintf(buf, len, "%.*s", (int)a->s.len, (const char *)a->s.data);
  return true;
}

/* Keeps p (malloc'd) until the source is freed; false if it cannot. */
static bool own(onnx_source *s, void *p) {
  void **o = realloc(s->owned, sizeof *o * (size_t)(s->nowned + 1));
  if (!o) {
    free(p);
    return false;
  }
  s->owned = o;
  s->owned[s->nowned++] = p;
  return true;
}

static bool constant_value(const dg_onnx_node *n, dg_onnx_value *v) {
  const Onnx__AttributeProto *a = attr(n, "value");
  onnx_source *s = n->source;
  char err[256];
  void *data = NULL;
  if (!a || !a->t)
    return false;
  if (!onnx_tensor_read(a->t, s->base_dir, v, &data, err, sizeof err)) {
    char *e = strdup(err);
    v->error = e;
    return e && own(s, e);
  }
  return own(s, data);
}

static bool read_node(void *self, int k, dg_onnx_node *out) {
  onnx_source *s = self;
  const Onnx__NodeProto *p = s->gp->node[k];
  const char **names = calloc(p->n_attribute + 1, sizeof *names);
  if (!names || !own(s, names))
    return false;
  for (size_t i = 0; i < p->n_attribute; i++)
    names[i] = p->attribute[i]->name ? p->attribute[i]->name : "";
  *out = (dg_onnx_node){
      .op_type = p->op_type,
      .domain = p->domain ? p->domain : "",
      .name = p->name ? p->name : "",
      .opset = s->opset,
      .n_inputs = (int)p->n_input,
      .n_outputs = (int)p->n_output,
      .inputs = (const char *const *)p->input,
      .outputs = (const char *const *)p->output,
      .n_attrs = (int)p->n_attribute,
      .attr_names = names,
      .impl = p,
      .source = s,
      .attr_int = attr_int,
      .attr_float = attr_float,
      .attr_ints = attr_ints,
      .attr_string = attr_string,
      .constant_value = constant_value,
  };
  return true;
}

/* ---- values ---- */

/* Element type and dims of a ValueInfo; rank -1 when it is no tensor of
 * known shape. A symbolic dim is -1, or the caller's value. */
static void value_type(const onnx_source *s, const Onnx__ValueInfoProto *vi,
                       dg_onnx_value *out) {
  const Onnx__TypeProto *tp = vi->type;
  out->rank = -1;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
      !tp->tensor_type)
    return;
  out->elem = tp->tensor_type->elem_type;
  const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
  if (!sh || sh->n_dim > DG_MAX_RANK)
    return;
  out->rank = (int)sh->n_dim;
  for (size_t i = 0; i < sh->n_dim; i++) {
    const Onnx__TensorShapeProto__Dimension *d = sh->dim[i];
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
      out->dims[i] = d->dim_value;
    else if (s->symbolic_dim_value > 0)
      out->dims[i] = s->symbolic_dim_value;
    else {
      out->dims[i] = -1;
      if (!out->symbolic)
        out->symbolic =
            d->value_case ==
                    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                ? d->dim_param
                : "?";
    }
  }
}

static void read_value(void *self, const char *name, dg_onnx_value *out) {
  onnx_source *s = self;
  onnx_value *v = find(s, name);
  memset(out, 0, sizeof *out);
  out->rank = -1;
  if (!v)
    return;
  if (v->frozen) {
    const dg_tensor_desc *d = v->frozen->desc;
    out->kind = DG_ONNX_VALUE_CONST;
    out->elem = d->dtype == DG_DTYPE_F32    ? DG_ONNX_FLOAT
                : d->dtype == DG_DTYPE_U8   ? DG_ONNX_UINT8
                : d->dtype == DG_DTYPE_I8   ? DG_ONNX_INT8
                : d->dtype == DG_DTYPE_I32  ? DG_ONNX_INT32
                : d->dtype == DG_DTYPE_I64  ? DG_ONNX_INT64
                : d->dtype == DG_DTYPE_BOOL ? DG_ONNX_BOOL
                                            : DG_ONNX_FLOAT16;
    out->rank = d->rank;
    out->count = 1;
    for (int i = 0; i < d->rank; i++) {
      out->dims[i] = d->dims[i];
      out->count *= (size_t)(d->dims[i] > 0 ? d->dims[i] : 0);
    }
    out->data = v->frozen->data;
  } else if (v->init) {
    if (!v->decoded) {
      v->decoded = true;
      if (!onnx_tensor_read(v->init, s->base_dir, &v->cv, &v->data, v->error,
                            sizeof v->error))
        v->cv.error = v->error;
      v->cv.kind = DG_ONNX_VALUE_CONST;
    }
    *out = v->cv;
  } else if (v->input) {
    value_type(s, v->input, out);
    out->kind = DG_ONNX_VALUE_INPUT;
  } else if (v->info) {
    value_type(s, v->info, out);
    out->kind = DG_ONNX_VALUE_TYPED;
  }
}

static bool read_outside(void *self, const char *name) {
  onnx_value *v = find(self, name);
  return v && v->output;
}

/* ---- the table ---- */

static bool fail(dg_status *st, const char **field, char *msg, size_t len,
                 dg_status code, const char *f, const char *text) {
  *st = code;
  *field = f;
  snprintf(msg, len, "%s", text);
  return false;
}

/* Graph inputs the caller fixed (dg_onnx_options.constants) become
 * constants pointing at the caller's data. */
static bool freeze(onnx_source *s, const dg_onnx_options *o, dg_status *st,
                   const char **field, char *msg, size_t len) {
  if (o->constant_count > 0 && !o->constants)
    return fail(st, field, msg, len, DG_ERROR_INVALID_ARGUMENT, "constants",
                "constants is NULL");
  for (int i = 0; i < o->constant_count; i++) {
    const dg_onnx_constant *k = &o->constants[i];
    onnx_value *v = k->name ? find(s, k->name) : NULL;
    dg_dtype t = k->desc ? k->desc->dtype : DG_DTYPE_INVALID;
    bool typed = t == DG_DTYPE_F32 || t == DG_DTYPE_U8 || t == DG_DTYPE_I8 ||
                 t == DG_DTYPE_I32 || t == DG_DTYPE_F16 || t == DG_DTYPE_I64 ||
                 t == DG_DTYPE_BOOL;
    if (!v || !v->input || !k->desc || !k->data || !typed ||
        k->desc->rank < 0 || k->desc->rank > DG_MAX_RANK) {
      char text[512];
      snprintf(text, sizeof text,
               "constants[%d] ('%s') is not a graph input with a valid "
               "descriptor and data",
               i, k->name ? k->name : "(null)");
      return fail(st, field, msg, len, DG_ERROR_INVALID_ARGUMENT, "constants",
                  text);
    }
    v->frozen = k;
    v->input = NULL;
  }
  return true;
}

bool onnx_source_init(onnx_source *s, const Onnx__GraphProto *gp, int64_t opset,
                      const dg_onnx_options *opts, dg_onnx_source *src,
                      dg_status *st, const char **field, char *msg,
                      size_t len) {
  int cap = 0;
  memset(s, 0, sizeof *s);
  s->gp = gp;
  s->opset = opset;
  s->symbolic_dim_value = opts->symbolic_dim_value;
  s->base_dir = opts->external_data_dir;
  s->outputs = calloc(gp->n_output + 1, sizeof *s->outputs);
  s->inputs = calloc(gp->n_input + 1, sizeof *s->inputs);
  if (!s->outputs || !s->inputs)
    return fail(st, field, msg, len, DG_ERROR_OUT_OF_MEMORY, NULL,
                "out of memory");
  /* proto2 leaves unset names NULL: a value must have a non-empty one. */
  size_t total =
      gp->n_initializer + gp->n_input + gp->n_output + gp->n_value_info;
  for (size_t i = 0; i < total; i++) {
    const char *name;
    size_t k = i;
    if (k < gp->n_initializer)
      name = gp->initializer[k]->name;
    else if ((k -= gp->n_initializer) < gp->n_input)
      name = gp->input[k]->name;
    else if ((k -= gp->n_input) < gp->n_output)
      name = gp->output[k]->name;
    else
      name = gp->value_info[k - gp->n_output]->name;
    if (!name || !name[0])
      return fail(st, field, msg, len, DG_ERROR_INVALID_ARGUMENT, "name",
                  "a tensor, input or output has no name");
    onnx_value *v = add(s, name, &cap);
    if (!v)
      return fail(st, field, msg, len, DG_ERROR_OUT_OF_MEMORY, NULL,
                  "out of memory");
    k = i;
    if (k < gp->n_initializer) {
      v->init = gp->initializer[k];
    } else if ((k -= gp->n_initializer) < gp->n_input) {
      if (!v->init) /* older models list initializers as inputs too */
        v->input = gp->input[k];
    } else if ((k -= gp->n_input) < gp->n_output) {
      v->output = true;
      v->info = gp->output[k];
      s->outputs[k] = name;
    } else if (!v->info) {
      v->info = gp->value_info[k - gp->n_output];
    }
  }
  for (size_t i = 0; i < gp->n_input; i++)
    s->inputs[i] = gp->input[i]->name;
  if (!freeze(s, opts, st, field, msg, len))
    return false;
  *src = (dg_onnx_source){
      .self = s,
      .node_count = (int)gp->n_node,
      .node = read_node,
      .value = read_value,
      .read_outside = read_outside,
      .output_count = (int)gp->n_output,
      .outputs = s->outputs,
      .input_count = (int)gp->n_input,
      .inputs = s->inputs,
      .symbolic_hint = "; set dg_onnx_options.symbolic_dim_value",
  };
  return true;
}

void onnx_source_free(onnx_source *s) {
  for (int i = 0; i < s->nvals; i++)
    free(s->vals[i].data);
  for (int i = 0; i < s->nowned; i++)
    free(s->owned[i]);
  free(s->vals);
  dg_name_map_free(&s->names);
  free(s->owned);
  free(s->outputs);
  free(s->inputs);
}
