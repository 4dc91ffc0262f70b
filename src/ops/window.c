/* Shape rules shared by the windowed ops (conv, pooling) and by the
 * broadcasting ops (add, matmul). */
#include "ops.h"

#include <stdint.h>

int64_t dg_window_out(int64_t in, int32_t k, int32_t stride, int32_t dil,
                      dg_padding mode, int32_t *pad_begin, int32_t *pad_end,
                      int ceil_mode) {
  int64_t span = (int64_t)(k - 1) * dil + 1;
  if (mode == DG_PADDING_VALID) {
    *pad_begin = *pad_end = 0;
  } else if (mode == DG_PADDING_SAME_UPPER || mode == DG_PADDING_SAME_LOWER) {
    int64_t out = (in + stride - 1) / stride;
    int64_t total = (out - 1) * stride + span - in;
    if (total < 0)
      total = 0;
    if (total > 2 * (int64_t)INT32_MAX) /* the pads would not fit int32 */
      return 0;
    int32_t small = (int32_t)(total / 2), big = (int32_t)(total - total / 2);
    *pad_begin = mode == DG_PADDING_SAME_UPPER ? small : big;
    *pad_end = mode == DG_PADDING_SAME_UPPER ? big : small;
    return out;
  }
  int64_t padded = in + *pad_begin + *pad_end;
  if (padded < span)
    return 0;
  int64_t out = (padded - span) / stride + 1;
  if (ceil_mode && (padded - span) % stride) {
    out++;
    /* The last window must start inside the input or its begin padding. */
    if ((out - 1) * stride >= in + *pad_begin)
      out--;
  }
  return out;
}

bool dg_broadcast_dims(int ra, const int64_t *a, int rb, const int64_t *b,
                       int *rank, int64_t *out) {
  int r = ra > rb ? ra : rb;
  for (int i = 0; i < r; i++) {
    int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
    int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
    if (da != db && da != 1 && db != 1)
      return false;
    out[i] = da > db ? da : db;
  }
  *rank = r;
  return true;
}

void dg_broadcast_strides(int r, const int64_t *dims, int ro,
                          const int64_t *out_dims, int64_t *strides) {
  int64_t s = 1;
  for (int i = ro - 1; i >= 0; i--) {
    int j = i - (ro - r);
    if (j < 0) {
      strides[i] = 0;
      continue;
    }
    strides[i] = (dims[j] == 1 && out_dims[i] != 1) ? 0 : s;
    s *= dims[j];
  }
}

bool dg_matmul_shape_get(const dg_tensor_desc *a, const dg_tensor_desc *b,
                         dg_matmul_shape *s, int *out_rank, int64_t *out_dims) {
  int64_t ad[DG_MAX_RANK + 1], bd[DG_MAX_RANK + 1];
  int ra = a->rank, rb = b->rank;
  if (ra < 1 || rb < 1)
    return false;
  if (ra == 1) {
    ad[0] = 1;
    ad[1] = a->dims[0];
    ra = 2;
  } else {
    for (int i = 0; i < ra; i++)
      ad[i] = a->dims[i];
  }
  if (rb == 1) {
    bd[0] = b->dims[0];
    bd[1] = 1;
    rb = 2;
  } else {
    for (int i = 0; i < rb; i++)
      bd[i] = b->dims[i];
  }
  s->M = ad[ra - 2];
  s->K = ad[ra - 1];
  s->N = bd[rb - 1];
  if (bd[rb - 2] != s->K)
    return false;
  int br;
  if (!dg_broadcast_dims(ra - 2, ad, rb - 2, bd, &br, s->batch_dims))
    return false;
  if (br > DG_MAX_RANK - 2)
    return false;
  s->batch_rank = br;
  s->batch = 1;
  for (int i = 0; i < br; i++)
    s->batch *= s->batch_dims[i];
  dg_broadcast_strides(ra - 2, ad, br, s->batch_dims, s->a_bstride);
  dg_broadcast_strides(rb - 2, bd, br, s->batch_dims, s->b_bstride);
  int r = 0;
  for (int i = 0; i < br; i++)
    out_dims[r++] = s->batch_dims[i];
  if (a->rank > 1)
    out_dims[r++] = s->M;
  if (b->rank > 1)
    out_dims[r++] = s->N;
  *out_rank = r;
  return true;
}

void dg_matmul_batch_index(const dg_matmul_shape *s, int64_t i, int64_t *ai,
                           int64_t *bi) {
  int64_t a = 0, b = 0;
  for (int d = s->batch_rank - 1; d >= 0; d--) {
    int64_t c = i % s->batch_dims[d];
    i /= s->batch_dims[d];
    a += c * s->a_bstride[d];
    b += c * s->b_bstride[d];
  }
  *ai = a;
  *bi = b;
}
