/* Our own declarations of the ONNX Runtime C ABI pieces that a plugin
 * execution provider (and the test host) uses. No ONNX Runtime header is
 * available or used: these are facts about the binary interface, written
 * down in our words (docs/integrations.md, "ONNX Runtime plugin EP").
 *
 * - Every ORT object is opaque to us: only pointers are passed around.
 * - OrtApi and OrtEpApi are tables of function pointers whose slots never
 *   move (ORT appends only). We index them as `void *const *` with the
 *   named slot numbers below instead of declaring a padded struct, so no
 *   slot has to be counted by hand. A slot may only be used when the table
 *   was requested at a version that already had it (the "since" column).
 * - The structs a plugin fills in (factory, EP, compute info) are
 *   declared with their exact member order; ORT reads only the members
 *   that existed in the version we claim (DG_ORT_EP_VERSION), and a zeroed
 *   tail keeps any newer member it might read NULL.
 * - ORT's enums are C enums: int on every ABI we target. bool is _Bool.
 */
#ifndef DG_ORT_ABI_H
#define DG_ORT_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- opaque ORT objects ---- */
typedef struct OrtStatus OrtStatus;
typedef struct OrtEnv OrtEnv;
typedef struct OrtSession OrtSession;
typedef struct OrtSessionOptions OrtSessionOptions;
typedef struct OrtValue OrtValue;
typedef struct OrtMemoryInfo OrtMemoryInfo;
typedef struct OrtTypeInfo OrtTypeInfo;
typedef struct OrtTensorTypeAndShapeInfo OrtTensorTypeAndShapeInfo;
typedef struct OrtLogger OrtLogger;
typedef struct OrtKeyValuePairs OrtKeyValuePairs;
typedef struct OrtHardwareDevice OrtHardwareDevice;
typedef struct OrtEpDevice OrtEpDevice;
typedef struct OrtGraph OrtGraph;
typedef struct OrtNode OrtNode;
typedef struct OrtValueInfo OrtValueInfo;
typedef struct OrtOpAttr OrtOpAttr;
typedef struct OrtEpGraphSupportInfo OrtEpGraphSupportInfo;
typedef struct OrtNodeComputeContext OrtNodeComputeContext;
typedef struct OrtKernelContext OrtKernelContext;
typedef struct OrtEpAssignedSubgraph OrtEpAssignedSubgraph;
typedef struct OrtEpAssignedNode OrtEpAssignedNode;

/* A function table (OrtApi, OrtEpApi): slot i holds a function pointer. */
typedef void *const *dg_ort_table;
#define DG_ORT_FN(table, slot, type) ((type)((table)[(slot)]))

/* The one struct that never changes: what OrtGetApiBase returns. */
typedef struct dg_ort_api_base {
  const void *(*get_api)(uint32_t version); /* NULL if version unknown */
  const char *(*get_version_string)(void);
} dg_ort_api_base;

