/* The TVM-FFI entry points of libdirectgraph, called the way TVM calls
 * them: the library is dlopen'ed, every __tvm_ffi_directgraph_* symbol is
 * looked up, and each is called with TVMFFIAny arrays holding tensors in
 * both forms (type 7 DLTensor*, type 70 tensor object), strided and offset
 * tensors included. Results are compared with ref_ops.h (float: numerics.md
 * tolerance; int8: exact). The error paths must return non-zero with a
 * message, both through dg_tvm_last_error and through the
 * TVMFFIErrorSetRaisedFromCStr this program exports in place of
 * libtvm_ffi's. */
#define _GNU_SOURCE
#include "exec_wrapper.h"
#include "ffi_host.h"
#include "harness.h"
#include "ref_ops.h"

#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef DG_LIB_PATH
#define DG_LIB_PATH "libdirectgraph.so"
#endif

static host_lib lib;
static dg_ffi_safe_call f_conv, f_conv_relu, f_dense, f_matmul, f_pool,
    f_relu, f_softmax, f_qconv;

/* ---- the stand-in for libtvm_ffi's error function ---- */
static char hook_kind[64], hook_msg[1024];
static int hook_calls;
__attribute__((visibility("default"))) void
TVMFFIErrorSetRaisedFromCStr(const char *kind, const char *message) {
  snprintf(hook_kind, sizeof hook_kind, "%s", kind);
  snprintf(hook_msg, sizeof hook_msg, "%s", message);
  hook_calls++;
}

static void fill(float *p, long n, float lo, float hi) {
  for (long i = 0; i < n; i++)
    p[i] = t_uniform(lo, hi);
}

/* ": <message>" after a failed call, "" after a good one. */
static const char *why(int rc) {
  static char buf[1100];
  if (!rc)
    return "";
  snprintf(buf, sizeof buf, ": %s", lib.last_error());
  return buf;
}

static int is_none(const dg_ffi_any *r) {
  return r->type_index == DG_FFI_NONE && r->v.v_int64 == 0;
}

/* ---- conv2d ---- */

/* x [2,4,7,6], w [6,2,3,3] (groups 2), stride (2,1), pads (1,0,1,2),
 * dilation (1,2) -> y [2,6,4,4]. */
static ref_conv conv_shape(void) {
  ref_conv c = {.N = 2, .C = 4, .H = 7, .W = 6, .O = 6, .KH = 3, .KW = 3,
                .sh = 2, .sw = 1, .pt = 1, .pl = 0, .dh = 1, .dw = 2,
                .groups = 2};
  c.OH = ref_out(c.H, c.KH, c.sh, 1, 1, c.dh, 0);
  c.OW = ref_out(c.W, c.KW, c.sw, 0, 2, c.dw, 0);
  return c;
}

static void conv_attrs(dg_ffi_any *a, const ref_conv *c) {
  int64_t v[9] = {c->sh, c->sw, c->pt, c->pl, 1, 2, c->dh, c->dw, c->groups};
  for (int i = 0; i < 9; i++)
    a[i] = any_int(v[i]);
}

static void test_conv(int object, int relu, int bias) {
  ref_conv c = conv_shape();
  float x[2 * 4 * 7 * 6], w[6 * 2 * 3 * 3], b[6], y[2 * 6 * 4 * 4],
      want[2 * 6 * 4 * 4];
  fill(x, 336, -1, 1);
  fill(w, 108, -1, 1);
  fill(b, 6, -1, 1);
  host_tensor tx, tw, tb, ty;
  host_tensor_init(&tx, x, host_f32(), 4, (int64_t[]){2, 4, 7, 6});
  host_tensor_init(&tw, w, host_f32(), 4, (int64_t[]){6, 2, 3, 3});
  host_tensor_init(&tb, b, host_f32(), 1, (int64_t[]){6});
  host_tensor_init(&ty, y, host_f32(), 4, (int64_t[]){2, 6, c.OH, c.OW});
  dg_ffi_any a[13] = {any_tensor(&tx, object), any_tensor(&tw, object),
                      bias ? any_tensor(&tb, object) : any_none(),
                      any_tensor(&ty, object)};
  conv_attrs(a + 4, &c);
  ref_conv2d(&c, x, w, bias ? b : NULL, relu, want);
  dg_ffi_any r;
  int rc = host_call(relu ? f_conv_relu : f_conv, a, 13, &r);
  CHECK(rc == 0 && is_none(&r) && ref_close(y, want, 192),
        "conv2d%s %s, %s: rc %d%s", relu ? "_relu" : "",
        object ? "type 70 tensor objects" : "type 7 DLTensor*",
        bias ? "bias" : "bias None", rc, why(rc));
}

