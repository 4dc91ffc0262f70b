/* What the ONNX Runtime tests share (node_parity.c, zoo_test.c): ORT
 * loaded by dlopen through the ABI table of src/front/ort_ep/ort_abi.h, our EP
 * registered, test data read from the ONNX node-test layout, sessions
 * created with their stderr captured (the EP's DG_ORT_EP_VERBOSE lines),
 * and the record of which EP ORT gave each node.
 *
 * Header-only (static functions and state): each test program includes
 * it once. */
#ifndef DG_TEST_ORT_RUNNER_H
#define DG_TEST_ORT_RUNNER_H

#include "../harness.h" /* t_read_file */
#include "front/onnx/onnx_internal.h"
#include "graph.h"
#include "ort_abi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EP_NAME "DirectGraphExecutionProvider"
#define MAX_IO 16

static dg_ort_table api;
static OrtEnv *env;
static OrtMemoryInfo *meminfo;
static const OrtEpDevice *ep_device;
#define API(slot, type) DG_ORT_FN(api, ORT_SLOT_##slot, type)

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

/* ---- test data ---- */

typedef struct tensor {
  char name[256];
  dg_onnx_value v; /* ONNX element type, dims; v.data = data */
  void *data;
  size_t bytes;
} tensor;

static size_t elem_size(int elem) {
  switch (elem) {
  case DG_ONNX_UINT8:
  case DG_ONNX_INT8:
  case DG_ONNX_BOOL:
    return 1;
  case DG_ONNX_FLOAT16:
    return 2;
  case DG_ONNX_INT64:
    return 8;
  default:
    return 4;
  }
}

/* test_data_set_0/input_<i>.pb (kind "input"): 1 read, 0 absent, -1 not
 * a tensor we can feed (a sequence, an optional, a string tensor). */
static int read_pb(const char *dir, int i, tensor *out) {
  char path[1200], err[256];
  snprintf(path, sizeof path, "%s/test_data_set_0/input_%d.pb", dir, i);
  size_t size;
  void *buf = t_read_file(path, &size);
  if (!buf)
    return 0;
  Onnx__TensorProto *t = onnx__tensor_proto__unpack(NULL, size, buf);
  free(buf);
  if (!t)
    return -1;
  snprintf(out->name, sizeof out->name, "%s", t->name ? t->name : "");
  bool ok = onnx_tensor_read(t, NULL, &out->v, &out->data, err, sizeof err);
  onnx__tensor_proto__free_unpacked(t, NULL);
  if (!ok)
    return -1;
  out->bytes = out->v.count * elem_size(out->v.elem);
  return 1;
}

/* The model's graph inputs (not initializers) and outputs, by name. */
typedef struct model_io {
  int nodes, nin, nout;
  /* a Shape or Size node: shape arithmetic on a tensor's shape, which the
   * importer folds across nodes */
  bool shape_ops;
  char in[MAX_IO][256], out[MAX_IO][256];
} model_io;

static bool read_model_io(const char *path, model_io *m) {
  size_t size;
  void *buf = t_read_file(path, &size);
  Onnx__ModelProto *mp =
      buf ? onnx__model_proto__unpack(NULL, size, buf) : NULL;
  free(buf);
  memset(m, 0, sizeof *m);
  if (!mp || !mp->graph) {
    if (mp)
      onnx__model_proto__free_unpacked(mp, NULL);
    return false;
  }
  const Onnx__GraphProto *g = mp->graph;
  m->nodes = (int)g->n_node;
  for (size_t k = 0; k < g->n_node; k++)
    m->shape_ops = m->shape_ops || !strcmp(g->node[k]->op_type, "Shape") ||
                   !strcmp(g->node[k]->op_type, "Size");
  for (size_t i = 0; i < g->n_input && m->nin < MAX_IO; i++) {
    bool init = false;
    for (size_t k = 0; k < g->n_initializer && !init; k++)
      init = g->initializer[k]->name && g->input[i]->name &&
             !strcmp(g->initializer[k]->name, g->input[i]->name);
    if (!init)
      snprintf(m->in[m->nin++], 256, "%s",
               g->input[i]->name ? g->input[i]->name : "");
  }
  for (size_t i = 0; i < g->n_output && m->nout < MAX_IO; i++)
    snprintf(m->out[m->nout++], 256, "%s",
             g->output[i]->name ? g->output[i]->name : "");
  onnx__model_proto__free_unpacked(mp, NULL);
  return true;
}

