/* A hash set of live objects (live.h): open addressing with tombstones,
 * rebuilt when tombstones and entries fill half of it. */
#include "live.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct slot {
  const void *p; /* NULL: empty; &tomb: removed */
  dg_live_kind kind;
  bool claimed; /* dg_live_claim: a call in progress uses the object */
} slot;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t unclaimed = PTHREAD_COND_INITIALIZER;
static slot *slots;
static size_t cap, used; /* used: entries and tombstones */
static size_t live;      /* entries */
static const char tomb;

static size_t hash(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x;
}

static slot *find(const void *p) {
  for (size_t h = hash(p) & (cap - 1);; h = (h + 1) & (cap - 1)) {
    if (slots[h].p == p || !slots[h].p)
      return &slots[h];
  }
}

static bool grow(void) {
  size_t n = cap ? cap * 2 : 256;
  slot *old = slots;
  size_t oldcap = cap;
  slots = calloc(n, sizeof *slots);
  if (!slots) {
    slots = old;
    return false;
  }
  cap = n;
  used = 0;
  for (size_t i = 0; i < oldcap; i++)
    if (old[i].p && old[i].p != &tomb) {
      *find(old[i].p) = old[i];
      used++;
    }
  free(old);
  return true;
}

bool dg_live_add(const void *p, dg_live_kind k) {
  pthread_mutex_lock(&lock);
  bool ok = (used + 1) * 2 <= cap || grow();
  if (ok) {
    slot *s = find(p);
    if (!s->p)
      used++, live++;
    *s = (slot){p, k, false};
  }
  pthread_mutex_unlock(&lock);
  return ok;
}

bool dg_live_is(const void *p, dg_live_kind k) {
  if (!p)
    return false;
  pthread_mutex_lock(&lock);
  const slot *s = cap ? find(p) : NULL;
  bool live = s && s->p == p && s->kind == k;
  pthread_mutex_unlock(&lock);
  return live;
}

bool dg_live_remove(const void *p, dg_live_kind k) {
  pthread_mutex_lock(&lock);
  slot *s = p && cap ? find(p) : NULL;
  bool was = s && s->p == p && s->kind == k;
  /* A run on another thread holds it: wait for the run to end. The table
   * may be rebuilt while we wait (other objects come and go), so look the
   * slot up again each time. */
  while (was && s->claimed) {
    pthread_cond_wait(&unclaimed, &lock);
    s = find(p);
    was = s->p == p && s->kind == k;
  }
  if (was)
    s->p = &tomb; /* probes go on past it; grow() drops it */
  /* The last object gone: free the table, so that a host that unloads
   * the library (TVM's dlclose) leaves nothing behind. */
  if (was && --live == 0) {
    free(slots);
    slots = NULL;
    cap = used = 0;
  }
  pthread_mutex_unlock(&lock);
  return was;
}

dg_live_claim_result dg_live_claim(const void *p, dg_live_kind k) {
  if (!p)
    return DG_LIVE_NOT_LIVE;
  pthread_mutex_lock(&lock);
  slot *s = cap ? find(p) : NULL;
  dg_live_claim_result r = DG_LIVE_NOT_LIVE;
  if (s && s->p == p && s->kind == k) {
    r = s->claimed ? DG_LIVE_BUSY : DG_LIVE_CLAIMED;
    s->claimed = true;
  }
  pthread_mutex_unlock(&lock);
  return r;
}

void dg_live_unclaim(const void *p) {
  pthread_mutex_lock(&lock);
  slot *s = p && cap ? find(p) : NULL;
  if (s && s->p == p)
    s->claimed = false;
  pthread_cond_broadcast(&unclaimed);
  pthread_mutex_unlock(&lock);
}
