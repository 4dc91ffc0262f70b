/* The NPU target's first milestone: register table, command-stream
 * decoder, packers, generator and simulator, checked against the golden
 * data captured on RK3588 hardware (docs/npu.md, "Golden data": what they
 * are and where main() looks for them) and against the int8 numerics
 * contract. One line per check. */
#include "test_npu_bs.h"
#include "test_npu_desc.h"
#include "test_npu_f16.h"
#include "test_npu_target.h"
#include "test_npu_tflite.h"

#include "ops/requant.h"
#include "targets/npu/decode.h"
#include "targets/npu/gen.h"
#include "targets/npu/pack.h"
#include "targets/npu/regs.h"
#include "targets/npu/sim.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(int ok, const char *what) {
  printf("%s - %s\n", ok ? "ok" : "FAIL", what);
  if (!ok)
    failures++;
}

static char golden_dir[1024];

static uint8_t *read_file(const char *rel, size_t *size) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", golden_dir, rel);
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  uint8_t *buf = NULL;
  long n = -1;
  if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET))
    buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = buf ? (size_t)n : 0;
  return buf;
}

/* ---- 1. the register table ---- */

static void test_table(void) {
  static const uint16_t block_base[NPU_BLOCK_COUNT] = {
      [NPU_BLOCK_PC] = 0x0000,       [NPU_BLOCK_CNA] = 0x1000,
      [NPU_BLOCK_CORE] = 0x3000,     [NPU_BLOCK_DPU] = 0x4000,
      [NPU_BLOCK_DPU_RDMA] = 0x5000, [NPU_BLOCK_PPU] = 0x6000,
      [NPU_BLOCK_PPU_RDMA] = 0x7000, [NPU_BLOCK_GLOBAL] = 0xf000};
  int ok = 1;
  for (int r = 0; r < NPU_REG_COUNT; r++) {
    if ((dg_npu_regs[r].offset & 0xf000) != block_base[dg_npu_regs[r].block] ||
        dg_npu_regs[r].offset & 3 ||
        dg_npu_reg_find(dg_npu_regs[r].offset) != r)
      ok = 0;
  }
  check(ok, "table: every register offset is unique, aligned, in its block");
  ok = 1;
  uint32_t seen[NPU_REG_COUNT] = {0};
  for (int f = 0; f < NPU_FIELD_COUNT; f++) {
    const npu_field_info *fi = &dg_npu_fields[f];
    if (fi->lo > fi->hi || fi->hi > 31) {
      ok = 0;
      continue;
    }
    uint32_t m =
        (uint32_t)((0xffffffffull >> (31 - fi->hi + fi->lo)) << fi->lo);
    if (seen[fi->reg] & m)
      ok = 0;
    seen[fi->reg] |= m;
  }
  check(ok, "table: fields lie in 0..31 and do not overlap");
  uint64_t w = dg_npu_reg_word(NPU_CNA_CONV_CON1, 0x60008120u);
  check(w == 0x020160008120100cull && npu_word_target(w) == 0x0201 &&
            npu_word_value(w) == 0x60008120u && npu_word_offset(w) == 0x100c,
        "word: target << 48 | value << 16 | register, and back");
  npu_value v = npu_value_begin(NPU_CNA_CONV_CON3);
  dg_npu_value_set(&v, NPU_CNA_CONV_CON3__CONV_X_STRIDE, 2);
  dg_npu_value_set(&v, NPU_CNA_CONV_CON3__CONV_Y_STRIDE, 7);
  check(v.bits == (2u | 7u << 3) && v.overflow_field < 0,
        "packer: fields land at their bit ranges");
  dg_npu_value_set(&v, NPU_CNA_CONV_CON3__CONV_Y_STRIDE, 8);
  check(v.overflow_field == NPU_CNA_CONV_CON3__CONV_Y_STRIDE,
        "packer: a value wider than its field is reported, not truncated");
  npu_value u = npu_value_begin(NPU_CNA_CONV_CON3);
  dg_npu_value_set(&u, NPU_DPU_BS_CFG__BS_ALU_ALGO, 1);
  check(u.overflow_field >= 0,
        "packer: a field of another register is refused");
}

