/* The objects the public API hands out (contexts, graphs, sessions),
 * recorded while they live, so that a destroyed or made-up pointer is
 * refused with DG_ERROR_INVALID_ARGUMENT at the API's door instead of
 * being dereferenced: use after destroy, in release and debug builds
 * alike. A pointer whose address malloc has since reused for a new object
 * of the same kind is not caught (the check is cheap, not perfect).
 * Thread-safe: one mutex around a hash set of pointers. */
#ifndef DG_LIVE_H
#define DG_LIVE_H

#include <stdbool.h>

typedef enum dg_live_kind {
  DG_LIVE_CONTEXT = 1,
  DG_LIVE_GRAPH,
  DG_LIVE_SESSION,
} dg_live_kind;

/* Records p as a live object of kind k; false when out of memory. */
bool dg_live_add(const void *p, dg_live_kind k);
/* Whether p is a live object of kind k. */
bool dg_live_is(const void *p, dg_live_kind k);
/* Forgets p (at its destroy, before it is freed); false if p was not
 * live (a second destroy). */
bool dg_live_remove(const void *p);

#endif
