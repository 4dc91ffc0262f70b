/* The graph IR shared by the builder, the ops, the placer, the sessions and
 * the targets. Plain structs; the public header never shows them.
 *
 * Tensor ids are 1-based indices into dg_ir.tensors (0 is "none"); nodes are
 * kept in the order the builder added them, which is a topological order
 * because a node can only consume tensors that already exist.
 */
#ifndef DG_IR_H
#define DG_IR_H

#include "graph.h"
#include <stdatomic.h>
#include <stdbool.h>

/* Constant data shared by a graph and the sessions compiled from it.
 * refs is atomic: sessions of one graph are compiled and destroyed on
 * any threads. */
typedef struct dg_blob {
  atomic_int refs;
  const void *data;
  void *owned; /* NULL when lent by the caller */
  size_t size;
} dg_blob;

typedef enum dg_tensor_kind {
  DG_TENSOR_INPUT,
  DG_TENSOR_CONSTANT,
  DG_TENSOR_VALUE, /* produced by a node */
} dg_tensor_kind;

/* Every name below is an owned, NUL-terminated heap copy of any length,
 * never NULL once added (freed by dg_ir_free, copied by dg_ir_clone). */
typedef struct dg_tensor_info {
  char *name;
  dg_tensor_kind kind;
  dg_tensor_desc desc; /* quant arrays point at the owned copies below */
  float *channel_scales;
  int32_t *channel_zero_points;
  int producer;      /* node index, -1 for inputs and constants */
  dg_blob *constant; /* for DG_TENSOR_CONSTANT */
} dg_tensor_info;

/* Every op's parameters, resolved at build time (no unions: each op reads
 * only the fields its line of src/ops/ops.def names, DG_P_* below; the
 * others are zero). */
typedef struct dg_node_params {
  int32_t stride[2], dilation[2], pads[4], kernel[2], groups;
  int32_t ceil_mode, count_include_pad;
  dg_activation activation;
  int32_t axis;
  float clip_lo, clip_hi;
  int32_t perm[DG_MAX_RANK];                       /* out axis d <- perm[d] */
  int64_t starts[DG_MAX_RANK], steps[DG_MAX_RANK]; /* first index; non-zero */
  int64_t pad_begin[DG_MAX_RANK], pad_end[DG_MAX_RANK];
  int32_t pad_mode;   /* dg_pad_mode */
  float pad_value;    /* real value (quantised by the kernels' view) */
  int32_t fn;         /* the op's function kind (reduce: a dg_reduce_fn) */
  uint32_t axes_mask; /* reduce: bit d set where axis d is reduced */
  int32_t keepdims;   /* reduce: 1 where reduced axes stay as 1 */
  float epsilon;      /* normalisations: added to the variance */
  float alpha, beta;  /* unary: the function's parameters */
  /* resize: dg_resize_mode, dg_resize_coord, dg_resize_nearest, and the
   * H and W scales of the coordinate transform (resolved: never 0). */
  int32_t resize_mode, resize_coord, resize_nearest;
  float resize_scales[2];
  int32_t output_padding[2]; /* conv_transpose2d: rows, columns */
  int32_t select_last_index; /* arg_reduce: ties go to the last index */
} dg_node_params;

/* The fields of dg_node_params, as bits for ops.def's "reads" column. */
enum {
  DG_P_STRIDE = 1 << 0,
  DG_P_DILATION = 1 << 1,
  DG_P_PADS = 1 << 2,
  DG_P_KERNEL = 1 << 3,
  DG_P_GROUPS = 1 << 4,
  DG_P_CEIL_MODE = 1 << 5,
  DG_P_COUNT_INCLUDE_PAD = 1 << 6,
  DG_P_ACTIVATION = 1 << 7,
  DG_P_AXIS = 1 << 8,
  DG_P_CLIP = 1 << 9, /* clip_lo and clip_hi */
  DG_P_FN = 1 << 10,
  DG_P_PERM = 1 << 18,
  DG_P_SLICE = 1 << 19, /* starts and steps */
  DG_P_PAD = 1 << 20,   /* pad_begin, pad_end, pad_mode, pad_value */
  DG_P_AXES = 1 << 14,  /* axes_mask and keepdims */
  DG_P_EPSILON = 1 << 15,
  DG_P_ALPHA = 1 << 11,  /* alpha and beta */
  DG_P_RESIZE = 1 << 24, /* resize_mode, _coord, _nearest, _scales */
  DG_P_OUTPUT_PADDING = 1 << 25,
  DG_P_SELECT_LAST = 1 << 26,
};
/* The DG_P_* bits of the fields of p that are not zero. */
unsigned dg_node_params_set(const dg_node_params *p);

