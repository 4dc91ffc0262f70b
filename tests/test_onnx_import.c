/* The ONNX importer's error paths: every refusal names the node, the op
 * and the attribute; truncated and corrupted files give errors, never a
 * crash; symbolic dims need the option; frozen inputs are checked. */
#define _POSIX_C_SOURCE 200809L
#include "common/pb_write.h"
#include "graph.h"
#include "harness.h"
#include "onnx.pb-c.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static dg_context *ctx;

/* Loads tests/onnx/FILE; *graph says whether a graph came back (the
 * pointer starts non-NULL, so a failed load must clear it), which is
 * destroyed. */
static dg_status load_fixture(const char *file, int *graph, dg_diagnostic *d) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/onnx/%s", DG_SOURCE_DIR, file);
  dg_graph *g = (dg_graph *)1;
  dg_status st = dg_onnx_load(ctx, path, NULL, &g, d);
  *graph = g != NULL;
  if (st == DG_OK && g)
    dg_graph_destroy(g);
  return st;
}

static void refused(const char *file, dg_status st, const char *node,
                    const char *op, const char *field, const char *words) {
  int graph;
  dg_diagnostic d;
  dg_status got = load_fixture(file, &graph, &d);
  CHECK(got == st && !graph && (!node || !strcmp(d.node_name, node)) &&
            (!op || !strcmp(d.op, op)) && (!field || strstr(d.field, field)) &&
            strstr(d.message, words),
        "%s refused with %s naming %s/%s/%s: %s", file, dg_status_string(st),
        node ? node : "-", op ? op : "-", field ? field : "-", d.message);
}

static void seeds_truncated_and_corrupted(void) {
  const char *seeds[] = {"conv", "qlinearconv", "gemm", "qdq"};
  for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus/%s.onnx", DG_SOURCE_DIR,
             seeds[s]);
    size_t size;
    unsigned char *buf = t_read_file(path, &size);
    if (!buf) {
      CHECK(0, "seed %s readable", seeds[s]);
      continue;
    }
    int ok_loads = 0, errors = 0;
    for (size_t n = 0; n < size; n++) { /* every truncation */
      dg_graph *g;
      dg_status st = dg_onnx_load_memory(ctx, buf, n, NULL, &g, NULL);
      if (st == DG_OK) {
        ok_loads++;
        dg_graph_destroy(g);
      } else {
        errors++;
      }
    }
    t_seed(99 + s);
    for (int i = 0; i < 400; i++) { /* random byte corruption */
      unsigned char *c = malloc(size);
      memcpy(c, buf, size);
      for (int k = 0; k < 1 + t_range(0, 3); k++)
        c[t_range(0, (int)size - 1)] = (unsigned char)t_range(0, 255);
      dg_graph *g;
      dg_diagnostic d;
      if (dg_onnx_load_memory(ctx, c, size, NULL, &g, &d) == DG_OK) {
        dg_session *sess;
        if (dg_graph_compile(g, NULL, &sess, &d) == DG_OK)
          dg_session_destroy(sess);
        dg_graph_destroy(g);
      }
      free(c);
    }
    dg_graph *g;
    dg_status full = dg_onnx_load_memory(ctx, buf, size, NULL, &g, NULL);
    if (full == DG_OK)
      dg_graph_destroy(g);
    CHECK(full == DG_OK && errors > 0,
          "%s: all %zu truncations and 400 corruptions handled (%d "
          "truncations refused, %d still valid protobuf)",
          seeds[s], size, errors, ok_loads);
    free(buf);
  }
}

/* ---- models written here, for names no fixture should have to hold ---- */

/* A name of len bytes: ONNX-like filler with tag at its very end, so that
 * the names of one model share long prefixes. */
static char *long_name(size_t len, const char *tag) {
  char *s = malloc(len + 1);
  size_t t = strlen(tag);
  for (size_t i = 0; s && i < len; i++)
    s[i] = "/backbone/layer4/layer4.1/conv2/"[i % 32];
  if (s) {
    memcpy(s + len - t, tag, t);
    s[len] = 0;
  }
  return s;
}

/* Storage of one f32 graph input or output's ValueInfo. */
typedef struct mm_value {
  Onnx__ValueInfoProto vi;
  Onnx__TypeProto type;
  Onnx__TypeProto__Tensor tensor;
  Onnx__TensorShapeProto shape;
  Onnx__TensorShapeProto__Dimension dim[4], *dims[4];
} mm_value;

