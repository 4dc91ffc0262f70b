/* Argument checks for the examples and tools (cli.h). */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_is_help(const char *a) {
  return !strcmp(a, "--help") || !strcmp(a, "-h");
}

const char *cli_value(const char *prog, int argc, char **argv, int *i,
                      const char *what) {
  /* "--dot --plan" would otherwise write a file named --plan. */
  if (*i + 1 >= argc || !strncmp(argv[*i + 1], "--", 2)) {
    fprintf(stderr, "%s: %s needs a value: %s\n", prog, argv[*i], what);
    return NULL;
  }
  return argv[++*i];
}

/* The whole of v as a decimal integer: strtoll alone would take "12abc"
 * as 12, " 7" as 7 and "" as 0. */
static int parse_ll(const char *v, long long *out) {
  if (!*v || isspace((unsigned char)*v))
    return -1;
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (errno || *end)
    return -1;
  *out = x;
  return 0;
}

int cli_long(const char *prog, const char *opt, const char *v, long long lo,
             long long hi, long long *out) {
  if (!v)
    return -1;
  long long x;
  if (parse_ll(v, &x) || x < lo || x > hi) {
    if (hi == LLONG_MAX || hi == INT_MAX)
      fprintf(stderr, "%s: %s got '%s'; valid: an integer >= %lld\n", prog, opt,
              v, lo);
    else
      fprintf(stderr, "%s: %s got '%s'; valid: an integer in %lld..%lld\n",
              prog, opt, v, lo, hi);
    return -1;
  }
  *out = x;
  return 0;
}

int cli_int(const char *prog, const char *opt, const char *v, int lo, int hi,
            int *out) {
  long long x;
  if (cli_long(prog, opt, v, lo, hi, &x))
    return -1;
  *out = (int)x;
  return 0;
}

int cli_device(const char *prog, const char *opt, const char *v,
               const dg_context *ctx, int *out) {
  if (!v)
    return -1;
  int n = dg_context_device_count(ctx);
  long long x;
  if (!parse_ll(v, &x) && x >= 0 && x < n) {
    *out = (int)x;
    return 0;
  }
  /* Every valid index with what it is (as dg-info would show it), so the
   * refusal alone is enough to pick one. */
  fprintf(stderr, "%s: %s got '%s'; valid:", prog, opt, v);
  for (int d = 0; d < n; d++) {
    dg_device_info info;
    if (dg_context_device_info(ctx, d, &info) == DG_OK)
      fprintf(stderr, "%s %d (%s: %s)", d ? "," : "", d,
              dg_device_kind_name(info.kind), info.name);
  }
  fprintf(stderr, "\n");
  return -1;
}

static void print_names(const char *const *names, int n) {
  for (int k = 0; k < n; k++)
    fprintf(stderr, "%s%s", k ? "," : "", names[k]);
}

int cli_list(const char *prog, const char *opt, const char *v,
             const char *const *names, int n, unsigned *mask) {
  if (!v)
    return -1;
  unsigned m = 0;
  for (const char *p = v;; p++) {
    size_t len = strcspn(p, ",");
    int k = 0;
    while (k < n && (strlen(names[k]) != len || strncmp(p, names[k], len)))
      k++;
    if (k == n) {
      /* The item, and the whole list when it is more than the item. */
      fprintf(stderr, "%s: %s got ", prog, opt);
      if (!len)
        fprintf(stderr, "an empty name in '%s'", v);
      else if (len < strlen(v))
        fprintf(stderr, "'%.*s' in '%s'", (int)len, p, v);
      else
        fprintf(stderr, "'%s'", v);
      fprintf(stderr, "; valid: a comma-separated list of ");
      print_names(names, n);
      fprintf(stderr, "\n");
      return -1;
    }
    m |= 1u << k;
    p += len;
    if (!*p)
      break;
  }
  *mask = m;
  return 0;
}

int cli_kinds(const char *prog, const char *opt, const char *v,
              unsigned *mask) {
  /* The names as the library spells them, bit k for kind 1 << k. */
  enum { NKINDS = 4 };
  const char *names[NKINDS];
  for (int k = 0; k < NKINDS; k++)
    names[k] = dg_device_kind_name((dg_device_kind)(1u << k));
  return cli_list(prog, opt, v, names, NKINDS, mask);
}

int cli_unknown(const char *prog, const char *a) {
  if (a[0] == '-' && a[1])
    fprintf(stderr, "%s: unknown option '%s' (%s --help lists them)\n", prog, a,
            prog);
  else
    fprintf(stderr,
            "%s: unexpected argument '%s' (%s --help lists what it "
            "takes)\n",
            prog, a, prog);
  return CLI_USAGE;
}