/* ---- 2. the decoder ---- */

static int read_regcmd(uint64_t *words, int max) {
  size_t n;
  char *text = (char *)read_file("vendor-fp16-conv/regcmd.txt", &n);
  if (!text)
    return -1;
  text[n] = 0;
  int count = 0;
  char *p = text;
  unsigned long long t, v, r;
  int used;
  while (count < max && sscanf(p, "%llx %llx %llx%n", &t, &v, &r, &used) == 3) {
    words[count++] = npu_word((uint16_t)t, (uint32_t)v, (uint16_t)r);
    p += used;
  }
  free(text);
  return count;
}

static int rejects_at(uint64_t *words, int count, int index, const char *what) {
  npu_regfile *rf = malloc(sizeof *rf);
  char err[256] = "", want[32];
  int rc = rf ? dg_npu_decode(words, count, rf, err, sizeof err) : 0;
  free(rf);
  snprintf(want, sizeof want, "word %d ", index);
  int ok =
      rc != 0 && strncmp(err, want, strlen(want)) == 0 && strstr(err, what);
  if (!ok)
    printf("# got: %s\n", rc ? err : "(accepted)");
  return ok;
}

static void test_decoder(void) {
  uint64_t words[256], bad[256];
  int count = read_regcmd(words, 256);
  if (count < 0) {
    printf("skipped: %s/vendor-fp16-conv/regcmd.txt not found\n", golden_dir);
    return;
  }
  npu_regfile *rf = malloc(sizeof *rf);
  char err[256] = "";
  int rc = rf ? dg_npu_decode(words, count, rf, err, sizeof err) : -1;
  if (rc)
    printf("# %s\n", err);
  check(count == 107 && rc == 0,
        "decoder: the vendor fp16 stream (107 words) decodes fully");
  if (!rc)
    printf("# vendor stream: op-enable 0x%02" PRIx32
           ", %d write(s) with target bit 1 set\n",
           rf->op_en, rf->vendor_target_words);
  free(rf);
  memcpy(bad, words, sizeof words);
  bad[10] = npu_word(0x0201, 0, 0x1ffc);
  check(rejects_at(bad, count, 10, "unknown register"),
        "decoder: an unknown register is rejected, naming the word");
  memcpy(bad, words, sizeof words);
  bad[12] =
      npu_word(0x0801, npu_word_value(words[12]), npu_word_offset(words[12]));
  check(rejects_at(bad, count, 12, "target"),
        "decoder: a register written with another block's target is rejected");
  memcpy(bad, words, sizeof words);
  bad[6] |= (uint64_t)1 << (31 + 16); /* CNA_DATA_SIZE0 bit 31: reserved */
  check(rejects_at(bad, count, 6, "reserved bits"),
        "decoder: reserved bits set are rejected");
  check(rejects_at(words, count - 1, count - 2, "op-enable"),
        "decoder: a list without its op-enable word is rejected");
  memcpy(bad, words, sizeof words);
  bad[count - 1] = npu_word(NPU_TARGET_OP_EN, 0x1c, 0xf008); /* CNA off */
  check(rejects_at(bad, count, count - 1, "not enabled"),
        "decoder: CNA registers written but CNA not enabled is rejected");
  memcpy(bad, words, sizeof words);
  bad[count - 1] = npu_word(NPU_TARGET_OP_EN, 0x0d, 0xf008);
  check(rejects_at(bad, count, count - 1, "DPU_RDMA"),
        "decoder: DPU enabled without DPU_RDMA is rejected");
}

/* ---- 3. the tflite reader and the packers ---- */

static uint8_t *g_model;
static size_t g_model_size;

/* A truncated or corrupted file must fail cleanly or parse with every
 * pointer inside the buffer; a prefix that still holds everything the conv
 * needs (the tail is metadata) may parse, and must then read the same. */
static int same_conv(const tfl_conv *a, const tfl_conv *b) {
  return a->builtin == b->builtin && a->weights.size == b->weights.size &&
         a->bias.size == b->bias.size &&
         !memcmp(a->weights.data, b->weights.data, a->weights.size) &&
         !memcmp(a->bias.data, b->bias.data, a->bias.size);
}

