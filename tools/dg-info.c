/* dg-info: lists the devices directgraph finds, what each runs, and where
 * the cache lives.
 *
 *   dg-info [--json]
 *
 * --json prints one JSON object per device instead (usage() below, or
 * dg-info --help). */
#include "common/cli.h"
#include "graph.h"

#include <stdio.h>
#include <string.h>

/* The help: the one place that lists the options. */
static void usage(FILE *f) {
  fputs("usage: dg-info [--json]\n"
        "\n"
        "Lists the devices directgraph finds (index, name, kind, driver, the\n"
        "dtypes and ops each runs, how its int8 results may deviate), the\n"
        "kernel cache directory, and for each device kind with no device why\n"
        "not (not built, left out, or the driver's reason).\n"
        "\n"
        "  --json      one JSON object per device, then one per kind without\n"
        "              a device, no cache line (default: the text listing)\n"
        "  -h, --help  print this help and exit\n"
        "\n"
        "Examples:\n"
        "  dg-info                 the devices, and why a kind has none\n"
        "  dg-info --json | grep vulkan\n"
        "\n"
        "Environment: DG_CACHE_DIR (the cache folder), DG_NPU_DEVICE (the NPU\n"
        "backend: rocket, rknpu, a /dev path, sim or none), VK_ICD_FILENAMES\n"
        "and OCL_ICD_VENDORS (the drivers the loaders find);\n"
        "docs/environment.md lists the library's.\n"
        "Exit status: 0 done, 1 no context, 2 a bad argument.\n",
        f);
}

int main(int argc, char **argv) {
  int json = 0;
  for (int i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--json")) {
      json = 1;
    } else {
      return cli_unknown("dg-info", argv[i]);
    }
  }
  dg_context *ctx;
  dg_status st = dg_context_create(NULL, &ctx);
  if (st != DG_OK) {
    fprintf(stderr, "dg-info: cannot create a context: %s\n",
            dg_status_string(st));
    return 1;
  }
  if (!json)
    printf("directgraph %s\ncache: %s\n\n", dg_version_string(),
           dg_context_cache_dir(ctx) ? dg_context_cache_dir(ctx)
                                     : "(disabled)");
  for (int i = 0; i < dg_context_device_count(ctx); i++) {
    dg_device_info d;
    dg_context_device_info(ctx, i, &d);
    char dtypes[64] = "", ops[512] = "";
    for (int t = 1; t < DG_DTYPE_COUNT_; t++)
      if (d.dtypes & (1u << t))
        snprintf(dtypes + strlen(dtypes), sizeof dtypes - strlen(dtypes),
                 "%s%s", *dtypes ? " " : "", dg_dtype_name((dg_dtype)t));
    for (int op = 1; op < DG_OP_COUNT_; op++)
      if (dg_device_supports(ctx, i, (dg_op)op))
        snprintf(ops + strlen(ops), sizeof ops - strlen(ops), "%s%s",
                 *ops ? " " : "", dg_op_name((dg_op)op));
    if (json) {
      printf("{\"index\": %d, \"kind\": \"%s\", \"name\": \"%s\", "
             "\"driver\": \"%s\", \"dtypes\": \"%s\", \"ops\": \"%s\", "
             "\"simulator\": %d, \"cpu_hosted\": %d, "
             "\"int8_max_lsb_deviation\": %d}\n",
             i, dg_device_kind_name(d.kind), d.name, d.driver, dtypes, ops,
             d.is_simulator, d.cpu_hosted, d.int8_max_lsb_deviation);
      continue;
    }
    printf("device %d: %s\n  kind:    %s%s\n  driver:  %s\n  dtypes:  %s\n"
           "  ops:     %s\n  int8:    %s\n\n",
           i, d.name, dg_device_kind_name(d.kind),
           d.is_simulator ? " (simulator)"
           : d.cpu_hosted ? " (computes on the host CPU: placement picks it "
                            "only when asked)"
                          : "",
           d.driver, dtypes, ops,
           d.int8_max_lsb_deviation ? "may differ by +-1 LSB"
                                    : "bit-exact with the numerics contract");
  }
  /* Every kind without a device, and why: the answer to "why is only
   * the CPU listed" (docs/troubleshooting.md). */
  for (unsigned k = 1; k <= DG_DEVICE_NPU; k <<= 1) {
    const char *why = dg_context_device_absence(ctx, (dg_device_kind)k);
    if (!why)
      continue;
    if (json)
      printf("{\"kind\": \"%s\", \"absent\": \"%s\"}\n",
             dg_device_kind_name((dg_device_kind)k), why);
    else
      printf("no %s device: %s\n", dg_device_kind_name((dg_device_kind)k), why);
  }
  dg_context_destroy(ctx);
  return 0;
}