static Onnx__ValueInfoProto *mm_value_init(mm_value *v, char *name, int rank,
                                           const int64_t *dims) {
  onnx__value_info_proto__init(&v->vi);
  onnx__type_proto__init(&v->type);
  onnx__type_proto__tensor__init(&v->tensor);
  onnx__tensor_shape_proto__init(&v->shape);
  for (int i = 0; i < rank; i++) {
    onnx__tensor_shape_proto__dimension__init(&v->dim[i]);
    v->dim[i].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    v->dim[i].dim_value = dims[i];
    v->dims[i] = &v->dim[i];
  }
  v->shape.n_dim = (size_t)rank;
  v->shape.dim = v->dims;
  v->tensor.has_elem_type = 1;
  v->tensor.elem_type = 1; /* FLOAT */
  v->tensor.shape = &v->shape;
  v->type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  v->type.tensor_type = &v->tensor;
  v->vi.name = name;
  v->vi.type = &v->type;
  return &v->vi;
}

static void mm_node_init(Onnx__NodeProto *n, const char *op, char *name,
                         char **in, int nin, char **out) {
  onnx__node_proto__init(n);
  n->op_type = (char *)op;
  n->name = name; /* NULL: unnamed, as generated models often are */
  n->n_input = (size_t)nin;
  n->input = in;
  n->n_output = 1;
  n->output = out;
}

static void mm_init_f32(Onnx__TensorProto *t, char *name, int rank,
                        int64_t *dims, float *data, size_t count) {
  onnx__tensor_proto__init(t);
  t->name = name;
  t->has_data_type = 1;
  t->data_type = 1; /* FLOAT */
  t->n_dims = (size_t)rank;
  t->dims = dims;
  t->n_float_data = count;
  t->float_data = data;
}

/* Packs a graph of opset 13 into a malloc'ed buffer. */
static uint8_t *mm_pack(Onnx__GraphProto *g, size_t *size) {
  Onnx__OperatorSetIdProto opset, *opsets[1] = {&opset};
  onnx__operator_set_id_proto__init(&opset);
  opset.domain = "";
  opset.has_version = 1;
  opset.version = 13;
  Onnx__ModelProto m;
  onnx__model_proto__init(&m);
  m.has_ir_version = 1;
  m.ir_version = 8;
  m.n_opset_import = 1;
  m.opset_import = opsets;
  m.graph = g;
  *size = onnx__model_proto__get_packed_size(&m);
  uint8_t *buf = malloc(*size);
  if (buf)
    onnx__model_proto__pack(&m, buf);
  return buf;
}

/* Torchvision's names reach 71 bytes, ORT's quantised graphs more: a model
 * whose input, initializers, values, nodes and outputs are 120 to 260
 * bytes, pairs of them alike up to their last byte, imports and runs by
 * those names. y1 = x W + b, y2 = relu(y1). */
