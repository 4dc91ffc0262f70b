/* Backend selection (DG_NPU_DEVICE and discovery) and shared helpers. */
#include "backend.h"
#include "core/env.h"
#include "regs.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

int dg_npu_errf(char *err, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (err && n)
    vsnprintf(err, n, fmt, ap);
  va_end(ap);
  return -1;
}

int dg_npu_ioctl(int fd, unsigned long request, void *arg) {
  int rc;
  do
    rc = ioctl(fd, request, arg);
  while (rc == -1 && (errno == EINTR || errno == EAGAIN));
  return rc;
}

static int timeout_ms(void) {
  const char *s = dg_env(DG_ENV_NPU_TIMEOUT_MS);
  long v = s ? strtol(s, NULL, 10) : 0;
  return v > 0 && v < 3600000 ? (int)v : 5000;
}

/* DG_NPU_CORES: 1 (unset), 2, 3 or auto (0); -1 for anything else. */
static int cores_wanted(void) {
  const char *s = dg_env(DG_ENV_NPU_CORES);
  if (!s || !s[0] || !strcmp(s, "1"))
    return 1;
  if (!strcmp(s, "auto"))
    return 0;
  return !strcmp(s, "2") ? 2 : !strcmp(s, "3") ? 3 : -1;
}

/* Opens a device path: its driver (rocket or rknpu) decides the backend. */
static npu_backend *open_path(const char *path, char *err, size_t n) {
  npu_backend *b = dg_npu_rocket_open(path, err, n);
#ifdef DG_NPU_HAVE_LIBDRM
  if (!b && strstr(err, "not rocket"))
    b = dg_npu_rknpu_open(path, err, n);
#endif
  return b;
}

static npu_backend *first_of(int count, char paths[][64],
                             npu_backend *(*open_fn)(const char *, char *,
                                                     size_t),
                             const char *what, char *err, size_t n) {
  if (!count) {
    dg_npu_errf(err, n, "no %s device found", what);
    return NULL;
  }
  for (int i = 0; i < count; i++) {
    npu_backend *b = open_fn(paths[i], err, n);
    if (b)
      return b;
  }
  return NULL;
}

npu_backend *dg_npu_backend_open(const char *spec, char *err, size_t n) {
  char paths[16][64];
  npu_backend *b = NULL;
  if (spec && !strcmp(spec, "sim")) {
    b = dg_npu_sim_backend_open(err, n);
  } else if (spec && !strcmp(spec, "rocket")) {
    b = first_of(dg_npu_rocket_scan(paths, 16), paths, dg_npu_rocket_open,
                 "rocket accel", err, n);
  } else if (spec && !strcmp(spec, "rknpu")) {
#ifdef DG_NPU_HAVE_LIBDRM
    b = first_of(dg_npu_rknpu_scan(paths, 16), paths, dg_npu_rknpu_open,
                 "rknpu DRM", err, n);
#else
    dg_npu_errf(err, n, "rknpu: built without libdrm");
#endif
  } else if (spec && spec[0] == '/') {
    b = open_path(spec, err, n);
  } else if (spec && spec[0]) {
    dg_npu_errf(err, n,
                "DG_NPU_DEVICE=%s: expected sim, rocket, rknpu or a "
                "device path",
                spec);
  } else {
    /* Discovery: the mainline driver first, then the vendor's; the
     * simulator only when asked for (docs/npu.md, "Discovery"). */
    b = first_of(dg_npu_rocket_scan(paths, 16), paths, dg_npu_rocket_open,
                 "rocket accel", err, n);
#ifdef DG_NPU_HAVE_LIBDRM
    if (!b)
      b = first_of(dg_npu_rknpu_scan(paths, 16), paths, dg_npu_rknpu_open,
                   "rknpu DRM", err, n);
#endif
  }
  int cores = cores_wanted();
  if (b && cores < 0) {
    dg_npu_errf(err, n, "DG_NPU_CORES=%s: expected 1, 2, 3 or auto",
                dg_env(DG_ENV_NPU_CORES));
    b->ops->close(b);
    return NULL;
  }
  const char *cubes = dg_env(DG_ENV_NPU_CUBES);
  if (b && cubes && cubes[0] && strcmp(cubes, "on") && strcmp(cubes, "off")) {
    dg_npu_errf(err, n, "DG_NPU_CUBES=%s: expected on or off", cubes);
    b->ops->close(b);
    return NULL;
  }
  /* rocket's uAPI names no core: its scheduler puts each job on a free
   * one (auto); a job split over cores needs a buffer per core there
   * (implicit fences serialise jobs writing one BO), not done. */
  if (b && cores > 1 && !strcmp(b->ops->name, "rocket")) {
    dg_npu_errf(err, n,
                "DG_NPU_CORES=%d: rocket runs each job on one core its "
                "scheduler picks (use 1 or auto; the split is rknpu's)",
                cores);
    b->ops->close(b);
    return NULL;
  }
  if (b) {
    b->cores = cores;
    b->timeout_ms = timeout_ms();
    /* auto on a kernel driver: a job per core in flight (the simulator
     * keeps one job's state between submit and wait). */
    b->slots = cores == 0 && !b->is_simulator ? NPU_MAX_SLOTS : 1;
    if (pthread_mutex_init(&b->job_lock, NULL)) {
      dg_npu_errf(err, n, "%s: cannot create a mutex", b->ops->name);
      b->ops->close(b);
      return NULL;
    }
    if (pthread_cond_init(&b->slot_free, NULL)) {
      pthread_mutex_destroy(&b->job_lock);
      dg_npu_errf(err, n, "%s: cannot create a condition", b->ops->name);
      b->ops->close(b);
      return NULL;
    }
    b->job_lock_ready = true;
  }
  return b;
}

