/* Drives a real ONNX Runtime (libonnxruntime.so.1, loaded with dlopen)
 * with the directgraph plugin EP, through our own declarations of the ABI
 * (src/front/ort_ep/ort_abi.h; no ORT header exists here).
 *
 *   ort_host LIBONNXRUNTIME EP_LIBRARY MODELS_DIR
 *
 * For each model of MODELS_DIR/manifest.txt (tests/ort/gen_models.py):
 * runs it with ORT's CPU EP and with ours (session.disable_cpu_ep_fallback
 * = 1), compares the outputs (f32: max abs error <= 1e-4 x max |CPU
 * value|, the numerics contract's tolerance; integers: exact), and checks
 * from ORT's own record (session.record_ep_graph_assignment_info) that
 * every node ran on our EP. The int8 conv / matmul models (manifest check
 * "qref") are checked against integer references instead (check_qref). Then
 * the negative cases: an unsupported op
 * under policy strict, a device kind that cannot run a node under strict
 * and auto, an invalid option. One line per check: "ok - ...", "FAIL -
 * ...", or "skipped: ...". */
#include "graph.h"
#include "int8_ref.h"
#include "ort_abi.h"

#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EP_NAME "DirectGraphExecutionProvider"
#define MAX_IO 8

static dg_ort_table api;
static OrtEnv *env;
static OrtMemoryInfo *meminfo;
static const OrtEpDevice *ep_device;
static int failures;

#define API(slot, type) DG_ORT_FN(api, ORT_SLOT_##slot, type)

