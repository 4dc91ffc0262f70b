#define _POSIX_C_SOURCE 200809L
/* The op table (src/ops/ops.def) and the targets' own tables:
 * - every op has a name, a reference kernel and a cost, names are unique;
 * - a node built through the public API carries only the parameters its
 *   ops.def line lists (every builder, every parameter set non-zero);
 * - every device's info.ops names only ops the table knows, and an op a
 *   device does not list is declined there with a reason, not a failed
 *   compile;
 * - the kinds of device (src/targets/kinds.def): one bit and one name
 *   each, and the targets built in are kinds of the table, CPU first. */
#include "graph.h"
#include "harness.h"
#include "ops/ops.h"
#include "runtime/internal.h"
#include "targets/target.h"

#include <ctype.h>
#include <string.h>

static dg_context *ctx;

static void names_and_entries(void) {
  int bad = 0, dup = 0;
  for (int op = 1; op < DG_OP_COUNT_; op++) {
    const dg_op_def *d = dg_op_def_get((dg_op)op);
    const char *n = dg_op_name((dg_op)op);
    bad += !d || !n || !*n || strcmp(n, d->name) ||
           (!d->reserved && (!d->reference || !d->flops)) ||
           (d->reserved && (d->reference || d->flops));
    for (const char *c = n; c && *c; c++)
      bad += !(islower((unsigned char)*c) || isdigit((unsigned char)*c) ||
               *c == '_');
    for (int o = 1; o < op; o++)
      dup += !strcmp(n, dg_op_name((dg_op)o));
  }
  CHECK(!bad && !dup,
        "ops.def: %d ops, each with a name, and a reference kernel and cost "
        "but the reserved ones (%d bad, %d names repeated)",
        DG_OP_COUNT_ - 1, bad, dup);
  CHECK(!strcmp(dg_op_name(DG_OP_INVALID), "?") &&
            !strcmp(dg_op_name(DG_OP_COUNT_), "?") &&
            !dg_op_def_get(DG_OP_INVALID) && !dg_op_def_get(DG_OP_COUNT_),
        "ops outside the table have no entry and the name '?'");
}

/* One node of every op, every public parameter set to something other
 * than its default. */