/* ---- OrtApi slots (0-based; "since" = first release that has it) ---- */
enum dg_ort_api_slot {
  /* <= 1.19 */
  ORT_SLOT_CreateStatus = 0,
  ORT_SLOT_GetErrorCode = 1,
  ORT_SLOT_GetErrorMessage = 2,
  ORT_SLOT_CreateEnv = 3,
  ORT_SLOT_CreateSession = 7,
  ORT_SLOT_Run = 9,
  ORT_SLOT_CreateSessionOptions = 10,
  ORT_SLOT_SetSessionGraphOptimizationLevel = 23, /* test host only */
  ORT_SLOT_SetIntraOpNumThreads = 24,             /* dg-bench --models */
  ORT_SLOT_CreateTensorWithDataAsOrtValue = 49,
  ORT_SLOT_GetTensorMutableData = 51,
  ORT_SLOT_CastTypeInfoToTensorInfo = 55,
  ORT_SLOT_GetTensorElementType = 60,
  ORT_SLOT_GetDimensionsCount = 61,
  ORT_SLOT_GetDimensions = 62,
  ORT_SLOT_GetTensorShapeElementCount = 64,
  ORT_SLOT_GetTensorTypeAndShape = 65,
  ORT_SLOT_CreateCpuMemoryInfo = 69,
  ORT_SLOT_KernelContext_GetInputCount = 88,
  ORT_SLOT_KernelContext_GetOutputCount = 89,
  ORT_SLOT_KernelContext_GetInput = 90,
  ORT_SLOT_KernelContext_GetOutput = 91,
  ORT_SLOT_ReleaseEnv = 92,
  ORT_SLOT_ReleaseStatus = 93,
  ORT_SLOT_ReleaseMemoryInfo = 94,
  ORT_SLOT_ReleaseSession = 95,
  ORT_SLOT_ReleaseValue = 96,
  ORT_SLOT_ReleaseTensorTypeAndShapeInfo = 99,
  ORT_SLOT_ReleaseSessionOptions = 100,
  ORT_SLOT_AddSessionConfigEntry = 130,
  ORT_SLOT_HasSessionConfigEntry = 237,
  ORT_SLOT_GetSessionConfigEntry = 238,
  ORT_SLOT_ReadOpAttr = 272,
  /* 1.22 */
  ORT_SLOT_GetValueInfoName = 289,
  ORT_SLOT_GetValueInfoTypeInfo = 290,
  ORT_SLOT_RegisterExecutionProviderLibrary = 301,
  ORT_SLOT_UnregisterExecutionProviderLibrary = 302,
  ORT_SLOT_GetEpDevices = 303,
  ORT_SLOT_SessionOptionsAppendExecutionProvider_V2 = 304,
  ORT_SLOT_HardwareDevice_Type = 307,
  ORT_SLOT_EpDevice_EpName = 312,
  ORT_SLOT_GetEpApi = 317,
  /* 1.23 (the graph API an EP reads nodes with) */
  ORT_SLOT_ValueInfo_GetValueProducer = 323,
  ORT_SLOT_ValueInfo_GetInitializerValue = 326,
  ORT_SLOT_ValueInfo_IsGraphOutput = 330,
  ORT_SLOT_ValueInfo_IsConstantInitializer = 331,
  ORT_SLOT_Graph_GetNumNodes = 344,
  ORT_SLOT_Graph_GetNodes = 345,
  ORT_SLOT_Node_GetName = 349,
  ORT_SLOT_Node_GetOperatorType = 350,
  ORT_SLOT_Node_GetDomain = 351,
  ORT_SLOT_Node_GetSinceVersion = 352,
  ORT_SLOT_Node_GetNumInputs = 353,
  ORT_SLOT_Node_GetInputs = 354,
  ORT_SLOT_Node_GetNumOutputs = 355,
  ORT_SLOT_Node_GetOutputs = 356,
  ORT_SLOT_Node_GetNumAttributes = 359,
  ORT_SLOT_Node_GetAttributes = 360,
  ORT_SLOT_Node_GetAttributeByName = 361,
  ORT_SLOT_OpAttr_GetType = 363,
  ORT_SLOT_OpAttr_GetName = 364,
  ORT_SLOT_GetTensorData = 378,
  /* 1.24 (test host only: which EP got which node) */
  ORT_SLOT_Session_GetEpGraphAssignmentInfo = 407,
  ORT_SLOT_EpAssignedSubgraph_GetEpName = 408,
  ORT_SLOT_EpAssignedSubgraph_GetNodes = 409,
  ORT_SLOT_EpAssignedNode_GetName = 410,
  ORT_SLOT_EpAssignedNode_GetOperatorType = 412,
};

/* ---- OrtEpApi slots (all exist in 1.23) ---- */
enum dg_ort_ep_api_slot {
  ORT_EPSLOT_CreateEpDevice = 0,
  ORT_EPSLOT_ReleaseEpDevice = 1,
  ORT_EPSLOT_EpGraphSupportInfo_AddNodesToFuse = 2,
  ORT_EPSLOT_NodeComputeContext_NodeName = 4,
};

