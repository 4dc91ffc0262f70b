/* dg-bench --models (bench_models.h says what is measured and how). */
#include "bench_models.h"
#include "bench_gpu.h"
#include "bench_progress.h"

#include "common/timing.h"
#include "graph.h"
#include "ort_abi.h"

#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_MODELS 64
#define ORT_ELEM_FLOAT 1

static dg_ort_table api;
static OrtEnv *env;
static OrtMemoryInfo *meminfo;
#define API(slot, type) DG_ORT_FN(api, ORT_SLOT_##slot, type)

/* ORT's message for st (released), or NULL for success. */
static const char *ort_err(OrtStatus *st) {
  static char buf[512];
  if (!st)
    return NULL;
  snprintf(buf, sizeof buf, "%s",
           API(GetErrorMessage, ort_get_error_message_fn)(st));
  API(ReleaseStatus, ort_release_fn)(st);
  return buf;
}

/* The library tests/ort/fetch-ort.sh caches, as the EP tests find it. */
static void default_ort_path(char *out, size_t len) {
  const char *lib = getenv("DG_ORT_LIB"), *home = getenv("HOME");
  if (lib && lib[0])
    snprintf(out, len, "%s", lib);
  else
    snprintf(out, len,
             "%s/.cache/directgraph-ci/ort/1.30.0/libonnxruntime.so.1",
             home ? home : "/tmp");
}

static int ort_load(const char *path) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr,
            "dg-bench: cannot load ONNX Runtime (%s); fetch it with "
            "tests/ort/fetch-ort.sh or name it with --ort PATH\n",
            dlerror());
    return 2;
  }
  const dg_ort_api_base *(*get_base)(void) =
      (const dg_ort_api_base *(*)(void))dlsym(lib, "OrtGetApiBase");
  const dg_ort_api_base *base = get_base ? get_base() : NULL;
  api = base ? base->get_api(24) : NULL;
  if (!api) {
    fprintf(stderr, "dg-bench: %s is not ONNX Runtime >= 1.24\n", path);
    return 2;
  }
  const char *e =
      ort_err(API(CreateEnv, ort_create_env_fn)(ORT_LOG_ERROR, "bench", &env));
  if (!e)
    e = ort_err(API(CreateCpuMemoryInfo, ort_create_cpu_mem_fn)(
        ORT_ALLOC_DEVICE, ORT_MEM_DEFAULT, &meminfo));
  if (e) {
    fprintf(stderr, "dg-bench: ONNX Runtime setup: %s\n", e);
    return 2;
  }
  printf("peer: ONNX Runtime %s, CPU EP (%s)\n", base->get_version_string(),
         path);
  return 0;
}

/* One model on both sides. */
typedef struct model {
  char name[128], path[1200];
  dg_session *ours;
  OrtSession *ort;
  char in_name[256], out_name[256];
  int64_t dims[DG_MAX_RANK];
  int rank;
  float *x, *y;
  size_t x_bytes, y_bytes;
  int int8;           /* named qdq_*: the int8 QDQ versions */
  dg_buffer *xb, *yb; /* bench_models_opts.resident's, bound */
} model;

static const char *ort_run(model *m, double *worst, double *peak) {
  OrtValue *in = NULL, *out = NULL;
  const char *in_names[1] = {m->in_name}, *out_names[1] = {m->out_name};
  const char *e =
      ort_err(API(CreateTensorWithDataAsOrtValue,
                  ort_create_tensor_fn)(meminfo, m->x, m->x_bytes, m->dims,
                                        (size_t)m->rank, ORT_ELEM_FLOAT, &in));
  if (!e)
    e = ort_err(API(Run, ort_run_fn)(m->ort, NULL, in_names,
                                     (const OrtValue *const *)&in, 1, out_names,
                                     1, &out));
  if (!e && worst) {
    float *data = NULL;
    e = ort_err(
        API(GetTensorMutableData, ort_get_mut_ptr_fn)(out, (void **)&data));
    size_t n = m->y_bytes / sizeof(float);
    for (size_t i = 0; !e && i < n; i++) {
      double d = fabs((double)data[i] - m->y[i]);
      *worst = d > *worst || isnan(d) ? d : *worst;
      *peak = fabs((double)data[i]) > *peak ? fabs((double)data[i]) : *peak;
    }
  }
  if (in)
    API(ReleaseValue, ort_release_fn)(in);
  if (out)
    API(ReleaseValue, ort_release_fn)(out);
  return e;
}