static dg_graph *every_op(void) {
  static float wf[8 * 4 * 9], bf[8], fc[8 * 16 * 16 * 16];
  static int8_t wq[8 * 8 * 9], fq[10 * 8 * 16 * 16];
  static int32_t bq[8];
  dg_graph *g = dg_graph_create(ctx, "every op");
  dg_tensor_desc xd = {
      .dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, 4, 16, 16}};
  dg_tensor_desc wd = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {8, 4, 3, 3}};
  dg_tensor_desc bd = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {8}};
  dg_tensor x = dg_graph_input(g, "x", &xd);
  dg_conv2d_params cp = {.stride = {1, 1},
                         .dilation = {1, 1},
                         .pads = {1, 1, 1, 1},
                         .groups = 1,
                         .activation = DG_ACTIVATION_RELU6};
  dg_tensor c =
      dg_graph_conv2d(g, "conv", x, dg_graph_constant(g, "w", &wd, wf, 0),
                      dg_graph_constant(g, "b", &bd, bf, 0), &cp);
  dg_pool2d_params pp = {.kernel = {3, 3},
                         .stride = {1, 1},
                         .pads = {1, 1, 1, 1},
                         .ceil_mode = 1,
                         .count_include_pad = 1};
  dg_tensor mp = dg_graph_max_pool2d(g, "max", c, &pp);
  dg_tensor ap = dg_graph_avg_pool2d(g, "avg", mp, &pp);
  dg_tensor sum = dg_graph_binary(g, "binary", DG_BINARY_MAX,
                                  dg_graph_add(g, "add", ap, mp), mp);
  dg_tensor r =
      dg_graph_relu(g, "relu",
                    dg_graph_unary(g, "unary", DG_UNARY_TANH,
                                   dg_graph_sigmoid(g, "sigmoid", sum), 0, 0));
  dg_tensor cl = dg_graph_clip(g, "clip", r, -1.0f, 2.0f);
  dg_tensor cat_in[2] = {cl, r};
  dg_tensor cat = dg_graph_concat(g, "concat", cat_in, 2, 1);
  dg_graph_output(g, "gap", dg_graph_global_avg_pool(g, "gap", cat),
                  DG_LAYOUT_NCHW);
  dg_tensor_desc fd = {
      .dtype = DG_DTYPE_F32, .rank = 2, .dims = {8, 16 * 16 * 16}};
  dg_tensor f =
      dg_graph_fully_connected(g, "fc", dg_graph_flatten(g, "flatten", cat, 1),
                               dg_graph_constant(g, "wfc", &fd, fc, 0),
                               DG_TENSOR_NONE, DG_ACTIVATION_RELU);
  dg_graph_output(g, "softmax", dg_graph_softmax(g, "softmax", f, 1),
                  DG_LAYOUT_NCHW);
  dg_tensor_desc lnd = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {16}};
  dg_tensor ln = dg_graph_layer_norm(
      g, "layer_norm", dg_graph_log_softmax(g, "log_softmax", cat, -1),
      dg_graph_constant(g, "ln_scale", &lnd, fc, 0), DG_TENSOR_NONE, -1, 1e-5f);
  dg_graph_output(g, "reduce",
                  dg_graph_reduce(g, "reduce", DG_REDUCE_MEAN, ln,
                                  (int32_t[]){1, -1}, 2, 1),
                  DG_LAYOUT_NCHW);
  int64_t dims[2] = {8, -1};
  dg_tensor m = dg_graph_matmul(g, "matmul",
                                dg_graph_reshape(g, "reshape", f, 2, dims), f);
  dg_graph_output(g, "matmul", m, DG_LAYOUT_NCHW);
  /* The bool-valued ops and the arg reduction. */
  dg_tensor lt = dg_graph_compare(g, "compare", DG_COMPARE_LESS, ap, mp);
  dg_tensor wh = dg_graph_where(g, "where", lt, ap, mp);
  dg_graph_output(g, "arg_reduce",
                  dg_graph_arg_reduce(g, "arg_reduce", DG_ARG_MIN, wh, 1, 1, 1),
                  DG_LAYOUT_NCHW);

  /* Data movement, on c ([1, 8, 16, 16]). */
  static const int32_t gidx[2] = {3, -1};
  dg_tensor_desc gid = {.dtype = DG_DTYPE_I32, .rank = 1, .dims = {2}};
  dg_tensor mv =
      dg_graph_transpose(g, "transpose", c, (const int32_t[]){0, 2, 3, 1});
  mv = dg_graph_slice(g, "slice", mv, (const int64_t[]){0, 1, -1, 2},
                      (const int64_t[]){1, 9, -17, 8},
                      (const int64_t[]){1, 2, -1, 3});
  mv = dg_graph_pad(g, "pad", mv, (const int64_t[]){1, 0, 2, 1, 0, 3, 0, 1},
                    DG_PAD_CONSTANT, 0.5f);
  mv = dg_graph_expand(g, "expand", mv, 5, (const int64_t[]){2, 1, 1, 1, 1});
  mv = dg_graph_gather(g, "gather", mv,
                       dg_graph_constant(g, "gidx", &gid, gidx, 0), 3);
  dg_graph_output(g, "movement", mv, DG_LAYOUT_NCHW);
  /* The spatial family. */
  dg_resize_params rp = {.mode = DG_RESIZE_LINEAR,
                         .coord = DG_RESIZE_ALIGN_CORNERS,
                         .nearest = DG_RESIZE_CEIL,
                         .scales = {2, 1.5f}};
  dg_graph_output(g, "resize", dg_graph_resize(g, "resize", c, &rp),
                  DG_LAYOUT_NCHW);
  static const float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  dg_tensor one = dg_graph_constant(g, "ones", &bd, ones, 0);
  dg_graph_output(g, "bn",
                  dg_graph_batch_norm(g, "bn", c, one, one, one, one, 1e-3f),
                  DG_LAYOUT_NCHW);
  dg_tensor_desc ctw = {.dtype = DG_DTYPE_F32, .rank = 4, .dims = {8, 2, 3, 3}};
  dg_tensor_desc ctb = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {4}};
  dg_conv2d_params ctp = {.stride = {2, 2},
                          .dilation = {1, 2},
                          .pads = {1, 0, 0, 1},
                          .groups = 2,
                          .activation = DG_ACTIVATION_RELU};
  int32_t ctop[2] = {1, 1};
  dg_graph_output(g, "cast", dg_graph_cast(g, "cast", c, DG_DTYPE_F16),
                  DG_LAYOUT_NCHW);
  dg_graph_output(g, "convt",
                  dg_graph_conv_transpose2d(
                      g, "convt", c, dg_graph_constant(g, "ctw", &ctw, wf, 0),
                      dg_graph_constant(g, "ctb", &ctb, bf, 0), &ctp, ctop),
                  DG_LAYOUT_NCHW);

  /* The int8 ops. */
  dg_quant_params q = {.scale = 0.05f, .zero_point = 3};
  dg_tensor qx = dg_graph_quantize(g, "quantize", c, DG_DTYPE_I8, &q);
  dg_tensor_desc wqd = {.dtype = DG_DTYPE_I8,
                        .rank = 4,
                        .dims = {8, 8, 3, 3},
                        .quant = {.scale = 0.01f}};
  dg_tensor_desc bqd = {.dtype = DG_DTYPE_I32,
                        .rank = 1,
                        .dims = {8},
                        .quant = {.scale = 0.0005f}};
  dg_tensor qc = dg_graph_qconv2d(
      g, "qconv", qx, dg_graph_constant(g, "wq", &wqd, wq, 0),
      dg_graph_constant(g, "bq", &bqd, bq, 0), &cp, DG_DTYPE_I8, &q);
  dg_tensor_desc fqd = {.dtype = DG_DTYPE_I8,
                        .rank = 2,
                        .dims = {10, 8 * 16 * 16},
                        .quant = {.scale = 0.01f}};
  dg_tensor qf = dg_graph_qfully_connected(
      g, "qfc", dg_graph_flatten(g, "qflatten", qc, 1),
      dg_graph_constant(g, "wqfc", &fqd, fq, 0), DG_TENSOR_NONE,
      DG_ACTIVATION_RELU, DG_DTYPE_I8, &q);
  dg_tensor qm = dg_graph_qmatmul(
      g, "qmatmul", qf,
      dg_graph_reshape(g, "qreshape", qf, 2, (int64_t[]){10, 1}), DG_DTYPE_I8,
      &q);
  dg_graph_output(g, "dequantize", dg_graph_dequantize(g, "dequantize", qm),
                  DG_LAYOUT_NCHW);
  /* int8 beyond convolution, on qc and qx ([1, 8, 16, 16] i8). */
  dg_quant_params qu = {.scale = 0.02f, .zero_point = 128};
  dg_tensor qb =
      dg_graph_qbinary(g, "qbinary", DG_BINARY_MUL, qc, qx, DG_DTYPE_U8, &qu);
  dg_pool2d_params qpp = {.kernel = {3, 2},
                          .stride = {2, 1},
                          .dilation = {2, 1},
                          .pads = {1, 1, 2, 0},
                          .ceil_mode = 1,
                          .count_include_pad = 1};
  dg_tensor qp =
      dg_graph_qavg_pool2d(g, "qavg_pool2d", qb, &qpp, DG_DTYPE_I8, &q);
  dg_tensor qcat_in[2] = {dg_graph_qunary(g, "qunary", DG_UNARY_HARD_SIGMOID,
                                          qp, 0.25f, 0.5f, DG_DTYPE_U8, &qu),
                          qp};
  dg_graph_output(
      g, "qconcat",
      dg_graph_qconcat(g, "qconcat", qcat_in, 2, 1, DG_DTYPE_I8, &q),
      DG_LAYOUT_NCHW);
  dg_graph_output(g, "qgap",
                  dg_graph_qglobal_avg_pool(g, "qgap", qp, DG_DTYPE_U8, &qu),
                  DG_LAYOUT_NCHW);
  (void)wq;
  return g;
}

