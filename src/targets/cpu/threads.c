/* Persistent worker pool for the CPU kernels.
 *
 * Jobs are tiny (a LeNet layer is a few microseconds), so the hot path
 * avoids locks: the caller publishes a job by bumping a sequence number
 * that workers spin on for a while after each job, and items are claimed
 * with a CAS on a word holding (sequence << 32 | items left). Putting the
 * sequence in the claim word means a worker that woke up late for an old
 * job can never claim an item of the next one, so the caller only waits
 * for its items to finish, not for every worker to check in. Workers that
 * have been idle for a while sleep on a condvar so an idle pool costs no
 * CPU.
 */
#define _POSIX_C_SOURCE 200809L
#include "cpu_kernels.h"

#include "core/clock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* How long a worker (or the waiting caller) spins before sleeping. Long
 * enough to cover the gap between consecutive layers of a small network,
 * short enough not to burn a core when the pool is idle. */
#define SPIN_NS 100000

/* Scratch buffers the pool keeps for reuse: one per caller that may run a
 * GEMM at the same time; more concurrent callers allocate and free their
 * own. */
#define SCRATCH_SLOTS 8

struct dg_cpu_pool {
  /* Written by workers on every item: its own cache line. */
  _Alignas(64) _Atomic uint64_t claim;
  _Atomic int done;
  /* Written once per job by the caller, polled by spinning workers. */
  _Alignas(64) _Atomic uint32_t seq;
  _Atomic int stop;
  _Atomic int sleepers;
  _Atomic int caller_waiting;
  _Atomic int busy;
  void (*fn)(void *arg, int i, int n);
  void *arg;
  int n;
  int threads, nworkers, started;
  pthread_t *tids;
  pthread_mutex_t mu;
  pthread_cond_t wake_cv, done_cv;
  /* Scratch buffers kept between calls, each checked out by one GEMM at
   * a time: sessions on different threads share the pool, so one shared
   * buffer would let two GEMMs write over each other's packed panels. */
  pthread_mutex_t scratch_mu;
  struct pool_scratch {
    void *data;
    size_t size;
    bool in_use;
  } scratch[SCRATCH_SLOTS];
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Claims and runs items of job `s` until none are left. */
static void work(dg_cpu_pool *p, uint32_t s) {
  uint64_t w = atomic_load_explicit(&p->claim, memory_order_acquire);
  for (;;) {
    if ((uint32_t)(w >> 32) != s || (uint32_t)w == 0)
      return;
    if (!atomic_compare_exchange_weak_explicit(
            &p->claim, &w, w - 1, memory_order_acq_rel, memory_order_acquire))
      continue;
    /* The fields are stable: the caller cannot start another job until
     * this item is counted in `done`. */
    int n = p->n;
    p->fn(p->arg, n - (int)(uint32_t)w, n);
    if (atomic_fetch_add(&p->done, 1) + 1 == n &&
        atomic_load(&p->caller_waiting)) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_signal(&p->done_cv);
      pthread_mutex_unlock(&p->mu);
    }
    w = atomic_load_explicit(&p->claim, memory_order_acquire);
  }
}

static void *worker_main(void *arg) {
  dg_cpu_pool *p = arg;
  uint32_t seen = 0;
  for (;;) {
    uint32_t s = atomic_load_explicit(&p->seq, memory_order_acquire);
    int64_t t0 = 0;
    for (int it = 0; s == seen && !atomic_load(&p->stop); it++) {
      cpu_relax();
      if ((it & 255) == 255) {
        int64_t t = dg_clock_ns();
        if (!t0)
          t0 = t;
        else if (t - t0 > SPIN_NS) {
          /* sleepers is raised before seq is re-read, and the caller
           * bumps seq before reading sleepers (both seq_cst), so one of
           * us sees the other and no wake-up is lost. */
          pthread_mutex_lock(&p->mu);
          atomic_fetch_add(&p->sleepers, 1);
          while (atomic_load(&p->seq) == seen && !atomic_load(&p->stop))
            pthread_cond_wait(&p->wake_cv, &p->mu);
          atomic_fetch_sub(&p->sleepers, 1);
          pthread_mutex_unlock(&p->mu);
          t0 = 0;
        }
      }
      s = atomic_load_explicit(&p->seq, memory_order_acquire);
    }
    if (atomic_load(&p->stop))
      return NULL;
    seen = s;
    work(p, s);
  }
}

static void stop_workers(dg_cpu_pool *p) {
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->stop, 1);
  pthread_cond_broadcast(&p->wake_cv);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->started; i++)
    pthread_join(p->tids[i], NULL);
}

dg_cpu_pool *dg_cpu_pool_create(int threads) {
  if (threads < 1)
    threads = 1;
  if (threads > 1024)
    threads = 1024;
  dg_cpu_pool *p = aligned_alloc(64, (sizeof(*p) + 63) & ~(size_t)63);
  if (!p)
    return NULL;
  *p = (dg_cpu_pool){0};
  atomic_init(&p->claim, 0);
  atomic_init(&p->done, 0);
  atomic_init(&p->seq, 0);
  atomic_init(&p->stop, 0);
  atomic_init(&p->sleepers, 0);
  atomic_init(&p->caller_waiting, 0);
  atomic_init(&p->busy, 0);
  p->threads = threads;
  p->nworkers = threads - 1;
  if (pthread_mutex_init(&p->mu, NULL)) {
    free(p);
    return NULL;
  }
  if (pthread_mutex_init(&p->scratch_mu, NULL)) {
    pthread_mutex_destroy(&p->mu);
    free(p);
    return NULL;
  }
  if (pthread_cond_init(&p->wake_cv, NULL)) {
    pthread_mutex_destroy(&p->scratch_mu);
    pthread_mutex_destroy(&p->mu);
    free(p);
    return NULL;
  }
  if (pthread_cond_init(&p->done_cv, NULL)) {
    pthread_cond_destroy(&p->wake_cv);
    pthread_mutex_destroy(&p->scratch_mu);
    pthread_mutex_destroy(&p->mu);
    free(p);
    return NULL;
  }
  if (p->nworkers > 0) {
    p->tids = malloc(sizeof(*p->tids) * (size_t)p->nworkers);
    if (!p->tids) {
      dg_cpu_pool_destroy(p);
      return NULL;
    }
    for (; p->started < p->nworkers; p->started++) {
      if (pthread_create(&p->tids[p->started], NULL, worker_main, p)) {
        dg_cpu_pool_destroy(p);
        return NULL;
      }
    }
  }
  return p;
}

