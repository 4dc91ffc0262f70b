/* The Vulkan target's private structures, shared by its files:
 *   vk_device.c          instance, validation messenger, device discovery
 *   vk_errors.c          VkResult names and error diagnostics
 *   vk_lsan.c            keeps lavapipe mapped under AddressSanitizer
 *   vk_memory.c          buffers and memory (with allocation-failure
 *                        injection for tests)
 *   vk_pipeline.c        shader modules, the pipeline layout, pipelines
 *                        cached per device by (module, specialisation)
 *   vk_pipeline_cache.c  the VkPipelineCache file in the cache directory
 *   vk_ops.c             supports() and, per node, its dispatch or copies
 *   vk_cost.c            estimate_us and the device's launch/transfer costs
 *   vk_segment.c         compile (memory plan, descriptor sets, one
 *                        recorded command buffer; vk_segment.h)
 *   vk_run.c             run, release (bounded by the time-out)
 */
#ifndef DG_VK_INTERNAL_H
#define DG_VK_INTERNAL_H

#include "core/diag.h"
#include "core/half.h"
#include "core/names.h"
#include "shaders/push_constants.h"
#include "targets/target.h"
#include "vulkan_target.h"

#include <pthread.h>
#include <stdatomic.h>
#include <vulkan/vulkan.h>

/* Every dispatch uses the same layout: set 0 with VK_BINDINGS storage
 * buffers (unused ones point at a small dummy region; binding 5 is a
 * conv's fused residual) and one push constant range of VK_PUSH_BYTES
 * (the minimum every device offers). */
#define VK_BINDINGS 6
#define VK_PUSH_BYTES 128

/* The push-constant layouts, from the member lists the shaders declare
 * their blocks with (shaders/push_constants.h): a struct per block, a
 * union where kernels of one layout differ in their tail. */
typedef struct vk_pc_q8 {
  VK_PC_Q8
} vk_pc_q8;
typedef struct vk_pc_splitk {
  VK_PC_SPLITK
} vk_pc_splitk;
typedef struct vk_pc_conv {
  VK_PC_CONV
  union {
    vk_pc_q8 q8; /* gemm.comp, conv_direct.comp */
    struct {
      vk_pc_splitk splitk;
      VK_PC_CBLK
    } coop; /* coop_out.glsl (gemm_coop.comp, splitk.comp), cblock.comp;
               gemm.comp's float builds and splitk_tiled.comp read the
               splitk part */
    struct {
      vk_pc_q8 q8;
      vk_pc_splitk splitk;
    } q8k; /* gemm.comp's and splitk_tiled.comp's int8 builds */
  };
} vk_pc_conv;
typedef struct vk_pc_gemm {
  VK_PC_GEMM
  union {
    vk_pc_q8 q8;         /* gemm.comp, gemm_direct.comp */
    vk_pc_splitk splitk; /* coop_out.glsl; float gemm.comp, splitk_tiled */
    struct {
      vk_pc_q8 q8;
      vk_pc_splitk splitk;
    } q8k; /* gemm.comp's and splitk_tiled.comp's int8 builds */
  };
} vk_pc_gemm;
typedef struct vk_pc_qpool {
  VK_PC_QPOOL
} vk_pc_qpool;
typedef struct vk_pc_pool {
  VK_PC_POOL
  vk_pc_qpool q; /* qavg_pool.comp */
} vk_pc_pool;
typedef struct vk_pc_gap {
  VK_PC_GAP
} vk_pc_gap;
typedef struct vk_pc_softmax {
  VK_PC_SOFTMAX
} vk_pc_softmax;
typedef struct vk_pc_reduce {
  VK_PC_REDUCE
} vk_pc_reduce;
typedef struct vk_pc_layer_norm {
  VK_PC_LAYER_NORM
} vk_pc_layer_norm;
typedef struct vk_pc_binary {
  VK_PC_BINARY
} vk_pc_binary;
typedef struct vk_pc_unary {
  VK_PC_UNARY
} vk_pc_unary;
typedef struct vk_pc_compare {
  VK_PC_COMPARE
} vk_pc_compare;
typedef struct vk_pc_arg {
  VK_PC_ARG
} vk_pc_arg;
typedef struct vk_pc_quantize {
  VK_PC_QUANTIZE
} vk_pc_quantize;
typedef struct vk_pc_dequantize {
  VK_PC_DEQUANTIZE
} vk_pc_dequantize;
typedef struct vk_pc_view {
  VK_PC_VIEW
} vk_pc_view;
typedef struct vk_pc_resize {
  VK_PC_RESIZE
} vk_pc_resize;
typedef struct vk_pc_bnorm {
  VK_PC_BNORM
} vk_pc_bnorm;
typedef struct vk_pc_cast {
  VK_PC_CAST
} vk_pc_cast;
typedef struct vk_pc_qbinary {
  VK_PC_QBINARY
} vk_pc_qbinary;
typedef struct vk_pc_lookup {
  VK_PC_LOOKUP
} vk_pc_lookup;
/* A dispatch's push constants: the layout its setup fills, pushed as
 * words (the whole VK_PUSH_BYTES range, unused words 0). */
