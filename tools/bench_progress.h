/* dg-bench's progress line: on a terminal (stderr a tty), after each
 * table row, "dg-bench: 12 rows, 34 s of about 60 s", rewritten in place
 * and cleared before the next row prints; nothing at all when stderr is
 * not a terminal, so piped and logged runs stay clean. */
#ifndef DG_BENCH_PROGRESS_H
#define DG_BENCH_PROGRESS_H

/* Starts the clock; expected_s is the run's estimate (printed once). */
void bench_progress_start(double expected_s);
/* Call before printing a row (clears the line) and after (redraws it). */
void bench_progress_clear(void);
void bench_progress_row(void);

#endif
