/* The monotonic clock the library times with (node times, deadlines,
 * spin budgets). */
#ifndef DG_CLOCK_H
#define DG_CLOCK_H

#include <stdint.h>

/* Nanoseconds of CLOCK_MONOTONIC. */
int64_t dg_clock_ns(void);

#endif