static void ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void ok(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("ok - ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL - ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  failures++;
}

/* NULL if st is NULL; otherwise its message (static buffer), released. */
static const char *status_msg(OrtStatus *st) {
  static char buf[1024];
  if (!st)
    return NULL;
  snprintf(buf, sizeof buf, "%s",
           API(GetErrorMessage, ort_get_error_message_fn)(st));
  API(ReleaseStatus, ort_release_fn)(st);
  for (char *p = buf; *p; p++)
    if (*p == '\n')
      *p = ' ';
  return buf;
}

/* ---- manifest ---- */

/* Value names of any length reach the EP (the long_names models' go past
 * 300 bytes); a manifest entry longer than these buffers is refused as a
 * bad line, never cut. */
#define NAME_LEN 1024
#define LIST_LEN (MAX_IO * (NAME_LEN + 32))

typedef struct io_spec {
  char name[NAME_LEN];
  char dtype[8];
  int rank;
  int64_t dims[DG_MAX_RANK];
} io_spec;

typedef struct model_spec {
  char name[64];
  char check[32];
  int nodes;
  int nin, nout;
  io_spec in[MAX_IO];
  char out[MAX_IO][NAME_LEN];
} model_spec;

/* Copies the next sep-separated field of *p into out; false at the end,
 * and *p set to NULL when the field does not fit. */
static bool next_field(const char **p, char sep, char *out, size_t len) {
  if (!*p || !**p)
    return false;
  size_t n = strcspn(*p, (char[]){sep, 0});
  if (n >= len) {
    *p = NULL;
    return false;
  }
  snprintf(out, len, "%.*s", (int)n, *p);
  *p += n + ((*p)[n] == sep);
  return true;
}

static bool parse_line(const char *line, model_spec *m) {
  static char ins[LIST_LEN], outs[LIST_LEN];
  char field[NAME_LEN + 32], dims[128];
  memset(m, 0, sizeof *m);
  char fmt[64];
  snprintf(fmt, sizeof fmt, "%%63s %%31s %%d in=%%%ds out=%%%ds", LIST_LEN - 1,
           LIST_LEN - 1);
  if (sscanf(line, fmt, m->name, m->check, &m->nodes, ins, outs) != 5 ||
      strlen(ins) >= LIST_LEN - 1 || strlen(outs) >= LIST_LEN - 1)
    return false;
  const char *p = ins;
  while (m->nin < MAX_IO && next_field(&p, ',', field, sizeof field)) {
    io_spec *s = &m->in[m->nin++];
    const char *q = field;
    if (!next_field(&q, ':', s->name, sizeof s->name) ||
        !next_field(&q, ':', s->dtype, sizeof s->dtype) ||
        !next_field(&q, ':', dims, sizeof dims))
      return false;
    char d[32];
    for (const char *r = dims;
         s->rank < DG_MAX_RANK && next_field(&r, 'x', d, sizeof d);)
      s->dims[s->rank++] = atoll(d);
  }
  if (!p)
    return false;
  for (p = outs; m->nout < MAX_IO &&
                 next_field(&p, ',', m->out[m->nout], sizeof m->out[0]);)
    m->nout++;
  return p && m->nin > 0 && m->nout > 0;
}

/* ---- tensors ---- */

static int elem_of(const char *dtype) {
  if (!strncmp(dtype, "f32", 3))
    return ORT_ELEM_FLOAT;
  return !strcmp(dtype, "u8") ? ORT_ELEM_UINT8 : ORT_ELEM_INT8;
}

/* Deterministic inputs: a 64-bit LCG seeded from the model and input. */
static void *make_input(const model_spec *m, const io_spec *s, size_t *bytes) {
  uint64_t seed = 1469598103934665603ull;
  for (const char *p = m->name; *p; p++)
    seed = (seed ^ (unsigned char)*p) * 1099511628211ull;
  for (const char *p = s->name; *p; p++)
    seed = (seed ^ (unsigned char)*p) * 1099511628211ull;
  size_t n = 1;
  for (int i = 0; i < s->rank; i++)
    n *= (size_t)s->dims[i];
  int elem = elem_of(s->dtype);
  size_t esz = elem == ORT_ELEM_FLOAT ? 4 : 1;
  unsigned char *data = malloc(n * esz);
  for (size_t i = 0; data && i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t r = (uint32_t)(seed >> 33);
    double u = r / 2147483648.0; /* [0,1) */
    if (elem == ORT_ELEM_FLOAT)
      ((float *)data)[i] = (float)(!strcmp(s->dtype, "f32p") ? u : 2 * u - 1);
    else
      data[i] = (unsigned char)(r & 0xff);
  }
  *bytes = n * esz;
  return data;
}

/* ---- sessions ---- */

typedef struct session_cfg {
  bool use_ep;
  bool no_fallback;
  const char *keys[4], *values[4];
  int nkv;
} session_cfg;

static OrtSession *open_session(const char *path, const session_cfg *c,
                                const char **err) {
  OrtSessionOptions *so = NULL;
  OrtSession *s = NULL;
  *err =
      status_msg(API(CreateSessionOptions, ort_create_session_options_fn)(&so));
  if (*err)
    return NULL;
  if (c->use_ep) {
    *err = status_msg(API(SessionOptionsAppendExecutionProvider_V2,
                          ort_append_ep_v2_fn)(so, env, &ep_device, 1, c->keys,
                                               c->values, (size_t)c->nkv));
    if (!*err && c->no_fallback)
      *err = status_msg(API(AddSessionConfigEntry, ort_add_config_fn)(
          so, "session.disable_cpu_ep_fallback", "1"));
    if (!*err)
      *err = status_msg(API(AddSessionConfigEntry, ort_add_config_fn)(
          so, "session.record_ep_graph_assignment_info", "1"));
  }
  if (!*err)
    *err = status_msg(
        API(CreateSession, ort_create_session_fn)(env, path, so, &s));
  API(ReleaseSessionOptions, ort_release_fn)(so);
  return *err ? NULL : s;
}

typedef struct outputs {
  int n;
  OrtValue *v[MAX_IO];
} outputs;

static void outputs_free(outputs *o) {
  for (int i = 0; i < o->n; i++)
    if (o->v[i])
      API(ReleaseValue, ort_release_fn)(o->v[i]);
  o->n = 0;
}

static const char *run_session(OrtSession *s, const model_spec *m,
                               outputs *out) {
  OrtValue *in[MAX_IO] = {0};
  void *data[MAX_IO] = {0};
  const char *in_names[MAX_IO], *out_names[MAX_IO];
  const char *err = NULL;
  for (int i = 0; i < m->nin && !err; i++) {
    size_t bytes;
    in_names[i] = m->in[i].name;
    data[i] = make_input(m, &m->in[i], &bytes);
    err = status_msg(API(CreateTensorWithDataAsOrtValue, ort_create_tensor_fn)(
        meminfo, data[i], bytes, m->in[i].dims, (size_t)m->in[i].rank,
        elem_of(m->in[i].dtype), &in[i]));
  }
  for (int i = 0; i < m->nout; i++) {
    out_names[i] = m->out[i];
    out->v[i] = NULL;
  }
  out->n = m->nout;
  if (!err)
    err = status_msg(API(Run, ort_run_fn)(
        s, NULL, in_names, (const OrtValue *const *)in, (size_t)m->nin,
        out_names, (size_t)m->nout, out->v));
  for (int i = 0; i < m->nin; i++) {
    if (in[i])
      API(ReleaseValue, ort_release_fn)(in[i]);
    free(data[i]);
  }
  return err;
}

/* An output tensor's element type, count and data; false with why set. */
static bool tensor_view(OrtValue *v, int *elem, size_t *count, void **data,
                        char *why, size_t len) {
  OrtTensorTypeAndShapeInfo *ti = NULL;
  const char *e =
      status_msg(API(GetTensorTypeAndShape, ort_type_and_shape_fn)(v, &ti));
  if (!e)
    e = status_msg(API(GetTensorElementType, ort_get_int_fn)(ti, elem));
  if (!e)
    e = status_msg(API(GetTensorShapeElementCount, ort_get_size_fn)(ti, count));
  if (!e)
    e = status_msg(API(GetTensorMutableData, ort_get_mut_ptr_fn)(v, data));
  if (ti)
    API(ReleaseTensorTypeAndShapeInfo, ort_release_fn)(ti);
  if (e)
    snprintf(why, len, "%.200s", e);
  return !e;
}

/* Compares two output tensors; returns false with why set. */
static bool compare(OrtValue *ref, OrtValue *got, double *max_err, char *why,
                    size_t len) {
  int elem[2] = {0};
  size_t count[2] = {0};
  void *data[2] = {0};
  OrtValue *v[2] = {ref, got};
  for (int k = 0; k < 2; k++)
    if (!tensor_view(v[k], &elem[k], &count[k], &data[k], why, len))
      return false;
  if (elem[0] != elem[1] || count[0] != count[1]) {
    snprintf(why, len, "type %d/%d or count %zu/%zu differ", elem[0], elem[1],
             count[0], count[1]);
    return false;
  }
  *max_err = 0;
  if (elem[0] == ORT_ELEM_FLOAT) {
    const float *a = data[0], *b = data[1];
    /* max |a[i]| as a compare and select, not fmax(peak, fabs(a[i])): GCC
     * 12's vectorizer (Debian 12's, native and cross) dies with an internal
     * compiler error on that float -> double fmax reduction at -O3 for
     * aarch64 (vect_transform_reduction). The result is the same: a NaN
     * element fails the comparison, as fmax ignores it. */
    double peak = 0;
    for (size_t i = 0; i < count[0]; i++) {
      double m = fabs(a[i]);
      if (m > peak)
        peak = m;
    }
    for (size_t i = 0; i < count[0]; i++) {
      double e = fabs((double)a[i] - b[i]);
      if (!(e <= *max_err))
        *max_err = isnan(e) ? INFINITY : e;
    }
    if (*max_err > 1e-4 * peak) {
      snprintf(why, len, "max abs error %.3g > 1e-4 x %.3g", *max_err, peak);
      return false;
    }
    return true;
  }
  size_t esz = elem[0] == ORT_ELEM_INT32   ? 4
               : elem[0] == ORT_ELEM_INT64 ? 8
                                           : 1;
  for (size_t i = 0; i < count[0]; i++)
    if (memcmp((char *)data[0] + i * esz, (char *)data[1] + i * esz, esz)) {
      snprintf(why, len, "integer element %zu differs", i);
      return false;
    }
  return true;
}

/* Counts the nodes ORT recorded on our EP and on others. */
static bool placement(OrtSession *s, int *ours, int *others, char *other_ops,
                      size_t len) {
  const OrtEpAssignedSubgraph *const *sg = NULL;
  size_t n = 0;
  *ours = *others = 0;
  other_ops[0] = 0;
  if (status_msg(API(Session_GetEpGraphAssignmentInfo,
                     ort_assignment_info_fn)(s, &sg, &n)))
    return false;
  for (size_t i = 0; i < n; i++) {
    const char *ep = NULL;
    const OrtEpAssignedNode *const *nodes = NULL;
    size_t nn = 0;
    if (status_msg(
            API(EpAssignedSubgraph_GetEpName, ort_get_str_fn)(sg[i], &ep)) ||
        status_msg(API(EpAssignedSubgraph_GetNodes,
                       ort_subgraph_nodes_fn)(sg[i], &nodes, &nn)))
      return false;
    bool mine = ep && !strcmp(ep, EP_NAME);
    for (size_t k = 0; k < nn; k++) {
      const char *op = NULL;
      if (mine) {
        ++*ours;
        continue;
      }
      ++*others;
      if (!status_msg(API(EpAssignedNode_GetOperatorType,
                          ort_get_str_fn)(nodes[k], &op)) &&
          op && strlen(other_ops) + strlen(op) + 2 < len) {
        strcat(other_ops, op);
        strcat(other_ops, " ");
      }
    }
  }
  return true;
}

/* Runs m with ORT's CPU EP (into ref) and with ours (cfg, into got); true
 * when both ran. *ours is our session, or NULL (failure reported). */
static bool run_both(const model_spec *m, const char *path,
                     const session_cfg *cfg, outputs *ref, outputs *got,
                     OrtSession **ours) {
  session_cfg cpu = {0};
  const char *err;
  *ours = NULL;
  OrtSession *a = open_session(path, &cpu, &err);
  if (!a) {
    fail("%s: CPU EP session: %s", m->name, err);
    return false;
  }
  if ((err = run_session(a, m, ref))) {
    fail("%s: CPU EP run: %s", m->name, err);
    API(ReleaseSession, ort_release_fn)(a);
    outputs_free(ref);
    return false;
  }
  API(ReleaseSession, ort_release_fn)(a);
  *ours = open_session(path, cfg, &err);
  if (!*ours) {
    fail("%s: directgraph EP session: %s", m->name, err);
  } else if ((err = run_session(*ours, m, got))) {
    fail("%s: directgraph EP run: %s", m->name, err);
  } else {
    return true;
  }
  outputs_free(ref);
  outputs_free(got);
  return false;
}

/* Releases s, or hands it to *keep. */
static void keep_or_release(OrtSession *s, OrtSession **keep) {
  if (s && keep)
    *keep = s;
  else if (s)
    API(ReleaseSession, ort_release_fn)(s);
}

/* Runs m with CPU EP and ours (cfg), compares; returns true when both ran. */
static bool check_outputs(const model_spec *m, const char *path,
                          const session_cfg *cfg, OrtSession **keep) {
  outputs ref = {0}, got = {0};
  OrtSession *b;
  bool ran = run_both(m, path, cfg, &ref, &got, &b);
  if (ran) {
    double worst = 0;
    char why[256] = "";
    bool same = true;
    for (int i = 0; i < m->nout && same; i++) {
      double e = 0;
      same = compare(ref.v[i], got.v[i], &e, why, sizeof why);
      worst = fmax(worst, e);
      if (!same)
        fail("%s: output '%s' differs from ORT's CPU EP: %s", m->name,
             m->out[i], why);
    }
    if (same)
      ok("%s: %d output(s) match ORT's CPU EP (max abs error %.2g)", m->name,
         m->nout, worst);
  }
  outputs_free(&ref);
  outputs_free(&got);
  keep_or_release(b, keep);
  return ran;
}

/* ---- int8 references ---- */

static int qbyte(const qref_model *q, const void *y, size_t i) {
  return q->ytype == QREF_U8 ? ((const uint8_t *)y)[i] : ((const int8_t *)y)[i];
}

/* How many of n values differ between a and b; *first: the first. */
static size_t count_diff(const uint8_t *a, const uint8_t *b, size_t n,
                         size_t *first) {
  size_t d = 0;
  *first = 0;
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i] && !d++)
      *first = i;
  return d;
}

