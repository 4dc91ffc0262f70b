/* Private to the translator (onnx_translate.c, onnx_op_table.c,
 * onnx_qdq.c): its state while translating one source, and the helpers
 * the op handlers call. Front ends include onnx_translate.h only. */
#ifndef DG_ONNX_TR_H
#define DG_ONNX_TR_H

#include "name_map.h"
#include "onnx_translate.h"

#define TR_MAX_CHANNELS 4096

/* One named value and what it has become. name is the source's string. */
typedef struct tr_value {
  const char *name;
  dg_tensor t;  /* materialised tensor, or id 0 */
  int producer; /* node of the list writing it, or -1 */
  int readers;  /* node inputs of the list reading it */
  int dq_node;  /* pending DequantizeLinear producing it, or -1 */
  /* An int8 fold's data movement writes it (onnx_qdq_ops.c): int8 where
   * the model declares float, its QuantizeLinear's output taking it. */
  bool int8_fold;
  bool has_const; /* a Constant node's output: cv holds it */
  dg_onnx_value cv;
} tr_value;

/* Storage for per-channel parameters read from the model; the builder
 * copies them, so three suffice (input, weights, output of one op). */
typedef struct tr_quant {
  float scales[TR_MAX_CHANNELS];
  int32_t zeros[TR_MAX_CHANNELS];
} tr_quant;

/* The builder's dtype of an ONNX element type (DG_DTYPE_INVALID for one
 * it has none of). */
dg_dtype tr_dtype(int elem);

#define TR_MAX_DQ_DEPTH 64 /* DequantizeLinears reading each other */

typedef struct tr {
  dg_graph *g;
  const dg_onnx_source *src;
  dg_onnx_node *nodes; /* node_count, read once */
  bool *done;          /* per node: translated, or folded into another */
  tr_value *vals;
  int nvals;
  dg_name_map names;     /* name -> index into vals */
  int cur;               /* the node being translated, -1 for none */
  const dg_onnx_node *n; /* nodes[cur], or NULL */
  int dq_depth;          /* pending DequantizeLinears being emitted */
  tr_quant *q;           /* 3 */
  dg_onnx_failure *why;
  dg_status st;
  void **owned; /* buffers of folded values (onnx_fold.c), freed at the end */
  int nowned;
} tr;

/* One row of the op table: the op; its versions, as ONNX's schemas give
 * them (each a since_version, through opset 22, the newest the importer
 * takes: "1 6 13"), and the oldest and newest of them the handler reads;
 * the attributes it accepts (NULL-terminated; NULL for none) and its
 * handler. The version in force at a model's opset is the newest one at
 * or below it (tests/onnx/check_op_versions.py checks every row against
 * the ONNX package's schemas). */
typedef struct tr_op {
  const char *op;
  const char *versions;
  int min_version, max_version;
  const char *const *attrs;
  void (*run)(tr *t);
} tr_op;

static inline bool is_int8_dtype(dg_dtype d) {
  return d == DG_DTYPE_I8 || d == DG_DTYPE_U8;
}

const tr_op *tr_op_find(const char *op); /* NULL: not in the table */
/* The version of row's op in force at opset: the newest of its versions
 * at or below it; 0 when the op does not exist yet. */
int tr_op_version(const tr_op *row, int64_t opset);
/* Whether the handler reads the version in force at opset; "" into why
 * when it does, the reason otherwise. */
bool tr_op_opset_ok(const tr_op *row, int64_t opset, char *why, size_t size);

