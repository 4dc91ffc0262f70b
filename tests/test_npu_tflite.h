/* A minimal, bounds-checked reader for .tflite flatbuffers: just enough
 * to pull a conv's tensors (shape, type, data, per-tensor quantisation)
 * for the NPU packer tests. Every offset is checked against the file, so
 * a truncated or corrupt file gives an error, never a crash. */
#ifndef DG_TEST_NPU_TFLITE_H
#define DG_TEST_NPU_TFLITE_H

#include <stddef.h>
#include <stdint.h>

typedef struct tfl_tensor {
  int rank;
  int32_t dims[6];
  int type;              /* TensorType: 2 int32, 3 uint8, 9 int8, ... */
  const uint8_t *data;   /* NULL for non-constant tensors */
  size_t size;
  float scale;
  int64_t zero_point;
} tfl_tensor;

typedef struct tfl_conv {
  int builtin;           /* 3 CONV_2D, 4 DEPTHWISE_CONV_2D */
  int padding;           /* 0 SAME, 1 VALID */
  int stride_w, stride_h;
  tfl_tensor input, weights, bias, output;
} tfl_conv;

/* Finds the first CONV_2D or DEPTHWISE_CONV_2D of subgraph 0. Returns 0,
 * or -1 with err set. */
int tfl_read_conv(const uint8_t *buf, size_t size, tfl_conv *conv, char *err,
                  size_t err_size);

#endif
