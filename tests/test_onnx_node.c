/* ONNX's own node conformance tests (Debian's libonnx-testdata) for the ops
 * the importer supports, run on every device: each test's model is
 * imported, compiled for one device, fed its test_data_set_0 inputs and
 * compared with the expected outputs at ONNX's tolerances (rtol 1e-3,
 * atol 1e-7 for floats; exact for integers). A test whose model uses an
 * attribute or form the importer declines prints "skipped:" with the
 * importer's diagnostic, and is counted apart. */
#define _POSIX_C_SOURCE 200809L
#include "front/onnx/onnx_internal.h"
#include "graph.h"
#include "harness.h"
#include "runtime/session.h" /* dg_f16_to_f32 */

#include <dirent.h>
#include <math.h>
#include <string.h>

#define NODE_DIR "/usr/share/libonnx-testdata/data/node"

/* Every case of the folder is run, the _expanded ones (the op written as
 * its function body of other ops) too: issue 17 counts all of them. */
static int wanted(const char *name) { return !strncmp(name, "test_", 5); }

/* Why cases were declined, grouped: the op and the reason, with node
 * names and numbers left out so that equal reasons group. */
#define MAX_REASONS 512
static struct reason {
  char text[160];
  int count;
} reasons[MAX_REASONS];
static int nreasons;

static void note_reason(const dg_diagnostic *d) {
  char key[160];
  /* "onnx node K 'NAME' (OP)[, FIELD]: REASON" or "onnx: REASON" */
  const char *r = d->message;
  if (!strncmp(r, "onnx node ", 10)) {
    const char *close = strstr(r, "), ");
    const char *colon = strstr(r, "): ");
    const char *c =
        close && (!colon || close < colon) ? strstr(close, ": ") : colon;
    r = c ? c + (c == colon ? 3 : 2) : r;
  }
  snprintf(key, sizeof key, "%s: %.120s", d->op[0] ? d->op : "?", r);
  char *semi = strstr(key, "; "); /* the list of other nodes */
  if (semi)
    *semi = 0;
  for (int i = 0; i < nreasons; i++)
    if (!strcmp(reasons[i].text, key)) {
      reasons[i].count++;
      return;
    }
  if (nreasons < MAX_REASONS) {
    snprintf(reasons[nreasons].text, sizeof reasons[0].text, "%s", key);
    reasons[nreasons++].count = 1;
  }
}

static int cmp_reason(const void *a, const void *b) {
  return ((const struct reason *)b)->count - ((const struct reason *)a)->count;
}

/* One tensor of test_data_set_0: its name, descriptor and data. */
typedef struct pb_tensor {
  char name[128];
  dg_tensor_desc desc;
  void *data;
  size_t bytes;
} pb_tensor;

static int read_pb(const char *dir, const char *kind, int i, pb_tensor *out) {
  char path[1024], err[256];
  snprintf(path, sizeof path, "%s/test_data_set_0/%s_%d.pb", dir, kind, i);
  size_t size;
  void *buf = t_read_file(path, &size);
  if (!buf)
    return -1;
  Onnx__TensorProto *t = onnx__tensor_proto__unpack(NULL, size, buf);
  free(buf);
  if (!t)
    return -1;
  snprintf(out->name, sizeof out->name, "%s", t->name ? t->name : "");
  int ok = onnx_tensor_decode(t, &out->desc, &out->data, err, sizeof err);
  onnx__tensor_proto__free_unpacked(t, NULL);
  if (!ok)
    return -1;
  size_t n = 1;
  for (int r = 0; r < out->desc.rank; r++)
    n *= (size_t)out->desc.dims[r];
  out->bytes = n * dg_dtype_size(out->desc.dtype);
  return 0;
}

static int read_all(const char *dir, const char *kind, pb_tensor *t, int max) {
  int n = 0;
  while (n < max && read_pb(dir, kind, n, &t[n]) == 0)
    n++;
  return n;
}

typedef struct counts {
  int passed, failed, declined;
} counts;

