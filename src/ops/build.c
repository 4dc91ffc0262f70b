/* The build kit (build.h): the checks shared by every builder call, the
 * graph's inputs, constants and outputs, and its queries. The first error
 * sticks: later calls on a failed graph return DG_TENSOR_NONE. */
#define _POSIX_C_SOURCE 200809L
#include "build.h"

#include "core/names.h"
#include "ops.h"
#include "requant.h"

#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dg_status dg_graph_status(const dg_graph *g) {
  if (!(g = dg_graph_alive(g)))
    return DG_ERROR_INVALID_ARGUMENT;
  return g->failed ? g->error.status : DG_OK;
}

const dg_diagnostic *dg_graph_error(const dg_graph *g) {
  return ((g = dg_graph_alive(g)) && g->failed) ? &g->error : NULL;
}

int dg_graph_node_count(const dg_graph *g) {
  return (g = dg_graph_alive(g)) ? g->ir.node_count : 0;
}

dg_status dg_graph_tensor_desc(const dg_graph *g, dg_tensor t,
                               dg_tensor_desc *out) {
  if (!(g = dg_graph_alive(g)) || !out || (t.id && t.graph != g->serial))
    return DG_ERROR_INVALID_ARGUMENT;
  const dg_tensor_info *ti = dg_ir_tensor(&g->ir, t.id);
  if (!ti)
    return DG_ERROR_NOT_FOUND;
  *out = ti->desc;
  return DG_OK;
}

/* ---- diagnostics ---- */

bool dg_build_begin_in(dg_build *b, dg_graph *g, dg_op op, const char *name,
                       const char *api) {
  g = dg_graph_alive(g); /* a destroyed graph is treated as NULL */
  b->g = g;
  b->op = op;
  b->name = name;
  b->api = api;
  b->node_index = g ? g->ir.node_count : -1;
  return g && !g->failed;
}

static const char *build_opname(const dg_build *b) {
  return b->op ? dg_op_name(b->op) : "graph";
}

void dg_build_fail(dg_build *b, dg_status st, const char *field,
                   const char *expected, const char *actual, const char *fmt,
                   ...) {
  dg_graph *g = b->g;
  if (!g || g->failed)
    return;
  char sentence[400];
  va_list ap;
  va_start(ap, fmt);
  dg_text_mark_cut(sentence, sizeof sentence,
                   vsnprintf(sentence, sizeof sentence, fmt, ap));
  va_end(ap);
  int idx = b->op ? b->node_index : -1;
  /* The name as the diagnostic's node_name shows it, so that a long one
   * leaves room for the reason. */
  char name[DG_NAME_SHORT], where[160];
  dg_name_shorten(name, sizeof name, b->name);
  if (b->op)
    snprintf(where, sizeof where, "%s: node %d '%s' (%s)", b->api, idx, name,
             build_opname(b));
  else
    snprintf(where, sizeof where, "%s: %s '%s'", b->api, "graph", name);
  char got[sizeof g->error.actual]; /* as the actual field shows it */
  dg_name_shorten(got, sizeof got, actual ? actual : "?");
  dg_diag_set(&g->error, st, idx, b->name, build_opname(b), field, expected,
              actual, "%s: %s: %s%s%s%s%s%s", where, field ? field : "",
              sentence, expected ? " (expected " : "", expected ? expected : "",
              expected ? ", got " : "", expected ? got : "",
              expected ? ")" : "");
  g->failed = true;
  if (g->log && DG_LOG_ERROR <= g->log_level)
    g->log(g->log_user, DG_LOG_ERROR, g->error.message);
}

const dg_tensor_info *dg_build_tensor(dg_build *b, dg_tensor t,
                                      const char *field, bool optional,
                                      bool *ok) {
  if (t.id == 0 && optional)
    return NULL;
  if (t.id && t.graph != b->g->serial) {
    char got[48];
    snprintf(got, sizeof got, "a tensor of graph #%u", t.graph);
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, field, "a tensor of this graph",
                  got, "tensor handle belongs to another graph");
    *ok = false;
    return NULL;
  }
  const dg_tensor_info *ti = dg_ir_tensor(&b->g->ir, t.id);
  if (!ti) {
    char got[32];
    snprintf(got, sizeof got, "id %u", t.id);
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, field, "a tensor of this graph",
                  got,
                  t.id ? "tensor handle does not belong to this graph"
                       : "tensor is missing (DG_TENSOR_NONE)");
    *ok = false;
  }
  return ti;
}

