/* The targets compiled into this library, in the order devices are listed
 * (the CPU first: it is always present). */
#include "target.h"

#include <stdlib.h>
#include <string.h>

const dg_target *const dg_targets[] = {
    &dg_target_cpu,
    NULL,
};

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
