/* The model zoo (tests/zoo/make_zoo.py: torchvision architectures with
 * seeded random weights, their int8 QDQ versions, PyTorch 2.x's export
 * patterns) against ONNX Runtime 1.30's CPU EP on the same input:
 *
 *   - dg_onnx_load, then every device of the context but the NPU (CPU,
 *     the Vulkan and OpenCL devices; each compiled for that device alone)
 *     must give ORT's outputs: float outputs within 1e-4 of the output's
 *     peak magnitude; outputs of a QDQ model (dequantised int8) within
 *     ZOO_INT8_LSB steps of its output scale; and the same top-1 class
 *     where the output is one row of scores (unless ORT's two best are
 *     closer than the tolerance, which is said);
 *   - ORT with our EP, policy strict: every node ORT has must be on our
 *     EP, and its outputs must agree the same way.
 *
 * The oracle of a QDQ model does not depend on the CPU: ORT with graph
 * optimisations off, which computes DequantizeLinear -> float op ->
 * QuantizeLinear as the QDQ semantics say. ORT's optimised run (its own
 * int8 kernels) is a second oracle only where MLAS's u8 x s8 kernel is
 * exact on this CPU (int8_ref.c: the AVX2 and AVX-512-core kernels
 * saturate int16 pairs, the VNNI and AMX ones do not); elsewhere that
 * comparison says "skipped" with the kernel's name. Float models are
 * compared with ORT's optimised run.
 *
 *   zoo_test [--cpu-only] EP_LIBRARY ZOO_DIR [NAME...]
 *
 * --cpu-only: our CPU device and the EP only (tests/zoo/run.sh's
 * --qemu-cpu runs it so under an emulated CPU, where the software GPUs'
 * JIT compilers would only add minutes).
 *
 * One line per model and device: "ok - ...", "FAIL - ..." or "skipped:
 * ...", then "# zoo:" summaries. ONNX Runtime comes from ort_runner.h's
 * places; without it the test says "skipped". */
#define _POSIX_C_SOURCE 200809L
#include "int8_ref.h"
#include "ort_runner.h"

#include <dirent.h>
#include <math.h>
#include <time.h>

/* Steps of the output scale a QDQ model's output may differ from ORT's:
 * ORT's int8 kernels round requantisation their own way (and its QDQ
 * fusion keeps some ops in float), so one step anywhere may grow over
 * the layers after it. */
#define ZOO_INT8_LSB 4

static dg_context *ctx;
static int passed, failed, skipped;
static bool cpu_only;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* An output as doubles, with its dims. */
typedef struct result {
  char name[256];
  int rank;
  int64_t dims[DG_MAX_RANK];
  size_t count;
  double *v;
} result;

static void results_free(result *r, int n) {
  for (int i = 0; i < n; i++)
    free(r[i].v);
}

static double load_value(int elem, const void *p, size_t i) {
  switch (elem) {
  case DG_ONNX_FLOAT:
    return ((const float *)p)[i];
  case DG_ONNX_UINT8:
    return ((const uint8_t *)p)[i];
  case DG_ONNX_INT8:
    return ((const int8_t *)p)[i];
  case DG_ONNX_INT32:
    return ((const int32_t *)p)[i];
  case DG_ONNX_INT64:
    return (double)((const int64_t *)p)[i];
  default:
    return NAN;
  }
}

