/* Integer references for ort_host's int8 models; see int8_ref.h.
 *
 * What ONNX Runtime's CPU EP computes for QLinearConv with u8 x and s8 w
 * on x86-64 (read in microsoft/onnxruntime, onnxruntime/core/...; no code
 * taken from it):
 *
 *  - providers/cpu/quantization/qlinearconv.cc: PrePack first tries the
 *    symmetric ConvSym kernels (s8 weights, all weight zero points 0);
 *    mlas/lib/convsym.cpp MlasConvSymPackWSize refuses them unless the
 *    input channels are a multiple of 4 and there are at least 16 output
 *    channels (a multiple of 8 on AVX2, of 4 on AVX-512); MLAS's symmetric
 *    QGEMM has no x86 dispatch. Otherwise the weights are packed for
 *    MlasGemm (U8S8) after ReorderFilter puts them in [kh][kw][c][oc]
 *    order; the input is transposed to NHWC and Im2col (NHWC) lays each
 *    output pixel's K values out in the same (kh, kw, c) order, per group,
 *    filling padding with the x zero point. One input and one output
 *    channel per group runs MlasConvDepthwise instead.
 *  - mlas/lib/qgemm.cpp, qgemm.h: the kernel multiplies the raw u8 values
 *    (no zero point subtracted, s8 weights kept signed) and adds the zero
 *    point terms afterwards in int32: - zx * (column sums of w)
 *    - zw * (row sums of x) + K * zx * zw.
 *  - mlas/lib/platform.cpp (MLAS_PLATFORM constructor) picks the kernel by
 *    cpuid: AVX2+FMA -> MlasGemmU8S8KernelAvx2; AVX-VNNI ->
 *    MlasGemmU8S8KernelAvxVnni; AVX512F (with ZMM state) + BW/DQ/VL ->
 *    MlasGemmU8S8KernelAvx512Core, overriding AVX-VNNI; + AVX512-VNNI ->
 *    MlasGemmU8S8KernelAvx512Vnni; AMX-TILE + AMX-INT8 (with tile state
 *    and the Linux XTILEDATA permission, MlasInitAMX) -> the AMX dispatch.
 *    Without AVX2 the Linux build keeps MlasGemmU8X8DispatchSse, whose
 *    kernel widens both operands to int16 (pmaddwd: exact); the SSE4.1
 *    U8S8 kernel is chosen in MSVC builds only. MlasPlatformU8S8Overflow
 *    and the session option session.x64quantprecision (off by default)
 *    exist because of the overflow described next.
 *  - mlas/lib/x86_64/QgemmU8S8KernelAvx2.S and QgemmU8S8KernelAvx512Core.S:
 *    K is packed in groups of 4 (MLAS_GEMM_U8S8_KERNEL_AVX2::PackedK, the
 *    tail padded with zeros in both A and B); vpmaddubsw multiplies the u8
 *    bytes of A by the s8 bytes of B and adds products k = 4j, 4j+1 and
 *    4j+2, 4j+3 into int16 lanes with signed saturation; vpmaddwd by 1 then
 *    adds the two int16 lanes into int32 exactly. The VNNI kernels
 *    (QgemmU8S8KernelAvxVnni.S, ...Avx512Vnni.S) use vpdpbusds, which sums
 *    the four products in int32; AMX's tdpbusd does too.
 *  - s8 activations (QLinearConv<int8_t>, s8 weights) take GemmS8S8Dispatch,
 *    on x86 MLAS's scalar default kernel (int32) unless AVX-VNNI-INT8 gives
 *    vpdpbssd; u8 x u8 (QLinearMatMul here) takes the U8U8 kernels, which
 *    widen to int16 and use vpmaddwd (MlasGemmU8U8KernelAvx2, ...Avx512Core)
 *    or vpdpbuud: neither path can saturate.
 *  - mlas/lib/quantize.cpp MlasRequantizeOutput: int32 + bias, to fp32,
 *    times the fp32 scale (qlinearconv.cc: x_scale * w_scale / y_scale),
 *    clamped, rounded to nearest even (cvtps2dq), plus the zero point:
 *    docs/numerics.md's rule.
 *
 * So for a pair of K values the AVX2 and AVX512 core kernels add
 * sat16(x[2i] * w[2i] + x[2i+1] * w[2i+1]) with raw u8 x; with x up to 255
 * and |w| up to 128 a pair reaches 65280, twice int16's range. */
#define _DEFAULT_SOURCE /* getline, syscall */
#include "int8_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

/* ---- loading ---- */

