/* The geometry blocks of reduce.cl's kernels (reduce_<fn> and
 * layer_norm), indices into the int array g as geom.h's are: shared by
 * the host (cl_reduce.c) and the kernels. E_COUNT and E_HIO (geom.h) keep
 * their places. */
#ifndef DG_CL_REDUCE_GEOM_H
#define DG_CL_REDUCE_GEOM_H

/* reduce: dg_reduce_shape's geometry, padded to 3 dims of 1, stride 0 */
#define R_COUNT 2   /* elements reduced into each output */
#define R_PERITEM 3 /* 1: one output per work-item (short reductions) */
#define R_KDIM 4    /* 3 entries each */
#define R_KSTR 7
#define R_RDIM 10
#define R_RSTR 13

/* layer_norm: rows of len; the row's dims padded to 6 with 1 in front,
 * the broadcast strides of scale and bias */
#define N_ROWS 2
#define N_LEN 3
#define N_SFULL 4 /* scale has len elements: indexed directly */
#define N_BFULL 5
#define N_BIAS 6
#define N_EPS 7  /* float bits */
#define N_DIMS 8 /* 6 entries each */
#define N_SS 14
#define N_SB 20

#endif
