/* A fake NPU kernel for tests, preloaded with LD_PRELOAD: it answers
 * open/ioctl/mmap/close on a fake rocket accel node (/dev/accel/accel0,
 * listed in a fake /sys/class/accel) and a fake rknpu DRM render node
 * (/dev/dri/renderD200, the only device drmGetDevices2 reports), with the
 * simulator behind the submit ioctls. It checks what the real drivers
 * check (struct sizes, reserved fields, handles, the rknpu task buffer's
 * kernel mapping) and what a careless user gets wrong (submitting while
 * the CPU still owns a buffer), and counts what is left open.
 *
 * Injected faults (read at every ioctl): FAKE_NPU_FAIL=create (no memory),
 * submit (the submit ioctl fails), hang (jobs never complete: rocket's
 * PREP_BO and rknpu's SUBMIT time out). FAKE_NPU_RKNPU_VERSION=0.9.6 plays
 * an older vendor driver (40-byte mem_create). A job the simulator rejects
 * (an address outside the buffers) faults like on hardware: it never
 * completes. Completion follows the drivers: mainline rocket signals a
 * job on the DPU's interrupt only, so a list that does not run the DPU (a
 * standalone PPU pooling task) never completes there; the vendor driver
 * waits for the task's int_mask, which must name the interrupt group of
 * the list's last stage, and runs the blocks of its enable_mask, which
 * must be those the list enables, on the cores its core_mask selects
 * (each its range of the task array, read as the vendor driver does). */
/* Both open and open64 (mmap, mmap64) are interposed: no redirection. */
#undef _FILE_OFFSET_BITS
#define _GNU_SOURCE
#include "../../src/targets/npu/regs.h"
#include "../../src/targets/npu/sim.h"
#include "../../src/targets/npu/uapi.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef DG_NPU_HAVE_LIBDRM
#include <xf86drm.h>
#endif

#define EXPORT __attribute__((visibility("default")))
#define ROCKET_PATH "/dev/accel/accel0"
#define RKNPU_PATH "/dev/dri/renderD200"
#define MAX_FILES 8
#define MAX_BOS 512
#define MAX_MAPS 1024

enum { ROCKET = 1, RKNPU = 2 };

typedef struct fbo {
  bool used, cpu_owned, hung;
  uint32_t handle, flags;
  int memfd;
  uint8_t *data;
  size_t size;
  uint64_t iova, offset, obj;
} fbo;

typedef struct ffile {
  int fd, kind;
  fbo bos[MAX_BOS];
  uint64_t next_iova;
  uint32_t next_handle;
} ffile;

static ffile files[MAX_FILES];
static struct {
  void *addr;
  size_t len;
} maps[MAX_MAPS];
static int violations, submits, tasks_run, leaked_at_close;
static int core_tasks[3];     /* rknpu: tasks given to each core */
static uint64_t task_objs[8]; /* rknpu: the task arrays submits named */
static int task_obj_count;
static char last_fault[256];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char sysdir[64];

