/* The device's program: built once per device from the embedded source,
 * or created from a binary in the cache directory. The cache key hashes
 * the library version, the source, the build options and the device,
 * driver and platform versions; a file whose header, key, size or
 * checksum does not match, or that the driver rejects, is ignored and
 * rebuilt. Files are written to a temporary name and renamed into place,
 * so a reader never sees half a file. */
#define _POSIX_C_SOURCE 200809L
#include "cl_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "DGCLPRG1"
#define LOG_MAX 360 /* of the build log, in the diagnostic */

static const char broken_tail[] =
    "\nkernel void dg_broken(global int *p) { p[0] = undeclared_name; }\n";

static bool broken_source(void) {
  const char *e = getenv("DG_TEST_OPENCL_BROKEN_SOURCE");
  return e && *e && strcmp(e, "0");
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static uint64_t fnv_str(uint64_t h, const char *s) {
  return fnv(h, s, strlen(s) + 1); /* the NUL separates fields */
}

static uint64_t program_key(const dg_cl_device *d, bool broken) {
  uint64_t h = 0xcbf29ce484222325ull;
  h = fnv_str(h, dg_version_string());
  h = fnv_str(h, dg_opencl_program_source);
  if (broken)
    h = fnv_str(h, broken_tail);
  h = fnv_str(h, d->build_options);
  h = fnv_str(h, d->name);
  h = fnv_str(h, d->driver_version);
  h = fnv_str(h, d->device_version);
  return fnv_str(h, d->platform_version);
}

static bool cache_file(const dg_cl_device *d, char *buf, size_t size) {
  if (!d->cache_dir)
    return false;
  int n = snprintf(buf, size, "%s/opencl-%016llx.bin", d->cache_dir,
                   (unsigned long long)program_key(d, broken_source()));
  return n > 0 && (size_t)n < size;
}

int dg_opencl_cache_path(const struct dg_context *ctx, int index, char *buf,
                         unsigned long size) {
  if (!ctx || index < 0 || index >= ctx->devices.count ||
      ctx->devices.items[index].info.kind != DG_DEVICE_OPENCL)
    return 0;
  return cache_file(ctx->devices.items[index].impl, buf, size);
}

/* mkdir -p; failure shows up later as an unwritable file. */
static void make_dirs(const char *path) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s", path);
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      mkdir(tmp, 0755);
      *p = '/';
    }
  mkdir(tmp, 0755);
}

static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* The cached binary for this key, or NULL (malloc'd; *size set). */
static unsigned char *cache_read(const char *path, uint64_t key,
                                 size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  unsigned char hdr[32];
  unsigned char *bin = NULL;
  bool ok = fread(hdr, 1, 32, f) == 32 && !memcmp(hdr, MAGIC, 8) &&
            get_u64(hdr + 8) == key;
  uint64_t n = ok ? get_u64(hdr + 16) : 0;
  ok = ok && n > 0 && n < ((uint64_t)1 << 31) && (bin = malloc(n)) &&
       fread(bin, 1, n, f) == n && fgetc(f) == EOF &&
       fnv(0xcbf29ce484222325ull, bin, n) == get_u64(hdr + 24);
  fclose(f);
  if (!ok) {
    free(bin);
    dg_cl_stat_add(&dg_cl_stats.cache_rejects, 1);
    return NULL;
  }
  *size = (size_t)n;
  return bin;
}

static void cache_write(const dg_cl_device *d, const char *path,
                        uint64_t key, cl_program prog) {
  size_t n = 0;
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof n, &n, NULL) !=
          CL_SUCCESS ||
      !n)
    return;
  unsigned char *bin = malloc(n);
  if (!bin)
    return;
  unsigned char *bins[1] = {bin};
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) !=
      CL_SUCCESS) {
    free(bin);
    return;
  }
  make_dirs(d->cache_dir);
  char tmp[4200];
  static int serial;
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%d", path, (long)getpid(), serial++);
  unsigned char hdr[32];
  memcpy(hdr, MAGIC, 8);
  put_u64(hdr + 8, key);
  put_u64(hdr + 16, n);
  put_u64(hdr + 24, fnv(0xcbf29ce484222325ull, bin, n));
  FILE *f = fopen(tmp, "wb");
  bool ok = f && fwrite(hdr, 1, 32, f) == 32 && fwrite(bin, 1, n, f) == n;
  if (f && fclose(f))
    ok = false;
  if (ok && rename(tmp, path) == 0)
    dg_cl_stat_add(&dg_cl_stats.cache_writes, 1);
  else if (f)
    remove(tmp);
  free(bin);
}

