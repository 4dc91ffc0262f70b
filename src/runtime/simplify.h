/* Graph simplification, one of the compile-time passes (passes.h). */
#ifndef DG_SIMPLIFY_H
#define DG_SIMPLIFY_H

#include "rewrite.h"

/* Removes what computes nothing: a reshape to its input's own shape, a
 * cast to its input's own dtype, an identity transpose, a transpose
 * undone by the next one; a reshape of a reshape reads the first one's
 * input; and then every node whose output nothing reads (no node, no
 * graph output). A node whose output is a graph output stays, as does
 * one whose pin differs from its input's producer's. Never fails. */
void dg_simplify(dg_rewrite *rw);

#endif
