/* The ONNX importer's int8 folds (src/front/onnx/onnx_qdq_ops.c, the conv
 * fold's Clip in onnx_qdq.c) on small QDQ models written in C: a float
 * input, QuantizeLinear -> DequantizeLinear, the op under test, then
 * QuantizeLinear -> DequantizeLinear -> the output, as ONNX Runtime's
 * quantiser writes them. Each model is checked twice on the CPU:
 *
 * - its plan holds the int8 op the fold should build and one quantize
 *   per input and one dequantize per output, nothing float between;
 * - its output equals, bit for bit, that of a graph built directly with
 *   the int8 builder calls for the same computation, on random inputs:
 *   an attribute the translator drops or mixes up (alpha, pads, strides,
 *   count_include_pad, axis, Sub's operand order) or a Q/DQ parameter
 *   read from the wrong node changes some output. Every Q/DQ pair has
 *   its own scale and zero point so that a mixed-up parameter shows.
 *
 * Chains that must not fold (a per-channel QuantizeLinear, an int32 one,
 * an op output with another reader, a 1-D AveragePool) are checked the
 * same way against the float graph the importer should build for them:
 * quantize, dequantize, the float op, quantize, dequantize. */
#include "graph.h"
#include "harness.h"
#include "onnx_graph_writer.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPSET 17         /* HardSwish needs 14; PyTorch exports 17 */
#define END DG_OP_COUNT_ /* ends an expected op list */
#define MAX_FEED 2
#define MAX_OUT 3
#define MAX_VALUES 4096

/* One per-tensor quantisation: a Q/DQ pair's parameters. */
typedef struct qp {
  dg_dtype dt; /* U8, I8 (I32 for the case that must not fold) */
  float scale;
  int32_t zp;
} qp;

static dg_quant_params quant(qp q) {
  return (dg_quant_params){.scale = q.scale, .zero_point = q.zp};
}

static int elem_of(dg_dtype dt) {
  return dt == DG_DTYPE_I8   ? ONNX_INT8
         : dt == DG_DTYPE_U8 ? ONNX_UINT8
                             : ONNX_INT32;
}

/* A zero point initializer of q's dtype (count values, rank 0 for one). */
static void zero_init(model *m, const char *name, dg_dtype dt,
                      const int32_t *zp, int count) {
  int8_t i8[16];
  uint8_t u8[16];
  const void *data = zp;
  for (int i = 0; i < count; i++) {
    i8[i] = (int8_t)zp[i];
    u8[i] = (uint8_t)zp[i];
  }
  if (dt == DG_DTYPE_I8)
    data = i8;
  else if (dt == DG_DTYPE_U8)
    data = u8;
  int64_t n = count;
  initializer(m, name, elem_of(dt), count > 1 ? 1 : 0, &n, data);
}

/* in -> QuantizeLinear -> DequantizeLinear -> out, the pair sharing the
 * initializers <out>.s and <out>.z; count > 1: per channel along axis. */
static void onnx_qdq_n(model *m, const char *in, const char *out, dg_dtype dt,
                       const float *scales, const int32_t *zps, int count,
                       int axis) {
  char s[64], z[64], q[64], qn[64], dqn[64];
  snprintf(s, sizeof s, "%s.s", out);
  snprintf(z, sizeof z, "%s.z", out);
  snprintf(q, sizeof q, "%s.q", out);
  snprintf(qn, sizeof qn, "%s/Q", out);
  snprintf(dqn, sizeof dqn, "%s/DQ", out);
  int64_t n = count;
  initializer(m, s, ONNX_FLOAT, count > 1 ? 1 : 0, &n, scales);
  zero_init(m, z, dt, zps, count);
  node_begin(m, "QuantizeLinear", qn, (const char *const[]){in, s, z, NULL},
             (const char *const[]){q, NULL});
  if (count > 1)
    attr_int(m, "axis", axis);
  node_end(m);
  node_begin(m, "DequantizeLinear", dqn, (const char *const[]){q, s, z, NULL},
             (const char *const[]){out, NULL});
  if (count > 1)
    attr_int(m, "axis", axis);
  node_end(m);
}

static void onnx_qdq(model *m, const char *in, const char *out, qp q) {
  onnx_qdq_n(m, in, out, q.dt, &q.scale, &q.zp, 1, 0);
}

/* ---- a case: the model and its reference graph, built side by side ---- */

typedef struct qcase {
  model m;
  dg_graph *g; /* the reference */
  int nfeed;
  char feed[MAX_FEED][8];
  float lo[MAX_FEED], hi[MAX_FEED]; /* the inputs' random range */
} qcase;

static void case_begin(qcase *c) {
  memset(c, 0, sizeof *c);
  graph_begin(&c->m, OPSET);
  c->g = dg_graph_create(ctx, "reference");
}

/* Float input name of dims in both graphs; random values a little past
 * q's range, so that the quantize saturates on some. In the model it goes
 * through its Q/DQ pair to "<name>d"; the reference's int8 tensor is
 * returned. */
static dg_tensor case_input(qcase *c, const char *name, int rank,
                            const int64_t *dims, qp q) {
  graph_input(&c->m, name, ONNX_FLOAT, rank, dims);
  char out[16];
  snprintf(out, sizeof out, "%sd", name);
  onnx_qdq(&c->m, name, out, q);
  int k = c->nfeed++;
  snprintf(c->feed[k], sizeof c->feed[k], "%s", name);
  int lo = q.dt == DG_DTYPE_I8 ? -128 : 0;
  c->lo[k] = 1.1f * (float)(lo - q.zp) * q.scale;
  c->hi[k] = 1.1f * (float)(lo + 255 - q.zp) * q.scale;
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = rank};
  memcpy(d.dims, dims, sizeof(int64_t) * (size_t)rank);
  dg_tensor x = dg_graph_input(c->g, name, &d);
  dg_quant_params qq = quant(q);
  return dg_graph_quantize(c->g, NULL, x, q.dt, &qq);
}

/* The same input seen in float: the reference dequantizes it. */
static dg_tensor case_input_f(qcase *c, const char *name, int rank,
                              const int64_t *dims, qp q) {
  return dg_graph_dequantize(c->g, NULL, case_input(c, name, rank, dims, q));
}

/* Output out: in the model, value t through a Q/DQ pair of q; in the
 * reference, the int8 result r (made with q) dequantized. */
static void case_output(qcase *c, const char *out, const char *t, dg_tensor r,
                        qp q) {
  onnx_qdq(&c->m, t, out, q);
  graph_output(&c->m, out);
  dg_graph_output(c->g, out, dg_graph_dequantize(c->g, NULL, r),
                  DG_LAYOUT_NCHW);
}

/* The same for a float result r, quantized with q in the reference. */
static void case_output_f(qcase *c, const char *out, const char *t, dg_tensor r,
                          qp q) {
  dg_quant_params qq = quant(q);
  case_output(c, out, t, dg_graph_quantize(c->g, NULL, r, q.dt, &qq), q);
}

/* One node of the model: op over inputs, giving output out. */
static void op_begin(qcase *c, const char *op, const char *const *inputs,
                     const char *out) {
  node_begin(&c->m, op, op, inputs, (const char *const[]){out, NULL});
}

static void plan_ops(const dg_session *s, char *buf, size_t size,
                     int count[DG_OP_COUNT_ + 1]) {
  const dg_plan *plan = dg_session_plan(s);
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < dg_plan_node_count(plan); i++) {
    dg_plan_node pn;
    if (dg_plan_get_node(plan, i, &pn) != DG_OK)
      continue;
    count[pn.op < DG_OP_COUNT_ ? pn.op : DG_OP_COUNT_]++;
    if (len < size)
      len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " " : "",
                              dg_op_name(pn.op));
  }
}

static void ops_string(const dg_op *ops, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; ops[i] != END && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " " : "",
                            dg_op_name(ops[i]));
}

