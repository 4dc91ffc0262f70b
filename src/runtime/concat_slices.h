/* Concats made in place in the host arena: each input of a concat is
 * given the bytes of its slice of the concat's output, so that its
 * producer writes it there and the concat copies nothing (SqueezeNet's,
 * GoogLeNet's and Inception's modules concatenate every branch; their
 * copies were a tenth of SqueezeNet's time on the CPU).
 *
 * The host memory plan (session.c) asks before it places blocks. A concat
 * qualifies when it runs on a host-memory device (the CPU), every
 * dimension before its axis is 1 (so each input is one contiguous run of
 * the output), and each input is a value made on a host-memory device,
 * held in the arena, given once, not itself a concat's output holding
 * slices, and starts at a multiple of the arena's alignment. A concat
 * whose inputs begin with all of an earlier one's (DenseNet's layers each
 * concatenate the block's input and every output so far) takes that
 * concat's output, slices and all, as its own first slice, so a dense
 * block's concats are prefixes of one buffer. The outermost output's
 * block then stays live from its slices' first step to the last, and the
 * slices get no block of their own.
 *
 * The contract with the targets: a host-memory device's concat compares
 * each input's address with its slice's and copies only those that
 * differ (a graph output the caller bound is written to the caller's
 * memory, not the slice), so the result is the same whatever the plan. */
#ifndef DG_RUNTIME_CONCAT_SLICES_H
#define DG_RUNTIME_CONCAT_SLICES_H

#include "core/ir.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* host_node[i]: node i runs on a host-memory device. first and last: the
 * host live steps of each tensor (index = id; -1 where the host holds
 * none), widened here for the concats taken. slice_of[t] receives the id
 * of the concat output tensor t lives in (0: none; that output may be a
 * slice itself) and slice_at[t] its byte offset there; both have
 * ir->tensor_count + 1 entries. Returns the number of concats made in
 * place. */
int dg_concat_slices(const dg_ir *ir, const bool *host_node, int *first,
                     int *last, uint32_t *slice_of, size_t *slice_at,
                     size_t align);

#endif
