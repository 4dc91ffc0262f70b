/* npu-hw-check: for anyone with an RK3588 board. Runs a fixed set of int8
 * convolutions (two with per-channel multipliers on the BS stage) on the
 * NPU (the backend DG_NPU_DEVICE names, else the one
 * discovery finds) and on the CPU reference of the numerics contract,
 * prints a pass/fail table, and with --out DIR writes every case as a
 * golden set (format below) that --replay DIR checks byte for byte
 * through the simulator. Four probes measure what the simulator can only
 * assume (src/targets/npu/README.md, findings): rounding ties in OUT_CVT,
 * which byte of PAD_VALUE each channel lane pads with (depthwise and
 * direct), and the rounding of CLIP_TRUNCATE; one more runs a conv with
 * Mesa's smaller input bank budget (probe_banks). Then pooling on the PPU
 * (standalone tasks, skipped on rocket, whose kernel completes jobs on
 * the DPU's interrupt only): max exact and average within 1 LSB of the
 * reference, and three probes: which average model (sim.h) the board
 * follows, whether padded taps add PADDING_VALUE to an average, and
 * whether the PPU pools int8 natively (the sources disagree; the
 * simulator does not model it). Last, through the library: a node of
 * three tasks chained in one job and the cube hand-off to the node after
 * it, with DG_NPU_CORES 1, 3 and auto (npu_hw_lib.c).
 *
 * Golden set, one folder per case:
 *   regcmd.txt   the command list as run, "target value register" per line
 *                in hex (the format of the vendor-fp16-conv golden set,
 *                docs/npu.md "Golden data")
 *   buffers.txt  "name iova size" per buffer, in the list's address space
 *   input.bin, weights.bin, biases.bin   the cubes the NPU read
 *   output.bin   the cube the NPU wrote: the oracle
 * (pooling sets have only input and output: fp16 NC1HWC2 cubes, C2 = 8)
 *
 *   npu-hw-check [--out DIR | --replay DIR]
 *
 * Exit status 0 when every matrix case is within 1 LSB (probes report,
 * they do not fail). The options: usage() below, or npu-hw-check --help.
 */
#define _GNU_SOURCE
#include "common/cli.h"
#include "npu_hw_lib.h"
#include "ops/requant.h"
#include "targets/npu/backend.h"
#include "targets/npu/gen.h"
#include "targets/npu/gen_ppu.h"
#include "targets/npu/lower_pool.h"
#include "targets/npu/pack.h"
#include "targets/npu/sim.h"

#include "runtime/session.h" /* dg_f32_to_f16 */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *names[4] = {"input", "weights", "biases", "output"};

/* perc: per-channel weight scales spread 11-fold over the channels, run
 * through the BS stage's per-channel multiplier (docs/npu.md). */
typedef struct conv_case {
  const char *name;
  int C, O, H, W, K, S, pad, dw, perc;
} conv_case;

static const conv_case matrix[] = {
    {"direct-1x1-c16-o32", 16, 32, 8, 8, 1, 1, 0, 0, 0},
    {"direct-3x3-c3-o8", 3, 8, 16, 16, 3, 1, 1, 0, 0},
    {"direct-3x3-s2-c32-o64", 32, 64, 14, 14, 3, 2, 1, 0, 0},
    {"direct-5x5-c1-o6", 1, 6, 28, 28, 5, 1, 2, 0, 0},
    {"direct-3x3-c64-o64-13x7", 64, 64, 13, 7, 3, 1, 1, 0, 0},
    {"dw-3x3-c64", 64, 64, 8, 8, 3, 1, 1, 1, 0},
    {"dw-3x3-s2-c40", 40, 40, 15, 15, 3, 2, 1, 1, 0},
    {"dw-5x5-c16", 16, 16, 12, 12, 5, 1, 2, 1, 0},
    {"direct-3x3-perchannel", 32, 48, 10, 10, 3, 1, 1, 0, 1},
    {"dw-3x3-perchannel", 40, 40, 9, 9, 3, 1, 1, 1, 1},
};

static unsigned seed = 1;
static int rnd(int lo, int hi) {
  seed = seed * 1103515245u + 12345u;
  return lo + (int)((seed >> 8) % (unsigned)(hi - lo + 1));
}

/* A job's buffers on the backend, filled, run, read back into out. */
typedef struct job_run {
  npu_bo bo[5]; /* input, weights, biases, output, cmd */
} job_run;

static int run_job_as(npu_backend *b, npu_stream *s, const npu_conv_plan *p,
                      const uint8_t *in, const uint8_t *wt, const int32_t *bias,
                      uint8_t *out, job_run *r, bool checked, char *err,
                      size_t n);
static int run_job(npu_backend *b, npu_stream *s, const npu_conv_plan *p,
                   const uint8_t *in, const uint8_t *wt, const int32_t *bias,
                   uint8_t *out, job_run *r, char *err, size_t n) {
  return run_job_as(b, s, p, in, wt, bias, out, r, true, err, n);
}

/* checked: the static validation first (a probe's list outside our own
 * rules goes unchecked: the board is the judge). */
