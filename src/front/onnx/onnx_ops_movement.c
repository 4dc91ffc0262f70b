/* The data movement ops: Transpose, Slice, Pad, Expand and Gather onto
 * their builders, and Split (slices), DepthToSpace and SpaceToDepth
 * (reshape, transpose, reshape) and Tile (reshape, expand, reshape) onto
 * several. Shapes, starts, pads and indices must be constants: the
 * builder fixes every shape when the graph is built. */
#include "onnx_tr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A name for the k-th builder node of the current ONNX node (NULL, an
 * automatic name, when the node has none). */
static const char *sub_name(const tr *t, char *buf, size_t size,
                            const char *what) {
  if (!t->n->name || !t->n->name[0])
    return NULL;
  snprintf(buf, size, "%s/%s", t->n->name, what);
  return buf;
}

/* x and its descriptor; false (failure recorded) if there is none. */
static bool input_desc(tr *t, int i, dg_tensor *x, dg_tensor_desc *d) {
  *x = tr_input(t, i, NULL, false);
  return t->st == DG_OK && tr_desc(t, *x, d);
}

/* Input i's constant integers, or a failure naming it. */
static bool const_input_ints(tr *t, int i, const char *what, int64_t *out,
                             int max, int *count) {
  dg_onnx_value c;
  if (!tr_const(t, i, &c)) {
    if (t->st == DG_OK)
      tr_fail(t, DG_ERROR_UNSUPPORTED, what, "%s must be a constant", what);
    return false;
  }
  return tr_const_ints(t, i, out, max, count);
}

/* An axis in [-rank, rank) made non-negative, or a failure naming what. */
static bool norm_axis(tr *t, int64_t *axis, int rank, const char *what) {
  if (*axis < -rank || *axis >= rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, what,
            "%s %lld out of range for rank %d", what, (long long)*axis, rank);
    return false;
  }
  if (*axis < 0)
    *axis += rank;
  return true;
}

/* ---- Transpose ---- */

void tr_op_transpose(tr *t) {
  dg_tensor x;
  dg_tensor_desc d;
  if (!input_desc(t, 0, &x, &d))
    return;
  int64_t v[DG_MAX_RANK + 1];
  int n = t->n->attr_ints(t->n, "perm", v, DG_MAX_RANK + 1);
  int32_t perm[DG_MAX_RANK];
  if (n >= 0 && n != d.rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "perm",
            "perm has %d entries for a rank-%d input", n, d.rank);
    return;
  }
  for (int i = 0; i < n; i++) /* out of range: the builder names it */
    perm[i] = v[i] < -1 || v[i] > DG_MAX_RANK ? -1 : (int32_t)v[i];
  tr_output(t, 0, dg_graph_transpose(t->g, t->n->name, x, n < 0 ? NULL : perm));
}

/* ---- Slice ---- */

/* Whether numpy's slice of an axis of n takes nothing (step != 0). */
static bool slice_empty(int64_t n, int64_t start, int64_t end, int64_t step) {
  if (start < 0)
    start += n;
  if (end < 0)
    end += n;
  int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? n : n - 1;
  start = start < lo ? lo : start > hi ? hi : start;
  end = end < lo ? lo : end > hi ? hi : end;
  return step > 0 ? end <= start : start <= end;
}

