/* The `rknpu` backend: Rockchip's vendor DRM driver (docs/npu.md, "rknpu"),
 * found with libdrm. Buffers come from MEM_CREATE (an NPU address, a kernel
 * object address that SYNC/DESTROY/SUBMIT name, and an mmap offset from
 * MEM_MAP); CPU access is bracketed with MEM_SYNC; a job is an rknpu_task
 * array in a kernel-mapped buffer, and SUBMIT blocks until the NPU's
 * interrupt or the timeout. */
#define _GNU_SOURCE
#include "backend.h"
#include "regs.h"
#include "uapi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

/* What Rockchip's runtime asks for tensors: scattered pages behind the
 * IOMMU, cached (synced explicitly). The task array must also be mapped
 * in the kernel, which reads it at submit. */
#define MEM_TENSOR                                                             \
  (NPU_RKNPU_MEM_NON_CONTIGUOUS | NPU_RKNPU_MEM_CACHEABLE | NPU_RKNPU_MEM_IOMMU)
#define MEM_TASKS (MEM_TENSOR | NPU_RKNPU_MEM_KERNEL_MAPPING)

typedef struct rknpu_priv {
  bool old_layout; /* mem_create without iommu_domain_id/core_mask */
  /* The rknpu_task arrays, one per job in flight (backend.h's slots). */
  npu_bo tasks[NPU_MAX_SLOTS];
} rknpu_priv;

int dg_npu_rknpu_scan(char paths[][64], int max) {
  int total = drmGetDevices2(0, NULL, 0);
  if (total <= 0)
    return 0;
  drmDevicePtr *devs = calloc((size_t)total, sizeof *devs);
  if (!devs)
    return 0;
  int got = drmGetDevices2(0, devs, total), count = 0;
  for (int i = 0; i < got && count < max; i++)
    if (devs[i]->available_nodes & (1 << DRM_NODE_RENDER))
      snprintf(paths[count++], 64, "%s", devs[i]->nodes[DRM_NODE_RENDER]);
  if (got > 0)
    drmFreeDevices(devs, got);
  free(devs);
  return count;
}

static int mem_create(npu_backend *b, size_t size, uint32_t flags, npu_bo *bo,
                      char *err, size_t n) {
  rknpu_priv *p = b->priv;
  struct npu_rknpu_mem_create c;
  memset(&c, 0, sizeof c);
  c.flags = flags;
  c.size = size;
  unsigned long req = p->old_layout ? NPU_RKNPU_IOCTL_MEM_CREATE_OLD
                                    : NPU_RKNPU_IOCTL_MEM_CREATE;
  if (dg_npu_ioctl(b->fd, req, &c))
    return dg_npu_errf(err, n, "rknpu %s: MEM_CREATE of %zu bytes failed: %s",
                       b->node, size, strerror(errno));
  struct npu_rknpu_mem_destroy d = {c.handle, 0, c.obj_addr};
  struct npu_rknpu_mem_map m = {c.handle, 0, 0};
  if (c.dma_addr + size > 0x100000000ull) {
    dg_npu_ioctl(b->fd, NPU_RKNPU_IOCTL_MEM_DESTROY, &d);
    return dg_npu_errf(err, n, "rknpu %s: NPU address 0x%llx above 4 GiB",
                       b->node, (unsigned long long)c.dma_addr);
  }
  if (dg_npu_ioctl(b->fd, NPU_RKNPU_IOCTL_MEM_MAP, &m)) {
    int e = errno;
    dg_npu_ioctl(b->fd, NPU_RKNPU_IOCTL_MEM_DESTROY, &d);
    return dg_npu_errf(err, n, "rknpu %s: MEM_MAP failed: %s", b->node,
                       strerror(e));
  }
  void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd,
                   (off_t)m.offset);
  if (map == MAP_FAILED) {
    int e = errno;
    dg_npu_ioctl(b->fd, NPU_RKNPU_IOCTL_MEM_DESTROY, &d);
    return dg_npu_errf(err, n, "rknpu %s: mmap failed: %s", b->node,
                       strerror(e));
  }
  *bo = (npu_bo){c.handle, c.dma_addr, c.obj_addr, m.offset, size, map};
  return 0;
}