static const char *our_run(model *m) {
  dg_binding in = {m->in_name, m->x, m->x_bytes},
             out = {m->out_name, m->y, m->y_bytes};
  static dg_diagnostic d;
  bool res = m->xb != NULL; /* bound: no host bindings */
  if (dg_session_run(m->ours, &in, !res, &out, !res, &d) == DG_OK)
    return NULL;
  return d.message;
}

/* Binds the input and the first output to buffers of device dev and
 * checks one run's output against the host run's (m->y), bit for bit. */
/* f16 <-> f32 for the fast precision's buffers: x is on a grid f16
 * holds exactly (model_open), so plain truncation is its rounding; y
 * comes back with subnormals and all. */
static uint16_t exact_half(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  uint32_t sign = (b >> 16) & 0x8000u, e = (b >> 23) & 0xff;
  if (!e)
    return (uint16_t)sign;
  return (uint16_t)(sign | ((e - 112) << 10) | ((b >> 13) & 0x3ff));
}

static float half_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f,
           mant = h & 0x3ffu, b;
  if (!e)
    return (sign ? -1.0f : 1.0f) * ldexpf((float)mant, -24);
  b = sign | (e == 31 ? 0x7f800000u : (e + 112) << 23) | (mant << 13);
  float f;
  memcpy(&f, &b, 4);
  return f;
}

static const char *bind_resident(dg_context *ctx, int dev, model *m, char *why,
                                 size_t wn) {
  dg_io_info ii, oi;
  dg_diagnostic d;
  dg_session_input_info(m->ours, 0, &ii);
  dg_session_output_info(m->ours, 0, &oi);
  /* Under the fast precision the buffers hold the f16 tensors. */
  bool f16 = !strncmp(dg_plan_precision(dg_session_plan(m->ours)), "fast:", 5);
  size_t es = f16 ? 2 : 4, nx = m->x_bytes / 4, ny = m->y_bytes / 4;
  if (f16)
    ii.desc.dtype = oi.desc.dtype = DG_DTYPE_F16;
  void *xs = malloc(nx * es), *back = malloc(ny * es);
  const char *err = NULL;
  for (size_t i = 0; xs && i < nx; i++)
    if (f16)
      ((uint16_t *)xs)[i] = exact_half(m->x[i]);
    else
      ((float *)xs)[i] = m->x[i];
  if (!xs || !back ||
      dg_buffer_create(ctx, dev, &ii.desc, &m->xb, &d) != DG_OK ||
      dg_buffer_create(ctx, dev, &oi.desc, &m->yb, &d) != DG_OK ||
      dg_buffer_write(m->xb, xs, nx * es, &d) != DG_OK ||
      dg_session_bind_buffer(m->ours, m->in_name, m->xb, &d) != DG_OK ||
      dg_session_bind_buffer(m->ours, m->out_name, m->yb, &d) != DG_OK ||
      (err = our_run(m)) != NULL ||
      dg_buffer_read(m->yb, back, ny * es, &d) != DG_OK) {
    snprintf(why, wn, "resident: %s",
             back && xs ? err ? err : d.message : "no memory");
    free(xs), free(back);
    return why;
  }
  int same = 1;
  for (size_t i = 0; i < ny && same; i++)
    same = (f16 ? half_float(((uint16_t *)back)[i]) : ((float *)back)[i]) ==
           m->y[i];
  free(xs), free(back);
  if (!same) {
    snprintf(why, wn, "%s",
             "resident: the buffer's output differs from the "
             "host run's");
    return why;
  }
  return NULL;
}

static int model_run(void *m) { return our_run(m) ? -1 : 0; }