bool dg_build_dtype(dg_build *b, const dg_tensor_info *t, const char *field,
                    unsigned mask) {
  if (mask & DG_BIT(t->desc.dtype))
    return true;
  char exp[96] = "";
  size_t used = 0;
  for (int d = 1; d < DG_DTYPE_COUNT_; d++)
    if (mask & DG_BIT(d))
      used += (size_t)snprintf(exp + used, sizeof exp - used, "%s%s",
                               used ? " or " : "", dg_dtype_name(d));
  dg_build_fail(b, DG_ERROR_INVALID_DTYPE, field, exp,
                dg_dtype_name(t->desc.dtype), "dtype not supported");
  return false;
}

bool dg_build_rank(dg_build *b, const dg_tensor_info *t, const char *field,
                   int rank) {
  if (t->desc.rank == rank)
    return true;
  char exp[32], got[96];
  snprintf(exp, sizeof exp, "rank %d", rank);
  dg_format_dims(got, sizeof got, t->desc.rank, t->desc.dims);
  dg_build_fail(b, DG_ERROR_INVALID_SHAPE, field, exp, got, "wrong rank");
  return false;
}

bool dg_build_same_dtype(dg_build *b, const dg_tensor_info *x,
                         const dg_tensor_info *y, const char *field) {
  if (x->desc.dtype == y->desc.dtype)
    return true;
  dg_build_fail(b, DG_ERROR_INVALID_DTYPE, field, dg_dtype_name(x->desc.dtype),
                dg_dtype_name(y->desc.dtype), "dtypes of the operands differ");
  return false;
}

static bool zero_in_range(dg_dtype t, int32_t z) {
  int64_t lo, hi;
  dg_dtype_int_range(t, &lo, &hi);
  return z >= lo && z <= hi;
}

bool dg_build_quant(dg_build *b, const dg_tensor_desc *d, const char *field,
                    int per_channel_axis) {
  const dg_quant_params *q = &d->quant;
  char f[64], got[64];
  if (q->channel_count == 0) {
    if (!(q->scale > 0) || !isfinite(q->scale)) {
      snprintf(f, sizeof f, "%s.quant.scale", field);
      snprintf(got, sizeof got, "%g", q->scale);
      dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, f, "a finite value > 0", got,
                    "quantisation scale is not usable");
      return false;
    }
    if (!zero_in_range(d->dtype, q->zero_point)) {
      snprintf(f, sizeof f, "%s.quant.zero_point", field);
      snprintf(got, sizeof got, "%d", q->zero_point);
      dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, f, "inside the dtype's range",
                    got, "zero point out of range for %s",
                    dg_dtype_name(d->dtype));
      return false;
    }
    return true;
  }
  if (per_channel_axis < 0 || q->axis != per_channel_axis) {
    snprintf(f, sizeof f, "%s.quant.axis", field);
    snprintf(got, sizeof got, "per-channel on axis %d", q->axis);
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, f,
                  per_channel_axis < 0 ? "per-tensor quantisation"
                                       : "per-channel on the channel axis",
                  got, "per-channel quantisation not allowed here");
    return false;
  }
  if (q->channel_count < 0 || q->axis >= d->rank ||
      q->channel_count != d->dims[q->axis]) {
    snprintf(f, sizeof f, "%s.quant.channel_count", field);
    char exp[32];
    snprintf(exp, sizeof exp, "%lld",
             (long long)(q->axis < d->rank ? d->dims[q->axis] : -1));
    snprintf(got, sizeof got, "%d", q->channel_count);
    dg_build_fail(b, DG_ERROR_INVALID_SHAPE, f, exp, got,
                  "channel count does not match the axis length");
    return false;
  }
  if (!q->channel_scales) {
    snprintf(f, sizeof f, "%s.quant.channel_scales", field);
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, f, "non-NULL", "NULL",
                  "per-channel scales missing");
    return false;
  }
  for (int c = 0; c < q->channel_count; c++) {
    if (!(q->channel_scales[c] > 0) || !isfinite(q->channel_scales[c])) {
      snprintf(f, sizeof f, "%s.quant.channel_scales[%d]", field, c);
      snprintf(got, sizeof got, "%g", q->channel_scales[c]);
      dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, f, "a finite value > 0", got,
                    "quantisation scale is not usable");
      return false;
    }
    if (q->channel_zero_points &&
        !zero_in_range(d->dtype, q->channel_zero_points[c])) {
      snprintf(f, sizeof f, "%s.quant.channel_zero_points[%d]", field, c);
      snprintf(got, sizeof got, "%d", q->channel_zero_points[c]);
      dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, f, "inside the dtype's range",
                    got, "zero point out of range");
      return false;
    }
  }
  return true;
}