/* ---- enum values we exchange (as int) ---- */
enum {
  ORT_CODE_OK = 0, ORT_CODE_FAIL = 1, ORT_CODE_INVALID_ARGUMENT = 2,
  ORT_CODE_NOT_IMPLEMENTED = 9, ORT_CODE_INVALID_GRAPH = 10,
  ORT_CODE_EP_FAIL = 11,
};
enum {
  ORT_ELEM_FLOAT = 1,
  ORT_ELEM_UINT8 = 2,
  ORT_ELEM_INT8 = 3,
  ORT_ELEM_INT32 = 6,
  ORT_ELEM_INT64 = 7,
  ORT_ELEM_BOOL = 9,
  ORT_ELEM_FLOAT16 = 10,
};
enum {
  ORT_ATTR_INT = 1, ORT_ATTR_INTS = 2, ORT_ATTR_FLOAT = 3,
  ORT_ATTR_FLOATS = 4, ORT_ATTR_STRING = 5,
};
enum { ORT_HW_CPU = 0, ORT_HW_GPU = 1, ORT_HW_NPU = 2 };
enum { ORT_LOG_VERBOSE = 0, ORT_LOG_WARNING = 2, ORT_LOG_ERROR = 3,
       ORT_LOG_FATAL = 4 };
enum { ORT_ALLOC_DEVICE = 0, ORT_ALLOC_ARENA = 1 };
enum { ORT_MEM_DEFAULT = 0 };
enum { ORT_OPT_DISABLE_ALL = 0 }; /* GraphOptimizationLevel */

/* ---- function signatures, one typedef per shape used ---- */
typedef OrtStatus *(*ort_create_status_fn)(int code, const char *msg);
typedef int (*ort_get_error_code_fn)(const OrtStatus *);
typedef const char *(*ort_get_error_message_fn)(const OrtStatus *);
typedef void (*ort_release_fn)(void *); /* every Release* */
typedef OrtStatus *(*ort_get_str_fn)(const void *obj, const char **out);
typedef OrtStatus *(*ort_get_size_fn)(const void *obj, size_t *out);
typedef OrtStatus *(*ort_get_array_fn)(const void *obj, const void **arr,
                                        size_t n);
typedef OrtStatus *(*ort_get_int_fn)(const void *obj, int *out);
typedef OrtStatus *(*ort_get_bool_fn)(const void *obj, bool *out);
typedef OrtStatus *(*ort_get_ptr_fn)(const void *obj, const void **out);
typedef OrtStatus *(*ort_get_mut_ptr_fn)(void *obj, void **out);
typedef OrtStatus *(*ort_value_producer_fn)(const OrtValueInfo *,
                                            const OrtNode **producer,
                                            size_t *output_index);
typedef OrtStatus *(*ort_get_dims_fn)(const OrtTensorTypeAndShapeInfo *,
                                      int64_t *dims, size_t n);
typedef OrtStatus *(*ort_type_and_shape_fn)(const OrtValue *,
                                            OrtTensorTypeAndShapeInfo **out);
typedef OrtStatus *(*ort_attr_by_name_fn)(const OrtNode *, const char *name,
                                          const OrtOpAttr **out);
typedef OrtStatus *(*ort_read_attr_fn)(const OrtOpAttr *, int attr_type,
                                       void *buf, size_t len, size_t *bytes);
typedef OrtStatus *(*ort_has_config_fn)(const OrtSessionOptions *,
                                        const char *key, int *out);
typedef OrtStatus *(*ort_get_config_fn)(const OrtSessionOptions *,
                                        const char *key, char *value,
                                        size_t *size);
typedef OrtStatus *(*ort_kernel_input_fn)(const OrtKernelContext *, size_t i,
                                          const OrtValue **out);
typedef OrtStatus *(*ort_kernel_output_fn)(OrtKernelContext *, size_t i,
                                           const int64_t *dims, size_t n,
                                           OrtValue **out);