void dg_cpu_pool_destroy(dg_cpu_pool *p) {
  if (!p)
    return;
  stop_workers(p);
  pthread_cond_destroy(&p->done_cv);
  pthread_cond_destroy(&p->wake_cv);
  pthread_mutex_destroy(&p->mu);
  pthread_mutex_destroy(&p->scratch_mu);
  for (int i = 0; i < SCRATCH_SLOTS; i++)
    free(p->scratch[i].data);
  free(p->tids);
  free(p);
}

int dg_cpu_pool_threads(const dg_cpu_pool *p) { return p ? p->threads : 1; }

int dg_cpu_pool_tasks(const dg_cpu_pool *pool, int64_t work, int64_t min_work,
                      int64_t items) {
  int64_t t = work < min_work ? 1 : dg_cpu_pool_threads(pool);
  if (items > 0 && t > items)
    t = items;
  return t > 1 ? (int)t : 1;
}

void *dg_cpu_pool_scratch_get(dg_cpu_pool *p, size_t bytes) {
  size_t sz = (bytes + 63) & ~(size_t)63;
  if (!sz)
    sz = 64;
  if (!p)
    return aligned_alloc(64, sz);
  pthread_mutex_lock(&p->scratch_mu);
  /* The smallest free slot that fits, else a free slot to grow (the
   * largest, so that slots settle at the sizes callers need). */
  int fit = -1, grow = -1;
  for (int i = 0; i < SCRATCH_SLOTS; i++) {
    struct pool_scratch *c = &p->scratch[i];
    if (c->in_use)
      continue;
    if (c->size >= sz && (fit < 0 || c->size < p->scratch[fit].size))
      fit = i;
    if (grow < 0 || c->size > p->scratch[grow].size)
      grow = i;
  }
  void *data = NULL;
  if (fit >= 0) {
    p->scratch[fit].in_use = true;
    data = p->scratch[fit].data;
  } else if (grow >= 0) {
    struct pool_scratch *c = &p->scratch[grow];
    free(c->data);
    c->data = aligned_alloc(64, sz);
    c->size = c->data ? sz : 0;
    c->in_use = c->data != NULL;
    data = c->data;
  }
  pthread_mutex_unlock(&p->scratch_mu);
  /* Every slot busy: this caller's buffer lives for its call only. */
  return fit < 0 && grow < 0 ? aligned_alloc(64, sz) : data;
}

void dg_cpu_pool_scratch_put(dg_cpu_pool *p, void *data) {
  if (!data)
    return;
  if (p) {
    pthread_mutex_lock(&p->scratch_mu);
    for (int i = 0; i < SCRATCH_SLOTS; i++) {
      if (p->scratch[i].data == data) {
        p->scratch[i].in_use = false;
        pthread_mutex_unlock(&p->scratch_mu);
        return;
      }
    }
    pthread_mutex_unlock(&p->scratch_mu);
  }
  free(data);
}

void dg_cpu_pool_run(dg_cpu_pool *p, void (*fn)(void *arg, int i, int n),
                     void *arg, int n) {
  if (n <= 0)
    return;
  /* Inline when there is nothing to share, and when called from inside a
   * job (nested use would otherwise deadlock on the single job slot). */
  if (!p || p->nworkers == 0 || n == 1 || atomic_exchange(&p->busy, 1)) {
    for (int i = 0; i < n; i++)
      fn(arg, i, n);
    return;
  }
  p->fn = fn;
  p->arg = arg;
  p->n = n;
  atomic_store_explicit(&p->done, 0, memory_order_relaxed);
  uint32_t s = atomic_load_explicit(&p->seq, memory_order_relaxed) + 1;
  atomic_store_explicit(&p->claim, (uint64_t)s << 32 | (uint32_t)n,
                        memory_order_release);
  atomic_store(&p->seq, s);
  if (atomic_load(&p->sleepers) > 0) {
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->wake_cv);
    pthread_mutex_unlock(&p->mu);
  }
  work(p, s);
  /* Spin first: the last item usually ends within microseconds. */
  int64_t t0 = 0;
  for (int it = 0; atomic_load(&p->done) < n; it++) {
    cpu_relax();
    if ((it & 255) == 255) {
      int64_t t = dg_clock_ns();
      if (!t0)
        t0 = t;
      else if (t - t0 > SPIN_NS) {
        pthread_mutex_lock(&p->mu);
        atomic_store(&p->caller_waiting, 1);
        while (atomic_load(&p->done) < n)
          pthread_cond_wait(&p->done_cv, &p->mu);
        atomic_store(&p->caller_waiting, 0);
        pthread_mutex_unlock(&p->mu);
        break;
      }
    }
  }
  atomic_store(&p->busy, 0);
}