bool dg_build_requant(dg_build *b, const dg_tensor_desc *x,
                      const dg_tensor_desc *w, const dg_tensor_desc *y) {
  int64_t n = w->quant.channel_count ? w->quant.channel_count : 1;
  for (int64_t c = 0; c < n; c++) {
    float m = dg_requant_multiplier(x->quant.scale, dg_quant_scale(w, c),
                                    y->quant.scale);
    if (!isnormal(m)) {
      char got[96];
      snprintf(got, sizeof got, "%g * %g / %g = %g", x->quant.scale,
               dg_quant_scale(w, c), y->quant.scale, m);
      dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "y_quant.scale",
                    "x.scale * w.scale / y.scale a finite, normal float", got,
                    "requantisation multiplier unusable");
      return false;
    }
  }
  return true;
}

bool dg_build_broadcast(dg_build *b, const dg_tensor_info *a,
                        const dg_tensor_info *bt, const char *field,
                        dg_tensor_desc *out) {
  if (dg_broadcast_dims(a->desc.rank, a->desc.dims, bt->desc.rank,
                        bt->desc.dims, &out->rank, out->dims))
    return true;
  char exp[96], got[96];
  dg_format_dims(exp, sizeof exp, a->desc.rank, a->desc.dims);
  dg_format_dims(got, sizeof got, bt->desc.rank, bt->desc.dims);
  dg_build_fail(b, DG_ERROR_INVALID_SHAPE, field, exp, got,
                "shapes do not broadcast");
  return false;
}

bool dg_build_q8_output(dg_build *b, dg_dtype y_dtype,
                        const dg_quant_params *y_quant, dg_tensor_desc *out) {
  if (y_dtype != DG_DTYPE_I8 && y_dtype != DG_DTYPE_U8) {
    dg_build_fail(b, DG_ERROR_INVALID_DTYPE, "y_dtype", "i8 or u8",
                  dg_dtype_name(y_dtype), "int8 output dtype");
    return false;
  }
  if (!y_quant) {
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "y_quant", "non-NULL", "NULL",
                  "output quantisation missing");
    return false;
  }
  out->dtype = y_dtype;
  out->quant = *y_quant;
  return dg_build_quant(b, out, "y_quant", -1);
}

bool dg_build_desc(dg_build *b, const dg_tensor_desc *d, const char *field) {
  char f[64], got[96];
  if (!d) {
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, field, "non-NULL", "NULL",
                  "descriptor missing");
    return false;
  }
  if (d->dtype <= DG_DTYPE_INVALID || d->dtype >= DG_DTYPE_COUNT_) {
    snprintf(f, sizeof f, "%s.dtype", field);
    snprintf(got, sizeof got, "%d", (int)d->dtype);
    dg_build_fail(b, DG_ERROR_INVALID_DTYPE, f,
                  "f32, f16, i8, u8, i32, bool or i64", got, "unknown dtype");
    return false;
  }
  if (d->rank < 0 || d->rank > DG_MAX_RANK) {
    snprintf(f, sizeof f, "%s.rank", field);
    snprintf(got, sizeof got, "%d", d->rank);
    dg_build_fail(b, DG_ERROR_INVALID_SHAPE, f, "0..6", got, "bad rank");
    return false;
  }
  uint64_t n = dg_dtype_size(d->dtype);
  for (int i = 0; i < d->rank; i++) {
    if (d->dims[i] < 1) {
      snprintf(f, sizeof f, "%s.dims[%d]", field, i);
      snprintf(got, sizeof got, "%lld", (long long)d->dims[i]);
      dg_build_fail(b, DG_ERROR_INVALID_SHAPE, f, ">= 1", got,
                    "zero-sized or negative dimension");
      return false;
    }
    if ((uint64_t)d->dims[i] > (UINT64_C(1) << 48) / n) {
      snprintf(f, sizeof f, "%s.dims", field);
      dg_format_dims(got, sizeof got, d->rank, d->dims);
      dg_build_fail(b, DG_ERROR_OVERFLOW, f, "at most 2^48 bytes", got,
                    "tensor size overflows");
      return false;
    }
    n *= (uint64_t)d->dims[i];
  }
  if (d->dtype == DG_DTYPE_I8 || d->dtype == DG_DTYPE_U8)
    return dg_build_quant(b, d, field, d->quant.axis); /* ops check axis */
  if (d->dtype == DG_DTYPE_I32 && d->quant.channel_count == 0 &&
      d->quant.scale == 0)
    return true; /* plain integers */
  if (d->dtype == DG_DTYPE_I32)
    return dg_build_quant(b, d, field, d->quant.axis);
  /* bool and i64 are plain values, never quantised: a scale, zero point
   * or channel list given for one is a caller's mistake, not ignored. */
  if ((d->dtype == DG_DTYPE_BOOL || d->dtype == DG_DTYPE_I64) &&
      (d->quant.scale != 0 || d->quant.zero_point != 0 || d->quant.axis != 0 ||
       d->quant.channel_count != 0 || d->quant.channel_scales ||
       d->quant.channel_zero_points)) {
    snprintf(f, sizeof f, "%s.quant", field);
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, f, "all zero", "set",
                  "bool and i64 tensors take no quantisation");
    return false;
  }
  return true;
}

