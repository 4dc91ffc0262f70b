/* The progress line (bench_progress.h). */
#define _POSIX_C_SOURCE 200809L
#include "bench_progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static struct {
  int tty, rows, shown;
  double t0, expected_s;
} pg;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void bench_progress_start(double expected_s) {
  pg.tty = isatty(STDERR_FILENO);
  pg.t0 = now_s();
  pg.expected_s = expected_s;
  pg.rows = pg.shown = 0;
}

void bench_progress_clear(void) {
  if (pg.tty && pg.shown) {
    fputs("\r\033[K", stderr);
    pg.shown = 0;
  }
}

void bench_progress_row(void) {
  pg.rows++;
  if (!pg.tty)
    return;
  fflush(stdout);
  fprintf(stderr, "dg-bench: %d rows, %.0f s of about %.0f s\r", pg.rows,
          now_s() - pg.t0, pg.expected_s);
  fflush(stderr);
  pg.shown = 1;
}
