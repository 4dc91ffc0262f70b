/* The fp16 specifics of an f16 conv2d node (see lower.h): which nodes the
 * NPU takes, the weights of a channel block packed for the fp16 CNA, and
 * what the host does after the NPU (the bias, relu/relu6). The node is cut
 * into tasks (rows and output channels), placed in the shared buffers and
 * run by lower.c and conv_exec.c, as an int8 node is. */
#include "lower.h"

#include "pack.h"

#include "core/half.h" /* dg_f16_to_f32, dg_f32_to_f16 */

#include <stdio.h>

static bool decline(char *why, size_t n, const char *what) {
  snprintf(why, n, "%s", what);
  return false;
}

/* The node-level checks: everything but the CBUF and field ranges (the
 * shape is lower.c's conv_shape). A fallback's plan shows 60 characters of
 * these. */
bool dg_npu_f16_node_ok(const dg_ir *ir, const dg_node *n, npu_conv *c,
                        char *why, size_t ws) {
  const dg_tensor_info *x = dg_ir_tensor(ir, n->inputs[0]),
                       *w = dg_ir_tensor(ir, n->inputs[1]),
                       *b = n->inputs[2] ? dg_ir_tensor(ir, n->inputs[2]) : 0,
                       *y = dg_ir_tensor(ir, n->output);
  if (x->desc.dtype == DG_DTYPE_F32 || y->desc.dtype == DG_DTYPE_F32)
    return decline(why, ws,
                   "f32 op: NPU runs f16/int8; convert the graph to f16");
  if (x->desc.dtype != DG_DTYPE_F16 || w->desc.dtype != DG_DTYPE_F16 ||
      y->desc.dtype != DG_DTYPE_F16)
    return decline(why, ws, "conv2d: x, w and y must all be f16");
  if (w->kind != DG_TENSOR_CONSTANT || (b && b->kind != DG_TENSOR_CONSTANT))
    return decline(why, ws, "weights or bias not constant");
  if (n->p.groups != 1)
    return decline(why, ws, "f16 grouped/depthwise conv: not yet on the NPU");
  if (n->p.pads[0] > 15 || n->p.pads[1] > 15 || n->p.pads[2] > 15 ||
      n->p.pads[3] > 15)
    return decline(why, ws, "padding > 15");
  c->f16 = true;
  c->act = n->p.activation;
  c->bias_f16 = b ? b->constant->data : NULL;
  return true;
}

void dg_npu_f16_pack_block(const npu_conv *c, const dg_ir *ir,
                           const npu_task *t) {
  const uint16_t *w = dg_ir_tensor(ir, c->node->inputs[1])->constant->data;
  size_t per = (size_t)c->C * c->kh * c->kw;
  dg_npu_pack_weights_f16(w + per * (size_t)t->o0, t->d.out_c, c->C, c->kh,
                          c->kw, c->wt.map + t->wt_off);
}

/* What the NPU does not do: the bias (a second fp16 rounding: the NPU
 * rounded the sum already) and relu/relu6 (exact: 0 and 6 are fp16). */
static uint16_t epilogue(const npu_conv *c, int o, uint16_t v) {
  if (!c->bias_f16 && c->act == DG_ACTIVATION_NONE)
    return v;
  float f = dg_f16_to_f32(v);
  if (c->bias_f16)
    f += dg_f16_to_f32(c->bias_f16[o]);
  if (c->act != DG_ACTIVATION_NONE && f < 0.0f)
    f = 0.0f;
  if (c->act == DG_ACTIVATION_RELU6 && f > 6.0f)
    f = 6.0f;
  return dg_f32_to_f16(f);
}

void dg_npu_f16_scatter(npu_conv *c, const npu_task *t, uint16_t *y) {
  const npu_conv_desc *d = &t->d;
  dg_npu_unpack_feature_f16(c->out.map + t->out_off, d->out_c, d->out_h,
                            d->out_w, c->y_f16);
  for (int ch = 0; ch < d->out_c; ch++)
    for (int r = 0; r < d->out_h; r++) {
      int o = t->o0 + ch, oy = t->oh0 + r;
      const uint16_t *src = c->y_f16 + ((size_t)ch * d->out_h + r) * d->out_w;
      uint16_t *dst = y + ((size_t)o * c->OH + (size_t)oy) * c->OW;
      for (int x = 0; x < d->out_w; x++)
        dst[x] = epilogue(c, o, src[x]);
    }
}
