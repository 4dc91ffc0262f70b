/* Scalar reference implementations for test_tvm_ffi.c, written from the
 * op definitions (and, for int8, from docs/numerics.md) rather than from
 * the library's code, so that the entry points are checked against an
 * independent answer. Float references accumulate in double. */
#ifndef DG_TEST_REF_OPS_H
#define DG_TEST_REF_OPS_H

#include <math.h>
#include <stdint.h>

typedef struct ref_conv {
  int N, C, H, W, O, KH, KW, OH, OW;
  int sh, sw, pt, pl, dh, dw, groups;
} ref_conv;

/* Output size of a window op along one axis (floor, or ceil_mode). */
static inline int ref_out(int in, int k, int s, int pa, int pb, int d,
                          int ceil_mode) {
  int span = d * (k - 1) + 1, num = in + pa + pb - span;
  int o = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
  /* ONNX/torch: the last window must start inside the input or left pad. */
  if (ceil_mode && (o - 1) * s >= in + pa)
    o--;
  return o;
}

/* Sum over one output element's window of x*w (or (x-zx)*(w-zw) with the
 * getters below), in double; padded positions contribute nothing. */
#define REF_CONV_LOOP(c, n, o, oh, ow, BODY)                                  \
  do {                                                                        \
    int cg_ = (c)->C / (c)->groups, og_ = (c)->O / (c)->groups;               \
    int g_ = (o) / og_;                                                       \
    for (int ci_ = 0; ci_ < cg_; ci_++)                                       \
      for (int kh_ = 0; kh_ < (c)->KH; kh_++)                                 \
        for (int kw_ = 0; kw_ < (c)->KW; kw_++) {                             \
          int ih_ = (oh) * (c)->sh - (c)->pt + kh_ * (c)->dh;                 \
          int iw_ = (ow) * (c)->sw - (c)->pl + kw_ * (c)->dw;                 \
          if (ih_ < 0 || ih_ >= (c)->H || iw_ < 0 || iw_ >= (c)->W)           \
            continue;                                                         \
          long xi = (((long)(n) * (c)->C + g_ * cg_ + ci_) * (c)->H + ih_) *  \
                        (c)->W + iw_;                                         \
          long wi = (((long)(o) * cg_ + ci_) * (c)->KH + kh_) * (c)->KW + kw_; \
          BODY;                                                               \
        }                                                                     \
  } while (0)

static inline void ref_conv2d(const ref_conv *c, const float *x,
                              const float *w, const float *b, int relu,
                              float *y) {
  for (int n = 0; n < c->N; n++)
    for (int o = 0; o < c->O; o++)
      for (int oh = 0; oh < c->OH; oh++)
        for (int ow = 0; ow < c->OW; ow++) {
          double s = b ? b[o] : 0;
          REF_CONV_LOOP(c, n, o, oh, ow, s += (double)x[xi] * w[wi]);
          if (relu && s < 0)
            s = 0;
          y[(((long)n * c->O + o) * c->OH + oh) * c->OW + ow] = (float)s;
        }
}

/* docs/numerics.md steps 1-5 for u8/i8 x and y, i8 w (per-tensor when
 * sw_count is 1, else per output channel), i32 bias. */
static inline void ref_qconv2d(const ref_conv *c, const void *x, int x_u8,
                               float sx, int zx, const int8_t *w,
                               const float *sw, int sw_count, int zw,
                               const int32_t *b, void *y, int y_u8, float sy,
                               int zy, int relu) {
  for (int n = 0; n < c->N; n++)
    for (int o = 0; o < c->O; o++) {
      float m = (sx * sw[sw_count == 1 ? 0 : o]); /* one fp32 multiply */
      m = m / sy;                                 /* one fp32 division */
      for (int oh = 0; oh < c->OH; oh++)
        for (int ow = 0; ow < c->OW; ow++) {
          int32_t acc = b ? b[o] : 0;
          REF_CONV_LOOP(c, n, o, oh, ow, {
            int xv = x_u8 ? ((const uint8_t *)x)[xi] : ((const int8_t *)x)[xi];
            acc += (xv - zx) * (w[wi] - zw);
          });
          float v = nearbyintf((float)acc * m); /* half to even */
          long q = (long)v + zy;
          long lo = y_u8 ? 0 : -128, hi = y_u8 ? 255 : 127;
          if (relu && q < zy)
            q = zy;
          q = q < lo ? lo : q > hi ? hi : q;
          long yi = (((long)n * c->O + o) * c->OH + oh) * c->OW + ow;
          if (y_u8)
            ((uint8_t *)y)[yi] = (uint8_t)q;
          else
            ((int8_t *)y)[yi] = (int8_t)q;
        }
    }
}

