/* reduce (every function of src/ops/reduce.def), log_softmax and
 * layer_norm on the CPU. Sums and products accumulate in double, so a
 * reduction of millions of floats stays within f32's precision (as
 * dg_cpu_sum_f32 does for pooling and softmax); the results round to f32
 * once. */
#include "cpu_reduce.h"

#include "../../ops/ops.h"

#include <math.h>

static const dg_tensor_desc *desc(const dg_cpu_node *cn, uint32_t id) {
  return &dg_ir_tensor(cn->ir, id)->desc;
}

/* The offsets of one output's reduced elements: the last reduced dim runs
 * innermost as a strided loop, the others are decomposed once per run. */
#define FOR_REDUCED(s, x, X, body)                                             \
  do {                                                                         \
    int64_t len_ = (s).rr ? (s).rdim[(s).rr - 1] : 1;                          \
    int64_t st_ = (s).rr ? (s).rstr[(s).rr - 1] : 0;                           \
    for (int64_t run_ = 0; run_ < (s).count / len_; run_++) {                  \
      const float *p_ =                                                        \
          (x) + dg_reduce_offset((s).rr - 1, (s).rdim, (s).rstr, run_);        \
      for (int64_t i_ = 0; i_ < len_; i_++) {                                  \
        double X = p_[i_ * st_];                                               \
        body;                                                                  \
      }                                                                        \
    }                                                                          \
  } while (0)

#define INF INFINITY
#define ABS fabs
#define EXP exp
#define SQRT sqrt
#define LOG log
#define ADD(a, t) a += t
#define MUL(a, t) a *= t
#define MAX(a, t) a = t > a ? t : a
#define MIN(a, t) a = t < a ? t : a

void dg_cpu_reduce_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                     void *out, void *scratch) {
  (void)pool, (void)scratch;
  const dg_node *n = cn->node;
  dg_reduce_shape s;
  dg_reduce_shape_get(desc(cn, n->inputs[0]), n->p.axes_mask, &s);
  float *y = out;
  for (int64_t o = 0; o < s.outputs; o++) {
    const float *x =
        (const float *)in[0] + dg_reduce_offset(s.kr, s.kdim, s.kstr, o);
    double M = 0, A = 0, N = (double)s.count;
    switch (n->p.fn) {
#define DG_REDUCE(e, v, name, init, comb, map, fin, shift)                     \
  case v:                                                                      \
    if (shift) {                                                               \
      M = -INFINITY;                                                           \
      FOR_REDUCED(s, x, X, M = X > M ? X : M);                                 \
    }                                                                          \
    A = init;                                                                  \
    FOR_REDUCED(s, x, X, comb(A, (map)));                                      \
    y[o] = (float)(fin);                                                       \
    break;
#include "../../ops/reduce.def"
#undef DG_REDUCE
    }
    (void)N;
  }
}

void dg_cpu_log_softmax_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                          void *out, void *scratch) {
  (void)pool, (void)scratch;
  const dg_tensor_desc *d = desc(cn, cn->node->output);
  int axis = cn->node->p.axis;
  int64_t outer = 1, len = d->dims[axis], inner = 1;
  for (int i = 0; i < axis; i++)
    outer *= d->dims[i];
  for (int i = axis + 1; i < d->rank; i++)
    inner *= d->dims[i];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      const float *x = (const float *)in[0] + o * len * inner + j;
      float *y = (float *)out + o * len * inner + j;
      float mx = -INFINITY;
      for (int64_t k = 0; k < len; k++)
        mx = x[k * inner] > mx ? x[k * inner] : mx;
      double s = 0;
      for (int64_t k = 0; k < len; k++)
        s += exp((double)x[k * inner] - mx);
      /* x - (max + log s) would round the sum first: subtract in two
       * steps, in double. */
      double ls = log(s);
      for (int64_t k = 0; k < len; k++)
        y[k * inner] = (float)((double)x[k * inner] - mx - ls);
    }
}

void dg_cpu_layer_norm_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                         void *out, void *scratch) {
  (void)pool, (void)scratch;
  dg_layer_norm_shape s;
  dg_layer_norm_shape_get(cn->ir, cn->node, &s);
  const float *scale = in[1], *bias = cn->node->inputs[2] ? in[2] : NULL;
  /* Without broadcast, scale and bias are indexed by the row position. */
  int64_t ns = dg_desc_elements(desc(cn, cn->node->inputs[1]));
  int64_t nb = bias ? dg_desc_elements(desc(cn, cn->node->inputs[2])) : 0;
  for (int64_t r = 0; r < s.rows; r++) {
    const float *x = (const float *)in[0] + r * s.len;
    float *y = (float *)out + r * s.len;
    double mean = 0, var = 0; /* two passes in double: no cancellation */
    for (int64_t k = 0; k < s.len; k++)
      mean += x[k];
    mean /= (double)s.len;
    for (int64_t k = 0; k < s.len; k++)
      var += (x[k] - mean) * (x[k] - mean);
    double inv = 1.0 / sqrt(var / (double)s.len + cn->node->p.epsilon);
    for (int64_t k = 0; k < s.len; k++) {
      int64_t is = ns == s.len ? k : dg_reduce_offset(s.rank, s.dims, s.ss, k);
      double v = (x[k] - mean) * inv * scale[is];
      if (bias)
        v += bias[nb == s.len ? k : dg_reduce_offset(s.rank, s.dims, s.sb, k)];
      y[k] = (float)v;
    }
  }
}