/* x is an NHWC buffer seen as NCHW through strides, 16 bytes into its
 * allocation (byte_offset); y is written into a buffer with a gap after
 * every row, which must stay untouched. */
static void test_conv_strided(void) {
  ref_conv c = conv_shape();
  float nchw[336], nhwc[4 + 336], w[108], want[192], ybuf[2 * 6 * 4 * 6];
  fill(nchw, 336, -1, 1);
  fill(w, 108, -1, 1);
  for (int n = 0; n < 2; n++)
    for (int ch = 0; ch < 4; ch++)
      for (int h = 0; h < 7; h++)
        for (int x = 0; x < 6; x++)
          nhwc[4 + ((n * 7 + h) * 6 + x) * 4 + ch] =
              nchw[((n * 4 + ch) * 7 + h) * 6 + x];
  for (int i = 0; i < 288; i++)
    ybuf[i] = 777.0f;
  host_tensor tx, tw, ty;
  host_tensor_init(&tx, nhwc, host_f32(), 4, (int64_t[]){2, 4, 7, 6});
  host_tensor_strides(&tx, (int64_t[]){7 * 6 * 4, 1, 6 * 4, 4});
  tx.obj.dl.byte_offset = 4 * sizeof(float);
  host_tensor_init(&tw, w, host_f32(), 4, (int64_t[]){6, 2, 3, 3});
  host_tensor_init(&ty, ybuf, host_f32(), 4, (int64_t[]){2, 6, 4, 4});
  host_tensor_strides(&ty, (int64_t[]){6 * 4 * 6, 4 * 6, 6, 1});
  dg_ffi_any a[13] = {any_tensor(&tx, 0), any_tensor(&tw, 1), any_none(),
                      any_tensor(&ty, 0)};
  conv_attrs(a + 4, &c);
  ref_conv2d(&c, nchw, w, NULL, 0, want);
  dg_ffi_any r;
  int rc = host_call(f_conv, a, 13, &r);
  float got[192];
  int gaps_ok = 1;
  for (int row = 0; row < 48; row++) {
    memcpy(got + row * 4, ybuf + row * 6, 4 * sizeof(float));
    gaps_ok &= ybuf[row * 6 + 4] == 777.0f && ybuf[row * 6 + 5] == 777.0f;
  }
  CHECK(rc == 0 && ref_close(got, want, 192) && gaps_ok,
        "conv2d with a strided NHWC-as-NCHW input at byte_offset 16 and a "
        "strided output (gaps untouched: %s)", gaps_ok ? "yes" : "no");
}

/* ---- int8 conv ---- */

