/* Sessions: a compiled graph with its placement, segments, host memory
 * plan and plan object. */
#ifndef DG_SESSION_H
#define DG_SESSION_H

#include "internal.h"

#include <stdatomic.h>

struct dg_plan {
  const dg_ir *ir; /* the session's, for edges */
  dg_plan_node *nodes;
  int node_count;
  int segment_count;
  size_t host_bytes;   /* the host arena the session planned */
  int concats_in_place; /* concats whose inputs live in their slices */
  char precision[160]; /* dg_plan_precision */
};

typedef struct dg_segment_rt {
  dg_device *dev;
  int *nodes;
  int node_count;
  int first; /* index of nodes[0] in the graph */
  void *state;
} dg_segment_rt;

/* The outputs one run delivers (run.c's prepare_outputs and finish). */
typedef struct dg_run_outputs {
  int n;
  void **direct, **data;
  const dg_io_binding **which;
  /* Entries from here on are bound buffers (a CPU's data: the tensor's
   * bytes as held, no conversion); those before, the caller's bindings. */
  int bound_from;
} dg_run_outputs;

struct dg_session {
  dg_context *ctx;
  dg_ir ir;
  dg_compile_options opts;
  int *devices_allowed; /* copy of opts.devices */
  int *placement;       /* device index per node */
  dg_segment_rt *segments;
  int segment_count;
  bool keep_all;
  void *arena; /* host memory of all non-constant tensors */
  size_t arena_size;
  size_t *offsets;    /* per tensor (index id-1); SIZE_MAX: none */
  void **host;        /* per tensor id (index 0 unused) */
  void *io_scratch;   /* NHWC conversion of inputs */
  size_t *io_offsets; /* per input binding */
  double *node_us;    /* last run, per node */
  /* dg_session_bind_buffer's buffers, per input and per output index
   * (NULL: none), and per tensor id during a run the target's buffer of
   * a device's one (target.h's resident), NULL otherwise. */
  dg_buffer **in_buf, **out_buf;
  void **resident;
  /* The run in progress (run.c): the outputs it delivers; submitted
   * between dg_session_submit and dg_session_wait (the session stays
   * claimed), waiting while the last segment's device work is in flight. */
  dg_run_outputs out;
  atomic_bool submitted;
  bool waiting;
  struct dg_plan plan;
  dg_session *verify_twin;
  /* While dg_session_run or dg_session_verify runs, the session is
   * claimed in the live table (live.h): host[], the arena and every
   * segment's device buffers belong to one run at a time, so a second
   * concurrent call is refused (dg_session_claim), and dg_session_destroy
   * on another thread waits for the run to end. */
};

/* Claims s for one run or verify; false (diag filled, naming the call)
 * when s is not a live session, or another thread is inside one of them
 * on the same session. */
bool dg_session_claim(dg_session *s, const char *call, dg_diagnostic *diag);
/* Whether s is a live session; false (diag filled, naming the call: NULL,
 * or destroyed) otherwise. */
bool dg_session_check(const dg_session *s, const char *call,
                      dg_diagnostic *diag);
static inline void dg_session_unclaim(dg_session *s) { dg_live_unclaim(s); }

/* Compile with or without buffer reuse (verify needs every value). */
dg_status dg_session_compile(dg_context *ctx, const dg_ir *ir,
                             const dg_compile_options *opts, bool keep_all,
                             dg_session **out, dg_diagnostic *diag);

/* Global placement (placement.c). Fills s->placement and the plan's
 * device and reason fields. */
dg_status dg_place(dg_session *s, dg_diagnostic *diag);
/* Whether placement weighs device d for a node pinned to pin (-1: none):
 * the compile options allow it, and it is no simulator nobody asked
 * for. */
bool dg_place_considers(const dg_session *s, int d, int pin);

/* Binds inputs (converting layouts) and runs every segment (run.c). */
dg_status dg_session_execute(dg_session *s, const dg_binding *inputs,
                             int input_count, dg_diagnostic *diag);
/* A run's refusal of a binding: diag names the call, field and name. */
dg_status dg_run_refuse(dg_diagnostic *diag, dg_status st, const char *name,
                        const char *field, const char *what);
/* At dg_session_destroy: ends a submitted run nobody waited for, its
 * device work waited for (bounded) and its outputs dropped. */
void dg_session_drop_run(dg_session *s);

#endif
