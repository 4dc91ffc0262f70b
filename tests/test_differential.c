/* Differential tests: every op x dtype on seeded random shapes and data, on
 * every device of the context, against the float64 reference kernels of
 * src/ops. Float outputs must be within the dtype's tolerance relative to
 * the largest reference magnitude; integer outputs bit-exact. */
#include "differential.h"

/* ---- conv ---- */

typedef struct conv_arg {
  dg_conv2d_params p;
  bool q, bias;
  dg_dtype y_dtype;
  dg_quant_params yq;
  float wscales[64];
} conv_arg;

static dg_tensor make_conv(dg_graph *g, dg_tensor *in, void *arg) {
  conv_arg *a = arg;
  dg_tensor b = a->bias ? in[2] : DG_TENSOR_NONE;
  if (a->q)
    return dg_graph_qconv2d(g, "conv", in[0], in[1], b, &a->p, a->y_dtype,
                            &a->yq);
  return dg_graph_conv2d(g, "conv", in[0], in[1], b, &a->p);
}

/* After the random cases, fixed ones for the CPU's shifted planes (f32:
 * overhang under 1/14; int8: under 1/3, a strided 1x1 too) with 16 or
 * more output channels (the int8 GEMM's AMX tiles): C, O, H, W, kernel,
 * stride, dilation, pad, N. */
static const int conv_fixed[][9] = {
    {8, 24, 20, 30, 3, 1, 1, 1, 1},  {5, 20, 31, 33, 3, 2, 1, 1, 2},
    {3, 17, 40, 44, 5, 1, 2, 4, 1},  {3, 16, 32, 32, 7, 2, 1, 3, 1},
    {16, 33, 14, 28, 3, 1, 1, 0, 1}, {16, 32, 14, 14, 1, 2, 1, 0, 1},
    {32, 32, 7, 7, 3, 1, 1, 1, 2}};
#define CONV_FIXED (int)(sizeof conv_fixed / sizeof conv_fixed[0])

static void conv_cases(dg_dtype xt, bool q) {
  op_stats st = {0};
  for (int c = 0; c < CASES + CONV_FIXED; c++) {
    conv_arg a = {.q = q, .bias = t_range(0, 1)};
    int64_t N = t_range(1, 2), G = t_range(0, 3) == 0 ? t_range(2, 3) : 1;
    int64_t CG = t_range(1, 5), OG = t_range(1, 5);
    bool dw = t_range(0, 4) == 0;
    if (dw) {
      G = t_range(2, 8);
      CG = OG = 1;
    }
    int64_t KH = t_range(1, 5), KW = t_range(1, 5);
    a.p.stride[0] = t_range(1, 3);
    a.p.stride[1] = t_range(1, 3);
    a.p.dilation[0] = t_range(1, 2);
    a.p.dilation[1] = t_range(1, 2);
    a.p.padding = (dg_padding)t_range(0, 3);
    for (int i = 0; i < 4; i++)
      a.p.pads[i] = t_range(0, 2);
    a.p.groups = (int32_t)G;
    a.p.activation = (dg_activation)t_range(0, 2);
    int64_t H = (KH - 1) * a.p.dilation[0] + t_range(1, 10);
    int64_t W = (KW - 1) * a.p.dilation[1] + t_range(1, 10);
    if (c >= CASES) {
      const int *f = conv_fixed[c - CASES];
      G = 1, CG = f[0], OG = f[1], H = f[2], W = f[3], KH = KW = f[4];
      N = f[8];
      a.p.groups = 1;
      a.p.padding = DG_PADDING_EXPLICIT;
      for (int i = 0; i < 2; i++) {
        a.p.stride[i] = f[5];
        a.p.dilation[i] = f[6];
      }
      for (int i = 0; i < 4; i++)
        a.p.pads[i] = f[7];
    }
    int64_t xd[4] = {N, G * CG, H, W}, wd[4] = {G * OG, CG, KH, KW},
            bd[1] = {G * OG};
    dg_dtype wt = q ? (t_range(0, 1) ? DG_DTYPE_I8 : DG_DTYPE_U8) : xt;
    dg_tensor_desc d[3] = {desc_of(xt, 4, xd), desc_of(wt, 4, wd),
                           desc_of(q ? DG_DTYPE_I32 : xt, 1, bd)};
    if (q && t_range(0, 1)) { /* per-channel weights */
      d[1].quant.channel_count = (int32_t)(G * OG);
      d[1].quant.axis = 0;
      for (int64_t o = 0; o < G * OG; o++)
        a.wscales[o] = t_uniform(0.002f, 0.02f);
      d[1].quant.channel_scales = a.wscales;
    }
    if (q) {
      a.y_dtype = t_range(0, 1) ? DG_DTYPE_I8 : DG_DTYPE_U8;
      a.yq.scale = t_uniform(0.02f, 0.3f);
      a.yq.zero_point =
          a.y_dtype == DG_DTYPE_I8 ? t_range(-10, 10) : t_range(100, 140);
    }
    char label[96];
    snprintf(label, sizeof label, "%sconv2d %s case %d", q ? "q" : "",
             dg_dtype_name(xt), c);
    run_case(&st, label, 3, d, make_conv, &a);
  }
  char name[64];
  snprintf(name, sizeof name, "%s %s", q ? "qconv2d" : "conv2d",
           dg_dtype_name(xt));
  report(name, &st);
}

