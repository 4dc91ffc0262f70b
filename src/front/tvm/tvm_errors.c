/* Error reporting of the TVM entry points. The message is always kept in a
 * thread-local buffer (so plain C callers and tests can read it) and, when
 * libtvm_ffi is in the process, also raised through its
 * TVMFFIErrorSetRaisedFromCStr so that TVM turns our -1 into a proper
 * exception. The symbol is looked up at error time, not at load time,
 * because the library must not link against libtvm_ffi, and libtvm_ffi may
 * be loaded after us (tvm_ffi.load_module loads us into a running TVM, a
 * plain C host never loads it). */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "tvm_internal.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[1024];

const char *dg_tvm_last_error(void) { return last_error; }

static void raise_kept(const char *kind) {
  /* POSIX's idiom for turning dlsym's void* into a function pointer
   * without a cast ISO C warns about. */
  dg_ffi_raise_fn raise;
  void *sym = dlsym(RTLD_DEFAULT, DG_FFI_RAISE_SYMBOL);
  *(void **)&raise = sym;
  if (raise)
    raise(kind ? kind : "RuntimeError", last_error);
}

int dg_tvm_raise(const char *kind, const char *message) {
  snprintf(last_error, sizeof last_error, "%s", message ? message : "");
  raise_kept(kind);
  return -1;
}

int dg_tvm_fail(const char *kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  raise_kept(kind);
  return -1;
}

int dg_tvm_fail_status(const char *fn, dg_status st,
                       const dg_diagnostic *diag) {
  const char *kind = "RuntimeError";
  if (st == DG_ERROR_INVALID_ARGUMENT || st == DG_ERROR_INVALID_SHAPE ||
      st == DG_ERROR_OVERFLOW)
    kind = "ValueError";
  else if (st == DG_ERROR_INVALID_DTYPE)
    kind = "TypeError";
  else if (st == DG_ERROR_OUT_OF_MEMORY)
    kind = "MemoryError";
  const char *msg = diag && diag->message[0] ? diag->message : "";
  return dg_tvm_fail(kind, "%s: %s%s%s", fn, dg_status_string(st),
                     msg[0] ? ": " : "", msg);
}
