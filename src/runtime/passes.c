/* The compile-time passes, in their order (passes.h). */
#include "passes.h"

#include "core/env.h"
#include "fast_f16.h"
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
  bool (*note_fn)(dg_rewrite *rw, dg_pass_devices *devs); /* runs
                                   even under DG_PASSES=none */
} pass;

static bool simplify(dg_rewrite *rw) {
  dg_simplify(rw);
  return true;
}

/* fast_f16 is the compile's precision choice, not an optimisation:
 * DG_PASSES=none leaves it on. */
static const pass passes[] = {
    {simplify, NULL, NULL},
    {dg_fold_batch_norm, NULL, NULL},
    {NULL, NULL, dg_fast_f16},
    {dg_fuse_silu, NULL, NULL},
    {NULL, dg_fuse_residual, NULL},
    {NULL, dg_fuse_bias, NULL},
    {dg_fuse_activations, NULL, NULL},
    {NULL, dg_fuse_unary, NULL},
};

bool dg_passes_run(dg_ir *ir, dg_pass_devices *devs) {
  const char *e = dg_env(DG_ENV_PASSES);
  bool none = e && !strcmp(e, "none");
  for (size_t k = 0; k < sizeof passes / sizeof passes[0]; k++) {
    if ((passes[k].dev_fn || passes[k].note_fn) && !devs)
      continue;
    if (none && !passes[k].note_fn)
      continue;
    dg_rewrite rw;
    if (!dg_rewrite_begin(&rw, ir))
      return false;
    bool ok = passes[k].fn       ? passes[k].fn(&rw)
              : passes[k].dev_fn ? passes[k].dev_fn(&rw, devs)
                                 : passes[k].note_fn(&rw, devs);
    dg_rewrite_end(&rw);
    if (!ok)
      return false;
  }
  return true;
}