#define REAL(ret, name, args)                                                  \
  static ret(*real_##name) args;                                               \
  static void load_##name(void) {                                              \
    if (!real_##name)                                                          \
      *(void **)&real_##name = dlsym(RTLD_NEXT, #name);                        \
  }
REAL(int, open, (const char *, int, ...))
REAL(int, close, (int))
REAL(int, ioctl, (int, unsigned long, ...))
REAL(void *, mmap, (void *, size_t, int, int, int, off_t))
REAL(int, munmap, (void *, size_t))
REAL(DIR *, opendir, (const char *))

static const char *fault(void) {
  const char *f = getenv("FAKE_NPU_FAIL");
  return f ? f : "";
}

static ffile *file_of(int fd) {
  for (int i = 0; i < MAX_FILES; i++)
    if (files[i].kind && files[i].fd == fd)
      return &files[i];
  return NULL;
}

static int fake_open(const char *path) {
  int kind = !strcmp(path, ROCKET_PATH)  ? ROCKET
             : !strcmp(path, RKNPU_PATH) ? RKNPU
                                         : 0;
  if (!kind)
    return -2;
  load_open();
  int fd = real_open("/dev/null", O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return -1;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < MAX_FILES; i++)
    if (!files[i].kind) {
      memset(&files[i], 0, sizeof files[i]);
      files[i].fd = fd, files[i].kind = kind;
      /* rknpu addresses start above 0, so that an address register
       * holding 0 names no buffer (rknpu_submit's reachability). */
      files[i].next_iova = kind == RKNPU ? 0x100000 : 0;
      pthread_mutex_unlock(&lock);
      return fd;
    }
  pthread_mutex_unlock(&lock);
  load_close();
  real_close(fd);
  errno = EMFILE;
  return -1;
}

static int open_common(const char *path, int flags, va_list ap) {
  int fd = fake_open(path);
  if (fd != -2)
    return fd;
  load_open();
  mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
  return real_open(path, flags, mode);
}

EXPORT int open(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int fd = open_common(path, flags, ap);
  va_end(ap);
  return fd;
}
EXPORT int open64(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int fd = open_common(path, flags, ap);
  va_end(ap);
  return fd;
}

static void bo_release(fbo *b) {
  load_munmap();
  load_close();
  real_munmap(b->data, b->size);
  real_close(b->memfd);
  memset(b, 0, sizeof *b);
}

EXPORT int close(int fd) {
  pthread_mutex_lock(&lock);
  ffile *f = file_of(fd);
  if (f) {
    for (int i = 0; i < MAX_BOS; i++)
      if (f->bos[i].used) {
        leaked_at_close++; /* the kernel frees them; the library should have */
        bo_release(&f->bos[i]);
      }
    f->kind = 0;
  }
  pthread_mutex_unlock(&lock);
  load_close();
  return real_close(fd);
}

static fbo *bo_new(ffile *f, size_t size) {
  if (!strcmp(fault(), "create") || !size) {
    errno = !size ? EINVAL : ENOMEM;
    return NULL;
  }
  for (int i = 0; i < MAX_BOS; i++) {
    fbo *b = &f->bos[i];
    if (b->used)
      continue;
    b->memfd = memfd_create("fake-npu-bo", MFD_CLOEXEC);
    load_mmap();
    if (b->memfd < 0 || ftruncate(b->memfd, (off_t)size) ||
        (b->data = real_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
                             b->memfd, 0)) == MAP_FAILED) {
      if (b->memfd >= 0) {
        load_close();
        real_close(b->memfd);
      }
      memset(b, 0, sizeof *b);
      errno = ENOMEM;
      return NULL;
    }
    b->used = true;
    b->size = size;
    b->handle = ++f->next_handle;
    /* Each file's own address space, from 0 (like rocket's drm_mm). */
    b->iova = f->next_iova;
    f->next_iova += (size + 4095) / 4096 * 4096;
    b->offset = (uint64_t)b->handle << 24;
    b->obj = 0xffffff8000000000ull | (uint64_t)b->handle << 12;
    return b;
  }
  errno = ENOMEM;
  return NULL;
}

static fbo *bo_find(ffile *f, uint32_t handle) {
  for (int i = 0; i < MAX_BOS; i++)
    if (f->bos[i].used && f->bos[i].handle == handle)
      return &f->bos[i];
  return NULL;
}
static fbo *bo_by_obj(ffile *f, uint64_t obj) {
  for (int i = 0; i < MAX_BOS; i++)
    if (f->bos[i].used && f->bos[i].obj == obj)
      return &f->bos[i];
  return NULL;
}
static fbo *bo_at(ffile *f, uint64_t iova, size_t len) {
  for (int i = 0; i < MAX_BOS; i++) {
    fbo *b = &f->bos[i];
    if (b->used && iova >= b->iova && iova + len <= b->iova + b->size)
      return b;
  }
  return NULL;
}

