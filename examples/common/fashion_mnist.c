/* IDX files: a big-endian magic (0x801 labels, 0x803 images), the dims,
 * then bytes. Read through zlib's gz* functions. */
#include "fashion_mnist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static int read_idx(const char *path, int want_magic, int *dims, int ndims,
                    uint8_t **data, char *err, size_t err_size) {
  gzFile f = gzopen(path, "rb");
  if (!f) {
    snprintf(err, err_size, "%s: cannot open (is dataset-fashion-mnist "
             "installed?)", path);
    return -1;
  }
  unsigned char hdr[16];
  int hlen = 4 + 4 * ndims;
  if (gzread(f, hdr, (unsigned)hlen) != hlen ||
      (hdr[2] << 8 | hdr[3]) != want_magic) {
    gzclose(f);
    snprintf(err, err_size, "%s: not an IDX file of the expected kind", path);
    return -1;
  }
  size_t n = 1;
  for (int i = 0; i < ndims; i++) {
    const unsigned char *p = hdr + 4 + 4 * i;
    dims[i] = (int)((uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]);
    if (dims[i] <= 0 || dims[i] > 1000000) {
      gzclose(f);
      snprintf(err, err_size, "%s: bad dimension", path);
      return -1;
    }
    n *= (size_t)dims[i];
  }
  *data = malloc(n);
  if (!*data || gzread(f, *data, (unsigned)n) != (int)n) {
    free(*data);
    *data = NULL;
    gzclose(f);
    snprintf(err, err_size, "%s: truncated", path);
    return -1;
  }
  gzclose(f);
  return 0;
}

int mnist_load(const char *dir, const char *prefix, mnist_set *out, char *err,
               size_t err_size) {
  char path[1024];
  int idims[3], ldims[1];
  memset(out, 0, sizeof *out);
  snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte.gz", dir, prefix);
  if (read_idx(path, 0x803, idims, 3, &out->images, err, err_size))
    return -1;
  snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte.gz", dir, prefix);
  if (read_idx(path, 0x801, ldims, 1, &out->labels, err, err_size)) {
    mnist_free(out);
    return -1;
  }
  if (ldims[0] != idims[0]) {
    snprintf(err, err_size, "%s: %d images but %d labels", dir, idims[0],
             ldims[0]);
    mnist_free(out);
    return -1;
  }
  out->count = idims[0];
  out->rows = idims[1];
  out->cols = idims[2];
  return 0;
}

void mnist_free(mnist_set *s) {
  free(s->images);
  free(s->labels);
  s->images = s->labels = NULL;
}
