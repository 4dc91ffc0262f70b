/* Shows that the sanitizer builds still report our own bugs with every
 * device open (tests/run_tests.sh runs it under ASan and TSan):
 *   sanitizer_plant none   opens every device, runs a conv on each, exits
 *                          cleanly: no report may appear
 *   sanitizer_plant leak   the same, then leaks 77 bytes in plant_leak():
 *                          LeakSanitizer must name it
 *   sanitizer_plant race   the same, then two threads write one int in
 *                          plant_race(): ThreadSanitizer must name it
 *   sanitizer_plant lock_order  the same, then plant_lock_order() takes
 *                          two mutexes in both orders: ThreadSanitizer
 *                          must report the inversion
 * It prints nothing the suite counts; run_tests.sh checks the exit status
 * and the report. */
#include "graph.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int shared_counter;

__attribute__((noinline)) static void *plant_race(void *arg) {
  (void)arg;
  for (int i = 0; i < 1000; i++)
    shared_counter++;
  return NULL;
}

static pthread_mutex_t first = PTHREAD_MUTEX_INITIALIZER,
                       second = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void plant_lock_order(void) {
  pthread_mutex_lock(&first);
  pthread_mutex_lock(&second);
  pthread_mutex_unlock(&second);
  pthread_mutex_unlock(&first);
  pthread_mutex_lock(&second); /* the other order: a potential deadlock */
  pthread_mutex_lock(&first);
  pthread_mutex_unlock(&first);
  pthread_mutex_unlock(&second);
}

__attribute__((noinline)) static void plant_leak(void) {
  volatile char *p = malloc(77);
  if (p)
    p[0] = 1;
  p = NULL; /* the only pointer is gone */
}

/* A 3x3 conv on every device, so each driver is loaded and used. */
static int use_every_device(void) {
  dg_context *ctx;
  if (dg_context_create(NULL, &ctx) != DG_OK)
    return 1;
  static float w[4 * 2 * 9], x[2 * 8 * 8], y[4 * 8 * 8];
  for (int i = 0; i < 4 * 2 * 9; i++)
    w[i] = (float)(i % 5) - 2;
  int bad = 0;
  for (int d = 0; d < dg_context_device_count(ctx); d++) {
    dg_tensor_desc xd = {
        .dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, 2, 8, 8}};
    dg_tensor_desc wd = {
        .dtype = DG_DTYPE_F32, .rank = 4, .dims = {4, 2, 3, 3}};
    dg_tensor_desc yd = {
        .dtype = DG_DTYPE_F32, .rank = 4, .dims = {1, 4, 6, 6}};
    dg_status st = dg_oneshot_conv2d(ctx, d, &xd, x, &wd, w, NULL, NULL, NULL,
                                     &yd, y, 4 * 36 * sizeof(float), NULL);
    /* Devices that do not run f32 (the NPU) decline; others must run. */
    bad |= st != DG_OK && st != DG_ERROR_UNSUPPORTED;
  }
  dg_context_destroy(ctx);
  return bad;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "none") && strcmp(mode, "leak") && strcmp(mode, "race") &&
      strcmp(mode, "lock_order")) {
    fprintf(stderr, "usage: sanitizer_plant none|leak|race|lock_order\n");
    return 2;
  }
  if (use_every_device()) {
    fprintf(stderr, "sanitizer_plant: a device failed the conv\n");
    return 3;
  }
  if (!strcmp(mode, "leak"))
    plant_leak();
  if (!strcmp(mode, "lock_order"))
    plant_lock_order();
  if (!strcmp(mode, "race")) {
    pthread_t a, b;
    pthread_create(&a, NULL, plant_race, NULL);
    pthread_create(&b, NULL, plant_race, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
  }
  printf("sanitizer_plant %s: done\n", mode);
  return 0;
}
