/* A hash index from names to entry numbers, for the tables the importer
 * and the translator keep of a model's values: lookups in O(1), so that a
 * model of n nodes imports in O(n) rather than O(n^2) (a 20k-node chain
 * took 2.5 s). The map stores numbers only; the caller's table holds the
 * names, read back through name_of(ctx, i) to compare and to rehash.
 * Names must stay valid (and at the same address) while the map is used;
 * not thread-safe (each translation has its own). */
#ifndef DG_ONNX_NAME_MAP_H
#define DG_ONNX_NAME_MAP_H

#include <stdbool.h>
#include <stdint.h>

typedef const char *(*dg_name_of)(const void *ctx, int i);

typedef struct dg_name_map {
  int32_t *slot; /* entry number + 1; 0: empty. Owned. */
  uint32_t mask; /* slots - 1 (a power of two minus one), or 0 */
  int count;
} dg_name_map;

/* The entry number of name, or -1. */
int dg_name_map_find(const dg_name_map *m, const char *name, dg_name_of name_of,
                     const void *ctx);
/* Records entry i under name (which must not be there yet); false when
 * out of memory (the map is unchanged then). */
bool dg_name_map_insert(dg_name_map *m, const char *name, int i,
                        dg_name_of name_of, const void *ctx);
void dg_name_map_free(dg_name_map *m);

#endif
