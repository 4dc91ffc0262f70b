/* dg-run: runs an ONNX model on the devices you choose.
 *
 *   dg-run MODEL.onnx [--input NAME=FILE]... [--random] [--device N]...
 *          [--kinds KIND,...] [--strict] [--fast] [--plan] [--dot FILE]
 *          [--verify]
 *          [--repeat N] [--symbolic N] [--freeze NAME=FILE]...
 *
 * Inputs come from .npy files or ONNX TensorProto .pb files (as in ONNX's
 * test_data_set folders), or with --random from seeded uniform data. It
 * prints each output (shape and leading values), the run time (median of
 * --repeat runs), with --plan the plan with measured per-node times and,
 * with --verify, the session compared node by node with the reference
 * kernels. --freeze fixes a graph input to a constant at import (shapes,
 * scales). Every option, with its default: usage() below, or --help. */
#define _POSIX_C_SOURCE 200809L
#include "common/cli.h"
#include "common/npy.h"
#include "common/timing.h"
#include "graph.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_IO 64

typedef struct loaded {
  char *name; /* owned; input names have any length */
  dg_tensor_desc desc;
  void *data;
  size_t bytes;
} loaded;

/* A TensorProto file read through a one-tensor ONNX model is overkill;
 * the .pb form is small enough to parse here: fields 1 (dims, varint,
 * packed or not), 2 (data_type), 8 (name), 9 (raw_data), 4 (float_data). */
static int read_varint(const unsigned char **p, const unsigned char *end,
                       uint64_t *v) {
  *v = 0;
  for (int shift = 0; *p < end && shift < 64; shift += 7) {
    unsigned char b = *(*p)++;
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return 0;
  }
  return -1;
}

static int load_pb(const char *path, loaded *out, char *err, size_t es) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, es, "%s: cannot open", path);
    return -1;
  }
  unsigned char *buf = malloc(1 << 26);
  size_t n = buf ? fread(buf, 1, 1 << 26, f) : 0;
  fclose(f);
  if (!buf) {
    snprintf(err, es, "out of memory");
    return -1;
  }
  const unsigned char *p = buf, *end = buf + n, *raw = NULL;
  uint64_t raw_len = 0, type = 0;
  size_t nfloat = 0;
  const unsigned char *floats = NULL;
  out->desc.rank = 0;
  while (p < end) {
    uint64_t key, v;
    if (read_varint(&p, end, &key))
      break;
    int field = (int)(key >> 3), wire = (int)(key & 7);
    if (wire == 0) {
      if (read_varint(&p, end, &v))
        break;
      if (field == 1 && out->desc.rank < DG_MAX_RANK)
        out->desc.dims[out->desc.rank++] = (int64_t)v;
      else if (field == 2)
        type = v;
    } else if (wire == 2) {
      if (read_varint(&p, end, &v) || v > (uint64_t)(end - p))
        break;
      if (field == 1) { /* packed dims */
        const unsigned char *q = p, *qe = p + v;
        uint64_t d;
        while (q < qe && !read_varint(&q, qe, &d) &&
               out->desc.rank < DG_MAX_RANK)
          out->desc.dims[out->desc.rank++] = (int64_t)d;
      } else if (field == 8) {
        char *name = strndup((const char *)p, (size_t)v);
        if (!name) {
          free(buf);
          snprintf(err, es, "out of memory");
          return -1;
        }
        free(out->name);
        out->name = name;
      } else if (field == 9) {
        raw = p;
        raw_len = v;
      } else if (field == 4) {
        floats = p;
        nfloat = v / 4;
      }
      p += v;
    } else if (wire == 5) {
      p += 4;
    } else if (wire == 1) {
      p += 8;
    } else {
      break;
    }
  }
  static const dg_dtype types[11] = {
      0,           DG_DTYPE_F32, DG_DTYPE_U8,  DG_DTYPE_I8, 0,
      0,           DG_DTYPE_I32, DG_DTYPE_I64, 0,           DG_DTYPE_BOOL,
      DG_DTYPE_F16};
  out->desc.dtype = type < 11 ? types[type] : 0;
  size_t count = 1;
  for (int i = 0; i < out->desc.rank; i++)
    count *= (size_t)out->desc.dims[i];
  out->bytes = count * dg_dtype_size(out->desc.dtype);
  const unsigned char *src = raw ? raw : floats;
  size_t have = raw ? raw_len : nfloat * 4;
  if (!out->desc.dtype || !src || have != out->bytes) {
    free(buf);
    snprintf(err, es, "%s: unsupported or inconsistent TensorProto", path);
    return -1;
  }
  out->data = malloc(out->bytes ? out->bytes : 1);
  if (out->data)
    memcpy(out->data, src, out->bytes);
  free(buf);
  return out->data ? 0 : -1;
}