static int fail(int e) {
  errno = e;
  return -1;
}

/* Runs one list on the simulator; false when the NPU would fault. */
static bool execute(ffile *f, uint64_t cmd, uint32_t count, fbo **bos,
                    const bool *is_out, int nbos) {
  fbo *c = bo_at(f, cmd, (size_t)count * 8);
  if (!c) {
    snprintf(last_fault, sizeof last_fault, "command list outside every BO");
    return false;
  }
  npu_sim_buffer bufs[MAX_BOS];
  for (int i = 0; i < nbos; i++)
    bufs[i] = (npu_sim_buffer){is_out[i] ? "out" : "in", (uint32_t)bos[i]->iova,
                               bos[i]->size, bos[i]->data, is_out[i]};
  npu_sim_job job = {(const uint64_t *)(c->data + (cmd - c->iova)),
                     (int)count,
                     bufs,
                     nbos,
                     dg_npu_sim_round_default(),
                     dg_npu_sim_pool_avg_default()};
  char err[256];
  if (dg_npu_sim_run(&job, err, sizeof err)) {
    snprintf(last_fault, sizeof last_fault, "%s", err);
    return false;
  }
  return true;
}

/* The op-enable value of the list at cmd (its last word), 0 if none. */
static uint32_t list_op_enable(ffile *f, uint64_t cmd, uint32_t count) {
  fbo *c = count ? bo_at(f, cmd, (size_t)count * 8) : NULL;
  if (!c)
    return 0;
  uint64_t w;
  memcpy(&w, c->data + (cmd - c->iova) + (size_t)(count - 1) * 8, sizeof w);
  return npu_word_target(w) == NPU_TARGET_OP_EN ? npu_word_value(w) : 0;
}

/* The weights a core's CBUF holds after a task, for WEIGHT_REUSE: the
 * next task on that core may keep them only if they are its own (the
 * same address and bytes) in the same bank split; a job starts with
 * nothing known (another job may have run on the core in between). */
typedef struct cbuf_state {
  bool valid;
  uint32_t addr, bytes, banks;
} cbuf_state;
static int reuse_tasks; /* tasks run with WEIGHT_REUSE, for the tests */

static bool cbuf_step(ffile *f, uint64_t cmd, uint32_t count, cbuf_state *st) {
  fbo *c = count ? bo_at(f, cmd, (size_t)count * 8) : NULL;
  if (!c)
    return true; /* execute() reports it */
  uint32_t con0 = 0, addr = 0, bytes = 0;
  const uint8_t *list = c->data + (cmd - c->iova);
  for (uint32_t i = 0; i < count; i++) {
    uint64_t w;
    memcpy(&w, list + (size_t)i * 8, sizeof w);
    uint16_t off = npu_word_offset(w);
    if (off == dg_npu_regs[NPU_CNA_CBUF_CON0].offset)
      con0 = npu_word_value(w);
    else if (off == dg_npu_regs[NPU_CNA_DCOMP_ADDR0].offset)
      addr = npu_word_value(w);
    else if (off == dg_npu_regs[NPU_CNA_WEIGHT_SIZE0].offset)
      bytes = npu_word_value(w);
  }
  uint32_t banks = con0 & 0xff; /* DATA_BANK, WEIGHT_BANK */
  if (con0 & (1u << 13)) {      /* WEIGHT_REUSE */
    if (!st->valid || st->addr != addr || st->bytes != bytes ||
        st->banks != banks) {
      snprintf(last_fault, sizeof last_fault,
               "WEIGHT_REUSE without its weights in the core's CBUF (%s)",
               st->valid ? "other weights or banks" : "first task on the core");
      return false;
    }
    reuse_tasks++;
  }
  *st = (cbuf_state){true, addr, bytes, banks};
  return true;
}