static int in_bounds(const tfl_tensor *t, const uint8_t *buf, size_t n) {
  return !t->data || (t->data >= buf && t->size <= n &&
                      (size_t)(t->data - buf) <= n - t->size);
}

static void test_tflite_robust(const tfl_conv *full) {
  tfl_conv c;
  char err[128];
  int ok = 1;
  size_t parsed_from = g_model_size;
  for (size_t n = 0; n < g_model_size; n++) {
    uint8_t *prefix = malloc(n ? n : 1); /* exact size: overreads show up */
    memcpy(prefix, g_model, n);
    if (!tfl_read_conv(prefix, n, &c, err, sizeof err)) {
      if (n < parsed_from)
        parsed_from = n;
      if (!in_bounds(&c.weights, prefix, n) || !in_bounds(&c.bias, prefix, n) ||
          !same_conv(&c, full))
        ok = 0;
    }
    free(prefix);
  }
  printf("# truncations: the first %zu of %zu bytes are needed\n", parsed_from,
         g_model_size);
  check(ok, "tflite: every truncation of dw_pt.tflite fails or reads the same");
  ok = 1;
  uint8_t *copy = malloc(g_model_size);
  uint32_t seed = 12345;
  for (int i = 0; copy && i < 2000; i++) {
    memcpy(copy, g_model, g_model_size);
    for (int j = 0; j < 4; j++) {
      seed = seed * 1664525u + 1013904223u;
      copy[(seed >> 8) % g_model_size] ^= (uint8_t)(1u << (seed & 7));
    }
    if (!tfl_read_conv(copy, g_model_size, &c, err, sizeof err) &&
        (!in_bounds(&c.weights, copy, g_model_size) ||
         !in_bounds(&c.bias, copy, g_model_size)))
      ok = 0;
  }
  free(copy);
  check(ok,
        "tflite: 2000 corrupted copies parse or fail, data stays in bounds");
}

/* Mesa's view of this model (the golden's biases show it): Teflon handed
 * the int8 tensors over as uint8 bytes with their int8 zero points, so
 * the NPU's signed values are byte - 128 and the zero points are taken
 * as they are. */
static void mesa_signed(const uint8_t *raw, size_t n, int8_t *out) {
  for (size_t i = 0; i < n; i++)
    out[i] = (int8_t)(raw[i] - 128);
}

static void test_packers(tfl_conv *c) {
  size_t n;
  uint8_t *gw = read_file("teflon-dw-3x3-int8/mesa-weights-000-000.bin", &n);
  int C = c->weights.dims[3], KH = c->weights.dims[1], KW = c->weights.dims[2];
  size_t wn = (size_t)C * KH * KW;
  int8_t *w = malloc(wn); /* [C][1][KH][KW] from TFLite's [1][KH][KW][C] */
  int8_t *ws = malloc(wn);
  mesa_signed(c->weights.data, wn, ws);
  for (int ch = 0; ch < C; ch++)
    for (int k = 0; k < KH * KW; k++)
      w[(size_t)ch * KH * KW + k] = ws[(size_t)k * C + ch];
  size_t wb = dg_npu_weight_buffer_bytes(C, C, KH, KW, true);
  uint8_t *pw = malloc(wb);
  dg_npu_pack_weights_i8(w, C, C, KH, KW, true,
                         (int8_t)(c->weights.zero_point - 128), pw);
  check(gw && n == wb && !memcmp(gw, pw, n),
        "packer: depthwise weights reproduce mesa-weights-000-000.bin");
  free(gw);
  uint8_t *gb = read_file("teflon-dw-3x3-int8/mesa-biases-000-000.bin", &n);
  int32_t bias[64], packed[64];
  memcpy(bias, c->bias.data, sizeof bias);
  int ok = dg_npu_pack_bias(bias, w, C, C, KH, KW, true,
                            (int32_t)c->weights.zero_point - 128,
                            (int32_t)c->input.zero_point - 128, 0, packed);
  check(ok && gb && n == sizeof packed && !memcmp(gb, packed, n),
        "packer: bias cube with zero-point folding reproduces "
        "mesa-biases-000-000.bin");
  free(gb);
  free(pw);
  free(w);
  free(ws);
  uint8_t *gi = read_file("teflon-dw-3x3-int8/mesa-input-000-000.bin", &n);
  int H = c->input.dims[1], W = c->input.dims[2];
  size_t cube = dg_npu_feature_bytes(C, H, W, 1);
  int8_t *chw = malloc((size_t)C * H * W);
  uint8_t *re = calloc(1, n ? n : 1);
  if (gi && chw && re && n >= cube) {
    dg_npu_unpack_feature_i8(gi, C, H, W, chw);
    dg_npu_pack_feature_i8(chw, C, H, W, 0, re);
  }
  check(gi && n == 2 * cube && !memcmp(gi, re, n),
        "packer: mesa-input unpacked to NCHW and packed back is identical");
  free(gi);
  free(chw);
  free(re);
}

