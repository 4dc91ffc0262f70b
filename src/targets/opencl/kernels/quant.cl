/* quantize (f32 -> i8/u8/i32) and dequantize, per tensor or per channel;
 * scales and zero points come from host arrays with one entry per channel
 * (one entry when per-tensor). quantize divides once in fp32: the program
 * is built with -cl-fp32-correctly-rounded-divide-sqrt (the target
 * declines quantize on devices without it). */
#pragma OPENCL FP_CONTRACT OFF

kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
quantize_f32(const global float *x, global void *y, constant int *g,
             const global float *scale, const global int *zero) {
  const int i = get_global_id(0);
  if (i >= g[E_COUNT])
    return;
  const int c = (i / g[E_QINNER]) % g[E_QDIM];
  float q = x[i] / scale[c];
  q = rint(q);
  /* In 64-bit integers, as the CPU's double arithmetic: q is integral,
   * and below 2^62 in magnitude it converts exactly. */
  q = q < -0x1p62f ? -0x1p62f : (q > 0x1p62f ? 0x1p62f : q);
  long r = (long)q + zero[c];
  r = r < g[E_QLO] ? g[E_QLO] : (r > g[E_QHI] ? g[E_QHI] : r);
  switch (g[E_QDT]) {
  case DT_I8: ((global char *)y)[i] = (char)r; break;
  case DT_U8: ((global uchar *)y)[i] = (uchar)r; break;
  default: ((global int *)y)[i] = (int)r; break;
  }
}

kernel __attribute__((reqd_work_group_size(WG1, 1, 1))) void
dequantize_f32(const global void *x, global float *y, constant int *g,
               const global float *scale, const global int *zero) {
  const int i = get_global_id(0);
  if (i >= g[E_COUNT])
    return;
  const int c = (i / g[E_QINNER]) % g[E_QDIM];
  float q = ld_any(x, i, g[E_QDT]);
  float d = q - (float)zero[c];
  y[i] = d * scale[c];
}