/* An IEEE half as a double (exact). */
static double half_value(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0    ? ldexp(m, -24)
             : e == 31 ? (m ? NAN : INFINITY)
                       : ldexp(m | 0x400, e - 25);
  return h & 0x8000 ? -v : v;
}

static double value_at(dg_dtype t, const void *p, size_t e) {
  switch (t) {
  case DG_DTYPE_F32:
    return ((const float *)p)[e];
  case DG_DTYPE_F16:
    return half_value(((const uint16_t *)p)[e]);
  case DG_DTYPE_I8:
    return ((const int8_t *)p)[e];
  case DG_DTYPE_U8:
    return ((const uint8_t *)p)[e];
  case DG_DTYPE_BOOL:
    return ((const uint8_t *)p)[e];
  case DG_DTYPE_I64:
    return (double)((const int64_t *)p)[e];
  default:
    return ((const int32_t *)p)[e];
  }
}

/* Imports the model; when it needs some inputs to be constants (shapes,
 * scales, bounds fed as inputs, as these tests do), retries with every
 * input but the first frozen to its test value. */
static dg_status import(dg_context *ctx, const char *path, pb_tensor *ins,
                        int nin, dg_graph **g, dg_diagnostic *d, int *frozen) {
  *frozen = 0;
  dg_status st = dg_onnx_load(ctx, path, NULL, g, d);
  if (st != DG_ERROR_UNSUPPORTED || nin < 1)
    return st;
  dg_onnx_constant k[16];
  for (int i = 1; i < nin && i < 16; i++)
    k[i - 1] = (dg_onnx_constant){ins[i].name, &ins[i].desc, ins[i].data};
  dg_onnx_options o = {.constants = k, .constant_count = nin - 1};
  dg_diagnostic d2;
  st = dg_onnx_load(ctx, path, &o, g, &d2);
  if (st == DG_OK)
    *frozen = 1;
  /* An op taken only on values known at import (a window of a given
   * size, Range): every input frozen, the output is computed at import. */
  if (st == DG_ERROR_UNSUPPORTED &&
      (strstr(d->message, "only taken on values known at import") ||
       strstr(d2.message, "only taken on values known at import"))) {
    for (int i = 0; i < nin && i < 16; i++)
      k[i] = (dg_onnx_constant){ins[i].name, &ins[i].desc, ins[i].data};
    o.constant_count = nin < 16 ? nin : 16;
    st = dg_onnx_load(ctx, path, &o, g, &d2);
    if (st == DG_OK)
      *frozen = 2;
  }
  return st;
}

