/* The importer and the plugin EP must agree: every ONNX node test model
 * (Debian's libonnx-testdata, data/node) goes through both paths on the
 * CPU device,
 *   - dg_onnx_load, dg_graph_compile on the CPU device, dg_session_run on
 *     test_data_set_0's inputs, and
 *   - ONNX Runtime with our plugin EP (device_kinds=cpu), asked through
 *     GetCapability (its reasons read from DG_ORT_EP_VERBOSE's lines) and
 *     run on the same inputs when it claimed the whole model,
 * and must give the same verdict (both take the model, or both decline it
 * for the same reason) and, when both take it, the same directgraph ops
 * (the plans' ops; the EP prints its fused nodes' with DG_ORT_EP_VERBOSE)
 * and the same output bytes.
 *
 *   node_parity EP_LIBRARY [MODEL_DIR...]
 *
 * ONNX's node tests come from $DG_ONNX_NODE_DIR or /usr/share/
 * libonnx-testdata/data/node; each MODEL_DIR holds more models in their
 * layout (tests/ort/parity, from make_parity_models.py).
 * ONNX Runtime comes from $DG_ORT_LIB, else from tests/ort/fetch-ort.sh's
 * cache ($DG_ORT_CACHE or ~/.cache/directgraph-ci/ort, version 1.30.0), as
 * in run_ort_tests.sh; without it the test says "skipped".
 *
 * A partial claim (the EP takes some nodes, ORT's CPU EP the rest) is
 * compared by verdict only: the importer must have declined the model for
 * a reason the EP gave for one of the nodes it left; its numbers are
 * ORT's as much as ours, so they are not compared. A model ORT refuses
 * before asking the EP (nothing to compare) prints "skipped:". One line
 * per model: "ok - ...", "FAIL - ...", or "skipped: ...", then a summary. */
#define _POSIX_C_SOURCE 200809L
#include "ort_runner.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NODE_DIR "/usr/share/libonnx-testdata/data/node"

static dg_context *ctx;
static int cpu_device = -1;

static struct {
  int cases, same, taken, declined, partial, numbers, skipped, failed;
  int folded;
} tally;