void dg_npu_backend_close(npu_backend *b) {
  if (!b)
    return;
  if (b->job_lock_ready) {
    pthread_mutex_destroy(&b->job_lock);
    pthread_cond_destroy(&b->slot_free);
  }
  b->ops->close(b);
}

int dg_npu_backend_run(npu_backend *b, const npu_job *job, char *err,
                       size_t n) {
  npu_job j = *job;
  pthread_mutex_lock(&b->job_lock);
  if (b->slots <= 1) {
    j.slot = 0;
    int rc = b->ops->submit(b, &j, err, n) ||
             b->ops->wait(b, &j, b->timeout_ms, err, n);
    b->jobs++;
    pthread_mutex_unlock(&b->job_lock);
    return rc ? -1 : 0;
  }
  unsigned all = (1u << b->slots) - 1;
  while ((b->slots_busy & all) == all)
    pthread_cond_wait(&b->slot_free, &b->job_lock);
  j.slot = b->slot_next;
  while (b->slots_busy & (1u << j.slot))
    j.slot = (j.slot + 1) % b->slots;
  b->slots_busy |= 1u << j.slot;
  b->slot_next = (j.slot + 1) % b->slots;
  pthread_mutex_unlock(&b->job_lock);
  int rc = b->ops->submit(b, &j, err, n) ||
           b->ops->wait(b, &j, b->timeout_ms, err, n);
  pthread_mutex_lock(&b->job_lock);
  b->slots_busy &= ~(1u << j.slot);
  b->jobs++;
  pthread_cond_signal(&b->slot_free);
  pthread_mutex_unlock(&b->job_lock);
  return rc ? -1 : 0;
}

uint32_t dg_npu_job_op_enable(const npu_job *job, int k) {
  npu_task_ref r = dg_npu_job_task(job, k);
  if (!job->cmd || !job->cmd->map || r.word_count < 1 ||
      (size_t)r.offset + (size_t)r.word_count * 8 > job->cmd->size)
    return 0;
  uint64_t w;
  memcpy(&w, job->cmd->map + r.offset + (size_t)(r.word_count - 1) * 8,
         sizeof w);
  return npu_word_target(w) == NPU_TARGET_OP_EN ? npu_word_value(w) : 0;
}

void dg_npu_core_ranges(int cores, int tasks, int start[3], int count[3],
                        int *k) {
  int n = cores > 1 ? (cores < tasks ? cores : tasks) : 1;
  for (int c = 0, at = 0; c < n; c++) {
    count[c] = tasks / n + (c < tasks % n);
    start[c] = at;
    at += count[c];
  }
  *k = n;
}