static void sleep_until(int64_t deadline_ns) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  int64_t left = deadline_ns - ((int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
  if (left > 2000000000)
    left = 2000000000; /* a test never waits longer */
  if (left > 0) {
    struct timespec ts = {left / 1000000000, left % 1000000000};
    nanosleep(&ts, NULL);
  }
}

static int drm_version(ffile *f, struct dg_npu_drm_version *v) {
  const char *name = f->kind == ROCKET ? "rocket" : "rknpu";
  v->version_major = v->version_minor = v->version_patchlevel = 0;
  if (f->kind == RKNPU) {
    const char *s = getenv("FAKE_NPU_RKNPU_VERSION");
    if (!s || sscanf(s, "%d.%d.%d", &v->version_major, &v->version_minor,
                     &v->version_patchlevel) != 3)
      v->version_major = 0, v->version_minor = 9, v->version_patchlevel = 8;
  }
  /* Like the kernel: copy at most each buffer's length, report the full
   * lengths (libdrm sizes its second call from them). */
  const char *text[3] = {name, "20250101",
                         "fake NPU kernel (directgraph tests)"};
  char *buf[3] = {v->name, v->date, v->desc};
  unsigned long *len[3] = {&v->name_len, &v->date_len, &v->desc_len};
  for (int i = 0; i < 3; i++) {
    size_t l = strlen(text[i]);
    if (buf[i] && *len[i])
      memcpy(buf[i], text[i], *len[i] < l ? *len[i] : l);
    *len[i] = l;
  }
  return 0;
}

static int rocket_submit(ffile *f, struct npu_rocket_submit *s) {
  if (s->reserved || s->job_struct_size != sizeof(struct npu_rocket_job))
    return fail(EINVAL);
  if (!strcmp(fault(), "submit"))
    return fail(EIO);
  const struct npu_rocket_job *jobs = (const void *)(uintptr_t)s->jobs;
  for (uint32_t j = 0; j < s->job_count; j++) {
    const struct npu_rocket_job *job = &jobs[j];
    if (job->task_struct_size != sizeof(struct npu_rocket_task) ||
        job->in_bo_handle_count + job->out_bo_handle_count > 64)
      return fail(EINVAL);
    fbo *bos[64];
    bool out[64];
    int n = 0;
    const uint32_t *in_h = (const void *)(uintptr_t)job->in_bo_handles;
    const uint32_t *out_h = (const void *)(uintptr_t)job->out_bo_handles;
    for (uint32_t i = 0; i < job->in_bo_handle_count + job->out_bo_handle_count;
         i++, n++) {
      bool o = i >= job->in_bo_handle_count;
      bos[n] = bo_find(f, o ? out_h[i - job->in_bo_handle_count] : in_h[i]);
      out[n] = o;
      if (!bos[n])
        return fail(ENOENT);
      if (bos[n]->cpu_owned)
        violations++; /* PREP_BO without FINI_BO before the submit */
    }
    const struct npu_rocket_task *t = (const void *)(uintptr_t)job->tasks;
    bool ok = !!strcmp(fault(), "hang");
    cbuf_state cbuf = {0}; /* a job runs on one core */
    for (uint32_t k = 0; ok && k < job->task_count; k++) {
      if (!t[k].regcmd_count)
        return fail(EINVAL);
      ok = cbuf_step(f, t[k].regcmd, t[k].regcmd_count, &cbuf) &&
           execute(f, t[k].regcmd, t[k].regcmd_count, bos, out, n);
      tasks_run++; /* one completion interrupt per task, on the board */
      if (ok &&
          !(list_op_enable(f, t[k].regcmd, t[k].regcmd_count) & NPU_EN_DPU)) {
        snprintf(last_fault, sizeof last_fault,
                 "no DPU interrupt: rocket completes jobs on the DPU's only");
        ok = false;
      }
    }
    submits++;
    /* Mainline drops a failed job silently: its outputs never signal. */
    for (int i = 0; !ok && i < n; i++)
      if (out[i])
        bos[i]->hung = true;
  }
  return 0;
}

static int rocket_ioctl(ffile *f, unsigned long req, void *arg) {
  switch (req) {
  case NPU_ROCKET_IOCTL_CREATE_BO: {
    struct npu_rocket_create_bo *c = arg;
    fbo *b = bo_new(f, c->size);
    if (!b)
      return -1;
    c->handle = b->handle, c->dma_address = b->iova, c->offset = b->offset;
    return 0;
  }
  case NPU_ROCKET_IOCTL_SUBMIT:
    return rocket_submit(f, arg);
  case NPU_ROCKET_IOCTL_PREP_BO: {
    struct npu_rocket_prep_bo *p = arg;
    fbo *b = bo_find(f, p->handle);
    if (!b || p->reserved)
      return fail(b ? EINVAL : ENOENT);
    if (b->hung) {
      if (p->timeout_ns == 0)
        return fail(EBUSY);
      pthread_mutex_unlock(&lock);
      sleep_until(p->timeout_ns);
      pthread_mutex_lock(&lock);
      b->hung = false; /* the scheduler's timeout resets the core */
      return fail(ETIMEDOUT);
    }
    b->cpu_owned = true;
    return 0;
  }
  case NPU_ROCKET_IOCTL_FINI_BO: {
    struct npu_rocket_fini_bo *p = arg;
    fbo *b = bo_find(f, p->handle);
    if (!b || p->reserved)
      return fail(b ? EINVAL : ENOENT);
    b->cpu_owned = false;
    return 0;
  }
  case NPU_DRM_IOCTL_GEM_CLOSE: {
    struct npu_drm_gem_close *c = arg;
    fbo *b = bo_find(f, c->handle);
    if (!b)
      return fail(EINVAL);
    bo_release(b);
    return 0;
  }
  }
  return fail(ENOTTY);
}

/* How many buffers task k of task array tb names (its command list, and
 * every nonzero value of an *ADDR* register of the list) while the CPU
 * owns them: other sessions' buffers may be the CPU's meanwhile. */
static int cpu_owned_named(ffile *f, const fbo *tb, uint32_t k) {
  struct npu_rknpu_task t;
  memcpy(&t, tb->data + (size_t)k * sizeof t, sizeof t);
  uint32_t words = t.regcfg_amount + 4;
  fbo *c = bo_at(f, t.regcmd_addr, (size_t)words * 8);
  if (!c)
    return 0; /* execute() reports it */
  int bad = c->cpu_owned;
  const uint8_t *list = c->data + (t.regcmd_addr - c->iova);
  for (uint32_t i = 0; i < words; i++) {
    uint64_t w;
    memcpy(&w, list + (size_t)i * 8, sizeof w);
    int r = dg_npu_reg_find(npu_word_offset(w));
    uint32_t v = npu_word_value(w);
    fbo *b = r >= 0 && v && strstr(dg_npu_regs[r].name, "ADDR") ? bo_at(f, v, 1)
                                                                : NULL;
    bad += b && b->cpu_owned;
  }
  return bad;
}

static int rknpu_submit(ffile *f, struct npu_rknpu_submit *s) {
  fbo *tb = bo_by_obj(f, s->task_obj_addr);
  if (!(s->flags & NPU_RKNPU_JOB_PC) || !tb ||
      !(tb->flags & NPU_RKNPU_MEM_KERNEL_MAPPING) || !s->task_number ||
      (uint64_t)(s->task_start + s->task_number) * 40 > tb->size)
    return fail(EINVAL);
  if (!strcmp(fault(), "submit"))
    return fail(EIO);
  /* The vendor kernel knows no in/out lists: every buffer is reachable,
   * and a job touches those its lists name (below). */
  fbo *bos[MAX_BOS];
  bool out[MAX_BOS];
  int n = 0;
  for (int i = 0; i < MAX_BOS; i++)
    if (f->bos[i].used && &f->bos[i] != tb)
      bos[n] = &f->bos[i], out[n++] = true;
  if (tb->cpu_owned)
    violations++;
  /* The cores, as rknpu_job.c reads them: mask 0 is AUTO (one free core:
   * core 0 here), a core's range is subcore_task[c] on one or two cores,
   * subcore_task[c + 2] on three; a selected core given no tasks never
   * completes. The cores run their ranges at once on a board, one after
   * the other here. */
  if (s->core_mask > 7)
    return fail(EINVAL);
  bool seen = false;
  for (int i = 0; i < task_obj_count; i++)
    seen |= task_objs[i] == s->task_obj_addr;
  if (!seen && task_obj_count < 8)
    task_objs[task_obj_count++] = s->task_obj_addr;
  uint32_t mask = s->core_mask ? s->core_mask : 1;
  int use = __builtin_popcount(mask);
  submits++;
  bool ok = !!strcmp(fault(), "hang");
  uint32_t order[64 * 3];
  int core_of[64 * 3], count = 0;
  for (int c = 0; ok && c < 3; c++) {
    if (!(mask & (1u << c)))
      continue;
    struct npu_rknpu_subcore_task r = s->subcore_task[use == 3 ? c + 2 : c];
    if (!r.task_number ||
        (uint64_t)(r.task_start + r.task_number) * 40 > tb->size ||
        count + (int)r.task_number > 64 * 3) {
      snprintf(last_fault, sizeof last_fault,
               "core %d given tasks [%u, +%u): it never completes", c,
               r.task_start, r.task_number);
      ok = false;
      break;
    }
    for (uint32_t k = 0; k < r.task_number; k++)
      core_of[count] = c, order[count++] = r.task_start + k;
    core_tasks[c] += (int)r.task_number;
  }
  cbuf_state cbuf[3] = {{0}}; /* per core, from nothing at a job's start */
  for (int j = 0; ok && j < count; j++) /* SYNC_FROM without SYNC_TO */
    violations += cpu_owned_named(f, tb, order[j]);
  for (int j = 0; ok && j < count; j++) {
    struct npu_rknpu_task t;
    memcpy(&t, tb->data + (size_t)order[j] * sizeof t, sizeof t);
    uint32_t en = list_op_enable(f, t.regcmd_addr, t.regcfg_amount + 4);
    tasks_run++;
    uint32_t irq = en & NPU_EN_DPU ? 0x300 : en & NPU_EN_PPU ? 0xc00 : 0;
    if (t.enable_mask != en || (t.int_mask & irq) != irq || !irq) {
      snprintf(last_fault, sizeof last_fault,
               "task enable_mask 0x%x / int_mask 0x%x do not match the list "
               "(op-enable 0x%x): it never completes",
               t.enable_mask, t.int_mask, en);
      ok = false;
      break;
    }
    ok = cbuf_step(f, t.regcmd_addr, t.regcfg_amount + 4, &cbuf[core_of[j]]) &&
         execute(f, t.regcmd_addr, t.regcfg_amount + 4, bos, out, n);
  }
  if (!ok) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_unlock(&lock);
    sleep_until((int64_t)now.tv_sec * 1000000000 + now.tv_nsec +
                (int64_t)s->timeout * 1000000);
    pthread_mutex_lock(&lock);
    return fail(ETIMEDOUT);
  }
  return 0;
}

