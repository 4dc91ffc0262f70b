/* PPU pooling: the generator and the simulator against an independent
 * reference (max exact, average within 1 LSB under both average models),
 * the decoder and the simulator rejecting corrupted pooling lists, and
 * max_pool2d through the library on DG_NPU_DEVICE=sim (placed on the NPU,
 * exact against the CPU, verify, declines with their reasons). Called
 * from test_npu.c. */
#define _POSIX_C_SOURCE 200809L
#include "test_npu_target.h"

#include "test_npu_conv.h"
#include "test_npu_poolcase.h"

#include "runtime/session.h"
#include "targets/npu/decode.h"
#include "targets/npu/gen_ppu.h"
#include "targets/npu/lower_pool.h"
#include "targets/npu/pack.h"
#include "targets/npu/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static npu_check_fn check;
static unsigned seed = 11;

static int rnd(int lo, int hi) {
  seed = seed * 1103515245u + 12345u;
  return lo + (int)((seed >> 8) % (unsigned)(hi - lo + 1));
}

#define IN_IOVA 0x0u /* 0 is a valid address */
#define OUT_IOVA 0x100000u

/* Runs d's list on the simulator over x (signed int8 values, CHW) and
 * narrows the fp16 result to int8 as the target does. */
static int sim_pool(const npu_pool_desc *d, const int8_t *x, int8_t *y,
                    npu_pool_avg avg, char *err, size_t n) {
  npu_stream *s = malloc(sizeof *s);
  npu_pool_plan p;
  if (!s || !dg_npu_gen_pool(d, s, err, n) ||
      !dg_npu_pool_plan_make(d, &p, err, n)) {
    free(s);
    return -1;
  }
  size_t in_n = (size_t)d->c * d->in_h * d->in_w;
  size_t out_n = (size_t)d->c * d->out_h * d->out_w;
  uint16_t *xf = malloc(in_n * 2), *yf = malloc(out_n * 2);
  uint8_t *in = calloc(1, p.input_bytes), *out = calloc(1, p.output_bytes);
  int rc = -1;
  if (xf && yf && in && out) {
    for (size_t i = 0; i < in_n; i++)
      xf[i] = dg_f32_to_f16((float)x[i]);
    dg_npu_pack_feature_f16(xf, d->c, d->in_h, d->in_w, 0, in);
    const uint32_t iova[NPU_BUF_COUNT] = {
        [NPU_BUF_INPUT] = IN_IOVA, [NPU_BUF_OUTPUT] = OUT_IOVA};
    dg_npu_stream_patch(s, iova);
    npu_sim_buffer bufs[2] = {{"input", IN_IOVA, p.input_bytes, in, false},
                              {"output", OUT_IOVA, p.output_bytes, out, true}};
    npu_sim_job job = {s->words, s->count, bufs, 2, NPU_ROUND_HALF_UP, avg};
    rc = dg_npu_sim_run(&job, err, n);
    dg_npu_unpack_feature_f16(out, d->c, d->out_h, d->out_w, yf);
    for (size_t i = 0; !rc && i < out_n; i++)
      y[i] = dg_npu_pool_narrow(yf[i]);
  }
  free(s), free(xf), free(yf), free(in), free(out);
  return rc;
}

/* The reference in the tensor's own domain (uint8: the raw bytes): max
 * over the taps inside the image; the average over the whole window with
 * padded taps worth the zero point (count_include_pad, what the PPU's
 * fixed reciprocals compute), rounded half to even. */
static int reference(const npu_pool_desc *d, const int *x, int zp, int ch,
                     int oy, int ox) {
  double acc = d->method == NPU_POOL_MAX ? -1e9 : 0;
  for (int ky = 0; ky < d->k_h; ky++)
    for (int kx = 0; kx < d->k_w; kx++) {
      int iy = oy * d->stride_y + ky - d->pad_top;
      int ix = ox * d->stride_x + kx - d->pad_left;
      bool inside = iy >= 0 && iy < d->in_h && ix >= 0 && ix < d->in_w;
      double v = inside ? x[((size_t)ch * d->in_h + iy) * d->in_w + ix] : zp;
      if (d->method == NPU_POOL_AVG)
        acc += v;
      else if (inside && v > acc)
        acc = v;
    }
  if (d->method == NPU_POOL_MAX)
    return (int)acc;
  return (int)nearbyint(acc / (d->k_h * d->k_w));
}

