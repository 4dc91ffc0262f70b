/* One-shot conv2d / fully_connected / matmul: each call builds (once) a
 * one-node graph whose operands are all graph inputs, compiles it on the
 * chosen device and memoises the session in the context under a key made
 * of the op, the device, the descriptors and the parameters. Later calls
 * with the same key only bind buffers and run. */
#include "oneshot.h"
#include "session.h"

#include <stdlib.h>
#include <string.h>

/* The key is the raw bytes of these fields (zeroed first, so padding is
 * deterministic); per-channel scales are appended by value. */
typedef struct oneshot_key {
  dg_op op;
  int device;
  dg_tensor_desc d[4];
  dg_conv2d_params conv;
  dg_activation act;
} oneshot_key;

struct dg_oneshot_entry {
  dg_oneshot_entry *next;
  unsigned char *key;
  size_t key_size;
  dg_session *session;
};

void dg_oneshot_clear(dg_context *ctx) {
  dg_oneshot_entry *e = ctx->oneshots;
  while (e) {
    dg_oneshot_entry *next = e->next;
    dg_session_destroy(e->session);
    free(e->key);
    free(e);
    e = next;
  }
  ctx->oneshots = NULL;
}

static size_t key_append(unsigned char *buf, size_t at,
                         const dg_tensor_desc *d) {
  int n = d->quant.channel_count;
  if (n <= 0)
    return at;
  if (buf)
    memcpy(buf + at, d->quant.channel_scales, sizeof(float) * (size_t)n);
  at += sizeof(float) * (size_t)n;
  if (d->quant.channel_zero_points && buf)
    memcpy(buf + at, d->quant.channel_zero_points, sizeof(int32_t) * (size_t)n);
  return at + sizeof(int32_t) * (size_t)n;
}

/* Serialises the key; returns its size (buf may be NULL to measure). */
static size_t make_key(unsigned char *buf, dg_op op, int device,
                       const dg_tensor_desc *const *d, int nd,
                       const dg_conv2d_params *cp, dg_activation act) {
  oneshot_key k;
  memset(&k, 0, sizeof k);
  k.op = op;
  k.device = device;
  for (int i = 0; i < nd; i++)
    if (d[i]) {
      k.d[i].dtype = d[i]->dtype;
      k.d[i].rank = d[i]->rank;
      for (int r = 0; r < d[i]->rank && r < DG_MAX_RANK; r++)
        k.d[i].dims[r] = d[i]->dims[r];
      k.d[i].quant.scale = d[i]->quant.scale;
      k.d[i].quant.zero_point = d[i]->quant.zero_point;
      k.d[i].quant.axis = d[i]->quant.axis;
      k.d[i].quant.channel_count = d[i]->quant.channel_count;
    }
  if (cp)
    k.conv = *cp;
  k.act = act;
  if (buf)
    memcpy(buf, &k, sizeof k);
  size_t at = sizeof k;
  for (int i = 0; i < nd; i++)
    if (d[i])
      at = key_append(buf, at, d[i]);
  return at;
}

static bool is_q8(const dg_tensor_desc *d) {
  return d && (d->dtype == DG_DTYPE_I8 || d->dtype == DG_DTYPE_U8);
}

/* Builds the one-node graph for op; returns the compiled session. */
static dg_status build(dg_context *ctx, dg_op op, int device,
                       const dg_tensor_desc *const *d,
                       const dg_conv2d_params *cp, dg_activation act,
                       dg_session **out, dg_diagnostic *diag) {
  static const char *const names[3] = {"x", "w", "b"};
  dg_graph *g = dg_graph_create(ctx, "oneshot");
  if (!g)
    return DG_ERROR_OUT_OF_MEMORY;
  dg_tensor t[3] = {DG_TENSOR_NONE, DG_TENSOR_NONE, DG_TENSOR_NONE};
  for (int i = 0; i < 3; i++)
    if (d[i])
      t[i] = dg_graph_input(g, names[i], d[i]);
  dg_graph_set_device(g, device);
  const dg_tensor_desc *yd = d[3];
  bool q = is_q8(d[0]);
  dg_tensor y = DG_TENSOR_NONE;
  if (op == DG_OP_CONV2D)
    y = q ? dg_graph_qconv2d(g, "conv2d", t[0], t[1], t[2], cp,
                             yd ? yd->dtype : DG_DTYPE_INVALID,
                             yd ? &yd->quant : NULL)
          : dg_graph_conv2d(g, "conv2d", t[0], t[1], t[2], cp);
  else if (op == DG_OP_FULLY_CONNECTED)
    y = q ? dg_graph_qfully_connected(g, "fully_connected", t[0], t[1], t[2],
                                      act, yd ? yd->dtype : DG_DTYPE_INVALID,
                                      yd ? &yd->quant : NULL)
          : dg_graph_fully_connected(g, "fully_connected", t[0], t[1], t[2],
                                     act);
  else
    y = q ? dg_graph_qmatmul(g, "matmul", t[0], t[1],
                             yd ? yd->dtype : DG_DTYPE_INVALID,
                             yd ? &yd->quant : NULL)
          : dg_graph_matmul(g, "matmul", t[0], t[1]);
  dg_graph_output(g, "y", y, DG_LAYOUT_NCHW);
  dg_status st;
  if (dg_graph_status(g) != DG_OK) {
    if (diag)
      *diag = *dg_graph_error(g);
    st = dg_graph_status(g);
  } else {
    dg_compile_options o = {.policy = device >= 0 ? DG_POLICY_STRICT
                                                  : DG_POLICY_AUTO};
    st = dg_graph_compile(g, &o, out, diag);
  }
  dg_graph_destroy(g);
  return st;
}

