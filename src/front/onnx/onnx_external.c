/* External data (TensorProto.data_location = EXTERNAL): a tensor's bytes
 * kept in a file beside the model, as PyTorch's exporter writes models
 * over 2 GiB and, by default, every model (model.onnx.data). The entries
 * location, offset and length say where.
 *
 * The file is the model's to name, and the model may be hostile, so the
 * location must stay inside the model's folder: an absolute path, a ".."
 * component, or a path whose real location (after every symlink) is
 * outside the folder is refused. The file must be a regular file, opened
 * without following a final symlink and without blocking (a FIFO is
 * refused), and offset + length must lie within it and match the tensor's
 * size. What this does not stop: a file in the folder replaced between
 * the check and the open by someone who can write the folder. */
#define _GNU_SOURCE /* realpath, pread, O_NOFOLLOW, O_CLOEXEC */
#include "onnx_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool parse_u64(const char *s, uint64_t *v) {
  if (!s || !*s)
    return false;
  uint64_t r = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9' || r > (UINT64_MAX - 9) / 10)
      return false;
    r = r * 10 + (uint64_t)(*s - '0');
  }
  *v = r;
  return true;
}

/* A location that can only name something inside the folder, before any
 * symlink is looked at: relative, no "..", no empty name. */
static bool location_plain(const char *loc) {
  if (!loc[0] || loc[0] == '/')
    return false;
  for (const char *p = loc; *p;) {
    const char *e = strchr(p, '/');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n == 2 && p[0] == '.' && p[1] == '.')
      return false;
    p += n + (e ? 1 : 0);
  }
  return true;
}

bool onnx_external_read(const Onnx__TensorProto *t, const char *base_dir,
                        size_t want, uint8_t **bytes, char *err,
                        size_t err_size) {
  const char *name = t->name ? t->name : "";
  const char *loc = NULL;
  uint64_t offset = 0, length = want;
  bool has_length = false;
  *bytes = NULL;
  for (size_t i = 0; i < t->n_external_data; i++) {
    const Onnx__StringStringEntryProto *e = t->external_data[i];
    const char *k = e && e->key ? e->key : "";
    if (!strcmp(k, "location")) {
      loc = e->value;
    } else if (!strcmp(k, "offset") || !strcmp(k, "length")) {
      uint64_t v;
      if (!parse_u64(e->value, &v)) {
        snprintf(err, err_size, "tensor '%s': external data %s '%s' is not "
                 "a number", name, k, e->value ? e->value : "");
        return false;
      }
      if (k[0] == 'o')
        offset = v;
      else
        length = v, has_length = true;
    }
  }
  if (!base_dir) {
    snprintf(err, err_size, "tensor '%s' uses external data, and the model "
             "was read from memory: load it with dg_onnx_load, or set "
             "dg_onnx_options.external_data_dir", name);
    return false;
  }
  if (!loc || !location_plain(loc)) {
    snprintf(err, err_size, "tensor '%s': external data location '%s' is "
             "refused: it must be a relative path inside the model's folder, "
             "without '..'", name, loc ? loc : "(none)");
    return false;
  }
  if (has_length && length != want) {
    snprintf(err, err_size, "tensor '%s': external data length %llu where "
             "its dims say %zu bytes", name, (unsigned long long)length, want);
    return false;
  }
  char path[PATH_MAX], real[PATH_MAX], dir[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s", base_dir, loc) >= (int)sizeof path ||
      !realpath(base_dir, dir)) {
    snprintf(err, err_size, "tensor '%s': external data path too long, or "
             "the model's folder '%s' cannot be resolved", name, base_dir);
    return false;
  }
  if (!realpath(path, real)) {
    snprintf(err, err_size, "tensor '%s': cannot find external data file "
             "'%s' (%s)", name, loc, strerror(errno));
    return false;
  }
  size_t dl = strlen(dir);
  if (strncmp(real, dir, dl) || (real[dl] != '/' && dl > 1)) {
    snprintf(err, err_size, "tensor '%s': external data file '%s' leads "
             "outside the model's folder (to '%s'): refused", name, loc,
             real);
    return false;
  }
  int fd = open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
    if (fd >= 0)
      close(fd);
    snprintf(err, err_size, "tensor '%s': external data '%s' is not a "
             "readable regular file", name, loc);
    return false;
  }
  if (offset > (uint64_t)sb.st_size || want > (uint64_t)sb.st_size - offset) {
    close(fd);
    snprintf(err, err_size, "tensor '%s': external data '%s' holds %lld "
             "bytes, short of offset %llu + %zu", name, loc,
             (long long)sb.st_size, (unsigned long long)offset, want);
    return false;
  }
  uint8_t *b = malloc(want ? want : 1);
  size_t got = 0;
  while (b && got < want) {
    ssize_t r = pread(fd, b + got, want - got, (off_t)(offset + got));
    if (r <= 0 && !(r < 0 && errno == EINTR))
      break;
    got += r > 0 ? (size_t)r : 0;
  }
  close(fd);
  if (!b || got != want) {
    free(b);
    snprintf(err, err_size, "tensor '%s': %s external data '%s'", name,
             b ? "cannot read" : "out of memory reading", loc);
    return false;
  }
  *bytes = b;
  return true;
}
