/* See why.h. */
#include "why.h"

#include <stdarg.h>
#include <stdio.h>

bool dg_npu_why(char *why, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, n, fmt, ap);
  va_end(ap);
  return false;
}