/* v (an output of ORT or ours) as n bytes of q's output type, or NULL. */
static const uint8_t *qref_output(const model_spec *m, const qref_model *q,
                                  OrtValue *v, const char *who, size_t n) {
  int elem = 0;
  size_t count = 0;
  void *data = NULL;
  char why[256];
  int want = q->ytype == QREF_U8 ? ORT_ELEM_UINT8 : ORT_ELEM_INT8;
  if (!tensor_view(v, &elem, &count, &data, why, sizeof why))
    fail("%s: %s output: %s", m->name, who, why);
  else if (elem != want || count != n)
    fail("%s: %s output: type %d, %zu values; the reference has type %d, "
         "%zu values",
         m->name, who, elem, count, want, n);
  else
    return data;
  return NULL;
}

/* The verdicts on a qref model's outputs: yo (ours) and yr (ORT's; either
 * NULL where already reported) against exact and, where have_pred, the
 * saturating prediction pred (sp its statistics; else pwhy says why). */
static void qref_verdicts(const model_spec *m, const qref_model *q, size_t n,
                          const uint8_t *yo, const uint8_t *yr,
                          const uint8_t *exact, const uint8_t *pred,
                          bool have_pred, const qref_stats *sp,
                          const char *pwhy) {
  size_t first = 0, d;
  if (yo && (d = count_diff(yo, exact, n, &first)))
    fail("%s: directgraph EP output differs from the exact integer reference "
         "in %zu of %zu values (first at %zu: %d, exact %d)",
         m->name, d, n, first, qbyte(q, yo, first), qbyte(q, exact, first));
  else if (yo)
    ok("%s: directgraph EP output equals the exact integer reference (%zu "
       "values)",
       m->name, n);

  /* What the vpmaddubsw prediction says about this data, for the ok lines. */
  bool u8s8 = q->xtype == QREF_U8 && q->wtype == QREF_I8;
  size_t pdiff = have_pred ? count_diff(pred, exact, n, &first) : 0;
  char note[256];
  if (!u8s8)
    snprintf(note, sizeof note,
             "%s x %s: ORT's x86 kernels for these types sum in 32 bits, no "
             "saturating path",
             q->xtype == QREF_U8 ? "u8" : "s8",
             q->wtype == QREF_U8 ? "u8" : "s8");
  else if (!have_pred)
    snprintf(note, sizeof note, "no saturating prediction: %s", pwhy);
  else if (!pdiff)
    snprintf(note, sizeof note,
             "the vpmaddubsw prediction equals the exact result for this "
             "data: %zu of %zu pairs saturate in int16",
             sp->saturated_pairs, sp->pairs);
  else
    snprintf(note, sizeof note,
             "%zu of %zu pairs saturate in int16, changing %zu of %zu values",
             sp->saturated_pairs, sp->pairs, pdiff, n);

  ort_u8s8_kernel k = ort_u8s8_kernel_here();
  if (!yr) {
    /* reported */
  } else if (u8s8 && k.saturates && !have_pred) {
    fail("%s: ORT's U8S8 kernel here, %s, saturates, and there is no "
         "prediction for it: %s",
         m->name, k.name, pwhy);
  } else if (u8s8 && k.saturates) {
    if ((d = count_diff(yr, pred, n, &first)))
      fail("%s: ORT's CPU EP output differs from the saturating prediction "
           "for its %s U8S8 kernel in %zu of %zu values (first at %zu: ORT "
           "%d, predicted %d, exact %d)",
           m->name, k.name, d, n, first, qbyte(q, yr, first),
           qbyte(q, pred, first), qbyte(q, exact, first));
    else
      ok("%s: ORT's CPU EP output equals the saturating prediction for its "
         "%s U8S8 kernel: %s",
         m->name, k.name, note);
  } else if ((d = count_diff(yr, exact, n, &first))) {
    fail("%s: ORT's CPU EP output differs from the exact integer reference "
         "in %zu of %zu values (first at %zu: ORT %d, exact %d; U8S8 kernel "
         "here: %s)",
         m->name, d, n, first, qbyte(q, yr, first), qbyte(q, exact, first),
         k.name);
  } else if (u8s8) {
    ok("%s: ORT's CPU EP output equals the exact integer reference: its U8S8 "
       "kernel here, %s, does not saturate (on ORT's vpmaddubsw kernels %s)",
       m->name, k.name, note);
  } else {
    ok("%s: ORT's CPU EP output equals the exact integer reference (%s)",
       m->name, note);
  }
  if (q->must_saturate && !pdiff)
    fail("%s: the test data does not change the vpmaddubsw prediction (%s), "
         "so the check proves nothing there",
         m->name, have_pred ? "no value changes" : pwhy);
}

