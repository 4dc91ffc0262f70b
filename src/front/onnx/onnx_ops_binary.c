/* The elementwise binary ops: Add, Sub, Mul, Div, Pow, Mod and PRelu (one
 * dg_graph_binary each; Add through dg_graph_add, DG_OP_ADD), and the
 * variadic Max, Min, Sum and Mean (a chain of binary nodes, Mean then
 * scaled by 1/N). Float tensors only: the int forms are refused, naming
 * the input.
 *
 * Broadcasting: from opset 7 (Max, Min, Sum, Mean: 8) ONNX broadcasts as
 * numpy does, which is the builder's rule. Before that Add, Sub, Mul, Div
 * and Pow took `broadcast` (B broadcast onto A's shape) and `axis` (where
 * B's dims start in A's): B is reshaped to end with ones so that numpy's
 * rule lines it up there. PRelu before 7 took a slope of one value or of
 * one per channel (axis 1), reshaped here to [C, 1, ...]; from 7 the
 * slope broadcasts to X one way (the output keeps X's shape). */
#include "onnx_tr.h"

#include <stdlib.h>
#include <string.h>

static bool has_attr(const tr *t, const char *name) {
  for (int i = 0; i < t->n->n_attrs; i++)
    if (t->n->attr_names[i] && !strcmp(t->n->attr_names[i], name))
      return true;
  return false;
}

/* float to IEEE half, rounded to nearest even (the constants made here
 * for f16 graphs: 1/N and converted exponents). */
static uint16_t to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
  if (exp == 0xff) /* inf, NaN (kept quiet) */
    return sign | 0x7c00u | (man ? 0x200u : 0);
  int e = (int)exp - 127 + 15;
  if (e >= 31)
    return sign | 0x7c00u;
  if (e <= 0) { /* subnormal half (or 0) */
    if (e < -10)
      return sign;
    man |= 0x800000u;
    int shift = 14 - e;
    uint32_t h = man >> shift, rest = man & ((1u << shift) - 1),
             half = 1u << (shift - 1);
    if (rest > half || (rest == half && (h & 1)))
      h++;
    return sign | (uint16_t)h;
  }
  uint32_t h = ((uint32_t)e << 10) | (man >> 13), rest = man & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1)))
    h++; /* may carry into the exponent, up to inf: as it should */
  return sign | (uint16_t)h;
}

/* A constant of dtype dt (f32 or f16) and shape d from n floats. */
static dg_tensor float_constant(tr *t, const char *name, dg_dtype dt,
                                const dg_tensor_desc *shape, const float *v,
                                size_t n) {
  dg_tensor_desc d = *shape;
  d.dtype = dt;
  void *data = (void *)v;
  uint16_t *h = NULL;
  if (dt == DG_DTYPE_F16) {
    h = malloc(sizeof *h * (n ? n : 1));
    if (!h) {
      tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
      return DG_TENSOR_NONE;
    }
    for (size_t k = 0; k < n; k++)
      h[k] = to_half(v[k]);
    data = h;
  }
  dg_tensor c = dg_graph_constant(t->g, name, &d, data, 0);
  free(h);
  return c;
}

static int64_t elements(const dg_tensor_desc *d) {
  int64_t n = 1;
  for (int k = 0; k < d->rank; k++)
    n *= d->dims[k];
  return n;
}

static bool same_dims(const dg_tensor_desc *a, const dg_tensor_desc *b) {
  if (a->rank != b->rank)
    return false;
  for (int k = 0; k < a->rank; k++)
    if (a->dims[k] != b->dims[k])
      return false;
  return true;
}

/* Opsets before 7 (Add, Sub, Mul, Div, Pow, and the comparisons and logic
 * ops of onnx_ops_compare.c): b as numpy would need it for
 * the legacy rule, or DG_TENSOR_NONE with the failure recorded. From 7
 * the attributes are gone and b is taken as it is. */
