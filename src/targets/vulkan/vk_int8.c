/* The work of qbinary, lookup and qavg_pool2d nodes: int8 as stored, with
 * the numerics contract's fp32 steps (src/ops/requant.h) in the shaders
 * and every factor that needs a division computed here on the host, so
 * that the results are bit-exact with the reference and the CPU kernels
 * (src/targets/cpu/int8.c). */
#include "vk_internal.h"

#include "ops/ops.h"
#include "ops/requant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* No FMA contraction: meson passes -ffp-contract=off. */

/* ---- qbinary: binary.comp's broadcast, the contract's requantisation */

bool dg_vk_setup_qbinary(const vk_device *vd, vk_work *w, const dg_ir *ir,
                         const dg_node *n) {
  (void)vd;
  const dg_tensor_desc *ad = dg_ir_desc(ir, n->inputs[0]),
                       *bd = dg_ir_desc(ir, n->inputs[1]),
                       *yd = dg_ir_desc(ir, n->output);
  int64_t sa[DG_MAX_RANK] = {0}, sb[DG_MAX_RANK] = {0}, lo, hi;
  dg_broadcast_strides(ad->rank, ad->dims, yd->rank, yd->dims, sa);
  dg_broadcast_strides(bd->rank, bd->dims, yd->rank, yd->dims, sb);
  dg_dtype_int_range(yd->dtype, &lo, &hi);
  int64_t total = dg_desc_elements(yd);
  /* Sizes narrow to the shader's int: supports() keeps tensors below 2^31
   * elements. */
  vk_pc_qbinary *pc = &w->push.qbinary;
  *pc = (vk_pc_qbinary){.total = (int)total,
                        .rank = yd->rank,
                        .mul = n->p.fn == DG_BINARY_MUL,
                        .flags = (ad->dtype == DG_DTYPE_I8) |
                                 (bd->dtype == DG_DTYPE_I8) << 1,
                        .za = ad->quant.zero_point,
                        .zb = bd->quant.zero_point,
                        .zy = yd->quant.zero_point,
                        .lo = (int)lo,
                        .hi = (int)hi};
  for (int d = 0; d < 6; d++) {
    pc->dims[d] = d < yd->rank ? (int)yd->dims[d] : 1;
    pc->sa[d] = d < yd->rank ? (int)sa[d] : 0;
    pc->sb[d] = d < yd->rank ? (int)sb[d] : 0;
  }
  dg_qbinary_factors(ir, n, &pc->fa, &pc->fb);
  w->shader = SH_QBINARY_8;
  w->bind[0] = n->inputs[0];
  w->bind[1] = n->inputs[1];
  w->bind[3] = n->output;
  dg_vk_grid_1d(w->groups, total, 256);
  return true;
}

/* ---- lookup: the table is the node's second input ---- */

bool dg_vk_setup_lookup(const vk_device *vd, vk_work *w, const dg_ir *ir,
                        const dg_node *n) {
  (void)vd;
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]);
  int64_t total = dg_desc_elements(xd);
  w->push.lookup = (vk_pc_lookup){.total = (int)total,
                                  .flip = xd->dtype == DG_DTYPE_I8 ? 0x80 : 0};
  w->shader = SH_LOOKUP_8;
  w->bind[0] = n->inputs[0];
  w->bind[1] = n->inputs[1];
  w->bind[3] = n->output;
  dg_vk_grid_1d(w->groups, total, 256);
  return true;
}

/* ---- qavg_pool2d ----
 * A window's divisor is the product of its counts along the two axes
 * (the taps inside the input, or with count_include_pad inside the
 * padded input: window.glsl's taps). The multipliers of every divisor
 * between the least and the greatest product go to the parameter blob,
 * at most VK_QPOOL_MAX_DIVISORS of them; a global pool needs one. */
#define VK_QPOOL_MAX_DIVISORS 65536

/* The least and greatest count along one axis of out windows, each k taps
 * d apart from o * s - pad0, in an input of extent in with pad1 after it.
 * The builder leaves every window a tap of the input, so lo >= 1. */
static void axis_counts(int64_t out, int64_t in, int64_t k, int64_t s,
                        int64_t d, int64_t pad0, int64_t pad1, bool padded,
                        int64_t *lo, int64_t *hi) {
  *lo = INT64_MAX;
  *hi = 0;
  int64_t end = padded ? in + pad1 : in;
  for (int64_t o = 0; o < out; o++) {
    int64_t s0 = o * s - pad0;
    int64_t first = s0 < 0 && !padded ? (-s0 + d - 1) / d : 0;
    int64_t last = s0 >= end ? 0 : (end - 1 - s0) / d + 1;
    last = last < k ? last : k;
    int64_t c = last > first ? last - first : 0;
    *lo = c < *lo ? c : *lo;
    *hi = c > *hi ? c : *hi;
  }
}

static void qpool_divisors(const dg_ir *ir, const dg_node *n, int64_t *n0,
                           int64_t *n1) {
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]),
                       *yd = dg_ir_desc(ir, n->output);
  const dg_node_params *p = &n->p;
  int64_t lo[2], hi[2];
  for (int i = 0; i < 2; i++)
    axis_counts(yd->dims[2 + i], xd->dims[2 + i], p->kernel[i], p->stride[i],
                p->dilation[i], p->pads[i], p->pads[2 + i],
                p->count_include_pad, &lo[i], &hi[i]);
  *n0 = lo[0] * lo[1];
  *n1 = hi[0] * hi[1];
}

bool dg_vk_qavg_pool_declines(const dg_ir *ir, const dg_node *n, char *why,
                              size_t why_size) {
  if (n->op != DG_OP_QAVG_POOL2D)
    return false;
  int64_t n0, n1;
  qpool_divisors(ir, n, &n0, &n1);
  if (n1 - n0 + 1 <= VK_QPOOL_MAX_DIVISORS)
    return false;
  snprintf(why, why_size,
           "qavg_pool2d divisors %lld..%lld need %lld multipliers; the "
           "Vulkan table takes at most %d",
           (long long)n0, (long long)n1, (long long)(n1 - n0 + 1),
           VK_QPOOL_MAX_DIVISORS);
  return true;
}

bool dg_vk_setup_qavg_pool(const vk_device *vd, vk_work *w, const dg_ir *ir,
                           const dg_node *n) {
  (void)vd;
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]),
                       *yd = dg_ir_desc(ir, n->output);
  int64_t lo, hi, n0, n1;
  dg_dtype_int_range(yd->dtype, &lo, &hi);
  qpool_divisors(ir, n, &n0, &n1);
  w->push.pool = dg_vk_pool_push(ir, n);
  w->push.pool.q = (vk_pc_qpool){.xz = xd->quant.zero_point,
                                 .yz = yd->quant.zero_point,
                                 .lo = (int)lo,
                                 .hi = (int)hi,
                                 .n0 = (int)n0};
  w->shader = SH_QPOOL_8;
  w->bind[0] = n->inputs[0];
  w->bind[3] = n->output;
  w->bind[4] = VK_BIND_PARAMS;
  w->params_bytes = sizeof(uint32_t) * (size_t)(n1 - n0 + 1);
  dg_vk_grid_1d(w->groups, dg_desc_elements(yd), 256);
  if (w->estimate)
    return true;
  uint32_t *m = malloc(w->params_bytes);
  if (!m)
    return false;
  for (int64_t d = n0; d <= n1; d++) {
    float f = dg_requant_pool_multiplier(xd->quant.scale, yd->quant.scale, d);
    memcpy(&m[d - n0], &f, 4);
  }
  w->params = m;
  return true;
}
