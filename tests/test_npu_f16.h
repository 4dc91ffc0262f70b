/* The fp16 conv task's generator/simulator/vendor-stream checks
 * (test_npu_f16.c), run by test_npu.c. */
#ifndef TEST_NPU_F16_H
#define TEST_NPU_F16_H

#include "test_npu_target.h"

void npu_f16_tests(npu_check_fn check, const char *golden_dir);

#endif
