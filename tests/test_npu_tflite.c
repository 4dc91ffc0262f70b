/* Minimal .tflite reader (see test_npu_tflite.h). Flatbuffer rules: a
 * table starts with an int32 offset back to its vtable; the vtable holds
 * uint16 sizes then one uint16 offset per field (0: absent); reference
 * fields hold a uint32 offset forward from the field; vectors are a
 * uint32 length followed by the elements. */
#include "test_npu_tflite.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct fb {
  const uint8_t *p;
  size_t n;
  bool bad;
} fb;

static bool in_range(fb *f, size_t at, size_t len) {
  if (at > f->n || len > f->n - at)
    f->bad = true;
  return !f->bad;
}
static uint32_t u32(fb *f, size_t at) {
  if (!in_range(f, at, 4))
    return 0;
  return (uint32_t)f->p[at] | (uint32_t)f->p[at + 1] << 8 |
         (uint32_t)f->p[at + 2] << 16 | (uint32_t)f->p[at + 3] << 24;
}
static uint16_t u16(fb *f, size_t at) {
  if (!in_range(f, at, 2))
    return 0;
  return (uint16_t)(f->p[at] | f->p[at + 1] << 8);
}

/* Position of field id of the table at t, or 0 when absent. */
static size_t field(fb *f, size_t t, int id) {
  int64_t vt = (int64_t)t - (int32_t)u32(f, t);
  if (f->bad || vt < 0 || !in_range(f, (size_t)vt, 4))
    return f->bad = true, 0;
  uint16_t vsize = u16(f, (size_t)vt);
  if ((size_t)(4 + 2 * id + 2) > vsize)
    return 0;
  uint16_t off = u16(f, (size_t)vt + 4 + 2 * (size_t)id);
  return off ? t + off : 0;
}
/* Follows a reference field; 0 when absent. */
static size_t ref(fb *f, size_t t, int id) {
  size_t at = field(f, t, id);
  if (!at)
    return 0;
  size_t to = at + u32(f, at);
  return in_range(f, to, 4) ? to : 0;
}
/* Vector at v: length, element i's position (elem bytes wide). */
static uint32_t vlen(fb *f, size_t v, size_t elem) {
  uint32_t len = v ? u32(f, v) : 0;
  if (v && !in_range(f, v + 4, (size_t)len * elem))
    return 0;
  return len;
}
static size_t table_at(fb *f, size_t v, uint32_t i) {
  size_t at = v + 4 + 4 * (size_t)i;
  size_t to = at + u32(f, at);
  return in_range(f, to, 4) ? to : 0;
}
static int32_t scalar_i32(fb *f, size_t t, int id, int32_t dflt) {
  size_t at = field(f, t, id);
  return at ? (int32_t)u32(f, at) : dflt;
}
static int scalar_u8(fb *f, size_t t, int id, int dflt) {
  size_t at = field(f, t, id);
  return at && in_range(f, at, 1) ? f->p[at] : dflt;
}

static int read_tensor(fb *f, size_t tensors, size_t buffers, int32_t index,
                       tfl_tensor *out) {
  memset(out, 0, sizeof *out);
  if (index < 0 || (uint32_t)index >= vlen(f, tensors, 4))
    return -1;
  size_t t = table_at(f, tensors, (uint32_t)index);
  size_t shape = ref(f, t, 0);
  uint32_t rank = vlen(f, shape, 4);
  if (rank > 6)
    return -1;
  out->rank = (int)rank;
  for (uint32_t i = 0; i < rank; i++)
    out->dims[i] = (int32_t)u32(f, shape + 4 + 4 * i);
  out->type = scalar_u8(f, t, 1, 0);
  uint32_t b = (uint32_t)scalar_i32(f, t, 2, 0);
  if (b && b < vlen(f, buffers, 4)) {
    size_t buf = table_at(f, buffers, b);
    size_t data = ref(f, buf, 0);
    uint32_t len = vlen(f, data, 1);
    if (len) {
      out->data = f->p + data + 4;
      out->size = len;
    }
  }
  size_t q = ref(f, t, 4);
  if (q) {
    size_t sc = ref(f, q, 2), zp = ref(f, q, 3);
    if (vlen(f, sc, 4) >= 1) {
      uint32_t bits = u32(f, sc + 4);
      memcpy(&out->scale, &bits, 4);
    }
    if (vlen(f, zp, 8) >= 1)
      out->zero_point =
          (int64_t)((uint64_t)u32(f, zp + 4) | (uint64_t)u32(f, zp + 8) << 32);
  }
  return f->bad ? -1 : 0;
}

int tfl_read_conv(const uint8_t *buf, size_t size, tfl_conv *conv, char *err,
                  size_t err_size) {
  fb f = {buf, size, false};
  memset(conv, 0, sizeof *conv);
  if (size < 8 || memcmp(buf + 4, "TFL3", 4)) {
    snprintf(err, err_size, "not a TFLite flatbuffer (no TFL3 identifier)");
    return -1;
  }
  size_t model = u32(&f, 0);
  if (!in_range(&f, model, 4))
    goto corrupt;
  size_t codes = ref(&f, model, 1), subgraphs = ref(&f, model, 2),
         buffers = ref(&f, model, 4);
  if (f.bad || !vlen(&f, subgraphs, 4))
    goto corrupt;
  size_t sg = table_at(&f, subgraphs, 0);
  size_t tensors = ref(&f, sg, 0), ops = ref(&f, sg, 3);
  uint32_t nops = vlen(&f, ops, 4);
  for (uint32_t i = 0; i < nops && !f.bad; i++) {
    size_t op = table_at(&f, ops, i);
    uint32_t ci = (uint32_t)scalar_i32(&f, op, 0, 0);
    if (ci >= vlen(&f, codes, 4))
      goto corrupt;
    size_t code = table_at(&f, codes, ci);
    /* builtin_code (field 3) supersedes the deprecated byte (field 0). */
    int builtin = scalar_i32(&f, code, 3, 0);
    if (!builtin)
      builtin = scalar_u8(&f, code, 0, 0);
    if (builtin != 3 && builtin != 4)
      continue;
    size_t ins = ref(&f, op, 1), outs = ref(&f, op, 2);
    if (vlen(&f, ins, 4) < 3 || vlen(&f, outs, 4) < 1)
      goto corrupt;
    conv->builtin = builtin;
    size_t opts = ref(&f, op, 4);
    conv->padding = opts ? scalar_u8(&f, opts, 0, 0) : 0;
    conv->stride_w = opts ? scalar_i32(&f, opts, 1, 1) : 1;
    conv->stride_h = opts ? scalar_i32(&f, opts, 2, 1) : 1;
    if (read_tensor(&f, tensors, buffers, (int32_t)u32(&f, ins + 4),
                    &conv->input) ||
        read_tensor(&f, tensors, buffers, (int32_t)u32(&f, ins + 8),
                    &conv->weights) ||
        read_tensor(&f, tensors, buffers, (int32_t)u32(&f, ins + 12),
                    &conv->bias) ||
        read_tensor(&f, tensors, buffers, (int32_t)u32(&f, outs + 4),
                    &conv->output))
      goto corrupt;
    return 0;
  }
  if (f.bad)
    goto corrupt;
  snprintf(err, err_size, "no CONV_2D or DEPTHWISE_CONV_2D operator");
  return -1;
corrupt:
  snprintf(err, err_size, "corrupt or truncated flatbuffer");
  return -1;
}