static void line(const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void line(const char *kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%s", kind);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

/* ---- test data ---- */

/* ---- the importer's side ---- */

typedef struct verdict {
  bool taken;
  char reason[640]; /* declined: "(OP), FIELD: REASON" or a compile reason */
} verdict;

/* The part of a node diagnostic both front ends share: from the op in
 * parentheses after the node's name (importer: "onnx node 0 'n' (Op), f:
 * r"; EP: "node 'n' (Op), f: r"). Names differ: the EP names an unnamed
 * node after its output. */
static const char *shared_part(const char *msg) {
  const char *p = strstr(msg, "' (");
  return p ? p + 2 : msg;
}

typedef struct ours {
  verdict v;
  int nout;
  char name[MAX_IO][256];
  void *data[MAX_IO];
  size_t bytes[MAX_IO];
  bool ran;
  char run_error[512];
  char ops[2048]; /* the plan's ops, sorted (sorted_ops) */
} ours;

static int cmp_op(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The words of text sorted and joined by spaces into out: two graphs
 * built alike have the same multiset of ops, whatever the plan order. */
static void sorted_ops(const char *text, char *out, size_t len) {
  char buf[4096];
  const char *w[512];
  int n = 0;
  snprintf(buf, sizeof buf, "%s", text);
  for (char *p = strtok(buf, " \n"); p && n < 512; p = strtok(NULL, " \n"))
    w[n++] = p;
  qsort(w, (size_t)n, sizeof w[0], cmp_op);
  out[0] = 0;
  for (int i = 0; i < n; i++)
    snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? " " : "", w[i]);
}

static void import_and_run(const char *path, tensor *ins, int nin,
                           bool inputs_ok, ours *r) {
  dg_graph *g = NULL;
  dg_diagnostic d;
  memset(r, 0, sizeof *r);
  if (dg_onnx_load(ctx, path, NULL, &g, &d) != DG_OK) {
    /* "onnx: REASON" for the graph's inputs and outputs themselves */
    snprintf(r->v.reason, sizeof r->v.reason, "%s",
             !strncmp(d.message, "onnx: ", 6) ? d.message + 6
                                              : shared_part(d.message));
    /* The importer's count of the other unsupported nodes is its own;
     * the EP declines each node apart. */
    char *more = strstr(r->v.reason, " more node");
    while (more && more > r->v.reason && more[-1] >= '0' && more[-1] <= '9')
      more--;
    if (more && more - r->v.reason >= 2 && !strncmp(more - 2, "; ", 2))
      more[-2] = 0;
    return;
  }
  dg_compile_options o = {.devices = &cpu_device, .device_count = 1};
  dg_session *s = NULL;
  if (dg_graph_compile(g, &o, &s, &d) != DG_OK) {
    snprintf(r->v.reason, sizeof r->v.reason, "%s", d.message);
    dg_graph_destroy(g);
    return;
  }
  r->v.taken = true;
  char ops[2048] = "";
  const dg_plan *plan = dg_session_plan(s);
  for (int i = 0; i < dg_plan_node_count(plan); i++) {
    dg_plan_node pn;
    if (dg_plan_get_node(plan, i, &pn) == DG_OK)
      snprintf(ops + strlen(ops), sizeof ops - strlen(ops), " %s",
               dg_op_name(pn.op));
  }
  sorted_ops(ops, r->ops, sizeof r->ops);
  r->nout = dg_graph_output_count(g);
  dg_binding in[MAX_IO], out[MAX_IO];
  for (int i = 0; i < r->nout && i < MAX_IO; i++) {
    dg_io_info info;
    dg_graph_output_info(g, i, &info);
    size_t n = dg_dtype_size(info.desc.dtype);
    for (int k = 0; k < info.desc.rank; k++)
      n *= (size_t)info.desc.dims[k];
    snprintf(r->name[i], sizeof r->name[i], "%s", info.name);
    r->bytes[i] = n;
    r->data[i] = calloc(1, n + 1);
    out[i] = (dg_binding){r->name[i], r->data[i], n};
  }
  for (int i = 0; i < nin; i++)
    in[i] = (dg_binding){ins[i].name, ins[i].data, ins[i].bytes};
  if (inputs_ok) {
    r->ran = dg_session_run(s, in, nin, out, r->nout, &d) == DG_OK;
    if (!r->ran)
      snprintf(r->run_error, sizeof r->run_error, "%s", d.message);
  } else {
    snprintf(r->run_error, sizeof r->run_error,
             "the test inputs are not all tensors");
  }
  dg_session_destroy(s);
  dg_graph_destroy(g);
}

static void ours_free(ours *r) {
  for (int i = 0; i < r->nout && i < MAX_IO; i++)
    free(r->data[i]);
}

/* ---- the EP's side ---- */

/* Runs f with stderr going to a buffer (the EP's DG_ORT_EP_VERBOSE lines);
 * returns the malloc'ed text. */
typedef struct theirs {
  bool asked;   /* GetCapability said something */
  bool session; /* ORT created the session */
  int mine, others;
  char *log; /* the EP's lines */
  char error[512];
} theirs;

static OrtSession *ep_session(const char *path, theirs *t) {
  OrtSessionOptions *so = NULL;
  OrtSession *s = NULL;
  const char *keys[] = {"device_kinds"}, *values[] = {"cpu"};
  const char *err =
      status_msg(API(CreateSessionOptions, ort_create_session_options_fn)(&so));
  if (!err)
    err = status_msg(
        API(SessionOptionsAppendExecutionProvider_V2,
            ort_append_ep_v2_fn)(so, env, &ep_device, 1, keys, values, 1));
  if (!err)
    err = status_msg(API(AddSessionConfigEntry, ort_add_config_fn)(
        so, "session.record_ep_graph_assignment_info", "1"));
  /* No graph rewriting (constant folding of Shape, Cast of constants):
   * the EP must be offered the nodes the importer reads. ORT still turns
   * Constant nodes into initializers when it loads the model. */
  if (!err)
    err = status_msg(API(SetSessionGraphOptimizationLevel,
                         ort_set_opt_level_fn)(so, ORT_OPT_DISABLE_ALL));
  memset(t, 0, sizeof *t);
  if (!err)
    t->log = capture_stderr(&s, path, so, &err);
  if (so)
    API(ReleaseSessionOptions, ort_release_fn)(so);
  t->asked = t->log && strstr(t->log, EP_NAME ": ");
  if (err) {
    snprintf(t->error, sizeof t->error, "%.500s", err);
    return NULL;
  }
  t->session = true;
  if (!placement(s, &t->mine, &t->others))
    snprintf(t->error, sizeof t->error, "no graph assignment info");
  return s;
}

/* Whether the EP declined a node for the reason r (the shared part). */
static bool ep_gave(const theirs *t, const char *r) {
  for (const char *p = t->log; p && (p = strstr(p, EP_NAME ": ")); p++) {
    const char *l = p + strlen(EP_NAME ": ");
    const char *end = strchr(l, '\n');
    size_t n = end ? (size_t)(end - l) : strlen(l);
    char buf[1024];
    snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf ? n : 1023), l);
    const char *what = NULL;
    if (!strncmp(buf, "declined: ", 10))
      what = !strncmp(buf + 10, "region outputs: ", 16) ? buf + 26
                                                        : shared_part(buf + 10);
    else if (strstr(buf, " node(s): ")) /* a group that did not compile */
      what = strstr(buf, " node(s): ") + 10;
    if (what && !strcmp(what, r))
      return true;
  }
  return false;
}

