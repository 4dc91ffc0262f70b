/* Compile: one directgraph session per fused node; Compute binds ORT's
 * input and output tensors (host memory) to it and runs it.
 *
 * The OrtGraph handed to Compile lives only during the call, so the graph
 * is rebuilt and compiled here (weights copied by the builder), with the
 * same region builder GetCapability tried: what was claimed builds. The
 * fused node's inputs and outputs give the order of the kernel's tensors
 * (constant initializers are not among them: they became constants). */
#include "core/env.h"
#include "ep_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ep_io {
  char *name;
  size_t bytes;
  int rank;
  int64_t dims[DG_MAX_RANK];
} ep_io;

typedef struct ep_kernel {
  dg_ort_node_compute_info base; /* first: ORT sees a pointer to this */
  ep_ort ort;
  dg_session *session;
  int nin, nout;
  ep_io *in, *out;
  dg_binding *bind; /* nin + nout, reused under the lock */
  /* dg_session_run is not promised to be reentrant; ORT may call Compute
   * from several threads at once. */
  pthread_mutex_t lock;
  bool lock_ready;
} ep_kernel;

#define API(o, slot, type) DG_ORT_FN((o)->api, ORT_SLOT_##slot, type)

static void kernel_free(ep_kernel *k) {
  if (!k)
    return;
  dg_session_destroy(k->session);
  for (int i = 0; k->in && i < k->nin; i++)
    free(k->in[i].name);
  for (int i = 0; k->out && i < k->nout; i++)
    free(k->out[i].name);
  free(k->in);
  free(k->out);
  free(k->bind);
  if (k->lock_ready)
    pthread_mutex_destroy(&k->lock);
  free(k);
}

static OrtStatus *create_state(dg_ort_node_compute_info *self,
                               OrtNodeComputeContext *ctx, void **state) {
  (void)ctx;
  *state = self; /* everything lives in the kernel itself */
  return NULL;
}

static void release_state(dg_ort_node_compute_info *self, void *state) {
  (void)self, (void)state;
}

/* Bytes of an ORT tensor value, or 0 on error. */
static size_t value_bytes(const ep_ort *o, const OrtValue *v, int *elem) {
  OrtTensorTypeAndShapeInfo *tsi = NULL;
  size_t count = 0;
  if (ep_failed(o,
                API(o, GetTensorTypeAndShape, ort_type_and_shape_fn)(v, &tsi),
                NULL, 0))
    return 0;
  bool ok =
      !ep_failed(o, API(o, GetTensorElementType, ort_get_int_fn)(tsi, elem),
                 NULL, 0) &&
      !ep_failed(
          o, API(o, GetTensorShapeElementCount, ort_get_size_fn)(tsi, &count),
          NULL, 0);
  API(o, ReleaseTensorTypeAndShapeInfo, ort_release_fn)(tsi);
  return ok ? count * dg_dtype_size(ep_dtype_of(*elem)) : 0;
}

static OrtStatus *compute(dg_ort_node_compute_info *self, void *state,
                          OrtKernelContext *kctx) {
  ep_kernel *k = (ep_kernel *)self;
  const ep_ort *o = &k->ort;
  (void)state;
  pthread_mutex_lock(&k->lock);
  OrtStatus *st = NULL;
  for (int i = 0; i < k->nin && !st; i++) {
    const OrtValue *v = NULL;
    const void *data = NULL;
    int elem = 0;
    if ((st = API(o, KernelContext_GetInput,
                  ort_kernel_input_fn)(kctx, (size_t)i, &v)) ||
        (st = API(o, GetTensorData, ort_get_ptr_fn)(v, &data)))
      break;
    if (value_bytes(o, v, &elem) != k->in[i].bytes)
      st = ep_error(o, ORT_CODE_INVALID_ARGUMENT,
                    DG_EP_NAME ": input '%s' has not the compiled size",
                    k->in[i].name);
    /* directgraph only reads inputs; the binding type is not const. */
    k->bind[i] =
        (dg_binding){k->in[i].name, (void *)(uintptr_t)data, k->in[i].bytes};
  }
  for (int i = 0; i < k->nout && !st; i++) {
    OrtValue *v = NULL;
    void *data = NULL;
    if ((st = API(o, KernelContext_GetOutput, ort_kernel_output_fn)(
             kctx, (size_t)i, k->out[i].dims, (size_t)k->out[i].rank, &v)) ||
        (st = API(o, GetTensorMutableData, ort_get_mut_ptr_fn)(v, &data)))
      break;
    k->bind[k->nin + i] = (dg_binding){k->out[i].name, data, k->out[i].bytes};
  }
  if (!st) {
    dg_diagnostic d;
    dg_status rs = dg_session_run(k->session, k->bind, k->nin, k->bind + k->nin,
                                  k->nout, &d);
    if (rs != DG_OK)
      st = ep_error(o, ORT_CODE_EP_FAIL, DG_EP_NAME ": run failed: %s",
                    d.message);
  }
  pthread_mutex_unlock(&k->lock);
  return st;
}

static size_t desc_bytes(const dg_tensor_desc *d) {
  size_t n = dg_dtype_size(d->dtype);
  for (int i = 0; i < d->rank; i++)
    n *= (size_t)d->dims[i];
  return n;
}

/* Fills io from the session's input/output called name. */
static bool find_io(const dg_session *s, bool input, const char *name,
                    ep_io *io) {
  int n = input ? dg_session_input_count(s) : dg_session_output_count(s);
  for (int i = 0; i < n; i++) {
    dg_io_info info;
    if ((input ? dg_session_input_info(s, i, &info)
               : dg_session_output_info(s, i, &info)) != DG_OK ||
        strcmp(info.name, name))
      continue;
    io->bytes = desc_bytes(&info.desc);
    io->rank = info.desc.rank;
    memcpy(io->dims, info.desc.dims, sizeof io->dims);
    return (io->name = strdup(name)) != NULL;
  }
  return false;
}

