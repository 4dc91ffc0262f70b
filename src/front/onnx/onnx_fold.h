/* The import-time folds' values and helpers (onnx_fold.c's table;
 * onnx_fold_value.c reads and writes the values, onnx_fold_shape.c and
 * onnx_fold_math.c fold the ops). Internal to the ONNX front end. */
#ifndef DG_ONNX_FOLD_H
#define DG_ONNX_FOLD_H

#include "onnx_tr.h"

#include "core/half.h"

/* 4M elements: a 2048 x 2048 weight transposed at import folds; more
 * would let a hostile model spend seconds (a fuzzed Range of 9.5M
 * elements feeding a Where took over 10 s under the fuzzer). */
#define FOLD_MAX_ELEMENTS ((size_t)1 << 22)

enum { ONNX_BOOL = 9, ONNX_DOUBLE = 11 };

typedef struct fv {
  int elem; /* DG_ONNX_* or ONNX_BOOL / ONNX_DOUBLE */
  int rank;
  int64_t dims[DG_MAX_RANK];
  size_t count;
  int64_t *i; /* integer and bool elements */
  double *f;  /* float elements */
} fv;

/* The binary functions fold_binary computes (onnx_fold_math.c). */
enum {
  BW_ADD,
  BW_SUB,
  BW_MUL,
  BW_DIV,
  BW_MOD,
  BW_MIN,
  BW_MAX,
  BW_EQ,
  BW_LT,
  BW_GT,
  BW_LE,
  BW_GE,
  BW_AND,
  BW_OR,
  BW_XOR
};

bool tr_is_float_elem(int e);
void tr_fv_free(fv *v);
size_t tr_dims_count(int rank, const int64_t *dims);
bool tr_fv_alloc(tr *t, fv *v, int elem, int rank, const int64_t *dims);
bool tr_fv_read(tr *t, int i, fv *v);
double tr_fv_get(const fv *v, size_t k);
int64_t tr_fv_geti(const fv *v, size_t k);
void tr_fv_emit(tr *t, int o, fv *v);
bool tr_bcast(const fv *a, const fv *b, int *rank, int64_t *dims);
size_t tr_bidx(const fv *v, int r, const int64_t *dims, size_t k);
int64_t tr_norm_axis(int64_t a, int rank);
void tr_fold_shape(tr *t);
void tr_fold_size(tr *t);
void tr_fold_identity(tr *t, fv *in);
void tr_fold_cast(tr *t, fv *in);
int tr_read_axes(tr *t, int since, int64_t *axes, int max);
bool tr_squeeze_dims(tr *t, bool unsqueeze, int rank, const int64_t *dims,
                     int *orank, int64_t *odims);
void tr_fold_squeeze(tr *t, fv *in);
void tr_fold_reshape(tr *t, fv *in);
void tr_fold_gather(tr *t, fv *in);
void tr_fold_concat(tr *t, fv *in, int n);
void tr_fold_slice(tr *t, fv *in, int n);
void tr_fold_range(tr *t, fv *in);
void tr_fold_constant_of_shape(tr *t, fv *in);
void tr_fold_expand(tr *t, fv *in);
double tr_f_neg(double x);
double tr_f_not(double x);
double tr_f_sign(double x);
void tr_fold_unary(tr *t, fv *in, double (*f)(double));
void tr_fold_window(tr *t, fv *in);
bool tr_is_compare(int fn);
void tr_fold_binary(tr *t, fv *in, int n, int fn);
void tr_fold_where(tr *t, fv *in);
void tr_fold_transpose(tr *t, fv *in);
void tr_fold_flatten(tr *t, fv *in);

#endif
