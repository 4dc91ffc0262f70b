/* The data movement kernels: the output is walked a row (its innermost
 * axis) at a time; a row whose input is unit-stride is one memcpy plus
 * the pad elements either side, any other row is copied element by
 * element through the view's coordinate map. */
#include "movement.h"

#include "ops/view.h"

#include <stdlib.h>
#include <string.h>

/* One element of es (1, 2, 4 or 8) bytes, without a variable-size
 * memcpy call per element. */
static inline void put(char *dst, const char *src, size_t es) {
  switch (es) {
  case 1:
    *dst = *src;
    break;
  case 2:
    memcpy(dst, src, 2);
    break;
  case 4:
    memcpy(dst, src, 4);
    break;
  default:
    memcpy(dst, src, es);
    break;
  }
}

/* n elements of es bytes, src stride elements apart, to dst (packed). */
#define STRIDED(T)                                                             \
  do {                                                                         \
    const T *s_ = (const T *)src;                                              \
    T *d_ = (T *)dst;                                                          \
    for (int64_t k = 0; k < n; k++)                                            \
      d_[k] = s_[k * stride];                                                  \
  } while (0)
static void strided(char *dst, const char *src, int64_t n, int64_t stride,
                    size_t es) {
  switch (es) {
  case 1:
    STRIDED(uint8_t);
    break;
  case 2:
    STRIDED(uint16_t);
    break;
  case 8:
    STRIDED(uint64_t);
    break;
  default:
    STRIDED(uint32_t);
    break;
  }
}
#undef STRIDED

static void view_row(const dg_view *v, const char *x, int64_t base, char *y,
                     const char *fill) {
  size_t es = v->elem_size;
  int d = v->rank - 1;
  int64_t len = v->dims[d], lo = 0, hi = 0;
  int64_t first = v->start[d];
  if (v->step[d] * v->stride[d] != 1 && dg_view_inside(v, d)) {
    /* No pad on this row: one strided walk (transpose, strided slice,
     * broadcast). Elements are 1, 2, 4 or 8 bytes (dtypes of graph.h). */
    strided(y, x + (size_t)(base + first * v->stride[d]) * es, len,
            v->step[d] * v->stride[d], es);
    return;
  }
  if (v->step[d] == 1 && v->stride[d] == 1) {
    /* Output positions whose input coordinate is inside the extent. */
    lo = -v->start[d] > 0 ? -v->start[d] : 0;
    hi = v->extent[d] - v->start[d] < len ? v->extent[d] - v->start[d] : len;
    if (hi > lo)
      memcpy(y + (size_t)lo * es, x + (size_t)(base + v->start[d] + lo) * es,
             (size_t)(hi - lo) * es);
    else
      lo = hi = 0;
  }
  for (int64_t c = 0; c < len; c++) {
    if (c == lo && hi > lo) {
      c = hi - 1;
      continue;
    }
    int64_t i = dg_view_coord(v, d, c);
    put(y + (size_t)c * es,
        i < 0 ? fill : x + (size_t)(base + i * v->stride[d]) * es, es);
  }
}

/* Rows [r0, r1) of the output (all axes but the last) for task of
 * tasks. */
typedef struct view_job {
  dg_view v;
  const char *x;
  char *y;
  char fill[8];
  int64_t rows;
} view_job;

static void view_rows(void *arg, int task, int tasks) {
  const view_job *j = arg;
  const dg_view *v = &j->v;
  size_t es = v->elem_size;
  int last = v->rank - 1;
  int64_t r0 = j->rows * task / tasks, r1 = j->rows * (task + 1) / tasks;
  int64_t c[DG_MAX_RANK] = {0};
  int64_t rem = r0;
  for (int d = last - 1; d >= 0; d--) {
    c[d] = rem % v->dims[d];
    rem /= v->dims[d];
  }
  size_t row_bytes = (size_t)v->dims[last] * es;
  char *y = j->y + (size_t)r0 * row_bytes;
  for (int64_t r = r0; r < r1; r++, y += row_bytes) {
    int64_t base = 0;
    bool is_fill = false;
    for (int d = 0; d < last; d++) {
      int64_t i = dg_view_coord(v, d, c[d]);
      is_fill |= i < 0;
      base += i * v->stride[d];
    }
    if (is_fill)
      for (int64_t k = 0; k < v->dims[last]; k++)
        put(y + (size_t)k * es, j->fill, es);
    else
      view_row(v, j->x, base, y, j->fill);
    for (int d = last - 1; d >= 0 && ++c[d] == v->dims[d]; d--)
      c[d] = 0;
  }
}

void dg_cpu_view_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                   void *out, void *scratch) {
  (void)pool, (void)scratch;
  view_job j = {.x = in[0], .y = out, .rows = 1};
  dg_view_of(cn->ir, cn->node, &j.v);
  size_t es = j.v.elem_size;
  memcpy(j.fill, &j.v.fill_bits, es < 8 ? es : 8); /* little-endian hosts */
  if (j.v.rank == 0) {
    memcpy(j.y, j.x, es);
    return;
  }
  for (int d = 0; d < j.v.rank - 1; d++)
    j.rows *= j.v.dims[d];
  /* One thread: the ops cost no flops, so their segments run on the
   * inline pool (cpu_target.c), and a copy is bound by memory anyway. */
  view_rows(&j, 0, 1);
}

void dg_cpu_gather_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                     void *out, void *scratch) {
  (void)pool, (void)scratch;
  const dg_node *n = cn->node;
  const dg_tensor_desc *x = &dg_ir_tensor(cn->ir, n->inputs[0])->desc;
  const dg_tensor_desc *id = &dg_ir_tensor(cn->ir, n->inputs[1])->desc;
  const int32_t *idx = in[1];
  int axis = n->p.axis;
  size_t es = dg_dtype_size(x->dtype);
  int64_t outer, inner, len = x->dims[axis];
  int64_t count = dg_desc_elements(id);
  dg_desc_split(x, axis, &outer, &inner);
  size_t run = (size_t)inner * es;
  char *y = out;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t k = 0; k < count; k++, y += run) {
      int64_t i = idx[k] < 0 ? idx[k] + len : idx[k]; /* checked at build */
      memcpy(y, (const char *)in[0] + (size_t)(o * len + i) * run, run);
    }
}

/* reshape: the bytes as they are; concat: each input in its place. */
void dg_cpu_copy_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                   void *out, void *scratch) {
  (void)pool, (void)scratch;
  if (out != in[0])
    memcpy(out, in[0], dg_desc_bytes(out_desc(cn)));
}

void dg_cpu_concat_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                     void *out, void *scratch) {
  (void)pool, (void)scratch;
  const dg_tensor_desc *yd = out_desc(cn);
  int axis = cn->node->p.axis;
  size_t es = dg_dtype_size(yd->dtype);
  int64_t outer, inner;
  dg_desc_split(yd, axis, &outer, &inner);
  int64_t off = 0, row = yd->dims[axis] * inner;
  for (int t = 0; t < cn->node->input_count; t++) {
    int64_t len = in_desc(cn, t)->dims[axis] * inner;
    /* an input the host plan made in its slice (runtime/concat_slices.h)
     * is there already */
    if (outer == 1 && (char *)out + (size_t)off * es == (const char *)in[t]) {
      off += len;
      continue;
    }
    for (int64_t o = 0; o < outer; o++)
      memcpy((char *)out + (size_t)(o * row + off) * es,
             (const char *)in[t] + (size_t)(o * len) * es, (size_t)len * es);
    off += len;
  }
}
