/* Layout of the per-node geometry block: an int array the host fills at
 * compile time and the kernels read from constant memory. Shared, as
 * plain #defines, by the host (cl_nodes.c) and the OpenCL C source (the
 * embed step puts this file first in the program), so that both sides
 * agree on every index. Floats travel as their bit patterns. */
#ifndef DG_CL_GEOM_H
#define DG_CL_GEOM_H

#define DG_CL_GEOM_INTS 48

/* Element codes used by the kernels that take several dtypes. */
#define DT_F32 0
#define DT_F16 1
#define DT_I8 2
#define DT_U8 3
#define DT_I32 4
#define DT_BOOL 5
#define DT_I64 6

/* GEMM (f32 and int8): C[M,N] = A[M,K] * B[K,N] + bias, per z in the
 * third NDRange dimension (matmul batch or conv group). */
#define G_M 0
#define G_N 1
#define G_K 2
#define G_MODE 3 /* 0: plain strided B; 1: B gathered from a conv input */
#define G_SAM 4  /* A(m,k) at a[off + m*SAM + k*SAK] */
#define G_SAK 5
#define G_SBK 6 /* B(k,n) at b[off + k*SBK + n*SBN] (plain mode) */
#define G_SBN 7
#define G_SCM 8 /* C(m,n) at c[off + m*SCM + n*SCN] (plain mode) */
#define G_SCN 9
#define G_HIO 10      /* f16 storage for A, B, bias, C */
#define G_BIAS 11     /* 0 none, 1 per row (m), 2 per column (n) */
#define G_LO 12       /* f32: activation clamp (float bits); q8: int */
#define G_HI 13
/* conv mode */
#define G_C 14
#define G_H 15
#define G_W 16
#define G_OH 17
#define G_OW 18
#define G_KH 19
#define G_KW 20
#define G_SH 21
#define G_SW 22
#define G_DH 23
#define G_DW 24
#define G_PT 25
#define G_PL 26
#define G_CG 27
#define G_OG 28
#define G_O 29
/* int8 */
#define G_ZX 30      /* zero point of the activation operand */
#define G_WSIDE 31   /* weights (per-channel zero) are 0: A rows, 1: B cols */
#define G_PC 32      /* per-channel multipliers and weight zero points */
#define G_ZY 33
#define G_ASGN 34    /* A is i8 (else u8) */
#define G_BSGN 35
#define G_YSGN 36
#define G_NIMG 37    /* conv: images (direct conv uses it too) */
#define G_KSPLIT 38  /* gemm_f32: slices of K (0, 1: none), partials then
                        summed by gemm_splitk_f32 */
#define G_RES 39     /* conv mode, float: the res argument holds a residual
                        of y's shape, added after the bias */
#define G_POST 40    /* conv, float: the fused unary function (a
                        dg_unary_fn, 0 none), applied after the clamp */
#define G_POST_A 41  /* its parameters (float bits) */
#define G_POST_B 42

/* Elementwise and data-movement kernels. */
#define E_COUNT 0  /* output elements */
#define E_HIO 1    /* f16 storage */
#define E_LO 2     /* clip bounds (float bits) */
#define E_HI 3
#define E_RANK 4   /* binary: output rank, then dims, then a and b strides */
#define E_DIMS 5   /* 6 entries */
#define E_SA 11    /* 6 entries */
#define E_SB 17    /* 6 entries */
#define E_FN                                                                   \
  23               /* binary and unary: the dg_binary_fn (add is 1) or the     \
                    * dg_unary_fn; compare, arg_reduce: their fn */
#define E_SC 24    /* where: 6 strides of its third input */
#define E_CDT 30   /* compare, arg_reduce: input DT_*; where: element bytes */
#define E_LAST 31  /* arg_reduce: select_last_index */
/* softmax: rows = outer*inner, each of len elements, inner apart */
#define E_OUTER 5
#define E_LEN 6
#define E_INNER 7
#define E_LOGSM 8 /* 1: log_softmax, x - max - log(sum) */
/* quantize / dequantize */
#define E_QINNER 5 /* elements per channel step */
#define E_QDIM 6   /* channels (1: per-tensor) */
#define E_QDT 7    /* integer dtype code */
#define E_QLO 8
#define E_QHI 9
/* pooling (also global average pooling: kernel = H x W) */
#define P_NC 5
#define P_H 6
#define P_W 7
#define P_OH 8
#define P_OW 9
#define P_KH 10
#define P_KW 11
#define P_SH 12
#define P_SW 13
#define P_PT 14
#define P_PL 15
#define P_PB 16
#define P_PR 17
#define P_MAX 18
#define P_INCL 19
#define P_DT 20
#define P_DH 21 /* dilations (1 for global pooling) */
#define P_DW 22

/* Data movement (movement.cl, from cl_movement.c): the strided view of
 * src/ops/view.h per output axis, or gather's outer x len x inner taken
 * at count indices. */
#define V_COUNT 0 /* output elements */
#define V_RANK 1
#define V_MODE 2 /* dg_pad_mode for coordinates outside the extent */
#define V_FILL 3 /* the pad constant's element bits */
#define V_FILL_HI 4 /* ... their high word, for 8-byte elements */
#define V_DIMS 5 /* 6 entries each */
#define V_START 11
#define V_STEP 17
#define V_EXTENT 23
#define V_STRIDE 29
#define V_INNER 5 /* gather */
#define V_IDXN 6
#define V_LEN 7
/* The spatial family (spatial.cl). resize: E_COUNT outputs, planes of
 * R_H x R_W into R_OH x R_OW, R_LINEAR (0 nearest), R_DT the element
 * code; its taps (i0, i1, weight bits per output row, then column) are
 * the table argument. */
#define R_H 5
#define R_W 6
#define R_OH 7
#define R_OW 8
#define R_LINEAR 9
#define R_DT 10
/* batch_norm: E_COUNT elements (E_HIO: f16) of B_C channels, B_INNER
 * apart, epsilon B_EPS (float bits). */
#define B_C 5
#define B_INNER 6
#define B_EPS 7
/* cast: E_COUNT elements from element code C_FROM to C_TO. */
#define C_FROM 5
#define C_TO 6

#endif
