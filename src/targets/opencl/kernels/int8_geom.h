/* The geometry blocks of int8.cl's kernels, indices into the int array g
 * as geom.h's are: shared by the host (cl_int8.c) and the kernels.
 * qbinary keeps geom.h's broadcast fields (E_COUNT, E_RANK, E_DIMS, E_SA,
 * E_SB; E_SC stays 0) and qavg_pool2d its pooling fields (P_*), so the
 * fields below start after all of those. */
#ifndef DG_CL_INT8_GEOM_H
#define DG_CL_INT8_GEOM_H

#define Q_ASGN 32 /* a (lookup, pooling: x) is i8, else u8 */
#define Q_BSGN 33 /* b is i8 */
#define Q_ZA 34   /* zero point of a (pooling: x) */
#define Q_ZB 35
#define Q_ZY 36
#define Q_LO 37 /* the output dtype's range */
#define Q_HI 38
#define Q_MUL 39 /* qbinary: 1 mul, 0 add or sub */
#define Q_FA 40  /* qbinary's host factors (float bits) */
#define Q_FB 41

#endif
