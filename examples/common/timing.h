/* Wall-clock timing for the examples and tools: microseconds from a
 * monotonic clock, and the median of a set of samples. */
#ifndef DG_EXAMPLES_TIMING_H
#define DG_EXAMPLES_TIMING_H

#include <stdlib.h>
#include <time.h>

static inline double timing_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static inline int timing_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts samples[0..n) in place and returns the median (0 for none). */
static inline double timing_median(double *samples, int n) {
  if (n <= 0)
    return 0;
  qsort(samples, (size_t)n, sizeof samples[0], timing_cmp);
  return samples[n / 2];
}

#endif
