/* directgraph — build a neural-network graph layer by layer and run each node
 * on the best device in the machine (CPU, Vulkan GPU, OpenCL GPU, NPU).
 *
 * A worked example, a whole program (tests/docs_test.sh extracts it from
 * this comment, compiles it against the library and runs it): y =
 * relu(conv(x, w) + b) on the best device, then the same inputs through
 * verify, which checks every node against the reference kernels.
 *
 *   #include <graph.h>
 *   #include <stdio.h>
 *
 *   int main(void) {
 *     static float weights[8 * 3 * 3 * 3], bias[8], xbuf[3 * 32 * 32],
 *         ybuf[8 * 32 * 32];
 *     for (int i = 0; i < 8 * 3 * 3 * 3; i++)
 *       weights[i] = (float)(i % 7) / 7.0f - 0.2f;
 *     for (int i = 0; i < 8; i++)
 *       bias[i] = 0.1f * (float)i;
 *     for (int i = 0; i < 3 * 32 * 32; i++)
 *       xbuf[i] = (float)(i % 13) / 13.0f;
 *
 *     dg_context *ctx;
 *     if (dg_context_create(NULL, &ctx) != DG_OK)
 *       return 1;
 *     dg_graph *g = dg_graph_create(ctx, "tiny");
 *
 *     dg_tensor_desc xd = {.dtype = DG_DTYPE_F32, .rank = 4,
 *                          .dims = {1, 3, 32, 32}};
 *     dg_tensor x = dg_graph_input(g, "x", &xd);
 *     dg_tensor_desc wd = {.dtype = DG_DTYPE_F32, .rank = 4,
 *                          .dims = {8, 3, 3, 3}};
 *     dg_tensor w = dg_graph_constant(g, "w", &wd, weights, 0); // copied
 *     dg_tensor_desc bd = {.dtype = DG_DTYPE_F32, .rank = 1, .dims = {8}};
 *     dg_tensor b = dg_graph_constant(g, "b", &bd, bias, 0);
 *     dg_conv2d_params cp = {.padding = DG_PADDING_SAME_UPPER,
 *                            .activation = DG_ACTIVATION_RELU};
 *     dg_tensor y = dg_graph_conv2d(g, "conv", x, w, b, &cp);
 *     dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
 *
 *     // Errors are sticky: build everything, check once.
 *     if (dg_graph_status(g) != DG_OK) {
 *       fprintf(stderr, "%s\n", dg_graph_error(g)->message);
 *       return 1;
 *     }
 *     dg_diagnostic diag;
 *     dg_session *s;
 *     if (dg_graph_compile(g, NULL, &s, &diag) != DG_OK) { // policy "auto"
 *       fprintf(stderr, "%s\n", diag.message);
 *       return 1;
 *     }
 *     dg_graph_destroy(g); // a session does not need its graph any more
 *     dg_plan_write(dg_session_plan(s), DG_PLAN_FORMAT_TABLE, stdout);
 *
 *     dg_binding in = {"x", xbuf, sizeof xbuf};
 *     dg_binding out = {"y", ybuf, sizeof ybuf};
 *     if (dg_session_run(s, &in, 1, &out, 1, &diag) != DG_OK) {
 *       fprintf(stderr, "%s\n", diag.message);
 *       return 1;
 *     }
 *     dg_verify_report rep;
 *     dg_status vst = dg_session_verify(s, &in, 1, &rep);
 *     printf("y[0] = %g; verify: %s (%d nodes)\n", ybuf[0],
 *            vst == DG_OK ? "ok" : dg_status_string(vst), rep.nodes_checked);
 *
 *     dg_session_destroy(s);
 *     dg_context_destroy(ctx); // after every graph and session made from it
 *     return vst == DG_OK ? 0 : 1;
 *   }
 *
 * Build it with: cc example.c $(pkg-config --cflags --libs directgraph)
 *
 * Conventions
 * - Every function that can fail returns dg_status (DG_OK is 0) or, for
 *   builder calls, a dg_tensor that is invalid (id 0) on failure; the
 *   graph's first error sticks and is read with dg_graph_error().
 * - Nothing aborts or prints on bad input; logging goes to the context's
 *   log callback when one is set.
 * - Parameter and option structs are zero-initialisable: zero means the
 *   documented default. No unions anywhere.
 * - Pointers passed in are only read during the call (copied if kept)
 *   unless the function's comment says otherwise. Objects returned through
 *   an out-parameter are owned by the caller and freed with their
 *   dg_<object>_destroy.
 * - Tensors are dense and row-major. Graph tensors are NCHW; graph inputs
 *   and outputs may be bound as NHWC (the library converts). Internal
 *   packed layouts never reach the caller.
 *
 * Threads
 * - A context may be used from any number of threads at once: creating,
 *   building and compiling graphs, and creating, running and destroying
 *   sessions, each thread on its own objects. Different sessions may run
 *   concurrently from any threads, on the same device or not, compiled
 *   from one graph or from several; their results are the same as when
 *   they run one after the other (devices serialise their own queues).
 * - One graph is built from one thread at a time (like any object that
 *   changes); reading a finished graph (dg_graph_tensor_desc, io info,
 *   dg_graph_compile) from several threads at once is safe.
 * - One session runs one call at a time: dg_session_run or
 *   dg_session_verify entered while another thread is inside either on
 *   the same session returns DG_ERROR_INVALID_ARGUMENT at once, with a
 *   diagnostic saying so, and computes nothing. Compile one session per
 *   thread to run a graph on several threads. A session is inside a run
 *   from dg_session_submit until dg_session_wait returns (which any
 *   thread may call); dg_session_bind_buffer counts as a call too.
 * - dg_buffer objects may be used from any thread; what a run writes
 *   into one while another call reads it is undefined, as for memory.
 * - dg_oneshot_* calls on one context are serialised by the context: safe
 *   from any thread, one at a time.
 * - dg_session_destroy on one thread while another thread runs or
 *   verifies that session waits for the run to end, then frees it; later
 *   calls with the pointer are refused ("not a live session").
 * - dg_context_destroy and dg_graph_destroy must not race with any other
 *   use of that object. Each destroy ignores NULL, a destroyed object and
 *   a live object of another kind.
 * - The CPU device's worker threads are shared by the whole context: a
 *   run that finds them busy with another session's run computes its
 *   share on the calling thread instead of waiting.
 * - The log callback is called on the thread that called into the
 *   library, possibly on several threads at once.
 */
#ifndef DIRECTGRAPH_GRAPH_H
#define DIRECTGRAPH_GRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define DG_API
#else
#define DG_API __attribute__((visibility("default")))
#endif

#define DG_VERSION_MAJOR 0
#define DG_VERSION_MINOR 2
#define DG_VERSION_PATCH 0
DG_API const char *dg_version_string(void);

/* ---- status ---------------------------------------------------------- */

typedef enum dg_status {
  DG_OK = 0,
  DG_ERROR_INVALID_ARGUMENT, /* NULL pointer, bad enum, bad parameter */
  DG_ERROR_INVALID_SHAPE,    /* shapes that do not fit the op */
  DG_ERROR_INVALID_DTYPE,    /* a dtype the op does not take */
  DG_ERROR_UNSUPPORTED,      /* valid, but no allowed device runs it */
  DG_ERROR_OUT_OF_MEMORY,    /* host or device allocation failed */
  DG_ERROR_DEVICE,           /* the device or its driver failed */
  DG_ERROR_IO,               /* a file could not be read or written */
  DG_ERROR_GRAPH_FAILED,     /* the graph already holds an error */
  DG_ERROR_NOT_FOUND,        /* a name or index that does not exist */
  DG_ERROR_MISMATCH,         /* verify: outputs differ beyond tolerance */
  DG_ERROR_OVERFLOW,         /* a size that does not fit in 64 bits */
} dg_status;

/* A static English name for the status, never NULL. */
DG_API const char *dg_status_string(dg_status status);

/* ---- data types, layouts, devices -------------------------------------- */

typedef enum dg_dtype {
  DG_DTYPE_INVALID = 0,
  DG_DTYPE_F32,
  DG_DTYPE_F16,
  DG_DTYPE_I8,
  DG_DTYPE_U8,
  DG_DTYPE_I32,
  DG_DTYPE_BOOL, /* 1 byte, 0 or 1 (comparisons, where's condition) */
  DG_DTYPE_I64,  /* 8 bytes, two's complement (arg reductions, indices) */
  DG_DTYPE_COUNT_
} dg_dtype;
DG_API const char *dg_dtype_name(dg_dtype dtype); /* "f32", ..., "?" */
DG_API size_t dg_dtype_size(dg_dtype dtype);      /* bytes; 0 if invalid */

typedef enum dg_layout {
  DG_LAYOUT_NCHW = 0, /* the default; also "as is" for ranks other than 4 */
  DG_LAYOUT_NHWC,     /* rank-4 graph inputs and outputs only */
} dg_layout;

