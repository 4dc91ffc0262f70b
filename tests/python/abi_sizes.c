/* Prints sizeof and every field's offset of graph.h's public structs, one
 * "struct field offset" line each ("struct - size" for the size), so that
 * test_python.py can check that the layouts cffi derives from the
 * declarations (python/gen_cdef.py) are the C compiler's. */
#include "graph.h"

#include <stddef.h>
#include <stdio.h>

#define SIZE(s) printf("%s - %zu\n", #s, sizeof(s))
#define FIELD(s, f) printf("%s %s %zu\n", #s, #f, offsetof(s, f))

int main(void) {
  SIZE(dg_context_options);
  FIELD(dg_context_options, log_level);
  FIELD(dg_context_options, cache_dir);
  FIELD(dg_context_options, device_timeout_ms);
  SIZE(dg_device_info);
  FIELD(dg_device_info, driver);
  FIELD(dg_device_info, ops);
  FIELD(dg_device_info, f16_max_ulp_deviation);
  FIELD(dg_device_info, cpu_hosted);
  SIZE(dg_quant_params);
  FIELD(dg_quant_params, channel_scales);
  SIZE(dg_tensor_desc);
  FIELD(dg_tensor_desc, dims);
  FIELD(dg_tensor_desc, quant);
  SIZE(dg_tensor);
  SIZE(dg_diagnostic);
  FIELD(dg_diagnostic, field);
  FIELD(dg_diagnostic, message);
  SIZE(dg_io_info);
  FIELD(dg_io_info, layout);
  SIZE(dg_conv2d_params);
  FIELD(dg_conv2d_params, activation);
  SIZE(dg_pool2d_params);
  FIELD(dg_pool2d_params, dilation);
  SIZE(dg_resize_params);
  FIELD(dg_resize_params, sizes);
  SIZE(dg_compile_options);
  FIELD(dg_compile_options, devices);
  FIELD(dg_compile_options, profile);
  FIELD(dg_compile_options, precision);
  SIZE(dg_plan_node);
  FIELD(dg_plan_node, estimated_us);
  FIELD(dg_plan_node, measured_us);
  FIELD(dg_plan_node, f16_max_ulp_deviation);
  FIELD(dg_plan_node, compute_dtype);
  SIZE(dg_binding);
  FIELD(dg_binding, size);
  SIZE(dg_verify_report);
  FIELD(dg_verify_report, max_abs_error);
  FIELD(dg_verify_report, tolerance);
  SIZE(dg_onnx_constant);
  SIZE(dg_onnx_options);
  FIELD(dg_onnx_options, external_data_dir);
  return 0;
}
