/* The one place that calls getenv (env.h). */
#include "env.h"

#include <stdlib.h>

static const char *const names[] = {
#define DG_ENV(id, name, reader, what) name,
#include "env.def"
#undef DG_ENV
};

const char *dg_env_name(dg_env_id id) {
  return id >= 0 && id < DG_ENV_COUNT_ ? names[id] : "?";
}

const char *dg_env(dg_env_id id) {
  return id >= 0 && id < DG_ENV_COUNT_ ? getenv(names[id]) : NULL;
}
