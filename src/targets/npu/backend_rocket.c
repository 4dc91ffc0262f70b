/* The `rocket` backend: Linux's mainline accel driver (docs/npu.md,
 * "rocket").
 * Buffers are shmem BOs mapped into this fd's own IOMMU space; the CPU
 * brackets its accesses with PREP_BO (wait for the NPU's writes, sync
 * caches for the CPU; absolute deadline) and FINI_BO (sync for the
 * device); a job is its tasks (the kernel runs them in order), and
 * completion is seen by PREP_BO on its output BOs. */
#define _GNU_SOURCE
#include "backend.h"
#include "uapi.h"

#include "core/clock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Reads the DRM driver name and version (two calls: lengths, then text). */
int dg_npu_drm_version(int fd, char *name, size_t name_size, int ver[3]) {
  struct dg_npu_drm_version v;
  memset(&v, 0, sizeof v);
  if (dg_npu_ioctl(fd, NPU_DRM_IOCTL_VERSION, &v))
    return -1;
  char buf[64] = "";
  v.name = buf;
  v.name_len = v.name_len < sizeof buf - 1 ? v.name_len : sizeof buf - 1;
  v.date_len = v.desc_len = 0;
  v.date = v.desc = NULL;
  if (dg_npu_ioctl(fd, NPU_DRM_IOCTL_VERSION, &v))
    return -1;
  buf[v.name_len < sizeof buf ? v.name_len : sizeof buf - 1] = 0;
  snprintf(name, name_size, "%s", buf);
  ver[0] = v.version_major, ver[1] = v.version_minor;
  ver[2] = v.version_patchlevel;
  return 0;
}

int dg_npu_drm_open(const char *path, const char *driver, int ver[3], char *err,
                    size_t n) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return dg_npu_errf(err, n, "%s: cannot open %s: %s", driver, path,
                       strerror(errno));
  char name[64];
  int known = !dg_npu_drm_version(fd, name, sizeof name, ver);
  if (!known || strcmp(name, driver)) {
    dg_npu_errf(err, n, "%s: driver is %s, not %s", path,
                known ? name : "unknown", driver);
    close(fd);
    return -1;
  }
  return fd;
}

int dg_npu_rocket_scan(char paths[][64], int max) {
  DIR *d = opendir("/sys/class/accel");
  int count = 0;
  if (!d)
    return 0;
  struct dirent *e;
  while (count < max && (e = readdir(d)))
    if (!strncmp(e->d_name, "accel", 5) && strlen(e->d_name) < 40)
      snprintf(paths[count++], 64, "/dev/accel/%.40s", e->d_name);
  closedir(d);
  return count;
}

static int64_t deadline_ns(int timeout_ms) {
  return dg_clock_ns() + (int64_t)timeout_ms * 1000000;
}

static void gem_close(npu_backend *b, uint32_t handle) {
  struct npu_drm_gem_close c = {handle, 0};
  dg_npu_ioctl(b->fd, NPU_DRM_IOCTL_GEM_CLOSE, &c);
}

static int rk_alloc(npu_backend *b, size_t size, npu_bo *bo, char *err,
                    size_t n) {
  memset(bo, 0, sizeof *bo);
  if (!size || size > 0xffffffffu)
    return dg_npu_errf(err, n, "rocket: bad buffer size %zu", size);
  struct npu_rocket_create_bo c = {(uint32_t)size, 0, 0, 0};
  if (dg_npu_ioctl(b->fd, NPU_ROCKET_IOCTL_CREATE_BO, &c))
    return dg_npu_errf(err, n, "rocket %s: CREATE_BO of %zu bytes failed: %s",
                       b->node, size, strerror(errno));
  /* drm_rocket_task.regcmd is 32 bits: every IOVA must lie below 4 GiB. */
  if (c.dma_address + size > 0x100000000ull) {
    gem_close(b, c.handle);
    return dg_npu_errf(err, n, "rocket %s: IOVA 0x%llx above 4 GiB", b->node,
                       (unsigned long long)c.dma_address);
  }
  void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd,
                 (off_t)c.offset);
  if (m == MAP_FAILED) {
    int e = errno;
    gem_close(b, c.handle);
    return dg_npu_errf(err, n, "rocket %s: mmap of BO %u failed: %s", b->node,
                       c.handle, strerror(e));
  }
  *bo = (npu_bo){c.handle, c.dma_address, 0, c.offset, size, m};
  return 0;
}

static void rk_free(npu_backend *b, npu_bo *bo) {
  if (bo->map) {
    munmap(bo->map, bo->size);
    gem_close(b, bo->handle);
  }
  memset(bo, 0, sizeof *bo);
}