typedef union vk_push {
  uint32_t words[VK_PUSH_BYTES / 4];
  vk_pc_conv conv;
  vk_pc_gemm gemm;
  vk_pc_pool pool;
  vk_pc_gap gap;
  vk_pc_softmax softmax;
  vk_pc_reduce reduce;
  vk_pc_layer_norm layer_norm;
  vk_pc_binary binary;
  vk_pc_unary unary;
  vk_pc_compare compare;
  vk_pc_arg arg;
  vk_pc_quantize quantize;
  vk_pc_dequantize dequantize;
  vk_pc_view view;
  vk_pc_resize resize;
  vk_pc_bnorm bnorm;
  vk_pc_cast cast;
  vk_pc_qbinary qbinary;
  vk_pc_lookup lookup;
} vk_push;
/* std430 puts a block's int and float members 4 bytes apart in order;
 * C does so too where both are 4 bytes. Every layout must fit the range
 * the pipeline layout declares: a larger one makes the union larger. */
_Static_assert(sizeof(int) == 4 && sizeof(float) == 4,
               "push-constant members are 32-bit on the GPU");
_Static_assert(sizeof(vk_push) == VK_PUSH_BYTES,
               "a push-constant layout exceeds VK_PUSH_BYTES");

/* The SPIR-V modules built into the library, SH_<ID> for each line of
 * variants.def (which meson.build builds the modules from). */
typedef enum vk_shader {
#define VK_VARIANT(id, name, source, khr, tile_m, tile_n, cost, defines)       \
  SH_##id,
#include "variants.def"
#undef VK_VARIANT
  SH_COUNT_
} vk_shader;
/* What C needs of each module, from the same lines (vk_pipeline.c). */
/* A module's kind for the cost model (variants.def's cost field; the
 * throughput of each on each device type is vk_cost.c's). */
typedef enum vk_cost_class {
  VK_COST_TILED,
  VK_COST_DIRECT,
  VK_COST_MEMORY,
  VK_COST_SIMT,
  VK_COST_SIMTCONV,
  VK_COST_COOP,
  VK_COST_COOPK,
  VK_COST_COUNT_
} vk_cost_class;
typedef struct vk_variant {
  const char *name;   /* the embedded module's (dg_vk_spirv_find) */
  bool khr;           /* translated to KHR cooperative matrices */
  int tile_m, tile_n; /* a tiled kernel's output tile; 0 otherwise */
  vk_cost_class cost;
} vk_variant;
extern const vk_variant dg_vk_variants[SH_COUNT_];
/* Generated by embed_spirv.py. */
const uint32_t *dg_vk_spirv_find(const char *name, size_t *words);

/* Shared by the devices of one context: the instance and its validation
 * messenger. Freed with the last device. */
typedef struct vk_instance {
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;
  PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger;
  int refs;
  atomic_int messages;      /* validation warnings and errors seen */
  uint32_t validation_spec; /* the validation layer's Vulkan version; 0: off */
  dg_log_fn log;
  void *log_user;
} vk_instance;

typedef struct vk_pipeline_entry {
  vk_shader shader;
  uint32_t spec[4];
  int spec_count;
  VkPipeline pipeline;
} vk_pipeline_entry;