void tr_op_slice(tr *t) {
  dg_tensor x;
  dg_tensor_desc d;
  if (!input_desc(t, 0, &x, &d))
    return;
  int r = d.rank;
  int64_t st[DG_MAX_RANK + 1], en[DG_MAX_RANK + 1], ax[DG_MAX_RANK + 1],
      sp[DG_MAX_RANK + 1];
  int ns, ne, na = -1, np = -1;
  if (t->n->opset < 10) { /* attributes, int64 as they come */
    ns = t->n->attr_ints(t->n, "starts", st, DG_MAX_RANK + 1);
    ne = t->n->attr_ints(t->n, "ends", en, DG_MAX_RANK + 1);
    na = t->n->attr_ints(t->n, "axes", ax, DG_MAX_RANK + 1);
  } else {
    if (!const_input_ints(t, 1, "starts", st, DG_MAX_RANK + 1, &ns) ||
        !const_input_ints(t, 2, "ends", en, DG_MAX_RANK + 1, &ne))
      return;
    if (tr_has_input(t, 3) &&
        !const_input_ints(t, 3, "axes", ax, DG_MAX_RANK + 1, &na))
      return;
    if (tr_has_input(t, 4) &&
        !const_input_ints(t, 4, "steps", sp, DG_MAX_RANK + 1, &np))
      return;
  }
  if (ns < 0 || ns != ne || ns > r || (na >= 0 && na != ns) ||
      (np >= 0 && np != ns)) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "starts",
            "starts, ends, axes and steps need one entry per sliced axis "
            "(%d, %d, %d, %d for rank %d)",
            ns, ne, na, np, r);
    return;
  }
  int64_t starts[DG_MAX_RANK], ends[DG_MAX_RANK], steps[DG_MAX_RANK];
  bool seen[DG_MAX_RANK] = {0};
  for (int i = 0; i < r; i++) {
    starts[i] = 0;
    ends[i] = INT64_MAX;
    steps[i] = 1;
  }
  for (int i = 0; i < ns; i++) {
    int64_t a = na >= 0 ? ax[i] : i;
    if (!norm_axis(t, &a, r, "axes"))
      return;
    if (seen[a]) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axes", "axis %lld repeated",
              (long long)a);
      return;
    }
    seen[a] = true;
    starts[a] = st[i];
    ends[a] = en[i];
    steps[a] = np >= 0 ? sp[i] : 1;
  }
  for (int i = 0; i < r; i++)
    if (steps[i] && slice_empty(d.dims[i], starts[i], ends[i], steps[i])) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, "starts",
              "the slice of axis %d is empty (directgraph has no empty "
              "tensors)",
              i);
      return;
    }
  tr_output(t, 0, dg_graph_slice(t->g, t->n->name, x, starts, ends, steps));
}

/* ---- Pad ---- */

static bool pad_mode(tr *t, dg_pad_mode *mode) {
  char s[16] = "constant";
  t->n->attr_string(t->n, "mode", s, sizeof s);
  if (!strcmp(s, "constant"))
    *mode = DG_PAD_CONSTANT;
  else if (!strcmp(s, "reflect"))
    *mode = DG_PAD_REFLECT;
  else if (!strcmp(s, "edge"))
    *mode = DG_PAD_EDGE;
  else if (!strcmp(s, "wrap") && t->n->opset >= 19)
    *mode = DG_PAD_WRAP;
  else {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "mode", "pad mode '%s' is not supported",
            s);
    return false;
  }
  return true;
}

/* The constant as the builder takes it: a real value, so an int8
 * tensor's raw ONNX constant is mapped through its quantisation. */
static bool pad_value(tr *t, const dg_tensor_desc *d, float *value) {
  *value = 0;
  if (t->n->opset < 11) {
    *value = tr_attr_float(t, "value", 0);
    return true;
  }
  if (!tr_has_input(t, 2))
    return true;
  dg_onnx_value c;
  float v[1];
  int n = 0;
  if (!tr_const(t, 2, &c)) {
    if (t->st == DG_OK)
      tr_fail(t, DG_ERROR_UNSUPPORTED, "constant_value",
              "constant_value must be a constant");
    return false;
  }
  if (!tr_const_floats(t, 2, v, 1, &n))
    return false;
  if (n == 1)
    *value = is_int8_dtype(d->dtype)
                 ? (v[0] - (float)d->quant.zero_point) * d->quant.scale
                 : v[0];
  return true;
}

void tr_op_pad(tr *t) {
  dg_tensor x;
  dg_tensor_desc d;
  if (!input_desc(t, 0, &x, &d))
    return;
  int r = d.rank, n = -1, na = -1;
  int64_t v[2 * DG_MAX_RANK + 1], ax[DG_MAX_RANK + 1];
  dg_pad_mode mode;
  float value;
  if (!pad_mode(t, &mode) || !pad_value(t, &d, &value))
    return;
  if (t->n->opset < 11) {
    n = t->n->attr_ints(t->n, t->n->opset < 2 ? "paddings" : "pads", v,
                        2 * DG_MAX_RANK + 1);
  } else {
    if (!const_input_ints(t, 1, "pads", v, 2 * DG_MAX_RANK + 1, &n))
      return;
    if (tr_has_input(t, 3) &&
        !const_input_ints(t, 3, "axes", ax, DG_MAX_RANK + 1, &na))
      return;
  }
  int axes = na >= 0 ? na : r;
  if (n != 2 * axes || axes > r) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "pads",
            "%d pads for %d axes (rank %d)", n, axes, r);
    return;
  }
  /* pads for every axis, begins then ends; negative ones (crops) become
   * a slice first, which matches the ONNX result in constant mode. */
  int64_t pads[2 * DG_MAX_RANK] = {0};
  int64_t starts[DG_MAX_RANK] = {0}, ends[DG_MAX_RANK];
  bool crop = false;
  for (int i = 0; i < r; i++)
    ends[i] = d.dims[i];
  bool seen[DG_MAX_RANK] = {0};
  for (int i = 0; i < axes; i++) {
    int64_t a = na >= 0 ? ax[i] : i;
    if (!norm_axis(t, &a, r, "axes"))
      return;
    if (seen[a]) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axes", "axis %lld repeated",
              (long long)a);
      return;
    }
    seen[a] = true;
    for (int e = 0; e < 2; e++) {
      int64_t p = v[i + e * axes];
      if (p == INT64_MIN) { /* -p would overflow */
        tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "pads", "pad %lld out of range",
                (long long)p);
        return;
      }
      if (p < 0) {
        if (mode != DG_PAD_CONSTANT) {
          tr_fail(t, DG_ERROR_UNSUPPORTED, "pads",
                  "negative pads are supported in constant mode only");
          return;
        }
        crop = true;
        if (e == 0)
          starts[a] = -p;
        else
          ends[a] = d.dims[a] + p;
      } else {
        pads[a + e * r] = p;
      }
    }
  }
  char nb[256];
  if (crop)
    x = dg_graph_slice(t->g, sub_name(t, nb, sizeof nb, "crop"), x, starts,
                       ends, NULL);
  tr_output(t, 0, dg_graph_pad(t->g, t->n->name, x, pads, mode, value));
}