/* ---- 4. generator + simulator ---- */

static int run_sim(const npu_conv_desc *d, const npu_conv_plan *p,
                   npu_stream *s, uint8_t *in, uint8_t *wt, int32_t *bias,
                   uint8_t *out, npu_round round, char *err, size_t n) {
  static const uint32_t iova[NPU_BUF_COUNT] = {0x0, 0x100000, 0x200000,
                                               0x300000};
  dg_npu_stream_patch(s, iova);
  npu_sim_buffer bufs[4] = {
      {"input", iova[NPU_BUF_INPUT], p->input_bytes, in, false},
      {"weights", iova[NPU_BUF_WEIGHTS], p->weight_bytes, wt, false},
      {"bias", iova[NPU_BUF_BIAS], p->bias_bytes, (uint8_t *)bias, false},
      {"output", iova[NPU_BUF_OUTPUT], p->output_bytes, out, true}};
  (void)d;
  npu_sim_job job = {s->words, s->count, bufs, 4, round, NPU_POOL_AVG_RECIP};
  return dg_npu_sim_run(&job, err, n);
}

/* The feature layouts without golden data: int8 cubes at edge shapes
 * (channels and widths around 16, whole and part tiles of the packer's
 * transposes), each byte where the layout puts it:
 * cube[((ch / 16) * H + y) * W + x][ch % 16], pad channels = pad; and
 * unpacked back. A slice of rows (y0 = 1) of a taller plane. Then an
 * fp16 round trip. */
static void test_cube_layouts(void) {
  int cube_bad = 0;
  static const int cs[] = {1, 15, 16, 17, 40}, wds[] = {1, 15, 16, 17, 40};
  for (int ci = 0; ci < 5; ci++)
    for (int wi = 0; wi < 5; wi++) {
      int C = cs[ci], W = wds[wi], PH = 4, H = 3, y0 = 1;
      size_t nb = dg_npu_feature_bytes(C, H, W, 1);
      int8_t *x = malloc((size_t)C * PH * W), *back = malloc((size_t)C * H * W);
      uint8_t *cb = malloc(nb);
      if (!x || !back || !cb) {
        cube_bad++;
        free(x), free(back), free(cb);
        continue;
      }
      for (int i = 0; i < C * PH * W; i++)
        x[i] = (int8_t)(i * 37 + 11);
      dg_npu_pack_rows_i8(x, C, PH, W, y0, H, -5, cb);
      for (int ch = 0; ch < (C + 15) / 16 * 16; ch++)
        for (int y = 0; y < H; y++)
          for (int xx = 0; xx < W; xx++) {
            uint8_t want = ch < C
                               ? (uint8_t)x[((size_t)ch * PH + y0 + y) * W + xx]
                               : (uint8_t)(int8_t)-5;
            cube_bad +=
                cb[(((size_t)(ch / 16) * H + y) * W + xx) * 16 + ch % 16] !=
                want;
          }
      dg_npu_unpack_feature_i8(cb, C, H, W, back);
      for (int ch = 0; ch < C; ch++)
        cube_bad += memcmp(back + (size_t)ch * H * W,
                           x + ((size_t)ch * PH + y0) * W, (size_t)H * W) != 0;
      free(x), free(back), free(cb);
    }
  check(!cube_bad, "packer: int8 NC1HWC2 rows of 1-40 channels and pixels, pad "
                   "channels, and back to NCHW, byte for byte");
  uint16_t h[3 * 2 * 5], h2[3 * 2 * 5];
  for (int i = 0; i < 30; i++)
    h[i] = (uint16_t)(0x3c00 + i * 7);
  uint8_t hc[8 * 2 * 5 * 2 * 2];
  dg_npu_pack_feature_f16(h, 3, 2, 5, 0, hc);
  dg_npu_unpack_feature_f16(hc, 3, 2, 5, h2);
  check(!memcmp(h, h2, sizeof h) && hc[8 * 5 * 1 * 2] == (uint8_t)h[5],
        "packer: fp16 NC1HWC2 (8 channels per atom) round trip");
}