static int rknpu_ioctl(ffile *f, unsigned long req, void *arg) {
  const char *ver = getenv("FAKE_NPU_RKNPU_VERSION");
  bool old = ver && strcmp(ver, "0.9.8") < 0;
  if (req == NPU_RKNPU_IOCTL_MEM_CREATE ||
      req == NPU_RKNPU_IOCTL_MEM_CREATE_OLD) {
    /* Each driver version knows one layout (and so one ioctl number). */
    if ((req == NPU_RKNPU_IOCTL_MEM_CREATE_OLD) != old)
      return fail(EINVAL);
    struct npu_rknpu_mem_create *c = arg;
    fbo *b = bo_new(f, c->size);
    if (!b)
      return -1;
    b->flags = c->flags;
    c->handle = b->handle, c->obj_addr = b->obj, c->dma_addr = b->iova;
    return 0;
  }
  switch (req) {
  case NPU_RKNPU_IOCTL_ACTION: {
    struct npu_rknpu_action *a = arg;
    if (a->flags == NPU_RKNPU_GET_DRV_VERSION)
      a->value = old ? 906 : 908;
    return 0;
  }
  case NPU_RKNPU_IOCTL_MEM_MAP: {
    struct npu_rknpu_mem_map *m = arg;
    fbo *b = bo_find(f, m->handle);
    if (!b)
      return fail(EINVAL);
    m->offset = b->offset;
    return 0;
  }
  case NPU_RKNPU_IOCTL_MEM_DESTROY: {
    struct npu_rknpu_mem_destroy *d = arg;
    fbo *b = bo_find(f, d->handle);
    if (!b || b->obj != d->obj_addr)
      return fail(EINVAL);
    bo_release(b);
    return 0;
  }
  case NPU_RKNPU_IOCTL_MEM_SYNC: {
    struct npu_rknpu_mem_sync *s = arg;
    fbo *b = bo_by_obj(f, s->obj_addr);
    if (!b || s->offset + s->size > b->size)
      return fail(EINVAL);
    b->cpu_owned = s->flags & NPU_RKNPU_SYNC_FROM_DEVICE;
    return 0;
  }
  case NPU_RKNPU_IOCTL_SUBMIT:
    return rknpu_submit(f, arg);
  }
  return fail(ENOTTY);
}