static int load_file(const char *path, loaded *out, char *err, size_t es) {
  size_t len = strlen(path);
  if (len > 4 && !strcmp(path + len - 4, ".npy")) {
    npy_array a;
    if (npy_load(path, &a, err, es))
      return -1;
    out->desc = npy_desc(&a);
    out->data = a.data;
    out->bytes = a.bytes;
    return 0;
  }
  return load_pb(path, out, err, es);
}

static void print_values(const dg_io_info *info, const void *data) {
  size_t n = 1;
  char dims[96] = "";
  for (int i = 0; i < info->desc.rank; i++) {
    n *= (size_t)info->desc.dims[i];
    snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%lld",
             i ? "x" : "", (long long)info->desc.dims[i]);
  }
  printf("output %s: %s [%s]", info->name, dg_dtype_name(info->desc.dtype),
         dims);
  for (size_t i = 0; i < n && i < 16; i++) {
    switch (info->desc.dtype) {
    case DG_DTYPE_F32:
      printf(" %.6g", ((const float *)data)[i]);
      break;
    case DG_DTYPE_I8:
      printf(" %d", ((const int8_t *)data)[i]);
      break;
    case DG_DTYPE_U8:
      printf(" %d", ((const uint8_t *)data)[i]);
      break;
    case DG_DTYPE_I32:
      printf(" %d", ((const int32_t *)data)[i]);
      break;
    case DG_DTYPE_I64:
      printf(" %lld", (long long)((const int64_t *)data)[i]);
      break;
    case DG_DTYPE_BOOL:
      printf(" %s", ((const uint8_t *)data)[i] ? "true" : "false");
      break;
    default:
      printf(" ?");
      break;
    }
  }
  printf("%s\n", n > 16 ? " ..." : "");
}

/* The help: the one place that lists the options. */
static void usage(FILE *f) {
  fputs(
      "usage: dg-run MODEL.onnx [--input NAME=FILE]... [--random] "
      "[--device N]...\n"
      "              [--kinds KIND,...] [--strict] [--fast] [--plan] "
      "[--profile]\n"
      "              [--dot FILE] [--verify]\n"
      "              [--repeat N] [--symbolic N] [--freeze NAME=FILE]...\n"
      "              [--output NAME=FILE.npy | --output DIR]...\n"
      "\n"
      "Runs an ONNX model on the devices you choose and prints each output\n"
      "(shape and leading values) and the run time.\n"
      "\n"
      "  --input NAME=FILE   graph input NAME from FILE: .npy, or an ONNX\n"
      "                      TensorProto .pb as in ONNX's test_data_set "
      "folders\n"
      "  --random            seeded uniform data for each input not given "
      "by\n"
      "                      --input (default: every input must be given)\n"
      "  --device N          place nodes on device N only, an index as "
      "dg-info\n"
      "                      lists them; repeat for more, up to 16 "
      "(default:\n"
      "                      every device)\n"
      "  --kinds KIND,...    place nodes on these device kinds only, from\n"
      "                      cpu,vulkan,opencl,npu (default: every kind)\n"
      "  --strict            strict policy: with one --device, every node is\n"
      "                      pinned there and compiling fails rather than\n"
      "                      fall back (default: auto, placed by cost)\n"
      "  --fast              precision fast: an f32 model runs in f16 storage\n"
      "                      with f32 accumulation where an allowed GPU\n"
      "                      computes in f16 (DG_PRECISION_FAST_F16; the\n"
      "                      plan's last line says what was done)\n"
      "  --plan              print the plan, with every node's time measured\n"
      "                      on its device over the runs (implies --profile)\n"
      "  --profile           measure per-node times (the plan's run_us, the\n"
      "                      DOT file's labels) at a clock read per node\n"
      "  --dot FILE          write the plan to FILE as Graphviz\n"
      "  --verify            compare the session node by node with the\n"
      "                      reference kernels\n"
      "  --repeat N          time N runs and print their median, N >= 1\n"
      "                      (default 10)\n"
      "  --symbolic N        give every symbolic dimension (a dim_param) the\n"
      "                      value N >= 1 (default: a model with one is "
      "refused)\n"
      "  --freeze NAME=FILE  fix graph input NAME at import to the constant "
      "in\n"
      "                      FILE (shapes, scales)\n"
      "  --output NAME=FILE  save output NAME as a .npy file; --output DIR\n"
      "                      saves every output as DIR/NAME.npy ('/' in a\n"
      "                      name becomes '_')\n"
      "  -h, --help          print this help and exit\n"
      "\n"
      "Examples:\n"
      "  dg-run resnet18.onnx --random --plan\n"
      "  dg-run model.onnx --input x=x.npy --output out/ --kinds vulkan\n"
      "  dg-run detr.onnx --symbolic 1 --random --verify\n"
      "\n"
      "Environment: DG_PROFILE (as --profile), DG_CACHE_DIR (the kernel\n"
      "cache), DG_PASSES=none (no fusion); docs/environment.md lists all.\n"
      "\n"
      "Exit status: 0 done, 1 a failure, 2 a bad argument, 3 --verify found\n"
      "a mismatch.\n",
      f);
}

