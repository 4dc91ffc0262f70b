/* The base of every layer (core): structured diagnostics and the small
 * string helpers each layer reports with. The public names of statuses
 * and dtypes (dg_status_string, dg_dtype_name, dg_dtype_size) are defined
 * in diag.c too. */
#ifndef DG_CORE_DIAG_H
#define DG_CORE_DIAG_H

#include "graph.h"

#include <stddef.h>
#include <stdint.h>

/* Fills a diagnostic. Any string may be NULL; each is shortened visibly
 * (dg_name_shorten) to its field, and a message that does not fit ends in
 * "...". Names quoted in fmt's arguments should be display copies, so that
 * the rest of the message fits. */
void dg_diag_set(dg_diagnostic *d, dg_status st, int node_index,
                 const char *node_name, const char *op, const char *field,
                 const char *expected, const char *actual, const char *fmt,
                 ...) __attribute__((format(printf, 9, 10)));

/* Copies src into dst[size] with truncation, always terminated. */
void dg_strlcpy(char *dst, const char *src, size_t size);

/* Formats dims as "[1, 3, 32, 32]". */
void dg_format_dims(char *buf, size_t size, int rank, const int64_t *dims);

#endif
