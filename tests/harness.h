/* A tiny test harness: every check prints one line, "ok - ..." or
 * "FAIL - ...", and tests/run_tests.sh counts them. A case that cannot run
 * here prints "skipped: <why>" and counts as neither. */
#ifndef DG_TEST_HARNESS_H
#define DG_TEST_HARNESS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static __attribute__((unused)) int t_failures;

static __attribute__((unused)) void t_report(int ok, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static __attribute__((unused)) void t_report(int ok, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%s - ", ok ? "ok" : "FAIL");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
  if (!ok)
    t_failures++;
}

#define CHECK(cond, ...) t_report((cond) ? 1 : 0, __VA_ARGS__)

static __attribute__((unused)) void t_skip(const char *why) {
  printf("skipped: %s\n", why);
  fflush(stdout);
}

static __attribute__((unused)) int t_exit(void) { return t_failures ? 1 : 0; }

/* A whole file, malloc'd (the caller frees it), or NULL; *size its
 * length. */
static __attribute__((unused)) void *t_read_file(const char *path,
                                                 size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  void *p = n >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc(n > 0 ? (size_t)n : 1)
                                                 : NULL;
  if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
    free(p);
    p = NULL;
  }
  fclose(f);
  *size = p ? (size_t)n : 0;
  return p;
}

/* Deterministic xorshift random numbers (tests must be reproducible). */
static __attribute__((unused)) unsigned long long t_rng = 0x9e3779b97f4a7c15ull;
static __attribute__((unused)) void t_seed(unsigned long long s) { t_rng = s ? s : 1; }
static __attribute__((unused)) unsigned t_rand(void) {
  t_rng ^= t_rng << 13;
  t_rng ^= t_rng >> 7;
  t_rng ^= t_rng << 17;
  return (unsigned)(t_rng >> 11);
}
static __attribute__((unused)) int t_range(int lo, int hi) { /* inclusive */
  return lo + (int)(t_rand() % (unsigned)(hi - lo + 1));
}
static __attribute__((unused)) float t_uniform(float lo, float hi) {
  return lo + (hi - lo) * (float)(t_rand() & 0xffffff) / 16777216.0f;
}

#endif
