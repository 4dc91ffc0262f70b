/* Global placement: a shortest path over the nodes in graph order, where
 * the state is the device of the current node. A node's cost on a device is
 * the target's estimate, plus the transfer of every input that lives on
 * another device (found by walking the path back to its producer), plus the
 * device's launch cost when a new segment starts. Whole-graph, not greedy:
 * a GPU wins a small node only when the nodes around it are also there.
 *
 * Pins: under DG_POLICY_STRICT a pinned node may only go to its device (or
 * compile fails naming it); under DG_POLICY_AUTO the pin is honoured when
 * the device runs the node and otherwise falls back, visibly. */
#include "session.h"

#include "ops/ops.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool device_allowed(const dg_session *s, int d) {
  const dg_device *dev = &s->ctx->devices.items[d];
  if (s->opts.device_kinds && !(s->opts.device_kinds & dev->info.kind))
    return false;
  if (s->opts.device_count <= 0)
    return true;
  for (int i = 0; i < s->opts.device_count; i++)
    if (s->devices_allowed[i] == d)
      return true;
  return false;
}

/* A simulator is never chosen as best (graph.h's dg_device_info): it runs
 * a node only where it was asked for, by a pin, by the compile options'
 * device list naming it, or by their kinds naming its kind. */
static bool simulator_asked(const dg_session *s, int d, int pin) {
  const dg_device *dev = &s->ctx->devices.items[d];
  if (!dev->info.is_simulator || pin == d ||
      (s->opts.device_kinds & dev->info.kind))
    return true;
  for (int i = 0; i < s->opts.device_count; i++)
    if (s->devices_allowed[i] == d)
      return true;
  return false;
}

bool dg_place_considers(const dg_session *s, int d, int pin) {
  return device_allowed(s, d) && simulator_asked(s, d, pin);
}

static uint64_t tensor_bytes(const dg_ir *ir, uint32_t id) {
  return id ? dg_desc_bytes(&dg_ir_tensor(ir, id)->desc) : 0;
}

/* Where tensor id lives if node i is on device di and the path before it is
 * given by back[] (back[k*D + d] = device of node k-1 when node k is on d):
 * -1 for the host (inputs), else a device index. Constants are uploaded at
 * compile time and cost nothing at run time. */
static int producer_device(const dg_ir *ir, const int *back, int D, int i,
                           int di, uint32_t id) {
  const dg_tensor_info *t = dg_ir_tensor(ir, id);
  if (t->kind == DG_TENSOR_CONSTANT)
    return -2;
  if (t->kind == DG_TENSOR_INPUT)
    return -1;
  int d = di;
  for (int k = i; k > t->producer; k--)
    d = back[k * D + d];
  return d;
}

static double transfer_us(const dg_session *s, int from, int to,
                          uint64_t bytes) {
  if (from == -2 || from == to)
    return 0;
  double per = s->ctx->devices.items[to].transfer_us_per_byte;
  if (from >= 0)
    per += s->ctx->devices.items[from].transfer_us_per_byte;
  return per * (double)bytes;
}

