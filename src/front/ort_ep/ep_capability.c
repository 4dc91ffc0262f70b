/* GetCapability: claims maximal connected regions of nodes that
 * directgraph builds, and declines everything else here, so that Compile
 * never meets a node the builder rejects.
 *
 * 1. Each node is tried alone: a one-node graph built from ORT's shapes,
 *    attributes and initializers by the ONNX translator the importer
 *    uses. What fails is declined, for the importer's reason.
 * 2. Supported nodes are grouped in topological order. A node joins a
 *    producer's group unless a path from that group reaches it through an
 *    unsupported node (ORT refuses such groups: the fused node would
 *    depend on itself); groups meeting at a node merge under the same rule.
 * 3. Each group is built and compiled as one graph with the EP's compile
 *    options. A group that fails is split into its single nodes, each
 *    claimed when it compiles alone. Under policy "strict", a node that
 *    builds but that no allowed device runs is claimed anyway: Compile then
 *    fails and session creation reports directgraph's reason.
 *
 * DG_ORT_EP_VERBOSE=1 prints each decision to stderr (and Compile the
 * ops each fused node became). */
#include "core/env.h"
#include "ep_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bitset {
  uint64_t *w;
  size_t words;
} bitset;

typedef struct cap {
  const ep_ort *o;
  ep_state *ep;
  const OrtNode **nodes;
  int n;
  bool *ok;       /* builds alone */
  int *group;     /* -1: unsupported */
  uint64_t *bits; /* reach, bad per node, then bad per group: 3n sets */
  size_t words;
  bool verbose;
} cap;

static uint64_t *set_of(cap *c, int kind, int i) {
  return c->bits + ((size_t)kind * (size_t)c->n + (size_t)i) * c->words;
}
enum { REACH = 0, BAD = 1, GROUP_BAD = 2 };

static bool has(const uint64_t *s, int g) { return s[g / 64] >> (g % 64) & 1; }
static void put(uint64_t *s, int g) { s[g / 64] |= 1ull << (g % 64); }
static void or_into(uint64_t *d, const uint64_t *s, size_t words) {
  for (size_t k = 0; k < words; k++)
    d[k] |= s[k];
}

static int index_of(const cap *c, const OrtNode *node) {
  for (int i = 0; i < c->n; i++)
    if (c->nodes[i] == node)
      return i;
  return -1;
}

/* Producer indices of node i's inputs (malloc'ed; count in *np). */
static int *producers(cap *c, int i, int *np) {
  const OrtValueInfo **ins;
  int n = ep_node_inputs(c->o, c->nodes[i], &ins);
  int *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);
  *np = 0;
  for (int k = 0; p && k < n; k++) {
    int j = ins[k] ? index_of(c, ep_value_producer(c->o, ins[k])) : -1;
    if (j >= 0)
      p[(*np)++] = j;
  }
  free(ins);
  return p;
}

/* Relabels group h as g everywhere. */
static void merge(cap *c, int g, int h) {
  for (int i = 0; i < c->n; i++) {
    if (c->group[i] == h)
      c->group[i] = g;
    for (int kind = 0; kind < 3; kind++) {
      uint64_t *s = set_of(c, kind, i);
      if (has(s, h))
        put(s, g);
    }
  }
  or_into(set_of(c, GROUP_BAD, g), set_of(c, GROUP_BAD, h), c->words);
}

static void assign(cap *c, int i, int *next_group) {
  int np;
  int *p = producers(c, i, &np);
  uint64_t *reach = set_of(c, REACH, i), *bad = set_of(c, BAD, i);
  for (int k = 0; p && k < np; k++) {
    or_into(reach, set_of(c, REACH, p[k]), c->words);
    or_into(bad, set_of(c, BAD, p[k]), c->words);
  }
  if (!c->ok[i]) {
    /* Every group reaching an unsupported node taints what follows. */
    or_into(bad, reach, c->words);
    free(p);
    return;
  }
  int g = -1;
  for (int k = 0; p && k < np; k++) {
    int h = c->group[p[k]];
    if (h < 0 || h == g || has(bad, h))
      continue;
    if (g < 0)
      g = h;
    else if (!has(set_of(c, GROUP_BAD, g), h) &&
             !has(set_of(c, GROUP_BAD, h), g))
      merge(c, g, h);
  }
  if (g < 0)
    g = (*next_group)++;
  c->group[i] = g;
  or_into(set_of(c, GROUP_BAD, g), bad, c->words);
  put(reach, g);
  free(p);
}

/* Kahn's order over the producer relation (ORT's order is not assumed). */
static int *topo_order(cap *c) {
  size_t n = (size_t)(c->n > 0 ? c->n : 1);
  int *order = calloc(n, sizeof *order);
  bool *placed = calloc(n, sizeof *placed);
  int count = 0;
  for (bool progress = true; order && placed && progress && count < c->n;) {
    progress = false;
    for (int i = 0; i < c->n; i++) {
      if (placed[i])
        continue;
      int np;
      int *p = producers(c, i, &np);
      bool ready = p != NULL;
      for (int k = 0; ready && k < np; k++)
        ready = placed[p[k]];
      free(p);
      if (ready) {
        placed[i] = true;
        order[count++] = i;
        progress = true;
      }
    }
  }
  free(placed);
  if (count != c->n) {
    free(order);
    return NULL;
  }
  return order;
}