dg_tensor tr_legacy_b(tr *t, dg_tensor a, dg_tensor b) {
  if (t->n->opset >= 7) {
    const char *gone = has_attr(t, "broadcast") ? "broadcast"
                       : has_attr(t, "axis")    ? "axis"
                                                : NULL;
    if (gone) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, gone,
              "attribute '%s' is not part of %s at opset %lld", gone,
              t->n->op_type, (long long)t->n->opset);
      return DG_TENSOR_NONE;
    }
    return b;
  }
  dg_tensor_desc ad, bd;
  if (!tr_desc(t, a, &ad) || !tr_desc(t, b, &bd))
    return DG_TENSOR_NONE;
  if (!tr_attr_int(t, "broadcast", 0)) {
    if (!same_dims(&ad, &bd)) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "broadcast",
              "%s at opset %lld without broadcast=1 needs B of A's shape",
              t->n->op_type, (long long)t->n->opset);
      return DG_TENSOR_NONE;
    }
    return b;
  }
  int64_t axis = tr_attr_int(t, "axis", ad.rank - bd.rank);
  if (axis < 0) /* as ONNX's shape inference reads a negative axis */
    axis += ad.rank;
  bool scalar = elements(&bd) == 1;
  bool fits = axis >= 0 && axis + bd.rank <= ad.rank;
  for (int k = 0; fits && k < bd.rank; k++)
    fits = bd.dims[k] == ad.dims[axis + k] || bd.dims[k] == 1;
  if (!fits && !scalar) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axis",
            "B (rank %d) does not match A (rank %d) from axis %lld", bd.rank,
            ad.rank, (long long)axis);
    return DG_TENSOR_NONE;
  }
  if (scalar || axis + bd.rank == ad.rank)
    return b; /* numpy lines it up at the end already */
  int64_t dims[DG_MAX_RANK];
  int r = 0;
  for (int k = 0; k < bd.rank; k++)
    dims[r++] = bd.dims[k];
  while (r < ad.rank - axis)
    dims[r++] = 1;
  return dg_graph_reshape(t->g, NULL, b, r, dims);
}

/* Input i of the node, which must be a float tensor; what names it. */
static dg_tensor float_input(tr *t, int i, const char *what) {
  dg_tensor x = tr_input(t, i, NULL, false);
  return t->st == DG_OK && tr_need_float(t, x, what) ? x : DG_TENSOR_NONE;
}

static void arith(tr *t, dg_binary_fn fn) {
  dg_tensor a = float_input(t, 0, "A");
  dg_tensor b = a.id ? float_input(t, 1, "B") : DG_TENSOR_NONE;
  if (b.id)
    b = tr_legacy_b(t, a, b);
  if (!b.id)
    return;
  tr_output(t, 0,
            fn == DG_BINARY_ADD ? dg_graph_add(t->g, t->n->name, a, b)
                                : dg_graph_binary(t->g, t->n->name, fn, a, b));
}

void tr_op_add(tr *t) { arith(t, DG_BINARY_ADD); }
void tr_op_sub(tr *t) { arith(t, DG_BINARY_SUB); }
void tr_op_mul(tr *t) { arith(t, DG_BINARY_MUL); }
void tr_op_div(tr *t) { arith(t, DG_BINARY_DIV); }

/* Pow's exponent Y may have another type than X from opset 12 (ints,
 * another float): a constant one is converted to X's dtype here; one fed
 * at run time must be of X's dtype. */
void tr_op_pow(tr *t) {
  dg_tensor x = float_input(t, 0, "X");
  dg_tensor_desc xd;
  if (!x.id || !tr_desc(t, x, &xd))
    return;
  dg_onnx_value c;
  dg_tensor y;
  if (tr_const(t, 1, &c) && c.elem != DG_ONNX_FLOAT16 &&
      tr_dtype(c.elem) != xd.dtype) {
    if (c.rank < 0 || c.rank > DG_MAX_RANK ||
        !(c.elem == DG_ONNX_FLOAT || c.elem == DG_ONNX_INT8 ||
          c.elem == DG_ONNX_UINT8 || c.elem == DG_ONNX_INT32 ||
          c.elem == DG_ONNX_INT64)) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, "Y",
              "exponent of element type %d (rank %d) is not supported", c.elem,
              c.rank);
      return;
    }
    float *v = malloc(sizeof(float) * (c.count ? c.count : 1));
    if (!v) {
      tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
      return;
    }
    for (size_t k = 0; k < c.count; k++)
      switch (c.elem) {
      case DG_ONNX_FLOAT:
        v[k] = ((const float *)c.data)[k];
        break;
      case DG_ONNX_INT8:
        v[k] = ((const int8_t *)c.data)[k];
        break;
      case DG_ONNX_UINT8:
        v[k] = ((const uint8_t *)c.data)[k];
        break;
      case DG_ONNX_INT32:
        v[k] = (float)((const int32_t *)c.data)[k];
        break;
      default:
        v[k] = (float)((const int64_t *)c.data)[k];
        break;
      }
    dg_tensor_desc d = {.rank = c.rank};
    memcpy(d.dims, c.dims, sizeof d.dims);
    y = float_constant(t, t->n->inputs[1], xd.dtype, &d, v, c.count);
    free(v);
  } else {
    if (t->st != DG_OK)
      return;
    y = tr_input(t, 1, NULL, false);
    dg_tensor_desc yd;
    if (!tr_desc(t, y, &yd))
      return;
    if (yd.dtype != xd.dtype) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, "Y",
              "a %s exponent fed at run time with a %s base: only a constant "
              "exponent of another type is converted",
              dg_dtype_name(yd.dtype), dg_dtype_name(xd.dtype));
      return;
    }
  }
  if (y.id)
    y = tr_legacy_b(t, x, y);
  if (y.id)
    tr_output(t, 0, dg_graph_binary(t->g, t->n->name, DG_BINARY_POW, x, y));
}

