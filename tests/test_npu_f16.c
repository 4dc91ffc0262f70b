/* The fp16 conv task: the weight layout, generator + simulator against a
 * float64 reference, a corrupted weight caught, the simulator's refusals,
 * and the generated stream compared field by field with the vendor's fp16
 * stream (the vendor-fp16-conv golden set, docs/npu.md "Golden data").
 * Called from test_npu.c. */
#include "test_npu_f16.h"
#include "test_npu_desc.h"

#include "runtime/session.h" /* dg_f16_to_f32, dg_f32_to_f16 */
#include "targets/npu/decode.h"
#include "targets/npu/gen.h"
#include "targets/npu/pack.h"
#include "targets/npu/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static npu_check_fn check;

static uint32_t rng = 7;
static float urand(void) { /* [-1, 1] */
  rng = rng * 1103515245u + 12345u;
  return (float)((rng >> 8) % 2001) / 1000.0f - 1.0f;
}

/* ---- the weight layout, by hand ---- */

static void test_weight_layout(void) {
  /* 17 kernels, 33 channels (40 as the CNA sees them), 2x1: kernel 16 is
   * alone in the second 16-kernel group; in it, channels 32..39 form the
   * short second channel group. Element (k 16, ch 32, y 1, x 0): 16 full
   * kernels before (16 x 2 x 40 x 2 = 2560 bytes), the first channel group
   * of this kernel group (32 x 2 x 1 x 2 = 128), then (y 1 x kn 1) x cn 8
   * elements = 16 bytes: offset 2704 of 2720. */
  enum { O = 17, C = 33, KH = 2, KW = 1 };
  uint16_t w[O * C * KH * KW] = {0};
  w[((16 * C + 32) * KH + 1) * KW + 0] = 0x3c00; /* 1.0 */
  size_t n = dg_npu_weight_bytes_f16(O, C, KH, KW);
  uint8_t *out = malloc(n);
  dg_npu_pack_weights_f16(w, O, C, KH, KW, out);
  int nonzero = 0, at = -1;
  for (size_t i = 0; i < n; i++)
    if (out[i]) {
      nonzero++;
      at = (int)i;
    }
  check(n == 2720 && nonzero == 1 && at == 2705 && out[2704] == 0 &&
            out[2705] == 0x3c,
        "fp16 packer: 16-kernel x 32-channel groups, short last groups, "
        "little-endian halves (hand-computed offset)");
  free(out);
}

/* ---- generator + simulator vs float64 ---- */

typedef struct f16_run {
  npu_conv_desc d;
  npu_conv_plan p;
  npu_stream s;
  uint16_t *x, *w; /* CHW, OIHW */
  uint8_t *in, *wt, *out;
} f16_run;

static void f16_run_free(f16_run *r) {
  free(r->x), free(r->w), free(r->in), free(r->wt), free(r->out);
}

static int sim(f16_run *r, char *err, size_t n) {
  static const uint32_t iova[NPU_BUF_COUNT] = {0x0, 0x100000, 0, 0x300000};
  dg_npu_stream_patch(&r->s, iova);
  npu_sim_buffer bufs[3] = {
      {"input", iova[NPU_BUF_INPUT], r->p.input_bytes, r->in, false},
      {"weights", iova[NPU_BUF_WEIGHTS], r->p.weight_bytes, r->wt, false},
      {"output", iova[NPU_BUF_OUTPUT], r->p.output_bytes, r->out, true}};
  npu_sim_job job = {.words = r->s.words,
                     .word_count = r->s.count,
                     .buffers = bufs,
                     .buffer_count = 3,
                     .round = NPU_ROUND_HALF_UP};
  return dg_npu_sim_run(&job, err, n);
}

/* Generates, packs random fp16 data and simulates one conv. */
static int f16_make(f16_run *r, int C, int O, int H, int W, int K, int S,
                    int same, char *err, size_t n) {
  memset(r, 0, sizeof *r);
  int OH = same ? (H + S - 1) / S : (H - K) / S + 1;
  int OW = same ? (W + S - 1) / S : (W - K) / S + 1;
  int th = (OH - 1) * S + K - H, tw = (OW - 1) * S + K - W;
  r->d = npu_desc_conv(C, H, W, O, OH, OW, K, S, th > 0 ? th / 2 : 0,
                       tw > 0 ? tw / 2 : 0);
  r->d.precision = NPU_PREC_FP16;
  if (!dg_npu_gen_conv(&r->d, &r->s, err, n) ||
      !dg_npu_conv_plan_make(&r->d, &r->p, err, n))
    return -1;
  size_t xn = (size_t)C * H * W, wn = (size_t)O * C * K * K;
  r->x = malloc(xn * 2);
  r->w = malloc(wn * 2);
  r->in = calloc(1, r->p.input_bytes);
  r->wt = malloc(r->p.weight_bytes);
  r->out = calloc(1, r->p.output_bytes);
  float ws = 1.0f / sqrtf((float)(C * K * K));
  for (size_t i = 0; i < xn; i++)
    r->x[i] = dg_f32_to_f16(2.0f * urand());
  for (size_t i = 0; i < wn; i++)
    r->w[i] = dg_f32_to_f16(ws * urand());
  dg_npu_pack_feature_f16(r->x, C, H, W, 0, r->in);
  dg_npu_pack_weights_f16(r->w, O, C, K, K, r->wt);
  return sim(r, err, n);
}