/* y[m,o] = sum_k x[m,k] w[o,k] + b[o]. */
static inline void ref_dense(int M, int K, int O, const float *x,
                             const float *w, const float *b, float *y) {
  for (int m = 0; m < M; m++)
    for (int o = 0; o < O; o++) {
      double s = b ? b[o] : 0;
      for (int k = 0; k < K; k++)
        s += (double)x[m * K + k] * w[o * K + k];
      y[m * O + o] = (float)s;
    }
}

/* a [Ba,M,K] x b [Bb,K,N] -> [max(Ba,Bb),M,N]; a batch of 1 broadcasts. */
static inline void ref_matmul(int Ba, int Bb, int M, int K, int N,
                              const float *a, const float *b, float *y) {
  int B = Ba > Bb ? Ba : Bb;
  for (int i = 0; i < B; i++)
    for (int m = 0; m < M; m++)
      for (int n = 0; n < N; n++) {
        double s = 0;
        for (int k = 0; k < K; k++)
          s += (double)a[((long)(Ba == 1 ? 0 : i) * M + m) * K + k] *
               b[((long)(Bb == 1 ? 0 : i) * K + k) * N + n];
        y[((long)i * M + m) * N + n] = (float)s;
      }
}

/* Max pooling of float or int8 ([N*C] planes of H x W); padding is -inf. */
static inline void ref_max_pool(int NC, int H, int W, int kh, int kw, int sh,
                                int sw, int pt, int pl, int OH, int OW,
                                const float *x, float *y) {
  for (int p = 0; p < NC; p++)
    for (int oh = 0; oh < OH; oh++)
      for (int ow = 0; ow < OW; ow++) {
        float m = -INFINITY;
        for (int i = 0; i < kh; i++)
          for (int j = 0; j < kw; j++) {
            int ih = oh * sh - pt + i, iw = ow * sw - pl + j;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W &&
                x[((long)p * H + ih) * W + iw] > m)
              m = x[((long)p * H + ih) * W + iw];
          }
        y[((long)p * OH + oh) * OW + ow] = m;
      }
}

/* Softmax over the middle axis of [outer, n, inner]. */
static inline void ref_softmax(int outer, int n, int inner, const float *x,
                               float *y) {
  for (int o = 0; o < outer; o++)
    for (int i = 0; i < inner; i++) {
      double mx = -INFINITY, s = 0;
      for (int k = 0; k < n; k++)
        mx = fmax(mx, x[((long)o * n + k) * inner + i]);
      for (int k = 0; k < n; k++)
        s += exp(x[((long)o * n + k) * inner + i] - mx);
      for (int k = 0; k < n; k++)
        y[((long)o * n + k) * inner + i] =
            (float)(exp(x[((long)o * n + k) * inner + i] - mx) / s);
    }
}

/* numerics.md's f32 tolerance: max abs error <= 1e-4 x max |reference|. */
static inline int ref_close(const float *got, const float *want, long n) {
  double mx = 0, err = 0;
  for (long i = 0; i < n; i++) {
    mx = fmax(mx, fabs(want[i]));
    err = fmax(err, fabs((double)got[i] - want[i]));
    if (got[i] != got[i])
      return 0;
  }
  return err <= 1e-4 * (mx > 0 ? mx : 1);
}

#endif
