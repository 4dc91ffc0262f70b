/* Per-channel requantisation on the DPU's BS multiplier (dpu_requant.h,
 * docs/npu.md "Requantisation and rounding"): the plan's arithmetic over
 * random multipliers, the register words against the vendor's per-channel
 * program (as RUS reads it), generator + simulator against the float64
 * contract over spreads up to the limit (direct and depthwise, saturating
 * accumulators, both output rails), the sign-split shift, and the
 * simulator's refusals of inconsistent lists. Called from test_npu.c. */
#include "test_npu_bs.h"
#include "test_npu_desc.h"

#include "ops/requant.h"
#include "targets/npu/gen.h"
#include "targets/npu/pack.h"
#include "targets/npu/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static npu_check_fn check;

static unsigned rng = 12345;
static unsigned next(void) {
  rng = rng * 1103515245u + 12345u;
  return rng >> 8;
}
static int rnd(int lo, int hi) {
  return lo + (int)(next() % (unsigned)(hi - lo + 1));
}
static double urand(void) { return (double)(next() % 1000000) / 1e6; }

/* The gain the hardware applies for a plan's gain: SCALE x 2^-SHIFT. */
static double hw_gain(float gain) {
  uint32_t scale, shift;
  if (!dg_npu_requant_regs(gain, 0, &scale, &shift))
    return -1;
  return ldexp((double)scale, -(int)shift);
}

static void test_plan(void) {
  int bad = 0, cases = 0;
  double worst_rel = 0;
  for (int i = 0; i < 3000; i++) {
    /* Multipliers of 2^-30 .. 2^4, log-uniform. */
    float hi = (float)ldexp(1.0 + urand(), rnd(-30, 3));
    float gain;
    int s;
    cases++;
    if (!dg_npu_bs_plan(hi, &gain, &s)) {
      bad++;
      continue;
    }
    double g = hw_gain(gain);
    int cmax = dg_npu_bs_mul(hi, gain, s);
    /* The largest channel sits at the top of int16; a saturated v still
     * saturates the output; no smaller shift would do. */
    bool ok = cmax <= 32767 && cmax >= 32760 && ldexp(g, 31) >= 512.0 &&
              (s == 0 || ldexp(ldexp((double)hi, s - 1) / 32767, 31) < 512.0);
    for (int k = 0; ok && k < 8; k++) {
      float m = (float)(hi * (1.0 / 16.0 + urand() * (1.0 - 1.0 / 16.0)));
      if (!dg_npu_bs_spread_ok(m, hi))
        continue;
      int c = dg_npu_bs_mul(m, gain, s);
      double rel = fabs(c * g / ldexp(1.0, s) - m) / m;
      worst_rel = rel > worst_rel ? rel : worst_rel;
      ok = c >= 2047 && rel <= 0.5 / 2047 + ldexp(1.0, -14);
    }
    bad += !ok;
  }
  printf("# bs plan: %d multipliers 2^-30..2^4, worst relative gain error "
         "%.2e (bound %.2e)\n",
         cases, worst_rel, 0.5 / 2047 + ldexp(1.0, -14));
  check(bad == 0, "bs plan: C of the largest channel in 32760..32767, "
                  "2^31 x gain >= 512 with the smallest shift, every channel "
                  "within 1/(2C) + 2^-14 of its multiplier");
  check(dg_npu_bs_spread_ok(1.0f, 15.99f) &&
            !dg_npu_bs_spread_ok(1.0f, 16.0f) &&
            !dg_npu_bs_spread_ok(0.0f, 1.0f),
        "bs plan: one task spans multipliers within 32767 / 2048 (15.9995)");
}

/* The value of the (only) word writing register r, or -1. */
static long word_of(const npu_stream *s, npu_reg r) {
  long v = -1;
  for (int i = 0; i < s->count; i++)
    if (npu_word_offset(s->words[i]) == dg_npu_regs[r].offset &&
        npu_word_target(s->words[i]) != 0)
      v = (long)npu_word_value(s->words[i]);
  return v;
}

static npu_conv_desc small_desc(bool per_channel, int shift) {
  npu_conv_desc d = npu_desc_conv(16, 6, 6, 16, 6, 6, 3, 1, 1, 1);
  d.multiplier = 0.001f, d.per_channel = per_channel, d.bs_shift = shift;
  return d;
}

