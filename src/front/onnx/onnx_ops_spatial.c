/* The spatial family's ONNX handlers: Resize, Upsample,
 * BatchNormalization, ConvTranspose, Cast and CastLike. Each maps the
 * node onto one builder call and refuses, naming the attribute or input,
 * what the builder cannot express. */
#include "onnx_tr.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- Resize, Upsample ---- */

/* An empty string (how ONNX Runtime hands over an attribute left at
 * its default) is the default, names[0]. */
static bool name_of(const char *s, const char *const *names, int count,
                    int *out) {
  if (!s[0]) {
    *out = 0;
    return true;
  }
  for (int i = 0; i < count; i++)
    if (!strcmp(s, names[i])) {
      *out = i;
      return true;
    }
  return false;
}

/* mode: nearest or linear (cubic and the rest refused by name). */
static bool resize_mode(tr *t, dg_resize_params *p) {
  char s[32] = "nearest";
  t->n->attr_string(t->n, "mode", s, sizeof s);
  static const char *const modes[] = {"nearest", "linear"};
  int m;
  if (!name_of(s, modes, 2, &m)) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "mode",
            "Resize mode '%s' is not supported (nearest and linear are)", s);
    return false;
  }
  p->mode = (dg_resize_mode)m;
  return true;
}

/* Opset 11's attributes: the coordinate transform, the nearest rounding,
 * and the ones that must keep their defaults. */
static bool resize_attrs(tr *t, dg_resize_params *p) {
  static const char *const coords[] = {
      "half_pixel",         "asymmetric",           "align_corners",
      "pytorch_half_pixel", "tf_half_pixel_for_nn", "half_pixel_symmetric"};
  static const char *const nearest[] = {"round_prefer_floor",
                                        "round_prefer_ceil", "floor", "ceil"};
  char s[48] = "half_pixel";
  int v;
  t->n->attr_string(t->n, "coordinate_transformation_mode", s, sizeof s);
  if (!name_of(s, coords, 6, &v)) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "coordinate_transformation_mode",
            "coordinate_transformation_mode '%s' is not supported", s);
    return false;
  }
  p->coord = (dg_resize_coord)v;
  snprintf(s, sizeof s, "round_prefer_floor");
  t->n->attr_string(t->n, "nearest_mode", s, sizeof s);
  if (!name_of(s, nearest, 4, &v)) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "nearest_mode",
            "nearest_mode '%s' is not supported", s);
    return false;
  }
  p->nearest = (dg_resize_nearest)v;
  if (tr_attr_int(t, "antialias", 0) != 0) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "antialias",
            "antialias=1 is not supported");
    return false;
  }
  if (tr_attr_int(t, "exclude_outside", 0) != 0) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "exclude_outside",
            "exclude_outside=1 is not supported");
    return false;
  }
  snprintf(s, sizeof s, "stretch");
  t->n->attr_string(t->n, "keep_aspect_ratio_policy", s, sizeof s);
  if (s[0] && strcmp(s, "stretch")) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "keep_aspect_ratio_policy",
            "keep_aspect_ratio_policy '%s' is not supported (stretch is)", s);
    return false;
  }
  return t->st == DG_OK;
}

/* Before opset 11 (and in Upsample) positions are asymmetric and nearest
 * takes the input at or below them on enlarged axes, at or above on
 * shrunk ones, as ONNX Runtime does: one rule for both axes, so a node
 * that enlarges one and shrinks the other is refused. */
static bool legacy_nearest(tr *t, const float *sc, dg_resize_params *p) {
  p->coord = DG_RESIZE_ASYMMETRIC;
  bool up = sc[2] > 1 || sc[3] > 1, down = sc[2] < 1 || sc[3] < 1;
  if (up && down && p->mode == DG_RESIZE_NEAREST) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "scales",
            "nearest resizing that enlarges one axis and shrinks the other "
            "is not supported before opset 11");
    return false;
  }
  p->nearest = down ? DG_RESIZE_CEIL : DG_RESIZE_FLOOR;
  return true;
}