typedef struct tally {
  int cases, bad;
  long total, avg_total, exact[2]; /* exact: average outputs per model */
  int worst[2];
} tally;

/* One case: generator + simulator against the reference, max exact,
 * average within 1 LSB in both average models. */
static void matrix_case(const npu_pool_desc *shape, bool u8, tally *t) {
  npu_pool_desc d = *shape;
  int zp = u8 ? rnd(100, 150) : rnd(-10, 10);
  d.pad_value = u8 ? zp - 128 : zp;
  size_t in_n = (size_t)d.c * d.in_h * d.in_w;
  size_t out_n = (size_t)d.c * d.out_h * d.out_w;
  int *x = malloc(in_n * sizeof *x);
  int8_t *xs = malloc(in_n), *y = malloc(out_n);
  for (size_t i = 0; i < in_n; i++) {
    x[i] = u8 ? rnd(0, 255) : rnd(-128, 127);
    xs[i] = (int8_t)(u8 ? x[i] - 128 : x[i]);
  }
  char err[256] = "";
  bool ok = true;
  int modes = d.method == NPU_POOL_AVG ? 2 : 1;
  for (int m = 0; ok && m < modes; m++) {
    if (sim_pool(&d, xs, y, (npu_pool_avg)m, err, sizeof err)) {
      ok = false;
      break;
    }
    int worst = 0;
    for (int ch = 0; ch < d.c; ch++)
      for (int oy = 0; oy < d.out_h; oy++)
        for (int ox = 0; ox < d.out_w; ox++) {
          size_t i = ((size_t)ch * d.out_h + oy) * d.out_w + ox;
          int got = y[i] + (u8 ? 128 : 0);
          int diff = abs(got - reference(&d, x, zp, ch, oy, ox));
          worst = diff > worst ? diff : worst;
          if (d.method == NPU_POOL_AVG)
            t->exact[m] += diff == 0;
        }
    t->worst[m] = worst > t->worst[m] ? worst : t->worst[m];
    if (worst > (d.method == NPU_POOL_AVG ? 1 : 0)) {
      ok = false;
      snprintf(err, sizeof err, "%s model: %d LSB off", m ? "exact" : "recip",
               worst);
    }
  }
  t->total += (long)out_n;
  if (d.method == NPU_POOL_AVG)
    t->avg_total += (long)out_n;
  t->cases++;
  if (!ok) {
    t->bad++;
    printf("# pool %s %s c%d %dx%d k%d s%d pad%d: %s\n",
           d.method == NPU_POOL_MAX ? "max" : "avg", u8 ? "u8" : "i8", d.c,
           d.in_h, d.in_w, d.k_h, d.stride_y, d.pad_top, err);
  }
  free(x), free(xs), free(y);
}

static npu_pool_desc shape(npu_pool_method m, int c, int h, int w, int k, int s,
                           int pad) {
  npu_pool_desc d = {.method = m,
                     .c = c,
                     .in_h = h,
                     .in_w = w,
                     .k_h = k,
                     .k_w = k,
                     .stride_y = s,
                     .stride_x = s,
                     .pad_top = pad,
                     .pad_left = pad,
                     .pad_bottom = pad,
                     .pad_right = pad};
  d.out_h = npu_pool_out_dim(h, k, s, pad, pad);
  d.out_w = npu_pool_out_dim(w, k, s, pad, pad);
  return d;
}