EXPORT int ioctl(int fd, unsigned long req, ...) {
  va_list ap;
  va_start(ap, req);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  pthread_mutex_lock(&lock);
  ffile *f = file_of(fd);
  if (!f) {
    pthread_mutex_unlock(&lock);
    load_ioctl();
    return real_ioctl(fd, req, arg);
  }
  int rc;
  if (req == NPU_DRM_IOCTL_VERSION)
    rc = drm_version(f, arg);
  else
    rc = f->kind == ROCKET ? rocket_ioctl(f, req, arg)
                           : rknpu_ioctl(f, req, arg);
  int e = errno;
  pthread_mutex_unlock(&lock);
  errno = e;
  return rc;
}

static void *map_common(void *addr, size_t len, int prot, int flags, int fd,
                        off_t off) {
  load_mmap();
  pthread_mutex_lock(&lock);
  ffile *f = file_of(fd);
  if (!f) {
    pthread_mutex_unlock(&lock);
    return real_mmap(addr, len, prot, flags, fd, off);
  }
  void *m = MAP_FAILED;
  int e = EINVAL;
  for (int i = 0; i < MAX_BOS; i++) {
    fbo *b = &f->bos[i];
    if (b->used && b->offset == (uint64_t)off && len <= b->size) {
      m = real_mmap(addr, len, prot, flags, b->memfd, 0);
      e = errno;
      break;
    }
  }
  for (int i = 0; m != MAP_FAILED && i < MAX_MAPS; i++)
    if (!maps[i].addr) {
      maps[i].addr = m, maps[i].len = len;
      break;
    }
  pthread_mutex_unlock(&lock);
  errno = e;
  return m;
}
EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd,
                  off_t off) {
  return map_common(addr, len, prot, flags, fd, off);
}
EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
                    off_t off) {
  return map_common(addr, len, prot, flags, fd, off);
}

