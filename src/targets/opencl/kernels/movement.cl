/* Data movement, one output element per work-item, elements moved as
 * stored: one kernel pair per element size (uchar, ushort, uint) serves
 * every dtype of that size. view_*: transpose, slice, pad and expand
 * through the node's view (src/ops/view.h) with the pad modes 0 constant,
 * 1 reflect, 2 edge, 3 wrap; gather_*: outer x len x inner taken at the
 * i32 indices into outer x count x inner. */

#define MOVEMENT_KERNELS(T, VIEW, GATHER)                                      \
  kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void VIEW(          \
      const global T *x, global T *y, constant int *g) {                       \
    const int id = get_global_id(0);                                           \
    if (id >= g[V_COUNT])                                                      \
      return;                                                                  \
    const int mode = g[V_MODE];                                                \
    int rem = id, off = 0;                                                     \
    bool fill = false;                                                         \
    for (int d = g[V_RANK] - 1; d >= 0; d--) {                                 \
      const int dim = g[V_DIMS + d], n = g[V_EXTENT + d];                      \
      const int c = rem % dim;                                                 \
      rem /= dim;                                                              \
      int i = g[V_START + d] + c * g[V_STEP + d];                              \
      if (i < 0 || i >= n) {                                                   \
        if (mode == 1) /* pads < n: one reflection is enough */                \
          i = i < 0 ? -i : 2 * (n - 1) - i;                                    \
        else if (mode == 2)                                                    \
          i = i < 0 ? 0 : n - 1;                                               \
        else if (mode == 3)                                                    \
          i = ((i % n) + n) % n;                                               \
        else                                                                   \
          fill = true;                                                         \
      }                                                                        \
      off += i * g[V_STRIDE + d];                                              \
    }                                                                          \
    y[id] = fill ? (T)((ulong)(uint)g[V_FILL] |                                \
                       (ulong)(uint)g[V_FILL_HI] << 32)                        \
                 : x[off];                                                     \
  }                                                                            \
  kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void GATHER(        \
      const global T *x, const global int *idx, global T *y,                  \
      constant int *g) {                                                       \
    const int id = get_global_id(0);                                           \
    if (id >= g[V_COUNT])                                                      \
      return;                                                                  \
    const int inner = g[V_INNER], count = g[V_IDXN], len = g[V_LEN];           \
    const int j = id % inner, k = (id / inner) % count;                        \
    const int o = id / (inner * count);                                        \
    int s = idx[k];                                                            \
    s = s < 0 ? s + len : s; /* range-checked at build */                      \
    y[id] = x[(o * len + s) * inner + j];                                      \
  }

MOVEMENT_KERNELS(uchar, view_8, gather_8)
MOVEMENT_KERNELS(ushort, view_16, gather_16)
MOVEMENT_KERNELS(uint, view_32, gather_32)
MOVEMENT_KERNELS(ulong, view_64, gather_64)