/* Compiles g on the CPU. */
static dg_session *compile_cpu(dg_graph *g, dg_diagnostic *d) {
  int cpu = 0;
  dg_compile_options o = {.devices = &cpu, .device_count = 1};
  dg_session *s = NULL;
  return dg_graph_compile(g, &o, &s, d) == DG_OK ? s : NULL;
}

/* The plan's ops must be want's, in any order. */
static void check_plan(const char *what, const dg_session *s,
                       const dg_op *want) {
  int got[DG_OP_COUNT_ + 1] = {0}, exp[DG_OP_COUNT_ + 1] = {0};
  char gs[512], ws[512];
  plan_ops(s, gs, sizeof gs, got);
  for (int i = 0; want[i] != END; i++)
    exp[want[i]]++;
  ops_string(want, ws, sizeof ws);
  CHECK(!memcmp(got, exp, sizeof got), "%s: plan is {%s} (got {%s})", what, ws,
        gs);
}

static size_t elems(const dg_tensor_desc *d) {
  size_t n = 1;
  for (int i = 0; i < d->rank; i++)
    n *= (size_t)d->dims[i];
  return n;
}

/* Runs both sessions on the same random inputs: every output of s must
 * equal the reference rs's bit for bit, and vary. */
static void check_outputs(const char *what, const qcase *c, dg_session *s,
                          dg_session *rs) {
  static float in[MAX_FEED][MAX_VALUES], y[MAX_OUT][MAX_VALUES],
      ry[MAX_OUT][MAX_VALUES];
  dg_binding bin[MAX_FEED], bout[MAX_OUT], rbout[MAX_OUT];
  dg_io_info a, b;
  bool ok = true;
  for (int k = 0; k < c->nfeed && ok; k++) { /* declared in feed order */
    ok = dg_session_input_info(rs, k, &a) == DG_OK &&
         elems(&a.desc) <= MAX_VALUES;
    for (size_t i = 0; ok && i < elems(&a.desc); i++)
      in[k][i] = t_uniform(c->lo[k], c->hi[k]);
    bin[k] = (dg_binding){c->feed[k], in[k], elems(&a.desc) * sizeof(float)};
  }
  int nout = dg_session_output_count(rs);
  size_t n[MAX_OUT] = {0};
  ok = ok && nout == dg_session_output_count(s) && nout <= MAX_OUT;
  for (int k = 0; ok && k < nout; k++) {
    ok = dg_session_output_info(rs, k, &a) == DG_OK &&
         dg_session_output_info(s, k, &b) == DG_OK && !strcmp(a.name, b.name) &&
         a.desc.rank == b.desc.rank &&
         !memcmp(a.desc.dims, b.desc.dims,
                 sizeof(int64_t) * (size_t)a.desc.rank) &&
         elems(&a.desc) <= MAX_VALUES;
    n[k] = elems(&a.desc);
    bout[k] = (dg_binding){a.name, y[k], n[k] * sizeof(float)};
    rbout[k] = (dg_binding){a.name, ry[k], n[k] * sizeof(float)};
  }
  CHECK(ok, "%s: outputs have the reference's names and shapes", what);
  if (!ok)
    return;
  dg_diagnostic d = {0}, rd = {0};
  dg_status st = dg_session_run(s, bin, c->nfeed, bout, nout, &d);
  dg_status rst = dg_session_run(rs, bin, c->nfeed, rbout, nout, &rd);
  int bad = 0, first = -1, first_k = 0, distinct = 0;
  for (int k = 0; st == DG_OK && rst == DG_OK && k < nout; k++)
    for (size_t i = 0; i < n[k]; i++)
      if (memcmp(&y[k][i], &ry[k][i], sizeof(float)) && !bad++) {
        first = (int)i;
        first_k = k;
      }
  /* the distinct values among the first output's first 64 */
  for (size_t i = 0; st == DG_OK && rst == DG_OK && i < n[0] && i < 64; i++) {
    bool seen = false;
    for (size_t j = 0; j < i && !seen; j++)
      seen = ry[0][j] == ry[0][i];
    distinct += !seen;
  }
  char why[1100] = "";
  if (st != DG_OK || rst != DG_OK)
    snprintf(why, sizeof why, " (%s%s)", st ? d.message : "",
             rst ? rd.message : "");
  else if (bad)
    snprintf(why, sizeof why, " (%d differ, the first %s[%d]: %g, not %g)", bad,
             bout[first_k].name, first, (double)y[first_k][first],
             (double)ry[first_k][first]);
  CHECK(st == DG_OK && rst == DG_OK && !bad,
        "%s: output equals the reference bit for bit%s", what, why);
  /* A constant output would compare equal whatever went wrong. */
  CHECK(distinct >= 3, "%s: the output varies (%d distinct values)", what,
        distinct);
}

/* Loads the model and compiles it and the reference on the CPU, then
 * checks the model's plan against want and its outputs against the
 * reference's; frees both. */
static void case_run(qcase *c, const char *what, const dg_op *want) {
  dg_graph *g = NULL;
  dg_diagnostic d = {0}, rd = {0};
  dg_status st = load_graph(&c->m, &g, &d);
  dg_session *s = st == DG_OK ? compile_cpu(g, &d) : NULL;
  dg_session *rs =
      dg_graph_status(c->g) == DG_OK ? compile_cpu(c->g, &rd) : NULL;
  if (!rs && dg_graph_status(c->g) != DG_OK)
    rd = *dg_graph_error(c->g);
  CHECK(s && rs, "%s: imports and compiles%s%s%s%s", what, s && rs ? "" : " (",
        s ? "" : d.message, rs ? "" : rd.message, s && rs ? "" : ")");
  dg_graph_destroy(g);
  dg_graph_destroy(c->g);
  if (s && rs) {
    check_plan(what, s, want);
    check_outputs(what, c, s, rs);
  }
  dg_session_destroy(s);
  dg_session_destroy(rs);
}

/* ---- the folds ---- */

static const int64_t X4[4] = {2, 3, 5, 6};

/* x (dims a, rank 4) op x2 (dims b of rank_b) [-> Relu] -> Q: qbinary [and a
 * relu lookup]. */
static void binary(const char *what, const char *op, dg_binary_fn fn,
                   const int64_t *a, int rank_b, const int64_t *b, qp qa, qp qb,
                   qp qy, bool relu) {
  qcase c;
  case_begin(&c);
  dg_tensor x = case_input(&c, "x", 4, a, qa);
  dg_tensor x2 = case_input(&c, "x2", rank_b, b, qb);
  op_begin(&c, op, (const char *const[]){"xd", "x2d", NULL}, relu ? "s" : "t");
  node_end(&c.m);
  if (relu) {
    node_begin(&c.m, "Relu", "relu", (const char *const[]){"s", NULL},
               (const char *const[]){"t", NULL});
    node_end(&c.m);
  }
  dg_quant_params yq = quant(qy);
  dg_tensor r = dg_graph_qbinary(c.g, NULL, fn, x, x2, qy.dt, &yq);
  if (relu)
    r = dg_graph_qunary(c.g, NULL, DG_UNARY_RELU, r, 0, 0, qy.dt, &yq);
  case_output(&c, "y", "t", r, qy);
  const dg_op plain[] = {DG_OP_QUANTIZE, DG_OP_QUANTIZE, DG_OP_QBINARY,
                         DG_OP_DEQUANTIZE, END},
              with_relu[] = {DG_OP_QUANTIZE, DG_OP_QUANTIZE,   DG_OP_QBINARY,
                             DG_OP_LOOKUP,   DG_OP_DEQUANTIZE, END};
  case_run(&c, what, relu ? with_relu : plain);
}

/* x * DequantizeLinear(an int8 initializer [1,3,1,1]): a quantised
 * constant operand, as the quantiser writes a model's weights. */