static void test_matrix(void) {
  static const int channels[] = {1, 7, 16, 33, 64};
  tally t;
  memset(&t, 0, sizeof t);
  for (int m = 0; m < 2; m++)
    for (int k = 2; k <= 3; k++)
      for (int s = 1; s <= 2; s++)
        for (int pad = 0; pad <= 1; pad++)
          for (int ci = 0; ci < 5; ci++)
            for (int u8 = 0; u8 < 2; u8++) {
              npu_pool_method method = m ? NPU_POOL_AVG : NPU_POOL_MAX;
              int h = 6 + (ci + s) % 5, w = 13 - (ci + k) % 4;
              npu_pool_desc d = shape(method, channels[ci], h, w, k, s, pad);
              matrix_case(&d, u8, &t);
            }
  /* Edges of the fields: a 16x16 window, stride 16, pads 7; a 7x7 average
   * whose sums need more than fp16's 11 bits. */
  npu_pool_desc big = shape(NPU_POOL_MAX, 24, 40, 33, 16, 16, 7);
  matrix_case(&big, false, &t);
  npu_pool_desc avg7 = shape(NPU_POOL_AVG, 9, 14, 15, 7, 2, 3);
  matrix_case(&avg7, true, &t);
  printf("# pooling matrix: %d cases, %ld outputs; of %ld averages, recip "
         "model %ld exact (max %d LSB), exact model %ld exact (max %d LSB)\n",
         t.cases, t.total, t.avg_total, t.exact[0], t.worst[0], t.exact[1],
         t.worst[1]);
  /* 1 LSB hides a systematic rounding error (floor instead of nearest
   * passes it), so the exact model must hit every average and the recip
   * model all but a few near-ties. */
  check(t.bad == 0 && t.cases == 162 && t.worst[1] == 0 &&
            t.exact[0] * 100 >= t.avg_total * 99,
        "ppu: max/avg, kernel 2/3, stride 1/2, pad 0/1, channels 1..64, "
        "int8 and uint8 through generator + simulator: max exact; average "
        "exact in the exact model, within 1 LSB (99% exact) in the recip "
        "model");
}

/* ---- corrupted lists ---- */

static int decode_err(const uint64_t *w, int count, char *err, size_t n) {
  npu_regfile *rf = malloc(sizeof *rf);
  int rc = rf ? dg_npu_decode(w, count, rf, err, n) : -1;
  free(rf);
  return rc;
}

/* Index of the word writing register r. */
static int word_of(const npu_stream *s, npu_reg r) {
  for (int i = 0; i < s->count; i++)
    if (s->words[i] &&
        npu_word_target(s->words[i]) ==
            (dg_npu_blocks[dg_npu_regs[r].block].id | 1u) &&
        npu_word_offset(s->words[i]) == dg_npu_regs[r].offset)
      return i;
  return -1;
}

static bool rejected(const npu_stream *good, int at, uint64_t word,
                     const char *expect) {
  npu_stream *s = malloc(sizeof *s);
  char err[256] = "";
  *s = *good;
  s->words[at] = word;
  bool ok = decode_err(s->words, s->count, err, sizeof err) != 0 &&
            strstr(err, expect);
  if (!ok)
    printf("# decoder: got \"%s\", wanted \"%s\"\n", err, expect);
  free(s);
  return ok;
}