/* ---- pooling ---- */

typedef struct pool_arg {
  dg_op op;
  dg_pool2d_params p;
} pool_arg;

static dg_tensor make_pool(dg_graph *g, dg_tensor *in, void *arg) {
  pool_arg *a = arg;
  if (a->op == DG_OP_MAX_POOL2D)
    return dg_graph_max_pool2d(g, "pool", in[0], &a->p);
  if (a->op == DG_OP_AVG_POOL2D)
    return dg_graph_avg_pool2d(g, "pool", in[0], &a->p);
  return dg_graph_global_avg_pool(g, "pool", in[0]);
}

static void pool_cases(dg_op op, dg_dtype t) {
  op_stats st = {0};
  for (int c = 0; c < CASES; c++) {
    pool_arg a = {.op = op};
    for (int i = 0; i < 2; i++) {
      a.p.kernel[i] = t_range(1, 4);
      a.p.stride[i] = t_range(1, 3);
    }
    a.p.padding = (dg_padding)t_range(0, 3);
    for (int i = 0; i < 4; i++)
      a.p.pads[i] = t_range(0, a.p.kernel[i % 2] - 1);
    a.p.ceil_mode = t_range(0, 1);
    a.p.count_include_pad = t_range(0, 1);
    int64_t xd[4] = {t_range(1, 2), t_range(1, 6), t_range(4, 12),
                     t_range(4, 12)};
    dg_tensor_desc d = desc_of(t, 4, xd);
    char label[64];
    snprintf(label, sizeof label, "%s %s case %d", dg_op_name(op),
             dg_dtype_name(t), c);
    run_case(&st, label, 1, &d, make_pool, &a);
  }
  char name[64];
  snprintf(name, sizeof name, "%s %s", dg_op_name(op), dg_dtype_name(t));
  report(name, &st);
}

/* ---- fully connected, matmul ---- */

typedef struct gemm_arg {
  bool q, bias;
  dg_activation act;
  dg_dtype y_dtype;
  dg_quant_params yq;
  float scales[64];
} gemm_arg;

static dg_tensor make_fc(dg_graph *g, dg_tensor *in, void *arg) {
  gemm_arg *a = arg;
  dg_tensor b = a->bias ? in[2] : DG_TENSOR_NONE;
  if (a->q)
    return dg_graph_qfully_connected(g, "fc", in[0], in[1], b, a->act,
                                     a->y_dtype, &a->yq);
  return dg_graph_fully_connected(g, "fc", in[0], in[1], b, a->act);
}

