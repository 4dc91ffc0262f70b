/* CPU kernels of the spatial family: resize, batch norm, conv transpose,
 * cast. Each follows its reference kernel in src/ops (resize.c,
 * batch_norm.c, conv_transpose.c, cast.c); f16 nodes arrive as f32
 * (cpu_ops.h), except cast's, which converts f16 itself. */
#include "cpu_ops.h"

#include "core/half.h"
#include "ops/ops.h"

#include <math.h>
#include <string.h>

/* ---- resize ---- */

/* One output index of an axis: dg_resize_tap's indices and weight. */
typedef struct resize_tap {
  int64_t i0, i1;
  float w;
} resize_tap;

typedef struct resize_job {
  const dg_cpu_node *cn;
  const char *x;
  char *y;
  const resize_tap *th, *tw; /* OH and OW taps */
} resize_job;

/* One plane (image x channel) per task. */
static void resize_task(void *arg, int i, int n) {
  (void)n;
  const resize_job *j = arg;
  const dg_tensor_desc *xd = in_desc(j->cn, 0), *yd = out_desc(j->cn);
  int64_t H = xd->dims[2], W = xd->dims[3], OH = yd->dims[2], OW = yd->dims[3];
  /* f16 arrives as f32; i8/u8 are bytes (nearest only). */
  size_t es = j->cn->f16 ? 4 : dg_dtype_size(xd->dtype);
  const char *x = j->x + (size_t)i * (size_t)(H * W) * es;
  char *y = j->y + (size_t)i * (size_t)(OH * OW) * es;
  if (j->cn->node->p.resize_mode != DG_RESIZE_LINEAR) {
    for (int64_t oh = 0; oh < OH; oh++) {
      const char *row = x + (size_t)(j->th[oh].i0 * W) * es;
      char *dst = y + (size_t)(oh * OW) * es;
      if (es == 4)
        for (int64_t ow = 0; ow < OW; ow++)
          memcpy(dst + ow * 4, row + j->tw[ow].i0 * 4, 4);
      else
        for (int64_t ow = 0; ow < OW; ow++)
          dst[ow] = row[j->tw[ow].i0];
    }
    return;
  }
  const float *xf = (const float *)x;
  float *yf = (float *)y;
  for (int64_t oh = 0; oh < OH; oh++) {
    const float *r0 = xf + j->th[oh].i0 * W, *r1 = xf + j->th[oh].i1 * W;
    float wh = j->th[oh].w;
    for (int64_t ow = 0; ow < OW; ow++) {
      const resize_tap *t = &j->tw[ow];
      float a = (1 - t->w) * r0[t->i0] + t->w * r0[t->i1];
      float b = (1 - t->w) * r1[t->i0] + t->w * r1[t->i1];
      yf[oh * OW + ow] = (1 - wh) * a + wh * b;
    }
  }
}

/* The taps are tabulated into scratch on every run: OH + OW positions
 * cost nothing beside the planes they serve. */
static void resize_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                     void *out, void *scratch) {
  const dg_tensor_desc *xd = in_desc(cn, 0), *yd = out_desc(cn);
  int64_t OH = yd->dims[2], OW = yd->dims[3];
  resize_tap *taps = scratch;
  for (int64_t o = 0; o < OH + OW; o++) {
    int axis = o >= OH;
    double w;
    dg_resize_tap(&cn->node->p, axis, xd->dims[2 + axis], yd->dims[2 + axis],
                  axis ? o - OH : o, &taps[o].i0, &taps[o].i1, &w);
    taps[o].w = (float)w;
  }
  resize_job j = {cn, in[0], out, taps, taps + OH};
  dg_cpu_pool_run(pool, resize_task, &j, (int)(xd->dims[0] * xd->dims[1]));
}

bool dg_cpu_prep_resize(dg_cpu_node *cn, int threads) {
  (void)threads;
  const dg_tensor_desc *yd = out_desc(cn);
  cn->run = resize_k;
  cn->scratch_bytes = sizeof(resize_tap) * (size_t)(yd->dims[2] + yd->dims[3]);
  return true;
}