/* The ops of every fused node the EP compiled ("compiled:" lines). */
static void ep_ops(const theirs *t, char *out, size_t len) {
  char all[4096] = "";
  const char *tag = EP_NAME ": compiled:";
  for (const char *p = t->log; p && (p = strstr(p, tag)); p++) {
    const char *l = p + strlen(tag), *end = strchr(l, '\n');
    size_t n = end ? (size_t)(end - l) : strlen(l);
    snprintf(all + strlen(all), sizeof all - strlen(all), " %.*s", (int)n, l);
  }
  sorted_ops(all, out, len);
}

/* The EP's lines, one string, for a FAIL line. */
static const char *ep_said(const theirs *t) {
  static char buf[600];
  snprintf(buf, sizeof buf, "%.590s", t->log ? t->log : "");
  for (char *p = buf; *p; p++)
    if (*p == '\n')
      *p = '|';
  return buf;
}

/* Our EP's outputs against the importer's, byte for byte. */
static bool same_numbers(OrtSession *s, const model_io *m, tensor *ins, int nin,
                         const ours *r, char *why, size_t len) {
  OrtValue *in[MAX_IO] = {0}, *out[MAX_IO] = {0};
  const char *err = ort_run_session(s, m, ins, nin, in, out);
  bool same = !err;
  if (err)
    snprintf(why, len, "ORT run with our EP: %.300s", err);
  for (int i = 0; same && i < m->nout; i++) {
    int k = 0;
    while (k < r->nout && strcmp(r->name[k], m->out[i]))
      k++;
    size_t count = 0, rank;
    int elem = 0;
    int64_t dims[DG_MAX_RANK];
    void *data = NULL;
    const char *e = ort_output(out[i], &elem, &count, &rank, dims, &data);
    size_t bytes = count * elem_size(elem);
    if (e || k == r->nout) {
      snprintf(why, len, "output '%s': %.200s", m->out[i],
               e ? e : "not among the importer's outputs");
      same = false;
    } else if (bytes != r->bytes[k]) {
      snprintf(why, len,
               "output '%s': %zu bytes from the EP, %zu from the "
               "importer",
               m->out[i], bytes, r->bytes[k]);
      same = false;
    } else if (memcmp(data, r->data[k], bytes)) {
      size_t first = 0;
      while (((const unsigned char *)data)[first] ==
             ((const unsigned char *)r->data[k])[first])
        first++;
      snprintf(why, len, "output '%s' differs from byte %zu of %zu", m->out[i],
               first, bytes);
      same = false;
    }
  }
  ort_release_values(in);
  ort_release_values(out);
  return same;
}

