/* npu-hw-check's cases through the library (npu_hw_lib.c): a node of
 * several tasks chained in one job and the cube hand-off to the node after
 * it, under each core mode (DG_NPU_CORES 1, 3, auto); the device spec
 * DG_NPU_DEVICE names (NULL: discovery). Prints a table row per mode;
 * returns the number failing (a split rocket refuses is skipped). */
#ifndef DG_NPU_HW_LIB_H
#define DG_NPU_HW_LIB_H

int npu_hw_lib_cases(const char *spec);

#endif