EXPORT int munmap(void *addr, size_t len) {
  pthread_mutex_lock(&lock);
  for (int i = 0; i < MAX_MAPS; i++)
    if (maps[i].addr == addr)
      maps[i].addr = NULL;
  pthread_mutex_unlock(&lock);
  load_munmap();
  return real_munmap(addr, len);
}

/* /sys/class/accel lists the fake node (a directory holding "accel0"). */
EXPORT DIR *opendir(const char *path) {
  load_opendir();
  if (!strcmp(path, "/sys/class/accel")) {
    pthread_mutex_lock(&lock);
    if (!sysdir[0]) {
      char tmpl[] = "/tmp/fake-npu-XXXXXX";
      if (mkdtemp(tmpl)) {
        char p[96];
        snprintf(p, sizeof p, "%s/accel0", tmpl);
        mkdir(p, 0700);
        snprintf(sysdir, sizeof sysdir, "%s", tmpl);
      }
    }
    pthread_mutex_unlock(&lock);
    return real_opendir(sysdir);
  }
  return real_opendir(path);
}

__attribute__((destructor)) static void cleanup(void) {
  if (sysdir[0]) {
    char p[96];
    snprintf(p, sizeof p, "%s/accel0", sysdir);
    rmdir(p);
    rmdir(sysdir);
  }
}