static int run_job_as(npu_backend *b, npu_stream *s, const npu_conv_plan *p,
                      const uint8_t *in, const uint8_t *wt, const int32_t *bias,
                      uint8_t *out, job_run *r, bool checked, char *err,
                      size_t n) {
  const npu_backend_ops *o = b->ops;
  size_t sizes[5] = {p->input_bytes, p->weight_bytes, p->bias_bytes,
                     p->output_bytes, (size_t)s->count * 8};
  const void *src[3] = {in, wt, bias};
  memset(r, 0, sizeof *r);
  for (int i = 0; i < 5; i++)
    if (o->bo_alloc(b, sizes[i], &r->bo[i], err, n))
      return -1;
  uint32_t iova[NPU_BUF_COUNT];
  for (int i = 0; i < 4; i++)
    iova[i] = (uint32_t)r->bo[i].iova;
  dg_npu_stream_patch(s, iova);
  for (int i = 0; i < 5; i++) {
    if (o->cpu_begin(b, &r->bo[i], err, n))
      return -1;
    if (i < 3)
      memcpy(r->bo[i].map, src[i], sizes[i]);
    if (i == 4)
      memcpy(r->bo[i].map, s->words, sizes[i]);
    if (o->cpu_end(b, &r->bo[i], err, n))
      return -1;
  }
  npu_bo *ins[3] = {&r->bo[0], &r->bo[1], &r->bo[2]}, *outs[1] = {&r->bo[3]};
  npu_job job = {&r->bo[4], s->count, ins, 3, outs, 1, NULL, 0, 0};
  if ((checked && dg_npu_job_check(&job, err, n)) ||
      o->submit(b, &job, err, n) || o->wait(b, &job, b->timeout_ms, err, n) ||
      o->cpu_begin(b, &r->bo[3], err, n))
    return -1;
  memcpy(out, r->bo[3].map, p->output_bytes);
  return o->cpu_end(b, &r->bo[3], err, n);
}

static void free_job(npu_backend *b, job_run *r) {
  for (int i = 0; i < 5; i++)
    if (r->bo[i].map)
      b->ops->bo_free(b, &r->bo[i]);
}

static int save_n(const char *dir, const char *name, const npu_stream *s,
                  const npu_bo *bo, const char *const *bnames, int nb,
                  const void *const *data) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  mkdir(dir, 0755);
  if (mkdir(path, 0755) && errno != EEXIST)
    return -1;
  snprintf(path, sizeof path, "%s/%s/regcmd.txt", dir, name);
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  for (int i = 0; i < s->count; i++)
    fprintf(f, "%04x %08x %04x\n", npu_word_target(s->words[i]),
            npu_word_value(s->words[i]), npu_word_offset(s->words[i]));
  fclose(f);
  snprintf(path, sizeof path, "%s/%s/buffers.txt", dir, name);
  if (!(f = fopen(path, "w")))
    return -1;
  for (int i = 0; i < nb; i++)
    fprintf(f, "%s %llx %zu\n", bnames[i], (unsigned long long)bo[i].iova,
            bo[i].size);
  fclose(f);
  for (int i = 0; i < nb; i++) {
    snprintf(path, sizeof path, "%s/%s/%s.bin", dir, name, bnames[i]);
    if (!(f = fopen(path, "wb")))
      return -1;
    fwrite(data[i], 1, bo[i].size, f);
    fclose(f);
  }
  return 0;
}

static int save(const char *dir, const char *name, const npu_stream *s,
                const job_run *r, const void *const data[4]) {
  return save_n(dir, name, s, r->bo, names, 4, data);
}

/* A direct int8 conv of C -> O channels, k x k, stride 1, padding pad
 * (top and left), in the generator's terms. */
static npu_conv_desc npu_desc(int C, int H, int W, int O, int OH, int OW, int k,
                              int S, int pad) {
  return (npu_conv_desc){.in_c = C,
                         .in_h = H,
                         .in_w = W,
                         .out_c = O,
                         .out_h = OH,
                         .out_w = OW,
                         .k_h = k,
                         .k_w = k,
                         .stride_y = S,
                         .stride_x = S,
                         .pad_top = pad,
                         .pad_left = pad,
                         .multiplier = 0.01f};
}