/* The scale of the DequantizeLinear writing output name, or 0. */
static double output_scale(const char *path, const char *name) {
  size_t size;
  void *buf = t_read_file(path, &size);
  Onnx__ModelProto *mp =
      buf ? onnx__model_proto__unpack(NULL, size, buf) : NULL;
  free(buf);
  double scale = 0;
  const Onnx__GraphProto *g = mp ? mp->graph : NULL;
  for (size_t k = 0; g && k < g->n_node; k++) {
    const Onnx__NodeProto *n = g->node[k];
    if (strcmp(n->op_type, "DequantizeLinear") || n->n_output < 1 ||
        strcmp(n->output[0], name) || n->n_input < 2)
      continue;
    /* The scale: an initializer, or a Constant node's value (PyTorch's
     * own QDQ export). */
    const Onnx__TensorProto *t = NULL;
    for (size_t i = 0; i < g->n_initializer; i++)
      if (!strcmp(g->initializer[i]->name, n->input[1]))
        t = g->initializer[i];
    for (size_t j = 0; !t && j < g->n_node; j++) {
      const Onnx__NodeProto *c = g->node[j];
      if (!strcmp(c->op_type, "Constant") && c->n_output == 1 &&
          !strcmp(c->output[0], n->input[1]) && c->n_attribute == 1 &&
          c->attribute[0]->t)
        t = c->attribute[0]->t;
    }
    if (t && t->n_float_data)
      scale = t->float_data[0];
    else if (t && t->has_raw_data && t->raw_data.len >= 4) {
      float f;
      memcpy(&f, t->raw_data.data, 4);
      scale = f;
    }
  }
  if (mp)
    onnx__model_proto__free_unpacked(mp, NULL);
  return scale;
}

/* Runs session s on ins, the outputs into res; NULL or ORT's error. */
static const char *ort_run(OrtSession *s, const model_io *m, tensor *ins,
                           int nin, result *res) {
  OrtValue *in[MAX_IO] = {0}, *out[MAX_IO] = {0};
  const char *err = ort_run_session(s, m, ins, nin, in, out);
  for (int i = 0; !err && i < m->nout; i++) {
    size_t count = 0, rank = 0;
    int elem = 0;
    void *data = NULL;
    err = ort_output(out[i], &elem, &count, &rank, res[i].dims, &data);
    if (err)
      break;
    snprintf(res[i].name, sizeof res[i].name, "%s", m->out[i]);
    res[i].rank = (int)rank;
    res[i].count = count;
    res[i].v = malloc(sizeof(double) * (count ? count : 1));
    for (size_t e = 0; res[i].v && e < count; e++)
      res[i].v[e] = load_value(elem, data, e);
  }
  ort_release_values(in);
  ort_release_values(out);
  return err;
}

/* A session over ORT's CPU EP, or (ours) our EP, policy strict; with
 * plain, graph optimisations off (ORT's QDQ fusions included). The
 * captured stderr (the EP's lines) goes to *log when log is not NULL. */
static OrtSession *session(const char *path, bool ours, bool plain, char **log,
                           const char **err) {
  OrtSessionOptions *so = NULL;
  OrtSession *s = NULL;
  const char *keys[] = {"device_kinds", "policy"},
             *values[] = {"cpu", "strict"};
  *err =
      status_msg(API(CreateSessionOptions, ort_create_session_options_fn)(&so));
  if (!*err && ours)
    *err = status_msg(
        API(SessionOptionsAppendExecutionProvider_V2,
            ort_append_ep_v2_fn)(so, env, &ep_device, 1, keys, values, 2));
  if (!*err)
    *err = status_msg(API(AddSessionConfigEntry, ort_add_config_fn)(
        so, "session.record_ep_graph_assignment_info", "1"));
  if (!*err && plain)
    *err = status_msg(API(SetSessionGraphOptimizationLevel,
                          ort_set_opt_level_fn)(so, ORT_OPT_DISABLE_ALL));
  if (!*err) {
    char *text = capture_stderr(&s, path, so, err);
    if (log)
      *log = text;
    else
      free(text);
  }
  if (so)
    API(ReleaseSessionOptions, ort_release_fn)(so);
  return *err ? NULL : s;
}

/* Compares got with ref: the worst error against the tolerance, and the
 * top-1 class of a single row of scores. false with why otherwise. */
