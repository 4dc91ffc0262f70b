/* npu-report --model (npu_models.h). */
#define _GNU_SOURCE
#include "npu_models.h"

#include "ops/ops.h"
#include "runtime/internal.h"
#include "runtime/session.h"
#include "targets/npu/lower.h"
#include "targets/npu/lower_pool.h"
#include "targets/npu/timing.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

typedef struct model_figures {
  int nodes, npu_nodes, tasks, jobs, edges, cubes;
  double macs, npu_macs, est_us, est3_us, rocket_us, ddr_us;
  double lists_ms; /* lowering and command-list generation alone */
} model_figures;

/* dg_npu_cube_edge's set for a session: the nodes placed on the NPU. */
typedef struct placed {
  const dg_session *s;
  int npu;
} placed;
static bool placed_on_npu(int node, void *user) {
  const placed *p = user;
  return node >= 0 && p->s->placement[node] == p->npu;
}

/* The session's nodes: where each runs, and what the NPU's would cost
 * (with the cube hand-offs between NPU nodes the segments make). */
static void count(const dg_session *s, int npu, model_figures *f) {
  const dg_ir *ir = &s->ir;
  memset(f, 0, sizeof *f);
  f->nodes = ir->node_count;
  for (int i = 0; i < ir->node_count; i++) {
    const dg_node *n = &ir->nodes[i];
    const dg_op_def *def = dg_op_def_get(n->op);
    double macs = def && def->flops ? def->flops(ir, n) / 2 : 0;
    f->macs += macs;
    bool on_npu = s->placement[i] == npu;
    for (int k = 0; k < n->input_count; k++) {
      const dg_tensor_info *t = dg_ir_tensor(ir, n->inputs[k]);
      if (t && t->kind == DG_TENSOR_VALUE &&
          (s->placement[t->producer] == npu) != on_npu)
        f->edges++;
    }
    if (!on_npu)
      continue;
    f->npu_nodes++;
    f->npu_macs += macs;
    int images = (int)dg_ir_desc(ir, n->inputs[0])->dims[0];
    if (dg_npu_is_pool_op(n->op)) { /* one PPU task and job per image */
      f->tasks += images, f->jobs += images;
      continue;
    }
    npu_conv c;
    char why[160];
    double t0 = now_ms();
    bool lowered = dg_npu_conv_lower(ir, n, &c, why, sizeof why);
    f->lists_ms += now_ms() - t0;
    if (!lowered)
      continue;
    placed pl = {s, npu};
    c.out_on_npu = dg_npu_cube_edge(ir, n->output, placed_on_npu, &pl);
    c.from_npu = dg_npu_cube_edge(ir, n->inputs[0], placed_on_npu, &pl);
    f->cubes += c.from_npu; /* inputs handed over as NC1HWC2 cubes */
    npu_timing tm;
    dg_npu_timing_conv(&c, &tm);
    f->tasks += c.task_count * c.N;
    f->jobs += (c.task_count + NPU_JOB_MAX_TASKS - 1) / NPU_JOB_MAX_TASKS * c.N;
    f->est_us += tm.total_us * c.N;
    f->est3_us += tm.total3_us * c.N;
    f->rocket_us += tm.rocket_us * c.N;
    f->ddr_us += tm.ddr_us * c.N;
    dg_npu_conv_release(&c, NULL);
  }
}

int npu_model_report(dg_context *ctx, int npu, const char *path) {
  dg_onnx_options oo = {.symbolic_dim_value = 1};
  dg_graph *g = NULL;
  dg_diagnostic d;
  if (dg_onnx_load(ctx, path, &oo, &g, &d) != DG_OK) {
    fprintf(stderr, "npu-report: %s: import: %s\n", path, d.message);
    return 1;
  }
  /* Every node pinned to the NPU under the auto policy: what a user
   * offloading to it gets, each node it declines falling back to the CPU
   * with the reason in the plan (the cost model alone would keep an int8
   * net on a fast host's CPU). */
  for (int i = 0; i < g->ir.node_count; i++)
    g->ir.nodes[i].pinned_device = npu;
  int devs[2] = {0, npu};
  dg_compile_options co = {.devices = devs, .device_count = 2};
  dg_session *s = NULL;
  double best = 0;
  for (int r = 0; r < 3; r++) { /* compile time: the best of 3 */
    dg_session_destroy(s);
    s = NULL;
    double t0 = now_ms();
    dg_status st = dg_graph_compile(g, &co, &s, &d);
    double ms = now_ms() - t0;
    if (st != DG_OK) {
      fprintf(stderr, "npu-report: %s: compile: %s\n", path, d.message);
      dg_graph_destroy(g);
      return 1;
    }
    best = r == 0 || ms < best ? ms : best;
  }
  model_figures f;
  count(s, npu, &f);
  const char *slash = strrchr(path, '/');
  char name[160];
  snprintf(name, sizeof name, "%s", path);
  if (slash && !strcmp(slash, "/model.onnx")) { /* the zoo's DIR/model.onnx */
    const char *p = slash;
    while (p > path && p[-1] != '/')
      p--;
    snprintf(name, sizeof name, "%.*s", (int)(slash - p), p);
  }
  double share = f.macs > 0 ? 100 * f.npu_macs / f.macs : 0;
  /* The throughput mode by the model: three runs in flight, one per core,
   * sharing DRAM: three runs take the longer of one run and three runs'
   * DRAM time. */
  double busy = f.est_us > 3 * f.ddr_us ? f.est_us : 3 * f.ddr_us;
  double thr3 = busy > 0 ? 3 * f.est_us / busy : 0;
  printf("%-26s %5d/%-5d %6.1f%% %6d %5d %6d %9.2f %9.2f %9.2f %9.2f %6.2fx "
         "%9.2f\n",
         name, f.npu_nodes, f.nodes, share, f.tasks, f.jobs, f.edges,
         f.lists_ms, best, f.est_us / 1e3, f.est3_us / 1e3, thr3,
         f.rocket_us / 1e3);
  printf("{\"model\":\"%s\",\"nodes\":%d,\"npu_nodes\":%d,"
         "\"npu_mac_share\":%.4f,\"tasks\":%d,\"jobs\":%d,"
         "\"cpu_npu_edges\":%d,\"cube_handoffs\":%d,\"lists_ms\":%.2f,"
         "\"compile_ms\":%.2f,"
         "\"model_npu_ms\":%.3f,\"model_npu_3_cores_ms\":%.3f,"
         "\"model_throughput_3_sessions\":%.2f,\"model_npu_rocket_ms\":%.3f}\n",
         name, f.nodes, f.npu_nodes, share / 100, f.tasks, f.jobs, f.edges,
         f.cubes, f.lists_ms, best, f.est_us / 1e3, f.est3_us / 1e3, thr3,
         f.rocket_us / 1e3);
  dg_session_destroy(s);
  dg_graph_destroy(g);
  return 0;
}