static void test_qconv(int per_channel) {
  ref_conv c = conv_shape();
  uint8_t xu[336];
  int8_t xi[336], w[108], yi[192], want_i[192];
  uint8_t yu[192], want_u[192];
  int32_t b[6];
  float sw[6];
  for (int i = 0; i < 336; i++) {
    xu[i] = (uint8_t)t_range(0, 255);
    xi[i] = (int8_t)t_range(-128, 127);
  }
  for (int i = 0; i < 108; i++)
    w[i] = (int8_t)t_range(-127, 127);
  for (int i = 0; i < 6; i++) {
    b[i] = t_range(-3000, 3000);
    sw[i] = t_uniform(0.002f, 0.02f);
  }
  float sx = 0.0173f, sy = per_channel ? 0.041f : 0.093f;
  int zx = per_channel ? -3 : 121, zw = per_channel ? 0 : 3,
      zy = per_channel ? 5 : 100, relu = !per_channel;
  host_tensor tx, tw, tb, ty, tsw;
  host_tensor_init(&tx, per_channel ? (void *)xi : (void *)xu,
                   per_channel ? host_i8() : host_u8(), 4,
                   (int64_t[]){2, 4, 7, 6});
  host_tensor_init(&tw, w, host_i8(), 4, (int64_t[]){6, 2, 3, 3});
  host_tensor_init(&tb, b, host_i32(), 1, (int64_t[]){6});
  host_tensor_init(&ty, per_channel ? (void *)yi : (void *)yu,
                   per_channel ? host_i8() : host_u8(), 4,
                   (int64_t[]){2, 6, 4, 4});
  host_tensor_init(&tsw, sw, host_f32(), 1, (int64_t[]){6});
  dg_ffi_any a[20] = {any_tensor(&tx, per_channel), any_tensor(&tw, 0),
                      any_tensor(&tb, 1), any_tensor(&ty, 0),
                      any_float(sx), any_int(zx),
                      per_channel ? any_tensor(&tsw, 0) : any_float(sw[0]),
                      any_int(zw), any_float(sy), any_int(zy)};
  conv_attrs(a + 10, &c);
  a[19] = any_int(relu);
  ref_qconv2d(&c, per_channel ? (void *)xi : (void *)xu, !per_channel, sx, zx,
              w, sw, per_channel ? 6 : 1, zw, b,
              per_channel ? (void *)want_i : (void *)want_u, !per_channel, sy,
              zy, relu);
  dg_ffi_any r;
  int rc = host_call(f_qconv, a, 20, &r);
  int same = per_channel ? !memcmp(yi, want_i, 192) : !memcmp(yu, want_u, 192);
  CHECK(rc == 0 && is_none(&r) && same,
        "qlinear_conv2d %s, bit-exact against numerics.md: rc %d%s",
        per_channel ? "i8 -> i8, per-channel w_scale tensor"
                    : "u8 -> u8, per-tensor, bias, relu",
        rc, why(rc));
}

/* ---- dense, matmul ---- */

static void test_dense(void) {
  float x[2 * 3 * 5], w[4 * 5], b[4], y[24], want[24];
  fill(x, 30, -2, 2);
  fill(w, 20, -1, 1);
  fill(b, 4, -1, 1);
  host_tensor tx, tw, tb, ty;
  host_tensor_init(&tx, x, host_f32(), 3, (int64_t[]){2, 3, 5});
  host_tensor_init(&tw, w, host_f32(), 2, (int64_t[]){4, 5});
  host_tensor_init(&tb, b, host_f32(), 1, (int64_t[]){4});
  host_tensor_init(&ty, y, host_f32(), 3, (int64_t[]){2, 3, 4});
  dg_ffi_any a[4] = {any_tensor(&tx, 1), any_tensor(&tw, 0),
                     any_tensor(&tb, 1), any_tensor(&ty, 0)};
  ref_dense(6, 5, 4, x, w, b, want);
  dg_ffi_any r;
  int rc = host_call(f_dense, a, 4, &r);
  CHECK(rc == 0 && ref_close(y, want, 24),
        "dense x [2,3,5] w [4,5] b [4] -> [2,3,4]: rc %d%s", rc,
        why(rc));
}