static bool parse_dtype(const char *s, qref_dtype *t) {
  if (!strcmp(s, "u8"))
    *t = QREF_U8;
  else if (!strcmp(s, "i8"))
    *t = QREF_I8;
  else
    return false;
  return true;
}

/* Reads up to max numbers from p (decimal or C99 hex floats); returns how
 * many, or -1 on junk. */
static int parse_numbers(const char *p, double *out, int max) {
  int n = 0;
  for (;;) {
    while (*p == ' ' || *p == '\t')
      p++;
    if (!*p || *p == '\n' || *p == '#')
      return n;
    char *end;
    double v = strtod(p, &end);
    if (end == p || n == max)
      return -1;
    out[n++] = v;
    p = end;
  }
}

static int32_t *to_i32(const double *v, int n) {
  int32_t *a = malloc(sizeof *a * (size_t)(n ? n : 1));
  for (int i = 0; a && i < n; i++)
    a[i] = (int32_t)v[i];
  return a;
}

bool qref_load(const char *path, qref_model *q, char *why, size_t len) {
  memset(q, 0, sizeof *q);
  q->strides[0] = q->strides[1] = q->dilations[0] = q->dilations[1] = 1;
  q->group = 1;
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(why, len, "cannot read %s", path);
    return false;
  }
  enum { MAXV = 1 << 16 };
  double *v = malloc(sizeof *v * MAXV);
  char *line = NULL;
  size_t cap = 0, nw_read = 0;
  bool good = v != NULL;
  while (good && getline(&line, &cap, f) > 0) {
    char key[32], s1[32];
    int used = 0;
    if (line[0] == '#' || sscanf(line, "%31s%n", key, &used) != 1)
      continue;
    const char *rest = line + used;
    if (!strcmp(key, "op")) {
      good = sscanf(rest, "%31s", q->op) == 1;
      continue;
    }
    if (!strcmp(key, "x") || !strcmp(key, "w") || !strcmp(key, "y")) {
      /* dtype, then (x, w) the dimensions */
      int u = 0;
      qref_dtype t = QREF_U8;
      good = sscanf(rest, "%31s%n", s1, &u) == 1 && parse_dtype(s1, &t);
      int n = good ? parse_numbers(rest + u, v, 4) : -1;
      good = good && n >= 0 && (key[0] == 'y' || n >= 2);
      int64_t *dims = key[0] == 'x' ? q->xdims : q->wdims;
      for (int i = 0; good && key[0] != 'y' && i < n; i++)
        dims[i] = (int64_t)v[i];
      if (key[0] == 'x')
        q->xtype = t, q->xrank = n;
      else if (key[0] == 'w')
        q->wtype = t, q->wrank = n;
      else
        q->ytype = t;
      continue;
    }
    int n = parse_numbers(rest, v, MAXV);
    if (n < 1) {
      good = false;
    } else if (!strcmp(key, "wdata")) {
      q->w = to_i32(v, n), nw_read = (size_t)n;
    } else if (!strcmp(key, "x_scale")) {
      q->xscale = (float)v[0];
    } else if (!strcmp(key, "y_scale")) {
      q->yscale = (float)v[0];
    } else if (!strcmp(key, "x_zero")) {
      q->xzero = (int32_t)v[0];
    } else if (!strcmp(key, "y_zero")) {
      q->yzero = (int32_t)v[0];
    } else if (!strcmp(key, "w_scale")) {
      q->wscale = malloc(sizeof *q->wscale * (size_t)n);
      for (int i = 0; q->wscale && i < n; i++)
        q->wscale[i] = (float)v[i];
      q->nwscale = n;
    } else if (!strcmp(key, "w_zero")) {
      q->wzero = to_i32(v, n), q->nwzero = n;
    } else if (!strcmp(key, "bias")) {
      q->bias = to_i32(v, n), q->nbias = n;
    } else if (!strcmp(key, "pads") && n == 4) {
      for (int i = 0; i < 4; i++)
        q->pads[i] = (int)v[i];
    } else if (!strcmp(key, "strides") && n == 2) {
      q->strides[0] = (int)v[0], q->strides[1] = (int)v[1];
    } else if (!strcmp(key, "dilations") && n == 2) {
      q->dilations[0] = (int)v[0], q->dilations[1] = (int)v[1];
    } else if (!strcmp(key, "group")) {
      q->group = (int)v[0];
    } else if (!strcmp(key, "must_saturate")) {
      q->must_saturate = v[0] != 0;
    } else {
      good = false;
    }
    if (!good)
      snprintf(why, len, "%s: bad line '%s'", path, key);
  }
  free(line);
  free(v);
  fclose(f);
  if (!good)
    return false;
  bool conv = !strcmp(q->op, "QLinearConv");
  size_t nw = 1;
  for (int i = 0; i < q->wrank; i++)
    nw *= (size_t)q->wdims[i];
  /* The weight's output channels: conv axis 0, matmul's last axis. */
  int64_t oc = q->wrank ? q->wdims[conv ? 0 : q->wrank - 1] : 0;
  if ((!conv && strcmp(q->op, "QLinearMatMul")) || !q->w || nw_read != nw ||
      !q->wscale || !q->wzero || (conv && (q->xrank != 4 || q->wrank != 4)) ||
      (!conv && q->wrank != 2) || q->group < 1 ||
      (q->nwscale != 1 && q->nwscale != oc) ||
      (q->nwzero != 1 && q->nwzero != oc) || (q->bias && q->nbias != oc) ||
      (conv && (q->xdims[1] != q->wdims[1] * q->group || oc % q->group)) ||
      (!conv && q->xdims[q->xrank - 1] != q->wdims[0])) {
    snprintf(why, len, "%s: incomplete or inconsistent model", path);
    qref_free(q);
    return false;
  }
  return true;
}

