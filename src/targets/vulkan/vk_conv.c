/* Vulkan convolutions (ops/conv.c's conv2d and qconv2d). */
#include "vk_internal.h"

#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool dg_vk_setup_conv(const vk_device *vd, vk_work *w, const dg_ir *ir,
                      const dg_node *n) {
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]),
                       *wd = dg_ir_desc(ir, n->inputs[1]);
  const dg_node_params *p = &n->p;
  bool q = n->op == DG_OP_QCONV2D, f16 = xd->dtype == DG_DTYPE_F16;
  dg_conv_geom cg = dg_conv_geom_of(ir, n);
  int64_t N = cg.N, O = cg.O, G = cg.G, CG = cg.CG, OG = cg.OG, OH = cg.OH,
          OW = cg.OW;
  vk_pc_conv *pc = &w->push.conv;
  *pc = (vk_pc_conv){.N = N,
                     .C = cg.C,
                     .H = cg.H,
                     .W = cg.W,
                     .O = cg.O,
                     .OH = OH,
                     .OW = OW,
                     .KH = cg.KH,
                     .KW = cg.KW,
                     .G = G,
                     .CG = CG,
                     .OG = OG,
                     .sh = cg.sh,
                     .sw = cg.sw,
                     .dh = cg.dh,
                     .dw = cg.dw,
                     .pt = cg.pt,
                     .pl = cg.pl,
                     .has_bias = n->input_count > 2 && n->inputs[2],
                     .has_res = dg_conv_residual(n) != 0,
                     .post_fn = dg_conv_post_unary(n),
                     .post_a = p->alpha,
                     .post_b = p->beta};
  dg_activation_range(p->activation, &pc->lo, &pc->hi);
  w->bind[0] = n->inputs[0];
  w->bind[1] = n->inputs[1];
  w->bind[2] = n->input_count > 2 ? n->inputs[2] : 0;
  w->bind[3] = n->output;
  w->bind[5] = dg_conv_residual(n);
  int64_t KG = CG * wd->dims[2] * wd->dims[3], NP = N * OH * OW;
  bool coop = !q && f16 && dg_vk_use_coop_f16(vd, OG, NP, KG, G);
  bool big = !q && !f16 && dg_vk_use_big_f32(vd, OG, NP, KG, G);
  if (coop || big) {
    /* Batch folded into the GEMM's n; z = group. Specialisation constant
     * 0: A (the weight rows) loads as vectors (K a multiple of the vector
     * width). */
    dg_vk_big_work(vd, w, coop ? SH_CONVC_F16 : SH_CONVB_F32, SH_CONVC64_F16,
                   KG % (coop ? 8 : 4) == 0, OG, NP, G);
    if (coop && vd->coop_khr_f16) {
      const dg_tensor_info *wt = &ir->tensors[n->inputs[1] - 1];
      const uint16_t *wconst =
          wt->kind == DG_TENSOR_CONSTANT && wd->dtype == DG_DTYPE_F16
              ? wt->constant->data
              : NULL;
      int cb = dg_vk_cblock_work(vd, w, N, xd->dims[2], xd->dims[3], G, CG, OG,
                                 wd->dims[2] * wd->dims[3], NP, wconst);
      if (cb < 0)
        return false;
      if (!cb && !dg_vk_im2col_work(vd, w, OG, NP, KG, G))
        dg_vk_splitk_work(vd, w, true, OG, NP, KG, G);
    }
  } else if (!q && dg_vk_use_conv_gemv(vd, NP, KG, N * O * OH * OW)) {
    w->shader = f16 ? SH_CONVV_F16 : SH_CONVV_F32;
    dg_vk_grid_1d(w->groups, N * O * OH * OW, 1); /* a workgroup an output */
  } else if (dg_vk_direct_conv(vd, OG, OH * OW, N * G * OG * OH * OW * KG)) {
    w->shader = q ? SH_CONVD_Q8 : f16 ? SH_CONVD_F16 : SH_CONVD_F32;
    dg_vk_grid_1d(w->groups, N * O * OH * OW, 64);
  } else {
    w->shader = q     ? (dg_vk_use_dot(vd) ? SH_CONVDOT_Q8 : SH_CONV_Q8)
                : f16 ? SH_CONV_F16
                      : SH_CONV_F32;
    w->groups[0] = (uint32_t)((OH * OW + 63) / 64);
    w->groups[1] = (uint32_t)((OG + 63) / 64);
    w->groups[2] = (uint32_t)(N * G);
    if (!f16)
      dg_vk_splitk_tiled_work(vd, w, true, q, OG, OH * OW, KG, N * G);
  }
  if (q) {
    dg_vk_q_push(&pc->q8, ir, n);
    return dg_vk_q_params(w, ir, n, O);
  }
  return true;
}
