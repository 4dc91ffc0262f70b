/* A minimal protobuf writer: enough of the wire format to write small
 * ONNX models by hand (dg-bench --scale's chains, the tests' hostile
 * nestings) without a protobuf library. A pb_buf starts zeroed; its bytes
 * are malloc'd and owned by it (free(b.p) when done); a failed allocation
 * sets oom and makes later writes no-ops. Not thread-safe per buffer. */
#ifndef DG_PB_WRITE_H
#define DG_PB_WRITE_H

#include <stddef.h>
#include <stdint.h>

typedef struct pb_buf {
  uint8_t *p;
  size_t len, cap;
  int oom;
} pb_buf;

/* Field f as a varint. */
void pb_field_int(pb_buf *b, int f, uint64_t v);
/* Field f as length-delimited bytes, or a string (without its NUL). */
void pb_field_bytes(pb_buf *b, int f, const void *data, size_t n);
void pb_field_str(pb_buf *b, int f, const char *s);
/* Field f holding message m, which it frees and zeroes (m's oom carries
 * over into b). */
void pb_field_msg(pb_buf *b, int f, pb_buf *m);

#endif
