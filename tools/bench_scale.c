/* dg-bench --scale (bench_scale.h). The ONNX model is written with
 * common/pb_write.h (the few fields a relu chain needs), so the bench
 * needs no protobuf library of its own. */
#define _POSIX_C_SOURCE 200809L
#include "bench_scale.h"
#include "common/pb_write.h"

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

/* ValueInfoProto: name, a float tensor of shape [1, 8]. */
static void value_info(pb_buf *g, int f, const char *name) {
  pb_buf v = {0}, type = {0}, tensor = {0}, shape = {0};
  for (int i = 0; i < 2; i++) {
    pb_buf dim = {0};
    pb_field_int(&dim, 1, i ? 8 : 1); /* Dimension.dim_value */
    pb_field_msg(&shape, 1, &dim);    /* TensorShapeProto.dim */
  }
  pb_field_int(&tensor, 1, 1);      /* elem_type FLOAT */
  pb_field_msg(&tensor, 2, &shape); /* shape */
  pb_field_msg(&type, 1, &tensor);  /* TypeProto.tensor_type */
  pb_field_str(&v, 1, name);
  pb_field_msg(&v, 2, &type);
  pb_field_msg(g, f, &v);
}

/* ModelProto (opset 13) of x -> relu -> ... -> relu -> y, n nodes. */
static pb_buf chain_model(int n) {
  pb_buf m = {0}, g = {0}, op = {0};
  char in[32], out[32], name[32];
  for (int i = 0; i < n; i++) {
    pb_buf node = {0};
    snprintf(in, sizeof in, i ? "v%d" : "x", i - 1);
    snprintf(out, sizeof out, i < n - 1 ? "v%d" : "y", i);
    snprintf(name, sizeof name, "r%d", i);
    pb_field_str(&node, 1, in);
    pb_field_str(&node, 2, out);
    pb_field_str(&node, 3, name);
    pb_field_str(&node, 4, "Relu");
    pb_field_msg(&g, 1, &node); /* GraphProto.node */
  }
  pb_field_str(&g, 2, "chain");
  value_info(&g, 11, "x");
  value_info(&g, 12, "y");
  pb_field_int(&m, 1, 8); /* ir_version */
  pb_field_msg(&m, 7, &g);
  pb_field_str(&op, 1, "");
  pb_field_int(&op, 2, 13);
  pb_field_msg(&m, 8, &op); /* opset_import */
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
    pb_buf m = chain_model(n);
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