/* Checks a model with a NAME.qref (int8_ref.h): our EP's output must equal
 * the exact integer reference on every CPU. ORT's CPU EP must equal the
 * exact reference where its kernel is exact on this CPU, and the saturating
 * prediction where it is not (u8 x s8 without VNNI: int8_ref.c has the
 * facts), so that the test fails if either side changes; which applies is
 * decided from cpuid as MLAS decides, never from the outputs. */
static void check_qref(const model_spec *m, const char *dir, OrtValue *ort,
                       OrtValue *ours) {
  char path[1024], why[256] = "", pwhy[256] = "";
  snprintf(path, sizeof path, "%s/%s.qref", dir, m->name);
  qref_model q;
  if (m->nin != 1 || m->nout != 1) {
    fail("%s: a qref model has one input and one output", m->name);
    return;
  }
  if (!qref_load(path, &q, why, sizeof why)) {
    fail("%s: %s", m->name, why);
    return;
  }
  size_t bytes, n = qref_output_count(&q);
  void *x = make_input(m, &m->in[0], &bytes);
  uint8_t *exact = malloc(n), *pred = malloc(n);
  qref_stats st = {0}, sp = {0};
  bool have_exact =
      x && exact &&
      qref_compute(&q, x, QREF_EXACT, exact, &st, why, sizeof why);
  bool have_pred =
      x && pred &&
      qref_compute(&q, x, QREF_U8S8_PAIRS16, pred, &sp, pwhy, sizeof pwhy);
  const uint8_t *yo = qref_output(m, &q, ours, "directgraph EP", n);
  const uint8_t *yr = qref_output(m, &q, ort, "ORT's CPU EP", n);
  if (!have_exact)
    fail("%s: exact reference: %s", m->name, why);
  else
    qref_verdicts(m, &q, n, yo, yr, exact, pred, have_pred, &sp, pwhy);
  free(x);
  free(exact);
  free(pred);
  qref_free(&q);
}