static void mul_by_constant(void) {
  qcase c;
  qp qa = {DG_DTYPE_U8, 0.043f, 119}, qy = {DG_DTYPE_I8, 0.029f, 11};
  case_begin(&c);
  dg_tensor x = case_input(&c, "x", 4, X4, qa);
  const int64_t kd[4] = {1, 3, 1, 1};
  const int8_t k[3] = {-90, 37, 121};
  const float ks = 0.0123f;
  const int8_t kz = -4;
  initializer(&c.m, "k.q", ONNX_INT8, 4, kd, k);
  initializer(&c.m, "k.s", ONNX_FLOAT, 0, NULL, &ks);
  initializer(&c.m, "k.z", ONNX_INT8, 0, NULL, &kz);
  node_begin(&c.m, "DequantizeLinear", "k/DQ",
             (const char *const[]){"k.q", "k.s", "k.z", NULL},
             (const char *const[]){"k", NULL});
  node_end(&c.m);
  op_begin(&c, "Mul", (const char *const[]){"xd", "k", NULL}, "t");
  node_end(&c.m);
  dg_tensor_desc kdesc = {.dtype = DG_DTYPE_I8,
                          .rank = 4,
                          .dims = {1, 3, 1, 1},
                          .quant = {.scale = ks, .zero_point = kz}};
  dg_tensor kt = dg_graph_constant(c.g, "k", &kdesc, k, 0);
  dg_quant_params yq = quant(qy);
  case_output(&c, "y", "t",
              dg_graph_qbinary(c.g, NULL, DG_BINARY_MUL, x, kt, qy.dt, &yq),
              qy);
  case_run(
      &c, "Mul by a quantised constant [1,3,1,1]",
      (const dg_op[]){DG_OP_QUANTIZE, DG_OP_QBINARY, DG_OP_DEQUANTIZE, END});
}

/* op (attributes a_name = a, b_name = b where named) -> Q: a lookup of
 * qunary(fn, ref_a, ref_b), the reference's parameters given apart so
 * that the attributes' defaults are checked too. */
static void unary(const char *what, const char *op, dg_unary_fn fn,
                  const char *a_name, float a, const char *b_name, float b,
                  float ref_a, float ref_b, qp qa, qp qy) {
  qcase c;
  case_begin(&c);
  dg_tensor x = case_input(&c, "x", 4, X4, qa);
  op_begin(&c, op, (const char *const[]){"xd", NULL}, "t");
  if (a_name)
    attr_float(&c.m, a_name, a);
  if (b_name)
    attr_float(&c.m, b_name, b);
  node_end(&c.m);
  dg_quant_params yq = quant(qy);
  case_output(&c, "y", "t",
              dg_graph_qunary(c.g, NULL, fn, x, ref_a, ref_b, qy.dt, &yq), qy);
  case_run(
      &c, what,
      (const dg_op[]){DG_OP_QUANTIZE, DG_OP_LOOKUP, DG_OP_DEQUANTIZE, END});
}

/* Sigmoid -> a QuantizeLinear without a zero point: u8, zero 0. */
static void no_zero_point(void) {
  qcase c;
  const float ys = 0.0039f;
  case_begin(&c);
  dg_tensor x = case_input(&c, "x", 4, X4, (qp){DG_DTYPE_I8, 0.031f, -20});
  op_begin(&c, "Sigmoid", (const char *const[]){"xd", NULL}, "t");
  node_end(&c.m);
  initializer(&c.m, "y.s", ONNX_FLOAT, 0, NULL, &ys);
  node_begin(&c.m, "QuantizeLinear", "y/Q",
             (const char *const[]){"t", "y.s", NULL},
             (const char *const[]){"y.q", NULL});
  node_end(&c.m);
  node_begin(&c.m, "DequantizeLinear", "y/DQ",
             (const char *const[]){"y.q", "y.s", NULL},
             (const char *const[]){"y", NULL});
  node_end(&c.m);
  graph_output(&c.m, "y");
  dg_quant_params yq = {.scale = ys};
  dg_tensor r =
      dg_graph_qunary(c.g, NULL, DG_UNARY_SIGMOID, x, 0, 0, DG_DTYPE_U8, &yq);
  dg_graph_output(c.g, "y", dg_graph_dequantize(c.g, NULL, r), DG_LAYOUT_NCHW);
  case_run(
      &c, "Sigmoid -> QuantizeLinear without a zero point (u8, 0)",
      (const dg_op[]){DG_OP_QUANTIZE, DG_OP_LOOKUP, DG_OP_DEQUANTIZE, END});
}

/* AveragePool kernel / strides / pads (ONNX order: top, left, bottom,
 * right, as dg_pool2d_params'; NULL: auto_pad SAME_UPPER) -> Q:
 * qavg_pool2d. cip < 0 leaves
 * count_include_pad out (its default, 0). */
static void avg_pool(const char *what, const int32_t kernel[2],
                     const int32_t stride[2], const int32_t pads[4], int cip,
                     int ceil_mode, qp qa, qp qy) {
  qcase c;
  case_begin(&c);
  dg_tensor x = case_input(&c, "x", 4, X4, qa);
  op_begin(&c, "AveragePool", (const char *const[]){"xd", NULL}, "t");
  attr_ints(&c.m, "kernel_shape", (const int64_t[]){kernel[0], kernel[1]}, 2);
  attr_ints(&c.m, "strides", (const int64_t[]){stride[0], stride[1]}, 2);
  if (pads)
    attr_ints(&c.m, "pads",
              (const int64_t[]){pads[0], pads[1], pads[2], pads[3]}, 4);
  else
    attr_str(&c.m, "auto_pad", "SAME_UPPER");
  if (cip >= 0)
    attr_int(&c.m, "count_include_pad", cip);
  if (ceil_mode)
    attr_int(&c.m, "ceil_mode", 1);
  node_end(&c.m);
  dg_pool2d_params p = {.kernel = {kernel[0], kernel[1]},
                        .stride = {stride[0], stride[1]},
                        .padding =
                            pads ? DG_PADDING_EXPLICIT : DG_PADDING_SAME_UPPER,
                        .ceil_mode = ceil_mode,
                        .count_include_pad = cip > 0};
  if (pads)
    memcpy(p.pads, pads, sizeof p.pads);
  dg_quant_params yq = quant(qy);
  case_output(&c, "y", "t", dg_graph_qavg_pool2d(c.g, NULL, x, &p, qy.dt, &yq),
              qy);
  case_run(&c, what,
           (const dg_op[]){DG_OP_QUANTIZE, DG_OP_QAVG_POOL2D, DG_OP_DEQUANTIZE,
                           END});
}

static void global_avg_pool(void) {
  qcase c;
  qp qa = {DG_DTYPE_I8, 0.051f, 13}, qy = {DG_DTYPE_U8, 0.012f, 190};
  case_begin(&c); /* 16 planes: 16 averages */
  dg_tensor x = case_input(&c, "x", 4, (const int64_t[]){2, 8, 4, 5}, qa);
  op_begin(&c, "GlobalAveragePool", (const char *const[]){"xd", NULL}, "t");
  node_end(&c.m);
  dg_quant_params yq = quant(qy);
  case_output(&c, "y", "t", dg_graph_qglobal_avg_pool(c.g, NULL, x, qy.dt, &yq),
              qy);
  case_run(&c, "GlobalAveragePool",
           (const dg_op[]){DG_OP_QUANTIZE, DG_OP_QAVG_POOL2D, DG_OP_DEQUANTIZE,
                           END});
}

/* Concat(x [2,3,5,6], x2 with b's dims) along axis (ref_axis for the
 * reference) -> Q: requantize lookups for the inputs whose parameters
 * are not y's, then a concat. */
