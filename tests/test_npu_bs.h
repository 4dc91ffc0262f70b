/* Per-channel requantisation on the BS multiplier (test_npu_bs.c), run by
 * test_npu.c. */
#ifndef TEST_NPU_BS_H
#define TEST_NPU_BS_H

#include "test_npu_target.h"

void npu_bs_tests(npu_check_fn check);

#endif
