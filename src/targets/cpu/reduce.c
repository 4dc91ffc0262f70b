/* reduce (every function of src/ops/reduce.def), log_softmax and
 * layer_norm on the CPU. Sums and products accumulate in double, so a
 * reduction of millions of floats stays within f32's precision (as
 * dg_cpu_sum_f32 does for pooling and softmax); the results round to f32
 * once. Outputs (rows) are split over the pool's threads when there is
 * enough work. */
#include "cpu_reduce.h"

#include "ops/ops.h"

#include <math.h>

static const dg_tensor_desc *desc(const dg_cpu_node *cn, uint32_t id) {
  return &dg_ir_tensor(cn->ir, id)->desc;
}

/* A kernel's outputs (or rows) [lo, hi), run in parts over the pool. */
typedef struct job {
  dg_cpu_node *cn;
  void *const *in;
  void *out;
  int64_t total;
  void (*range)(const struct job *j, int64_t lo, int64_t hi);
} job;

static void job_part(void *arg, int i, int n) {
  const job *j = arg;
  j->range(j, j->total * i / n, j->total * (i + 1) / n);
}

/* elements: the input's size, the work's measure; below 2^16 threads
 * cost more than they save. */
static void job_run(dg_cpu_pool *pool, job *j, int64_t elements) {
  int64_t parts = dg_cpu_pool_threads(pool);
  parts = parts < j->total ? parts : j->total;
  if (elements < (1 << 16) || parts <= 1)
    j->range(j, 0, j->total);
  else
    dg_cpu_pool_run(pool, job_part, j, (int)parts);
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

static void reduce_range(const job *j, int64_t lo, int64_t hi) {
  const dg_node *n = j->cn->node;
  dg_reduce_shape s;
  dg_reduce_shape_get(desc(j->cn, n->inputs[0]), n->p.axes_mask, &s);
  float *y = j->out;
  for (int64_t o = lo; o < hi; o++) {
    const float *x =
        (const float *)j->in[0] + dg_reduce_offset(s.kr, s.kdim, s.kstr, o);
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
#include "ops/reduce.def"
#undef DG_REDUCE
    }
    (void)N;
  }
}

void dg_cpu_reduce_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                     void *out, void *scratch) {
  (void)scratch;
  const dg_tensor_desc *x = desc(cn, cn->node->inputs[0]);
  job j = {cn, in, out, dg_desc_elements(desc(cn, cn->node->output)),
           reduce_range};
  job_run(pool, &j, dg_desc_elements(x));
}

/* Rows (outer x inner) of len elements, inner apart. */
static void softmax_rows(const dg_cpu_node *cn, int64_t *outer, int64_t *len,
                         int64_t *inner) {
  const dg_tensor_desc *d = desc(cn, cn->node->output);
  int axis = cn->node->p.axis;
  *len = d->dims[axis];
  dg_desc_split(d, axis, outer, inner);
}

static void log_softmax_range(const job *jb, int64_t lo, int64_t hi) {
  int64_t outer, len, inner;
  softmax_rows(jb->cn, &outer, &len, &inner);
  for (int64_t r = lo; r < hi; r++) {
    int64_t base = r / inner * len * inner + r % inner;
    const float *x = (const float *)jb->in[0] + base;
    float *y = (float *)jb->out + base;
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

void dg_cpu_log_softmax_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                          void *out, void *scratch) {
  (void)scratch;
  int64_t outer, len, inner;
  softmax_rows(cn, &outer, &len, &inner);
  job j = {cn, in, out, outer * inner, log_softmax_range};
  job_run(pool, &j, outer * len * inner);
}

static void layer_norm_range(const job *j, int64_t lo, int64_t hi) {
  dg_cpu_node *cn = j->cn;
  void *const *in = j->in;
  dg_layer_norm_shape s;
  dg_layer_norm_shape_get(cn->ir, cn->node, &s);
  const float *scale = in[1], *bias = cn->node->inputs[2] ? in[2] : NULL;
  /* Without broadcast, scale and bias are indexed by the row position. */
  int64_t ns = dg_desc_elements(desc(cn, cn->node->inputs[1]));
  int64_t nb = bias ? dg_desc_elements(desc(cn, cn->node->inputs[2])) : 0;
  for (int64_t r = lo; r < hi; r++) {
    const float *x = (const float *)in[0] + r * s.len;
    float *y = (float *)j->out + r * s.len;
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

void dg_cpu_layer_norm_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                         void *out, void *scratch) {
  (void)scratch;
  dg_layer_norm_shape s;
  dg_layer_norm_shape_get(cn->ir, cn->node, &s);
  job j = {cn, in, out, s.rows, layer_norm_range};
  job_run(pool, &j, s.rows * s.len);
}