static int rn_alloc(npu_backend *b, size_t size, npu_bo *bo, char *err,
                    size_t n) {
  memset(bo, 0, sizeof *bo);
  if (!size)
    return dg_npu_errf(err, n, "rknpu: empty buffer");
  return mem_create(b, size, MEM_TENSOR, bo, err, n);
}

static void rn_free(npu_backend *b, npu_bo *bo) {
  if (bo->map) {
    munmap(bo->map, bo->size);
    struct npu_rknpu_mem_destroy d = {bo->handle, 0, bo->obj_addr};
    dg_npu_ioctl(b->fd, NPU_RKNPU_IOCTL_MEM_DESTROY, &d);
  }
  memset(bo, 0, sizeof *bo);
}

static int sync_bo(npu_backend *b, npu_bo *bo, uint32_t dir, char *err,
                   size_t n) {
  struct npu_rknpu_mem_sync s = {dir, 0, bo->obj_addr, 0, bo->size};
  if (dg_npu_ioctl(b->fd, NPU_RKNPU_IOCTL_MEM_SYNC, &s))
    return dg_npu_errf(err, n, "rknpu %s: MEM_SYNC %s failed: %s", b->node,
                       dir == NPU_RKNPU_SYNC_TO_DEVICE ? "to device"
                                                       : "from device",
                       strerror(errno));
  return 0;
}

static int rn_begin(npu_backend *b, npu_bo *bo, char *err, size_t n) {
  return sync_bo(b, bo, NPU_RKNPU_SYNC_FROM_DEVICE, err, n);
}

static int rn_end(npu_backend *b, npu_bo *bo, char *err, size_t n) {
  return sync_bo(b, bo, NPU_RKNPU_SYNC_TO_DEVICE, err, n);
}

/* The cores of a job of `tasks` tasks (backend.h's cores) and each one's
 * range of the task array. The vendor driver reads core c's range from
 * subcore_task[c] when it runs a job on one or two cores and from
 * subcore_task[c + 2] on three (rknpu_job.c); AUTO (mask 0) is rewritten
 * to one free core, whose subcore_task[c] it reads: every slot of 0..2
 * then holds the whole array. A job split over k cores takes its tasks in
 * k balanced, consecutive ranges: a node's tasks write disjoint regions,
 * so they may run at once. */
static void split_cores(struct npu_rknpu_submit *s, int cores, int tasks) {
  if (cores == 0) {
    s->core_mask = 0;
    for (int c = 0; c < 3; c++)
      s->subcore_task[c] = (struct npu_rknpu_subcore_task){0, (uint32_t)tasks};
    return;
  }
  int start[3], count[3], k;
  dg_npu_core_ranges(cores, tasks, start, count, &k);
  s->core_mask = (1u << k) - 1;
  int base = k == 3 ? 2 : 0;
  for (int c = 0; c < k; c++)
    s->subcore_task[base + c] =
        (struct npu_rknpu_subcore_task){(uint32_t)start[c], (uint32_t)count[c]};
}