static bool agree(const result *ref, const result *got, int n, double scale,
                  char *why, size_t len) {
  bool ok = true;
  why[0] = 0;
  for (int i = 0; i < n; i++) {
    double peak = 0, worst = 0;
    if (got[i].count != ref[i].count) {
      snprintf(why, len, "output '%s' has %zu values, ORT's %zu", ref[i].name,
               got[i].count, ref[i].count);
      return false;
    }
    size_t best_r = 0, best_g = 0;
    for (size_t e = 0; e < ref[i].count; e++) {
      double d = fabs(got[i].v[e] - ref[i].v[e]);
      worst = d > worst || isnan(d) ? (isnan(d) ? INFINITY : d) : worst;
      peak = fabs(ref[i].v[e]) > peak ? fabs(ref[i].v[e]) : peak;
      if (ref[i].v[e] > ref[i].v[best_r])
        best_r = e;
      if (got[i].v[e] > got[i].v[best_g])
        best_g = e;
    }
    if (!(peak > 0)) {
      snprintf(why, len,
               "ORT's output '%s' is all zero (or NaN): the comparison would "
               "prove nothing",
               ref[i].name);
      return false;
    }
    double tol = scale > 0 ? ZOO_INT8_LSB * scale : 1e-4 * peak;
    char top[160] = "";
    bool scores = ref[i].rank == 2 && ref[i].dims[0] == 1 && ref[i].count > 1;
    if (scores && best_r != best_g) {
      double second = -INFINITY;
      for (size_t e = 0; e < ref[i].count; e++)
        if (e != best_r && ref[i].v[e] > second)
          second = ref[i].v[e];
      bool tie = ref[i].v[best_r] - second <= tol;
      snprintf(top, sizeof top, ", top-1 %zu where ORT's is %zu%s", best_g,
               best_r, tie ? " (ORT's two best are within the tolerance)" : "");
      ok = ok && tie;
    } else if (scores) {
      snprintf(top, sizeof top, ", top-1 %zu as ORT's", best_r);
    }
    bool within = worst <= tol;
    ok = ok && within;
    size_t used = strlen(why);
    snprintf(why + used, len - used,
             "%s'%s' worst error %.3g (%s%.3g; peak %.3g)%s", i ? "; " : "",
             ref[i].name, worst, within ? "<= " : "> tolerance ", tol, peak,
             top);
  }
  return ok;
}

/* The oracles a model's outputs are compared with (see the top). */
typedef struct oracles {
  int n;
  const char *name[2];
  result r[2][MAX_IO];
} oracles;

/* agree() against every oracle; why holds each one's verdict. */
static bool agree_all(const oracles *o, const result *got, int nout,
                      double scale, char *why, size_t len) {
  bool ok = true;
  why[0] = 0;
  for (int k = 0; k < o->n; k++) {
    char one[1024];
    bool fine = agree(o->r[k], got, nout, scale, one, sizeof one);
    ok = ok && fine;
    size_t used = strlen(why);
    snprintf(why + used, len - used, "%s%s%s: %s", k ? "; " : "",
             fine ? "" : "differs from ", o->name[k], one);
  }
  return ok;
}

/* Whether a QDQ model's session is int8 from end to end: a quantize per
 * graph input and a dequantize per output at most, so that nothing
 * between them runs in float (every float op between two int8 ones
 * would need a dequantize before it). why names the first extra
 * dequantize. */
static bool int8_end_to_end(const dg_session *s, int nin, int nout, char *why,
                            size_t size) {
  const dg_plan *plan = dg_session_plan(s);
  int nq = 0, ndq = 0;
  dg_plan_node pn, extra = {.node_index = -1};
  for (int i = 0; i < dg_plan_node_count(plan); i++) {
    if (dg_plan_get_node(plan, i, &pn) != DG_OK)
      continue;
    nq += pn.op == DG_OP_QUANTIZE;
    ndq += pn.op == DG_OP_DEQUANTIZE;
    if (pn.op == DG_OP_DEQUANTIZE && ndq > nout && extra.node_index < 0)
      extra = pn;
  }
  snprintf(why, size,
           "%d quantize and %d dequantize nodes for %d inputs and %d "
           "outputs%s%s",
           nq, ndq, nin, nout, extra.node_index >= 0 ? ", as at " : "",
           extra.node_index >= 0 ? extra.node_name : "");
  return nq <= nin && ndq <= nout;
}

