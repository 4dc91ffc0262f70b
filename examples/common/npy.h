/* A small reader and writer for NumPy .npy files (format versions 1-3
 * read, 1.0 written; little-endian C-order arrays of f4, f2, i1, u1, i4),
 * for the examples, tools and tests. Not part of the library. */
#ifndef DG_EXAMPLES_NPY_H
#define DG_EXAMPLES_NPY_H

#include "graph.h"

typedef struct npy_array {
  dg_dtype dtype;
  int rank;
  int64_t dims[DG_MAX_RANK];
  void *data; /* owned; free with npy_free */
  size_t bytes;
} npy_array;

/* Reads path into *out. Returns 0, or -1 with a sentence in err (a missing
 * file, a truncated file, an unsupported dtype or layout). */
int npy_load(const char *path, npy_array *out, char *err, size_t err_size);
void npy_free(npy_array *a);

/* Writes data (rank dims of dtype: f32, f16, i8, u8 or i32, C order) as a
 * version-1.0 .npy file. Returns 0, or -1 with a sentence in err. */
int npy_save(const char *path, dg_dtype dtype, int rank, const int64_t *dims,
             const void *data, char *err, size_t err_size);

/* A dg_tensor_desc with the array's dtype and dims (no quantisation). */
dg_tensor_desc npy_desc(const npy_array *a);

#endif