/* Plan fields that follow from the chosen placement. */
static void fill_plan(dg_session *s, const double *node_cost, int D) {
  const dg_ir *ir = &s->ir;
  for (int i = 0; i < ir->node_count; i++) {
    const dg_node *n = &ir->nodes[i];
    dg_plan_node *pn = &s->plan.nodes[i];
    int d = s->placement[i];
    const dg_device *dev = &s->ctx->devices.items[d];
    pn->node_index = i;
    dg_name_shorten(pn->node_name, sizeof pn->node_name, n->name);
    pn->op = n->op;
    pn->device_index = d;
    pn->device_kind = dev->info.kind;
    dg_strlcpy(pn->device_name, dev->info.name, sizeof pn->device_name);
    pn->estimated_us = node_cost[i * D + d];
    pn->int8_max_lsb_deviation = dev->info.int8_max_lsb_deviation;
    pn->f16_max_ulp_deviation = dev->info.f16_max_ulp_deviation;
    pn->bytes_out = tensor_bytes(ir, n->output);
    pn->compute_dtype = dg_ir_desc(ir, n->output)->dtype;
    for (int k = 0; k < n->input_count; k++) {
      uint32_t id = n->inputs[k];
      if (!id)
        continue;
      uint64_t b = tensor_bytes(ir, id);
      pn->bytes_in += b;
      const dg_tensor_info *t = dg_ir_tensor(ir, id);
      int from = t->kind == DG_TENSOR_VALUE   ? s->placement[t->producer]
                 : t->kind == DG_TENSOR_INPUT ? -1
                                              : d;
      if (from != d &&
          (dev->transfer_us_per_byte > 0 ||
           (from >= 0 && s->ctx->devices.items[from].transfer_us_per_byte > 0)))
        pn->bytes_transferred += b;
    }
    if (pn->reason == DG_REASON_ONLY_DEVICE)
      snprintf(pn->reason_text, sizeof pn->reason_text,
               "only allowed device that runs it");
    else if (pn->reason == DG_REASON_CHEAPEST) {
      /* Name the runner-up so the choice can be checked. */
      int alt = -1;
      for (int e = 0; e < D; e++)
        if (e != d && node_cost[i * D + e] != DBL_MAX &&
            (alt < 0 || node_cost[i * D + e] < node_cost[i * D + alt]))
          alt = e;
      if (alt >= 0)
        snprintf(pn->reason_text, sizeof pn->reason_text,
                 "cheapest path (%.1f us here; %s %.1f us)",
                 node_cost[i * D + d],
                 dg_device_kind_name(s->ctx->devices.items[alt].info.kind),
                 node_cost[i * D + alt]);
    }
  }
}

