/* int8 beyond convolution: qbinary (add, sub, mul), lookup and the
 * builders that fill its table (qunary, requantize), and qconcat, which
 * composes requantize and concat. Their results are defined by the
 * numerics contract (docs/numerics.md, "int8 elementwise, lookup and
 * pooling"), so the references follow its fp32 steps, as qconv2d's does;
 * requant.h holds those steps for every CPU kernel. */
#include "build.h"
#include "ops.h"
#include "requant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* No FMA contraction: meson passes -ffp-contract=off. */

/* An int8 input with per-tensor quantisation. */
static const dg_tensor_info *q8_input(dg_build *b, dg_tensor t,
                                      const char *field, bool *ok) {
  const dg_tensor_info *ti = dg_build_tensor(b, t, field, false, ok);
  if (!*ok || !dg_build_dtype(b, ti, field, DG_Q8_TYPES) ||
      !dg_build_quant(b, &ti->desc, field, -1)) {
    *ok = false;
    return NULL;
  }
  return ti;
}

/* A host-computed fp32 factor of the contract must be a finite normal
 * float: inf, 0 or a denormal would saturate or zero every output. */
static bool normal_factor(dg_build *b, float m, const char *what) {
  if (isnormal(m))
    return true;
  char got[64];
  snprintf(got, sizeof got, "%g", m);
  dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "y_quant.scale",
                "a finite, normal float", got, "%s unusable", what);
  return false;
}

/* ---- qbinary ---- */

dg_tensor dg_graph_qbinary(dg_graph *g, const char *name, dg_binary_fn fn,
                           dg_tensor a, dg_tensor bt, dg_dtype y_dtype,
                           const dg_quant_params *y_quant) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_QBINARY, name))
    return DG_TENSOR_NONE;
  if (fn != DG_BINARY_ADD && fn != DG_BINARY_SUB && fn != DG_BINARY_MUL) {
    char got[32];
    snprintf(got, sizeof got, "%d (%s)", (int)fn, dg_binary_fn_name(fn));
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "fn", "ADD, SUB or MUL", got,
                  "not an int8 binary function");
    return DG_TENSOR_NONE;
  }
  bool ok = true;
  const dg_tensor_info *ai = q8_input(&b, a, "a", &ok);
  const dg_tensor_info *bi = ok ? q8_input(&b, bt, "b", &ok) : NULL;
  if (!ok)
    return DG_TENSOR_NONE;
  dg_tensor_desc out = {0};
  if (!dg_build_broadcast(&b, ai, bi, "b", &out))
    return DG_TENSOR_NONE;
  if (!dg_build_q8_output(&b, y_dtype, y_quant, &out))
    return DG_TENSOR_NONE;
  float sa = ai->desc.quant.scale, sb = bi->desc.quant.scale,
        sy = out.quant.scale;
  if (fn == DG_BINARY_MUL) {
    if (!normal_factor(&b, dg_requant_multiplier(sa, sb, sy),
                       "a.scale * b.scale / y.scale"))
      return DG_TENSOR_NONE;
  } else if (!normal_factor(&b, dg_requant_ratio(sa, sy),
                            "a.scale / y.scale") ||
             !normal_factor(&b, dg_requant_ratio(sb, sy),
                            "b.scale / y.scale")) {
    return DG_TENSOR_NONE;
  } else if (!isfinite(255.0f * dg_requant_ratio(sa, sy) +
                       255.0f * dg_requant_ratio(sb, sy))) {
    /* |a - za| and |b - zb| reach 255: an infinite side would meet an
     * infinite other of the opposite sign and give NaN. */
    char got[64];
    snprintf(got, sizeof got, "%g / %g, %g / %g", sa, sy, sb, sy);
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "y_quant.scale",
                  "255 * (a.scale + b.scale) / y.scale finite", got,
                  "the scaled sum overflows fp32");
    return DG_TENSOR_NONE;
  }
  dg_node_params p = {.fn = fn};
  uint32_t ins[2] = {a.id, bt.id};
  return dg_build_finish(&b, ins, 2, &out, &p);
}

void dg_qbinary_factors(const dg_ir *ir, const dg_node *n, float *fa,
                        float *fb) {
  const dg_tensor_desc *ad = &dg_ir_tensor(ir, n->inputs[0])->desc;
  const dg_tensor_desc *bd = &dg_ir_tensor(ir, n->inputs[1])->desc;
  const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
  if (n->p.fn == DG_BINARY_MUL) {
    *fa = dg_requant_multiplier(ad->quant.scale, bd->quant.scale,
                                yd->quant.scale);
    *fb = 0;
  } else {
    *fa = dg_requant_ratio(ad->quant.scale, yd->quant.scale);
    *fb = dg_requant_ratio(bd->quant.scale, yd->quant.scale);
    if (n->p.fn == DG_BINARY_SUB)
      *fb = -*fb; /* exact */
  }
}