void qref_free(qref_model *q) {
  free(q->w);
  free(q->wscale);
  free(q->wzero);
  free(q->bias);
  memset(q, 0, sizeof *q);
}

/* ---- the GEMM view ----
 *
 * Both ops become rows of K activations against output channels of K
 * weights. For conv a row is one output pixel of one group, K in ORT's
 * (kh, kw, c) order (see above: the exact result does not depend on it, the
 * pairs of the saturating one do). */

typedef struct gemm_view {
  bool conv;
  int64_t rows, oc, k;      /* rows per group (conv: N * OH * OW) */
  int64_t groups, oc_group; /* conv only; matmul: 1 group, all channels */
  int64_t oh, ow;
} gemm_view;

static bool is_conv(const qref_model *q) {
  return !strcmp(q->op, "QLinearConv");
}

static void view_of(const qref_model *q, gemm_view *g) {
  memset(g, 0, sizeof *g);
  g->conv = is_conv(q);
  if (g->conv) {
    const int64_t *x = q->xdims, *w = q->wdims;
    int64_t kh = (w[2] - 1) * q->dilations[0] + 1;
    int64_t kw = (w[3] - 1) * q->dilations[1] + 1;
    g->oh = (x[2] + q->pads[0] + q->pads[2] - kh) / q->strides[0] + 1;
    g->ow = (x[3] + q->pads[1] + q->pads[3] - kw) / q->strides[1] + 1;
    g->rows = x[0] * g->oh * g->ow;
    g->oc = w[0];
    g->groups = q->group;
    g->oc_group = w[0] / q->group;
    g->k = w[1] * w[2] * w[3];
  } else {
    g->rows = 1;
    for (int i = 0; i < q->xrank - 1; i++)
      g->rows *= q->xdims[i];
    g->oc = g->oc_group = q->wdims[1];
    g->groups = 1;
    g->k = q->wdims[0];
  }
}

size_t qref_output_count(const qref_model *q) {
  gemm_view g;
  view_of(q, &g);
  return (size_t)(g.rows * g.oc);
}

static int32_t load_x(const qref_model *q, const void *x, size_t i) {
  return q->xtype == QREF_U8 ? ((const uint8_t *)x)[i] : ((const int8_t *)x)[i];
}

/* Row r of group gi into a[K]; returns the output index of channel 0 of the
 * group (channel o is at that + o * stride, *stride set). */
static size_t gather_row(const qref_model *q, const gemm_view *g, const void *x,
                         int64_t gi, int64_t r, int32_t *a, size_t *stride) {
  if (!g->conv) {
    for (int64_t k = 0; k < g->k; k++)
      a[k] = load_x(q, x, (size_t)(r * g->k + k));
    *stride = 1;
    return (size_t)(r * g->oc);
  }
  const int64_t *xd = q->xdims, *wd = q->wdims;
  int64_t c_group = wd[1];
  int64_t n = r / (g->oh * g->ow), p = r % (g->oh * g->ow);
  int64_t oy = p / g->ow, ox = p % g->ow;
  int64_t k = 0;
  for (int64_t ky = 0; ky < wd[2]; ky++)
    for (int64_t kx = 0; kx < wd[3]; kx++) {
      int64_t iy = oy * q->strides[0] - q->pads[0] + ky * q->dilations[0];
      int64_t ix = ox * q->strides[1] - q->pads[1] + kx * q->dilations[1];
      bool inside = iy >= 0 && iy < xd[2] && ix >= 0 && ix < xd[3];
      for (int64_t c = 0; c < c_group; c++, k++) {
        int64_t ch = gi * c_group + c;
        a[k] =
            inside
                ? load_x(q, x,
                         (size_t)(((n * xd[1] + ch) * xd[2] + iy) * xd[3] + ix))
                : q->xzero; /* Im2col's padding value */
      }
    }
  *stride = (size_t)(g->oh * g->ow);
  return (size_t)((n * g->oc + gi * g->oc_group) * g->oh * g->ow + p);
}