/* Loads and compiles both sides; NULL, or why not (in why). */
static const char *model_open(dg_context *ctx, int dev,
                              const bench_models_opts *o, model *m, char *why,
                              size_t wn) {
  dg_onnx_options oo = {.symbolic_dim_value = o->batch};
  dg_graph *g = NULL;
  dg_diagnostic d;
  if (dg_onnx_load(ctx, m->path, &oo, &g, &d) != DG_OK) {
    snprintf(why, wn, "import: %s", d.message);
    return why;
  }
  dg_compile_options co = {.policy = DG_POLICY_STRICT,
                           .devices = &dev,
                           .device_count = 1,
                           .precision = o->fast ? DG_PRECISION_FAST_F16
                                                : DG_PRECISION_EXACT};
  dg_status st = dg_graph_compile(g, &co, &m->ours, &d);
  dg_graph_destroy(g);
  if (st != DG_OK) {
    snprintf(why, wn, "compile: %s", d.message);
    return why;
  }
  dg_io_info ii, oi;
  if (dg_session_input_count(m->ours) != 1 ||
      dg_session_input_info(m->ours, 0, &ii) != DG_OK ||
      dg_session_output_info(m->ours, 0, &oi) != DG_OK ||
      ii.desc.dtype != DG_DTYPE_F32 || oi.desc.dtype != DG_DTYPE_F32) {
    snprintf(why, wn, "%s", "not one f32 input and an f32 first output");
    return why;
  }
  snprintf(m->in_name, sizeof m->in_name, "%s", ii.name);
  snprintf(m->out_name, sizeof m->out_name, "%s", oi.name);
  m->rank = ii.desc.rank;
  size_t n = 1, ny = 1;
  for (int i = 0; i < ii.desc.rank; i++)
    n *= (size_t)(m->dims[i] = ii.desc.dims[i]);
  for (int i = 0; i < oi.desc.rank; i++)
    ny *= (size_t)oi.desc.dims[i];
  m->x_bytes = n * sizeof(float);
  m->y_bytes = ny * sizeof(float);
  m->x = malloc(m->x_bytes);
  m->y = malloc(m->y_bytes);
  if (!m->x || !m->y) {
    snprintf(why, wn, "%s", "out of memory");
    return why;
  }
  uint32_t s = 12345u;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    m->x[i] = (float)((s >> 8) * (1.0 / 16777216.0) * 2.0 - 1.0);
    if (o->fast) /* on a grid f16 holds exactly (bind_resident) */
      m->x[i] = roundf(m->x[i] * 1024.0f) / 1024.0f;
  }
  OrtSessionOptions *so = NULL;
  const char *e =
      ort_err(API(CreateSessionOptions, ort_create_session_options_fn)(&so));
  if (!e)
    e = ort_err(API(SetIntraOpNumThreads, ort_set_threads_fn)(so, o->threads));
  if (!e)
    e = ort_err(
        API(CreateSession, ort_create_session_fn)(env, m->path, so, &m->ort));
  if (so)
    API(ReleaseSessionOptions, ort_release_fn)(so);
  if (e) {
    snprintf(why, wn, "ONNX Runtime: %s", e);
    return why;
  }
  return NULL;
}

static void model_close(model *m) {
  dg_session_destroy(m->ours);
  dg_buffer_destroy(m->xb);
  dg_buffer_destroy(m->yb);
  if (m->ort)
    API(ReleaseSession, ort_release_fn)(m->ort);
  free(m->x);
  free(m->y);
}

/* One block: runs until `seconds` and 3 runs have passed; its median. */
static double block_us(model *m, int ort, double seconds, const char **err) {
  double t[4096];
  int n = 0;
  double start = timing_now_us();
  while (n < (int)(sizeof t / sizeof t[0]) &&
         (n < 3 || timing_now_us() - start < seconds * 1e6)) {
    double t0 = timing_now_us();
    *err = ort ? ort_run(m, NULL, NULL) : our_run(m);
    if (*err)
      return -1;
    t[n++] = timing_now_us() - t0;
  }
  return timing_median(t, n);
}

static double load_average(void) {
  double load = -1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &load) != 1)
      load = -1;
    fclose(f);
  }
  return load;
}

static int by_name(const void *a, const void *b) {
  return strcmp((const char *)a, (const char *)b);
}

static bool wanted(const char *only, const char *name) {
  if (!only)
    return true;
  size_t n = strlen(name);
  for (const char *p = only; *p;) {
    const char *c = strchr(p, ',');
    size_t k = c ? (size_t)(c - p) : strlen(p);
    if (k == n && !strncmp(p, name, n))
      return true;
    p += k + (c != NULL);
  }
  return false;
}

