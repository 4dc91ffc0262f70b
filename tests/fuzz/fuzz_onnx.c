/* libFuzzer harness for the ONNX importer: any byte string must give a
 * graph or an error, never a crash, a hang, a leak or an unbounded
 * allocation. What imports is also compiled, to run the builder's and the
 * placer's checks on whatever shapes the fuzzer invents.
 *
 *   tests/fuzz/run.sh [seconds]     (builds with clang, runs on the corpus)
 */
#include "graph.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static dg_context *ctx;
  if (!ctx) {
    dg_context_options o = {.device_kinds = DG_DEVICE_CPU, .cpu_threads = 1,
                            .disable_cache = 1};
    if (dg_context_create(&o, &ctx) != DG_OK)
      return 0;
  }
  dg_graph *g = NULL;
  dg_diagnostic d;
  dg_onnx_options opts = {.symbolic_dim_value = 2};
  if (dg_onnx_load_memory(ctx, data, size, &opts, &g, &d) == DG_OK) {
    dg_session *s = NULL;
    if (dg_graph_compile(g, NULL, &s, &d) == DG_OK)
      dg_session_destroy(s);
    dg_graph_destroy(g);
  }
  return 0;
}
