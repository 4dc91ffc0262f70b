/* Cache files as a security boundary (cache_file.h). */
#define _POSIX_C_SOURCE 200809L
#include "cache_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t fnv1a(const unsigned char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static void put_le(unsigned char *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get_le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* Owned by us, writable by nobody else. */
static bool owned_private(const struct stat *st) {
  return st->st_uid == geteuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* lstat of dir itself: a trailing "/" or "/." makes lstat follow a
 * symlink named by the rest ("link/" is the link's target), so those are
 * dropped first. */
static int lstat_self(const char *dir, struct stat *st) {
  char buf[4096];
  size_t n = strlen(dir);
  if (n >= sizeof buf)
    return -1;
  memcpy(buf, dir, n + 1);
  for (bool again = true; again;) {
    again = false;
    if (n > 1 && buf[n - 1] == '/')
      buf[--n] = 0, again = true;
    else if (n > 2 && buf[n - 1] == '.' && buf[n - 2] == '/')
      buf[n -= 2] = 0, again = true;
  }
  return lstat(buf, st);
}

bool dg_cache_dir_trusted(const char *dir) {
  struct stat st;
  return dir && lstat_self(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
         owned_private(&st);
}

/* The directory part of path, into buf; false if there is none or it is
 * too long. */
static bool dir_of(const char *path, char *buf, size_t size) {
  const char *slash = strrchr(path, '/');
  size_t n = slash ? (size_t)(slash - path) : 0;
  if (!slash || n == 0 || n >= size)
    return false;
  memcpy(buf, path, n);
  buf[n] = 0;
  return true;
}

static bool read_all(int fd, void *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)buf + got, n - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    got += (size_t)r;
  }
  return true;
}

static bool write_all(int fd, const void *buf, size_t n) {
  size_t put = 0;
  while (put < n) {
    ssize_t r = write(fd, (const char *)buf + put, n - put);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    put += (size_t)r;
  }
  return true;
}

#define HEADER_FIXED (8 + 4 + 8 + 8)

dg_cache_result dg_cache_load(const char *path, const char magic[8],
                              const void *key, size_t key_len, size_t max_size,
                              void **data, size_t *size) {
  *data = NULL;
  *size = 0;
  char dir[PATH_MAX];
  if (!path || !dir_of(path, dir, sizeof dir))
    return DG_CACHE_MISSING;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? DG_CACHE_MISSING : DG_CACHE_REJECTED;
  struct stat st;
  size_t hdr_len = HEADER_FIXED + key_len;
  unsigned char *hdr = malloc(hdr_len);
  unsigned char *payload = NULL;
  bool ok = hdr && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            owned_private(&st) && dg_cache_dir_trusted(dir) &&
            (uint64_t)st.st_size >= hdr_len && read_all(fd, hdr, hdr_len) &&
            !memcmp(hdr, magic, 8) && get_le(hdr + 8, 4) == key_len &&
            !memcmp(hdr + 12, key, key_len);
  uint64_t n = ok ? get_le(hdr + 12 + key_len, 8) : 0;
  ok = ok && n > 0 && n <= max_size && (uint64_t)st.st_size == hdr_len + n &&
       (payload = malloc((size_t)n)) && read_all(fd, payload, (size_t)n) &&
       fnv1a(payload, (size_t)n) == get_le(hdr + 20 + key_len, 8);
  close(fd);
  free(hdr);
  if (!ok) {
    free(payload);
    return DG_CACHE_REJECTED;
  }
  *data = payload;
  *size = (size_t)n;
  return DG_CACHE_LOADED;
}

/* mkdir -p, creating what is missing as 0700. */
static void make_dirs(const char *dir) {
  char buf[PATH_MAX];
  size_t n = strlen(dir);
  if (n >= sizeof buf)
    return;
  memcpy(buf, dir, n + 1);
  for (char *p = buf + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      mkdir(buf, 0700);
      *p = '/';
    }
  mkdir(buf, 0700);
}

/* Removes "<base>.tmp.<pid>.<n>" files in dir whose process is gone: a
 * writer killed between creating and renaming its temporary file. */
static void clean_orphans(const char *dir, const char *base) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  size_t bl = strlen(base);
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, base, bl) || strncmp(e->d_name + bl, ".tmp.", 5))
      continue;
    char *end = NULL;
    long pid = strtol(e->d_name + bl + 5, &end, 10);
    if (pid <= 0 || !end || *end != '.' || pid == (long)getpid() ||
        !(kill((pid_t)pid, 0) != 0 && errno == ESRCH))
      continue;
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) < (int)sizeof p)
      unlink(p);
  }
  closedir(d);
}

bool dg_cache_store(const char *path, const char magic[8], const void *key,
                    size_t key_len, const void *data, size_t size) {
  char dir[PATH_MAX], tmp[PATH_MAX + 64];
  if (!path || !dir_of(path, dir, sizeof dir) || key_len > UINT32_MAX)
    return false;
  make_dirs(dir);
  if (!dg_cache_dir_trusted(dir))
    return false;
  const char *base = strrchr(path, '/') + 1;
  clean_orphans(dir, base);
  static atomic_int serial;
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%d", path, (long)getpid(),
           atomic_fetch_add(&serial, 1));
  int fd =
      open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return false;
  unsigned char fixed[HEADER_FIXED];
  memcpy(fixed, magic, 8);
  put_le(fixed + 8, key_len, 4);
  unsigned char tail[16];
  put_le(tail, size, 8);
  put_le(tail + 8, fnv1a(data, size), 8);
  bool ok = write_all(fd, fixed, 12) && write_all(fd, key, key_len) &&
            write_all(fd, tail, 16) && write_all(fd, data, size);
  if (close(fd) != 0)
    ok = false;
  if (ok && rename(tmp, path) == 0)
    return true;
  unlink(tmp);
  return false;
}