/* Device kinds, usable as bits of a mask (0 in a mask means "all"). */
typedef enum dg_device_kind {
  DG_DEVICE_CPU = 1,
  DG_DEVICE_VULKAN = 2,
  DG_DEVICE_OPENCL = 4,
  DG_DEVICE_NPU = 8,
} dg_device_kind;
DG_API const char *dg_device_kind_name(dg_device_kind kind);

/* ---- context ------------------------------------------------------------ */

typedef enum dg_log_level {
  DG_LOG_NONE = 0, /* default: say nothing */
  DG_LOG_ERROR,
  DG_LOG_WARNING,
  DG_LOG_INFO,
  DG_LOG_DEBUG,
} dg_log_level;

/* Called for each message at or above the context's level; msg is valid
 * only during the call. May be called from the thread that called into the
 * library, never from a library-owned thread. */
typedef void (*dg_log_fn)(void *user, dg_log_level level, const char *msg);

typedef struct dg_context_options {
  dg_log_fn log;          /* NULL: messages go nowhere */
  void *log_user;         /* passed to log; not owned */
  dg_log_level log_level; /* DG_LOG_NONE by default */
  /* Cache directory for compiled kernels. NULL: $DG_CACHE_DIR, else
   * $XDG_CACHE_HOME/directgraph, else $HOME/.cache/directgraph. */
  const char *cache_dir;
  int disable_cache;     /* non-zero: never read or write the cache */
  unsigned device_kinds; /* mask of dg_device_kind to open; 0 = all */
  int cpu_threads;       /* 0: one per online core */
  /* How long a run waits for a GPU to finish before it fails with
   * DG_ERROR_DEVICE ("timed out"), in milliseconds; 0: 120000. Vulkan
   * waits on its fence that long; OpenCL polls its queue that long, and
   * after a time-out an OpenCL device is not used again (OpenCL cannot
   * cancel queued work). Once a run returns, with any status, no device
   * reads or writes the caller's buffers again: GPU runs stage them
   * through the library's own memory, and work a time-out left running
   * only touches that. dg_session_destroy and dg_context_destroy wait for
   * such work at most this long each; a Vulkan device still busy after
   * that is abandoned (its memory stays allocated, reachable, until the
   * process ends) rather than destroyed under the driver. */
  int device_timeout_ms;
} dg_context_options;

typedef struct dg_context dg_context;

/* Creates a context and enumerates the devices allowed by options (NULL
 * means all defaults). The CPU device is always present. On failure *out is
 * set to NULL. */
DG_API dg_status dg_context_create(const dg_context_options *options,
                                   dg_context **out);
/* Destroys the context. Destroy its graphs and sessions first; those left
 * keep it allocated until the last of them is destroyed, but the context
 * itself can no longer be used. NULL, or a pointer that is not a live
 * context (destroyed already), is a no-op. Every function refuses a
 * context, graph or session that is not live: DG_ERROR_INVALID_ARGUMENT,
 * or 0 / NULL from the queries (a destroyed object's address that malloc
 * has reused for a new one of the same kind is not detected). */
DG_API void dg_context_destroy(dg_context *ctx);
/* Why the context has no device of this kind, or NULL when it has one
 * (and for a kind outside dg_device_kind): "not built into this library
 * (meson's summary says why)", "left out by dg_context_options.
 * device_kinds", or the target's own reason, e.g. "no Vulkan driver
 * (vkCreateInstance: -9, VK_ERROR_INCOMPATIBLE_DRIVER)". Owned by the
 * context. dg-info prints it for every kind without a device. */
DG_API const char *dg_context_device_absence(const dg_context *ctx,
                                             dg_device_kind kind);
/* The cache directory in use, or NULL when caching is disabled. Owned by
 * the context. */
DG_API const char *dg_context_cache_dir(const dg_context *ctx);

/* Op identifiers (values are ABI; dg_device_supports asks whether a
 * device runs one). */
typedef enum dg_op {
  DG_OP_INVALID = 0,
  DG_OP_CONV2D,
  DG_OP_MAX_POOL2D,
  DG_OP_AVG_POOL2D,
  DG_OP_GLOBAL_AVG_POOL,
  DG_OP_FULLY_CONNECTED,
  DG_OP_MATMUL,
  DG_OP_SOFTMAX,
  DG_OP_RELU, /* reserved: relu is DG_OP_UNARY's DG_UNARY_RELU */
  DG_OP_CLIP, /* reserved: DG_UNARY_CLIP */
  DG_OP_ADD,  /* reserved: DG_OP_BINARY's DG_BINARY_ADD */
  DG_OP_RESHAPE,
  DG_OP_CONCAT,
  DG_OP_QUANTIZE,
  DG_OP_DEQUANTIZE,
  DG_OP_QCONV2D,
  DG_OP_QFULLY_CONNECTED,
  DG_OP_QMATMUL,
  DG_OP_SIGMOID, /* reserved: DG_UNARY_SIGMOID */
  DG_OP_BINARY,
  DG_OP_TRANSPOSE,
  DG_OP_SLICE,
  DG_OP_PAD,
  DG_OP_EXPAND,
  DG_OP_GATHER,
  DG_OP_REDUCE,
  DG_OP_LOG_SOFTMAX,
  DG_OP_LAYER_NORM,
  DG_OP_UNARY, /* dg_graph_unary: one op for every dg_unary_fn */
  DG_OP_RESIZE,
  DG_OP_BATCH_NORM,
  DG_OP_CONV_TRANSPOSE2D,
  DG_OP_CAST,
  DG_OP_COMPARE,
  DG_OP_WHERE,
  DG_OP_ARG_REDUCE,
  DG_OP_QBINARY,     /* dg_graph_qbinary: int8 add, sub, mul */
  DG_OP_LOOKUP,      /* dg_graph_lookup, _qunary, _requantize */
  DG_OP_QAVG_POOL2D, /* dg_graph_qavg_pool2d, _qglobal_avg_pool */
  DG_OP_COUNT_
} dg_op;
DG_API const char *dg_op_name(dg_op op); /* "conv2d", ..., "?" */
/* Whether device (an index of ctx, as dg_context_device_info takes) has a
 * kernel for op: 1 or 0. 0 too for a reserved op (DG_OP_RELU and the
 * others merged into unary and binary), an op outside the enum, a device
 * out of range or a context that is not live. A node of a supported op
 * may still be declined for its shapes or dtypes; the plan says why. */
DG_API int dg_device_supports(const dg_context *ctx, int device, dg_op op);

typedef struct dg_device_info {
  int index; /* position in the context's device list */
  dg_device_kind kind;
  char name[128];   /* e.g. "AMD EPYC 9B45 (avx512, 2 threads)" */
  char driver[128]; /* driver or implementation and its version */
  unsigned dtypes;  /* bit (1u << dg_dtype) for each dtype it runs */
  /* Legacy: bit (1ull << dg_op) for each op below 64 it can run; ask
   * dg_device_supports, which has no such bound. */
  uint64_t ops;
  /* 1 for simulated devices: never chosen as best; a node runs on one
   * only where pinned there, or where the compile options name it (in
   * devices) or its kind (in device_kinds). */
  int is_simulator;
  /* How its int8 results may deviate from the numerics contract, in
   * LSBs (0: bit-exact). */
  int int8_max_lsb_deviation;
  /* How far its f16 results may be beyond the contract's f16 tolerance,
   * in fp16 ULPs of the tensor's largest reference magnitude, i.e. a
   * relative 2^-10 each (0: within the contract). */
  int f16_max_ulp_deviation;
  /* 1 for a GPU API's driver that computes on the host's own CPU (Mesa's
   * lavapipe, PoCL's CPU device): placement never chooses it unless the
   * compile options name it or a node is pinned there, and dg-bench
   * leaves it out unless asked (appended in 0.2.0). */
  int cpu_hosted;
} dg_device_info;

DG_API int dg_context_device_count(const dg_context *ctx);
/* Fills *out for device index; DG_ERROR_NOT_FOUND if out of range. */
DG_API dg_status dg_context_device_info(const dg_context *ctx, int index,
                                        dg_device_info *out);

/* ---- tensors --------------------------------------------------------------
 */

#define DG_MAX_RANK 6

/* Quantisation of an int8/uint8/int32 tensor: real = scale * (q - zero).
 * Per-tensor when channel_count is 0; otherwise per channel along axis,
 * with channel_count entries in channel_scales and (optionally, NULL means
 * all zero) channel_zero_points. The arrays are copied. */
typedef struct dg_quant_params {
  float scale;
  int32_t zero_point;
  int32_t axis;
  int32_t channel_count;
  const float *channel_scales;
  const int32_t *channel_zero_points;
} dg_quant_params;

typedef struct dg_tensor_desc {
  dg_dtype dtype;
  int32_t rank;              /* 0..DG_MAX_RANK */
  int64_t dims[DG_MAX_RANK]; /* each >= 1 */
  dg_quant_params quant;     /* read for i8/u8 (and i32 bias) only */
} dg_tensor_desc;

