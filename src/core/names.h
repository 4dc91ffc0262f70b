/* Display copies of names. Graphs keep their names (graph, tensors, nodes,
 * inputs and outputs) whole, at any length; only what is shown is cut: the
 * fixed fields of the public structs (dg_diagnostic, dg_plan_node,
 * dg_verify_report) and the names quoted in messages. A cut name ends in
 * "..." so that it never passes for the whole one.
 *
 * Header-only, so that the ONNX importer and the ORT plugin EP, which use
 * nothing but the public API, shorten the same way. */
#ifndef DG_NAMES_H
#define DG_NAMES_H

#include <stddef.h>
#include <string.h>

/* Bytes of a display copy, terminator included: the public structs'
 * node_name fields. Messages quote names at this length too, so that the
 * rest of a message survives a long name. */
#define DG_NAME_SHORT 64

/* Copies name (NULL: "") into dst[size]. A name that does not fit keeps
 * its longest prefix that leaves room for "..." and does not end inside a
 * UTF-8 sequence, then "...". */
static inline void dg_name_shorten(char *dst, size_t size, const char *name) {
  if (!size)
    return;
  if (!name)
    name = "";
  size_t n = strlen(name);
  if (n < size) {
    memcpy(dst, name, n + 1);
    return;
  }
  if (size < 4) { /* no room for any of the name */
    memset(dst, '.', size - 1);
    dst[size - 1] = 0;
    return;
  }
  size_t keep = size - 4;
  while (keep > 0 && ((unsigned char)name[keep] & 0xc0) == 0x80)
    keep--; /* name[keep] continues a character: cut before its start */
  memcpy(dst, name, keep);
  memcpy(dst + keep, "...", 4);
}

/* Marks a message that vsnprintf/snprintf cut (it returned want >= size)
 * by ending it in "...". */
static inline void dg_text_mark_cut(char *text, size_t size, int want) {
  if (want < 0 || (size_t)want < size || size < 4)
    return;
  size_t at = size - 4;
  while (at > 0 && ((unsigned char)text[at] & 0xc0) == 0x80)
    at--;
  memcpy(text + at, "...", 4);
}

#endif