/* The per-axis scales (input si) or sizes (input zi), over the axes
 * attribute (opset 18) or all four; N and C must stay. An empty tensor
 * counts as absent. */
static bool resize_targets(tr *t, const dg_tensor_desc *d, int si, int zi,
                           dg_resize_params *p, float *sc) {
  float fs[DG_MAX_RANK];
  int64_t is[DG_MAX_RANK], axes[DG_MAX_RANK];
  int ns = 0, nz = 0;
  if (si >= 0 && tr_has_input(t, si) &&
      !tr_const_floats(t, si, fs, DG_MAX_RANK, &ns))
    return false;
  if (zi >= 0 && tr_has_input(t, zi) &&
      !tr_const_ints(t, zi, is, DG_MAX_RANK, &nz))
    return false;
  if ((ns > 0) == (nz > 0)) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, ns ? "sizes" : "scales",
            "exactly one of scales and sizes must be given (got %d and %d "
            "values)",
            ns, nz);
    return false;
  }
  int na = tr_attr_ints(t, "axes", axes, DG_MAX_RANK);
  if (na < 0) {
    na = d->rank;
    for (int i = 0; i < na; i++)
      axes[i] = i;
  }
  if ((ns ? ns : nz) != na) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, ns ? "scales" : "sizes",
            "%d values for %d axes", ns ? ns : nz, na);
    return false;
  }
  int64_t size[4];
  for (int i = 0; i < 4; i++) {
    sc[i] = 1;
    size[i] = d->dims[i];
  }
  for (int i = 0; i < na; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + 4 : axes[i];
    if (a < 0 || a >= 4) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "axes", "axis %lld of rank 4",
              (long long)axes[i]);
      return false;
    }
    if (ns)
      sc[a] = fs[i];
    else
      size[a] = is[i];
  }
  for (int a = 0; a < 2; a++)
    if (ns ? sc[a] != 1 : size[a] != d->dims[a]) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, ns ? "scales" : "sizes",
              "resizing the %s axis is not supported (only H and W)",
              a ? "channel" : "batch");
      return false;
    }
  for (int a = 2; a < 4; a++) {
    if (ns)
      p->scales[a - 2] = sc[a];
    else {
      p->sizes[a - 2] = size[a];
      sc[a] = (float)((double)size[a] / (double)d->dims[a]);
    }
  }
  return true;
}

/* Resize (10..22) and Upsample (7..9): x, then the scales at si or the
 * sizes at zi (-1: none). */
static void resize_common(tr *t, int si, int zi, bool legacy) {
  dg_resize_params p = {0};
  if (!resize_mode(t, &p) || (!legacy && !resize_attrs(t, &p)))
    return;
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (!x.id || !tr_desc(t, x, &d))
    return;
  if (p.mode == DG_RESIZE_LINEAR && !tr_need_float(t, x, "X"))
    return;
  if (d.rank != 4) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "X",
            "only 4-D (NCHW) inputs are supported, got rank %d", d.rank);
    return;
  }
  float sc[4];
  if (!resize_targets(t, &d, si, zi, &p, sc) ||
      (legacy && !legacy_nearest(t, sc, &p)))
    return;
  tr_output(t, 0, dg_graph_resize(t->g, t->n->name, x, &p));
}

void tr_op_resize(tr *t) {
  if (t->n->opset < 11) {
    resize_common(t, 1, -1, true);
    return;
  }
  /* roi is read only by tf_crop_and_resize, which resize_attrs refuses. */
  resize_common(t, 2, 3, false);
}

void tr_op_upsample(tr *t) {
  if (t->n->opset < 9) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "scales",
            "Upsample's scales attribute (before opset 9) is not supported");
    return;
  }
  resize_common(t, 1, -1, true);
}

/* ---- BatchNormalization ---- */

