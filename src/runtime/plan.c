/* The plan object: per-node placement, reasons, estimates; printed as a
 * table or as Graphviz DOT. */
#include "session.h"

#include <string.h>

int dg_plan_node_count(const dg_plan *p) { return p ? p->node_count : 0; }

dg_status dg_plan_get_node(const dg_plan *p, int i, dg_plan_node *out) {
  if (!p || !out)
    return DG_ERROR_INVALID_ARGUMENT;
  if (i < 0 || i >= p->node_count)
    return DG_ERROR_NOT_FOUND;
  *out = p->nodes[i];
  return DG_OK;
}

static const char *reason_word(dg_placement_reason r) {
  switch (r) {
  case DG_REASON_ONLY_DEVICE: return "only";
  case DG_REASON_CHEAPEST: return "cheapest";
  case DG_REASON_PINNED: return "pinned";
  case DG_REASON_FALLBACK: return "FALLBACK";
  }
  return "?";
}

/* The device's declared deviation for this node's output dtype, if any:
 * " (int8 +-1 LSB)", " (f16 +-1 ulp)". */
static void deviation_note(const dg_plan *p, const dg_plan_node *n, char *out,
                           size_t size) {
  dg_dtype t = dg_ir_tensor(p->ir, p->ir->nodes[n->node_index].output)
                   ->desc.dtype;
  out[0] = 0;
  if (t == DG_DTYPE_F16 && n->f16_max_ulp_deviation)
    snprintf(out, size, " (f16 +-%d ulp)", n->f16_max_ulp_deviation);
  else if (t != DG_DTYPE_F16 && t != DG_DTYPE_F32 &&
           n->int8_max_lsb_deviation)
    snprintf(out, size, " (int8 +-%d LSB)", n->int8_max_lsb_deviation);
}

/* The node's whole name (the plan node keeps a display copy only). */
static const char *whole_name(const dg_plan *p, const dg_plan_node *n) {
  return p->ir ? p->ir->nodes[n->node_index].name : n->node_name;
}

/* What the op column shows: the op's name, and for a family op with a
 * function kind (unary) the function too, "unary:tanh". */
static const char *op_label(const dg_plan *p, const dg_plan_node *n, char *buf,
                            size_t size) {
  if (n->op == DG_OP_UNARY && p->ir) {
    snprintf(buf, size, "%s:%s", dg_op_name(n->op),
             dg_unary_fn_name((dg_unary_fn)p->ir->nodes[n->node_index].p.fn));
    return buf;
  }
  return dg_op_name(n->op);
}

dg_status dg_plan_write(const dg_plan *p, dg_plan_format format, FILE *out) {
  if (!p || !out)
    return DG_ERROR_INVALID_ARGUMENT;
  if (format == DG_PLAN_FORMAT_TABLE) {
    /* Names whole: the column is as wide as the longest. */
    int width = 4;
    for (int i = 0; i < p->node_count; i++) {
      size_t len = strlen(whole_name(p, &p->nodes[i]));
      if (len > (size_t)width)
        width = len > 4096 ? 4096 : (int)len;
    }
    int op_width = 16;
    char op[64];
    for (int i = 0; i < p->node_count; i++) {
      size_t len = strlen(op_label(p, &p->nodes[i], op, sizeof op));
      if (len > (size_t)op_width)
        op_width = (int)len;
    }
    fprintf(out, "%-3s %-*s %-*s %-8s %-9s %10s %10s %10s %s\n", "#", width,
            "node", op_width, "op", "device", "reason", "est_us", "run_us",
            "moved_B", "why");
    for (int i = 0; i < p->node_count; i++) {
      const dg_plan_node *n = &p->nodes[i];
      char dev[24];
      snprintf(dev, sizeof dev, "%s:%d", dg_device_kind_name(n->device_kind),
               n->device_index);
      char dev_note[64] = "";
      deviation_note(p, n, dev_note, sizeof dev_note);
      fprintf(out, "%-3d %-*s %-*s %-8s %-9s %10.2f %10.2f %10llu %s%s\n", i,
              width, whole_name(p, n), op_width, op_label(p, n, op, sizeof op),
              dev, reason_word(n->reason), n->estimated_us, n->measured_us,
              (unsigned long long)n->bytes_transferred, n->reason_text,
              dev_note);
    }
    fprintf(out, "%d nodes in %d segment(s), %zu bytes of host memory\n",
            p->node_count, p->segment_count, p->host_bytes);
    return ferror(out) ? DG_ERROR_IO : DG_OK;
  }
  if (format != DG_PLAN_FORMAT_DOT)
    return DG_ERROR_INVALID_ARGUMENT;
  fprintf(out, "digraph plan {\n  node [shape=box, style=filled];\n");
  for (int i = 0; i < p->node_count; i++) {
    const dg_plan_node *n = &p->nodes[i];
    /* A label holds any length: the whole name, quotes and backslashes
     * replaced so that it stays one DOT string. */
    fprintf(out, "  n%d [label=\"", i);
    for (const char *c = whole_name(p, n); *c; c++)
      fputc(*c == '"' || *c == '\\' ? '_' : *c, out);
    char op[64];
    fprintf(out, "\\n%s\\n%s:%d %.1fus\", fillcolor=%s];\n",
            op_label(p, n, op, sizeof op), dg_device_kind_name(n->device_kind),
            n->device_index, n->estimated_us,
            dg_device_kind_colour(n->device_kind));
  }
  for (int i = 0; p->ir && i < p->node_count; i++) {
    const dg_node *n = &p->ir->nodes[i];
    for (int k = 0; k < n->input_count; k++) {
      const dg_tensor_info *t = dg_ir_tensor(p->ir, n->inputs[k]);
      if (t && t->kind == DG_TENSOR_VALUE)
        fprintf(out, "  n%d -> n%d;\n", t->producer, i);
    }
  }
  fprintf(out, "}\n");
  return ferror(out) ? DG_ERROR_IO : DG_OK;
}

int dg_session_input_count(const dg_session *s) {
  return (s = dg_session_alive(s)) ? s->ir.input_count : 0;
}
int dg_session_output_count(const dg_session *s) {
  return (s = dg_session_alive(s)) ? s->ir.output_count : 0;
}
dg_status dg_session_input_info(const dg_session *s, int i, dg_io_info *out) {
  return (s = dg_session_alive(s)) ? dg_io_info_get(&s->ir, false, i, out)
                                   : DG_ERROR_INVALID_ARGUMENT;
}
dg_status dg_session_output_info(const dg_session *s, int i, dg_io_info *out) {
  return (s = dg_session_alive(s)) ? dg_io_info_get(&s->ir, true, i, out)
                                   : DG_ERROR_INVALID_ARGUMENT;
}