/* A tensor in a graph: a small value handle. id 0 is "no tensor". */
/* A tensor of one graph, as the builder returns it. graph is that graph's
 * serial: a handle passed to another graph is refused (INVALID_ARGUMENT)
 * instead of naming whatever tensor has its id there. */
typedef struct dg_tensor {
  uint32_t id;
  uint32_t graph;
} dg_tensor;
#define DG_TENSOR_NONE ((dg_tensor){0})

/* ---- graph builder ----------------------------------------------------------
 */

typedef struct dg_graph dg_graph;

/* A structured error from a builder call, compile, run or verify. */
typedef struct dg_diagnostic {
  dg_status status;
  int node_index; /* -1 when not about a node */
  /* Names have any length; these fields and the message show them
   * shortened, ending in "...", where they do not fit. */
  char node_name[64];
  char op[32];    /* op name, or the API call for non-op errors */
  char field[64]; /* offending field or argument, e.g. "params.stride" */
  char expected[96];
  char actual[96];
  char message[512]; /* one or two sentences saying all of the above */
} dg_diagnostic;

/* Creates an empty graph. name may be NULL; it is copied. Returns NULL only
 * when ctx is NULL or memory runs out. The graph must be destroyed before
 * its context. */
DG_API dg_graph *dg_graph_create(dg_context *ctx, const char *name);
DG_API void dg_graph_destroy(dg_graph *graph); /* NULL is a no-op */
/* DG_OK, or the status of the first error (which sticks). */
DG_API dg_status dg_graph_status(const dg_graph *graph);
/* The first error, or NULL if none. Owned by the graph. */
DG_API const dg_diagnostic *dg_graph_error(const dg_graph *graph);
/* Describes tensor t (dims after shape inference); DG_ERROR_NOT_FOUND if t
 * is not a tensor of this graph. */
DG_API dg_status dg_graph_tensor_desc(const dg_graph *graph, dg_tensor t,
                                      dg_tensor_desc *out);
DG_API int dg_graph_node_count(const dg_graph *graph);

/* A named graph input (fed at run time). Names are copied, of any length,
 * and must be non-empty and unique among inputs and outputs. Node and
 * constant names (any length, NULL allowed) need not be unique. */
DG_API dg_tensor dg_graph_input(dg_graph *graph, const char *name,
                                const dg_tensor_desc *desc);

/* Constant data (weights, biases). By default the data is copied during
 * the call. With DG_CONSTANT_LEND the graph keeps the pointer instead: the
 * data must stay valid and unchanged until the graph and every session
 * compiled from it are destroyed. */
enum { DG_CONSTANT_LEND = 1 };
DG_API dg_tensor dg_graph_constant(dg_graph *graph, const char *name,
                                   const dg_tensor_desc *desc, const void *data,
                                   unsigned flags);

/* Marks t as a named output, read back in the given layout. */
DG_API dg_status dg_graph_output(dg_graph *graph, const char *name, dg_tensor t,
                                 dg_layout layout);
/* Sets the layout in which a named input is supplied (default NCHW). */
DG_API dg_status dg_graph_input_layout(dg_graph *graph, const char *name,
                                       dg_layout layout);

/* Names, descriptors and layouts of a graph's inputs and outputs, in the
 * order they were declared. name is owned by the graph (or session). */
typedef struct dg_io_info {
  const char *name;
  dg_tensor_desc desc; /* NCHW dims; quant arrays owned by the graph */
  dg_layout layout;
} dg_io_info;
DG_API int dg_graph_input_count(const dg_graph *graph);
DG_API int dg_graph_output_count(const dg_graph *graph);
/* DG_ERROR_NOT_FOUND when index is out of range. */
DG_API dg_status dg_graph_input_info(const dg_graph *graph, int index,
                                     dg_io_info *out);
DG_API dg_status dg_graph_output_info(const dg_graph *graph, int index,
                                      dg_io_info *out);

/* Pins the nodes added from now on to the device with this index (see
 * dg_context_device_info), like "graph << Target::CL". -1 clears the pin.
 * What a pin means at compile time depends on the policy. */
DG_API dg_status dg_graph_set_device(dg_graph *graph, int device_index);

typedef enum dg_activation {
  DG_ACTIVATION_NONE = 0,
  DG_ACTIVATION_RELU,
  DG_ACTIVATION_RELU6,
} dg_activation;

typedef enum dg_padding {
  DG_PADDING_EXPLICIT = 0, /* use pads[] */
  DG_PADDING_VALID,        /* no padding */
  DG_PADDING_SAME_UPPER,   /* out = ceil(in/stride), extra pad at the end */
  DG_PADDING_SAME_LOWER,   /* same, extra pad at the beginning */
} dg_padding;

/* conv2d: x [N,C,H,W], w [O, C/groups, KH, KW], bias [O] or none.
 * Zero means default: stride 1, dilation 1, groups 1. */
typedef struct dg_conv2d_params {
  int32_t stride[2];   /* h, w */
  int32_t dilation[2]; /* h, w */
  int32_t pads[4];     /* top, left, bottom, right (EXPLICIT only) */
  dg_padding padding;
  int32_t groups; /* groups == C == O/k: depthwise */
  dg_activation activation;
} dg_conv2d_params;

/* Floating-point convolution (f32 or f16 x and w, same dtype). */
DG_API dg_tensor dg_graph_conv2d(dg_graph *graph, const char *name, dg_tensor x,
                                 dg_tensor w, dg_tensor bias,
                                 const dg_conv2d_params *params);

/* Quantised convolution with ONNX QLinearConv semantics: x i8/u8 with
 * per-tensor quantisation, w i8/u8 per-tensor or per output channel
 * (quant.axis 0), bias i32 (scale x.scale*w.scale) or none, output dtype
 * and quantisation given by y_dtype / y_quant (per-tensor). */
DG_API dg_tensor dg_graph_qconv2d(dg_graph *graph, const char *name,
                                  dg_tensor x, dg_tensor w, dg_tensor bias,
                                  const dg_conv2d_params *params,
                                  dg_dtype y_dtype,
                                  const dg_quant_params *y_quant);

typedef struct dg_pool2d_params {
  int32_t kernel[2]; /* h, w; required */
  int32_t stride[2]; /* 0: 1 */
  int32_t pads[4];   /* top, left, bottom, right (EXPLICIT only) */
  dg_padding padding;
  int32_t ceil_mode;         /* non-zero: output size rounds up */
  int32_t count_include_pad; /* avg pool: divide by the window's taps
                              * inside the padded input, not the input */
  int32_t dilation[2];       /* h, w; 0: 1. Window tap (i, j) reads
                              * (oh*stride + i*dilation - pad); appended
                              * last so zero-initialised callers keep
                              * dilation 1 */
} dg_pool2d_params;

/* Pooling over x [N,C,H,W] (f32, f16, and for max pooling i8/u8). */
DG_API dg_tensor dg_graph_max_pool2d(dg_graph *graph, const char *name,
                                     dg_tensor x,
                                     const dg_pool2d_params *params);
DG_API dg_tensor dg_graph_avg_pool2d(dg_graph *graph, const char *name,
                                     dg_tensor x,
                                     const dg_pool2d_params *params);
/* [N,C,H,W] -> [N,C,1,1]. */
DG_API dg_tensor dg_graph_global_avg_pool(dg_graph *graph, const char *name,
                                          dg_tensor x);

/* y[n,o] = act(sum_k x[n,k] * w[o,k] + bias[o]); x of rank >= 2 is
 * flattened to [dims[0], rest]; w [O,K]; bias [O] or none. */
DG_API dg_tensor dg_graph_fully_connected(dg_graph *graph, const char *name,
                                          dg_tensor x, dg_tensor w,
                                          dg_tensor bias,
                                          dg_activation activation);
/* The quantised form (x, y per-tensor; w per-tensor or per output channel
 * along axis 0; bias i32). */
DG_API dg_tensor dg_graph_qfully_connected(
    dg_graph *graph, const char *name, dg_tensor x, dg_tensor w, dg_tensor bias,
    dg_activation activation, dg_dtype y_dtype, const dg_quant_params *y_quant);

/* numpy matmul: [...,M,K] x [...,K,N] -> [...,M,N], batch dims broadcast;
 * rank-1 operands are promoted as numpy does. */
DG_API dg_tensor dg_graph_matmul(dg_graph *graph, const char *name, dg_tensor a,
                                 dg_tensor b);
/* ONNX QLinearMatMul: a per-tensor; b per-tensor or per column (axis =
 * b's last dim); y per-tensor. */
DG_API dg_tensor dg_graph_qmatmul(dg_graph *graph, const char *name,
                                  dg_tensor a, dg_tensor b, dg_dtype y_dtype,
                                  const dg_quant_params *y_quant);

/* Softmax along axis (negative counts from the end). */
DG_API dg_tensor dg_graph_softmax(dg_graph *graph, const char *name,
                                  dg_tensor x, int32_t axis);