dg_status dg_place(dg_session *s, dg_diagnostic *diag) {
  const dg_ir *ir = &s->ir;
  int N = ir->node_count, D = s->ctx->devices.count;
  double *node_cost = malloc(sizeof(double) * (size_t)(N * D + 1));
  double *best = malloc(sizeof(double) * (size_t)(N * D + 1));
  int *back = malloc(sizeof(int) * (size_t)(N * D + 1));
  char(*why)[96] = calloc((size_t)D, sizeof *why);
  if (!node_cost || !best || !back || !why) {
    free(node_cost), free(best), free(back), free(why);
    dg_diag_set(diag, DG_ERROR_OUT_OF_MEMORY, -1, NULL, "compile", NULL, NULL,
                NULL, "out of host memory while placing the graph");
    return DG_ERROR_OUT_OF_MEMORY;
  }
  dg_status st = DG_OK;
  for (int i = 0; i < N && st == DG_OK; i++) {
    const dg_node *n = &ir->nodes[i];
    dg_plan_node *pn = &s->plan.nodes[i];
    int candidates = 0, pin = n->pinned_device;
    bool pin_ok = false;
    for (int d = 0; d < D; d++) {
      dg_device *dev = &s->ctx->devices.items[d];
      node_cost[i * D + d] = DBL_MAX;
      why[d][0] = 0;
      if (!device_allowed(s, d)) {
        snprintf(why[d], sizeof why[d], "not allowed by the compile options");
        continue;
      }
      if (!simulator_asked(s, d, pin)) {
        snprintf(why[d], sizeof why[d],
                 "a simulator: runs only where pinned or named in the "
                 "compile options");
        continue;
      }
      if (!dev->vt->supports(dev, ir, n, why[d], sizeof why[d]))
        continue;
      node_cost[i * D + d] = dev->vt->estimate_us(dev, ir, n);
      candidates++;
      pin_ok |= d == pin;
    }
    pn->reason = candidates == 1 ? DG_REASON_ONLY_DEVICE : DG_REASON_CHEAPEST;
    if (pin >= 0 && pin_ok) {
      for (int d = 0; d < D; d++)
        if (d != pin)
          node_cost[i * D + d] = DBL_MAX;
      pn->reason = DG_REASON_PINNED;
      snprintf(pn->reason_text, sizeof pn->reason_text, "pinned");
    } else if (pin >= 0) {
      const char *dn = s->ctx->devices.items[pin].info.name;
      if (s->opts.policy == DG_POLICY_STRICT || !candidates) {
        char shown[DG_NAME_SHORT];
        dg_name_shorten(shown, sizeof shown, n->name);
        dg_diag_set(diag, DG_ERROR_UNSUPPORTED, i, n->name, dg_op_name(n->op),
                    "device", dn, why[pin],
                    "node %d '%s' (%s) is pinned to device %d (%s), which "
                    "cannot run it: %s",
                    i, shown, dg_op_name(n->op), pin, dn, why[pin]);
        st = DG_ERROR_UNSUPPORTED;
        break;
      }
      pn->reason = DG_REASON_FALLBACK;
      snprintf(pn->reason_text, sizeof pn->reason_text,
               "fallback: pinned device %d (%.40s) declined: %.60s", pin, dn,
               why[pin]);
    }
    if (!candidates) {
      char all[400] = "";
      size_t used = 0;
      for (int d = 0; d < D && used < sizeof all; d++)
        used += (size_t)snprintf(all + used, sizeof all - used, "%s%s: %s",
                                 d ? "; " : "",
                                 s->ctx->devices.items[d].info.name, why[d]);
      char shown[DG_NAME_SHORT];
      dg_name_shorten(shown, sizeof shown, n->name);
      dg_diag_set(diag, DG_ERROR_UNSUPPORTED, i, n->name, dg_op_name(n->op),
                  "device", "an allowed device that runs it", "none",
                  "node %d '%s' (%s) can run on no allowed device (%s)", i,
                  shown, dg_op_name(n->op), all);
      st = DG_ERROR_UNSUPPORTED;
    }
  }
  /* Forward pass of the shortest path. */
  for (int i = 0; i < N && st == DG_OK; i++) {
    const dg_node *n = &ir->nodes[i];
    for (int d = 0; d < D; d++) {
      best[i * D + d] = DBL_MAX;
      back[i * D + d] = -1;
      if (node_cost[i * D + d] == DBL_MAX)
        continue;
      const dg_device *dev = &s->ctx->devices.items[d];
      int best_p = -1;
      for (int p = 0; p < (i ? D : 1); p++) {
        double base = i ? best[(i - 1) * D + p] : 0;
        if (base == DBL_MAX)
          continue;
        back[i * D + d] = i ? p : -1; /* tentative, for producer_device */
        double c = base + node_cost[i * D + d];
        if (!i || p != d)
          c += dev->launch_us;
        for (int k = 0; k < n->input_count; k++)
          if (n->inputs[k])
            c +=
                transfer_us(s, producer_device(ir, back, D, i, d, n->inputs[k]),
                            d, tensor_bytes(ir, n->inputs[k]));
        if (c < best[i * D + d]) {
          best[i * D + d] = c;
          best_p = p;
        }
      }
      back[i * D + d] = i ? best_p : -1;
    }
  }
  if (st == DG_OK && N > 0) {
    /* Graph outputs go back to the host. */
    int end = -1;
    double end_cost = DBL_MAX;
    for (int d = 0; d < D; d++) {
      if (best[(N - 1) * D + d] == DBL_MAX)
        continue;
      double c = best[(N - 1) * D + d];
      for (int o = 0; o < ir->output_count; o++) {
        int pd = producer_device(ir, back, D, N - 1, d, ir->outputs[o].tensor);
        if (pd >= 0)
          c += transfer_us(s, -1, pd, tensor_bytes(ir, ir->outputs[o].tensor));
      }
      if (c < end_cost) {
        end_cost = c;
        end = d;
      }
    }
    for (int i = N - 1; i >= 0; i--) {
      s->placement[i] = end;
      end = back[i * D + end];
    }
    fill_plan(s, node_cost, D);
  }
  free(node_cost), free(best), free(back), free(why);
  return st;
}