/* ---- Expand ---- */

void tr_op_expand(tr *t) {
  int64_t dims[DG_MAX_RANK + 1];
  int n = 0;
  if (!const_input_ints(t, 1, "shape", dims, DG_MAX_RANK + 1, &n))
    return;
  if (n > DG_MAX_RANK) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "shape", "more than %d dims", DG_MAX_RANK);
    return;
  }
  dg_tensor x = tr_input(t, 0, NULL, false);
  tr_output(t, 0, dg_graph_expand(t->g, t->n->name, x, n, dims));
}

/* ---- Gather ---- */

bool tr_index_at(tr *t, const dg_onnx_value *c, size_t e, int64_t len,
                 int64_t axis, int64_t *v) {
  *v = c->elem == DG_ONNX_INT64 ? ((const int64_t *)c->data)[e]
                                : ((const int32_t *)c->data)[e];
  if (*v >= -len && *v < len)
    return true;
  tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "indices",
          "index %lld out of range [-%lld, %lld) of axis %lld", (long long)*v,
          (long long)len, (long long)len, (long long)axis);
  return false;
}

void tr_op_gather(tr *t) {
  dg_tensor x;
  dg_tensor_desc d;
  if (!input_desc(t, 0, &x, &d))
    return;
  int64_t axis = tr_attr_int(t, "axis", 0);
  if (!norm_axis(t, &axis, d.rank, "axis"))
    return;
  dg_onnx_value c;
  if (!tr_const(t, 1, &c)) {
    if (t->st == DG_OK)
      tr_fail(t, DG_ERROR_UNSUPPORTED, "indices", "indices must be a constant");
    return;
  }
  if ((c.elem != DG_ONNX_INT32 && c.elem != DG_ONNX_INT64) || c.rank < 0 ||
      c.rank > DG_MAX_RANK || c.count > ((size_t)1 << 24)) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "indices",
            "indices must be int32 or int64 of rank <= %d (type %d, rank %d)",
            DG_MAX_RANK, c.elem, c.rank);
    return;
  }
  /* int64 indices narrowed to the builder's i32, each checked first. */
  int32_t *idx = malloc(sizeof(int32_t) * (c.count ? c.count : 1));
  if (!idx) {
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return;
  }
  for (size_t k = 0; k < c.count; k++) {
    int64_t v;
    if (!tr_index_at(t, &c, k, d.dims[axis], axis, &v)) {
      free(idx);
      return;
    }
    idx[k] = (int32_t)v;
  }
  dg_tensor_desc id = {.dtype = DG_DTYPE_I32, .rank = c.rank};
  memcpy(id.dims, c.dims, sizeof(int64_t) * (size_t)c.rank);
  /* Named after the ONNX value it narrows. */
  char nb[256];
  snprintf(nb, sizeof nb, "%s.i32", t->n->inputs[1]);
  dg_tensor it = dg_graph_constant(t->g, nb, &id, idx, 0);
  free(idx);
  tr_output(t, 0, dg_graph_gather(t->g, t->n->name, x, it, (int32_t)axis));
}

/* ---- Split ---- */

