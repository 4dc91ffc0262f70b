/* The device's program: built once per device from the embedded source,
 * or created from a binary in the cache directory. The cache key hashes
 * the library version, the source, the build options and the device,
 * driver and platform versions. Files go through cache_file.h: one that
 * is not trusted (owner, mode, type), whose header, key, size or checksum
 * does not match, or that the driver rejects, is ignored and rebuilt. */
#define _POSIX_C_SOURCE 200809L
#include "cl_internal.h"
#include "core/env.h"

#include "core/cache_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "DGCLPRG2"
#define LOG_MAX 360 /* of the build log, in the diagnostic */

static const char broken_tail[] =
    "\nkernel void dg_broken(global int *p) { p[0] = undeclared_name; }\n";

static bool broken_source(void) {
  const char *e = dg_env(DG_ENV_TEST_OPENCL_BROKEN_SOURCE);
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
  h = fnv_str(h, dg_cl_program_source);
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

int dg_cl_cache_path(const dg_device *dev, char *buf, unsigned long size) {
  if (!dev || dev->info.kind != DG_DEVICE_OPENCL)
    return 0;
  return cache_file(dev->impl, buf, size);
}

int dg_cl_test_finish(const dg_device *dev) {
  if (!dev || dev->info.kind != DG_DEVICE_OPENCL)
    return 0;
  const dg_cl_device *d = dev->impl;
  return clFinish(d->queue) == CL_SUCCESS;
}

/* The cache's key: the program key's 8 bytes, little-endian. */
static void key_bytes(uint64_t key, unsigned char *b) {
  for (int i = 0; i < 8; i++)
    b[i] = (unsigned char)(key >> (8 * i));
}

/* The cached binary for this key, or NULL (malloc'd; *size set). */
static unsigned char *cache_read(const char *path, uint64_t key, size_t *size) {
  unsigned char kb[8];
  key_bytes(key, kb);
  void *bin = NULL;
  dg_cache_result r =
      dg_cache_load(path, MAGIC, kb, 8, (size_t)1 << 31, &bin, size);
  if (r == DG_CACHE_REJECTED)
    dg_cl_stat_add(&dg_cl_stats.cache_rejects, 1);
  return r == DG_CACHE_LOADED ? bin : NULL;
}

static void cache_write(const char *path, uint64_t key, cl_program prog) {
  size_t n = 0;
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof n, &n, NULL) !=
          CL_SUCCESS ||
      !n)
    return;
  unsigned char *bin = malloc(n);
  if (!bin)
    return;
  unsigned char *bins[1] = {bin};
  unsigned char kb[8];
  key_bytes(key, kb);
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) ==
          CL_SUCCESS &&
      dg_cache_store(path, MAGIC, kb, 8, bin, n))
    dg_cl_stat_add(&dg_cl_stats.cache_writes, 1);
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
  if (clGetProgramBuildInfo(p, d->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) ==
          CL_SUCCESS &&
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
  dg_diag_set(diag, err == CL_BUILD_PROGRAM_FAILURE ? DG_ERROR_DEVICE : st, -1,
              NULL, "clBuildProgram", "program", "CL_SUCCESS",
              dg_cl_error_name(err),
              "opencl: clBuildProgram failed with %s on %s; build log: %s",
              dg_cl_error_name(err), d->name, log[0] ? log : "(empty)");
  return err == CL_BUILD_PROGRAM_FAILURE ? DG_ERROR_DEVICE : st;
}

static dg_status from_source(dg_cl_device *d, bool broken, cl_program *out,
                             dg_diagnostic *diag) {
  const char *srcs[2] = {dg_cl_program_source, broken_tail};
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
        cache_write(path, key, d->program);
    }
  }
  *out = d->program;
  pthread_mutex_unlock(&d->lock);
  return st;
}