static void long_names(void) {
  char *xn = long_name(120, "input.1"), *wn = long_name(150, "weight_a"),
       *bn = long_name(150, "weight_b"), *vn = long_name(140, "MatMul_out"),
       *mn = long_name(130, "MatMul_0"), *an = long_name(130, "Add_000"),
       *y1 = long_name(260, "out1"), *y2 = long_name(260, "out2");
  int64_t xdims[2] = {2, 3}, wdims[2] = {3, 4}, bdims[1] = {4},
          ydims[2] = {2, 4};
  float wv[12], bv[4], xv[6];
  for (int i = 0; i < 12; i++)
    wv[i] = 0.25f * (float)(i % 5) - 0.5f;
  for (int i = 0; i < 4; i++)
    bv[i] = 0.125f * (float)i - 0.2f;
  for (int i = 0; i < 6; i++)
    xv[i] = (float)i - 2.5f;
  mm_value vx, vy1, vy2;
  Onnx__ValueInfoProto *ins[1] = {mm_value_init(&vx, xn, 2, xdims)};
  Onnx__ValueInfoProto *outs[2] = {mm_value_init(&vy1, y1, 2, ydims),
                                   mm_value_init(&vy2, y2, 2, ydims)};
  Onnx__TensorProto tw, tb, *inits[2] = {&tw, &tb};
  mm_init_f32(&tw, wn, 2, wdims, wv, 12);
  mm_init_f32(&tb, bn, 1, bdims, bv, 4);
  char *mm_in[2] = {xn, wn}, *mm_out[1] = {vn}, *add_in[2] = {vn, bn},
       *add_out[1] = {y1}, *relu_in[1] = {y1}, *relu_out[1] = {y2};
  Onnx__NodeProto nodes[3], *np[3] = {&nodes[0], &nodes[1], &nodes[2]};
  mm_node_init(&nodes[0], "MatMul", mn, mm_in, 2, mm_out);
  mm_node_init(&nodes[1], "Add", an, add_in, 2, add_out);
  mm_node_init(&nodes[2], "Relu", NULL, relu_in, 1, relu_out);
  Onnx__GraphProto gp;
  onnx__graph_proto__init(&gp);
  gp.name = long_name(300, "graph");
  gp.n_node = 3;
  gp.node = np;
  gp.n_initializer = 2;
  gp.initializer = inits;
  gp.n_input = 1;
  gp.input = ins;
  gp.n_output = 2;
  gp.output = outs;
  size_t size;
  uint8_t *buf = mm_pack(&gp, &size);
  dg_graph *g = NULL;
  dg_diagnostic d = {0};
  dg_status st = dg_onnx_load_memory(ctx, buf, size, NULL, &g, &d);
  CHECK(st == DG_OK && g,
        "a model with 120- to 300-byte names (input, initializers, values, "
        "nodes, outputs, graph) imports: %s",
        st ? d.message : "ok");
  dg_io_info ii = {0}, o1 = {0}, o2 = {0};
  if (g) {
    dg_graph_input_info(g, 0, &ii);
    dg_graph_output_info(g, 0, &o1);
    dg_graph_output_info(g, 1, &o2);
  }
  CHECK(ii.name && !strcmp(ii.name, xn) && o1.name && !strcmp(o1.name, y1) &&
            o2.name && !strcmp(o2.name, y2),
        "the graph keeps the ONNX input and output names whole");
  dg_session *s = NULL;
  if (g && dg_graph_compile(g, NULL, &s, &d) != DG_OK)
    CHECK(0, "long-named model compiles: %s", d.message);
  float got1[8] = {0}, got2[8] = {0}, err = 0;
  if (s) {
    dg_binding in = {xn, xv, sizeof xv};
    dg_binding out[2] = {{y2, got2, sizeof got2}, {y1, got1, sizeof got1}};
    st = dg_session_run(s, &in, 1, out, 2, &d);
    for (int r = 0; r < 2; r++)
      for (int c = 0; c < 4; c++) {
        float want = bv[c];
        for (int k = 0; k < 3; k++)
          want += xv[r * 3 + k] * wv[k * 4 + c];
        err = fmaxf(err, fabsf(got1[r * 4 + c] - want));
        err = fmaxf(err, fabsf(got2[r * 4 + c] - (want > 0 ? want : 0)));
      }
    CHECK(st == DG_OK && err < 1e-5f,
          "it runs bound by the long names, each output where its name says "
          "(max error %g%s%s)",
          err, st ? ": " : "", st ? d.message : "");
    const dg_plan *p = dg_session_plan(s);
    dg_plan_node pn = {0};
    dg_plan_get_node(p, 0, &pn);
    size_t n = strlen(pn.node_name);
    CHECK(n == sizeof pn.node_name - 1 &&
              !strcmp(pn.node_name + n - 3, "...") &&
              !strncmp(pn.node_name, mn, n - 3),
          "the plan shows the 130-byte node name shortened visibly (%s)",
          pn.node_name);
    dg_session_destroy(s);
  }
  dg_graph_destroy(g);
  free(buf);

  /* A refusal at a long-named node: the diagnostic shortens the name
   * visibly and still gives the index, the op and the whole reason. */
  Onnx__AttributeProto foo, *attrs[1] = {&foo};
  onnx__attribute_proto__init(&foo);
  foo.name = "foo";
  foo.has_type = 1;
  foo.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  foo.has_i = 1;
  foo.i = 3;
  nodes[2].name = long_name(200, "Relu_2");
  nodes[2].n_attribute = 1;
  nodes[2].attribute = attrs;
  buf = mm_pack(&gp, &size);
  g = (dg_graph *)1;
  st = dg_onnx_load_memory(ctx, buf, size, NULL, &g, &d);
  size_t n = strlen(d.node_name);
  CHECK(st == DG_ERROR_UNSUPPORTED && !g && d.node_index == 2 &&
            n == sizeof d.node_name - 1 &&
            !strcmp(d.node_name + n - 3, "...") &&
            !strncmp(d.node_name, nodes[2].name, n - 3) &&
            !strcmp(d.op, "Relu") && strstr(d.message, "onnx node 2 '") &&
            strstr(d.message, "attribute 'foo' is not supported"),
        "a refused 200-byte-named node: diagnostic names index, shortened "
        "name, op and reason: %s",
        d.message);
  free(buf);
  free(nodes[2].name);
  free(gp.name);
  free(xn), free(wn), free(bn), free(vn), free(mn), free(an), free(y1),
      free(y2);
}