typedef int (*ort_hw_type_fn)(const OrtHardwareDevice *);
typedef const void *(*ort_get_ep_api_fn)(void);

/* OrtEpApi */
typedef OrtStatus *(*ort_create_ep_device_fn)(void *factory,
                                              const OrtHardwareDevice *hw,
                                              const OrtKeyValuePairs *meta,
                                              const OrtKeyValuePairs *opts,
                                              OrtEpDevice **out);
typedef struct dg_ort_fusion_options {
  uint32_t ort_version_supported;
  bool drop_constant_initializers; /* weights copied in Compile */
} dg_ort_fusion_options;
typedef OrtStatus *(*ort_add_nodes_to_fuse_fn)(
    OrtEpGraphSupportInfo *, const OrtNode *const *nodes, size_t n,
    const dg_ort_fusion_options *opts);

/* Host side (tests) */
typedef OrtStatus *(*ort_create_env_fn)(int level, const char *id,
                                        OrtEnv **out);
typedef OrtStatus *(*ort_create_session_fn)(const OrtEnv *, const char *path,
                                            const OrtSessionOptions *,
                                            OrtSession **out);
typedef OrtStatus *(*ort_run_fn)(OrtSession *, const void *run_options,
                                 const char *const *in_names,
                                 const OrtValue *const *in, size_t nin,
                                 const char *const *out_names, size_t nout,
                                 OrtValue **out);
typedef OrtStatus *(*ort_create_session_options_fn)(OrtSessionOptions **);
typedef OrtStatus *(*ort_set_opt_level_fn)(OrtSessionOptions *, int level);
typedef OrtStatus *(*ort_set_threads_fn)(OrtSessionOptions *, int threads);
typedef OrtStatus *(*ort_create_tensor_fn)(const OrtMemoryInfo *, void *data,
                                           size_t bytes, const int64_t *dims,
                                           size_t n, int elem_type,
                                           OrtValue **out);
typedef OrtStatus *(*ort_create_cpu_mem_fn)(int alloc_type, int mem_type,
                                            OrtMemoryInfo **out);
typedef OrtStatus *(*ort_add_config_fn)(OrtSessionOptions *, const char *key,
                                        const char *value);
typedef OrtStatus *(*ort_register_ep_lib_fn)(OrtEnv *, const char *name,
                                             const char *path);
typedef OrtStatus *(*ort_unregister_ep_lib_fn)(OrtEnv *, const char *name);
typedef OrtStatus *(*ort_get_ep_devices_fn)(const OrtEnv *,
                                            const OrtEpDevice *const **devs,
                                            size_t *n);
typedef OrtStatus *(*ort_append_ep_v2_fn)(OrtSessionOptions *, OrtEnv *,
                                          const OrtEpDevice *const *devs,
                                          size_t ndev,
                                          const char *const *keys,
                                          const char *const *values,
                                          size_t nkv);
typedef const char *(*ort_ep_device_name_fn)(const OrtEpDevice *);
typedef OrtStatus *(*ort_assignment_info_fn)(
    const OrtSession *, const OrtEpAssignedSubgraph *const **subgraphs,
    size_t *n);
typedef OrtStatus *(*ort_subgraph_nodes_fn)(
    const OrtEpAssignedSubgraph *, const OrtEpAssignedNode *const **nodes,
    size_t *n);

/* ---- structs the plugin implements (member order is the ABI) ---- */

/* The version of the plugin structs we implement: 1.23's members. */
#define DG_ORT_EP_VERSION 23u
/* NULL pointers after our last member, read as "not implemented" by a
 * host that looks at a newer member without checking our version. */
#define DG_ORT_TAIL 32