/* ---- one model ---- */

static void run_case(const char *root, const char *name) {
  char dir[1100], path[1200];
  snprintf(dir, sizeof dir, "%s/%s", root, name);
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  tally.cases++;
  model_io m;
  if (!read_model_io(path, &m)) {
    tally.skipped++;
    line("skipped: ", "%s: model.onnx unreadable", name);
    return;
  }
  tensor ins[MAX_IO] = {0};
  int nin = 0, got;
  bool inputs_ok = true;
  while (nin < MAX_IO && (got = read_pb(dir, nin, &ins[nin])) != 0) {
    if (got < 0)
      inputs_ok = false;
    else if (!ins[nin].name[0] && nin < m.nin)
      snprintf(ins[nin].name, sizeof ins[nin].name, "%s", m.in[nin]);
    nin++;
  }
  ours r;
  import_and_run(path, ins, nin, inputs_ok, &r);
  theirs t;
  OrtSession *s = ep_session(path, &t);
  bool ep_took = t.session && t.mine > 0 && t.others == 0;
  if (!t.asked && !t.session) {
    tally.skipped++;
    line("skipped: ", "%s: ORT refuses the model before asking the EP: %s",
         name, t.error);
  } else if (!t.asked && t.mine + t.others == 0) {
    /* A Constant node's output: ORT makes it an initializer on loading. */
    tally.skipped++;
    line("skipped: ", "%s: ORT offers the EP no node (importer: %s)", name,
         r.v.taken ? "takes it" : r.v.reason);
  } else if (r.v.taken && ep_took) {
    char why[512] = "", ops[2048];
    if (!r.ran) {
      tally.failed++;
      line("FAIL - ", "%s: both take it, but the importer's run failed: %s",
           name, r.run_error);
    } else if (ep_ops(&t, ops, sizeof ops), strcmp(ops, r.ops)) {
      tally.failed++;
      line("FAIL - ",
           "%s: both take it, but build other graphs: importer: "
           "%s; EP: %s",
           name, r.ops, ops);
    } else if (same_numbers(s, &m, ins, nin, &r, why, sizeof why)) {
      tally.same++, tally.taken++, tally.numbers++;
      line("ok - ",
           "%s: both take it (%d node(s)) as the same ops (%s); %d "
           "output(s) equal bit for bit",
           name, t.mine, r.ops, m.nout);
    } else {
      tally.failed++;
      line("FAIL - ", "%s: both take it, numbers differ: %s", name, why);
    }
  } else if (!r.v.taken && !ep_took && ep_gave(&t, r.v.reason)) {
    tally.same++, tally.declined++;
    if (t.mine > 0)
      tally.partial++;
    line("ok - ", "%s: both decline it: %s%s", name, r.v.reason,
         t.mine > 0 ? " (the EP claims the other nodes: a partial claim, "
                      "verdict only)"
                    : "");
  } else if (r.v.taken && m.shape_ops && t.mine > 0 && t.others > 0) {
    /* The importer folds the model's shape arithmetic (Shape, Size and
     * what reads them) across nodes; the EP is offered the raw nodes
     * (ORT's own folding off, above) one region at a time, so it takes
     * the rest and leaves those to ORT: a partial claim, verdict only. */
    tally.folded++;
    line("ok - ",
         "%s: the importer takes it, folding its shape arithmetic; the EP "
         "claims %d node(s) and leaves %d to ORT (shape arithmetic the EP "
         "does not fold across regions)",
         name, t.mine, t.others);
  } else if (r.v.taken) {
    tally.failed++;
    line("FAIL - ",
         "%s: the importer takes it, the EP does not (%d node(s) "
         "ours, %d elsewhere%s%s): %s",
         name, t.mine, t.others, t.error[0] ? "; " : "", t.error, ep_said(&t));
  } else if (ep_took) {
    tally.failed++;
    line("FAIL - ",
         "%s: the EP takes it (%d node(s)), the importer declines "
         "it: %s",
         name, t.mine, r.v.reason);
  } else {
    tally.failed++;
    line("FAIL - ",
         "%s: both decline it, for other reasons: importer: %s; "
         "EP: %s",
         name, r.v.reason, ep_said(&t));
  }
  if (s)
    API(ReleaseSession, ort_release_fn)(s);
  free(t.log);
  ours_free(&r);
  for (int i = 0; i < nin; i++)
    free(ins[i].data);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every test_* model under root, in name order; false if root is
 * not a folder. */
static bool run_dir(const char *root) {
  DIR *dir = opendir(root);
  if (!dir)
    return false;
  char **names = NULL;
  int n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(dir))) {
    if (strncmp(e->d_name, "test_", 5))
      continue;
    if (n == cap) {
      char **p =
          realloc(names, sizeof *p * (size_t)(cap = cap ? 2 * cap : 1024));
      if (!p)
        break;
      names = p;
    }
    names[n++] = strdup(e->d_name);
  }
  closedir(dir);
  qsort(names, (size_t)n, sizeof names[0], cmp_str);
  for (int i = 0; i < n; i++) {
    run_case(root, names[i]);
    free(names[i]);
  }
  free(names);
  return true;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s EP_LIBRARY [MODEL_DIR...]\n", argv[0]);
    return 2;
  }
  const char *node_dir = getenv("DG_ONNX_NODE_DIR");
  if (!node_dir || !node_dir[0])
    node_dir = NODE_DIR;
  char ort[1024], ep[1024];
  ort_library_path(ort, sizeof ort);
  ep_library_path(argv[1], ep, sizeof ep);
  if (access(ort, R_OK)) {
    printf("skipped: ONNX Runtime 1.30.0 not found at %s; run "
           "tests/ort/fetch-ort.sh first (it needs the npm registry)\n",
           ort);
    return 0;
  }
  /* The EP says why it declines each node on stderr (ep_capability.c). */
  setenv("DG_ORT_EP_VERBOSE", "1", 1);
  int ready = ort_setup(ort, ep, "dg_node_parity");
  if (ready <= 0)
    return ready < 0 ? 1 : 0;
  if (dg_context_create(NULL, &ctx) != DG_OK)
    return 1;
  for (int i = 0; i < dg_context_device_count(ctx) && cpu_device < 0; i++) {
    dg_device_info info;
    if (dg_context_device_info(ctx, i, &info) == DG_OK &&
        info.kind == DG_DEVICE_CPU)
      cpu_device = i;
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  /* ONNX's node tests, then the forms they lack (make_parity_models.py). */
  if (!run_dir(node_dir))
    printf("skipped: no ONNX node tests at %s (libonnx-testdata)\n", node_dir);
  for (int i = 2; i < argc; i++)
    if (!run_dir(argv[i])) {
      printf("FAIL - no models at %s\n", argv[i]);
      tally.failed++;
    }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("# %d models: %d same verdict (%d taken by both, %d declined by "
         "both, %d of those partial claims), %d same numbers, %d taken by the "
         "importer through shape arithmetic the EP leaves to ORT, %d "
         "skipped, %d failed, in %.1f s\n",
         tally.cases, tally.same, tally.taken, tally.declined, tally.partial,
         tally.numbers, tally.folded, tally.skipped, tally.failed,
         (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
  API(UnregisterExecutionProviderLibrary, ort_unregister_ep_lib_fn)
  (env, "directgraph");
  API(ReleaseMemoryInfo, ort_release_fn)(meminfo);
  API(ReleaseEnv, ort_release_fn)(env);
  dg_context_destroy(ctx);
  return tally.failed ? 1 : 0;
}
