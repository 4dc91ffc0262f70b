/* One int8 or fp16 conv task's shape as the NPU tests build it (gen.h's
 * npu_conv_desc): every other field zero for the caller to set. */
#ifndef TEST_NPU_DESC_H
#define TEST_NPU_DESC_H

#include "targets/npu/gen.h"

#include <stdint.h>

static inline npu_conv_desc npu_desc_conv(int C, int H, int W, int O, int OH,
                                          int OW, int K, int S, int pad_top,
                                          int pad_left) {
  return (npu_conv_desc){.in_c = C,
                         .in_h = H,
                         .in_w = W,
                         .out_c = O,
                         .out_h = OH,
                         .out_w = OW,
                         .k_h = K,
                         .k_w = K,
                         .stride_y = S,
                         .stride_x = S,
                         .pad_top = pad_top,
                         .pad_left = pad_left};
}

/* The contract's int32 accumulator of output (o, oy, ox) of a conv (the
 * reference the generator + simulator tests compare with): bias plus the
 * sum over the window of (x - zx) (w - zw); a padded tap contributes
 * nothing (x is the zero point there). x: C x H x W int8; w: OIHW (per
 * input channel for a direct conv, one channel depthwise). */
static inline int64_t npu_ref_acc(const int8_t *x, const int8_t *w,
                                  int32_t bias, int C, int H, int W, int K,
                                  int S, int pt, int pl, bool dw, int32_t zx,
                                  int32_t zw, int o, int oy, int ox) {
  int per = dw ? 1 : C;
  int64_t acc = bias;
  for (int ci = 0; ci < per; ci++)
    for (int ky = 0; ky < K; ky++)
      for (int kx = 0; kx < K; kx++) {
        int iy = oy * S + ky - pt, ix = ox * S + kx - pl;
        if (iy < 0 || iy >= H || ix < 0 || ix >= W)
          continue;
        int c = dw ? o : ci;
        acc += (int64_t)(x[((size_t)c * H + iy) * W + ix] - zx) *
               (w[(((size_t)o * per + ci) * K + ky) * K + kx] - zw);
      }
  return acc;
}

#endif
