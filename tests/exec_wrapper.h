/* Tests that start another program of the build (themselves again, or
 * tools/npu-hw-check) go through $MESON_EXE_WRAPPER when it is set. meson
 * test sets it for a cross build from the cross file's exe_wrapper, and
 * tests/aarch64/run.sh sets it to its qemu-aarch64-static command: under
 * user-mode emulation without binfmt_misc the kernel cannot start an
 * aarch64 program, so an exec of one from the emulated test fails with
 * ENOEXEC, while the wrapper (a host program) can. Unset, the program is
 * started directly, as on the machine it was built for.
 *
 * Needs _POSIX_C_SOURCE >= 200112L (or _GNU_SOURCE) before the first
 * system header. */
#ifndef DG_TEST_EXEC_WRAPPER_H
#define DG_TEST_EXEC_WRAPPER_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The wrapper command, or "" when there is none; it is a shell command
 * prefix (meson quotes it for the shell), for system(). */
static __attribute__((unused)) const char *t_exe_wrapper(void) {
  const char *w = getenv("MESON_EXE_WRAPPER");
  return w ? w : "";
}

/* execv(path, argv) through the wrapper. Without a shell in between (a
 * shell would be an exec of a host program with the test's LD_PRELOAD),
 * the wrapper is split at blanks: meson quotes only arguments holding
 * other characters, which an emulator command line does not need. Returns
 * only on failure, as execv does. */
static __attribute__((unused)) int t_execv(const char *path,
                                           char *const argv[]) {
  const char *w = t_exe_wrapper();
  if (!*w)
    return execv(path, argv);
  static char words[1024];
  char *args[64];
  size_t n = 0, len = strlen(w);
  if (len >= sizeof words)
    return -1;
  memcpy(words, w, len + 1);
  for (char *p = strtok(words, " \t"); p && n < 32; p = strtok(NULL, " \t"))
    args[n++] = p;
  args[n++] = (char *)path;
  for (int i = 1; argv[0] && argv[i] && n < 63; i++)
    args[n++] = argv[i];
  args[n] = NULL;
  return execvp(args[0], args);
}

#endif
