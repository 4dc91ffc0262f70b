/* The plan object: per-node placement, reasons, estimates; printed as a
 * table or as Graphviz DOT. */
#include "session.h"

#include "ops/epilogue.h"

#include <string.h>

int dg_plan_node_count(const dg_plan *p) { return p ? p->node_count : 0; }

const char *dg_plan_precision(const dg_plan *p) {
  return p ? (p->precision[0] ? p->precision : "exact") : NULL;
}

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
  case DG_REASON_ONLY_DEVICE:
    return "only";
  case DG_REASON_CHEAPEST:
    return "cheapest";
  case DG_REASON_PINNED:
    return "pinned";
  case DG_REASON_FALLBACK:
    return "FALLBACK";
  }
  return "?";
}

/* The device's declared deviation for this node's output dtype, if any:
 * " (int8 +-1 LSB)", " (f16 +-1 ulp)". */
static void deviation_note(const dg_plan *p, const dg_plan_node *n, char *out,
                           size_t size) {
  dg_dtype t =
      dg_ir_tensor(p->ir, p->ir->nodes[n->node_index].output)->desc.dtype;
  out[0] = 0;
  if (t == DG_DTYPE_F16 && n->f16_max_ulp_deviation)
    snprintf(out, size, " (f16 +-%d ulp)", n->f16_max_ulp_deviation);
  else if (t != DG_DTYPE_F16 && t != DG_DTYPE_F32 && n->int8_max_lsb_deviation)
    snprintf(out, size, " (int8 +-%d LSB)", n->int8_max_lsb_deviation);
}

/* The node's whole name (the plan node keeps a display copy only). */
static const char *whole_name(const dg_plan *p, const dg_plan_node *n) {
  return p->ir ? p->ir->nodes[n->node_index].name : n->node_name;
}

/* What the op column shows: the op's name, for a family op with a
 * function kind (unary) the function too, "unary:tanh", and what the
 * compile-time passes fused into it, "conv2d+add+relu", "matmul+bias",
 * "conv2d+silu". */
static const char *op_label(const dg_plan *p, const dg_plan_node *n, char *buf,
                            size_t size) {
  if (!p->ir)
    return dg_op_name(n->op);
  const dg_node *d = &p->ir->nodes[n->node_index];
  int k = snprintf(buf, size, "%s", dg_op_name(n->op));
  if (n->op == DG_OP_UNARY)
    k += snprintf(buf + k, size - (size_t)k, ":%s",
                  dg_unary_fn_name((dg_unary_fn)d->p.fn));
  if (dg_conv_residual(d))
    k += snprintf(buf + k, size - (size_t)k, "+add");
  if (dg_matmul_bias(d))
    k += snprintf(buf + k, size - (size_t)k, "+bias");
  bool has_act = n->op == DG_OP_CONV2D || n->op == DG_OP_QCONV2D ||
                 n->op == DG_OP_FULLY_CONNECTED ||
                 n->op == DG_OP_QFULLY_CONNECTED ||
                 n->op == DG_OP_CONV_TRANSPOSE2D;
  if (has_act && d->p.activation != DG_ACTIVATION_NONE)
    k += snprintf(buf + k, size - (size_t)k, "+%s",
                  d->p.activation == DG_ACTIVATION_RELU ? "relu" : "relu6");
  if (dg_conv_post_unary(d) && k < (int)size)
    snprintf(buf + k, size - (size_t)k, "+%s",
             dg_unary_fn_name((dg_unary_fn)dg_conv_post_unary(d)));
  return buf;
}

/* "12.3 KB": a byte count for an edge label. */
static void bytes_text(uint64_t b, char *out, size_t size) {
  if (b < 10000)
    snprintf(out, size, "%llu B", (unsigned long long)b);
  else if (b < 10000000)
    snprintf(out, size, "%.1f KB", (double)b / 1e3);
  else
    snprintf(out, size, "%.1f MB", (double)b / 1e6);
}

/* The DOT picture: a box per node (name, op with what was fused into it,
 * device, estimated and measured time) filled with its device kind's
 * colour, the edges between nodes, labelled with the bytes moved where
 * they cross devices, and a legend of the colours used. */
static void write_dot(const dg_plan *p, FILE *out) {
  fprintf(out, "digraph plan {\n  node [shape=box, style=filled];\n");
  unsigned kinds = 0;
  for (int i = 0; i < p->node_count; i++) {
    const dg_plan_node *n = &p->nodes[i];
    kinds |= (unsigned)n->device_kind;
    /* A label holds any length: the whole name, quotes and backslashes
     * replaced so that it stays one DOT string. */
    fprintf(out, "  n%d [label=\"", i);
    for (const char *c = whole_name(p, n); *c; c++)
      fputc(*c == '"' || *c == '\\' ? '_' : *c, out);
    char op[96];
    fprintf(out, "\\n%s\\n%s:%d est %.1fus", op_label(p, n, op, sizeof op),
            dg_device_kind_name(n->device_kind), n->device_index,
            n->estimated_us);
    if (n->measured_us > 0)
      fprintf(out, " run %.1fus", n->measured_us);
    fprintf(out, "\", fillcolor=%s%s];\n",
            dg_device_kind_colour(n->device_kind),
            n->reason == DG_REASON_FALLBACK ? ", color=red, penwidth=2" : "");
  }
  for (int i = 0; p->ir && i < p->node_count; i++) {
    const dg_node *n = &p->ir->nodes[i];
    for (int k = 0; k < n->input_count; k++) {
      const dg_tensor_info *t = dg_ir_tensor(p->ir, n->inputs[k]);
      if (!t || t->kind != DG_TENSOR_VALUE)
        continue;
      if (p->nodes[t->producer].device_index != p->nodes[i].device_index) {
        char b[32];
        bytes_text(dg_desc_bytes(&t->desc), b, sizeof b);
        fprintf(out, "  n%d -> n%d [label=\"%s\", color=red];\n", t->producer,
                i, b);
      } else {
        fprintf(out, "  n%d -> n%d;\n", t->producer, i);
      }
    }
  }
  fprintf(out, "  subgraph cluster_legend {\n    label=\"legend\";\n");
  for (unsigned k = 1; k <= kinds; k <<= 1)
    if (kinds & k)
      fprintf(out, "    legend_%s [label=\"%s\", fillcolor=%s];\n",
              dg_device_kind_name((dg_device_kind)k),
              dg_device_kind_name((dg_device_kind)k),
              dg_device_kind_colour((dg_device_kind)k));
  fprintf(out, "    legend_edges [shape=note, style=solid, label=\"red edge: "
               "moved between devices (bytes)\\nred box: fallback\"];\n"
               "  }\n}\n");
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
    char op[96];
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
    fprintf(out, "%d nodes in %d segment(s), %zu bytes of host memory",
            p->node_count, p->segment_count, p->host_bytes);
    if (p->concats_in_place)
      fprintf(out, ", %d concat(s) made in place", p->concats_in_place);
    fputc('\n', out);
    if (strcmp(p->precision, "exact"))
      fprintf(out, "precision %s\n", p->precision);
    return ferror(out) ? DG_ERROR_IO : DG_OK;
  }
  if (format != DG_PLAN_FORMAT_DOT)
    return DG_ERROR_INVALID_ARGUMENT;
  write_dot(p, out);
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
