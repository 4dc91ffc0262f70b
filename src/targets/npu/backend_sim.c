/* The `sim` backend: buffers are host memory with IOVAs handed out from 0
 * (so "address 0 is valid" is exercised everywhere), and a submit runs the
 * simulator at once. */
#include "backend.h"
#include "sim.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sim_priv {
  pthread_mutex_t alloc_lock; /* segments compile on any thread */
  uint64_t next_iova;
  uint32_t next_handle;
  char job_err[256]; /* error of the last submit, reported by wait */
  /* The rounding and average-pooling models, from the environment when
   * the device was opened (DG_NPU_SIM_ROUND, DG_NPU_SIM_POOL_AVG): read
   * once, not per job. */
  npu_round round;
  npu_pool_avg pool_avg;
} sim_priv;

static int sim_alloc(npu_backend *b, size_t size, npu_bo *bo, char *err,
                     size_t n) {
  sim_priv *p = b->priv;
  size_t pages = (size + 4095) / 4096 * 4096;
  memset(bo, 0, sizeof *bo);
  if (!size || pages > 0xffffffffu)
    return dg_npu_errf(err, n, "sim: cannot allocate %zu bytes of NPU memory",
                       size);
  if (!(bo->map = aligned_alloc(4096, pages)))
    return dg_npu_errf(err, n, "sim: out of host memory (%zu bytes)", size);
  memset(bo->map, 0, pages);
  pthread_mutex_lock(&p->alloc_lock);
  bool room = p->next_iova + pages <= 0xffffffffu;
  if (room) {
    bo->iova = p->next_iova;
    bo->handle = ++p->next_handle;
    p->next_iova += pages;
  }
  pthread_mutex_unlock(&p->alloc_lock);
  if (!room) {
    free(bo->map);
    bo->map = NULL;
    return dg_npu_errf(err, n, "sim: cannot allocate %zu bytes of NPU memory",
                       size);
  }
  bo->size = size;
  return 0;
}

static void sim_free(npu_backend *b, npu_bo *bo) {
  (void)b;
  free(bo->map);
  memset(bo, 0, sizeof *bo);
}

static int sim_nop(npu_backend *b, npu_bo *bo, char *err, size_t n) {
  (void)b, (void)bo, (void)err, (void)n;
  return 0;
}

/* Host view of a job for the simulator: inputs, then outputs. */
static npu_sim_buffer *sim_buffers(const npu_job *job) {
  npu_sim_buffer *bufs =
      calloc((size_t)(job->in_count + job->out_count), sizeof *bufs);
  if (!bufs)
    return NULL;
  for (int i = 0; i < job->in_count + job->out_count; i++) {
    bool out = i >= job->in_count;
    npu_bo *bo = out ? job->out[i - job->in_count] : job->in[i];
    bufs[i] = (npu_sim_buffer){out ? "output" : "input", (uint32_t)bo->iova,
                               bo->size, bo->map, out};
  }
  return bufs;
}

/* Task k's list, or NULL where it does not lie inside the job's command
 * buffer. */
static const uint64_t *task_words(const npu_job *job, int k, int *count) {
  npu_task_ref r = dg_npu_job_task(job, k);
  *count = r.word_count;
  if (!job->cmd || !job->cmd->map || r.word_count < 1 || r.offset % 8 ||
      (size_t)r.offset + (size_t)r.word_count * 8 > job->cmd->size)
    return NULL;
  return (const uint64_t *)(const void *)(job->cmd->map + r.offset);
}

int dg_npu_job_check(const npu_job *job, char *err, size_t n) {
  if (job->tasks &&
      (job->task_count < 1 || job->task_count > NPU_JOB_MAX_TASKS))
    return dg_npu_errf(err, n, "job of %d tasks (1..%d)", job->task_count,
                       NPU_JOB_MAX_TASKS);
  npu_sim_buffer *bufs = sim_buffers(job);
  if (!bufs)
    return dg_npu_errf(err, n, "out of host memory checking a job");
  int rc = 0;
  for (int k = 0; !rc && k < dg_npu_job_tasks(job); k++) {
    int count;
    const uint64_t *words = task_words(job, k, &count);
    npu_sim_job sj = {words,
                      count,
                      bufs,
                      job->in_count + job->out_count,
                      NPU_ROUND_HALF_UP,
                      NPU_POOL_AVG_RECIP};
    rc = words ? dg_npu_sim_check(&sj, err, n)
               : dg_npu_errf(err, n,
                             "task %d's list lies outside the job's "
                             "command buffer",
                             k);
  }
  free(bufs);
  return rc;
}

/* The tasks in order, as the kernel runs a chained job; the first error
 * ends it. */
static int sim_submit(npu_backend *b, const npu_job *job, char *err, size_t n) {
  sim_priv *p = b->priv;
  npu_sim_buffer *bufs = sim_buffers(job);
  if (!bufs)
    return dg_npu_errf(err, n, "sim: out of host memory");
  p->job_err[0] = 0;
  for (int k = 0; !p->job_err[0] && k < dg_npu_job_tasks(job); k++) {
    int count;
    const uint64_t *words = task_words(job, k, &count);
    npu_sim_job sj = {words,    count,
                      bufs,     job->in_count + job->out_count,
                      p->round, p->pool_avg};
    if (!words)
      snprintf(p->job_err, sizeof p->job_err, "task %d outside its buffer", k);
    else if (dg_npu_sim_run(&sj, p->job_err, sizeof p->job_err) &&
             !p->job_err[0])
      p->job_err[0] = '?';
  }
  free(bufs);
  return 0;
}

static int sim_wait(npu_backend *b, const npu_job *job, int timeout_ms,
                    char *err, size_t n) {
  (void)job, (void)timeout_ms;
  sim_priv *p = b->priv;
  if (p->job_err[0])
    return dg_npu_errf(err, n, "sim: job failed: %s", p->job_err);
  return 0;
}

static void sim_close(npu_backend *b) {
  sim_priv *p = b->priv;
  pthread_mutex_destroy(&p->alloc_lock);
  free(p);
  free(b);
}

static const npu_backend_ops sim_ops = {"sim",    sim_alloc, sim_free,
                                        sim_nop,  sim_nop,   sim_submit,
                                        sim_wait, sim_close};

npu_backend *dg_npu_sim_backend_open(char *err, size_t n) {
  npu_backend *b = calloc(1, sizeof *b);
  sim_priv *p = calloc(1, sizeof *p);
  if (!b || !p || pthread_mutex_init(&p->alloc_lock, NULL)) {
    free(b);
    free(p);
    dg_npu_errf(err, n, "sim: out of host memory");
    return NULL;
  }
  p->round = dg_npu_sim_round_default();
  p->pool_avg = dg_npu_sim_pool_avg_default();
  b->ops = &sim_ops;
  b->priv = p;
  b->fd = -1;
  b->is_simulator = 1;
  strcpy(b->node, "sim");
  strcpy(b->driver, "directgraph RK3588 simulator");
  return b;
}