#ifdef DG_NPU_HAVE_LIBDRM
/* libdrm's device scan sees only the fake rknpu node. */
EXPORT int drmGetDevices2(uint32_t flags, drmDevicePtr devices[], int max) {
  (void)flags;
  if (!devices)
    return 1;
  if (max < 1)
    return 0;
  drmDevicePtr d = calloc(1, sizeof *d);
  char **nodes = calloc(DRM_NODE_MAX, sizeof *nodes);
  if (!d || !nodes) {
    free(d);
    free(nodes);
    return -ENOMEM;
  }
  nodes[DRM_NODE_RENDER] = strdup(RKNPU_PATH);
  d->nodes = nodes;
  d->available_nodes = 1 << DRM_NODE_RENDER;
  d->bustype = DRM_BUS_PLATFORM;
  devices[0] = d;
  return 1;
}

EXPORT void drmFreeDevices(drmDevicePtr devices[], int count) {
  for (int i = 0; i < count; i++) {
    if (!devices[i])
      continue;
    for (int k = 0; k < DRM_NODE_MAX; k++)
      free(devices[i]->nodes[k]);
    free(devices[i]->nodes);
    free(devices[i]);
    devices[i] = NULL;
  }
}
#endif

/* What the tests read: open fake files, live BOs and mappings, submits
 * made while the CPU owned a buffer, BOs still alive when their file was
 * closed, jobs submitted, tasks run (a completion interrupt each on the
 * board), the tasks each rknpu core was given, the distinct rknpu task
 * arrays submits named, the tasks run with WEIGHT_REUSE (each checked to
 * find its weights in its core's CBUF), and the last job's fault. */
EXPORT void fake_npu_stats(int out[12], char *fault_msg, size_t n) {
  pthread_mutex_lock(&lock);
  int open_files = 0, bos = 0, live_maps = 0;
  for (int i = 0; i < MAX_FILES; i++)
    if (files[i].kind) {
      open_files++;
      for (int k = 0; k < MAX_BOS; k++)
        bos += files[i].bos[k].used;
    }
  for (int i = 0; i < MAX_MAPS; i++)
    live_maps += maps[i].addr != NULL;
  out[0] = open_files, out[1] = bos, out[2] = live_maps;
  out[3] = violations, out[4] = leaked_at_close, out[5] = submits;
  out[6] = tasks_run;
  for (int c = 0; c < 3; c++) /* rknpu: tasks each core was given */
    out[7 + c] = core_tasks[c];
  out[10] = task_obj_count; /* distinct rknpu task arrays submitted */
  out[11] = reuse_tasks;    /* tasks that kept the previous one's weights */
  if (fault_msg && n)
    snprintf(fault_msg, n, "%s", last_fault);
  pthread_mutex_unlock(&lock);
}
