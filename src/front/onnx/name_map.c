/* Open addressing with linear probing over FNV-1a hashes (name_map.h). */
#include "name_map.h"

#include <stdlib.h>
#include <string.h>

static uint32_t hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

int dg_name_map_find(const dg_name_map *m, const char *name, dg_name_of name_of,
                     const void *ctx) {
  if (!m->slot || !name)
    return -1;
  for (uint32_t h = hash(name) & m->mask;; h = (h + 1) & m->mask) {
    int32_t e = m->slot[h];
    if (!e)
      return -1;
    if (!strcmp(name_of(ctx, e - 1), name))
      return e - 1;
  }
}

static void place(int32_t *slot, uint32_t mask, const char *name, int32_t e) {
  uint32_t h = hash(name) & mask;
  while (slot[h])
    h = (h + 1) & mask;
  slot[h] = e;
}

bool dg_name_map_insert(dg_name_map *m, const char *name, int i,
                        dg_name_of name_of, const void *ctx) {
  /* Keep the table at most half full, so probes stay short. */
  if (!m->slot || (uint32_t)(m->count + 1) * 2 > m->mask + 1) {
    uint32_t n = m->slot ? (m->mask + 1) * 2 : 64;
    int32_t *slot = calloc(n, sizeof *slot);
    if (!slot)
      return false;
    for (uint32_t k = 0; m->slot && k <= m->mask; k++)
      if (m->slot[k])
        place(slot, n - 1, name_of(ctx, m->slot[k] - 1), m->slot[k]);
    free(m->slot);
    m->slot = slot;
    m->mask = n - 1;
  }
  place(m->slot, m->mask, name, (int32_t)i + 1);
  m->count++;
  return true;
}

void dg_name_map_free(dg_name_map *m) {
  free(m->slot);
  memset(m, 0, sizeof *m);
}