/* Weights of output channel oc in the row's K order. */
static void gather_weights(const qref_model *q, const gemm_view *g, int64_t oc,
                           int32_t *b) {
  if (!g->conv) {
    for (int64_t k = 0; k < g->k; k++)
      b[k] = q->w[k * g->oc + oc];
    return;
  }
  const int64_t *wd = q->wdims;
  int64_t k = 0;
  for (int64_t ky = 0; ky < wd[2]; ky++)
    for (int64_t kx = 0; kx < wd[3]; kx++)
      for (int64_t c = 0; c < wd[1]; c++)
        b[k++] = q->w[((oc * wd[1] + c) * wd[2] + ky) * wd[3] + kx];
}

/* docs/numerics.md steps 2-4 (MlasRequantizeOutput does the same). */
static int32_t requantize(const qref_model *q, int64_t oc, int64_t acc) {
  float m = q->xscale * q->wscale[q->nwscale > 1 ? oc : 0];
  m = m / q->yscale;
  int32_t total = (int32_t)acc + (q->bias ? q->bias[oc] : 0);
  float v = nearbyintf((float)total * m);
  int32_t lo = q->ytype == QREF_U8 ? 0 : -128;
  int32_t hi = q->ytype == QREF_U8 ? 255 : 127;
  /* Clamping before the int conversion keeps it defined; the bounds are
   * integers, so it equals saturating afterwards. */
  if (v < (float)(lo - q->yzero))
    v = (float)(lo - q->yzero);
  if (v > (float)(hi - q->yzero))
    v = (float)(hi - q->yzero);
  return (int32_t)v + q->yzero;
}

/* Why QREF_U8S8_PAIRS16 does not model ORT's kernel for q, or NULL. */
static const char *pairs16_refusal(const qref_model *q, const gemm_view *g) {
  if (q->xtype != QREF_U8 || q->wtype != QREF_I8)
    return "ORT runs no U8S8 kernel for these types";
  if (!g->conv)
    return "no prediction for QLinearMatMul (the manifest has no u8 x s8 "
           "one to validate it on)";
  for (int i = 0; i < q->nwzero; i++)
    if (q->wzero[i])
      return "prediction modelled for weight zero point 0 only";
  if (q->xzero == 0)
    return "x zero point 0 may take MLAS's GEMV kernel, not modelled";
  int64_t cin = q->wdims[1];
  if (q->group > 1 && cin == 1 && g->oc_group == 1)
    return "depthwise: MlasConvDepthwise runs, not modelled";
  if (q->group == 1 && cin % 4 == 0 && g->oc >= 16 && g->oc % 4 == 0)
    return "shape qualifies for MLAS's ConvSym kernels, not modelled";
  return NULL;
}