static void params_as_declared(void) {
  dg_graph *g = every_op();
  CHECK(dg_graph_status(g) == DG_OK, "a graph with every op builds: %s",
        dg_graph_error(g) ? dg_graph_error(g)->message : "ok");
  uint64_t seen = 0; /* dg_device_info.ops is 64 bits: so is this */
  int stray = 0;
  for (int i = 0; i < g->ir.node_count; i++) {
    const dg_node *n = &g->ir.nodes[i];
    seen |= 1ull << n->op;
    unsigned extra = dg_node_params_set(&n->p) & ~dg_op_def_get(n->op)->reads;
    if (extra) {
      printf("# node %d '%s' (%s) sets DG_P_* 0x%x beyond ops.def\n", i,
             n->name, dg_op_name(n->op), extra);
      stray++;
    }
  }
  uint64_t all = 0; /* every op but the reserved, which no builder emits */
  for (int op = 1; op < DG_OP_COUNT_; op++)
    if (!dg_op_def_get((dg_op)op)->reserved)
      all |= 1ull << op;
  CHECK(seen == all && !stray,
        "every op's node carries only the parameters ops.def lists (ops "
        "covered 0x%llx of 0x%llx, %d nodes beyond)",
        (unsigned long long)seen, (unsigned long long)all, stray);
  dg_graph_destroy(g);
}

