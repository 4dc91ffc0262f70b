/* Loads the Fashion-MNIST test or training set from Debian's
 * dataset-fashion-mnist package (gzip'd IDX files). */
#ifndef DG_EXAMPLES_FASHION_MNIST_H
#define DG_EXAMPLES_FASHION_MNIST_H

#include <stddef.h>
#include <stdint.h>

typedef struct mnist_set {
  int count, rows, cols;
  uint8_t *images; /* count * rows * cols, owned */
  uint8_t *labels; /* count, owned */
} mnist_set;

/* prefix is "t10k" or "train". Returns 0 or -1 with a sentence in err. */
int mnist_load(const char *dir, const char *prefix, mnist_set *out, char *err,
               size_t err_size);
void mnist_free(mnist_set *s);

#endif