static void test_golden(tfl_conv *c) {
  size_t ni, nw, nb, no;
  uint8_t *in = read_file("teflon-dw-3x3-int8/mesa-input-000-000.bin", &ni);
  uint8_t *wt = read_file("teflon-dw-3x3-int8/mesa-weights-000-000.bin", &nw);
  uint8_t *bs = read_file("teflon-dw-3x3-int8/mesa-biases-000-000.bin", &nb);
  uint8_t *gold = read_file("teflon-dw-3x3-int8/mesa-output-000-000.bin", &no);
  npu_conv_desc d = {
      .in_c = 64,
      .in_h = 8,
      .in_w = 8,
      .out_c = 64,
      .out_h = 8,
      .out_w = 8,
      .k_h = 3,
      .k_w = 3,
      .stride_y = 1,
      .stride_x = 1,
      .pad_top = 1,
      .pad_left = 1,
      .depthwise = true,
      /* Mesa's view (see mesa_signed): zero points as given, minus 128. */
      .x_zp = (int32_t)c->input.zero_point - 128,
      .w_zp = (int32_t)c->weights.zero_point - 128,
      .y_zp = (int32_t)c->output.zero_point - 128,
      .multiplier = dg_requant_multiplier(c->input.scale, c->weights.scale,
                                          c->output.scale)};
  npu_stream s;
  npu_conv_plan p;
  char err[256] = "";
  int ok = in && wt && bs && gold && dg_npu_gen_conv(&d, &s, err, sizeof err) &&
           dg_npu_conv_plan_make(&d, &p, err, sizeof err) &&
           p.input_bytes == ni && p.weight_bytes == nw && p.bias_bytes == nb &&
           p.output_bytes == no;
  check(ok, "generator: dw 3x3 64ch 8x8 stream and buffer sizes as Mesa's");
  if (!ok) {
    printf("# %s\n", err);
    goto out;
  }
  /* Mesa's pad word, not ours: Mesa takes PAD_CON1 from a uint8 copy of the
   * zero point (-2 -> 254, 254 - 128 = 0x0000007e) but folds the bias with
   * the int (-2 - 128 = -130). Our generator writes the byte in both low
   * bytes (0x00007e7e here), which pads every lane with 126. */
  int patched = 0;
  for (int i = 0; i < s.count; i++)
    if (npu_word_offset(s.words[i]) == dg_npu_regs[NPU_CNA_PAD_CON1].offset) {
      s.words[i] = dg_npu_reg_word(NPU_CNA_PAD_CON1, 0x7eu);
      patched++;
    }
  check(patched == 1, "golden: one CNA_PAD_CON1 word, set to Mesa's 0x7e");
  printf("# golden stream: %d words\n", s.count);
  const char *names[3] = {"half-up", "half-away", "half-even"};
  for (int r = 0; r < 3; r++) {
    uint8_t *o = calloc(1, no);
    if (run_sim(&d, &p, &s, in, wt, (int32_t *)bs, o, (npu_round)r, err,
                sizeof err)) {
      printf("# %s\n", err);
      check(0, "simulator: runs the golden stream");
      free(o);
      continue;
    }
    int exact = 0, border_exact = 0;
    for (int ch = 0; ch < 64; ch++)
      for (int y = 0; y < 8; y++)
        for (int x = 0; x < 8; x++) {
          size_t at =
              (size_t)(ch / 16) * 1024 + (size_t)(y * 8 + x) * 16 + ch % 16;
          int border = y == 0 || y == 7 || x == 0 || x == 7;
          exact += o[at] == gold[at];
          border_exact += border && o[at] == gold[at];
        }
    int tail = !memcmp(o + 4096, gold + 4096, no - 4096);
    printf("# golden, rounding %s: %d/4096 bytes exact (border %d/1792)\n",
           names[r], exact, border_exact);
    char what[200];
    snprintf(what, sizeof what,
             "simulator (%s): mesa-output-000-000.bin byte for byte (4096 "
             "bytes, slack untouched)",
             names[r]);
    check(exact == 4096 && tail && !memcmp(o, gold, no), what);
    free(o);
  }
out:
  free(in);
  free(wt);
  free(bs);
  free(gold);
}

