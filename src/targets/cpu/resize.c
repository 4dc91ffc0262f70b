/* CPU resize (ops/resize.c): nearest and linear, by a tap table per axis
 * made once on the host. */
#include "cpu_ops.h"

#include "core/half.h"
#include "ops/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