static void test_matmul(int object) {
  float a[3 * 4 * 5], b[2 * 1 * 5 * 6], y[2 * 3 * 4 * 6], want[144];
  fill(a, 60, -1, 1);
  fill(b, 60, -1, 1);
  host_tensor ta, tb, ty;
  /* a [3,4,5] (batch 3) x b [2,1,5,6] -> y [2,3,4,6]: both broadcast. */
  host_tensor_init(&ta, a, host_f32(), 3, (int64_t[]){3, 4, 5});
  host_tensor_init(&tb, b, host_f32(), 4, (int64_t[]){2, 1, 5, 6});
  host_tensor_init(&ty, y, host_f32(), 4, (int64_t[]){2, 3, 4, 6});
  dg_ffi_any args[3] = {any_tensor(&ta, object), any_tensor(&tb, object),
                        any_tensor(&ty, object)};
  for (int i = 0; i < 2; i++)
    ref_matmul(3, 1, 4, 5, 6, a, b + i * 30, want + i * 72);
  dg_ffi_any r;
  int rc = host_call(f_matmul, args, 3, &r);
  CHECK(rc == 0 && ref_close(y, want, 144),
        "matmul [3,4,5] x [2,1,5,6] -> [2,3,4,6] (%s): rc %d%s",
        object ? "type 70" : "type 7", rc, why(rc));
}

/* ---- max_pool2d, relu, softmax ---- */

static void test_pool(int int8) {
  /* x [1,3,7,8], kernel 3x2, stride 2x3, pads (1,0,0,1), ceil_mode. */
  int H = 7, W = 8, OH = ref_out(7, 3, 2, 1, 0, 1, 1),
      OW = ref_out(8, 2, 3, 0, 1, 1, 1);
  float x[168], want[3 * 4 * 3], got[36];
  int8_t xq[168], yq[36];
  float y[36];
  for (int i = 0; i < 168; i++) {
    xq[i] = (int8_t)t_range(-128, 127);
    x[i] = int8 ? xq[i] : t_uniform(-5, 5);
  }
  host_tensor tx, ty;
  host_tensor_init(&tx, int8 ? (void *)xq : (void *)x,
                   int8 ? host_i8() : host_f32(), 4, (int64_t[]){1, 3, H, W});
  host_tensor_init(&ty, int8 ? (void *)yq : (void *)y,
                   int8 ? host_i8() : host_f32(), 4,
                   (int64_t[]){1, 3, OH, OW});
  dg_ffi_any a[11] = {any_tensor(&tx, int8), any_tensor(&ty, !int8),
                      any_int(3), any_int(2), any_int(2), any_int(3),
                      any_int(1), any_int(0), any_int(0), any_int(1),
                      any_int(1)};
  ref_max_pool(3, H, W, 3, 2, 2, 3, 1, 0, OH, OW, x, want);
  dg_ffi_any r;
  int rc = host_call(f_pool, a, 11, &r);
  for (int i = 0; i < 3 * OH * OW; i++)
    got[i] = int8 ? yq[i] : y[i];
  CHECK(rc == 0 && OH * OW == 12 && !memcmp(got, want, sizeof(float) * 36),
        "max_pool2d %s, ceil_mode, asymmetric pads -> [1,3,%d,%d]: rc %d%s",
        int8 ? "int8" : "f32", OH, OW, rc, why(rc));
}

/* relu on a float tensor 2 bytes into its buffer: misaligned for f32, so
 * the entry point must copy it (no misaligned loads). */
static void test_relu(void) {
  float x[40], y[40];
  char raw[2 + sizeof x];
  fill(x, 40, -1, 1);
  memcpy(raw + 2, x, sizeof x);
  host_tensor tx, ty;
  host_tensor_init(&tx, raw, host_f32(), 2, (int64_t[]){5, 8});
  tx.obj.dl.byte_offset = 2;
  host_tensor_init(&ty, y, host_f32(), 2, (int64_t[]){5, 8});
  dg_ffi_any a[2] = {any_tensor(&tx, 1), any_tensor(&ty, 0)};
  dg_ffi_any r;
  int rc = host_call(f_relu, a, 2, &r), ok = rc == 0 && is_none(&r);
  for (int i = 0; ok && i < 40; i++)
    ok = y[i] == (x[i] > 0 ? x[i] : 0);
  CHECK(ok, "relu, input at byte_offset 2 (misaligned f32): rc %d%s", rc,
        why(rc));
}