/* ---- growth of the IR ---- */

static bool grow(void **items, int *cap, int need, size_t size) {
  if (need <= *cap)
    return true;
  int c = *cap ? *cap * 2 : 16;
  while (c < need)
    c *= 2;
  void *p = realloc(*items, (size_t)c * size);
  if (!p)
    return false;
  *items = p;
  *cap = c;
  return true;
}

static bool copy_quant(dg_tensor_info *t, const dg_tensor_desc *d) {
  t->desc = *d;
  t->channel_scales = NULL;
  t->channel_zero_points = NULL;
  int n = d->quant.channel_count;
  if (n <= 0 || !d->quant.channel_scales) {
    t->desc.quant.channel_count = 0;
    t->desc.quant.channel_scales = NULL;
    t->desc.quant.channel_zero_points = NULL;
    return true;
  }
  t->channel_scales = malloc((size_t)n * sizeof(float));
  t->channel_zero_points = calloc((size_t)n, sizeof(int32_t));
  if (!t->channel_scales || !t->channel_zero_points) {
    free(t->channel_scales);
    free(t->channel_zero_points);
    t->channel_scales = NULL;
    t->channel_zero_points = NULL;
    return false;
  }
  memcpy(t->channel_scales, d->quant.channel_scales, (size_t)n * sizeof(float));
  if (d->quant.channel_zero_points)
    memcpy(t->channel_zero_points, d->quant.channel_zero_points,
           (size_t)n * sizeof(int32_t));
  t->desc.quant.channel_scales = t->channel_scales;
  t->desc.quant.channel_zero_points = t->channel_zero_points;
  return true;
}

static void oom(dg_build *b) {
  dg_build_fail(b, DG_ERROR_OUT_OF_MEMORY, "memory", NULL, NULL,
                "host allocation failed while adding to the graph");
}

/* Appends a tensor; returns its id or 0 (graph failed). */
static uint32_t add_tensor(dg_build *b, const char *name, dg_tensor_kind kind,
                           const dg_tensor_desc *d, int producer) {
  dg_ir *ir = &b->g->ir;
  if (!grow((void **)&ir->tensors, &ir->tensor_cap, ir->tensor_count + 1,
            sizeof *ir->tensors)) {
    oom(b);
    return 0;
  }
  dg_tensor_info *t = &ir->tensors[ir->tensor_count];
  memset(t, 0, sizeof *t);
  if (!copy_quant(t, d)) {
    oom(b);
    return 0;
  }
  t->name = dg_name_dup(name);
  if (!t->name) {
    free(t->channel_scales);
    free(t->channel_zero_points);
    oom(b);
    return 0;
  }
  t->kind = kind;
  t->producer = producer;
  return (uint32_t)++ir->tensor_count;
}

static bool name_taken(const dg_ir *ir, const char *name) {
  for (int i = 0; i < ir->input_count; i++)
    if (!strcmp(ir->inputs[i].name, name))
      return true;
  for (int i = 0; i < ir->output_count; i++)
    if (!strcmp(ir->outputs[i].name, name))
      return true;
  return false;
}

/* Inputs and outputs are bound by name at run time: any length, but not
 * empty, and unique. */
static bool check_io_name(dg_build *b, const char *name) {
  if (!name || !*name) {
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "name", "a non-empty name",
                  name ? "an empty string" : "NULL", "input/output name is %s",
                  name ? "empty" : "NULL");
    return false;
  }
  if (name_taken(&b->g->ir, name)) {
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "name", "a unique name", name,
                  "an input or output with this name exists");
    return false;
  }
  return true;
}