/* Inference only: training (is_test 0 before opset 7, training_mode 1
 * from 14), per-activation statistics (spatial 0 before 9) and the
 * statistics outputs, where anything reads them, are refused. */
void tr_op_batch_norm(tr *t) {
  int64_t opset = t->n->opset;
  if (opset < 7 && tr_attr_int(t, "is_test", 0) == 0) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "is_test",
            "BatchNormalization in training mode (is_test 0) is not "
            "supported");
    return;
  }
  if (opset < 9 && tr_attr_int(t, "spatial", 1) != 1) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "spatial",
            "BatchNormalization with spatial=0 is not supported");
    return;
  }
  if (tr_attr_int(t, "training_mode", 0) != 0) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "training_mode",
            "BatchNormalization in training mode is not supported");
    return;
  }
  for (int i = 1; i < t->n->n_outputs; i++)
    if (t->n->outputs[i][0]) {
      tr_fail(t, DG_ERROR_UNSUPPORTED, "outputs",
              "BatchNormalization's output %d (training statistics) is not "
              "supported",
              i);
      return;
    }
  if (t->st != DG_OK)
    return;
  dg_tensor in[5];
  for (int i = 0; i < 5; i++)
    if (!(in[i] = tr_input(t, i, NULL, false)).id)
      return;
  if (!tr_need_float(t, in[0], "X"))
    return;
  float eps = tr_attr_float(t, "epsilon", 1e-5f);
  tr_output(t, 0,
            dg_graph_batch_norm(t->g, t->n->name, in[0], in[1], in[2], in[3],
                                in[4], eps));
}

/* ---- ConvTranspose ---- */

/* An int list attribute of nd values (absent: def for each); false
 * (failure recorded) for any other count or a value below lo. */
static bool ct_ints(tr *t, const char *name, int nd, int64_t def, int64_t lo,
                    int64_t *out) {
  int64_t v[8];
  int n = tr_attr_ints(t, name, v, 8);
  for (int i = 0; i < nd; i++)
    out[i] = n == nd ? v[i] : def;
  if (n >= 0 && n != nd) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, name, "expected %d values, got %d",
            nd, n);
    return false;
  }
  for (int i = 0; i < nd; i++)
    if (out[i] < lo || out[i] > INT32_MAX) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, name, "%s[%d] = %lld", name, i,
              (long long)out[i]);
      return false;
    }
  return true;
}

/* floor(v / 2), as ONNX's reference divides. */
static int64_t floor_half(int64_t v) { return v >= 0 ? v / 2 : -((1 - v) / 2); }

/* 2-D, and 1-D as 2-D over a height of 1 (x, w and y reshaped). With
 * output_shape, the pads are derived as ONNX's reference does (the odd
 * one at the end under SAME_UPPER, else at the beginning); a negative
 * end pad is output padding. */