/* float16 goes through as DLPack (float, 16 bits): values exact in half. */
static void test_relu_f16(void) {
  uint16_t x[6] = {0x3C00, 0xBC00, 0x4000, 0xC000, 0x0000, 0x3800}, y[6];
  const uint16_t want[6] = {0x3C00, 0, 0x4000, 0, 0, 0x3800};
  host_tensor tx, ty;
  host_tensor_init(&tx, x, (dg_dl_dtype){DG_DL_FLOAT, 16, 1}, 2,
                   (int64_t[]){2, 3});
  host_tensor_init(&ty, y, (dg_dl_dtype){DG_DL_FLOAT, 16, 1}, 2,
                   (int64_t[]){2, 3});
  dg_ffi_any a[2] = {any_tensor(&tx, 0), any_tensor(&ty, 1)}, r;
  int rc = host_call(f_relu, a, 2, &r);
  CHECK(rc == 0 && !memcmp(y, want, sizeof y), "relu float16: rc %d%s", rc,
        why(rc));
}

static void test_softmax(int axis) {
  float x[2 * 3 * 4], y[24], want[24];
  fill(x, 24, -4, 4);
  host_tensor tx, ty;
  host_tensor_init(&tx, x, host_f32(), 3, (int64_t[]){2, 3, 4});
  host_tensor_init(&ty, y, host_f32(), 3, (int64_t[]){2, 3, 4});
  dg_ffi_any a[3] = {any_tensor(&tx, 0), any_tensor(&ty, 1), any_int(axis)};
  if (axis == 1)
    ref_softmax(2, 3, 4, x, want);
  else
    ref_softmax(6, 4, 1, x, want);
  dg_ffi_any r;
  int rc = host_call(f_softmax, a, 3, &r);
  CHECK(rc == 0 && ref_close(y, want, 24), "softmax axis %d: rc %d%s", axis,
        rc, why(rc));
}

/* ---- errors ---- */

/* Calls f, which must fail with a message containing `needle` raised
 * through both channels. */
static void expect_error(dg_ffi_safe_call f, const dg_ffi_any *a, int n,
                         const char *needle, const char *what) {
  dg_ffi_any r;
  int before = hook_calls;
  hook_msg[0] = 0;
  int rc = host_call(f, a, n, &r);
  const char *msg = lib.last_error();
  CHECK(rc != 0 && strstr(msg, needle) && hook_calls == before + 1 &&
            !strcmp(hook_msg, msg) && hook_kind[0],
        "error: %s -> rc %d, %s: \"%s\"", what, rc, hook_kind, msg);
}

