/* The targets compiled into this library, in the order devices are listed
 * (the CPU first: it is always present). The GPU and NPU targets are built
 * only when their option allows it (-Dvulkan, -Dopencl, -Dnpu) and their
 * dependencies are found; their folder's meson.build then defines
 * DG_TARGET_<NAME> (see meson.build). */
#include "target.h"

#include <stdlib.h>
#include <string.h>

#ifdef DG_TARGET_VULKAN
extern const dg_target dg_target_vulkan;
#endif
#ifdef DG_TARGET_OPENCL
extern const dg_target dg_target_opencl;
#endif
#ifdef DG_TARGET_NPU
extern const dg_target dg_target_npu;
#endif

static const dg_target *const all_targets[] = {
    &dg_target_cpu,
#ifdef DG_TARGET_VULKAN
    &dg_target_vulkan,
#endif
#ifdef DG_TARGET_OPENCL
    &dg_target_opencl,
#endif
#ifdef DG_TARGET_NPU
    &dg_target_npu,
#endif
};

const dg_target *dg_target_get(int i) {
  int n = (int)(sizeof all_targets / sizeof all_targets[0]);
  return i >= 0 && i < n ? all_targets[i] : NULL;
}

dg_device *dg_device_list_add(dg_device_list *list, const dg_target_vtbl *vt) {
  if (list->count == list->cap) {
    int cap = list->cap ? list->cap * 2 : 4;
    dg_device *items = realloc(list->items, (size_t)cap * sizeof *items);
    if (!items)
      return NULL;
    list->items = items;
    list->cap = cap;
  }
  dg_device *d = &list->items[list->count++];
  memset(d, 0, sizeof *d);
  d->vt = vt;
  return d;
}