/* The spacing of binary16 values around |v| (2^-24 below the normals). */
static double ulp16(double v) {
  v = fabs(v);
  if (v < ldexp(1, -14))
    return ldexp(1, -24);
  int e;
  frexp(v, &e); /* v = m 2^e, m in [0.5, 1) */
  return ldexp(1, e - 11);
}

/* Compares the simulated output with float64 on the same fp16 values.
 * Per output: the fp32 sum of k products lies within k 2^-24 sum|x w| of
 * the exact one (recursive summation; each product is exact), and its
 * fp16 rounding adds at most half an fp16 ulp. Returns the worst error
 * as a fraction of that bound (> 1: out of bounds); *rel gets the worst
 * error relative to the largest |reference| (the contract's measure). */
static double f16_compare(const f16_run *r, double *rel) {
  const npu_conv_desc *d = &r->d;
  int C = d->in_c, K = d->k_h;
  size_t xn = (size_t)C * d->in_h * d->in_w, wn = (size_t)d->out_c * C * K * K;
  double *xd = malloc(xn * sizeof *xd), *wd = malloc(wn * sizeof *wd);
  for (size_t i = 0; i < xn; i++)
    xd[i] = dg_f16_to_f32(r->x[i]);
  for (size_t i = 0; i < wn; i++)
    wd[i] = dg_f16_to_f32(r->w[i]);
  double worst = 0, max_abs = 0, max_ref = 0;
  for (int o = 0; o < d->out_c; o++)
    for (int oy = 0; oy < d->out_h; oy++)
      for (int ox = 0; ox < d->out_w; ox++) {
        double ref = 0, mag = 0;
        for (int c = 0; c < C; c++)
          for (int ky = 0; ky < K; ky++)
            for (int kx = 0; kx < K; kx++) {
              int iy = oy * d->stride_y + ky - d->pad_top,
                  ix = ox * d->stride_x + kx - d->pad_left;
              if (iy < 0 || iy >= d->in_h || ix < 0 || ix >= d->in_w)
                continue;
              double p = xd[((size_t)c * d->in_h + iy) * d->in_w + ix] *
                         wd[(((size_t)o * C + c) * K + ky) * K + kx];
              ref += p;
              mag += fabs(p);
            }
        size_t at = (size_t)(o / 8) * d->out_h * d->out_w * 16 +
                    ((size_t)oy * d->out_w + ox) * 16 + (size_t)(o % 8) * 2;
        double got =
            dg_f16_to_f32((uint16_t)(r->out[at] | r->out[at + 1] << 8));
        double gam =
            (double)(npu_channels_f16(C) * K * K) * ldexp(1, -24) * mag;
        double bound = 0.5 * ulp16(fabs(ref) + gam) + gam;
        double err = fabs(got - ref);
        if (!(err <= bound * worst) && !(err == 0))
          worst = err / bound;
        if (isnan(got))
          worst = INFINITY;
        max_abs = err > max_abs ? err : max_abs;
        max_ref = fabs(ref) > max_ref ? fabs(ref) : max_ref;
      }
  free(xd);
  free(wd);
  *rel = max_ref > 0 ? max_abs / max_ref : max_abs;
  return worst;
}

