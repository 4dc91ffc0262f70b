/* The NPU lowering and generators' reasons for declining: a printf-style
 * sentence into the caller's buffer, for the plan or an error. */
#ifndef DG_NPU_WHY_H
#define DG_NPU_WHY_H

#include <stdbool.h>
#include <stddef.h>

/* Writes the reason into why[n] (truncated to fit) and returns false, so
 * that `return dg_npu_why(why, n, "...", ...);` declines in one line. */
bool dg_npu_why(char *why, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