void tr_op_split(tr *t) {
  dg_tensor x;
  dg_tensor_desc d;
  if (!input_desc(t, 0, &x, &d))
    return;
  int64_t axis = tr_attr_int(t, "axis", 0);
  if (!norm_axis(t, &axis, d.rank, "axis"))
    return;
  int outs = t->n->n_outputs, n = -1;
  int64_t len = d.dims[axis];
  int64_t *sizes = calloc((size_t)outs + 1, sizeof *sizes);
  if (!sizes) {
    tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
    return;
  }
  if (t->n->opset < 13)
    n = t->n->attr_ints(t->n, "split", sizes, outs + 1);
  else if (tr_has_input(t, 1) &&
           !const_input_ints(t, 1, "split", sizes, outs + 1, &n))
    goto done;
  if (n >= 0) {
    int64_t sum = 0;
    for (int i = 0; i < n; i++)
      sum += sizes[i] >= 0 && sizes[i] <= len ? sizes[i] : len + 1;
    if (n != outs || sum != len) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "split",
              "%d sizes summing to %lld for %d outputs of an axis of %lld", n,
              (long long)sum, outs, (long long)len);
      goto done;
    }
  } else {
    /* Equal parts; from opset 18 (num_outputs) the last may be smaller. */
    int64_t parts =
        t->n->opset >= 18 ? tr_attr_int(t, "num_outputs", outs) : outs;
    if (parts != outs || parts < 1 || parts > len ||
        (t->n->opset < 18 && len % parts)) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT,
              t->n->opset >= 18 ? "num_outputs" : "split",
              "an axis of %lld cannot be split into %d outputs", (long long)len,
              outs);
      goto done;
    }
    int64_t chunk = (len + parts - 1) / parts;
    for (int i = 0; i < outs; i++) {
      int64_t left = len - chunk * i;
      sizes[i] = left < chunk ? left : chunk;
    }
  }
  int64_t starts[DG_MAX_RANK] = {0}, ends[DG_MAX_RANK];
  for (int i = 0; i < d.rank; i++)
    ends[i] = d.dims[i];
  for (int i = 0; i < outs && t->st == DG_OK; i++) {
    ends[axis] = starts[axis] + sizes[i];
    if (t->n->outputs[i] && t->n->outputs[i][0]) {
      if (sizes[i] < 1) {
        tr_fail(t, DG_ERROR_UNSUPPORTED, "split",
                "output %d would be empty (directgraph has no empty tensors)",
                i);
        break;
      }
      char nb[256], part[16];
      snprintf(part, sizeof part, "%d", i);
      tr_output(t, i,
                dg_graph_slice(t->g, sub_name(t, nb, sizeof nb, part), x,
                               starts, ends, NULL));
    }
    starts[axis] = ends[axis];
  }
done:
  free(sizes);
}

/* ---- DepthToSpace, SpaceToDepth: reshape, transpose, reshape ---- */

static void blocks(tr *t, const int64_t *mid, const int32_t *perm,
                   const int64_t *out) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  char nb[256];
  x = dg_graph_reshape(t->g, sub_name(t, nb, sizeof nb, "split"), x, 6, mid);
  x = dg_graph_transpose(t->g, sub_name(t, nb, sizeof nb, "transpose"), x,
                         perm);
  tr_output(t, 0, dg_graph_reshape(t->g, t->n->name, x, 4, out));
}

static bool nchw_block(tr *t, dg_tensor_desc *d, int64_t *b) {
  dg_tensor x;
  if (!input_desc(t, 0, &x, d))
    return false;
  *b = tr_attr_int(t, "blocksize", 0);
  if (d->rank != 4 || *b < 1) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, d->rank != 4 ? "input" : "blocksize",
            "needs a rank-4 NCHW input and blocksize >= 1 (rank %d, "
            "blocksize %lld)",
            d->rank, (long long)*b);
    return false;
  }
  return true;
}

void tr_op_depth_to_space(tr *t) {
  dg_tensor_desc d;
  int64_t b;
  if (!nchw_block(t, &d, &b))
    return;
  int64_t N = d.dims[0], C = d.dims[1], H = d.dims[2], W = d.dims[3];
  if (C % (b * b)) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "blocksize",
            "channels %lld are not a multiple of blocksize^2 = %lld",
            (long long)C, (long long)(b * b));
    return;
  }
  char mode[8] = "DCR";
  t->n->attr_string(t->n, "mode", mode, sizeof mode);
  int64_t c = C / (b * b), out[4] = {N, c, H * b, W * b};
  if (!strcmp(mode, "DCR"))
    blocks(t, (const int64_t[]){N, b, b, c, H, W},
           (const int32_t[]){0, 3, 4, 1, 5, 2}, out);
  else if (!strcmp(mode, "CRD"))
    blocks(t, (const int64_t[]){N, c, b, b, H, W},
           (const int32_t[]){0, 1, 4, 2, 5, 3}, out);
  else
    tr_fail(t, DG_ERROR_UNSUPPORTED, "mode", "mode '%s' is not DCR or CRD",
            mode);
}