static void test_errors(void) {
  float x[24], y[24];
  double d[24] = {0};
  host_tensor tx, ty, td, tc, t2, tl;
  host_tensor_init(&tx, x, host_f32(), 2, (int64_t[]){4, 6});
  host_tensor_init(&ty, y, host_f32(), 2, (int64_t[]){4, 6});
  host_tensor_init(&td, d, (dg_dl_dtype){DG_DL_FLOAT, 64, 1}, 2,
                   (int64_t[]){4, 6});
  host_tensor_init(&tc, x, host_f32(), 2, (int64_t[]){4, 6});
  tc.obj.dl.device = (dg_dl_device){DG_DL_CUDA, 0};
  host_tensor_init(&t2, y, host_f32(), 2, (int64_t[]){6, 4});
  host_tensor_init(&tl, x, (dg_dl_dtype){DG_DL_FLOAT, 32, 4}, 2,
                   (int64_t[]){4, 6});
  dg_ffi_any ok2[2] = {any_tensor(&tx, 0), any_tensor(&ty, 0)};
  expect_error(f_relu, ok2, 1, "expects 2 arguments", "relu with 1 argument");
  dg_ffi_any conv12[12] = {0};
  expect_error(f_conv, conv12, 12, "expects 13 arguments",
               "conv2d with 12 arguments");
  dg_ffi_any none_x[2] = {any_none(), any_tensor(&ty, 0)};
  expect_error(f_relu, none_x, 2, "(x) must be a tensor", "relu, x is None");
  dg_ffi_any int_x[2] = {any_int(3), any_tensor(&ty, 1)};
  expect_error(f_relu, int_x, 2, "got Int (type index 1)", "relu, x is an Int");
  dg_ffi_any f64[2] = {any_tensor(&td, 0), any_tensor(&ty, 0)};
  expect_error(f_relu, f64, 2, "dtype code 2 bits 64", "relu on float64");
  dg_ffi_any lanes[2] = {any_tensor(&tl, 0), any_tensor(&ty, 0)};
  expect_error(f_relu, lanes, 2, "lanes 4", "relu on float32x4");
  dg_ffi_any cuda[2] = {any_tensor(&tc, 1), any_tensor(&ty, 0)};
  expect_error(f_relu, cuda, 2, "is on cuda:0", "relu on a CUDA tensor");
  dg_ffi_any shape[2] = {any_tensor(&tx, 0), any_tensor(&t2, 0)};
  expect_error(f_relu, shape, 2, "y has shape [6, 4]; the op produces [4, 6]",
               "relu with a wrongly shaped y");
  dg_ffi_any axis[3] = {any_tensor(&tx, 0), any_tensor(&ty, 0), any_float(1)};
  expect_error(f_softmax, axis, 3, "(axis) must be an Int",
               "softmax with a Float axis");
  dg_ffi_any axis2[3] = {any_tensor(&tx, 0), any_tensor(&ty, 0), any_int(2)};
  expect_error(f_softmax, axis2, 3, "(axis) is 2; expected -2..1",
               "softmax with axis out of range");
  dg_ffi_any mm[3] = {any_tensor(&tx, 0), any_tensor(&tx, 0),
                      any_tensor(&ty, 0)};
  expect_error(f_matmul, mm, 3, "do not multiply",
               "matmul [4,6] x [4,6]");
  /* qlinear_conv2d fed float tensors. */
  float cx[16], cw[4], cy[16];
  host_tensor qx, qw, qy;
  host_tensor_init(&qx, cx, host_f32(), 4, (int64_t[]){1, 1, 4, 4});
  host_tensor_init(&qw, cw, host_f32(), 4, (int64_t[]){1, 1, 2, 2});
  host_tensor_init(&qy, cy, host_f32(), 4, (int64_t[]){1, 1, 3, 3});
  dg_ffi_any q[20] = {any_tensor(&qx, 0), any_tensor(&qw, 0), any_none(),
                      any_tensor(&qy, 0)};
  for (int i = 4; i < 20; i++)
    q[i] = any_int(i < 10 ? 1 : i < 12 ? 1 : i < 16 ? 0 : i < 19 ? 1 : 0);
  expect_error(f_qconv, q, 20, "x has dtype f32; expected i8/u8",
               "qlinear_conv2d on float tensors");
  /* A library-side rejection (groups not dividing C) keeps its diagnostic. */
  dg_ffi_any g[13] = {any_tensor(&qx, 0), any_tensor(&qw, 0), any_none(),
                      any_tensor(&qy, 0), any_int(1), any_int(1), any_int(0),
                      any_int(0), any_int(0), any_int(0), any_int(1),
                      any_int(1), any_int(3)};
  expect_error(f_conv, g, 13, "groups", "conv2d with groups 3 for C=1");
}

/* ---- threads: the lazy context and the lock under concurrent calls ---- */

static void *relu_thread(void *arg) {
  int *ok = arg;
  float x[64], y[64];
  for (int i = 0; i < 64; i++)
    x[i] = (float)(i - 32) * (float)(1 + (*ok));
  host_tensor tx, ty;
  host_tensor_init(&tx, x, host_f32(), 1, (int64_t[]){64});
  host_tensor_init(&ty, y, host_f32(), 1, (int64_t[]){64});
  dg_ffi_any a[2] = {any_tensor(&tx, 0), any_tensor(&ty, 1)}, r;
  int good = 1;
  for (int it = 0; it < 50; it++) {
    good &= host_call(f_relu, a, 2, &r) == 0;
    for (int i = 0; i < 64; i++)
      good &= y[i] == (x[i] > 0 ? x[i] : 0);
  }
  *ok = good;
  return NULL;
}

