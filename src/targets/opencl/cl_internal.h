/* The OpenCL target's private structures, shared by its files:
 * cl_device.c (discovery, capabilities, cost model), cl_program.c (program
 * build and on-disk binary cache), cl_nodes.c (kernel choice and arguments
 * per node), cl_segment.c (compile, run, release), cl_util.c (errors and
 * buffer creation). */
#ifndef DG_CL_INTERNAL_H
#define DG_CL_INTERNAL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "cl_test.h"
#include "core/diag.h"
#include "core/half.h"
#include "core/names.h"
#include "targets/target.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct dg_cl_device {
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue; /* in order, profiling on */
  pthread_mutex_t lock;   /* guards program */
  cl_program program;     /* built on the first compile that needs it */
  char name[128];
  char driver_version[64];
  char device_version[96];
  char platform_version[160];
  char build_options[128];
  char *cache_dir;   /* NULL: no program cache */
  bool is_cpu;       /* CL_DEVICE_TYPE_CPU (PoCL and the like) */
  bool host_unified; /* shares memory with the host: buffers are
                        allocated host-accessible (CL_MEM_ALLOC_HOST_PTR) */
  bool correct_div;  /* correctly rounded fp32 division available */
  int timeout_ms;    /* dg_context_options.device_timeout_ms */
  /* A run timed out: queued work may still be running, so the device is
   * not used again (supports() declines, runs fail). */
  atomic_bool timed_out;
  cl_uint compute_units;
  size_t max_wg;
  cl_ulong local_mem;
  double gflops; /* rough sustained estimate for the cost model */
  /* Large f32 GEMM tiles (gemm.cl) the device runs, chosen at discovery
   * from its work-group size and local memory and named in the device's
   * listing: bit 0 128 x 128, bit 1 64 x 128, bit 2 64 x 64. */
  int big_tiles;
} dg_cl_device;

/* The embedded program (generated from kernels/ by embed.py). */
extern const char dg_cl_program_source[];

/* ---- cl_util.c ---- */
const char *dg_cl_error_name(cl_int err);
/* DG_ERROR_OUT_OF_MEMORY for the allocation errors, else DG_ERROR_DEVICE. */
dg_status dg_cl_status(cl_int err);
/* Fills diag for a failed CL call about node (NULL: not about a node) and
 * returns the mapped status. */
dg_status dg_cl_fail(dg_diagnostic *diag, cl_int err, int node_index,
                     const dg_node *node, const char *call);
/* clCreateBuffer, through the allocation-failure injection of cl_test.h. */
cl_mem dg_cl_buffer(cl_context ctx, cl_mem_flags flags, size_t size, void *host,
                    cl_int *err);
/* clReleaseMemObject of a buffer from dg_cl_buffer; NULL is a no-op. */
void dg_cl_buffer_free(cl_mem m);
/* Test counters (cl_test.h), updated by cl_program.c. */
void dg_cl_stat_add(int *counter, int delta);
extern dg_opencl_stats dg_cl_stats;

/* ---- cl_program.c ---- */
/* Builds (or loads from the cache) the device's program once. */
dg_status dg_cl_program_get(dg_cl_device *d, cl_program *out,
                            dg_diagnostic *diag);

/* ---- cl_reduce.c ---- */

/* reduce and layer_norm: fills the geometry block g (DG_CL_GEOM_INTS,
 * zeroed; kernels/reduce_geom.h) and the work-items (work-groups of 64),
 * and returns the kernel's name (reduce.cl): reduce_<fn> taking (x, y, g),
 * layer_norm taking (x, scale, bias, y, g). */
const char *dg_cl_reduce_geom(const dg_ir *ir, const dg_node *n, int32_t *g,
                              int64_t *items);

/* ---- cl_nodes.c ---- */
typedef enum dg_cl_cmd { CL_CMD_KERNEL, CL_CMD_COPY, CL_CMD_CONCAT } dg_cl_cmd;

#define DG_CL_AUX 6

