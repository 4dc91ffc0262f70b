/* dg-bench --scale (bench_scale.h). The ONNX model is written here,
 * protobuf by hand (the few fields a relu chain needs), so the bench
 * needs no protobuf library of its own. */
#define _POSIX_C_SOURCE 200809L
#include "bench_scale.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- a protobuf writer for the relu chain ---- */

typedef struct buf {
  uint8_t *p;
  size_t len, cap;
  int oom;
} buf;

static void put(buf *b, const void *data, size_t n) {
  if (b->oom)
    return;
  if (b->len + n > b->cap) {
    size_t c = b->cap ? b->cap * 2 : 4096;
    while (c < b->len + n)
      c *= 2;
    uint8_t *q = realloc(b->p, c);
    if (!q) {
      b->oom = 1;
      return;
    }
    b->p = q;
    b->cap = c;
  }
  memcpy(b->p + b->len, data, n);
  b->len += n;
}

static void varint(buf *b, uint64_t v) {
  uint8_t t[10];
  int n = 0;
  do {
    t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  put(b, t, (size_t)n);
}

/* Field f as a varint, or as length-delimited bytes. */
static void field_int(buf *b, int f, uint64_t v) {
  varint(b, (uint64_t)f << 3);
  varint(b, v);
}
static void field_bytes(buf *b, int f, const void *data, size_t n) {
  varint(b, (uint64_t)f << 3 | 2);
  varint(b, n);
  put(b, data, n);
}
static void field_str(buf *b, int f, const char *s) {
  field_bytes(b, f, s, strlen(s));
}
static void field_msg(buf *b, int f, buf *m) {
  field_bytes(b, f, m->p, m->len);
  b->oom |= m->oom;
  free(m->p);
  memset(m, 0, sizeof *m);
}

/* ValueInfoProto: name, a float tensor of shape [1, 8]. */
static void value_info(buf *g, int f, const char *name) {
  buf v = {0}, type = {0}, tensor = {0}, shape = {0};
  for (int i = 0; i < 2; i++) {
    buf dim = {0};
    field_int(&dim, 1, i ? 8 : 1); /* Dimension.dim_value */
    field_msg(&shape, 1, &dim);    /* TensorShapeProto.dim */
  }
  field_int(&tensor, 1, 1);      /* elem_type FLOAT */
  field_msg(&tensor, 2, &shape); /* shape */
  field_msg(&type, 1, &tensor);  /* TypeProto.tensor_type */
  field_str(&v, 1, name);
  field_msg(&v, 2, &type);
  field_msg(g, f, &v);
}

/* ModelProto (opset 13) of x -> relu -> ... -> relu -> y, n nodes. */
static buf chain_model(int n) {
  buf m = {0}, g = {0}, op = {0};
  char in[32], out[32], name[32];
  for (int i = 0; i < n; i++) {
    buf node = {0};
    snprintf(in, sizeof in, i ? "v%d" : "x", i - 1);
    snprintf(out, sizeof out, i < n - 1 ? "v%d" : "y", i);
    snprintf(name, sizeof name, "r%d", i);
    field_str(&node, 1, in);
    field_str(&node, 2, out);
    field_str(&node, 3, name);
    field_str(&node, 4, "Relu");
    field_msg(&g, 1, &node); /* GraphProto.node */
  }
  field_str(&g, 2, "chain");
  value_info(&g, 11, "x");
  value_info(&g, 12, "y");
  field_int(&m, 1, 8); /* ir_version */
  field_msg(&m, 7, &g);
  field_str(&op, 1, "");
  field_int(&op, 2, 13);
  field_msg(&m, 8, &op); /* opset_import */
  return m;
}

/* ---- the bench ---- */

static dg_graph *built_chain(dg_context *ctx, int n) {
  dg_graph *g = dg_graph_create(ctx, "chain");
  dg_tensor_desc d = {.dtype = DG_DTYPE_F32, .rank = 2, .dims = {1, 8}};
  dg_tensor t = dg_graph_input(g, "x", &d);
  for (int i = 0; i < n; i++)
    t = dg_graph_relu(g, NULL, t);
  dg_graph_output(g, "y", t, DG_LAYOUT_NCHW);
  return g;
}

int bench_scale(dg_context *ctx, int device, int quick, FILE *jf) {
  static const int sizes[] = {1000, 10000, 100000};
  static char lines[64][256];
  int nsizes = quick ? 2 : 3, failed = 0, nlines = 0;
  printf("%-8s %-22s %12s %12s %14s\n", "nodes", "device", "build_us/n",
         "import_us/n", "compile_us/n");
  for (int si = 0; si < nsizes; si++) {
    int n = sizes[si];
    double t0 = now_s();
    dg_graph *g = built_chain(ctx, n);
    double build = now_s() - t0;
    buf m = chain_model(n);
    dg_graph *gi = NULL;
    dg_diagnostic d;
    t0 = now_s();
    dg_status st = m.oom ? DG_ERROR_OUT_OF_MEMORY
                         : dg_onnx_load_memory(ctx, m.p, m.len, NULL, &gi, &d);
    double import = now_s() - t0;
    free(m.p);
    /* A build without ONNX import (-Donnx=disabled) times the rest. */
    bool imported = st == DG_OK;
    if (dg_graph_status(g) != DG_OK ||
        (st != DG_OK && st != DG_ERROR_UNSUPPORTED)) {
      fprintf(stderr, "dg-bench --scale: %d nodes: %s\n", n,
              st != DG_OK ? d.message : dg_graph_error(g)->message);
      failed = 1;
    }
    for (int dev = 0; !failed && dev < dg_context_device_count(ctx); dev++) {
      dg_device_info info;
      if ((device >= 0 && dev != device) ||
          dg_context_device_info(ctx, dev, &info) != DG_OK)
        continue;
      dg_compile_options co = {.devices = &dev, .device_count = 1};
      dg_session *s = NULL;
      t0 = now_s();
      st = dg_graph_compile(g, &co, &s, &d);
      double compile = now_s() - t0;
      dg_session_destroy(s);
      char label[48];
      snprintf(label, sizeof label, "%d:%s", dev,
               dg_device_kind_name(info.kind));
      if (st != DG_OK) {
        printf("%-8d %-22s %12s %12s %14s (%s)\n", n, label, "-", "-", "-",
               d.message);
        continue;
      }
      double imp = imported ? import * 1e6 / n : -1;
      printf("%-8d %-22s %12.3f %12.3f %14.3f\n", n, label, build * 1e6 / n,
             imp, compile * 1e6 / n);
      if (nlines < (int)(sizeof lines / sizeof *lines))
        snprintf(lines[nlines++], sizeof lines[0],
                 "{\"bench\":\"scale\",\"device\":\"%s\",\"nodes\":%d,"
                 "\"build_us_per_node\":%.4f,\"import_us_per_node\":%.4f,"
                 "\"compile_us_per_node\":%.4f}",
                 label, n, build * 1e6 / n, imp, compile * 1e6 / n);
    }
    dg_graph_destroy(g);
    dg_graph_destroy(gi);
  }
  printf("\n");
  for (int i = 0; i < nlines; i++) {
    printf("%s\n", lines[i]);
    if (jf)
      fprintf(jf, "%s\n", lines[i]);
  }
  return failed;
}