static void test_words(void) {
  npu_stream s, t;
  char err[256] = "";
  npu_conv_desc pc = small_desc(true, 13), pt = small_desc(false, 0);
  bool ok = dg_npu_gen_conv(&pc, &s, err, sizeof err) &&
            dg_npu_gen_conv(&pt, &t, err, sizeof err);
  /* The vendor's per-channel program (RUS, read off an .rknn and run on a
   * board): BS_CFG 0x20140, BS_MUL_CFG (s << 8) | 1, BRDMA_CFG 0xe (data
   * use 7), s in DATA_FORMAT[9:4]. Mesa's per-tensor program: 0x20150
   * (multiplier bypassed), 0, 0x2 (data use 1), 0. */
  ok = ok && word_of(&s, NPU_DPU_BS_CFG) == 0x20140 &&
       word_of(&s, NPU_DPU_BS_MUL_CFG) == (13 << 8 | 1) &&
       word_of(&s, NPU_DPU_RDMA_BRDMA_CFG) == 0xe &&
       word_of(&s, NPU_DPU_DATA_FORMAT) == 13 << 4 &&
       word_of(&t, NPU_DPU_BS_CFG) == 0x20150 &&
       word_of(&t, NPU_DPU_BS_MUL_CFG) == 0 &&
       word_of(&t, NPU_DPU_RDMA_BRDMA_CFG) == 0x2 &&
       word_of(&t, NPU_DPU_DATA_FORMAT) == 0 && s.count == t.count;
  check(ok, "generator: per-channel words as the vendor's program (BS_CFG "
            "0x20140, BS_MUL_CFG s<<8|1, BRDMA data use 7, s in "
            "DATA_FORMAT), per-tensor words as Mesa's");
  npu_conv_plan p;
  ok = dg_npu_conv_plan_make(&pc, &p, err, sizeof err) &&
       p.bias_bytes == 4 * NPU_BS_GROUP_BYTES; /* 32 channels the DPU makes */
  pc.truncate_bits = 1;
  ok = ok && !dg_npu_gen_conv(&pc, &s, err, sizeof err);
  check(ok, "generator: per-channel bias groups cover the 32 channels the "
            "DPU produces; truncation with per-channel requant is refused");
}

/* One conv with per-channel multipliers m[o] through generator +
 * simulator, against round(acc x m[o]) + zy in float64 (the contract).
 * Returns the largest difference in LSB, -1 on a failure (printed). */
static int bs_case(int C, int O, int H, int K, int S, bool dw, float spread,
                   float m_hi, int zy, long *exact, long *total) {
  int W = H, per = dw ? 1 : C, pad = K / 2;
  int OH = (H + 2 * pad - K) / S + 1, OW = OH;
  size_t xn = (size_t)C * H * W, wn = (size_t)O * per * K * K;
  int8_t *x = malloc(xn), *w = malloc(wn);
  int32_t *b = malloc((size_t)O * 4), *pb = malloc((size_t)O * 4);
  int16_t *mul = malloc((size_t)O * 2);
  float *m = malloc((size_t)O * sizeof *m);
  int32_t zx = rnd(-20, 20);
  for (size_t i = 0; i < xn; i++)
    x[i] = (int8_t)rnd(-128, 127);
  for (size_t i = 0; i < wn; i++)
    w[i] = (int8_t)rnd(-127, 127);
  float lo = m_hi;
  for (int o = 0; o < O; o++) {
    b[o] = rnd(-300000, 300000);
    /* The first channel at the top, one at the bottom of the spread. */
    double f = o == 0   ? 1.0
               : o == 1 ? 1.0 / spread
                        : 1.0 / (1 + urand() * (spread - 1));
    m[o] = (float)(m_hi * f);
    lo = m[o] < lo ? m[o] : lo;
  }
  npu_conv_desc d = npu_desc_conv(C, H, W, O, OH, OW, K, S, pad, pad);
  d.depthwise = dw, d.x_zp = zx, d.y_zp = zy, d.per_channel = true;
  npu_stream s;
  npu_conv_plan p;
  char err[256] = "";
  int worst = -1;
  uint8_t *in = NULL, *wt = NULL, *bs = NULL, *out = NULL;
  if (!dg_npu_bs_spread_ok(lo, m_hi) ||
      !dg_npu_bs_plan(m_hi, &d.multiplier, &d.bs_shift) ||
      !dg_npu_gen_conv(&d, &s, err, sizeof err) ||
      !dg_npu_conv_plan_make(&d, &p, err, sizeof err)) {
    printf("# bs case C%d O%d %dx%d k%d: %s\n", C, O, H, W, K,
           err[0] ? err : "no plan");
    goto done;
  }
  in = calloc(1, p.input_bytes), wt = malloc(p.weight_bytes);
  bs = malloc(p.bias_bytes), out = calloc(1, p.output_bytes);
  dg_npu_pack_feature_i8(x, C, H, W, (int8_t)zx, in);
  dg_npu_pack_weights_i8(w, O, C, K, K, dw, 0, wt);
  dg_npu_pack_bias(b, w, O, C, K, K, dw, 0, zx, 0, pb);
  for (int o = 0; o < O; o++)
    mul[o] = dg_npu_bs_mul(m[o], d.multiplier, d.bs_shift);
  dg_npu_pack_bs_groups(pb, mul, O, p.out_channels, bs);
  static const uint32_t iova[NPU_BUF_COUNT] = {0x0, 0x100000, 0x200000,
                                               0x300000};
  dg_npu_stream_patch(&s, iova);
  npu_sim_buffer bufs[4] = {{"input", 0x0, p.input_bytes, in, false},
                            {"weights", 0x100000, p.weight_bytes, wt, false},
                            {"bias", 0x200000, p.bias_bytes, bs, false},
                            {"output", 0x300000, p.output_bytes, out, true}};
  npu_sim_job job = {s.words,           s.count, bufs, 4, NPU_ROUND_HALF_EVEN,
                     NPU_POOL_AVG_RECIP};
  if (dg_npu_sim_run(&job, err, sizeof err)) {
    printf("# bs case sim: %s\n", err);
    goto done;
  }
  worst = 0;
  for (int o = 0; o < O; o++)
    for (int oy = 0; oy < OH; oy++)
      for (int ox = 0; ox < OW; ox++) {
        int64_t acc = npu_ref_acc(x, w, b[o], C, H, W, K, S, pad, pad, dw, zx,
                                  0, o, oy, ox);
        double v = nearbyint((double)acc * m[o]) + zy;
        int ref = v < -128 ? -128 : v > 127 ? 127 : (int)v;
        int got = (int8_t)out[(size_t)(o / 16) * OH * OW * 16 +
                              ((size_t)oy * OW + ox) * 16 + o % 16];
        int diff = abs(got - ref);
        worst = diff > worst ? diff : worst;
        *exact += diff == 0;
        (*total)++;
      }
done:
  free(x), free(w), free(b), free(pb), free(mul), free(m);
  free(in), free(wt), free(bs), free(out);
  return worst;
}