/* ---- batch norm ---- */

typedef struct bn_job {
  const float *x, *mean, *bias;
  float *y;
  const float *a; /* scale / sqrt(var + epsilon), per channel */
  int64_t C, inner;
} bn_job;

/* One plane (image x channel) per task. */
static void bn_task(void *arg, int i, int n) {
  (void)n;
  const bn_job *j = arg;
  int64_t c = i % j->C;
  const float *x = j->x + (size_t)i * (size_t)j->inner;
  float *y = j->y + (size_t)i * (size_t)j->inner;
  float a = j->a[c], m = j->mean[c], b = j->bias[c];
  for (int64_t k = 0; k < j->inner; k++)
    y[k] = (x[k] - m) * a + b;
}

/* The per-channel factors in double (then rounded once) on every run:
 * the parameters may be fed at run time, and C of them cost nothing. */
static void bn_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in, void *out,
                 void *scratch) {
  const dg_tensor_desc *xd = in_desc(cn, 0);
  int64_t C = xd->dims[1], inner = 1;
  for (int i = 2; i < xd->rank; i++)
    inner *= xd->dims[i];
  const float *scale = in[1], *var = in[4];
  float *a = scratch;
  for (int64_t c = 0; c < C; c++)
    a[c] = (float)((double)scale[c] /
                   sqrt((double)var[c] + (double)cn->node->p.epsilon));
  bn_job j = {in[0], in[3], in[2], out, a, C, inner};
  dg_cpu_pool_run(pool, bn_task, &j, (int)(xd->dims[0] * C));
}

bool dg_cpu_prep_batch_norm(dg_cpu_node *cn, int threads) {
  (void)threads;
  cn->run = bn_k;
  cn->scratch_bytes = sizeof(float) * (size_t)in_desc(cn, 0)->dims[1];
  return true;
}

/* ---- conv transpose ---- */

typedef struct ct_job {
  const dg_cpu_node *cn;
  const float *x, *w, *b;
  float *y;
} ct_job;

/* One output plane (image x output channel) per task; each output
 * gathers the inputs whose window covers it: oh = ih * stride + kh * dil
 * - pad, so ih is whole only where stride divides oh + pad - kh * dil. */
static void ct_task(void *arg, int i, int n) {
  (void)n;
  const ct_job *j = arg;
  const dg_node_params *p = &j->cn->node->p;
  const dg_tensor_desc *xd = in_desc(j->cn, 0), *wd = in_desc(j->cn, 1),
                       *yd = out_desc(j->cn);
  int64_t C = xd->dims[1], H = xd->dims[2], W = xd->dims[3];
  int64_t O = yd->dims[1], OH = yd->dims[2], OW = yd->dims[3];
  int64_t OG = wd->dims[1], KH = wd->dims[2], KW = wd->dims[3];
  int64_t CG = C / p->groups, b = i / O, o = i % O, grp = o / OG, oc = o % OG;
  float lo = p->activation == DG_ACTIVATION_NONE ? -INFINITY : 0.0f;
  float hi = p->activation == DG_ACTIVATION_RELU6 ? 6.0f : INFINITY;
  float bias = j->b ? j->b[o] : 0.0f;
  float *y = j->y + (size_t)i * (size_t)(OH * OW);
  for (int64_t oh = 0; oh < OH; oh++)
    for (int64_t ow = 0; ow < OW; ow++) {
      float s = 0;
      for (int64_t c = grp * CG; c < (grp + 1) * CG; c++) {
        const float *x = j->x + (b * C + c) * H * W;
        const float *w = j->w + (c * OG + oc) * KH * KW;
        for (int64_t kh = 0; kh < KH; kh++) {
          int64_t th = oh + p->pads[0] - kh * p->dilation[0];
          if (th < 0 || th % p->stride[0] || th / p->stride[0] >= H)
            continue;
          for (int64_t kw = 0; kw < KW; kw++) {
            int64_t tw = ow + p->pads[1] - kw * p->dilation[1];
            if (tw < 0 || tw % p->stride[1] || tw / p->stride[1] >= W)
              continue;
            s += x[th / p->stride[0] * W + tw / p->stride[1]] * w[kh * KW + kw];
          }
        }
      }
      s += bias;
      y[oh * OW + ow] = s < lo ? lo : (s > hi ? hi : s);
    }
}