/* ---- sessions ---- */

static char *capture_stderr(OrtSession **s, const char *path,
                            OrtSessionOptions *so, const char **err) {
  FILE *tmp = tmpfile();
  int saved = dup(2);
  fflush(stderr);
  if (tmp && saved >= 0)
    dup2(fileno(tmp), 2);
  *err =
      status_msg(API(CreateSession, ort_create_session_fn)(env, path, so, s));
  fflush(stderr);
  if (saved >= 0) {
    dup2(saved, 2);
    close(saved);
  }
  char *text = NULL;
  if (tmp) {
    long n = ftell(tmp);
    text = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
    rewind(tmp);
    if (text && n > 0 && fread(text, 1, (size_t)n, tmp) != (size_t)n)
      text[0] = 0;
    fclose(tmp);
  }
  return text ? text : calloc(1, 1);
}

/* Counts the nodes ORT recorded on our EP and on others. */
static bool placement(OrtSession *s, int *mine, int *others) {
  const OrtEpAssignedSubgraph *const *sg = NULL;
  size_t n = 0;
  *mine = *others = 0;
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
    *(ep && !strcmp(ep, EP_NAME) ? mine : others) += (int)nn;
  }
  return true;
}

/* Loads ONNX Runtime from ort_path and registers our EP from ep_path:
 * 1 when ready; 0 when ORT cannot be loaded (printed "skipped:"); -1 on
 * a failure (printed "FAIL -"). */
static int ort_setup(const char *ort_path, const char *ep_path,
                     const char *log_id) {
  void *lib = dlopen(ort_path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("skipped: cannot load ONNX Runtime (%s); fetch it with "
           "tests/ort/fetch-ort.sh (needs the npm registry)\n",
           dlerror());
    return 0;
  }
  const dg_ort_api_base *(*get_base)(void) =
      (const dg_ort_api_base *(*)(void))dlsym(lib, "OrtGetApiBase");
  const dg_ort_api_base *base = get_base ? get_base() : NULL;
  api = base ? base->get_api(24) : NULL; /* 24: the assignment record */
  const char *err = NULL;
  if (!api) {
    printf("FAIL - ONNX Runtime %s has no API version 24 (need >= 1.24)\n",
           base ? base->get_version_string() : "?");
    return -1;
  }
  if ((err = status_msg(
           API(CreateEnv, ort_create_env_fn)(ORT_LOG_FATAL, log_id, &env))) ||
      (err = status_msg(API(CreateCpuMemoryInfo, ort_create_cpu_mem_fn)(
           ORT_ALLOC_DEVICE, ORT_MEM_DEFAULT, &meminfo))) ||
      (err = status_msg(
           API(RegisterExecutionProviderLibrary,
               ort_register_ep_lib_fn)(env, "directgraph", ep_path)))) {
    printf("FAIL - ORT setup: %s\n", err);
    return -1;
  }
  const OrtEpDevice *const *devs = NULL;
  size_t ndev = 0;
  if (!status_msg(API(GetEpDevices, ort_get_ep_devices_fn)(env, &devs, &ndev)))
    for (size_t i = 0; i < ndev; i++)
      if (!strcmp(API(EpDevice_EpName, ort_ep_device_name_fn)(devs[i]),
                  EP_NAME))
        ep_device = devs[i];
  if (!ep_device) {
    printf("FAIL - GetEpDevices lists no " EP_NAME "\n");
    return -1;
  }
  printf("# ONNX Runtime %s with %s\n", base->get_version_string(), ep_path);
  return 1;
}