static uint32_t rng = 1;
static int rnd(int lo, int hi) {
  rng = rng * 1103515245u + 12345u;
  return lo + (int)((rng >> 8) % (uint32_t)(hi - lo + 1));
}

/* One conv of the matrix: returns max |npu - reference| (or -1 on error)
 * and adds exact outputs to *exact, all outputs to *total. */
static int matrix_case(int C, int O, int H, int W, int K, int S, int same,
                       int dw, int relu, long *exact, long *total) {
  int OH, OW, pt = 0, pl = 0;
  if (same) {
    OH = (H + S - 1) / S;
    OW = (W + S - 1) / S;
    int th = (OH - 1) * S + K - H, tw = (OW - 1) * S + K - W;
    pt = th > 0 ? th / 2 : 0;
    pl = tw > 0 ? tw / 2 : 0;
  } else {
    OH = (H - K) / S + 1;
    OW = (W - K) / S + 1;
  }
  int per = dw ? 1 : C;
  int32_t zx = rnd(-20, 20), zw = rnd(0, 3) ? 0 : rnd(-5, 5);
  int32_t zy = relu ? -128 : rnd(-10, 10);
  float sx = 0.05f, sw = 0.01f;
  float sy = sx * sw * (float)(per * K * K) * 2.0f;
  size_t xn = (size_t)C * H * W, wn = (size_t)O * per * K * K;
  int8_t *x = malloc(xn), *w = malloc(wn);
  int32_t *b = malloc((size_t)O * 4), *pb = malloc((size_t)O * 4);
  for (size_t i = 0; i < xn; i++)
    x[i] = (int8_t)rnd(-128, 127);
  for (size_t i = 0; i < wn; i++)
    w[i] = (int8_t)rnd(-127, 127);
  for (int i = 0; i < O; i++)
    b[i] = rnd(-2000, 2000);
  npu_conv_desc d = {C,
                     H,
                     W,
                     O,
                     OH,
                     OW,
                     K,
                     K,
                     S,
                     S,
                     pt,
                     pl,
                     dw,
                     zx,
                     zw,
                     zy,
                     dg_requant_multiplier(sx, sw, sy),
                     0,
                     NPU_PREC_INT8,
                     false,
                     0};
  npu_stream s;
  npu_conv_plan p;
  char err[256];
  int worst = -1;
  uint8_t *in = NULL, *wt = NULL, *out = NULL;
  if (!dg_npu_gen_conv(&d, &s, err, sizeof err) ||
      !dg_npu_conv_plan_make(&d, &p, err, sizeof err)) {
    printf("# C%d O%d %dx%d k%d s%d: %s\n", C, O, H, W, K, S, err);
    goto done;
  }
  in = calloc(1, p.input_bytes);
  wt = malloc(p.weight_bytes);
  out = calloc(1, p.output_bytes);
  dg_npu_pack_feature_i8(x, C, H, W, (int8_t)zx, in);
  dg_npu_pack_weights_i8(w, O, C, K, K, dw, (int8_t)zw, wt);
  if (!dg_npu_pack_bias(b, w, O, C, K, K, dw, zw, zx, 0, pb) ||
      run_sim(&d, &p, &s, in, wt, pb, out, NPU_ROUND_HALF_UP, err,
              sizeof err)) {
    printf("# sim: %s\n", err);
    goto done;
  }
  worst = 0;
  float m = dg_requant_multiplier(sx, sw, sy);
  for (int o = 0; o < O; o++)
    for (int oy = 0; oy < OH; oy++)
      for (int ox = 0; ox < OW; ox++) {
        int64_t acc = npu_ref_acc(x, w, b[o], C, H, W, K, S, pt, pl, dw, zx, zw,
                                  o, oy, ox);
        int lo, hi;
        dg_requant_clamp(relu, sy, zy, -128, 127, &lo, &hi);
        int ref = dg_requant((int32_t)acc, m, zy, lo, hi);
        int got = (int8_t)out[(size_t)(o / 16) * OH * OW * 16 +
                              ((size_t)oy * OW + ox) * 16 + o % 16];
        int diff = abs(got - ref);
        if (diff > worst)
          worst = diff;
        *exact += diff == 0;
        (*total)++;
      }
done:
  free(x);
  free(w);
  free(b);
  free(pb);
  free(in);
  free(wt);
  free(out);
  return worst;
}

