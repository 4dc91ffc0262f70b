/* Helpers shared by every kernel. The program is OpenCL C 1.2 and built
 * without -cl-mad-enable or fast-math options (see docs/numerics.md).
 *
 * f16 tensors are stored as half and computed in f32: vload_half and
 * vstore_half_rte are core OpenCL C, so f16 storage needs no cl_khr_fp16
 * (the CPU target does the same: f32 arithmetic, outputs rounded to
 * nearest even). Shapes arrive in a constant int block (geom.h), never as
 * build options, so one build serves every shape. */

#define WG1 64 /* work-group size of the one-dimensional kernels */

/* Compensated (Kahan) summation: *s is the running sum, *lost what its
 * rounding dropped, so the error does not grow with the count (a plain
 * f32 sum of 16M values is off by percents). Sound because the program
 * is built without fast-math options: nothing reassociates (t - s) - y. */
void ksum_add(float *s, float *lost, float v) {
  float y = v - *lost, t = *s + y;
  *lost = (t - *s) - y;
  *s = t;
}

float ld_f(const global void *p, int i, int hio) {
  return hio ? vload_half(i, (const global half *)p)
             : ((const global float *)p)[i];
}

void st_f(global void *p, int i, float v, int hio) {
  if (hio)
    vstore_half_rte(v, i, (global half *)p);
  else
    ((global float *)p)[i] = v;
}

/* Any element as float: exact for the 8-bit types, and for i32 it rounds
 * as the CPU's (float) conversion does. */
float ld_any(const global void *p, int i, int dt) {
  switch (dt) {
  case DT_F16: return vload_half(i, (const global half *)p);
  case DT_I8: return (float)((const global char *)p)[i];
  case DT_U8: return (float)((const global uchar *)p)[i];
  case DT_I32: return (float)((const global int *)p)[i];
  default: return ((const global float *)p)[i];
  }
}

/* Stores v, already integral and in range for integer dtypes. */
void st_any(global void *p, int i, float v, int dt) {
  switch (dt) {
  case DT_F16: vstore_half_rte(v, i, (global half *)p); break;
  case DT_I8: ((global char *)p)[i] = (char)(int)v; break;
  case DT_U8: ((global uchar *)p)[i] = (uchar)(int)v; break;
  case DT_I32: ((global int *)p)[i] = (int)v; break;
  default: ((global float *)p)[i] = v; break;
  }
}

int ld_q(const global uchar *p, int i, int is_signed) {
  uchar v = p[i];
  return is_signed ? (int)(char)v : (int)v;
}
