/* The ONNX importer's error paths: every refusal names the node, the op
 * and the attribute; truncated and corrupted files give errors, never a
 * crash; symbolic dims need the option; frozen inputs are checked. */
#define _POSIX_C_SOURCE 200809L
#include "graph.h"
#include "harness.h"

#include <string.h>

static dg_context *ctx;

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *p = malloc(n > 0 ? (size_t)n : 1);
  if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
    free(p);
    p = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return p;
}

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
    unsigned char *buf = read_file(path, &size);
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

int main(void) {
  if (dg_context_create(NULL, &ctx) != DG_OK)
    return 1;
  refused("unsupported_op.onnx", DG_ERROR_UNSUPPORTED, "the_leaky", "LeakyRelu",
          "op_type", "'LeakyRelu' is not supported");
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
  seeds_truncated_and_corrupted();
  dg_context_destroy(ctx);
  return t_exit();
}