void dg_ref_qbinary(const dg_ir *ir, const dg_node *n, const double *const *in,
                    double *out) {
  const dg_tensor_desc *ad = &dg_ir_tensor(ir, n->inputs[0])->desc;
  const dg_tensor_desc *bd = &dg_ir_tensor(ir, n->inputs[1])->desc;
  const dg_tensor_desc *yd = &dg_ir_tensor(ir, n->output)->desc;
  int64_t sa[DG_MAX_RANK], sb[DG_MAX_RANK], lo, hi;
  dg_broadcast_strides(ad->rank, ad->dims, yd->rank, yd->dims, sa);
  dg_broadcast_strides(bd->rank, bd->dims, yd->rank, yd->dims, sb);
  dg_dtype_int_range(yd->dtype, &lo, &hi);
  float fa, fb;
  dg_qbinary_factors(ir, n, &fa, &fb);
  int32_t za = ad->quant.zero_point, zb = bd->quant.zero_point,
          zy = yd->quant.zero_point;
  for (int64_t i = 0, e = dg_desc_elements(yd); i < e; i++) {
    int64_t ia, ib;
    dg_broadcast_offsets(yd->rank, yd->dims, sa, sb, i, &ia, &ib);
    int32_t da = (int32_t)in[0][ia] - za, db = (int32_t)in[1][ib] - zb;
    out[i] = n->p.fn == DG_BINARY_MUL
                 ? dg_requant(da * db, fa, zy, (int32_t)lo, (int32_t)hi)
                 : dg_requant_sum(da, fa, db, fb, zy, (int32_t)lo, (int32_t)hi);
  }
}

double dg_flops_qbinary(const dg_ir *ir, const dg_node *n) {
  return 3.0 * (double)dg_desc_elements(&dg_ir_tensor(ir, n->output)->desc);
}

/* ---- lookup ---- */

static dg_tensor lookup(dg_build *b, dg_tensor x, const void *table,
                        dg_dtype y_dtype, const dg_quant_params *y_quant) {
  bool ok = true;
  const dg_tensor_info *xi = dg_build_tensor(b, x, "x", false, &ok);
  if (!ok || !dg_build_dtype(b, xi, "x", DG_Q8_TYPES))
    return DG_TENSOR_NONE;
  dg_tensor_desc out = xi->desc;
  if (!dg_build_q8_output(b, y_dtype, y_quant, &out))
    return DG_TENSOR_NONE;
  if (!table) {
    dg_build_fail(b, DG_ERROR_INVALID_ARGUMENT, "table", "256 values", "NULL",
                  "lookup table missing");
    return DG_TENSOR_NONE;
  }
  /* The table is the node's second input: a constant [256] of y's dtype
   * and quantisation, named after the node. */
  char tname[160];
  snprintf(tname, sizeof tname, "%s/table",
           b->name && *b->name ? b->name : "lookup");
  dg_tensor_desc td = {.dtype = y_dtype, .rank = 1, .dims = {256}};
  td.quant = out.quant;
  dg_tensor t = dg_graph_constant(b->g, tname, &td, table, 0);
  if (!t.id)
    return DG_TENSOR_NONE; /* the graph holds the error */
  uint32_t ins[2] = {x.id, t.id};
  return dg_build_finish(b, ins, 2, &out, NULL);
}

dg_tensor dg_graph_lookup(dg_graph *g, const char *name, dg_tensor x,
                          const void *table, dg_dtype y_dtype,
                          const dg_quant_params *y_quant) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_LOOKUP, name))
    return DG_TENSOR_NONE;
  return lookup(&b, x, table, y_dtype, y_quant);
}

/* The contract's table: entry i is x's value q = min + i dequantised
 * ((q - zx) * sx in fp32), passed through fn in double and rounded to
 * fp32 (identity when fn is 0), and quantised as dg_graph_quantize does
 * (fp32 division, half to even, zy added, saturated); NaN becomes zy. */
static bool fill_table(dg_build *b, dg_tensor x, int fn, float alpha,
                       float beta, dg_dtype y_dtype,
                       const dg_quant_params *y_quant, uint8_t table[256]) {
  bool ok = true;
  const dg_tensor_info *xi = q8_input(b, x, "x", &ok);
  dg_tensor_desc out = {0};
  if (!ok || !dg_build_q8_output(b, y_dtype, y_quant, &out))
    return false;
  int64_t xlo, xhi, lo, hi;
  dg_dtype_int_range(xi->desc.dtype, &xlo, &xhi);
  dg_dtype_int_range(y_dtype, &lo, &hi);
  float sx = xi->desc.quant.scale, sy = out.quant.scale;
  int32_t zx = xi->desc.quant.zero_point, zy = out.quant.zero_point;
  for (int i = 0; i < 256; i++) {
    float r = (float)((int32_t)xlo + i - zx) * sx;
    float f = fn ? (float)dg_unary_value(fn, r, alpha, beta) : r;
    int64_t q = zy;
    if (!isnan(f)) {
      float v = nearbyintf(f / sy);
      double d = (double)v + zy;
      q = d < (double)lo ? lo : (d > (double)hi ? hi : (int64_t)d);
    }
    table[i] = (uint8_t)(q & 0xff); /* the byte an i8 or u8 stores */
  }
  return true;
}