static void concat(const char *what, int axis, int ref_axis, const int64_t *b,
                   qp qa, qp qb, qp qy, int lookups) {
  qcase c;
  case_begin(&c);
  dg_tensor in[2] = {case_input(&c, "x", 4, X4, qa),
                     case_input(&c, "x2", 4, b, qb)};
  op_begin(&c, "Concat", (const char *const[]){"xd", "x2d", NULL}, "t");
  attr_int(&c.m, "axis", axis);
  node_end(&c.m);
  dg_quant_params yq = quant(qy);
  case_output(&c, "y", "t",
              dg_graph_qconcat(c.g, NULL, in, 2, ref_axis, qy.dt, &yq), qy);
  dg_op want[8] = {DG_OP_QUANTIZE, DG_OP_QUANTIZE, DG_OP_CONCAT,
                   DG_OP_DEQUANTIZE};
  int n = 4;
  while (lookups-- > 0)
    want[n++] = DG_OP_LOOKUP;
  want[n] = END;
  case_run(&c, what, want);
}

/* MaxPool 3x3 stride 2 pads 1 -> Q: max_pool2d on the int8 input, then a
 * requantize lookup when qy is not qa. */
/* declared: the model also gives MaxPool's output its float type and
 * shape (value_info), as exporters do: the fold's int8 tensor stands for
 * it all the same. */
