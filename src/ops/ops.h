/* The op table: for every op, its reference kernel (the oracle every target
 * is checked against) and its cost. The builder functions, which do the
 * parameter checks and shape rules, live in the same file as each op's
 * reference kernel.
 *
 * Reference kernels compute in float64 on values widened to double (ints
 * are exact in double) and produce float64 outputs: for float ops these are
 * the unrounded results verify compares against; for integer outputs they
 * follow the numerics contract exactly (docs/numerics.md), since the
 * contract, not float64, defines those. */
#ifndef DG_OPS_H
#define DG_OPS_H

#include "core/ir.h"

typedef void (*dg_reference_fn)(const dg_ir *ir, const dg_node *node,
                                const double *const *in, double *out);

/* One line of ops.def. */
typedef struct dg_op_def {
  const char *name;
  dg_reference_fn reference;
  /* Arithmetic work of the node, in flops (or int ops). */
  double (*flops)(const dg_ir *ir, const dg_node *node);
  unsigned reads; /* DG_P_* fields of dg_node_params the op reads */
  bool reserved;  /* an old ABI value no builder emits (ops.def) */
} dg_op_def;

const dg_op_def *dg_op_def_get(dg_op op); /* NULL for an invalid op */

/* Reference kernels and costs, one pair per line of ops.def (defined in
 * the op files). */
#define DG_OP(e, x, reads)                                                     \
  void dg_ref_##x(const dg_ir *ir, const dg_node *node,                        \
                  const double *const *in, double *out);                       \
  double dg_flops_##x(const dg_ir *ir, const dg_node *node);
#define DG_OP_RESERVED(e, x)
#include "ops.def"
#undef DG_OP
#undef DG_OP_RESERVED

/* Shared by ops and targets. */

/* One line of unary.def (the functions of dg_graph_unary): its name, the
 * parameters it takes (0, 1: alpha, 2: alpha and beta), ONNX's defaults
 * of them and the range tests draw inputs from. */
typedef struct dg_unary_def {
  const char *name;
  int params; /* 0; 1: alpha; 2: alpha and beta; 3: the range [alpha, beta] */
  double alpha0, beta0;
  double lo, hi;
  bool fuses; /* a conv's epilogue may apply it (runtime/fuse_unary.h) */
} dg_unary_def;
const dg_unary_def *dg_unary_def_get(int fn); /* NULL for an invalid fn */
/* fn(x) with parameters a, b, by unary.def's formula in double (fn valid). */
double dg_unary_value(int fn, double x, double a, double b);
/* dg_graph_unary's checks of fn and its parameters, failing b's graph
 * naming "fn", "alpha" or "beta". */
struct dg_build;
bool dg_unary_check(struct dg_build *b, dg_unary_fn fn, float alpha,
                    float beta);

/* The most taps of a qavg_pool2d window: 255 * 2^23 < 2^31, so the
 * integer sum of (x - x.zero) fits int32. */
#define DG_QPOOL_MAX_TAPS (1 << 23)

/* qbinary's host factors (int8.c): for MUL fa = a.scale * b.scale /
 * y.scale (fb 0); for ADD and SUB fa = a.scale / y.scale and fb =
 * +-b.scale / y.scale. Every target's kernel takes these. */
void dg_qbinary_factors(const dg_ir *ir, const dg_node *n, float *fa,
                        float *fb);

/* Output-size rule for one spatial axis; returns < 1 when invalid. pads
 * are resolved in place for SAME padding. */
int64_t dg_window_out(int64_t in, int32_t k, int32_t stride, int32_t dil,
                      dg_padding mode, int32_t *pad_begin, int32_t *pad_end,
                      int ceil_mode);

/* Numpy broadcasting of a and b's dims; false if incompatible. */
bool dg_broadcast_dims(int ra, const int64_t *a, int rb, const int64_t *b,
                       int *rank, int64_t *out);
/* Strides (in elements) of a tensor of rank r broadcast to out rank ro:
 * zero on broadcast axes. */
void dg_broadcast_strides(int r, const int64_t *dims, int ro,
                          const int64_t *out_dims, int64_t *strides);
/* Output element i's offsets in a and b, whose broadcast strides to the
 * output's dims (rank r) are sa and sb. */