typedef enum { TRY_NO, TRY_YES, TRY_CLAIM_TO_FAIL } try_result;

/* Builds and compiles nodes as one graph. */
static try_result try_region(cap *c, const OrtNode *const *nodes, int n,
                             bool compile) {
  char err[768];
  /* The candidate's outputs as ORT's fused node would list them: what
   * folding may not swallow, and what Compile will be asked for. */
  const char **outs = NULL;
  int nout = ep_region_outputs(c->o, c->nodes, c->n, nodes, n, &outs);
  dg_graph *g = nout < 0 ? NULL
                         : ep_region_build(c->o, c->ep->ctx, nodes, (size_t)n,
                                           outs, (size_t)nout, err, sizeof err);
  free(outs);
  if (nout < 0)
    snprintf(err, sizeof err, "out of memory");
  if (!g) {
    if (c->verbose)
      fprintf(stderr, DG_EP_NAME ": declined: %s\n", err);
    return TRY_NO;
  }
  try_result r = TRY_YES;
  if (compile) {
    dg_compile_options co = ep_compile_options(&c->ep->opts);
    dg_session *s = NULL;
    dg_diagnostic d;
    dg_status st = dg_graph_compile(g, &co, &s, &d);
    dg_session_destroy(s);
    if (st != DG_OK) {
      bool strict =
          c->ep->opts.policy == DG_POLICY_STRICT && st == DG_ERROR_UNSUPPORTED;
      r = strict ? TRY_CLAIM_TO_FAIL : TRY_NO;
      if (c->verbose)
        fprintf(stderr, DG_EP_NAME ": %s %d node(s): %s\n",
                strict ? "strict, claimed to fail:" : "declined", n, d.message);
    }
  }
  dg_graph_destroy(g);
  return r;
}

static OrtStatus *fuse(cap *c, OrtEpGraphSupportInfo *info,
                       const OrtNode *const *nodes, int n) {
  dg_ort_fusion_options fo = {.ort_version_supported = DG_ORT_EP_VERSION,
                              .drop_constant_initializers = true};
  if (c->verbose)
    fprintf(stderr, DG_EP_NAME ": claimed %d node(s) from '%s'\n", n,
            ep_node_name(c->o, nodes[0]));
  return DG_ORT_FN(c->o->ep_api, ORT_EPSLOT_EpGraphSupportInfo_AddNodesToFuse,
                   ort_add_nodes_to_fuse_fn)(info, nodes, (size_t)n, &fo);
}

static OrtStatus *claim_groups(cap *c, OrtEpGraphSupportInfo *info,
                               int groups) {
  const OrtNode **members =
      calloc((size_t)(c->n > 0 ? c->n : 1), sizeof *members);
  if (!members)
    return ep_error(c->o, ORT_CODE_FAIL, DG_EP_NAME ": out of memory");
  OrtStatus *st = NULL;
  for (int g = 0; g < groups && !st; g++) {
    int m = 0;
    for (int i = 0; i < c->n; i++)
      if (c->group[i] == g)
        members[m++] = c->nodes[i];
    if (!m)
      continue;
    if (try_region(c, members, m, true) != TRY_NO) {
      st = fuse(c, info, members, m);
      continue;
    }
    /* The group as a whole does not build or compile: its nodes alone. */
    for (int k = 0; m > 1 && k < m && !st; k++)
      if (try_region(c, &members[k], 1, true) != TRY_NO)
        st = fuse(c, info, &members[k], 1);
  }
  free(members);
  return st;
}

OrtStatus *ep_get_capability(dg_ort_ep *self, const OrtGraph *graph,
                             OrtEpGraphSupportInfo *info) {
  ep_state *ep = (ep_state *)self;
  const char *v = dg_env(DG_ENV_ORT_EP_VERBOSE);
  cap c = {.o = &ep->ort, .ep = ep, .verbose = v && v[0] == '1'};
  c.n = ep_graph_nodes(c.o, graph, &c.nodes);
  if (c.n < 0)
    return ep_error(c.o, ORT_CODE_FAIL, DG_EP_NAME ": cannot read the graph");
  c.words = ((size_t)c.n + 63) / 64;
  c.ok = calloc((size_t)c.n + 1, sizeof *c.ok);
  c.group = calloc((size_t)c.n + 1, sizeof *c.group);
  c.bits = calloc(3 * (size_t)c.n * c.words + 1, sizeof *c.bits);
  int *order = c.ok && c.group && c.bits ? topo_order(&c) : NULL;
  OrtStatus *st = NULL;
  if (!order && c.n) {
    st = ep_error(c.o, ORT_CODE_FAIL,
                  DG_EP_NAME ": out of memory or a cyclic graph");
  } else {
    for (int i = 0; i < c.n; i++) {
      c.ok[i] = try_region(&c, &c.nodes[i], 1, false) == TRY_YES;
      c.group[i] = -1;
    }
    int groups = 0;
    for (int k = 0; k < c.n; k++)
      assign(&c, order[k], &groups);
    st = claim_groups(&c, info, groups);
  }
  free(order);
  free(c.ok);
  free(c.group);
  free(c.bits);
  free(c.nodes);
  return st;
}
