/* Vulkan fully connected layers and matmuls (ops/gemm.c), f32, f16 and
 * int8. */
#include "vk_internal.h"

#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The GEMM layout of one matrix product (no batch: brank 0). */
static void gemm_push(vk_work *w, int64_t M, int64_t N, int64_t K, int64_t sam,
                      int64_t sak, int64_t sbk, int64_t sbn, int bias_mode,
                      dg_activation act) {
  vk_pc_gemm *pc = &w->push.gemm;
  *pc = (vk_pc_gemm){.M = M,
                     .N = N,
                     .K = K,
                     .sam = sam,
                     .sak = sak,
                     .sbk = sbk,
                     .sbn = sbn,
                     .bias_mode = bias_mode,
                     .brank = 0,
                     .bdim = {1, 1, 1, 1}};
  dg_activation_range(act, &pc->lo, &pc->hi);
}

/* Specialisation constant 0 of the 128x128 kernels: bit 0 A loads as vectors of
 * vw elements, bit 1 B does, bit 2 B is k-contiguous (fully_connected's
 * weights). Vectors need the contiguous stride 1, the other stride, K or N
 * and every batch offset multiples of vw (tensor bases are aligned to at
 * least 64 bytes by the memory plan). */
static uint32_t big_flags(const vk_work *w, int vw) {
  const vk_pc_gemm *p = &w->push.gemm;
  int32_t N = p->N, K = p->K, sam = p->sam, sak = p->sak, sbk = p->sbk,
          sbn = p->sbn;
  bool abat = true, bbat = true;
  for (int d = 0; d < p->brank; d++) {
    abat = abat && p->astr[d] % vw == 0;
    bbat = bbat && p->bstr[d] % vw == 0;
  }
  bool bk = sbk == 1 && sbn != 1;
  bool av = sak == 1 && sam % vw == 0 && K % vw == 0 && abat;
  bool bv = bk ? (sbn % vw == 0 && K % vw == 0 && bbat)
               : (sbn == 1 && sbk % vw == 0 && N % vw == 0 && bbat);
  return (uint32_t)av | (uint32_t)bv << 1 | (uint32_t)bk << 2;
}

/* Picks the tiled or direct GEMM for M x N outputs in batch matrices
 * (after gemm_push: the 128x128 kernels read its strides). */
static void gemm_kernel(const vk_device *vd, vk_work *w, bool q, bool f16,
                        int64_t M, int64_t N, int64_t batch) {
  int64_t K = w->push.gemm.K;
  bool coop = !q && f16 && dg_vk_use_coop_f16(vd, M, N, K, batch);
  bool big = !q && !f16 && dg_vk_use_big_f32(vd, M, N, K, batch);
  if (coop || big) {
    dg_vk_big_work(vd, w, coop ? SH_GEMMC_F16 : SH_GEMMB_F32, SH_GEMMC64_F16,
                   big_flags(w, coop ? 8 : 4), M, N, batch);
    if (coop && vd->coop_khr_f16)
      dg_vk_splitk_work(vd, w, false, M, N, K, batch);
  } else if (dg_vk_use_gemv(vd, M, N, K, batch)) {
    w->shader = q ? SH_GEMV_Q8 : f16 ? SH_GEMV_F16 : SH_GEMV_F32;
    dg_vk_grid_1d(w->groups, batch * M * N, 1); /* a workgroup per output */
  } else if (dg_vk_direct_gemm(vd, M, N)) {
    w->shader = q ? SH_GEMMD_Q8 : f16 ? SH_GEMMD_F16 : SH_GEMMD_F32;
    dg_vk_grid_1d(w->groups, batch * M * N, 64);
  } else {
    w->shader = q     ? (dg_vk_use_dot(vd) ? SH_GEMMDOT_Q8 : SH_GEMM_Q8)
                : f16 ? SH_GEMM_F16
                      : SH_GEMM_F32;
    w->groups[0] = (uint32_t)((N + 63) / 64);
    w->groups[1] = (uint32_t)((M + 63) / 64);
    w->groups[2] = (uint32_t)batch;
    if (!f16)
      dg_vk_splitk_tiled_work(vd, w, false, q, M, N, K, batch);
  }
}

bool dg_vk_setup_fc(const vk_device *vd, vk_work *w, const dg_ir *ir,
                    const dg_node *n) {
  const dg_tensor_desc *xd = dg_ir_desc(ir, n->inputs[0]),
                       *wd = dg_ir_desc(ir, n->inputs[1]),
                       *yd = dg_ir_desc(ir, n->output);
  bool q = n->op == DG_OP_QFULLY_CONNECTED;
  int64_t M = yd->dims[0], N = wd->dims[0], K = wd->dims[1];
  bool bias = n->input_count > 2 && n->inputs[2];
  /* B[k][n] = w[n][k]: the weights read transposed. */
  gemm_push(w, M, N, K, K, 1, 1, K, bias ? 2 : 0, n->p.activation);
  w->bind[0] = n->inputs[0];
  w->bind[1] = n->inputs[1];
  w->bind[2] = bias ? n->inputs[2] : 0;
  w->bind[3] = n->output;
  gemm_kernel(vd, w, q, xd->dtype == DG_DTYPE_F16, M, N, 1);
  if (q) {
    dg_vk_q_push(&w->push.gemm.q8, ir, n);
    return dg_vk_q_params(w, ir, n, N);
  }
  return true;
}

bool dg_vk_setup_matmul(const vk_device *vd, vk_work *w, const dg_ir *ir,
                        const dg_node *n) {
  const dg_tensor_desc *ad = dg_ir_desc(ir, n->inputs[0]),
                       *bd = dg_ir_desc(ir, n->inputs[1]);
  bool q = n->op == DG_OP_QMATMUL;
  dg_matmul_shape s;
  int r;
  int64_t od[DG_MAX_RANK];
  dg_matmul_shape_get(ad, bd, &s, &r, od);
  gemm_push(w, s.M, s.N, s.K, s.K, 1, s.N, 1, 0, DG_ACTIVATION_NONE);
  vk_pc_gemm *pc = &w->push.gemm;
  pc->brank = s.batch_rank;
  for (int d = 0; d < s.batch_rank; d++) {
    pc->bdim[d] = s.batch_dims[d];
    pc->astr[d] = s.a_bstride[d] * s.M * s.K;
    pc->bstr[d] = s.b_bstride[d] * s.K * s.N;
  }
  /* Bound before gemm_kernel: a split-K post-pass takes its output
   * binding from them. */
  w->bind[0] = n->inputs[0];
  w->bind[1] = n->inputs[1];
  w->bind[3] = n->output;
  gemm_kernel(vd, w, q, ad->dtype == DG_DTYPE_F16, s.M, s.N, s.batch);
  if (q) {
    /* qmatmul has no activation: the clamp is the dtype's range. */
    dg_vk_q_push(&pc->q8, ir, n);
    return dg_vk_q_params(w, ir, n, s.N);
  }
  return true;
}
