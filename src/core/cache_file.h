/* The on-disk cache's files, for every target that keeps one (Vulkan's
 * pipeline cache, OpenCL's program binaries), treated as a security
 * boundary the way ssh treats ~/.ssh: what is loaded from the cache runs
 * (a PoCL binary is native code), so only files the user alone could have
 * written are read.
 *
 * Trusted: the cache directory is a directory (not a link), owned by the
 * effective user and not writable by group or others; a file is a regular
 * file (opened with O_NOFOLLOW | O_NONBLOCK and checked with fstat: a
 * FIFO or a device never blocks us), owned by the effective user, not
 * writable by group or others. Anything else is ignored, as a missing
 * entry is, and the caller rebuilds. Directories the cache creates are
 * 0700, files 0600. What the cache does not defend against: the user
 * account itself (whoever can write as the user can run code as the user
 * anyway); docs/architecture.md, "Caches", says so.
 *
 * A file is: an 8-byte magic, the key's length (4 bytes) and the key (the
 * caller's identity of what was cached: library version, device, driver),
 * the payload's length (8 bytes) and FNV-1a hash (8 bytes), the payload.
 * A file whose magic, key, length or hash differs is ignored. Writes go to
 * a temporary file (O_EXCL, 0600) renamed into place, so a reader never
 * sees half a file; temporary files of processes that died are removed at
 * the next write. All functions are safe to call from several threads. */
#ifndef DG_CACHE_FILE_H
#define DG_CACHE_FILE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum dg_cache_result {
  DG_CACHE_MISSING = 0, /* no entry (or the cache is off) */
  DG_CACHE_LOADED,      /* *data holds the payload */
  DG_CACHE_REJECTED,    /* an entry was there but is not trusted or intact */
} dg_cache_result;

/* Reads path's payload when it is trusted and intact; *data is malloc'd
 * (the caller frees it), *size its length. At most max_size bytes. */
dg_cache_result dg_cache_load(const char *path, const char magic[8],
                              const void *key, size_t key_len, size_t max_size,
                              void **data, size_t *size);

/* Writes the payload under path, creating its directory (0700) if needed;
 * false when the directory is not trusted or a write fails (nothing is
 * left behind then). */
bool dg_cache_store(const char *path, const char magic[8], const void *key,
                    size_t key_len, const void *data, size_t size);

/* Whether dir is trusted (see above). */
bool dg_cache_dir_trusted(const char *dir);

#endif
