/* CPU cast (ops/cast.c) between f32, f16, i32, i64 and bool; f16 is
 * converted here, not by the f32 staging of the other float ops. */
#include "cpu_ops.h"

#include "core/half.h"
#include "ops/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* f32 -> i32 as the reference: toward zero, saturating, NaN to 0 (a
 * plain C conversion of an out-of-range float is undefined). */
static int32_t to_i32(float v) {
  if (v != v)
    return 0;
  if (v >= 2147483648.0f)
    return INT32_MAX;
  if (v < -2147483648.0f)
    return INT32_MIN;
  return (int32_t)v;
}

/* f32 -> i64 likewise (2^63 is the first float out of range). */
static int64_t to_i64(float v) {
  if (v != v)
    return 0;
  if (v >= 0x1p63f)
    return INT64_MAX;
  if (v < -0x1p63f)
    return INT64_MIN;
  return (int64_t)v;
}

static bool is_int(dg_dtype t) {
  return t == DG_DTYPE_I32 || t == DG_DTYPE_I64 || t == DG_DTYPE_BOOL;
}

/* Reads f16 itself (the node is not staged through f32: cpu_ops.c), so
 * that integers pass exactly: i32, i64 and bool travel as int64, floats
 * as float. Integers narrow to i32 saturating, as the reference does;
 * bool is "not zero" (NaN included). */
static void cast_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                   void *out, void *scratch) {
  (void)pool, (void)scratch;
  const dg_tensor_desc *xd = in_desc(cn, 0), *yd = out_desc(cn);
  int64_t e = dg_desc_elements(yd);
  if (xd->dtype == yd->dtype) {
    if (out != in[0])
      memcpy(out, in[0], dg_desc_bytes(yd));
    return;
  }
  const void *x = in[0];
  bool from_int = is_int(xd->dtype);
  for (int64_t i = 0; i < e; i++) {
    int64_t iv = 0;
    float fv = 0;
    switch (xd->dtype) {
    case DG_DTYPE_I32:
      iv = ((const int32_t *)x)[i];
      break;
    case DG_DTYPE_I64:
      iv = ((const int64_t *)x)[i];
      break;
    case DG_DTYPE_BOOL:
      iv = ((const uint8_t *)x)[i] != 0;
      break;
    case DG_DTYPE_F16:
      fv = dg_f16_to_f32(((const uint16_t *)x)[i]);
      break;
    default:
      fv = ((const float *)x)[i];
      break;
    }
    if (from_int) /* exact in f32 below 2^24; beyond, rounded once */
      fv = (float)iv;
    switch (yd->dtype) {
    case DG_DTYPE_I32:
      ((int32_t *)out)[i] = !from_int        ? to_i32(fv)
                            : iv > INT32_MAX ? INT32_MAX
                            : iv < INT32_MIN ? INT32_MIN
                                             : (int32_t)iv;
      break;
    case DG_DTYPE_I64:
      ((int64_t *)out)[i] = from_int ? iv : to_i64(fv);
      break;
    case DG_DTYPE_BOOL:
      ((uint8_t *)out)[i] = from_int ? iv != 0 : fv != 0;
      break;
    case DG_DTYPE_F16:
      ((uint16_t *)out)[i] = dg_f32_to_f16(fv);
      break;
    default:
      ((float *)out)[i] = fv;
      break;
    }
  }
}

bool dg_cpu_prep_cast(dg_cpu_node *cn, int threads) {
  (void)threads;
  cn->f16 = false;
  cn->run = cast_k;
  return true;
}
