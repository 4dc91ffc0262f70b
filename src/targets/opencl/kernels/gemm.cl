/* f32 GEMM (f16 storage too): C = act(A * B + bias), tiled 64 x 64 per
 * work-group of 16 x 16, each work-item holding a 4 x 4 block of C in
 * registers, K consumed 16 at a time through local memory. The same core
 * serves fully_connected, matmul (batch in dimension 2, per-batch offsets
 * from offs[]) and convolution as an implicit GEMM (mode 1: the B tile is
 * gathered straight from the NCHW input, padding read as zero, so no
 * im2col buffer exists). Edge tiles are bounds-checked on load and store,
 * so any M, N, K works with the one compiled variant. */
#pragma OPENCL FP_CONTRACT ON

#define TS 64
#define TK 16
#define RB 4

/* B(k, n) of a convolution: k = (c, kh, kw) within group z, n = (image,
 * oh, ow). */
float conv_b_f(const global void *x, constant int *g, int z, int k, int n) {
  int khw = g[G_KH] * g[G_KW], ohw = g[G_OH] * g[G_OW];
  int c = k / khw, r = k - c * khw;
  int kh = r / g[G_KW], kw = r - kh * g[G_KW];
  int img = n / ohw, p = n - img * ohw;
  int oh = p / g[G_OW], ow = p - oh * g[G_OW];
  int ih = oh * g[G_SH] - g[G_PT] + kh * g[G_DH];
  int iw = ow * g[G_SW] - g[G_PL] + kw * g[G_DW];
  if (ih < 0 || ih >= g[G_H] || iw < 0 || iw >= g[G_W])
    return 0.0f;
  int ci = z * g[G_CG] + c;
  return ld_f(x, ((img * g[G_C] + ci) * g[G_H] + ih) * g[G_W] + iw, g[G_HIO]);
}

/* unary_end.cl's: the functions of src/ops/unary.def a conv may fuse. */
float unary_post_fn(int fn, float x, float a, float b);

/* A conv's fused unary function (G_POST, ops/epilogue.h's
 * dg_conv_post_unary; 0: none) on its clamped output. */
float conv_post(constant int *g, float v) {
  return g[G_POST] ? unary_post_fn(g[G_POST], v, as_float(g[G_POST_A]),
                                   as_float(g[G_POST_B]))
                   : v;
}

/* Output (m, n) of matrix z with the sum v: bias, a conv's residual (res,
 * y's shape), activation, a conv's fused function, the store (a conv
 * row's channel and NCHW place in mode 1). */
void gemm_store(const global void *bias, global void *c, constant int *g,
                const global int *offs, int z, int m, int n, float v,
                const global void *res) {
  const int hio = g[G_HIO], mode = g[G_MODE], bmode = g[G_BIAS];
  int oc = mode ? z * g[G_OG] + m : m; /* channel of a conv row */
  if (bmode == 1)
    v += ld_f(bias, oc, hio);
  else if (bmode == 2)
    v += ld_f(bias, n, hio);
  int ci;
  if (mode) {
    int ohw = g[G_OH] * g[G_OW], img = n / ohw;
    ci = (img * g[G_O] + oc) * ohw + (n - img * ohw);
  } else {
    ci = offs[3 * z + 2] + m * g[G_SCM] + n * g[G_SCN];
  }
  if (g[G_RES])
    v += ld_f(res, ci, hio);
  const float lo = as_float(g[G_LO]), hi = as_float(g[G_HI]);
  v = v < lo ? lo : v;
  v = v > hi ? hi : v;
  st_f(c, ci, conv_post(g, v), hio);
}