/* max(x, 0) and 1 / (1 + exp(-x)), elementwise (f32, f16): the unary
 * functions DG_UNARY_RELU and DG_UNARY_SIGMOID (the nodes are
 * DG_OP_UNARY's). */
DG_API dg_tensor dg_graph_relu(dg_graph *graph, const char *name, dg_tensor x);
DG_API dg_tensor dg_graph_sigmoid(dg_graph *graph, const char *name,
                                  dg_tensor x);

/* ---- reductions, log-softmax, layer normalisation ---- */

/* What dg_graph_reduce computes over the reduced elements x_i (n of them):
 * SUM sum x_i; MEAN sum x_i / n; MAX, MIN; PROD product x_i; L1 sum |x_i|;
 * L2 sqrt(sum x_i^2); SUM_SQUARE sum x_i^2; LOG_SUM log(sum x_i);
 * LOG_SUM_EXP log(sum exp(x_i)) (computed as m + log(sum exp(x_i - m)),
 * m the maximum, so that it does not overflow). */
typedef enum dg_reduce_fn {
  DG_REDUCE_INVALID = 0,
  DG_REDUCE_SUM,
  DG_REDUCE_MEAN,
  DG_REDUCE_MAX,
  DG_REDUCE_MIN,
  DG_REDUCE_PROD,
  DG_REDUCE_L1,
  DG_REDUCE_L2,
  DG_REDUCE_SUM_SQUARE,
  DG_REDUCE_LOG_SUM,
  DG_REDUCE_LOG_SUM_EXP,
  DG_REDUCE_COUNT_
} dg_reduce_fn;
DG_API const char *dg_reduce_fn_name(dg_reduce_fn fn); /* "sum", ..., "?" */
/* Reduces x over axes (axis_count entries in [-rank, rank), each at most
 * once; axis_count 0 reduces over every axis); keepdims != 0 keeps them as
 * 1, else they are dropped (reducing every axis then gives a rank-0
 * tensor). f32/f16. axes is copied (NULL is allowed when axis_count is 0).
 * Errors: DG_ERROR_INVALID_ARGUMENT naming fn, axes or axis_count;
 * DG_ERROR_INVALID_DTYPE naming x. */
DG_API dg_tensor dg_graph_reduce(dg_graph *graph, const char *name,
                                 dg_reduce_fn fn, dg_tensor x,
                                 const int32_t *axes, int axis_count,
                                 int keepdims);
/* y = x - max - log(sum exp(x - max)) along axis (in [-rank, rank)),
 * f32/f16; the same shape as x. */
DG_API dg_tensor dg_graph_log_softmax(dg_graph *graph, const char *name,
                                      dg_tensor x, int32_t axis);
/* Normalises x over axes [axis, rank) (axis in [-rank, rank)):
 * (x - mean) / sqrt(var + epsilon) * scale (+ bias), var the biased
 * variance; scale and bias have the shape of x's dims from axis on (or
 * broadcast to it, numpy rules); bias may be DG_TENSOR_NONE. All of x's
 * dtype (f32/f16); epsilon >= 0 and finite. Errors name x, scale, bias,
 * axis or epsilon. */
DG_API dg_tensor dg_graph_layer_norm(dg_graph *graph, const char *name,
                                     dg_tensor x, dg_tensor scale,
                                     dg_tensor bias, int32_t axis,
                                     float epsilon);
/* The functions of dg_graph_unary (values are ABI: new ones are
 * appended). alpha and beta are the parameters noted; ONNX's defaults are
 * in src/ops/unary.def. */
typedef enum dg_unary_fn {
  DG_UNARY_INVALID = 0,
  DG_UNARY_TANH,
  DG_UNARY_EXP,
  DG_UNARY_LOG,
  DG_UNARY_SQRT,
  DG_UNARY_RECIPROCAL,
  DG_UNARY_ABS,
  DG_UNARY_NEG,
  DG_UNARY_ERF,
  DG_UNARY_GELU,         /* 0.5 x (1 + erf(x / sqrt 2)) */
  DG_UNARY_GELU_TANH,    /* gelu's tanh approximation */
  DG_UNARY_HARD_SIGMOID, /* max(0, min(1, alpha*x + beta)) */
  DG_UNARY_HARD_SWISH,   /* x * max(0, min(1, x/6 + 1/2)) */
  DG_UNARY_SILU,         /* x * sigmoid(x) */
  DG_UNARY_LEAKY_RELU,   /* alpha */
  DG_UNARY_ELU,          /* alpha */
  DG_UNARY_SELU,         /* alpha, beta = gamma */
  DG_UNARY_CELU,         /* alpha (not 0) */
  DG_UNARY_SOFTPLUS,
  DG_UNARY_SOFTSIGN,
  DG_UNARY_MISH,
  DG_UNARY_THRESHOLDED_RELU, /* alpha */
  DG_UNARY_SHRINK,           /* alpha = lambd, beta = bias */
  DG_UNARY_SIN,
  DG_UNARY_COS,
  DG_UNARY_TAN,
  DG_UNARY_ASIN,
  DG_UNARY_ACOS,
  DG_UNARY_ATAN,
  DG_UNARY_SINH,
  DG_UNARY_COSH,
  DG_UNARY_ASINH,
  DG_UNARY_ACOSH,
  DG_UNARY_ATANH,
  DG_UNARY_FLOOR,
  DG_UNARY_CEIL,
  DG_UNARY_ROUND, /* half to even */
  DG_UNARY_SIGN,
  DG_UNARY_SIGMOID, /* 1 / (1 + exp(-x)) (dg_graph_sigmoid) */
  DG_UNARY_RELU,    /* max(x, 0) (dg_graph_relu) */
  DG_UNARY_CLIP,    /* min(max(x, alpha), beta) (dg_graph_clip): alpha <=
                       beta, either may be infinite; NaN stays NaN */
  DG_UNARY_COUNT_
} dg_unary_fn;
DG_API const char *dg_unary_fn_name(dg_unary_fn fn); /* "tanh", ...; "?" */
/* y = fn(x), elementwise, f32 or f16 (computed in float, stored in x's
 * dtype). alpha and beta are the function's parameters where the table
 * above says so (finite, but clip's range), and must be 0 otherwise.
 * Errors: fn not a function ("fn"), a parameter it does not take or not
 * finite ("alpha", "beta"), clip's alpha > beta or NaN ("lo"), x not a
 * float tensor of the graph ("x"). */
DG_API dg_tensor dg_graph_unary(dg_graph *graph, const char *name,
                                dg_unary_fn fn, dg_tensor x, float alpha,
                                float beta);
/* y = min(max(x, lo), hi); relu6 is clip(0, 6). lo <= hi. The same node
 * as dg_graph_unary(DG_UNARY_CLIP, x, lo, hi). */
DG_API dg_tensor dg_graph_clip(dg_graph *graph, const char *name, dg_tensor x,
                               float lo, float hi);
/* Elementwise a + b with numpy broadcasting: dg_graph_binary with
 * DG_BINARY_ADD. */
DG_API dg_tensor dg_graph_add(dg_graph *graph, const char *name, dg_tensor a,
                              dg_tensor b);
/* The functions of dg_graph_binary (values are ABI: append before
 * DG_BINARY_COUNT_). src/ops/binary.def holds each one's formula. */
typedef enum dg_binary_fn {
  DG_BINARY_INVALID = 0,
  DG_BINARY_ADD,
  DG_BINARY_SUB,
  DG_BINARY_MUL,
  DG_BINARY_DIV,  /* IEEE: x / 0 is +-inf, 0 / 0 NaN */
  DG_BINARY_POW,  /* pow(a, b): a < 0 needs an integral b (else NaN);
                     pow(x, 0) = 1 */
  DG_BINARY_MAX,  /* a NaN on either side gives NaN on the CPU; GPU */
  DG_BINARY_MIN,  /* targets agree for inputs without NaN */
  DG_BINARY_FMOD, /* C fmod: result has a's sign (ONNX Mod fmod=1) */
  DG_BINARY_MOD,  /* floored: result has b's sign (ONNX Mod fmod=0, Python %) */
  DG_BINARY_PRELU, /* a < 0 ? a * b : a  (b is the slope, broadcast) */
  DG_BINARY_COUNT_
} dg_binary_fn;
DG_API const char *dg_binary_fn_name(dg_binary_fn fn); /* "sub", ...; "?" */
/* y = fn(a, b) elementwise with numpy broadcasting; a and b f32 or f16,
 * same dtype. Errors: an fn outside (INVALID, COUNT_) is
 * DG_ERROR_INVALID_ARGUMENT (field "fn"), shapes that do not broadcast
 * DG_ERROR_INVALID_SHAPE (field "b", naming both shapes), another dtype
 * DG_ERROR_INVALID_DTYPE. dg_graph_add(g, n, a, b) is fn ADD. */
DG_API dg_tensor dg_graph_binary(dg_graph *graph, const char *name,
                                 dg_binary_fn fn, dg_tensor a, dg_tensor b);