static void test_matrix(void) {
  static const int direct[][2] = {{3, 8}, {16, 16}, {20, 40}, {64, 64}};
  static const int depth[] = {8, 16, 40, 64};
  static const int sizes[][2] = {{5, 5}, {16, 16}, {7, 12}};
  long exact = 0, total = 0;
  int cases = 0, bad = 0, worst = 0;
  for (int si = 0; si < 3; si++)
    for (int K = 1; K <= 3; K += 2)
      for (int S = 1; S <= 2; S++)
        for (int same = 0; same < 2; same++)
          for (int dw = 0; dw < 2; dw++)
            for (int ci = 0; ci < 4; ci++) {
              int C = dw ? depth[ci] : direct[ci][0];
              int O = dw ? depth[ci] : direct[ci][1];
              int relu = (ci + si) % 3 == 0;
              int e = matrix_case(C, O, sizes[si][0], sizes[si][1], K, S, same,
                                  dw, relu, &exact, &total);
              cases++;
              if (e < 0 || e > 1) {
                bad++;
                printf("# C%d O%d %dx%d k%d s%d %s %s: max diff %d\n", C, O,
                       sizes[si][0], sizes[si][1], K, S,
                       same ? "SAME" : "VALID", dw ? "dw" : "direct", e);
              }
              if (e > worst)
                worst = e;
            }
  printf(
      "# conv matrix: %d convs, %ld/%ld outputs exact (%.2f%%), max diff %d\n",
      cases, exact, total, total ? 100.0 * exact / total : 0.0, worst);
  check(bad == 0, "generator + simulator: conv matrix within +-1 LSB of the "
                  "int8 contract");
}

/* The generator's pad word carries the byte in both low bytes (odd lanes
 * below 32 read byte 1): Mesa's 0xffff8080 and 0x0b0b are of this shape. */
static void test_pad_word(void) {
  static const int32_t zp[4] = {-128, 11, 0, -1};
  static const uint32_t want[4] = {0xffff8080u, 0x0b0bu, 0u, 0xffffffffu};
  int ok = 1;
  for (int i = 0; i < 4; i++) {
    npu_conv_desc d = npu_desc_conv(16, 6, 6, 16, 6, 6, 3, 1, 1, 1);
    d.depthwise = true, d.x_zp = zp[i], d.multiplier = 0.01f;
    npu_stream s;
    char err[256];
    int found = 0;
    if (!dg_npu_gen_conv(&d, &s, err, sizeof err))
      ok = 0;
    else
      for (int j = 0; j < s.count; j++)
        if (npu_word_offset(s.words[j]) == dg_npu_regs[NPU_CNA_PAD_CON1].offset)
          found++, ok &= npu_word_value(s.words[j]) == want[i];
    ok &= found == 1;
  }
  check(ok, "generator: CNA_PAD_CON1 holds the pad byte in bytes 0 and 1 "
            "(-128 -> 0xffff8080, 11 -> 0x0b0b)");
}

