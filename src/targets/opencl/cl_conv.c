/* OpenCL convolutions (ops/conv.c's conv2d and qconv2d). */
#include "cl_prep.h"
#include "core/env.h"

#include "kernels/geom.h"
#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

cl_int dg_cl_conv(prep *p) {
  const dg_tensor_desc *x = dg_cl_in_desc(p, 0), *w = dg_cl_in_desc(p, 1),
                       *y = dg_cl_out_desc(p);
  const dg_node_params *np = &p->n->p;
  bool q = p->n->op == DG_OP_QCONV2D;
  int32_t g[DG_CL_GEOM_INTS] = {0};
  dg_conv_geom cg = dg_conv_geom_of(p->ir, p->n);
  int64_t G = cg.G, O = cg.O;
  g[G_NIMG] = (int32_t)cg.N;
  g[G_C] = (int32_t)cg.C;
  g[G_H] = (int32_t)cg.H;
  g[G_W] = (int32_t)cg.W;
  g[G_O] = (int32_t)cg.O;
  g[G_OH] = (int32_t)cg.OH;
  g[G_OW] = (int32_t)cg.OW;
  g[G_KH] = (int32_t)cg.KH;
  g[G_KW] = (int32_t)cg.KW;
  g[G_SH] = cg.sh;
  g[G_SW] = cg.sw;
  g[G_DH] = cg.dh;
  g[G_DW] = cg.dw;
  g[G_PT] = cg.pt;
  g[G_PL] = cg.pl;
  g[G_CG] = (int32_t)cg.CG;
  g[G_OG] = (int32_t)cg.OG;
  g[G_HIO] = x->dtype == DG_DTYPE_F16;
  g[G_BIAS] = p->n->inputs[2] ? 1 : 0;
  g[G_RES] = dg_conv_residual(p->n) != 0;
  g[G_POST] = dg_conv_post_unary(p->n);
  g[G_POST_A] = dg_cl_fbits(np->alpha);
  g[G_POST_B] = dg_cl_fbits(np->beta);
  dg_cl_act_bounds(np->activation, g);
  if (!q && (g[G_OG] < 4 || dg_cl_cpu_kernels(p))) {
    /* Few output channels per group (depthwise): direct. */
    cl_mem gm = NULL;
    cl_int err = dg_cl_aux(p, g, sizeof g, &gm);
    if (err != CL_SUCCESS)
      return err;
    dg_cl_grid1(p->cn, dg_desc_elements(y));
    cl_mem args[6] = {dg_cl_in_mem(p, 0),
                      dg_cl_in_mem(p, 1),
                      dg_cl_in_mem(p, 2),
                      dg_cl_out_mem(p),
                      gm,
                      dg_cl_residual_mem(p)};
    return dg_cl_kernel(p, "conv_direct_f32", 6, args);
  }
  int64_t K = (int64_t)g[G_CG] * g[G_KH] * g[G_KW];
  g[G_M] = g[G_OG];
  g[G_N] = (int32_t)(x->dims[0] * y->dims[2] * y->dims[3]);
  g[G_K] = (int32_t)K;
  g[G_MODE] = 1;
  g[G_SAM] = (int32_t)K;
  g[G_SAK] = 1;
  g[G_WSIDE] = 0;
  g[G_ASGN] = w->dtype == DG_DTYPE_I8;
  g[G_BSGN] = x->dtype == DG_DTYPE_I8;
  int32_t *offs = calloc((size_t)G * 3, sizeof(int32_t));
  if (!offs) {
    p->call = "malloc";
    return CL_OUT_OF_HOST_MEMORY;
  }
  for (int64_t z = 0; z < G; z++)
    offs[3 * z] = (int32_t)(z * g[G_OG] * K);
  /* Per k = (c, kh, kw): the input offset from the output position's
   * window corner, and the row and column displacements. */
  int32_t *ktab = q ? NULL : malloc(sizeof(int32_t) * 4 * (size_t)K);
  if (!q && !ktab) {
    free(offs);
    p->call = "malloc";
    return CL_OUT_OF_HOST_MEMORY;
  }
  for (int64_t k = 0; ktab && k < K; k++) {
    int32_t khw = g[G_KH] * g[G_KW], c = (int32_t)k / khw, r = (int32_t)k % khw,
            kh = r / g[G_KW], kw = r % g[G_KW];
    ktab[4 * k] = (c * g[G_H] + kh * g[G_DH]) * g[G_W] + kw * g[G_DW];
    ktab[4 * k + 1] = kh * g[G_DH];
    ktab[4 * k + 2] = kw * g[G_DW];
    ktab[4 * k + 3] = 0;
  }
  /* Conv rows: A = weights, B = input gathered (order as the kernel). */
  cl_int err = dg_cl_gemm(p, g, offs, G, q, O, dg_cl_in_mem(p, 1),
                          dg_cl_in_mem(p, 0), dg_cl_in_mem(p, 2), ktab);
  free(ktab);
  free(offs);
  return err;
}
