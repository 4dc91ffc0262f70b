/* The ONNX importer's error paths: every refusal names the node, the op
 * and the attribute; truncated and corrupted files give errors, never a
 * crash; symbolic dims need the option; frozen inputs are checked. */
#define _POSIX_C_SOURCE 200809L
#include "common/pb_write.h"
#include "graph.h"
#include "harness.h"
#include "onnx.pb-c.h"

#include <dirent.h>
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
  const char *seeds[] = {"conv", "qlinearconv", "gemm", "qdq", "qdq_int8"};
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

/* The opset mm_pack writes: 13 but where a test sets another. */
static int mm_opset = 13;

/* Packs a graph of opset mm_opset into a malloc'ed buffer. */
static uint8_t *mm_pack(Onnx__GraphProto *g, size_t *size) {
  Onnx__OperatorSetIdProto opset, *opsets[1] = {&opset};
  onnx__operator_set_id_proto__init(&opset);
  opset.domain = "";
  opset.has_version = 1;
  opset.version = mm_opset;
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

/* ---- elementwise binary ops: legacy broadcasting, PRelu's slope ---- */

typedef struct bin_case {
  const char *what, *op;
  int opset;
  int broadcast, axis; /* -1: attribute absent */
  int ar, br;
  int64_t ad[4], bd[4];
  dg_status st;      /* DG_OK: it runs, and y is checked */
  const char *field; /* the refusal's */
} bin_case;

/* y = A op B for A [ad] an input and B [bd] an initializer, the opset's
 * attributes set as the case says. Where it imports, y is checked against
 * the legacy rule computed here: B's dims stand at A's axes [axis,
 * axis + br) (PRelu: axis 1, or a single slope). */
static void binary_case(const bin_case *c) {
  int64_t an = 1, bn = 1;
  for (int k = 0; k < c->ar; k++)
    an *= c->ad[k];
  for (int k = 0; k < c->br; k++)
    bn *= c->bd[k];
  float av[64], bv[64], yv[64];
  for (int64_t i = 0; i < an; i++)
    av[i] = (float)(i % 7) - 3.0f;
  for (int64_t i = 0; i < bn; i++)
    bv[i] = 0.5f * (float)i + 0.25f;
  mm_value va, vy;
  char an_[] = "A", bn_[] = "B", yn[] = "y";
  Onnx__ValueInfoProto *ins[1] = {mm_value_init(&va, an_, c->ar, c->ad)};
  Onnx__ValueInfoProto *outs[1] = {mm_value_init(&vy, yn, c->ar, c->ad)};
  Onnx__TensorProto tb, *inits[1] = {&tb};
  int64_t bdims[4];
  memcpy(bdims, c->bd, sizeof bdims);
  mm_init_f32(&tb, bn_, c->br, bdims, bv, (size_t)bn);
  char *in[2] = {an_, bn_}, *out[1] = {yn};
  Onnx__NodeProto node, *np[1] = {&node};
  mm_node_init(&node, c->op, "n", in, 2, out);
  Onnx__AttributeProto at[2], *attrs[2] = {&at[0], &at[1]};
  int na = 0;
  const char *names[2] = {"broadcast", "axis"};
  int vals[2] = {c->broadcast, c->axis};
  for (int k = 0; k < 2; k++)
    if (vals[k] >= 0) {
      onnx__attribute_proto__init(&at[na]);
      at[na].name = (char *)names[k];
      at[na].has_type = 1;
      at[na].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
      at[na].has_i = 1;
      at[na].i = vals[k];
      na++;
    }
  node.n_attribute = (size_t)na;
  node.attribute = attrs;
  Onnx__GraphProto gp;
  onnx__graph_proto__init(&gp);
  gp.name = "g";
  gp.n_node = 1;
  gp.node = np;
  gp.n_initializer = 1;
  gp.initializer = inits;
  gp.n_input = 1;
  gp.input = ins;
  gp.n_output = 1;
  gp.output = outs;
  mm_opset = c->opset;
  size_t size;
  uint8_t *buf = mm_pack(&gp, &size);
  mm_opset = 13;
  dg_graph *g = NULL;
  dg_diagnostic d = {0};
  dg_status st = dg_onnx_load_memory(ctx, buf, size, NULL, &g, &d);
  free(buf);
  if (c->st != DG_OK) {
    CHECK(st == c->st && !g && strstr(d.field, c->field),
          "%s: refused with %s naming '%s' (%s)", c->what,
          dg_status_string(c->st), c->field, d.message);
    dg_graph_destroy(g);
    return;
  }
  dg_session *s = NULL;
  if (st == DG_OK)
    st = dg_graph_compile(g, NULL, &s, &d);
  if (st == DG_OK)
    st = dg_session_run(s, &(dg_binding){"A", av, sizeof(float) * an}, 1,
                        &(dg_binding){"y", yv, sizeof(float) * an}, 1, &d);
  int bad = 0;
  int prelu = !strcmp(c->op, "PRelu");
  int axis = prelu ? 1 : c->axis >= 0 ? c->axis : c->ar - c->br;
  for (int64_t i = 0; st == DG_OK && i < an; i++) {
    /* B's flat index: A's index on axes [axis, axis + br), B's dims 1
     * broadcast, and a single B everywhere. */
    int64_t rem = i, idx[4], bi = 0;
    for (int k = c->ar - 1; k >= 0; k--)
      idx[k] = rem % c->ad[k], rem /= c->ad[k];
    for (int k = 0; bn > 1 && k < c->br; k++)
      bi = bi * c->bd[k] + (c->bd[k] == 1 ? 0 : idx[axis + k]);
    float a = av[i], b = bv[bi];
    float want = !strcmp(c->op, "Mul")   ? a * b
                 : !strcmp(c->op, "Sub") ? a - b
                 : !strcmp(c->op, "Add") ? a + b
                 : !strcmp(c->op, "Div") ? a / b
                 : prelu                 ? (a < 0 ? a * b : a)
                                         : NAN;
    if (fabsf(yv[i] - want) > 1e-6f * fmaxf(1.0f, fabsf(want)))
      bad++;
  }
  CHECK(st == DG_OK && !bad, "%s: runs, %d of %lld values wrong%s%s", c->what,
        bad, (long long)an, st ? ": " : "", st ? d.message : "");
  dg_session_destroy(s);
  dg_graph_destroy(g);
}

/* Greater at opset 6 with broadcast=1 axis=1 ([2,3,4] > [3], B's three
 * values standing on A's axis 1), both int64 (a graph input and an
 * initializer, beyond 2^32), the output bool: int64 and bool are real
 * tensors now, and the comparisons read the legacy attributes too. The
 * same model at opset 7 with the attributes is refused naming them. */
static void compare_legacy_int64(void) {
  for (int opset = 6; opset <= 7; opset++) {
    int64_t ad[3] = {2, 3, 4}, bd[1] = {3}, av[24], bv[3];
    const int64_t big = INT64_C(1) << 40;
    for (int i = 0; i < 24; i++)
      av[i] = (i % 5 - 2) * big;
    for (int i = 0; i < 3; i++)
      bv[i] = (i - 1) * big;
    mm_value va, vy;
    char an_[] = "A", bn_[] = "B", yn[] = "y";
    Onnx__ValueInfoProto *ins[1] = {mm_value_init(&va, an_, 3, ad)};
    Onnx__ValueInfoProto *outs[1] = {mm_value_init(&vy, yn, 3, ad)};
    va.tensor.elem_type = 7; /* INT64 */
    vy.tensor.elem_type = 9; /* BOOL */
    Onnx__TensorProto tb, *inits[1] = {&tb};
    onnx__tensor_proto__init(&tb);
    tb.name = bn_;
    tb.has_data_type = 1;
    tb.data_type = 7;
    tb.n_dims = 1;
    tb.dims = bd;
    tb.n_int64_data = 3;
    tb.int64_data = bv;
    char *in[2] = {an_, bn_}, *out[1] = {yn};
    Onnx__NodeProto node, *np[1] = {&node};
    mm_node_init(&node, "Greater", "n", in, 2, out);
    Onnx__AttributeProto at[2], *attrs[2] = {&at[0], &at[1]};
    const char *names[2] = {"broadcast", "axis"};
    for (int k = 0; k < 2; k++) {
      onnx__attribute_proto__init(&at[k]);
      at[k].name = (char *)names[k];
      at[k].has_type = 1;
      at[k].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
      at[k].has_i = 1;
      at[k].i = 1;
    }
    node.n_attribute = 2;
    node.attribute = attrs;
    Onnx__GraphProto gp;
    onnx__graph_proto__init(&gp);
    gp.name = "g";
    gp.n_node = 1;
    gp.node = np;
    gp.n_initializer = 1;
    gp.initializer = inits;
    gp.n_input = 1;
    gp.input = ins;
    gp.n_output = 1;
    gp.output = outs;
    mm_opset = opset;
    size_t size;
    uint8_t *buf = mm_pack(&gp, &size);
    mm_opset = 13;
    dg_graph *g = NULL;
    dg_diagnostic d = {0};
    dg_status st = dg_onnx_load_memory(ctx, buf, size, NULL, &g, &d);
    free(buf);
    if (opset == 7) {
      CHECK(st == DG_ERROR_UNSUPPORTED && strstr(d.field, "broadcast"),
            "Greater at opset 7 with broadcast refused naming it (%s)",
            d.message);
      dg_graph_destroy(g);
      continue;
    }
    dg_session *s = NULL;
    uint8_t yv[24];
    if (st == DG_OK)
      st = dg_graph_compile(g, NULL, &s, &d);
    if (st == DG_OK)
      st = dg_session_run(s, &(dg_binding){"A", av, sizeof av}, 1,
                          &(dg_binding){"y", yv, sizeof yv}, 1, &d);
    int bad = 0;
    for (int i = 0; st == DG_OK && i < 24; i++)
      bad += yv[i] != (av[i] > bv[(i / 4) % 3]);
    CHECK(st == DG_OK && !bad,
          "Greater opset 6 broadcast=1 axis=1 of int64 [2,3,4] and [3] "
          "gives bool: %d of 24 wrong%s%s",
          bad, st ? ": " : "", st ? d.message : "");
    dg_session_destroy(s);
    dg_graph_destroy(g);
  }
}

static void binary_broadcasting(void) {
  static const bin_case cases[] = {
      {"Mul opset 6, broadcast=1 axis=1: [2,3,4] * [3]",
       "Mul",
       6,
       1,
       1,
       3,
       1,
       {2, 3, 4},
       {3},
       DG_OK,
       NULL},
      {"Sub opset 6, broadcast=1 axis=0: [2,3,4] - [2,3]",
       "Sub",
       6,
       1,
       0,
       3,
       2,
       {2, 3, 4},
       {2, 3},
       DG_OK,
       NULL},
      {"Add opset 1, broadcast=1, no axis: [2,3] + [3]",
       "Add",
       1,
       1,
       -1,
       2,
       1,
       {2, 3},
       {3},
       DG_OK,
       NULL},
      {"Div opset 6, broadcast=1 axis=1: [2,3,2] / [1]",
       "Div",
       6,
       1,
       1,
       3,
       1,
       {2, 3, 2},
       {1},
       DG_OK,
       NULL},
      {"Add opset 6, broadcast=0 with [2,3] and [3]",
       "Add",
       6,
       0,
       -1,
       2,
       1,
       {2, 3},
       {3},
       DG_ERROR_INVALID_ARGUMENT,
       "broadcast"},
      {"Mul opset 6, axis=2 puts [3] past A's end",
       "Mul",
       6,
       1,
       2,
       2,
       1,
       {2, 3},
       {3},
       DG_ERROR_INVALID_ARGUMENT,
       "axis"},
      {"Mul opset 6, axis=0 where A's dim 0 is 2, not B's 3",
       "Mul",
       6,
       1,
       0,
       2,
       1,
       {2, 3},
       {3},
       DG_ERROR_INVALID_ARGUMENT,
       "axis"},
      {"Div opset 13 with broadcast",
       "Div",
       13,
       1,
       -1,
       2,
       1,
       {2, 3},
       {3},
       DG_ERROR_UNSUPPORTED,
       "broadcast"},
      {"PRelu opset 6, a slope per channel: [2,3,2,2] with [3]",
       "PRelu",
       6,
       -1,
       -1,
       4,
       1,
       {2, 3, 2, 2},
       {3},
       DG_OK,
       NULL},
      {"PRelu opset 6, one slope",
       "PRelu",
       6,
       -1,
       -1,
       3,
       1,
       {2, 3, 2},
       {1},
       DG_OK,
       NULL},
      {"PRelu opset 6, 2 slopes for 3 channels",
       "PRelu",
       6,
       -1,
       -1,
       3,
       1,
       {2, 3, 2},
       {2},
       DG_ERROR_INVALID_ARGUMENT,
       "slope"},
      {"PRelu opset 9, slope [3,1,1] to X [2,3,2,2]",
       "PRelu",
       9,
       -1,
       -1,
       4,
       3,
       {2, 3, 2, 2},
       {3, 1, 1},
       DG_OK,
       NULL},
      {"PRelu opset 9, slope [2,3] wider than X [3]",
       "PRelu",
       9,
       -1,
       -1,
       1,
       2,
       {3},
       {2, 3},
       DG_ERROR_INVALID_ARGUMENT,
       "slope"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    binary_case(&cases[i]);
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

/* Loads tests/onnx/NAME, runs it on the CPU with x = 0.25 * (i + 1)
 * and returns the output in y (n values); the node count in *nodes. */
static dg_status load_and_run(const char *file, float *y, size_t n, int *nodes,
                              dg_diagnostic *d) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/onnx/%s", DG_SOURCE_DIR, file);
  dg_graph *g = NULL;
  dg_status st = dg_onnx_load(ctx, path, NULL, &g, d);
  if (st != DG_OK)
    return st;
  *nodes = dg_graph_node_count(g);
  dg_io_info in;
  dg_graph_input_info(g, 0, &in);
  size_t nx = 1;
  for (int k = 0; k < in.desc.rank; k++)
    nx *= (size_t)in.desc.dims[k];
  float *x = malloc(sizeof *x * nx);
  for (size_t i = 0; i < nx; i++)
    x[i] = 0.25f * (float)(i + 1) * (i % 3 == 1 ? -1.0f : 1.0f);
  int cpu = 0;
  dg_compile_options o = {.devices = &cpu, .device_count = 1};
  dg_session *s = NULL;
  st = dg_graph_compile(g, &o, &s, d);
  if (st == DG_OK)
    st = dg_session_run(s, &(dg_binding){in.name, x, nx * sizeof *x}, 1,
                        &(dg_binding){"y", y, n * sizeof *y}, 1, d);
  dg_session_destroy(s);
  dg_graph_destroy(g);
  free(x);
  return st;
}

/* Shape arithmetic is folded at import: no node is built for it, and the
 * folded values are what ONNX's semantics give (worked out by hand). */
static void fold_models(void) {
  dg_diagnostic d;
  float y[120];
  int nodes = 0;
  dg_status st = load_and_run("fold_shape_chain.onnx", y, 120, &nodes, &d);
  int ok = st == DG_OK && nodes == 2;
  for (int i = 0; ok && i < 120; i++)
    ok = y[i] == (i % 3 == 1 ? 0.0f : 0.25f * (float)(i + 1));
  CHECK(ok,
        "fold_shape_chain.onnx: Shape/Gather/Unsqueeze/Concat folded "
        "(%d nodes built: reshape, relu), y = relu(x) as [2, 60] (%s)",
        nodes, st ? d.message : "ran");
  st = load_and_run("fold_range_where.onnx", y, 8, &nodes, &d);
  const float c[4] = {1.5f, 2.5f, 11.5f, 4.5f}; /* where(r == 2, 10, r) + 1.5 */
  ok = st == DG_OK && nodes == 1;
  for (int i = 0; ok && i < 8; i++)
    ok =
        y[i] == 0.25f * (float)(i + 1) * (i % 3 == 1 ? -1.0f : 1.0f) + c[i % 4];
  CHECK(ok,
        "fold_range_where.onnx: Range/Equal/Where/Cast/ConstantOfShape "
        "folded (%d node built: add), y = x + [1.5, 2.5, 11.5, 4.5] (%s)",
        nodes, st ? d.message : "ran");
  st = load_and_run("conv1d.onnx", y, 5, &nodes, &d);
  /* x = [0.25, -0.5, 0.75, 1, -1.25], w = [1, 0, -1], pads 1 and 1 */
  CHECK(st == DG_OK && y[0] == 0.5f && y[1] == -0.5f && y[2] == -1.5f &&
            y[3] == 2.0f && y[4] == 1.0f,
        "conv1d.onnx: a 1-D conv as 2-D of height 1: y = [0.5 -0.5 -1.5 2 1] "
        "(%s: %g %g %g %g %g)",
        st ? d.message : "ran", y[0], y[1], y[2], y[3], y[4]);
  refused("fold_range_huge.onnx", DG_ERROR_UNSUPPORTED, "range", "Range",
          "delta", "Range of 1e+12 elements");
  refused("fold_expand_huge.onnx", DG_ERROR_UNSUPPORTED, "expand", "Expand",
          "output", "would hold more than 4194304 elements");
  refused("fold_div_zero.onnx", DG_ERROR_INVALID_ARGUMENT, "div", "Div", "B",
          "integer division by zero");
  refused("fold_range_runtime.onnx", DG_ERROR_UNSUPPORTED, "range", "Range",
          "x", "only taken on values known at import");
}

/* Every input the fuzzer kept (tests/fuzz/found_onnx: what earlier runs
 * found, crashes and leaks among them) imports or is refused, without a
 * crash; under ASan (CI's asan section) a leak fails the program. */
static void found_by_fuzzing(void) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/tests/fuzz/found_onnx", DG_SOURCE_DIR);
  DIR *dp = opendir(dir);
  int files = 0, imported = 0;
  struct dirent *e;
  while (dp && (e = readdir(dp))) {
    if (e->d_name[0] == '.')
      continue;
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    size_t size;
    unsigned char *buf = t_read_file(path, &size);
    if (!buf)
      continue;
    dg_graph *g = NULL;
    dg_diagnostic d;
    if (dg_onnx_load_memory(ctx, buf, size, NULL, &g, &d) == DG_OK)
      imported++;
    dg_graph_destroy(g);
    free(buf);
    files++;
  }
  if (dp)
    closedir(dp);
  CHECK(files > 400,
        "the fuzzer's %d kept inputs (tests/fuzz/found_onnx) "
        "import (%d) or are refused, none crashes",
        files, imported);
}

/* External data is read from the model's folder and nowhere else. */
static void external_data(void) {
  char dir[1024], path[1200];
  snprintf(dir, sizeof dir, "%s/tests/onnx/external", DG_SOURCE_DIR);
  dg_diagnostic d;
  dg_graph *g = NULL;
  snprintf(path, sizeof path, "%s/ext_ok.onnx", dir);
  dg_status st = dg_onnx_load(ctx, path, NULL, &g, &d);
  float x[4] = {10, 20, 30, 40}, y[4] = {0};
  int cpu = 0;
  dg_compile_options o = {.devices = &cpu, .device_count = 1};
  dg_session *s = NULL;
  if (st == DG_OK)
    st = dg_graph_compile(g, &o, &s, &d);
  if (st == DG_OK)
    st = dg_session_run(s, &(dg_binding){"x", x, sizeof x}, 1,
                        &(dg_binding){"y", y, sizeof y}, 1, &d);
  CHECK(st == DG_OK && y[0] == 11 && y[1] == 22 && y[2] == 33 && y[3] == 44,
        "ext_ok.onnx: b read from ext.bin at offset 16: y = x + [1 2 3 4] "
        "(%s: %g %g %g %g)",
        st ? d.message : "ran", y[0], y[1], y[2], y[3]);
  dg_session_destroy(s);
  dg_graph_destroy(g);
  static const struct {
    const char *file, *words;
  } bad[] = {
      {"ext_absolute.onnx", "'/etc/passwd' is refused: it must be a relative"},
      {"ext_dotdot.onnx", "'../make_negative.py' is refused"},
      {"ext_short.onnx", "holds 32 bytes, short of offset 24 + 16"},
      {"ext_length.onnx", "external data length 12 where its dims say 16"},
      {"ext_missing.onnx", "cannot find external data file 'nowhere.bin'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, bad[i].file);
    st = dg_onnx_load(ctx, path, NULL, &g, &d);
    CHECK(st == DG_ERROR_INVALID_ARGUMENT && !g &&
              strstr(d.message, bad[i].words) && !strcmp(d.field, "b"),
          "%s refused naming tensor b: %s", bad[i].file, d.message);
  }
  /* From memory: refused unless the folder is given. */
  size_t size;
  snprintf(path, sizeof path, "%s/ext_ok.onnx", dir);
  void *bytes = t_read_file(path, &size);
  st = dg_onnx_load_memory(ctx, bytes, size, NULL, &g, &d);
  CHECK(st == DG_ERROR_INVALID_ARGUMENT &&
            strstr(d.message, "external_data_dir"),
        "external data from memory without a folder: refused naming "
        "external_data_dir (%s)",
        d.message);
  dg_onnx_options oo = {.external_data_dir = dir};
  st = dg_onnx_load_memory(ctx, bytes, size, &oo, &g, &d);
  CHECK(st == DG_OK,
        "external data from memory with external_data_dir: "
        "imported (%s)",
        st ? d.message : "ok");
  dg_graph_destroy(g);
  free(bytes);
  /* A symlink in the folder: taken when it stays inside, refused when it
   * leads out. */
  char tmp[] = "/tmp/dg-ext-XXXXXX", model[64], link[64], inside[64];
  int made = mkdtemp(tmp) != NULL;
  snprintf(model, sizeof model, "%s/ext_link.onnx", tmp);
  snprintf(link, sizeof link, "%s/link.bin", tmp);
  snprintf(inside, sizeof inside, "%s/inside.bin", tmp);
  snprintf(path, sizeof path, "%s/ext_link.onnx", dir);
  void *m = made ? t_read_file(path, &size) : NULL;
  FILE *f = m ? fopen(model, "wb") : NULL;
  made = f && fwrite(m, 1, size, f) == size;
  if (f)
    fclose(f);
  free(m);
  snprintf(path, sizeof path, "%s/ext.bin", dir);
  made = made && symlink(path, link) == 0;
  st = made ? dg_onnx_load(ctx, model, NULL, &g, &d) : DG_OK;
  CHECK(made && st == DG_ERROR_INVALID_ARGUMENT &&
            strstr(d.message, "leads outside the model's folder"),
        "a symlink leading out of the model's folder is refused (%s)",
        made ? d.message : "setup failed");
  void *b = t_read_file(path, &size);
  f = b ? fopen(inside, "wb") : NULL;
  made = f && fwrite(b, 1, size, f) == size;
  if (f)
    fclose(f);
  free(b);
  made = made && unlink(link) == 0 && symlink("inside.bin", link) == 0;
  st = made ? dg_onnx_load(ctx, model, NULL, &g, &d) : DG_ERROR_IO;
  CHECK(st == DG_OK,
        "a symlink staying inside the model's folder is taken "
        "(%s)",
        st ? d.message : "imported");
  dg_graph_destroy(g);
  unlink(link);
  unlink(inside);
  unlink(model);
  rmdir(tmp);
}

/* Dilated pooling imports: MaxPool 2x2 at dilation 2 over 6x6, and a
 * 1-D AveragePool through the reshape to 2-D; a dilation below 1 is
 * refused. Inputs are load_and_run's x[i] = 0.25 (i+1), negated where
 * i % 3 == 1. */
static void dilated_pools(void) {
  dg_diagnostic d;
  float y[16];
  int nodes = 0;
  /* y[a][b] is the max of x at i0, i0+2, i0+12, i0+14 (i0 = 6a+b): x at
   * i0+14, 0.25 (i0+15), unless i0 % 3 == 2 makes that one negative; then
   * x at i0+12, 0.25 (i0+13). */
  static const float want[16] = {3.75f, 4.0f, 3.75f, 4.5f, 5.25f, 5.5f,
                                 5.25f, 6.0f, 6.75f, 7.0f, 6.75f, 7.5f,
                                 8.25f, 8.5f, 8.25f, 9.0f};
  dg_status st = load_and_run("dilated_pool.onnx", y, 16, &nodes, &d);
  int bad = -1;
  for (int i = 0; st == DG_OK && bad < 0 && i < 16; i++)
    if (y[i] != want[i])
      bad = i;
  CHECK(st == DG_OK && bad < 0,
        "dilated_pool.onnx: MaxPool k 2x2, dilations 2x2 over 6x6 gives the "
        "hand-worked 4x4 (%s%s)",
        st ? d.message : "ran", bad >= 0 ? ", a value differs" : "");
  /* x = [0.25 -0.5 0.75 1 -1.25 1.5 1.75], k 2, dilation 3, pads 1/1,
   * count_include_pad: window o takes x[o-1] and x[o+2], halved; o = 0's
   * x[-1] and o = 5's x[7] are padding. */
  static const float want1[6] = {0.375f, 0.625f, -0.875f,
                                 1.125f, 1.375f, -0.625f};
  st = load_and_run("dilated_avg_pool_1d.onnx", y, 6, &nodes, &d);
  bad = -1;
  for (int i = 0; st == DG_OK && bad < 0 && i < 6; i++)
    if (y[i] != want1[i])
      bad = i;
  CHECK(st == DG_OK && bad < 0,
        "dilated_avg_pool_1d.onnx: 1-D AveragePool k 2, dilation 3, "
        "count_include_pad gives the hand-worked 6 values (%s%s)",
        st ? d.message : "ran", bad >= 0 ? ", a value differs" : "");
  refused("negative_dilation_pool.onnx", DG_ERROR_INVALID_ARGUMENT, "mp",
          "MaxPool", "dilations", "dilations [1, -1] < 1");
}

/* LpPool and GlobalLpPool, as the translator composes them. Inputs are
 * load_and_run's x = 0.25, -0.5, 0.75, 1, -1.25, 1.5, 1.75, -2, 2.25.
 * Sums of |x|^p are worked out here by hand; the root is taken with libm
 * (within 1e-6 relative: the graph computes it in f32). */
static int close_to(float got, double want) {
  return fabs(got - want) <= 1e-6 * fabs(want);
}

static void lp_pools(void) {
  dg_diagnostic d;
  float y[4];
  int nodes = 0;
  /* p 1, 2x2 windows of the 3x3: sums of |x| exactly */
  dg_status st = load_and_run("lp_pool_p1.onnx", y, 4, &nodes, &d);
  CHECK(st == DG_OK && y[0] == 3.0f && y[1] == 4.0f && y[2] == 6.0f &&
            y[3] == 7.0f,
        "lp_pool_p1.onnx: LpPool p 1, k 2x2 over 3x3 = [3 4 6 7] (%s: %g %g "
        "%g %g)",
        st ? d.message : "ran", y[0], y[1], y[2], y[3]);
  /* p 2, k 2, dilation 2, stride 2 over 6, ceil_mode: taps (0, 2), (2, 4)
   * and (4, 6), 6 past the end: sqrt(0.0625 + 0.5625),
   * sqrt(0.5625 + 1.5625), sqrt(1.5625) */
  st = load_and_run("lp_pool_1d_ceil.onnx", y, 3, &nodes, &d);
  CHECK(st == DG_OK && close_to(y[0], sqrt(0.625)) &&
            close_to(y[1], sqrt(2.125)) && close_to(y[2], 1.25),
        "lp_pool_1d_ceil.onnx: 1-D LpPool p 2, dilation 2, ceil_mode = "
        "[%g %g 1.25] (%s: %g %g %g)",
        sqrt(0.625), sqrt(2.125), st ? d.message : "ran", y[0], y[1], y[2]);
  /* p 3 over [1, 2, 2]: 0.25^3 + 0.5^3 = 0.140625, 0.75^3 + 1 = 1.421875 */
  st = load_and_run("global_lp_pool_p3.onnx", y, 2, &nodes, &d);
  CHECK(st == DG_OK && close_to(y[0], cbrt(0.140625)) &&
            close_to(y[1], cbrt(1.421875)),
        "global_lp_pool_p3.onnx: GlobalLpPool p 3 (%s: %g %g)",
        st ? d.message : "ran", y[0], y[1]);
  /* p 2 (default) over 2x2: 0.0625 + 0.25 + 0.5625 + 1 = 1.875 */
  st = load_and_run("global_lp_pool_p2.onnx", y, 1, &nodes, &d);
  CHECK(st == DG_OK && close_to(y[0], sqrt(1.875)),
        "global_lp_pool_p2.onnx: GlobalLpPool p 2 = sqrt(1.875) (%s: %g)",
        st ? d.message : "ran", y[0]);
  refused("lp_pool_ceil_auto_pad.onnx", DG_ERROR_UNSUPPORTED, "lp", "LpPool",
          "ceil_mode", "ceil_mode with auto_pad");
}

int main(void) {
  dg_diagnostic d0;
  if (dg_context_create(NULL, &ctx) != DG_OK)
    return 1;
  refused("unsupported_op.onnx", DG_ERROR_UNSUPPORTED, "the_det", "Det",
          "op_type", "'Det' is not supported");
  refused("many_unsupported.onnx", DG_ERROR_UNSUPPORTED, "det", "Det",
          "op_type",
          "'Det' is not supported; 1 more node not supported: Foo (node 3)");
  fold_models();
  external_data();
  found_by_fuzzing();
  refused("unsupported_attr.onnx", DG_ERROR_UNSUPPORTED, "conv_x", "Conv",
          "foo", "attribute 'foo'");
  dilated_pools();
  lp_pools();
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
  binary_broadcasting();
  compare_legacy_int64();
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
    o = (dg_onnx_options){.symbolic_dim_value = 8, .constant_count = -1};
    CHECK(dg_onnx_load(ctx, path, &o, &g, &d) == DG_ERROR_INVALID_ARGUMENT &&
              !strcmp(d.field, "constant_count") && strstr(d.message, "-1"),
          "a negative constant_count is refused naming it: %s", d.message);
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
