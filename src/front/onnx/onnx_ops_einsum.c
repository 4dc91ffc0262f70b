/* Einsum as transposes, reductions and batched matmuls. */
#include "onnx_decomp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One operand of an equation: its letters, one per axis. */
typedef struct ein_term {
  char l[DG_MAX_RANK + 1];
  int n;
} ein_term;

static int ein_find(const ein_term *e, char c) {
  for (int k = 0; k < e->n; k++)
    if (e->l[k] == c)
      return k;
  return -1;
}

/* Parses "ab,bc->ac" (spaces ignored; without "->", the output is the
 * letters used once, in alphabetical order). Ellipses and a letter
 * repeated within a term (a diagonal) are refused. */
static bool ein_parse(tr *t, const char *eq, ein_term *in, int *nin,
                      ein_term *out) {
  int n = 0, count[128] = {0};
  bool arrow = false;
  ein_term *cur = &in[0];
  memset(in, 0, sizeof *in * 2);
  memset(out, 0, sizeof *out);
  for (const char *p = eq; *p; p++) {
    char c = *p;
    if (c == ' ')
      continue;
    if (c == '.') {
      tr_fail(t, DG_ERROR_UNSUPPORTED, "equation",
              "Einsum with an ellipsis is not supported");
      return false;
    }
    if (c == ',' && !arrow) {
      if (++n >= 2) {
        tr_fail(t, DG_ERROR_UNSUPPORTED, "equation",
                "Einsum of more than two operands is not supported");
        return false;
      }
      cur = &in[n];
      continue;
    }
    if (c == '-' && p[1] == '>' && !arrow) {
      arrow = true;
      cur = out;
      p++;
      continue;
    }
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "equation",
              "Einsum equation '%s' has '%c'", eq, c);
      return false;
    }
    if (ein_find(cur, c) >= 0) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, "equation",
              "Einsum letter '%c' repeated in one term (a diagonal) is not "
              "supported",
              c);
      return false;
    }
    if (cur->n == DG_MAX_RANK) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, "equation",
              "Einsum term of more than %d letters", DG_MAX_RANK);
      return false;
    }
    cur->l[cur->n++] = c;
    if (!arrow)
      count[(int)c]++;
  }
  *nin = n + 1;
  if (!arrow)
    for (int c = 0; c < 128; c++)
      if (count[c] == 1 && out->n < DG_MAX_RANK)
        out->l[out->n++] = (char)c;
  for (int k = 0; k < out->n; k++)
    if (!count[(int)out->l[k]]) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "equation",
              "Einsum output letter '%c' is in no input", out->l[k]);
      return false;
    }
  return true;
}

/* x (letters e, dims d) summed over the letters in neither keep1 nor
 * keep2 (keepdims 0); e and d updated. */
static dg_tensor ein_sum_out(tr *t, dg_tensor x, ein_term *e, dg_tensor_desc *d,
                             const ein_term *keep1, const ein_term *keep2) {
  int32_t ax[DG_MAX_RANK];
  int n = 0;
  ein_term kept = {{0}, 0};
  for (int k = 0; k < e->n; k++) {
    char c = e->l[k];
    if (ein_find(keep1, c) < 0 && (!keep2 || ein_find(keep2, c) < 0))
      ax[n++] = k;
    else
      kept.l[kept.n++] = c;
  }
  if (!n)
    return x;
  x = dg_graph_reduce(t->g, NULL, DG_REDUCE_SUM, x, ax, n, 0);
  *e = kept;
  tr_desc(t, x, d);
  return x;
}

/* x (letters from) with its axes in the order of the letters to. */
static dg_tensor ein_permute(tr *t, dg_tensor x, const ein_term *from,
                             const ein_term *to, const char *name) {
  int32_t perm[DG_MAX_RANK];
  bool same = true;
  for (int k = 0; k < to->n; k++) {
    perm[k] = ein_find(from, to->l[k]);
    same = same && perm[k] == k;
  }
  if (same && !name)
    return x;
  return dg_graph_transpose(t->g, name, x, perm);
}

static int64_t ein_dims(const ein_term *e, const dg_tensor_desc *d,
                        const ein_term *of, int64_t *out, int *r) {
  int64_t n = 1;
  for (int k = 0; k < of->n; k++) {
    int64_t v = d->dims[ein_find(e, of->l[k])];
    n *= v;
    if (out)
      out[(*r)++] = v;
  }
  return n;
}

