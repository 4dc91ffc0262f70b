/* The VkPipelineCache kept on disk, one file per device in the library's
 * cache directory:
 *   <dir>/vulkan-<pipelineCacheUUID>-<vendor>-<device>-<driverVersion>.bin
 * The file is our header (magic, key string, payload size and FNV-1a hash)
 * followed by the driver's cache data. A file that is short, hashes wrong,
 * carries another key, or whose Vulkan header names another device is
 * ignored (and replaced at the next save), never handed to the driver:
 * drivers are not required to survive corrupt cache data. Writes go to a
 * temporary file renamed over the old one, so readers never see half a
 * file. */
#define _POSIX_C_SOURCE 200809L
#include "vk_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "DGVKPC01"
#define KEY_BYTES 128

typedef struct file_header {
  char magic[8];
  char key[KEY_BYTES]; /* library version, device and driver identity */
  uint64_t size;       /* payload bytes */
  uint64_t hash;       /* FNV-1a of the payload */
} file_header;

static uint64_t fnv1a(const unsigned char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static void make_key(const vk_device *vd, char *key) {
  memset(key, 0, KEY_BYTES);
  char uuid[2 * VK_UUID_SIZE + 1];
  for (unsigned i = 0; i < VK_UUID_SIZE; i++)
    snprintf(uuid + 2 * i, 3, "%02x", vd->props.pipelineCacheUUID[i]);
  snprintf(key, KEY_BYTES, "directgraph %s vulkan %s %04x:%04x driver %u",
           dg_version_string(), uuid, vd->props.vendorID, vd->props.deviceID,
           vd->props.driverVersion);
}

/* The driver's own header (the Vulkan spec's version-one layout). */
static bool payload_ours(const vk_device *vd, const unsigned char *p,
                         size_t n) {
  if (n < 16 + VK_UUID_SIZE)
    return false;
  uint32_t w[4];
  memcpy(w, p, sizeof w);
  return w[0] >= 16 + VK_UUID_SIZE && w[0] <= n &&
         w[1] == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
         w[2] == vd->props.vendorID && w[3] == vd->props.deviceID &&
         !memcmp(p + 16, vd->props.pipelineCacheUUID, VK_UUID_SIZE);
}

/* Reads and checks the file; returns the payload (malloc'd) or NULL. */
static unsigned char *load(const vk_device *vd, size_t *size) {
  FILE *f = fopen(vd->cache_path, "rb");
  if (!f)
    return NULL;
  file_header h;
  char key[KEY_BYTES];
  make_key(vd, key);
  unsigned char *data = NULL;
  if (fread(&h, sizeof h, 1, f) == 1 && !memcmp(h.magic, MAGIC, 8) &&
      !memcmp(h.key, key, KEY_BYTES) && h.size > 0 &&
      h.size < ((uint64_t)1 << 31) && (data = malloc((size_t)h.size))) {
    if (fread(data, 1, (size_t)h.size, f) != h.size || fgetc(f) != EOF ||
        fnv1a(data, (size_t)h.size) != h.hash ||
        !payload_ours(vd, data, (size_t)h.size)) {
      free(data);
      data = NULL;
    }
  }
  fclose(f);
  *size = data ? (size_t)h.size : 0;
  return data;
}

VkResult dg_vk_cache_open(vk_device *vd, const char *dir) {
  vd->cache_path[0] = 0;
  vd->cache_loaded = 0;
  if (dir && *dir) {
    char uuid[2 * VK_UUID_SIZE + 1];
    for (unsigned i = 0; i < VK_UUID_SIZE; i++)
      snprintf(uuid + 2 * i, 3, "%02x", vd->props.pipelineCacheUUID[i]);
    int n = snprintf(vd->cache_path, sizeof vd->cache_path,
                     "%s/vulkan-%s-%04x-%04x-%u.bin", dir, uuid,
                     vd->props.vendorID, vd->props.deviceID,
                     vd->props.driverVersion);
    if (n < 0 || (size_t)n >= sizeof vd->cache_path)
      vd->cache_path[0] = 0; /* too long: run without a disk cache */
  }
  size_t size = 0;
  unsigned char *data = vd->cache_path[0] ? load(vd, &size) : NULL;
  VkPipelineCacheCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
      .initialDataSize = size,
      .pInitialData = data};
  VkResult r = vkCreatePipelineCache(vd->dev, &ci, NULL, &vd->cache);
  if (r != VK_SUCCESS && data) { /* the driver refused it: start empty */
    ci.initialDataSize = 0;
    ci.pInitialData = NULL;
    size = 0;
    r = vkCreatePipelineCache(vd->dev, &ci, NULL, &vd->cache);
  }
  free(data);
  if (r != VK_SUCCESS)
    vd->cache = VK_NULL_HANDLE;
  vd->cache_loaded = size;
  vd->cache_dirty = false;
  return r;
}

/* mkdir -p for the directory part of path. */
static void make_dirs(const char *path) {
  char buf[1024];
  dg_strlcpy(buf, path, sizeof buf);
  char *slash = strrchr(buf, '/');
  if (!slash)
    return;
  *slash = 0;
  for (char *p = buf + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      mkdir(buf, 0755);
      *p = '/';
    }
  mkdir(buf, 0755);
}

void dg_vk_cache_save(vk_device *vd) {
  if (!vd->cache || !vd->cache_path[0] || !vd->cache_dirty)
    return;
  size_t size = 0;
  if (vkGetPipelineCacheData(vd->dev, vd->cache, &size, NULL) != VK_SUCCESS ||
      !size)
    return;
  unsigned char *data = malloc(size);
  if (!data)
    return;
  if (vkGetPipelineCacheData(vd->dev, vd->cache, &size, data) != VK_SUCCESS) {
    free(data);
    return;
  }
  file_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, MAGIC, 8);
  make_key(vd, h.key);
  h.size = size;
  h.hash = fnv1a(data, size);
  make_dirs(vd->cache_path);
  char tmp[1100];
  static atomic_int counter;
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%d", vd->cache_path, (long)getpid(),
           atomic_fetch_add(&counter, 1));
  FILE *f = fopen(tmp, "wb");
  bool ok = f && fwrite(&h, sizeof h, 1, f) == 1 &&
            fwrite(data, 1, size, f) == size;
  if (f && fclose(f) != 0)
    ok = false;
  if (ok && rename(tmp, vd->cache_path) == 0)
    vd->cache_dirty = false;
  else if (f)
    unlink(tmp);
  free(data);
}
