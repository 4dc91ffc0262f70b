/* The environment variables the library reads, from the one table
 * (env.def, which documents each): dg_env(DG_ENV_CACHE_DIR) is the only
 * way a part reads DG_CACHE_DIR, so that no part reads a variable the
 * table does not list. Values are read when asked for (tests change some
 * between contexts); env.def says when each part asks. */
#ifndef DG_CORE_ENV_H
#define DG_CORE_ENV_H

typedef enum dg_env_id {
#define DG_ENV(id, name, reader, what) DG_ENV_##id,
#include "env.def"
#undef DG_ENV
  DG_ENV_COUNT_
} dg_env_id;

/* The variable's value, NULL when it is unset. */
const char *dg_env(dg_env_id id);
/* Its name ("DG_CACHE_DIR"). */
const char *dg_env_name(dg_env_id id);

#endif