static void test_f16_matrix(void) {
  static const int chans[][2] = {{1, 1},   {1, 16},  {3, 8},  {8, 16},
                                 {20, 17}, {33, 40}, {64, 64}};
  static const int sizes[][2] = {{5, 5}, {9, 12}, {16, 16}};
  int cases = 0, bad = 0, v = 0;
  double worst = 0, worst_rel = 0;
  for (int si = 0; si < 3; si++)
    for (int K = 1; K <= 5; K += 2)
      for (int S = 1; S <= 2; S++)
        for (int same = 0; same < 2; same++)
          for (int ci = 0; ci < 7; ci++, v++) {
            if (v % 3 && ci != 6 - si) /* a third, plus one channel pair each */
              continue;
            int C = chans[ci][0], O = chans[ci][1];
            int H = sizes[si][0], W = sizes[si][1];
            f16_run r;
            char err[256] = "";
            double rel = 0, e = -1;
            if (!f16_make(&r, C, O, H, W, K, S, same || K > H, err, sizeof err))
              e = f16_compare(&r, &rel);
            f16_run_free(&r);
            cases++;
            if (!(e >= 0 && e <= 1 && rel <= 1e-2)) {
              bad++;
              printf("# f16 C%d O%d %dx%d k%d s%d %s: %s (bound x%g, rel %g)\n",
                     C, O, H, W, K, S, same ? "SAME" : "VALID", err, e, rel);
            }
            worst = e > worst ? e : worst;
            worst_rel = rel > worst_rel ? rel : worst_rel;
          }
  printf("# f16 conv matrix: %d convs; worst error %.2f of the per-output "
         "bound (half an fp16 ulp + the fp32 summation bound), %.3g of the "
         "largest |reference|\n",
         cases, worst, worst_rel);
  check(bad == 0, "fp16 generator + simulator: conv matrix (1x1/3x3/5x5, "
                  "stride 1/2, SAME/VALID, 1..64 channels) within half an "
                  "fp16 ulp + the fp32 summation bound of float64, and "
                  "within the contract's 1e-2");
  /* The same check must catch a wrong weight: one sign flipped. */
  f16_run r;
  char err[256] = "";
  double rel = 0, e = -1;
  if (!f16_make(&r, 3, 8, 6, 6, 3, 1, 1, err, sizeof err)) {
    r.wt[1] ^= 0x80; /* kernel 0, channel 0, (0, 0): its sign */
    memset(r.out, 0, r.p.output_bytes);
    if (!sim(&r, err, sizeof err))
      e = f16_compare(&r, &rel);
  }
  f16_run_free(&r);
  printf("# one weight's sign flipped: error %.3g of the bound\n", e);
  check(e > 1, "fp16 matrix check catches one flipped weight sign");
}

/* ---- the simulator's refusals ---- */

static void test_f16_rejects(void) {
  f16_run r;
  char err[256] = "";
  int ok = !f16_make(&r, 8, 16, 6, 6, 3, 1, 1, err, sizeof err);
  check(ok, "fp16 simulator runs a generated 3x3 conv");
  npu_stream good = r.s;
  /* BRDMA on: a bias the fp16 model does not have. */
  for (int i = 0; ok && i < r.s.count; i++)
    if (npu_word_offset(r.s.words[i]) == 0x501c)
      r.s.words[i] = dg_npu_reg_word(NPU_DPU_RDMA_BRDMA_CFG, 1u << 1);
  check(ok && sim(&r, err, sizeof err) && strstr(err, "not modelled"),
        "fp16 simulator refuses a bias read (BRDMA) it does not model");
  printf("# %s\n", err);
  /* DPU out int8 while the CNA reads fp16: mixed precisions. */
  r.s = good;
  for (int i = 0; ok && i < r.s.count; i++)
    if (npu_word_offset(r.s.words[i]) == 0x4010)
      r.s.words[i] = dg_npu_reg_word(NPU_DPU_DATA_FORMAT, 2u << 26 | 2u);
  check(ok && sim(&r, err, sizeof err) && strstr(err, "mixed"),
        "fp16 simulator refuses mixed precisions");
  printf("# %s\n", err);
  f16_run_free(&r);
  npu_conv_desc big = {.in_c = 64,
                       .in_h = 64,
                       .in_w = 64,
                       .out_c = 16,
                       .out_h = 64,
                       .out_w = 64,
                       .k_h = 3,
                       .k_w = 3,
                       .stride_y = 1,
                       .stride_x = 1,
                       .pad_top = 1,
                       .pad_left = 1,
                       .precision = NPU_PREC_FP16};
  npu_stream s;
  check(!dg_npu_gen_conv(&big, &s, err, sizeof err) && strstr(err, "CBUF"),
        "fp16 generator declines a conv that does not fit the CBUF");
}

/* ---- the vendor's fp16 stream ---- */

static int read_vendor(const char *golden, uint64_t *words, int max) {
  char path[1200];
  snprintf(path, sizeof path, "%s/vendor-fp16-conv/regcmd.txt", golden);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  unsigned long long t, v, r;
  int count = 0;
  while (count < max && fscanf(f, "%llx %llx %llx", &t, &v, &r) == 3)
    words[count++] = npu_word((uint16_t)t, (uint32_t)v, (uint16_t)r);
  fclose(f);
  return count;
}