typedef struct dg_node {
  dg_op op;
  char *name;       /* as given, or "<op>_<index>" */
  uint32_t *inputs; /* tensor ids; 0 for an absent optional input */
  int input_count;
  uint32_t output;
  int pinned_device; /* -1: none */
  dg_node_params p;
} dg_node;

typedef struct dg_io_binding {
  char *name;
  uint32_t tensor;
  dg_layout layout;
  /* The tensor is held in f16 but bound as f32 (DG_PRECISION_FAST_F16:
   * the session converts at each run). */
  bool host_f32;
} dg_io_binding;

typedef struct dg_ir {
  dg_tensor_info *tensors;
  int tensor_count, tensor_cap;
  dg_node *nodes;
  int node_count, node_cap;
  dg_io_binding *inputs;
  int input_count;
  dg_io_binding *outputs;
  int output_count;
} dg_ir;

static inline dg_tensor_info *dg_ir_tensor(const dg_ir *ir, uint32_t id) {
  return (id >= 1 && (int)id <= ir->tensor_count) ? &ir->tensors[id - 1] : NULL;
}
/* Tensor id's descriptor (id valid). */
static inline const dg_tensor_desc *dg_ir_desc(const dg_ir *ir, uint32_t id) {
  return &dg_ir_tensor(ir, id)->desc;
}

/* The descriptor of an input or output as the caller binds it (f32 where
 * the session holds an f16 tensor for it). */
static inline dg_tensor_desc dg_ir_io_desc(const dg_ir *ir,
                                           const dg_io_binding *b) {
  dg_tensor_desc d = dg_ir_tensor(ir, b->tensor)->desc;
  if (b->host_f32)
    d.dtype = DG_DTYPE_F32;
  return d;
}

/* d seen as [outer, dims[axis], inner]: the products of the dims before
 * and after axis (softmax, concat and the axis reductions walk so). */
static inline void dg_desc_split(const dg_tensor_desc *d, int axis,
                                 int64_t *outer, int64_t *inner) {
  *outer = *inner = 1;
  for (int i = 0; i < axis; i++)
    *outer *= d->dims[i];
  for (int i = axis + 1; i < d->rank; i++)
    *inner *= d->dims[i];
}

/* Element count and byte size of a descriptor (no overflow: checked when
 * the tensor was made). */
int64_t dg_desc_elements(const dg_tensor_desc *d);
/* Bytes node n reads and writes: its inputs' and its output's (the memory
 * traffic every target's cost model starts from). */
double dg_node_io_bytes(const dg_ir *ir, const dg_node *n);
size_t dg_desc_bytes(const dg_tensor_desc *d);

/* An owned copy of a name (NULL gives ""), or NULL when out of memory.
 * Through malloc, not strdup, so that tests/test_oom.c's injected
 * failures reach every name the library keeps. */
char *dg_name_dup(const char *name);

/* Deep copy (constants shared by reference count); false on OOM. */
bool dg_ir_clone(const dg_ir *src, dg_ir *dst);
void dg_ir_free(dg_ir *ir);
void dg_blob_release(dg_blob *b);

/* Per-channel helpers for quantised tensors: the scale / zero point of
 * channel c (the per-tensor value when not per-channel). */
static inline float dg_quant_scale(const dg_tensor_desc *d, int64_t c) {
  return d->quant.channel_count ? d->quant.channel_scales[c] : d->quant.scale;
}
static inline int32_t dg_quant_zero(const dg_tensor_desc *d, int64_t c) {
  if (!d->quant.channel_count)
    return d->quant.zero_point;
  return d->quant.channel_zero_points ? d->quant.channel_zero_points[c] : 0;
}

/* Integer range of a dtype (i8, u8, i32). */
void dg_dtype_int_range(dg_dtype t, int64_t *lo, int64_t *hi);

#endif