/* Runs m with CPU EP and ours (cfg), checks against the int8 references;
 * returns true when both ran. */
static bool check_outputs_qref(const model_spec *m, const char *dir,
                               const char *path, const session_cfg *cfg,
                               OrtSession **keep) {
  outputs ref = {0}, got = {0};
  OrtSession *b;
  bool ran = run_both(m, path, cfg, &ref, &got, &b);
  if (ran)
    check_qref(m, dir, ref.v[0], got.v[0]);
  outputs_free(&ref);
  outputs_free(&got);
  keep_or_release(b, keep);
  return ran;
}

static void test_model(const model_spec *m, const char *dir) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.onnx", dir, m->name);
  session_cfg cfg = {.use_ep = true, .no_fallback = true};
  OrtSession *s = NULL;
  if (!strcmp(m->check, "qref") ? !check_outputs_qref(m, dir, path, &cfg, &s)
                                : !check_outputs(m, path, &cfg, &s))
    return;
  int ours, others;
  char ops[256];
  if (!placement(s, &ours, &others, ops, sizeof ops))
    fail("%s: no graph assignment info from ORT", m->name);
  else if (ours == m->nodes && others == 0)
    ok("%s: all %d node(s) assigned to " EP_NAME, m->name, ours);
  else
    fail("%s: %d of %d node(s) on " EP_NAME ", %d elsewhere (%s)", m->name,
         ours, m->nodes, others, ops);
  API(ReleaseSession, ort_release_fn)(s);
}

