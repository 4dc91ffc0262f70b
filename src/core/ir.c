/* IR utilities: sizes, deep copy for sessions (names included), freeing. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

int64_t dg_desc_elements(const dg_tensor_desc *d) {
  int64_t n = 1;
  for (int i = 0; i < d->rank; i++)
    n *= d->dims[i];
  return n;
}

size_t dg_desc_bytes(const dg_tensor_desc *d) {
  return (size_t)dg_desc_elements(d) * dg_dtype_size(d->dtype);
}

void dg_dtype_int_range(dg_dtype t, int64_t *lo, int64_t *hi) {
  switch (t) {
  case DG_DTYPE_I8:
    *lo = -128;
    *hi = 127;
    break;
  case DG_DTYPE_U8:
    *lo = 0;
    *hi = 255;
    break;
  default:
    *lo = INT32_MIN;
    *hi = INT32_MAX;
    break;
  }
}

void dg_blob_release(dg_blob *b) {
  if (b && atomic_fetch_sub(&b->refs, 1) == 1) {
    free(b->owned);
    free(b);
  }
}

static void free_tensor(dg_tensor_info *t) {
  free(t->name);
  free(t->channel_scales);
  free(t->channel_zero_points);
  dg_blob_release(t->constant);
}

void dg_ir_free(dg_ir *ir) {
  for (int i = 0; i < ir->tensor_count; i++)
    free_tensor(&ir->tensors[i]);
  for (int i = 0; i < ir->node_count; i++) {
    free(ir->nodes[i].name);
    free(ir->nodes[i].inputs);
  }
  for (int i = 0; i < ir->input_count; i++)
    free(ir->inputs[i].name);
  for (int i = 0; i < ir->output_count; i++)
    free(ir->outputs[i].name);
  free(ir->tensors);
  free(ir->nodes);
  free(ir->inputs);
  free(ir->outputs);
  memset(ir, 0, sizeof *ir);
}

static void *dup_mem(const void *p, size_t n) {
  void *q = malloc(n ? n : 1);
  if (q && n)
    memcpy(q, p, n);
  return q;
}

char *dg_name_dup(const char *name) {
  if (!name)
    name = "";
  return dup_mem(name, strlen(name) + 1);
}

/* Copies count bindings into dst, which is zeroed (names NULL) so that
 * dg_ir_free can take whatever was copied when a name fails. */
static bool clone_bindings(dg_io_binding *dst, const dg_io_binding *src,
                           int count) {
  for (int i = 0; i < count; i++) {
    dst[i] = src[i];
    if (!(dst[i].name = dg_name_dup(src[i].name)))
      return false;
  }
  return true;
}

bool dg_ir_clone(const dg_ir *src, dg_ir *dst) {
  memset(dst, 0, sizeof *dst);
  dst->tensors = calloc((size_t)src->tensor_count + 1, sizeof *dst->tensors);
  dst->nodes = calloc((size_t)src->node_count + 1, sizeof *dst->nodes);
  dst->inputs = calloc((size_t)src->input_count + 1, sizeof *dst->inputs);
  dst->outputs = calloc((size_t)src->output_count + 1, sizeof *dst->outputs);
  if (!dst->tensors || !dst->nodes || !dst->inputs || !dst->outputs) {
    dg_ir_free(dst);
    return false;
  }
  dst->tensor_cap = src->tensor_count + 1;
  dst->node_cap = src->node_count + 1;
  dst->input_count = src->input_count;
  dst->output_count = src->output_count;
  if (!clone_bindings(dst->inputs, src->inputs, src->input_count) ||
      !clone_bindings(dst->outputs, src->outputs, src->output_count)) {
    dg_ir_free(dst);
    return false;
  }
  for (int i = 0; i < src->tensor_count; i++) {
    const dg_tensor_info *s = &src->tensors[i];
    dg_tensor_info *d = &dst->tensors[i];
    *d = *s;
    d->name = NULL;
    d->channel_scales = NULL;
    d->channel_zero_points = NULL;
    d->constant = NULL;
    dst->tensor_count = i + 1;
    if (!(d->name = dg_name_dup(s->name))) {
      dg_ir_free(dst);
      return false;
    }
    int n = s->desc.quant.channel_count;
    if (n) {
      d->channel_scales = dup_mem(s->channel_scales, (size_t)n * sizeof(float));
      d->channel_zero_points =
          dup_mem(s->channel_zero_points, (size_t)n * sizeof(int32_t));
      if (!d->channel_scales || !d->channel_zero_points) {
        dg_ir_free(dst);
        return false;
      }
      d->desc.quant.channel_scales = d->channel_scales;
      d->desc.quant.channel_zero_points = d->channel_zero_points;
    }
    if (s->constant) {
      d->constant = s->constant;
      atomic_fetch_add(&d->constant->refs, 1);
    }
  }
  for (int i = 0; i < src->node_count; i++) {
    dst->nodes[i] = src->nodes[i];
    dst->nodes[i].name = dg_name_dup(src->nodes[i].name);
    dst->nodes[i].inputs =
        dup_mem(src->nodes[i].inputs,
                (size_t)src->nodes[i].input_count * sizeof(uint32_t));
    dst->node_count = i + 1;
    if (!dst->nodes[i].name || !dst->nodes[i].inputs) {
      dg_ir_free(dst);
      return false;
    }
  }
  return true;
}

double dg_node_io_bytes(const dg_ir *ir, const dg_node *n) {
  double bytes = (double)dg_desc_bytes(&dg_ir_tensor(ir, n->output)->desc);
  for (int k = 0; k < n->input_count; k++)
    if (n->inputs[k])
      bytes += (double)dg_desc_bytes(&dg_ir_tensor(ir, n->inputs[k])->desc);
  return bytes;
}
