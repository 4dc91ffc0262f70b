/* Verify: run the session (a twin compiled without buffer reuse, so every
 * node's output is still there) and compare each node with the reference
 * kernel fed the very inputs that node saw. Float outputs are compared by
 * the largest error relative to the largest reference magnitude of the
 * tensor (elementwise relative error is meaningless where sums cancel),
 * f16 ones allowing the device's declared ULPs beyond the contract;
 * integer outputs by LSBs, allowing the device's declared deviation. */
#include "session.h"

#include "ops/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define F32_TOLERANCE 1e-4
#define F16_TOLERANCE 1e-2

static double *to_double(const dg_tensor_desc *d, const void *p) {
  int64_t n = dg_desc_elements(d);
  double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
  if (v)
    for (int64_t i = 0; i < n; i++)
      v[i] = dg_load_elem(d->dtype, p, i);
  return v;
}

static dg_status verify_claimed(dg_session *s, const dg_binding *inputs,
                                int input_count, dg_verify_report *report);

dg_status dg_session_verify(dg_session *s, const dg_binding *inputs,
                            int input_count, dg_verify_report *report) {
  if (!dg_session_alive(s) || !report)
    return DG_ERROR_INVALID_ARGUMENT;
  memset(report, 0, sizeof *report);
  report->node_index = -1;
  if (!dg_session_claim(s, "dg_session_verify", NULL))
    return DG_ERROR_INVALID_ARGUMENT;
  dg_status st = verify_claimed(s, inputs, input_count, report);
  dg_session_unclaim(s);
  return st;
}

static dg_status verify_claimed(dg_session *s, const dg_binding *inputs,
                                int input_count, dg_verify_report *report) {
  dg_status st;
  for (int i = 0; i < s->ir.input_count; i++)
    if (s->in_buf[i]) /* the reference reads every input on the host */
      return DG_ERROR_INVALID_ARGUMENT;
  if (!s->verify_twin) {
    /* Same IR and options, so the same (deterministic) placement. */
    dg_compile_options o = s->opts;
    o.devices = s->devices_allowed;
    st = dg_session_compile(s->ctx, &s->ir, &o, true, &s->verify_twin, NULL);
    if (st != DG_OK)
      return st;
  }
  dg_session *t = s->verify_twin;
  st = dg_session_execute(t, inputs, input_count, NULL);
  if (st != DG_OK)
    return st;
  const dg_ir *ir = &t->ir;
  report->ok = 1;
  for (int i = 0; i < ir->node_count; i++) {
    const dg_node *n = &ir->nodes[i];
    const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
    double *in[64] = {0};
    double **ins = n->input_count > 64
                       ? calloc((size_t)n->input_count, sizeof(double *))
                       : in;
    int64_t ne = dg_desc_elements(yd);
    double *ref = malloc(sizeof(double) * (size_t)(ne ? ne : 1));
    double *got = to_double(yd, t->host[n->output]);
    bool oom = !ins || !ref || !got;
    for (int k = 0; !oom && k < n->input_count; k++) {
      if (!n->inputs[k])
        continue;
      ins[k] = to_double(&dg_ir_tensor(ir, n->inputs[k])->desc,
                         t->host[n->inputs[k]]);
      oom = !ins[k];
    }
    if (!oom)
      dg_op_def_get(n->op)->reference(ir, n, (const double *const *)ins, ref);
    double max_abs = 0, max_ref = 0;
    int64_t max_lsb = 0;
    bool is_int = yd->dtype == DG_DTYPE_I8 || yd->dtype == DG_DTYPE_U8 ||
                  yd->dtype == DG_DTYPE_I32 || yd->dtype == DG_DTYPE_BOOL ||
                  yd->dtype == DG_DTYPE_I64;
    for (int64_t e = 0; !oom && e < ne; e++) {
      double diff = fabs(got[e] - ref[e]);
      if (isnan(got[e]) != isnan(ref[e]))
        diff = INFINITY;
      else if (isnan(got[e]) || got[e] == ref[e])
        diff = 0;
      if (diff > max_abs)
        max_abs = diff;
      if (fabs(ref[e]) > max_ref && isfinite(ref[e]))
        max_ref = fabs(ref[e]);
      if (is_int && (int64_t)diff > max_lsb)
        max_lsb = (int64_t)diff;
    }
    double rel = max_ref > 0 ? max_abs / max_ref : max_abs;
    /* A device's declared f16 deviation widens the f16 tolerance by that
     * many fp16 ULPs of the largest magnitude (2^-10 relative each). */
    double tol =
        yd->dtype == DG_DTYPE_F16
            ? F16_TOLERANCE + ldexp(t->plan.nodes[i].f16_max_ulp_deviation, -10)
            : F32_TOLERANCE;
    int allowed_lsb = t->plan.nodes[i].int8_max_lsb_deviation;
    bool bad = is_int ? max_lsb > allowed_lsb : rel > tol;
    if (!oom && (bad || (report->ok && rel >= report->max_rel_error))) {
      report->node_index = bad ? i : -1;
      dg_name_shorten(report->node_name, sizeof report->node_name, n->name);
      report->op = n->op;
      report->max_abs_error = max_abs;
      report->max_rel_error = rel;
      report->max_lsb_error = max_lsb;
      report->tolerance = is_int ? allowed_lsb : tol;
    }
    report->nodes_checked = i + 1;
    for (int k = 0; k < n->input_count; k++)
      free(ins[k]);
    if (ins != in)
      free(ins);
    free(ref);
    free(got);
    if (oom)
      return DG_ERROR_OUT_OF_MEMORY;
    if (bad) {
      report->ok = 0;
      return DG_ERROR_MISMATCH;
    }
  }
  if (report->ok)
    report->node_index = -1;
  return DG_OK;
}