/* A model holding one op we decline (Det) among ops we take. */
static void test_unsupported(const model_spec *m, const char *dir) {
  char path[1024];
  const char *err;
  snprintf(path, sizeof path, "%s/%s.onnx", dir, m->name);
  session_cfg aut = {.use_ep = true};
  OrtSession *s = NULL;
  if (check_outputs(m, path, &aut, &s)) {
    int ours, others;
    char ops[256];
    if (placement(s, &ours, &others, ops, sizeof ops) && ours == m->nodes - 1 &&
        others == 1 && !strcmp(ops, "Det "))
      ok("%s: policy auto: Det declined (left to ORT), the other %d "
         "node(s) on " EP_NAME,
         m->name, ours);
    else
      fail("%s: policy auto: expected %d node(s) on " EP_NAME " and Det "
           "elsewhere, got %d / %d (%s)",
           m->name, m->nodes - 1, ours, others, ops);
  }
  if (s)
    API(ReleaseSession, ort_release_fn)(s);
  session_cfg strict = {.use_ep = true,
                        .no_fallback = true,
                        .keys = {"policy"},
                        .values = {"strict"},
                        .nkv = 1};
  s = open_session(path, &strict, &err);
  if (s) {
    fail("%s: policy strict without CPU fallback: session was created",
         m->name);
    API(ReleaseSession, ort_release_fn)(s);
  } else {
    ok("%s: policy strict without CPU fallback: session creation fails "
       "cleanly (%.90s...)",
       m->name, err);
  }
}

