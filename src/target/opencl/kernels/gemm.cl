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

kernel __attribute__((reqd_work_group_size(16, 16, 1))) void
gemm_f32(const global void *a, const global void *b,
         const global void *bias, global void *c, constant int *g,
         const global int *offs) {
  local float As[TK][TS + 1];
  local float Bs[TK][TS + 1];
  const int M = g[G_M], N = g[G_N], K = g[G_K], hio = g[G_HIO];
  const int mode = g[G_MODE];
  const int sam = g[G_SAM], sak = g[G_SAK], sbk = g[G_SBK], sbn = g[G_SBN];
  const int tx = get_local_id(0), ty = get_local_id(1), lid = ty * 16 + tx;
  const int n0 = get_group_id(0) * TS, m0 = get_group_id(1) * TS;
  const int z = get_global_id(2);
  const int aoff = offs[3 * z], boff = offs[3 * z + 1];
  float acc[RB][RB];
  for (int i = 0; i < RB; i++)
    for (int j = 0; j < RB; j++)
      acc[i][j] = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TK) {
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
  const float lo = as_float(g[G_LO]), hi = as_float(g[G_HI]);
  const int bmode = g[G_BIAS];
  for (int i = 0; i < RB; i++) {
    int m = m0 + ty + 16 * i;
    if (m >= M)
      continue;
    for (int j = 0; j < RB; j++) {
      int n = n0 + tx + 16 * j;
      if (n >= N)
        continue;
      float v = acc[i][j];
      int oc = mode ? z * g[G_OG] + m : m; /* channel of a conv row */
      if (bmode == 1)
        v += ld_f(bias, oc, hio);
      else if (bmode == 2)
        v += ld_f(bias, n, hio);
      v = v < lo ? lo : v;
      v = v > hi ? hi : v;
      int ci;
      if (mode) {
        int ohw = g[G_OH] * g[G_OW], img = n / ohw;
        ci = (img * g[G_O] + oc) * ohw + (n - img * ohw);
      } else {
        ci = offs[3 * z + 2] + m * g[G_SCM] + n * g[G_SCN];
      }
      st_f(c, ci, v, hio);
    }
  }
}

/* Direct convolution, one output per work-item: for depthwise and other
 * convolutions with few output channels per group, where a 64-row GEMM
 * tile would be mostly empty. */
kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
conv_direct_f32(const global void *x, const global void *w,
                const global void *bias, global void *y, constant int *g) {
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
  float lo = as_float(g[G_LO]), hi = as_float(g[G_HI]);
  s = s < lo ? lo : s;
  s = s > hi ? hi : s;
  st_f(y, i, s, hio);
}

/* One C element per work-item, no local memory: for small M (batch-1
 * fully_connected, few output channels) where a 64-row tile would be
 * mostly empty, and for CPU-type devices, which vectorise across
 * work-items and gain nothing from local-memory tiles and barriers. Same
 * geometry and modes as gemm_f32; dimension 1 is the batch / group. */
kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
gemm_small_f32(const global void *a, const global void *b,
               const global void *bias, global void *c, constant int *g,
               const global int *offs) {
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
  int oc = mode ? z * g[G_OG] + m : m;
  if (g[G_BIAS] == 1)
    v += ld_f(bias, oc, hio);
  else if (g[G_BIAS] == 2)
    v += ld_f(bias, n, hio);
  const float lo = as_float(g[G_LO]), hi = as_float(g[G_HI]);
  v = v < lo ? lo : v;
  v = v > hi ? hi : v;
  int ci;
  if (mode) {
    int ohw = g[G_OH] * g[G_OW], img = n / ohw;
    ci = (img * g[G_O] + oc) * ohw + (n - img * ohw);
  } else {
    ci = offs[3 * z + 2] + m * g[G_SCM] + n * g[G_SCN];
  }
  st_f(c, ci, v, hio);
}