/* Runs one matrix case on the NPU and against the contract. */
static int matrix_case(npu_backend *b, const conv_case *c, const char *out_dir,
                       int *worst) {
  int OH = (c->H + 2 * c->pad - c->K) / c->S + 1;
  int OW = (c->W + 2 * c->pad - c->K) / c->S + 1;
  int per = c->dw ? 1 : c->C;
  int32_t zx = rnd(-10, 10), zy = rnd(-10, 10);
  float sx = 0.05f, sw = 0.01f, sy = sx * sw * (float)(per * c->K * c->K) * 2;
  float m = dg_requant_multiplier(sx, sw, sy), ms[64];
  for (int o = 0; o < c->O && o < 64; o++) /* perc: sw x 1 .. x 11 */
    ms[o] =
        c->perc
            ? dg_requant_multiplier(
                  sx, sw * (1.0f + 10.0f * (float)o / (float)(c->O - 1)), sy)
            : m;
  npu_conv_desc d = {c->C, c->H, c->W,          c->O,   OH,    OW, c->K, c->K,
                     c->S, c->S, c->pad,        c->pad, c->dw, zx, 0,    zy,
                     m,    0,    NPU_PREC_INT8, false,  0};
  npu_stream s;
  npu_conv_plan p;
  char err[256] = "";
  if (c->perc) {
    d.per_channel = true;
    if (!dg_npu_bs_plan(ms[c->O - 1], &d.multiplier, &d.bs_shift))
      snprintf(err, sizeof err, "no per-channel plan");
  }
  if (err[0] || !dg_npu_gen_conv(&d, &s, err, sizeof err) ||
      !dg_npu_conv_plan_make(&d, &p, err, sizeof err)) {
    printf("| %-26s | FAIL | %s\n", c->name, err);
    return 1;
  }
  size_t xn = (size_t)c->C * c->H * c->W, wn = (size_t)c->O * per * c->K * c->K;
  int8_t *x = malloc(xn), *w = malloc(wn);
  int32_t *bias = malloc((size_t)c->O * 4), *pb = malloc((size_t)c->O * 4);
  uint8_t *in = calloc(1, p.input_bytes), *wt = calloc(1, p.weight_bytes),
          *out = calloc(1, p.output_bytes);
  for (size_t i = 0; i < xn; i++)
    x[i] = (int8_t)rnd(-128, 127);
  for (size_t i = 0; i < wn; i++)
    w[i] = (int8_t)rnd(-127, 127);
  for (int i = 0; i < c->O; i++)
    bias[i] = rnd(-2000, 2000);
  dg_npu_pack_feature_i8(x, c->C, c->H, c->W, (int8_t)zx, in);
  dg_npu_pack_weights_i8(w, c->O, c->C, c->K, c->K, c->dw, 0, wt);
  dg_npu_pack_bias(bias, w, c->O, c->C, c->K, c->K, c->dw, 0, zx, 0, pb);
  /* What BRDMA reads: the int32 biases, or the per-channel groups. */
  uint8_t *bs = calloc(1, p.bias_bytes);
  if (c->perc) {
    int16_t mul[64];
    for (int o = 0; o < c->O; o++)
      mul[o] = dg_npu_bs_mul(ms[o], d.multiplier, d.bs_shift);
    dg_npu_pack_bs_groups(pb, mul, c->O, p.out_channels, bs);
  } else {
    memcpy(bs, pb, p.bias_bytes);
  }
  job_run r;
  int rc = run_job(b, &s, &p, in, wt, (const int32_t *)(void *)bs, out, &r, err,
                   sizeof err);
  int diff = -1;
  long exact = 0, total = 0;
  if (!rc) {
    diff = 0;
    for (int o = 0; o < c->O; o++)
      for (int oy = 0; oy < OH; oy++)
        for (int ox = 0; ox < OW; ox++) {
          int64_t acc = bias[o];
          for (int ci = 0; ci < per; ci++)
            for (int ky = 0; ky < c->K; ky++)
              for (int kx = 0; kx < c->K; kx++) {
                int iy = oy * c->S + ky - c->pad, ix = ox * c->S + kx - c->pad;
                if (iy < 0 || iy >= c->H || ix < 0 || ix >= c->W)
                  continue;
                int ch = c->dw ? o : ci;
                acc += (int64_t)(x[((size_t)ch * c->H + iy) * c->W + ix] - zx) *
                       w[(((size_t)o * per + ci) * c->K + ky) * c->K + kx];
              }
          int ref = dg_requant((int32_t)acc, ms[o], zy, -128, 127);
          int got = (int8_t)out[(size_t)(o / 16) * OH * OW * 16 +
                                ((size_t)oy * OW + ox) * 16 + o % 16];
          int e = abs(got - ref);
          diff = e > diff ? e : diff;
          exact += !e;
          total++;
        }
    if (out_dir) {
      const void *data[4] = {in, wt, bs, out};
      if (save(out_dir, c->name, &s, &r, data))
        printf("# cannot write %s/%s\n", out_dir, c->name);
    }
  }
  free_job(b, &r);
  int bad = rc || diff > 1;
  if (rc)
    printf("| %-26s | FAIL | %s\n", c->name, err);
  else
    printf("| %-26s | %s | max diff %d LSB, %ld/%ld exact\n", c->name,
           bad ? "FAIL" : "pass", diff, exact, total);
  if (diff > *worst)
    *worst = diff;
  free(x), free(w), free(bias), free(pb), free(bs), free(in), free(wt);
  free(out);
  return bad;
}

/* The simulator's output for list s (patched for r's buffers) over the
 * inputs a probe ran on the board: 0, or -1 with err. */
static int sim_reference(const job_run *r, const npu_conv_plan *p,
                         const npu_stream *s, uint8_t *in, uint8_t *wt,
                         int32_t *bias, uint8_t *ref, npu_round round,
                         char *err, size_t n) {
  npu_sim_buffer bufs[4] = {
      {"input", (uint32_t)r->bo[0].iova, p->input_bytes, in, false},
      {"weights", (uint32_t)r->bo[1].iova, p->weight_bytes, wt, false},
      {"biases", (uint32_t)r->bo[2].iova, p->bias_bytes, (uint8_t *)bias,
       false},
      {"output", (uint32_t)r->bo[3].iova, p->output_bytes, ref, true}};
  npu_sim_job job = {s->words, s->count, bufs, 4, round, NPU_POOL_AVG_RECIP};
  return dg_npu_sim_run(&job, err, n);
}

/* Rewrites register reg's value in a generated list. */
static void set_reg(npu_stream *s, npu_reg reg, uint32_t value) {
  for (int i = 0; i < s->count; i++)
    if (npu_word_offset(s->words[i]) == dg_npu_regs[reg].offset &&
        npu_word_target(s->words[i]) ==
            (dg_npu_blocks[dg_npu_regs[reg].block].id | 1))
      s->words[i] = dg_npu_reg_word(reg, value);
}

/* The pad word of the pad-lane probes: a different byte in each of the
 * four, so the output shows which byte each channel lane padded with. */
#define PAD_PROBE_WORD 0x40302010u

/* A probe: a 3x3 conv with registers rewritten, run on the NPU and on the
 * simulator in each rounding mode; prints which modes the device agreed
 * with. pad_lanes: 64 channels of zeros, each output channel reading only
 * its own input channel with weight 1 (depthwise, or direct with identity
 * weights), so an output is the sum of its lane's pads; else 32 channels of
 * small random data, direct. */
