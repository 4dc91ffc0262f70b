/* Lowering a qconv2d, qfully_connected, qmatmul or f16 conv2d node to NPU
 * tasks, and running them.
 *
 * A node becomes one-task convolutions (gen.h), each over a block of
 * output channels and a slice of output rows:
 *  - channels: a new block starts where the weight zero point changes or
 *    the multipliers spread too far for one task (per-channel weights:
 *    OUT_CVT takes one gain per task, the BS stage a multiplier per
 *    channel within a factor 16, dpu_requant.h), and a run is cut further
 *    when its weights leave too few data banks;
 *  - rows: output rows are cut into slices whose input rows (overlapping
 *    by kernel - stride) fit the data banks. Only a slice that reaches the
 *    top of the input gets top padding; bottom padding is implied by the
 *    output height, so only the slice that reaches the bottom has it.
 * Of the (channels per block, rows per slice) pairs that fit, the one with
 * the fewest tasks wins; dg_npu_conv_plan_make (gen.c) decides "fits".
 * Every task is an ordinary one-task conv over its own input and output
 * cubes (no new register semantics), placed at offsets in four buffers
 * shared by the node's tasks (input slices, weights, biases, outputs);
 * the offsets are relocations the backend patches with its IOVAs.
 *
 * qfully_connected and qmatmul (constant weights) are 1x1 convolutions:
 * the M rows of x on the input height (width 1), K on the input channels,
 * N on the kernels (MTX's matmul mapping; README.md, "Tiling").
 *
 * An f16 conv2d (direct, fp16 x, w and y, constant weights and bias) is
 * cut and run the same way, as fp16 tasks (gen_f16.c, precision
 * NPU_PREC_FP16): one run of output channels (no requantisation to split
 * on), no bias buffer; what is fp16-specific (which nodes, the weight
 * packing, the bias and relu/relu6 added on the host) is lower_f16.c's.
 */
#ifndef DG_NPU_LOWER_H
#define DG_NPU_LOWER_H

#include "backend.h"
#include "gen.h"

#include "core/ir.h"

typedef struct npu_task {
  int o0, o1;   /* output channels [o0, o1); depthwise: input channels too */
  int oh0, oh1; /* output rows [oh0, oh1) */
  int ih0;      /* first input row read (d.in_h rows from there) */
  npu_conv_desc d;
  npu_conv_plan plan;
  npu_stream stream; /* relocated at the offsets below; patched at prepare */
  uint32_t in_off, wt_off, bias_off, out_off; /* into the node's buffers */
  bool packs_input;    /* the first task reading this input slice */
  bool packs_weights;  /* the first task of this channel block */
  bool reuses_weights; /* WEIGHT_REUSE: the CNA keeps the previous task's */
  npu_task_ref list;   /* its command list in the node's cmd buffer */
} npu_task;

typedef enum npu_layout {
  NPU_LAYOUT_NCHW, /* qconv2d: N images of C x H x W */
  NPU_LAYOUT_ROWS, /* fc / matmul: x [M][K] as one K x M x 1 image */
} npu_layout;

typedef struct npu_conv {
  const dg_node *node;
  npu_layout layout;
  bool w_kn; /* weights stored [K][N] (qmatmul's b) instead of [N][K] */
  int N, C, H, W, O, OH, OW;
  int kh, kw, sy, sx, pt, pl; /* kernel, strides, top/left padding */
  bool dw, x_u8, y_u8;
  int32_t y_lo, y_hi; /* output clamp in the output dtype (activation) */
  npu_task *tasks;
  int task_count;
  size_t in_bytes, wt_bytes, bias_bytes, out_bytes; /* shared buffers */
  npu_bo in, wt, bias, out;
  npu_bo cmd; /* every task's command list, 64-byte aligned, in order */
  int8_t *x_chw, *y_chw; /* host staging: one image in, one task out */
  /* f16 conv2d (lower_f16.c): no quantisation; the bias (fp16, may be
   * NULL) and the activation are applied on the host after read-back; the
   * input is packed straight from the caller's image (no x_chw). */
  bool f16;
  const uint16_t *bias_f16;
  dg_activation act;
  uint16_t *y_f16; /* host staging: one task out */
  /* Cube hand-off between consecutive NPU nodes (dg_npu_cube_edge): from,
   * when set, is the node whose output cubes this node's input slices are
   * copied from, NC1HWC2 to NC1HWC2 (no NCHW in between); out_on_npu: no
   * reader wants this node's output in host memory, so it is not
   * unpacked. The timing model reads the flags (from_npu for a from not
   * yet linked, as npu-report's count). */
  struct npu_conv *from;
  bool from_npu, out_on_npu;
} npu_conv;

