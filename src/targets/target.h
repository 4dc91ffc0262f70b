/* The target contract: the interface every device implements, and all a
 * target includes of the library besides ops/ and core/ (the include
 * check, tools/check-layers.py, keeps it so). The runtime talks to devices
 * only through this table, so a new target plugs in as its folder, its
 * line in kinds.def and its meson option (docs/architecture.md).
 *
 * Lifecycle: enumerate() appends devices to the context at
 * dg_context_create; supports()/estimate_us() are asked for every node at
 * compile time; compile() turns a segment (a run of consecutive nodes
 * placed on one device) into target state; run() executes it; release()
 * frees it. destroy() frees the device at dg_context_destroy.
 */
#ifndef DG_TARGET_H
#define DG_TARGET_H

#include "core/ir.h"

typedef struct dg_device dg_device;

/* A segment: nodes[0..node_count) of ir, all placed on one device.
 * host[id] is the host buffer of tensor id for every tensor the segment
 * reads from or must leave on the host: its inputs from outside (graph
 * inputs, constants, tensors made by other segments) and its outputs used
 * outside (by other segments, as graph outputs, or by verify when
 * keep_all is set). A CPU-memory target may use host[] for all tensors. */
typedef struct dg_segment {
  const dg_ir *ir;
  const int *nodes;
  int node_count;
  bool keep_all; /* verify: every node output must reach host[] */
  bool profile;  /* time each node (dg_compile_options.profile) */
} dg_segment;

/* The tensors crossing a segment's boundary (ids, each listed once):
 * inputs come from the host (graph inputs or other segments' outputs) on
 * every run; constants can be uploaded once at compile time; outputs must
 * be left in host[] after a run (used by other segments, graph outputs, or
 * every node output when keep_all). */
typedef struct dg_segment_io {
  uint32_t *inputs, *constants, *outputs;
  int input_count, constant_count, output_count;
  /* Per tensor id (tensor_count + 1 entries): which of the lists above
   * hold it, DG_IO_* bits, so that targets ask in O(1). */
  uint8_t *role;
} dg_segment_io;
enum { DG_IO_INPUT = 1, DG_IO_CONSTANT = 2, DG_IO_OUTPUT = 4 };
/* Computed in O(nodes + edges) of the graph. */
dg_status dg_segment_boundary(const dg_segment *seg, dg_segment_io *io);
void dg_segment_io_free(dg_segment_io *io);

typedef struct dg_target_vtbl {
  /* Non-zero when the target has a kernel (or lowering) for op on this
   * device, from its op table: what dg_device_supports answers, and the
   * legacy bits of dg_device_info.ops. A node of such an op may still be
   * declined by supports() for its shapes or dtypes. */
  int (*runs_op)(dg_device *dev, dg_op op);
  /* Non-zero when the device can run node; otherwise writes why (a short
   * phrase like "f16 not supported") into why. */
  int (*supports)(dg_device *dev, const dg_ir *ir, const dg_node *node,
                  char *why, size_t why_size);
  /* Estimated microseconds to run node alone, excluding transfers. */
  double (*estimate_us)(dg_device *dev, const dg_ir *ir, const dg_node *node);
  dg_status (*compile)(dg_device *dev, const dg_segment *seg, void **state,
                       dg_diagnostic *diag);
  /* Runs the segment; node_us (node_count entries, may be NULL) receives
   * measured per-node times when the target has them. resident (may be
   * NULL) is per tensor id: this device's buffer (buffer_create's) that a
   * boundary input is read from or a boundary output written to, instead
   * of host[id]; the session gives one only for tensors no other device
   * touches (graph.h, dg_binding.buffer). A target without buffers
   * never gets one. */
  dg_status (*run)(void *state, void *const *host, void *const *resident,
                   double *node_us, dg_diagnostic *diag);
  void (*release)(void *state);
  void (*destroy)(dg_device *dev);
  /* Device buffers (graph.h's dg_buffer); NULL on a target without them,
   * whose devices refuse dg_buffer_create. buffer_create allocates at
   * least bytes; buffer_copy moves bytes between host and the buffer
   * (to_device: host -> buffer), waiting for the device no longer than
   * the context's time-out; buffer_destroy frees it, or keeps it
   * allocated where a timed-out run may still use it (the same rule as
   * the segments', dg_context_options.device_timeout_ms). */
  dg_status (*buffer_create)(dg_device *dev, size_t bytes, void **buf,
                             dg_diagnostic *diag);
  dg_status (*buffer_copy)(dg_device *dev, void *buf, void *host, size_t bytes,
                           bool to_device, dg_diagnostic *diag);
  void (*buffer_destroy)(dg_device *dev, void *buf);
  /* run split in two (graph.h's dg_session_submit, dg_session_wait), or
   * both NULL: submit reads the inputs and queues the device's work;
   * wait ends it, bounded by the context's time-out, with the outputs
   * into host[] (host NULL: dropped). After a submit that returned DG_OK
   * the session calls wait exactly once before any other call on the
   * state. run is submit then wait. */
  dg_status (*submit)(void *state, void *const *host, void *const *resident,
                      dg_diagnostic *diag);
  dg_status (*wait)(void *state, void *const *host, double *node_us,
                    dg_diagnostic *diag);
} dg_target_vtbl;