static void test_decoder(void) {
  npu_pool_desc d = shape(NPU_POOL_MAX, 16, 8, 8, 3, 2, 1);
  npu_stream *s = malloc(sizeof *s);
  char err[256] = "";
  bool gen = dg_npu_gen_pool(&d, s, err, sizeof err);
  check(gen && decode_err(s->words, s->count, err, sizeof err) == 0,
        "ppu: a generated pooling list decodes (op-enable 0x60)");
  if (!gen) {
    printf("# %s\n", err);
    free(s);
    return;
  }
  int k = word_of(s, NPU_PPU_POOLING_KERNEL_CFG);
  int en = s->count - 1;
  uint64_t kw = s->words[k];
  bool ok =
      k >= 0 && rejected(s, k, kw | (uint64_t)1 << (16 + 4), "reserved bits") &&
      rejected(s, k, npu_word(0x8001, npu_word_value(kw), 0x6034), "target") &&
      rejected(s, k, npu_word(0x4001, 0, 0x6028), "unknown register") &&
      rejected(s, en, npu_word(NPU_TARGET_OP_EN, NPU_EN_PPU, 0x0008),
               "not enabled") &&
      rejected(s, en,
               npu_word(NPU_TARGET_OP_EN, 0x1d | NPU_EN_PPU_RDMA, 0x0008),
               "not enabled") &&
      rejected(s, en, npu_word(NPU_TARGET_OP_EN, 0x80, 0x0008),
               "reserved op-enable");
  check(ok, "ppu: the decoder rejects reserved bits, a PPU register with the "
            "PPU_RDMA target, an unknown PPU register and op-enables that "
            "leave a written block off");
  /* Op-enable rules on lists that write nothing else. */
  uint64_t bare[5] = {0, dg_npu_reg_word(NPU_PC_REGISTER_AMOUNTS, 0),
                      npu_word(NPU_TARGET_PRE_OP_EN, 0, 0), 0, 0};
  bare[3] = npu_word(NPU_TARGET_OP_EN, NPU_EN_PPU, 0x0008);
  bool in = decode_err(bare, 4, err, sizeof err) && strstr(err, "no input");
  bare[3] = npu_word(NPU_TARGET_OP_EN, NPU_EN_PPU_RDMA, 0x0008);
  bool feeds =
      decode_err(bare, 4, err, sizeof err) && strstr(err, "without the PPU");
  check(in && feeds, "ppu: the decoder rejects a PPU without input and a "
                     "PPU_RDMA without the PPU");
  free(s);
}

/* The simulator's PPU rules: a word changed to a value the decoder
 * accepts but the model does not. */
static bool sim_rejects(npu_reg r, uint32_t value, const char *expect) {
  npu_pool_desc d = shape(NPU_POOL_AVG, 16, 8, 8, 2, 2, 0);
  npu_stream *s = malloc(sizeof *s);
  npu_pool_plan p;
  char err[256] = "";
  bool ok = dg_npu_gen_pool(&d, s, err, sizeof err) &&
            dg_npu_pool_plan_make(&d, &p, err, sizeof err);
  int at = ok ? word_of(s, r) : -1;
  uint8_t *in = calloc(1, 1 << 16), *out = calloc(1, 1 << 16);
  if (at >= 0) {
    s->words[at] = dg_npu_reg_word(r, value);
    const uint32_t iova[NPU_BUF_COUNT] = {
        [NPU_BUF_INPUT] = IN_IOVA, [NPU_BUF_OUTPUT] = OUT_IOVA};
    dg_npu_stream_patch(s, iova);
    npu_sim_buffer bufs[2] = {{"input", IN_IOVA, p.input_bytes, in, false},
                              {"output", OUT_IOVA, p.output_bytes, out, true}};
    npu_sim_job job = {s->words, s->count,          bufs,
                       2,        NPU_ROUND_HALF_UP, NPU_POOL_AVG_RECIP};
    ok = dg_npu_sim_run(&job, err, sizeof err) != 0 && strstr(err, expect);
    if (!ok)
      printf("# simulator: got \"%s\", wanted \"%s\"\n", err, expect);
  }
  free(s), free(in), free(out);
  return at >= 0 && ok;
}