static void ct_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in, void *out,
                 void *scratch) {
  (void)scratch;
  const dg_tensor_desc *yd = out_desc(cn);
  ct_job j = {cn, in[0], in[1], in[2], out};
  dg_cpu_pool_run(pool, ct_task, &j, (int)(yd->dims[0] * yd->dims[1]));
}

bool dg_cpu_prep_conv_transpose(dg_cpu_node *cn, int threads) {
  (void)threads;
  cn->run = ct_k;
  return true;
}

/* ---- cast ---- */

/* f32 -> i32 as the reference: toward zero, saturating, NaN to 0 (a
 * plain C conversion of an out-of-range float is undefined). */
static int32_t to_i32(float v) {
  if (v != v)
    return 0;
  if (v >= 2147483648.0f)
    return INT32_MAX;
  if (v < -2147483648.0f)
    return INT32_MIN;
  return (int32_t)v;
}

/* f32 -> i64 likewise (2^63 is the first float out of range). */
static int64_t to_i64(float v) {
  if (v != v)
    return 0;
  if (v >= 0x1p63f)
    return INT64_MAX;
  if (v < -0x1p63f)
    return INT64_MIN;
  return (int64_t)v;
}

static bool is_int(dg_dtype t) {
  return t == DG_DTYPE_I32 || t == DG_DTYPE_I64 || t == DG_DTYPE_BOOL;
}

/* Reads f16 itself (the node is not staged through f32: cpu_ops.c), so
 * that integers pass exactly: i32, i64 and bool travel as int64, floats
 * as float. Integers narrow to i32 saturating, as the reference does;
 * bool is "not zero" (NaN included). */
static void cast_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                   void *out, void *scratch) {
  (void)pool, (void)scratch;
  const dg_tensor_desc *xd = in_desc(cn, 0), *yd = out_desc(cn);
  int64_t e = dg_desc_elements(yd);
  if (xd->dtype == yd->dtype) {
    if (out != in[0])
      memcpy(out, in[0], dg_desc_bytes(yd));
    return;
  }
  const void *x = in[0];
  bool from_int = is_int(xd->dtype);
  for (int64_t i = 0; i < e; i++) {
    int64_t iv = 0;
    float fv = 0;
    switch (xd->dtype) {
    case DG_DTYPE_I32:
      iv = ((const int32_t *)x)[i];
      break;
    case DG_DTYPE_I64:
      iv = ((const int64_t *)x)[i];
      break;
    case DG_DTYPE_BOOL:
      iv = ((const uint8_t *)x)[i] != 0;
      break;
    case DG_DTYPE_F16:
      fv = dg_f16_to_f32(((const uint16_t *)x)[i]);
      break;
    default:
      fv = ((const float *)x)[i];
      break;
    }
    if (from_int) /* exact in f32 below 2^24; beyond, rounded once */
      fv = (float)iv;
    switch (yd->dtype) {
    case DG_DTYPE_I32:
      ((int32_t *)out)[i] = !from_int        ? to_i32(fv)
                            : iv > INT32_MAX ? INT32_MAX
                            : iv < INT32_MIN ? INT32_MIN
                                             : (int32_t)iv;
      break;
    case DG_DTYPE_I64:
      ((int64_t *)out)[i] = from_int ? iv : to_i64(fv);
      break;
    case DG_DTYPE_BOOL:
      ((uint8_t *)out)[i] = from_int ? iv != 0 : fv != 0;
      break;
    case DG_DTYPE_F16:
      ((uint16_t *)out)[i] = dg_f32_to_f16(fv);
      break;
    default:
      ((float *)out)[i] = fv;
      break;
    }
  }
}

bool dg_cpu_prep_cast(dg_cpu_node *cn, int threads) {
  (void)threads;
  cn->f16 = false;
  cn->run = cast_k;
  return true;
}