typedef struct vk_device {
  vk_instance *vi;
  VkPhysicalDevice phys;
  VkDevice dev;
  VkQueue queue;
  uint32_t queue_family;
  VkPhysicalDeviceProperties props;
  VkPhysicalDeviceMemoryProperties mem;
  /* Features found and enabled. */
  bool f16;          /* shaderFloat16 and storageBuffer16BitAccess */
  bool int8;         /* shaderInt8 and storageBuffer8BitAccess */
  bool int64;        /* shaderInt64 */
  bool int_dot;      /* shaderIntegerDotProduct enabled (and int8) */
  bool int_dot_fast; /* ... and 4x8-bit packed signed dots accelerated */
  bool coopmat_khr;  /* VK_KHR_cooperative_matrix listed */
  bool coopmat_nv;   /* VK_NV_cooperative_matrix listed */
  bool coopmat_nv2;  /* VK_NV_cooperative_matrix2 */
  /* VK_NV_cooperative_matrix enabled (with the Vulkan memory model) and
   * reporting f16 x f16 -> f32 at 16x16x16, subgroup scope, on subgroups
   * of 32: the shapes gemm_coop.comp is written for. */
  bool coop_nv_f16;
  /* VK_KHR_cooperative_matrix enabled (with the Vulkan memory model) and
   * reporting f16 x f16 -> f32 at 16x8x16, subgroup scope, on subgroups of
   * 32: the translated kernels run instead of the NV ones. */
  bool coop_khr_f16;
  bool coop_khr_layer_old; /* KHR left off: the validation layer predates it */
  /* DG_VK_PIPELINE_STATS: pipelines capture and print statistics. */
  bool pipeline_stats;
  uint32_t subgroup_size;
  /* How long a run polls its fence before blocking (ns). */
  int64_t spin_ns;
  /* The most loop iterations one invocation may run in all, 0 for no
   * limit: llvmpipe (lavapipe) ends every loop of an invocation once
   * 65535 iterations have run in all its loops, silently (Mesa's
   * LP_MAX_TGSI_LOOP_ITERATIONS), so supports() declines nodes whose
   * kernels would loop longer (vk_ops.c, loop_trips). */
  uint64_t loop_limit;
  /* dg_context_options.device_timeout_ms, for every fence wait (ns). */
  uint64_t timeout_ns;
  /* Memory: the type for tensors, and whether it is host-visible (a
   * unified device: no staging copies), and the staging type. */
  uint32_t type_device, type_staging;
  bool unified;
  /* Timestamps on the compute queue. */
  bool timestamps;
  uint64_t timestamp_mask;
  double timestamp_ns;
  /* Pipelines and their layout. */
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkShaderModule modules[SH_COUNT_];
  vk_pipeline_entry *pipelines;
  int pipeline_count, pipeline_cap;
  VkPipelineCache cache;
  char cache_path[1024]; /* empty: no disk cache */
  size_t cache_loaded;   /* bytes accepted from the disk cache */
  bool cache_dirty;      /* a pipeline was created since the load */
  pthread_mutex_t lock;  /* pipelines and queue submission */
  atomic_bool lost;      /* VK_ERROR_DEVICE_LOST seen */
  /* Segments released while a timed-out run of theirs was still on the
   * queue (vk_run.c dg_vk_release): their objects cannot be destroyed
   * before the fence signals, and the release must not wait longer than
   * timeout_ns, so they wait here for device_free (under lock). */
  void **parked;
  int parked_count, parked_cap;
  struct vk_device *next_abandoned; /* vk_device.c's list */
  /* What a timed-out run or dg_buffer copy may still use (vk_buffer.c),
   * freed once the device is idle at its destroy (under lock). */
  struct vk_leftover *leftovers;
  char driver_text[104]; /* driverName driverInfo */
  /* Test hook DG_TEST_VULKAN_PATHS: "gpu" (1) takes a discrete GPU's
   * paths on any device (staging copies, size-based kernel choice),
   * "tiled" (2) also forces the shared-memory kernels (for f32 the
   * 128x128 ones), "dot" (3) is "tiled" with int8 through the integer
   * dot-product kernels wherever the device has the feature, accelerated
   * or not; "splitk" (4) is "tiled" with f32 GEMMs and convs through the
   * 64x64 kernels split over K (3 slices unless DG_VK_SPLITK says) and
   * GEMMs under 8 rows through the GEMV kernel; 0
   * otherwise. */
  int test_paths;
  /* How an f16 conv on KHR cooperative matrices gathers its B:
   * DG_VK_CONV_GATHER=implicit (0), im2col (1), blocked (2), or unset
   * (-1: blocked where its copies fit the scratch limit, else implicit);
   * tests use it to reach every kernel (vk_ops.c cblock_work). */
  int conv_gather;
  /* K slices of the KHR cooperative-matrix kernels (vk_ops.c
   * splitk_work): DG_VK_SPLITK=N forces N (1: never split), unset (-1) by
   * shape. */
  int splitk;
  /* Multiprocessors, where the device says (VK_NV_shader_sm_builtins'
   * shaderSMCount); 0 where it does not. */
  uint32_t multiprocessors;
  /* The device type the cost model assumes (tests may pretend). */
  VkPhysicalDeviceType cost_type;
  char label[160]; /* "vulkan device 1 (llvmpipe ...)" for messages */
} vk_device;