/* The functions of dg_graph_compare and its one-input siblings (values
 * are ABI: append before DG_COMPARE_COUNT_). src/ops/compare.def holds
 * each one's formula. Every one gives a bool tensor. */
typedef enum dg_compare_fn {
  DG_COMPARE_INVALID = 0,
  DG_COMPARE_EQUAL,         /* a == b (NaN is equal to nothing) */
  DG_COMPARE_LESS,          /* a < b */
  DG_COMPARE_LESS_EQUAL,    /* a <= b */
  DG_COMPARE_GREATER,       /* a > b */
  DG_COMPARE_GREATER_EQUAL, /* a >= b */
  DG_COMPARE_AND,           /* bool a and b */
  DG_COMPARE_OR,
  DG_COMPARE_XOR,
  /* One input (dg_graph_not, dg_graph_isnan, dg_graph_isinf): */
  DG_COMPARE_NOT,      /* bool: !a */
  DG_COMPARE_ISNAN,    /* float: a is NaN */
  DG_COMPARE_ISINF,    /* float: a is +inf or -inf */
  DG_COMPARE_ISPOSINF, /* float: a is +inf */
  DG_COMPARE_ISNEGINF, /* float: a is -inf */
  DG_COMPARE_COUNT_
} dg_compare_fn;
DG_API const char *dg_compare_fn_name(dg_compare_fn fn); /* "less", "?" */
/* y = fn(a, b) elementwise with numpy broadcasting, a bool tensor. The
 * comparisons (EQUAL .. GREATER_EQUAL) take f32, f16, i32 or i64; AND, OR
 * and XOR take bool; a and b have the same dtype. Errors: an fn outside
 * EQUAL..XOR is DG_ERROR_INVALID_ARGUMENT (field "fn"), shapes that do
 * not broadcast DG_ERROR_INVALID_SHAPE (field "b"), another dtype or
 * mixed dtypes DG_ERROR_INVALID_DTYPE. */
DG_API dg_tensor dg_graph_compare(dg_graph *graph, const char *name,
                                  dg_compare_fn fn, dg_tensor a, dg_tensor b);
/* y = !x for a bool x (op DG_OP_COMPARE, fn NOT, one input). */
DG_API dg_tensor dg_graph_not(dg_graph *graph, const char *name, dg_tensor x);
/* y = isnan(x) for an f32 or f16 x, bool (op DG_OP_COMPARE, fn ISNAN). */
DG_API dg_tensor dg_graph_isnan(dg_graph *graph, const char *name, dg_tensor x);
/* y = x is an infinity of a sign asked for, bool, for an f32 or f16 x
 * (ONNX IsInf): fn ISINF, ISPOSINF or ISNEGINF by the flags. Both flags
 * zero is DG_ERROR_INVALID_ARGUMENT (field "detect_positive"). */
DG_API dg_tensor dg_graph_isinf(dg_graph *graph, const char *name, dg_tensor x,
                                int detect_positive, int detect_negative);
/* y = cond ? x : y elementwise, the three broadcast together (numpy).
 * cond is bool; x and y have the same dtype, f32, f16, i32 or i64, which
 * is y's. Errors as dg_graph_compare's (fields "cond", "x", "y"). */
DG_API dg_tensor dg_graph_where(dg_graph *graph, const char *name,
                                dg_tensor cond, dg_tensor x, dg_tensor y);
/* The functions of dg_graph_arg_reduce (values are ABI). */
typedef enum dg_arg_fn {
  DG_ARG_INVALID = 0,
  DG_ARG_MAX,
  DG_ARG_MIN,
  DG_ARG_COUNT_
} dg_arg_fn;
/* The index (i64) of the largest (MAX) or smallest (MIN) element of x
 * (f32, f16, i32 or i64) along axis (negative counts from the end): the
 * first such index, or the last with select_last_index. keepdims keeps the
 * axis with extent 1, otherwise it is removed. NaN compares false: a NaN
 * is selected only as a line's first element (ONNX leaves it open).
 * Errors: fn outside (INVALID, COUNT_) INVALID_ARGUMENT ("fn"),
 * axis outside [-rank, rank) INVALID_ARGUMENT ("axis"), other dtypes
 * INVALID_DTYPE. */
DG_API dg_tensor dg_graph_arg_reduce(dg_graph *graph, const char *name,
                                     dg_arg_fn fn, dg_tensor x, int32_t axis,
                                     int keepdims, int select_last_index);
/* ---- int8 beyond convolution --------------------------------------------
 * The ops that QDQ models put between their convolutions, on int8 (i8/u8)
 * tensors with per-tensor quantisation, so that such a model stays int8
 * from its first quantize to its last dequantize. docs/numerics.md
 * ("int8 elementwise, lookup and pooling") defines every result exactly:
 * they are bit-exact on every target. Each takes the output's dtype (i8
 * or u8) and quantisation (per-tensor; copied) like dg_graph_qconv2d.
 * Errors name the argument: a float or per-channel input ("a", "x"), a
 * y_dtype that is not i8/u8 ("y_dtype"), y_quant NULL or per-channel
 * ("y_quant"), a scale ratio that is not a finite normal float
 * ("y_quant.scale"). */

/* y = fn(a, b) with numpy broadcasting, fn ADD, SUB or MUL (ONNX
 * QLinearAdd / QLinearMul; any other fn: INVALID_ARGUMENT "fn"). a and b
 * may have different dtypes and quantisations. */
DG_API dg_tensor dg_graph_qbinary(dg_graph *graph, const char *name,
                                  dg_binary_fn fn, dg_tensor a, dg_tensor b,
                                  dg_dtype y_dtype,
                                  const dg_quant_params *y_quant);
/* y[i] = table[x[i] - min] for an i8 or u8 x, where min is x's dtype's
 * least value (-128 or 0): table holds 256 values of y_dtype (int8_t or
 * uint8_t), copied into a constant of the graph. The quantisations are
 * labels here: the table already holds the answer. */
DG_API dg_tensor dg_graph_lookup(dg_graph *graph, const char *name, dg_tensor x,
                                 const void *table, dg_dtype y_dtype,
                                 const dg_quant_params *y_quant);
/* y = quantize(fn(dequantize(x))) for each of the 256 values x can hold,
 * computed once on the host and run as dg_graph_lookup (ONNX
 * QLinearSigmoid and the DequantizeLinear -> f -> QuantizeLinear of QDQ
 * models). fn, alpha and beta as dg_graph_unary's (its errors too). */
DG_API dg_tensor dg_graph_qunary(dg_graph *graph, const char *name,
                                 dg_unary_fn fn, dg_tensor x, float alpha,
                                 float beta, dg_dtype y_dtype,
                                 const dg_quant_params *y_quant);
/* x in another dtype or quantisation: quantize(dequantize(x)), as a
 * lookup. */
DG_API dg_tensor dg_graph_requantize(dg_graph *graph, const char *name,
                                     dg_tensor x, dg_dtype y_dtype,
                                     const dg_quant_params *y_quant);
/* Average pooling of an int8 x [N,C,H,W] (ONNX QLinearAveragePool): the
 * window's sum of (x - x.zero) in integers, requantised once. params as
 * dg_graph_avg_pool2d's; a window of more than 2^23 taps is refused
 * ("params.kernel": its sum could overflow int32). */
DG_API dg_tensor dg_graph_qavg_pool2d(dg_graph *graph, const char *name,
                                      dg_tensor x,
                                      const dg_pool2d_params *params,
                                      dg_dtype y_dtype,
                                      const dg_quant_params *y_quant);
/* [N,C,H,W] -> [N,C,1,1] (ONNX QLinearGlobalAveragePool): a
 * qavg_pool2d node whose window is the whole plane. */
DG_API dg_tensor dg_graph_qglobal_avg_pool(dg_graph *graph, const char *name,
                                           dg_tensor x, dg_dtype y_dtype,
                                           const dg_quant_params *y_quant);
/* Concatenation of int8 tensors of any quantisations (ONNX QLinearConcat):
 * each input whose dtype or quantisation is not y's is first requantised
 * (a lookup node named "<name>/requant<i>"), then one concat node joins
 * them. tensors is copied. */
DG_API dg_tensor dg_graph_qconcat(dg_graph *graph, const char *name,
                                  const dg_tensor *tensors, int32_t count,
                                  int32_t axis, dg_dtype y_dtype,
                                  const dg_quant_params *y_quant);

/* New dims with at most one -1 (inferred) and 0 meaning "copy the input's
 * dim" (ONNX Reshape). dims is copied. */
DG_API dg_tensor dg_graph_reshape(dg_graph *graph, const char *name,
                                  dg_tensor x, int32_t rank,
                                  const int64_t *dims);
/* [d0..d(axis-1)] x [d(axis)..] -> rank 2 (ONNX Flatten). */
DG_API dg_tensor dg_graph_flatten(dg_graph *graph, const char *name,
                                  dg_tensor x, int32_t axis);