/* A device kind with no device that runs softmax (absent kinds count). */
static const char *kind_without_softmax(void) {
  static const struct {
    const char *name;
    dg_device_kind kind;
  } kinds[] = {{"npu", DG_DEVICE_NPU},
               {"opencl", DG_DEVICE_OPENCL},
               {"vulkan", DG_DEVICE_VULKAN}};
  dg_context *ctx;
  const char *found = NULL;
  if (dg_context_create(NULL, &ctx) != DG_OK)
    return NULL;
  for (size_t k = 0; k < 3 && !found; k++) {
    bool runs = false;
    for (int i = 0; i < dg_context_device_count(ctx); i++) {
      dg_device_info info;
      if (dg_context_device_info(ctx, i, &info) == DG_OK &&
          info.kind == kinds[k].kind && (info.ops >> DG_OP_SOFTMAX & 1))
        runs = true;
    }
    if (!runs)
      found = kinds[k].name;
  }
  dg_context_destroy(ctx);
  return found;
}

/* Strict placement: a node that cannot run on the device kind asked. */
static void test_strict_placement(const model_spec *m, const char *dir) {
  char path[1024];
  const char *err;
  const char *kind = kind_without_softmax();
  if (!kind) {
    printf("skipped: strict placement: every device kind here runs softmax\n");
    return;
  }
  snprintf(path, sizeof path, "%s/%s.onnx", dir, m->name);
  session_cfg strict = {.use_ep = true,
                        .keys = {"policy", "device_kinds"},
                        .values = {"strict", kind},
                        .nkv = 2};
  OrtSession *s = open_session(path, &strict, &err);
  if (s) {
    fail("softmax on device_kinds=%s, policy strict: session was created",
         kind);
    API(ReleaseSession, ort_release_fn)(s);
  } else if (!strstr(err, EP_NAME)) {
    fail("softmax on device_kinds=%s, policy strict: failed, but not with "
         "our diagnostic: %s",
         kind, err);
  } else {
    ok("softmax on device_kinds=%s, policy strict: session creation fails "
       "cleanly with directgraph's reason (%.120s...)",
       kind, err);
  }
  /* The same under auto: declined, ORT's CPU EP runs it. */
  session_cfg aut = strict;
  aut.values[0] = "auto";
  s = open_session(path, &aut, &err);
  int ours = -1, others = -1;
  char ops[256];
  if (!s)
    fail("softmax on device_kinds=%s, policy auto: %s", kind, err);
  else if (placement(s, &ours, &others, ops, sizeof ops) && ours == 0 &&
           others == 1)
    ok("softmax on device_kinds=%s, policy auto: declined, runs on ORT's CPU "
       "EP",
       kind);
  else
    fail("softmax on device_kinds=%s, policy auto: %d node(s) on ours", kind,
         ours);
  if (s)
    API(ReleaseSession, ort_release_fn)(s);
}