/* Most tasks one node may take before the NPU declines it. */
#define NPU_MAX_TASKS_PER_NODE 4096

/* Whether op is one the conv lowering takes (qconv2d, qfully_connected,
 * qmatmul, f16 conv2d): the NPU's capability, from lower.c's table. */
bool dg_npu_conv_op(dg_op op);

/* Fills c (tasks described, streams generated, nothing allocated) or
 * returns false with a short reason for the plan ("f32 op", "dilation",
 * "does not fit the CBUF even ...", ...). c may be NULL (a supports()
 * query); otherwise release it with dg_npu_conv_release. */
bool dg_npu_conv_lower(const dg_ir *ir, const dg_node *n, npu_conv *c,
                       char *why, size_t why_size);

/* Allocates the node's buffers on b, packs weights and biases, patches and
 * checks the command lists. 0, or -1 with err set. */
int dg_npu_conv_prepare(npu_conv *c, const dg_ir *ir, npu_backend *b, char *err,
                        size_t n);
/* Runs image img of the batch (x, y: the whole batch) through every task:
 * a segment whose nodes hand cubes over runs image by image. */
int dg_npu_conv_run_image(npu_conv *c, npu_backend *b, int img, const void *x,
                          void *y, char *err, size_t n);
/* Runs every image of the batch through every task. */
int dg_npu_conv_run(npu_conv *c, npu_backend *b, const void *x, void *y,
                    char *err, size_t n);
/* The contract's requantisation multiplier (sx * sw) / sy of output
 * channel o of an int8 node (docs/numerics.md). */
float dg_npu_channel_multiplier(const dg_ir *ir, const dg_node *n, int o);
/* Whether tensor t can stay in NC1HWC2 cubes from its producer to every
 * reader: an int8 qconv2d makes it, it is no graph output, and every node
 * reading it is in_set (the same segment; npu-report: placed on the NPU)
 * and an int8 qconv2d reading it as its input 0 alone. At batch > 1 the
 * segment must run image by image (npu_target.c does). */
bool dg_npu_cube_edge(const dg_ir *ir, uint32_t t,
                      bool (*in_set)(int node, void *user), void *user);
/* Whether task i of c may keep the weights the task before it loaded
 * (CNA WEIGHT_REUSE) when jobs meet the cores as `cores` says (backend.h):
 * the same block's weights and CBUF bank split, run right before it on
 * the same core (the same job, not the first of a core's range). */
bool dg_npu_task_reuses_weights(const npu_conv *c, int i, int cores);
/* b may be NULL when nothing was prepared. */
void dg_npu_conv_release(npu_conv *c, npu_backend *b);

/* The fp16 specifics (lower_f16.c) of an f16 conv2d node: f16 x, w, y,
 * constant weights (and bias), direct, no dilation. The NPU computes the
 * bias-free conv in fp16 with fp32 sums (as the simulator assumes); the
 * host adds the bias (one more fp16 rounding) and clamps relu/relu6
 * (exact). f32 convs are declined.
 *  - dg_npu_f16_node_ok: the node checks (false with why); marks c as fp16;
 *  - dg_npu_f16_pack_block: the weights of the channel block t begins, into
 *    c->wt at t->wt_off (mapped by the caller);
 *  - dg_npu_f16_scatter: t's output cube (c->out mapped) to its channels and
 *    rows of y, one NCHW f16 image, bias added and activation clamped. */
bool dg_npu_f16_node_ok(const dg_ir *ir, const dg_node *n, npu_conv *c,
                        char *why, size_t why_size);
void dg_npu_f16_pack_block(const npu_conv *c, const dg_ir *ir,
                           const npu_task *t);
void dg_npu_f16_scatter(npu_conv *c, const npu_task *t, uint16_t *y);

#endif