/* Every field where our stream and the vendor's differ for the same conv,
 * and why. field NULL: the register is written by one side only. */
typedef struct vendor_diff {
  const char *reg, *field, *why;
} vendor_diff;

static const vendor_diff expected[] = {
    {"CNA_S_POINTER", NULL,
     "on rocket the kernel writes the CNA/CORE "
     "ping-pong pointers by MMIO"},
    {"CORE_S_POINTER", NULL, "as CNA_S_POINTER"},
    {"CNA_FEATURE_DATA_ADDR", NULL,
     "the capture holds no address words (patched elsewhere)"},
    {"CNA_DCOMP_ADDR0", NULL, "an address, as above"},
    {"DPU_DST_BASE_ADDR", NULL, "an address, as above"},
    {"DPU_RDMA_*", NULL,
     "mainline hangs a DPU job whose DPU_RDMA is not programmed (MRDMA "
     "trap); the vendor enables DPU_RDMA without programming it"},
    {"CNA_CONV_CON1", "ARGB_IN",
     "the vendor reads its 1-channel input in the ARGB/non-aligned mode; we "
     "pad channels to the 8-channel fp16 atom (docs/npu.md)"},
    {"CNA_CONV_CON1", "GROUP_LINE_OFF", "ARGB mode, as above"},
    {"CNA_CONV_CON1", "NONALIGN_DMA", "ARGB mode, as above"},
    {"CNA_CONV_CON2", "FEATURE_GRAINS",
     "Mesa's 50 + stride + 1 kept; the vendor's 29 is not explained (RUS "
     "found the field insensitive)"},
    {"CNA_DATA_SIZE0", "DATAIN_WIDTH",
     "ARGB mode: 84 aligned up to 88 [inference]; we give the real width"},
    {"CNA_CBUF_CON0", "DATA_BANK",
     "ARGB packs 2 bytes per pixel, our atoms 16: 7 banks for 84 rows"},
    {"CNA_CBUF_CON0", "WEIGHT_BANK", "the rest of the 12 banks, as above"},
    {"CNA_CBUF_CON1", "DATA_ENTRIES",
     "ARGB counts 88 x 84; ours is ceil(W x 16 bytes / 64) = 21 per row"},
    {"CNA_DMA_CON1", "LINE_STRIDE",
     "ARGB line of 88 units vs our W x 4 (16-byte atoms)"},
    {"CNA_DMA_CON2", "SURF_STRIDE",
     "ARGB 88 x (84 - 1) vs our W x (H - 4) (Mesa/RUS)"},
    {"CNA_CVT_CON5", "PER_CHANNEL_CVT_EN",
     "the vendor sets 0xffff with the converter bypassed; we write 0 "
     "(Mesa, RUS)"},
    {"PC_REGISTER_AMOUNTS", "VENDOR_HI",
     "the vendor chains task lists in hardware; we kick one list per job"},
};

static const vendor_diff *explain(npu_reg r, const char *field) {
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
    const vendor_diff *e = &expected[i];
    bool reg_match = !strcmp(e->reg, dg_npu_regs[r].name) ||
                     (!strcmp(e->reg, "DPU_RDMA_*") &&
                      dg_npu_regs[r].block == NPU_BLOCK_DPU_RDMA);
    if (reg_match && ((!e->field && !field) ||
                      (e->field && field && !strcmp(e->field, field))))
      return e;
  }
  return NULL;
}