/* "f32 [1, 3, 224, 224]" */
static void describe(const dg_tensor_desc *d, char *out, size_t n) {
  int k = snprintf(out, n, "%s [", dg_dtype_name(d->dtype));
  for (int i = 0; i < d->rank && k > 0 && (size_t)k < n; i++)
    k += snprintf(out + k, n - (size_t)k, "%s%lld", i ? ", " : "",
                  (long long)d->dims[i]);
  if (k > 0 && (size_t)k < n)
    snprintf(out + k, n - (size_t)k, "]");
}

/* Every --input names an input of the model and holds its dtype and
 * shape; says which does not, with what the model wants. */
static int check_inputs(const dg_session *s, const loaded *ins, int nin) {
  int n = dg_session_input_count(s);
  for (int j = 0; j < nin; j++) {
    dg_io_info info = {0};
    int found = 0;
    for (int i = 0; i < n && !found; i++)
      found = dg_session_input_info(s, i, &info) == DG_OK &&
              !strcmp(info.name, ins[j].name);
    if (!found) {
      fprintf(stderr,
              "dg-run: --input %s: the model has no input of this "
              "name; its inputs:",
              ins[j].name);
      for (int i = 0; i < n; i++)
        if (dg_session_input_info(s, i, &info) == DG_OK)
          fprintf(stderr, "%s %s", i ? "," : "", info.name);
      fputc('\n', stderr);
      return -1;
    }
    int same = info.desc.dtype == ins[j].desc.dtype &&
               info.desc.rank == ins[j].desc.rank;
    for (int r = 0; same && r < info.desc.rank; r++)
      same = info.desc.dims[r] == ins[j].desc.dims[r];
    if (!same) {
      char want[160], got[160];
      describe(&info.desc, want, sizeof want);
      describe(&ins[j].desc, got, sizeof got);
      fprintf(stderr,
              "dg-run: --input %s: the file holds %s; the model's "
              "input is %s\n",
              ins[j].name, got, want);
      return -1;
    }
  }
  return 0;
}

