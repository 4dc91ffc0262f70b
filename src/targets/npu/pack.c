/* Host-side layouts (see pack.h). */
#include "pack.h"

#include <string.h>

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

size_t dg_npu_feature_bytes(int c, int h, int w, int elem) {
  int c2 = NPU_ATOM / elem;
  return (size_t)((c + c2 - 1) / c2) * (size_t)h * (size_t)w * NPU_ATOM;
}

/* One loop for both element sizes: index of (ch, y, x) in the cube. */
static size_t cube_index(int ch, int y, int x, int h, int w, int c2) {
  return (((size_t)(ch / c2) * (size_t)h + (size_t)y) * (size_t)w + (size_t)x) *
             (size_t)c2 +
         (size_t)(ch % c2);
}

/* dst[j * ds + i] = src[i * ss + j] for i < rows, j < cols (at most 16
 * each): one tile of the transposes between a cube's atoms (16 channels
 * of one pixel) and planes (pixels of one channel). The whole 16 x 16
 * tiles on the board's NEON as four rounds of transposes within register
 * pairs (bytes, halves, words, doublewords), 0.4 instructions a byte; the
 * rest byte by byte. */
static void tile_t(const uint8_t *src, size_t ss, uint8_t *dst, size_t ds,
                   int rows, int cols) {
#if defined(__aarch64__)
  if (rows == 16 && cols == 16) {
    uint8x16_t r[16], a[16];
    uint16x8_t b[16];
    uint32x4_t c[16];
    for (int i = 0; i < 16; i++)
      r[i] = vld1q_u8(src + (size_t)i * ss);
    for (int i = 0; i < 16; i += 2) {
      a[i] = vtrn1q_u8(r[i], r[i + 1]);
      a[i + 1] = vtrn2q_u8(r[i], r[i + 1]);
    }
    for (int k = 0; k < 16; k += 4)
      for (int m = 0; m < 2; m++) {
        uint16x8_t x = vreinterpretq_u16_u8(a[k + m]),
                   y = vreinterpretq_u16_u8(a[k + m + 2]);
        b[k + m] = vtrn1q_u16(x, y);
        b[k + m + 2] = vtrn2q_u16(x, y);
      }
    for (int k = 0; k < 16; k += 8)
      for (int m = 0; m < 4; m++) {
        uint32x4_t x = vreinterpretq_u32_u16(b[k + m]),
                   y = vreinterpretq_u32_u16(b[k + m + 4]);
        c[k + m] = vtrn1q_u32(x, y);
        c[k + m + 4] = vtrn2q_u32(x, y);
      }
    for (int m = 0; m < 8; m++) { /* column m, then column m + 8 */
      uint64x2_t x = vreinterpretq_u64_u32(c[m]),
                 y = vreinterpretq_u64_u32(c[m + 8]);
      vst1q_u8(dst + (size_t)m * ds, vreinterpretq_u8_u64(vtrn1q_u64(x, y)));
      vst1q_u8(dst + (size_t)(m + 8) * ds,
               vreinterpretq_u8_u64(vtrn2q_u64(x, y)));
    }
    return;
  }
#endif
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++)
      dst[(size_t)j * ds + i] = src[(size_t)i * ss + j];
}

void dg_npu_pack_feature_i8(const int8_t *chw, int c, int h, int w, int8_t pad,
                            uint8_t *cube) {
  dg_npu_pack_rows_i8(chw, c, h, w, 0, h, pad, cube);
}

/* By groups of 16 channels and rows: each row's atoms are tiles of the
 * group's 16 planes transposed (the index arithmetic per byte was most of
 * the conversion's time). */
void dg_npu_pack_rows_i8(const int8_t *chw, int c, int plane_h, int w, int y0,
                         int h, int8_t pad, uint8_t *cube) {
  size_t plane = (size_t)plane_h * (size_t)w;
  for (int g = 0; g < (c + 15) / 16; g++) {
    int n = c - 16 * g < 16 ? c - 16 * g : 16;
    for (int y = 0; y < h; y++) {
      uint8_t *row = cube + ((size_t)g * h + (size_t)y) * (size_t)w * 16;
      const uint8_t *src =
          (const uint8_t *)chw + (size_t)16 * g * plane + (size_t)(y0 + y) * w;
      for (int x = 0; n < 16 && x < w; x++) /* the pad channels */
        memset(row + (size_t)x * 16 + n, (uint8_t)pad, (size_t)(16 - n));
      for (int x0 = 0; x0 < w; x0 += 16)
        tile_t(src + x0, plane, row + (size_t)x0 * 16, 16, n,
               w - x0 < 16 ? w - x0 : 16);
    }
  }
}

void dg_npu_unpack_feature_i8(const uint8_t *cube, int c, int h, int w,
                              int8_t *chw) {
  size_t plane = (size_t)h * (size_t)w;
  for (int g = 0; g < (c + 15) / 16; g++) {
    int n = c - 16 * g < 16 ? c - 16 * g : 16;
    for (int y = 0; y < h; y++) {
      const uint8_t *row = cube + ((size_t)g * h + (size_t)y) * (size_t)w * 16;
      uint8_t *dst = (uint8_t *)chw + (size_t)16 * g * plane + (size_t)y * w;
      for (int x0 = 0; x0 < w; x0 += 16)
        tile_t(row + (size_t)x0 * 16, 16, dst + x0, plane,
               w - x0 < 16 ? w - x0 : 16, n);
    }
  }
}

void dg_npu_pack_feature_f16(const uint16_t *chw, int c, int h, int w,
                             uint16_t pad, uint8_t *cube) {
  dg_npu_pack_rows_f16(chw, c, h, w, 0, h, pad, cube);
}