/* A tensor type of elem (an ONNX TensorProto.DataType) and shape [n]. */
static void tensor_value(pb_buf *graph, int field, const char *name, int elem,
                         int n) {
  pb_buf v = {0}, type = {0}, tensor = {0}, shape = {0}, dim = {0};
  pb_field_int(&dim, 1, (uint64_t)n);
  pb_field_msg(&shape, 1, &dim);
  pb_field_int(&tensor, 1, (uint64_t)elem);
  pb_field_msg(&tensor, 2, &shape);
  pb_field_msg(&type, 1, &tensor);
  pb_field_str(&v, 1, name);
  pb_field_msg(&v, 2, &type);
  pb_field_msg(graph, field, &v);
}

static pb_buf model_of(pb_buf *graph) {
  pb_buf m = {0}, op = {0};
  pb_field_int(&m, 1, 8);
  pb_field_msg(&m, 7, graph);
  pb_field_int(&op, 2, 13);
  pb_field_msg(&m, 8, &op);
  return m;
}

/* Issue 18's probes of unbounded recursion, written here (they are large
 * or slow to write with Python): If nodes nested 5,000 deep, which
 * overflowed the stack inside protobuf-c's unpack, and a chain of 60,000
 * DequantizeLinear nodes feeding each other, which overflowed it in the
 * translator. */
static void deep_models(void) {
  pb_buf cur = {0};
  pb_field_str(&cur, 2, "innermost");
  for (int i = 0; i < 5000; i++) {
    pb_buf attr = {0}, node = {0}, graph = {0};
    pb_field_str(&attr, 1, "then_branch");
    pb_field_msg(&attr, 6, &cur); /* AttributeProto.g */
    pb_field_int(&attr, 20, 5);   /* type GRAPH */
    pb_field_str(&node, 4, "If");
    pb_field_msg(&node, 5, &attr);
    pb_field_msg(&graph, 1, &node);
    cur = graph;
  }
  pb_buf m = model_of(&cur);
  dg_graph *g = NULL;
  dg_diagnostic d = {0};
  dg_status st = m.oom ? DG_ERROR_OUT_OF_MEMORY
                       : dg_onnx_load_memory(ctx, m.p, m.len, NULL, &g, &d);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT && !g && strstr(d.message, "deeper"),
        "If nested 5000 deep (%zu bytes): refused before unpacking (%s)", m.len,
        d.message);
  free(m.p);

  enum { CHAIN = 60000 };
  pb_buf graph = {0};
  char in[32], out[32];
  for (int i = 0; i <= CHAIN; i++) {
    pb_buf node = {0};
    snprintf(in, sizeof in, i ? "v%d" : "x", i - 1);
    snprintf(out, sizeof out, i < CHAIN ? "v%d" : "y", i);
    pb_field_str(&node, 1, in);
    if (i < CHAIN) {
      pb_field_str(&node, 1, "s");
      pb_field_str(&node, 1, "z");
    }
    pb_field_str(&node, 2, out);
    pb_field_str(&node, 4, i < CHAIN ? "DequantizeLinear" : "Relu");
    pb_field_msg(&graph, 1, &node);
  }
  static const float scale = 0.5f;
  static const int8_t zero = 0;
  pb_buf s = {0}, z = {0};
  pb_field_int(&s, 2, 1); /* FLOAT scalar */
  pb_field_str(&s, 8, "s");
  pb_field_bytes(&s, 9, &scale, 4);
  pb_field_int(&z, 2, 3); /* INT8 scalar */
  pb_field_str(&z, 8, "z");
  pb_field_bytes(&z, 9, &zero, 1);
  pb_field_msg(&graph, 5, &s);
  pb_field_msg(&graph, 5, &z);
  tensor_value(&graph, 11, "x", 3, 4);
  tensor_value(&graph, 12, "y", 1, 4);
  m = model_of(&graph);
  g = NULL;
  st = m.oom ? DG_ERROR_OUT_OF_MEMORY
             : dg_onnx_load_memory(ctx, m.p, m.len, NULL, &g, &d);
  CHECK(st != DG_OK && !g && strstr(d.message, "more than 64 deep"),
        "a chain of %d DequantizeLinear nodes: refused, no stack overflow "
        "(%s)",
        CHAIN, d.message);
  dg_graph_destroy(g);
  free(m.p);
}