static int prep(npu_backend *b, npu_bo *bo, int timeout_ms, char *err,
                size_t n) {
  struct npu_rocket_prep_bo p = {bo->handle, 0, deadline_ns(timeout_ms)};
  if (!dg_npu_ioctl(b->fd, NPU_ROCKET_IOCTL_PREP_BO, &p))
    return 0;
  if (errno == ETIMEDOUT || errno == EBUSY)
    return dg_npu_errf(err, n,
                       "rocket %s: job timed out: BO %u still busy after %d ms",
                       b->node, bo->handle, timeout_ms);
  return dg_npu_errf(err, n, "rocket %s: PREP_BO %u failed: %s", b->node,
                     bo->handle, strerror(errno));
}

static int rk_begin(npu_backend *b, npu_bo *bo, char *err, size_t n) {
  return prep(b, bo, b->timeout_ms, err, n);
}

static int rk_end(npu_backend *b, npu_bo *bo, char *err, size_t n) {
  struct npu_rocket_fini_bo f = {bo->handle, 0};
  if (dg_npu_ioctl(b->fd, NPU_ROCKET_IOCTL_FINI_BO, &f))
    return dg_npu_errf(err, n, "rocket %s: FINI_BO %u failed: %s", b->node,
                       bo->handle, strerror(errno));
  return 0;
}

static int rk_submit(npu_backend *b, const npu_job *job, char *err, size_t n) {
  uint32_t in[16], out[16];
  if (job->in_count + 1 > 16 || job->out_count > 16)
    return dg_npu_errf(err, n, "rocket: too many buffers in one job");
  /* The command list is read by the NPU too: list it with the inputs so
   * the scheduler orders it after the CPU's writes. */
  in[0] = job->cmd->handle;
  for (int i = 0; i < job->in_count; i++)
    in[i + 1] = job->in[i]->handle;
  for (int i = 0; i < job->out_count; i++)
    out[i] = job->out[i]->handle;
  /* The job's tasks, run by the kernel in order. */
  struct npu_rocket_task task[NPU_JOB_MAX_TASKS];
  int tasks = dg_npu_job_tasks(job);
  if (tasks < 1 || tasks > NPU_JOB_MAX_TASKS)
    return dg_npu_errf(err, n, "rocket: a job of %d tasks", tasks);
  for (int k = 0; k < tasks; k++) {
    npu_task_ref r = dg_npu_job_task(job, k);
    task[k] = (struct npu_rocket_task){(uint32_t)(job->cmd->iova + r.offset),
                                       (uint32_t)r.word_count};
  }
  struct npu_rocket_job j = {(uint64_t)(uintptr_t)task,
                             (uint64_t)(uintptr_t)in,
                             (uint64_t)(uintptr_t)out,
                             (uint32_t)tasks,
                             sizeof task[0],
                             (uint32_t)job->in_count + 1,
                             (uint32_t)job->out_count};
  struct npu_rocket_submit s = {(uint64_t)(uintptr_t)&j, 1, sizeof j, 0};
  if (dg_npu_ioctl(b->fd, NPU_ROCKET_IOCTL_SUBMIT, &s))
    return dg_npu_errf(err, n, "rocket %s: SUBMIT failed: %s", b->node,
                       strerror(errno));
  return 0;
}

/* The kernel signals completion through the output BOs' fences: PREP_BO
 * waits for them (and fails at the deadline), FINI_BO gives them back. */
static int rk_wait(npu_backend *b, const npu_job *job, int timeout_ms,
                   char *err, size_t n) {
  for (int i = 0; i < job->out_count; i++)
    if (prep(b, job->out[i], timeout_ms, err, n) ||
        rk_end(b, job->out[i], err, n))
      return -1;
  return 0;
}

static void rk_close(npu_backend *b) {
  if (b->fd >= 0)
    close(b->fd);
  free(b);
}

static const npu_backend_ops rocket_ops = {"rocket", rk_alloc, rk_free,
                                           rk_begin, rk_end,   rk_submit,
                                           rk_wait,  rk_close};

npu_backend *dg_npu_rocket_open(const char *path, char *err, size_t n) {
  int ver[3];
  int fd = dg_npu_drm_open(path, "rocket", ver, err, n);
  if (fd < 0)
    return NULL;
  npu_backend *b = calloc(1, sizeof *b);
  if (!b) {
    close(fd);
    dg_npu_errf(err, n, "rocket: out of host memory");
    return NULL;
  }
  b->ops = &rocket_ops;
  b->fd = fd;
  snprintf(b->node, sizeof b->node, "%s", path);
  snprintf(b->driver, sizeof b->driver, "rocket %d.%d.%d (%s)", ver[0], ver[1],
           ver[2], path);
  return b;
}
