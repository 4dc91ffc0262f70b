/* The compile-time passes, in their order (passes.h). */
#include "passes.h"

#include "core/env.h"
#include "fold_bn.h"
#include "fuse_act.h"
#include "fuse_silu.h"
#include "simplify.h"

#include <string.h>

bool dg_passes_run(dg_ir *ir) {
  const char *e = dg_env(DG_ENV_PASSES);
  if (e && !strcmp(e, "none"))
    return true;
  dg_rewrite rw;
  if (!dg_rewrite_begin(&rw, ir))
    return false;
  dg_simplify(&rw);
  dg_rewrite_end(&rw);
  /* Each fusion sees the graph the previous one left. */
  bool (*const fusions[])(dg_rewrite *) = {dg_fold_batch_norm, dg_fuse_silu,
                                           dg_fuse_activations};
  for (size_t k = 0; k < sizeof fusions / sizeof fusions[0]; k++) {
    if (!dg_rewrite_begin(&rw, ir))
      return false;
    bool ok = fusions[k](&rw);
    dg_rewrite_end(&rw);
    if (!ok)
      return false;
  }
  return true;
}