kernel __attribute__((reqd_work_group_size(16, 16, 1))) void
gemm_f32(const global void *a, const global void *b,
         const global void *bias, global void *c, constant int *g,
         const global int *offs, global float *part, const global void *res) {
  local float As[TK][TS + 1];
  local float Bs[TK][TS + 1];
  const int M = g[G_M], N = g[G_N], K = g[G_K], hio = g[G_HIO];
  const int mode = g[G_MODE];
  const int sam = g[G_SAM], sak = g[G_SAK], sbk = g[G_SBK], sbn = g[G_SBN];
  const int tx = get_local_id(0), ty = get_local_id(1), lid = ty * 16 + tx;
  const int n0 = get_group_id(0) * TS, m0 = get_group_id(1) * TS;
  /* Split over K (G_KSPLIT > 1): dimension 2 is matrix x slice, each
   * slice whole TK steps of K. */
  const int ks = g[G_KSPLIT] > 1 ? g[G_KSPLIT] : 1;
  const int slice = get_global_id(2) % ks, z = get_global_id(2) / ks;
  const int kstep = ((K + ks - 1) / ks + TK - 1) / TK * TK;
  const int kb = slice * kstep, ke = min(K, kb + kstep);
  const int aoff = offs[3 * z], boff = offs[3 * z + 1];
  float acc[RB][RB];
  for (int i = 0; i < RB; i++)
    for (int j = 0; j < RB; j++)
      acc[i][j] = 0.0f;
  for (int k0 = kb; k0 < ke; k0 += TK) {
    /* Consecutive work-items read consecutive addresses of whichever
     * operand axis is contiguous. */
    for (int e = lid; e < TS * TK; e += 256) {
      int mm, kk;
      if (sak == 1) {
        mm = e / TK;
        kk = e - mm * TK;
      } else {
        kk = e / TS;
        mm = e - kk * TS;
      }
      int m = m0 + mm, k = k0 + kk;
      As[kk][mm] = (m < M && k < K) ? ld_f(a, aoff + m * sam + k * sak, hio)
                                    : 0.0f;
    }
    for (int e = lid; e < TS * TK; e += 256) {
      int nn, kk;
      if (sbk == 1 && mode == 0) {
        nn = e / TK;
        kk = e - nn * TK;
      } else {
        kk = e / TS;
        nn = e - kk * TS;
      }
      int n = n0 + nn, k = k0 + kk;
      float v = 0.0f;
      if (n < N && k < K)
        v = mode ? conv_b_f(b, g, z, k, n)
                 : ld_f(b, boff + k * sbk + n * sbn, hio);
      Bs[kk][nn] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < TK; kk++) {
      float av[RB], bv[RB];
      for (int i = 0; i < RB; i++)
        av[i] = As[kk][ty + 16 * i];
      for (int j = 0; j < RB; j++)
        bv[j] = Bs[kk][tx + 16 * j];
      for (int i = 0; i < RB; i++)
        for (int j = 0; j < RB; j++)
          acc[i][j] += av[i] * bv[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int i = 0; i < RB; i++) {
    int m = m0 + ty + 16 * i;
    if (m >= M)
      continue;
    for (int j = 0; j < RB; j++) {
      int n = n0 + tx + 16 * j;
      if (n >= N)
        continue;
      if (ks > 1) /* partials [slice][z][m][n]: gemm_splitk_f32 finishes */
        part[((slice * (int)(get_global_size(2) / ks) + z) * M + m) * N + n] =
            acc[i][j];
      else
        gemm_store(bias, c, g, offs, z, m, n, acc[i][j], res);
    }
  }
}

/* The second pass of a split-K gemm_f32: an item per output sums the
 * slices' partials in slice order (so the result does not depend on
 * scheduling) and stores it as gemm_f32 would. Dimension 0: outputs,
 * 1: matrices. */
kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
gemm_splitk_f32(const global float *part, const global void *bias,
                global void *c, constant int *g, const global int *offs,
                const global void *res) {
  const int M = g[G_M], N = g[G_N], i = get_global_id(0), z = get_global_id(1);
  if (i >= M * N)
    return;
  const int Z = get_global_size(1), ks = g[G_KSPLIT];
  float v = 0.0f;
  for (int s = 0; s < ks; s++)
    v += part[((s * Z + z) * M) * N + i];
  gemm_store(bias, c, g, offs, z, i / N, i % N, v, res);
}

/* Direct convolution, one output per work-item: for depthwise and other
 * convolutions with few output channels per group, where a 64-row GEMM
 * tile would be mostly empty. */
kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
conv_direct_f32(const global void *x, const global void *w,
                const global void *bias, global void *y, constant int *g,
                const global void *res) {
  const int ohw = g[G_OH] * g[G_OW];
  const int total = g[G_NIMG] * g[G_O] * ohw;
  const int i = get_global_id(0);
  if (i >= total)
    return;
  const int hio = g[G_HIO];
  int p = i % ohw, oc = (i / ohw) % g[G_O], img = i / (ohw * g[G_O]);
  int oh = p / g[G_OW], ow = p - oh * g[G_OW];
  int grp = oc / g[G_OG], CG = g[G_CG], KH = g[G_KH], KW = g[G_KW];
  float s = 0.0f;
  for (int c = 0; c < CG; c++) {
    int xc = (img * g[G_C] + grp * CG + c) * g[G_H];
    for (int kh = 0; kh < KH; kh++) {
      int ih = oh * g[G_SH] - g[G_PT] + kh * g[G_DH];
      if (ih < 0 || ih >= g[G_H])
        continue;
      for (int kw = 0; kw < KW; kw++) {
        int iw = ow * g[G_SW] - g[G_PL] + kw * g[G_DW];
        if (iw < 0 || iw >= g[G_W])
          continue;
        s += ld_f(x, (xc + ih) * g[G_W] + iw, hio) *
             ld_f(w, ((oc * CG + c) * KH + kh) * KW + kw, hio);
      }
    }
  }
  if (g[G_BIAS])
    s += ld_f(bias, oc, hio);
  if (g[G_RES])
    s += ld_f(res, i, hio);
  float lo = as_float(g[G_LO]), hi = as_float(g[G_HI]);
  s = s < lo ? lo : s;
  s = s > hi ? hi : s;
  st_f(y, i, conv_post(g, s), hio);
}

/* One C element per work-item, no local memory: for small M (batch-1
 * fully_connected, few output channels) where a 64-row tile would be
 * mostly empty, and for CPU-type devices, which vectorise across
 * work-items and gain nothing from local-memory tiles and barriers. Same
 * geometry and modes as gemm_f32; dimension 1 is the batch / group. */
kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
gemm_small_f32(const global void *a, const global void *b,
               const global void *bias, global void *c, constant int *g,
               const global int *offs, const global void *res) {
  const int M = g[G_M], N = g[G_N], K = g[G_K], hio = g[G_HIO];
  const int i = get_global_id(0), z = get_global_id(1);
  if (i >= M * N)
    return;
  const int m = i / N, n = i - m * N, mode = g[G_MODE];
  const int sam = g[G_SAM], sak = g[G_SAK], sbk = g[G_SBK], sbn = g[G_SBN];
  const int aoff = offs[3 * z] + m * sam, boff = offs[3 * z + 1] + n * sbn;
  float v = 0.0f;
  if (mode) {
    for (int k = 0; k < K; k++)
      v += ld_f(a, aoff + k * sak, hio) * conv_b_f(b, g, z, k, n);
  } else {
    for (int k = 0; k < K; k++)
      v += ld_f(a, aoff + k * sak, hio) * ld_f(b, boff + k * sbk, hio);
  }
  gemm_store(bias, c, g, offs, z, m, n, v, res);
}

/* One C element per work-group of 64, its items striding over K and
 * adding up in local memory: matrix-vector shapes (batch-1
 * fully_connected) on GPUs, where gemm_small_f32's item per output leaves
 * most of the device idle and reads K-strided. Plain mode only (no conv
 * gather); the geometry and arguments of gemm_small_f32, dimension 0 the
 * outputs (64 items each), 1 the batch. */
kernel __attribute__((reqd_work_group_size(64, 1, 1))) void
gemv_f32(const global void *a, const global void *b, const global void *bias,
         global void *c, constant int *g, const global int *offs,
         const global void *res) {
  local float red[64];
  const int M = g[G_M], N = g[G_N], K = g[G_K], hio = g[G_HIO];
  const int i = get_group_id(0), z = get_global_id(1), l = get_local_id(0);
  const int m = i / N, n = i - m * N;
  const int sak = g[G_SAK], sbk = g[G_SBK];
  const int aoff = offs[3 * z] + m * g[G_SAM];
  const int boff = offs[3 * z + 1] + n * g[G_SBN];
  float v = 0.0f;
  if (i < M * N)
    for (int k = l; k < K; k += 64)
      v += ld_f(a, aoff + k * sak, hio) * ld_f(b, boff + k * sbk, hio);
  red[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = 32; h > 0; h >>= 1) {
    if (l < h)
      red[l] += red[l + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l != 0 || i >= M * N)
    return;
  gemm_store(bias, c, g, offs, z, m, n, red[0], res);
}

/* ---- Large-tile f32 GEMM for GPUs --------------------------------------
 * The same C = act(A * B + bias) and the same geometry, modes and batch
 * offsets as gemm_f32, tiled TM x TN per work-group with each work-item
 * holding an 8 x 8 block of C in registers: (TM/8) x (TN/8) work-items,
 * one-dimensional. K goes 8 at a time through two local-memory buffers:
 * while the work-group multiplies one, each work-item holds the next
 * tile's global values in registers and stores them into the other, so
 * one barrier per K step suffices. Global loads are float4 where the
 * operand's contiguous axis, offsets and strides allow it (scalar and
 * bounds-checked at edges and for f16 storage). In conv mode the B tile is
 * gathered from the NCHW input through a host-made table of per-k input
 * offsets (ktab: c, kh, kw folded into one offset plus the kh and kw
 * displacements), each work-item keeping one output column, so the inner
 * gather is an add and two range checks. A work-item's C block is rows
 * ty*4 + {0..3} and TM/2 + ty*4 + {0..3}, columns likewise, so its local
 * reads are float4s that a warp reads without bank conflicts; A and B
 * rows in local memory are padded by 4 floats so the transposing stores
 * of k-contiguous operands do not collide either. */
#define BK 8
#define BPAD 4
#ifdef DG_GEMM_INLINE
#define GEMM_FN inline __attribute__((always_inline))
#else
#define GEMM_FN
#endif

/* Four consecutive elements of an operand X(mn, k) = p[off + mn*smn +
 * k*sk], along k (kc) or along mn, zero outside MN x K. */
GEMM_FN float4 ld4_op(const global void *p, int off, int smn, int sk, int mn,
                     int k, int MN, int K, int hio, int kc, int vec) {
  int last_mn = kc ? mn : mn + 3, last_k = kc ? k + 3 : k;
  int base = off + mn * smn + k * sk;
  if (vec && last_mn < MN && last_k < K)
    return *(const global float4 *)((const global float *)p + base);
  float v[4];
  for (int i = 0; i < 4; i++) {
    int m = kc ? mn : mn + i, kk = kc ? k + i : k;
    v[i] = (m < MN && kk < K) ? ld_f(p, off + m * smn + kk * sk, hio) : 0.0f;
  }
  return (float4)(v[0], v[1], v[2], v[3]);
}

/* Where float4 slot e of a BK x T operand tile lies: along k (kc: 4
 * consecutive k of row mn) or along mn (4 consecutive mn of row k). The
 * loads and the local stores of a K step agree through this. */
GEMM_FN void tile_slot(int e, int kc, int T, int *mn, int *k) {
  if (kc) {
    *mn = e >> 1;
    *k = (e & 1) * 4;
  } else {
    *k = e / (T / 4);
    *mn = (e - *k * (T / 4)) * 4;
  }
}

/* Stores what ld4_op loaded into a local tile of leading dimension ld. */
GEMM_FN void st4_tile(local float *t, int ld, int mn, int k, int kc,
                     float4 v) {
  if (kc) {
    t[k * ld + mn] = v.s0;
    t[(k + 1) * ld + mn] = v.s1;
    t[(k + 2) * ld + mn] = v.s2;
    t[(k + 3) * ld + mn] = v.s3;
  } else {
    *(local float4 *)(t + k * ld + mn) = v;
  }
}

GEMM_FN void gemm_big_body(const global void *a, const global void *b,
                          const global void *bias, global void *c,
                          constant int *g, const global int *offs,
                          const global int4 *ktab, const global void *res,
                          local float *As, local float *Bs, const int TM,
                          const int TN) {
  const int TX = TN / 8, NT = (TM / 8) * (TN / 8);
  const int LDA = TM + BPAD, LDB = TN + BPAD;
  const int M = g[G_M], N = g[G_N], K = g[G_K], hio = g[G_HIO];
  const int mode = g[G_MODE];
  const int sam = g[G_SAM], sak = g[G_SAK], sbk = g[G_SBK], sbn = g[G_SBN];
  const int lid = get_local_id(0), tx = lid % TX, ty = lid / TX;
  const int n0 = get_group_id(0) * TN, m0 = get_group_id(1) * TM;
  const int z = get_group_id(2);
  const int aoff = offs[3 * z], boff = offs[3 * z + 1];
  /* A: float4 slots per work-item, 128/TN of them (1 or 2). */
  const int akc = sak == 1;
  const int avec = !hio && (akc ? (sam & 3) == 0 : sam == 1 && (sak & 3) == 0)
                   && (aoff & 3) == 0;
  const int bkc = sbk == 1;
  const int bvec = !hio && (bkc ? (sbn & 3) == 0 : sbn == 1 && (sbk & 3) == 0)
                   && (boff & 3) == 0;
  const int ASL = 128 / TN, BSL = 128 / TM; /* float4 slots per item */
  /* Conv mode: this work-item's B column and its input coordinates. */
  const int BCR = NT / TN;                  /* B rows loaded per pass */
  const int cn = lid % TN, ck = lid / TN;
  int cbase = 0, cih = 0, ciw = 0, cok = 0, H = 0, W = 0;
  if (mode) {
    int ohw = g[G_OH] * g[G_OW], n = n0 + cn;
    H = g[G_H];
    W = g[G_W];
    cok = n < N;
    int img = n / ohw, q = n - img * ohw;
    int oh = q / g[G_OW], ow = q - oh * g[G_OW];
    cih = oh * g[G_SH] - g[G_PT];
    ciw = ow * g[G_SW] - g[G_PL];
    cbase = ((img * g[G_C] + z * g[G_CG]) * H + cih) * W + ciw;
  }
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; i++)
#pragma unroll
    for (int j = 0; j < 8; j++)
      acc[i][j] = 0.0f;
  float4 pa[2], pb[2];
  float pc[8];
  const int nt = (K + BK - 1) / BK;
  for (int t = -1; t < nt; t++) {
    /* Fetch tile t + 1 into registers. */
    const int k0 = (t + 1) * BK, more = t + 1 < nt;
    if (more) {
#pragma unroll
      for (int s = 0; s < 2; s++) {
        if (s < ASL) {
          int mn, k;
          tile_slot(lid + s * NT, akc, TM, &mn, &k);
          pa[s] = ld4_op(a, aoff, sam, sak, m0 + mn, k0 + k, M, K, hio, akc,
                         avec);
        }
      }
      if (mode) {
#pragma unroll
        for (int s = 0; s < 8; s++) {
          if (s < BK / BCR) {
            int k = k0 + ck + s * BCR;
            float v = 0.0f;
            if (cok && k < K) {
              int4 o = ktab[k];
              int ih = cih + o.y, iw = ciw + o.z;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                v = ld_f(b, cbase + o.x, hio);
            }
            pc[s] = v;
          }
        }
      } else {
#pragma unroll
        for (int s = 0; s < 2; s++) {
          if (s < BSL) {
            int mn, k;
            tile_slot(lid + s * NT, bkc, TN, &mn, &k);
            pb[s] = ld4_op(b, boff, sbn, sbk, n0 + mn, k0 + k, N, K, hio, bkc,
                           bvec);
          }
        }
      }
    }
    /* Multiply tile t from local memory. */
    if (t >= 0) {
      const local float *at = As + (t & 1) * BK * LDA + ty * 4;
      const local float *bt = Bs + (t & 1) * BK * LDB + tx * 4;
#pragma unroll
      for (int kk = 0; kk < BK; kk++) {
        float4 a0 = *(const local float4 *)(at + kk * LDA);
        float4 a1 = *(const local float4 *)(at + kk * LDA + TM / 2);
        float4 b0 = *(const local float4 *)(bt + kk * LDB);
        float4 b1 = *(const local float4 *)(bt + kk * LDB + TN / 2);
        float av[8] = {a0.s0, a0.s1, a0.s2, a0.s3, a1.s0, a1.s1, a1.s2, a1.s3};
        float bv[8] = {b0.s0, b0.s1, b0.s2, b0.s3, b1.s0, b1.s1, b1.s2, b1.s3};
#pragma unroll
        for (int i = 0; i < 8; i++)
#pragma unroll
          for (int j = 0; j < 8; j++)
            acc[i][j] += av[i] * bv[j];
      }
    }
    /* Store tile t + 1 into the other buffer. */
    if (more) {
      local float *an = As + ((t + 1) & 1) * BK * LDA;
      local float *bn = Bs + ((t + 1) & 1) * BK * LDB;
#pragma unroll
      for (int s = 0; s < 2; s++) {
        if (s < ASL) {
          int mn, k;
          tile_slot(lid + s * NT, akc, TM, &mn, &k);
          st4_tile(an, LDA, mn, k, akc, pa[s]);
        }
      }
      if (mode) {
#pragma unroll
        for (int s = 0; s < 8; s++)
          if (s < BK / BCR)
            bn[(ck + s * BCR) * LDB + cn] = pc[s];
      } else {
#pragma unroll
        for (int s = 0; s < 2; s++) {
          if (s < BSL) {
            int mn, k;
            tile_slot(lid + s * NT, bkc, TN, &mn, &k);
            st4_tile(bn, LDB, mn, k, bkc, pb[s]);
          }
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  /* Epilogue: bias, a conv's residual, clamp, its fused function, store
   * (float4 where contiguous and aligned). */
  const float lo = as_float(g[G_LO]), hi = as_float(g[G_HI]);
  const int bmode = g[G_BIAS];
  const int ohw = mode ? g[G_OH] * g[G_OW] : 1;
  const int cpl = mode ? 0 : offs[3 * z + 2];
  const int scm = g[G_SCM], scn = g[G_SCN];
  int col[8];
#pragma unroll
  for (int j = 0; j < 8; j++) {
    int n = n0 + tx * 4 + (j & 3) + (j >> 2) * (TN / 2);
    if (mode) {
      int img = n / ohw;
      col[j] = img * g[G_O] * ohw + (n - img * ohw);
    } else {
      col[j] = cpl + n * scn;
    }
  }
  const int cvec = !hio && (mode ? (ohw & 3) == 0
                                 : scn == 1 && (scm & 3) == 0 &&
                                       (cpl & 3) == 0);
#pragma unroll
  for (int i = 0; i < 8; i++) {
    int m = m0 + ty * 4 + (i & 3) + (i >> 2) * (TM / 2);
    if (m >= M)
      continue;
    int oc = mode ? z * g[G_OG] + m : m;
    int rb = mode ? oc * ohw : m * scm;
    float rbias = bmode == 1 ? ld_f(bias, oc, hio) : 0.0f;
    const int hres = g[G_RES];
#pragma unroll
    for (int h = 0; h < 2; h++) {
      int nb = n0 + tx * 4 + h * (TN / 2);
      float v[4];
#pragma unroll
      for (int jj = 0; jj < 4; jj++) {
        float x = acc[i][h * 4 + jj];
        if (bmode == 1)
          x += rbias;
        else if (bmode == 2 && nb + jj < N)
          x += ld_f(bias, nb + jj, hio);
        if (hres && nb + jj < N)
          x += ld_f(res, rb + col[h * 4 + jj], hio);
        x = x < lo ? lo : x;
        x = x > hi ? hi : x;
        v[jj] = conv_post(g, x);
      }
      if (cvec && nb + 3 < N) {
        *(global float4 *)((global float *)c + rb + col[h * 4]) =
            (float4)(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int jj = 0; jj < 4; jj++)
          if (nb + jj < N)
            st_f(c, rb + col[h * 4 + jj], v[jj], hio);
      }
    }
  }
}

#define GEMM_BIG(name, TM, TN)                                               \
  kernel __attribute__((reqd_work_group_size((TM / 8) * (TN / 8), 1, 1)))   \
  void name(const global void *a, const global void *b,                      \
            const global void *bias, global void *c, constant int *g,        \
            const global int *offs, const global int4 *ktab,                 \
            const global void *res) {                                        \
    local float As[2 * BK * (TM + BPAD)] __attribute__((aligned(16)));      \
    local float Bs[2 * BK * (TN + BPAD)] __attribute__((aligned(16)));      \
    gemm_big_body(a, b, bias, c, g, offs, ktab, res, As, Bs, TM, TN);        \
  }

GEMM_BIG(gemm_f32_128x128, 128, 128)
GEMM_BIG(gemm_f32_64x128, 64, 128)
GEMM_BIG(gemm_f32_64x64, 64, 64)