void dg_npu_pack_rows_f16(const uint16_t *chw, int c, int plane_h, int w,
                          int y0, int h, uint16_t pad, uint8_t *cube) {
  int cp = npu_align(c, 8);
  for (int ch = 0; ch < cp; ch++)
    for (int y = 0; y < h; y++) {
      const uint16_t *src =
          ch < c ? chw + ((size_t)ch * plane_h + (size_t)(y0 + y)) * w : NULL;
      for (int x = 0; x < w; x++) {
        uint16_t v = src ? src[x] : pad;
        size_t i = cube_index(ch, y, x, h, w, 8) * 2;
        cube[i] = (uint8_t)v; /* the NPU reads little-endian halves */
        cube[i + 1] = (uint8_t)(v >> 8);
      }
    }
}

void dg_npu_unpack_feature_f16(const uint8_t *cube, int c, int h, int w,
                               uint16_t *chw) {
  for (int ch = 0; ch < c; ch++)
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        size_t i = cube_index(ch, y, x, h, w, 8) * 2;
        chw[((size_t)ch * h + y) * w + x] =
            (uint16_t)(cube[i] | cube[i + 1] << 8);
      }
}

size_t dg_npu_weight_bytes(int o, int c, int kh, int kw, bool dw) {
  return (size_t)kh * kw * npu_channels16(c) * npu_kernels(o, dw);
}

size_t dg_npu_weight_buffer_bytes(int o, int c, int kh, int kw, bool dw) {
  return (size_t)kh * kw * npu_kernels(o, dw) * npu_align(c < 16 ? 16 : c, 32) *
         2;
}

void dg_npu_pack_weights_i8(const int8_t *w, int o, int c, int kh, int kw,
                            bool dw, int8_t w_pad, uint8_t *out) {
  size_t total = dg_npu_weight_buffer_bytes(o, c, kh, kw, dw), n = 0;
  memset(out, 0, total);
  int kernels = npu_kernels(o, dw), c16 = npu_channels16(c);
  int group = dw ? 64 : 32;
  for (int k1 = 0; k1 < kernels; k1 += 32) {
    int kn = kernels - k1 < 32 ? kernels - k1 : 32;
    for (int c1 = 0; c1 < c16; c1 += group) {
      int cn = c16 - c1 < group ? c16 - c1 : group;
      for (int y = 0; y < kh; y++)
        for (int x = 0; x < kw; x++)
          for (int k = k1; k < k1 + kn; k++)
            for (int ch = c1; ch < c1 + cn; ch++) {
              int8_t v;
              if (dw)
                v = ch < c ? w[((size_t)ch * kh + y) * kw + x] : w_pad;
              else if (k >= o)
                v = 0; /* the kernel that pads to an even count */
              else
                v = ch < c ? w[(((size_t)k * c + ch) * kh + y) * kw + x]
                           : w_pad;
              out[n++] = (uint8_t)v;
            }
    }
  }
}

bool dg_npu_pack_bias(const int32_t *bias, const int8_t *w, int o, int c,
                      int kh, int kw, bool dw, int32_t w_zp, int32_t x_zp,
                      int truncate_bits, int32_t *out) {
  bool ok = true;
  int per = dw ? 1 : c; /* input channels feeding one output channel */
  for (int k = 0; k < o; k++) {
    int64_t corr = 0;
    for (int i = 0; i < per * kh * kw; i++)
      corr += (int64_t)(w[(size_t)k * per * kh * kw + i] - w_zp) * x_zp;
    int64_t v = (bias ? bias[k] : 0) - corr;
    v /= (int64_t)1 << truncate_bits; /* C division, as Mesa */
    if (v < INT32_MIN || v > INT32_MAX)
      ok = false;
    out[k] = (int32_t)v;
  }
  return ok;
}

void dg_npu_pack_bs_groups(const int32_t *bias, const int16_t *mul, int o,
                           int o_padded, uint8_t *out) {
  memset(out, 0, (size_t)(o_padded / 8) * NPU_BS_GROUP_BYTES);
  for (int c = 0; c < o; c++) {
    uint8_t *g = out + (size_t)(c / 8) * NPU_BS_GROUP_BYTES;
    uint32_t a = (uint32_t)bias[c];
    uint16_t m = (uint16_t)mul[c];
    for (int b = 0; b < 4; b++) /* little-endian, as the NPU reads */
      g[4 * (c % 8) + b] = (uint8_t)(a >> (8 * b));
    g[48 + 2 * (c % 8)] = (uint8_t)m;
    g[48 + 2 * (c % 8) + 1] = (uint8_t)(m >> 8);
  }
}

size_t dg_npu_weight_bytes_f16(int o, int c, int kh, int kw) {
  return (size_t)kh * kw * npu_channels_f16(c) * o * 2;
}

void dg_npu_pack_weights_f16(const uint16_t *w, int o, int c, int kh, int kw,
                             uint8_t *out) {
  int c8 = npu_channels_f16(c);
  size_t n = 0;
  for (int k1 = 0; k1 < o; k1 += 16) {
    int kn = o - k1 < 16 ? o - k1 : 16;
    for (int c1 = 0; c1 < c8; c1 += 32) {
      int cn = c8 - c1 < 32 ? c8 - c1 : 32;
      for (int y = 0; y < kh; y++)
        for (int x = 0; x < kw; x++)
          for (int k = k1; k < k1 + kn; k++)
            for (int ch = c1; ch < c1 + cn; ch++) {
              uint16_t v =
                  ch < c ? w[(((size_t)k * c + ch) * kh + y) * kw + x] : 0;
              out[n++] = (uint8_t)v;
              out[n++] = (uint8_t)(v >> 8);
            }
    }
  }
}
