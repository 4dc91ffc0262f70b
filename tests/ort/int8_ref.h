/* Integer references for ort_host's int8 models (QLinearConv and
 * QLinearMatMul with one node), read from the NAME.qref files that
 * gen_models.py writes next to each model.
 *
 * Two results per model:
 *   - the exact one: int32 accumulation of (x - zx) * (w - zw), then
 *     requantisation as docs/numerics.md defines it;
 *   - the one ONNX Runtime's x86 U8S8 kernels without VNNI (AVX2, AVX512
 *     core) give: they multiply raw u8 activations by s8 weights with
 *     vpmaddubsw, which adds each pair of adjacent K products into an int16
 *     with signed saturation (the facts, and the ORT sources they come
 *     from, are in int8_ref.c).
 *
 * ort_u8s8_kernel() tells which of the two ORT's CPU EP computes on this
 * CPU, deciding from cpuid as MLAS does. */
#ifndef DG_ORT_INT8_REF_H
#define DG_ORT_INT8_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { QREF_U8, QREF_I8 } qref_dtype;

typedef struct qref_model {
  char op[32]; /* "QLinearConv" or "QLinearMatMul" */
  qref_dtype xtype, wtype, ytype;
  int xrank, wrank;
  int64_t xdims[4], wdims[4];
  int32_t *w; /* weight values, row-major, wdims' product of them */
  float xscale, yscale;
  float *wscale; /* 1, or one per output channel */
  int nwscale;
  int32_t xzero, yzero;
  int32_t *wzero; /* 1, or one per output channel */
  int nwzero;
  int32_t *bias; /* NULL, or one per output channel (conv only) */
  int nbias;
  int pads[4]; /* top, left, bottom, right */
  int strides[2], dilations[2], group;
  /* The generator's data is meant to saturate the vpmaddubsw path: fail
   * when it does not, since the check would then prove nothing. */
  bool must_saturate;
} qref_model;

typedef enum {
  QREF_EXACT,
  QREF_U8S8_PAIRS16 /* ORT's vpmaddubsw U8S8 kernels (see int8_ref.c) */
} qref_mode;

typedef struct qref_stats {
  size_t pairs;           /* K pairs summed (QREF_U8S8_PAIRS16) */
  size_t saturated_pairs; /* of them, the ones outside int16 */
} qref_stats;

bool qref_load(const char *path, qref_model *q, char *why, size_t len);
void qref_free(qref_model *q);
size_t qref_output_count(const qref_model *q);

/* Computes the model's output for input x (u8 or i8 bytes, xdims) into y
 * (qref_output_count bytes, u8 or i8). For QREF_U8S8_PAIRS16, false with
 * why set where the prediction does not model ORT's kernel for this
 * model (another MLAS path runs, or no U8S8 kernel at all). */
bool qref_compute(const qref_model *q, const void *x, qref_mode mode, void *y,
                  qref_stats *st, char *why, size_t len);

typedef struct ort_u8s8_kernel {
  const char *name;
  bool saturates; /* vpmaddubsw-based: QREF_U8S8_PAIRS16 applies */
} ort_u8s8_kernel;

/* The U8S8 QGEMM kernel ONNX Runtime 1.30's MLAS selects on this CPU. */
ort_u8s8_kernel ort_u8s8_kernel_here(void);

#endif