/* A graph whose one node is op, or NULL when this test has no builder for
 * it (then it is covered elsewhere). Operands are f32 unless q. */
static dg_graph *one_node(dg_op op, int dev) {
  static float w[4 * 4 * 9];
  static int8_t wq[4 * 4 * 9];
  dg_graph *g = dg_graph_create(ctx, "one node");
  bool q = op == DG_OP_QCONV2D || op == DG_OP_QFULLY_CONNECTED ||
           op == DG_OP_QMATMUL || op == DG_OP_DEQUANTIZE ||
           op == DG_OP_QBINARY || op == DG_OP_LOOKUP || op == DG_OP_QAVG_POOL2D;
  dg_quant_params qp = {.scale = 0.1f};
  dg_tensor_desc xd = {.dtype = q ? DG_DTYPE_I8 : DG_DTYPE_F32,
                       .rank = 4,
                       .dims = {1, 4, 8, 8},
                       .quant = qp};
  dg_tensor x = dg_graph_input(g, "x", &xd);
  dg_tensor_desc wd = {.dtype = q ? DG_DTYPE_I8 : DG_DTYPE_F32,
                       .rank = 4,
                       .dims = {4, 4, 3, 3},
                       .quant = qp};
  dg_tensor_desc fd = {.dtype = q ? DG_DTYPE_I8 : DG_DTYPE_F32,
                       .rank = 2,
                       .dims = {4, 256},
                       .quant = qp};
  dg_conv2d_params cp = {0};
  dg_pool2d_params pp = {.kernel = {2, 2}};
  /* Only the node under test is pinned: the flatten feeding the fully
   * connected ones may run anywhere. */
  dg_tensor y = DG_TENSOR_NONE, flat = dg_graph_flatten(g, "flat", x, 1);
  dg_graph_set_device(g, dev);
  const void *wdata = q ? (const void *)wq : (const void *)w;
  switch (op) {
  case DG_OP_CONV2D:
  case DG_OP_QCONV2D:
    y = q ? dg_graph_qconv2d(g, "n", x,
                             dg_graph_constant(g, "w", &wd, wdata, 0),
                             DG_TENSOR_NONE, &cp, DG_DTYPE_I8, &qp)
          : dg_graph_conv2d(g, "n", x, dg_graph_constant(g, "w", &wd, wdata, 0),
                            DG_TENSOR_NONE, &cp);
    break;
  case DG_OP_FULLY_CONNECTED:
  case DG_OP_QFULLY_CONNECTED: {
    static float fw[4 * 256];
    static int8_t fwq[4 * 256];
    dg_tensor wt =
        dg_graph_constant(g, "w", &fd, q ? (void *)fwq : (void *)fw, 0);
    y = q ? dg_graph_qfully_connected(g, "n", flat, wt, DG_TENSOR_NONE,
                                      DG_ACTIVATION_NONE, DG_DTYPE_I8, &qp)
          : dg_graph_fully_connected(g, "n", flat, wt, DG_TENSOR_NONE,
                                     DG_ACTIVATION_NONE);
    break;
  }
  case DG_OP_MAX_POOL2D:
    y = dg_graph_max_pool2d(g, "n", x, &pp);
    break;
  case DG_OP_AVG_POOL2D:
    y = dg_graph_avg_pool2d(g, "n", x, &pp);
    break;
  case DG_OP_GLOBAL_AVG_POOL:
    y = dg_graph_global_avg_pool(g, "n", x);
    break;
  case DG_OP_SOFTMAX:
    y = dg_graph_softmax(g, "n", x, 1);
    break;
  case DG_OP_RELU:
    y = dg_graph_relu(g, "n", x);
    break;
  case DG_OP_SIGMOID:
    y = dg_graph_sigmoid(g, "n", x);
    break;
  case DG_OP_REDUCE:
    y = dg_graph_reduce(g, "n", DG_REDUCE_SUM, x, (int32_t[]){1}, 1, 0);
    break;
  case DG_OP_LOG_SOFTMAX:
    y = dg_graph_log_softmax(g, "n", x, 1);
    break;
  case DG_OP_LAYER_NORM:
    y = dg_graph_layer_norm(g, "n", x, x, DG_TENSOR_NONE, 0, 1e-5f);
    break;
  case DG_OP_UNARY:
    y = dg_graph_unary(g, "n", DG_UNARY_ELU, x, 1.0f, 0);
    break;
  case DG_OP_CLIP:
    y = dg_graph_clip(g, "n", x, 0, 1);
    break;
  case DG_OP_ADD:
    y = dg_graph_add(g, "n", x, x);
    break;
  case DG_OP_BINARY:
    y = dg_graph_binary(g, "n", DG_BINARY_SUB, x, x);
    break;
  case DG_OP_COMPARE:
    y = dg_graph_compare(g, "n", DG_COMPARE_GREATER, x, x);
    break;
  case DG_OP_WHERE: {
    dg_tensor_desc cd = {.dtype = DG_DTYPE_BOOL, .rank = 1, .dims = {8}};
    y = dg_graph_where(g, "n", dg_graph_input(g, "cond", &cd), x, x);
    break;
  }
  case DG_OP_ARG_REDUCE:
    y = dg_graph_arg_reduce(g, "n", DG_ARG_MAX, x, 1, 0, 0);
    break;
  case DG_OP_QUANTIZE:
    y = dg_graph_quantize(g, "n", x, DG_DTYPE_I8, &qp);
    break;
  case DG_OP_DEQUANTIZE:
    y = dg_graph_dequantize(g, "n", x);
    break;
  case DG_OP_TRANSPOSE:
    y = dg_graph_transpose(g, "n", x, NULL);
    break;
  case DG_OP_SLICE:
    y = dg_graph_slice(g, "n", x, (const int64_t[]){0, 1, 0, -1},
                       (const int64_t[]){1, 3, 8, -9},
                       (const int64_t[]){1, 1, 2, -1});
    break;
  case DG_OP_PAD:
    y = dg_graph_pad(g, "n", x, (const int64_t[]){0, 1, 0, 2, 0, 0, 1, 2},
                     DG_PAD_REFLECT, 0);
    break;
  case DG_OP_EXPAND:
    y = dg_graph_expand(g, "n", x, 5, (const int64_t[]){2, 1, 4, 8, 8});
    break;
  case DG_OP_GATHER: {
    static const int32_t idx[3] = {2, -1, 0};
    dg_tensor_desc id = {.dtype = DG_DTYPE_I32, .rank = 1, .dims = {3}};
    y = dg_graph_gather(g, "n", x, dg_graph_constant(g, "i", &id, idx, 0), 1);
    break;
  }
  case DG_OP_RESIZE: {
    dg_resize_params rp = {.scales = {2, 2}};
    y = dg_graph_resize(g, "n", x, &rp);
    break;
  }
  case DG_OP_BATCH_NORM: {
    static const float ones[4] = {1, 1, 1, 1};
    dg_tensor_desc cd = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {4}};
    dg_tensor one = dg_graph_constant(g, "ones", &cd, ones, 0);
    y = dg_graph_batch_norm(g, "n", x, one, one, one, one, 1e-5f);
    break;
  }
  case DG_OP_CAST:
    y = dg_graph_cast(g, "n", x, DG_DTYPE_I32);
    break;
  case DG_OP_CONV_TRANSPOSE2D:
    y = dg_graph_conv_transpose2d(g, "n", x,
                                  dg_graph_constant(g, "w", &wd, wdata, 0),
                                  DG_TENSOR_NONE, &cp, NULL);
    break;
  case DG_OP_QBINARY:
    y = dg_graph_qbinary(g, "n", DG_BINARY_ADD, x, x, DG_DTYPE_I8, &qp);
    break;
  case DG_OP_LOOKUP:
    y = dg_graph_qunary(g, "n", DG_UNARY_SIGMOID, x, 0, 0, DG_DTYPE_U8, &qp);
    break;
  case DG_OP_QAVG_POOL2D:
    y = dg_graph_qavg_pool2d(g, "n", x, &pp, DG_DTYPE_I8, &qp);
    break;
  default:
    dg_graph_destroy(g);
    return NULL;
  }
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  return g;
}

