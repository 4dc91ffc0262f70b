/* The NPU target's library-level checks (test_npu_target.c) and LeNet
 * (test_npu_lenet.c), run by test_npu.c. */
#ifndef TEST_NPU_TARGET_H
#define TEST_NPU_TARGET_H

typedef void (*npu_check_fn)(int ok, const char *what);

void npu_target_tests(npu_check_fn check);
void npu_lenet_tests(npu_check_fn check);
void npu_pool_tests(npu_check_fn check); /* test_npu_pool.c */

#endif