static void test_matrix(void) {
  /* (C, O, H, K, S, dw, spread, largest multiplier, zy): ordinary scales,
   * the full spread, large multipliers (shift 0, most outputs saturate),
   * tiny ones (large shifts), an output zero point at each rail. */
  static const struct {
    int C, O, H, K, S, dw;
    float spread, m_hi;
    int zy;
  } cases[] = {
      {16, 32, 8, 3, 1, 0, 3.0f, 2e-4f, 0},
      {40, 48, 9, 3, 2, 0, 15.9f, 1e-4f, -7},
      {3, 16, 12, 5, 1, 0, 15.9f, 3e-3f, 100},
      {64, 64, 6, 1, 1, 0, 8.0f, 0.5f, 0},
      {32, 33, 7, 3, 1, 0, 15.9f, 2e-7f, -128},
      {64, 64, 10, 3, 1, 1, 15.9f, 4e-3f, 127},
      {40, 40, 11, 3, 2, 1, 10.0f, 1e-2f, 5},
      {16, 16, 5, 5, 1, 1, 15.9f, 2.0f, -3},
  };
  long exact = 0, total = 0;
  int bad = 0, worst = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int e = bs_case(cases[i].C, cases[i].O, cases[i].H, cases[i].K, cases[i].S,
                    cases[i].dw, cases[i].spread, cases[i].m_hi, cases[i].zy,
                    &exact, &total);
    bad += e < 0 || e > 1;
    worst = e > worst ? e : worst;
  }
  printf("# bs matrix: %zu convs, %ld/%ld outputs equal to the float64 "
         "contract (%.2f%%), max diff %d LSB\n",
         sizeof cases / sizeof cases[0], exact, total,
         total ? 100.0 * exact / total : 0.0, worst);
  check(bad == 0, "generator + simulator: per-channel multipliers (spreads "
                  "up to 15.9, multipliers 2e-7..2, direct and depthwise) "
                  "within 1 LSB of the float64 contract");
}

/* A per-channel list, its buffers (all channels C = 1 << 14, bias and
 * input 0 but for one negative and one positive accumulator) and a
 * simulator job; the tests patch it. */
typedef struct bs_job {
  npu_stream s;
  npu_conv_plan p;
  uint8_t *in, *wt, *bs, *out;
  npu_sim_buffer bufs[4];
  npu_sim_job job;
} bs_job;