static void run_test(dg_context *ctx, const char *name, counts *per_dev) {
  char dir[512], path[1024];
  snprintf(dir, sizeof dir, "%s/%s", NODE_DIR, name);
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  pb_tensor ins[16] = {0}, want[8] = {0};
  int nin = read_all(dir, "input", ins, 16);
  int nwant = read_all(dir, "output", want, 8);
  dg_graph *g = NULL;
  dg_diagnostic d;
  int frozen;
  int ndev = dg_context_device_count(ctx);
  dg_status st = import(ctx, path, ins, nin, &g, &d, &frozen);
  if (st == DG_ERROR_UNSUPPORTED) {
    printf("skipped: %s: declined by the importer: %s\n", name, d.message);
    note_reason(&d);
    for (int k = 0; k < ndev; k++)
      per_dev[k].declined++;
  } else if (st == DG_OK && nwant != dg_graph_output_count(g)) {
    /* Optional outputs the test does not check are not counted. */
    CHECK(0, "%s: import: %d outputs where the test has %d", name,
          dg_graph_output_count(g), nwant);
    for (int k = 0; k < ndev; k++)
      per_dev[k].failed++;
  } else if (st != DG_OK) {
    CHECK(0, "%s: import: %s", name, d.message);
    for (int k = 0; k < ndev; k++)
      per_dev[k].failed++;
  } else {
    int nbind = frozen == 2 ? 0 : frozen ? 1 : nin;
    dg_binding in[16], out[8];
    for (int i = 0; i < nbind; i++)
      in[i] = (dg_binding){ins[i].name, ins[i].data, ins[i].bytes};
    for (int i = 0; i < nwant; i++) {
      dg_io_info info;
      dg_graph_output_info(g, i, &info);
      out[i] =
          (dg_binding){info.name, calloc(1, want[i].bytes + 1), want[i].bytes};
    }
    for (int dev = 0; dev < ndev; dev++) {
      dg_compile_options o = {.devices = &dev, .device_count = 1};
      dg_session *s = NULL;
      st = dg_graph_compile(g, &o, &s, &d);
      if (st == DG_ERROR_UNSUPPORTED) {
        printf("skipped: %s on device %d: %s\n", name, dev, d.message);
        if (dev == 0)
          note_reason(&d);
        per_dev[dev].declined++;
        continue;
      }
      if (st == DG_OK)
        st = dg_session_run(s, in, nbind, out, nwant, &d);
      double worst = 0;
      int ok = st == DG_OK;
      for (int i = 0; ok && i < nwant; i++) {
        size_t n = want[i].bytes / dg_dtype_size(want[i].desc.dtype);
        for (size_t e = 0; e < n; e++) {
          double got = value_at(want[i].desc.dtype, out[i].data, e);
          double exp = value_at(want[i].desc.dtype, want[i].data, e);
          double err = fabs(got - exp);
          /* f16: the f32 tolerance, which is about one f16 step. */
          double tol = want[i].desc.dtype == DG_DTYPE_F32 ||
                               want[i].desc.dtype == DG_DTYPE_F16
                           ? 1e-7 + 1e-3 * fabs(exp)
                           : 0;
          if (!(err <= tol))
            ok = 0;
          if (err > worst)
            worst = err;
        }
      }
      CHECK(ok, "%s on device %d%s%s%s (max abs err %.3g)", name, dev,
            frozen == 2 ? " (every input frozen: computed at import)"
            : frozen    ? " (inputs after the first frozen)"
                        : "",
            st ? ": " : "", st ? d.message : "", worst);
      if (ok)
        per_dev[dev].passed++;
      else
        per_dev[dev].failed++;
      dg_session_destroy(s);
    }
    for (int i = 0; i < nwant; i++)
      free(out[i].data);
  }
  for (int i = 0; i < nin; i++)
    free(ins[i].data);
  for (int i = 0; i < nwant; i++)
    free(want[i].data);
  dg_graph_destroy(g);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void) {
  DIR *dir = opendir(NODE_DIR);
  if (!dir) {
    t_skip("libonnx-testdata is not installed (" NODE_DIR ")");
    return 0;
  }
  char *names[1024];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dir)) && n < 1024)
    if (wanted(e->d_name))
      names[n++] = strdup(e->d_name);
  closedir(dir);
  qsort(names, (size_t)n, sizeof names[0], cmp_str);
  dg_context *ctx;
  if (dg_context_create(NULL, &ctx) != DG_OK)
    return 1;
  counts per_dev[16] = {0};
  for (int i = 0; i < n; i++) {
    run_test(ctx, names[i], per_dev);
    free(names[i]);
  }
  for (int k = 0; k < dg_context_device_count(ctx) && k < 16; k++) {
    dg_device_info info;
    dg_context_device_info(ctx, k, &info);
    printf("# device %d (%s): %d passed, %d failed, %d declined of %d ONNX "
           "node tests\n",
           k, dg_device_kind_name(info.kind), per_dev[k].passed,
           per_dev[k].failed, per_dev[k].declined, n);
  }
  qsort(reasons, (size_t)nreasons, sizeof reasons[0], cmp_reason);
  printf("# the most frequent reasons cases were declined (device 0):\n");
  for (int i = 0; i < nreasons && i < 30; i++)
    printf("#   %4d  %s\n", reasons[i].count, reasons[i].text);
  dg_context_destroy(ctx);
  return t_exit();
}