typedef struct dg_cl_node {
  int index; /* node index in the graph */
  const dg_node *node;
  dg_cl_cmd cmd;
  cl_kernel kernel;
  cl_uint dims;
  size_t gws[3], lws[3];
  /* A second kernel after the first, or NULL: the sum of a split-K
   * GEMM's partials (gemm_splitk_f32), over post_gws in 2 dimensions. */
  cl_kernel post;
  size_t post_gws[2], post_lws[2];
  cl_mem aux[DG_CL_AUX]; /* geometry, offsets, multipliers, zero points,
                            split-K partials */
  char tile[32];         /* kernel variant, for diagnostics */
} dg_cl_node;

/* What a device needs to run op (cl_nodes.c's op table): a mask of
 * DG_CL_NEEDS_*, 0 for nothing, DG_CL_NO_KERNEL when the target has no
 * kernel for the op. */
enum {
  DG_CL_NEEDS_CORRECT_DIV = 1, /* correctly rounded fp32 division */
  DG_CL_NO_KERNEL = 1u << 31,
};
unsigned dg_cl_op_needs(dg_op op);

/* ---- cl_movement.c ---- */
/* The geometry block (DG_CL_GEOM_INTS, zeroed by the caller) and kernel
 * name of a transpose, slice, pad, expand or gather node; false for any
 * other op. */
bool dg_cl_movement_geom(const dg_ir *ir, const dg_node *n, int32_t *g,
                         char *kernel, size_t kernel_size);
/* cl_compare.c: fills the geometry block g of a compare, where or
 * arg_reduce node and returns its kernel (compare.cl); *items is the
 * work-items it takes. */
const char *dg_cl_compare_setup(const dg_ir *ir, const dg_node *n, int32_t *g,
                                int64_t *items);

/* Chooses the kernel of node and binds its arguments to mem[] (per tensor
 * id; absent optional inputs are NULL). */
dg_status dg_cl_node_prepare(dg_cl_device *d, cl_program prog, const dg_ir *ir,
                             int index, cl_mem *mem, dg_cl_node *cn,
                             dg_diagnostic *diag);
void dg_cl_node_release(dg_cl_node *cn);
/* The kernel dg_cl_node_prepare would pick for node index ("" for a copy
 * command), chosen without making a kernel or a buffer. */
void dg_cl_node_choice(dg_cl_device *d, const dg_ir *ir, int index, char *name,
                       size_t size);
/* The speed of the kernel dg_cl_node_prepare would pick for node index,
 * against the device's gflops figure (1 on CPU-type devices, whose
 * figures are for the device as a whole): the cost model prices the
 * kernel compile will run. Makes no kernel and no buffer. */
double dg_cl_node_speed(dg_cl_device *d, const dg_ir *ir, int index);

/* ---- cl_spatial.c ---- */
/* What a spatial-family or int8 node (cl_int8.c) runs: kernel is called with
 * the node's inputs in order (absent ones NULL), its output, the geometry block
 * g and, where table_bytes is not 0, a read-only table (malloc'd; the caller
 * frees it), over items work-items. */
typedef struct dg_cl_spatial {
  const char *kernel;
  int64_t items;
  void *table;
  size_t table_bytes;
} dg_cl_spatial;
/* Fills g (DG_CL_GEOM_INTS ints, zeroed by the caller) and sp for node
 * n; with estimate, no table is made. false on host out-of-memory. */
bool dg_cl_spatial_setup(const dg_ir *ir, const dg_node *n, int32_t *g,
                         dg_cl_spatial *sp, bool estimate);

/* ---- cl_int8.c ---- */
/* dg_cl_spatial_setup for qbinary, lookup and qavg_pool2d (int8.cl). */
bool dg_cl_int8_setup(const dg_ir *ir, const dg_node *n, int32_t *g,
                      dg_cl_spatial *sp, bool estimate);
/* Whether node n is a qavg_pool2d whose window gets a work-group per
 * output (the cost model prices it as pool.cl's gap). */
bool dg_cl_qpool_grouped(const dg_node *n);
/* true, with the reason in why, where the target declines node n for its
 * int8 kernels' limits (a qavg_pool2d window too large for its table). */
bool dg_cl_int8_declines(const dg_node *n, char *why, size_t why_size);

/* The kernels' code of dtype t (kernels/geom.h's DT_*), cl_nodes.c. */
int dg_cl_dt_code(dg_dtype t);

#endif