static cl_program from_binary(dg_cl_device *d, const unsigned char *bin,
                              size_t size) {
  cl_int err, bst;
  cl_program p = clCreateProgramWithBinary(d->context, 1, &d->device, &size,
                                           &bin, &bst, &err);
  if (!p)
    return NULL;
  if (err != CL_SUCCESS || bst != CL_SUCCESS ||
      clBuildProgram(p, 1, &d->device, d->build_options, NULL, NULL) !=
          CL_SUCCESS) {
    clReleaseProgram(p);
    return NULL;
  }
  return p;
}

static dg_status build_failed(dg_cl_device *d, cl_program p, cl_int err,
                              dg_diagnostic *diag) {
  char log[LOG_MAX + 1] = "";
  size_t n = 0;
  if (clGetProgramBuildInfo(p, d->device, CL_PROGRAM_BUILD_LOG, 0, NULL,
                            &n) == CL_SUCCESS &&
      n > 0) {
    char *full = malloc(n + 1);
    if (full && clGetProgramBuildInfo(p, d->device, CL_PROGRAM_BUILD_LOG, n,
                                      full, NULL) == CL_SUCCESS) {
      full[n] = 0;
      /* The first lines name the error; keep those. */
      const char *s = full;
      while (*s == '\n' || *s == ' ')
        s++;
      dg_strlcpy(log, s, sizeof log);
      for (char *c = log; *c; c++)
        if (*c == '\n')
          *c = ' ';
    }
    free(full);
  }
  dg_status st = dg_cl_status(err);
  dg_diag_set(diag, err == CL_BUILD_PROGRAM_FAILURE ? DG_ERROR_DEVICE : st,
              -1, NULL, "clBuildProgram", "program", "CL_SUCCESS",
              dg_cl_error_name(err),
              "opencl: clBuildProgram failed with %s on %s; build log: %s",
              dg_cl_error_name(err), d->name, log[0] ? log : "(empty)");
  return err == CL_BUILD_PROGRAM_FAILURE ? DG_ERROR_DEVICE : st;
}

static dg_status from_source(dg_cl_device *d, bool broken, cl_program *out,
                             dg_diagnostic *diag) {
  const char *srcs[2] = {dg_opencl_program_source, broken_tail};
  cl_int err;
  cl_program p =
      clCreateProgramWithSource(d->context, broken ? 2 : 1, srcs, NULL, &err);
  if (!p)
    return dg_cl_fail(diag, err, -1, NULL, "clCreateProgramWithSource");
  err = clBuildProgram(p, 1, &d->device, d->build_options, NULL, NULL);
  dg_cl_stat_add(&dg_cl_stats.source_builds, 1);
  if (err != CL_SUCCESS) {
    dg_status st = build_failed(d, p, err, diag);
    clReleaseProgram(p);
    return st;
  }
  *out = p;
  return DG_OK;
}

dg_status dg_cl_program_get(dg_cl_device *d, cl_program *out,
                            dg_diagnostic *diag) {
  pthread_mutex_lock(&d->lock);
  dg_status st = DG_OK;
  if (!d->program) {
    bool broken = broken_source();
    uint64_t key = program_key(d, broken);
    char path[4096];
    bool cached = !broken && cache_file(d, path, sizeof path);
    size_t size;
    unsigned char *bin = cached ? cache_read(path, key, &size) : NULL;
    if (bin) {
      d->program = from_binary(d, bin, size);
      free(bin);
      if (d->program)
        dg_cl_stat_add(&dg_cl_stats.cache_loads, 1);
      else
        dg_cl_stat_add(&dg_cl_stats.cache_rejects, 1);
    }
    if (!d->program) {
      st = from_source(d, broken, &d->program, diag);
      if (st == DG_OK && cached)
        cache_write(d, path, key, d->program);
    }
  }
  *out = d->program;
  pthread_mutex_unlock(&d->lock);
  return st;
}