static void test_threads(void) {
  pthread_t th[4];
  int ok[4] = {0, 1, 2, 3}, all = 1;
  for (int i = 0; i < 4; i++)
    pthread_create(&th[i], NULL, relu_thread, &ok[i]);
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    all &= ok[i];
  }
  CHECK(all, "relu from 4 threads x 50 calls");
}

/* ---- $DG_TVM_DEVICE, read once per process: checked in child runs ---- */

static int child_main(void) {
  float x[4] = {-1, 2, -3, 4}, y[4];
  host_tensor tx, ty;
  host_tensor_init(&tx, x, host_f32(), 1, (int64_t[]){4});
  host_tensor_init(&ty, y, host_f32(), 1, (int64_t[]){4});
  dg_ffi_any a[2] = {any_tensor(&tx, 0), any_tensor(&ty, 0)}, r;
  int rc = host_call(f_relu, a, 2, &r);
  printf("# child: %s\n", rc ? lib.last_error() : "ran");
  return rc ? 3 : (y[1] == 2 && y[0] == 0) ? 0 : 4;
}

static void test_device_env(const char *self, const char *value, int want) {
  pid_t pid = fork();
  if (pid == 0) {
    setenv("DG_TVM_DEVICE", value, 1);
    /* The child only reports how it parsed the variable; with an index it
     * opens every device, whose drivers (lavapipe) keep allocations past
     * exit. Leaks of the library itself are checked in the parent. */
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
    char *argv[] = {(char *)self, "--child", NULL};
    t_execv(self, argv);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  CHECK(code == want, "DG_TVM_DEVICE=%s: child exit %d (want %d: %s)", value,
        code, want, want ? "clear error" : "runs");
}

int main(int argc, char **argv) {
  lib.so = dlopen(DG_LIB_PATH, RTLD_NOW | RTLD_LOCAL);
  if (!lib.so) {
    printf("FAIL - dlopen %s: %s\n", DG_LIB_PATH, dlerror());
    return 1;
  }
  *(void **)&lib.last_error = dlsym(lib.so, "dg_tvm_last_error");
  struct { const char *name; dg_ffi_safe_call *f; } syms[] = {
      {"directgraph_conv2d", &f_conv}, {"directgraph_conv2d_relu", &f_conv_relu},
      {"directgraph_dense", &f_dense}, {"directgraph_matmul", &f_matmul},
      {"directgraph_max_pool2d", &f_pool}, {"directgraph_relu", &f_relu},
      {"directgraph_softmax", &f_softmax},
      {"directgraph_qlinear_conv2d", &f_qconv}};
  int found = lib.last_error != NULL;
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
    found &= (*syms[i].f = host_sym(&lib, syms[i].name)) != NULL;
  if (argc > 1 && !strcmp(argv[1], "--child"))
    return found ? child_main() : 2;
  CHECK(found, "dlsym finds the 8 __tvm_ffi_directgraph_* entry points and "
               "dg_tvm_last_error in %s", DG_LIB_PATH);
  if (!found)
    return t_exit();
  for (int object = 0; object < 2; object++)
    test_conv(object, 0, 1);
  test_conv(1, 1, 0);
  test_conv(0, 1, 1);
  test_conv_strided();
  test_qconv(0);
  test_qconv(1);
  test_dense();
  test_matmul(0);
  test_matmul(1);
  test_pool(0);
  test_pool(1);
  test_relu();
  test_relu_f16();
  test_softmax(1);
  test_softmax(-1);
  test_errors();
  test_threads();
  test_device_env(argv[0], "0", 0);
  test_device_env(argv[0], "99", 3);
  test_device_env(argv[0], "gpu", 3);
  dlclose(lib.so);
  return t_exit();
}