void tr_op_space_to_depth(tr *t) {
  dg_tensor_desc d;
  int64_t b;
  if (!nchw_block(t, &d, &b))
    return;
  int64_t N = d.dims[0], C = d.dims[1], H = d.dims[2], W = d.dims[3];
  if (H % b || W % b) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "blocksize",
            "H %lld and W %lld must be multiples of blocksize %lld",
            (long long)H, (long long)W, (long long)b);
    return;
  }
  blocks(t, (const int64_t[]){N, C, H / b, b, W / b, b},
         (const int32_t[]){0, 3, 5, 1, 2, 4},
         (const int64_t[]){N, C * b * b, H / b, W / b});
}

/* ---- Tile ---- */

/* One stage: each axis with rep > 1 (at most 6 - rank of them) becomes
 * [1, d], expanded to [rep, d] and merged back to rep * d. */
static dg_tensor tile_stage(tr *t, dg_tensor x, const dg_tensor_desc *d,
                            const int64_t *rep, int stage) {
  int64_t mid[DG_MAX_RANK], big[DG_MAX_RANK], out[DG_MAX_RANK];
  int k = 0;
  for (int i = 0; i < d->rank; i++) {
    if (rep[i] > 1) {
      mid[k] = 1;
      big[k++] = rep[i];
    }
    mid[k] = d->dims[i];
    big[k++] = d->dims[i];
    out[i] = d->dims[i] * rep[i]; /* the builder checks the size */
  }
  char nb[256], what[32];
  snprintf(what, sizeof what, "split%d", stage);
  x = dg_graph_reshape(t->g, sub_name(t, nb, sizeof nb, what), x, k, mid);
  snprintf(what, sizeof what, "expand%d", stage);
  x = dg_graph_expand(t->g, sub_name(t, nb, sizeof nb, what), x, k, big);
  snprintf(what, sizeof what, "merge%d", stage);
  return dg_graph_reshape(t->g, sub_name(t, nb, sizeof nb, what), x, d->rank,
                          out);
}

/* Stages of up to 6 - rank repeated axes each (the reshape adds one axis
 * per repeated axis); a rank-6 input is tiled by concatenation. */
void tr_op_tile(tr *t) {
  dg_tensor x;
  dg_tensor_desc d;
  if (!input_desc(t, 0, &x, &d))
    return;
  int64_t rep[DG_MAX_RANK + 1];
  int n = 0;
  if (!const_input_ints(t, 1, "repeats", rep, DG_MAX_RANK + 1, &n))
    return;
  if (n != d.rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "repeats",
            "%d repeats for a rank-%d input", n, d.rank);
    return;
  }
  for (int i = 0; i < d.rank; i++)
    if (rep[i] < 1 || rep[i] > 4096) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, "repeats",
              "repeats[%d] = %lld (1..4096: directgraph has no empty tensors)",
              i, (long long)rep[i]);
      return;
    }
  int room = DG_MAX_RANK - d.rank, stage = 0;
  for (int i = 0; i < d.rank && t->st == DG_OK;) {
    int64_t now[DG_MAX_RANK];
    int k = 0;
    for (int j = 0; j < d.rank; j++)
      now[j] = 1;
    for (; i < d.rank && (k < room || rep[i] == 1); i++)
      if (rep[i] > 1) {
        now[i] = rep[i];
        k++;
      }
    if (room == 0 && i == d.rank)
      break;
    if (room == 0) { /* rank 6: axis i repeated by concatenation */
      dg_tensor *copies = malloc(sizeof *copies * (size_t)rep[i]);
      if (!copies) {
        tr_fail(t, DG_ERROR_OUT_OF_MEMORY, NULL, "out of memory");
        return;
      }
      for (int64_t c = 0; c < rep[i]; c++)
        copies[c] = x;
      char nb[256];
      x = dg_graph_concat(t->g, sub_name(t, nb, sizeof nb, "concat"), copies,
                          (int32_t)rep[i], i);
      free(copies);
      d.dims[i] *= rep[i];
      i++;
    } else if (k) {
      x = tile_stage(t, x, &d, now, stage++);
      for (int j = 0; j < d.rank; j++)
        d.dims[j] *= now[j];
    }
    tr_check(t);
  }
  if (t->st == DG_OK)
    tr_output(t, 0, x);
}