static int rn_submit(npu_backend *b, const npu_job *job, char *err, size_t n) {
  rknpu_priv *p = b->priv;
  npu_bo *tb = &p->tasks[job->slot];
  if (rn_begin(b, tb, err, n))
    return -1;
  /* Per task: the blocks its list enables (a conv CNA|CORE|DPU|DPU_RDMA,
   * a pooling task PPU|PPU_RDMA), completion on the interrupt group of
   * its last stage (DPU 0x300, PPU 0xc00: the vendor's captured masks,
   * docs/npu.md "rknpu"), every status bit cleared first. The kernel runs
   * the task array in order. */
  int tasks = dg_npu_job_tasks(job);
  if (tasks < 1 || (size_t)tasks * sizeof(struct npu_rknpu_task) > tb->size ||
      tasks > NPU_JOB_MAX_TASKS) {
    rn_end(b, tb, err, n);
    return dg_npu_errf(err, n, "rknpu %s: a job of %d tasks", b->node, tasks);
  }
  for (int k = 0; k < tasks; k++) {
    uint32_t enable = dg_npu_job_op_enable(job, k);
    if (!enable) {
      rn_end(b, tb, err, n);
      return dg_npu_errf(
          err, n, "rknpu %s: command list without op-enable word", b->node);
    }
    npu_task_ref r = dg_npu_job_task(job, k);
    uint32_t irq = enable & NPU_EN_DPU ? 0x300 : 0xc00;
    struct npu_rknpu_task t = {0,
                               0,
                               enable,
                               irq,
                               0x1ffff,
                               0,
                               (uint32_t)r.word_count - 4,
                               0,
                               job->cmd->iova + r.offset};
    memcpy(tb->map + (size_t)k * sizeof t, &t, sizeof t);
  }
  if (rn_end(b, tb, err, n))
    return -1;
  struct npu_rknpu_submit s;
  memset(&s, 0, sizeof s);
  s.flags = NPU_RKNPU_JOB_PC | NPU_RKNPU_JOB_PINGPONG; /* blocking */
  s.timeout = (uint32_t)b->timeout_ms;
  s.task_number = (uint32_t)tasks;
  s.task_obj_addr = tb->obj_addr;
  s.fence_fd = -1;
  split_cores(&s, b->cores, tasks);
  if (dg_npu_ioctl(b->fd, NPU_RKNPU_IOCTL_SUBMIT, &s)) {
    if (errno == ETIMEDOUT)
      return dg_npu_errf(err, n, "rknpu %s: job timed out after %d ms", b->node,
                         b->timeout_ms);
    return dg_npu_errf(err, n, "rknpu %s: SUBMIT failed: %s", b->node,
                       strerror(errno));
  }
  return 0;
}

/* SUBMIT without NONBLOCK returns when the job is done. */
static int rn_wait(npu_backend *b, const npu_job *job, int timeout_ms,
                   char *err, size_t n) {
  (void)b, (void)job, (void)timeout_ms, (void)err, (void)n;
  return 0;
}

static void rn_close(npu_backend *b) {
  rknpu_priv *p = b->priv;
  for (int i = 0; p && i < NPU_MAX_SLOTS; i++)
    rn_free(b, &p->tasks[i]);
  free(p);
  if (b->fd >= 0)
    close(b->fd);
  free(b);
}

static const npu_backend_ops rknpu_ops = {
    "rknpu", rn_alloc, rn_free, rn_begin, rn_end, rn_submit, rn_wait, rn_close};

npu_backend *dg_npu_rknpu_open(const char *path, char *err, size_t n) {
  int ver[3];
  int fd = dg_npu_drm_open(path, "rknpu", ver, err, n);
  if (fd < 0)
    return NULL;
  npu_backend *b = calloc(1, sizeof *b);
  rknpu_priv *p = calloc(1, sizeof *p);
  if (!b || !p) {
    free(b);
    free(p);
    close(fd);
    dg_npu_errf(err, n, "rknpu: out of host memory");
    return NULL;
  }
  b->ops = &rknpu_ops;
  b->fd = fd;
  b->priv = p;
  snprintf(b->node, sizeof b->node, "%s", path);
  snprintf(b->driver, sizeof b->driver, "rknpu %d.%d.%d (%s)", ver[0], ver[1],
           ver[2], path);
  /* mem_create grew by iommu_domain_id and core_mask in 0.9.8
   * (docs/npu.md, "rknpu"); the struct size is part of the ioctl
   * number. */
  p->old_layout = ver[0] * 10000 + ver[1] * 100 + ver[2] < 908;
  for (int i = 0; i < NPU_MAX_SLOTS; i++) /* 12 KiB for the three */
    if (mem_create(b, 4096, MEM_TASKS, &p->tasks[i], err, n)) {
      rn_close(b);
      return NULL;
    }
  return b;
}