dg_tensor dg_graph_qunary(dg_graph *g, const char *name, dg_unary_fn fn,
                          dg_tensor x, float alpha, float beta,
                          dg_dtype y_dtype, const dg_quant_params *y_quant) {
  dg_build b;
  uint8_t table[256];
  if (!dg_build_begin(&b, g, DG_OP_LOOKUP, name) ||
      !dg_unary_check(&b, fn, alpha, beta) ||
      !fill_table(&b, x, fn, alpha, beta, y_dtype, y_quant, table))
    return DG_TENSOR_NONE;
  return lookup(&b, x, table, y_dtype, y_quant);
}

dg_tensor dg_graph_requantize(dg_graph *g, const char *name, dg_tensor x,
                              dg_dtype y_dtype,
                              const dg_quant_params *y_quant) {
  dg_build b;
  uint8_t table[256];
  if (!dg_build_begin(&b, g, DG_OP_LOOKUP, name) ||
      !fill_table(&b, x, 0, 0, 0, y_dtype, y_quant, table))
    return DG_TENSOR_NONE;
  return lookup(&b, x, table, y_dtype, y_quant);
}

void dg_ref_lookup(const dg_ir *ir, const dg_node *n, const double *const *in,
                   double *out) {
  const dg_tensor_desc *xd = &dg_ir_tensor(ir, n->inputs[0])->desc;
  int64_t lo, hi;
  dg_dtype_int_range(xd->dtype, &lo, &hi);
  for (int64_t i = 0, e = dg_desc_elements(xd); i < e; i++)
    out[i] = in[1][(int64_t)in[0][i] - lo];
}

double dg_flops_lookup(const dg_ir *ir, const dg_node *n) {
  return (double)dg_desc_elements(&dg_ir_tensor(ir, n->output)->desc);
}

/* ---- qconcat ---- */

static bool same_quant(const dg_tensor_desc *d, dg_dtype t,
                       const dg_quant_params *q) {
  return d->dtype == t && !d->quant.channel_count &&
         d->quant.scale == q->scale && d->quant.zero_point == q->zero_point;
}

dg_tensor dg_graph_qconcat(dg_graph *g, const char *name,
                           const dg_tensor *tensors, int32_t count,
                           int32_t axis, dg_dtype y_dtype,
                           const dg_quant_params *y_quant) {
  dg_build b;
  if (!dg_build_begin(&b, g, DG_OP_CONCAT, name))
    return DG_TENSOR_NONE;
  dg_tensor_desc probe = {0};
  if (!dg_build_q8_output(&b, y_dtype, y_quant, &probe))
    return DG_TENSOR_NONE;
  if (!tensors || count < 1 || count > 4096) {
    char got[32];
    snprintf(got, sizeof got, "%d tensors%s", count, tensors ? "" : " (NULL)");
    dg_build_fail(&b, DG_ERROR_INVALID_ARGUMENT, "tensors", "1..4096 tensors",
                  got, "nothing to concatenate");
    return DG_TENSOR_NONE;
  }
  dg_tensor *in = malloc(sizeof *in * (size_t)count);
  if (!in) {
    dg_build_fail(&b, DG_ERROR_OUT_OF_MEMORY, NULL, NULL, NULL,
                  "out of memory");
    return DG_TENSOR_NONE;
  }
  dg_tensor y = DG_TENSOR_NONE;
  int32_t i = 0;
  for (; i < count; i++) {
    char field[32];
    snprintf(field, sizeof field, "tensors[%d]", i);
    bool ok = true;
    const dg_tensor_info *ti = q8_input(&b, tensors[i], field, &ok);
    if (!ok)
      break;
    in[i] = tensors[i];
    if (!same_quant(&ti->desc, y_dtype, y_quant)) {
      char rname[160];
      snprintf(rname, sizeof rname, "%s/requant%d",
               name && *name ? name : "qconcat", i);
      in[i] = dg_graph_requantize(g, rname, tensors[i], y_dtype, y_quant);
      if (!in[i].id)
        break;
    }
  }
  if (i == count)
    y = dg_graph_concat(g, name, in, count, axis);
  free(in);
  return y;
}