/* Joins count tensors along axis; tensors is copied. */
DG_API dg_tensor dg_graph_concat(dg_graph *graph, const char *name,
                                 const dg_tensor *tensors, int32_t count,
                                 int32_t axis);
/* Data movement (f32, f16, i8, u8, i32; an int8 output keeps x's
 * quantisation). */
/* out.dims[d] = x.dims[perm[d]]. perm: rank(x) entries, a permutation of
 * 0..rank-1 (copied); NULL reverses the axes. */
DG_API dg_tensor dg_graph_transpose(dg_graph *graph, const char *name,
                                    dg_tensor x, const int32_t *perm);
/* Per axis (rank(x) entries each, copied): numpy/ONNX Slice semantics --
 * negative starts/ends count from the end, clamped to the axis; steps
 * non-zero, negative steps walk backwards; steps NULL means 1. An empty
 * result is an error (DG_ERROR_INVALID_SHAPE) since tensors have dims >= 1. */
DG_API dg_tensor dg_graph_slice(dg_graph *graph, const char *name, dg_tensor x,
                                const int64_t *starts, const int64_t *ends,
                                const int64_t *steps);
typedef enum dg_pad_mode {
  DG_PAD_CONSTANT = 0, /* value */
  DG_PAD_REFLECT,      /* mirrored without the edge: pads < dim */
  DG_PAD_EDGE,         /* the edge element repeated */
  DG_PAD_WRAP          /* periodic: from the other end */
} dg_pad_mode;
/* pads: 2*rank entries, the begins of every axis then the ends (ONNX
 * order), each >= 0 (copied); value is the constant for DG_PAD_CONSTANT
 * (for int8, a real value quantised with x's parameters; for i32, rounded
 * to nearest and saturated). */
DG_API dg_tensor dg_graph_pad(dg_graph *graph, const char *name, dg_tensor x,
                              const int64_t *pads, dg_pad_mode mode,
                              float value);
/* Broadcasts x to dims (numpy rules: the result's shape is the broadcast of
 * x's and dims, so a 1 in dims keeps x's dim). dims: rank entries, copied. */
DG_API dg_tensor dg_graph_expand(dg_graph *graph, const char *name, dg_tensor x,
                                 int rank, const int64_t *dims);
/* out = x taken along axis at indices (a CONSTANT i32 tensor, values in
 * [-d, d) where d = x.dims[axis], negative counting from the end); out
 * shape x.dims[:axis] + indices.dims + x.dims[axis+1:]. */
DG_API dg_tensor dg_graph_gather(dg_graph *graph, const char *name, dg_tensor x,
                                 dg_tensor indices, int32_t axis);
/* f32 -> i8/u8/i32 with q (per-tensor or per channel):
 * q = saturate(round_half_even(x / scale) + zero). */
DG_API dg_tensor dg_graph_quantize(dg_graph *graph, const char *name,
                                   dg_tensor x, dg_dtype dtype,
                                   const dg_quant_params *q);
/* i8/u8/i32 -> f32 using x's quantisation. */
DG_API dg_tensor dg_graph_dequantize(dg_graph *graph, const char *name,
                                     dg_tensor x);

/* ---- spatial ops ---- */

typedef enum dg_resize_mode {
  DG_RESIZE_NEAREST = 0,
  DG_RESIZE_LINEAR, /* bilinear over H and W */
} dg_resize_mode;
/* Where output index o of an axis samples the input (ONNX Resize's
 * coordinate_transformation_mode), with s the axis's scale, in and out
 * its lengths: half_pixel (o + 0.5) / s - 0.5; asymmetric o / s;
 * align_corners o * (in - 1) / (in * s - 1) (0 when in * s is 1);
 * pytorch_half_pixel as half_pixel, 0 when out is 1; tf_half_pixel_for_nn
 * (o + 0.5) / s; half_pixel_symmetric half_pixel shifted by
 * in / 2 * (1 - out / (in * s)). */
typedef enum dg_resize_coord {
  DG_RESIZE_HALF_PIXEL = 0,
  DG_RESIZE_ASYMMETRIC,
  DG_RESIZE_ALIGN_CORNERS,
  DG_RESIZE_PYTORCH_HALF_PIXEL,
  DG_RESIZE_TF_HALF_PIXEL_FOR_NN,
  DG_RESIZE_HALF_PIXEL_SYMMETRIC,
} dg_resize_coord;
/* How nearest resizing rounds that position (ONNX nearest_mode); the
 * index is then clamped to the input. */
typedef enum dg_resize_nearest {
  DG_RESIZE_ROUND_PREFER_FLOOR = 0,
  DG_RESIZE_ROUND_PREFER_CEIL,
  DG_RESIZE_FLOOR,
  DG_RESIZE_CEIL,
} dg_resize_nearest;
/* Linear resizing interpolates between the two inputs around the
 * position, indices clamped to the input (edge values repeat). */
typedef struct dg_resize_params {
  dg_resize_mode mode;
  dg_resize_coord coord;
  dg_resize_nearest nearest; /* read in nearest mode only */
  /* H and W scales used by the coordinate transform (finite, > 0); 0 with
   * the axis's size given: size / input length. */
  float scales[2];
  /* Output H and W; 0: floor(input length * scale). */
  int64_t sizes[2];
} dg_resize_params;
/* Resizes x [N,C,H,W] over H and W (f32, f16; nearest also i8/u8, the
 * quantisation kept). params is read during the call. Errors name the
 * field: params (NULL), params.mode, params.coord, params.nearest,
 * params.scales, params.sizes, x (dtype, rank). */
DG_API dg_tensor dg_graph_resize(dg_graph *graph, const char *name, dg_tensor x,
                                 const dg_resize_params *params);
/* Inference batch norm over axis 1 of x [N, C, ...] (rank 2..6, f32 or
 * f16): y = (x - mean) / sqrt(var + epsilon) * scale + bias, with scale,
 * bias, mean and var [C] tensors of x's dtype; epsilon finite, >= 0.
 * dg_graph_compile folds a batch norm whose parameters are constants into
 * the conv2d before it (constant weights and bias, no activation) when
 * nothing else reads the conv's output: the plan then shows one conv2d
 * named "<conv name>+<batch norm name>". Errors name the argument (x,
 * scale, bias, mean, var: dtype, shape) or epsilon. */
DG_API dg_tensor dg_graph_batch_norm(dg_graph *graph, const char *name,
                                     dg_tensor x, dg_tensor scale,
                                     dg_tensor bias, dg_tensor mean,
                                     dg_tensor var, float epsilon);
/* Transposed 2-D convolution (the gradient of conv2d with respect to its
 * input), NCHW, f32 or f16: x [N, C_in, H, W], w [C_in, C_out / groups,
 * KH, KW] (ONNX layout), bias [C_out] or none. params as conv2d's
 * (stride, dilation, groups, activation; pads crop the full output
 * (top, left, bottom, right); SAME_UPPER / SAME_LOWER give an output of
 * H * stride, the odd pad at the end / beginning). output_padding (NULL:
 * 0, 0) adds rows and columns at the bottom and right, each below
 * max(stride, dilation): OH = stride * (H - 1) + output_padding +
 * dilation * (KH - 1) + 1 - pad_top - pad_bottom. Errors name the field:
 * params.* as conv2d's, output_padding, w.dims[0], bias, x. */
DG_API dg_tensor dg_graph_conv_transpose2d(dg_graph *graph, const char *name,
                                           dg_tensor x, dg_tensor w,
                                           dg_tensor bias,
                                           const dg_conv2d_params *params,
                                           const int32_t output_padding[2]);
/* Converts values between f32, f16, i32, i64 and bool (x's dtype to `to`,
 * any pair, the same one a copy): float -> i32 or i64 truncates toward
 * zero, saturating to the type's range, NaN -> 0; i64 -> i32 saturates;
 * to bool is "not zero" (NaN is true); to a float type rounds to nearest
 * (inf past f16's range). Vulkan runs only the f32/f16/i32 pairs. An i32 x is
 * read as the plain integers it holds (its quantisation, if any, ignored). i8
 * and u8 are refused either way (DG_ERROR_INVALID_DTYPE, naming x or to): they
 * are quantised types, whose values dg_graph_dequantize and dg_graph_quantize
 * convert. */
DG_API dg_tensor dg_graph_cast(dg_graph *graph, const char *name, dg_tensor x,
                               dg_dtype to);

/* ---- compile, plan ----------------------------------------------------------
 */

typedef enum dg_policy {
  DG_POLICY_AUTO = 0, /* cost-based; pins are hints; fallback is visible */
  DG_POLICY_STRICT,   /* pinned nodes must run where pinned, else fail */
} dg_policy;

