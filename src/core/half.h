/* f16 conversions and reading any dtype's element as a double (half.c):
 * used by the reference kernels, every target and the front ends. */
#ifndef DG_CORE_HALF_H
#define DG_CORE_HALF_H

#include "graph.h"

#include <stdint.h>

float dg_f16_to_f32(uint16_t h);
uint16_t dg_f32_to_f16(float f);
/* n elements each way (nearest even to f16). */
void dg_f32_to_f16_n(const float *src, uint16_t *dst, int64_t n);
void dg_f16_to_f32_n(const uint16_t *src, float *dst, int64_t n);

/* Reads element i of a tensor buffer as double. */
double dg_load_elem(dg_dtype t, const void *p, int64_t i);

#endif