void tr_op_conv_transpose(tr *t) {
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc xd, wd;
  if (!x.id || !tr_need_float(t, x, "X") || !tr_desc(t, x, &xd))
    return;
  int nd = xd.rank - 2;
  if (nd != 1 && nd != 2) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "X",
            "only 1-D and 2-D ConvTranspose is supported, got rank %d",
            xd.rank);
    return;
  }
  dg_tensor w = tr_input(t, 1, NULL, false);
  dg_tensor b = tr_input(t, 2, NULL, true);
  if (!w.id || !tr_desc(t, w, &wd) || t->st != DG_OK)
    return;
  if (wd.rank != xd.rank) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "W", "W has rank %d, X rank %d",
            wd.rank, xd.rank);
    return;
  }
  int64_t s[2], d[2], op[2], pads[4], k[2], outs[4];
  int64_t o = nd == 1 ? 1 : 0; /* where the ONNX axes start in ours */
  s[0] = d[0] = k[0] = 1;
  op[0] = pads[0] = pads[2] = 0;
  int64_t p4[4];
  if (!ct_ints(t, "strides", nd, 1, 1, s + o) ||
      !ct_ints(t, "dilations", nd, 1, 1, d + o) ||
      !ct_ints(t, "output_padding", nd, 0, 0, op + o) ||
      !ct_ints(t, "pads", 2 * nd, 0, 0, p4))
    return;
  for (int i = 0; i < nd; i++) {
    pads[o + i] = p4[i];
    pads[o + i + 2] = p4[nd + i];
    k[o + i] = wd.dims[2 + i];
  }
  int64_t ks[2];
  int nk = tr_attr_ints(t, "kernel_shape", ks, 2);
  for (int i = 0; nk >= 0 && i < nd; i++)
    if (nk != nd || ks[i] != k[o + i]) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "kernel_shape",
              "kernel_shape contradicts the weights");
      return;
    }
  char ap[32] = "";
  t->n->attr_string(t->n, "auto_pad", ap, sizeof ap);
  dg_conv2d_params p = {.groups = (int32_t)tr_attr_int(t, "group", 1)};
  if (!strcmp(ap, "SAME_UPPER"))
    p.padding = DG_PADDING_SAME_UPPER;
  else if (!strcmp(ap, "SAME_LOWER"))
    p.padding = DG_PADDING_SAME_LOWER;
  else if (!strcmp(ap, "VALID"))
    p.padding = DG_PADDING_VALID;
  else if (ap[0] && strcmp(ap, "NOTSET")) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "auto_pad",
            "auto_pad '%s' is not supported", ap);
    return;
  }
  if (p.groups < 1) {
    tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "group", "group %d < 1", p.groups);
    return;
  }
  int no = tr_attr_ints(t, "output_shape", outs, 4);
  if (no >= 0) {
    if (no != nd && no != nd + 2) {
      tr_fail(t, DG_ERROR_INVALID_ARGUMENT, "output_shape",
              "expected %d values, got %d", nd, no);
      return;
    }
    for (int i = 0; i < nd; i++) {
      int64_t a = o + i, in = xd.dims[2 + i];
      int64_t total =
          s[a] * (in - 1) + op[a] + (k[a] - 1) * d[a] + 1 - outs[no - nd + i];
      int64_t half = floor_half(total);
      bool upper = p.padding == DG_PADDING_SAME_UPPER;
      pads[a] = upper ? half : total - half;
      pads[a + 2] = upper ? total - half : half;
      if (pads[a + 2] < 0) { /* rows past the full output: output padding */
        op[a] -= pads[a + 2];
        pads[a + 2] = 0;
      }
      if (pads[a] < 0) {
        tr_fail(t, DG_ERROR_UNSUPPORTED, "output_shape",
                "output_shape needs a negative leading pad");
        return;
      }
    }
    p.padding = DG_PADDING_EXPLICIT;
  }
  int32_t opad[2];
  for (int i = 0; i < 2; i++) {
    p.stride[i] = (int32_t)s[i];
    p.dilation[i] = (int32_t)d[i];
    p.pads[i] = (int32_t)pads[i];
    p.pads[i + 2] = (int32_t)pads[i + 2];
    opad[i] = (int32_t)op[i];
  }
  if (nd == 1) {
    int64_t x4[4] = {xd.dims[0], xd.dims[1], 1, xd.dims[2]};
    int64_t w4[4] = {wd.dims[0], wd.dims[1], 1, wd.dims[2]};
    x = dg_graph_reshape(t->g, NULL, x, 4, x4);
    w = dg_graph_reshape(t->g, NULL, w, 4, w4);
  }
  dg_tensor y = dg_graph_conv_transpose2d(t->g, t->n->name, x, w, b, &p, opad);
  dg_tensor_desc yd;
  if (nd == 1 && tr_desc(t, y, &yd)) {
    int64_t y3[3] = {yd.dims[0], yd.dims[1], yd.dims[3]};
    y = dg_graph_reshape(t->g, NULL, y, 3, y3);
  }
  tr_output(t, 0, y);
}