typedef struct dg_ort_ep_factory dg_ort_ep_factory;
struct dg_ort_ep_factory {
  uint32_t ort_version_supported;
  const char *(*GetName)(const dg_ort_ep_factory *self);
  const char *(*GetVendor)(const dg_ort_ep_factory *self);
  OrtStatus *(*GetSupportedDevices)(dg_ort_ep_factory *self,
                                    const OrtHardwareDevice *const *devices,
                                    size_t num_devices,
                                    OrtEpDevice **ep_devices,
                                    size_t max_ep_devices,
                                    size_t *num_ep_devices);
  OrtStatus *(*CreateEp)(dg_ort_ep_factory *self,
                         const OrtHardwareDevice *const *devices,
                         const OrtKeyValuePairs *const *metadata,
                         size_t num_devices,
                         const OrtSessionOptions *session_options,
                         const OrtLogger *logger, void **ep_out);
  void (*ReleaseEp)(dg_ort_ep_factory *self, void *ep);
  uint32_t (*GetVendorId)(const dg_ort_ep_factory *self);
  const char *(*GetVersion)(const dg_ort_ep_factory *self);
  OrtStatus *(*ValidateCompiledModelCompatibilityInfo)(
      dg_ort_ep_factory *self, const OrtHardwareDevice *const *devices,
      size_t num_devices, const char *info, int *compatibility);
  OrtStatus *(*CreateAllocator)(dg_ort_ep_factory *self,
                                const OrtMemoryInfo *info,
                                const OrtKeyValuePairs *options,
                                void **allocator);
  void (*ReleaseAllocator)(dg_ort_ep_factory *self, void *allocator);
  OrtStatus *(*CreateDataTransfer)(dg_ort_ep_factory *self, void **out);
  bool (*IsStreamAware)(const dg_ort_ep_factory *self);
  OrtStatus *(*CreateSyncStreamForDevice)(dg_ort_ep_factory *self,
                                          const void *memory_device,
                                          const OrtKeyValuePairs *options,
                                          void **stream);
  void *tail[DG_ORT_TAIL];
};

typedef struct dg_ort_node_compute_info dg_ort_node_compute_info;

typedef struct dg_ort_ep dg_ort_ep;
struct dg_ort_ep {
  uint32_t ort_version_supported;
  const char *(*GetName)(const dg_ort_ep *self);
  OrtStatus *(*GetCapability)(dg_ort_ep *self, const OrtGraph *graph,
                              OrtEpGraphSupportInfo *info);
  OrtStatus *(*Compile)(dg_ort_ep *self, const OrtGraph **graphs,
                        const OrtNode **fused_nodes, size_t count,
                        dg_ort_node_compute_info **infos,
                        OrtNode **ep_context_nodes);
  void (*ReleaseNodeComputeInfos)(dg_ort_ep *self,
                                  dg_ort_node_compute_info **infos,
                                  size_t count);
  /* Optional members up to 1.23's end; NULL = ORT's default behaviour. */
  void *GetPreferredDataLayout;
  void *ShouldConvertDataLayoutForOp;
  void *SetDynamicOptions;
  void *OnRunStart;
  void *OnRunEnd;
  void *CreateAllocator;
  void *CreateSyncStreamForDevice;
  void *GetCompiledModelCompatibilityInfo;
  void *tail[DG_ORT_TAIL];
};

struct dg_ort_node_compute_info {
  uint32_t ort_version_supported;
  OrtStatus *(*CreateState)(dg_ort_node_compute_info *self,
                            OrtNodeComputeContext *ctx, void **state);
  OrtStatus *(*Compute)(dg_ort_node_compute_info *self, void *state,
                        OrtKernelContext *kctx);
  void (*ReleaseState)(dg_ort_node_compute_info *self, void *state);
};

/* The two symbols ORT looks up in the library. */
typedef OrtStatus *(*dg_ort_create_ep_factories_fn)(
    const char *registration_name, const dg_ort_api_base *api_base,
    const OrtLogger *default_logger, dg_ort_ep_factory **factories,
    size_t max_factories, size_t *num_factories);
typedef OrtStatus *(*dg_ort_release_ep_factory_fn)(dg_ort_ep_factory *);

#endif /* DG_ORT_ABI_H */