static void test_vendor_stream(const char *golden) {
  uint64_t vw[256];
  int vn = read_vendor(golden, vw, 256);
  if (vn < 0) {
    printf("skipped: %s/vendor-fp16-conv/regcmd.txt not found\n", golden);
    return;
  }
  /* The vendor's conv, read off its registers: 1 input channel
   * (DATAIN_CHANNEL_REAL 0) of 84 x 84 (DMA_WIDTH/HEIGHT; DATAIN_WIDTH 88
   * is its ARGB alignment), a 1x1 kernel (WEIGHT_SIZE2), one kernel of 16
   * bytes (8 channels x 2), stride 1 (CONV_CON3), no padding (PAD_CON0),
   * 84 x 84 out (DATAOUT sizes), one real output channel (ORIG_CHANNEL 0)
   * in a 16-channel cube (DATAOUT_CHANNEL 15), fp16 everywhere. */
  npu_conv_desc d = {.in_c = 1,
                     .in_h = 84,
                     .in_w = 84,
                     .out_c = 1,
                     .out_h = 84,
                     .out_w = 84,
                     .k_h = 1,
                     .k_w = 1,
                     .stride_y = 1,
                     .stride_x = 1,
                     .precision = NPU_PREC_FP16};
  npu_stream s;
  char err[256] = "";
  npu_regfile *ours = malloc(sizeof *ours), *vend = malloc(sizeof *vend);
  int ok = ours && vend && dg_npu_gen_conv(&d, &s, err, sizeof err) &&
           !dg_npu_decode(s.words, s.count, ours, err, sizeof err) &&
           !dg_npu_decode(vw, vn, vend, err, sizeof err);
  check(ok, "vendor cross-check: our fp16 stream for the vendor's shape and "
            "the vendor's stream both decode");
  if (!ok) {
    printf("# %s\n", err);
    free(ours), free(vend);
    return;
  }
  int compared = 0, equal = 0, unexplained = 0, used[64] = {0};
  for (int r = 0; r < NPU_REG_COUNT; r++) {
    if (!ours->written[r] && !vend->written[r])
      continue;
    const vendor_diff *e;
    if (ours->written[r] != vend->written[r]) {
      /* Written by one side only: one line per documented entry below. */
      e = explain((npu_reg)r, NULL);
      if (!e)
        printf("# vendor diff: %s written by %s only: UNEXPLAINED\n",
               dg_npu_regs[r].name, ours->written[r] ? "us" : "the vendor");
      unexplained += !e;
      if (e)
        used[e - expected] = ours->written[r] ? 1 : 2;
      continue;
    }
    for (int f = 0; f < NPU_FIELD_COUNT; f++) {
      if (dg_npu_fields[f].reg != (npu_reg)r)
        continue;
      uint32_t a = npu_rf(ours, (npu_field)f), b = npu_rf(vend, (npu_field)f);
      compared++;
      if (a == b) {
        equal++;
        continue;
      }
      e = explain((npu_reg)r, dg_npu_fields[f].name);
      printf("# vendor diff: %s.%s ours %u vendor %u: %s\n",
             dg_npu_regs[r].name, dg_npu_fields[f].name, a, b,
             e ? e->why : "UNEXPLAINED");
      unexplained += !e;
      if (e)
        used[e - expected] = 1;
    }
  }
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
    if (used[i] && !expected[i].field)
      printf("# vendor diff: %s written by %s only: %s\n", expected[i].reg,
             used[i] == 1 ? "us" : "the vendor", expected[i].why);
  int stale = 0;
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
    if (!used[i]) {
      printf("# documented difference no longer seen: %s.%s\n", expected[i].reg,
             expected[i].field ? expected[i].field : "*");
      stale++;
    }
  printf("# vendor cross-check: %d fields of the registers both write, %d "
         "equal; op-enable ours 0x%02x vendor 0x%02x (the vendor enables "
         "every block, PPU included; we enable what runs)\n",
         compared, equal, ours->op_en, vend->op_en);
  check(unexplained == 0 && stale == 0,
        "vendor cross-check: every field that differs from the vendor's fp16 "
        "stream is one of the documented differences, and each documented "
        "one still differs");
  check(npu_rf(ours, NPU_CNA_CONV_CON1__IN_PRECISION) == 2 &&
            npu_rf(ours, NPU_CORE_MISC_CFG__PROC_PRECISION) == 2 &&
            ours->value[NPU_DPU_DATA_FORMAT] ==
                vend->value[NPU_DPU_DATA_FORMAT] &&
            ours->value[NPU_DPU_OUT_CVT_SCALE] ==
                vend->value[NPU_DPU_OUT_CVT_SCALE] &&
            ours->value[NPU_CORE_MISC_CFG] == vend->value[NPU_CORE_MISC_CFG] &&
            ours->value[NPU_DPU_SURFACE_ADD] ==
                vend->value[NPU_DPU_SURFACE_ADD] &&
            ours->value[NPU_CNA_WEIGHT_SIZE0] ==
                vend->value[NPU_CNA_WEIGHT_SIZE0],
        "vendor cross-check: precisions, DPU fp16 output (DATA_FORMAT, "
        "OUT_CVT, SURF_ADD), CORE_MISC_CFG and weight bytes equal the "
        "vendor's");
  free(ours), free(vend);
}

void npu_f16_tests(npu_check_fn fn, const char *golden_dir) {
  check = fn;
  test_weight_layout();
  test_f16_matrix();
  test_f16_rejects();
  test_vendor_stream(golden_dir);
}