static dg_tensor make_mm(dg_graph *g, dg_tensor *in, void *arg) {
  gemm_arg *a = arg;
  if (a->q)
    return dg_graph_qmatmul(g, "mm", in[0], in[1], a->y_dtype, &a->yq);
  return dg_graph_matmul(g, "mm", in[0], in[1]);
}

static void q_out(gemm_arg *a) {
  a->y_dtype = t_range(0, 1) ? DG_DTYPE_I8 : DG_DTYPE_U8;
  a->yq.scale = t_uniform(0.05f, 0.5f);
  a->yq.zero_point =
      a->y_dtype == DG_DTYPE_I8 ? t_range(-10, 10) : t_range(100, 140);
}

static void fc_cases(dg_dtype xt, bool q) {
  op_stats st = {0};
  for (int c = 0; c < CASES; c++) {
    gemm_arg a = {
        .q = q, .bias = t_range(0, 1), .act = (dg_activation)t_range(0, 2)};
    int64_t N = t_range(1, 5), K = t_range(1, 70), O = t_range(1, 40);
    int64_t xd[2] = {N, K}, wd[2] = {O, K}, bd[1] = {O};
    dg_dtype wt = q ? (t_range(0, 1) ? DG_DTYPE_I8 : DG_DTYPE_U8) : xt;
    dg_tensor_desc d[3] = {desc_of(xt, 2, xd), desc_of(wt, 2, wd),
                           desc_of(q ? DG_DTYPE_I32 : xt, 1, bd)};
    if (q) {
      q_out(&a);
      if (t_range(0, 1)) {
        d[1].quant.channel_count = (int32_t)O;
        for (int64_t o = 0; o < O; o++)
          a.scales[o] = t_uniform(0.002f, 0.02f);
        d[1].quant.channel_scales = a.scales;
      }
    }
    char label[64];
    snprintf(label, sizeof label, "fc %s case %d", dg_dtype_name(xt), c);
    run_case(&st, label, 3, d, make_fc, &a);
  }
  char name[64];
  snprintf(name, sizeof name, "%s %s",
           q ? "qfully_connected" : "fully_connected", dg_dtype_name(xt));
  report(name, &st);
}

static void mm_cases(dg_dtype t, bool q) {
  op_stats st = {0};
  for (int c = 0; c < CASES; c++) {
    gemm_arg a = {.q = q};
    int64_t M = t_range(1, 9), K = t_range(1, 40), N = t_range(1, 20);
    int ra = t_range(1, 4), rb = t_range(1, 4);
    int64_t ad[4], bd[4];
    for (int i = 0; i < 4; i++) {
      ad[i] = t_range(0, 1) ? 1 : 3;
      bd[i] = t_range(0, 1) ? 1 : 3;
    }
    ad[ra - 1] = K;
    if (ra > 1)
      ad[ra - 2] = M;
    if (rb > 1) {
      bd[rb - 2] = K;
      bd[rb - 1] = N;
    } else {
      bd[0] = K;
    }
    dg_tensor_desc d[2] = {desc_of(t, ra, ad), desc_of(t, rb, bd)};
    if (q) {
      q_out(&a);
      if (rb > 1 && t_range(0, 1)) {
        d[1].quant.channel_count = (int32_t)N;
        d[1].quant.axis = rb - 1;
        for (int64_t o = 0; o < N; o++)
          a.scales[o] = t_uniform(0.005f, 0.02f);
        d[1].quant.channel_scales = a.scales;
      }
    }
    char label[64];
    snprintf(label, sizeof label, "matmul %s case %d", dg_dtype_name(t), c);
    run_case(&st, label, 2, d, make_mm, &a);
  }
  char name[64];
  snprintf(name, sizeof name, "%s %s", q ? "qmatmul" : "matmul",
           dg_dtype_name(t));
  report(name, &st);
}