/* What arithmetic an f32 graph may run in (dg_compile_options.precision).
 * EXACT (the default): as built. FAST_F16: where an allowed Vulkan or
 * OpenCL device computes in f16, the session holds every f32 tensor and
 * constant in f16 and runs the nodes in f16 storage with f32 accumulation
 * (the f16 kernels' arithmetic, and each node within the f16 tolerance
 * dg_session_verify checks), converting the graph's f32 inputs and
 * outputs on the host at each run, so bindings stay f32. Graphs with
 * quantize or dequantize nodes, f16 already, or inputs or outputs bound
 * NHWC stay as built; so does every graph when no allowed device computes
 * in f16. dg_plan_precision says what was done and why; each plan node's
 * compute_dtype shows its dtype as it runs. */
typedef enum dg_precision {
  DG_PRECISION_EXACT = 0,
  DG_PRECISION_FAST_F16,
} dg_precision;

typedef struct dg_compile_options {
  dg_policy policy;
  /* Allow-list of device kinds (mask of dg_device_kind; 0 = all). */
  unsigned device_kinds;
  /* Allow-list of device indices (NULL/0 = all); copied. */
  const int *devices;
  int device_count;
  /* Non-zero: the CPU and the NPU time every node of every run (a clock
   * read per node), read back as the plan's measured_us (dg-run --plan,
   * Python's profile=True); 0, the default, leaves them unmeasured unless
   * $DG_PROFILE is set. Vulkan (timestamp queries, where the device has
   * them) and OpenCL (profiling events) measure every node always: on
   * the device, at no cost to the run. */
  int profile;            /* appended in 0.2.0 */
  dg_precision precision; /* appended in 0.2.0; DG_PRECISION_EXACT: 0 */
} dg_compile_options;

typedef struct dg_session dg_session;

/* Places every node, plans memory and compiles each device's segments.
 * The session keeps its own copy of everything it needs (lent constants
 * excepted), so the graph may be destroyed afterwards. Fails with
 * DG_ERROR_GRAPH_FAILED on a graph holding an error, and with
 * DG_ERROR_UNSUPPORTED (diagnostic names the node and why) when a node can
 * run on no allowed device or, under STRICT, not on its pinned device. The
 * diagnostic, if diag is not NULL, is filled on failure. */
DG_API dg_status dg_graph_compile(dg_graph *graph,
                                  const dg_compile_options *options,
                                  dg_session **out, dg_diagnostic *diag);
DG_API void dg_session_destroy(dg_session *session); /* NULL: no-op */

typedef struct dg_plan dg_plan; /* owned by its session */
DG_API const dg_plan *dg_session_plan(const dg_session *session);

typedef enum dg_placement_reason {
  DG_REASON_ONLY_DEVICE = 0, /* the only allowed device that runs it */
  DG_REASON_CHEAPEST,        /* lowest estimated cost, transfers included */
  DG_REASON_PINNED,          /* pinned while building */
  DG_REASON_FALLBACK,        /* pinned elsewhere but that device declined */
} dg_placement_reason;

typedef struct dg_plan_node {
  int node_index;
  char node_name[64]; /* ending in "..." when the name is longer */
  dg_op op;
  int device_index;
  dg_device_kind device_kind;
  char device_name[128];
  dg_placement_reason reason;
  char reason_text[160]; /* e.g. "fallback: vulkan declined (f16)" */
  double estimated_us;
  uint64_t bytes_in; /* bytes read, transfers counted separately */
  uint64_t bytes_out;
  uint64_t bytes_transferred; /* moved between devices for this node */
  int int8_max_lsb_deviation;
  double measured_us;        /* last run's time, 0 if not measured */
  int f16_max_ulp_deviation; /* the device's, as int8_max_lsb_deviation */
  /* The dtype of the node's output as it runs: DG_DTYPE_F16 for an f32
   * node that DG_PRECISION_FAST_F16 lowered (appended in 0.2.0). */
  dg_dtype compute_dtype;
} dg_plan_node;

DG_API int dg_plan_node_count(const dg_plan *plan);
/* What the compile did with dg_compile_options.precision, one line owned
 * by the plan: "exact", "fast: f16 storage, f32 accumulation on N nodes",
 * or "fast not applied: <why>"; NULL for a NULL plan. */
DG_API const char *dg_plan_precision(const dg_plan *plan);
DG_API dg_status dg_plan_get_node(const dg_plan *plan, int i,
                                  dg_plan_node *out);

typedef enum dg_plan_format {
  DG_PLAN_FORMAT_TABLE = 0,
  DG_PLAN_FORMAT_DOT, /* Graphviz, nodes coloured by device kind */
} dg_plan_format;
DG_API dg_status dg_plan_write(const dg_plan *plan, dg_plan_format format,
                               FILE *out);

/* The same for a compiled session (valid while the session lives). */
DG_API int dg_session_input_count(const dg_session *session);
DG_API int dg_session_output_count(const dg_session *session);
DG_API dg_status dg_session_input_info(const dg_session *session, int index,
                                       dg_io_info *out);
DG_API dg_status dg_session_output_info(const dg_session *session, int index,
                                        dg_io_info *out);

/* ---- run, verify ----------------------------------------------------------
 */

/* A host buffer bound to a named input or output. The data is read (inputs)
 * or written (outputs) during dg_session_run only. size is in bytes and
 * must equal the tensor's size. (A device buffer is bound to the session
 * instead: dg_session_bind_buffer.) */
typedef struct dg_binding {
  const char *name;
  void *data;
  size_t size;
} dg_binding;

/* Runs the whole session once. Every input must be bound; outputs not bound
 * are computed and dropped. Returns DG_ERROR_NOT_FOUND (unknown name),
 * DG_ERROR_INVALID_ARGUMENT (wrong size, missing input, NULL data), or a
 * device error. diag may be NULL. */
DG_API dg_status dg_session_run(dg_session *session, const dg_binding *inputs,
                                int input_count, const dg_binding *outputs,
                                int output_count, dg_diagnostic *diag);

/* dg_session_run in two halves, so that the caller works (or runs other
 * sessions: several runs in flight, one per session) while a device
 * computes. dg_session_submit checks the bindings as dg_session_run does,
 * reads the inputs' host memory, runs the session up to its last
 * segment and queues that one's device work (a session ending on the CPU
 * or the NPU runs to its end here), then returns; the outputs' host
 * memory must stay valid until dg_session_wait, which waits for the
 * device (no longer than device_timeout_ms), writes the outputs and
 * returns the run's status. A submit that returned DG_OK is followed by
 * exactly one wait, from any thread; until then the session is busy (a
 * run, verify, bind or second submit is refused, as a concurrent run
 * is). A failed submit needs no wait. dg_session_destroy of a session
 * with a run not waited for waits for the device (bounded) and writes no
 * output. The submissions of several sessions on one device run in
 * submission order, so a session bound to a buffer (dg_session_bind_buffer)
 * that an earlier submitted one writes reads what it wrote. */
DG_API dg_status dg_session_submit(dg_session *session,
                                   const dg_binding *inputs, int input_count,
                                   const dg_binding *outputs, int output_count,
                                   dg_diagnostic *diag);
DG_API dg_status dg_session_wait(dg_session *session, dg_diagnostic *diag);

typedef struct dg_verify_report {
  int ok; /* 1: every node within tolerance */
  int nodes_checked;
  int node_index;     /* first failing node, -1 if ok */
  char node_name[64]; /* ending in "..." when the name is longer */
  dg_op op;
  double max_abs_error; /* at that node (or the worst, if ok) */
  double max_rel_error;
  int64_t max_lsb_error; /* integer outputs */
  double tolerance;
} dg_verify_report;

/* Runs the session and the reference kernels side by side on these inputs
 * and compares every node's output against the reference's (computed from
 * the same inputs as the session's node saw) under the dtype's tolerance
 * and the device's declared int8 deviation. Returns DG_OK when all match,
 * DG_ERROR_MISMATCH when one differs (report says which), or an error. */
DG_API dg_status dg_session_verify(dg_session *session,
                                   const dg_binding *inputs, int input_count,
                                   dg_verify_report *report);