static void test_sim_rejects(void) {
  bool ok = sim_rejects(NPU_PPU_DATA_FORMAT, 4u << 4, "only fp16") &&
            sim_rejects(NPU_PPU_RDMA_DATA_FORMAT, 0, "only fp16") &&
            sim_rejects(NPU_PPU_OPERATION_MODE_CFG, 0, "fed by the DPU") &&
            sim_rejects(NPU_PPU_DATA_CUBE_OUT_WIDTH, 5, "not what a") &&
            sim_rejects(NPU_PPU_RDMA_CUBE_IN_HEIGHT, 3, "differ between") &&
            sim_rejects(NPU_PPU_RDMA_SRC_LINE_STRIDE, 9u << 4, "strides") &&
            sim_rejects(NPU_PPU_RECIP_KERNEL_WIDTH, dg_npu_pool_recip(3),
                        "do not match") &&
            sim_rejects(NPU_PPU_DST_SURF_STRIDE, 4096u << 4, "strides") &&
            sim_rejects(NPU_PPU_PADDING_VALUE_2_CFG, 1, "not an fp16");
  check(ok, "ppu: the simulator rejects int8 precision, DPU flying mode, "
            "inconsistent sizes, strides and reciprocals, 35-bit pad values");
  /* The output address past the output buffer. */
  npu_pool_desc d = shape(NPU_POOL_MAX, 8, 8, 8, 2, 2, 0);
  npu_stream *s = malloc(sizeof *s);
  npu_pool_plan p;
  char err[256] = "";
  uint8_t *buf = calloc(1, 4096);
  bool gen = dg_npu_gen_pool(&d, s, err, sizeof err) &&
             dg_npu_pool_plan_make(&d, &p, err, sizeof err);
  if (gen) {
    const uint32_t iova[NPU_BUF_COUNT] = {
        [NPU_BUF_INPUT] = 0, [NPU_BUF_OUTPUT] = 0x2000};
    dg_npu_stream_patch(s, iova);
    npu_sim_buffer bufs[2] = {{"input", 0, p.input_bytes, buf, false},
                              {"output", 0x1000, p.output_bytes, buf, true}};
    npu_sim_job job = {s->words, s->count,          bufs,
                       2,        NPU_ROUND_HALF_UP, NPU_POOL_AVG_RECIP};
    gen = dg_npu_sim_run(&job, err, sizeof err) && strstr(err, "outside every");
  }
  check(gen, "ppu: an output address outside every buffer is rejected");
  free(s), free(buf);
}

static void test_generator_limits(void) {
  char why[160];
  npu_pool_desc d = shape(NPU_POOL_MAX, 8, 40, 40, 17, 1, 0);
  npu_pool_plan p;
  bool k =
      !dg_npu_pool_plan_make(&d, &p, why, sizeof why) && strstr(why, "kernel");
  d = shape(NPU_POOL_MAX, 8, 40, 40, 16, 1, 8);
  bool pad =
      !dg_npu_pool_plan_make(&d, &p, why, sizeof why) && strstr(why, "pad");
  d = shape(NPU_POOL_AVG, 8, 40, 40, 1, 1, 0);
  bool one = !dg_npu_pool_plan_make(&d, &p, why, sizeof why) &&
             strstr(why, "reciprocal");
  d = shape(NPU_POOL_MAX, 8, 40, 40, 3, 1, 0);
  d.out_w++;
  bool size =
      !dg_npu_pool_plan_make(&d, &p, why, sizeof why) && strstr(why, "output");
  check(k && pad && one && size,
        "ppu: the generator refuses kernels > 16, pads > 7, 1-wide averages "
        "and inconsistent output sizes, saying why");
  check(dg_npu_pool_recip(2) == 0x7800 && dg_npu_pool_recip(3) == 0x7555,
        "ppu: average reciprocals are the fp16 bits of 65536/k (k=2 0x7800, "
        "k=3 0x7555, as captured)");
}

/* ---- through the library ---- */

static dg_context *sim_ctx(int *npu) {
  setenv("DG_NPU_DEVICE", "sim", 1);
  dg_context *ctx = NULL;
  dg_context_options o = {.disable_cache = 1, .cpu_threads = 2};
  *npu = dg_context_create(&o, &ctx) == DG_OK ? npu_device_index(ctx) : -1;
  return ctx;
}