/* DG_ORT_EP_VERBOSE=1: the directgraph ops a fused node became, in plan
 * order, so that a test can compare them with the importer's graph. */
static void print_ops(const dg_session *s) {
  const dg_plan *plan = dg_session_plan(s);
  fprintf(stderr, DG_EP_NAME ": compiled:");
  for (int i = 0; i < dg_plan_node_count(plan); i++) {
    dg_plan_node pn;
    if (dg_plan_get_node(plan, i, &pn) == DG_OK)
      fprintf(stderr, " %s", dg_op_name(pn.op));
  }
  fprintf(stderr, "\n");
}

static OrtStatus *compile_one(ep_state *ep, const OrtGraph *graph,
                              const OrtNode *fused, ep_kernel **out) {
  const ep_ort *o = &ep->ort;
  const OrtNode **nodes = NULL;
  const OrtValueInfo **ins = NULL, **outs = NULL;
  const char **out_names = NULL;
  char err[768];
  OrtStatus *st = NULL;
  int nn = ep_graph_nodes(o, graph, &nodes);
  int ni = ep_node_inputs(o, fused, &ins);
  int no = ep_node_outputs(o, fused, &outs);
  ep_kernel *k = calloc(1, sizeof *k);
  if (nn < 0 || ni < 0 || no < 0 || !k ||
      !(out_names = calloc((size_t)no + 1, sizeof *out_names)) ||
      !(k->in = calloc((size_t)ni + 1, sizeof *k->in)) ||
      !(k->out = calloc((size_t)no + 1, sizeof *k->out)) ||
      !(k->bind = calloc((size_t)(ni + no) + 1, sizeof *k->bind))) {
    st = ep_error(o, ORT_CODE_FAIL, DG_EP_NAME ": out of memory");
    goto done;
  }
  k->lock_ready = pthread_mutex_init(&k->lock, NULL) == 0;
  k->ort = *o;
  k->nin = ni;
  k->nout = no;
  for (int i = 0; i < no; i++)
    out_names[i] = ep_value_name(o, outs[i]);
  dg_graph *g = ep_region_build(o, ep->ctx, nodes, (size_t)nn, out_names,
                                (size_t)no, err, sizeof err);
  if (!g) {
    st = ep_error(o, ORT_CODE_EP_FAIL, DG_EP_NAME ": %s", err);
    goto done;
  }
  dg_compile_options co = ep_compile_options(&ep->opts);
  dg_diagnostic d;
  dg_status cs = dg_graph_compile(g, &co, &k->session, &d);
  dg_graph_destroy(g);
  if (cs != DG_OK) {
    /* Reached only under policy strict: say what could not run where. */
    st = ep_error(o, ORT_CODE_EP_FAIL, DG_EP_NAME " (policy %s): %s",
                  ep->opts.policy == DG_POLICY_STRICT ? "strict" : "auto",
                  d.message);
    goto done;
  }
  const char *verbose = dg_env(DG_ENV_ORT_EP_VERBOSE);
  if (verbose && verbose[0] == '1')
    print_ops(k->session);
  if (dg_session_input_count(k->session) != ni) {
    st = ep_error(o, ORT_CODE_EP_FAIL,
                  DG_EP_NAME ": %d fused inputs but "
                             "%d directgraph inputs",
                  ni, dg_session_input_count(k->session));
    goto done;
  }
  for (int i = 0; i < ni && !st; i++)
    if (!find_io(k->session, true, ep_value_name(o, ins[i]), &k->in[i]))
      st = ep_error(o, ORT_CODE_EP_FAIL,
                    DG_EP_NAME ": fused input '%s' is "
                               "no graph input",
                    ep_value_name(o, ins[i]));
  for (int i = 0; i < no && !st; i++)
    if (!find_io(k->session, false, out_names[i], &k->out[i]))
      st = ep_error(o, ORT_CODE_EP_FAIL,
                    DG_EP_NAME ": fused output '%s' is "
                               "no graph output",
                    out_names[i]);
done:
  free(nodes);
  free(ins);
  free(outs);
  free(out_names);
  if (st) {
    kernel_free(k);
    return st;
  }
  k->base.ort_version_supported = DG_ORT_EP_VERSION;
  k->base.CreateState = create_state;
  k->base.Compute = compute;
  k->base.ReleaseState = release_state;
  *out = k;
  return NULL;
}

OrtStatus *ep_compile(dg_ort_ep *self, const OrtGraph **graphs,
                      const OrtNode **fused_nodes, size_t count,
                      dg_ort_node_compute_info **infos,
                      OrtNode **ep_context_nodes) {
  ep_state *ep = (ep_state *)self;
  (void)ep_context_nodes; /* no EPContext models */
  for (size_t i = 0; i < count; i++)
    infos[i] = NULL;
  for (size_t i = 0; i < count; i++) {
    ep_kernel *k = NULL;
    OrtStatus *st = compile_one(ep, graphs[i], fused_nodes[i], &k);
    if (st) {
      /* ORT keeps (and later releases) the infos already set. */
      return st;
    }
    infos[i] = &k->base;
  }
  return NULL;
}

void ep_release_compute_infos(dg_ort_ep *self, dg_ort_node_compute_info **infos,
                              size_t count) {
  (void)self;
  for (size_t i = 0; i < count; i++)
    kernel_free((ep_kernel *)infos[i]);
}