static void max_pool(const char *what, qp qa, qp qy, bool declared) {
  qcase c;
  case_begin(&c);
  dg_tensor x = case_input(&c, "x", 4, X4, qa);
  if (declared)
    value_info(&c.m.graph, 13, "t", ONNX_FLOAT, 4,
               (const int64_t[]){2, 3, 3, 3});
  op_begin(&c, "MaxPool", (const char *const[]){"xd", NULL}, "t");
  attr_ints(&c.m, "kernel_shape", (const int64_t[]){3, 3}, 2);
  attr_ints(&c.m, "strides", (const int64_t[]){2, 2}, 2);
  attr_ints(&c.m, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
  node_end(&c.m);
  dg_pool2d_params p = {.kernel = {3, 3},
                        .stride = {2, 2},
                        .pads = {1, 1, 1, 1},
                        .padding = DG_PADDING_EXPLICIT};
  dg_tensor r = dg_graph_max_pool2d(c.g, NULL, x, &p);
  bool same = qa.dt == qy.dt && qa.scale == qy.scale && qa.zp == qy.zp;
  dg_quant_params yq = quant(qy);
  if (!same)
    r = dg_graph_requantize(c.g, NULL, r, qy.dt, &yq);
  case_output(&c, "y", "t", r, qy);
  const dg_op kept[] = {DG_OP_QUANTIZE, DG_OP_MAX_POOL2D, DG_OP_DEQUANTIZE,
                        END},
              requant[] = {DG_OP_QUANTIZE, DG_OP_MAX_POOL2D, DG_OP_LOOKUP,
                           DG_OP_DEQUANTIZE, END};
  case_run(&c, what, same ? kept : requant);
}

/* Adds the ONNX node MaxPool (max) or AveragePool over x [2, 3, 10] ("xd"
 * -> "t": rank 3, kernel 3, stride 2, pads 1), and returns what its
 * handler makes of it: the 2-D pool of height 1 between reshapes. */
static dg_tensor pool_1d(qcase *c, bool max, dg_tensor x) {
  op_begin(c, max ? "MaxPool" : "AveragePool",
           (const char *const[]){"xd", NULL}, "t");
  attr_ints(&c->m, "kernel_shape", (const int64_t[]){3}, 1);
  attr_ints(&c->m, "strides", (const int64_t[]){2}, 1);
  attr_ints(&c->m, "pads", (const int64_t[]){1, 1}, 2);
  node_end(&c->m);
  dg_pool2d_params p = {.kernel = {1, 3},
                        .stride = {1, 2},
                        .pads = {0, 1, 0, 1},
                        .padding = DG_PADDING_EXPLICIT};
  dg_tensor x4 =
      dg_graph_reshape(c->g, NULL, x, 4, (const int64_t[]){2, 3, 1, 10});
  dg_tensor r = max ? dg_graph_max_pool2d(c->g, NULL, x4, &p)
                    : dg_graph_avg_pool2d(c->g, NULL, x4, &p);
  return dg_graph_reshape(c->g, NULL, r, 3, (const int64_t[]){2, 3, 5});
}

/* A 1-D MaxPool (rank 3, kernel 3, stride 2, pads 1) folds too: its
 * handler runs it as 2-D of height 1 between reshapes, on int8. */
static void max_pool_1d(void) {
  qcase c;
  qp qa = {DG_DTYPE_U8, 0.027f, 77}, qy = {DG_DTYPE_I8, 0.031f, -40};
  case_begin(&c);
  dg_tensor x = case_input(&c, "x", 3, (const int64_t[]){2, 3, 10}, qa);
  dg_tensor r = pool_1d(&c, true, x);
  dg_quant_params yq = quant(qy);
  case_output(&c, "y", "t", dg_graph_requantize(c.g, NULL, r, qy.dt, &yq), qy);
  case_run(&c, "1-D MaxPool, requantised",
           (const dg_op[]){DG_OP_QUANTIZE, DG_OP_RESHAPE, DG_OP_MAX_POOL2D,
                           DG_OP_RESHAPE, DG_OP_LOOKUP, DG_OP_DEQUANTIZE, END});
}

/* Flatten (axis 2), Reshape (to [3, -1, 10]) and Transpose (perm
 * 0,2,3,1) on the int8 tensor; a requantize lookup where qy is not qa. */
static void movement(void) {
  qp qa = {DG_DTYPE_U8, 0.039f, 140}, qy = {DG_DTYPE_I8, 0.047f, -3};
  qcase c;

  case_begin(&c);
  dg_tensor x = case_input(&c, "x", 4, X4, qa);
  op_begin(&c, "Flatten", (const char *const[]){"xd", NULL}, "t");
  attr_int(&c.m, "axis", 2);
  node_end(&c.m);
  case_output(&c, "y", "t", dg_graph_flatten(c.g, NULL, x, 2), qa);
  case_run(
      &c, "Flatten axis 2, same parameters",
      (const dg_op[]){DG_OP_QUANTIZE, DG_OP_RESHAPE, DG_OP_DEQUANTIZE, END});

  /* Only the dtype differs: the i8 output saturates above 27 steps. */
  qp u100 = {DG_DTYPE_U8, 0.041f, 100}, i100 = {DG_DTYPE_I8, 0.041f, 100};
  case_begin(&c);
  x = case_input(&c, "x", 4, X4, u100);
  op_begin(&c, "Flatten", (const char *const[]){"xd", NULL}, "t");
  node_end(&c.m); /* axis 1, the default */
  dg_quant_params iq = quant(i100);
  case_output(&c, "y", "t",
              dg_graph_requantize(c.g, NULL, dg_graph_flatten(c.g, NULL, x, 1),
                                  i100.dt, &iq),
              i100);
  case_run(&c, "Flatten, u8 -> i8 of the same scale and zero point",
           (const dg_op[]){DG_OP_QUANTIZE, DG_OP_RESHAPE, DG_OP_LOOKUP,
                           DG_OP_DEQUANTIZE, END});

  case_begin(&c);
  x = case_input(&c, "x", 4, X4, qa);
  const int64_t shape[3] = {3, -1, 10}, three = 3;
  initializer(&c.m, "shape", ONNX_INT64, 1, &three, shape);
  op_begin(&c, "Reshape", (const char *const[]){"xd", "shape", NULL}, "t");
  node_end(&c.m);
  dg_quant_params yq = quant(qy);
  case_output(&c, "y", "t",
              dg_graph_requantize(c.g, NULL,
                                  dg_graph_reshape(c.g, NULL, x, 3, shape),
                                  qy.dt, &yq),
              qy);
  case_run(&c, "Reshape [3,-1,10], requantised",
           (const dg_op[]){DG_OP_QUANTIZE, DG_OP_RESHAPE, DG_OP_LOOKUP,
                           DG_OP_DEQUANTIZE, END});

  case_begin(&c);
  x = case_input(&c, "x", 4, X4, qa);
  op_begin(&c, "Transpose", (const char *const[]){"xd", NULL}, "t");
  attr_ints(&c.m, "perm", (const int64_t[]){0, 2, 3, 1}, 4);
  node_end(&c.m);
  case_output(
      &c, "y", "t",
      dg_graph_requantize(
          c.g, NULL,
          dg_graph_transpose(c.g, NULL, x, (const int32_t[]){0, 2, 3, 1}),
          qy.dt, &yq),
      qy);
  case_run(&c, "Transpose perm 0,2,3,1, requantised",
           (const dg_op[]){DG_OP_QUANTIZE, DG_OP_TRANSPOSE, DG_OP_LOOKUP,
                           DG_OP_DEQUANTIZE, END});
}

/* The other data movement ops of the pass-through fold, with constant
 * starts, indices and axes: Slice, Gather, Unsqueeze; Identity leaves
 * nothing but the quantize and dequantize. */
static void movement_more(void) {
  qp qa = {DG_DTYPE_I8, 0.043f, -21}, qy = {DG_DTYPE_U8, 0.051f, 133};
  dg_quant_params yq = quant(qy);
  const int64_t one = 1, two = 2;
  qcase c;

  case_begin(&c);
  dg_tensor x = case_input(&c, "x", 4, X4, qa);
  initializer(&c.m, "starts", ONNX_INT64, 1, &one, (const int64_t[]){1});
  initializer(&c.m, "ends", ONNX_INT64, 1, &one, (const int64_t[]){4});
  initializer(&c.m, "axes", ONNX_INT64, 1, &one, (const int64_t[]){2});
  op_begin(&c, "Slice",
           (const char *const[]){"xd", "starts", "ends", "axes", NULL}, "t");
  node_end(&c.m);
  dg_tensor r = dg_graph_slice(c.g, NULL, x, (const int64_t[]){0, 0, 1, 0},
                               (const int64_t[]){2, 3, 4, 6}, NULL);
  case_output(&c, "y", "t", dg_graph_requantize(c.g, NULL, r, qy.dt, &yq), qy);
  case_run(&c, "Slice [1:4] on axis 2, requantised",
           (const dg_op[]){DG_OP_QUANTIZE, DG_OP_SLICE, DG_OP_LOOKUP,
                           DG_OP_DEQUANTIZE, END});

  case_begin(&c);
  x = case_input(&c, "x", 4, X4, qa);
  initializer(&c.m, "idx", ONNX_INT64, 1, &two, (const int64_t[]){5, 0});
  op_begin(&c, "Gather", (const char *const[]){"xd", "idx", NULL}, "t");
  attr_int(&c.m, "axis", 3);
  node_end(&c.m);
  dg_tensor_desc id = {.dtype = DG_DTYPE_I32, .rank = 1, .dims = {2}};
  dg_tensor idx =
      dg_graph_constant(c.g, "idx", &id, (const int32_t[]){5, 0}, 0);
  case_output(&c, "y", "t", dg_graph_gather(c.g, NULL, x, idx, 3), qa);
  case_run(
      &c, "Gather [5, 0] on axis 3, same parameters",
      (const dg_op[]){DG_OP_QUANTIZE, DG_OP_GATHER, DG_OP_DEQUANTIZE, END});

  case_begin(&c);
  x = case_input(&c, "x", 4, X4, qa);
  initializer(&c.m, "axes", ONNX_INT64, 1, &one, (const int64_t[]){0});
  op_begin(&c, "Unsqueeze", (const char *const[]){"xd", "axes", NULL}, "t");
  node_end(&c.m);
  r = dg_graph_reshape(c.g, NULL, x, 5, (const int64_t[]){1, 2, 3, 5, 6});
  case_output(&c, "y", "t", dg_graph_requantize(c.g, NULL, r, qy.dt, &yq), qy);
  case_run(&c, "Unsqueeze axis 0, requantised",
           (const dg_op[]){DG_OP_QUANTIZE, DG_OP_RESHAPE, DG_OP_LOOKUP,
                           DG_OP_DEQUANTIZE, END});

  case_begin(&c);
  x = case_input(&c, "x", 4, X4, qa);
  op_begin(&c, "Identity", (const char *const[]){"xd", NULL}, "t");
  node_end(&c.m);
  case_output(&c, "y", "t", x, qa);
  case_run(&c, "Identity, same parameters",
           (const dg_op[]){DG_OP_QUANTIZE, DG_OP_DEQUANTIZE, END});
}

/* Conv (per-channel i8 weights, i32 bias, pads 1, strides 2) -> Clip with
 * its bounds as Constant nodes listed after the Conv (as PyTorch exports
 * them; or as initializers, as ONNX Runtime's quantiser leaves them) -> Q:
 * one qconv2d with relu6 (hi 6) or relu (no max bound). */
static void conv_clip(const char *what, bool has_max, bool bounds_init) {
  qcase c;
  qp qx = {DG_DTYPE_U8, 0.021f, 120}, qy = {DG_DTYPE_U8, 0.043f, 31};
  const int64_t xd[4] = {1, 3, 7, 7}, wd[4] = {4, 3, 3, 3}, four = 4;
  const float ws[4] = {0.011f, 0.0071f, 0.0133f, 0.0092f};
  const int32_t wz[4] = {0};
  int8_t w[108];
  int32_t bias[4];
  float bs[4];
  for (int i = 0; i < 108; i++)
    w[i] = (int8_t)t_range(-127, 127);
  for (int i = 0; i < 4; i++) {
    bias[i] = t_range(-3000, 3000);
    bs[i] = qx.scale * ws[i];
  }
  case_begin(&c);
  dg_tensor x = case_input(&c, "x", 4, xd, qx);
  initializer(&c.m, "w.q", ONNX_INT8, 4, wd, w);
  initializer(&c.m, "w.s", ONNX_FLOAT, 1, &four, ws);
  zero_init(&c.m, "w.z", DG_DTYPE_I8, wz, 4);
  initializer(&c.m, "b.q", ONNX_INT32, 1, &four, bias);
  initializer(&c.m, "b.s", ONNX_FLOAT, 1, &four, bs);
  zero_init(&c.m, "b.z", DG_DTYPE_I32, wz, 4);
  node_begin(&c.m, "DequantizeLinear", "w/DQ",
             (const char *const[]){"w.q", "w.s", "w.z", NULL},
             (const char *const[]){"w", NULL});
  attr_int(&c.m, "axis", 0);
  node_end(&c.m);
  node_begin(&c.m, "DequantizeLinear", "b/DQ",
             (const char *const[]){"b.q", "b.s", "b.z", NULL},
             (const char *const[]){"b", NULL});
  attr_int(&c.m, "axis", 0);
  node_end(&c.m);
  op_begin(&c, "Conv", (const char *const[]){"xd", "w", "b", NULL}, "c");
  attr_ints(&c.m, "kernel_shape", (const int64_t[]){3, 3}, 2);
  attr_ints(&c.m, "strides", (const int64_t[]){2, 2}, 2);
  attr_ints(&c.m, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
  node_end(&c.m);
  const float lo = 0.0f, hi = 6.0f;
  if (bounds_init) {
    initializer(&c.m, "cmin", ONNX_FLOAT, 0, NULL, &lo);
    if (has_max)
      initializer(&c.m, "cmax", ONNX_FLOAT, 0, NULL, &hi);
  } else {
    constant_node(&c.m, "clip_min", "cmin", ONNX_FLOAT, 0, NULL, &lo);
    if (has_max)
      constant_node(&c.m, "clip_max", "cmax", ONNX_FLOAT, 0, NULL, &hi);
  }
  op_begin(&c, "Clip",
           (const char *const[]){"c", "cmin", has_max ? "cmax" : NULL, NULL},
           "t");
  node_end(&c.m);

  dg_tensor_desc wdesc = {.dtype = DG_DTYPE_I8,
                          .rank = 4,
                          .dims = {4, 3, 3, 3},
                          .quant = {.axis = 0,
                                    .channel_count = 4,
                                    .channel_scales = ws,
                                    .channel_zero_points = wz}},
                 bdesc = {.dtype = DG_DTYPE_I32, .rank = 1, .dims = {4}};
  dg_conv2d_params p = {.stride = {2, 2},
                        .pads = {1, 1, 1, 1},
                        .padding = DG_PADDING_EXPLICIT,
                        .activation =
                            has_max ? DG_ACTIVATION_RELU6 : DG_ACTIVATION_RELU};
  dg_quant_params yq = quant(qy);
  dg_tensor r = dg_graph_qconv2d(
      c.g, NULL, x, dg_graph_constant(c.g, "w", &wdesc, w, 0),
      dg_graph_constant(c.g, "b", &bdesc, bias, 0), &p, qy.dt, &yq);
  case_output(&c, "y", "t", r, qy);
  case_run(
      &c, what,
      (const dg_op[]){DG_OP_QUANTIZE, DG_OP_QCONV2D, DG_OP_DEQUANTIZE, END});
}

static void folds(void) {
  const int64_t B11HW[4] = {1, 1, 5, 6}, B1C11[4] = {1, 3, 1, 1};
  qp u8a = {DG_DTYPE_U8, 0.047f, 131}, i8b = {DG_DTYPE_I8, 0.033f, -9},
     i8y = {DG_DTYPE_I8, 0.061f, 7}, u8y = {DG_DTYPE_U8, 0.057f, 117};

  binary("Add, u8 + i8 -> i8", "Add", DG_BINARY_ADD, X4, 4, X4, u8a, i8b, i8y,
         false);
  binary("Sub, b broadcast [1,1,5,6]", "Sub", DG_BINARY_SUB, X4, 4, B11HW, u8a,
         i8b, u8y, false);
  binary("Sub, a broadcast [1,3,1,1]", "Sub", DG_BINARY_SUB, B1C11, 4, X4, i8b,
         u8a, i8y, false);
  binary("Mul, b broadcast [1,3,1,1]", "Mul", DG_BINARY_MUL, X4, 4, B1C11, u8a,
         (qp){DG_DTYPE_I8, 0.021f, 17}, (qp){DG_DTYPE_U8, 0.013f, 100}, false);
  binary("Add -> Relu", "Add", DG_BINARY_ADD, X4, 4, X4, i8b, u8a,
         (qp){DG_DTYPE_U8, 0.049f, 90}, true);
  binary("Mul, b of rank 1 [6]", "Mul", DG_BINARY_MUL, X4, 1,
         (const int64_t[]){6}, i8b, (qp){DG_DTYPE_U8, 0.025f, 140},
         (qp){DG_DTYPE_I8, 0.017f, -30}, false);
  binary("Sub, b of rank 3 [3,1,1]", "Sub", DG_BINARY_SUB, X4, 3,
         (const int64_t[]){3, 1, 1}, u8a, (qp){DG_DTYPE_U8, 0.025f, 140},
         (qp){DG_DTYPE_I8, 0.071f, 9}, false);
  mul_by_constant();

  qp ux = {DG_DTYPE_U8, 0.037f, 125}, sy = {DG_DTYPE_U8, 0.0041f, 3};
  unary("Sigmoid", "Sigmoid", DG_UNARY_SIGMOID, NULL, 0, NULL, 0, 0, 0, ux, sy);
  unary("HardSwish", "HardSwish", DG_UNARY_HARD_SWISH, NULL, 0, NULL, 0, 0, 0,
        ux, (qp){DG_DTYPE_I8, 0.029f, -101});
  unary("HardSigmoid alpha 0.3 beta 0.4", "HardSigmoid", DG_UNARY_HARD_SIGMOID,
        "alpha", 0.3f, "beta", 0.4f, 0.3f, 0.4f, ux,
        (qp){DG_DTYPE_U8, 0.0043f, 9});
  unary("HardSigmoid defaults (0.2, 0.5)", "HardSigmoid", DG_UNARY_HARD_SIGMOID,
        NULL, 0, NULL, 0, 0.2f, 0.5f, (qp){DG_DTYPE_I8, 0.081f, -5},
        (qp){DG_DTYPE_U8, 0.0039f, 2});
  unary("LeakyRelu alpha 0.15", "LeakyRelu", DG_UNARY_LEAKY_RELU, "alpha",
        0.15f, NULL, 0, 0.15f, 0, ux, (qp){DG_DTYPE_I8, 0.025f, 40});
  unary("Tanh", "Tanh", DG_UNARY_TANH, NULL, 0, NULL, 0, 0, 0,
        (qp){DG_DTYPE_I8, 0.019f, 3}, (qp){DG_DTYPE_I8, 0.0079f, -1});
  unary("Relu", "Relu", DG_UNARY_RELU, NULL, 0, NULL, 0, 0, 0, ux,
        (qp){DG_DTYPE_U8, 0.031f, 12});
  no_zero_point();

  const int32_t k32[2] = {3, 2}, s21[2] = {2, 1}, k22[2] = {2, 2},
                s22[2] = {2, 2}, p1011[4] = {1, 0, 1, 1}, p0[4] = {0},
                p0101[4] = {0, 1, 0, 1};
  qp pa = {DG_DTYPE_U8, 0.027f, 77}, py = {DG_DTYPE_I8, 0.019f, -12};
  avg_pool("AveragePool 3x2 strides 2,1 pads 1,0,1,1 count_include_pad 0", k32,
           s21, p1011, 0, 0, pa, py);
  avg_pool("AveragePool 3x2 strides 2,1 pads 1,0,1,1 count_include_pad 1", k32,
           s21, p1011, 1, 0, pa, py);
  avg_pool("AveragePool 2x2 strides 2 ceil_mode (count_include_pad default)",
           k22, s22, p0, -1, 1, pa, (qp){DG_DTYPE_U8, 0.023f, 70});
  avg_pool(
      "AveragePool 2x2 strides 2 pads 0,1,0,1 ceil_mode count_include_pad 1",
      k22, s22, p0101, 1, 1, (qp){DG_DTYPE_I8, 0.031f, 20}, py);
  avg_pool(
      "AveragePool 3x2 strides 2,1 auto_pad SAME_UPPER count_include_pad 1",
      k32, s21, NULL, 1, 0, (qp){DG_DTYPE_U8, 0.029f, 99}, py);
  global_avg_pool();

  qp ca = {DG_DTYPE_U8, 0.041f, 128}, cb = {DG_DTYPE_I8, 0.023f, -17};
  concat("Concat axis 1, y has x's parameters", 1, 1,
         (const int64_t[]){2, 2, 5, 6}, ca, cb, ca, 1);
  concat("Concat axis 1, three parameters", 1, 1, (const int64_t[]){2, 2, 5, 6},
         ca, cb, (qp){DG_DTYPE_U8, 0.035f, 111}, 2);
  concat("Concat axis -1", -1, 3, (const int64_t[]){2, 3, 5, 4}, cb, ca,
         (qp){DG_DTYPE_I8, 0.029f, 4}, 2);

  max_pool("MaxPool, same parameters", ca, ca, false);
  max_pool("MaxPool, its float output declared", ca, ca, true);
  max_pool("MaxPool, Q scale differs", ca, (qp){DG_DTYPE_U8, 0.045f, 128},
           false);
  max_pool("MaxPool, Q zero point differs", ca, (qp){DG_DTYPE_U8, 0.041f, 120},
           false);
  max_pool_1d();
  movement();
  movement_more();

  conv_clip("Conv -> Clip(0, 6) from later Constant nodes", true, false);
  conv_clip("Conv -> Clip(0, inf) from a later Constant node", false, false);
  conv_clip("Conv -> Clip(0, 6) from initializers", true, true);
}

/* ---- folds next to each other, as in whole models ---- */

/* One DequantizeLinear read by two folds (a residual's fork) and by a
 * graph output: both folds read its int8 input, the output a dequantize
 * of it. */
static void shared_dq(void) {
  qcase c;
  qp qa = {DG_DTYPE_U8, 0.037f, 125}, q1 = {DG_DTYPE_U8, 0.0041f, 3},
     q2 = {DG_DTYPE_I8, 0.0079f, -1};
  case_begin(&c);
  dg_tensor x = case_input(&c, "x", 4, X4, qa);
  op_begin(&c, "Sigmoid", (const char *const[]){"xd", NULL}, "s");
  node_end(&c.m);
  op_begin(&c, "Tanh", (const char *const[]){"xd", NULL}, "t");
  node_end(&c.m);
  dg_quant_params y1 = quant(q1), y2 = quant(q2);
  case_output(&c, "y", "s",
              dg_graph_qunary(c.g, NULL, DG_UNARY_SIGMOID, x, 0, 0, q1.dt, &y1),
              q1);
  case_output(&c, "y2", "t",
              dg_graph_qunary(c.g, NULL, DG_UNARY_TANH, x, 0, 0, q2.dt, &y2),
              q2);
  graph_output(&c.m, "xd");
  dg_graph_output(c.g, "xd", dg_graph_dequantize(c.g, NULL, x), DG_LAYOUT_NCHW);
  case_run(&c, "one DequantizeLinear read by Sigmoid, Tanh and an output",
           (const dg_op[]){DG_OP_QUANTIZE, DG_OP_LOOKUP, DG_OP_LOOKUP,
                           DG_OP_DEQUANTIZE, DG_OP_DEQUANTIZE, DG_OP_DEQUANTIZE,
                           END});
}

/* Add(x, x) -> Q -> DQ -> MaxPool -> Q -> DQ -> GlobalAveragePool -> Q:
 * three folds in a row, one quantize, one dequantize. */
static void chain(void) {
  qcase c;
  qp qa = {DG_DTYPE_I8, 0.029f, 10}, q1 = {DG_DTYPE_U8, 0.061f, 128},
     q2 = {DG_DTYPE_U8, 0.063f, 125}, q3 = {DG_DTYPE_U8, 0.027f, 3};
  case_begin(&c);
  dg_tensor x = case_input(&c, "x", 4, (const int64_t[]){2, 8, 5, 6}, qa);
  op_begin(&c, "Add", (const char *const[]){"xd", "xd", NULL}, "s");
  node_end(&c.m);
  onnx_qdq(&c.m, "s", "sd", q1);
  op_begin(&c, "MaxPool", (const char *const[]){"sd", NULL}, "m");
  attr_ints(&c.m, "kernel_shape", (const int64_t[]){2, 2}, 2);
  node_end(&c.m);
  onnx_qdq(&c.m, "m", "md", q2);
  op_begin(&c, "GlobalAveragePool", (const char *const[]){"md", NULL}, "t");
  node_end(&c.m);
  dg_quant_params y1 = quant(q1), y2 = quant(q2), y3 = quant(q3);
  dg_pool2d_params p = {.kernel = {2, 2}};
  dg_tensor r = dg_graph_qbinary(c.g, NULL, DG_BINARY_ADD, x, x, q1.dt, &y1);
  r = dg_graph_requantize(c.g, NULL, dg_graph_max_pool2d(c.g, NULL, r, &p),
                          q2.dt, &y2);
  r = dg_graph_qglobal_avg_pool(c.g, NULL, r, q3.dt, &y3);
  case_output(&c, "y", "t", r, q3);
  case_run(&c, "Add(x, x) -> MaxPool -> GlobalAveragePool, all int8",
           (const dg_op[]){DG_OP_QUANTIZE, DG_OP_QBINARY, DG_OP_MAX_POOL2D,
                           DG_OP_LOOKUP, DG_OP_QAVG_POOL2D, DG_OP_DEQUANTIZE,
                           END});
}

/* ---- chains that must not fold ---- */

/* Add -> a per-channel QuantizeLinear (axis 1, three scales). */
static void per_channel_q(void) {
  qcase c;
  qp qa = {DG_DTYPE_U8, 0.047f, 131}, qb = {DG_DTYPE_I8, 0.033f, -9};
  const float ys[3] = {0.05f, 0.07f, 0.03f};
  const int32_t yz[3] = {120, 100, 140};
  case_begin(&c);
  dg_tensor x = case_input_f(&c, "x", 4, X4, qa);
  dg_tensor x2 = case_input_f(&c, "x2", 4, X4, qb);
  op_begin(&c, "Add", (const char *const[]){"xd", "x2d", NULL}, "t");
  node_end(&c.m);
  onnx_qdq_n(&c.m, "t", "y", DG_DTYPE_U8, ys, yz, 3, 1);
  graph_output(&c.m, "y");
  dg_quant_params yq = {.axis = 1,
                        .channel_count = 3,
                        .channel_scales = ys,
                        .channel_zero_points = yz};
  dg_tensor r = dg_graph_quantize(c.g, NULL, dg_graph_add(c.g, NULL, x, x2),
                                  DG_DTYPE_U8, &yq);
  dg_graph_output(c.g, "y", dg_graph_dequantize(c.g, NULL, r), DG_LAYOUT_NCHW);
  case_run(&c, "not folded: Add -> per-channel QuantizeLinear",
           (const dg_op[]){DG_OP_QUANTIZE, DG_OP_DEQUANTIZE, DG_OP_QUANTIZE,
                           DG_OP_DEQUANTIZE, DG_OP_BINARY, DG_OP_QUANTIZE,
                           DG_OP_DEQUANTIZE, END});
}

/* A per-channel pair in front: the int8 ops take per-tensor inputs. */
static void per_channel_dq(void) {
  qcase c;
  const float xs[3] = {0.04f, 0.02f, 0.03f};
  const int32_t xz[3] = {-3, 5, 0};
  qp qy = {DG_DTYPE_U8, 0.0041f, 3};
  case_begin(&c);
  graph_input(&c.m, "x", ONNX_FLOAT, 4, X4);
  onnx_qdq_n(&c.m, "x", "xd", DG_DTYPE_I8, xs, xz, 3, 1);
  c.nfeed = 1;
  snprintf(c.feed[0], sizeof c.feed[0], "x");
  c.lo[0] = -5.0f;
  c.hi[0] = 5.0f;
  op_begin(&c, "Sigmoid", (const char *const[]){"xd", NULL}, "t");
  node_end(&c.m);
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {2, 3, 5, 6}};
  dg_quant_params xq = {.axis = 1,
                        .channel_count = 3,
                        .channel_scales = xs,
                        .channel_zero_points = xz};
  dg_tensor x = dg_graph_dequantize(
      c.g, NULL,
      dg_graph_quantize(c.g, NULL, dg_graph_input(c.g, "x", &d), DG_DTYPE_I8,
                        &xq));
  case_output_f(&c, "y", "t", dg_graph_sigmoid(c.g, NULL, x), qy);
  case_run(&c, "not folded: per-channel DequantizeLinear -> Sigmoid",
           (const dg_op[]){DG_OP_QUANTIZE, DG_OP_DEQUANTIZE, DG_OP_UNARY,
                           DG_OP_QUANTIZE, DG_OP_DEQUANTIZE, END});
}

/* Sigmoid -> a QuantizeLinear to int32 (an int32 zero point). */
static void int32_q(void) {
  qcase c;
  qp qa = {DG_DTYPE_I8, 0.043f, 6}, qy = {DG_DTYPE_I32, 0.00017f, 1000};
  case_begin(&c);
  dg_tensor x = case_input_f(&c, "x", 4, X4, qa);
  op_begin(&c, "Sigmoid", (const char *const[]){"xd", NULL}, "t");
  node_end(&c.m);
  case_output_f(&c, "y", "t", dg_graph_sigmoid(c.g, NULL, x), qy);
  case_run(&c, "not folded: Sigmoid -> int32 QuantizeLinear",
           (const dg_op[]){DG_OP_QUANTIZE, DG_OP_DEQUANTIZE, DG_OP_UNARY,
                           DG_OP_QUANTIZE, DG_OP_DEQUANTIZE, END});
}

/* Tanh's output read by its QuantizeLinear and by a Relu. */
static void two_readers(void) {
  qcase c;
  qp qa = {DG_DTYPE_U8, 0.037f, 125}, qy = {DG_DTYPE_I8, 0.0079f, -1};
  case_begin(&c);
  dg_tensor x = case_input_f(&c, "x", 4, X4, qa);
  op_begin(&c, "Tanh", (const char *const[]){"xd", NULL}, "t");
  node_end(&c.m);
  dg_tensor t = dg_graph_unary(c.g, NULL, DG_UNARY_TANH, x, 0, 0);
  case_output_f(&c, "y", "t", t, qy);
  node_begin(&c.m, "Relu", "relu", (const char *const[]){"t", NULL},
             (const char *const[]){"y2", NULL});
  node_end(&c.m);
  graph_output(&c.m, "y2");
  dg_graph_output(c.g, "y2", dg_graph_relu(c.g, NULL, t), DG_LAYOUT_NCHW);
  case_run(&c, "not folded: Tanh read by its Q and a Relu",
           (const dg_op[]){DG_OP_QUANTIZE, DG_OP_DEQUANTIZE, DG_OP_UNARY,
                           DG_OP_QUANTIZE, DG_OP_DEQUANTIZE, DG_OP_UNARY, END});
}

/* Add's output is a graph output as well as its QuantizeLinear's input. */
static void graph_output_too(void) {
  qcase c;
  qp qa = {DG_DTYPE_U8, 0.047f, 131}, qb = {DG_DTYPE_I8, 0.033f, -9},
     qy = {DG_DTYPE_I8, 0.061f, 7};
  case_begin(&c);
  dg_tensor x = case_input_f(&c, "x", 4, X4, qa);
  dg_tensor x2 = case_input_f(&c, "x2", 4, X4, qb);
  op_begin(&c, "Add", (const char *const[]){"xd", "x2d", NULL}, "t");
  node_end(&c.m);
  dg_tensor t = dg_graph_add(c.g, NULL, x, x2);
  case_output_f(&c, "y", "t", t, qy);
  graph_output(&c.m, "t");
  dg_graph_output(c.g, "t", t, DG_LAYOUT_NCHW);
  case_run(&c, "not folded: Add whose output is a graph output too",
           (const dg_op[]){DG_OP_QUANTIZE, DG_OP_DEQUANTIZE, DG_OP_QUANTIZE,
                           DG_OP_DEQUANTIZE, DG_OP_BINARY, DG_OP_QUANTIZE,
                           DG_OP_DEQUANTIZE, END});
}

/* AveragePool over a rank-3 input (kernel 3, stride 2, pads 1): float,
 * as 2-D of height 1 between reshapes. */
static void avg_pool_1d(void) {
  qcase c;
  qp qa = {DG_DTYPE_U8, 0.027f, 77}, qy = {DG_DTYPE_I8, 0.019f, -12};
  const int64_t xd[3] = {2, 3, 10};
  case_begin(&c);
  dg_tensor x = case_input_f(&c, "x", 3, xd, qa);
  dg_tensor r = pool_1d(&c, false, x);
  case_output_f(&c, "y", "t", r, qy);
  case_run(&c, "not folded: 1-D AveragePool",
           (const dg_op[]){DG_OP_QUANTIZE, DG_OP_DEQUANTIZE, DG_OP_RESHAPE,
                           DG_OP_AVG_POOL2D, DG_OP_RESHAPE, DG_OP_QUANTIZE,
                           DG_OP_DEQUANTIZE, END});
}

/* Models ONNX calls invalid are refused, naming what is wrong: a u8
 * tensor with an int8 zero point, and a scale of rank 2 (both loaded
 * before, dequantised as if valid). */
static void refused_model(model *m, const char *what, const char *field,
                          const char *says) {
  dg_graph *g = NULL;
  dg_diagnostic d = {0};
  dg_status st = load_graph(m, &g, &d);
  CHECK(st != DG_OK && !g && !strcmp(d.field, field) && strstr(d.message, says),
        "%s: refused naming %s (%s: %s)", what, field, dg_status_string(st),
        d.message);
  dg_graph_destroy(g);
}

static void invalid_quant(void) {
  static const float one = 0.5f, two[4] = {0.1f, 0.2f, 0.3f, 0.4f};
  static const int8_t zi8 = 3, w[4 * 2] = {1, -2, 3, -4, 5, -6, 7, -8};
  model m;
  int64_t xd[2] = {1, 4};
  /* u8 x, int8 zero point: DequantizeLinear. */
  graph_begin(&m, OPSET);
  graph_input(&m, "x", ONNX_UINT8, 2, xd);
  initializer(&m, "s", ONNX_FLOAT, 0, NULL, &one);
  initializer(&m, "z", ONNX_INT8, 0, NULL, &zi8);
  node_begin(&m, "DequantizeLinear", "dq",
             (const char *const[]){"x", "s", "z", NULL},
             (const char *const[]){"y", NULL});
  node_end(&m);
  graph_output(&m, "y");
  refused_model(&m, "DequantizeLinear of a u8 input with an int8 zero point",
                "zero_point", "'x' is u8 but its zero point 'z' is i8");
  /* The same mismatch in a weight folded into an int8 matmul. */
  int64_t wd[2] = {4, 2}, sd2[2] = {4, 1};
  graph_begin(&m, OPSET);
  graph_input(&m, "x", ONNX_FLOAT, 2, xd);
  initializer(&m, "w", ONNX_UINT8, 2, wd, w);
  initializer(&m, "s", ONNX_FLOAT, 0, NULL, &one);
  initializer(&m, "z", ONNX_INT8, 0, NULL, &zi8);
  node_begin(&m, "DequantizeLinear", "wdq",
             (const char *const[]){"w", "s", "z", NULL},
             (const char *const[]){"wf", NULL});
  node_end(&m);
  node_begin(&m, "MatMul", "mm", (const char *const[]){"x", "wf", NULL},
             (const char *const[]){"y", NULL});
  node_end(&m);
  graph_output(&m, "y");
  refused_model(&m, "a u8 weight with an int8 zero point before a MatMul",
                "zero_point", "'w' is u8 but its zero point 'z' is i8");
  /* A weight scale of rank 2 ([4, 1]): not a scalar, not 1-D. */
  graph_begin(&m, OPSET);
  graph_input(&m, "x", ONNX_FLOAT, 2, xd);
  initializer(&m, "w", ONNX_INT8, 2, wd, w);
  initializer(&m, "s", ONNX_FLOAT, 2, sd2, two);
  node_begin(&m, "DequantizeLinear", "wdq",
             (const char *const[]){"w", "s", NULL},
             (const char *const[]){"wf", NULL});
  attr_int(&m, "axis", 0);
  node_end(&m);
  node_begin(&m, "MatMul", "mm", (const char *const[]){"x", "wf", NULL},
             (const char *const[]){"y", NULL});
  node_end(&m);
  graph_output(&m, "y");
  refused_model(&m, "a DequantizeLinear weight scale of rank 2", "scale",
                "'s' has rank 2");
}

int main(void) {
  if (dg_context_create(NULL, &ctx) != DG_OK) {
    CHECK(0, "context");
    return 1;
  }
  t_seed(20261201);
  folds();
  shared_dq();
  chain();
  per_channel_q();
  per_channel_dq();
  int32_q();
  two_readers();
  graph_output_too();
  avg_pool_1d();
  invalid_quant();
  dg_context_destroy(ctx);
  return t_exit();
}