/* The zoo's model folders, sorted; -1 when DIR cannot be read. */
static int list_models(const char *dir, const char *only, char names[][128]) {
  DIR *d = opendir(dir);
  if (!d)
    return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < MAX_MODELS) {
    char p[1200];
    struct stat st;
    snprintf(p, sizeof p, "%.900s/%.255s/model.onnx", dir, e->d_name);
    if (e->d_name[0] != '.' && !stat(p, &st) && wanted(only, e->d_name))
      snprintf(names[n++], 128, "%.127s", e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, 128, by_name);
  return n;
}

int bench_models(const bench_models_opts *o, FILE *jf) {
  static char names[MAX_MODELS][128];
  int n = list_models(o->dir, o->only, names);
  if (n <= 0) {
    fprintf(stderr,
            "dg-bench: %s %s; build the benchmark zoo with\n"
            "  /usr/bin/python3 tests/zoo/make_bench_zoo.py %s\n"
            "(Debian's python3-torch, python3-torchvision, python3-onnx)\n",
            o->dir, n < 0 ? "cannot be read" : "holds no wanted model", o->dir);
    return 2;
  }
  char ort_path[1024];
  if (o->ort)
    snprintf(ort_path, sizeof ort_path, "%s", o->ort);
  else
    default_ort_path(ort_path, sizeof ort_path);
  int rc = ort_load(ort_path);
  if (rc)
    return rc;
  int threads =
      o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
  bench_models_opts oo = *o;
  oo.threads = threads;
  /* Only the CPU unless another device is asked for: opening a GPU
   * driver costs seconds and its threads would share the cores. */
  int dev = o->device >= 0 ? o->device : 0;
  dg_context_options co = {.device_kinds =
                               o->device >= 0 ? 0u : (unsigned)DG_DEVICE_CPU,
                           .cpu_threads = threads};
  dg_context *ctx = NULL;
  if (dg_context_create(&co, &ctx) != DG_OK) {
    fprintf(stderr, "dg-bench: cannot create a context\n");
    return 1;
  }
  dg_device_info info;
  if (dg_context_device_info(ctx, dev, &info) != DG_OK) {
    fprintf(stderr, "dg-bench: no device %d (dg-info lists %d)\n", dev,
            dg_context_device_count(ctx));
    dg_context_destroy(ctx);
    return 2;
  }
  double load0 = load_average();
  printf("models: %d from %s, batch %d, %d threads each side, %d "
         "alternating blocks of >= %.2f s; ours: %s\n",
         n, o->dir, o->batch, threads, o->rounds, o->seconds, info.name);
  printf("load average %.2f on %ld CPUs before the run\n", load0,
         sysconf(_SC_NPROCESSORS_ONLN));
  /* Per model: its blocks, both sides, and about 1.5 s of import,
   * compile and warm-up runs on the 2-core machine. */
  double expected = n * (2.0 * o->rounds * o->seconds + 1.5);
  printf("expected: about %.0f s (%d models)\n", expected, n);
  bench_progress_start(expected);
  printf("%-24s %5s %11s %17s %11s %17s %8s %9s", "model", "dtype", "ours_ms",
         "(spread)", "ort_ms", "(spread)", "speed", "max_diff");
  if (o->resident)
    printf(" %9s %17s %9s %8s", "res_ms", "(spread)", "gpu_ms", "res/gpu");
  printf("\n");
  double lg[2] = {0, 0};
  int cnt[2] = {0, 0}, failed = 0;
  for (int i = 0; i < n; i++) {
    model m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "%.127s", names[i]);
    snprintf(m.path, sizeof m.path, "%.900s/%.127s/model.onnx", o->dir,
             names[i]);
    m.int8 = !strncmp(m.name, "qdq", 3);
    char why[1024];
    const char *err = model_open(ctx, dev, &oo, &m, why, sizeof why);
    double worst = 0, peak = 0;
    /* Warm-up, and the check: our output against ORT's on one input. */
    for (int w = 0; !err && w < 2; w++)
      err = our_run(&m);
    for (int w = 0; !err && w < 2; w++)
      err = ort_run(&m, w ? &worst : NULL, &peak);
    double rel = peak > 0 ? worst / peak : worst;
    /* f32: ORT's kernels sum in other orders (the fast precision rounds
     * every tensor to f16); int8: its kernels may saturate where VNNI is
     * missing (tests/zoo/README.md), so the figure is printed, not
     * judged. */
    if (!err && !m.int8 && !(rel <= (o->fast ? 5e-2 : 1e-3))) {
      snprintf(why, sizeof why,
               "outputs disagree: max |ours - ORT| %.3g of peak %.3g", worst,
               peak);
      err = why;
    }
    double us[3][64], gpu_us = -1;
    int rounds = o->rounds < 64 ? o->rounds : 64;
    for (int r = 0; !err && r < rounds; r++)
      for (int side = 0; side < 2 && !err; side++)
        us[side][r] = block_us(&m, side, o->seconds, &err);
    if (!err && o->resident)
      err = bind_resident(ctx, dev, &m, why, sizeof why);
    for (int r = 0; !err && o->resident && r < rounds; r++)
      us[2][r] = block_us(&m, 0, o->seconds, &err);
    if (!err && o->resident)
      gpu_us = bench_device_us(model_run, &m, m.ours);
    bench_progress_clear();
    if (err) {
      printf("%-24s FAIL - %s\n", m.name, err);
      bench_progress_row();
      failed = 1;
      model_close(&m);
      continue;
    }
    double med[3], lo[3], hi[3];
    for (int side = 0; side < 2 + (o->resident != 0); side++) {
      lo[side] = hi[side] = us[side][0];
      for (int r = 1; r < rounds; r++) {
        lo[side] = fmin(lo[side], us[side][r]);
        hi[side] = fmax(hi[side], us[side][r]);
      }
      /* the best block, as dg-bench's other suites take the lowest of
       * their rounds' medians: the least disturbed by other load */
      med[side] = lo[side];
    }
    double speed = med[1] / med[0];
    lg[m.int8] += log(speed);
    cnt[m.int8]++;
    char sp[3][64];
    for (int side = 0; side < 2 + (o->resident != 0); side++)
      snprintf(sp[side], sizeof sp[side], "(%.2f-%.2f)", lo[side] / 1e3,
               hi[side] / 1e3);
    printf("%-24s %5s %11.2f %17s %11.2f %17s %7.2fx %9.2g", m.name,
           m.int8 ? "int8" : "f32", med[0] / 1e3, sp[0], med[1] / 1e3, sp[1],
           speed, rel);
    if (o->resident)
      printf(" %9.3f %17s %9.3f %7.2fx", med[2] / 1e3, sp[2], gpu_us / 1e3,
             gpu_us > 0 ? med[2] / gpu_us : -1);
    printf("\n");
    bench_progress_row();
    if (jf)
      fprintf(jf,
              "{\"suite\":\"models\",\"device\":\"%s\",\"model\":\"%s\","
              "\"dtype\":\"%s\","
              "\"batch\":%d,\"threads\":%d,\"ours_ms\":%.4f,\"ours_min_ms\":"
              "%.4f,\"ours_max_ms\":%.4f,\"ort_ms\":%.4f,\"ort_min_ms\":%.4f,"
              "\"ort_max_ms\":%.4f,\"speed\":%.4f,\"max_rel_diff\":%.3g,"
              "\"fast\":%d,\"resident_ms\":%.4f,\"gpu_ms\":%.4f}\n",
              info.name, m.name, m.int8 ? "int8" : "f32", o->batch, threads,
              med[0] / 1e3, lo[0] / 1e3, hi[0] / 1e3, med[1] / 1e3, lo[1] / 1e3,
              hi[1] / 1e3, speed, rel, o->fast,
              o->resident ? med[2] / 1e3 : -1.0, gpu_us / 1e3);
    fflush(stdout);
    model_close(&m);
  }
  static const char *kind[2] = {"f32", "int8"};
  for (int k = 0; k < 2; k++)
    if (cnt[k])
      printf("geomean %s: %.2fx ORT's speed over %d models\n", kind[k],
             exp(lg[k] / cnt[k]), cnt[k]);
  if (cnt[0] + cnt[1])
    printf("geomean all: %.2fx over %d models\n",
           exp((lg[0] + lg[1]) / (cnt[0] + cnt[1])), cnt[0] + cnt[1]);
  printf("load average %.2f before, %.2f after the run\n", load0,
         load_average());
  dg_context_destroy(ctx);
  return failed;
}
