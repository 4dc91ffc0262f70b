/* EP options. ORT stores the key/value pairs given to
 * SessionOptionsAppendExecutionProvider_V2 as session config entries named
 * "ep.<lowercase EP name>.<key>"; CreateEp reads them back here.
 *
 *   device_kinds  "cpu,vulkan,opencl,npu" (any subset; default: all)
 *   devices       "0,2": directgraph device indices (default: all)
 *   policy        "auto" (default) or "strict"
 *   precision     "exact" (default) or "fast_f16"
 *                 (dg_compile_options.precision: f32 subgraphs in f16
 *                 storage where an allowed GPU computes in f16)
 *
 * auto: nodes no allowed device runs stay with ONNX Runtime (declined).
 * strict: such nodes are claimed anyway and session creation fails with
 * directgraph's diagnostic, instead of silently running elsewhere. */
#include "ep_internal.h"

#include "targets/target.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX "ep.directgraphexecutionprovider."

/* The value of key, or NULL when unset (buf receives it). */
static const char *get(const ep_ort *o, const OrtSessionOptions *so,
                       const char *key, char *buf, size_t len) {
  char full[128];
  int has = 0;
  size_t size = len;
  snprintf(full, sizeof full, PREFIX "%s", key);
  if (ep_failed(o,
                DG_ORT_FN(o->api, ORT_SLOT_HasSessionConfigEntry,
                          ort_has_config_fn)(so, full, &has),
                NULL, 0) ||
      !has)
    return NULL;
  if (ep_failed(o,
                DG_ORT_FN(o->api, ORT_SLOT_GetSessionConfigEntry,
                          ort_get_config_fn)(so, full, buf, &size),
                NULL, 0))
    return NULL;
  return buf;
}

/* Splits a comma list; calls item() per trimmed, non-empty word. */
static bool each_item(const char *list, bool (*item)(const char *, void *),
                      void *user) {
  char word[64];
  const char *p = list;
  while (*p) {
    size_t n = strcspn(p, ",");
    const char *s = p, *e = p + n;
    while (s < e && isspace((unsigned char)*s))
      s++;
    while (e > s && isspace((unsigned char)e[-1]))
      e--;
    if (e > s) {
      if ((size_t)(e - s) >= sizeof word)
        return false;
      memcpy(word, s, (size_t)(e - s));
      word[e - s] = 0;
      if (!item(word, user))
        return false;
    }
    p += n + (p[n] == ',');
  }
  return true;
}

/* Kind names are the library's own (src/targets/kinds.def). */
static bool kind_item(const char *w, void *user) {
  dg_device_kind k = dg_device_kind_from_name(w);
  if (k)
    *(unsigned *)user |= (unsigned)k;
  return k != 0;
}

static bool device_item(const char *w, void *user) {
  ep_options *o = user;
  char *end;
  long v = strtol(w, &end, 10);
  if (*end || v < 0 || v > 1000 || o->device_count >= EP_MAX_DEVICES)
    return false;
  o->devices[o->device_count++] = (int)v;
  return true;
}

bool ep_options_read(const ep_ort *o, const OrtSessionOptions *so,
                     ep_options *out, char *err, size_t len) {
  char buf[256];
  const char *v;
  memset(out, 0, sizeof *out);
  if (!so)
    return true;
  if ((v = get(o, so, "policy", buf, sizeof buf))) {
    if (!strcmp(v, "auto"))
      out->policy = DG_POLICY_AUTO;
    else if (!strcmp(v, "strict"))
      out->policy = DG_POLICY_STRICT;
    else {
      snprintf(err, len, "policy '%s': expected auto or strict", v);
      return false;
    }
  }
  if ((v = get(o, so, "precision", buf, sizeof buf))) {
    if (!strcmp(v, "exact"))
      out->precision = DG_PRECISION_EXACT;
    else if (!strcmp(v, "fast_f16"))
      out->precision = DG_PRECISION_FAST_F16;
    else {
      snprintf(err, len, "precision '%s': expected exact or fast_f16", v);
      return false;
    }
  }
  if ((v = get(o, so, "device_kinds", buf, sizeof buf)) &&
      !each_item(v, kind_item, &out->device_kinds)) {
    char names[128] = "";
    unsigned all = dg_device_kinds_all();
    for (unsigned bit = 1; bit && bit <= all; bit <<= 1)
      if (all & bit)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                 names[0] ? ", " : "",
                 dg_device_kind_name((dg_device_kind)bit));
    snprintf(err, len, "device_kinds '%s': expected a comma list of %s", v,
             names);
    return false;
  }
  if ((v = get(o, so, "devices", buf, sizeof buf)) &&
      !each_item(v, device_item, out)) {
    snprintf(err, len,
             "devices '%s': expected at most %d comma-separated "
             "device indices",
             v, EP_MAX_DEVICES);
    return false;
  }
  return true;
}

dg_compile_options ep_compile_options(const ep_options *opts) {
  dg_compile_options c = {.policy = opts->policy,
                          .device_kinds = opts->device_kinds,
                          .devices = opts->device_count ? opts->devices : NULL,
                          .device_count = opts->device_count,
                          .precision = opts->precision};
  return c;
}
