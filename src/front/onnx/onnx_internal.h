/* Private to the ONNX importer (src/onnx): the model as the translator
 * (onnx_translate.h) reads it. The importer only uses the public builder
 * API of include/graph.h (and the header-only name shortening of
 * src/core/names.h for its diagnostics). */
#ifndef DG_ONNX_INTERNAL_H
#define DG_ONNX_INTERNAL_H

#include "graph.h"
#include "name_map.h"
#include "onnx.pb-c.h"
#include "onnx_translate.h"

#include <stdbool.h>

/* One named value of the model as the front end knows it. */
typedef struct onnx_value {
  const char *name;                  /* owned by the unpacked model */
  const Onnx__TensorProto *init;     /* initializer, or NULL */
  const Onnx__ValueInfoProto *input; /* graph input (not frozen), or NULL */
  const Onnx__ValueInfoProto *info;  /* graph output or value_info */
  const dg_onnx_constant *frozen;    /* dg_onnx_options.constants entry */
  bool output;                       /* a graph output */
  /* init decoded once, on first use */
  bool decoded;
  dg_onnx_value cv;
  void *data; /* owned here */
  char error[256];
} onnx_value;

/* The source over one ModelProto (onnx_source.c). */
typedef struct onnx_source {
  const Onnx__GraphProto *gp;
  int64_t opset;
  int64_t symbolic_dim_value;
  const char *base_dir; /* external data's folder, or NULL */
  onnx_value *vals;
  int nvals;
  dg_name_map names;              /* name -> index into vals */
  const char **outputs, **inputs; /* names, for dg_onnx_source */
  const char **attr_names;        /* every node's, in one array */
  const char **empty_names;       /* NULL entries of node inputs, as "" */
  void **owned; /* decoded Constant-node tensors and their errors */
  int nowned;
} onnx_source;

/* Lays out the value table of m's graph and fills *src for
 * dg_onnx_translate. false with (field, msg) set on a malformed graph or
 * bad constants; s is freed by onnx_source_free in every case. */
bool onnx_source_init(onnx_source *s, const Onnx__GraphProto *gp, int64_t opset,
                      const dg_onnx_options *opts, dg_onnx_source *src,
                      dg_status *st, const char **field, char *msg, size_t len);
void onnx_source_free(onnx_source *s);

/* Decodes a TensorProto: dtype, dims and a malloc'd copy of the data (int64
 * as i64, bool as one byte each). false (with err) on anything malformed. */
bool onnx_tensor_decode(const Onnx__TensorProto *t, dg_tensor_desc *desc,
                        void **data, char *err, size_t err_size);
/* The same, keeping int64 as int64: *v gets kind CONST, the ONNX element
 * type, dims and count, and v->data = *data (malloc'd, the caller's).
 * External data is read from base_dir (the model's folder; NULL: refused,
 * naming the option). */
bool onnx_tensor_read(const Onnx__TensorProto *t, const char *base_dir,
                      dg_onnx_value *v, void **data, char *err,
                      size_t err_size);
/* A tensor's external data, want bytes, read from under base_dir
 * (onnx_external.c says what is refused); *bytes is malloc'd, the
 * caller's. false with err otherwise. */
bool onnx_external_read(const Onnx__TensorProto *t, const char *base_dir,
                        size_t want, uint8_t **bytes, char *err,
                        size_t err_size);
dg_dtype onnx_dtype(int32_t elem_type);

/* Messages nested deeper than this are refused before unpacking
 * (onnx_nesting.c): protobuf-c recurses once per level. */
#define ONNX_MAX_NESTING 256
/* false (err filled) when data's messages nest deeper than max_depth;
 * true otherwise, malformed data included (protobuf-c refuses that). */
bool onnx_nesting_ok(const void *data, size_t size, int max_depth, char *err,
                     size_t err_size);

#endif