struct dg_device {
  const dg_target_vtbl *vt;
  dg_device_info info;
  void *impl;
  /* For the cost model: fixed cost to start a segment and to move one
   * byte between this device and the host (0 for host memory). */
  double launch_us;
  double transfer_us_per_byte;
  /* The device computes in host memory: its segments read and write
   * host[] for every tensor they touch, so the session's host plan gives
   * all of them bytes. Otherwise only the segment's boundary (target.h's
   * dg_segment) is promised in host[]. */
  bool host_memory;
};

/* A target keeps what it needs per device in impl; a device that fails
 * during a run reports DG_ERROR_DEVICE with a diagnostic naming it. */
typedef struct dg_device_list {
  dg_device *items;
  int count, cap;
} dg_device_list;

/* Appends a device; returns it (zeroed but for vt), or NULL on OOM. */
dg_device *dg_device_list_add(dg_device_list *list, const dg_target_vtbl *vt);

/* A target's entry point: appends its devices. Failing to find a device is
 * not an error (returns DG_OK with nothing added). opts are the context's,
 * resolved: cache_dir is the directory the context chose (DG_CACHE_DIR or
 * its defaults), NULL when caching is off, so no target reads the
 * environment for it. */
typedef struct dg_target {
  const char *name;
  dg_device_kind kind;
  /* Appends the devices found to out; when it appends none, writes why
   * into why (what dg_context_device_absence answers), e.g. "no Vulkan
   * driver (vkCreateInstance: -9)". */
  dg_status (*enumerate)(const dg_context_options *opts, dg_device_list *out,
                         char *why, size_t why_size);
} dg_target;

/* The i-th target built into this library, or NULL past the last. */
const dg_target *dg_target_get(int i);

/* Every kind of device the library knows, built in or not (kinds.def):
 * the mask of all of them, a kind's DOT colour ("white" if unknown), and
 * the kind of a name (0 if unknown). dg_device_kind_name is graph.h's. */
unsigned dg_device_kinds_all(void);
const char *dg_device_kind_colour(dg_device_kind kind);
dg_device_kind dg_device_kind_from_name(const char *name);

extern const dg_target dg_target_cpu;

/* How many slices of K a GPU's 64x64-tile GEMM or conv should be split
 * into (Vulkan's gemm.comp, OpenCL's gemm_f32): where its tiles are fewer
 * than two per compute unit (multiprocessor) and K is at least 128, as
 * many as bring the workgroups to two per unit, at most 16, each at least
 * 64 deep; 1 otherwise. The one rule both GPU targets follow. */
static inline int64_t dg_target_splitk_slices(int64_t tiles, int64_t units,
                                              int64_t K) {
  int64_t want = 2 * units;
  if (tiles >= want || K < 128)
    return 1;
  int64_t ks = (want + tiles - 1) / tiles;
  ks = ks > 16 ? 16 : ks;
  return ks > K / 64 ? K / 64 : ks;
}

#endif