/* A device that does not list an op declines it: under strict placement
 * compile fails as unsupported naming the device; under auto the node
 * falls back and the plan says why. */
static void devices_declare(void) {
  for (int dev = 0; dev < dg_context_device_count(ctx); dev++) {
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    uint64_t known = 0, asked = 0;
    int reserved_said = 0;
    for (int op = 1; op < DG_OP_COUNT_; op++) {
      bool reserved = dg_op_def_get((dg_op)op)->reserved;
      if (!reserved)
        known |= 1ull << op;
      int says = dg_device_supports(ctx, dev, (dg_op)op);
      reserved_said += reserved && says;
      asked |= (uint64_t)(says != 0) << op;
    }
    CHECK(!(info.ops & ~known) && info.ops && asked == info.ops &&
              !reserved_said && !dg_device_supports(ctx, dev, DG_OP_COUNT_) &&
              !dg_device_supports(ctx, dev, DG_OP_INVALID) &&
              !dg_device_supports(ctx, dg_context_device_count(ctx),
                                  DG_OP_CONV2D) &&
              !dg_device_supports(NULL, dev, DG_OP_CONV2D),
          "device %d (%s): dg_device_supports names only ops of the table, "
          "no reserved one, as info.ops's 0x%llx does, and 0 for a bad op, "
          "device or context",
          dev, dg_device_kind_name(info.kind), (unsigned long long)info.ops);
    int declined = 0, wrong = 0, absent = 0;
    for (int op = 1; op < DG_OP_COUNT_; op++) {
      if (dg_device_supports(ctx, dev, (dg_op)op) ||
          dg_op_def_get((dg_op)op)->reserved)
        continue;
      absent++;
      dg_graph *g = one_node((dg_op)op, dev);
      if (!g)
        continue;
      dg_session *s = NULL;
      dg_diagnostic d = {0};
      dg_compile_options o = {.policy = DG_POLICY_STRICT};
      dg_status st = dg_graph_compile(g, &o, &s, &d);
      if (st == DG_ERROR_UNSUPPORTED && strstr(d.message, "'n'") &&
          strstr(d.message, "cannot run it"))
        declined++;
      else {
        printf("# device %d, %s: %s (%s)\n", dev, dg_op_name((dg_op)op),
               dg_status_string(st), d.message);
        wrong++;
      }
      dg_session_destroy(s);
      dg_graph_destroy(g);
    }
    CHECK(!wrong,
          "device %d (%s): each of the %d ops it does not list is declined "
          "under strict placement with its reason (%d checked)",
          dev, dg_device_kind_name(info.kind), absent, declined);
  }
}

