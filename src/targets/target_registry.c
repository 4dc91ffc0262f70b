/* The registry: every kind of device the library knows (kinds.def) and
 * the targets built into this copy (dg_targets_builtin.h, which meson.build
 * generates from kinds.def, the options and what it found), in the order
 * devices are listed, the CPU first: it is always present. */
#include "target.h"

#include "dg_targets_builtin.h"

#include <stdlib.h>
#include <string.h>

/* Each kind is one bit of dg_device_kind (graph.h, whose values are ABI),
 * and no two share one. */
#define DG_KIND(e, name, colour, prefix)                                            \
  _Static_assert(DG_DEVICE_##e > 0 &&                                          \
                     (DG_DEVICE_##e & (DG_DEVICE_##e - 1)) == 0,               \
                 "kinds.def: DG_DEVICE_" #e " is not a single bit");
#include "kinds.def"
#undef DG_KIND
/* Distinct bits: their union equals their sum. */
enum {
  KINDS_OR = 0
#define DG_KIND(e, name, colour, prefix) | DG_DEVICE_##e
#include "kinds.def"
#undef DG_KIND
  ,
  KINDS_SUM = 0
#define DG_KIND(e, name, colour, prefix) +DG_DEVICE_##e
#include "kinds.def"
#undef DG_KIND
};
_Static_assert(KINDS_OR == KINDS_SUM, "kinds.def: two kinds share a bit");

static const struct kind_entry {
  dg_device_kind kind;
  const char *name, *colour;
} kinds[] = {
#define DG_KIND(e, n, c, prefix) {DG_DEVICE_##e, #n, c},
#include "kinds.def"
#undef DG_KIND
};

static const struct kind_entry *kind_entry(dg_device_kind k) {
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (kinds[i].kind == k)
      return &kinds[i];
  return NULL;
}

const char *dg_device_kind_name(dg_device_kind kind) {
  const struct kind_entry *e = kind_entry(kind);
  return e ? e->name : "?";
}

const char *dg_device_kind_colour(dg_device_kind kind) {
  const struct kind_entry *e = kind_entry(kind);
  return e ? e->colour : "white";
}

unsigned dg_device_kinds_all(void) { return KINDS_OR; }

dg_device_kind dg_device_kind_from_name(const char *name) {
  for (size_t i = 0; name && i < sizeof kinds / sizeof *kinds; i++)
    if (!strcmp(name, kinds[i].name))
      return kinds[i].kind;
  return (dg_device_kind)0;
}

#define X(n) extern const dg_target dg_target_##n;
DG_TARGETS_BUILTIN(X)
#undef X

static const dg_target *const all_targets[] = {&dg_target_cpu,
#define X(n) &dg_target_##n,
                                               DG_TARGETS_BUILTIN(X)
#undef X
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
