/* CPU quantize and dequantize (ops/quant.c). */
#include "cpu_ops.h"

#include "core/half.h"
#include "ops/epilogue.h"
#include "ops/ops.h"
#include "ops/requant.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* No FMA contraction: meson passes -ffp-contract=off. */

static int64_t channel_of(const dg_tensor_desc *d, int64_t i, int64_t inner) {
  return d->quant.channel_count ? (i / inner) % d->dims[d->quant.axis] : 0;
}

static int64_t inner_of(const dg_tensor_desc *d) {
  int64_t inner = 1;
  for (int k = d->quant.axis + 1; d->quant.channel_count && k < d->rank; k++)
    inner *= d->dims[k];
  return inner;
}

#if defined(__x86_64__) || defined(__i386__)
#define T512 DG_CPU_T512
/* Per-tensor f32 -> i8/u8, 16 at a time: the same fp32 division and
 * round-half-even (roundscale in the current mode, like nearbyintf), then
 * the clamp done on the float before the zero point is added (exact: both
 * sides are small integers). Returns how many elements it did; it stops
 * at the first block holding a NaN, which the scalar loop then handles. */
T512 static int64_t quantize_512(const float *x, void *y, int64_t e,
                                 float scale, int32_t zero, int32_t lo,
                                 int32_t hi, bool is_signed) {
  __m512 s = _mm512_set1_ps(scale);
  __m512 flo = _mm512_set1_ps((float)(lo - zero));
  __m512 fhi = _mm512_set1_ps((float)(hi - zero));
  __m512i z = _mm512_set1_epi32(zero);
  int64_t i = 0;
  for (; i < e; i += 16) {
    __mmask16 m = e - i >= 16 ? 0xffff : (__mmask16)((1u << (e - i)) - 1);
    __m512 q = _mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), s);
    if (_mm512_cmp_ps_mask(q, q, _CMP_UNORD_Q) & m)
      break;
    q = _mm512_roundscale_ps(q, _MM_FROUND_CUR_DIRECTION | _MM_FROUND_NO_EXC);
    q = _mm512_min_ps(_mm512_max_ps(q, flo), fhi);
    __m512i v = _mm512_add_epi32(_mm512_cvtps_epi32(q), z);
    if (is_signed)
      _mm512_mask_cvtepi32_storeu_epi8((int8_t *)y + i, m, v);
    else
      _mm512_mask_cvtusepi32_storeu_epi8((uint8_t *)y + i, m, v);
  }
  return i < e ? i : e;
}
#endif

void dg_cpu_quantize_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                       void *out, void *scratch) {
  (void)pool, (void)scratch;
  const dg_tensor_desc *yd = out_desc(cn);
  int64_t lo, hi, inner = inner_of(yd);
  dg_dtype_int_range(yd->dtype, &lo, &hi);
  int64_t i = 0;
#if defined(__x86_64__) || defined(__i386__)
  if (!yd->quant.channel_count && yd->dtype != DG_DTYPE_I32 &&
      dg_cpu_simd_level() >= DG_CPU_SIMD_AVX512)
    i = quantize_512(in[0], out, dg_desc_elements(yd), yd->quant.scale,
                     yd->quant.zero_point, (int32_t)lo, (int32_t)hi,
                     yd->dtype == DG_DTYPE_I8);
#endif
  for (int64_t e = dg_desc_elements(yd); i < e; i++) {
    int64_t c = channel_of(yd, i, inner);
    float v = nearbyintf(((const float *)in[0])[i] / dg_quant_scale(yd, c));
    double q = (double)v + dg_quant_zero(yd, c);
    int64_t r = q < (double)lo ? lo : (q > (double)hi ? hi : (int64_t)q);
    if (yd->dtype == DG_DTYPE_I8)
      ((int8_t *)out)[i] = (int8_t)r;
    else if (yd->dtype == DG_DTYPE_U8)
      ((uint8_t *)out)[i] = (uint8_t)r;
    else
      ((int32_t *)out)[i] = (int32_t)r;
  }
}

void dg_cpu_dequantize_k(dg_cpu_node *cn, dg_cpu_pool *pool, void *const *in,
                         void *out, void *scratch) {
  (void)pool, (void)scratch;
  const dg_tensor_desc *xd = in_desc(cn, 0);
  int64_t inner = inner_of(xd);
  for (int64_t i = 0, e = dg_desc_elements(xd); i < e; i++) {
    int64_t c = channel_of(xd, i, inner);
    float q = (float)dg_load_elem(xd->dtype, in[0], i);
    ((float *)out)[i] =
        (q - (float)dg_quant_zero(xd, c)) * dg_quant_scale(xd, c);
  }
}