/* ---- sanitizer builds (vk_lsan.c) ---- */

/* Under AddressSanitizer, keeps the few drivers whose unloading would show
 * as a leak mapped for the process's life; a no-op otherwise. Called while
 * the instance (and so its driver) is loaded. */
void dg_vk_lsan_keep_drivers(void);

/* ---- errors (vk_errors.c) ---- */

const char *dg_vk_result_name(VkResult r);
/* The dg_status for a failed call: OUT_OF_MEMORY for the two VkResult
 * out-of-memory codes, DEVICE otherwise. Marks the device lost on
 * VK_ERROR_DEVICE_LOST. */
dg_status dg_vk_status(vk_device *vd, VkResult r);
/* Fills diag for a failed Vulkan call made for node (index node_index, or
 * -1) and returns the status. */
dg_status dg_vk_fail(vk_device *vd, dg_diagnostic *diag, const dg_ir *ir,
                     int node_index, const char *call, VkResult r);

/* ---- memory (vk_memory.c) ---- */

/* vkAllocateMemory through the failure-injection hook
 * (DG_TEST_VULKAN_FAIL_ALLOC=N fails the N-th call of the process). */
VkResult dg_vk_allocate(vk_device *vd, VkDeviceSize size, uint32_t type,
                        VkDeviceMemory *out);
/* A buffer of size bytes bound to fresh memory of type; usage as given. */
typedef struct vk_buffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  VkDeviceSize size;
  void *map; /* when the type is host-visible */
} vk_buffer;
VkResult dg_vk_buffer_create(vk_device *vd, VkDeviceSize size, uint32_t type,
                             VkBufferUsageFlags usage, vk_buffer *out);
void dg_vk_buffer_destroy(vk_device *vd, vk_buffer *b);
/* A dg_buffer's memory (vk_buffer.c): busy once a run or copy using it
 * timed out, so that its destroy leaves it to the device's. */
typedef struct vk_resident {
  vk_buffer b;
  size_t bytes;
  atomic_bool busy;
} vk_resident;
typedef struct vk_leftover {
  vk_buffer buf;
  VkCommandPool pool;
  VkFence fence;
  struct vk_leftover *next;
} vk_leftover;
/* The target's buffer_create, buffer_copy and buffer_destroy. */
dg_status dg_vk_buffer_new(dg_device *dev, size_t bytes, void **out,
                           dg_diagnostic *diag);
dg_status dg_vk_buffer_copy(dg_device *dev, void *buf, void *host, size_t bytes,
                            bool to_device, dg_diagnostic *diag);
void dg_vk_buffer_free(dg_device *dev, void *buf);
/* Frees the leftovers; the device must be idle. */
void dg_vk_leftovers_free(vk_device *vd);
/* Chooses the memory types of a device (fills type_device, type_staging,
 * unified); false when none fits. */
bool dg_vk_choose_memory(vk_device *vd);

/* ---- pipelines (vk_pipeline.c, vk_pipeline_cache.c) ---- */

VkResult dg_vk_pipelines_init(vk_device *vd);
void dg_vk_pipelines_destroy(vk_device *vd);
/* The pipeline for shader with these specialisation constants (ids
 * 0..count-1), created on first use and kept for the device's life. */
VkResult dg_vk_pipeline_get(vk_device *vd, vk_shader sh, const uint32_t *spec,
                            int spec_count, VkPipeline *out);