static void test_sim_rejects(void) {
  npu_conv_desc d = {16,
                     6,
                     6,
                     16,
                     6,
                     6,
                     3,
                     3,
                     1,
                     1,
                     1,
                     1,
                     false,
                     0,
                     0,
                     0,
                     0.01f,
                     0,
                     NPU_PREC_INT8,
                     false,
                     0};
  npu_stream s;
  npu_conv_plan p;
  char err[256] = "";
  if (!dg_npu_gen_conv(&d, &s, err, sizeof err) ||
      !dg_npu_conv_plan_make(&d, &p, err, sizeof err)) {
    check(0, "simulator rejects: generate a small conv");
    return;
  }
  uint8_t *in = calloc(1, p.input_bytes), *wt = calloc(1, p.weight_bytes),
          *out = calloc(1, p.output_bytes);
  int32_t bias[16] = {0};
  static const uint32_t iova[NPU_BUF_COUNT] = {0x0, 0x100000, 0x200000,
                                               0x300000};
  dg_npu_stream_patch(&s, iova);
  npu_sim_buffer bufs[4] = {
      {"input", 0x0, p.input_bytes, in, false},
      {"weights", 0x100000, p.weight_bytes, wt, false},
      {"bias", 0x200000, p.bias_bytes, (uint8_t *)bias, false},
      {"output", 0x300000, p.output_bytes, out, true}};
  npu_sim_job job = {s.words, s.count,           bufs,
                     4,       NPU_ROUND_HALF_UP, NPU_POOL_AVG_RECIP};
  check(dg_npu_sim_run(&job, err, sizeof err) == 0,
        "simulator: a conv whose input sits at IOVA 0 runs");
  bufs[3].size = p.output_bytes / 4;
  check(dg_npu_sim_run(&job, err, sizeof err) != 0 && strstr(err, "output"),
        "simulator: an output outside every buffer is rejected");
  bufs[3].size = p.output_bytes;
  bufs[3].is_output = false;
  check(dg_npu_sim_run(&job, err, sizeof err) != 0 && strstr(err, "not listed"),
        "simulator: writing a buffer not listed as output is rejected");
  bufs[3].is_output = true;
  npu_conv_desc big = {128,
                       64,
                       64,
                       64,
                       64,
                       64,
                       3,
                       3,
                       1,
                       1,
                       1,
                       1,
                       false,
                       0,
                       0,
                       0,
                       0.01f,
                       0,
                       NPU_PREC_INT8,
                       false,
                       0};
  check(
      !dg_npu_gen_conv(&big, &s, err, sizeof err) && strstr(err, "CBUF"),
      "generator: a conv that does not fit the CBUF is declined with a reason");
  free(in);
  free(wt);
  free(out);
}

int main(void) {
  snprintf(golden_dir, sizeof golden_dir, "%s/../shared/npu-golden",
           DG_SOURCE_DIR);
  test_table();
  test_decoder();
  g_model = read_file("teflon-dw-3x3-int8/dw_pt.tflite", &g_model_size);
  if (!g_model) {
    printf("skipped: %s/teflon-dw-3x3-int8 not found\n", golden_dir);
  } else {
    tfl_conv c;
    char err[128];
    int rc = tfl_read_conv(g_model, g_model_size, &c, err, sizeof err);
    check(rc == 0 && c.builtin == 4 && c.weights.type == 9 &&
              c.weights.size == 576 && c.bias.size == 256 &&
              c.input.zero_point == -2 && c.output.zero_point == 5,
          "tflite: the depthwise conv, its tensors and quantisation are read");
    if (!rc) {
      test_tflite_robust(&c);
      test_packers(&c);
      test_golden(&c);
    }
    free(g_model);
  }
  test_cube_layouts();
  test_sim_rejects();
  test_pad_word();
  test_matrix();
  npu_f16_tests(check, golden_dir);
  npu_bs_tests(check);
  npu_target_tests(check);
  npu_lenet_tests(check);
  npu_pool_tests(check);
  return failures ? 1 : 0;
}