int main(void) {
  dg_diagnostic d0;
  if (dg_context_create(NULL, &ctx) != DG_OK)
    return 1;
  refused("unsupported_op.onnx", DG_ERROR_UNSUPPORTED, "the_leaky", "Bernoulli",
          "op_type", "'Bernoulli' is not supported");
  refused("unsupported_attr.onnx", DG_ERROR_UNSUPPORTED, "conv_x", "Conv",
          "foo", "attribute 'foo'");
  refused("dilated_pool.onnx", DG_ERROR_UNSUPPORTED, "mp", "MaxPool",
          "dilations", "dilated pooling");
  refused("symbolic_batch.onnx", DG_ERROR_UNSUPPORTED, NULL, NULL, "x",
          "symbolic dimension 0 ('N')");
  refused("bad_shape.onnx", DG_ERROR_INVALID_SHAPE, "c", "Conv", "w.dims[1]",
          "weight input channels do not match");
  refused("lying_initializer.onnx", DG_ERROR_INVALID_ARGUMENT, NULL, NULL,
          "big", "tensor 'big'");
  refused("missing_input.onnx", DG_ERROR_INVALID_ARGUMENT, NULL, "Add", "input",
          "'nowhere' is produced by no earlier node");
  refused("custom_domain.onnx", DG_ERROR_UNSUPPORTED, NULL, "Relu", "domain",
          "com.example");
  deep_models();
  /* Issue 18's probes: each was accepted, with the value cut or read as
   * the default. */
  refused("stride_2p33.onnx", DG_ERROR_INVALID_ARGUMENT, "c", "Conv", "strides",
          "8589934592 is outside the 32-bit range");
  refused("pads_2p40.onnx", DG_ERROR_INVALID_ARGUMENT, "c", "Conv", "pads",
          "1099511627776 is outside the 32-bit range");
  refused("concat_axis_2p40.onnx", DG_ERROR_INVALID_ARGUMENT, "cat", "Concat",
          "axis", "1099511627776 is outside the 32-bit range");
  refused("softmax_axis_huge.onnx", DG_ERROR_INVALID_ARGUMENT, "sm", "Softmax",
          "axis", "-4611686018427387904 is outside the 32-bit range");
  refused("raw_data_17_bytes.onnx", DG_ERROR_INVALID_ARGUMENT, NULL, NULL,
          "odd", "17 bytes of raw_data where its dims say 4 values of 4 bytes");
  refused("group_0.onnx", DG_ERROR_INVALID_ARGUMENT, "c", "Conv", "group",
          "group 0 < 1");
  refused("stride_0.onnx", DG_ERROR_INVALID_ARGUMENT, "c", "Conv", "strides",
          "strides [0, 1] < 1");
  refused("kernel_contradicts.onnx", DG_ERROR_INVALID_ARGUMENT, "c", "Conv",
          "kernel_shape", "contradicts the weights' [3, 3]");
  refused("two_writers.onnx", DG_ERROR_INVALID_ARGUMENT, NULL, NULL, "y",
          "value 'y' is written by nodes 0 and 1");
  {
    /* An int64 Reshape target float would round to [3, 16777220]. */
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/onnx/reshape_exact_int64.onnx",
             DG_SOURCE_DIR);
    dg_graph *g = NULL;
    dg_io_info io = {0};
    dg_status rs = dg_onnx_load(ctx, path, NULL, &g, &d0);
    CHECK(rs == DG_OK && dg_graph_output_info(g, 0, &io) == DG_OK &&
              io.desc.rank == 2 && io.desc.dims[0] == 3 &&
              io.desc.dims[1] == 16777219,
          "reshape_exact_int64.onnx: the target [3, 16777219] is kept exact "
          "(%s)",
          rs ? d0.message : "imported");
    dg_graph_destroy(g);
    /* A NULL context is a bad argument, not an I/O error. */
    g = (dg_graph *)1;
    rs = dg_onnx_load(NULL, path, NULL, &g, &d0);
    CHECK(rs == DG_ERROR_INVALID_ARGUMENT && !g &&
              strstr(d0.message, "context"),
          "dg_onnx_load(NULL context): invalid argument naming it (%s)",
          d0.message);
    /* A FIFO in place of the model is refused at once, not waited on. */
    char fifo[] = "/tmp/dg-onnx-fifo-XXXXXX";
    int made = mkdtemp(fifo) != NULL;
    char fpath[64];
    snprintf(fpath, sizeof fpath, "%s/model.onnx", fifo);
    made = made && mkfifo(fpath, 0600) == 0;
    rs = made ? dg_onnx_load(ctx, fpath, NULL, &g, &d0) : DG_OK;
    CHECK(made && rs == DG_ERROR_IO && strstr(d0.message, "not a regular file"),
          "a FIFO as the model path is refused without blocking (%s)",
          made ? d0.message : "mkfifo failed");
    unlink(fpath);
    rmdir(fifo);
  }
  /* Found by the fuzzer: a TensorProto without a name used to crash. */
  refused("fuzz_unnamed_value.onnx", DG_ERROR_INVALID_ARGUMENT, NULL, NULL,
          "name", "has no name");
  /* Found by the fuzzer: a Relu without outputs in a foldable chain. */
  int graph;
  dg_diagnostic d;
  dg_status st = load_fixture("fuzz_relu_without_output.onnx", &graph, &d);
  CHECK(st != DG_OK || graph, "fuzz_relu_without_output.onnx: no crash (%s)",
        st ? d.message : "imported");
  /* Found by the fuzzer: ops whose output descriptor was read from the
   * tensor array while the array grew (use after free; ASan run). */
  st = load_fixture("fuzz_desc_moved.onnx", &graph, &d);
  CHECK(st != DG_OK || graph, "fuzz_desc_moved.onnx: no crash (%s)",
        st ? d.message : "imported");
  /* Found by the fuzzer: a DequantizeLinear reading its own output used
   * to recurse until the stack ran out. */
  st = load_fixture("fuzz_dq_cycle.onnx", &graph, &d);
  CHECK(st != DG_OK, "fuzz_dq_cycle.onnx refused: %s",
        st ? d.message : "imported");
  refused("does_not_exist.onnx", DG_ERROR_IO, NULL, NULL, "path",
          "cannot open");
  { /* the option that admits symbolic dims */
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/onnx/symbolic_batch.onnx",
             DG_SOURCE_DIR);
    dg_onnx_options o = {.symbolic_dim_value = 8};
    dg_graph *g;
    dg_io_info info = {0};
    dg_status st = dg_onnx_load(ctx, path, &o, &g, NULL);
    if (st == DG_OK)
      dg_graph_input_info(g, 0, &info);
    CHECK(st == DG_OK && info.desc.dims[0] == 8,
          "symbolic_dim_value gives the batch dimension (%lld)",
          (long long)info.desc.dims[0]);
    if (st == DG_OK)
      dg_graph_destroy(g);
    dg_onnx_constant k = {"nope", &info.desc, path};
    o = (dg_onnx_options){
        .symbolic_dim_value = 8, .constants = &k, .constant_count = 1};
    dg_diagnostic d;
    CHECK(dg_onnx_load(ctx, path, &o, &g, &d) == DG_ERROR_INVALID_ARGUMENT &&
              strstr(d.message, "'nope'") &&
              strstr(d.message, "not a graph input"),
          "freezing an input that does not exist is refused: %s", d.message);
  }
  {
    dg_graph *g;
    dg_diagnostic d;
    CHECK(dg_onnx_load_memory(NULL, "x", 1, NULL, &g, &d) ==
              DG_ERROR_INVALID_ARGUMENT,
          "NULL context refused");
    CHECK(dg_onnx_load(ctx, NULL, NULL, &g, &d) == DG_ERROR_INVALID_ARGUMENT,
          "NULL path refused");
    CHECK(dg_onnx_load_memory(ctx, "\x08\x07garbage", 9, NULL, &g, &d) != DG_OK,
          "garbage refused: %s", d.message);
  }
  long_names();
  seeds_truncated_and_corrupted();
  dg_context_destroy(ctx);
  return t_exit();
}