/* ---- Cast, CastLike ---- */

/* Input 0 cast to ONNX element type `to`: between FLOAT, FLOAT16, INT32,
 * INT64 and BOOL, and UINT8 or INT8 to itself; any other type (of the
 * input or the target) is refused by name. saturate (opset 19) only concerns
 * float8 types, refused anyway. */
static void cast_to(tr *t, int64_t to) {
  static const struct {
    int elem;
    const char *name;
  } names[] = {{0, "UNDEFINED"},   {1, "FLOAT"},    {2, "UINT8"},
               {3, "INT8"},        {4, "UINT16"},   {5, "INT16"},
               {6, "INT32"},       {7, "INT64"},    {8, "STRING"},
               {9, "BOOL"},        {10, "FLOAT16"}, {11, "DOUBLE"},
               {12, "UINT32"},     {13, "UINT64"},  {14, "COMPLEX64"},
               {15, "COMPLEX128"}, {16, "BFLOAT16"}};
  dg_dtype dt = to == DG_ONNX_FLOAT     ? DG_DTYPE_F32
                : to == DG_ONNX_FLOAT16 ? DG_DTYPE_F16
                : to == DG_ONNX_INT32   ? DG_DTYPE_I32
                : to == DG_ONNX_INT64   ? DG_DTYPE_I64
                : to == DG_ONNX_BOOL    ? DG_DTYPE_BOOL
                                        : DG_DTYPE_INVALID;
  if (t->st != DG_OK)
    return;
  /* To UINT8 or INT8 from that same type: the input itself. PyTorch's own
   * QDQ export (torch.ao, legacy exporter) puts one after every
   * QuantizeLinear; ORT folds it away too. */
  dg_dtype own = to == DG_ONNX_UINT8 || to == DG_ONNX_INT8 ? tr_dtype((int)to)
                                                           : DG_DTYPE_INVALID;
  if (own != DG_DTYPE_INVALID) {
    dg_tensor x = tr_input(t, 0, NULL, false);
    dg_tensor_desc d;
    if (!x.id || !tr_desc(t, x, &d))
      return;
    if (d.dtype == own) {
      tr_output(t, 0, x);
      return;
    }
  }
  if (dt == DG_DTYPE_INVALID) {
    const char *name = "an unknown type";
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
      if (names[i].elem == to)
        name = names[i].name;
    tr_fail(t, DG_ERROR_UNSUPPORTED, "to",
            "Cast to %s (%lld) is not supported (FLOAT, FLOAT16, INT32, "
            "INT64, BOOL are; UINT8 and INT8 from the same type only)",
            name, (long long)to);
    return;
  }
  dg_tensor x = tr_input(t, 0, NULL, false);
  dg_tensor_desc d;
  if (!x.id || !tr_desc(t, x, &d))
    return;
  if (d.dtype != DG_DTYPE_F32 && d.dtype != DG_DTYPE_F16 &&
      d.dtype != DG_DTYPE_I32 && d.dtype != DG_DTYPE_I64 &&
      d.dtype != DG_DTYPE_BOOL) {
    tr_fail(t, DG_ERROR_UNSUPPORTED, "input",
            "Cast from %s is not supported (FLOAT, FLOAT16, INT32, INT64, "
            "BOOL are)",
            dg_dtype_name(d.dtype));
    return;
  }
  tr_output(t, 0, dg_graph_cast(t->g, t->n->name, x, dt));
}

void tr_op_cast(tr *t) { cast_to(t, tr_attr_int(t, "to", 0)); }

/* CastLike: to the element type of input 1, whose values are not read;
 * it is an input of the graph all the same (of the EP's fused node). */
void tr_op_cast_like(tr *t) {
  dg_onnx_value v;
  tr_input_type(t, 1, &v);
  cast_to(t, v.elem);
  if (t->st == DG_OK)
    (void)tr_input(t, 1, NULL, false);
}
