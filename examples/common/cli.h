/* Command-line argument checks shared by the examples and tools, so that
 * every one of them refuses a bad argument the same way: one line on
 * stderr, "PROG: OPTION got 'VALUE'; valid: ...", and exit status
 * CLI_USAGE. Nothing here falls back to a default: a value that is not
 * exactly what the option takes is an error. Not part of the library. */
#ifndef DG_EXAMPLES_CLI_H
#define DG_EXAMPLES_CLI_H

#include "graph.h"

/* The exit status for a usage error (bad or missing argument). */
enum { CLI_USAGE = 2 };

/* Whether a is --help or -h. */
int cli_is_help(const char *a);

/* The value of the option at argv[*i], stepping *i over it. A missing
 * value (the end of argv, or a next word that is itself an option, "--...")
 * is reported as "PROG: OPT needs a value: WHAT" and gives NULL. */
const char *cli_value(const char *prog, int argc, char **argv, int *i,
                      const char *what);

/* Parses v, the whole of it, as a decimal integer in lo..hi into *out.
 * v NULL (cli_value already reported it) fails silently. 0 or -1. */
int cli_int(const char *prog, const char *opt, const char *v, int lo, int hi,
            int *out);
int cli_long(const char *prog, const char *opt, const char *v, long long lo,
             long long hi, long long *out);

/* Parses v as a device index of ctx; the refusal lists every device with
 * its index, kind and name. 0 or -1. */
int cli_device(const char *prog, const char *opt, const char *v,
               const dg_context *ctx, int *out);

/* Parses v, a comma-separated list of names from names[0..n), into *mask
 * (bit k for names[k]); an unknown or empty item is refused with the
 * valid names. 0 or -1. */
int cli_list(const char *prog, const char *opt, const char *v,
             const char *const *names, int n, unsigned *mask);

/* cli_list over the device kinds (cpu,vulkan,opencl,npu as
 * dg_device_kind_name spells them) into a dg_device_kind mask. */
int cli_kinds(const char *prog, const char *opt, const char *v, unsigned *mask);

/* Reports an option (or extra operand) the tool does not take. Returns
 * CLI_USAGE, for `return cli_unknown(...)`. */
int cli_unknown(const char *prog, const char *a);

#endif