static void test_library(void) {
  int npu;
  dg_context *ctx = sim_ctx(&npu);
  if (npu < 0) {
    check(0, "ppu: DG_NPU_DEVICE=sim gives an NPU device");
    dg_context_destroy(ctx);
    return;
  }
  static const int channels[] = {1, 5, 16, 40, 64};
  int cases = 0, bad = 0;
  for (int k = 2; k <= 3; k++)
    for (int s = 1; s <= 2; s++)
      for (int v = 0; v < 5; v++) {
        npu_pool_case c = {.N = 1 + (v == 2),
                           .C = channels[v],
                           .H = 7 + v,
                           .W = 12 - v,
                           .K = k,
                           .S = s,
                           .pad = v % 3 == 1 ? k - 1 : 0,
                           .same = v == 3,
                           .ceil = v == 4,
                           .u8 = (v + k + s) % 2,
                           .seed = (unsigned)(cases + 3)};
        char err[512] = "";
        long diff = npu_pool_case_run(ctx, npu, &c, err, sizeof err);
        cases++;
        if (diff) {
          bad++;
          printf("# pool C%d %dx%d k%d s%d pad%d%s%s %s: %ld differ %s\n", c.C,
                 c.H, c.W, k, s, c.pad, c.same ? " SAME" : "",
                 c.ceil ? " ceil" : "", c.u8 ? "u8" : "i8", diff, err);
        }
      }
  printf("# library max_pool2d: %d cases on the NPU simulator\n", cases);
  check(bad == 0,
        "ppu: max_pool2d int8/uint8 (kernel 2/3, stride 1/2, pads, "
        "SAME, ceil mode, batch 2, channels 1..64) placed on the NPU, "
        "equal to the CPU");
  char why[200];
  npu_pool_plan_reason(ctx, npu, DG_DTYPE_I8, 0, 3, 2, 1, why, sizeof why);
  check(why[0] == 0, "ppu: the plan puts an int8 max_pool2d on the NPU");
  npu_pool_plan_reason(ctx, npu, DG_DTYPE_F32, 0, 3, 2, 0, why, sizeof why);
  printf("# f32 max pool: %s\n", why);
  bool f32 = strstr(why, "f32 op") != NULL;
  npu_pool_plan_reason(ctx, npu, DG_DTYPE_F32, 1, 3, 2, 0, why, sizeof why);
  printf("# f32 avg pool: %s\n", why);
  f32 = f32 && strstr(why, "f32 op");
  check(f32, "ppu: f32 max and average pooling are declined: f32 op");
  npu_pool_plan_reason(ctx, npu, DG_DTYPE_I8, 0, 18, 1, 0, why, sizeof why);
  printf("# 18x18 max pool: %s\n", why);
  bool big = strstr(why, "kernel 18x18") != NULL;
  npu_pool_plan_reason(ctx, npu, DG_DTYPE_I8, 0, 12, 1, 9, why, sizeof why);
  printf("# pad 9 max pool: %s\n", why);
  check(big && strstr(why, "padding 9"),
        "ppu: windows and pads beyond the PPU's fields are declined, "
        "naming the limit");
  /* verify: the session checks the NPU's pools against the reference. */
  dg_graph *g = dg_graph_create(ctx, "verify-pool");
  dg_tensor_desc xd = {.dtype = DG_DTYPE_U8,
                       .rank = 4,
                       .dims = {1, 24, 9, 9},
                       .quant = {.scale = 0.02f, .zero_point = 120}};
  dg_pool2d_params pp = {
      .kernel = {3, 3}, .stride = {2, 2}, .padding = DG_PADDING_SAME_UPPER};
  dg_tensor x = dg_graph_input(g, "x", &xd);
  dg_graph_set_device(g, npu);
  dg_graph_output(g, "y", dg_graph_max_pool2d(g, "pool", x, &pp),
                  DG_LAYOUT_NCHW);
  uint8_t xv[24 * 81];
  for (int i = 0; i < (int)sizeof xv; i++)
    xv[i] = (uint8_t)(i * 97 + 13);
  dg_compile_options o = {.policy = DG_POLICY_STRICT};
  dg_session *s = NULL;
  dg_verify_report r;
  memset(&r, 0, sizeof r);
  dg_binding in = {"x", xv, sizeof xv};
  dg_status st = dg_graph_compile(g, &o, &s, NULL);
  if (st == DG_OK)
    st = dg_session_verify(s, &in, 1, &r);
  printf("# verify: status %d, max %lld LSB\n", (int)st,
         (long long)r.max_lsb_error);
  check(st == DG_OK && r.ok && r.max_lsb_error == 0,
        "ppu: dg_session_verify passes a uint8 max pool on the NPU, 0 LSB");
  dg_session_destroy(s);
  dg_graph_destroy(g);
  dg_context_destroy(ctx);
  unsetenv("DG_NPU_DEVICE");
}

void npu_pool_tests(npu_check_fn fn) {
  check = fn;
  test_matrix();
  test_decoder();
  test_sim_rejects();
  test_generator_limits();
  test_library();
}