/* Loads the on-disk cache (if any, valid and ours) into vd->cache. */
VkResult dg_vk_cache_open(vk_device *vd, const char *dir);
/* Writes vd->cache back when it changed (temp file + rename). */
void dg_vk_cache_save(vk_device *vd);

/* ---- per-node work (vk_ops.c) ---- */

int dg_vk_supports(dg_device *dev, const dg_ir *ir, const dg_node *n, char *why,
                   size_t why_size);

/* What a node records: one dispatch, or buffer copies (reshape, concat).
 * A dispatch may come with a pre-pass that fills scratch memory the main
 * dispatch reads (the f16 convs' blocked copies or explicit im2col), or a
 * post-pass that reads what the main dispatch left there (split-K's sum),
 * with a barrier between: same push constants, no specialisation
 * constants, scratch_bytes of the segment's scratch region, which every
 * such node reuses. Bindings name tensor ids (0: unused); VK_BIND_PARAMS names
 * the node's parameter blob (int8 multipliers, per-channel quantisation),
 * VK_BIND_SCRATCH the scratch region. */
#define VK_BIND_PARAMS UINT32_MAX
#define VK_BIND_SCRATCH (UINT32_MAX - 1)
typedef struct vk_copy {
  uint32_t src, dst; /* tensor ids */
  VkDeviceSize src_offset, dst_offset, size;
} vk_copy;
typedef struct vk_pass {
  bool on;
  vk_shader shader;
  uint32_t bind[VK_BINDINGS];
  uint32_t groups[3];
} vk_pass;
typedef struct vk_work {
  bool is_copy;
  vk_shader shader;
  uint32_t bind[VK_BINDINGS];
  vk_push push;
  uint32_t push_bytes;
  uint32_t groups[3];
  uint32_t spec[4]; /* specialisation constants 0..spec_count-1 */
  int spec_count;
  vk_copy *copies;
  int copy_count;
  void *params; /* host copy of the parameter blob, uploaded once */
  size_t params_bytes;
  VkDeviceSize scratch_bytes;
  vk_pass pre, post;
  bool estimate; /* for the cost model: choices made, blobs not filled */
} vk_work;
/* The ops the device runs (bits 1ull << dg_op), from vk_ops.c's table. */
bool dg_vk_runs_op(const vk_device *vd, dg_op op);
/* Prepares node's work; false on host out-of-memory. With estimate set,
 * makes every choice compile makes (modules, grids, passes, sizes) but
 * leaves parameter blobs unfilled (params NULL, params_bytes set): what
 * the cost model prices is then exactly what compile will run. */
bool dg_vk_work_prepare(vk_device *vd, const dg_ir *ir, const dg_node *n,
                        vk_work *w, bool estimate);
void dg_vk_work_release(vk_work *w);

/* ---- reduce and layer_norm (vk_reduce.c) ---- */

/* The bounds of reduce and layer_norm for vk_ops.c's loop_trips (the
 * loop iterations of one invocation); their setups are vk_ops.def's. */
uint64_t dg_vk_reduce_trips(const dg_ir *ir, const dg_node *n);
/* A 1-D job of total invocations in workgroups of local, as a grid of at
 * most 65535 groups along x (vk_ops.c). */
void dg_vk_grid_1d(uint32_t grid[3], int64_t total, int local);
/* pool.comp's push constants for pool node n (vk_ops.c), which
 * qavg_pool.comp's start with: its geometry and flags. */
vk_pc_pool dg_vk_pool_push(const dg_ir *ir, const dg_node *n);

/* ---- int8 beyond convolution (vk_int8.c) ---- */

/* Whether supports() must decline qavg_pool2d node n, with the reason in
 * why: its divisors span more multipliers than the table takes. */
bool dg_vk_qavg_pool_declines(const dg_ir *ir, const dg_node *n, char *why,
                              size_t why_size);

/* ---- pipeline statistics (vk_pipeline_stats.c) ---- */

/* Whether DG_VK_PIPELINE_STATS=1 asks for them and the device has
 * VK_KHR_pipeline_executable_properties. */
bool dg_vk_pipeline_stats_wanted(const VkExtensionProperties *ext, uint32_t ne);
/* Prints the driver's statistics of pipe to stderr. */
void dg_vk_pipeline_stats_print(vk_device *vd, const char *shader,
                                const uint32_t *spec, int spec_count,
                                VkPipeline pipe);