bool qref_compute(const qref_model *q, const void *x, qref_mode mode, void *y,
                  qref_stats *st, char *why, size_t len) {
  gemm_view g;
  view_of(q, &g);
  memset(st, 0, sizeof *st);
  const char *refusal =
      mode == QREF_U8S8_PAIRS16 ? pairs16_refusal(q, &g) : NULL;
  if (refusal) {
    snprintf(why, len, "%s", refusal);
    return false;
  }
  int32_t *a = malloc(sizeof *a * (size_t)g.k);
  int32_t *b = malloc(sizeof *b * (size_t)(g.k * g.oc));
  if (!a || !b) {
    free(a);
    free(b);
    snprintf(why, len, "out of memory");
    return false;
  }
  for (int64_t oc = 0; oc < g.oc; oc++)
    gather_weights(q, &g, oc, b + oc * g.k);
  bool fits = true;
  for (int64_t gi = 0; gi < g.groups; gi++)
    for (int64_t r = 0; r < g.rows; r++) {
      size_t stride;
      size_t base = gather_row(q, &g, x, gi, r, a, &stride);
      for (int64_t o = 0; o < g.oc_group; o++) {
        int64_t oc = gi * g.oc_group + o;
        const int32_t *w = b + oc * g.k;
        int32_t zw = q->wzero[q->nwzero > 1 ? oc : 0];
        int64_t acc = 0;
        if (mode == QREF_EXACT) {
          for (int64_t k = 0; k < g.k; k++)
            acc += (int64_t)(a[k] - q->xzero) * (w[k] - zw);
        } else {
          /* Raw products, adjacent pairs saturated to int16 (vpmaddubsw),
           * pair sums added exactly; then the zero point term in int32
           * (zw is 0 here). An odd K's last product pairs with the zero
           * padding and cannot saturate (255 * 128 < 32768). */
          int64_t wsum = 0;
          for (int64_t k = 0; k < g.k; k += 2) {
            int32_t p = a[k] * w[k] + (k + 1 < g.k ? a[k + 1] * w[k + 1] : 0);
            st->pairs++;
            if (p > INT16_MAX || p < INT16_MIN) {
              st->saturated_pairs++;
              p = p > INT16_MAX ? INT16_MAX : INT16_MIN;
            }
            acc += p;
            wsum += w[k] + (k + 1 < g.k ? w[k + 1] : 0);
          }
          acc -= (int64_t)q->xzero * wsum;
        }
        fits = fits && acc >= INT32_MIN && acc <= INT32_MAX;
        int32_t v = requantize(q, oc, acc);
        size_t at = base + (size_t)o * stride;
        if (q->ytype == QREF_U8)
          ((uint8_t *)y)[at] = (uint8_t)v;
        else
          ((int8_t *)y)[at] = (int8_t)v;
      }
    }
  free(a);
  free(b);
  if (!fits)
    snprintf(why, len, "an accumulator exceeds int32");
  return fits;
}

/* ---- ORT's kernel choice ---- */

#if defined(__x86_64__)
static uint64_t xgetbv0(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t)hi << 32 | lo;
}

/* MlasInitAMX's test: the kernel grants the process AMX tile data. ORT
 * has asked already (it loaded first, in this process), so asking again
 * gives its answer. */
static bool amx_permitted(void) {
#if defined(__linux__)
  unsigned long mask = 0;
  return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */,
                 18 /* XFEATURE_XTILEDATA */) == 0 &&
         syscall(SYS_arch_prctl, 0x1022 /* ARCH_GET_XCOMP_PERM */, &mask) ==
             0 &&
         (mask & (3ul << 17)) != 0;
#else
  return true;
#endif
}
#endif

ort_u8s8_kernel ort_u8s8_kernel_here(void) {
#if defined(__x86_64__)
  /* The same tests, in the same order, as MLAS_PLATFORM's constructor. */
  unsigned a1, b1, c1, d1, a7 = 0, b7 = 0, c7 = 0, d7 = 0;
  unsigned a71 = 0, b71, c71, d71;
  if (!__get_cpuid(1, &a1, &b1, &c1, &d1))
    return (ort_u8s8_kernel){"SSE (no cpuid leaf 1)", false};
  __get_cpuid_count(7, 0, &a7, &b7, &c7, &d7);
  __get_cpuid_count(7, 1, &a71, &b71, &c71, &d71);
  if ((c1 & 0x18000000) != 0x18000000) /* AVX and OSXSAVE */
    return (ort_u8s8_kernel){"SSE2 (int16 pmaddwd)", false};
  uint64_t xcr0 = xgetbv0();
  if ((xcr0 & 0x6) != 0x6 || !(c1 & 0x1000) || !(b7 & 0x20)) /* FMA, AVX2 */
    return (ort_u8s8_kernel){"SSE2 (int16 pmaddwd)", false};
  ort_u8s8_kernel k = {"AVX2 (vpmaddubsw)", true};
  if (a71 & 0x10)
    k = (ort_u8s8_kernel){"AVX-VNNI (vpdpbusds)", false};
  if ((b7 & 0x10000) && (xcr0 & 0xE0) == 0xE0 &&
      (b7 & 0xC0020000) == 0xC0020000) { /* AVX512F, ZMM state, BW/DQ/VL */
    k = (ort_u8s8_kernel){"AVX512 core (vpmaddubsw)", true};
    if (c7 & 0x800)
      k = (ort_u8s8_kernel){"AVX512-VNNI (vpdpbusds)", false};
  }
  if ((d7 & (1u << 24)) && (d7 & (1u << 25)) &&
      (xcr0 & (3ull << 17)) == (3ull << 17) && amx_permitted())
    k = (ort_u8s8_kernel){"AMX (tdpbusd)", false};
  return k;
#else
  /* Only x86-64's kernels were examined; elsewhere expect exactness. */
  return (ort_u8s8_kernel){"non-x86 (not examined)", false};
#endif
}