/* ---- device buffers --------------------------------------------------------
 *
 * A dg_buffer holds one tensor (dtype and dims, no quantisation) in one
 * device's memory: a GPU's own memory on a discrete Vulkan or OpenCL
 * device, memory the host maps on a unified one (lavapipe, an integrated
 * GPU), plain aligned host memory on the CPU. Bound to a session's input
 * or output (dg_session_bind_buffer), every run of the session reads or
 * writes it on the device without a copy through the host, so one
 * session's output buffer can be the next session's input:
 *
 *   dg_buffer *mid;   // on device 1 (say, Vulkan), the shape of y
 *   dg_buffer_create(ctx, 1, &y_desc, &mid, &diag);
 *   dg_session_bind_buffer(a, "y", mid, &diag);   // a's output y
 *   dg_session_bind_buffer(b, "x", mid, &diag);   // b's input x
 *   dg_binding in = {"x", x, sizeof x}, out = {"z", z, sizeof z};
 *   dg_session_run(a, &in, 1, NULL, 0, &diag);    // y stays on the GPU
 *   dg_session_run(b, NULL, 0, &out, 1, &diag);
 *   ...
 *   dg_session_destroy(a), dg_session_destroy(b), dg_buffer_destroy(mid);
 *
 * dg_session_bind_buffer checks the rules (DG_ERROR_INVALID_ARGUMENT,
 * the diagnostic saying which): the buffer's dtype and dims equal the
 * tensor's as the session holds it (an f32 input or output that
 * DG_PRECISION_FAST_F16 holds in f16 takes an f16 buffer: its bytes are
 * used as they are, with no conversion); it belongs to the session's
 * context; the session binds it to no other name; the tensor is bound
 * NCHW. A buffer on a GPU must
 * be used only on that device: every node of the session that reads the
 * input, or makes and reads the output, runs there (the plan says where
 * each runs) - a binding never costs a hidden host copy; bind host memory
 * where the graph needs the tensor elsewhere. A CPU buffer is host
 * memory, bindable anywhere. Vulkan runs bind the buffer itself (the
 * segment's commands are recorded again when its bound buffers change,
 * not at every run); OpenCL runs copy it on the device into the
 * segment's own buffers. The NPU has no buffers (DG_ERROR_UNSUPPORTED).
 *
 * Ownership and lifetime: the caller owns a buffer and destroys it after
 * the last run that uses it has returned and after unbinding it (or
 * destroying the sessions it is bound to), and before its context; a run
 * finding a bound buffer destroyed fails naming it. A run that fails never
 * leaves device work touching the caller's host memory, but after a
 * device time-out its buffers may still be written by the device:
 * destroying such a buffer keeps its device memory allocated (and
 * unreachable) rather than freeing it under the device.
 *
 * Threads: a buffer may be read by several runs at once; a run or
 * dg_buffer_write that writes it while another call reads or writes it
 * gives undefined contents (as with any memory), never a crash.
 * dg_session_bind_buffer changes its session: refused while the session
 * runs, as a second dg_session_run is. dg_session_verify refuses a
 * session with an input bound to a buffer (the reference reads every
 * input on the host). */

typedef struct dg_buffer dg_buffer;

/* Allocates a buffer for a tensor of desc's dtype and dims (quant is
 * ignored) on the device with this index (dg_context_device_info). Contents
 * are undefined until written. *out is NULL on failure. */
DG_API dg_status dg_buffer_create(dg_context *ctx, int device_index,
                                  const dg_tensor_desc *desc, dg_buffer **out,
                                  dg_diagnostic *diag);
/* NULL, or a pointer that is not a live buffer: a no-op. */
DG_API void dg_buffer_destroy(dg_buffer *buffer);
/* Copies the whole tensor, size bytes (its size exactly), from host data
 * into the buffer, or from the buffer into host data; returns once the
 * copy is complete (and waits no longer than device_timeout_ms). */
DG_API dg_status dg_buffer_write(dg_buffer *buffer, const void *data,
                                 size_t size, dg_diagnostic *diag);
DG_API dg_status dg_buffer_read(dg_buffer *buffer, void *data, size_t size,
                                dg_diagnostic *diag);
/* Binds buffer to the session's input or output of this name, for every
 * later run until bound again; NULL unbinds. A name bound to a buffer
 * takes no dg_binding in dg_session_run (refused: it would be ambiguous);
 * an output bound to one is always written. DG_ERROR_NOT_FOUND for an
 * unknown name. */
DG_API dg_status dg_session_bind_buffer(dg_session *session, const char *name,
                                        dg_buffer *buffer, dg_diagnostic *diag);
/* The buffer's dtype and dims (quant zero) and its device's index; either
 * out-pointer may be NULL. DG_ERROR_INVALID_ARGUMENT for a buffer that is
 * not live. */
DG_API dg_status dg_buffer_info(const dg_buffer *buffer, dg_tensor_desc *desc,
                                int *device_index);

/* ---- one-shot ops
 * ------------------------------------------------------------ */

/* Runs one convolution now on the device with this index (-1: auto), from
 * host buffers in NCHW. Descriptors give dtype/shape/quant; b_desc/b may be
 * NULL. The compiled one-node session is memoised in the context, keyed by
 * the descriptors and params, so repeated calls cost one run. y_size is in
 * bytes. For int8 descriptors it runs qconv2d (y_desc->quant gives the
 * output quantisation). Safe from any thread: calls on one context run one
 * at a time (see Threads). */
DG_API dg_status dg_oneshot_conv2d(dg_context *ctx, int device_index,
                                   const dg_tensor_desc *x_desc, const void *x,
                                   const dg_tensor_desc *w_desc, const void *w,
                                   const dg_tensor_desc *b_desc, const void *b,
                                   const dg_conv2d_params *params,
                                   const dg_tensor_desc *y_desc, void *y,
                                   size_t y_size, dg_diagnostic *diag);
/* The same for fully_connected (x [N,K], w [O,K]) and matmul. */
DG_API dg_status dg_oneshot_fully_connected(
    dg_context *ctx, int device_index, const dg_tensor_desc *x_desc,
    const void *x, const dg_tensor_desc *w_desc, const void *w,
    const dg_tensor_desc *b_desc, const void *b, dg_activation activation,
    const dg_tensor_desc *y_desc, void *y, size_t y_size, dg_diagnostic *diag);
DG_API dg_status dg_oneshot_matmul(dg_context *ctx, int device_index,
                                   const dg_tensor_desc *a_desc, const void *a,
                                   const dg_tensor_desc *b_desc, const void *b,
                                   const dg_tensor_desc *y_desc, void *y,
                                   size_t y_size, dg_diagnostic *diag);

/* ---- ONNX import ------------------------------------------------------------
 */

/* A graph input whose value is fixed at import time (a shape, a scale, a
 * clip bound fed as an input), turning it into a constant. */
typedef struct dg_onnx_constant {
  const char *name;           /* the ONNX graph input's name */
  const dg_tensor_desc *desc; /* dtype and dims (quant ignored) */
  const void *data;           /* read during dg_onnx_load only */
} dg_onnx_constant;

typedef struct dg_onnx_options {
  /* Value given to symbolic dimensions (dim_param, e.g. a batch size);
   * 0 refuses models that have them. */
  int64_t symbolic_dim_value;
  /* Graph inputs to freeze as constants (array copied during the call). */
  const dg_onnx_constant *constants;
  int constant_count;
  /* The folder external data files (tensors whose bytes are in a file
   * beside the model, as PyTorch's exporter writes) are read from: their
   * locations must be relative paths that stay inside it (no "..", no
   * absolute path, no symlink leading out), else the model is refused.
   * NULL: the model file's folder for dg_onnx_load; dg_onnx_load_memory
   * then refuses external data. Read during the call only. */
  const char *external_data_dir;
} dg_onnx_options;

/* Reads an ONNX model (opsets 1..22 of the default domain, each op at the
 * versions src/front/onnx/onnx_op_table.c lists, with the semantics of the
 * model's version) and builds it
 * with the builder calls above, nothing private: graph inputs and outputs
 * keep their ONNX names; initializers become constants (copied).
 * docs/onnx.md lists the ops taken. Shape arithmetic on values known at
 * import (Shape, Size, Gather, Unsqueeze, Concat, Cast, Range, Equal,
 * Where, ConstantOfShape, ... on constants, as PyTorch's exports write
 * around Reshape and Expand) is folded: no node is built for it.
 * Conv, MaxPool, AveragePool, GlobalAveragePool, Gemm, MatMul, Softmax,
 * Relu, Clip, Add, Flatten, Reshape, Concat, QuantizeLinear,
 * DequantizeLinear, QLinearConv, QLinearMatMul, Identity, Dropout
 * (inference: its mask output is declined), Resize and Upsample (nearest,
 * linear), BatchNormalization (inference), ConvTranspose (1-D, 2-D), Cast
 * and CastLike (FLOAT, FLOAT16, INT32) are supported, and
 * DequantizeLinear -> Conv/MatMul/Gemm (-> Relu) -> QuantizeLinear chains
 * are folded into the int8 ops. Anything else fails with a diagnostic
 * naming the node, the op and the attribute; when several nodes are not
 * supported, the message counts and names the others too (as far as they
 * fit), and each is logged whole at DG_LOG_ERROR on ctx. A truncated,
 * corrupt or hostile file gives an error (DG_ERROR_IO or
 * DG_ERROR_INVALID_ARGUMENT), never a crash. opts may be NULL. On success
 * *out is a new graph the caller destroys; on failure *out is NULL.
 * Returns DG_ERROR_UNSUPPORTED when the library was built without ONNX
 * support (protobuf-c). */
DG_API dg_status dg_onnx_load(dg_context *ctx, const char *path,
                              const dg_onnx_options *opts, dg_graph **out,
                              dg_diagnostic *diag);
/* The same from memory (data is only read during the call). */
DG_API dg_status dg_onnx_load_memory(dg_context *ctx, const void *data,
                                     size_t size, const dg_onnx_options *opts,
                                     dg_graph **out, dg_diagnostic *diag);

#ifdef __cplusplus
}
#endif
#endif /* DIRECTGRAPH_GRAPH_H */
