/* The objects the public API hands out (contexts, graphs, sessions,
 * buffers),
 * recorded while they live, so that a destroyed or made-up pointer is
 * refused with DG_ERROR_INVALID_ARGUMENT at the API's door instead of
 * being dereferenced: use after destroy, in release and debug builds
 * alike. A pointer whose address malloc has since reused for a new object
 * of the same kind is not caught (the check is cheap, not perfect).
 * Thread-safe: one mutex around a hash set of pointers.
 *
 * A live object can also be claimed for the length of one call (a
 * session's run or verify): the claim is taken under the same lock as the
 * liveness check, and dg_live_remove waits until it is let go, so that a
 * destroy on one thread never frees what a run on another is using. */
#ifndef DG_LIVE_H
#define DG_LIVE_H

#include <stdbool.h>

typedef enum dg_live_kind {
  DG_LIVE_CONTEXT = 1,
  DG_LIVE_GRAPH,
  DG_LIVE_SESSION,
  DG_LIVE_BUFFER,
} dg_live_kind;

/* Records p as a live object of kind k; false when out of memory. */
bool dg_live_add(const void *p, dg_live_kind k);
/* Whether p is a live object of kind k. */
bool dg_live_is(const void *p, dg_live_kind k);
/* Forgets p, a live object of kind k (at its destroy, before it is
 * freed), first waiting for a claim on it to end; false if p was not a
 * live object of that kind (a second destroy, or another kind's object
 * cast to this one). */
bool dg_live_remove(const void *p, dg_live_kind k);

typedef enum dg_live_claim_result {
  DG_LIVE_CLAIMED,
  DG_LIVE_NOT_LIVE, /* not a live object of that kind */
  DG_LIVE_BUSY,     /* live, and claimed by a call in progress */
} dg_live_claim_result;

/* Claims p, a live object of kind k, for one call; never waits. */
dg_live_claim_result dg_live_claim(const void *p, dg_live_kind k);
/* Ends the claim dg_live_claim took, waking a dg_live_remove waiting. */
void dg_live_unclaim(const void *p);

#endif
