/* Shared helpers of the TVM entry points: error raising, argument decoding
 * and the per-process context. Nothing here is exported. */
#ifndef DG_TVM_INTERNAL_H
#define DG_TVM_INTERNAL_H

#include "dg_tvm.h"

#include <stdbool.h>

/* ---- errors (tvm_errors.c) ---- */

/* Formats the message, keeps it for dg_tvm_last_error and raises it through
 * libtvm_ffi when loaded. Always returns -1, so `return dg_tvm_fail(...)`. */
int dg_tvm_fail(const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Maps a library status and diagnostic to a raised error; returns -1. */
int dg_tvm_fail_status(const char *fn, dg_status st,
                       const dg_diagnostic *diag);

/* ---- arguments (tvm_args.c) ---- */

/* One tensor argument, seen as a compact NCHW host buffer. */
typedef struct dg_tvm_tensor {
  const dg_dl_tensor *dl; /* NULL for an absent optional tensor */
  dg_tensor_desc desc;    /* dtype and dims (quant left zero) */
  void *data;   /* compact data: the caller's memory, or owned */
  void *owned;  /* a compact copy, for strided/misaligned tensors */
  size_t bytes; /* size of the compact data */
} dg_tvm_tensor;

/* Checks that exactly `expected` arguments came. */
int dg_tvm_arity(const char *fn, int32_t num_args, int expected);
/* Decodes args[i] as a host tensor. Inputs that are not compact (or whose
 * data is misaligned for the dtype) are gathered into an owned copy;
 * outputs get an owned buffer that dg_tvm_tensor_finish scatters back.
 * With optional, None gives t->dl == NULL. */
int dg_tvm_tensor_get(const char *fn, const dg_ffi_any *args, int i,
                      const char *name, bool optional, bool output,
                      dg_tvm_tensor *t);
/* Writes an output's owned buffer back through its strides, then frees. */
void dg_tvm_tensor_finish(dg_tvm_tensor *t);
/* Frees an owned copy (safe on zeroed or absent tensors). */
void dg_tvm_tensor_release(dg_tvm_tensor *t);
/* Requires t's dtype to be one of mask (bits 1u << dg_dtype). */
int dg_tvm_dtype_in(const char *fn, const dg_tvm_tensor *t, const char *name,
                    unsigned mask);
/* Requires rank r. */
int dg_tvm_rank_is(const char *fn, const dg_tvm_tensor *t, const char *name,
                   int r);
/* Requires y's dims to equal dims[rank]. */
int dg_tvm_shape_is(const char *fn, const dg_tvm_tensor *y, const char *name,
                    int rank, const int64_t *dims);
/* Int (or Bool) and Float (or Int) scalar arguments. */
int dg_tvm_int_get(const char *fn, const dg_ffi_any *args, int i,
                   const char *name, int64_t lo, int64_t hi, int64_t *out);
int dg_tvm_float_get(const char *fn, const dg_ffi_any *args, int i,
                     const char *name, double *out);
/* Sets *result to None. */
void dg_tvm_result_none(dg_ffi_any *result);
/* "[1, 3, 32, 32]" */
void dg_tvm_format_dims(char *buf, size_t size, int rank,
                        const int64_t *dims);

#define DG_TVM_BIT(t) (1u << (t))
#define DG_TVM_FLOATS (DG_TVM_BIT(DG_DTYPE_F32) | DG_TVM_BIT(DG_DTYPE_F16))
#define DG_TVM_Q8 (DG_TVM_BIT(DG_DTYPE_I8) | DG_TVM_BIT(DG_DTYPE_U8))

/* ---- context (tvm_context.c) ---- */

/* Takes the process-wide lock and returns the context (created on first
 * use) and the device index from $DG_TVM_DEVICE (-1: auto). On failure it
 * raises, releases the lock and returns -1. */
int dg_tvm_enter(const char *fn, dg_context **ctx, int *device);
void dg_tvm_leave(void);

/* A one-node session for a single-input op, memoised by key (zero it
 * before filling so padding compares equal). Call under dg_tvm_enter. */
typedef struct dg_tvm_unary_key {
  dg_op op;
  int device;
  dg_tensor_desc x; /* dtype, rank, dims, quant */
  dg_pool2d_params pool;
  int32_t axis;
} dg_tvm_unary_key;
int dg_tvm_unary_session(const char *fn, dg_context *ctx,
                         const dg_tvm_unary_key *key, dg_session **out);

#endif
