/* directgraph's TVM entry points: destination-passing-style kernels with
 * the TVM-FFI stable C calling convention, exported from libdirectgraph as
 * __tvm_ffi_directgraph_<op> so that tvm_ffi.load_module("libdirectgraph.so")
 * (or a C wrapper linked with -ldirectgraph, as python/directgraph_tvm
 * emits) finds them.
 *
 * Every entry point has the signature
 *   int f(void *handle, const TVMFFIAny *args, int32_t num_args,
 *         TVMFFIAny *result)
 * takes its operands and its preallocated output(s) as tensors, writes the
 * output(s) and sets *result to None. A tensor argument is either type
 * index 7 (a DLTensor*) or 70 (a tensor object); it must be host memory
 * (kDLCPU), lanes 1, dims >= 1; strides (in elements) and byte_offset are
 * honoured. "Int" arguments take type 1 (Int) or 2 (Bool); "Float"
 * arguments take type 3 (Float) or 1 (Int).
 *
 * Argument order (y is the output; "b?" may be None):
 *   directgraph_conv2d        x, w, b?, y, stride_h, stride_w, pad_top,
 *                             pad_left, pad_bottom, pad_right, dilation_h,
 *                             dilation_w, groups                (13 args)
 *   directgraph_conv2d_relu   same as conv2d, relu fused         (13 args)
 *       x [N,C,H,W], w [O,C/groups,KH,KW], b [O], y [N,O,OH,OW]; f32/f16
 *   directgraph_dense         x, w, b?, y                        (4 args)
 *       x [...,K], w [O,K], b [O], y [...,O] (y = x w^T + b); f32/f16
 *   directgraph_matmul        a, b, y                            (3 args)
 *       numpy matmul with batch broadcasting; f32/f16
 *   directgraph_max_pool2d    x, y, kernel_h, kernel_w, stride_h, stride_w,
 *                             pad_top, pad_left, pad_bottom, pad_right,
 *                             ceil_mode                          (11 args)
 *       x [N,C,H,W]; f32/f16/i8/u8
 *   directgraph_relu          x, y                               (2 args)
 *   directgraph_softmax       x, y, axis (negative: from the end) (3 args)
 *       same shape; f32/f16
 *   directgraph_qlinear_conv2d x, w, b?, y, x_scale, x_zero_point,
 *                             w_scale, w_zero_point, y_scale, y_zero_point,
 *                             stride_h, stride_w, pad_top, pad_left,
 *                             pad_bottom, pad_right, dilation_h, dilation_w,
 *                             groups, relu                       (20 args)
 *       ONNX QLinearConv semantics (docs/numerics.md): x, w, y i8/u8, b i32
 *       [O] (scale x_scale*w_scale, zero point 0); scales are Float, zero
 *       points Int; w_scale may instead be an f32 tensor [O] (per output
 *       channel); relu (Int, 0/1) clamps in the quantised domain.
 *
 * Device: the calls run on a per-process directgraph context made on first
 * use, holding only the CPU unless $DG_TVM_DEVICE picks a device index
 * ("auto" or unset: the CPU; an index: every device opened, the calls
 * pinned to that one). The calls are serialised by a lock (the one-shot sessions
 * they memoise are not thread-safe).
 *
 * Errors: a non-zero return (-1) comes with a message naming the function
 * and the argument. When libtvm_ffi is loaded in the process the message is
 * raised through its TVMFFIErrorSetRaisedFromCStr (so TVM sees a normal
 * Python/C++ error); in every case it is also kept per thread and read with
 * dg_tvm_last_error(). */
#ifndef DG_TVM_H
#define DG_TVM_H

#include "graph.h"
#include "tvm_ffi_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The message of the calling thread's last failed entry-point call ("" if
 * none). Valid until the thread's next failing call. */
DG_API const char *dg_tvm_last_error(void);

/* Raises an error exactly as the entry points do (kind as in Python, e.g.
 * "ValueError"; NULL: "RuntimeError"); returns -1. Used by the C wrappers
 * that python/directgraph_tvm emits, so their arity errors read the same. */
DG_API int dg_tvm_raise(const char *kind, const char *message);

#define DG_TVM_ENTRY(name)                                                   \
  DG_API int __tvm_ffi_directgraph_##name(void *handle,                      \
                                          const dg_ffi_any *args,            \
                                          int32_t num_args, dg_ffi_any *result)
DG_TVM_ENTRY(conv2d);
DG_TVM_ENTRY(conv2d_relu);
DG_TVM_ENTRY(dense);
DG_TVM_ENTRY(matmul);
DG_TVM_ENTRY(max_pool2d);
DG_TVM_ENTRY(relu);
DG_TVM_ENTRY(softmax);
DG_TVM_ENTRY(qlinear_conv2d);

#ifdef __cplusplus
}
#endif
#endif