/* Records the first failure of the translation, at the current node. */
void tr_fail(tr *t, dg_status st, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Turns the graph's sticky builder error into the failure; true if any. */
bool tr_check(tr *t);

tr_value *tr_value_find(tr *t, const char *name);
bool tr_has_input(const tr *t, int i);
/* Input i's constant data (initializer or Constant output), or false. */
bool tr_const(tr *t, int i, dg_onnx_value *v);
/* Input i's type as the front end declares it (rank -1 if unknown). */
void tr_input_type(tr *t, int i, dg_onnx_value *v);
/* Input i as a tensor: built earlier, or now (a graph input or constant,
 * or a pending DequantizeLinear emitted). quant labels an integer tensor
 * created here; one that exists must already carry it. Fails (and returns
 * DG_TENSOR_NONE) when absent and not optional. */
dg_tensor tr_input(tr *t, int i, const dg_quant_params *quant, bool optional);
/* Binds output i to tensor x after checking it against the declared type. */
void tr_output(tr *t, int i, dg_tensor x);
/* Small constant inputs as numbers; false (failure recorded) otherwise.
 * what names the input in the reason. */
bool tr_const_floats(tr *t, int i, float *out, int max, int *count);
bool tr_const_ints(tr *t, int i, int64_t *out, int max, int *count);
bool tr_desc(tr *t, dg_tensor x, dg_tensor_desc *d);
/* Fails unless x is a float tensor (what: the input's ONNX name). */
bool tr_need_float(tr *t, dg_tensor x, const char *what);

/* Attributes of the current node, with defaults. */
/* Integer attributes are int64 in ONNX and int32 in the builder: a value
 * outside int32 fails the translation (INVALID_ARGUMENT, naming the
 * attribute and its value) and reads as def, so no cast can wrap it. */
int64_t tr_attr_int(tr *t, const char *name, int64_t def);
float tr_attr_float(const tr *t, const char *name, float def);
int tr_attr_ints(tr *t, const char *name, int64_t *out, int max);
/* Pooling's kernel_shape, strides, pads / auto_pad, dilations and
 * ceil_mode for x of desc d (1-D windows as 2-D of height 1); false
 * (failure recorded) when not expressible. count_include_pad is 0. */
bool tr_pool_params(tr *t, const dg_tensor_desc *d, dg_pool2d_params *p);
/* x [N,C,L] as [N,C,1,L] for a 1-D window (input i's constant data as a
 * new constant); x itself when not of rank 3. */
dg_tensor tr_as_2d(tr *t, int i, dg_tensor x);
/* A 1-D window's result [N,C,1,L'] back to [N,C,L'] (rank: the ONNX
 * input's); y itself when rank is not 3. */
dg_tensor tr_as_1d(tr *t, dg_tensor y, int rank);
/* Fails (false) when the node's kernel_shape, if any, is not w's. */
bool tr_conv_kernel_shape(tr *t, dg_tensor w);
/* Fails naming the first attribute of node n not in the row's list. */
bool tr_attrs_allowed(tr *t, const dg_onnx_node *n, const tr_op *row);
bool tr_is_op(const dg_onnx_node *n, const char *op);

/* Keeps p (malloc'd) until the translation ends; false (p freed) when it
 * cannot. */
bool tr_own(tr *t, void *p);

/* onnx_fold.c */
/* Folds the current node when its op is one of the fold table's and its
 * inputs are known at import (or, for Shape and Size, their shapes):
 * its outputs become constants and no node is built. true when handled
 * (folded, or refused: an op that only folds, on a run-time value). */
bool tr_try_const_fold(tr *t);
/* Whether the fold table has n's op. */
bool tr_fold_has(const dg_onnx_node *n);
/* The op table's handler of the ops that exist only as folds: reached
 * only when folding did not happen. */
void tr_op_fold_only(tr *t);
/* Squeeze and Unsqueeze of a run-time tensor: a reshape. */
void tr_op_squeeze(tr *t);
/* onnx_ops_movement.c: element e of a constant int32/int64 index
 * tensor c into an axis of length len, checked to lie in [-len, len)
 * (failure recorded naming "indices" and axis otherwise). Gather and
 * GatherElements read their indices with it. */
bool tr_index_at(tr *t, const dg_onnx_value *c, size_t e, int64_t len,
                 int64_t axis, int64_t *v);
/* onnx_ops_unary.c: every op that is one dg_graph_unary function (its
 * rows in the op table name it). */
void tr_op_unary(tr *t);
/* The current node's dg_unary_fn and parameters (attributes or ONNX's
 * defaults), for every op tr_op_unary runs and Sigmoid and Relu; false
 * (failure recorded) for another op or an unsupported attribute. */
bool tr_unary_fn(tr *t, dg_unary_fn *fn, float *alpha, float *beta);
bool tr_is_unary_fn(const dg_onnx_node *n); /* tr_unary_fn knows its op */

/* onnx_qdq.c */
/* Scale (input si) and zero point (zi, optional; -1: none) of the current
 * node as quant params, per-axis when there are several. */
bool tr_read_quant(tr *t, int si, int zi, int64_t axis, dg_quant_params *q,
                   tr_quant *buf, dg_dtype *zero_type);
/* DequantizeLinear -> Conv / MatMul / Gemm (-> Relu) -> QuantizeLinear as
 * one int8 op; false when the current node starts no such chain. */
bool tr_try_fold(tr *t);
/* Shared by the folds: the pending DequantizeLinear behind the current
 * node's input i, or -1; the one node reading name after the current one,
 * or -1; whether node n passes its row's opset and attribute checks; and
 * making node k current. */
int tr_dq_of(tr *t, int i);
int tr_sole_consumer(tr *t, const char *name);
bool tr_row_ok(const dg_onnx_node *n);
void tr_at(tr *t, int k);
/* onnx_qdq_ops.c: the int8 folds of the ops between convolutions:
 * DequantizeLinear -> Add / Sub / Mul (-> Relu), AveragePool,
 * GlobalAveragePool, Concat, a unary function, or a data movement op /
 * MaxPool -> QuantizeLinear, as qbinary, qavg_pool2d, qconcat, qunary or
 * the op on int8 (requantised when the QuantizeLinear's parameters are
 * not the input's). false when the current node starts no such chain. */
bool tr_try_fold_int8(tr *t);
void tr_op_quantize(tr *t);
void tr_op_dequantize(tr *t);
/* The current node, a DequantizeLinear, built as a float dequantize (of
 * its input labelled with its parameters): where a pending one is read
 * outside an int8 fold (onnx_translate.c's emit_dq). */
void tr_dq_emit(tr *t);
void tr_op_qlinear_conv(tr *t);
void tr_op_qlinear_matmul(tr *t);
/* onnx_ops_pool.c: LpPool and GlobalLpPool, composed of abs, pow,
 * avg_pool2d / reduce. */
void tr_op_lp_pool(tr *t);
void tr_op_global_lp_pool(tr *t);
/* onnx_ops_binary.c: the elementwise binary ops and the variadic ones. */
void tr_op_add(tr *t);
void tr_op_sub(tr *t);
void tr_op_mul(tr *t);
void tr_op_div(tr *t);
void tr_op_pow(tr *t);
void tr_op_mod(tr *t);
void tr_op_prelu(tr *t);
void tr_op_max(tr *t);
void tr_op_min(tr *t);
void tr_op_sum(tr *t);
void tr_op_mean(tr *t);
/* onnx_ops_movement.c */
void tr_op_transpose(tr *t);
void tr_op_slice(tr *t);
void tr_op_pad(tr *t);
void tr_op_expand(tr *t);
void tr_op_gather(tr *t);
void tr_op_split(tr *t);
void tr_op_depth_to_space(tr *t);
void tr_op_space_to_depth(tr *t);
void tr_op_tile(tr *t);
/* onnx_ops_reduce.c: every ReduceX op (by op_type), LogSoftmax,
 * LayerNormalization. */
void tr_op_reduce(tr *t);
void tr_op_log_softmax(tr *t);
void tr_op_layer_norm(tr *t);
/* Input b of a two-input elementwise op under the opset 1-6 broadcast and
 * axis attributes (as the op's B); from 7, b itself. */
dg_tensor tr_legacy_b(tr *t, dg_tensor a, dg_tensor b);
/* onnx_ops_compare.c: comparisons, logic, Where, IsNaN, IsInf, ArgMax,
 * ArgMin. */
void tr_op_equal(tr *t);
void tr_op_less(tr *t);
void tr_op_less_equal(tr *t);
void tr_op_greater(tr *t);
void tr_op_greater_equal(tr *t);
void tr_op_and(tr *t);
void tr_op_or(tr *t);
void tr_op_xor(tr *t);
void tr_op_not(tr *t);
void tr_op_isnan(tr *t);
void tr_op_isinf(tr *t);
void tr_op_where(tr *t);
void tr_op_argmax(tr *t);
void tr_op_argmin(tr *t);
/* The conv attributes of the current node for input x (onnx_op_table.c). */
bool tr_conv_params(tr *t, dg_tensor x, dg_conv2d_params *p);

/* onnx_ops_spatial.c */
void tr_op_resize(tr *t);
void tr_op_upsample(tr *t);
void tr_op_batch_norm(tr *t);
void tr_op_conv_transpose(tr *t);
void tr_op_cast(tr *t);
void tr_op_cast_like(tr *t);

/* onnx_ops_decomp.c: ops composed of other builder ops. */
void tr_op_nll_loss(tr *t);
void tr_op_sce_loss(tr *t);
void tr_op_global_max_pool(tr *t);
void tr_op_instance_norm(tr *t);
void tr_op_mvn(tr *t);
void tr_op_lp_norm(tr *t);
void tr_op_cumsum(tr *t);
void tr_op_hardmax(tr *t);
void tr_op_lrn(tr *t);
void tr_op_gather_elements(tr *t);
void tr_op_eye_like(tr *t);
void tr_op_trilu(tr *t);
void tr_op_einsum(tr *t);
/* LayerNormalization's Mean and InvStdDev (outputs 1, 2) of x over
 * [axis, rank), when used. */
void tr_layer_norm_stats(tr *t, dg_tensor x, int64_t axis, float eps);

/* The handlers of Conv and the pooling ops (onnx_ops_conv.c). */
void tr_op_conv(tr *t);
void tr_op_max_pool(tr *t);
void tr_op_avg_pool(tr *t);
void tr_op_global_avg_pool(tr *t);

#endif