static void probe(npu_backend *b, const char *name, const char *what,
                  int pad_lanes, bool dw, uint32_t pad_value, uint32_t scale,
                  uint32_t shift, uint32_t trunc, const char *out_dir) {
  int C = pad_lanes ? 64 : 32;
  npu_conv_desc d = {C,
                     6,
                     6,
                     C,
                     6,
                     6,
                     3,
                     3,
                     1,
                     1,
                     1,
                     1,
                     dw,
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
  char err[256];
  if (!dg_npu_gen_conv(&d, &s, err, sizeof err) ||
      !dg_npu_conv_plan_make(&d, &p, err, sizeof err))
    return;
  if (pad_value)
    set_reg(&s, NPU_CNA_PAD_CON1, pad_value);
  set_reg(&s, NPU_DPU_OUT_CVT_SCALE, scale);
  set_reg(&s, NPU_DPU_OUT_CVT_SHIFT, shift);
  set_reg(&s, NPU_CORE_CLIP_TRUNCATE, trunc);
  uint8_t *in = calloc(1, p.input_bytes), *wt = calloc(1, p.weight_bytes),
          *out = calloc(1, p.output_bytes), *ref = calloc(1, p.output_bytes);
  int per = dw ? 1 : C;
  int8_t *w = malloc((size_t)C * per * 9);
  int32_t bias[64] = {0};
  if (pad_lanes) {
    for (int o = 0; o < C; o++)
      for (int c = 0; c < per; c++)
        for (int k = 0; k < 9; k++)
          w[((size_t)o * per + c) * 9 + k] = (int8_t)(dw || c == o);
    dg_npu_pack_weights_i8(w, C, C, 3, 3, dw, 0, wt);
  } else {
    for (size_t i = 0; i < 32 * 36; i++)
      in[i] = (uint8_t)rnd(-9, 9);
    for (size_t i = 0; i < p.weight_bytes / 2; i++)
      wt[i] = (uint8_t)rnd(-3, 3);
  }
  job_run r;
  int rc = run_job(b, &s, &p, in, wt, bias, out, &r, err, sizeof err);
  const char *modes[3] = {"half-up", "half-away", "half-even"};
  char agree[64] = "";
  for (int m = 0; !rc && m < 3; m++) {
    if (!sim_reference(&r, &p, &s, in, wt, bias, ref, (npu_round)m, err,
                       sizeof err) &&
        !memcmp(ref, out, p.output_bytes))
      snprintf(agree + strlen(agree), sizeof agree - strlen(agree), "%s%s",
               agree[0] ? ", " : "", modes[m]);
  }
  if (rc)
    printf("| %-26s | FAIL | %s\n", name, err);
  else
    printf("| %-26s | info | %s: the simulator agrees with %s\n", name, what,
           agree[0] ? agree : "no rounding mode (report this)");
  if (!rc && pad_lanes) {
    /* Output (0, 1) has three pad taps: 3 x pad / 4 with the probe's
     * scale, so every byte of PAD_PROBE_WORD gives an exact value. */
    char lanes[65];
    for (int c = 0; c < C; c++) {
      int v = (int8_t)out[(size_t)(c / 16) * 36 * 16 + 1 * 16 + c % 16];
      lanes[c] = '?';
      for (int byte = 0; byte < 4; byte++)
        if (v * 4 == 3 * (int)((pad_value >> (8 * byte)) & 0xff))
          lanes[c] = (char)('0' + byte);
    }
    lanes[C] = 0;
    printf("| %-26s | info | byte of PAD_VALUE per lane 0..63: %s\n", name,
           lanes);
  }
  if (!rc && out_dir) {
    const void *data[4] = {in, wt, bias, out};
    save(out_dir, name, &s, &r, data);
  }
  free_job(b, &r);
  free(in), free(wt), free(out), free(ref), free(w);
}

/* The input bank budget (README.md, "Tiling"; docs/npu.md, "Checked
 * against Mesa"): we give the CNA the banks DATA_ENTRIES x rows needs,
 * Mesa half of that (its natural count of 16-channel atoms). A 3x3 conv of
 * 64 channels, 56 wide, 40 rows: 2240 entries, 9 data banks by our rule,
 * 5 by Mesa's; the list is run with Mesa's split (5 data, 7 weight banks),
 * unchecked, and compared with the same conv under our split through the
 * simulator. Equal: Mesa's budget holds and our slices could be twice as
 * tall (half the tasks); different: ours stays. */
static void probe_banks(npu_backend *b, const char *out_dir) {
  const char *name = "probe-data-banks";
  npu_conv_desc d = npu_desc(64, 40, 56, 64, 40, 56, 3, 1, 1);
  npu_stream s, ours;
  npu_conv_plan p;
  char err[256];
  if (!dg_npu_gen_conv(&d, &s, err, sizeof err) ||
      !dg_npu_conv_plan_make(&d, &p, err, sizeof err)) {
    printf("| %-26s | FAIL | %s\n", name, err);
    return;
  }
  ours = s;
  uint32_t banks = 5u | 7u << 4; /* DATA_BANK 5, WEIGHT_BANK 7 */
  set_reg(&s, NPU_CNA_CBUF_CON0, banks);
  uint8_t *in = calloc(1, p.input_bytes), *wt = calloc(1, p.weight_bytes),
          *out = calloc(1, p.output_bytes), *ref = calloc(1, p.output_bytes);
  int32_t *bias = calloc(64, sizeof *bias);
  for (size_t i = 0; i < dg_npu_feature_bytes(64, 40, 56, 1); i++)
    in[i] = (uint8_t)rnd(-20, 20);
  for (size_t i = 0; i < dg_npu_weight_bytes(64, 64, 3, 3, false); i++)
    wt[i] = (uint8_t)rnd(-5, 5);
  job_run r;
  int rc = run_job_as(b, &s, &p, in, wt, bias, out, &r, false, err, sizeof err);
  if (!rc) {
    const uint32_t iova[NPU_BUF_COUNT] = {
        (uint32_t)r.bo[0].iova, (uint32_t)r.bo[1].iova, (uint32_t)r.bo[2].iova,
        (uint32_t)r.bo[3].iova};
    dg_npu_stream_patch(&ours, iova);
    size_t cube = dg_npu_feature_bytes(64, 40, 56, 1), same = 0;
    if (sim_reference(&r, &p, &ours, in, wt, bias, ref, NPU_ROUND_HALF_UP, err,
                      sizeof err))
      printf("| %-26s | FAIL | reference: %s\n", name, err);
    else {
      for (size_t i = 0; i < cube; i++)
        same += ref[i] == out[i];
      printf("| %-26s | info | Mesa's input budget (5 data banks for 2240 "
             "entries): %zu/%zu bytes as with ours%s\n",
             name, same, cube,
             same == cube ? ": it holds, slices could be twice as tall"
                          : ": keep ours");
    }
    if (out_dir) {
      const void *data[4] = {in, wt, bias, out};
      save(out_dir, name, &s, &r, data);
    }
  } else {
    printf("| %-26s | info | Mesa's input budget: %s\n", name, err);
  }
  free_job(b, &r);
  free(in), free(wt), free(out), free(ref), free(bias);
}

/* ---- pooling on the PPU ---- */

typedef struct pool_case {
  const char *name;
  npu_pool_method method;
  int C, H, W, K, S, pad;
} pool_case;

static const pool_case pools[] = {
    {"pool-max-2x2-s2-c16", NPU_POOL_MAX, 16, 8, 8, 2, 2, 0},
    {"pool-max-3x3-s2-pad1-c40", NPU_POOL_MAX, 40, 15, 15, 3, 2, 1},
    {"pool-avg-2x2-s2-c8", NPU_POOL_AVG, 8, 8, 8, 2, 2, 0},
    {"pool-avg-3x3-s1-c24", NPU_POOL_AVG, 24, 9, 9, 3, 1, 0},
    {"pool-avg-3x3-s1-pad1-c16", NPU_POOL_AVG, 16, 7, 7, 3, 1, 1},
};
static const char *pool_names[2] = {"input", "output"};

static npu_pool_desc pool_desc(const pool_case *c, int pad_value) {
  npu_pool_desc d = {.method = c->method,
                     .c = c->C,
                     .in_h = c->H,
                     .in_w = c->W,
                     .k_h = c->K,
                     .k_w = c->K,
                     .stride_y = c->S,
                     .stride_x = c->S,
                     .pad_top = c->pad,
                     .pad_left = c->pad,
                     .pad_bottom = c->pad,
                     .pad_right = c->pad,
                     .pad_value = pad_value};
  d.out_h = npu_pool_out_dim(c->H, c->K, c->S, c->pad, c->pad);
  d.out_w = npu_pool_out_dim(c->W, c->K, c->S, c->pad, c->pad);
  return d;
}

/* Runs a pooling list on the backend: in -> out (cubes of the plan's
 * sizes). checked: decoded and validated first (the int8 probe's list is
 * outside what the simulator models, so it goes unchecked). */
static int run_pool_job(npu_backend *b, npu_stream *s, const npu_pool_plan *p,
                        const uint8_t *in, uint8_t *out, npu_bo bo[3],
                        bool checked, char *err, size_t n) {
  const npu_backend_ops *o = b->ops;
  size_t sizes[3] = {p->input_bytes, p->output_bytes, (size_t)s->count * 8};
  memset(bo, 0, 3 * sizeof *bo);
  for (int i = 0; i < 3; i++)
    if (o->bo_alloc(b, sizes[i], &bo[i], err, n))
      return -1;
  const uint32_t iova[NPU_BUF_COUNT] = {[NPU_BUF_INPUT] = (uint32_t)bo[0].iova,
                                        [NPU_BUF_OUTPUT] =
                                            (uint32_t)bo[1].iova};
  dg_npu_stream_patch(s, iova);
  const void *src[3] = {in, NULL, s->words};
  for (int i = 0; i < 3; i++) {
    if (o->cpu_begin(b, &bo[i], err, n))
      return -1;
    if (src[i])
      memcpy(bo[i].map, src[i], sizes[i]);
    if (o->cpu_end(b, &bo[i], err, n))
      return -1;
  }
  npu_bo *ins[1] = {&bo[0]}, *outs[1] = {&bo[1]};
  npu_job job = {&bo[2], s->count, ins, 1, outs, 1, NULL, 0, 0};
  if ((checked && dg_npu_job_check(&job, err, n)) ||
      o->submit(b, &job, err, n) || o->wait(b, &job, b->timeout_ms, err, n) ||
      o->cpu_begin(b, &bo[1], err, n))
    return -1;
  memcpy(out, bo[1].map, p->output_bytes);
  return o->cpu_end(b, &bo[1], err, n);
}

static void free_bos(npu_backend *b, npu_bo *bo, int count) {
  for (int i = 0; i < count; i++)
    if (bo[i].map)
      b->ops->bo_free(b, &bo[i]);
}

static uint16_t cube_f16(const uint8_t *cube, int ch, int y, int x, int h,
                         int w) {
  size_t i = ((((size_t)(ch / 8) * h + y) * w + x) * 8 + ch % 8) * 2;
  return (uint16_t)(cube[i] | cube[i + 1] << 8);
}

/* Max: exact; average: count_include_pad with the pad value, rounded half
 * to even; both in the signed int8 domain. */
static int pool_reference(const npu_pool_desc *d, const int8_t *x, int ch,
                          int oy, int ox) {
  double acc = d->method == NPU_POOL_MAX ? -1e9 : 0;
  for (int ky = 0; ky < d->k_h; ky++)
    for (int kx = 0; kx < d->k_w; kx++) {
      int iy = oy * d->stride_y + ky - d->pad_top;
      int ix = ox * d->stride_x + kx - d->pad_left;
      bool in = iy >= 0 && iy < d->in_h && ix >= 0 && ix < d->in_w;
      double v =
          in ? x[((size_t)ch * d->in_h + iy) * d->in_w + ix] : d->pad_value;
      if (d->method == NPU_POOL_AVG)
        acc += v;
      else if (in && v > acc)
        acc = v;
    }
  return d->method == NPU_POOL_MAX ? (int)acc
                                   : (int)nearbyint(acc / (d->k_h * d->k_w));
}

static int pool_case_run(npu_backend *b, const pool_case *c,
                         const char *out_dir, int *worst) {
  npu_pool_desc d = pool_desc(c, rnd(-10, 10));
  npu_stream s;
  npu_pool_plan p;
  char err[256];
  if (!dg_npu_gen_pool(&d, &s, err, sizeof err) ||
      !dg_npu_pool_plan_make(&d, &p, err, sizeof err)) {
    printf("| %-26s | FAIL | %s\n", c->name, err);
    return 1;
  }
  size_t xn = (size_t)c->C * c->H * c->W;
  int8_t *x = malloc(xn);
  uint16_t *xf = malloc(xn * 2);
  uint8_t *in = calloc(1, p.input_bytes), *out = calloc(1, p.output_bytes);
  for (size_t i = 0; i < xn; i++) {
    x[i] = (int8_t)rnd(-128, 127);
    xf[i] = dg_f32_to_f16((float)x[i]);
  }
  dg_npu_pack_feature_f16(xf, c->C, c->H, c->W, 0, in);
  npu_bo bo[3];
  int rc = run_pool_job(b, &s, &p, in, out, bo, true, err, sizeof err);
  int diff = -1;
  long exact = 0, total = 0;
  if (!rc) {
    diff = 0;
    for (int ch = 0; ch < c->C; ch++)
      for (int oy = 0; oy < d.out_h; oy++)
        for (int ox = 0; ox < d.out_w; ox++) {
          int got =
              dg_npu_pool_narrow(cube_f16(out, ch, oy, ox, d.out_h, d.out_w));
          int e = abs(got - pool_reference(&d, x, ch, oy, ox));
          diff = e > diff ? e : diff;
          exact += !e;
          total++;
        }
    if (out_dir) {
      const void *data[2] = {in, out};
      if (save_n(out_dir, c->name, &s, bo, pool_names, 2, data))
        printf("# cannot write %s/%s\n", out_dir, c->name);
    }
  }
  free_bos(b, bo, 3);
  int bad = rc || diff > (c->method == NPU_POOL_MAX ? 0 : 1);
  if (rc)
    printf("| %-26s | FAIL | %s\n", c->name, err);
  else
    printf("| %-26s | %s | max diff %d LSB, %ld/%ld exact\n", c->name,
           bad ? "FAIL" : "pass", diff, exact, total);
  if (diff > *worst)
    *worst = diff;
  free(x), free(xf), free(in), free(out);
  return bad;
}

/* Which simulator variants reproduce out byte for byte: the two average
 * models, and (pad_probe) the pad value counted or not. */
static void sim_agree(const npu_stream *s, const npu_pool_plan *p,
                      const npu_bo *bo, uint8_t *in, const uint8_t *out,
                      bool pad_probe, char *agree, size_t n) {
  static const char *labels[2][2] = {
      {"recip model", "exact model"},
      {"pad taps add PADDING_VALUE", "pad taps add 0"}};
  uint8_t *ref = calloc(1, p->output_bytes);
  npu_stream v = *s;
  agree[0] = 0;
  for (int m = 0; ref && m < 2; m++) {
    if (pad_probe && m == 1)
      for (int i = 0; i < v.count; i++)
        if (npu_word_offset(v.words[i]) ==
            dg_npu_regs[NPU_PPU_PADDING_VALUE_1_CFG].offset)
          v.words[i] = dg_npu_reg_word(NPU_PPU_PADDING_VALUE_1_CFG, 0);
    npu_sim_buffer bufs[2] = {
        {"input", (uint32_t)bo[0].iova, p->input_bytes, in, false},
        {"output", (uint32_t)bo[1].iova, p->output_bytes, ref, true}};
    npu_sim_job job = {v.words,
                       v.count,
                       bufs,
                       2,
                       NPU_ROUND_HALF_UP,
                       pad_probe ? NPU_POOL_AVG_RECIP : (npu_pool_avg)m};
    char err[256];
    if (!dg_npu_sim_run(&job, err, sizeof err) &&
        !memcmp(ref, out, p->output_bytes))
      snprintf(agree + strlen(agree), n - strlen(agree), "%s%s",
               agree[0] ? ", " : "", labels[pad_probe][m]);
  }
  free(ref);
}

/* An fp16 average over non-integer inputs, where the average models
 * differ in the last bits (pad_probe: with padding and a pad value of 5). */
static void pool_probe(npu_backend *b, const char *name, bool pad_probe,
                       const char *out_dir) {
  pool_case c = {name, NPU_POOL_AVG, 16, 9, 9, 3, 1, pad_probe ? 1 : 0};
  npu_pool_desc d = pool_desc(&c, 5);
  npu_stream s;
  npu_pool_plan p;
  char err[256], agree[96];
  if (!dg_npu_gen_pool(&d, &s, err, sizeof err) ||
      !dg_npu_pool_plan_make(&d, &p, err, sizeof err))
    return;
  size_t xn = (size_t)c.C * c.H * c.W;
  uint16_t *xf = malloc(xn * 2);
  uint8_t *in = calloc(1, p.input_bytes), *out = calloc(1, p.output_bytes);
  for (size_t i = 0; i < xn; i++)
    xf[i] = dg_f32_to_f16((float)rnd(-2000, 2000) / 16.0f);
  dg_npu_pack_feature_f16(xf, c.C, c.H, c.W, 0, in);
  npu_bo bo[3];
  int rc = run_pool_job(b, &s, &p, in, out, bo, true, err, sizeof err);
  if (rc) {
    printf("| %-26s | FAIL | %s\n", name, err);
  } else {
    sim_agree(&s, &p, bo, in, out, pad_probe, agree, sizeof agree);
    printf("| %-26s | info | %s: the device agrees with %s\n", name,
           pad_probe ? "average over padded taps" : "average arithmetic",
           agree[0] ? agree : "no simulator variant (report this)");
    if (out_dir) {
      const void *data[2] = {in, out};
      save_n(out_dir, name, &s, bo, pool_names, 2, data);
    }
  }
  free_bos(b, bo, 3);
  free(xf), free(in), free(out);
}

/* Native int8 pooling: precision code 0 on an int8 C2 = 16 cube, PPU_RDMA
 * precision 0 and 1 (one source says the first reads garbage, another
 * that the second pools bit-exactly). Unchecked: the simulator models
 * fp16 only. Reports whether the max matches the int8 reference. */
static void int8_probe(npu_backend *b, uint32_t rdma_precision) {
  char name[40];
  snprintf(name, sizeof name, "probe-pool-int8-rdma%u", rdma_precision);
  if (b->is_simulator) {
    printf("| %-26s | info | native int8 pooling: not modelled by the "
           "simulator\n",
           name);
    return;
  }
  pool_case c = {name, NPU_POOL_MAX, 32, 8, 8, 2, 2, 0};
  npu_pool_desc d = pool_desc(&c, 0);
  npu_stream s;
  npu_pool_plan p; /* fp16 sizes: twice what the int8 cubes need */
  char err[256];
  if (!dg_npu_gen_pool(&d, &s, err, sizeof err) ||
      !dg_npu_pool_plan_make(&d, &p, err, sizeof err))
    return;
  set_reg(&s, NPU_PPU_DATA_FORMAT, (uint32_t)(d.out_w * d.out_h) << 4);
  set_reg(&s, NPU_PPU_RDMA_DATA_FORMAT, rdma_precision);
  size_t xn = (size_t)c.C * c.H * c.W;
  int8_t *x = malloc(xn);
  uint8_t *in = calloc(1, p.input_bytes), *out = calloc(1, p.output_bytes);
  for (size_t i = 0; i < xn; i++)
    x[i] = (int8_t)rnd(-128, 127);
  dg_npu_pack_feature_i8(x, c.C, c.H, c.W, 0, in);
  npu_bo bo[3];
  int rc = run_pool_job(b, &s, &p, in, out, bo, false, err, sizeof err);
  long match = 0, total = 0;
  for (int ch = 0; !rc && ch < c.C; ch++)
    for (int oy = 0; oy < d.out_h; oy++)
      for (int ox = 0; ox < d.out_w; ox++, total++)
        match += (int8_t)out[(size_t)(ch / 16) * d.out_h * d.out_w * 16 +
                             ((size_t)oy * d.out_w + ox) * 16 + ch % 16] ==
                 pool_reference(&d, x, ch, oy, ox);
  if (rc)
    printf("| %-26s | info | native int8 pooling failed: %s\n", name, err);
  else
    printf("| %-26s | info | native int8 max: %ld/%ld outputs equal the int8 "
           "reference\n",
           name, match, total);
  free_bos(b, bo, 3);
  free(x), free(in), free(out);
}

/* The PPU part of the check; pooling never runs on rocket (docs/npu.md,
 * "rocket"). */
static int pool_checks(npu_backend *b, const char *out_dir) {
  if (!strcmp(b->ops->name, "rocket")) {
    printf("| %-26s | info | skipped: rocket completes jobs on the DPU "
           "interrupt only\n",
           "pooling");
    return 0;
  }
  int bad = 0, worst = 0;
  for (size_t i = 0; i < sizeof pools / sizeof pools[0]; i++)
    bad += pool_case_run(b, &pools[i], out_dir, &worst);
  pool_probe(b, "probe-pool-avg-model", false, out_dir);
  pool_probe(b, "probe-pool-avg-pad", true, out_dir);
  int8_probe(b, 0);
  int8_probe(b, 1);
  printf("# pooling: worst %d LSB\n", worst);
  return bad;
}

/* --replay: every golden set through the simulator, byte for byte. */
static int replay_one(const char *dir, const char *name) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s/regcmd.txt", dir, name);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  static uint64_t words[1024];
  int count = 0;
  unsigned t, v, reg;
  while (count < 1024 && fscanf(f, "%x %x %x", &t, &v, &reg) == 3)
    words[count++] = npu_word((uint16_t)t, v, (uint16_t)reg);
  fclose(f);
  snprintf(path, sizeof path, "%s/%s/buffers.txt", dir, name);
  /* Conv sets list input, weights, biases, output; pooling sets input
   * and output. The one named output is compared. */
  npu_sim_buffer bufs[4];
  char bnames[4][32];
  uint8_t *data[5] = {0};
  int nb = 0, outi = -1;
  int ok = (f = fopen(path, "r")) != NULL;
  unsigned long long iova;
  size_t size;
  while (ok && nb < 4 &&
         fscanf(f, "%31s %llx %zu", bnames[nb], &iova, &size) == 3) {
    ok = size < (1u << 28) && (data[nb] = calloc(1, size));
    if (!ok)
      break;
    bool is_out = !strcmp(bnames[nb], "output");
    bufs[nb] =
        (npu_sim_buffer){bnames[nb], (uint32_t)iova, size, data[nb], is_out};
    char bin[1300];
    snprintf(bin, sizeof bin, "%s/%s/%s.bin", dir, name, bnames[nb]);
    FILE *g = fopen(bin, "rb");
    if (!is_out)
      ok = g && fread(data[nb], 1, size, g) == size;
    else if ((data[4] = calloc(1, size))) {
      ok = g && fread(data[4], 1, size, g) == size;
      outi = nb;
    }
    if (g)
      fclose(g);
    nb++;
  }
  if (f)
    fclose(f);
  char err[256] = "";
  npu_sim_job job = {words,
                     count,
                     bufs,
                     nb,
                     dg_npu_sim_round_default(),
                     dg_npu_sim_pool_avg_default()};
  ok = ok && outi >= 0 && !dg_npu_sim_run(&job, err, sizeof err) &&
       !memcmp(data[outi], data[4], bufs[outi].size);
  printf("| %-26s | %s | replayed through the simulator %s\n", name,
         ok ? "pass" : "FAIL", err);
  for (int i = 0; i < 5; i++)
    free(data[i]);
  return ok ? 0 : 1;
}

