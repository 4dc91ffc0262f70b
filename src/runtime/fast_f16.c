/* f32 graph -> f16 storage (fast_f16.h says when). */
#include "fast_f16.h"

#include "core/half.h"
#include "graph.h" /* dg_op_name */

#include <stdio.h>
#include <stdlib.h>

/* Input k, or for k past the inputs output k - input_count. */
static dg_io_binding *binding(const dg_ir *ir, int k) {
  return k < ir->input_count ? &ir->inputs[k]
                             : &ir->outputs[k - ir->input_count];
}

/* Why the graph cannot be lowered as a whole, or NULL. Whole or not at
 * all: lowering part of it would need casts between the parts. */
static const char *blocker(const dg_ir *ir, char *buf, size_t size) {
  for (int i = 0; i < ir->node_count; i++) {
    const dg_node *n = &ir->nodes[i];
    if (n->op == DG_OP_QUANTIZE || n->op == DG_OP_DEQUANTIZE) {
      snprintf(buf, size, "node '%.50s' (%s) converts to or from int8", n->name,
               dg_op_name(n->op));
      return buf;
    }
  }
  for (int i = 0; i < ir->tensor_count; i++)
    if (ir->tensors[i].desc.dtype == DG_DTYPE_F16) {
      snprintf(buf, size, "tensor '%.50s' is f16 already", ir->tensors[i].name);
      return buf;
    }
  for (int k = 0; k < ir->input_count + ir->output_count; k++) {
    const dg_io_binding *b = binding(ir, k);
    if (b->layout == DG_LAYOUT_NHWC) {
      snprintf(buf, size, "'%.50s' is bound NHWC", b->name);
      return buf;
    }
  }
  return NULL;
}

/* Constant t's data as f16, in place of its f32 blob. */
static bool lower_constant(dg_tensor_info *t) {
  int64_t n = dg_desc_elements(&t->desc);
  uint16_t *h = malloc(sizeof(uint16_t) * (size_t)(n ? n : 1));
  dg_blob *b = malloc(sizeof *b);
  if (!h || !b) {
    free(h), free(b);
    return false;
  }
  dg_f32_to_f16_n(t->constant->data, h, n);
  atomic_init(&b->refs, 1);
  b->data = b->owned = h;
  b->size = sizeof(uint16_t) * (size_t)n;
  dg_blob_release(t->constant);
  t->constant = b;
  t->desc.dtype = DG_DTYPE_F16;
  return true;
}

bool dg_fast_f16(dg_rewrite *rw, dg_pass_devices *devs) {
  if (devs->precision != DG_PRECISION_FAST_F16)
    return true;
  dg_ir *ir = rw->ir;
  char why[120];
  const char *no = blocker(ir, why, sizeof why);
  if (!no && !devs->gpu_f16)
    no = "no allowed Vulkan or OpenCL device computes in f16";
  if (no) {
    snprintf(devs->note, sizeof devs->note, "fast not applied: %s", no);
    return true;
  }
  for (int k = 0; k < ir->input_count + ir->output_count; k++) {
    dg_io_binding *b = binding(ir, k);
    b->host_f32 = dg_ir_desc(ir, b->tensor)->dtype == DG_DTYPE_F32;
  }
  for (int i = 0; i < ir->tensor_count; i++) {
    dg_tensor_info *t = &ir->tensors[i];
    if (t->desc.dtype != DG_DTYPE_F32)
      continue;
    if (t->kind == DG_TENSOR_CONSTANT && t->constant) {
      if (!lower_constant(t))
        return false;
    } else {
      t->desc.dtype = DG_DTYPE_F16;
    }
  }
  devs->lowered = true;
  return true;
}