static inline void dg_broadcast_offsets(int r, const int64_t *dims,
                                        const int64_t *sa, const int64_t *sb,
                                        int64_t i, int64_t *ia, int64_t *ib) {
  *ia = *ib = 0;
  for (int d = r - 1; d >= 0; d--) {
    int64_t c = i % dims[d];
    i /= dims[d];
    *ia += c * sa[d];
    *ib += c * sb[d];
  }
}

/* Matmul batch decomposition: a [.., M, K] and b [.., K, N] (after rank-1
 * promotion) with broadcast batch; out dims. */
typedef struct dg_matmul_shape {
  int64_t M, N, K, batch;
  int batch_rank;
  int64_t batch_dims[DG_MAX_RANK];
  int64_t a_bstride[DG_MAX_RANK], b_bstride[DG_MAX_RANK]; /* in matrices */
} dg_matmul_shape;
bool dg_matmul_shape_get(const dg_tensor_desc *a, const dg_tensor_desc *b,
                         dg_matmul_shape *s, int *out_rank, int64_t *out_dims);
/* Index of the a (and b) matrix used for batch index i. */
void dg_matmul_batch_index(const dg_matmul_shape *s, int64_t i, int64_t *ai,
                           int64_t *bi);

/* A reduction's geometry (reduce.c): x's dims split into the kept and the
 * reduced ones, adjacent dims of one kind merged and dims of 1 dropped, so
 * each kind has at most 3 (they alternate). The output is the kept dims in
 * order; output element o starts at the offset of o decomposed over kdim
 * (last fastest) times kstr, and its reduced elements are at that plus
 * each index decomposed over rdim times rstr. */
typedef struct dg_reduce_shape {
  int64_t outputs, count; /* output elements; elements reduced into each */
  int kr, rr;
  int64_t kdim[3], kstr[3], rdim[3], rstr[3];
} dg_reduce_shape;
void dg_reduce_shape_get(const dg_tensor_desc *x, uint32_t axes_mask,
                         dg_reduce_shape *s);
/* Whether a GPU kernel reduces each output in one invocation (serially)
 * rather than with a workgroup: short reductions (up to 64), and up to
 * 16384 elements where the outputs are many (4096 or more) and the
 * innermost kept dim is contiguous, so that neighbouring invocations read
 * neighbouring elements (a reduction over an outer axis). */
static inline bool dg_reduce_serial(const dg_reduce_shape *s) {
  return s->count <= 64 || (s->count <= 16384 && s->outputs >= 4096 &&
                            s->kr > 0 && s->kstr[s->kr - 1] == 1);
}
/* Offset of index i decomposed over r dims dim with strides str. */
static inline int64_t dg_reduce_offset(int r, const int64_t *dim,
                                       const int64_t *str, int64_t i) {
  int64_t off = 0;
  for (int d = r - 1; d >= 0; d--) {
    off += (i % dim[d]) * str[d];
    i /= dim[d];
  }
  return off;
}

/* Layer norm's rows (reduce.c): rows of len elements, and the element
 * strides of scale (and bias) broadcast to x's dims from the axis on
 * (rank dims, zero on broadcast axes; sb all zero without a bias). */
typedef struct dg_layer_norm_shape {
  int64_t rows, len;
  int rank;
  int64_t dims[DG_MAX_RANK], ss[DG_MAX_RANK], sb[DG_MAX_RANK];
} dg_layer_norm_shape;
void dg_layer_norm_shape_get(const dg_ir *ir, const dg_node *n,
                             dg_layer_norm_shape *s);
/* resize (src/ops/resize.c): output index o of axis (0: H, 1: W) of a
 * resize node reads input indices i0 and i1 (in [0, in)) with weights
 * 1 - w and w; nearest gives i0 == i1 and w = 0. The one rule every
 * target's kernel reads (its host code tabulates it), so that the
 * rounding of positions is the reference's everywhere. */
void dg_resize_tap(const dg_node_params *p, int axis, int64_t in, int64_t out,
                   int64_t o, int64_t *i0, int64_t *i1, double *w);
/* The GPU targets' table of a resize node's taps: for each output row
 * then column (OH + OW entries), i0, i1 and the weight's fp32 bits, three
 * 32-bit words each (malloc'd, the caller frees; NULL when out of memory). */
uint32_t *dg_resize_tap_table(const dg_node_params *p, const dg_tensor_desc *x,
                              const dg_tensor_desc *y);

/* cast (src/ops/cast.c): what the reference makes of value v cast to
 * dtype to. */
double dg_cast_value(double v, dg_dtype to);

#endif