/* Runs session s on the inputs ins (nin) for m's outputs into out
 * (MAX_IO, the caller releases each with ReleaseValue, and in: likewise,
 * whatever happened). NULL, or ORT's error. */
static const char *ort_run_session(OrtSession *s, const model_io *m,
                                   tensor *ins, int nin, OrtValue **in,
                                   OrtValue **out) {
  const char *in_names[MAX_IO], *out_names[MAX_IO];
  const char *err = NULL;
  for (int i = 0; i < nin && !err; i++) {
    in_names[i] = ins[i].name;
    err = status_msg(API(CreateTensorWithDataAsOrtValue, ort_create_tensor_fn)(
        meminfo, ins[i].data, ins[i].bytes, ins[i].v.dims,
        (size_t)ins[i].v.rank, ins[i].v.elem, &in[i]));
  }
  for (int i = 0; i < m->nout; i++)
    out_names[i] = m->out[i];
  if (!err)
    err = status_msg(
        API(Run, ort_run_fn)(s, NULL, in_names, (const OrtValue *const *)in,
                             (size_t)nin, out_names, (size_t)m->nout, out));
  return err;
}

/* An output value's element type, element count, dims (rank up to
 * DG_MAX_RANK; more is an error) and data. NULL, or the error. */
static const char *ort_output(OrtValue *v, int *elem, size_t *count,
                              size_t *rank, int64_t *dims, void **data) {
  OrtTensorTypeAndShapeInfo *ti = NULL;
  *rank = 0;
  const char *err =
      status_msg(API(GetTensorTypeAndShape, ort_type_and_shape_fn)(v, &ti));
  if (!err)
    err = status_msg(API(GetTensorElementType, ort_get_int_fn)(ti, elem));
  if (!err)
    err =
        status_msg(API(GetTensorShapeElementCount, ort_get_size_fn)(ti, count));
  if (!err)
    err = status_msg(API(GetDimensionsCount, ort_get_size_fn)(ti, rank));
  if (!err && *rank > DG_MAX_RANK)
    err = "an output of rank above 6";
  if (!err)
    err = status_msg(API(GetDimensions, ort_get_dims_fn)(ti, dims, *rank));
  if (!err)
    err = status_msg(API(GetTensorMutableData, ort_get_mut_ptr_fn)(v, data));
  if (ti)
    API(ReleaseTensorTypeAndShapeInfo, ort_release_fn)(ti);
  return err;
}

static void ort_release_values(OrtValue **v) {
  for (int i = 0; i < MAX_IO; i++)
    if (v[i])
      API(ReleaseValue, ort_release_fn)(v[i]);
}

/* The ONNX Runtime library: $DG_ORT_LIB, else tests/ort/fetch-ort.sh's
 * cache ($DG_ORT_CACHE or ~/.cache/directgraph-ci/ort, version 1.30.0). */
static void ort_library_path(char *ort, size_t len) {
  const char *lib = getenv("DG_ORT_LIB"), *cache = getenv("DG_ORT_CACHE");
  const char *home = getenv("HOME");
  if (lib && lib[0])
    snprintf(ort, len, "%s", lib);
  else if (cache && cache[0])
    snprintf(ort, len, "%s/1.30.0/libonnxruntime.so.1", cache);
  else
    snprintf(ort, len,
             "%s/.cache/directgraph-ci/ort/1.30.0/"
             "libonnxruntime.so.1",
             home ? home : "/tmp");
}

/* An EP library path ORT can open (it resolves a relative one against
 * its own folder). */
static void ep_library_path(const char *arg, char *ep, size_t len) {
  if (arg[0] == '/' || !getcwd(ep, len - 2 - strlen(arg)))
    snprintf(ep, len, "%s", arg);
  else
    snprintf(ep + strlen(ep), len - strlen(ep), "/%s", arg);
}

#endif