static void run_model(const char *root, const char *name) {
  char dir[1100], path[1200];
  snprintf(dir, sizeof dir, "%s/%s", root, name);
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  model_io m;
  if (!read_model_io(path, &m)) {
    printf("FAIL - %s: model.onnx unreadable\n", name);
    failed++;
    return;
  }
  tensor ins[MAX_IO] = {0};
  int nin = 0;
  while (nin < MAX_IO && read_pb(dir, nin, &ins[nin]) > 0)
    nin++;
  double scale = !strncmp(name, "test_qdq_", 9) && m.nout == 1
                     ? output_scale(path, m.out[0])
                     : 0;
  /* The oracles: ORT's optimised run for a float model; for a QDQ one,
   * ORT's unoptimised run, and the optimised one where exact here. */
  oracles orc = {0};
  ort_u8s8_kernel kernel = ort_u8s8_kernel_here();
  bool with_opt = !scale || !kernel.saturates;
  const char *err = NULL;
  for (int plain = scale ? 1 : 0; !err && plain >= (with_opt ? 0 : 1);
       plain--) {
    OrtSession *s = session(path, false, plain, NULL, &err);
    if (!err)
      err = ort_run(s, &m, ins, nin, orc.r[orc.n]);
    if (s)
      API(ReleaseSession, ort_release_fn)(s);
    orc.name[orc.n++] = plain   ? "ORT unoptimised (DQ -> float op -> Q)"
                        : scale ? "ORT's int8 kernels"
                                : "ORT";
  }
  if (err) {
    printf("FAIL - %s: ONNX Runtime's CPU EP: %s\n", name, err);
    failed++;
    goto done;
  }
  if (!with_opt) {
    printf("skipped: %s against ORT's optimised int8 run: MLAS's u8 x s8 "
           "kernel here, %s, saturates int16 pairs (int8_ref.c); compared "
           "with ORT's unoptimised run only\n",
           name, kernel.name);
    skipped++;
  }
  const result *ref = orc.r[0];
  dg_graph *g = NULL;
  dg_diagnostic d;
  double t0 = now_ms();
  dg_status st = dg_onnx_load(ctx, path, NULL, &g, &d);
  if (st != DG_OK) {
    printf("FAIL - %s: import: %s\n", name, d.message);
    failed++;
  }
  for (int dev = 0; g && dev < dg_context_device_count(ctx); dev++) {
    dg_device_info info;
    dg_context_device_info(ctx, dev, &info);
    if (info.kind == DG_DEVICE_NPU)
      continue; /* the NPU takes convolutions only: not a zoo device */
    if (cpu_only && info.kind != DG_DEVICE_CPU)
      continue;
    dg_compile_options o = {.devices = &dev, .device_count = 1};
    dg_session *ds = NULL;
    double t1 = now_ms();
    st = dg_graph_compile(g, &o, &ds, &d);
    dg_binding in[MAX_IO], out[MAX_IO];
    float *buf[MAX_IO] = {0};
    result got[MAX_IO] = {0};
    for (int i = 0; i < nin; i++)
      in[i] = (dg_binding){ins[i].name, ins[i].data, ins[i].bytes};
    for (int i = 0; i < m.nout; i++) {
      buf[i] = calloc(ref[i].count ? ref[i].count : 1, sizeof(float));
      out[i] = (dg_binding){ref[i].name, buf[i], ref[i].count * sizeof(float)};
    }
    double t2 = now_ms();
    if (st == DG_OK)
      st = dg_session_run(ds, in, nin, out, m.nout, &d);
    double t3 = now_ms();
    for (int i = 0; st == DG_OK && i < m.nout; i++) {
      got[i] = ref[i];
      got[i].v = malloc(sizeof(double) * (ref[i].count ? ref[i].count : 1));
      for (size_t e = 0; e < ref[i].count; e++)
        got[i].v[e] = buf[i][e];
    }
    char why[1024];
    if (st != DG_OK) {
      printf("FAIL - %s on device %d (%s): %s\n", name, dev,
             dg_device_kind_name(info.kind), d.message);
      failed++;
    } else if (scale && !int8_end_to_end(ds, nin, m.nout, why, sizeof why)) {
      printf("FAIL - %s on device %d (%s) is not int8 end to end: %s\n", name,
             dev, dg_device_kind_name(info.kind), why);
      failed++;
    } else if (agree_all(&orc, got, m.nout, scale, why, sizeof why)) {
      printf("ok - %s on device %d (%s) agrees: %s (compile %.0f "
             "ms, run %.0f ms)\n",
             name, dev, dg_device_kind_name(info.kind), why, t2 - t1, t3 - t2);
      passed++;
    } else {
      printf("FAIL - %s on device %d (%s): %s\n", name, dev,
             dg_device_kind_name(info.kind), why);
      failed++;
    }
    results_free(got, m.nout);
    for (int i = 0; i < m.nout; i++)
      free(buf[i]);
    dg_session_destroy(ds);
  }
  (void)t0;
  dg_graph_destroy(g);
  /* Through ORT with our EP, policy strict: every node ours. */
  char *log = NULL;
  OrtSession *s = session(path, true, false, &log, &err);
  int mine = 0, others = 0;
  result ep[MAX_IO] = {0};
  char why[1024] = "";
  if (!err && !placement(s, &mine, &others))
    err = "no graph assignment record";
  if (!err && others == 0 && mine > 0)
    err = ort_run(s, &m, ins, nin, ep);
  if (err) {
    printf("FAIL - %s through the EP (strict): %s\n", name, err);
    failed++;
  } else if (others || !mine) {
    const char *declined = log ? strstr(log, EP_NAME ": declined") : NULL;
    const char *end = declined ? strchr(declined, '\n') : NULL;
    printf("FAIL - %s through the EP (strict): %d node(s) on our EP, %d "
           "elsewhere (%.*s)\n",
           name, mine, others, declined ? (int)(end ? end - declined : 300) : 0,
           declined ? declined : "");
    failed++;
  } else if (agree_all(&orc, ep, m.nout, scale, why, sizeof why)) {
    printf("ok - %s through the EP (strict): all %d nodes on our EP, agrees: "
           "%s\n",
           name, mine, why);
    passed++;
  } else {
    printf("FAIL - %s through the EP (strict): all %d nodes ours, but: %s\n",
           name, mine, why);
    failed++;
  }
  results_free(ep, m.nout);
  free(log);
  if (s)
    API(ReleaseSession, ort_release_fn)(s);
done:
  for (int k = 0; k < orc.n; k++)
    results_free(orc.r[k], m.nout);
  for (int i = 0; i < nin; i++)
    free(ins[i].data);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--cpu-only")) {
    cpu_only = true;
    argv++, argc--;
  }
  if (argc < 3) {
    fprintf(stderr, "usage: %s [--cpu-only] EP_LIBRARY ZOO_DIR [NAME...]\n",
            argv[0]);
    return 2;
  }
  char ort[1024], ep[1024];
  ort_library_path(ort, sizeof ort);
  ep_library_path(argv[1], ep, sizeof ep);
  if (access(ort, R_OK)) {
    printf("skipped: ONNX Runtime 1.30.0 not found at %s; run "
           "tests/ort/fetch-ort.sh first (it needs the npm registry)\n",
           ort);
    return 0;
  }
  /* The EP says why it declines a node on stderr (ep_capability.c). */
  setenv("DG_ORT_EP_VERBOSE", "1", 1);
  int ready = ort_setup(ort, ep, "dg_zoo");
  if (ready <= 0)
    return ready < 0 ? 1 : 0;
  DIR *dir = opendir(argv[2]);
  if (!dir) {
    printf("FAIL - no zoo at %s (tests/zoo/make_zoo.py writes it)\n", argv[2]);
    return 1;
  }
  if (dg_context_create(NULL, &ctx) != DG_OK)
    return 1;
  char *names[256];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dir)) && n < 256) {
    bool want = !strncmp(e->d_name, "test_", 5) && argc == 3;
    for (int i = 3; i < argc; i++)
      want = want || !strcmp(e->d_name + 5, argv[i]);
    if (want && !strncmp(e->d_name, "test_", 5))
      names[n++] = strdup(e->d_name);
  }
  closedir(dir);
  qsort(names, (size_t)n, sizeof names[0], cmp_str);
  double t0 = now_ms();
  for (int i = 0; i < n; i++) {
    run_model(argv[2], names[i]);
    free(names[i]);
    fflush(stdout);
  }
  printf("# zoo: %d models, %d passed, %d failed, %d skipped, in %.1f s\n", n,
         passed, failed, skipped, (now_ms() - t0) / 1e3);
  dg_context_destroy(ctx);
  return failed ? 1 : 0;
}