/* One operand: sums and a transpose. Two: the batch letters (in both and
 * the output), the contracted ones (in both, not the output) and each
 * side's own, as one batched matmul [B, L, K] x [B, K, R], reshaped and
 * transposed to the output's order. */
void tr_op_einsum(tr *t) {
  char eq[256] = "";
  if (!t->n->attr_string(t->n, "equation", eq, sizeof eq) || !eq[0]) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "equation",
            "Einsum needs an equation");
    return;
  }
  ein_term in[2], out;
  int nin;
  if (!ein_parse(t, eq, in, &nin, &out))
    return;
  if (nin != t->n->n_inputs) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "equation",
            "equation '%s' has %d terms for %d inputs", eq, nin,
            t->n->n_inputs);
    return;
  }
  dg_tensor x[2];
  dg_tensor_desc d[2];
  for (int i = 0; i < nin; i++) {
    x[i] = tr_input(t, i, NULL, false);
    if (!tr_need_float(t, x[i], "Inputs") || !tr_desc(t, x[i], &d[i]))
      return;
    if (d[i].rank != in[i].n) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "equation",
              "term %d has %d letters for an input of rank %d", i, in[i].n,
              d[i].rank);
      return;
    }
  }
  if (nin == 1) {
    x[0] = ein_sum_out(t, x[0], &in[0], &d[0], &out, NULL);
    tr_output(t, 0, ein_permute(t, x[0], &in[0], &out, t->n->name));
    return;
  }
  for (int i = 0; i < 2; i++)
    x[i] = ein_sum_out(t, x[i], &in[i], &d[i], &out, &in[1 - i]);
  if (tr_check(t))
    return;
  ein_term batch = {{0}, 0}, con = {{0}, 0}, left = {{0}, 0}, right = {{0}, 0};
  for (int k = 0; k < in[0].n; k++) {
    char c = in[0].l[k];
    int j = ein_find(&in[1], c);
    if (j >= 0 && d[0].dims[k] != d[1].dims[j]) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "equation",
              "letter '%c' is %lld in one input and %lld in the other", c,
              (long long)d[0].dims[k], (long long)d[1].dims[j]);
      return;
    }
    ein_term *to = j < 0 ? &left : ein_find(&out, c) >= 0 ? &batch : &con;
    to->l[to->n++] = c;
  }
  for (int k = 0; k < in[1].n; k++)
    if (ein_find(&in[0], in[1].l[k]) < 0)
      right.l[right.n++] = in[1].l[k];
  ein_term a_order = batch, b_order = batch, y_order = batch;
  memcpy(a_order.l + a_order.n, left.l, (size_t)left.n);
  a_order.n += left.n;
  memcpy(a_order.l + a_order.n, con.l, (size_t)con.n);
  a_order.n += con.n;
  memcpy(b_order.l + b_order.n, con.l, (size_t)con.n);
  b_order.n += con.n;
  memcpy(b_order.l + b_order.n, right.l, (size_t)right.n);
  b_order.n += right.n;
  memcpy(y_order.l + y_order.n, left.l, (size_t)left.n);
  y_order.n += left.n;
  memcpy(y_order.l + y_order.n, right.l, (size_t)right.n);
  y_order.n += right.n;
  int64_t nb = ein_dims(&in[0], &d[0], &batch, NULL, NULL),
          nl = ein_dims(&in[0], &d[0], &left, NULL, NULL),
          nk = ein_dims(&in[0], &d[0], &con, NULL, NULL),
          nr = ein_dims(&in[1], &d[1], &right, NULL, NULL);
  int64_t ad[3] = {nb, nl, nk}, bd[3] = {nb, nk, nr}, yd[DG_MAX_RANK];
  int r = 0;
  ein_dims(&in[0], &d[0], &batch, yd, &r);
  ein_dims(&in[0], &d[0], &left, yd, &r);
  ein_dims(&in[1], &d[1], &right, yd, &r);
  dg_tensor a = dg_graph_reshape(
      t->g, NULL, ein_permute(t, x[0], &in[0], &a_order, NULL), 3, ad);
  dg_tensor b = dg_graph_reshape(
      t->g, NULL, ein_permute(t, x[1], &in[1], &b_order, NULL), 3, bd);
  dg_tensor y =
      dg_graph_reshape(t->g, NULL, dg_graph_matmul(t->g, NULL, a, b), r, yd);
  tr_output(t, 0, ein_permute(t, y, &y_order, &out, t->n->name));
}