/* ---- the rest ---- */

typedef struct misc_arg {
  dg_op op;
  int32_t axis;
  float lo, hi;
  int64_t dims[DG_MAX_RANK];
  int rank;
  dg_dtype qt;
  dg_quant_params q;
  float scales[16];
} misc_arg;

static dg_tensor make_misc(dg_graph *g, dg_tensor *in, void *arg) {
  misc_arg *a = arg;
  switch (a->op) {
  case DG_OP_SOFTMAX:
    return dg_graph_softmax(g, "op", in[0], a->axis);
  case DG_OP_RELU:
    return dg_graph_relu(g, "op", in[0]);
  case DG_OP_SIGMOID:
    return dg_graph_sigmoid(g, "op", in[0]);
  case DG_OP_CLIP:
    return dg_graph_clip(g, "op", in[0], a->lo, a->hi);
  case DG_OP_ADD:
    return dg_graph_add(g, "op", in[0], in[1]);
  case DG_OP_RESHAPE:
    return a->rank ? dg_graph_reshape(g, "op", in[0], a->rank, a->dims)
                   : dg_graph_flatten(g, "op", in[0], a->axis);
  case DG_OP_CONCAT:
    return dg_graph_concat(g, "op", in, 3, a->axis);
  case DG_OP_QUANTIZE:
    return dg_graph_quantize(g, "op", in[0], a->qt, &a->q);
  case DG_OP_DEQUANTIZE:
    return dg_graph_dequantize(g, "op", in[0]);
  default:
    return DG_TENSOR_NONE;
  }
}

static void misc_cases(dg_op op, dg_dtype t) {
  op_stats st = {0};
  /* Sigmoid over both saturated ends and the curve: [-40, 40] in f32,
   * [-8, 8] in f16, whose normal range ends at 6.1e-5 (sigmoid(-10) is
   * subnormal there, and a lone element of it is all the tolerance,
   * relative to the tensor's largest value, has to go on). */
  fill_span = op != DG_OP_SIGMOID ? 1.0f : t == DG_DTYPE_F16 ? 8.0f : 40.0f;
  for (int c = 0; c < CASES; c++) {
    misc_arg a = {.op = op};
    int rank = t_range(1, 4), n_in = 1;
    int64_t dims[DG_MAX_RANK];
    random_dims(rank, dims, 1, 6);
    dg_tensor_desc d[3] = {desc_of(t, rank, dims)};
    a.axis = t_range(-rank, rank - 1);
    a.lo = t_uniform(-1, 0);
    a.hi = t_uniform(0, 1);
    if (op == DG_OP_ADD) {
      int rb = t_range(1, rank);
      int64_t bd[DG_MAX_RANK];
      for (int i = 0; i < rb; i++)
        bd[i] = t_range(0, 2) ? dims[rank - rb + i] : 1;
      if (t_range(0, 1)) { /* broadcast on both sides */
        d[0] = desc_of(t, rb, bd);
        d[1] = desc_of(t, rank, dims);
      } else {
        d[1] = desc_of(t, rb, bd);
      }
      n_in = 2;
    } else if (op == DG_OP_RESHAPE) {
      if (t_range(0, 1)) {
        a.rank = 2;
        a.dims[0] = dims[0];
        a.dims[1] = -1;
      } else {
        a.axis = t_range(0, rank);
      }
    } else if (op == DG_OP_CONCAT) {
      a.axis = t_range(0, rank - 1);
      for (int i = 1; i < 3; i++) {
        int64_t e[DG_MAX_RANK];
        memcpy(e, dims, sizeof e);
        e[a.axis] = t_range(1, 4);
        d[i] = desc_of(t, rank, e);
        d[i].quant = d[0].quant;
      }
      n_in = 3;
    } else if (op == DG_OP_QUANTIZE) {
      a.qt = (dg_dtype[]){DG_DTYPE_I8, DG_DTYPE_U8, DG_DTYPE_I32}[c % 3];
      a.q.scale = t_uniform(0.002f, 0.02f);
      a.q.zero_point = a.qt == DG_DTYPE_U8 ? 128 : t_range(-5, 5);
      if (c % 2) {
        a.q.axis = t_range(0, rank - 1);
        a.q.channel_count = (int32_t)dims[a.q.axis];
        for (int i = 0; i < a.q.channel_count; i++)
          a.scales[i] = t_uniform(0.002f, 0.02f);
        a.q.channel_scales = a.scales;
      }
    } else if (op == DG_OP_DEQUANTIZE && c % 2) {
      d[0].quant.axis = t_range(0, rank - 1);
      d[0].quant.channel_count = (int32_t)dims[d[0].quant.axis];
      for (int i = 0; i < d[0].quant.channel_count; i++)
        a.scales[i] = t_uniform(0.002f, 0.02f);
      d[0].quant.channel_scales = a.scales;
    }
    if (t == DG_DTYPE_I32)
      d[0].quant = (dg_quant_params){.scale = 0.001f};
    char label[64];
    snprintf(label, sizeof label, "%s %s case %d", dg_op_name(op),
             dg_dtype_name(t), c);
    run_case(&st, label, n_in, d, make_misc, &a);
  }
  fill_span = 1.0f;
  char name[64];
  snprintf(name, sizeof name, "%s %s", dg_op_name(op), dg_dtype_name(t));
  report(name, &st);
}