static void test_bad_option(const model_spec *m, const char *dir) {
  char path[1024];
  const char *err;
  snprintf(path, sizeof path, "%s/%s.onnx", dir, m->name);
  session_cfg bad = {
      .use_ep = true, .keys = {"policy"}, .values = {"sometimes"}, .nkv = 1};
  OrtSession *s = open_session(path, &bad, &err);
  if (s) {
    fail("EP option policy=sometimes: session was created");
    API(ReleaseSession, ort_release_fn)(s);
  } else if (strstr(err, "policy")) {
    ok("EP option policy=sometimes: session creation fails cleanly");
  } else {
    fail("EP option policy=sometimes: unexpected error: %s", err);
  }
  /* precision: the two names, anything else refused by name. */
  session_cfg fast = {
      .use_ep = true, .keys = {"precision"}, .values = {"fast_f16"}, .nkv = 1};
  s = open_session(path, &fast, &err);
  if (s) {
    ok("EP option precision=fast_f16: session created");
    API(ReleaseSession, ort_release_fn)(s);
  } else {
    fail("EP option precision=fast_f16: %s", err);
  }
  fast.values[0] = "half";
  s = open_session(path, &fast, &err);
  if (s) {
    fail("EP option precision=half: session was created");
    API(ReleaseSession, ort_release_fn)(s);
  } else if (strstr(err, "precision 'half'")) {
    ok("EP option precision=half: refused, naming it");
  } else {
    fail("EP option precision=half: unexpected error: %s", err);
  }
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s LIBONNXRUNTIME EP_LIBRARY MODELS_DIR\n",
            argv[0]);
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("skipped: cannot load ONNX Runtime (%s); fetch it with "
           "tests/ort/fetch-ort.sh (needs the npm registry)\n",
           dlerror());
    return 0;
  }
  const dg_ort_api_base *(*get_base)(void) =
      (const dg_ort_api_base *(*)(void))dlsym(lib, "OrtGetApiBase");
  const dg_ort_api_base *base = get_base ? get_base() : NULL;
  /* 24: the oldest with the graph assignment record used below. */
  api = base ? base->get_api(24) : NULL;
  if (!api) {
    fail("ONNX Runtime %s has no API version 24 (need >= 1.24)",
         base ? base->get_version_string() : "?");
    return 1;
  }
  ok("ONNX Runtime %s loaded, API 24 present", base->get_version_string());
  const char *err;
  if ((err = status_msg(API(CreateEnv, ort_create_env_fn)(
           ORT_LOG_FATAL, "dg_ort_host", &env))) ||
      (err = status_msg(API(CreateCpuMemoryInfo, ort_create_cpu_mem_fn)(
           ORT_ALLOC_DEVICE, ORT_MEM_DEFAULT, &meminfo)))) {
    fail("ORT setup: %s", err);
    return 1;
  }
  err = status_msg(API(RegisterExecutionProviderLibrary,
                       ort_register_ep_lib_fn)(env, "directgraph", argv[2]));
  if (err) {
    fail("RegisterExecutionProviderLibrary(%s): %s", argv[2], err);
    return 1;
  }
  const OrtEpDevice *const *devs = NULL;
  size_t ndev = 0;
  if (!(err = status_msg(
            API(GetEpDevices, ort_get_ep_devices_fn)(env, &devs, &ndev))))
    for (size_t i = 0; i < ndev; i++)
      if (!strcmp(API(EpDevice_EpName, ort_ep_device_name_fn)(devs[i]),
                  EP_NAME))
        ep_device = devs[i];
  if (!ep_device) {
    fail("library registered, but GetEpDevices lists no " EP_NAME);
    return 1;
  }
  ok("plugin EP registered; GetEpDevices lists " EP_NAME);

  static char line[LIST_LEN * 2 + 256];
  char path[1024];
  snprintf(path, sizeof path, "%s/manifest.txt", argv[3]);
  FILE *f = fopen(path, "r");
  if (!f) {
    fail("cannot read %s", path);
    return 1;
  }
  model_spec softmax = {0}, any = {0};
  while (fgets(line, sizeof line, f)) {
    model_spec m;
    if (!parse_line(line, &m)) {
      fail("bad manifest line: %s", line);
      continue;
    }
    if (!strcmp(m.check, "unsupported"))
      test_unsupported(&m, argv[3]);
    else
      test_model(&m, argv[3]);
    if (!strcmp(m.name, "softmax"))
      softmax = m;
    any = m;
  }
  fclose(f);
  if (softmax.name[0])
    test_strict_placement(&softmax, argv[3]);
  if (any.name[0])
    test_bad_option(&any, argv[3]);

  if ((err = status_msg(API(UnregisterExecutionProviderLibrary,
                            ort_unregister_ep_lib_fn)(env, "directgraph"))))
    fail("UnregisterExecutionProviderLibrary: %s", err);
  API(ReleaseMemoryInfo, ort_release_fn)(meminfo);
  API(ReleaseEnv, ort_release_fn)(env);
  /* libonnxruntime stays loaded: its static destructors run at exit. */
  return failures ? 1 : 0;
}
