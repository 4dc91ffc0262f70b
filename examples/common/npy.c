/* .npy reader: magic, version, header length, a Python-dict header with
 * 'descr', 'fortran_order' and 'shape', then the raw data. */
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t size, const char *path, const char *why) {
  snprintf(err, size, "%s: %s", path, why);
  return -1;
}

int npy_load(const char *path, npy_array *out, char *err, size_t err_size) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f)
    return fail(err, err_size, path, "cannot open");
  unsigned char pre[10];
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6)) {
    fclose(f);
    return fail(err, err_size, path,
                "not a .npy file (bad magic or truncated)");
  }
  size_t hlen = pre[8] | (size_t)pre[9] << 8;
  if (pre[6] >= 2) { /* 4-byte header length */
    unsigned char more[2];
    if (fread(more, 1, 2, f) != 2) {
      fclose(f);
      return fail(err, err_size, path, "truncated header");
    }
    hlen |= (size_t)more[0] << 16 | (size_t)more[1] << 24;
  }
  if (hlen > 65536) {
    fclose(f);
    return fail(err, err_size, path, "header too long");
  }
  char *h = calloc(1, hlen + 1);
  if (!h || fread(h, 1, hlen, f) != hlen) {
    free(h);
    fclose(f);
    return fail(err, err_size, path, "truncated header");
  }
  static const struct {
    const char *descr;
    dg_dtype t;
  } types[] = {{"'<f4'", DG_DTYPE_F32}, {"'<f2'", DG_DTYPE_F16},
               {"'|i1'", DG_DTYPE_I8},  {"'|u1'", DG_DTYPE_U8},
               {"'<i4'", DG_DTYPE_I32}, {"'<i8'", DG_DTYPE_I64},
               {"'|b1'", DG_DTYPE_BOOL}};
  const char *d = strstr(h, "'descr':");
  for (size_t i = 0; d && i < sizeof types / sizeof types[0]; i++)
    if (!strncmp(d + 8 + strspn(d + 8, " "), types[i].descr,
                 strlen(types[i].descr)))
      out->dtype = types[i].t;
  const char *fo = strstr(h, "'fortran_order':");
  const char *sh = strstr(h, "'shape':");
  if (!out->dtype || !fo ||
      strncmp(fo + 16 + strspn(fo + 16, " "), "False", 5) || !sh ||
      !(sh = strchr(sh, '('))) {
    free(h);
    fclose(f);
    return fail(err, err_size, path,
                "unsupported array (need C order f4, f2, i1, u1 or i4)");
  }
  size_t n = 1;
  for (sh++; *sh && *sh != ')';) {
    char *end;
    long long v = strtoll(sh, &end, 10);
    if (end == sh) {
      sh++;
      continue;
    }
    if (out->rank == DG_MAX_RANK || v < 0 ||
        (v && n > ((size_t)1 << 40) / (size_t)v)) {
      free(h);
      fclose(f);
      return fail(err, err_size, path, "shape too large");
    }
    out->dims[out->rank++] = v;
    n *= (size_t)v;
    sh = end;
  }
  free(h);
  out->bytes = n * dg_dtype_size(out->dtype);
  out->data = malloc(out->bytes ? out->bytes : 1);
  if (!out->data) {
    fclose(f);
    return fail(err, err_size, path, "out of memory");
  }
  if (fread(out->data, 1, out->bytes, f) != out->bytes) {
    fclose(f);
    npy_free(out);
    return fail(err, err_size, path, "truncated data");
  }
  fclose(f);
  return 0;
}

void npy_free(npy_array *a) {
  free(a->data);
  a->data = NULL;
}

dg_tensor_desc npy_desc(const npy_array *a) {
  dg_tensor_desc d = {.dtype = a->dtype, .rank = a->rank};
  memcpy(d.dims, a->dims, sizeof(int64_t) * (size_t)a->rank);
  return d;
}

int npy_save(const char *path, dg_dtype dtype, int rank, const int64_t *dims,
             const void *data, char *err, size_t err_size) {
  const char *descr = dtype == DG_DTYPE_F32    ? "<f4"
                      : dtype == DG_DTYPE_F16  ? "<f2"
                      : dtype == DG_DTYPE_I8   ? "|i1"
                      : dtype == DG_DTYPE_U8   ? "|u1"
                      : dtype == DG_DTYPE_I32  ? "<i4"
                      : dtype == DG_DTYPE_I64  ? "<i8"
                      : dtype == DG_DTYPE_BOOL ? "|b1"
                                               : NULL;
  if (!descr || rank < 0 || rank > DG_MAX_RANK) {
    snprintf(err, err_size, "%s: no .npy type for this tensor", path);
    return -1;
  }
  char shape[256] = "", hdr[384];
  size_t n = 1;
  for (int i = 0; i < rank; i++) {
    n *= (size_t)dims[i];
    snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%lld,%s",
             (long long)dims[i], i + 1 < rank ? " " : "");
  }
  if (rank > 1) /* "(3,)" for rank 1, "(2, 3)" above */
    shape[strlen(shape) - 1] = 0;
  int len = snprintf(hdr, sizeof hdr,
                     "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
                     descr, shape);
  /* Pad with spaces and a newline so that data starts 64-aligned. */
  while ((10 + len + 1) % 64)
    hdr[len++] = ' ';
  hdr[len++] = '\n';
  unsigned char pre[10] = {0x93,
                           'N',
                           'U',
                           'M',
                           'P',
                           'Y',
                           1,
                           0,
                           (unsigned char)(len & 255),
                           (unsigned char)(len >> 8)};
  size_t bytes = n * (size_t)dg_dtype_size(dtype);
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(pre, 1, 10, f) == 10 &&
           fwrite(hdr, 1, (size_t)len, f) == (size_t)len &&
           fwrite(data, 1, bytes, f) == bytes;
  int why = errno; /* fopen's or fwrite's, before fclose may change it */
  if (f && fclose(f) && ok) {
    ok = 0;
    why = errno;
  }
  if (!ok) {
    snprintf(err, err_size, "cannot write %s: %s", path,
             why ? strerror(why) : "write failed");
    return -1;
  }
  return 0;
}