int main(int argc, char **argv) {
  unsigned long long seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261129;
  t_seed(seed);
  printf("# seed %llu\n", seed);
  if (dg_context_create(NULL, &ctx) != DG_OK) {
    CHECK(0, "context");
    return 1;
  }
  dg_dtype floats[2] = {DG_DTYPE_F32, DG_DTYPE_F16};
  for (int f = 0; f < 2; f++) {
    conv_cases(floats[f], false);
    fc_cases(floats[f], false);
    mm_cases(floats[f], false);
    pool_cases(DG_OP_MAX_POOL2D, floats[f]);
    pool_cases(DG_OP_AVG_POOL2D, floats[f]);
    pool_cases(DG_OP_GLOBAL_AVG_POOL, floats[f]);
    misc_cases(DG_OP_SOFTMAX, floats[f]);
    misc_cases(DG_OP_RELU, floats[f]);
    misc_cases(DG_OP_SIGMOID, floats[f]);
    misc_cases(DG_OP_CLIP, floats[f]);
    misc_cases(DG_OP_ADD, floats[f]);
    misc_cases(DG_OP_RESHAPE, floats[f]);
    misc_cases(DG_OP_CONCAT, floats[f]);
  }
  conv_cases(DG_DTYPE_I8, true);
  conv_cases(DG_DTYPE_U8, true);
  fc_cases(DG_DTYPE_I8, true);
  fc_cases(DG_DTYPE_U8, true);
  mm_cases(DG_DTYPE_I8, true);
  mm_cases(DG_DTYPE_U8, true);
  pool_cases(DG_OP_MAX_POOL2D, DG_DTYPE_I8);
  pool_cases(DG_OP_MAX_POOL2D, DG_DTYPE_U8);
  misc_cases(DG_OP_CONCAT, DG_DTYPE_I8);
  misc_cases(DG_OP_RESHAPE, DG_DTYPE_U8);
  misc_cases(DG_OP_QUANTIZE, DG_DTYPE_F32);
  misc_cases(DG_OP_DEQUANTIZE, DG_DTYPE_I8);
  misc_cases(DG_OP_DEQUANTIZE, DG_DTYPE_U8);
  misc_cases(DG_OP_DEQUANTIZE, DG_DTYPE_I32);
  dg_context_destroy(ctx);
  return t_exit();
}