/* fmod=1: C's fmod (a's sign); fmod=0: floored, Python's % (b's sign). */
void tr_op_mod(tr *t) {
  dg_tensor a = float_input(t, 0, "A");
  dg_tensor b = a.id ? float_input(t, 1, "B") : DG_TENSOR_NONE;
  if (b.id)
    tr_output(t, 0,
              dg_graph_binary(t->g, t->n->name,
                              tr_attr_int(t, "fmod", 0) ? DG_BINARY_FMOD
                                                        : DG_BINARY_MOD,
                              a, b));
}

void tr_op_prelu(tr *t) {
  dg_tensor x = float_input(t, 0, "X");
  dg_tensor s = x.id ? float_input(t, 1, "slope") : DG_TENSOR_NONE;
  dg_tensor_desc xd, sd;
  if (!s.id || !tr_desc(t, x, &xd) || !tr_desc(t, s, &sd))
    return;
  if (t->n->opset < 7) {
    /* One slope, or one per channel (axis 1). */
    int64_t n = elements(&sd);
    if (n != 1 && (xd.rank < 2 || n != xd.dims[1])) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "slope",
              "PRelu at opset %lld takes 1 slope or one per channel, not %lld",
              (long long)t->n->opset, (long long)n);
      return;
    }
    if (n != 1) {
      int64_t dims[DG_MAX_RANK] = {n};
      for (int k = 1; k < xd.rank - 1; k++)
        dims[k] = 1;
      s = dg_graph_reshape(t->g, NULL, s, xd.rank - 1, dims);
    }
  } else {
    /* Unidirectional: the slope's dims, aligned at the end, are X's or 1. */
    bool fits = sd.rank <= xd.rank;
    for (int k = 0; fits && k < sd.rank; k++) {
      int64_t e = sd.dims[sd.rank - 1 - k];
      fits = e == 1 || e == xd.dims[xd.rank - 1 - k];
    }
    if (!fits) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "slope",
              "slope (rank %d) does not broadcast to X's shape (rank %d)",
              sd.rank, xd.rank);
      return;
    }
  }
  tr_output(t, 0, dg_graph_binary(t->g, t->n->name, DG_BINARY_PRELU, x, s));
}

/* Max, Min, Sum, Mean: input 0 fn input 1 fn ...; one input is passed on
 * as it is. */
static void variadic(tr *t, dg_binary_fn fn, bool mean) {
  int n = t->n->n_inputs;
  if (n < 1) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "inputs", "%s needs an input",
            t->n->op_type);
    return;
  }
  dg_tensor y = float_input(t, 0, t->n->inputs[0]);
  for (int i = 1; i < n && y.id; i++) {
    dg_tensor x = float_input(t, i, t->n->inputs[i]);
    if (!x.id)
      return;
    bool last = i == n - 1 && !mean;
    y = dg_graph_binary(t->g, last ? t->n->name : NULL, fn, y, x);
  }
  if (!y.id)
    return;
  if (mean && n > 1) {
    dg_tensor_desc yd, one = {.rank = 0};
    if (!tr_desc(t, y, &yd))
      return;
    float inv = 1.0f / (float)n;
    dg_tensor c = float_constant(t, NULL, yd.dtype, &one, &inv, 1);
    y = dg_graph_binary(t->g, t->n->name, DG_BINARY_MUL, y, c);
  }
  tr_output(t, 0, y);
}

void tr_op_max(tr *t) { variadic(t, DG_BINARY_MAX, false); }
void tr_op_min(tr *t) { variadic(t, DG_BINARY_MIN, false); }
void tr_op_sum(tr *t) { variadic(t, DG_BINARY_ADD, false); }
void tr_op_mean(tr *t) { variadic(t, DG_BINARY_ADD, true); }
