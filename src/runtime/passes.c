/* The compile-time passes, in their order (passes.h). */
#include "passes.h"

#include "core/env.h"
#include "fold_bn.h"
#include "fuse_act.h"
#include "fuse_bias.h"
#include "fuse_residual.h"
#include "fuse_silu.h"
#include "fuse_unary.h"
#include "simplify.h"

#include <string.h>

/* One pass, as its own rewrite: each sees the graph the previous one
 * left. dev_fn passes take the session's device question. */
typedef struct pass {
  bool (*fn)(dg_rewrite *rw);
  bool (*dev_fn)(dg_rewrite *rw, const dg_pass_devices *devs);
} pass;

static bool simplify(dg_rewrite *rw) {
  dg_simplify(rw);
  return true;
}

static const pass passes[] = {
    {simplify, NULL},      {dg_fold_batch_norm, NULL},
    {dg_fuse_silu, NULL},  {NULL, dg_fuse_residual},
    {NULL, dg_fuse_bias},  {dg_fuse_activations, NULL},
    {NULL, dg_fuse_unary},
};

bool dg_passes_run(dg_ir *ir, const dg_pass_devices *devs) {
  const char *e = dg_env(DG_ENV_PASSES);
  if (e && !strcmp(e, "none"))
    return true;
  for (size_t k = 0; k < sizeof passes / sizeof passes[0]; k++) {
    if (passes[k].dev_fn && !devs)
      continue;
    dg_rewrite rw;
    if (!dg_rewrite_begin(&rw, ir))
      return false;
    bool ok = passes[k].fn ? passes[k].fn(&rw) : passes[k].dev_fn(&rw, devs);
    dg_rewrite_end(&rw);
    if (!ok)
      return false;
  }
  return true;
}