static bool push_io(dg_build *b, dg_io_binding **list, int *count,
                    const char *name, uint32_t id, dg_layout layout) {
  dg_io_binding *p = realloc(*list, (size_t)(*count + 1) * sizeof **list);
  if (!p) {
    oom(b);
    return false;
  }
  *list = p;
  p[*count] = (dg_io_binding){dg_name_dup(name), id, layout, false};
  if (!p[*count].name) {
    oom(b);
    return false;
  }
  (*count)++;
  return true;
}

dg_tensor dg_graph_input(dg_graph *g, const char *name,
                         const dg_tensor_desc *desc) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_INVALID, name))
    return DG_TENSOR_NONE;
  if (!check_io_name(&b, name) || !dg_build_desc(&b, desc, "desc"))
    return DG_TENSOR_NONE;
  uint32_t id = add_tensor(&b, name, DG_TENSOR_INPUT, desc, -1);
  if (!id ||
      !push_io(&b, &g->ir.inputs, &g->ir.input_count, name, id, DG_LAYOUT_NCHW))
    return DG_TENSOR_NONE;
  return (dg_tensor){id, g->serial};
}

dg_tensor dg_graph_constant(dg_graph *g, const char *name,
                            const dg_tensor_desc *desc, const void *data,
                            unsigned flags) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_INVALID, name))
    return DG_TENSOR_NONE;
  if (!dg_build_desc(&b, desc, "desc"))
    return DG_TENSOR_NONE;
  if (!data) {
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "data", "non-NULL", "NULL",
                  "constant data missing");
    return DG_TENSOR_NONE;
  }
  if (flags & ~(unsigned)DG_CONSTANT_LEND) {
    char got[32];
    snprintf(got, sizeof got, "0x%x", flags);
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "flags",
                  "0 or DG_CONSTANT_LEND", got, "unknown flag");
    return DG_TENSOR_NONE;
  }
  size_t size = dg_desc_bytes(desc);
  dg_blob *blob = calloc(1, sizeof *blob);
  if (!blob) {
    oom(&b);
    return DG_TENSOR_NONE;
  }
  atomic_init(&blob->refs, 1);
  blob->size = size;
  if (flags & DG_CONSTANT_LEND) {
    blob->data = data;
  } else {
    blob->owned = malloc(size ? size : 1);
    if (!blob->owned) {
      free(blob);
      oom(&b);
      return DG_TENSOR_NONE;
    }
    memcpy(blob->owned, data, size);
    blob->data = blob->owned;
  }
  uint32_t id = add_tensor(&b, name, DG_TENSOR_CONSTANT, desc, -1);
  if (!id) {
    dg_blob_release(blob);
    return DG_TENSOR_NONE;
  }
  g->ir.tensors[id - 1].constant = blob;
  return (dg_tensor){id, g->serial};
}

dg_status dg_graph_output(dg_graph *g, const char *name, dg_tensor t,
                          dg_layout layout) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_INVALID, name))
    return b.g ? DG_ERROR_GRAPH_FAILED : DG_ERROR_INVALID_ARGUMENT;
  bool ok = true;
  const dg_tensor_info *ti = dg_build_tensor(&b, t, "tensor", false, &ok);
  if (!ok || !check_io_name(&b, name))
    return g->error.status;
  if (layout != DG_LAYOUT_NCHW && layout != DG_LAYOUT_NHWC) {
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "layout", "NCHW or NHWC",
                  "unknown", "bad layout");
    return g->error.status;
  }
  if (layout == DG_LAYOUT_NHWC && ti->desc.rank != 4) {
    dg_build_fail(&b, DG_ERROR_INVALID_SHAPE, "layout", "a rank-4 tensor",
                  "another rank", "NHWC applies to rank-4 tensors only");
    return g->error.status;
  }
  if (!push_io(&b, &g->ir.outputs, &g->ir.output_count, name, t.id, layout))
    return g->error.status;
  return DG_OK;
}

dg_status dg_graph_input_layout(dg_graph *g, const char *name,
                                dg_layout layout) {
  if (!(g = dg_graph_alive(g)) || !name)
    return DG_ERROR_INVALID_ARGUMENT;
  if (g->failed)
    return DG_ERROR_GRAPH_FAILED;
  for (int i = 0; i < g->ir.input_count; i++) {
    if (strcmp(g->ir.inputs[i].name, name))
      continue;
    const dg_tensor_info *t = dg_ir_tensor(&g->ir, g->ir.inputs[i].tensor);
    if ((layout != DG_LAYOUT_NCHW && layout != DG_LAYOUT_NHWC) ||
        (layout == DG_LAYOUT_NHWC && t->desc.rank != 4))
      return DG_ERROR_INVALID_ARGUMENT;
    g->ir.inputs[i].layout = layout;
    return DG_OK;
  }
  return DG_ERROR_NOT_FOUND;
}