/* The help: the one place that lists the options. */
static void usage(FILE *f) {
  fputs(
      "usage: npu-hw-check [--out DIR | --replay DIR]\n"
      "\n"
      "For anyone with an RK3588 board: runs a fixed set of int8\n"
      "convolutions and pooling cases on the NPU and on the CPU reference\n"
      "of the numerics contract and prints a pass/fail table, with probes\n"
      "of what the simulator can only assume (OUT_CVT ties, pad lanes,\n"
      "CLIP_TRUNCATE rounding, the PPU's average model and int8 pooling).\n"
      "The NPU is the backend DG_NPU_DEVICE names (rocket, rknpu, a /dev\n"
      "path, or sim), else the one discovery finds.\n"
      "\n"
      "  --out DIR     also write every case as a golden set, one folder per\n"
      "                case under DIR (regcmd.txt, buffers.txt, input.bin,\n"
      "                weights.bin, biases.bin, output.bin)\n"
      "  --replay DIR  use no NPU: check the golden sets under DIR byte for\n"
      "                byte through the simulator\n"
      "  -h, --help    print this help and exit\n"
      "\n"
      "Examples:\n"
      "  npu-hw-check --out golden     on a board, keeping the golden sets\n"
      "  npu-hw-check --replay golden  anywhere, through the simulator\n"
      "\n"
      "Environment: DG_NPU_DEVICE (rocket, rknpu, a /dev path or sim).\n"
      "Exit status: 0 every matrix case within 1 LSB (probes report, they\n"
      "do not fail), 1 a case failed, 2 a bad argument or no NPU.\n",
      f);
}

