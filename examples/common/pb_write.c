/* The protobuf writer (pb_write.h): varints and length-delimited fields. */
#include "pb_write.h"

#include <stdlib.h>
#include <string.h>

static void put(pb_buf *b, const void *data, size_t n) {
  if (b->oom)
    return;
  if (b->len + n > b->cap) {
    size_t c = b->cap ? b->cap * 2 : 4096;
    while (c < b->len + n)
      c *= 2;
    uint8_t *q = realloc(b->p, c);
    if (!q) {
      b->oom = 1;
      return;
    }
    b->p = q;
    b->cap = c;
  }
  if (n) /* an empty message's bytes are NULL: memcpy must not see them */
    memcpy(b->p + b->len, data, n);
  b->len += n;
}

static void varint(pb_buf *b, uint64_t v) {
  uint8_t t[10];
  int n = 0;
  do {
    t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  put(b, t, (size_t)n);
}

void pb_field_int(pb_buf *b, int f, uint64_t v) {
  varint(b, (uint64_t)f << 3);
  varint(b, v);
}

void pb_field_bytes(pb_buf *b, int f, const void *data, size_t n) {
  varint(b, (uint64_t)f << 3 | 2);
  varint(b, n);
  put(b, data, n);
}

void pb_field_str(pb_buf *b, int f, const char *s) {
  pb_field_bytes(b, f, s, strlen(s));
}

void pb_field_msg(pb_buf *b, int f, pb_buf *m) {
  pb_field_bytes(b, f, m->p, m->len);
  b->oom |= m->oom;
  free(m->p);
  memset(m, 0, sizeof *m);
}
