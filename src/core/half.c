/* IEEE binary16 <-> binary32 conversions (round to nearest even), written
 * out so that they behave the same on every compiler and CPU. */
#include "half.h"

#include <string.h>

float dg_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (man << 13);
  } else if (exp) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man) { /* subnormal: normalise */
    int e = -1;
    do {
      e++;
      man <<= 1;
    } while (!(man & 0x400));
    bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
  } else {
    bits = sign;
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t dg_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  uint32_t ax = x & 0x7fffffff;
  if (ax >= 0x7f800000) /* inf or nan (keep a quiet nan) */
    return sign | 0x7c00 | (ax > 0x7f800000 ? 0x200 : 0);
  if (ax >= 0x477ff000) /* rounds to >= 65520: overflow */
    return sign | 0x7c00;
  if (ax < 0x38800000) { /* subnormal or zero in f16 */
    if (ax < 0x33000000)
      return sign;
    uint32_t man = (ax & 0x7fffff) | 0x800000;
    int shift = 126 - (int)(ax >> 23); /* value = man * 2^-shift ulps */
    uint32_t r = man >> shift, rem = man & ((1u << shift) - 1),
             half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1)))
      r++;
    return sign | (uint16_t)r;
  }
  uint32_t r = ax + 0xfff + ((ax >> 13) & 1); /* nearest even */
  return sign | (uint16_t)((r - 0x38000000) >> 13);
}

void dg_f32_to_f16_n(const float *src, uint16_t *dst, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    dst[i] = dg_f32_to_f16(src[i]);
}

void dg_f16_to_f32_n(const uint16_t *src, float *dst, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    dst[i] = dg_f16_to_f32(src[i]);
}

double dg_load_elem(dg_dtype t, const void *p, int64_t i) {
  switch (t) {
  case DG_DTYPE_F32:
    return ((const float *)p)[i];
  case DG_DTYPE_F16:
    return dg_f16_to_f32(((const uint16_t *)p)[i]);
  case DG_DTYPE_I8:
    return ((const int8_t *)p)[i];
  case DG_DTYPE_U8:
    return ((const uint8_t *)p)[i];
  case DG_DTYPE_I32:
    return ((const int32_t *)p)[i];
  /* The byte as it is: an output byte other than 0 or 1 is an error
   * verify should see; the references read inputs as "not zero". */
  case DG_DTYPE_BOOL:
    return ((const uint8_t *)p)[i];
  /* Exact up to 2^53; beyond, the nearest double (indices never get
   * there, and the references compute in double). */
  case DG_DTYPE_I64:
    return (double)((const int64_t *)p)[i];
  default:
    return 0;
  }
}