static int is_folder(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void free_loaded(loaded *l, int n) {
  for (int i = 0; i < n; i++) {
    free(l[i].name);
    free(l[i].data);
  }
}

static void log_error(void *user, dg_log_level level, const char *msg) {
  (void)user, (void)level;
  fprintf(stderr, "dg-run: %s\n", msg);
}

int main(int argc, char **argv) {
  static const char P[] = "dg-run";
  const char *model = NULL, *dot = NULL, *device_args[16], *save_args[MAX_IO];
  int nsave = 0;
  loaded ins[MAX_IO] = {0}, frozen[MAX_IO] = {0};
  int nin = 0, nfrozen = 0, devices[16], ndev = 0, strict = 0, plan = 0,
      verify = 0, repeat = 10, random = 0, profile = 0, fast = 0;
  unsigned kinds = 0;
  long long symbolic = 0;
  char err[512];
  int rc = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if (cli_is_help(a)) {
      usage(stdout);
      rc = 0;
      goto done_args;
    } else if (!strcmp(a, "--input") || !strcmp(a, "--freeze")) {
      int input = !strcmp(a, "--input");
      if (!(v = cli_value(P, argc, argv, &i, "NAME=FILE")))
        goto usage_error;
      const char *eq = strchr(v, '=');
      if (!eq || eq == v || !eq[1]) {
        fprintf(stderr, "%s: %s got '%s'; valid: NAME=FILE\n", P, a, v);
        goto usage_error;
      }
      if ((input ? nin : nfrozen) >= MAX_IO) {
        fprintf(stderr, "%s: %s given more than %d times\n", P, a, MAX_IO);
        goto usage_error;
      }
      loaded *l = input ? &ins[nin++] : &frozen[nfrozen++];
      if (!(l->name = strndup(v, (size_t)(eq - v)))) {
        fprintf(stderr, "%s: out of memory\n", P);
        goto done_args;
      }
      if (load_file(eq + 1, l, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", P, err);
        goto done_args;
      }
    } else if (!strcmp(a, "--output")) {
      if (!(v = cli_value(P, argc, argv, &i, "NAME=FILE.npy or DIR")))
        goto usage_error;
      const char *eq = strchr(v, '=');
      if ((eq && (eq == v || !eq[1])) || nsave >= MAX_IO) {
        fprintf(stderr, "%s: --output got '%s'; valid: NAME=FILE.npy or DIR\n",
                P, v);
        goto usage_error;
      }
      save_args[nsave++] = v;
    } else if (!strcmp(a, "--device")) {
      /* Checked against the context's devices once it exists. */
      if (!(v = cli_value(P, argc, argv, &i, "a device index")))
        goto usage_error;
      if (ndev == 16) {
        fprintf(stderr, "%s: --device given more than 16 times\n", P);
        goto usage_error;
      }
      device_args[ndev++] = v;
    } else if (!strcmp(a, "--kinds")) {
      if (cli_kinds(P, a, cli_value(P, argc, argv, &i, "KIND,..."), &kinds))
        goto usage_error;
    } else if (!strcmp(a, "--dot")) {
      if (!(dot = cli_value(P, argc, argv, &i, "FILE")))
        goto usage_error;
    } else if (!strcmp(a, "--repeat")) {
      if (cli_int(P, a, cli_value(P, argc, argv, &i, "N >= 1"), 1, INT_MAX,
                  &repeat))
        goto usage_error;
    } else if (!strcmp(a, "--symbolic")) {
      if (cli_long(P, a, cli_value(P, argc, argv, &i, "N >= 1"), 1, LLONG_MAX,
                   &symbolic))
        goto usage_error;
    } else if (!strcmp(a, "--strict")) {
      strict = 1;
    } else if (!strcmp(a, "--fast")) {
      fast = 1;
    } else if (!strcmp(a, "--plan")) {
      plan = profile = 1;
    } else if (!strcmp(a, "--profile")) {
      profile = 1;
    } else if (!strcmp(a, "--verify")) {
      verify = 1;
    } else if (!strcmp(a, "--random")) {
      random = 1;
    } else if (a[0] != '-' && !model) {
      model = a;
    } else {
      cli_unknown(P, a);
      goto usage_error;
    }
  }
  if (!model) {
    fprintf(stderr, "%s: no MODEL.onnx given (dg-run --help)\n", P);
    goto usage_error;
  }
  dg_context *ctx;
  /* Errors the library logs (each unsupported node of a model, whole)
   * go to stderr, before the diagnostic that sums them up. */
  dg_context_options cx = {.log = log_error, .log_level = DG_LOG_ERROR};
  if (dg_context_create(&cx, &ctx) != DG_OK) {
    fprintf(stderr, "dg-run: cannot create a context\n");
    goto done_args;
  }
  for (int i = 0; i < ndev; i++)
    if (cli_device(P, "--device", device_args[i], ctx, &devices[i])) {
      dg_context_destroy(ctx);
      goto usage_error;
    }
  dg_onnx_constant k[MAX_IO];
  for (int i = 0; i < nfrozen; i++)
    k[i] = (dg_onnx_constant){frozen[i].name, &frozen[i].desc, frozen[i].data};
  dg_onnx_options oo = {.symbolic_dim_value = symbolic,
                        .constants = k,
                        .constant_count = nfrozen};
  dg_graph *g;
  dg_diagnostic d;
  dg_session *s = NULL;
  dg_binding bin[MAX_IO], bout[MAX_IO];
  int nout = 0;
  if (dg_onnx_load(ctx, model, &oo, &g, &d) != DG_OK) {
    /* The library's hint names the C option; say ours. */
    static const char hint[] = "set dg_onnx_options.symbolic_dim_value";
    char *at = strstr(d.message, hint);
    if (at)
      fprintf(stderr, "dg-run: %.*sgive it a value with --symbolic N%s\n",
              (int)(at - d.message), d.message, at + strlen(hint));
    else
      fprintf(stderr, "dg-run: %s\n", d.message);
    goto done;
  }
  dg_compile_options co = {.policy = strict ? DG_POLICY_STRICT : DG_POLICY_AUTO,
                           .device_kinds = kinds,
                           .devices = ndev ? devices : NULL,
                           .device_count = ndev,
                           .profile = profile,
                           .precision = fast ? DG_PRECISION_FAST_F16
                                             : DG_PRECISION_EXACT};
  if (ndev == 1 && strict)
    dg_graph_set_device(g, devices[0]); /* nothing pinned: no-op */
  if (dg_graph_compile(g, &co, &s, &d) != DG_OK) {
    fprintf(stderr, "dg-run: compile: %s\n", d.message);
    dg_graph_destroy(g);
    goto done;
  }
  dg_graph_destroy(g);
  int ngraph_in = dg_session_input_count(s);
  if (check_inputs(s, ins, nin)) {
    rc = CLI_USAGE;
    goto done;
  }
  for (int i = 0; i < ngraph_in; i++) {
    dg_io_info info;
    dg_session_input_info(s, i, &info);
    loaded *l = NULL;
    for (int j = 0; j < nin; j++)
      if (!strcmp(ins[j].name, info.name))
        l = &ins[j];
    if (!l && random && nin < MAX_IO) {
      l = &ins[nin++];
      if (!(l->name = strdup(info.name))) {
        fprintf(stderr, "dg-run: out of memory\n");
        goto done;
      }
      l->desc = info.desc;
      size_t n = 1;
      for (int r = 0; r < info.desc.rank; r++)
        n *= (size_t)info.desc.dims[r];
      l->bytes = n * dg_dtype_size(info.desc.dtype);
      l->data = malloc(l->bytes ? l->bytes : 1);
      srand(1234 + (unsigned)i);
      for (size_t e = 0; l->data && e < l->bytes; e++)
        ((unsigned char *)l->data)[e] = (unsigned char)rand();
      if (info.desc.dtype == DG_DTYPE_F32)
        for (size_t e = 0; l->data && e < n; e++)
          ((float *)l->data)[e] = (float)rand() / (float)RAND_MAX - 0.5f;
      if (info.desc.dtype == DG_DTYPE_BOOL) /* a bool byte is 0 or 1 */
        for (size_t e = 0; l->data && e < n; e++)
          ((unsigned char *)l->data)[e] &= 1;
    }
    if (!l) {
      fprintf(stderr,
              "dg-run: input '%s' not given (--input %s=FILE or "
              "--random)\n",
              info.name, info.name);
      goto done;
    }
    bin[i] = (dg_binding){info.name, l->data, l->bytes};
  }
  nout = dg_session_output_count(s);
  for (int i = 0; i < nout && i < MAX_IO; i++) {
    dg_io_info info;
    dg_session_output_info(s, i, &info);
    size_t n = 1;
    for (int r = 0; r < info.desc.rank; r++)
      n *= (size_t)info.desc.dims[r];
    size_t bytes = n * dg_dtype_size(info.desc.dtype);
    bout[i] = (dg_binding){info.name, calloc(1, bytes ? bytes : 1), bytes};
  }
  double *t = malloc(sizeof(double) * (size_t)repeat);
  for (int r = 0; t && r < repeat; r++) {
    double t0 = timing_now_us();
    if (dg_session_run(s, bin, ngraph_in, bout, nout, &d) != DG_OK) {
      fprintf(stderr, "dg-run: run: %s\n", d.message);
      free(t);
      goto done;
    }
    t[r] = timing_now_us() - t0;
  }
  for (int i = 0; i < nout; i++) {
    dg_io_info info;
    dg_session_output_info(s, i, &info);
    print_values(&info, bout[i].data);
  }
  for (int k = 0; k < nsave; k++) {
    const char *eq = strchr(save_args[k], '=');
    if (!eq && !is_folder(save_args[k])) {
      fprintf(stderr,
              "%s: --output %s: no such folder (create it, or give "
              "NAME=FILE.npy)\n",
              P, save_args[k]);
      rc = CLI_USAGE;
      goto done;
    }
    size_t nl = eq ? (size_t)(eq - save_args[k]) : 0;
    int saved = 0;
    for (int i = 0; i < nout; i++) {
      dg_io_info info;
      dg_session_output_info(s, i, &info);
      char path[4096];
      if (eq &&
          (strlen(info.name) != nl || strncmp(info.name, save_args[k], nl)))
        continue;
      if (eq) {
        snprintf(path, sizeof path, "%s", eq + 1);
      } else {
        int n = snprintf(path, sizeof path, "%s/", save_args[k]);
        for (const char *c = info.name; *c && n < (int)sizeof path - 5; c++)
          path[n++] = *c == '/' ? '_' : *c;
        snprintf(path + n, sizeof path - (size_t)n, ".npy");
      }
      if (npy_save(path, info.desc.dtype, info.desc.rank, info.desc.dims,
                   bout[i].data, err, sizeof err)) {
        fprintf(stderr, "%s: --output: %s\n", P, err);
        goto done;
      }
      printf("saved %s: %s\n", info.name, path);
      saved++;
    }
    if (eq && !saved) {
      fprintf(stderr,
              "%s: --output got '%.*s'; valid: an output of the "
              "model\n",
              P, (int)nl, save_args[k]);
      rc = CLI_USAGE;
      goto done;
    }
  }
  if (t) {
    printf("run: %.1f us (median of %d)\n", timing_median(t, repeat), repeat);
    free(t);
  }
  if (plan)
    dg_plan_write(dg_session_plan(s), DG_PLAN_FORMAT_TABLE, stdout);
  if (dot) {
    FILE *f = fopen(dot, "w");
    if (!f || dg_plan_write(dg_session_plan(s), DG_PLAN_FORMAT_DOT, f)) {
      fprintf(stderr, "dg-run: cannot write %s\n", dot);
      if (f)
        fclose(f);
      goto done;
    }
    fclose(f);
  }
  rc = 0;
  if (verify) {
    dg_verify_report vr;
    dg_status vs = dg_session_verify(s, bin, ngraph_in, &vr);
    if (vs == DG_OK)
      printf("verify: ok, %d nodes within tolerance (worst rel err %.3g at "
             "%s)\n",
             vr.nodes_checked, vr.max_rel_error, vr.node_name);
    else {
      printf("verify: MISMATCH at node %d '%s' (%s): max abs %.3g, rel %.3g, "
             "%lld LSB (tolerance %g)\n",
             vr.node_index, vr.node_name, dg_op_name(vr.op), vr.max_abs_error,
             vr.max_rel_error, (long long)vr.max_lsb_error, vr.tolerance);
      rc = 3;
    }
  }
done:
  for (int i = 0; i < nout; i++)
    free(bout[i].data);
  dg_session_destroy(s);
  dg_context_destroy(ctx);
  free_loaded(ins, nin);
  free_loaded(frozen, nfrozen);
  return rc;
usage_error:
  rc = CLI_USAGE;
done_args: /* before any output was allocated */
  free_loaded(ins, nin);
  free_loaded(frozen, nfrozen);
  return rc;
}
