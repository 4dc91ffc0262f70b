/* Built when ONNX import is not (-Donnx=disabled, or protobuf-c, protoc-c
 * or onnx.proto missing): the ONNX entry points exist and say why they
 * cannot work. src/front/onnx/meson.build passes the reason as DG_ONNX_WHY. */
#include "graph.h"

#include <stdio.h>
#include <string.h>

#ifndef DG_ONNX_WHY
#define DG_ONNX_WHY "protobuf-c, protoc-c or onnx.proto missing"
#endif

static dg_status unavailable(dg_graph **out, dg_diagnostic *diag) {
  if (out)
    *out = NULL;
  if (diag) {
    memset(diag, 0, sizeof *diag);
    diag->status = DG_ERROR_UNSUPPORTED;
    diag->node_index = -1;
    snprintf(diag->message, sizeof diag->message,
             "onnx: this build of directgraph has no ONNX support "
             "(" DG_ONNX_WHY ")");
  }
  return DG_ERROR_UNSUPPORTED;
}

dg_status dg_onnx_load(dg_context *ctx, const char *path,
                       const dg_onnx_options *opts, dg_graph **out,
                       dg_diagnostic *diag) {
  (void)ctx, (void)path, (void)opts;
  return unavailable(out, diag);
}

dg_status dg_onnx_load_memory(dg_context *ctx, const void *data, size_t size,
                              const dg_onnx_options *opts, dg_graph **out,
                              dg_diagnostic *diag) {
  (void)ctx, (void)data, (void)size, (void)opts;
  return unavailable(out, diag);
}