static void kinds_and_targets(void) {
  unsigned all = dg_device_kinds_all();
  int bad = 0, n = 0;
  for (unsigned bit = 1; bit && bit <= all; bit <<= 1) {
    if (!(all & bit))
      continue;
    n++;
    const char *name = dg_device_kind_name((dg_device_kind)bit);
    bad += !strcmp(name, "?") ||
           dg_device_kind_from_name(name) != (dg_device_kind)bit ||
           !strcmp(dg_device_kind_colour((dg_device_kind)bit), "white");
  }
  CHECK(all && !bad && (all & DG_DEVICE_CPU),
        "kinds.def: %d kinds (mask 0x%x), each with a name that maps back "
        "and a colour (%d bad)",
        n, all, bad);
  CHECK(!strcmp(dg_device_kind_name((dg_device_kind)(all + 1)), "?") &&
            dg_device_kind_from_name("gpu") == 0 &&
            dg_device_kind_from_name(NULL) == 0,
        "an unknown kind is named '?', an unknown name has no kind");
  int targets = 0, wrong = 0;
  for (const dg_target *t; (t = dg_target_get(targets)); targets++)
    wrong += !(t->kind & all) ||
             strcmp(t->name, dg_device_kind_name(t->kind)) ||
             (targets == 0 && t->kind != DG_DEVICE_CPU);
  CHECK(targets >= 1 && !wrong,
        "%d targets built in, the CPU first, each a kind of kinds.def named "
        "as its kind (%d wrong)",
        targets, wrong);
}

int main(void) {
  setenv("DG_NPU_DEVICE", "sim", 0);
  dg_context_options o = {.disable_cache = 1};
  if (dg_context_create(&o, &ctx) != DG_OK) {
    CHECK(0, "context");
    return t_exit();
  }
  names_and_entries();
  kinds_and_targets();
  params_as_declared();
  devices_declare();
  dg_context_destroy(ctx);
  return t_exit();
}
