/* One interface over the ways a command list reaches the NPU (docs/npu.md,
 * "Backends"): `sim` (the in-process simulator), `rocket` (the mainline
 * accel driver, /dev/accel/accelN) and `rknpu` (Rockchip's vendor DRM
 * driver). The generator's lists are the same for all three; what differs
 * is how buffers are made and addressed (IOVAs are private to each open
 * file, and 0 is a valid one), how the CPU and the NPU hand buffers over
 * (cache syncs), and how a job is submitted and waited for.
 *
 * Every function returns 0 on success or -1 with err set to one line that
 * names the backend, the step and the kernel's answer.
 */
#ifndef DG_NPU_BACKEND_H
#define DG_NPU_BACKEND_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct npu_bo {
  uint32_t handle;   /* driver handle (sim: index) */
  uint64_t iova;     /* NPU address, valid in this backend only; 0 is valid */
  uint64_t obj_addr; /* rknpu: the kernel object, named by SYNC/SUBMIT */
  uint64_t map_offset;
  size_t size;
  uint8_t *map; /* CPU mapping, NULL when not allocated */
} npu_bo;

/* A task of a chained job: its command list at this byte offset of the
 * job's command buffer, word_count words long (trailer included). */
typedef struct npu_task_ref {
  uint32_t offset;
  int word_count;
} npu_task_ref;

/* The most tasks one job chains (the rknpu task array is one 4 KiB
 * buffer of 40-byte entries; rocket takes a C array): a node with more
 * is submitted as several jobs. */
#define NPU_JOB_MAX_TASKS 64

/* One job: one task's command list (tasks NULL: at cmd->iova, word_count
 * words), or task_count of them run in order (tasks: lists inside cmd),
 * with the buffers they read and write. The kernel runs a job's tasks
 * one after another and reports once, so a node's tasks cost one submit
 * and one wait. The caller has checked (dg_npu_job_check) that every
 * address of every list lies inside these buffers: mainline drops bad
 * jobs silently (docs/npu.md, "rocket"). */
typedef struct npu_job {
  const npu_bo *cmd; /* the list(s) */
  int word_count;    /* one task: including the 4 trailer words */
  npu_bo *const *in;
  int in_count;
  npu_bo *const *out;
  int out_count;
  const npu_task_ref *tasks; /* NULL: the one list above */
  int task_count;            /* 1..NPU_JOB_MAX_TASKS where tasks is set */
  int slot; /* the backend's per-job state it uses (< slots), set by
               dg_npu_backend_run */
} npu_job;

/* Task k of job (k < dg_npu_job_tasks(job)). */
static inline int dg_npu_job_tasks(const npu_job *job) {
  return job->tasks ? job->task_count : 1;
}
static inline npu_task_ref dg_npu_job_task(const npu_job *job, int k) {
  return job->tasks ? job->tasks[k] : (npu_task_ref){0, job->word_count};
}

typedef struct npu_backend npu_backend;

typedef struct npu_backend_ops {
  const char *name;
  int (*bo_alloc)(npu_backend *b, size_t size, npu_bo *bo, char *err, size_t n);
  void (*bo_free)(npu_backend *b, npu_bo *bo); /* zeroes *bo; NULL map ok */
  /* Brackets CPU access: begin waits for the device and makes its writes
   * visible (rocket PREP_BO, rknpu SYNC_FROM_DEVICE), end hands the CPU's
   * writes to the device (FINI_BO, SYNC_TO_DEVICE). */
  int (*cpu_begin)(npu_backend *b, npu_bo *bo, char *err, size_t n);
  int (*cpu_end)(npu_backend *b, npu_bo *bo, char *err, size_t n);
  int (*submit)(npu_backend *b, const npu_job *job, char *err, size_t n);
  /* Waits until the job's outputs are written, at most timeout_ms. */
  int (*wait)(npu_backend *b, const npu_job *job, int timeout_ms, char *err,
              size_t n);
  void (*close)(npu_backend *b);
} npu_backend_ops;

