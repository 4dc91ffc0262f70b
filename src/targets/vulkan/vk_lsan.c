/* LeakSanitizer and Vulkan drivers the loader unloads.
 *
 * The loader dlcloses the driver at vkDestroyInstance. A driver whose
 * libraries keep allocations in their globals (Mesa 22.3's lavapipe, via
 * LLVM: one 128-byte realloc per load) then leaves memory that nothing
 * mapped points at, and LeakSanitizer reports it at exit as a leak from
 * "<unknown module>" in every program that opened Vulkan. Instead of a
 * suppression (which could not name the unmapped module, and would have
 * to match by address or hide every realloc), builds under the sanitizer
 * keep exactly the drivers below mapped for the life of the process
 * (RTLD_NODELETE): their globals stay readable, so LeakSanitizer sees the
 * memory as reachable, and any real leak, ours or the driver's, is still
 * reported with its symbols. Release builds do nothing here. */
#define _GNU_SOURCE
#include "vk_internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define DG_VK_KEEP_DRIVERS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define DG_VK_KEEP_DRIVERS 1
#endif
#endif

#ifdef DG_VK_KEEP_DRIVERS
#include <dlfcn.h>
#include <link.h>
#include <string.h>

/* File names (as the ICD manifest gives them) of the drivers kept. */
static const char *const kept_drivers[] = {
    "libvulkan_lvp.so", /* Mesa lavapipe (LLVM's globals) */
};

static int keep_one(struct dl_phdr_info *info, size_t size, void *user) {
  (void)size, (void)user;
  const char *slash = strrchr(info->dlpi_name, '/');
  const char *base = slash ? slash + 1 : info->dlpi_name;
  for (size_t i = 0; i < sizeof kept_drivers / sizeof *kept_drivers; i++) {
    if (strcmp(base, kept_drivers[i]))
      continue;
    /* Already loaded: NOLOAD only marks it never to be unloaded. */
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    if (h)
      dlclose(h);
  }
  return 0;
}

void dg_vk_lsan_keep_drivers(void) { dl_iterate_phdr(keep_one, NULL); }
#else
void dg_vk_lsan_keep_drivers(void) {}
#endif