static dg_status oneshot_locked(dg_context *ctx, dg_op op, int device,
                                const dg_tensor_desc *const *d,
                                const void *const *data,
                                const dg_conv2d_params *cp, dg_activation act,
                                void *y, size_t y_size, dg_diagnostic *diag);

static dg_status oneshot(dg_context *ctx, dg_op op, int device,
                         const dg_tensor_desc *const *d,
                         const void *const *data, const dg_conv2d_params *cp,
                         dg_activation act, void *y, size_t y_size,
                         dg_diagnostic *diag) {
  if (!dg_context_alive(ctx)) {
    dg_diag_set(diag, DG_ERROR_INVALID_ARGUMENT, -1, NULL, dg_op_name(op),
                "ctx", "a live context", ctx ? "not a live context" : "NULL",
                "dg_oneshot_%s: ctx is %s", dg_op_name(op),
                ctx ? "not a live context (destroyed?)" : "NULL");
    return DG_ERROR_INVALID_ARGUMENT;
  }
  /* Callers on other threads wait here rather than being refused: the
   * call is documented as safe from any thread. */
  pthread_mutex_lock(&ctx->oneshot_lock);
  dg_status st =
      oneshot_locked(ctx, op, device, d, data, cp, act, y, y_size, diag);
  pthread_mutex_unlock(&ctx->oneshot_lock);
  return st;
}

static dg_status oneshot_locked(dg_context *ctx, dg_op op, int device,
                                const dg_tensor_desc *const *d,
                                const void *const *data,
                                const dg_conv2d_params *cp, dg_activation act,
                                void *y, size_t y_size, dg_diagnostic *diag) {
  if (!d[0] || !d[1] || !data[0] || !data[1] || !y || (d[2] && !data[2]) ||
      (!d[2] && data[2])) {
    dg_diag_set(diag, DG_ERROR_INVALID_ARGUMENT, -1, NULL, dg_op_name(op), NULL,
                NULL, NULL,
                "dg_oneshot_%s: a required pointer is NULL (context, "
                "operand descriptors and data, output) or bias data and "
                "descriptor disagree",
                dg_op_name(op));
    return DG_ERROR_INVALID_ARGUMENT;
  }
  size_t ks = make_key(NULL, op, device, d, 4, cp, act);
  unsigned char *key = malloc(ks);
  if (!key)
    return DG_ERROR_OUT_OF_MEMORY;
  make_key(key, op, device, d, 4, cp, act);
  dg_oneshot_entry *e = ctx->oneshots;
  while (e && !(e->key_size == ks && !memcmp(e->key, key, ks)))
    e = e->next;
  if (!e) {
    dg_session *s;
    dg_status st = build(ctx, op, device, d, cp, act, &s, diag);
    if (st != DG_OK) {
      free(key);
      return st;
    }
    e = calloc(1, sizeof *e);
    if (!e) {
      dg_session_destroy(s);
      free(key);
      return DG_ERROR_OUT_OF_MEMORY;
    }
    e->key = key;
    e->key_size = ks;
    e->session = s;
    e->next = ctx->oneshots;
    ctx->oneshots = e;
  } else {
    free(key);
  }
  static const char *const names[3] = {"x", "w", "b"};
  dg_binding in[3];
  int n = 0;
  for (int i = 0; i < 3; i++)
    if (d[i])
      in[n++] = (dg_binding){names[i], (void *)data[i], dg_desc_bytes(d[i])};
  dg_binding out = {"y", y, y_size};
  return dg_session_run(e->session, in, n, &out, 1, diag);
}

dg_status dg_oneshot_conv2d(dg_context *ctx, int device_index,
                            const dg_tensor_desc *x_desc, const void *x,
                            const dg_tensor_desc *w_desc, const void *w,
                            const dg_tensor_desc *b_desc, const void *b,
                            const dg_conv2d_params *params,
                            const dg_tensor_desc *y_desc, void *y,
                            size_t y_size, dg_diagnostic *diag) {
  const dg_tensor_desc *d[4] = {x_desc, w_desc, b_desc,
                                is_q8(x_desc) ? y_desc : NULL};
  const void *data[3] = {x, w, b};
  dg_conv2d_params none = {0};
  return oneshot(ctx, DG_OP_CONV2D, device_index, d, data,
                 params ? params : &none, DG_ACTIVATION_NONE, y, y_size, diag);
}

dg_status dg_oneshot_fully_connected(
    dg_context *ctx, int device_index, const dg_tensor_desc *x_desc,
    const void *x, const dg_tensor_desc *w_desc, const void *w,
    const dg_tensor_desc *b_desc, const void *b, dg_activation activation,
    const dg_tensor_desc *y_desc, void *y, size_t y_size, dg_diagnostic *diag) {
  const dg_tensor_desc *d[4] = {x_desc, w_desc, b_desc,
                                is_q8(x_desc) ? y_desc : NULL};
  const void *data[3] = {x, w, b};
  return oneshot(ctx, DG_OP_FULLY_CONNECTED, device_index, d, data, NULL,
                 activation, y, y_size, diag);
}

dg_status dg_oneshot_matmul(dg_context *ctx, int device_index,
                            const dg_tensor_desc *a_desc, const void *a,
                            const dg_tensor_desc *b_desc, const void *b,
                            const dg_tensor_desc *y_desc, void *y,
                            size_t y_size, dg_diagnostic *diag) {
  const dg_tensor_desc *d[4] = {a_desc, b_desc, NULL,
                                is_q8(a_desc) ? y_desc : NULL};
  const void *data[3] = {a, b, NULL};
  return oneshot(ctx, DG_OP_MATMUL, device_index, d, data, NULL,
                 DG_ACTIVATION_NONE, y, y_size, diag);
}