struct npu_backend {
  const npu_backend_ops *ops;
  char node[64];   /* "/dev/accel/accel0", "sim" */
  char driver[96]; /* "rocket 0.0.0", "rknpu 0.9.8", "simulator" */
  int fd;          /* -1 for sim */
  int timeout_ms;  /* DG_NPU_TIMEOUT_MS, default 5000 */
  /* DG_NPU_CORES: the cores a job runs on. 1 (default): core 0; 2 or 3:
   * a job's tasks split into that many ranges, one per core, run at once
   * (the latency mode; rknpu only); 0 ("auto"): the driver picks one free
   * core per job (the throughput mode: several sessions in flight land on
   * different cores; what rocket's scheduler always does). */
  int cores;
  int is_simulator;
  void *priv;
  /* Held from a job's submit to the end of its wait (dg_npu_backend_run):
   * sessions on several threads share the device, and a backend keeps
   * one job's state between the two calls (the simulator its error). */
  pthread_mutex_t job_lock;
  bool job_lock_ready; /* set by dg_npu_backend_open */
  int jobs;            /* jobs run so far (under job_lock), for tests */
  /* Jobs in flight at once: 1, or with cores "auto" on a kernel driver
   * NPU_MAX_SLOTS, one per core (the throughput mode). Then job_lock
   * guards only the slots: a job takes a free one (round robin), runs
   * with its own state (rknpu: its task array) and gives it back. */
  int slots;
  unsigned slots_busy;
  int slot_next;
  pthread_cond_t slot_free;
};

#define NPU_MAX_SLOTS 3

/* Submits job and waits for it (b->timeout_ms): one job of the device at
 * a time, or (b->slots > 1) as many as there are slots. */
int dg_npu_backend_run(npu_backend *b, const npu_job *job, char *err, size_t n);

/* Opens the backend a spec names: "sim", "rocket" (first accel node whose
 * driver is rocket), "rknpu" (first DRM device named rknpu), or a device
 * path (its driver decides). NULL or "": discovery, rocket first, then
 * rknpu; never the simulator. Returns NULL with err set when none opens. */
npu_backend *dg_npu_backend_open(const char *spec, char *err, size_t n);
void dg_npu_backend_close(npu_backend *b); /* NULL: no-op */

/* The backends (backend_*.c); each opens what it is given or fails.
 * Internal to backend.c (and the tests of failing opens): a backend that
 * runs jobs comes from dg_npu_backend_open. */
npu_backend *dg_npu_sim_backend_open(char *err, size_t n);
npu_backend *dg_npu_rocket_open(const char *path, char *err, size_t n);
/* Accel node paths whose driver is rocket, from /sys/class/accel. */
int dg_npu_rocket_scan(char paths[][64], int max);
#ifdef DG_NPU_HAVE_LIBDRM
npu_backend *dg_npu_rknpu_open(const char *path, char *err, size_t n);
int dg_npu_rknpu_scan(char paths[][64], int max); /* via drmGetDevices2 */
#endif

/* How a job of `tasks` tasks meets the cores (backend.h's cores): *k
 * ranges, range c tasks [start[c], start[c] + count[c]), balanced and in
 * order; one range of all of them unless the job is split (cores 2 or 3,
 * never more ranges than tasks). What the rknpu backend submits and what a
 * task may assume about the task before it on its core (WEIGHT_REUSE). */
void dg_npu_core_ranges(int cores, int tasks, int start[3], int count[3],
                        int *k);

/* Decodes the job's list and checks every address it holds against the
 * job's buffers (sim.h's static validation): done before every submit,
 * on every backend, because a kernel may run a bad job or drop it
 * silently. */
int dg_npu_job_check(const npu_job *job, char *err, size_t n);

/* The blocks task k's list enables (the value of its trailing op-enable
 * word, NPU_EN_*), read from the list itself; 0 when it has none. The
 * vendor driver wants them, and the interrupt group to wait for, per
 * task (a conv finishes on the DPU's, a pooling task on the PPU's). */
uint32_t dg_npu_job_op_enable(const npu_job *job, int k);

/* Shared helpers. */
int dg_npu_errf(char *err, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4))); /* always returns -1 */
/* DRM_IOCTL_VERSION: driver name and major.minor.patch; -1 on error. */
int dg_npu_drm_version(int fd, char *name, size_t name_size, int ver[3]);
/* Opens the device node at path read-write and checks that the driver
 * behind it is `driver`; returns the fd (ver gets its version) or -1 with
 * err saying which of the two failed. */
int dg_npu_drm_open(const char *path, const char *driver, int ver[3], char *err,
                    size_t n);
/* ioctl retried on EINTR/EAGAIN. */
int dg_npu_ioctl(int fd, unsigned long request, void *arg);

#endif
