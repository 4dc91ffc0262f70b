/* The VkPipelineCache kept on disk, one file per device in the library's
 * cache directory:
 *   <dir>/vulkan-<pipelineCacheUUID>-<vendor>-<device>-<driverVersion>.bin
 * written and read through cache_file.h (trusted files only; magic, key
 * string, payload size and hash) around the driver's cache data. A file
 * that is not trusted, short, hashes wrong, carries another key, or whose
 * Vulkan header names another device is ignored (and replaced at the next
 * save), never handed to the driver: drivers are not required to survive
 * corrupt cache data. */
#define _POSIX_C_SOURCE 200809L
#include "vk_internal.h"

#include "core/cache_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "DGVKPC02"
#define KEY_BYTES 128

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

/* Reads and checks the file (cache_file.h: trusted, intact, our key);
 * returns the payload (malloc'd) or NULL. */
static unsigned char *load(const vk_device *vd, size_t *size) {
  char key[KEY_BYTES];
  make_key(vd, key);
  void *data = NULL;
  if (dg_cache_load(vd->cache_path, MAGIC, key, strlen(key), (size_t)1 << 31,
                    &data, size) != DG_CACHE_LOADED)
    return NULL;
  if (!payload_ours(vd, data, *size)) {
    free(data);
    *size = 0;
    return NULL;
  }
  return data;
}

VkResult dg_vk_cache_open(vk_device *vd, const char *dir) {
  vd->cache_path[0] = 0;
  vd->cache_loaded = 0;
  if (dir && *dir) {
    char uuid[2 * VK_UUID_SIZE + 1];
    for (unsigned i = 0; i < VK_UUID_SIZE; i++)
      snprintf(uuid + 2 * i, 3, "%02x", vd->props.pipelineCacheUUID[i]);
    int n =
        snprintf(vd->cache_path, sizeof vd->cache_path,
                 "%s/vulkan-%s-%04x-%04x-%u.bin", dir, uuid, vd->props.vendorID,
                 vd->props.deviceID, vd->props.driverVersion);
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
  char key[KEY_BYTES];
  make_key(vd, key);
  if (dg_cache_store(vd->cache_path, MAGIC, key, strlen(key), data, size))
    vd->cache_dirty = false;
  free(data);
}