dg_tensor dg_build_finish(dg_build *b, const uint32_t *inputs, int count,
                          const dg_tensor_desc *out_desc,
                          const dg_node_params *p) {
  /* out_desc may point into the tensor array (an op whose output looks
   * like its input), which growing the array below moves: copy it first.
   * Its per-channel arrays are separate allocations and stay put. */
  dg_tensor_desc copy = *out_desc;
  const dg_tensor_desc *out = &copy;
  dg_graph *g = b->g;
  dg_ir *ir = &g->ir;
  char auto_name[48]; /* an op name and an int */
  const char *name = b->name;
  if (!name || !*name) {
    snprintf(auto_name, sizeof auto_name, "%s_%d", dg_op_name(b->op),
             ir->node_count);
    name = auto_name;
  }
  /* The inferred output can overflow even when the inputs did not. */
  dg_build_desc(b, out, "output");
  /* ops.def names the parameters each op reads; a builder that sets any
   * other would hand kernels a value nobody checked. */
  unsigned stray = p ? dg_node_params_set(p) & ~dg_op_def_get(b->op)->reads : 0;
  if (stray && !g->failed) {
    char got[32];
    snprintf(got, sizeof got, "0x%x", stray);
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "params",
                  "the fields ops.def lists", got,
                  "internal error: the builder set parameters (DG_P_* %s) that "
                  "ops.def does not list for this op",
                  got);
  }
  if (g->failed)
    return DG_TENSOR_NONE;
  if (!grow((void **)&ir->nodes, &ir->node_cap, ir->node_count + 1,
            sizeof *ir->nodes)) {
    oom(b);
    return DG_TENSOR_NONE;
  }
  uint32_t *ins = malloc((size_t)(count ? count : 1) * sizeof *ins);
  if (!ins) {
    oom(b);
    return DG_TENSOR_NONE;
  }
  memcpy(ins, inputs, (size_t)count * sizeof *ins);
  char *node_name = dg_name_dup(name);
  if (!node_name) {
    free(ins);
    oom(b);
    return DG_TENSOR_NONE;
  }
  uint32_t id = add_tensor(b, name, DG_TENSOR_VALUE, out, ir->node_count);
  if (!id) {
    free(ins);
    free(node_name);
    return DG_TENSOR_NONE;
  }
  dg_node *n = &ir->nodes[ir->node_count++];
  memset(n, 0, sizeof *n);
  n->op = b->op;
  n->name = node_name;
  n->inputs = ins;
  n->input_count = count;
  n->output = id;
  n->pinned_device = g->pin;
  if (p)
    n->p = *p;
  return (dg_tensor){id, g->serial};
}

/* ---- input and output descriptions ---- */

dg_status dg_io_info_get(const dg_ir *ir, bool output, int index,
                         dg_io_info *out) {
  if (!out)
    return DG_ERROR_INVALID_ARGUMENT;
  int count = output ? ir->output_count : ir->input_count;
  if (index < 0 || index >= count)
    return DG_ERROR_NOT_FOUND;
  const dg_io_binding *b = output ? &ir->outputs[index] : &ir->inputs[index];
  out->name = b->name;
  out->desc = dg_ir_io_desc(ir, b);
  out->layout = b->layout;
  return DG_OK;
}

int dg_graph_input_count(const dg_graph *g) {
  return (g = dg_graph_alive(g)) ? g->ir.input_count : 0;
}
int dg_graph_output_count(const dg_graph *g) {
  return (g = dg_graph_alive(g)) ? g->ir.output_count : 0;
}
dg_status dg_graph_input_info(const dg_graph *g, int i, dg_io_info *out) {
  return (g = dg_graph_alive(g)) ? dg_io_info_get(&g->ir, false, i, out)
                                 : DG_ERROR_INVALID_ARGUMENT;
}
dg_status dg_graph_output_info(const dg_graph *g, int i, dg_io_info *out) {
  return (g = dg_graph_alive(g)) ? dg_io_info_get(&g->ir, true, i, out)
                                 : DG_ERROR_INVALID_ARGUMENT;
}