int main(int argc, char **argv) {
  static const char P[] = "npu-hw-check";
  const char *out_dir = NULL, *replay = NULL;
  for (int i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--out")) {
      if (!(out_dir = cli_value(P, argc, argv, &i, "DIR")))
        return CLI_USAGE;
    } else if (!strcmp(argv[i], "--replay")) {
      if (!(replay = cli_value(P, argc, argv, &i, "DIR")))
        return CLI_USAGE;
    } else {
      return cli_unknown(P, argv[i]);
    }
  }
  /* --replay runs no NPU, so there would be nothing to write. */
  if (out_dir && replay) {
    fprintf(stderr,
            "%s: --out and --replay exclude each other: --out DIR "
            "records a board's run, --replay DIR checks one\n",
            P);
    return CLI_USAGE;
  }
  const char *probes[4] = {"probe-ties", "probe-pad-lanes",
                           "probe-pad-lanes-direct", "probe-truncate"};
  int bad = 0;
  printf("| case                       | ok   | detail\n");
  if (replay) {
    for (size_t i = 0; i < sizeof matrix / sizeof matrix[0]; i++)
      bad += replay_one(replay, matrix[i].name) != 0;
    for (int i = 0; i < 4; i++)
      bad += replay_one(replay, probes[i]) != 0;
    /* Pooling sets exist only where the backend ran them (not rocket). */
    char path[1200];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", replay, pools[0].name);
    bool have_pools = stat(path, &st) == 0;
    for (size_t i = 0; have_pools && i < sizeof pools / sizeof pools[0]; i++)
      bad += replay_one(replay, pools[i].name) != 0;
    if (have_pools) {
      bad += replay_one(replay, "probe-pool-avg-model") != 0;
      bad += replay_one(replay, "probe-pool-avg-pad") != 0;
    }
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
  }
  char err[256];
  npu_backend *b =
      dg_npu_backend_open(getenv("DG_NPU_DEVICE"), err, sizeof err);
  if (!b) {
    fprintf(stderr,
            "npu-hw-check: no NPU: %s (set DG_NPU_DEVICE=rocket, "
            "rknpu, a /dev path, or sim)\n",
            err);
    return 2;
  }
  printf("# device: %s\n", b->driver);
  int worst = 0;
  for (size_t i = 0; i < sizeof matrix / sizeof matrix[0]; i++)
    bad += matrix_case(b, &matrix[i], out_dir, &worst);
  /* Ties: SCALE 2^14, SHIFT 15 is a multiplier of exactly 1/2, so every
   * odd accumulator lands on .5 (Mesa's odd scales never tie). */
  probe(b, probes[0], "OUT_CVT ties (x.5)", 0, false, 0, 1u << 14, 15, 0,
        out_dir);
  /* Pad lanes (README, findings): with four distinct pad bytes, the model
   * has lanes 0..31 of a 64-lane group read byte (lane & 1) and lanes
   * 32..63 byte 0, i.e. 0101...01 then 0000...00. Multiplier 1/4. Measured
   * for depthwise (the Teflon capture); direct mode is the inference. */
  probe(b, probes[1], "pad lanes, depthwise", 1, true, PAD_PROBE_WORD, 1u << 14,
        16, 0, out_dir);
  probe(b, probes[2], "pad lanes, direct", 1, false, PAD_PROBE_WORD, 1u << 14,
        16, 0, out_dir);
  /* CLIP_TRUNCATE 3 before the DPU: how its right shift rounds. */
  probe(b, probes[3], "CLIP_TRUNCATE rounding", 0, false, 0, 1u << 14, 14, 3,
        out_dir);
  probe_banks(b, out_dir);
  bad += pool_checks(b, out_dir);
  dg_npu_backend_close(b);
  bad += npu_hw_lib_cases(getenv("DG_NPU_DEVICE"));
  printf("# matrix: worst %d LSB; %s\n", worst, bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
