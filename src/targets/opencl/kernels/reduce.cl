/* reduce, one kernel per function of src/ops/reduce.def (reduce_<name>,
 * the lines below this file in the embedded source, each expanded by
 * DG_REDUCE here), and layer_norm. A work-group of WG1 per output (or
 * row), each work-item folding every WG1-th element (sums compensated),
 * then a tree in local memory; with R_PERITEM, one output per work-item
 * (short reductions, no tree). */

#define INF INFINITY
#define ABS fabs
#define EXP exp
#define SQRT sqrt
#define LOG log
#define ADD 0
#define MUL 1
#define MAX 2
#define MIN 3

float red_comb2(int kind, float a, float b) {
  return kind == MUL ? a * b
       : kind == MAX ? fmax(a, b)
       : kind == MIN ? fmin(a, b)
                     : a + b;
}

int red_off3(int i, constant int *d, constant int *s) {
  int c2 = i % d[2];
  i /= d[2];
  int c1 = i % d[1];
  return (i / d[1]) * s[0] + c1 * s[1] + c2 * s[2];
}

/* Combines the work-group's values v by kind (every item gets it). */
float red_tree(local float *part, int t, int kind, float v) {
  part[t] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int w = WG1 / 2; w > 0; w >>= 1) {
    if (t < w)
      part[t] = red_comb2(kind, part[t], part[t + w]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float r = part[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

/* The maximum of output o's elements (the shift of log_sum_exp). */
float red_max(const global void *x, constant int *g, local float *part,
              int base, int t, int step, int tree) {
  float m = -INFINITY;
  for (int i = t; i < g[R_COUNT]; i += step)
    m = fmax(m, ld_f(x, base + red_off3(i, g + R_RDIM, g + R_RSTR), g[E_HIO]));
  return tree ? red_tree(part, t, MAX, m) : m;
}

/* One kernel per reduce.def line: its map inlined in the fold. */
#define DG_REDUCE(e, v, name, init, comb, map, fin, shift)                     \
  kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void                 \
      reduce_##name(const global void *x, global void *y,                      \
                    constant int *g) {                                         \
    local float part[WG1];                                                     \
    const int tree = !g[R_PERITEM];                                            \
    const int o = tree ? get_group_id(0) : get_global_id(0);                   \
    const int t = tree ? get_local_id(0) : 0, step = tree ? WG1 : 1;           \
    if (o >= g[E_COUNT])                                                       \
      return; /* a whole work-group in tree mode */                           \
    const int base = red_off3(o, g + R_KDIM, g + R_KSTR), hio = g[E_HIO];      \
    const float M = (shift) ? red_max(x, g, part, base, t, step, tree) : 0.0f; \
    float A = (init), lost = 0.0f;                                             \
    for (int i = t; i < g[R_COUNT]; i += step) {                               \
      const float X =                                                          \
          ld_f(x, base + red_off3(i, g + R_RDIM, g + R_RSTR), hio);            \
      if ((comb) == ADD)                                                       \
        ksum_add(&A, &lost, (map));                                            \
      else                                                                     \
        A = red_comb2((comb), A, (map));                                       \
    }                                                                          \
    if ((comb) == ADD)                                                         \
      A -= lost;                                                               \
    if (tree)                                                                  \
      A = red_tree(part, t, (comb), A);                                        \
    const float N = (float)g[R_COUNT];                                         \
    if (t == 0)                                                                \
      st_f(y, o, (fin), hio);                                                  \
    (void)N;                                                                   \
  }
#include "reduce.def"
#undef DG_REDUCE

/* Offset of row position k under the broadcast strides s (6 dims). */
int norm_bcast(int k, constant int *d, constant int *s) {
  int off = 0;
  for (int i = 5; i >= 0; i--) {
    off += (k % d[i]) * s[i];
    k /= d[i];
  }
  return off;
}

/* Two passes (mean, then the squared deviations: no cancellation). */
kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
layer_norm(const global void *x, const global void *scale,
           const global void *bias, global void *y, constant int *g) {
  local float part[WG1];
  const int row = get_group_id(0), t = get_local_id(0);
  if (row >= g[N_ROWS])
    return; /* the whole work-group */
  const int len = g[N_LEN], base = row * len, hio = g[E_HIO];
  float s = 0.0f, lost = 0.0f;
  for (int k = t; k < len; k += WG1)
    ksum_add(&s, &lost, ld_f(x, base + k, hio));
  const float mean = red_tree(part, t, ADD, s - lost) / (float)len;
  s = lost = 0.0f;
  for (int k = t; k < len; k += WG1) {
    float d = ld_f(x, base + k, hio) - mean;
    ksum_add(&s, &lost, d * d);
  }
  const float var = red_tree(part, t, ADD, s - lost) / (float)len;
  const float inv = rsqrt(var + as_float(g[N_EPS]));
  for (int k = t; k < len; k += WG1) {
    int is = g[N_SFULL] ? k : norm_bcast(k, g + N_DIMS, g + N_SS);
    float v = (ld_f(x, base + k, hio) - mean) * inv * ld_f(scale, is, hio);
    if (g[N_BIAS])
      v += ld_f(bias, g[N_BFULL] ? k : norm_bcast(k, g + N_DIMS, g + N_SB),
                hio);
    st_f(y, base + k, v, hio);
  }
}