static bool bs_job_make(bs_job *j, int shift) {
  npu_conv_desc d = small_desc(true, shift);
  d.multiplier = 1.0f; /* OUT_CVT ~ x1: y is v */
  d.k_h = d.k_w = 1, d.pad_top = d.pad_left = 0;
  char err[256];
  if (!dg_npu_gen_conv(&d, &j->s, err, sizeof err) ||
      !dg_npu_conv_plan_make(&d, &j->p, err, sizeof err))
    return false;
  j->in = calloc(1, j->p.input_bytes), j->wt = calloc(1, j->p.weight_bytes);
  j->bs = calloc(1, j->p.bias_bytes), j->out = calloc(1, j->p.output_bytes);
  int32_t bias[16] = {0};
  int16_t mul[16];
  bias[0] = -200, bias[1] = 200; /* channel 0 negative, 1 positive */
  for (int i = 0; i < 16; i++)
    mul[i] = 1 << 14;
  dg_npu_pack_bs_groups(bias, mul, 16, j->p.out_channels, j->bs);
  static const uint32_t iova[NPU_BUF_COUNT] = {0x0, 0x100000, 0x200000,
                                               0x300000};
  dg_npu_stream_patch(&j->s, iova);
  j->bufs[0] = (npu_sim_buffer){"input", 0x0, j->p.input_bytes, j->in, false};
  j->bufs[1] =
      (npu_sim_buffer){"weights", 0x100000, j->p.weight_bytes, j->wt, false};
  j->bufs[2] =
      (npu_sim_buffer){"bias", 0x200000, j->p.bias_bytes, j->bs, false};
  j->bufs[3] =
      (npu_sim_buffer){"output", 0x300000, j->p.output_bytes, j->out, true};
  j->job = (npu_sim_job){j->s.words, j->s.count,          j->bufs,
                         4,          NPU_ROUND_HALF_EVEN, NPU_POOL_AVG_RECIP};
  return true;
}

static void bs_job_free(bs_job *j) {
  free(j->in), free(j->wt), free(j->bs), free(j->out);
}

/* Sets register r's word in j's list to v. */
static void set_word(bs_job *j, npu_reg r, uint32_t v) {
  for (int i = 0; i < j->s.count; i++)
    if (npu_word_offset(j->s.words[i]) == dg_npu_regs[r].offset &&
        npu_word_target(j->s.words[i]) != 0)
      j->s.words[i] = npu_word(npu_word_target(j->s.words[i]), v,
                               npu_word_offset(j->s.words[i]));
}

static void test_sign_split_and_refusals(void) {
  bs_job j;
  char err[256] = "";
  if (!bs_job_make(&j, 14)) {
    check(0, "simulator: a per-channel list to patch is generated");
    return;
  }
  /* OUT_CVT multiplier 1.0: SCALE 2^14 + 1, SHIFT 14: y = v (+ tiny).
   * BS: (acc x 2^14) >> 14 = acc for both signs; with the negative
   * field 15, a negative product is halved (RUS: the fields split by sign). */
  int rc = dg_npu_sim_run(&j.job, err, sizeof err);
  int y0 = (int8_t)j.out[0], y1 = (int8_t)j.out[1];
  set_word(&j, NPU_DPU_DATA_FORMAT, 15u << 4);
  int rc2 = dg_npu_sim_run(&j.job, err, sizeof err);
  int z0 = (int8_t)j.out[0], z1 = (int8_t)j.out[1];
  check(!rc && !rc2 && y0 == -128 && y1 == 127 && z0 == -100 && z1 == 127,
        "simulator: the BS shift of a negative product is DATA_FORMAT's "
        "field, of a positive one BS_MUL_CFG's (bias -200 -> -100 at 15)");
  bs_job_free(&j);
  /* Refusals, each on a fresh list. */
  static const struct {
    npu_reg r;
    uint32_t v;
    const char *what;
  } bad[] = {
      {NPU_DPU_RDMA_BRDMA_CFG, 0x2, "multiplier live with data use 1"},
      {NPU_DPU_BS_CFG, 0x20150, "negative shift with the multiplier bypassed"},
      {NPU_DPU_BS_MUL_CFG, 14u << 8, "multiplier from the register operand"},
      {NPU_DPU_BS_OW_CFG, 0x125, "per-channel OW operand (OW_SRC)"},
  };
  int refused = 0;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    if (!bs_job_make(&j, 14))
      break;
    set_word(&j, bad[i].r, bad[i].v);
    if (dg_npu_sim_run(&j.job, err, sizeof err) != 0)
      refused++;
    else
      printf("# simulator ran a list with %s\n", bad[i].what);
    bs_job_free(&j);
  }
  bool short_refused = false;
  if (bs_job_make(&j, 14)) {
    j.bufs[2].size = 16 * 4; /* the data-use-1 size */
    short_refused = dg_npu_sim_run(&j.job, err, sizeof err) != 0 &&
                    strstr(err, "bias") != NULL;
    bs_job_free(&j);
  }
  check(refused == (int)(sizeof bad / sizeof bad[0]) && short_refused,
        "simulator: refuses data use 1 under a live multiplier, a negative "
        "shift without one, a register-sourced multiplier, OW_SRC, and a "
        "bias buffer holding no groups");
}

void npu_bs_tests(npu_check_fn fn) {
  check = fn;
  test_plan();
  test_words();
  test_matrix();
  test_sign_split_and_refusals();
}