/* ---- cost (vk_cost.c) ---- */

double dg_vk_estimate(dg_device *dev, const dg_ir *ir, const dg_node *n);
/* Sets dev->launch_us and transfer_us_per_byte from the device type. */
void dg_vk_cost_init(dg_device *dev);

/* ---- segments (vk_segment.c; vk_run.c: run, release, reap) ---- */

dg_status dg_vk_compile(dg_device *dev, const dg_segment *seg, void **state,
                        dg_diagnostic *diag);
dg_status dg_vk_run(void *state, void *const *host, void *const *resident,
                    double *node_us, dg_diagnostic *diag);
dg_status dg_vk_submit(void *state, void *const *host, void *const *resident,
                       dg_diagnostic *diag);
dg_status dg_vk_wait(void *state, void *const *host, double *node_us,
                     dg_diagnostic *diag);
void dg_vk_release(void *state);
/* Waits for the parked segments' fences for at most budget_ns in all,
 * releasing those that signalled; returns how many are still running. */
int dg_vk_reap_parked(vk_device *vd, uint64_t budget_ns);
/* Devices left running at their destroy (process-wide; vk_device.c). */
extern atomic_int dg_vk_abandoned;

/* Test counters (vulkan_target.h exposes them). */
extern atomic_int dg_vk_submits;
extern atomic_int dg_vk_staged; /* vulkan_target.h's counters */
extern atomic_int dg_vk_records;
extern atomic_int dg_vk_validation_total;

/* Every setup vk_ops.def names, declared from its lines: each fills w
 * (shader, bindings, push constants, groups) for node n, or says no
 * (false). needs: what the device must have. */
typedef bool (*vk_setup_fn)(const vk_device *vd, vk_work *w, const dg_ir *ir,
                            const dg_node *n);
enum { VK_NEEDS_INT8 = 1 };
#define DG_VK_OP(op, setup, needs)                                             \
  bool setup(const vk_device *vd, vk_work *w, const dg_ir *ir,                 \
             const dg_node *n);
#include "vk_ops.def"
#undef DG_VK_OP

/* Shared by the op families' setups (vk_ops.c, vk_paths.c, vk_conv.c,
 * vk_gemm.c, vk_pool.c, vk_eltwise.c, vk_quant.c, vk_copies.c). */
bool dg_vk_q_params(vk_work *w, const dg_ir *ir, const dg_node *n,
                    int64_t channels);
void dg_vk_q_push(vk_pc_q8 *q, const dg_ir *ir, const dg_node *n);
bool dg_vk_use_dot(const vk_device *vd);
bool dg_vk_direct_conv(const vk_device *vd, int64_t OG, int64_t P,
                       int64_t macs);
bool dg_vk_direct_gemm(const vk_device *vd, int64_t M, int64_t N);
bool dg_vk_use_gemv(const vk_device *vd, int64_t M, int64_t N, int64_t K,
                    int64_t z);
bool dg_vk_use_conv_gemv(const vk_device *vd, int64_t NP, int64_t KG,
                         int64_t outputs);
bool dg_vk_use_big_f32(const vk_device *vd, int64_t M, int64_t N, int64_t K,
                       int64_t z);
bool dg_vk_use_coop_f16(const vk_device *vd, int64_t M, int64_t N, int64_t K,
                        int64_t z);
void dg_vk_big_work(const vk_device *vd, vk_work *w, vk_shader sh,
                    vk_shader sh64, uint32_t flags, int64_t M, int64_t N,
                    int64_t z);
VkDeviceSize dg_vk_scratch_limit(const vk_device *vd);
void dg_vk_splitk_tiled_work(const vk_device *vd, vk_work *w, bool conv,
                             bool q8, int64_t M, int64_t N, int64_t K,
                             int64_t z);
void dg_vk_splitk_work(const vk_device *vd, vk_work *w, bool conv, int64_t M,
                       int64_t N, int64_t K, int64_t z);
bool dg_vk_im2col_work(const vk_device *vd, vk_work *w, int64_t M, int64_t N,
                       int64_t K, int64_t G);
int dg_vk_cblock_work(const vk_device *vd, vk_work *w, int64_t N, int64_t H,
                      int64_t W, int64_t G, int64_t CG, int64_t OG, int64_t khw,
                      int64_t NP, const uint16_t *wconst);

#endif
